//! Carrying out the planner's actions: [`Runtime::act`] is the one place
//! each [`Action`] becomes system calls — a process started (environment,
//! identity, output pipes, notify socket), a signal sent, a pidfile read —
//! and the one place their outcome goes back to the planner as a fact.

use super::execs::SpawnError;
use super::slots::{Source, UnitIo};
use super::stdio::{streams, Handed};
use super::Runtime;
use crate::logbuf::LogBuf;
use crate::notify::{unreachable_dir, NotifySocket};
use crate::outpipe::{OutPipe, Stream};
use crate::ratelimit::RateLimit;
use crate::sys::journal::{JournalStream, STREAM_ID_ROOM};
use crate::sys::{Credentials, Errno, Interest, Os, Reached, SpawnRequest, Stdio, Sys, SysError};
use flotilla_units::context::process::KillMode;
use flotilla_units::exec::expand_env;
use flotilla_units::graph::UnitId;
use flotilla_units::notify_access;
use flotilla_units::planner::{Action, CheckOutcome, Fact, Role, Whom};
use flotilla_units::protocol::NotApplied;
use flotilla_units::spec::{NotifyAccess, Privileges, Signal, UnitSpec};
use flotilla_units::state::UnitState;
use std::os::fd::{AsFd, AsRawFd};
use std::path::{Path, PathBuf};

/// journald's units: its service, and the socket that says it is there.
use super::journald::{JOURNALD, JOURNALD_SOCKET};

/// Bytes of output kept in memory per unit.
pub(super) const LOG_RING_BYTES: usize = 64 * 1024;

impl<S: Sys> Runtime<S> {
    /// Carries out one action.
    pub(super) fn act(&mut self, a: Action) {
        self.debug_action(&a);
        match a {
            Action::Spawn {
                unit,
                role,
                argv,
                spec,
                mainpid,
            } => match self.spawn(unit, role, &argv.to_vec(), &spec, mainpid) {
                Ok(Some(pid)) => self.fact(Fact::Spawned { unit, role, pid }),
                // Its fact comes with its report (`execs.rs`).
                Ok(None) => {}
                Err(error) => self.spawn_failed(unit, role, error),
            },
            Action::Kill { unit, whom, signal } => self.signal(unit, whom, signal),
            Action::ReadPidfile { unit, path } => {
                let result = self.read_pidfile(unit, &path);
                self.fact(Fact::Pidfile { unit, result });
            }
            Action::GuessMainPid { unit } => match self.guess_main_pid(unit) {
                Ok(None) => self.fact(Fact::NoMainProcess { unit }),
                Ok(Some(pid)) => self.fact(Fact::Pidfile {
                    unit,
                    result: Ok(pid),
                }),
                Err(e) => self.fact(Fact::Pidfile {
                    unit,
                    result: Err(e),
                }),
            },
            Action::CheckConditions { unit, spec } => {
                let outcome = self.sys.check_conditions(&spec);
                if let CheckOutcome::ConditionFailed(why) | CheckOutcome::AssertFailed(why) =
                    &outcome
                {
                    self.unit_note(unit, why);
                }
                self.fact(Fact::Checked { unit, outcome });
            }
            Action::SaveTimerStamp {
                timer, realtime_us, ..
            } => self.save_timer_stamp(timer, realtime_us),
            Action::Arm { unit, spec } => {
                let result = self.arm_trigger(unit, &spec);
                if let Err(e) = &result {
                    self.unit_note(unit, e);
                }
                self.fact(Fact::Armed { unit, result });
            }
            Action::Disarm { unit } => self.disarm_trigger(unit),
            Action::AwaitEmpty { unit } => self.await_empty(unit),
            Action::Adopt { unit, spec } => match self.adopt(unit, &spec) {
                Ok(pid) => self.fact(Fact::Spawned {
                    unit,
                    role: Role::Main,
                    pid,
                }),
                Err(error) => {
                    self.unit_note(unit, &format!("adopt: {error}"));
                    self.fact(Fact::SpawnFailed {
                        unit,
                        role: Role::Main,
                        error,
                    });
                }
            },
        }
    }

