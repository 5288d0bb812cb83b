//! The seccomp programs of a sandbox, built in the parent with
//! `seccompiler` (pure Rust: it links in the static musl build too) and
//! installed by the child just before `execve(2)`.
//!
//! # One program per action
//!
//! A `seccompiler` program has one action for the calls it lists and one
//! for the rest, while a sandbox needs several: `SystemCallFilter=`'s own
//! action and `:errno`s, `EPERM` for the calls `ProtectClock=` and friends
//! take away, `EAFNOSUPPORT` for `RestrictAddressFamilies=`, `ENOSYS` for
//! `clone3(2)` and `openat2(2)`, whose flags a filter cannot read. So the
//! calls are grouped by action and each group is one program; the kernel
//! runs every installed program and the most severe answer wins (kill,
//! then an error, then allow), as systemd's several filters do.
//!
//! # Architectures
//!
//! Programs are built for x86_64 only. Each starts with `seccompiler`'s
//! check of the calling convention, which kills the process on any other
//! (i386's `int 0x80`), and a check added here that kills it on an x32
//! call (an x86_64 convention whose numbers have bit 30 set, which no
//! number-based rule would match): a filtered unit runs native calls only,
//! as `SystemCallArchitectures=native` asks.

use std::collections::BTreeMap;

use flotilla_units::context::sandbox::{AddressFamilies, Sandbox, ALL_NAMESPACES};
use flotilla_units::context::syscalls::{resolve_name, syscall_number, Deny};
use flotilla_units::context::Key;
use seccompiler::{
    sock_filter, BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition,
    SeccompFilter, SeccompRule, TargetArch,
};

/// The programs to install, in order.
#[derive(Debug, Default)]
pub(crate) struct Programs(pub(crate) Vec<BpfProgram>);

/// What a group of calls gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Action {
    Kill,
    Errno(i32),
}

impl From<Deny> for Action {
    fn from(d: Deny) -> Action {
        match d {
            Deny::Kill => Action::Kill,
            Deny::Errno(e) => Action::Errno(e),
        }
    }
}

impl Action {
    fn seccomp(self) -> SeccompAction {
        match self {
            Action::Kill => SeccompAction::KillProcess,
            Action::Errno(e) => SeccompAction::Errno(e.unsigned_abs()),
        }
    }
}

/// The calls of one action: each unconditionally (`None`) or under rules
/// (any of them matching).
#[derive(Debug, Default)]
struct Calls(BTreeMap<i64, Option<Vec<SeccompRule>>>);

impl Calls {
    fn always(&mut self, nr: u32) {
        self.0.insert(i64::from(nr), None);
    }

    fn when(&mut self, nr: u32, rule: SeccompRule) {
        // A call already denied whatever its arguments stays so.
        if let Some(rules) = self
            .0
            .entry(i64::from(nr))
            .or_insert_with(|| Some(Vec::new()))
        {
            rules.push(rule);
        }
    }

    fn into_rules(self) -> BTreeMap<i64, Vec<SeccompRule>> {
        self.0
            .into_iter()
            .map(|(nr, rules)| (nr, rules.unwrap_or_default()))
            .collect()
    }
}

/// Builds a program or says why it cannot be (too long).
type Built = Result<BpfProgram, String>;

fn compile(calls: Calls, mismatch: SeccompAction, on_match: SeccompAction) -> Built {
    let filter = SeccompFilter::new(calls.into_rules(), mismatch, on_match, TargetArch::x86_64)
        .map_err(|e| e.to_string())?;
    let mut prog: BpfProgram = filter
        .try_into()
        .map_err(|e: seccompiler::BackendError| e.to_string())?;
    guard_x32(&mut prog);
    Ok(prog)
}

