//! Loading eBPF programs and attaching them to a cgroup: what the device
//! filter (`devices.rs`) and the address filter (`ipfilter.rs`) share.
//! The programs are built as plain instructions (`struct bpf_insn`), with
//! the few opcodes they use named here.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::Path;

/// One instruction, as `struct bpf_insn` lays it out.
pub fn insn(code: u8, dst: u8, src: u8, off: i16, imm: i32) -> u64 {
    u64::from(code)
        | u64::from(dst & 0xf) << 8
        | u64::from(src & 0xf) << 12
        | u64::from(off as u16) << 16
        | u64::from(imm as u32) << 32
}

/// The instruction `i` with its jump offset set to `off`.
pub fn with_off(i: u64, off: i16) -> u64 {
    (i & !(0xffff << 16)) | u64::from(off as u16) << 16
}

/// `r_dst = *(u32 *)(r_src + off)`.
pub const LDX_W: u8 = 0x61;
/// `r_dst = r_src` (64 bits).
pub const MOV64_REG: u8 = 0xbf;
/// `w_dst = w_src` (32 bits, zero-extended).
pub const MOV32_REG: u8 = 0xbc;
/// `r_dst = imm`.
pub const MOV64_IMM: u8 = 0xb7;
/// `r_dst += imm`.
pub const ADD64_IMM: u8 = 0x07;
/// `w_dst &= imm`.
pub const AND32_IMM: u8 = 0x54;
/// `w_dst >>= imm`.
pub const RSH32_IMM: u8 = 0x74;
/// `if r_dst == imm: pc += off`.
pub const JEQ_IMM: u8 = 0x15;
/// `if r_dst != imm: pc += off`.
pub const JNE_IMM: u8 = 0x55;
/// `if w_dst == imm: pc += off` (32 bits).
pub const JEQ32_IMM: u8 = 0x16;
/// `if w_dst != imm: pc += off` (32 bits).
pub const JNE32_IMM: u8 = 0x56;
/// `pc += off`.
pub const JA: u8 = 0x05;
/// Calls helper `imm`.
pub const CALL: u8 = 0x85;
/// Returns `r0`.
pub const EXIT: u8 = 0x95;

/// `BPF_PROG_TYPE_CGROUP_SKB`.
pub const PROG_CGROUP_SKB: u32 = 8;
/// `BPF_PROG_TYPE_CGROUP_DEVICE`.
pub const PROG_CGROUP_DEVICE: u32 = 15;
/// `BPF_CGROUP_INET_INGRESS`.
pub const ATTACH_INGRESS: u32 = 0;
/// `BPF_CGROUP_INET_EGRESS`.
pub const ATTACH_EGRESS: u32 = 1;
/// `BPF_CGROUP_DEVICE`.
pub const ATTACH_DEVICE: u32 = 6;

const BPF_PROG_LOAD: libc::c_long = 5;
const BPF_PROG_ATTACH: libc::c_long = 8;
/// Programs of the cgroups above run too, and each must allow.
const BPF_F_ALLOW_MULTI: u32 = 2;

/// The head of `union bpf_attr` for `BPF_PROG_LOAD`; the rest is zero.
#[repr(C)]
struct LoadAttr {
    prog_type: u32,
    insn_cnt: u32,
    insns: u64,
    license: u64,
    log_level: u32,
    log_size: u32,
    log_buf: u64,
    kern_version: u32,
    prog_flags: u32,
    prog_name: [u8; 16],
    prog_ifindex: u32,
    expected_attach_type: u32,
    pad: [u8; 56],
}

/// `BPF_PROG_LOAD`; `log`, when not empty, gets the verifier's log.
fn load(
    prog_type: u32,
    attach_type: u32,
    insns: &[u64],
    log: &mut [u8],
) -> Result<OwnedFd, std::io::Error> {
    let license = c"GPL";
    let attr = LoadAttr {
        prog_type,
        insn_cnt: insns.len() as u32,
        insns: insns.as_ptr() as u64,
        license: license.as_ptr() as u64,
        log_level: u32::from(!log.is_empty()),
        log_size: log.len() as u32,
        // The kernel wants no buffer at all without a log level.
        log_buf: if log.is_empty() {
            0
        } else {
            log.as_mut_ptr() as u64
        },
        kern_version: 0,
        prog_flags: 0,
        prog_name: *b"flotilla\0\0\0\0\0\0\0\0",
        prog_ifindex: 0,
        expected_attach_type: attach_type,
        pad: [0; 56],
    };
    // SAFETY: `attr` and what it points at outlive the call; its size is
    // given.
    let raw = unsafe {
        libc::syscall(
            libc::SYS_bpf,
            BPF_PROG_LOAD,
            std::ptr::from_ref(&attr),
            std::mem::size_of::<LoadAttr>(),
        )
    };
    if raw < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a new descriptor nobody else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(raw as i32) })
}