    /// A request's signal (`KillUnit`): to the unit's main process, and
    /// unless `main_only` to its process group and every process of its
    /// cgroup, whatever its `KillMode=` (as systemd's `kill`). Whether a
    /// process was there to get it.
    pub(super) fn kill_processes(
        &mut self,
        unit: UnitId,
        main: Option<i32>,
        signal: Signal,
        main_only: bool,
    ) -> bool {
        if main_only {
            return main.is_some_and(|pid| self.sys.kill(pid, signal.0).is_ok());
        }
        // Each process once: the group the main process leads (which holds
        // it), else the main process alone; then the rest of the cgroup.
        let group = main.filter(|&pid| self.sys.killpg(pid, signal.0).is_ok());
        let mut reached =
            group.is_some() || main.is_some_and(|pid| self.sys.kill(pid, signal.0).is_ok());
        if let Some(run) = self.slots.get(unit).and_then(|s| s.run.as_deref()) {
            let already = Reached {
                group,
                process: main,
            };
            reached |= self.sys.signal_unit(run, signal.0, already) > 0;
        }
        reached
    }

    /// Sends `signal` to whom the planner named: a process, a process
    /// group, or a group and its leader (a daemon that left its group).
    /// A group stands for the whole unit: with a cgroup, every process of
    /// it gets the signal too, so that what left the group (a `setsid`
    /// child, a forked daemon) is reached. `KillMode=` narrows it:
    /// `process` signals the leader alone, `mixed` the leader alone but
    /// for `SIGKILL`, `none` nobody.
    fn signal(&mut self, unit: UnitId, whom: Whom, signal: Signal) {
        self.thaw_for_stop(unit);
        let slot = self.slots.get(unit);
        let run = slot.and_then(|s| s.run.as_deref());
        // A scope's processes are not in process groups of the init's
        // making: its leader's group may reach beyond it. Its cgroup (or,
        // without one, each of its processes) stands for it.
        let adopted = slot.and_then(|s| s.adopted.as_deref());
        let mode = run.map_or(KillMode::ControlGroup, |r| r.kill_mode());
        let whole = match (mode, whom) {
            (_, Whom::Process(_)) => false,
            (KillMode::None, _) => return,
            (KillMode::Process, _) => false,
            (KillMode::Mixed, _) => signal == Signal::KILL,
            (KillMode::ControlGroup, _) => true,
        };
        let whom = match whom {
            Whom::Group(p) | Whom::GroupAndLeader(p) if !whole || adopted.is_some() => {
                Whom::Process(p)
            }
            w => w,
        };
        let res = match whom {
            Whom::Process(pid) => self.sys.kill(pid, signal.0),
            Whom::Group(pgid) => self.sys.killpg(pgid, signal.0),
            // The leader is reached through its group unless it left it:
            // a second signal to a process already running its handler
            // for the first runs that handler again (systemd, too, signals
            // each process of a unit once).
            Whom::GroupAndLeader(pid) if self.sys.pgid(pid) == Some(pid) => {
                self.sys.killpg(pid, signal.0)
            }
            Whom::GroupAndLeader(pid) => {
                let group = self.sys.killpg(pid, signal.0);
                let leader = self.sys.kill(pid, signal.0);
                group.or(leader)
            }
            // No process by number: the cgroup below.
            Whom::Rest => Ok(()),
        };
        // The rest of the cgroup: what left the group. Each process gets
        // the signal once.
        if whole {
            if let Some(run) = run {
                let (group, process) = match whom {
                    Whom::Process(p) => (None, Some(p)),
                    Whom::Group(g) => (Some(g), None),
                    Whom::GroupAndLeader(p) => (Some(p), Some(p)),
                    Whom::Rest => (None, None),
                };
                self.sys
                    .signal_unit(run, signal.0, Reached { group, process });
            }
            if let Some(a) = adopted {
                self.sys.signal_adopted(&a.adoption, signal.0, a.leader);
            }
        }
        match res {
            // Gone already: what the signal was for has happened.
            Ok(())
            | Err(SysError::Kill {
                errno: Os(Errno::ESRCH),
                ..
            }) => {}
            Err(e) => {
                self.unit_note(
                    unit,
                    &format!("send {} to {}: {e}", signal.name(), whom.pid()),
                );
            }
        }
    }

