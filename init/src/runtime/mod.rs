//! The event loop: one thread, one wait, no blocking calls.
//!
//! Each turn waits on [`Sys::wait`] for a signal or a ready descriptor, at
//! most until the planner's next deadline (there is no periodic tick), then
//! turns what happened into planner facts, carries out the planner's
//! actions until there are none, and tells watchers (console, `set-target
//! --wait`, `logs -f`, subscribers) what changed.
//!
//! The parts, one file each:
//!
//! - this file: the [`Runtime`], its start, the turn and its tokens;
//! - `executor.rs`: carrying out the planner's actions (spawn, signal,
//!   read a pidfile);
//! - `execs.rs`: spawns whose `execve` is not seen yet, their facts
//!   given once it is;
//! - `slots.rs`: the one per-unit table (I/O, last state reported) and
//!   the tokens of the unit's descriptors;
//! - `sources.rs`: signals, children's exits, unit output and notify
//!   messages, turned into facts;
//! - `requests.rs`: the control requests;
//! - `reports.rs`: state changes to the console, the unit logs and the
//!   watchers; status views;
//! - `unitset.rs`: the unit set (the directory, reload, transient sets);
//! - `leases.rs`: leases on transient sets, stopping and killing their
//!   units at the instants a client failed to renew;
//! - `instances.rs`: instances of templates made at run time;
//! - `fdstore.rs`: services' descriptor stores (`FDSTORE=1`);
//! - `triggers.rs`, `watches.rs`, `accepts.rs`: socket and path units'
//!   sockets and watches, and the connections of `Accept=yes` sockets;
//! - `scopes.rs`: scopes' processes, adopted and watched;
//! - `passed.rs`: transient services' standard streams from their caller;
//! - `timers.rs`: what timer units read besides the monotonic clock, the
//!   wall-clock watch, the persistent timers' stamps;
//! - `logfeed.rs`: the log writer's channel (the units' lines to the log
//!   directory, through a unit of its own: the loop opens no file);
//! - `mirror.rs`: the units' lines on the init's standard output
//!   (`console-output`), never waiting.
//!
//! Nothing here panics: every failure is logged (to the console and the
//! unit's log) and the loop carries on.

mod accepts;
mod attach;
mod binding;
mod childwait;
mod cleaning;
mod devices;
mod dynamic_users;
mod emptied;
mod execs;
mod executor;
mod fdstore;
mod freezer;
mod generators;
mod held;
mod instances;
mod journald;
mod leases;
mod loading;
mod locale;
mod log_settings;
mod logfeed;
mod manager_settings;
mod mem_policy;
mod mirror;
mod mount_table;
mod on_demand;
mod oom;
mod pam;
mod passed;
mod pidfiles;
mod reexec;
mod reloading;
pub use reexec::start;
mod reports;
mod requests;
mod runs;
mod scopes;
mod shape;
mod slots;
mod sources;
mod stdio;
#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic, clippy::indexing_slicing)]
mod tests;
mod timers;
mod triggers;
mod unitset;
mod wallclock;
mod watches;

use crate::args::Settings;
use crate::control::Control;
use crate::sys::{Env, Event, ExitStatus as SysExitStatus, Pid, Sys, Token};
use flotilla_units::graph::{Graph, UnitId};
use flotilla_units::loglevel::LogSettings;
use flotilla_units::planner::{Action, Fact, Planner, PlannerOptions};
use flotilla_units::protocol::ShutdownKind;
use flotilla_units::time::Instant;
use logfeed::LogFeed;
use slots::Slots;
use std::path::PathBuf;
use std::time::Duration;
use unitset::UnitSet;
use wallclock::WallClock;

/// The control listener's token.
const LISTENER_TOKEN: Token = Token(1);
/// The wall-clock watch's token (`timers.rs`).
const CLOCK_TOKEN: Token = Token(2);
/// Tokens of unit sources (output pipes, notify sockets) start here.
const SOURCE_BASE: usize = 16;
/// Tokens of control connections start here.
const CONN_BASE: usize = 1 << 30;

/// Why the loop ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// An orderly shutdown finished.
    Shutdown(ShutdownKind),
}

