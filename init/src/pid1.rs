//! PID 1's own duties (docs/contract.md §6): what the init does before the event loop
//! starts and after it returns, when it runs as process 1 of a machine or
//! of a container's PID namespace.
//!
//! - [`boot`]: stdio on the console, the API file systems that are missing
//!   (`/proc`, `/sys`, `/dev`, `/dev/pts`, `/dev/shm`, `/run`), Ctrl-Alt-Del
//!   as a signal, the hostname, a default `PATH`; and where we run
//!   ([`Place`]).
//! - [`final_sequence`]: after the loop stopped every unit
//!   ([`end_processes`]): SIGTERM to every remaining process, a grace period that ends as soon as none is left,
//!   SIGKILL, `sync`, unmount or remount read-only, `reboot(2)`. In a
//!   container it stops after the kills: the caller exits with
//!   [`container_exit_status`].
//! - [`emergency`]: what happens when the init cannot run its units (the
//!   loop could not be set up, a panic, `reboot(2)` failed): log it on the
//!   console, keep reaping, offer `/bin/sh` on the console, and still obey
//!   SIGTERM/SIGPWR/SIGINT. It never returns: PID 1 must not exit on a
//!   machine (the kernel panics), and in a container it exits only through
//!   an orderly final sequence.
//! - [`main`]: the whole life of PID 1, called by `main.rs`.
//!
//! Every system call goes through [`Sys`] (mounts, kills, reaping,
//! descriptors 0-2, directories, `/proc/self`, waiting for signals,
//! `reboot(2)`), so that every step here is unit-tested with
//! [`crate::sys::fake::FakeSys`], and nothing in a test run on the host
//! mounts, kills or reboots anything.
//!
//! # Machine or container
//!
//! [`detect_place`] decides with the first system call PID 1 makes anyway,
//! `reboot(RB_DISABLE_CAD)`: in the initial PID namespace it succeeds; in
//! any other PID namespace the kernel hands `reboot(2)` to
//! `reboot_pid_ns()`, which refuses every command but restart, power-off
//! and halt with `EINVAL` (`kernel/pid_namespace.c`); and a container
//! without `CAP_SYS_BOOT` gets `EPERM`, which the kernel's own PID 1 never
//! does. So: success means a machine, `EINVAL` or `EPERM` a container, and
//! anything else a machine (the safe side: a machine's PID 1 never exits).

use crate::args::{self, Args, ConfigReadError, Context, Settings};
use crate::runtime::Exit;
use crate::sys::real::RealSys;
use crate::sys::signals::Asked;
use crate::sys::{
    mountinfo, Env, Errno, Event, MountRequest, MsFlags, Os, Pid, RebootCmd, SpawnRequest, Stdio,
    Sys, SysError, MOUNTINFO_MAX,
};
use flotilla_units::protocol::ShutdownKind;
use flotilla_units::time::Instant;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

/// How long processes get between SIGTERM and SIGKILL at shutdown.
pub const GRACE: Duration = Duration::from_secs(2);
/// How long to wait for processes after SIGKILL (one stuck in the kernel
/// may take a while) before going on regardless.
pub const KILL_WAIT: Duration = Duration::from_secs(2);
/// The emergency shell.
pub const EMERGENCY_SHELL: &str = "/bin/sh";
/// A container's exit status after an orderly poweroff or halt.
pub const EXIT_OK: u8 = 0;
/// A container's exit status when the target or a required unit had
/// failed when the shutdown began.
pub const EXIT_FAILED: u8 = 1;
/// A container's exit status after the emergency path: the init could not
/// run its units at all.
pub const EXIT_EMERGENCY: u8 = 2;
/// A container's exit status after `initctl reboot`: the container manager
/// should start it again (`systemd-nspawn` uses the same number, see
/// `RestartForceExitStatus=133` in `systemd-nspawn@.service`).
pub const EXIT_REBOOT: u8 = 133;

/// Where PID 1 runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// The initial PID namespace: the init owns the machine and ends with
    /// `reboot(2)`.
    Machine,
    /// Another PID namespace: the init ends by exiting.
    Container,
}

/// One API file system.
struct ApiMount {
    target: &'static str,
    fstype: &'static str,
    flags: MsFlags,
    data: Option<&'static str>,
}

