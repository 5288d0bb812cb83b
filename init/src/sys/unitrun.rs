//! What the init makes for one run of a unit, from its start until it has
//! stopped: its cgroup, its private `/tmp`, and its context prepared for
//! the child ([`super::context::prepare`]), whose first steps make its
//! directories and open its output files in the unit's own process
//! (`dirs.rs`). [`super::Sys::start_unit`] makes a
//! [`UnitRun`], every spawn of the unit lends it, a stop signals its
//! cgroup through it ([`super::Sys::signal_unit`]), and
//! [`super::Sys::end_unit`] kills what is left in the cgroup and takes it
//! all down.
//!
//! The cgroups are found once ([`setup`]): below the init's own cgroup of
//! a writable cgroup2. At the root of a hierarchy that others share (an
//! init in supervisor mode no manager delegated a subtree to, as in a test
//! run, or PID 1 of a PID namespace without a cgroup namespace), the units
//! go below a cgroup of the init's own, `flotilla-PID` or `flotilla-nsINODE`,
//! so that two inits never share (or kill) a unit's cgroup. The machine's
//! own PID 1 uses the root.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use thin_vec::ThinVec;

use flotilla_units::context::credentials::Credentials;
use flotilla_units::context::dirs::Preserve;
use flotilla_units::context::input::Input;
use flotilla_units::context::policy::SandboxPolicy;
use flotilla_units::context::process::{KillMode, OomPolicy};
use flotilla_units::context::{Key, ServiceContext};

use super::cgroup::{self, Cgroups, UnitCgroup};
use super::context::{self, ChildContext, Host, Params};
use super::dirs::{self, PrivateTmp};
use super::ipc;
use super::Pid;

/// The init's units' cgroups (`None`: no writable cgroup2, process
/// groups only), the host's abilities and the machine's size, found once.
struct Setup {
    cgroups: Option<Cgroups>,
    host: Host,
    machine: (u64, u64),
    /// The cgroup made for this init in supervisor mode, removed at exit.
    own: Option<PathBuf>,
}

static SETUP: OnceLock<Setup> = OnceLock::new();

/// Finds the cgroups (once). `pid1`: the base is the root of the
/// hierarchy, as it is. Returns why there are none, to be said once.
pub fn setup(pid1: bool) -> Result<(), String> {
    let s = SETUP.get_or_init(|| {
        let (cgroups, own) = match Cgroups::discover() {
            Ok(c) if !(pid1 && machine_init()) && is_hierarchy_root(c.base()) => {
                // Only an init that sees the machine's processes can tell
                // a gone init from a live one in another PID namespace,
                // whose PID its own /proc does not hold.
                if machine_init() {
                    remove_stale(c.base());
                }
                let own = c.base().join(own_name(pid1));
                // Cgroups::at says why, if it could not be made.
                let _ = std::fs::create_dir(&own);
                (Cgroups::at(own.clone()).ok(), Some(own))
            }
            Ok(c) if pid1 && machine_init() => (Some(c.machine_layout()), None),
            Ok(c) => (Some(c), None),
            Err(_) => (None, None),
        };
        // Kills counted in the init's cgroup before now (an earlier
        // init's, before a re-exec) are no news.
        if let Some(c) = &cgroups {
            c.init_oom_kills();
        }
        Setup {
            cgroups,
            host: Host::probe(),
            machine: cgroup::machine(),
            own,
        }
    });
    match &s.cgroups {
        Some(_) => Ok(()),
        None => Err(match Cgroups::discover() {
            Err(e) => format!("no cgroups for the units ({e}): process groups only"),
            Ok(_) => "no cgroups for the units: process groups only".to_string(),
        }),
    }
}

/// Whether this process is in the initial PID namespace (its inode is
/// the kernel's `PROC_PID_INIT_INO`): PID 1 there is the machine's init.
fn machine_init() -> bool {
    std::fs::read_link("/proc/self/ns/pid").is_ok_and(|l| l.as_os_str() == "pid:[4026531836]")
}

/// The name of the init's own cgroup at the root of a hierarchy shared
/// with others: `flotilla-PID`, or for PID 1 of a PID namespace (whose
/// PID is 1 in every namespace) `flotilla-ns` and the namespace's inode.
fn own_name(pid1: bool) -> String {
    if pid1 {
        let ns = std::fs::read_link("/proc/self/ns/pid")
            .ok()
            .map(|l| {
                l.to_string_lossy()
                    .chars()
                    .filter(char::is_ascii_digit)
                    .collect::<String>()
            })
            .unwrap_or_default();
        format!("flotilla-ns{ns}")
    } else {
        format!("flotilla-{}", std::process::id())
    }
}