/// The init's state.
pub struct Runtime<S: Sys> {
    sys: S,
    planner: Planner,
    settings: Settings,
    pid1: bool,
    control: Control,
    /// Each unit's I/O and last reported state, and the tokens of its
    /// descriptors.
    slots: Slots,
    /// Where the units come from: the directory and the transient sets.
    units: UnitSet,
    /// The devices udev tells of (`devices.rs`).
    devices: devices::Devices,
    mount_table: mount_table::MountTable,
    /// The environment every unit starts from.
    base_env: Env,
    /// What `set-environment` set over it (`manager_settings.rs`).
    manager_env: flotilla_units::manager_env::ManagerEnv,
    /// The monotonic clock at start, to show instants as milliseconds
    /// since start.
    mono0: Instant,
    /// The wall clock at start and at each setting since, to show
    /// instants as wall time.
    wall: WallClock,
    shutdown: Option<ShutdownKind>,
    /// The shutdown is an immediate one (`signals::Asked::Immediate`):
    /// the loop ends without stopping the units one by one.
    immediate: bool,
    notify_dir: PathBuf,
    /// Numbers the notify sockets (their file names).
    notify_seq: u64,
    /// The log level and target (`set-log`): which console lines are
    /// written (`reports.rs`, `executor.rs`).
    log: LogSettings,
    /// Sources with data left after their read budget: read again at the
    /// next turn, which then does not wait.
    redrain: Vec<Token>,
    /// Forked children whose `execve` is not seen yet (`execs.rs`).
    execs: Vec<execs::PendingExec>,
    /// Units whose start was told to the planner in this turn and is not
    /// reported yet (`execs.rs`).
    untold: Vec<UnitId>,
    /// Exits of such units, for the next turn (`sources.rs`).
    exits: Vec<(Pid, SysExitStatus)>,
    /// Main processes of `started-at-fork` units that failed before their
    /// program ran, told as started in this turn: their end, with
    /// systemd's status, for the next turn (`execs.rs`).
    failed_forks: Vec<(UnitId, i32, String)>,
    /// The dynamic users held, by unit name: its UID and GID
    /// (`dynamic_users.rs`).
    dynamic_users: Vec<(String, u32)>,
    /// Output pipes of units over their rate limit: read again at
    /// `throttle_at`, not before (see `ratelimit.rs`).
    throttled: Vec<Token>,
    throttle_at: Option<Instant>,
    /// The log writer's channel.
    feed: LogFeed,
    /// PID-1 hook (set by `pid1.rs` through [`Runtime::set_sigint`]): what
    /// SIGINT asks for. Reboot as the machine's PID 1 (Ctrl-Alt-Del),
    /// poweroff otherwise (a container's or a terminal's Ctrl-C).
    sigint: ShutdownKind,
    /// Whether the target was settled (active or failed) at the end of the
    /// last turn: the free memory is given back when it becomes so.
    settled: bool,
    /// PID-1 hook (read by `pid1.rs` through [`Runtime::failed_at_shutdown`]
    /// for a container's exit status): whether the target or a required
    /// unit had failed when the shutdown began.
    failed_at_shutdown: bool,
    /// The units' lines on standard output (`console-output`).
    mirror: Option<mirror::Mirror>,
    /// How the command after `--` ended, once it has (`cmd.rs`).
    cmd_status: Option<flotilla_units::planner::ExitStatus>,
    /// The buffer [`Runtime::drive`] carries the planner's actions out of,
    /// kept between turns (no allocation per batch).
    actions: Vec<Action>,
    /// The buffer of [`Runtime::turn`]'s events, kept the same way.
    events: Vec<Event>,
    /// Timer units' wall clock and stamps (`timers.rs`).
    timers: timers::Timers,
    /// Socket units with sockets, and those paused (`triggers.rs`).
    armed: triggers::Armed,
    /// Scopes' processes, before and after their start (`scopes.rs`).
    scopes: scopes::Scopes,
    /// Transient services' standard streams from their caller (`passed.rs`).
    passed: passed::Passed,
    /// The connections of `Accept=yes` socket units (`accepts.rs`).
    accepts: accepts::Accepts,
    /// A reload while its generators or its loader run (`reloading.rs`).
    reloading: Option<reloading::Pending>,
    /// The cleans under way (`cleaning.rs`).
    cleaning: Vec<cleaning::Cleaning>,
    /// The binds into running units under way (`binding.rs`).
    binding: Vec<binding::Binding>,
    /// The units and slices frozen, freezing or thawing (`freezer.rs`).
    freezers: freezer::Freezers,
}

