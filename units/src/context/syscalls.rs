//! `SystemCallFilter=`, `SystemCallErrorNumber=` and
//! `SystemCallArchitectures=`: system call names and systemd's `@group`
//! names, `~` lists, `:errno` suffixes, and how the assignments of a unit
//! combine into one filter.
//!
//! Names are checked against the x86_64 table in [`super::syscall_table`]
//! (and the names other architectures use, which are accepted and change
//! nothing here). A filter resolves to x86_64 system call numbers: the
//! executor builds seccomp programs for x86_64 only.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::errno::{errno_name, parse_errno};
use super::syscall_table::{Group, GROUPS, OTHER_ARCHES, X86_64};
use super::value::{inverted, words};

/// The x86_64 number of system call `name`.
pub fn syscall_number(name: &str) -> Option<u32> {
    X86_64
        .binary_search_by(|(n, _)| (*n).cmp(name))
        .ok()
        .and_then(|i| X86_64.get(i))
        .map(|&(_, nr)| nr)
}

/// The name of x86_64 system call `nr`.
pub fn syscall_name(nr: u32) -> Option<&'static str> {
    X86_64
        .iter()
        .find(|&&(_, n)| n == nr)
        .map(|&(name, _)| name)
}

/// The group `@name`, if systemd has it.
fn group(name: &str) -> Option<&'static Group> {
    GROUPS.iter().find(|g| g.name == name)
}

/// The names of every group, for docs and errors.
pub fn group_names() -> impl Iterator<Item = (&'static str, &'static str)> {
    GROUPS
        .iter()
        .map(|g| (g.name, g.about))
        .chain(std::iter::once(("@known", "every system call x86_64 has")))
}

/// Adds the x86_64 numbers `name` stands for (a system call or an
/// `@group`, groups nested) to `out`. A name that only other architectures
/// have adds nothing.
fn expand(name: &str, out: &mut Vec<u32>) -> Result<(), String> {
    if name == "@known" {
        out.extend(X86_64.iter().map(|&(_, nr)| nr));
        return Ok(());
    }
    if let Some(g) = group(name) {
        for m in g.members.split_whitespace() {
            expand(m, out)?;
        }
        return Ok(());
    }
    if name.starts_with('@') {
        let all: Vec<&str> = group_names().map(|(n, _)| n).collect();
        return Err(format!(
            "`{name}` is not a system call group (groups: {})",
            all.join(", ")
        ));
    }
    match syscall_number(name) {
        Some(nr) => out.push(nr),
        None if OTHER_ARCHES.binary_search(&name).is_ok() => {}
        None => return Err(format!("`{name}` is not a system call")),
    }
    Ok(())
}

/// The numbers `name` stands for, sorted and without repeats.
pub fn resolve_name(name: &str) -> Result<Vec<u32>, String> {
    let mut out = Vec::new();
    expand(name, &mut out)?;
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// One entry of a `SystemCallFilter=` list: a system call or `@group`, and
/// the error it gets instead of the default action (`name:EPERM`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct FilterEntry {
    /// `openat` or `@mount`.
    pub name: String,
    /// The `:errno` suffix.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub errno: Option<i32>,
}

/// One `SystemCallFilter=` assignment, as written (checked).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct FilterLine {
    /// It started with `~`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub invert: bool,
    /// Its entries.
    pub entries: Vec<FilterEntry>,
}

/// `SystemCallFilter=`: every assignment since the last empty one, in
/// order. [`SyscallFilter::resolve`] combines them as systemd does.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SyscallFilter {
    /// The assignments.
    pub lines: Vec<FilterLine>,
}

/// What a filter does with a system call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Deny {
    /// The process is killed by `SIGSYS` (systemd's default).
    Kill,
    /// The call fails with this error number.
    Errno(i32),
}

impl std::fmt::Display for Deny {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Deny::Kill => f.write_str("kill"),
            Deny::Errno(n) => f.write_str(&errno_name(*n)),
        }
    }
}

/// A filter resolved to x86_64 numbers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedFilter {
    /// `true`: the calls listed are allowed and every other one denied;
    /// `false`: the calls listed are denied and every other one allowed.
    pub allow_list: bool,
    /// The calls listed, each with its own error if it has one (deny lists
    /// only; otherwise the default action applies).
    pub calls: BTreeMap<u32, Option<i32>>,
}

