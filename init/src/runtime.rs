//! The event loop: one `mio::Poll`, one thread, no blocking calls.
//!
//! Fixed tokens for the signalfd and the control listener; every other
//! source (unit output pipes, notify sockets, control connections) gets a
//! token from a table. The planner's next deadline is the poll timeout:
//! there is no periodic tick. Each wake-up turns kernel events into planner
//! facts, then carries out the planner's actions until there are none, then
//! tells watchers (console, `set-target --wait`, `logs -f`, subscribers)
//! what changed.
//!
//! Nothing here panics: every failure is logged (to the console and the
//! unit's log) and the loop carries on.

use crate::args::Settings;
use crate::control::{ConnId, Control, Incoming, Watch};
use crate::logbuf::{LogBuf, LogFile, Tail};
use crate::notify::{NotifyMsg, NotifySocket};
use crate::outpipe::{Drained, OutPipe, Stream};
use crate::sys::{Credentials, Env, ExitStatus as SysExit, Sys, WallTime};
use flotilla_units::graph::{Graph, UnitId};
use flotilla_units::load::load_dir;
use flotilla_units::planner::{
    Action, ExitStatus, Fact, Notify, Planner, PlannerOptions, ReloadError, RestartError, Role,
};
use flotilla_units::protocol::{
    AnalyzeData, Applied, Edge, Envelope, ErrorCode, LogLine as PLogLine, Progress, Reply, Request,
    ShutdownKind, SystemStatus, UnitStatus, UnitTiming, PROGRESS_NAMES,
};
use flotilla_units::spec::{Origin, UnitSpec};
use flotilla_units::state::UnitState;
use flotilla_units::time::Instant;
use mio::unix::SourceFd;
use mio::{Events, Interest, Poll, Token};
use nix::sys::signal::{SigSet, Signal as NixSignal};
use nix::sys::signalfd::{SfdFlags, SignalFd};
use std::collections::BTreeMap;
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::time::Duration;

const SIGNAL_TOKEN: Token = Token(0);
const LISTENER_TOKEN: Token = Token(1);
/// Tokens of unit sources start here.
const SOURCE_BASE: usize = 16;
/// Tokens of control connections start here.
const CONN_BASE: usize = 1 << 30;
/// Bytes of output kept in memory per unit.
const LOG_RING_BYTES: usize = 64 * 1024;
/// Size at which a unit's log file is rotated.
const LOG_FILE_BYTES: u64 = 8 * 1024 * 1024;

/// What a dynamic token stands for: a unit by id (remapped when the graph
/// is replaced, as `Runtime::ios` is).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    Out { unit: UnitId },
    Notify { unit: UnitId },
}

/// A unit's I/O: its output pipes, log, notify socket and ready-grep.
///
/// Each spawn gets its own pair of pipes (stdout, stderr): the child has the
/// write ends, the init only the read ends, so it holds two descriptors per
/// running process rather than four per unit (every descriptor the init
/// holds is copied and closed again by each `clone` + `execve`). A pipe is
/// dropped at end of file, when every writer (the process and whatever
/// inherited its output) is gone; a unit may have several at once (main
/// process, a stop command, a daemon's leftovers).
struct UnitIo {
    pipes: Vec<(OutPipe, Token)>,
    log: LogBuf,
    /// Boxed: only `foreground-notified` units have one.
    notify: Option<Box<(NotifySocket, Token)>>,
    /// Boxed: only units with `ready-grep` have one.
    grep: Option<Box<regex_lite::Regex>>,
}

/// The directory's units, kept for `reload` and transient sets.
enum DirUnits {
    /// Their names, in order, when the graph holds each of them exactly as
    /// loaded (the usual case): the graph's copy of each spec is the only
    /// one. The names are one string, each followed by a newline (a name
    /// has none): one allocation rather than one per unit.
    InGraph(String),
    /// The specs themselves, when the graph left some out (errors at start).
    Own(Vec<(UnitSpec, Origin)>),
}

impl DirUnits {
    /// Names only if `graph` holds every one of `units` as it is.
    fn keep(units: Vec<(UnitSpec, Origin)>, graph: &Graph) -> DirUnits {
        let mut seen = std::collections::HashSet::with_capacity(units.len());
        let all_in = units.iter().all(|(s, o)| {
            seen.insert(s.name.as_str())
                && graph
                    .unit(&s.name)
                    .and_then(|id| graph.get(id))
                    .is_some_and(|n| !n.ghost && *n.spec == *s && n.origin == *o)
        });
        if all_in {
            let mut names =
                String::with_capacity(units.iter().map(|(s, _)| s.name.len() + 1).sum());
            for (s, _) in &units {
                names.push_str(&s.name);
                names.push('\n');
            }
            DirUnits::InGraph(names)
        } else {
            DirUnits::Own(units)
        }
    }

    fn len(&self) -> usize {
        match self {
            DirUnits::InGraph(names) => names.lines().count(),
            DirUnits::Own(v) => v.len(),
        }
    }

    /// A copy of the specs (from the graph for [`DirUnits::InGraph`]).
    fn specs(&self, graph: &Graph) -> Vec<(UnitSpec, Origin)> {
        match self {
            DirUnits::Own(v) => v.clone(),
            DirUnits::InGraph(names) => names
                .lines()
                .filter_map(|n| graph.unit(n).and_then(|id| graph.get(id)))
                .map(|n| ((*n.spec).clone(), n.origin.clone()))
                .collect(),
        }
    }
}

/// Why the loop ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// An orderly shutdown finished.
    Shutdown(ShutdownKind),
}

/// The init's state.
pub struct Runtime<S: Sys> {
    sys: S,
    poll: Poll,
    planner: Planner,
    settings: Settings,
    pid1: bool,
    sigfd: SignalFd,
    control: Control,
    tokens: Vec<Option<Source>>,
    /// Free slots of `tokens` (two are taken and given back per process).
    free_tokens: Vec<usize>,
    /// Each unit's I/O, by id (remapped when the graph is replaced),
    /// created at its first spawn.
    ios: Vec<Option<Box<UnitIo>>>,
    base_env: Env,
    mono0: Instant,
    wall0: WallTime,
    dir_units: DirUnits,
    transient: BTreeMap<String, Vec<UnitSpec>>,
    load_errors: Vec<String>,
    shutdown: Option<ShutdownKind>,
    notify_dir: PathBuf,
    /// The last state of each unit (by id; remapped when the graph is
    /// replaced) that was printed and noted in its log; `disabled` before
    /// any.
    printed: Vec<UnitState>,
    redrain: Vec<Token>,
    notify_seq: u64,
    /// Units whose log has lines not yet written to its file.
    unflushed: Vec<UnitId>,
    /// PID-1 hook (set by `pid1.rs` through [`Runtime::set_sigint`]): what
    /// SIGINT asks for. Reboot as the machine's PID 1 (Ctrl-Alt-Del),
    /// poweroff otherwise (a container's or a terminal's Ctrl-C).
    sigint: ShutdownKind,
    /// Whether the target was settled (active or failed) at the end of the
    /// last wake-up: the free memory is given back when it becomes so.
    settled: bool,
    /// PID-1 hook (read by `pid1.rs` through [`Runtime::failed_at_shutdown`]
    /// for a container's exit status): whether the target or a required
    /// unit had failed when the shutdown began.
    failed_at_shutdown: bool,
    /// The buffer [`Runtime::drive`] carries the planner's actions out of.
    actions: Vec<Action>,
}