/// The head of `union bpf_attr` for `BPF_PROG_ATTACH`.
#[repr(C)]
struct AttachAttr {
    target_fd: u32,
    attach_bpf_fd: u32,
    attach_type: u32,
    attach_flags: u32,
    replace_bpf_fd: u32,
    pad: [u8; 44],
}

/// Loads program `insns` of type `prog_type` (for `attach_type`) and
/// attaches it to the cgroup `dir`, which then holds it.
pub fn attach(dir: &Path, prog_type: u32, attach_type: u32, insns: &[u64]) -> Result<(), String> {
    let prog = match load(prog_type, attach_type, insns, &mut []) {
        Ok(fd) => fd,
        Err(e) => {
            // Once more with the verifier's log, whose last line says why.
            let mut log = vec![0u8; 1 << 16];
            let _ = load(prog_type, attach_type, insns, &mut log);
            let text = String::from_utf8_lossy(&log);
            let why = text
                .trim_end_matches('\0')
                .trim()
                .lines()
                .last()
                .unwrap_or("");
            return Err(format!("load a program: {e} ({why})"));
        }
    };
    let cgroup = std::fs::File::open(dir).map_err(|e| format!("open {}: {e}", dir.display()))?;
    let attach = AttachAttr {
        target_fd: cgroup.as_raw_fd() as u32,
        attach_bpf_fd: prog.as_raw_fd() as u32,
        attach_type,
        attach_flags: BPF_F_ALLOW_MULTI,
        replace_bpf_fd: 0,
        pad: [0; 44],
    };
    // SAFETY: as above.
    let r = unsafe {
        libc::syscall(
            libc::SYS_bpf,
            BPF_PROG_ATTACH,
            std::ptr::from_ref(&attach),
            std::mem::size_of::<AttachAttr>(),
        )
    };
    if r < 0 {
        return Err(format!(
            "attach a program to {}: {}",
            dir.display(),
            std::io::Error::last_os_error()
        ));
    }
    Ok(())
}

/// Runs a program as the kernel would, for the tests of the programs
/// built here: a small interpreter of the instructions above. `ctx` is
/// the context's 32-bit words (r1 points at it); `packet` is what
/// `bpf_skb_load_bytes` copies from.
#[cfg(test)]
#[allow(clippy::indexing_slicing, clippy::panic)]
pub fn run(p: &[u64], ctx: &[u32], packet: &[u8]) -> u64 {
    // Pointers are tagged by region: the context, and the stack (r10
    // points past its 512 bytes).
    const CTX: u64 = 1 << 40;
    const STACK: u64 = 2 << 40;
    let mut stack = [0u8; 512];
    let mut r = [0u64; 11];
    r[1] = CTX;
    r[10] = STACK + 512;
    let mut pc = 0usize;
    loop {
        let i = p[pc];
        let (code, dst, src) = (i as u8, (i >> 8 & 0xf) as usize, (i >> 12 & 0xf) as usize);
        let (off, imm) = ((i >> 16) as u16 as i16, (i >> 32) as u32);
        let simm = imm as i32 as i64 as u64;
        pc += 1;
        let target = (pc as i64 + i64::from(off)) as usize;
        match code {
            LDX_W => {
                let at = r[src].wrapping_add(off as i64 as u64);
                r[dst] = if at >= STACK {
                    let a = (at - STACK) as usize;
                    u64::from(u32::from_le_bytes(
                        stack[a..a + 4].try_into().unwrap_or([0; 4]),
                    ))
                } else {
                    u64::from(ctx[(at - CTX) as usize / 4])
                };
            }
            MOV64_REG => r[dst] = r[src],
            MOV32_REG => r[dst] = r[src] & 0xffff_ffff,
            MOV64_IMM => r[dst] = simm,
            ADD64_IMM => r[dst] = r[dst].wrapping_add(simm),
            AND32_IMM => r[dst] = u64::from(r[dst] as u32 & imm),
            RSH32_IMM => r[dst] = u64::from(r[dst] as u32 >> imm),
            CALL => {
                // bpf_skb_load_bytes(skb, offset, to, len)
                let (from, to, len) = (r[2] as usize, (r[3] - STACK) as usize, r[4] as usize);
                stack[to..to + len].copy_from_slice(&packet[from..from + len]);
                r[0] = 0;
            }
            JA => pc = target,
            JEQ_IMM if r[dst] == simm => pc = target,
            JNE_IMM if r[dst] != simm => pc = target,
            JEQ32_IMM if r[dst] as u32 == imm => pc = target,
            JNE32_IMM if r[dst] as u32 != imm => pc = target,
            JEQ_IMM | JNE_IMM | JEQ32_IMM | JNE32_IMM => {}
            EXIT => return r[0],
            _ => panic!("instruction {code:#x}"),
        }
    }
}
