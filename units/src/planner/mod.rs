//! The state model and the planner.
//!
//! # The state model
//!
//! The init satisfies exactly one **target**. The **required set** R is the
//! provider of that target plus every unit reachable from it over
//! `depends-on`, `depends-ms`, `waits-for`, `wants` and `requires`
//! ([`Graph::required_set`]).
//! Everything outside R is driven to `disabled`. Nothing is started or stopped
//! by command: every start and stop below follows from the graph, the target
//! and the facts the init reports, by these rules.
//!
//! Each unit has a visible **state** ([`UnitState`]) and an internal
//! **phase**, which says which of its processes exist:
//!
//! | phase      | processes                               | state shown            |
//! |------------|-----------------------------------------|------------------------|
//! | `Idle`     | none                                    | disabled, waiting, exited or failed |
//! | `Pre`      | an `exec-start-pre` command             | starting               |
//! | `Main`     | the main process (or start script), not yet ready | starting     |
//! | `Up`       | the main process (if any), ready        | running                |
//! | `Reloading`| the main process, and `exec-reload` if any | reloading           |
//! | `Stopping` | the main process and/or `exec-stop`     | stopping               |
//! | `StopPost` | an `exec-stop-post` command             | stopping               |
//!
//! A unit is **up** in `Pre`, `Main`, `Up` and `Reloading`; **active** when
//! its state is `running`, `reloading` or `exited`.
//!
//! ## Events and what they move
//!
//! | event (fact)                       | in phase   | effect |
//! |------------------------------------|------------|--------|
//! | start rule holds (below)           | Idle       | `Pre` (first pre command) or `Main`; `virtual` goes `Up` at once |
//! | pre command exits 0 (or ignored)   | Pre        | next pre command, or `Main` |
//! | pre command fails / spawn fails    | Pre        | failure |
//! | main spawned                       | Main       | `foreground-supervised` with no `ready-*`: `Up` |
//! | `READY=1`                          | Main       | `Up` (`foreground-notified`) |
//! | `READY=1`                          | Reloading  | `Up` |
//! | `RELOADING=1`                      | Up         | `Reloading` |
//! | `STOPPING=1`                       | Up         | `Stopping` (the unit stops by itself; its exit then counts as in `Up`) |
//! | `ready-grep` line matched          | Main       | `Up` |
//! | `ready-wait` timer                 | Main       | `Up` |
//! | start command exits 0              | Main       | `oneshot`: `Idle`/`exited`; `background-scripted`: `Up` (no PID); `background-pidfile`: read the pidfile |
//! | pidfile read: PID                  | Main       | `Up`, the PID is the main process |
//! | pidfile unreadable (not yet written, or its PID is not running) | Main | read again (10 ms doubling to 250 ms) until `start-timeout`, then failure |
//! | main exits                         | Main       | failure (it never became ready) |
//! | main exits (`background-pidfile`)  | Up, Reloading | read the pidfile: another running PID is the main process now; else the exit counts (below) |
//! | main exits 0                       | Up         | `restart: always`: failure path with a restart; else stop-post, then `exited` |
//! | main exits non-zero / by a signal  | Up, Reloading | failure (what it left in its process group gets SIGKILL) |
//! | `exec-reload` exits                | Reloading  | `Up` |
//! | `start-timeout`                    | Pre, Main  | stop, then failure |
//! | stop rule holds (below)            | Pre, Main, Up, Reloading | `Stopping`: `exec-stop` if any, else `kill-signal` to the process group |
//! | main (and `exec-stop`) gone        | Stopping   | leftovers in the group get SIGKILL; `StopPost` or `Idle` |
//! | `stop-timeout`                     | Stopping   | SIGKILL to the group; after another `stop-timeout` the processes are abandoned |
//! | stop-post commands done            | StopPost   | `Idle`: `failed` after a failure, else `waiting` (still required) or `disabled` |
//! | restart timer                      | Idle/failed| back to the start rule |
//!
//! A **failure** stops what is left of the unit (running `exec-stop-post`)
//! and leaves it `failed`. If `restart` allows it (`on-failure`: a non-zero
//! exit, a signal, a timeout; `always`: any exit the init did not ask for), a
//! restart is scheduled after `restart-delay`, doubling with each consecutive
//! failure up to `restart-max-delay`; the count starts over once the unit has
//! been active for 60 s. While it waits, the unit is `failed` and reports
//! when the next attempt is.
//!
//! ## The rules
//!
//! - **Start rule**: a unit in R, phase `Idle`, state `disabled` or
//!   `waiting` (or `failed` with its restart time reached), not shutting
//!   down, starts when every `depends-on` and `depends-ms` provider is active
//!   (and not about to stop) and every `waits-for` provider is active or
//!   failed (a missing `waits-for` target counts as settled; a missing hard
//!   target blocks). At most `max-concurrent-starts` units are in `Pre`/`Main`
//!   at once; the rest wait their turn in name order.
//! - **Stop rule**: an up unit is to stop when it is outside R, when the
//!   system shuts down, when it was asked to restart (command, changed
//!   definition on reload), or when a `depends-on` provider is not active or
//!   is itself to stop. It begins stopping once no up unit that depends on it
//!   (any kind) is also to stop: **dependents stop before their
//!   dependencies**. A unit stopped because of a `depends-on` provider goes
//!   back to `waiting` and starts again by the start rule once the provider is
//!   active again; `depends-ms`, `waits-for` and `wants` do not stop
//!   anything (`requires`: below).
//! - **blocked-by**: a waiting unit whose `depends-on`/`depends-ms` target is
//!   missing, failed, or itself blocked names the root target. For a
//!   `waits-for` dependent a blocked unit counts as settled, like a failed
//!   one: a bad unit never holds up what merely waits for it.
//! - **degraded**: an active unit with a dependency (any kind, direct or
//!   transitive) that is not active, or a missing `waits-for` target.
//! - **coincidental**: a target provided by a non-disabled unit that nothing
//!   in R depends on (and that is not the system's target).
//! - `oneshot` that exited 0 stays `exited` (active) while required; a
//!   `failed` unit without a pending restart stays failed until the target is
//!   set again, the unit is restarted, or its definition changes.
//! - **Shutdown**: every unit is to stop; everything drains to `disabled`.
//!
//! ## Declared targets and masks (docs/contract.md §3b)
//!
//! A target the config declares (`targets:`) has a node of its own, a
//! `virtual` unit named after it that depends on its providers
//! ([`crate::graph`]'s `targets.rs`):
//!
//! - **group**: the node `waits-for` every provider, so every provider is
//!   in R. It starts once every provider has settled and one is active;
//!   it is `degraded` while some provider is not active; it is `failed`
//!   when every provider has settled and none is active, and it starts
//!   again (by the start rule) once one is active again.
//! - **alternative**: the node `depends-on` the chosen provider only (the
//!   config's `choose`, else the highest `preference`, ties by name:
//!   [`crate::targets::pick`]); the other providers are not in R unless
//!   something else requires them, so its state is the chosen provider's.
//!   `set-alternative` moves the choice as a target switch moves R: what
//!   hard-depends on the target stops first, then the old provider, then
//!   the new one starts and the dependents after it. With `failover`, a
//!   chosen provider that fails hands over to the next one in preference
//!   order that has not failed since the target was set; the last one
//!   stays chosen.
//! - A choice made at run time outlives a new unit set while the config
//!   and the preferences still choose as they did.
//! - **masked**: a masked unit is never in R (by no path: not as the
//!   target, a dependency, a want or a restart), provides nothing, and
//!   what hard-depends on a target only it provides waits with
//!   `blocked_by` `masked`.
//! # Triggers, ordering, conflicts and conditions
//!
//! A `timer`, `socket` or `path` unit is a **trigger**: it has no process
//! of its own, and it names one unit it **triggers** (`triggers`,
//! systemd's `Unit=` or `Service=`). A trigger never pulls its unit into
//! R: `triggers` is not a dependency.
//!
//! **The trigger's own states.** A trigger in R starts by the start rule
//! like any unit and is then up, with no process: a timer at once
//! (`running`, its status the next elapse); a socket once the init has
//! bound its sockets (`starting` until then; the sockets are bound once, at
//! this start, and kept while the socket unit is up: across every restart
//! of its service and across reloads that leave the socket unit
//! unchanged); a path unit once the init watches its paths. While it
//! waits it is `running`; it **fires** when its event comes (the elapse,
//! a connection on one of its sockets, a change of a watched path), and
//! stays `running`, counting (`last trigger`, accepted connections). A
//! timer with no elapse left becomes `exited` (`elapsed`). A trigger that
//! leaves R stops at once (sockets closed, watches removed, its deadline
//! dropped) and is `disabled`; a trigger outside R never fires. A trigger
//! whose sockets cannot be bound (or paths watched) is `failed`, and so is
//! a socket or path unit that fires more often than its trigger limit
//! allows (`TriggerLimitBurst=` in `TriggerLimitIntervalSec=`), its
//! sockets closed.
//!
//! **The triggered unit.** When a trigger fires, its unit U joins the
//! *triggered set* T, and the **effective required set** is R plus T plus
//! everything reachable from T over the three dependency kinds; every rule
//! below and above reads "required" as this set (`initctl status` says
//! which trigger a unit is required by). U is **required from its trigger
//! until it settles**, and leaves T when it does:
//!
//! - a `oneshot` settles when it is idle again: `exited` (status 0),
//!   skipped (a condition failed, below), or `failed` with no restart
//!   pending;
//! - a long-running service settles only when its main process has ended
//!   by itself (it exited, or failed for good): while it runs it stays
//!   required, whatever its trigger does next;
//! - a socket-activated service that exits (on an idle time-out, as many
//!   do) settles then; its socket keeps listening, and the next connection
//!   triggers it again. With `accept: yes` each connection triggers a new
//!   instance of the socket's template (`svc@N-LOCAL-PEER.service`),
//!   which settles when its process ends and is then removed;
//! - a unit that cannot start settles too: blocked (a hard dependency
//!   failed or is missing), or refused by a conflict (below);
//! - a `virtual` unit has nothing to end: it stays triggered while its
//!   trigger is active.
//!
//! U also leaves T when its trigger stops (the trigger left R, or the
//! system shuts down): what the trigger started goes with it. A settled U
//! outside R is `disabled`, except when it failed: it stays `failed`,
//! showing why, until its trigger fires again (or the target, a restart or
//! a reload gives it a fresh start). A trigger that fires while U is up
//! changes nothing; while U is `exited` (required by R, or settled in T)
//! or `failed`, U starts again from scratch. A trigger holds off its next
//! event while U is triggered: a socket (with `accept: no`) is not watched
//! while its service is triggered or up (the service accepts), and a path
//! unit checks its paths again when U settles, firing again if they still
//! match. Each unit is ordered after its trigger (below), so a service
//! that R requires anyway starts once its sockets are bound and is handed
//! them (`LISTEN_FDS`).
//!
//! **Ordering** (`after`, `before`; systemd's `After=`, `Before=`). `A
//! after B` (or `B before A`) relates two units that are required anyway
//! and never pulls either in: when both are in the effective required set,
//! A starts only once B is settled (active, failed, or blocked, as for
//! `waits-for`), and when both are to stop, A stops first (it counts as a
//! dependent of B for the stop rule). When B is not required, A does not
//! wait for it. `depends-on`, `depends-ms` and `waits-for` order as before;
//! an ordering cycle is a cycle.
//!
//! **Pulling in without ordering** (`wants`, `requires`; from systemd
//! units only where a target's default ordering would loop). Both put the
//! unit into R and order nothing: the two start concurrently, neither
//! waits for the other to stop, and a cycle of them is no cycle (systemd
//! loads `Wants=` and `Requires=` pairs too). Neither makes A
//! `degraded`. `A wants B`: what becomes of B changes nothing for A.
//! `A requires B`: A does not start while B is failed, blocked
//! or to stop (or missing: A is blocked, as by a missing `depends-on`);
//! and an up A is stopped when B fails (at its start or later, by a
//! crash: once B is `failed`), when B is stopped or restarted (`to
//! stop`), or when B leaves R (a conflict). A goes back to `waiting` and
//! starts again, by the start rule, as soon as B is no longer failed or
//! stopping (B starting again by its restart is enough: no ordering).
//! Stopping A needs no wait for B, nor the other way round.
//!
//! That is stronger than systemd's `Requires=` without `After=`, and on
//! purpose. systemd.unit(5): with `Requires=` and no `After=`, a failing
//! start of B fails A's start job only if A's job is still pending (a
//! race, since nothing orders them), and B deactivating on its own (its
//! process exits, or crashes) is not propagated to A; only an explicit
//! stop or restart of B is. `BindsTo=` adds that A stops whenever B
//! becomes inactive by any means. flotilla has no jobs, so it cannot
//! reproduce the race; it takes the rule that does not depend on timing:
//! A runs only while B is not failed (systemd's outcome when B fails
//! before A started), and B exiting cleanly by itself (`exited`) leaves
//! A running, as under systemd. Where `After=` also names B, the pair is
//! `depends-on` (`Requires=` + `After=`) or `waits-for` (`Wants=` +
//! `After=`): ordered, as described above. `BindsTo=` is `Requires=`
//! (with `After=`, `depends-on`) plus a stop propagated from B
//! (`stop_propagation.rs`): A stops whenever B ends, a clean exit
//! included, as systemd's `unit_check_binds_to`.
//!
//! **Conflicts** (`conflicts`, systemd's `Conflicts=`, symmetric). When A
//! is in R and B conflicts with it, the unit the target requires wins: of
//! two units that R would both pull in, the one reached first from the
//! roots (breadth first, each unit's dependencies in order) is required
//! and the other is not, nor what only it pulls in
//! ([`Graph::reachable`]). B counts as not required (it stops if it is
//! up; what hard-depends on it is blocked by it, and a trigger firing for
//! it is refused and noted); while it is `disabled` its status says
//! `conflicts with A` (both directions of `conflicts` count), and `init
//! --check` warns about each unit a conflict leaves out of the target's
//! set ([`Graph::conflict_losers`]). When neither is in R (both
//! triggered), the later trigger wins and the other leaves T.
//!
//! **Conditions** (`condition-…`, `assert-…`; systemd's `Condition…=` and
//! `Assert…=`). A unit with any is checked by the init at the moment it
//! would start, after its dependencies are settled and before any process
//! runs: the planner asks ([`Action::CheckConditions`]) and the unit is
//! `starting` (`checking conditions`) until the answer, which the init
//! gives at once. Everything holds: the start goes on. A condition failed:
//! the unit is **skipped**: no process runs, it is settled and not failed
//! (`exited`, an active state, so that its dependents proceed as under
//! systemd, where a failed condition does not fail the start), its status
//! says which condition (`skipped: ConditionPathExists=/x was not met`)
//! and `initctl status --json` has `"skipped": true` until its next start.
//! An assertion failed: the unit is `failed` (no restart). The check runs
//! again at each start: a trigger, a restart, a changed definition, the
//! unit leaving and re-entering R.
//!
//! Added to the table of events:
//!
//! | event (fact)                       | in phase   | effect |
//! |------------------------------------|------------|--------|
//! | start rule holds, unit with conditions | Idle   | `Check`: ask the init; `starting` |
//! | conditions hold                    | Check      | `Pre` or `Main`, as a start without conditions |
//! | a condition failed                 | Check      | `Idle`, `exited`, skipped |
//! | an assertion failed                | Check      | `Idle`, `failed`, no restart |
//! | start rule holds (`timer`)         | Idle       | `Up`, `running` (or `exited` when nothing is left to fire); its deadline set |
//! | start rule holds (`socket`, `path`)| Idle       | `Main`, `starting`: ask the init to bind the sockets, watch the paths |
//! | sockets bound / paths watched      | Main       | `Up`, `running` |
//! | binding or watching failed         | Main       | failure |
//! | the trigger fires                  | Up         | its unit joins T (or is refused: a conflict) |
//! | stop rule holds (trigger)          | Up, Main   | `Idle` at once: sockets closed, watches removed |
//!
//! # The planner
//!
//! [`Planner`] holds the graph, the target, and the run-time record of each
//! unit. The init feeds it [`Fact`]s (what the kernel reported) and the time;
//! it answers with [`Action`]s (spawn, signal, read a pidfile) and the list
//! of units whose state changed. Changes propagate through a work list, never
//! by recursion, and each fact costs work proportional to what it changes.
//! Deadlines (timeouts, `ready-wait`, restarts) are kept in a heap;
//! [`Planner::next_deadline`] is the init's poll timeout.
//!
//! Where each part lives:
//!
//! - `facts.rs`: the facts and actions exchanged with the init;
//! - `record.rs`: a unit's run-time record (phase, state, rule flags; the
//!   processes, timer and texts);
//! - `deps.rs`: the dependency index, what each unit's dependencies add up
//!   to, kept current as providers move;
//! - `rules.rs`: the rules above, one unit at a time, and the work list;
//! - `lifecycle/`: the phase × event table of the first section, and its
//!   cells (`start.rs`, `check.rs`, `stop.rs`);
//! - `conditions.rs`: the check of conditions the init answers with;
//! - `replace.rs`: a new unit set (reload, transient units);
//! - `not_found.rs`: a running unit whose file a reload no longer finds
//!   (systemd's `not-found`), kept until it stops;
//! - `targets.rs`: what moves an alternative's choice, and what a status
//!   says of a declared target;
//! - `wants.rs`: units required besides the target's (transient units);
//! - `triggered.rs`: the triggered set T (a trigger fires; its unit is
//!   required until it settles);
//! - `timers.rs`: timer units (armed on the deadline heap, firing, the
//!   wall clock and the `Persistent=` stamps the init gives);
//! - `views.rs`: the queries for status replies.