impl SyscallFilter {
    /// Applies one assignment: an empty value forgets every earlier one;
    /// any other is checked and kept.
    pub fn assign(&mut self, value: &str) -> Result<(), String> {
        if value.trim().is_empty() {
            self.lines.clear();
            return Ok(());
        }
        let (invert, rest) = inverted(value);
        let mut entries = Vec::new();
        for w in words(rest)? {
            let (name, errno) = match w.split_once(':') {
                Some((n, e)) => (n, Some(parse_errno(e)?)),
                None => (w.as_str(), None),
            };
            resolve_name(name)?;
            if errno.is_some() && !invert {
                return Err(format!(
                    "`{w}`: an error number only applies to a list that starts with ~ (the calls it denies)"
                ));
            }
            entries.push(FilterEntry {
                name: name.to_string(),
                errno,
            });
        }
        if entries.is_empty() {
            return Err("`~` without system calls".to_string());
        }
        self.lines.push(FilterLine { invert, entries });
        Ok(())
    }

    /// Whether no assignment is in force.
    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// Combines the assignments as systemd does: the first decides the
    /// mode (a plain list is an allow list, `~` a deny list); an allow list
    /// always allows `@default` too; later lines of the same kind add to
    /// the list, lines of the other kind take calls out of it. `None`
    /// when there is no filter.
    pub fn resolve(&self) -> Option<ResolvedFilter> {
        let first = self.lines.first()?;
        let allow_list = !first.invert;
        let mut calls = BTreeMap::new();
        if allow_list {
            for nr in resolve_name("@default").unwrap_or_default() {
                calls.insert(nr, None);
            }
        }
        for line in &self.lines {
            let adds = line.invert != allow_list;
            for e in &line.entries {
                for nr in resolve_name(&e.name).unwrap_or_default() {
                    if adds {
                        calls.insert(nr, if allow_list { None } else { e.errno });
                    } else {
                        calls.remove(&nr);
                    }
                }
            }
        }
        Some(ResolvedFilter { allow_list, calls })
    }
}

/// `SystemCallErrorNumber=`: an error name or number, or `kill`.
pub fn parse_deny(value: &str) -> Result<Deny, String> {
    let t = value.trim();
    if t.eq_ignore_ascii_case("kill") {
        return Ok(Deny::Kill);
    }
    parse_errno(t).map(Deny::Errno)
}

/// The architecture names systemd knows (`SystemCallArchitectures=`).
const ARCHES: [&str; 24] = [
    "native",
    "x86",
    "x86-64",
    "x32",
    "arm",
    "arm64",
    "loongarch64",
    "mips",
    "mips64",
    "mips64-n32",
    "mips-le",
    "mips64-le",
    "mips64-le-n32",
    "parisc",
    "parisc64",
    "ppc",
    "ppc64",
    "ppc64-le",
    "riscv32",
    "riscv64",
    "s390",
    "s390x",
    "m68k",
    "sh",
];

/// `SystemCallArchitectures=`: adds the names of one assignment to
/// `current` (an empty value clears it).
pub fn assign_arches(current: &mut Vec<String>, value: &str) -> Result<(), String> {
    if value.trim().is_empty() {
        current.clear();
        return Ok(());
    }
    for w in words(value)? {
        if !ARCHES.contains(&w.as_str()) {
            return Err(format!(
                "`{w}` is not an architecture (write native, x86-64, x86, x32, arm64, …)"
            ));
        }
        if !current.contains(&w) {
            current.push(w);
        }
    }
    Ok(())
}