/// Inserts, after the architecture check (its first three instructions),
/// a check that kills an x32 call.
fn guard_x32(prog: &mut BpfProgram) {
    // BPF_LD | BPF_W | BPF_ABS (the first two are 0).
    const BPF_LD_W_ABS: u16 = 0x20;
    const BPF_JGE_K: u16 = 0x05 | 0x30;
    const BPF_RET_K: u16 = 0x06;
    const X32_SYSCALL_BIT: u32 = 0x4000_0000;
    let at = 3.min(prog.len());
    let guard = [
        sock_filter {
            code: BPF_LD_W_ABS,
            jt: 0,
            jf: 0,
            k: 0,
        },
        sock_filter {
            code: BPF_JGE_K,
            jt: 0,
            jf: 1,
            k: X32_SYSCALL_BIT,
        },
        sock_filter {
            code: BPF_RET_K,
            jt: 0,
            jf: 0,
            k: libc::SECCOMP_RET_KILL_PROCESS,
        },
    ];
    prog.splice(at..at, guard);
}

fn cond(arg: u8, op: SeccompCmpOp, value: u64) -> Result<SeccompCondition, String> {
    SeccompCondition::new(arg, SeccompCmpArgLen::Dword, op, value).map_err(|e| e.to_string())
}

fn rule(conds: Vec<SeccompCondition>) -> Result<SeccompRule, String> {
    SeccompRule::new(conds).map_err(|e| e.to_string())
}

/// `arg & bits == bits`.
fn has_bits(arg: u8, bits: u64) -> Result<SeccompCondition, String> {
    cond(arg, SeccompCmpOp::MaskedEq(bits), bits)
}

fn nr(name: &str) -> u32 {
    // Names written here are all in the table (a test checks each).
    syscall_number(name).unwrap_or(u32::MAX)
}

/// The programs `sb` asks for; `None` when it asks for no filter. The
/// error names the key whose calls could not be compiled.
pub(crate) fn build(sb: &Sandbox) -> Result<Option<Programs>, (Key, String)> {
    let mut by_action: BTreeMap<Action, Calls> = BTreeMap::new();
    let eperm = Action::Errno(libc::EPERM);
    // Each program with whether it stops seccomp(2) itself: those go last,
    // or the child could not install the ones after them.
    let mut progs: Vec<(bool, BpfProgram)> = Vec::new();
    let seccomp_nr = nr("seccomp");
    let default = sb
        .system_call_error_number
        .map_or(Action::Kill, Action::from);
    let deny_group = |by: &mut BTreeMap<Action, Calls>, group: &str| {
        for n in resolve_name(group).unwrap_or_default() {
            by.entry(eperm).or_default().always(n);
        }
    };
    if sb.protect_clock {
        deny_group(&mut by_action, "@clock");
    }
    if sb.protect_kernel_modules {
        deny_group(&mut by_action, "@module");
    }
    if sb.protect_kernel_logs {
        deny_group(&mut by_action, "syslog");
    }
    if sb.protect_hostname {
        deny_group(&mut by_action, "sethostname");
        deny_group(&mut by_action, "setdomainname");
    }
    if sb.private_devices {
        deny_group(&mut by_action, "@raw-io");
    }
    let key = |k: Key| move |e: String| (k, e);
    if let Some(f) = sb.system_call_filter.resolve() {
        if f.allow_list {
            let mut calls = Calls::default();
            for &n in f.calls.keys() {
                calls.always(n);
            }
            let stops = !f.calls.contains_key(&seccomp_nr);
            progs.push((
                stops,
                compile(calls, default.seccomp(), SeccompAction::Allow)
                    .map_err(key(Key::SystemCallFilter))?,
            ));
        } else {
            for (&n, &errno) in &f.calls {
                let action = errno.map_or(default, Action::Errno);
                by_action.entry(action).or_default().always(n);
            }
        }
    }
    if let Some(af) = &sb.restrict_address_families {
        families(
            af,
            by_action
                .entry(Action::Errno(libc::EAFNOSUPPORT))
                .or_default(),
        )
        .map_err(key(Key::RestrictAddressFamilies))?;
    }
    if let Some(allowed) = sb.restrict_namespaces {
        let denied = ALL_NAMESPACES & !allowed;
        if denied != 0 {
            namespaces(denied, by_action.entry(eperm).or_default())
                .map_err(key(Key::RestrictNamespaces))?;
            by_action
                .entry(Action::Errno(libc::ENOSYS))
                .or_default()
                .always(nr("clone3"));
        }
    }
    if sb.restrict_suid_sgid {
        suid_sgid(by_action.entry(eperm).or_default()).map_err(key(Key::RestrictSuidSgid))?;
        by_action
            .entry(Action::Errno(libc::ENOSYS))
            .or_default()
            .always(nr("openat2"));
    }
    if sb.lock_personality {
        // Only the personality the init runs with (PER_LINUX), or a query.
        let r = cond(0, SeccompCmpOp::Ne, 0)
            .and_then(|a| Ok(vec![a, cond(0, SeccompCmpOp::Ne, 0xffff_ffff)?]))
            .and_then(rule)
            .map_err(key(Key::LockPersonality))?;
        by_action
            .entry(eperm)
            .or_default()
            .when(nr("personality"), r);
    }
    if sb.memory_deny_write_execute {
        write_execute(by_action.entry(eperm).or_default())
            .map_err(key(Key::MemoryDenyWriteExecute))?;
    }
    for (action, calls) in by_action {
        if calls.0.is_empty() {
            continue;
        }
        let stops = calls.0.contains_key(&i64::from(seccomp_nr));
        progs.push((
            stops,
            compile(calls, SeccompAction::Allow, action.seccomp())
                .map_err(key(Key::SystemCallFilter))?,
        ));
    }
    if progs.is_empty() && !sb.system_call_architectures.is_empty() {
        // Native calls only, and nothing else filtered.
        progs.push((
            false,
            compile(
                Calls::default(),
                SeccompAction::Allow,
                SeccompAction::KillProcess,
            )
            .map_err(key(Key::SystemCallArchitectures))?,
        ));
    }
    // One program at most stops seccomp(2): one mode of SystemCallFilter=
    // and one action per call.
    progs.sort_by_key(|(stops, _)| *stops);
    let progs: Vec<BpfProgram> = progs.into_iter().map(|(_, p)| p).collect();
    Ok((!progs.is_empty()).then_some(Programs(progs)))
}