use crate::graph::{Graph, UnitId};
use crate::state::UnitState;
use crate::time::Instant;
use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap, HashMap};
use std::hash::BuildHasherDefault;
use std::time::Duration;

mod activated;
mod bus_names;
mod carry;
mod conditions;
mod deps;
mod errors;
mod facts;
mod lifecycle;
mod mount_table;
#[cfg(test)]
mod mount_table_tests;
mod not_found;
#[cfg(test)]
mod not_found_tests;
mod pid_hasher;
mod record;
#[cfg(test)]
mod regressions;
mod reload;
mod replace;
mod restart;
mod rules;
mod stop_propagation;
mod targets;
#[cfg(test)]
mod targets_tests;
mod timers;
#[cfg(test)]
mod timers_tests;
mod triggered;
mod uphold;
mod views;
mod wants;
#[cfg(test)]
mod wants_tests;

pub use crate::exits::ExitStatus;
pub use conditions::{check_unit, CheckOutcome};
pub use errors::{ReloadError, RestartError, UnknownTarget};
pub use facts::{Action, Fact, Notify, Role, Whom};
pub use replace::OnChange;
pub use targets::{AlternativeError, TargetView};
pub use timers::TimerEnv;
pub use triggered::{Activated, Monitor};
pub use views::UnitView;
pub use wants::{WantError, WantLife};

