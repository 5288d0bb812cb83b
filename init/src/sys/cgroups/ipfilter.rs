//! `IPAddressAllow=`/`IPAddressDeny=` on the kernel: two cgroup packet
//! programs (`BPF_PROG_TYPE_CGROUP_SKB`) on the unit's cgroup, one for the
//! packets its sockets receive (judged by their source address) and one
//! for those they send (by their destination), attached before its first
//! process is born there. A program returns 1 to let a packet through and
//! 0 to drop it; a dropped send fails with `EPERM`.
//!
//! Each program reads the packet's protocol from the context, copies the
//! address from the IP header (`bpf_skb_load_bytes`) to the stack, and
//! tests it against each allowed prefix, then each denied one: straight
//! line, as short as the lists.

use std::net::IpAddr;
use std::path::Path;

use flotilla_units::context::ipaccess::{IpAccess, IpPrefix};

use crate::sys::bpf::{
    self, insn, ADD64_IMM, AND32_IMM, CALL, EXIT, JA, JEQ32_IMM, JEQ_IMM, JNE32_IMM, JNE_IMM,
    LDX_W, MOV64_IMM, MOV64_REG,
};

/// `ETH_P_IP` and `ETH_P_IPV6` as `__sk_buff.protocol` holds them (network
/// order, read on a little-endian machine).
const PROTO_IP: i32 = 0x0008;
const PROTO_IPV6: i32 = 0xdd86_u16 as i32;
/// `offsetof(struct __sk_buff, protocol)`.
const SKB_PROTOCOL: i16 = 16;
/// The helper `bpf_skb_load_bytes`.
const SKB_LOAD_BYTES: i32 = 26;
/// Where the address is copied: the stack's last 16 bytes.
const STACK: i16 = -16;

/// Which way the packets go.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Direction {
    /// Received: the source address is the remote one.
    Ingress,
    /// Sent: the destination address is.
    Egress,
}

/// A small assembler: instructions, and jumps to labels resolved at the
/// end.
#[derive(Default)]
struct Asm {
    code: Vec<u64>,
    /// (instruction index, label) of each jump.
    jumps: Vec<(usize, usize)>,
    /// The instruction index of each label, once placed.
    labels: Vec<Option<usize>>,
}

impl Asm {
    fn label(&mut self) -> usize {
        self.labels.push(None);
        self.labels.len() - 1
    }

    fn place(&mut self, l: usize) {
        if let Some(slot) = self.labels.get_mut(l) {
            *slot = Some(self.code.len());
        }
    }

    fn op(&mut self, code: u8, dst: u8, src: u8, off: i16, imm: i32) {
        self.code.push(insn(code, dst, src, off, imm));
    }

    fn jump(&mut self, code: u8, dst: u8, imm: i32, to: usize) {
        self.jumps.push((self.code.len(), to));
        self.op(code, dst, 0, 0, imm);
    }

    fn finish(mut self) -> Vec<u64> {
        for &(at, to) in &self.jumps {
            let target = self.labels.get(to).copied().flatten().unwrap_or(at + 1);
            let off = target as i64 - at as i64 - 1;
            if let Some(i) = self.code.get_mut(at) {
                *i = bpf::with_off(*i, off as i16);
            }
        }
        self.code
    }
}