/// Gives the allocator's free memory back to the system. glibc's `malloc`
/// keeps the pages of what was freed inside its heap (only the top is given
/// back on its own): after loading 1000 unit files that is 0.6 MiB.
/// `malloc_trim(3)` walks the free chunks and gives back their whole pages.
/// musl's allocator gives back free groups as it goes: nothing to do there.
fn release_free_memory() {
    #[cfg(target_env = "gnu")]
    // SAFETY: malloc_trim(3) takes no pointers and only gives back pages
    // that the allocator holds free; the init has one thread.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// The signals the loop takes through its signalfd.
pub fn handled_signals() -> SigSet {
    let mut set = SigSet::empty();
    for s in [
        NixSignal::SIGCHLD,
        NixSignal::SIGTERM,
        NixSignal::SIGINT,
        NixSignal::SIGHUP,
        NixSignal::SIGQUIT,
        NixSignal::SIGUSR1,
        NixSignal::SIGUSR2,
        NixSignal::SIGPWR,
        NixSignal::SIGPIPE,
    ] {
        set.add(s);
    }
    set
}

/// Prints a line on the console (stdout), ignoring errors: the console may
/// be gone, and that must not stop the init.
pub fn console(line: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

impl<S: Sys> Runtime<S> {
    /// Sets up the loop: blocks the handled signals into a signalfd, binds
    /// the control socket, loads the unit directory (leaving bad units out)
    /// and starts reaching the target.
    pub fn new(sys: S, settings: Settings, pid1: bool) -> Result<Runtime<S>, String> {
        let poll = Poll::new().map_err(|e| format!("create poll: {e}"))?;
        let set = handled_signals();
        set.thread_block()
            .map_err(|e| format!("block signals: {e}"))?;
        let sigfd = SignalFd::with_flags(&set, SfdFlags::SFD_NONBLOCK | SfdFlags::SFD_CLOEXEC)
            .map_err(|e| format!("signalfd: {e}"))?;
        poll.registry()
            .register(
                &mut SourceFd(&sigfd.as_raw_fd()),
                SIGNAL_TOKEN,
                Interest::READABLE,
            )
            .map_err(|e| format!("register signalfd: {e}"))?;
        let control = Control::bind(
            &settings.control,
            poll.registry(),
            LISTENER_TOKEN,
            CONN_BASE,
        )
        .map_err(|e| format!("control socket {}: {e}", settings.control.display()))?;
        let notify_dir = settings
            .control
            .parent()
            .map(|d| d.join("notify"))
            .unwrap_or_else(|| PathBuf::from("/run/init/notify"));
        let _ = std::fs::create_dir_all(&notify_dir);
        if let Some(dir) = &settings.log_dir {
            let _ = std::fs::create_dir_all(dir);
        }
        let _ = sys.set_child_subreaper();
        if let Err(e) = sys.raise_nofile_limit() {
            console(&format!("init: {e}"));
        }
        let mono0 = sys.monotonic_now();
        let wall0 = sys.wall_now();
        let (dir_units, load_errors) = match load_dir(&settings.units_dir) {
            Ok(l) => (
                l.units,
                l.diagnostics
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>(),
            ),
            Err(e) => (
                Vec::new(),
                vec![format!("{}: {e}", settings.units_dir.display())],
            ),
        };
        let (graph, diags) = Graph::build(dir_units.clone());
        let mut load_errors = load_errors;
        load_errors.extend(diags.iter().map(ToString::to_string));
        for e in &load_errors {
            console(&format!("init: {e}"));
        }
        let opts = PlannerOptions {
            max_concurrent_starts: settings.max_concurrent_starts,
        };
        let planner = Planner::new(graph, &settings.target, mono0, opts);
        let dir_units = DirUnits::keep(dir_units, planner.graph());
        // Loading the directory's files is the biggest peak there is.
        release_free_memory();
        if planner.graph().provider(&settings.target).is_none() {
            console(&format!(
                "init: no unit provides the target `{}`; nothing started",
                settings.target
            ));
        }
        let mut base_env = Env::from_current();
        base_env.remove("NOTIFY_SOCKET");
        base_env.remove("INIT_CONTROL");
        let _ = base_env.set_os("INIT_CONTROL", settings.control.as_os_str());
        let mut rt = Runtime {
            sys,
            poll,
            planner,
            settings,
            pid1,
            sigfd,
            control,
            tokens: Vec::new(),
            free_tokens: Vec::new(),
            ios: Vec::new(),
            base_env,
            mono0,
            wall0,
            dir_units,
            transient: BTreeMap::new(),
            load_errors,
            shutdown: None,
            notify_dir,
            printed: Vec::new(),
            redrain: Vec::new(),
            notify_seq: 0,
            unflushed: Vec::new(),
            sigint: if pid1 {
                ShutdownKind::Reboot
            } else {
                ShutdownKind::Poweroff
            },
            failed_at_shutdown: false,
            settled: false,
            actions: Vec::new(),
        };
        rt.drive();
        Ok(rt)
    }

    /// Runs until an orderly shutdown has stopped every unit.
    pub fn run(&mut self) -> Exit {
        let mut events = Events::with_capacity(256);
        loop {
            if let Some(kind) = self.shutdown {
                if self.planner.drained() {
                    self.flush_logs();
                    return Exit::Shutdown(kind);
                }
            }
            let now = self.sys.monotonic_now();
            let mut timeout = self.planner.next_deadline().map(|t| t.since(now));
            if !self.redrain.is_empty() {
                timeout = Some(Duration::ZERO);
            }
            if let Err(e) = self.poll.poll(&mut events, timeout) {
                if e.kind() != std::io::ErrorKind::Interrupted {
                    console(&format!("init: poll: {e}"));
                }
                continue;
            }
            let mut incoming = Vec::new();
            for ev in events.iter() {
                match ev.token() {
                    SIGNAL_TOKEN => self.on_signals(),
                    LISTENER_TOKEN => self.control.accept(self.poll.registry()),
                    t => {
                        if let Some(c) = self.control.conn_of(t) {
                            self.control.ready(c, self.poll.registry(), &mut incoming);
                        } else {
                            self.on_source(t);
                        }
                    }
                }
            }
            for t in std::mem::take(&mut self.redrain) {
                self.on_source(t);
            }
            for inc in incoming {
                self.on_request(inc);
            }
            let now = self.sys.monotonic_now();
            self.planner.tick(now);
            self.drive();
        }
    }

    /// The PID-1 flag.
    pub fn pid1(&self) -> bool {
        self.pid1
    }

    /// PID-1 hook: what SIGINT asks for (`pid1.rs` makes it poweroff in a
    /// container, where SIGINT is a Ctrl-C, not Ctrl-Alt-Del).
    pub fn set_sigint(&mut self, kind: ShutdownKind) {
        self.sigint = kind;
    }

    /// PID-1 hook: whether, when the shutdown began, the target had failed
    /// (its provider failed or blocked, or no unit provides it) or a
    /// required unit was failed. A container's init exits 1 then.
    pub fn failed_at_shutdown(&self) -> bool {
        self.failed_at_shutdown
    }

    /// Removes the control socket (at exit).
    pub fn close(&mut self) {
        self.control.remove_socket();
    }

    // ----- carrying out the planner's decisions ---------------------------

    /// Carries out actions until there are none, then reports changes.
    fn drive(&mut self) {
        // One buffer, kept between calls (no allocation per batch).
        let mut actions = std::mem::take(&mut self.actions);
        for _ in 0..1_000_000 {
            self.planner.drain_actions_into(&mut actions);
            if actions.is_empty() {
                break;
            }
            for a in actions.drain(..) {
                self.act(a);
            }
        }
        self.actions = actions;
        self.report_changes();
        self.flush_noted();
        // A launch (or a switch) is over: what it freed goes back.
        let settled = self.planner.target_settled().is_some();
        if settled && !self.settled {
            release_free_memory();
        }
        self.settled = settled;
    }

    fn now(&self) -> Instant {
        self.sys.monotonic_now()
    }

    fn fact(&mut self, f: Fact) {
        let now = self.now();
        self.planner.fact(f, now);
    }

    fn act(&mut self, a: Action) {
        match a {
            Action::Spawn {
                unit,
                role,
                spec,
                mainpid,
            } => {
                let name = spec.name.clone();
                let argv = flotilla_units::planner::spawn_argv(&spec, role, mainpid)
                    .unwrap_or_else(|| Vec::new().into());
                match self.spawn(unit, role, &argv, &spec, mainpid) {
                    Ok(pid) => self.fact(Fact::Spawned { unit, role, pid }),
                    Err(error) => {
                        self.unit_note(&name, &format!("{}: {error}", role.key()));
                        self.fact(Fact::SpawnFailed { unit, role, error });
                    }
                }
            }
            Action::Kill {
                unit,
                pid,
                signal,
                group,
            } => {
                // A group signal goes to the process group the PID leads; a
                // daemon that left its group gets it directly too, but only
                // while the planner still tracks the PID: an untracked one
                // (the group of a main process that was just reaped, whose
                // leftovers are being killed) may already be reused by an
                // unrelated process, while its group number stays pinned as
                // long as the group has members.
                let owner = self.planner.owner(pid).map(|(u, _)| u);
                let res = if group && owner.is_some_and(|o| o != unit) {
                    // The number of a group this unit's processes led long
                    // ago (a background-scripted start script) now leads
                    // another unit's process: not ours to signal.
                    Ok(())
                } else if group {
                    let r = self.sys.killpg(pid, signal.0);
                    if owner.is_none() {
                        r
                    } else if r.is_err() {
                        self.sys.kill(pid, signal.0)
                    } else {
                        let _ = self.sys.kill(pid, signal.0);
                        r
                    }
                } else {
                    self.sys.kill(pid, signal.0)
                };
                if let Err(e) = res {
                    let name = self.unit_name(unit);
                    if !e.to_string().contains("no such process") {
                        self.unit_note(&name, &format!("send {} to {pid}: {e}", signal.name()));
                    }
                }
            }
            Action::ReadPidfile { unit, path } => {
                // A stale pidfile (a PID that is not running) is not the
                // daemon: the planner reads again until it is rewritten.
                let result = crate::pidfile::read_pidfile(&self.sys, &path)
                    .map_err(|e| e.to_string())
                    .and_then(|pid| match self.sys.kill(pid, 0) {
                        Err(crate::sys::SysError::Kill {
                            errno: crate::sys::Os(nix::errno::Errno::ESRCH),
                            ..
                        }) => Err(format!(
                            "pidfile {}: PID {pid} is not running",
                            path.display()
                        )),
                        _ => Ok(pid),
                    });
                self.fact(Fact::Pidfile { unit, result });
            }
        }
    }

    fn unit_name(&self, u: UnitId) -> String {
        self.planner
            .graph()
            .get(u)
            .map(|n| n.spec.name.clone())
            .unwrap_or_default()
    }

    fn alloc_token(&mut self, src: Source) -> Token {
        let slot = loop {
            match self.free_tokens.pop() {
                Some(i) if self.tokens.get(i).is_some_and(Option::is_none) => break i,
                Some(_) => {}
                None => break self.tokens.len(),
            }
        };
        if slot == self.tokens.len() {
            self.tokens.push(Some(src));
        } else if let Some(s) = self.tokens.get_mut(slot) {
            *s = Some(src);
        }
        Token(SOURCE_BASE + slot)
    }

    fn free_token(&mut self, t: Token) {
        let Some(i) = t.0.checked_sub(SOURCE_BASE) else {
            return;
        };
        if let Some(s) = self.tokens.get_mut(i) {
            if s.take().is_some() {
                self.free_tokens.push(i);
            }
        }
    }

    /// The unit's I/O (log, ready-grep, notify socket), created at its
    /// first spawn.
    fn io(&mut self, id: UnitId, spec: &UnitSpec) -> Result<&mut UnitIo, String> {
        if self.ios.get(id.index()).is_none_or(Option::is_none) {
            let mut log = LogBuf::new(LOG_RING_BYTES);
            if let Some(dir) = &self.settings.log_dir {
                match LogFile::open(dir, &spec.name, LOG_FILE_BYTES) {
                    Ok(f) => log.set_file(Some(f)),
                    Err(e) => console(&format!("init: {}: log file: {e}", spec.name)),
                }
            }
            if self.ios.len() <= id.index() {
                let n = self.planner.graph().len().max(id.index() + 1);
                self.ios.resize_with(n, || None);
            }
            if let Some(slot) = self.ios.get_mut(id.index()) {
                *slot = Some(Box::new(UnitIo {
                    pipes: Vec::new(),
                    log,
                    notify: None,
                    grep: None,
                }));
            }
        }
        let io = self
            .ios
            .get_mut(id.index())
            .and_then(Option::as_deref_mut)
            .ok_or_else(|| "unit i/o vanished".to_string())?;
        // Compiled at the first spawn and again only when the spec's
        // pattern changed (a reload), not at every spawn.
        let current = io.grep.as_deref().map(regex_lite::Regex::as_str);
        if current != spec.ready_grep.as_deref() {
            io.grep = match &spec.ready_grep {
                Some(src) => regex_lite::Regex::new(src).ok().map(Box::new),
                None => None,
            };
        }
        Ok(io)
    }

    fn spawn(
        &mut self,
        unit: UnitId,
        role: Role,
        argv: &[String],
        spec: &UnitSpec,
        mainpid: Option<i32>,
    ) -> Result<i32, String> {
        let mut env = self.base_env.clone();
        for (path, optional) in &spec.extras.environment_files {
            match self.sys.read_file_limited(path, 1 << 20) {
                Ok(text) => env
                    .extend_file(&text)
                    .map_err(|e| format!("{}: {e}", path.display()))?,
                Err(_) if *optional => {}
                Err(e) => return Err(format!("environment file {}: {e}", path.display())),
            }
        }
        for (k, v) in &spec.extras.environment {
            env.set(k, v).map_err(|e| format!("environment {k}: {e}"))?;
        }
        if let Some(pid) = mainpid {
            let _ = env.set("MAINPID", &pid.to_string());
        }
        let _ = env.set("INIT_UNIT", &spec.name);
        let creds = self.credentials(spec)?;
        let wants_notify =
            role == Role::Main && spec.kind == flotilla_units::spec::UnitType::ForegroundNotified;
        if wants_notify {
            let path = self.notify_socket(unit, spec)?;
            env.set_os("NOTIFY_SOCKET", path.as_os_str())
                .map_err(|e| e.to_string())?;
        }
        self.io(unit, spec)?;
        // New pipes for this process; the init keeps only the read ends.
        let mut out = OutPipe::new(Stream::Stdout).map_err(|e| e.to_string())?;
        let mut err = OutPipe::new(Stream::Stderr).map_err(|e| e.to_string())?;
        let res = {
            let mut req = crate::sys::SpawnRequest::new(argv, &env)
                .stdout(out.stdio())
                .stderr(err.stdio())
                .credentials(&creds);
            if let Some(dir) = &spec.extras.working_directory {
                req = req.cwd(dir);
            }
            self.sys.spawn(&req).map_err(|e| e.to_string())
        };
        out.close_writer();
        err.close_writer();
        let pid = res?;
        // Registered after the spawn: what the child wrote meanwhile makes
        // the read end ready at once (epoll reports a source that is ready
        // when it is added).
        for mut pipe in [out, err] {
            let token = self.alloc_token(Source::Out { unit });
            let _ = self
                .poll
                .registry()
                .register(&mut pipe, token, Interest::READABLE);
            if let Some(io) = self
                .ios
                .get_mut(unit.index())
                .and_then(Option::as_deref_mut)
            {
                // Usually a unit has one process: room for its two pipes.
                io.pipes.reserve_exact(1);
                io.pipes.push((pipe, token));
            } else {
                let _ = self.poll.registry().deregister(&mut pipe);
                self.free_token(token);
            }
        }
        Ok(pid)
    }

    fn credentials(&self, spec: &UnitSpec) -> Result<Credentials, String> {
        let group = match &spec.extras.group {
            Some(g) => Some(
                self.sys
                    .lookup_group(g)
                    .map_err(|e| format!("group {g}: {e}"))?,
            ),
            None => None,
        };
        Ok(match &spec.extras.user {
            Some(u) => self
                .sys
                .lookup_user(u)
                .map_err(|e| format!("user {u}: {e}"))?
                .credentials(group),
            None => Credentials {
                uid: None,
                gid: group,
                groups: group.map(|g| vec![g]),
            },
        })
    }

    /// The unit's notify socket, bound at its first use.
    fn notify_socket(&mut self, unit: UnitId, spec: &UnitSpec) -> Result<PathBuf, String> {
        if let Some(Some((sock, _))) = self
            .ios
            .get(unit.index())
            .and_then(Option::as_deref)
            .map(|io| io.notify.as_deref())
        {
            return Ok(sock.path().to_path_buf());
        }
        self.notify_seq += 1;
        let path = self.notify_dir.join(format!("{}", self.notify_seq));
        let mut sock = NotifySocket::bind(&path).map_err(|e| e.to_string())?;
        if let Some(user) = &spec.extras.user {
            if let Ok(info) = self.sys.lookup_user(user) {
                let _ = std::os::unix::fs::chown(&path, Some(info.uid), Some(info.gid));
            }
        }
        let token = self.alloc_token(Source::Notify { unit });
        let _ = self
            .poll
            .registry()
            .register(&mut sock, token, Interest::READABLE);
        self.io(unit, spec)?.notify = Some(Box::new((sock, token)));
        Ok(path)
    }

    // ----- events -----------------------------------------------------------

    fn on_signals(&mut self) {
        loop {
            match self.sigfd.read_signal() {
                Ok(Some(info)) => {
                    let signo = info.ssi_signo as i32;
                    match NixSignal::try_from(signo) {
                        Ok(NixSignal::SIGCHLD) => self.reap(),
                        Ok(NixSignal::SIGTERM) => {
                            self.begin_shutdown(ShutdownKind::Poweroff, "SIGTERM")
                        }
                        Ok(NixSignal::SIGPWR) => {
                            self.begin_shutdown(ShutdownKind::Poweroff, "SIGPWR")
                        }
                        Ok(NixSignal::SIGINT) => self.begin_shutdown(self.sigint, "SIGINT"),
                        Ok(NixSignal::SIGHUP) => {
                            let r = self.reload();
                            if let Reply::Error {
                                message, details, ..
                            } = r
                            {
                                console(&format!("init: reload refused: {message}"));
                                for d in details {
                                    console(&format!("init: {d}"));
                                }
                            }
                        }
                        // SIGQUIT, SIGUSR1, SIGUSR2, SIGPIPE: documented as ignored.
                        _ => {}
                    }
                }
                Ok(None) => break,
                Err(nix::errno::Errno::EINTR) => continue,
                Err(_) => break,
            }
        }
        // A SIGCHLD may be merged with others: always reap.
        self.reap();
    }

    fn reap(&mut self) {
        loop {
            match self.sys.wait_any() {
                Ok(Some((pid, status))) => {
                    let status = match status {
                        SysExit::Exited(c) => ExitStatus::Code(c),
                        SysExit::Signaled { signal, .. } => ExitStatus::Signal(signal),
                    };
                    if let Some((u, role)) = self.planner.owner(pid) {
                        let name = self.unit_name(u);
                        self.drain_unit(&name);
                        if role == Role::Main && !status.success() {
                            self.unit_note(&name, &format!("process {pid} {}", status.describe()));
                        }
                    }
                    self.fact(Fact::Exited { pid, status });
                }
                Ok(None) => break,
                Err(_) => break,
            }
        }
    }

    /// Reads what a unit's pipes hold now (before handling its exit, so that
    /// its last words are logged first).
    fn drain_unit(&mut self, name: &str) {
        let toks: Vec<Token> = self
            .io_of(name)
            .map(|io| io.pipes.iter().map(|(_, t)| *t).collect())
            .unwrap_or_default();
        for t in toks {
            self.on_source(t);
        }
    }

    fn on_source(&mut self, t: Token) {
        let Some(Some(src)) =
            t.0.checked_sub(SOURCE_BASE)
                .and_then(|i| self.tokens.get(i))
                .copied()
        else {
            return;
        };
        match src {
            Source::Out { unit } => self.on_output(unit, t),
            Source::Notify { unit } => self.on_notify(unit),
        }
    }

    fn on_output(&mut self, unit: UnitId, t: Token) {
        let wall = self.sys.wall_now();
        let Some(io) = self
            .ios
            .get_mut(unit.index())
            .and_then(Option::as_deref_mut)
        else {
            return;
        };
        let mut matched = false;
        let UnitIo {
            pipes, log, grep, ..
        } = io;
        let Some(at) = pipes.iter().position(|(_, tok)| *tok == t) else {
            return;
        };
        let Some((pipe, _)) = pipes.get_mut(at) else {
            return;
        };
        let res = pipe.drain(|line| {
            if let Some(re) = grep.as_ref() {
                if !matched && re.is_match(&String::from_utf8_lossy(line.text)) {
                    matched = true;
                }
            }
            log.push(wall, line);
        });
        let _ = log.flush();
        match res {
            Ok(Drained::More) => self.redrain.push(t),
            Ok(Drained::WouldBlock) => {}
            Err(_) => {}
            // End of file: every writer is gone, drop the pipe.
            Ok(Drained::Closed) => {
                let mut pipe = pipes.remove(at).0;
                let _ = self.poll.registry().deregister(&mut pipe);
                drop(pipe);
                self.free_token(t);
            }
        }
        if matched {
            self.fact(Fact::ReadyLine { unit });
        }
    }

    fn on_notify(&mut self, id: UnitId) {
        let Some(unit) = self.planner.graph().get(id).map(|n| n.spec.name.clone()) else {
            return;
        };
        let unit = unit.as_str();
        let (received, token) = match self
            .ios
            .get_mut(id.index())
            .and_then(Option::as_deref_mut)
            .and_then(|io| io.notify.as_deref_mut())
        {
            Some((sock, t)) => (sock.recv_all(), *t),
            None => return,
        };
        let received = match received {
            Ok(r) => r,
            Err(e) => {
                self.unit_note(unit, &format!("notify socket: {e}"));
                return;
            }
        };
        if received.more {
            self.redrain.push(token);
        }
        // The socket must be writable by the unit's own user, so the sender
        // is checked: the main process, or a process in the session it
        // leads (`systemd-notify` run from a start script).
        let main = self.planner.view(id).and_then(|v| v.pid);
        for dg in received.datagrams {
            let from_unit = match (dg.pid, main) {
                (Some(p), Some(m)) => p == m || self.sys.session_of(p) == self.sys.session_of(m),
                _ => false,
            };
            if !from_unit {
                let who = dg
                    .pid
                    .map(|p| p.to_string())
                    .unwrap_or_else(|| "an unknown process".into());
                self.unit_note(
                    unit,
                    &format!("notify message from {who} ignored: not the unit's process"),
                );
                continue;
            }
            for m in dg.msgs {
                let msg = match m {
                    NotifyMsg::Ready => Notify::Ready,
                    NotifyMsg::Reloading => Notify::Reloading,
                    NotifyMsg::Stopping => Notify::Stopping,
                    NotifyMsg::Status(s) => Notify::Status(s),
                    NotifyMsg::MainPid(p) => Notify::MainPid(p),
                    NotifyMsg::Errno(e) => Notify::Errno(e),
                    NotifyMsg::ExtendTimeout(d) => Notify::ExtendTimeout(d),
                    NotifyMsg::Watchdog => Notify::Watchdog,
                    NotifyMsg::Malformed(m) => {
                        self.unit_note(unit, &format!("notify: {m}"));
                        continue;
                    }
                    _ => continue,
                };
                self.fact(Fact::Notify { unit: id, msg });
            }
        }
    }

    // ----- shutdown ------------------------------------------------------------

    /// Starts an orderly shutdown (idempotent).
    pub fn begin_shutdown(&mut self, kind: ShutdownKind, why: &str) {
        if self.shutdown.is_none() {
            console(&format!(
                "init: {why}: stopping every unit ({})",
                kind_name(kind)
            ));
            self.shutdown = Some(kind);
            // PID-1 hook: remember the system's health for the exit status.
            self.failed_at_shutdown = self.planner.target_settled() == Some(false)
                || self
                    .planner
                    .graph()
                    .provider(self.planner.target())
                    .is_none()
                || !self.planner.failed_units().is_empty();
            let now = self.now();
            self.planner.shutdown(now);
        }
    }

    fn flush_logs(&mut self) {
        for io in self.ios.iter_mut().flatten() {
            let _ = io.log.flush();
        }
    }

    // ----- reporting -------------------------------------------------------------

    fn wall_of(&self, t: Instant) -> String {
        let d = t.0 as i128 - self.mono0.0 as i128;
        let total = self.wall0.secs as i128 * 1_000_000_000 + self.wall0.nanos as i128 + d;
        let secs = total.div_euclid(1_000_000_000) as i64;
        let nanos = total.rem_euclid(1_000_000_000) as u32;
        flotilla_units::protocol::rfc3339(secs, nanos)
    }

    fn ms_of(&self, t: Instant) -> u64 {
        t.since(self.mono0).as_millis() as u64
    }

    /// A note from the init about a unit, in its log.
    fn unit_note(&mut self, unit: &str, text: &str) {
        let wall = self.sys.wall_now();
        let Some(id) = self.planner.graph().unit(unit) else {
            return;
        };
        if let Some(io) = self.ios.get_mut(id.index()).and_then(Option::as_deref_mut) {
            io.log.push_text(wall, Stream::Init, text.as_bytes(), false);
            // Written to the file once per wake-up, in `drive`.
            self.unflushed.push(id);
        }
    }

    /// Writes the notes of [`Runtime::unit_note`] to the log files.
    fn flush_noted(&mut self) {
        for id in std::mem::take(&mut self.unflushed) {
            if let Some(io) = self.ios.get_mut(id.index()).and_then(Option::as_deref_mut) {
                let _ = io.log.flush();
            }
        }
    }

    fn unit_status(&self, id: UnitId) -> Option<UnitStatus> {
        let node = self.planner.graph().get(id)?;
        let v = self.planner.view(id)?;
        let now = self.now();
        Some(UnitStatus {
            unit: node.spec.name.clone(),
            kind: node.spec.kind,
            state: v.state,
            degraded: v.degraded,
            pid: v.pid,
            provides: node.spec.provides.clone(),
            coincidental: self.planner.coincidental(id),
            restarts: v.restarts,
            blocked_by: v.blocked_by,
            status: v.status,
            since: self.wall_of(v.since),
            description: node.spec.extras.description.clone(),
            required: v.required,
            source: node.origin.file.clone(),
            restart_in_ms: v.restart_at.map(|t| t.since(now).as_millis() as u64),
        })
    }

    fn all_units(&self) -> Vec<UnitStatus> {
        self.planner
            .graph()
            .ids()
            .filter(|&i| {
                let n = self.planner.graph().node(i);
                !n.ghost || self.planner.state(i) != UnitState::Disabled
            })
            .filter_map(|i| self.unit_status(i))
            .collect()
    }

    fn system_status(&self) -> SystemStatus {
        SystemStatus {
            target: self.planner.target().to_string(),
            target_state: self.planner.target_state().unwrap_or(UnitState::Waiting),
            degraded: self.planner.degraded(),
            units: self.all_units(),
            pid1: self.pid1,
            shutting_down: self.shutdown.is_some(),
            load_errors: self.load_errors.clone(),
        }
    }

    fn progress(&self) -> Progress {
        let g = self.planner.graph();
        let mut p = Progress {
            target: self.planner.target().to_string(),
            total: 0,
            active: 0,
            failed: 0,
            starting: Vec::new(),
            waiting: Vec::new(),
            starting_more: 0,
            waiting_more: 0,
        };
        // The first names of each list, the others only counted: a reply
        // of a few hundred bytes, not tens of KB, at every wake-up of a
        // big launch.
        for i in g.ids().filter(|&i| self.planner.is_required(i)) {
            p.total += 1;
            let name = &g.node(i).spec.name;
            match self.planner.state(i) {
                s if s.is_active() => p.active += 1,
                UnitState::Failed => p.failed += 1,
                UnitState::Starting if p.starting.len() < PROGRESS_NAMES => {
                    p.starting.push(name.clone())
                }
                UnitState::Starting => p.starting_more += 1,
                UnitState::Waiting if p.waiting.len() < PROGRESS_NAMES => {
                    let why = self.planner.view(i).map(|v| v.status).unwrap_or_default();
                    p.waiting.push(format!("{name} ({why})"));
                }
                UnitState::Waiting => p.waiting_more += 1,
                _ => {}
            }
        }
        p
    }

    fn report_changes(&mut self) {
        let changed = self.planner.take_changed();
        let watchers = self.control.watchers();
        if changed.is_empty() && watchers.is_empty() {
            return;
        }
        let mut statuses = Vec::with_capacity(changed.len());
        for id in changed {
            let Some(st) = self.unit_status(id) else {
                continue;
            };
            let last = self
                .printed
                .get(id.index())
                .copied()
                .unwrap_or(UnitState::Disabled);
            if last != st.state {
                let line = match st.state {
                    UnitState::Running | UnitState::Exited if !last.is_active() => {
                        Some(format!("[  OK  ] started {}", st.unit))
                    }
                    UnitState::Failed => Some(format!("[FAILED] {}: {}", st.unit, st.status)),
                    UnitState::Stopping if last.is_active() || last == UnitState::Starting => {
                        Some(format!("[  ..  ] stopping {}", st.unit))
                    }
                    UnitState::Disabled if last != UnitState::Waiting => {
                        Some(format!("[  OK  ] stopped {}", st.unit))
                    }
                    UnitState::Starting => Some(format!("[  ..  ] starting {}", st.unit)),
                    _ => None,
                };
                if let Some(l) = line {
                    console(&l);
                }
                let note = format!("[init] {}: {}", st.state, st.status);
                self.unit_note(&st.unit.clone(), &note);
                if self.printed.len() <= id.index() {
                    self.printed.resize(
                        self.planner.graph().len().max(id.index() + 1),
                        UnitState::Disabled,
                    );
                }
                if let Some(p) = self.printed.get_mut(id.index()) {
                    *p = st.state;
                }
            }
            statuses.push(st);
        }
        for c in watchers {
            let watch = match self.control.conn(c) {
                Some(conn) => conn.watch.clone(),
                None => continue,
            };
            match watch {
                Watch::Changes => {
                    for st in &statuses {
                        self.control
                            .send(c, &Reply::Changed(st.clone()), self.poll.registry());
                    }
                }
                Watch::Target(t) => {
                    if statuses.is_empty() {
                        continue;
                    }
                    if t != self.planner.target() {
                        let failed = vec![format!("target switched to {}", self.planner.target())];
                        self.settle(c, &t, false, failed);
                        continue;
                    }
                    self.control
                        .send(c, &Reply::Progress(self.progress()), self.poll.registry());
                    self.settle_if_done(c, &t);
                }
                Watch::Logs { unit, next } => {
                    let Some(io) = self.io_of(&unit) else {
                        continue;
                    };
                    let (lines, last) = log_replies(io.log.after(next.saturating_sub(1)));
                    let next = last.map_or(next, |seq| seq + 1);
                    if let Some(conn) = self.control.conn_mut(c) {
                        conn.watch = Watch::Logs { unit, next };
                    }
                    for l in lines {
                        self.control.send(c, &Reply::Log(l), self.poll.registry());
                    }
                }
                Watch::None => {}
            }
        }
    }

    /// Ends a `set-target --wait` stream once the target is active or failed.
    fn settle_if_done(&mut self, c: ConnId, target: &str) {
        if let Some(ok) = self.planner.target_settled() {
            let failed = self
                .planner
                .failed_units()
                .into_iter()
                .map(|u| self.unit_name(u))
                .collect();
            self.settle(c, target, ok, failed);
        }
    }

    fn settle(&mut self, c: ConnId, target: &str, ok: bool, failed: Vec<String>) {
        let state = self.planner.target_state().unwrap_or(UnitState::Waiting);
        let reply = Reply::Settled {
            target: target.to_string(),
            state,
            ok,
            failed,
        };
        if let Some(conn) = self.control.conn_mut(c) {
            conn.watch = Watch::None;
        }
        self.control.send(c, &reply, self.poll.registry());
        self.control.finish(c, self.poll.registry());
    }

    // ----- control requests ----------------------------------------------------

    fn on_request(&mut self, inc: Incoming) {
        let c = inc.conn;
        let env: Envelope = match inc.request {
            Ok(e) => e,
            Err(msg) => {
                let code = if msg.starts_with("unsupported protocol version") {
                    ErrorCode::UnsupportedVersion
                } else {
                    ErrorCode::BadRequest
                };
                self.reply(c, Reply::error(code, msg));
                return;
            }
        };
        let uid = self.control.conn(c).map(|x| x.uid).unwrap_or(u32::MAX);
        if env.request.is_mutating() && uid != 0 && uid != nix::unistd::geteuid().as_raw() {
            self.reply(
                c,
                Reply::error(
                    ErrorCode::PermissionDenied,
                    format!("uid {uid} may not change the system; ask root"),
                ),
            );
            return;
        }
        if self.shutdown.is_some()
            && env.request.is_mutating()
            && !matches!(env.request, Request::Shutdown { .. })
        {
            self.reply(
                c,
                Reply::error(ErrorCode::NotPossible, "the system is shutting down"),
            );
            return;
        }
        match env.request {
            Request::Status { name: None } => {
                let s = self.system_status();
                self.reply(c, Reply::Status(s));
            }
            Request::Status { name: Some(n) } => {
                let g = self.planner.graph();
                let id = g
                    .unit(&n)
                    .filter(|&i| !g.node(i).ghost)
                    .or_else(|| g.provider(&n));
                match id.and_then(|i| self.unit_status(i)) {
                    Some(s) => self.reply(c, Reply::Unit(s)),
                    None => self.reply(
                        c,
                        Reply::error(
                            ErrorCode::UnknownUnit,
                            format!("no unit or target named `{n}`"),
                        ),
                    ),
                }
            }
            Request::List => {
                let units = self.all_units();
                self.reply(c, Reply::List { units });
            }
            Request::SetTarget { target, wait } => {
                let now = self.now();
                match self.planner.set_target(&target, now) {
                    Err(_) => self.reply(
                        c,
                        Reply::error(
                            ErrorCode::UnknownTarget,
                            format!("no unit provides the target `{target}`"),
                        ),
                    ),
                    Ok(()) => {
                        console(&format!("init: target set to {target}"));
                        self.settled = false;
                        if wait {
                            if let Some(conn) = self.control.conn_mut(c) {
                                conn.watch = Watch::Target(target.clone());
                            }
                            self.drive();
                            self.control.send(
                                c,
                                &Reply::Progress(self.progress()),
                                self.poll.registry(),
                            );
                            self.settle_if_done(c, &target);
                        } else {
                            self.reply(
                                c,
                                Reply::Accepted {
                                    message: format!("switching to target {target}"),
                                },
                            );
                        }
                    }
                }
            }
            Request::Reload => {
                let r = self.reload();
                self.reply(c, r);
            }
            Request::Restart { unit } => {
                let now = self.now();
                let r = match self.planner.restart(&unit, now) {
                    Ok(_) => Reply::Accepted {
                        message: format!("restarting {unit}"),
                    },
                    Err(RestartError::UnknownUnit(u)) => {
                        Reply::error(ErrorCode::UnknownUnit, format!("no unit named `{u}`"))
                    }
                    Err(RestartError::NotRequired(u)) => Reply::error(
                        ErrorCode::NotPossible,
                        format!(
                            "`{u}` is not required by the target `{}`",
                            self.planner.target()
                        ),
                    ),
                    Err(RestartError::ShuttingDown) => {
                        Reply::error(ErrorCode::NotPossible, "shutting down")
                    }
                };
                self.reply(c, r);
            }
            Request::ReloadUnit { unit } => {
                let now = self.now();
                let r = match self.planner.reload_unit(&unit, now) {
                    Ok(_) => Reply::Accepted {
                        message: format!("reloading {unit}"),
                    },
                    Err(ReloadError::UnknownUnit(u)) => {
                        Reply::error(ErrorCode::UnknownUnit, format!("no unit named `{u}`"))
                    }
                    Err(ReloadError::NotRunning(u)) => {
                        Reply::error(ErrorCode::NotPossible, format!("`{u}` is not running"))
                    }
                    Err(ReloadError::NoReloadCommand(u)) => {
                        Reply::error(ErrorCode::NotPossible, format!("`{u}` has no exec-reload"))
                    }
                };
                self.reply(c, r);
            }
            Request::Logs {
                unit,
                lines,
                follow,
            } => self.logs(c, &unit, lines, follow),
            Request::Shutdown { kind } => {
                self.reply(
                    c,
                    Reply::Accepted {
                        message: format!("{} in progress", kind_name(kind)),
                    },
                );
                self.begin_shutdown(kind, "requested");
            }
            Request::Analyze => {
                let a = self.analyze();
                self.reply(c, Reply::Analyze(a));
            }
            Request::TransientApply { set, units } => {
                let r = self.apply_transient(set, units);
                self.reply(c, r);
            }
            Request::TransientPatch {
                set,
                upsert,
                remove,
            } => {
                let mut units = self.transient.get(&set).cloned().unwrap_or_default();
                units.retain(|u| {
                    !remove.contains(&u.name) && !upsert.iter().any(|n| n.name == u.name)
                });
                units.extend(upsert);
                let r = self.apply_transient(set, units);
                self.reply(c, r);
            }
            Request::Subscribe => {
                if let Some(conn) = self.control.conn_mut(c) {
                    conn.watch = Watch::Changes;
                }
            }
        }
        self.drive();
    }

    fn reply(&mut self, c: ConnId, r: Reply) {
        self.control.send(c, &r, self.poll.registry());
    }

    fn logs(&mut self, c: ConnId, unit: &str, lines: Option<usize>, follow: bool) {
        let g = self.planner.graph();
        // A unit's I/O goes with it (see `replace`).
        if g.unit(unit).is_none() {
            self.reply(
                c,
                Reply::error(ErrorCode::UnknownUnit, format!("no unit named `{unit}`")),
            );
            return;
        }
        let mut out = Vec::new();
        let mut next = 1;
        if let Some(io) = self.io_of(unit) {
            out = log_replies(io.log.last(lines.unwrap_or(usize::MAX))).0;
            next = io.log.next_seq();
        }
        for l in out {
            self.reply(c, Reply::Log(l));
        }
        if follow {
            if let Some(conn) = self.control.conn_mut(c) {
                conn.watch = Watch::Logs {
                    unit: unit.to_string(),
                    next,
                };
            }
        } else {
            self.reply(c, Reply::LogEnd);
        }
    }

    fn analyze(&self) -> AnalyzeData {
        let g = self.planner.graph();
        let units = g
            .ids()
            .filter(|&i| !g.node(i).ghost)
            .filter_map(|i| {
                let n = g.node(i);
                let v = self.planner.view(i)?;
                Some(UnitTiming {
                    unit: n.spec.name.clone(),
                    kind: n.spec.kind,
                    state: v.state,
                    provides: n.spec.provides.clone(),
                    deps: n
                        .deps
                        .iter()
                        .map(|d| Edge {
                            kind: d.kind,
                            target: d.target.clone(),
                            provider: d.provider.map(|p| g.node(p).spec.name.clone()),
                        })
                        .collect(),
                    required: v.required,
                    start_ms: v.start_at.map(|t| self.ms_of(t)),
                    active_ms: v.active_at.map(|t| self.ms_of(t)),
                    end_ms: v.end_at.map(|t| self.ms_of(t)),
                })
            })
            .collect();
        let (set, active) = self.planner.target_times();
        AnalyzeData {
            target: self.planner.target().to_string(),
            target_set_ms: self.ms_of(set),
            target_active_ms: active.map(|t| self.ms_of(t)),
            now_ms: self.ms_of(self.now()),
            units,
        }
    }

    /// All units: the directory's and every transient set's.
    fn all_specs(&self) -> Vec<(UnitSpec, Origin)> {
        let mut v = self.dir_units.specs(self.planner.graph());
        for (set, units) in &self.transient {
            for u in units {
                v.push((u.clone(), Origin::unplaced(format!("transient:{set}"))));
            }
        }
        v
    }

    fn replace(&mut self, all: Vec<(UnitSpec, Origin)>) -> Result<Applied, Vec<String>> {
        // Notes waiting for their log file, by the ids about to change.
        self.flush_noted();
        let now = self.now();
        match self.planner.replace_units(all, true, now) {
            Ok((applied, map)) => {
                // Each unit's I/O by its new id; units gone for good drop
                // theirs.
                let mut ios: Vec<Option<Box<UnitIo>>> = Vec::new();
                ios.resize_with(self.planner.graph().len(), || None);
                for (old, io) in std::mem::take(&mut self.ios).into_iter().enumerate() {
                    let Some(io) = io else { continue };
                    match map.get(old).copied().flatten() {
                        Some(new) => {
                            if let Some(slot) = ios.get_mut(new.index()) {
                                *slot = Some(io);
                            }
                        }
                        None => self.drop_io(*io),
                    }
                }
                self.ios = ios;
                // The tokens of the units that stay, by their new ids (those
                // of the units gone were given back with their I/O).
                for (i, slot) in self.tokens.iter_mut().enumerate() {
                    let Some(Source::Out { unit } | Source::Notify { unit }) = slot else {
                        continue;
                    };
                    match map.get(unit.index()).copied().flatten() {
                        Some(new) => *unit = new,
                        None => {
                            *slot = None;
                            self.free_tokens.push(i);
                        }
                    }
                }
                // The last state printed, by the new ids (units gone for
                // good forget theirs).
                let mut printed = vec![UnitState::Disabled; self.planner.graph().len()];
                for (old, new) in map.iter().enumerate() {
                    if let (Some(new), Some(&state)) = (new, self.printed.get(old)) {
                        if let Some(p) = printed.get_mut(new.index()) {
                            *p = state;
                        }
                    }
                }
                self.printed = printed;
                release_free_memory();
                Ok(applied)
            }
            Err(diags) => Err(diags.iter().map(ToString::to_string).collect()),
        }
    }

    /// The I/O of the unit named `unit`, if it has any.
    fn io_of(&self, unit: &str) -> Option<&UnitIo> {
        let id = self.planner.graph().unit(unit)?;
        self.ios.get(id.index())?.as_deref()
    }

    /// Closes the I/O of a unit gone for good.
    fn drop_io(&mut self, mut io: UnitIo) {
        let mut freed = Vec::new();
        {
            let reg = self.poll.registry();
            for (mut pipe, t) in io.pipes.drain(..) {
                let _ = reg.deregister(&mut pipe);
                freed.push(t);
            }
            if let Some((mut sock, t)) = io.notify.take().map(|b| *b) {
                let _ = reg.deregister(&mut sock);
                freed.push(t);
            }
        }
        for t in freed {
            self.free_token(t);
        }
        let _ = io.log.flush();
    }

    /// `initctl reload`: re-read the directory; refused whole on any error.
    pub fn reload(&mut self) -> Reply {
        let loaded = match load_dir(&self.settings.units_dir) {
            Ok(l) => l,
            Err(e) => {
                return Reply::error(
                    ErrorCode::Invalid,
                    format!("{}: {e}", self.settings.units_dir.display()),
                )
            }
        };
        let mut errors: Vec<String> = loaded
            .diagnostics
            .iter()
            .filter(|d| d.is_error())
            .map(ToString::to_string)
            .collect();
        if !errors.is_empty() {
            // Every problem at once, as `init --check` reports them: also
            // the graph's own (cycles, duplicate names or targets) among
            // the units that did load, with the transient sets. Only the
            // files' errors used to be reported, the rest after a fix.
            let mut all = loaded.units.clone();
            all.extend(self.all_specs().into_iter().skip(self.dir_units.len()));
            let (_, gdiags) = Graph::build(all);
            errors.extend(
                gdiags
                    .iter()
                    .filter(|d| d.is_error())
                    .map(ToString::to_string),
            );
            return Reply::Error {
                code: ErrorCode::Invalid,
                message: format!(
                    "{} error(s) in {}; nothing changed",
                    errors.len(),
                    self.settings.units_dir.display()
                ),
                details: errors,
            };
        }
        let old = std::mem::replace(&mut self.dir_units, DirUnits::Own(loaded.units));
        match self.replace(self.all_specs()) {
            Ok(mut applied) => {
                if let DirUnits::Own(v) =
                    std::mem::replace(&mut self.dir_units, DirUnits::InGraph(String::new()))
                {
                    self.dir_units = DirUnits::keep(v, self.planner.graph());
                }
                applied
                    .warnings
                    .extend(loaded.diagnostics.iter().map(ToString::to_string));
                self.load_errors.clear();
                console(&format!(
                    "init: reloaded: {} added, {} changed, {} removed, {} unchanged",
                    applied.added.len(),
                    applied.changed.len(),
                    applied.removed.len(),
                    applied.unchanged
                ));
                Reply::Applied(applied)
            }
            Err(details) => {
                self.dir_units = old;
                Reply::Error {
                    code: ErrorCode::Invalid,
                    message: "the unit set has errors; nothing changed".to_string(),
                    details,
                }
            }
        }
    }

    fn apply_transient(&mut self, set: String, units: Vec<UnitSpec>) -> Reply {
        let mut bad = Vec::new();
        if !flotilla_units::spec::valid_name(&set) {
            bad.push(format!("bad set name `{set}`"));
        }
        for u in &units {
            if !flotilla_units::spec::valid_name(&u.name) {
                bad.push(format!("bad unit name `{}`", u.name));
            }
            for t in u
                .provides
                .iter()
                .chain(&u.depends_on)
                .chain(&u.depends_ms)
                .chain(&u.waits_for)
            {
                if !flotilla_units::spec::valid_name(t) {
                    bad.push(format!("{}: bad target name `{t}`", u.name));
                }
            }
            if u.kind != flotilla_units::spec::UnitType::Virtual
                && u.exec_start.as_ref().is_none_or(|c| c.argv.is_empty())
            {
                bad.push(format!("{}: exec-start is required", u.name));
            }
        }
        if !bad.is_empty() {
            return Reply::Error {
                code: ErrorCode::Invalid,
                message: "invalid transient units".into(),
                details: bad,
            };
        }
        let old = if units.is_empty() {
            self.transient.remove(&set)
        } else {
            self.transient.insert(set.clone(), units)
        };
        match self.replace(self.all_specs()) {
            Ok(applied) => Reply::Applied(applied),
            Err(details) => {
                match old {
                    Some(o) => self.transient.insert(set, o),
                    None => self.transient.remove(&set),
                };
                Reply::Error {
                    code: ErrorCode::Invalid,
                    message: "the unit set has errors; nothing changed".into(),
                    details,
                }
            }
        }
    }
}

/// A log tail as protocol lines (an overflow mark first when lines were
/// dropped), and the sequence number of its last line.
fn log_replies(tail: Tail<'_>) -> (Vec<PLogLine>, Option<u64>) {
    let mut out = Vec::new();
    if let Some(mark) = tail.overflow_mark() {
        out.push(PLogLine {
            time: String::new(),
            stream: "init".into(),
            line: mark,
        });
    }
    let mut last = None;
    for l in tail.lines {
        last = Some(l.seq);
        out.push(PLogLine {
            time: l.time.rfc3339(),
            stream: l.stream.as_str().to_string(),
            line: l.text.to_string(),
        });
    }
    (out, last)
}

fn kind_name(k: ShutdownKind) -> &'static str {
    match k {
        ShutdownKind::Poweroff => "poweroff",
        ShutdownKind::Reboot => "reboot",
        ShutdownKind::Halt => "halt",
    }
}