    /// The unit's I/O (log, ready-grep), made at its first spawn.
    pub(super) fn io(&mut self, unit: UnitId, spec: &UnitSpec) -> Option<&mut UnitIo> {
        let id = self.slots.ensure(unit);
        if self.slots.slot(id).is_some_and(|s| s.io.is_none()) {
            let log = LogBuf::new(LOG_RING_BYTES, self.feed.new_log_id());
            if let Some(s) = self.slots.slot_mut(id) {
                s.io = Some(Box::new(UnitIo::new(log)));
            }
        }
        let io = self.slots.slot_mut(id)?.io.as_deref_mut()?;
        io.limit = rate_limit(spec);
        // Compiled at the first spawn and again only when the spec's
        // pattern changed (a reload), not at every spawn.
        let current = io.grep.as_deref().map(regex_lite::Regex::as_str);
        if current != spec.extras.ready_grep.as_deref() {
            io.grep = match &spec.extras.ready_grep {
                Some(src) => regex_lite::Regex::new(src).ok().map(Box::new),
                None => None,
            };
        }
        Some(io)
    }

    /// Starts one process of `unit`: its environment, identity and working
    /// directory from `spec`, its stdout and stderr on new pipes watched
    /// for the unit's log, its notify socket by the unit's notify access
    /// (`notify_access::effective`). The PID once the child has exec'd;
    /// `None` when it was forked and its report is pending (`execs.rs`).
    fn spawn(
        &mut self,
        unit: UnitId,
        role: Role,
        argv: &[String],
        spec: &UnitSpec,
        mainpid: Option<i32>,
    ) -> Result<Option<i32>, SpawnError> {
        self.drop_stale_exec(unit, role);
        let ctx = &spec.extras.context;
        let mut env = self.unit_base_env();
        // A process on a terminal gets its type (systemd's default, which
        // the unit's environment may override).
        if ctx.uses_tty() {
            let _ = env.set("TERM", ctx.tty.default_term());
        }
        for (path, optional) in &spec.extras.environment_files {
            match self.sys.read_file_limited(path, 1 << 20) {
                Ok(text) => env
                    .extend_file(&text)
                    .map_err(|e| format!("{}: {e}", path.display()))?,
                Err(_) if *optional => {}
                Err(e) => return Err(format!("environment file {}: {e}", path.display()).into()),
            }
        }
        for (k, v) in &spec.extras.environment {
            env.set(k, v).map_err(|e| format!("environment {k}: {e}"))?;
        }
        if let Some(pid) = mainpid {
            let _ = env.set("MAINPID", &pid.to_string());
        }
        // Started by another unit's end (`on-failure`, `on-success`): its
        // start commands are told how that unit ended, as systemd tells
        // them (not the `exec-start-post` ones).
        if matches!(
            role,
            Role::Condition(_) | Role::Pre(_) | Role::Main | Role::Then(_)
        ) {
            if let Some(m) = self.planner.monitor(unit) {
                for (k, v) in m.env() {
                    let _ = env.set(k, v);
                }
            }
        }
        // Started by a path unit or a timer: every command of the unit is
        // told which and what it saw, as systemd tells them.
        if let Some(a) = self.planner.activated_by(unit) {
            for (k, v) in a.env() {
                let _ = env.set(k, &v);
            }
        }
        let _ = env.set("INIT_UNIT", &spec.name);
        self.hold_dynamic_user(spec)?;
        let creds = self.spawn_credentials(spec)?;
        let watchdog = spec.watchdog();
        // The notify socket goes to the main process unless the unit's
        // access is `none`, and to the commands run for it under `exec`
        // and `all`, as systemd gives it (a descriptor store and a
        // watchdog are reached through it: `notify_access::effective`).
        let access = notify_access::effective(spec);
        let gets_socket = match role {
            Role::Main => access != NotifyAccess::None,
            _ => matches!(access, NotifyAccess::Exec | NotifyAccess::All),
        };
        let mut bound = None;
        if gets_socket {
            let (path, fresh) = self.notify_socket(unit, spec, &creds)?;
            env.set_os("NOTIFY_SOCKET", path.as_os_str())
                .map_err(|e| e.to_string())?;
            bound = fresh.then_some(path);
        }
        if let (Role::Main, Some(d)) = (role, watchdog) {
            let _ = env.set("WATCHDOG_USEC", &d.as_micros().to_string());
        }
        let (fds, names) = match role {
            Role::Main => self.listen_fds_for(spec),
            _ => (Vec::new(), String::new()),
        };
        // The sockets come first: only their O_NONBLOCK is the spawn's.
        let sockets = fds.len();
        let mut handed = Handed { fds, names };
        // Its stored descriptors after its sockets (`fdstore.rs`).
        if role == Role::Main && !Handed::socket_stream(ctx) {
            self.stored_fds(unit, &mut handed.fds, &mut handed.names);
        }
        // A `socket` stream takes the one socket: none as LISTEN_FDS.
        let listen_fds: &[i32] = if Handed::socket_stream(ctx) {
            &[]
        } else {
            &handed.fds
        };
        let names = &handed.names;
        if !listen_fds.is_empty() {
            let _ = env.set("LISTEN_FDS", &listen_fds.len().to_string());
            let _ = env.set("LISTEN_FDNAMES", names);
            // Room for any PID: the child writes its own.
            let _ = env.set("LISTEN_PID", "0000000000");
        }
        if let (Role::Main, Some((_, Some((addr, port))))) = (role, self.connection_of(&spec.name))
        {
            let _ = env.set("REMOTE_ADDR", &addr);
            let _ = env.set("REMOTE_PORT", &port.to_string());
        }
        self.io(unit, spec)
            .ok_or_else(|| "unit i/o vanished".to_string())?;
        // A start after a reload changed the unit: its run was prepared
        // from the old definition (its processes are gone: a changed
        // unit stops before it starts again).
        if matches!(role, Role::Condition(_) | Role::Pre(_) | Role::Main) {
            if let Some(s) = self.slots.get_mut(unit).filter(|s| s.run_stale) {
                s.run_stale = false;
                self.end_run(unit, true);
            }
        }
        self.ensure_run(unit, spec, &creds)?;
        let command = role.command(spec);
        let privileges = command.map_or(Privileges::Unit, |c| c.privileges);
        if let (Some(path), false) = (&bound, privileges == Privileges::Full) {
            self.report_hidden_notify(unit, spec, path);
        }
        let run = self
            .slots
            .get(unit)
            .and_then(|s| s.run.as_deref())
            .ok_or_else(|| "unit run vanished".to_string())?;
        for (k, v) in run.env() {
            env.set(k, v).map_err(|e| format!("environment {k}: {e}"))?;
        }
        for entry in &ctx.unset_environment {
            env.unset(entry);
        }
        // PAMName= with User=: the helper opens the session and changes
        // the identity (`sys/procs/pam.rs`); systemd ignores the key
        // without a user.
        let pam_service = (ctx.pam_name.as_deref())
            .filter(|_| privileges == Privileges::Unit && creds.uid.is_some());
        // systemd's `$NAME`/`${NAME}` in a command line, from the
        // environment the process gets; `@`: argv[1] is its argv[0]. In a
        // PAM session the helper expands them once the session's
        // environment is in, as systemd does after PAM.
        let expands = command.is_some_and(|c| c.expand_env);
        let expanded;
        let mut argv = argv;
        if expands && pam_service.is_none() {
            expanded = expand_env(argv, |n| {
                env.get(n).and_then(|v| std::str::from_utf8(v).ok())
            });
            argv = &expanded;
        }
        let mut argv0 = command.is_some_and(|c| c.argv0);
        // New pipes for this process; the init keeps only the read ends.
        let mut out = OutPipe::new(Stream::Stdout).map_err(|e| e.to_string())?;
        let mut err = OutPipe::new(Stream::Stderr).map_err(|e| e.to_string())?;
        let data = run.input_data().transpose()?;
        // Streams its caller handed a transient service (`passed.rs`).
        let passed = self.passed.streams(&spec.name);
        let journal = self.journal_stream(spec, argv.first().map_or("", String::as_str), passed);
        if journal.is_some() {
            // Room for the stream's `DEV:INO`, which the child writes.
            let _ = env.set("JOURNAL_STREAM", &"0".repeat(STREAM_ID_ROOM));
        }
        let session;
        let mut own_identity = privileges == Privileges::Unit;
        if let Some(service) = pam_service {
            let words = crate::sys::pam::Words {
                argv,
                argv0_given: argv0,
                expand_env: expands,
            };
            session = self.pam_command(service, &creds, ctx, words, env.get("PATH"))?;
            if let Some(command) = &session {
                argv = command;
                argv0 = false;
                own_identity = false;
            }
        }
        let context = run.child(privileges == Privileges::Full);
        // The command after `--` has the container's own streams, its
        // terminal or its runtime's pipes (`cmd.rs`).
        let own_stdio = self
            .planner
            .graph()
            .get(unit)
            .is_some_and(|n| crate::cmd::is_builtin(&n.origin));
        let res = {
            let [stdin, stdout, stderr] = if own_stdio {
                [Stdio::Inherit; 3]
            } else {
                let s = streams(
                    ctx,
                    &handed,
                    out.stdio(),
                    err.stdio(),
                    data.as_ref().map(|d| Stdio::Fd(d.as_fd())),
                )?;
                super::passed::apply(s, passed)
            };
            let mut req = SpawnRequest::new(argv, &env)
                .stdin(stdin)
                .stdout(stdout)
                .stderr(stderr);
            if own_identity {
                req = req.credentials(&creds);
            }
            if let Some(c) = &context {
                req = req.context(c);
            }
            if argv0 {
                req = req.argv0_given();
            }
            if own_stdio {
                req = req.foreground();
            }
            if let Some(dir) = &spec.extras.working_directory {
                req = if spec.extras.working_directory_optional == Some(true) {
                    req.optional_cwd(dir)
                } else {
                    req.cwd(dir)
                };
            }
            req = req
                .listen_fds(listen_fds)
                .listen_sockets(sockets)
                .listen_nonblocking(spec.extras.non_blocking == Some(true));
            if let Some(j) = &journal {
                req = req.journal(j);
            }
            // A unit's main process does not wait for its exec
            // (`execs.rs`); its helpers (pre, post, reload, stop) do, as
            // they did: the order in which they run is what the planner's
            // order of actions gave it (a dependent's exec-stop was under
            // way before its dependency's began).
            match role {
                Role::Main => self.sys.spawn_started(&req),
                _ => self.sys.spawn(&req).map(|pid| (pid, None)),
            }
            .map_err(|e| SpawnError::of(&e, e.to_string()))
        };
        out.close_writer();
        err.close_writer();
        let (pid, pending) = res?;
        if role == Role::Main && journal.as_ref().is_some_and(JournalStream::connected) {
            self.unit_note(
                unit,
                &format!("output to the journal: journalctl -u {}", spec.name),
            );
        }
        // Watched after the spawn: what the child wrote meanwhile makes the
        // read end ready at once (epoll reports a descriptor that is ready
        // when it is added).
        let slot = self.slots.ensure(unit);
        for pipe in [out, err] {
            let token = self.slots.alloc_token(Source::Output(slot));
            let _ = self.sys.watch(pipe.as_raw_fd(), token, Interest::Read);
            if let Some(io) = self.slots.io_mut(unit) {
                // Usually a unit has one process: room for its two pipes.
                io.pipes.reserve_exact(1);
                io.pipes.push((pipe, token));
            } else {
                let _ = self.sys.unwatch(pipe.as_raw_fd());
                self.slots.free_token(token);
            }
        }
        match pending {
            Some(watch) => {
                self.pending_exec(unit, role, privileges == Privileges::Full, watch);
                Ok(None)
            }
            None => Ok(Some(pid)),
        }
    }