/// The API file systems, in mount order.
fn api_mounts() -> [ApiMount; 7] {
    let nosuid = MsFlags::MS_NOSUID;
    let nodev = MsFlags::MS_NODEV;
    let noexec = MsFlags::MS_NOEXEC;
    [
        ApiMount {
            target: "/proc",
            fstype: "proc",
            flags: nosuid | nodev | noexec,
            data: None,
        },
        ApiMount {
            target: "/sys",
            fstype: "sysfs",
            flags: nosuid | nodev | noexec,
            data: None,
        },
        // The units' cgroups (`sys/unitrun.rs`).
        ApiMount {
            target: "/sys/fs/cgroup",
            fstype: "cgroup2",
            flags: nosuid | nodev | noexec,
            // As systemd mounts it (Linux 4.13).
            data: Some("nsdelegate"),
        },
        ApiMount {
            target: "/dev",
            fstype: "devtmpfs",
            flags: nosuid,
            data: Some("mode=0755"),
        },
        ApiMount {
            target: "/dev/pts",
            fstype: "devpts",
            flags: nosuid | noexec,
            data: Some("mode=0620,gid=5,ptmxmode=0666"),
        },
        ApiMount {
            target: "/dev/shm",
            fstype: "tmpfs",
            flags: nosuid | nodev,
            data: Some("mode=1777"),
        },
        ApiMount {
            target: "/run",
            fstype: "tmpfs",
            flags: nosuid | nodev,
            data: Some("mode=0755"),
        },
    ]
}

/// Decides [`Place`] from the result of `reboot(RB_DISABLE_CAD)` (see the
/// module documentation), with a note saying why.
pub fn detect_place(cad: &Result<(), SysError>) -> (Place, String) {
    let errno = match cad {
        Ok(()) => return (Place::Machine, "the initial PID namespace".into()),
        Err(SysError::Call { errno: Os(e), .. }) => Some(*e),
        Err(_) => None,
    };
    match errno {
        Some(Errno::EINVAL) => (
            Place::Container,
            "a PID namespace of its own (reboot(2) refused with EINVAL)".into(),
        ),
        Some(Errno::EPERM) => (
            Place::Container,
            "a PID namespace without CAP_SYS_BOOT (reboot(2) refused with EPERM)".into(),
        ),
        _ => (
            Place::Machine,
            "reboot(RB_DISABLE_CAD) failed; taken for a machine".into(),
        ),
    }
}

/// Where `/proc` is a parent's (a container whose `/proc` shows another
/// PID namespace: `/proc/self` is not `1`), what `/proc/self` names: the
/// mounts and files are the parent's, not PID 1's to set up.
fn parents_proc(sys: &dyn Sys, place: Place) -> Option<String> {
    if place != Place::Container {
        return None;
    }
    let link = sys.read_link(Path::new("/proc/self")).ok()?;
    Some(link.display().to_string()).filter(|l| l != "1")
}

/// Mounts what is missing of the API file systems; returns the console
/// lines saying what was done. Only for PID 1 (the caller checks).
///
/// `/proc` comes first: whether the others are mounted is read from
/// `/proc/self/mountinfo`. An unreadable mountinfo means `/proc` is not
/// mounted. In a container whose `/proc` belongs to another PID namespace
/// (`/proc/self` is not `1`), the container shares its mounts with its
/// parent, so nothing is mounted at all: a mount there would cover the
/// parent's directories.
pub fn mount_missing(sys: &dyn Sys, place: Place) -> Vec<String> {
    let mut lines = Vec::new();
    if let Some(link) = parents_proc(sys, place) {
        lines.push(format!(
            "init: /proc shows another PID namespace (/proc/self -> {link}): \
             the mounts are shared with the parent; mounting nothing"
        ));
        return lines;
    }
    for m in api_mounts() {
        let target = Path::new(m.target);
        match sys.is_mounted(target) {
            Ok(true) => continue,
            Ok(false) => {}
            // No mountinfo: /proc is not mounted, which is why it comes
            // first. For the others, with /proc still missing, nothing can
            // be told apart: mounting blindly would cover what is there.
            Err(_) if m.fstype == "proc" => {}
            Err(e) => {
                lines.push(format!("init: {}: not mounted: {e}", m.target));
                continue;
            }
        }
        if let Err(e) = sys.create_dir_all(target) {
            lines.push(format!("init: {e}"));
        }
        let req = MountRequest {
            source: Some(m.fstype),
            target,
            fstype: Some(m.fstype),
            flags: m.flags,
            data: m.data,
        };
        match sys.mount(&req) {
            Ok(()) => lines.push(format!("init: mounted {} ({})", m.target, m.fstype)),
            Err(e) => lines.push(format!("init: {e}")),
        }
    }
    lines
}