/// `socket(2)`'s first argument: outside the allowed families, or one of
/// the denied ones.
fn families(af: &AddressFamilies, calls: &mut Calls) -> Result<(), String> {
    let socket = nr("socket");
    if af.allow_list {
        if af.families.is_empty() {
            calls.always(socket);
            return Ok(());
        }
        let outside = af
            .families
            .iter()
            .map(|&f| cond(0, SeccompCmpOp::Ne, u64::from(f)))
            .collect::<Result<Vec<_>, _>>()?;
        calls.when(socket, rule(outside)?);
    } else {
        for &f in &af.families {
            calls.when(
                socket,
                rule(vec![cond(0, SeccompCmpOp::Eq, u64::from(f))?])?,
            );
        }
    }
    Ok(())
}

/// `unshare(2)` and `clone(2)` with a denied `CLONE_NEW*` flag; `setns(2)`
/// into a denied kind, or into any kind (`nstype` 0).
fn namespaces(denied: u64, calls: &mut Calls) -> Result<(), String> {
    for bit in (0..64).map(|b| 1u64 << b).filter(|b| denied & b != 0) {
        for call in ["unshare", "clone"] {
            calls.when(nr(call), rule(vec![has_bits(0, bit)?])?);
        }
        calls.when(nr("setns"), rule(vec![has_bits(1, bit)?])?);
    }
    calls.when(nr("setns"), rule(vec![cond(1, SeccompCmpOp::Eq, 0)?])?);
    Ok(())
}

/// Setting the set-user-ID or set-group-ID bit: `chmod` and friends with
/// it in their mode, `open`/`openat`/`creat` creating a file with it,
/// `mknod` with it.
fn suid_sgid(calls: &mut Calls) -> Result<(), String> {
    let bits = [u64::from(libc::S_ISUID), u64::from(libc::S_ISGID)];
    let creat = libc::O_CREAT as u64;
    // (call, argument holding the mode, argument holding the open flags)
    let table: [(&str, u8, Option<u8>); 8] = [
        ("chmod", 1, None),
        ("fchmod", 1, None),
        ("fchmodat", 2, None),
        ("fchmodat2", 2, None),
        ("mknod", 1, None),
        ("mknodat", 2, None),
        ("open", 2, Some(1)),
        ("openat", 3, Some(2)),
    ];
    for (call, mode_arg, flags_arg) in table {
        for bit in bits {
            let mut conds = vec![has_bits(mode_arg, bit)?];
            if let Some(f) = flags_arg {
                conds.push(has_bits(f, creat)?);
            }
            calls.when(nr(call), rule(conds)?);
        }
    }
    for bit in bits {
        calls.when(nr("creat"), rule(vec![has_bits(1, bit)?])?);
    }
    Ok(())
}