impl<S: Sys> Runtime<S> {
    /// Sets up the loop: the event queue (the handled signals blocked),
    /// the control socket, the notify and log directories; loads the unit
    /// directory (leaving bad units out) and starts reaching the target.
    pub fn new(sys: S, settings: Settings, pid1: bool) -> Result<Runtime<S>, String> {
        sys.open_events().map_err(|e| e.to_string())?;
        let control = Control::bind(&sys, &settings.control, LISTENER_TOKEN, CONN_BASE)
            .map_err(|e| format!("control socket: {e}"))?;
        set_up(&sys, &settings, pid1);
        // The generators write units the load below reads.
        let mut early_signals = match &settings.generators {
            Some(g) => generators::boot(&sys, g),
            None => Vec::new(),
        };
        let (loaded, signals) = loading::at_boot(&sys, &settings);
        early_signals.extend(signals);
        let waited = settings.generators.is_some() || crate::sys::reexec::exe().is_some();
        let mono0 = sys.monotonic_now();
        let wall0 = sys.wall_now();
        let feed = LogFeed::new(format!(
            "{}.{:09}-{}",
            wall0.secs,
            wall0.nanos,
            sys.getpid()
        ));
        let unitset::AtStart {
            units: dir_units,
            masked,
            errors: mut load_errors,
            templates,
            manager,
            stamp,
        } = unitset::at_start(&sys, loaded.path);
        let (mut shape, problems) = crate::shape::load(&sys, &settings);
        crate::shape::set_unit_file_masks(&mut shape, &masked);
        load_errors.extend(problems);
        let (graph, diags) = Graph::build_shaped(dir_units.clone(), shape);
        load_errors.extend(unitset::errors_of(&sys, &diags));
        for e in &load_errors {
            sys.console(&format!("init: {e}"));
        }
        let opts = PlannerOptions {
            max_concurrent_starts: settings.max_concurrent_starts,
        };
        let clock = WallClock::new(mono0, wall0);
        let (timers, timer_env, problems) = timers::Timers::load(&sys, &settings, &graph, &clock);
        for e in &problems {
            sys.console(&format!("init: {e}"));
        }
        let mut planner = Planner::with_timer_env(graph, &settings.target, mono0, opts, timer_env);
        unitset::want_builtins(&mut planner, mono0);
        let read = on_demand::PathRead::taken(
            stamp,
            loaded.watch,
            &dir_units,
            planner.graph(),
            &Default::default(),
        );
        let mut units = UnitSet::new(dir_units, planner.graph(), load_errors);
        units.last_read = Some(read);
        units.templates = Some(templates);
        units.manager = manager;
        // Loading the directory's files is the biggest peak there is.
        sys.release_free_memory();
        if planner.graph().provider(&settings.target).is_none() {
            sys.console(&format!(
                "init: no unit provides the target `{}`; nothing started",
                settings.target
            ));
        }
        let mut rt = Runtime::assemble(
            sys, planner, settings, pid1, control, units, feed, clock, timers,
        );
        rt.apply_mem_policy();
        rt.watch_wall_clock();
        rt.follow_udev();
        rt.follow_mount_table();
        if waited {
            // The events the wait for the generators and the loader took:
            // the signals, and the clients that connected meanwhile (the
            // listener's readiness was taken with them).
            rt.control.accept(&rt.sys);
            for s in early_signals {
                rt.on_signal(s);
            }
        }
        rt.drive();
        Ok(rt)
    }

    /// The runtime made of its parts (`clocks`: the monotonic and wall
    /// clocks' origin), nothing driven yet (by [`Runtime::new`] and
    /// [`Runtime::resume`]).
    #[allow(clippy::too_many_arguments)]
    fn assemble(
        sys: S,
        planner: Planner,
        settings: Settings,
        pid1: bool,
        control: Control,
        units: UnitSet,
        feed: LogFeed,
        clock: WallClock,
        timers: timers::Timers,
    ) -> Runtime<S> {
        let notify_dir = notify_dir(&settings);
        let mirror = match settings.console_output {
            true => mirror::Mirror::open(&sys),
            false => None,
        };
        let mut base_env = Env::from_current();
        base_env.remove("NOTIFY_SOCKET");
        for k in ["LISTEN_FDS", "LISTEN_FDNAMES", "LISTEN_PID"] {
            base_env.remove(k);
        }
        base_env.remove("INIT_CONTROL");
        let _ = base_env.set_os("INIT_CONTROL", settings.control.as_os_str());
        if pid1 {
            let cmdline = settings.kernel_cmdline.as_deref();
            if let Some(line) = locale::apply(&sys, cmdline, &mut base_env) {
                sys.console(&line);
            }
        }
        Runtime {
            mono0: clock.start().0,
            wall: clock,
            sys,
            planner,
            settings,
            pid1,
            control,
            slots: Slots::default(),
            units,
            devices: Default::default(),
            mount_table: Default::default(),
            base_env,
            manager_env: Default::default(),
            shutdown: None,
            immediate: false,
            notify_dir,
            notify_seq: 0,
            log: LogSettings::default(),
            redrain: Vec::new(),
            execs: Vec::new(),
            untold: Vec::new(),
            exits: Vec::new(),
            failed_forks: Vec::new(),
            dynamic_users: Vec::new(),
            throttled: Vec::new(),
            throttle_at: None,
            feed,
            sigint: if pid1 {
                ShutdownKind::Reboot
            } else {
                ShutdownKind::Poweroff
            },
            settled: false,
            failed_at_shutdown: false,
            cmd_status: None,
            mirror,
            actions: Vec::new(),
            events: Vec::with_capacity(64),
            timers,
            armed: triggers::Armed::default(),
            scopes: scopes::Scopes::default(),
            passed: passed::Passed::default(),
            accepts: accepts::Accepts::default(),
            reloading: None,
            cleaning: Vec::new(),
            binding: Vec::new(),
            freezers: freezer::Freezers::default(),
        }
    }