/// The hostname `/etc/hostname` names: its first line without comments and
/// blanks, when it is a valid name (1 to 64 bytes, no NUL).
pub fn hostname_of(text: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(text);
    let name = text
        .lines()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .find(|l| !l.is_empty())?;
    (name.len() <= 64 && !name.contains('\0')).then(|| name.to_string())
}

/// PID 1's start-up, before the loop: console, place, mounts, the unix
/// datagram queue's length, the machine ID, hostname, `PATH`. Prints its console lines and
/// returns where it runs.
pub fn boot(sys: &dyn Sys) -> Place {
    let mut lines = Vec::new();
    let mut stdio_missing = (0..3).any(|fd| !sys.stdio_open(fd));
    if stdio_missing && sys.open_console().is_ok() {
        stdio_missing = false;
    }
    // Ctrl-Alt-Del sends SIGINT instead of rebooting at once; the same call
    // tells a machine from a container.
    let cad = sys.set_cad_disabled();
    let (place, why) = detect_place(&cad);
    lines.extend(mount_missing(sys, place));
    lines.extend(dev_links(sys));
    lines.extend(raise_dgram_qlen(sys));
    if parents_proc(sys, place).is_none() {
        lines.extend(set_up_machine_id(sys, place));
    }
    if stdio_missing {
        // devtmpfs is mounted now: /dev/console exists.
        if let Err(e) = sys.open_console() {
            lines.push(format!("init: no console: {e}"));
        }
    }
    let where_ = match place {
        Place::Machine => "on a machine",
        Place::Container => "in a container",
    };
    sys.console(&format!(
        "init: flotilla {} as PID 1 {where_}: {why}",
        env!("CARGO_PKG_VERSION")
    ));
    for l in &lines {
        sys.console(l);
    }
    // A container's hostname belongs to its runtime (and a PID namespace
    // may share the host's UTS namespace): only a machine sets it.
    if place == Place::Machine {
        match sys.read_file_limited(Path::new("/etc/hostname"), 4096) {
            Ok(text) => match hostname_of(&text) {
                Some(name) => match sys.sethostname(&name) {
                    Ok(()) => sys.console(&format!("init: hostname {name}")),
                    Err(e) => sys.console(&format!("init: {e}")),
                },
                None => sys.console("init: /etc/hostname names no host; hostname unchanged"),
            },
            Err(SysError::Read {
                errno: Os(Errno::ENOENT),
                ..
            }) => {}
            Err(e) => sys.console(&format!("init: {e}")),
        }
    }
    sys.set_default_path(place == Place::Machine);
    place
}

/// What SIGINT asks for in `place`: Ctrl-Alt-Del reboots a machine; in a
/// container SIGINT is a Ctrl-C (`docker run -it`, `podman run`), which
/// stops it.
pub fn sigint_kind(place: Place) -> ShutdownKind {
    match place {
        Place::Machine => ShutdownKind::Reboot,
        Place::Container => ShutdownKind::Poweroff,
    }
}

/// A container's exit status after an orderly shutdown of `kind`, `failed`
/// telling whether the target or a required unit had failed when it began
/// (see `docs/pid1.md`).
pub fn container_exit_status(kind: ShutdownKind, failed: bool) -> u8 {
    match kind {
        ShutdownKind::Reboot => EXIT_REBOOT,
        ShutdownKind::Poweroff | ShutdownKind::Halt if failed => EXIT_FAILED,
        ShutdownKind::Poweroff | ShutdownKind::Halt => EXIT_OK,
    }
}

fn verb(kind: ShutdownKind) -> (&'static str, RebootCmd) {
    match kind {
        ShutdownKind::Poweroff => ("powering off", RebootCmd::PowerOff),
        ShutdownKind::Reboot => ("rebooting", RebootCmd::Restart),
        ShutdownKind::Halt => ("halting", RebootCmd::Halt),
    }
}

