//! `DevicePolicy=`/`DeviceAllow=` on the kernel: the unit's device list
//! made into a cgroup device program (`BPF_PROG_TYPE_CGROUP_DEVICE`) and
//! attached to its cgroup before its first process joins it, as systemd
//! does on cgroup v2. The kernel runs the program at every open, `mknod`
//! and access of a device node by a process of the cgroup (or below);
//! the access is allowed when the program returns 1.
//!
//! The program is straight-line: it loads the device's type, access,
//! major and minor from the context, then tests each allowed entry in
//! turn and returns 1 at the first that matches, 0 after the last.

use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;

use flotilla_units::context::devices::{DeviceAllow, DeviceNode, MKNOD, READ, WRITE};

use crate::sys::bpf::{
    self, insn, AND32_IMM, EXIT, JNE_IMM, LDX_W, MOV32_REG, MOV64_IMM, RSH32_IMM,
};

/// `BPF_DEVCG_DEV_BLOCK`, `BPF_DEVCG_DEV_CHAR`.
const BLOCK: u32 = 1;
const CHAR: u32 = 2;

/// One entry resolved to numbers: the device type, its major and minor
/// (`None`: any), and the access bits allowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rule {
    /// [`BLOCK`] or [`CHAR`].
    pub kind: u32,
    /// The major number; `None`: any.
    pub major: Option<u32>,
    /// The minor number; `None`: any.
    pub minor: Option<u32>,
    /// `BPF_DEVCG_ACC_*` bits.
    pub access: u32,
}

/// The rules of `allow`, read from the device nodes and `devices` (the
/// text of `/proc/devices`). A path that is missing or not a device is
/// left out, as systemd leaves it out (the device may come later with
/// hardware; a unit that needs it fails on its own open).
pub fn resolve(allow: &[DeviceAllow], devices: &str) -> Vec<Rule> {
    let mut out = Vec::new();
    for a in allow {
        let access = u32::from(a.access & (READ | WRITE | MKNOD));
        match &a.node {
            DeviceNode::Path(p) => {
                let Ok(m) = std::fs::metadata(p) else {
                    continue;
                };
                let kind = if m.file_type().is_char_device() {
                    CHAR
                } else if m.file_type().is_block_device() {
                    BLOCK
                } else {
                    continue;
                };
                let rdev = m.rdev();
                out.push(Rule {
                    kind,
                    major: Some(libc::major(rdev)),
                    minor: Some(libc::minor(rdev)),
                    access,
                });
            }
            DeviceNode::Group { block, name } => {
                for major in majors(devices, *block, name) {
                    out.push(Rule {
                        kind: if *block { BLOCK } else { CHAR },
                        major: Some(major),
                        minor: None,
                        access,
                    });
                }
            }
        }
    }
    out
}