    /// The unit's run (cgroup, directories, prepared context), made at the
    /// first spawn of a start; keys it left out are noted in the log.
    pub(super) fn ensure_run(
        &mut self,
        unit: UnitId,
        spec: &UnitSpec,
        creds: &Credentials,
    ) -> Result<(), String> {
        if self.slots.get(unit).is_some_and(|s| s.run.is_some()) {
            return Ok(());
        }
        let owner = match (creds.uid, creds.gid) {
            (None, None) => None,
            (uid, gid) => Some((uid.unwrap_or(0), gid.unwrap_or(0))),
        };
        // The manager's `DefaultLimit*=` where the unit has no `Limit*=`
        // of its own (`ManagerConfig::limits_for`).
        // A dynamic user's directories are kept below `private/`, with a
        // link (`Directories::private`).
        let defaults = &self.units.manager.default_limits;
        let limited = defaults
            .keys()
            .all(|r| spec.extras.context.limits.contains_key(r));
        let private =
            self.dynamic_user(spec).is_some() && !spec.extras.context.directories.is_empty();
        let mut run = if limited && !private {
            self.sys
                .start_unit(&spec.name, &spec.extras.context, owner)?
        } else {
            let mut ctx = spec.extras.context.clone();
            ctx.limits = self.units.manager.limits_for(&ctx.limits);
            ctx.directories.private = private;
            self.sys.start_unit(&spec.name, &ctx, owner)?
        };
        // journald reads the unit's LogLevelMax= and LogExtraFields= from
        // systemd's files, when it is the init's journald (never of
        // journald itself, as for its output).
        let syslog = &spec.extras.context.syslog;
        let for_journald = syslog.level_max.is_some() || !syslog.extra_fields.is_empty();
        if for_journald
            && !spec.name.starts_with(JOURNALD)
            && self.planner.graph().unit(JOURNALD_SOCKET).is_some()
        {
            if let Err(e) = self.sys.export_unit_state(&spec.name, syslog) {
                self.unit_note(unit, &format!("not applied: {e}"));
            }
        }
        for n in run.notes() {
            self.unit_note(unit, n);
        }
        for n in self.identity_not_applied(spec) {
            run.left_out(n);
        }
        // Never silently: each setting not applied, in the unit's log (the
        // console line of the start names them: `reports.rs`).
        for n in run.not_applied() {
            self.unit_note(unit, &format!("not applied: {}: {}", n.setting, n.reason));
        }
        let id = self.slots.ensure(unit);
        if let Some(s) = self.slots.slot_mut(id) {
            s.run = Some(Box::new(run));
        }
        Ok(())
    }