/// Memory both writable and executable: `mmap` with `PROT_WRITE |
/// PROT_EXEC`; `mprotect`, `pkey_mprotect` adding `PROT_EXEC`; `shmat`
/// with `SHM_EXEC`.
fn write_execute(calls: &mut Calls) -> Result<(), String> {
    let wx = (libc::PROT_WRITE | libc::PROT_EXEC) as u64;
    let x = libc::PROT_EXEC as u64;
    calls.when(nr("mmap"), rule(vec![has_bits(2, wx)?])?);
    calls.when(nr("mprotect"), rule(vec![has_bits(2, x)?])?);
    calls.when(nr("pkey_mprotect"), rule(vec![has_bits(2, x)?])?);
    calls.when(
        nr("shmat"),
        rule(vec![has_bits(2, libc::SHM_EXEC as u64)?])?,
    );
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
mod tests {
    use super::*;
    use flotilla_units::context::ServiceContext;

    fn sandbox(pairs: &[(&str, &str)]) -> Sandbox {
        let mut c = ServiceContext::default();
        for (k, v) in pairs {
            c.set(Key::from_name(k).unwrap(), v).unwrap();
        }
        c.sandbox
    }

    #[test]
    fn names_used_here_exist() {
        for n in [
            "clone3",
            "openat2",
            "socket",
            "unshare",
            "clone",
            "setns",
            "personality",
            "mmap",
            "mprotect",
            "pkey_mprotect",
            "shmat",
            "chmod",
            "fchmod",
            "fchmodat",
            "fchmodat2",
            "mknod",
            "mknodat",
            "open",
            "openat",
            "creat",
        ] {
            assert_ne!(nr(n), u32::MAX, "{n}");
        }
    }

    #[test]
    fn no_filter_without_seccomp_keys() {
        assert!(build(&sandbox(&[("ProtectSystem", "strict")]))
            .unwrap()
            .is_none());
        assert!(build(&Sandbox::default()).unwrap().is_none());
    }

    #[test]
    fn one_program_per_action() {
        let sb = sandbox(&[
            ("SystemCallFilter", "@system-service"),
            ("SystemCallErrorNumber", "EPERM"),
            ("RestrictAddressFamilies", "AF_UNIX AF_INET"),
            ("RestrictNamespaces", "yes"),
            ("ProtectClock", "yes"),
            ("LockPersonality", "yes"),
            ("MemoryDenyWriteExecute", "yes"),
            ("RestrictSUIDSGID", "yes"),
        ]);
        let progs = build(&sb).unwrap().unwrap();
        // EPERM, EAFNOSUPPORT, ENOSYS, and last the allow list, which
        // refuses seccomp(2).
        assert_eq!(progs.0.len(), 4);
        assert_eq!(progs.0[3].last().unwrap().k, libc::SECCOMP_RET_ERRNO | 1);
        for p in &progs.0 {
            // The architecture check, then the x32 guard.
            assert_eq!(p[3].k, 0);
            assert_eq!(p[4].k, 0x4000_0000);
            assert_eq!(p[5].k, libc::SECCOMP_RET_KILL_PROCESS);
            assert!(p.len() < 4096);
        }
    }

    #[test]
    fn architectures_alone_give_a_native_only_program() {
        let progs = build(&sandbox(&[("SystemCallArchitectures", "native")]))
            .unwrap()
            .unwrap();
        assert_eq!(progs.0.len(), 1);
        // arch check (3), x32 guard (3), allow.
        assert_eq!(progs.0[0].len(), 7);
    }
}
