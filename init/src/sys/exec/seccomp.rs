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

/// Calls numbered `lo..=hi` get `ret` (a `SECCOMP_RET_*` value): checked
/// before the program's own rules.
#[derive(Debug, Clone, Copy)]
struct Guard {
    lo: u32,
    hi: u32,
    ret: u32,
}

/// The x32 calls (bit 30 set): killed.
const X32: Guard = Guard {
    lo: 0x4000_0000,
    hi: u32::MAX,
    ret: libc::SECCOMP_RET_KILL_PROCESS,
};

/// A program that gives `calls` `on_match` and allows everything else but
/// what `guards` catch.
fn compile(calls: Calls, on_match: SeccompAction, guards: &[Guard]) -> Built {
    let filter = SeccompFilter::new(
        calls.into_rules(),
        SeccompAction::Allow,
        on_match,
        TargetArch::x86_64,
    )
    .map_err(|e| e.to_string())?;
    let mut prog: BpfProgram = filter
        .try_into()
        .map_err(|e: seccompiler::BackendError| e.to_string())?;
    insert_guards(&mut prog, std::iter::once(&X32).chain(guards));
    Ok(prog)
}

/// Inserts the guards after the architecture check (the program's first
/// three instructions). Each is four instructions: load the number, skip
/// to the next guard below `lo` or above `hi`, return `ret`.
fn insert_guards<'a>(prog: &mut BpfProgram, guards: impl Iterator<Item = &'a Guard>) {
    // BPF_LD | BPF_W | BPF_ABS (the first two are 0).
    const LD_NR: u16 = 0x20;
    const JGE_K: u16 = 0x05 | 0x30;
    const JGT_K: u16 = 0x05 | 0x20;
    const RET_K: u16 = 0x06;
    let insn = |code, jt, jf, k| sock_filter { code, jt, jf, k };
    let code: Vec<sock_filter> = guards
        .flat_map(|g| {
            [
                insn(LD_NR, 0, 0, 0),
                insn(JGE_K, 0, 2, g.lo),
                insn(JGT_K, 1, 0, g.hi),
                insn(RET_K, 0, 0, g.ret),
            ]
        })
        .collect();
    let at = 3.min(prog.len());
    prog.splice(at..at, code);
}