    /// Ends the unit's run, if it has one: what is left in its cgroup is
    /// killed, and what its start made is removed (`keep_runtime`: it may
    /// restart).
    pub(super) fn end_run(&mut self, unit: UnitId, keep_runtime: bool) {
        self.thaw_for_stop(unit);
        let run = self.slots.get_mut(unit).and_then(|s| s.run.take());
        // Its dynamic user goes back when it stops or fails, not when a
        // start replaces a stale run (which holds it for the new one).
        let ended = !keep_runtime || self.planner.state(unit) == UnitState::Failed;
        if let (true, Some(node)) = (ended, self.planner.graph().get(unit)) {
            let name = node.spec.name.clone();
            self.release_dynamic_user(&name);
            self.passed.release(&name);
        }
        if let Some(run) = run {
            // As systemd's words for what `KillMode=process` (a SysV
            // service's) or `none` leaves behind.
            for (pid, comm) in self.sys.end_unit(&run, keep_runtime) {
                let note =
                    format!("unit process {pid} ({comm}) remains running after unit stopped");
                self.unit_note(unit, &note);
            }
            self.forget_gone_slices();
            // What journald read of the unit goes with the run (nothing
            // is kept in the run for it: a running unit's memory is
            // budgeted, docs/performance.md).
            let graph = self.planner.graph();
            if let (Some(_), Some(node)) = (graph.unit(JOURNALD_SOCKET), graph.get(unit)) {
                self.sys.remove_unit_state(&node.spec.name);
            }
        }
    }