/// Reaps every terminated child; returns the PIDs reaped.
fn reap_all(sys: &dyn Sys) -> Vec<(Pid, crate::sys::ExitStatus)> {
    let mut out = Vec::new();
    // Bounded: a process table holds at most PID_MAX_LIMIT entries.
    for _ in 0..(1 << 22) {
        match sys.wait_any() {
            Ok(Some(x)) => out.push(x),
            Ok(None) | Err(_) => break,
        }
    }
    out
}

/// Reaps until no child is left (`true`) or `limit` has passed (`false`),
/// waking on each SIGCHLD rather than sleeping.
pub fn wait_until_gone(sys: &dyn Sys, limit: Duration) -> bool {
    let deadline = sys.monotonic_now().after(limit);
    let mut events = Vec::new();
    loop {
        reap_all(sys);
        if !sys.children_left() {
            return true;
        }
        let now = sys.monotonic_now();
        if now >= deadline {
            return false;
        }
        events.clear();
        if sys.wait(&mut events, Some(deadline.since(now))).is_err() {
            // No event queue (out of descriptors): nothing to wait on but
            // the deadline; give up waiting rather than spin.
            return !sys.children_left();
        }
    }
}

/// Whether a mount point is an API file system (or below one) that stays
/// mounted to the end: `/proc`, `/sys`, `/dev`.
fn is_api(mount_point: &Path) -> bool {
    ["/proc", "/sys", "/dev"]
        .iter()
        .any(|p| mount_point.starts_with(p))
}

/// Unmounts what can be, newest first, and remounts read-only what cannot
/// (the root among them); `/proc`, `/sys` and `/dev` stay. Returns the
/// console lines.
pub fn unmount_all(sys: &dyn Sys) -> Vec<String> {
    let mut lines = Vec::new();
    let text = match sys.read_file_limited(Path::new("/proc/self/mountinfo"), MOUNTINFO_MAX) {
        Ok(t) => t,
        Err(e) => {
            lines.push(format!("init: {e}; nothing unmounted"));
            return lines;
        }
    };
    let mut points: Vec<PathBuf> = mountinfo::entries(&text)
        .map(|e| e.mount_point)
        .filter(|p| !is_api(p))
        .collect();
    points.reverse();
    let mut seen = std::collections::HashSet::new();
    for p in points {
        // A path mounted twice is listed twice: one umount per entry, but
        // once the path is gone from the table the rest is moot.
        let first = seen.insert(p.clone());
        if p == Path::new("/") {
            continue;
        }
        match sys.umount(&p) {
            Ok(()) => lines.push(format!("init: unmounted {}", p.display())),
            Err(_) if !first => {}
            Err(e) => match sys.remount_readonly(&p) {
                Ok(()) => lines.push(format!("init: remounted {} read-only", p.display())),
                Err(e2) => lines.push(format!("init: {e}; {e2}")),
            },
        }
    }
    match sys.remount_readonly(Path::new("/")) {
        Ok(()) => lines.push("init: remounted / read-only".into()),
        Err(e) => lines.push(format!("init: {e}")),
    }
    lines
}

/// The end of PID 1, after every unit stopped: [`end_processes`], and on
/// a machine `sync`, unmounting and `reboot(2)`. In a container it
/// returns `Ok` after the kills (the caller exits); on a machine it
/// returns only if `reboot(2)` failed.
pub fn final_sequence(
    sys: &dyn Sys,
    kind: ShutdownKind,
    place: Place,
    grace: Duration,
) -> Result<(), SysError> {
    end_processes(sys, grace);
    power_off(sys, kind, place)
}

/// SIGTERM to every process left, up to `grace` for them to go, SIGKILL.
pub fn end_processes(sys: &dyn Sys, grace: Duration) {
    let t0 = sys.monotonic_now();
    reap_all(sys);
    if sys.children_left() {
        sys.console("init: sending SIGTERM to every remaining process");
        if let Err(e) = sys.kill_all(libc::SIGTERM) {
            sys.console(&format!("init: {e}"));
        }
        // A stopped process acts on SIGTERM only once continued.
        let _ = sys.kill_all(libc::SIGCONT);
        if wait_until_gone(sys, grace) {
            sys.console(&format!(
                "init: every process exited after SIGTERM ({} ms)",
                sys.monotonic_now().since(t0).as_millis()
            ));
        } else {
            sys.console(&format!(
                "init: processes left after {} ms: sending SIGKILL",
                grace.as_millis()
            ));
            if let Err(e) = sys.kill_all(libc::SIGKILL) {
                sys.console(&format!("init: {e}"));
            }
            if wait_until_gone(sys, KILL_WAIT) {
                sys.console("init: every process exited after SIGKILL");
            } else {
                sys.console("init: processes survive SIGKILL (stuck in the kernel?); going on");
            }
        }
    } else {
        sys.console("init: no process left");
    }
}