/// Removes the cgroups of inits that are gone (killed before they could
/// remove their own): `flotilla-PID` with no process `PID`. A cgroup that
/// still holds processes is left alone (the kernel refuses to remove it);
/// an empty one of a live init (between its start and its first unit's)
/// is not, so only an init in the machine's PID namespace sweeps: one in a
/// namespace of its own sees no other init's PID, and took a neighbour's
/// cgroup away under its first unit.
fn remove_stale(base: &Path) {
    let Ok(list) = std::fs::read_dir(base) else {
        return;
    };
    for e in list.flatten() {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("flotilla-"))
            .filter(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
        else {
            continue;
        };
        if Path::new("/proc").join(pid).exists() {
            continue;
        }
        cgroup::remove_tree(&e.path());
    }
}

/// Whether `dir` is the root of its cgroup2 hierarchy (it has no
/// `cgroup.events`, which every other cgroup has).
fn is_hierarchy_root(dir: &Path) -> bool {
    !dir.join("cgroup.events").exists()
}

/// One run of a unit: see the module documentation.
///
/// What every run has is kept inline; what only a unit whose context asks
/// for it has (its directories, private `/tmp`, credentials, input data) is
/// in one box, `Made`, allocated only then: a thousand plain units
/// running keep none (`docs/performance.md`, "Init memory").
#[derive(Debug, Default)]
pub struct UnitRun {
    cgroup: Option<UnitCgroup>,
    /// The steps of a process that runs with the unit's context. None with
    /// a cgroup: the context only joins it, made at each spawn
    /// ([`ChildContext::joining`]).
    child: Option<Box<ChildContext>>,
    /// The steps of a `+` command (likewise).
    bare: Bare,
    kill_mode: KillMode,
    /// `SendSIGKILL=no`: what is left in the cgroup at the end is not
    /// killed, as systemd leaves it running.
    no_sigkill: bool,
    /// Keys left out (`X-SkipUnsupported=`). This list and the next are
    /// `ThinVec`s, one word each and nothing allocated while empty, as
    /// they are in most runs.
    notes: ThinVec<String>,
    /// The settings not applied that no child context holds: those that
    /// need a cgroup of the unit's own, left out for want of one
    /// (`as-systemd`), and those of a context left with no step to take
    /// (every key it set was left out), which is not kept.
    left_out: ThinVec<flotilla_units::protocol::NotApplied>,
    /// The user and group counted for `RemoveIPC=` (`ipc.rs`).
    ipc: ipc::Owner,
    made: Option<Box<Made>>,
}

/// The steps of a `+` command: its cgroup, directories, input and output
/// (as in systemd, it skips the sandbox and the identity, not those).
#[derive(Debug, Default)]
enum Bare {
    /// None to take.
    #[default]
    None,
    /// The same as the unit's own: its context sets nothing a `+` command
    /// skips, so one prepared context serves both.
    Child,
    /// Steps of their own.
    Own(Box<ChildContext>),
}

/// What a run makes for a context that asks for it.
#[derive(Debug, Default)]
struct Made {
    /// `RUNTIME_DIRECTORY=…` and the like.
    env: Vec<(&'static str, String)>,
    private_tmp: Option<PrivateTmp>,
    /// `/run/credentials/UNIT`, with `LoadCredential=`/`SetCredential=`.
    credentials: Option<PathBuf>,
    directories: flotilla_units::context::dirs::Directories,
    /// `StandardInput=data`: the bytes, in a sealed memfd.
    input: Option<std::os::fd::OwnedFd>,
}

impl Made {
    /// Whether nothing was made (no box is kept then).
    fn is_empty(&self) -> bool {
        let Made {
            env,
            private_tmp,
            credentials,
            directories,
            input,
        } = self;
        env.is_empty()
            && private_tmp.is_none()
            && credentials.is_none()
            && input.is_none()
            && *directories == flotilla_units::context::dirs::Directories::default()
    }
}

thread_local! {
    /// The users and groups of the running units, for `RemoveIPC=`.
    static USERS: std::cell::RefCell<ipc::Users> = std::cell::RefCell::default();
}

/// The steps a child of a run takes: kept by the run, or only the join
/// of its cgroup, made for the spawn.
#[derive(Debug)]
pub enum RunContext<'a> {
    /// Prepared at the start, kept by the run.
    Kept(&'a ChildContext),
    /// Made for this spawn.
    Joining(ChildContext),
}

impl std::ops::Deref for RunContext<'_> {
    type Target = ChildContext;