use deps::DepIndex;
use lifecycle::Event;
use pid_hasher::PidHasher;
use record::{Phase, Record, Status, Unit};
use rules::{Changed, WorkList};

/// The smallest delay the restart back-off doubles from.
pub const MIN_RESTART_DELAY: Duration = Duration::from_millis(100);

/// Options of the planner.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PlannerOptions {
    /// At most this many units starting at once (`None`: no limit).
    pub max_concurrent_starts: Option<usize>,
}

/// The planner: see the module documentation.
#[derive(Debug)]
pub struct Planner {
    graph: Graph,
    /// Per unit, what the rules read and set.
    units: Vec<Unit>,
    /// Per unit, the rest of its record.
    records: Vec<Record>,
    /// Per unit, what its dependencies add up to.
    index: DepIndex,
    target: String,
    /// `graph.provider(&target)`, looked up when either changes.
    target_provider: Option<UnitId>,
    /// Per unit, whether the target requires it.
    required: Vec<bool>,
    shutting_down: bool,
    /// Whether a missed `WATCHDOG=1` fails its unit (systemd's
    /// `ServiceWatchdogs`): off, the timeout is ignored until the next
    /// ping arms the watchdog again.
    service_watchdogs: bool,
    opts: PlannerOptions,
    now: Instant,
    /// The units to evaluate.
    work: WorkList,
    /// Units ready to start, waiting for a start slot (name order).
    start_queue: BTreeSet<UnitId>,
    /// Units in `Pre` or `Main`: the start slots taken.
    starting: usize,
    /// Every timer set: (deadline, unit, the unit's timer number). An
    /// entry whose number is not the unit's current one is stale.
    timers: BinaryHeap<Reverse<(Instant, u32, u64)>>,
    /// Every process the planner tracks, and whose it is.
    pids: HashMap<i32, (UnitId, Role), BuildHasherDefault<PidHasher>>,
    /// The actions decided and not yet taken.
    actions: Vec<Action>,
    /// The units whose state or status changed, not yet taken.
    changed: Changed,
    target_set_at: Instant,
    target_active_at: Option<Instant>,
    /// The providers of alternatives with `failover` that failed since the
    /// target was set: (the target's node, the provider).
    failed_over: Vec<(UnitId, UnitId)>,
    /// The wanted units besides the target's set (`wants.rs`).
    wants: Vec<(String, WantLife)>,
    /// The units stopped by hand (by their own names), left out of the
    /// required set until they are started again, a trigger fires for
    /// them or the target switches (`wants.rs`).
    held: Vec<String>,
    /// The triggered set T (`triggered.rs`).
    triggered: Vec<triggered::Triggered>,
    /// What timers read besides the monotonic clock (`timers.rs`).
    timer_env: Box<TimerEnv>,
    /// The D-Bus names owned on the system bus (`bus_names.rs`).
    bus_names: BTreeSet<String>,
}

