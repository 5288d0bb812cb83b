//! The whole loop on [`FakeSys`]: unit files in the fake's file system,
//! children that exit when the test says so, signals the test raises, a
//! control connection in the abstract socket namespace, and a clock that
//! moves only when the loop waits with a time-out and nothing happens.
//! Each test asserts the system calls the loop made.

mod attach;
mod changes;
mod clock;
mod conditions;
mod devices;
mod emptied;
mod freezer;
mod instances;
mod journal;
mod leases;
mod lifecycle;
mod locale;
mod logs;
mod mount_table;
mod not_found;
mod notify_access;
mod oom;
mod passed;
mod paths;
mod reexec;
mod reload;
mod reread;
mod runtime_max;
mod shape;
mod sockets;
mod transient_reread;

use super::{Exit, Runtime};
use crate::args::Settings;
use crate::sys::fake::{Call, FakeSys, SpawnRecord};
use crate::sys::{ExitStatus, Sys};
use flotilla_units::protocol::{Envelope, Reply, Request};
use flotilla_units::state::UnitState;
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::time::Duration;

/// The units directory of every test.
const UNITS: &str = "/etc/init/units";
/// The control socket of every test.
const CONTROL: &str = "/run/init/control.sock";
/// More turns than any test needs: a loop that goes on past this without
/// going idle is spinning.
const MAX_TURNS: usize = 10_000;

/// A loop on a fake, and the test's side of it.
struct Harness {
    rt: Runtime<FakeSys>,
}

fn settings(target: &str) -> Settings {
    Settings::new(UNITS, target, CONTROL)
}

/// A fake with these unit files (name, YAML) in [`UNITS`].
fn fake_with(units: &[(&str, &str)]) -> FakeSys {
    let sys = FakeSys::new();
    sys.add_dir(UNITS);
    for (name, yaml) in units {
        sys.set_file(format!("{UNITS}/{name}.yaml"), *yaml);
    }
    sys
}

/// The PID of the last spawn of `argv0`.
fn spawned_pid(sys: &FakeSys, argv0: &str) -> i32 {
    sys.spawns()
        .iter()
        .rev()
        .find(|s| s.argv.first().map(String::as_str) == Some(argv0))
        .and_then(|s| s.pid)
        .unwrap_or_else(|| panic!("{argv0} was not spawned"))
}

/// `transient-add` of a service named `name` (`""`: named by the init)
/// running `/bin/tool`, with the caller's streams `stdio`.
fn add_tool(name: &str, stdio: Vec<flotilla_units::protocol::StdStream>) -> Request {
    use flotilla_units::spec::{Command, UnitSpec, UnitType};
    let mut unit = UnitSpec::new(name, UnitType::ForegroundSupervised);
    unit.exec_start = Some(Command::new(["/bin/tool"]));
    add_request(unit, stdio, None)
}

/// `transient-add` of `unit`, with the caller's streams `stdio` and its
/// unit file `file` (as flotilla-busd sends it).
fn add_request(
    unit: flotilla_units::spec::UnitSpec,
    stdio: Vec<flotilla_units::protocol::StdStream>,
    file: Option<&str>,
) -> Request {
    Request::TransientAdd {
        unit: Box::new(unit),
        adopt: Vec::new(),
        stdio,
        aux: Vec::new(),
        file: file.map(str::to_string),
    }
}

impl Harness {
    /// Starts the loop on `sys` for `target` and runs it until it waits
    /// for something only the test can do.
    fn start(sys: FakeSys, target: &str) -> Harness {
        let rt = Runtime::new(sys, settings(target), false).unwrap_or_else(|e| panic!("{e}"));
        let mut h = Harness { rt };
        h.settle();
        h
    }

    fn sys(&self) -> &FakeSys {
        self.rt.sys()
    }

    /// One turn.
    fn turn(&mut self) -> Option<Exit> {
        self.rt.turn()
    }

    /// Turns until the loop would sleep with no time-out (every timer
    /// that came due on the way has run, the clock jumping to it).
    fn settle(&mut self) {
        for _ in 0..MAX_TURNS {
            if self.turn().is_some() || self.sys().idle() {
                return;
            }
        }
        panic!("the loop never went idle");
    }

    /// Turns until `cond` holds.
    #[track_caller]
    fn turn_until(&mut self, what: &str, mut cond: impl FnMut(&mut Harness) -> bool) {
        for _ in 0..MAX_TURNS {
            if cond(self) {
                return;
            }
            self.turn();
        }
        panic!("never: {what}");
    }