    /// The identity a unit's processes run with: what the unit asks, as
    /// far as the init's own identity reaches (`Credentials::within_reach`).
    pub(super) fn credentials(&self, spec: &UnitSpec) -> Result<Credentials, String> {
        self.spawn_credentials(spec).map_err(|e| e.text)
    }

    /// [`Self::credentials`], a user or group not found with systemd's
    /// status for it (its child's `EXIT_USER`, `EXIT_GROUP`).
    fn spawn_credentials(&self, spec: &UnitSpec) -> Result<Credentials, SpawnError> {
        let asked = self.asked_credentials(spec)?;
        let group_asked = spec.extras.group.is_some();
        Ok(asked.within_reach(self.sys.geteuid(), group_asked).0)
    }

    /// The settings of `spec`'s identity a non-root init leaves out, each
    /// with why (in the unit's `not_applied`).
    fn identity_not_applied(&self, spec: &UnitSpec) -> Vec<NotApplied> {
        let euid = self.sys.geteuid();
        let Ok(asked) = self.asked_credentials(spec) else {
            return Vec::new();
        };
        let (_, refused) = asked.within_reach(euid, spec.extras.group.is_some());
        refused
            .into_iter()
            .map(|setting| {
                let value = match setting {
                    "User" => spec.extras.user.as_deref(),
                    _ => spec.extras.group.as_deref(),
                };
                NotApplied {
                    setting: setting.to_string(),
                    reason: format!(
                        "{setting}={} not applied: the init runs as uid {euid}, not root, and \
                         runs every unit as its own user",
                        value.unwrap_or_default()
                    ),
                }
            })
            .collect()
    }