impl Planner {
    /// A planner for `graph` with nothing running yet. It starts reaching
    /// `target` at once if some unit provides it; otherwise every unit stays
    /// `disabled` until [`Planner::set_target`] names a known target.
    pub fn new(graph: Graph, target: &str, now: Instant, opts: PlannerOptions) -> Planner {
        Planner::with_timer_env(graph, target, now, opts, TimerEnv::default())
    }

    /// [`Planner::new`], with what timers read besides the monotonic clock
    /// (the wall clock, zones, persistent last triggers) known from the
    /// start.
    pub fn with_timer_env(
        graph: Graph,
        target: &str,
        now: Instant,
        opts: PlannerOptions,
        timer_env: TimerEnv,
    ) -> Planner {
        let mut p = Planner::unstarted(graph, target, now, opts, timer_env);
        p.index_graph();
        p.push_all();
        p.run();
        p
    }

    /// A planner for `graph` whose rules have not run yet (every unit
    /// idle): [`Planner::with_timer_env`] runs them; `carry.rs` restores
    /// records first.
    fn unstarted(
        graph: Graph,
        target: &str,
        now: Instant,
        opts: PlannerOptions,
        timer_env: TimerEnv,
    ) -> Planner {
        let n = graph.len();
        Planner {
            units: vec![Unit::new(); n],
            records: (0..n).map(|_| Record::new(now)).collect(),
            index: DepIndex::default(),
            required: graph.required_set(target).unwrap_or_else(|| vec![false; n]),
            target_provider: graph.provider(target),
            graph,
            target: target.to_string(),
            shutting_down: false,
            service_watchdogs: true,
            opts,
            now,
            work: WorkList::new(n),
            start_queue: BTreeSet::new(),
            starting: 0,
            timers: BinaryHeap::new(),
            pids: HashMap::default(),
            actions: Vec::new(),
            changed: Changed {
                list: Vec::new(),
                listed: vec![false; n],
            },
            target_set_at: now,
            target_active_at: None,
            failed_over: Vec::new(),
            wants: Vec::new(),
            held: Vec::new(),
            triggered: Vec::new(),
            timer_env: Box::new(timer_env),
            bus_names: BTreeSet::new(),
        }
    }