/// The major numbers of the drivers named `pattern` (`*` matches any
/// run of characters) in the `Character devices:` or `Block devices:`
/// part of `/proc/devices`.
fn majors(devices: &str, block: bool, pattern: &str) -> Vec<u32> {
    let mut in_part = false;
    let mut out = Vec::new();
    for line in devices.lines() {
        match line.trim() {
            "Character devices:" => in_part = !block,
            "Block devices:" => in_part = block,
            l if in_part => {
                let mut w = l.split_whitespace();
                if let (Some(n), Some(name)) = (w.next(), w.next()) {
                    if let (Ok(n), true) = (n.parse::<u32>(), glob(pattern, name)) {
                        out.push(n);
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// Whether `name` matches `pattern`, where `*` is any run of characters.
fn glob(pattern: &str, name: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == name,
        Some((head, rest)) => {
            let Some(tail) = name.strip_prefix(head) else {
                return false;
            };
            (0..=tail.len())
                .filter(|&i| tail.is_char_boundary(i))
                .any(|i| glob(rest, &tail[i..]))
        }
    }
}

/// The program for `rules`: r2 the type, r3 the access, r4 the major, r5
/// the minor; each rule a block that jumps past itself on a mismatch.
pub fn program(rules: &[Rule]) -> Vec<u64> {
    let mut p = vec![
        insn(LDX_W, 2, 1, 0, 0),
        insn(AND32_IMM, 2, 0, 0, 0xffff),
        insn(LDX_W, 3, 1, 0, 0),
        insn(RSH32_IMM, 3, 0, 0, 16),
        insn(LDX_W, 4, 1, 4, 0),
        insn(LDX_W, 5, 1, 8, 0),
    ];
    for r in rules {
        let mut tests: Vec<[u64; 2]> = Vec::new();
        tests.push([insn(JNE_IMM, 2, 0, 0, r.kind as i32), 0]);
        if let Some(m) = r.major {
            tests.push([insn(JNE_IMM, 4, 0, 0, m as i32), 0]);
        }
        if let Some(m) = r.minor {
            tests.push([insn(JNE_IMM, 5, 0, 0, m as i32), 0]);
        }
        // Each jump skips the rest of the block: the tests after it, the
        // access test (3 instructions, when the rule is not rwm), and the
        // two that return 1.
        let access_len = if r.access == 7 { 0 } else { 3 };
        let n = tests.len();
        for (i, t) in tests.iter().enumerate() {
            let skip = (n - i - 1) + access_len + 2;
            p.push(t[0] | u64::from(skip as u16) << 16);
        }
        if access_len > 0 {
            // r1 = access & !allowed; a bit outside the rule: no match.
            p.push(insn(MOV32_REG, 1, 3, 0, 0));
            p.push(insn(AND32_IMM, 1, 0, 0, !(r.access as i32) & 7));
            p.push(insn(JNE_IMM, 1, 0, 2, 0));
        }
        p.push(insn(MOV64_IMM, 0, 0, 0, 1));
        p.push(insn(EXIT, 0, 0, 0, 0));
    }
    p.push(insn(MOV64_IMM, 0, 0, 0, 0));
    p.push(insn(EXIT, 0, 0, 0, 0));
    p
}

/// Loads the program of `rules` and attaches it to the cgroup `dir`.
pub fn apply(dir: &Path, rules: &[Rule]) -> Result<(), String> {
    bpf::attach(
        dir,
        bpf::PROG_CGROUP_DEVICE,
        bpf::ATTACH_DEVICE,
        &program(rules),
    )
    .map_err(|e| format!("the device program: {e}"))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic, clippy::indexing_slicing)]
mod tests {
    use super::*;

    const DEVICES: &str = "Character devices:\n  1 mem\n  4 /dev/vc/0\n  4 tty\n136 pts\n\
                           189 usb_device\n\nBlock devices:\n  7 loop\n  8 sd\n259 blkext\n";

    #[test]
    fn groups_are_read_from_proc_devices() {
        assert_eq!(majors(DEVICES, false, "pts"), [136]);
        assert_eq!(majors(DEVICES, true, "loop"), [7]);
        assert_eq!(majors(DEVICES, false, "usb*"), [189]);
        assert_eq!(majors(DEVICES, true, "*"), [7, 8, 259]);
        assert_eq!(majors(DEVICES, false, "loop"), [] as [u32; 0]);
    }

    #[test]
    fn paths_are_read_from_the_node_and_a_missing_one_is_left_out() {
        let allow = [
            DeviceAllow {
                node: DeviceNode::Path("/dev/null".into()),
                access: READ | WRITE,
            },
            DeviceAllow {
                node: DeviceNode::Path("/dev/no-such-device".into()),
                access: READ,
            },
        ];
        assert_eq!(
            resolve(&allow, DEVICES),
            [Rule {
                kind: CHAR,
                major: Some(1),
                minor: Some(3),
                access: u32::from(READ | WRITE)
            }]
        );
    }

    /// Runs the program on one access.
    fn run(p: &[u64], kind: u32, access: u32, major: u32, minor: u32) -> u64 {
        bpf::run(p, &[access << 16 | kind, major, minor], &[])
    }

    #[test]
    fn the_program_allows_what_the_rules_name_and_nothing_else() {
        let rules = [
            Rule {
                kind: CHAR,
                major: Some(1),
                minor: Some(3),
                access: u32::from(READ | WRITE),
            },
            Rule {
                kind: CHAR,
                major: Some(136),
                minor: None,
                access: 7,
            },
            Rule {
                kind: BLOCK,
                major: Some(7),
                minor: None,
                access: u32::from(READ),
            },
        ];
        let p = program(&rules);
        let (r, w, m) = (2, 4, 1);
        assert_eq!(run(&p, CHAR, r | w, 1, 3), 1, "/dev/null rw");
        assert_eq!(run(&p, CHAR, m, 1, 3), 0, "/dev/null m: not allowed");
        assert_eq!(run(&p, CHAR, r, 1, 5), 0, "/dev/zero: not named");
        assert_eq!(run(&p, CHAR, r | w | m, 136, 7), 1, "a pts, any minor");
        assert_eq!(run(&p, BLOCK, r, 7, 0), 1, "loop0 r");
        assert_eq!(run(&p, BLOCK, w, 7, 0), 0, "loop0 w");
        assert_eq!(run(&p, CHAR, r, 7, 0), 0, "char 7: the wrong type");
        assert_eq!(run(&program(&[]), CHAR, r, 1, 3), 0, "strict, empty");
    }
}