/// After [`end_processes`]: on a machine `sync`, unmounting and
/// `reboot(2)` (returns only if that failed); in a container nothing.
fn power_off(sys: &dyn Sys, kind: ShutdownKind, place: Place) -> Result<(), SysError> {
    if place == Place::Container {
        // The container's mounts and its page cache belong to its runtime
        // and the host kernel: nothing to unmount, and a sync here would
        // flush the whole host.
        return Ok(());
    }
    sys.console("init: syncing file systems");
    sys.sync();
    for l in unmount_all(sys) {
        sys.console(&l);
    }
    sys.sync();
    let (word, cmd) = verb(kind);
    sys.console(&format!("init: {word}"));
    sys.reboot(cmd)
}

/// The emergency shell's state in [`emergency`].
#[derive(Debug)]
pub struct Emergency {
    shell: Option<(Pid, Instant)>,
    next_start: Instant,
    delay: Duration,
    shell_path: String,
}

/// What [`Emergency::step`] asks of the loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Wait for a signal, at most this long (`None`: no limit).
    Wait(Option<Duration>),
    /// Run the final sequence for this kind.
    Shutdown(ShutdownKind),
}

impl Emergency {
    /// No shell yet; the first starts at once.
    pub fn new(sys: &dyn Sys, shell_path: &str) -> Emergency {
        Emergency {
            shell: None,
            next_start: sys.monotonic_now(),
            delay: Duration::from_secs(1),
            shell_path: shell_path.to_string(),
        }
    }

    /// The shell's PID, while one runs.
    pub fn shell(&self) -> Option<Pid> {
        self.shell.map(|(p, _)| p)
    }

    /// Handles `signals`, reaps, (re)starts the shell when due; returns
    /// what to do next.
    pub fn step(&mut self, sys: &dyn Sys, place: Place, signals: &[i32]) -> Step {
        for &s in signals {
            // No unit runs: an immediate form is the same shutdown. SIGCHLD
            // is reaped below; a reload has nothing to load.
            match crate::sys::signals::asked(s, sigint_kind(place), true) {
                Asked::Shutdown(kind) | Asked::Immediate(kind) => return Step::Shutdown(kind),
                Asked::Reload | Asked::Nothing => {}
            }
        }
        let now = sys.monotonic_now();
        for (pid, status) in reap_all(sys) {
            if let Some((shell, started)) = self.shell {
                if pid == shell {
                    sys.console(&format!("init: emergency shell {pid} {status}"));
                    self.shell = None;
                    // A shell that lasted is restarted at once; one that
                    // dies at start (no terminal, no input) backs off.
                    if now.since(started) >= Duration::from_secs(10) {
                        self.delay = Duration::from_secs(1);
                        self.next_start = now;
                    } else {
                        self.next_start = now.after(self.delay);
                        self.delay = (self.delay * 2).min(Duration::from_secs(60));
                    }
                }
            }
        }
        if self.shell.is_none() && now >= self.next_start {
            let argv = vec![self.shell_path.clone()];
            let mut env = Env::from_current();
            let _ = env.set("PS1", "(emergency) # ");
            let req = SpawnRequest::new(&argv, &env)
                .stdin(Stdio::Inherit)
                .stdout(Stdio::Inherit)
                .stderr(Stdio::Inherit);
            match sys.spawn(&req) {
                Ok(pid) => {
                    sys.console(&format!(
                        "init: emergency shell {} started (pid {pid})",
                        self.shell_path
                    ));
                    self.shell = Some((pid, now));
                }
                Err(e) => {
                    sys.console(&format!("init: emergency shell: {e}"));
                    self.next_start = now.after(self.delay);
                    self.delay = (self.delay * 2).min(Duration::from_secs(60));
                }
            }
        }
        match self.shell {
            Some(_) => Step::Wait(None),
            None => Step::Wait(Some(self.next_start.since(now))),
        }
    }
}