    /// The earliest pending deadline: the init's poll timeout.
    pub fn next_deadline(&mut self) -> Option<Instant> {
        while let Some(Reverse((t, u, gen))) = self.timers.peek().copied() {
            let live = self
                .records
                .get(u as usize)
                .is_some_and(|r| r.timer_gen == gen && r.timer.is_some());
            if live {
                return Some(t);
            }
            self.timers.pop();
        }
        None
    }

    /// Takes the actions decided so far.
    pub fn take_actions(&mut self) -> Vec<Action> {
        std::mem::take(&mut self.actions)
    }

    /// Moves the actions decided so far to the end of `out`, in order: what
    /// [`Planner::take_actions`] returns, but the planner keeps its buffer
    /// (and its capacity), and so can the caller (no allocation per call).
    pub fn drain_actions_into(&mut self, out: &mut impl Extend<Action>) {
        out.extend(self.actions.drain(..));
    }

    /// Takes the units whose state (or status) changed since the last call.
    pub fn take_changed(&mut self) -> Vec<UnitId> {
        self.changed.take()
    }

    /// Switches to `target`. Units outside its required set stop (dependents
    /// first); failed units inside it get a fresh start.
    pub fn set_target(&mut self, target: &str, now: Instant) -> Result<(), UnknownTarget> {
        self.now = now;
        let provider = self
            .graph
            .provider(target)
            .ok_or_else(|| UnknownTarget(target.to_string()))?;
        if self.shutting_down {
            return Ok(());
        }
        self.target = target.to_string();
        self.target_provider = Some(provider);
        self.target_set_at = now;
        self.target_active_at = None;
        // `IgnoreOnIsolate=`: a unit that is up stays, wanted as if started
        // by hand (until `initctl stop`).
        // Up: starting, running, or exited with its work kept (a oneshot
        // with `RemainAfterExit=`, Debian's `ifup@eth0.service`).
        let kept: Vec<String> = (0..self.units.len())
            .filter(|&i| self.units[i].up() || self.units[i].state.is_active())
            .map(|i| &self.graph.node(UnitId(i as u32)).spec)
            .filter(|s| s.extras.ignore_on_isolate == Some(true))
            .map(|s| s.name.clone())
            .collect();
        for name in kept {
            self.add_want(&name, WantLife::Kept);
        }
        // A fresh start: the failovers are forgotten, and so are the wants
        // that last until a switch.
        self.failed_over.clear();
        self.prune_wants(true);
        self.update_required();
        for i in 0..self.units.len() {
            let u = &self.units[i];
            if self.required[i] && u.state == UnitState::Failed && u.phase == Phase::Idle {
                self.reset_failed(UnitId(i as u32));
            }
        }
        self.run();
        Ok(())
    }