/// Whether an architecture list allows only what the executor filters:
/// x86_64's native calls (`native` and `x86-64` are the same here).
pub fn arches_native_only(arches: &[String]) -> Result<(), String> {
    match arches.iter().find(|a| !matches!(a.as_str(), "native" | "x86-64")) {
        None => Ok(()),
        Some(a) => Err(format!(
            "{a} system calls cannot be allowed: flotilla filters x86-64 calls only and refuses every other architecture's"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_sorted_and_numbers_are_right() {
        assert!(X86_64.windows(2).all(|w| w[0].0 < w[1].0));
        assert!(OTHER_ARCHES.windows(2).all(|w| w[0] < w[1]));
        assert!(GROUPS.windows(2).all(|w| w[0].name < w[1].name));
        assert_eq!(syscall_number("read"), Some(0));
        assert_eq!(syscall_number("openat"), Some(257));
        assert_eq!(syscall_number("fchmodat2"), Some(452));
        assert_eq!(syscall_number("mmap2"), None);
        assert_eq!(syscall_name(59), Some("execve"));
        // Every member of every group is a group or a known name.
        for g in GROUPS.iter() {
            for m in g.members.split_whitespace() {
                assert!(resolve_name(m).is_ok(), "{}: {m}", g.name);
            }
        }
    }

    #[test]
    fn groups_expand_recursively() {
        let mount = resolve_name("@mount").unwrap();
        assert!(mount.contains(&165) && mount.contains(&442), "{mount:?}"); // mount, mount_setattr
        let service = resolve_name("@system-service").unwrap();
        for call in [
            "read", "openat", "socket", "clone", "setuid", "execve", "ioctl",
        ] {
            assert!(service.contains(&syscall_number(call).unwrap()), "{call}");
        }
        for call in ["mount", "reboot", "init_module", "swapon", "ptrace"] {
            assert!(!service.contains(&syscall_number(call).unwrap()), "{call}");
        }
        assert_eq!(resolve_name("@known").unwrap().len(), X86_64.len());
        assert_eq!(resolve_name("mmap2").unwrap(), Vec::<u32>::new());
        assert!(resolve_name("@sandbox").unwrap().contains(&317)); // seccomp
        let err = resolve_name("@bogus").unwrap_err();
        assert!(
            err.starts_with("`@bogus` is not a system call group (groups: @aio, "),
            "{err}"
        );
        assert_eq!(
            resolve_name("frobnicate").unwrap_err(),
            "`frobnicate` is not a system call"
        );
    }

    #[test]
    fn an_allow_list_includes_default_and_later_lines_adjust_it() {
        let mut f = SyscallFilter::default();
        assert!(f.resolve().is_none());
        f.assign("@system-service").unwrap();
        f.assign("~@privileged @resources").unwrap();
        let r = f.resolve().unwrap();
        assert!(r.allow_list);
        let nr = |n| syscall_number(n).unwrap();
        assert!(r.calls.contains_key(&nr("execve")));
        assert!(r.calls.contains_key(&nr("read")));
        assert!(!r.calls.contains_key(&nr("setuid"))); // @privileged
        assert!(!r.calls.contains_key(&nr("setrlimit"))); // @resources
        assert!(r.calls.values().all(Option::is_none));
        // Even a list without @default allows it.
        let mut g = SyscallFilter::default();
        g.assign("read write").unwrap();
        let r = g.resolve().unwrap();
        assert!(r.calls.contains_key(&nr("exit_group")) && r.calls.contains_key(&nr("write")));
    }

    #[test]
    fn a_deny_list_with_errors() {
        let mut f = SyscallFilter::default();
        f.assign("~@mount ptrace:EPERM").unwrap();
        f.assign("~reboot:EACCES").unwrap();
        f.assign("umount2").unwrap();
        let r = f.resolve().unwrap();
        let nr = |n| syscall_number(n).unwrap();
        assert!(!r.allow_list);
        assert_eq!(r.calls.get(&nr("mount")), Some(&None));
        assert_eq!(r.calls.get(&nr("ptrace")), Some(&Some(1)));
        assert_eq!(r.calls.get(&nr("reboot")), Some(&Some(13)));
        assert_eq!(r.calls.get(&nr("umount2")), None);
        assert_eq!(r.calls.get(&nr("read")), None);
        f.assign("").unwrap();
        assert!(f.is_empty());
    }

    #[test]
    fn bad_filters_say_what_is_wrong() {
        let mut f = SyscallFilter::default();
        assert_eq!(
            f.assign("~@mount open_sesame").unwrap_err(),
            "`open_sesame` is not a system call"
        );
        assert_eq!(
            f.assign("read:EPERM").unwrap_err(),
            "`read:EPERM`: an error number only applies to a list that starts with ~ (the calls it denies)"
        );
        assert_eq!(
            f.assign("~read:EWHAT").unwrap_err(),
            "`EWHAT` is not an error name (write e.g. EPERM or EACCES)"
        );
        assert_eq!(f.assign("~").unwrap_err(), "`~` without system calls");
        assert!(f.is_empty());
    }

    #[test]
    fn error_numbers_and_arches() {
        assert_eq!(parse_deny("EPERM"), Ok(Deny::Errno(1)));
        assert_eq!(parse_deny("kill"), Ok(Deny::Kill));
        assert!(parse_deny("maybe").is_err());
        assert_eq!(Deny::Errno(13).to_string(), "EACCES");
        let mut a = Vec::new();
        assign_arches(&mut a, "native").unwrap();
        assert!(arches_native_only(&a).is_ok());
        assign_arches(&mut a, "x86 native").unwrap();
        assert_eq!(a, ["native", "x86"]);
        assert_eq!(
            arches_native_only(&a).unwrap_err(),
            "x86 system calls cannot be allowed: flotilla filters x86-64 calls only and refuses every other architecture's"
        );
        assert_eq!(
            assign_arches(&mut a, "vax").unwrap_err(),
            "`vax` is not an architecture (write native, x86-64, x86, x32, arm64, …)"
        );
        assign_arches(&mut a, "").unwrap();
        assert!(a.is_empty());
    }
}