    /// Runs until an orderly shutdown has stopped every unit.
    pub fn run(&mut self) -> Exit {
        loop {
            if let Some(exit) = self.turn() {
                return exit;
            }
        }
    }

    /// One turn of the loop: waits for events (at most until the next
    /// deadline; not at all when a source has data left), handles them,
    /// carries out what follows. Returns the exit once an orderly shutdown
    /// has stopped every unit.
    pub fn turn(&mut self) -> Option<Exit> {
        if let Some(kind) = self.shutdown {
            if self.immediate || self.planner.drained() {
                return Some(Exit::Shutdown(kind));
            }
        }
        let now = self.now();
        let timeout =
            if self.redrain.is_empty() && self.exits.is_empty() && self.failed_forks.is_empty() {
                let deadline = [
                    self.planner.next_deadline(),
                    self.throttle_at,
                    self.next_lease_at(),
                ]
                .into_iter()
                .flatten()
                .min();
                deadline.map(|t| t.since(now))
            } else {
                Some(Duration::ZERO)
            };
        let mut events = std::mem::take(&mut self.events);
        events.clear();
        if let Err(e) = self.sys.wait(&mut events, timeout) {
            self.sys.console(&format!("init: {e}"));
        }
        // Exits held back by the last turn (`sources.rs`).
        for (pid, status) in std::mem::take(&mut self.exits) {
            self.exited(pid, status);
        }
        self.tell_failed_forks();
        let mut incoming = Vec::new();
        let mut signalled = false;
        for ev in &events {
            match *ev {
                Event::Signal(signo) => {
                    signalled = true;
                    self.on_signal(signo);
                }
                Event::Ready(LISTENER_TOKEN) => self.control.accept(&self.sys),
                Event::Ready(CLOCK_TOKEN) => self.on_wall_clock(),
                Event::Ready(devices::UDEV_TOKEN) => self.on_udev(),
                Event::Ready(mount_table::MOUNT_TOKEN) => self.on_mount_table(),
                Event::Ready(t) => match self.control.conn_of(t) {
                    Some(c) => self.control.ready(c, &self.sys, &mut incoming),
                    None => self.on_source(t),
                },
            }
        }
        self.events = events;
        // Signals of one kind coalesce, and a SIGCHLD may come with others:
        // reap after any.
        if signalled {
            self.reap();
        }
        for t in std::mem::take(&mut self.redrain) {
            self.on_source(t);
        }
        if self.throttle_at.is_some_and(|at| at <= self.now()) {
            self.throttle_at = None;
            for t in std::mem::take(&mut self.throttled) {
                self.on_source(t);
            }
        }
        // Before any request: one that comes after a lease's instant
        // finds its units gone, as its sender (who reads the same clock)
        // expects, and a renewal is told so (`lease-fired`).
        self.fire_leases();
        for inc in incoming {
            self.on_request(inc);
        }
        let now = self.now();
        self.planner.tick(now);
        self.drive();
        None
    }