    /// Begins an orderly shutdown: every unit stops, dependents first.
    pub fn shutdown(&mut self, now: Instant) {
        self.now = now;
        self.shutting_down = true;
        self.push_all();
        self.run();
    }

    /// Feeds one fact.
    pub fn fact(&mut self, fact: Fact, now: Instant) {
        self.now = now;
        match fact {
            Fact::Spawned { unit, role, pid } => {
                if unit.index() < self.units.len() {
                    // A scope's adopted process that is another unit's
                    // stays that unit's: its exit is reaped as theirs, the
                    // scope's end comes as `ScopeEnded`.
                    let adopted =
                        self.spec_of(unit).kind.row().ready == crate::spec::Ready::Adopted;
                    let theirs = self.pids.get(&pid).is_some_and(|&(u, _)| u != unit);
                    if !(adopted && theirs) {
                        self.pids.insert(pid, (unit, role));
                    }
                    self.step(unit, Event::Spawned(role, pid));
                }
            }
            Fact::SpawnFailed { unit, role, error } => {
                if self.forget_spawn(unit, role) {
                    self.step(unit, Event::SpawnFailed(role, error));
                }
            }
            Fact::ExecFailed {
                unit,
                status,
                error,
            } => {
                if unit.index() < self.units.len() {
                    self.step(unit, Event::ExecFailed(status, error));
                }
            }
            Fact::Exited { pid, status } => {
                if let Some((unit, role)) = self.pids.remove(&pid) {
                    if self.forget_process(unit, role, pid, status) {
                        self.step(unit, Event::Exited(role, pid, status));
                    }
                }
            }
            Fact::ScopeEnded { unit } => {
                let main = self.records.get(unit.index()).and_then(|r| r.main_pid);
                if let Some(pid) = main {
                    if self.pids.get(&pid) == Some(&(unit, Role::Main)) {
                        self.pids.remove(&pid);
                    }
                    let status = ExitStatus::Code(0);
                    if self.forget_process(unit, Role::Main, pid, status) {
                        self.step(unit, Event::Exited(Role::Main, pid, status));
                    }
                }
            }
            Fact::CgroupEmpty { unit } => self.step(unit, Event::CgroupEmpty),
            Fact::Notify { unit, msg } => self.notify(unit, msg),
            Fact::ReadyLine { unit } => self.step(unit, Event::ReadyLine),
            Fact::OomKilled { unit } => self.step(unit, Event::OomKilled),
            Fact::BusNames {
                owned,
                released,
                whole,
            } => self.bus_names(owned, released, whole),
            Fact::Pidfile { unit, result } => self.step(unit, Event::Pidfile(result)),
            Fact::NoMainProcess { unit } => self.step(unit, Event::NoMainProcess),
            Fact::Checked { unit, outcome } => self.step(unit, Event::Checked(outcome)),
            Fact::Armed { unit, result } => self.step(unit, Event::Armed(result)),
            Fact::Fired { unit, path } => self.step(unit, Event::Fired(path)),
            Fact::Accepted { unit, instance } => self.step(unit, Event::Accepted(instance)),
            Fact::MountTable { unit, mounted } => self.mount_table(unit, mounted),
        }
        self.run();
    }