/// An allow list as a deny list: every known call it does not list gets
/// `deny`, and so does every number x86_64 does not have (ranges, as
/// guards). Far shorter than the allow list itself, which matters: the
/// kernel walks a program for every number when it installs it.
fn allow_list(allowed: &BTreeMap<u32, Option<i32>>, deny: SeccompAction) -> Built {
    let known = resolve_name("@known").unwrap_or_default();
    let mut calls = Calls::default();
    for &n in known.iter().filter(|n| !allowed.contains_key(n)) {
        calls.always(n);
    }
    let ret = u32::from(deny.clone());
    let mut guards = Vec::new();
    let mut next = 0u32;
    for &n in &known {
        if n > next {
            guards.push(Guard {
                lo: next,
                hi: n - 1,
                ret,
            });
        }
        next = n + 1;
    }
    guards.push(Guard {
        lo: next,
        hi: X32.lo - 1,
        ret,
    });
    compile(calls, deny, &guards)
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
            let stops = !f.calls.contains_key(&seccomp_nr);
            progs.push((
                stops,
                allow_list(&f.calls, default.seccomp()).map_err(key(Key::SystemCallFilter))?,
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
    if sb.restrict_realtime {
        realtime(by_action.entry(eperm).or_default()).map_err(key(Key::RestrictRealtime))?;
    }
    for (action, calls) in by_action {
        if calls.0.is_empty() {
            continue;
        }
        let stops = calls.0.contains_key(&i64::from(seccomp_nr));
        progs.push((
            stops,
            compile(calls, action.seccomp(), &[]).map_err(key(Key::SystemCallFilter))?,
        ));
    }
    if progs.is_empty() && !sb.system_call_architectures.is_empty() {
        // Native calls only, and nothing else filtered.
        progs.push((
            false,
            compile(Calls::default(), SeccompAction::KillProcess, &[])
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

/// `sched_setscheduler(2)`'s policy (its second argument): what systemd
/// denies for `RestrictRealtime=`, `SCHED_FIFO` (1), `SCHED_RR` (2) and
/// anything above `SCHED_IDLE` (5: `SCHED_DEADLINE`, and any policy with
/// `SCHED_RESET_ON_FORK`). `sched_setattr(2)` takes a pointer that a
/// filter cannot read; systemd leaves it alone too.
fn realtime(calls: &mut Calls) -> Result<(), String> {
    let call = nr("sched_setscheduler");
    for policy in [libc::SCHED_FIFO, libc::SCHED_RR] {
        calls.when(call, rule(vec![cond(1, SeccompCmpOp::Eq, policy as u64)?])?);
    }
    calls.when(
        call,
        rule(vec![cond(1, SeccompCmpOp::Gt, libc::SCHED_IDLE as u64)?])?,
    );
    Ok(())
}

#[cfg(test)]
#[allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]
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

    /// Runs a classic BPF program on a call, as the kernel would (only
    /// the instructions these programs use): the `SECCOMP_RET_*` value.
    fn run(prog: &[sock_filter], arch: u32, nr: u32, args: [u64; 6]) -> u32 {
        let word = |off: u32| -> u32 {
            match off {
                0 => nr,
                4 => arch,
                o if (16..64).contains(&o) => {
                    let a = args[((o - 16) / 8) as usize];
                    if (o - 16) % 8 == 0 {
                        a as u32
                    } else {
                        (a >> 32) as u32
                    }
                }
                o => panic!("load at {o}"),
            }
        };
        let (mut pc, mut acc) = (0usize, 0u32);
        loop {
            let i = &prog[pc];
            pc += 1;
            let jump = |cond: bool| if cond { i.jt as usize } else { i.jf as usize };
            match i.code {
                0x20 => acc = word(i.k),
                0x54 => acc &= i.k,
                0x05 => pc += i.k as usize,
                0x15 => pc += jump(acc == i.k),
                0x25 => pc += jump(acc > i.k),
                0x35 => pc += jump(acc >= i.k),
                0x45 => pc += jump(acc & i.k != 0),
                0x06 => return i.k,
                c => panic!("instruction {c:#x}"),
            }
        }
    }

    /// What the installed programs answer together: the most severe (the
    /// kernel compares the actions as signed numbers: kill is the lowest).
    fn verdict(progs: &Programs, arch: u32, nr: u32, args: [u64; 6]) -> u32 {
        progs
            .0
            .iter()
            .map(|p| run(p, arch, nr, args))
            .min_by_key(|&r| (r & libc::SECCOMP_RET_ACTION_FULL) as i32)
            .unwrap()
    }

    const X86_64: u32 = 0xc000_003e;
    const ALLOW: u32 = libc::SECCOMP_RET_ALLOW;
    const KILL: u32 = libc::SECCOMP_RET_KILL_PROCESS;
    fn errno(e: i32) -> u32 {
        libc::SECCOMP_RET_ERRNO | e as u32
    }

    #[test]
    fn one_program_per_action() {
        let sb = sandbox(&[
            ("SystemCallFilter", "@system-service"),
            ("SystemCallFilter", "~@privileged @resources"),
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
        for p in &progs.0 {
            // The architecture check, then the x32 guard.
            assert_eq!(
                (p[3].k, p[4].k, p[5].k, p[6].k),
                (0, 0x4000_0000, u32::MAX, KILL)
            );
        }
        // The allow list, turned into a deny list, stays short.
        assert!(progs.0[3].len() < 600, "{}", progs.0[3].len());
        let v = |name: &str, args: [u64; 6]| verdict(&progs, X86_64, nr(name), args);
        let none = [0; 6];
        assert_eq!(v("read", none), ALLOW);
        assert_eq!(v("execve", none), ALLOW);
        assert_eq!(v("mount", none), errno(libc::EPERM));
        assert_eq!(v("setrlimit", none), errno(libc::EPERM)); // ~@resources
        assert_eq!(v("seccomp", none), errno(libc::EPERM));
        assert_eq!(v("clock_settime", none), errno(libc::EPERM));
        assert_eq!(v("socket", [libc::AF_UNIX as u64, 1, 0, 0, 0, 0]), ALLOW);
        assert_eq!(
            v("socket", [libc::AF_PACKET as u64, 1, 0, 0, 0, 0]),
            errno(libc::EAFNOSUPPORT)
        );
        assert_eq!(
            v("unshare", [libc::CLONE_NEWNET as u64, 0, 0, 0, 0, 0]),
            errno(libc::EPERM)
        );
        assert_eq!(
            v("unshare", [libc::CLONE_FILES as u64, 0, 0, 0, 0, 0]),
            ALLOW
        );
        assert_eq!(v("clone3", none), errno(libc::ENOSYS));
        assert_eq!(v("personality", [0xffff_ffff, 0, 0, 0, 0, 0]), ALLOW);
        assert_eq!(
            v("personality", [0x0040_0000, 0, 0, 0, 0, 0]),
            errno(libc::EPERM)
        );
        let rwx = (libc::PROT_READ | libc::PROT_WRITE | libc::PROT_EXEC) as u64;
        assert_eq!(v("mmap", [0, 4096, rwx, 0, 0, 0]), errno(libc::EPERM));
        assert_eq!(v("mmap", [0, 4096, 3, 0, 0, 0]), ALLOW);
        assert_eq!(v("chmod", [0, 0o4755, 0, 0, 0, 0]), errno(libc::EPERM));
        assert_eq!(v("chmod", [0, 0o755, 0, 0, 0, 0]), ALLOW);
        let creat = libc::O_CREAT as u64;
        assert_eq!(v("openat", [0, 0, creat, 0o2755, 0, 0]), errno(libc::EPERM));
        assert_eq!(v("openat", [0, 0, 0, 0o2755, 0, 0]), ALLOW);
        // Numbers x86_64 does not have, above them, x32, other arches.
        assert_eq!(verdict(&progs, X86_64, 400, none), errno(libc::EPERM));
        assert_eq!(verdict(&progs, X86_64, 100_000, none), errno(libc::EPERM));
        assert_eq!(verdict(&progs, X86_64, 0x4000_0000, none), KILL);
        assert_eq!(verdict(&progs, 0x4000_0003, 0, none), KILL); // i386
    }

    #[test]
    fn a_deny_list_kills_by_default_and_allows_the_rest() {
        let progs = build(&sandbox(&[("SystemCallFilter", "~@mount reboot:EACCES")]))
            .unwrap()
            .unwrap();
        assert_eq!(progs.0.len(), 2);
        let v = |name: &str| verdict(&progs, X86_64, nr(name), [0; 6]);
        assert_eq!(v("mount"), KILL);
        assert_eq!(v("reboot"), errno(libc::EACCES));
        assert_eq!(v("read"), ALLOW);
        assert_eq!(verdict(&progs, X86_64, 400, [0; 6]), ALLOW);
        assert_eq!(verdict(&progs, X86_64, 0x4000_0000, [0; 6]), KILL);
    }

    #[test]
    fn architectures_alone_give_a_native_only_program() {
        let progs = build(&sandbox(&[("SystemCallArchitectures", "native")]))
            .unwrap()
            .unwrap();
        assert_eq!(progs.0.len(), 1);
        // arch check (3), x32 guard (4), allow.
        assert_eq!(progs.0[0].len(), 8);
        assert_eq!(verdict(&progs, X86_64, 0, [0; 6]), ALLOW);
        assert_eq!(verdict(&progs, 0x4000_0003, 0, [0; 6]), KILL);
    }
}