/// The program for packets going `dir`.
pub fn program(access: &IpAccess, dir: Direction) -> Vec<u64> {
    let mut a = Asm::default();
    let (allow, deny, v4, v6) = (a.label(), a.label(), a.label(), a.label());
    a.op(MOV64_REG, 6, 1, 0, 0);
    a.op(LDX_W, 7, 1, SKB_PROTOCOL, 0);
    a.jump(JEQ_IMM, 7, PROTO_IP, v4);
    a.jump(JEQ_IMM, 7, PROTO_IPV6, v6);
    a.jump(JA, 0, 0, allow);
    // Source and destination in the IPv4 and IPv6 headers.
    let (off4, off6) = match dir {
        Direction::Ingress => (12, 8),
        Direction::Egress => (16, 24),
    };
    for (label, off, len, is_v4) in [(v4, off4, 4, true), (v6, off6, 16, false)] {
        a.place(label);
        a.op(MOV64_REG, 1, 6, 0, 0);
        a.op(MOV64_IMM, 2, 0, 0, off);
        a.op(MOV64_REG, 3, 10, 0, 0);
        a.op(ADD64_IMM, 3, 0, 0, i32::from(STACK));
        a.op(MOV64_IMM, 4, 0, 0, len);
        a.op(CALL, 0, 0, 0, SKB_LOAD_BYTES);
        // A header too short to hold the address: not ours to judge.
        a.jump(JNE_IMM, 0, 0, allow);
        // The kernel refuses code no path reaches: a prefix that holds
        // every address ends the family's tests.
        let family = |p: &&IpPrefix| matches!(p.addr, IpAddr::V4(_)) == is_v4;
        let tests = access.allow.iter().filter(family).map(|p| (p, allow));
        let tests = tests.chain(access.deny.iter().filter(family).map(|p| (p, deny)));
        let mut decided = false;
        for (p, verdict) in tests {
            if test(&mut a, p, verdict) {
                decided = true;
                break;
            }
        }
        if !decided {
            a.jump(JA, 0, 0, allow);
        }
    }
    a.place(allow);
    a.op(MOV64_IMM, 0, 0, 0, 1);
    a.op(EXIT, 0, 0, 0, 0);
    if a.jumps.iter().any(|&(_, to)| to == deny) {
        a.place(deny);
        a.op(MOV64_IMM, 0, 0, 0, 0);
        a.op(EXIT, 0, 0, 0, 0);
    }
    a.finish()
}

/// Jumps to `verdict` when the address on the stack is in `p`: each
/// 32-bit word with mask bits is compared under its mask. Whether `p`
/// holds every address (then the jump is all there is).
fn test(a: &mut Asm, p: &IpPrefix, verdict: usize) -> bool {
    let (mask, net) = p.bytes();
    let words: Vec<(usize, u32, u32)> = mask
        .chunks(4)
        .zip(net.chunks(4))
        .enumerate()
        .filter_map(|(i, (m, n))| {
            let m = u32::from_le_bytes(m.try_into().ok()?);
            let n = u32::from_le_bytes(n.try_into().ok()?);
            (m != 0).then_some((i, m, n))
        })
        .collect();
    let Some((&(last_i, last_m, last_n), rest)) = words.split_last() else {
        // `any`: every address.
        a.jump(JA, 0, 0, verdict);
        return true;
    };
    let next = a.label();
    let word = |a: &mut Asm, i: usize, m: u32| {
        a.op(LDX_W, 1, 10, STACK + 4 * i as i16, 0);
        a.op(AND32_IMM, 1, 0, 0, m as i32);
    };
    for &(i, m, n) in rest {
        word(a, i, m);
        a.jump(JNE32_IMM, 1, n as i32, next);
    }
    word(a, last_i, last_m);
    a.jump(JEQ32_IMM, 1, last_n as i32, verdict);
    a.place(next);
    false
}

/// Attaches both programs to the cgroup `dir`, when `access` drops
/// anything.
pub fn apply(dir: &Path, access: &IpAccess) -> Result<(), String> {
    if !access.filters() {
        return Ok(());
    }
    for (d, attach) in [
        (Direction::Ingress, bpf::ATTACH_INGRESS),
        (Direction::Egress, bpf::ATTACH_EGRESS),
    ] {
        bpf::attach(dir, bpf::PROG_CGROUP_SKB, attach, &program(access, d))
            .map_err(|e| format!("the {d:?} address program: {e}"))?;
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic, clippy::indexing_slicing)]
mod tests {
    use super::*;
    use flotilla_units::context::ipaccess::assign;