    /// An sd_notify message: the three that move the phase go to the
    /// lifecycle table; the others are noted.
    fn notify(&mut self, u: UnitId, msg: Notify) {
        let i = u.index();
        if i >= self.units.len() {
            return;
        }
        match msg {
            Notify::Ready => self.step(u, Event::Ready),
            Notify::Reloading => self.step(u, Event::Reloading),
            Notify::Stopping => self.step(u, Event::Stopping),
            Notify::Status(s) => {
                self.records[i].rare_mut().notify_status = Some(s);
                self.mark_changed(u);
            }
            Notify::MainPid(pid) => {
                if pid > 1 && self.units[i].up() {
                    if let Some(old) = self.records[i].main_pid.replace(pid) {
                        if self.pids.get(&old) == Some(&(u, Role::Main)) {
                            self.pids.remove(&old);
                        }
                    }
                    // Another unit's process (root may name one, systemd's
                    // test 20) stays that unit's: its exit is that unit's.
                    if self.pids.get(&pid).is_none_or(|(o, _)| *o == u) {
                        self.pids.insert(pid, (u, Role::Main));
                    }
                    self.mark_changed(u);
                }
            }
            Notify::Errno(e) => {
                self.records[i].status = Status::Text(format!("errno {e}"));
                self.mark_changed(u);
            }
            Notify::ExtendTimeout(d) => {
                use record::Timer;
                let at = self.now.after(d);
                match self.records[i].timer {
                    Some((t, kind @ (Timer::Start | Timer::Stop | Timer::Reload))) if at > t => {
                        self.set_timer_at(u, at, kind)
                    }
                    _ => self.extend_running(u, at),
                }
            }
            Notify::Watchdog => self.arm_watchdog(u),
        }
    }

    /// Handles every deadline up to `now`.
    pub fn tick(&mut self, now: Instant) {
        self.now = now;
        while let Some(Reverse((t, u, gen))) = self.timers.peek().copied() {
            if t > now {
                break;
            }
            self.timers.pop();
            let Some(r) = self.records.get_mut(u as usize) else {
                continue;
            };
            if r.timer_gen != gen {
                continue;
            }
            let Some((_, kind)) = r.timer.take() else {
                continue;
            };
            self.step(UnitId(u), Event::Timer(kind));
        }
        self.run();
    }
}