    /// The identity `spec` asks for, its user and group looked up.
    fn asked_credentials(&self, spec: &UnitSpec) -> Result<Credentials, SpawnError> {
        if let Some(dynamic) = self.dynamic_user(spec) {
            return Ok(dynamic);
        }
        let group = match &spec.extras.group {
            Some(g) => Some(
                self.sys
                    .lookup_group(g)
                    .map_err(|e| SpawnError::of(&e, format!("group {g}: {e}")))?,
            ),
            None => None,
        };
        Ok(match &spec.extras.user {
            Some(u) => self
                .sys
                .lookup_user(u)
                .map_err(|e| SpawnError::of(&e, format!("user {u}: {e}")))?
                .credentials(group),
            None => Credentials {
                uid: None,
                gid: group,
                groups: group.map(|g| vec![g]),
            },
        })
    }

    /// The unit's notify socket, bound at its first use (then `true`);
    /// owned by the unit's user, who must be able to send to it. A user
    /// who may not reach it is told once, at the bind (a restart reuses
    /// the socket); a socket the unit's own mount namespace hides, once
    /// its run is made ([`Runtime::report_hidden_notify`]).
    fn notify_socket(
        &mut self,
        unit: UnitId,
        spec: &UnitSpec,
        creds: &Credentials,
    ) -> Result<(PathBuf, bool), String> {
        if let Some((sock, _)) = self.slots.io(unit).and_then(|io| io.notify.as_deref()) {
            return Ok((sock.path().to_path_buf(), false));
        }
        self.notify_seq += 1;
        let path = self.notify_dir.join(format!("{}", self.notify_seq));
        let sock =
            NotifySocket::bind(&self.sys, &path).map_err(|e| format!("notify socket {e}"))?;
        if let Some(Credentials {
            uid: Some(uid),
            gid,
            ..
        }) = self.dynamic_user(spec)
        {
            let _ = self.sys.chown(&path, uid, gid.unwrap_or(uid));
        } else if let Some(user) = &spec.extras.user {
            if let Ok(info) = self.sys.lookup_user(user) {
                let _ = self.sys.chown(&path, info.uid, info.gid);
            }
        }
        let slot = self.slots.ensure(unit);
        let token = self.slots.alloc_token(Source::Notify(slot));
        let _ = self.sys.watch(sock.as_raw_fd(), token, Interest::Read);
        match self.io(unit, spec) {
            Some(io) => io.notify = Some(Box::new((sock, token))),
            None => {
                let _ = self.sys.unwatch(sock.as_raw_fd());
                sock.close(&self.sys);
                self.slots.free_token(token);
                return Err("unit i/o vanished".to_string());
            }
        }
        if let Some((dir, owner)) = unreachable_dir(&self.sys, &path, creds) {
            let who = spec.extras.user.as_deref().unwrap_or_default();
            let note = format!(
                "{}: notify socket {} is out of reach of user {who}: it may not search {} \
                 (owner {}:{}, mode {:04o}), so READY=1 cannot arrive and the start will \
                 time out",
                spec.name,
                path.display(),
                dir.display(),
                owner.uid,
                owner.gid,
                owner.mode
            );
            self.sys.console(&format!("init: {note}"));
            self.unit_note(unit, &note);
        }
        Ok((path, true))
    }