    /// Runs the program on one packet whose header holds `ip` where the
    /// program reads it.
    fn run(p: &[u64], ip: IpAddr, dir: Direction) -> u64 {
        let (proto, header) = match (ip, dir) {
            (IpAddr::V4(a), d) => {
                let mut h = vec![0u8; 20];
                let off = if d == Direction::Ingress { 12 } else { 16 };
                h[off..off + 4].copy_from_slice(&a.octets());
                (PROTO_IP, h)
            }
            (IpAddr::V6(a), d) => {
                let mut h = vec![0u8; 40];
                let off = if d == Direction::Ingress { 8 } else { 24 };
                h[off..off + 16].copy_from_slice(&a.octets());
                (PROTO_IPV6, h)
            }
        };
        // `protocol` is the fifth word of `struct __sk_buff`.
        bpf::run(p, &[0, 0, 0, 0, proto as u32], &header)
    }

    fn access(allow: &str, deny: &str) -> IpAccess {
        let mut a = IpAccess::default();
        assign(&mut a.allow, allow).unwrap();
        assign(&mut a.deny, deny).unwrap();
        a
    }

    #[test]
    fn allowed_prefixes_pass_and_denied_ones_drop() {
        let a = access("localhost 10.1.0.0/16 fd00::/8", "any");
        for d in [Direction::Ingress, Direction::Egress] {
            let p = program(&a, d);
            let verdict = |s: &str| run(&p, s.parse().unwrap(), d);
            assert_eq!(verdict("127.0.0.1"), 1);
            assert_eq!(verdict("127.200.3.4"), 1);
            assert_eq!(verdict("10.1.255.1"), 1);
            assert_eq!(verdict("10.2.0.1"), 0);
            assert_eq!(verdict("192.0.2.1"), 0);
            assert_eq!(verdict("::1"), 1);
            assert_eq!(verdict("::2"), 0);
            assert_eq!(verdict("fd12::1"), 1);
            assert_eq!(verdict("2001:db8::1"), 0);
        }
    }

    /// Every instruction is reached by some path (the kernel refuses
    /// programs with dead code).
    fn all_reached(p: &[u64]) {
        let mut seen = vec![false; p.len()];
        let mut todo = vec![0usize];
        while let Some(pc) = todo.pop() {
            if pc >= p.len() || seen[pc] {
                continue;
            }
            seen[pc] = true;
            let (code, off) = (p[pc] as u8, (p[pc] >> 16) as u16 as i16);
            let target = (pc as i64 + 1 + off as i64) as usize;
            match code {
                EXIT => {}
                JA => todo.push(target),
                JEQ_IMM | JNE_IMM | JEQ32_IMM | JNE32_IMM => todo.extend([pc + 1, target]),
                _ => todo.push(pc + 1),
            }
        }
        assert!(seen.iter().all(|&s| s), "dead code in {p:x?}");
    }

    #[test]
    fn no_dead_code_whatever_the_lists() {
        for (allow, deny) in [
            ("", "any"),
            ("any", "any"),
            ("localhost", "any"),
            ("10.0.0.0/8", "::1"),
            ("", "192.0.2.0/24"),
        ] {
            for d in [Direction::Ingress, Direction::Egress] {
                all_reached(&program(&access(allow, deny), d));
            }
        }
    }

    #[test]
    fn only_what_is_denied_drops() {
        let p = program(&access("", "192.0.2.0/24 2001:db8::/32"), Direction::Egress);
        let verdict = |s: &str| run(&p, s.parse().unwrap(), Direction::Egress);
        assert_eq!(verdict("192.0.2.77"), 0);
        assert_eq!(verdict("192.0.3.1"), 1);
        assert_eq!(verdict("2001:db8:1::5"), 0);
        assert_eq!(verdict("2001:db9::5"), 1);
        assert!(
            !access("localhost", "").filters(),
            "an allow list alone drops nothing"
        );
    }
}