    fn deref(&self) -> &ChildContext {
        match self {
            RunContext::Kept(c) => c,
            RunContext::Joining(c) => c,
        }
    }
}

impl UnitRun {
    /// The steps a child takes: with the unit's whole context, or (`+`)
    /// its cgroup only.
    pub fn child(&self, full_privileges: bool) -> Option<RunContext<'_>> {
        let kept = match (full_privileges, &self.bare) {
            (false, _) | (true, Bare::Child) => self.child.as_deref(),
            (true, Bare::Own(c)) => Some(&**c),
            (true, Bare::None) => None,
        };
        match (kept, &self.cgroup) {
            (Some(c), _) => Some(RunContext::Kept(c)),
            (None, Some(cg)) => Some(RunContext::Joining(ChildContext::joining(cg))),
            (None, None) => None,
        }
    }

    /// The variables the unit's processes get (its directories).
    pub fn env(&self) -> &[(&'static str, String)] {
        self.made.as_ref().map_or(&[], |m| &m.env)
    }

    /// Keys left out (`X-SkipUnsupported=`), for the unit's log.
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// Adds a setting the init left out of this run for lack of a
    /// privilege (a non-root init's `User=`: `runtime/executor.rs`).
    pub fn left_out(&mut self, n: flotilla_units::protocol::NotApplied) {
        self.left_out.push(n);
    }

    /// The settings of this run not applied, or applied in part, because
    /// the init lacks a privilege (`degrade.rs`).
    pub fn not_applied(&self) -> Vec<flotilla_units::protocol::NotApplied> {
        let mut all = self.left_out.to_vec();
        if let Some(c) = &self.child {
            all.extend(c.not_applied());
        }
        all
    }

    /// Whether the run made a private `/tmp` (`PrivateTmp=` applied).
    pub fn has_private_tmp(&self) -> bool {
        self.made.as_ref().is_some_and(|m| m.private_tmp.is_some())
    }

    /// Whether the unit's processes are in a cgroup of their own.
    pub fn has_cgroup(&self) -> bool {
        self.cgroup.is_some()
    }

    /// Its cgroup, if it has one.
    pub fn cgroup(&self) -> Option<&super::cgroup::UnitCgroup> {
        self.cgroup.as_ref()
    }

    /// The user its processes run as (`User=`, or a dynamic user's):
    /// systemd's `ref_uid`. `None`: the init's own.
    pub fn owner_uid(&self) -> Option<u32> {
        self.ipc.uid
    }

    /// Its `KillMode=`.
    pub fn kill_mode(&self) -> KillMode {
        self.kill_mode
    }

    /// `StandardInput=data`: a new descriptor of the data, read from its
    /// start (each process reads its own copy: a shared offset would give
    /// a second process what the first left). `None`: no data.
    pub fn input_data(&self) -> Option<Result<std::os::fd::OwnedFd, String>> {
        let fd = self.made.as_ref()?.input.as_ref()?;
        Some(super::input_data::reopen(fd).map_err(|e| format!("StandardInput=data: {e}")))
    }
}

/// Makes what a run of unit `name` needs. `owner`: the unit's user and
/// group, who own its directories. The error names the key that cannot be
/// honoured; what was made before it is taken down again.
pub fn start(
    name: &str,
    ctx: &ServiceContext,
    owner: Option<(u32, u32)>,
) -> Result<UnitRun, String> {
    let mut run = UnitRun {
        kill_mode: ctx.kill_mode,
        no_sigkill: ctx.no_sigkill,
        ..UnitRun::default()
    };
    let mut made = Made {
        directories: ctx.directories.clone(),
        ..Made::default()
    };
    let res = fill(&mut run, &mut made, name, ctx, owner);
    if !made.is_empty() {
        run.made = Some(Box::new(made));
    }
    if res.is_err() {
        end(&run, true);
        return res.map(|()| run);
    }
    run.ipc = ipc::Owner {
        uid: owner.map(|(u, _)| u),
        gid: owner.map(|(_, g)| g),
        remove: ctx.remove_ipc,
    };
    USERS.with(|u| u.borrow_mut().start(run.ipc));
    Ok(run)
}