    /// Says so, on the console and in the unit's log, when the unit's
    /// notify socket at `path` lies where its own mount namespace puts
    /// something else (`PrivateTmp=` for an init whose control directory
    /// is under `/tmp`, `InaccessiblePaths=`, `ProtectHome=` …): its
    /// `sd_notify` would find no socket there, and the unit would sit in
    /// `starting` until its time-out with no word why. Only what the run
    /// applied counts (a key left out for want of a privilege hides
    /// nothing).
    fn report_hidden_notify(&mut self, unit: UnitId, spec: &UnitSpec, path: &Path) {
        use flotilla_units::context::mounts;
        let Some(run) = self.slots.get(unit).and_then(|s| s.run.as_deref()) else {
            return;
        };
        let private = run
            .has_private_tmp()
            .then_some(Path::new(crate::sys::dirs::PRIVATE_DIR));
        let left_out: Vec<String> = run.not_applied().into_iter().map(|n| n.setting).collect();
        let mut plan = mounts::plan(&spec.extras.context, private);
        plan.retain(|e| !left_out.iter().any(|s| s == e.key.systemd_name()));
        let Some(e) = mounts::hidden_by(&plan, path) else {
            return;
        };
        let note = format!(
            "{}: notify socket {} is out of reach of the unit: its {}= puts something else at \
             {} in its mount namespace, so READY=1 cannot arrive and the start will time out",
            spec.name,
            path.display(),
            e.key.systemd_name(),
            e.path.display()
        );
        self.sys.console(&format!("init: {note}"));
        self.unit_note(unit, &note);
    }
}

/// The output rate limit of a unit: its `log-rate-limit-interval-sec`
/// and `log-rate-limit-burst`, journald's defaults for what it leaves
/// out.
fn rate_limit(spec: &UnitSpec) -> RateLimit {
    let default = RateLimit::default();
    RateLimit {
        interval: spec
            .extras
            .log_rate_limit_interval
            .unwrap_or(default.interval),
        burst: spec.extras.log_rate_limit_burst.unwrap_or(default.burst),
    }
}