    /// `fd` (a new descriptor, or why there is none), once watched for
    /// reading under `token`.
    fn read_watched(
        &self,
        fd: Result<std::os::fd::OwnedFd, crate::sys::SysError>,
        token: Token,
    ) -> Result<std::os::fd::OwnedFd, crate::sys::SysError> {
        use std::os::fd::AsRawFd;
        fd.and_then(|fd| {
            self.sys
                .watch(fd.as_raw_fd(), token, crate::sys::Interest::Read)
                .map(|()| fd)
        })
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

    /// PID-1 hook: whether the shutdown is an immediate form (its units
    /// were not stopped one by one).
    pub fn immediate(&self) -> bool {
        self.immediate
    }

    /// How the command after `--` ended, if it ran and ended: the init
    /// exits with its status (`cmd::exit_code`).
    pub fn cmd_status(&self) -> Option<flotilla_units::planner::ExitStatus> {
        self.cmd_status
    }

    /// Removes the control socket and the notify sockets (at exit).
    pub fn close(&mut self) {
        self.control.remove_socket(&self.sys);
        self.slots.close_all(&self.sys);
        self.sys.teardown_cgroups();
    }

    /// The system layer (a test looks at its fake through it).
    pub fn sys(&self) -> &S {
        &self.sys
    }

    /// Carries out actions until there are none, then reports changes.
    /// A report may set more off (a unit's `SuccessAction=` or
    /// `FailureAction=` begins the shutdown): those are carried out in the
    /// same turn, not left for an event that may never come.
    fn drive(&mut self) {
        let mut actions = std::mem::take(&mut self.actions);
        // Bounded: each batch is what the facts of the last one caused.
        for _ in 0..1_000_000 {
            self.planner.drain_actions_into(&mut actions);
            // Triggers whose units settled wait again (a path unit may fire
            // at once: then there is more to do); connections whose
            // instance ended close, the instance leaving the set.
            if actions.is_empty()
                && !self.resume_triggers()
                && !self.end_connections()
                && !self.collect_scopes()
            {
                self.report_changes();
                self.planner.drain_actions_into(&mut actions);
                if actions.is_empty() {
                    break;
                }
            }
            for a in actions.drain(..) {
                self.act(a);
            }
        }
        self.actions = actions;
        self.feed_writer();
        // A launch (or a switch) is over: what it freed goes back.
        let settled = self.planner.target_settled().is_some();
        if settled && !self.settled {
            self.sys.release_free_memory();
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

    /// Starts an orderly shutdown (idempotent).
    pub fn begin_shutdown(&mut self, kind: ShutdownKind, why: &str) {
        if self.shutdown.is_some() {
            return;
        }
        // Every process started is the planner's before it stops them all
        // (`execs.rs`).
        self.settle_execs();
        self.sys.console(&format!(
            "init: {why}: stopping every unit ({})",
            kind_name(kind)
        ));
        self.shutdown = Some(kind);
        self.failed_at_shutdown = self.failed_now();
        let now = self.now();
        self.planner.shutdown(now);
    }

    /// Ends the loop at its next turn without stopping the units one by
    /// one (systemd's immediate forms, PID 1 only: the final sequence's
    /// SIGTERM and SIGKILL end every process). Overrides an orderly
    /// shutdown under way, as systemd's does.
    pub fn begin_immediate(&mut self, kind: ShutdownKind, why: &str) {
        if self.immediate {
            return;
        }
        self.sys.console(&format!(
            "init: {why}: {} at once, the units not stopped one by one",
            kind_name(kind)
        ));
        if self.shutdown.is_none() {
            self.failed_at_shutdown = self.failed_now();
        }
        self.shutdown = Some(kind);
        self.immediate = true;
    }

    /// PID-1 hook: the system's health for the exit status, as a shutdown
    /// begins.
    fn failed_now(&self) -> bool {
        self.planner.target_settled() == Some(false)
            || self
                .planner
                .graph()
                .provider(self.planner.target())
                .is_none()
            || !self.planner.failed_units().is_empty()
    }
}

/// Where the notify sockets are: `notify/` beside the control socket.
fn notify_dir(settings: &Settings) -> PathBuf {
    settings
        .control
        .parent()
        .map(|d| d.join("notify"))
        .unwrap_or_else(|| PathBuf::from("/run/init/notify"))
}

/// What the init sets up for itself before its loop, at a boot and after
/// a re-exec: the notify directory, the subreaper flag, the cgroups, the
/// descriptor limit.
fn set_up<S: Sys>(sys: &S, settings: &Settings, pid1: bool) {
    // Made again when first needed (a notify socket's bind), failing
    // there with a message about the unit. The log directory is the log
    // writer's to make: the loop touches no file of it.
    let _ = sys.create_dir_all(&notify_dir(settings));
    let _ = sys.set_child_subreaper();
    if let Err(e) = sys.setup_cgroups(pid1) {
        sys.console(&format!("init: {e}"));
    }
    if let Err(e) = sys.raise_nofile_limit() {
        sys.console(&format!("init: {e}"));
    }
}

/// The word for a shutdown kind.
fn kind_name(k: ShutdownKind) -> &'static str {
    match k {
        ShutdownKind::Poweroff => "poweroff",
        ShutdownKind::Reboot => "reboot",
        ShutdownKind::Halt => "halt",
    }
}