/// The settings of `ctx` that need a cgroup of the unit's own, where
/// there is none: each is left out as systemd leaves it out where it
/// cannot write the cgroup (a container without one delegated: its
/// attribute writes fail and are logged, the device and address programs
/// are not attached, the service runs), and named; under `strict`, or for
/// a key the unit lets be skipped, as they say.
fn without_cgroup(
    run: &mut UnitRun,
    ctx: &ServiceContext,
    skipped: &mut Vec<String>,
) -> Result<(), String> {
    let mut needs: Vec<(&str, &str)> = ctx
        .resources
        .controllers()
        .into_iter()
        .map(|(_, key)| (key, "its cgroup controller"))
        .collect();
    if ctx.resources.devices.filter().is_some() {
        needs.push(("DeviceAllow", "a program on the unit's cgroup"));
    }
    if ctx.resources.ip_access.filters() {
        needs.push(("IPAddressDeny", "a program on the unit's cgroup"));
    }
    if ctx.resources.delegate.is_some() {
        needs.push(("Delegate", "a cgroup to hand to the unit"));
    }
    needs.sort_unstable();
    needs.dedup_by_key(|n| n.0);
    let strict = super::degrade::policy(ctx) == SandboxPolicy::Strict;
    for (setting, what) in needs {
        let why = format!("needs {what}, and there is no writable cgroup2 for the units");
        if Key::from_systemd(setting).is_some_and(|k| ctx.may_skip(k)) {
            skipped.push(format!("{setting} skipped: {why}"));
        } else if strict {
            return Err(format!("{setting} {why} (sandbox: strict)"));
        } else {
            run.left_out.push(flotilla_units::protocol::NotApplied {
                setting: setting.to_owned(),
                reason: format!(
                    "not applied: {why}; the service runs without it, as under systemd"
                ),
            });
        }
    }
    Ok(())
}

/// Makes the unit's cgroup with its limits. A limit its cgroup cannot
/// take (its controller is not available there, its file is refused) that
/// the unit lets be skipped (`X-SkipUnsupported=`) is left out and named,
/// as where there is no cgroup at all; any other fails the start, naming
/// its key. The context is copied only when something is left out.
fn create_cgroup(
    cgs: &Cgroups,
    name: &str,
    ctx: &ServiceContext,
    owner: Option<(u32, u32)>,
    (memory, tasks): (u64, u64),
    skipped: &mut Vec<String>,
) -> Result<UnitCgroup, String> {
    let mut without: Option<ServiceContext> = None;
    loop {
        let limits = without.as_ref().map_or(&ctx.resources, |c| &c.resources);
        match cgs.create(name, limits, owner, memory, tasks) {
            Ok(cg) => return Ok(cg),
            Err((Some(k), e)) if ctx.may_skip(k) => {
                let mut c = without.take().unwrap_or_else(|| ctx.clone());
                let before = c.resources.clone();
                c.reset(k);
                if c.resources == before {
                    // Nothing left to leave out: the same error again.
                    return Err(format!("{k} {e}"));
                }
                skipped.push(format!("{k} skipped: {e}"));
                without = Some(c);
            }
            Err((Some(k), e)) => return Err(format!("{k} {e}")),
            Err((None, e)) => return Err(e),
        }
    }
}