/// Whether the emergency path offers a shell: on a machine always (its
/// PID 1 must not exit, and its console is a terminal); in a container
/// only with a terminal on standard input (`podman run -it`). A container
/// without one (`podman run -d`, a pipe) would start shell after shell
/// that reads end-of-file and exits: it ends instead, with
/// [`EXIT_EMERGENCY`], having said why once.
pub fn shell_possible(place: Place, stdin_terminal: bool) -> bool {
    place == Place::Machine || stdin_terminal
}

/// The emergency path: logs `why`, keeps reaping, offers a shell on the
/// console, and on SIGTERM/SIGPWR (poweroff) or SIGINT (see
/// [`sigint_kind`]) runs the final sequence. On a machine it never returns
/// (if `reboot(2)` fails it carries on as before); in a container it exits
/// with [`EXIT_EMERGENCY`] after the final sequence, at once when there is
/// no terminal for the shell ([`shell_possible`]).
pub fn emergency(sys: &dyn Sys, place: Place, why: &str) -> ! {
    sys.console(&format!("init: EMERGENCY: {why}"));
    if !shell_possible(place, sys.stdin_is_terminal()) {
        sys.console(&format!(
            "init: emergency mode: standard input is no terminal, so no shell: \
             ending the container with status {EXIT_EMERGENCY}"
        ));
        // The shutdown's own steps; its `Err` is a machine's only.
        let _ = final_sequence(sys, ShutdownKind::Poweroff, place, GRACE);
        sys.console(&format!("init: exiting with status {EXIT_EMERGENCY}"));
        std::process::exit(i32::from(EXIT_EMERGENCY));
    }
    sys.console(
        "init: emergency mode: reaping orphans, a shell on the console; \
         SIGTERM or SIGPWR powers off, SIGINT reboots (a container exits)",
    );
    if let Err(e) = sys.open_events() {
        sys.console(&format!("init: {e}; signals cannot be waited for"));
    }
    let mut em = Emergency::new(sys, EMERGENCY_SHELL);
    let mut signals = Vec::new();
    let mut events = Vec::new();
    loop {
        match em.step(sys, place, &signals) {
            Step::Wait(t) => {
                events.clear();
                signals.clear();
                if sys.wait(&mut events, t).is_err() {
                    // No event queue: look again after a bounded pause,
                    // as if a child had exited.
                    std::thread::sleep(Duration::from_millis(100));
                    signals.push(libc::SIGCHLD);
                }
                signals.extend(events.iter().filter_map(|e| match e {
                    Event::Signal(s) => Some(*s),
                    Event::Ready(_) => None,
                }));
            }
            Step::Shutdown(kind) => {
                sys.console(&format!("init: emergency: {}", verb(kind).0));
                match final_sequence(sys, kind, place, GRACE) {
                    Ok(()) => {
                        sys.console(&format!("init: exiting with status {EXIT_EMERGENCY}"));
                        std::process::exit(i32::from(EXIT_EMERGENCY));
                    }
                    Err(e) => {
                        sys.console(&format!("init: {e}; staying in emergency mode"));
                        signals = Vec::new();
                    }
                }
            }
        }
    }
}

/// Installs the last resort: a panic anywhere in PID 1 (there should be
/// none: the crate denies `unwrap`, `expect`, `panic` and indexing) prints
/// the message and enters [`emergency`] inside the hook, which never
/// returns. So PID 1 survives even with `panic = "abort"`: the abort would
/// come after the hook, and never does.
pub fn install_panic_hook(place: Place) {
    std::panic::set_hook(Box::new(move |info| {
        let why = format!("internal error: {info}");
        emergency(&RealSys::new(), place, &why);
    }));
}