    /// Makes the process of `unit` (a `restart: always` one running
    /// `argv0`) exit with 1, and turns until `argv0` is spawned again.
    fn fail_until_respawned(&mut self, unit: &str, argv0: &str) {
        let pid = self.pid(unit);
        self.exit(unit, ExitStatus::Exited(1));
        self.turn_until(&format!("{unit} restarted"), |h| {
            h.sys().spawns().iter().any(|s| {
                s.argv.first().map(String::as_str) == Some(argv0) && s.pid.is_some_and(|p| p != pid)
            })
        });
    }

    /// The snapshot a `reexec` writes (the fake's `execve` then fails,
    /// and the loop goes on).
    fn reexec_snapshot(&mut self) -> flotilla_units::snapshot::Snapshot {
        self.sys().take_calls();
        self.request(Request::Reexec);
        let calls = self.sys().take_calls();
        let Some(Call::Reexec { snapshot, .. }) =
            calls.iter().find(|c| matches!(c, Call::Reexec { .. }))
        else {
            panic!("no reexec in {calls:?}");
        };
        flotilla_units::snapshot::decode(snapshot).unwrap_or_else(|e| panic!("{e}"))
    }

    /// The state of unit `name`.
    fn state(&self, name: &str) -> UnitState {
        let p = &self.rt.planner;
        p.graph()
            .unit(name)
            .map_or(UnitState::Disabled, |id| p.state(id))
    }

    /// The main PID of unit `name`.
    #[track_caller]
    fn pid(&self, name: &str) -> i32 {
        let p = &self.rt.planner;
        p.graph()
            .unit(name)
            .and_then(|id| p.view(id))
            .and_then(|v| v.pid)
            .unwrap_or_else(|| panic!("{name} has no PID"))
    }

    /// Unit `name`'s main process exits.
    fn exit(&self, name: &str, status: ExitStatus) {
        self.sys().exit(self.pid(name), status);
    }

    /// A new control connection, as `initctl` makes.
    fn connect(&self) -> Client {
        let stream = self
            .sys()
            .connect_control()
            .unwrap_or_else(|e| panic!("{e}"));
        stream
            .set_nonblocking(true)
            .unwrap_or_else(|e| panic!("{e}"));
        Client {
            stream,
            buf: Vec::new(),
        }
    }

    /// Sends `request` on a new connection and turns the loop until its
    /// final reply; returns every reply.
    fn request(&mut self, request: Request) -> Vec<Reply> {
        let mut c = self.connect();
        c.send(&request);
        self.replies_until_final(&mut c)
    }

    /// Turns the loop until `c` has a final reply; returns the replies.
    fn replies_until_final(&mut self, c: &mut Client) -> Vec<Reply> {
        let mut got = Vec::new();
        for _ in 0..MAX_TURNS {
            self.turn();
            got.extend(c.replies());
            if got.last().is_some_and(Reply::is_final) {
                return got;
            }
        }
        panic!("no final reply; got {got:?}");
    }
}

/// The test's end of a control connection.
struct Client {
    stream: UnixStream,
    buf: Vec<u8>,
}

impl Client {
    fn send(&mut self, request: &Request) {
        let mut line =
            serde_json::to_vec(&Envelope::new(request.clone())).unwrap_or_else(|e| panic!("{e}"));
        line.push(b'\n');
        self.stream
            .write_all(&line)
            .unwrap_or_else(|e| panic!("{e}"));
    }

    /// The replies that arrived so far.
    fn replies(&mut self) -> Vec<Reply> {
        let mut chunk = [0u8; 65536];
        while let Ok(n) = self.stream.read(&mut chunk) {
            if n == 0 {
                break;
            }
            self.buf
                .extend_from_slice(chunk.get(..n).unwrap_or_default());
        }
        let mut out = Vec::new();
        while let Some(nl) = self.buf.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = self.buf.drain(..=nl).collect();
            let text = line.get(..nl).unwrap_or_default();
            out.push(serde_json::from_slice(text).unwrap_or_else(|e| panic!("{e}")));
        }
        out
    }
}

/// The calls of `calls` that start, signal or reap processes, or wait:
/// what a test of the loop's behaviour asserts.
fn processes_and_waits(calls: &[Call]) -> Vec<String> {
    calls
        .iter()
        .filter_map(|c| match c {
            Call::Spawn(SpawnRecord {
                argv, pid: Some(p), ..
            }) => Some(format!("spawn {} = {p}", argv.join(" "))),
            Call::Kill { pid, signal } => Some(format!("kill {pid} {signal}")),
            Call::KillPg { pgid, signal } => Some(format!("killpg {pgid} {signal}")),
            Call::Wait(t) => Some(format!("wait {t:?}")),
            _ => None,
        })
        .collect()
}

/// The time-out of each wait in `calls`.
fn waits(calls: &[Call]) -> Vec<Option<Duration>> {
    calls
        .iter()
        .filter_map(|c| match c {
            Call::Wait(t) => Some(*t),
            _ => None,
        })
        .collect()
}