fn fill(
    run: &mut UnitRun,
    made: &mut Made,
    name: &str,
    ctx: &ServiceContext,
    owner: Option<(u32, u32)>,
) -> Result<(), String> {
    let setup = SETUP.get();
    let mut skipped = Vec::new();
    if let Some(s) = setup {
        if let Some(cgs) = &s.cgroups {
            let (memory, tasks) = s.machine;
            let cg = create_cgroup(cgs, name, ctx, owner, (memory, tasks), &mut skipped)?;
            // `OOMPolicy=kill`: the kernel kills the whole cgroup at once.
            if ctx.oom_policy == OomPolicy::Kill {
                if let Err(e) = cg.set_oom_group() {
                    skipped.push(format!("OOMPolicy=kill: memory.oom.group not set: {e}"));
                }
            }
            run.cgroup = Some(cg);
        } else {
            without_cgroup(run, ctx, &mut skipped)?;
        }
    }
    // The directories and output files are made by the unit's process
    // (the context's first steps): only their names are needed here.
    made.env = dirs::environment(&ctx.directories);
    if !ctx.credentials.is_empty() {
        let dir = Credentials::dir(name);
        made.env
            .push(("CREDENTIALS_DIRECTORY", dir.to_string_lossy().into_owned()));
        made.credentials = Some(dir);
    }
    if ctx.input() == Input::Data {
        made.input = Some(
            super::input_data::sealed(&ctx.input_data)
                .map_err(|e| format!("StandardInput=data: {e}"))?,
        );
    }
    let probed;
    let host = match setup {
        Some(s) => &s.host,
        None => {
            probed = Host::probe();
            &probed
        }
    };
    // Without CAP_SYS_ADMIN there is no mount namespace to bind it in:
    // under `as-systemd` the sandbox is left out (`degrade.rs`), and
    // under `strict` the start fails on the key, naming it.
    if ctx.sandbox.private_tmp && host.sys_admin {
        made.private_tmp = Some(PrivateTmp::create(Path::new(dirs::PRIVATE_DIR), name)?);
    }
    let params = Params {
        uid: owner.map(|(u, _)| u),
        cgroup: run.cgroup.as_ref(),
        private_tmp: made.private_tmp.as_ref().map(PrivateTmp::dir),
        owner,
        credentials: made.credentials.as_deref(),
    };
    let child = context::prepare(ctx, &params, host).map_err(|e| e.to_string())?;
    run.notes = child.notes().iter().cloned().collect();
    run.notes.extend(skipped);
    // A `+` command skips the sandbox and the identity, not the cgroup, the
    // directories or where the output goes (as in systemd); with none of
    // those, it has no steps.
    let bare_needed = run.cgroup.is_some() || child.detaches();
    if child.is_empty() {
        run.left_out.extend(child.not_applied());
    } else if !child.is_joining() {
        run.child = Some(Box::new(child));
    }
    if !bare_needed {
        return Ok(());
    }
    let bare_ctx = ServiceContext {
        directories: ctx.directories.clone(),
        standard_input: ctx.standard_input.clone(),
        input_data: ctx.input_data.clone(),
        tty: ctx.tty.clone(),
        standard_output: ctx.standard_output.clone(),
        standard_error: ctx.standard_error.clone(),
        credentials: ctx.credentials.clone(),
        ..ServiceContext::default()
    };
    if bare_ctx == *ctx {
        run.bare = Bare::Child;
        return Ok(());
    }
    let bare = context::prepare(&bare_ctx, &params, host).map_err(|e| e.to_string())?;
    if !bare.is_empty() && !bare.is_joining() {
        run.bare = Bare::Own(Box::new(bare));
    }
    Ok(())
}

/// The processes of the run's cgroup.
pub fn pids(run: &UnitRun) -> Vec<super::Pid> {
    run.cgroup.as_ref().map_or_else(Vec::new, UnitCgroup::pids)
}

/// What the run's cgroup uses now.
pub fn usage(run: &UnitRun) -> Option<flotilla_units::protocol::Usage> {
    let stats = run.cgroup.as_ref()?.stats();
    Some(flotilla_units::protocol::Usage {
        memory_bytes: stats.memory,
        cpu_usec: stats.cpu_usec,
        tasks: stats.tasks,
    })
}

/// The cgroup directory of `slice` below the units' cgroups, while it
/// exists.
pub fn slice_cgroup(slice: &str) -> Option<PathBuf> {
    let cgs = SETUP.get()?.cgroups.as_ref()?;
    super::freezer::slice_dir(cgs.base(), slice)
}

/// The OOM kills in the run's cgroup since the last look.
pub fn oom_kills(run: &UnitRun) -> u32 {
    run.cgroup.as_ref().map_or(0, UnitCgroup::new_oom_kills)
}

/// The OOM kills of children still in the init's memory since the last
/// look (0 without cgroups).
pub fn init_oom_kills() -> u32 {
    SETUP
        .get()
        .and_then(|s| s.cgroups.as_ref())
        .map_or(0, Cgroups::init_oom_kills)
}

/// Sends `signal` to every process of the run's cgroup but those
/// `reached` already; how many got it (0 without a cgroup).
pub fn signal(run: &UnitRun, signal: i32, reached: super::Reached) -> usize {
    run.cgroup
        .as_ref()
        .map_or(0, |cg| cg.signal_but(signal, reached))
}