/// The whole life of PID 1 (`main.rs` calls it when `getpid()` is 1):
/// [`boot`], the settings, the loop, [`final_sequence`]. Returns only in a
/// container, with its exit status; on a machine it ends in `reboot(2)` or
/// in [`emergency`].
///
/// Arguments are taken leniently: the kernel passes unknown command-line
/// words to init, so an argument error is reported and the defaults used;
/// `--help`, `--version` and `--check` are ignored (they would exit). A
/// bad config file is reported and ignored. In a container the kernel
/// command line is the host's and is not read.
pub fn main<I: IntoIterator<Item = String>>(argv: I) -> ExitCode {
    let sys = RealSys::new();
    let place = boot(&sys);
    // After the mounts: `/proc` is there, and `/run`.
    crate::sys::reexec::remember_exe();
    if let Err(e) = crate::sys::conditions::publish_container_id() {
        sys.console(&format!("init: {e}"));
    }
    install_panic_hook(place);
    let mut args = match Args::parse(argv) {
        Ok(a) => a,
        // A container's arguments are its image's and its user's, not a
        // kernel's: a mistake there is a usage error, as for tini.
        Err(e) if place == Place::Container => {
            sys.console(&format!("init: {e}\n{}", args::USAGE));
            return ExitCode::from(EXIT_EMERGENCY);
        }
        Err(e) => {
            sys.console(&format!("init: ignoring the arguments: {e}"));
            Args::default()
        }
    };
    if args.help || args.version || args.check {
        sys.console("init: --help, --version and --check are ignored as PID 1");
        args.help = false;
        args.version = false;
        args.check = false;
    }
    let settings = match settings(&sys, &args, place) {
        Ok(s) => s,
        Err(e) => emergency(&sys, place, &e),
    };
    sys.console(&format!(
        "init: target {}, units {}, control {}",
        settings.target,
        settings.units_dir.display(),
        settings.control.display()
    ));
    let inherited = crate::sys::reexec::inherited();
    let mut rt = match crate::runtime::start(sys, settings, true, inherited) {
        Ok(rt) => rt,
        Err(e) => emergency(&sys, place, &e),
    };
    rt.set_sigint(sigint_kind(place));
    let Exit::Shutdown(kind) = rt.run();
    let failed = rt.failed_at_shutdown();
    let cmd = rt.cmd_status();
    if !rt.immediate() {
        sys.console("init: every unit stopped");
    }
    // Before the units' cgroups are closed: closing kills what is left in
    // them at once (`cgroup.kill`), and an immediate form's units, still
    // running, get SIGTERM and the grace first, as under systemd.
    end_processes(&sys, GRACE);
    rt.close();
    drop(rt);
    match power_off(&sys, kind, place) {
        Ok(()) => {
            let (code, why) = match cmd {
                // The command after `--`: its status is the container's.
                Some(st) => (crate::cmd::exit_code(st), "the command's"),
                None => (
                    container_exit_status(kind, failed),
                    match (kind, failed) {
                        (ShutdownKind::Reboot, _) => "reboot requested",
                        (_, true) => "the target or a required unit had failed",
                        (_, false) => "orderly shutdown",
                    },
                ),
            };
            sys.console(&format!("init: exiting with status {code} ({why})"));
            ExitCode::from(code)
        }
        Err(e) => emergency(&sys, place, &format!("{e}")),
    }
}

/// The settings as PID 1 resolves them; a bad config file is reported and
/// left out rather than stopping the boot.
fn settings(sys: &dyn Sys, args: &Args, place: Place) -> Result<Settings, String> {
    let cmdline = match place {
        Place::Machine => sys
            .read_file_limited(Path::new("/proc/cmdline"), 64 * 1024)
            .ok()
            .map(|b| String::from_utf8_lossy(&b).into_owned()),
        Place::Container => None,
    };
    let uid = sys.geteuid();
    let mut ctx = Context::from_env(true, uid == 0, cmdline);
    ctx.uid = uid;
    ctx.container = place == Place::Container;
    // A non-root PID 1 (a container's `--user`): its socket in /run/init
    // if it may make that directory there (a writable /run), else /tmp.
    ctx.run_usable = uid != 0 && sys.create_dir_all(Path::new("/run/init/notify")).is_ok();
    match args::resolve(args, &ctx, |p| args::read_config(sys, p)) {
        Ok(s) => Ok(s),
        Err(errors) => {
            for e in &errors {
                sys.console(&format!("init: {e}"));
            }
            sys.console("init: ignoring the config file");
            let no_config = Args {
                config: None,
                ..args.clone()
            };
            args::resolve(&no_config, &ctx, |_| Err(ConfigReadError::NotFound))
                .map_err(|errors| errors.join("; "))
        }
    }
}

mod dev_links;
mod dgram_qlen;
mod machine_id;
use dev_links::dev_links;
pub use dev_links::DEV_LINKS;
use dgram_qlen::raise_dgram_qlen;
pub use dgram_qlen::{raised_dgram_qlen, UNIX_MAX_DGRAM_QLEN};
use machine_id::set_up_machine_id;

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic, clippy::indexing_slicing)]
mod tests;

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic, clippy::indexing_slicing)]
#[path = "pid1/machine_id_tests.rs"]
mod machine_id_tests;