/// Kills what is left in the run's cgroup (unless `KillMode=none` or
/// `process`, or `SendSIGKILL=no`, which leave them, as systemd does),
/// then removes the cgroup
/// if it is empty, the private `/tmp`, and the runtime directories unless
/// they are preserved (`keep_runtime` for a restart). The processes left
/// running, each with its name (`/proc/PID/comm`).
pub fn end(run: &UnitRun, keep_runtime: bool) -> Vec<(Pid, String)> {
    let mut left = Vec::new();
    if let Some(cg) = &run.cgroup {
        if !run.no_sigkill && matches!(run.kill_mode, KillMode::ControlGroup | KillMode::Mixed) {
            let _ = cg.kill();
        } else {
            left = cg.pids().into_iter().map(|pid| (pid, comm(pid))).collect();
        }
        // Fails while killed processes are still dying, or while what
        // `SendSIGKILL=no` left runs: the next run's start removes it
        // then (or reuses it, cgroup.rs), else the init's exit does.
        let _ = cg.remove();
        if let Some(cgs) = SETUP.get().and_then(|s| s.cgroups.as_ref()) {
            cgs.release(cg);
        }
    }
    if let Some(made) = &run.made {
        if let Some(t) = &made.private_tmp {
            let _ = t.remove();
        }
        if let Some(dir) = &made.credentials {
            let _ = super::credentials::remove(dir);
        }
        let preserve = match made.directories.runtime_preserve {
            Preserve::No => false,
            Preserve::Yes => true,
            Preserve::Restart => keep_runtime,
        };
        if !preserve {
            let _ = dirs::remove_runtime(&made.directories);
        }
    }
    let (uid, gid) = USERS.with(|u| u.borrow_mut().stop(run.ipc, keep_runtime));
    if uid.is_some() || gid.is_some() {
        let _ = ipc::remove(uid, gid);
    }
    left
}

/// A process's name (`/proc/PID/comm`), "" once it is gone.
fn comm(pid: Pid) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .map(|c| c.trim_end().to_string())
        .unwrap_or_default()
}

/// Removes the cgroup made for this init (at its exit; the units' are
/// gone by then).
pub fn teardown() {
    if let Some(own) = SETUP.get().and_then(|s| s.own.as_ref()) {
        cgroup::remove_tree(own);
    }
}

#[cfg(test)]
#[allow(clippy::panic)]
mod tests {
    use super::*;

    fn context(keys: &[(Key, &str)]) -> ServiceContext {
        let mut ctx = ServiceContext::default();
        for (k, v) in keys {
            ctx.set(*k, v).unwrap_or_else(|e| panic!("{k}: {e}"));
        }
        ctx
    }

    fn run_of(ctx: &ServiceContext) -> UnitRun {
        start("memory-test", ctx, None).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn a_unit_that_sets_nothing_keeps_no_context_and_no_box() {
        let run = run_of(&ServiceContext::default());
        assert!(run.child(false).is_none());
        assert!(run.child(true).is_none());
        assert!(run.made.is_none());
        assert!(run.env().is_empty());
    }

    #[test]
    fn a_plus_command_shares_the_steps_of_a_context_that_sets_nothing_it_skips() {
        let run = run_of(&context(&[(Key::RuntimeDirectory, "memory-test")]));
        let (own, plus) = (run.child(false), run.child(true));
        assert!(own.as_ref().is_some_and(|c| !c.is_empty()));
        assert!(matches!((&own, &plus),
            (Some(RunContext::Kept(a)), Some(RunContext::Kept(b))) if std::ptr::eq(*a, *b)));
        assert_eq!(
            run.env(),
            [("RUNTIME_DIRECTORY", "/run/memory-test".to_owned())]
        );
    }

    #[test]
    fn a_plus_command_skips_the_sandbox_with_steps_of_its_own() {
        let run = run_of(&context(&[
            (Key::RuntimeDirectory, "memory-test"),
            (Key::NoNewPrivileges, "yes"),
        ]));
        let own = run.child(false).map(|c| c.to_string()).unwrap_or_default();
        let plus = run.child(true).map(|c| c.to_string()).unwrap_or_default();
        assert!(own.contains("no-new-privileges"), "{own}");
        assert!(!plus.contains("no-new-privileges"), "{plus}");
        assert!(plus.contains("memory-test"), "{plus}");
    }
}
