//! Running systemd's `testsuite-NN.service` in a booted guest: one test
//! at a time over ssh, as systemd's own harness runs it
//! (`systemctl start`, the verdict in `/testok` and `/failed`), and the
//! boots that a run of several tests takes (a fresh disk and boot after a
//! failure).

use crate::debian_support::{boot_to_login, machine, ssh_each, Init, Machine, Vm, NO_ASLR};
use crate::pid1_support::report;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How long one test may run under systemd, the oracle (`timeout` around
/// the wait for its end).
pub const TEST_LIMIT: Duration = Duration::from_secs(600);

/// How long a test may run: in all, and without a new line in its
/// journal.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Limit {
    /// The most it may run in all.
    pub total: Duration,
    /// The most it may run with its journal still: a script traces each
    /// command it runs (`set -x`), so a test that writes nothing for this
    /// long waits on one command that does not end.
    pub quiet: Duration,
}

/// systemd's: [`TEST_LIMIT`] in all, whatever its journal does.
pub const SYSTEMD_LIMIT: Limit = Limit {
    total: TEST_LIMIT,
    quiet: TEST_LIMIT,
};

/// flotilla's: a test runs while it makes progress, on a machine however
/// loaded: it is cut when its journal has been still for three minutes
/// (the longest quiet step of the scripts, a `timeout 60` wait or a
/// `daemon-reload` in the emulated guest, takes a minute at most), or
/// after [`RUNAWAY`] in all, a guard against a script that loops and
/// writes for ever. A fixed multiple of systemd's time cut 15 at its
/// 1,200 s on a loaded machine while it still passed step after step.
pub const FLOTILLA_LIMIT: Limit = Limit {
    total: RUNAWAY,
    quiet: Duration::from_secs(180),
};

/// The most any test runs under flotilla (four times [`TEST_LIMIT`]).
pub const RUNAWAY: Duration = Duration::from_secs(2400);

/// What became of one test under one init.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Outcome {
    /// `03`, `05`, …
    pub test: String,
    /// `/testok` exists and `/failed` is absent or empty, `systemctl
    /// start` returned 0 and the unit's `Result` is `success`.
    pub passed: bool,
    /// `systemctl start --no-block`'s exit status, or the wait's (124: the
    /// unit was still starting when its limit ran out).
    pub rc: i32,
    /// `ActiveState/SubState/Result` of the unit after the start.
    pub state: String,
    /// The last command the script traced (`+ …`, its `set -x`) before it
    /// ended: where a failing script stopped.
    pub last_command: String,
    /// The last lines of the unit's output.
    pub tail: String,
    /// The start's wall time in the guest.
    pub seconds: f64,
}

impl Outcome {
    /// The failure as a failing test prints it: the test, the unit's state,
    /// the last lines of its output.
    pub fn describe(&self, init: Init) -> String {
        format!(
            "testsuite-{}.service under {}: {} (systemctl start: {}, {}, {:.0} s); last command: {}\n{}",
            self.test,
            init.name(),
            if self.passed { "passed" } else { "FAILED" },
            self.rc,
            self.state,
            self.seconds,
            self.last_command,
            self.tail
        )
    }
}

/// Stops the transient services earlier tests of the boot left running,
/// resets failed units (not the transient scopes: the ssh session
/// that runs the test is one), and removes what earlier tests of the boot
/// left in `/tmp` (every entry that was not there at the boot's first
/// round, listed then in `/run/systemd-tests-tmp`; never across a mount).
/// systemd's own harness boots a fresh machine for each test, so a test
/// may leave its units and files behind, and a later test of the same
/// boot would fail on them under either init: test 23's `one.service`
/// (`systemd-run --unit=one … sleep infinity`) would make test 56's
/// `systemd-run --unit=one` fail; test 33's `tmp-hoge.mount` leaves its
/// mount point, the directory `/tmp/hoge` (systemd creates a mount point
/// and does not remove it, nor does flotilla), and test 63's
/// `rm -f /tmp/hoge` fails on it. Neither a unit nor a file of a test is
/// read by a later one: a test that passed in the oracle's boots passes
/// in a cleaner one, so the cached results stand (`HARNESS` unchanged).
/// Only the services that run are asked whether they are transient: a
/// `systemctl show` of every service (`--all`, 159 in the image) asks for
/// every inactive one, which under flotilla may read the search path again
/// (it took 50 to 60 s of each round when every such ask read it; now only
/// a change on disk since the last read does).
const LEFTOVERS: &str = "t=$(systemctl show -p Id -p Transient \
     $(systemctl list-units --state=active,activating,deactivating,reloading --plain \
     --no-legend --type=service | awk '{print $1}') \
     2>/dev/null | awk -F= '/^Id=/ {id=$2} /^Transient=yes/ {print id}'); \
     [ -n \"$t\" ] && systemctl stop $t >/dev/null 2>&1; systemctl reset-failed >/dev/null 2>&1; \
     [ -e /run/systemd-tests-tmp ] || ls -A /tmp >/run/systemd-tests-tmp; \
     ls -A /tmp | grep -vxF -f /run/systemd-tests-tmp | \
     while IFS= read -r f; do rm -rf --one-file-system \"/tmp/$f\" 2>/dev/null; done;";

/// The guest's clock for the harness's times: `/proc/uptime`, which no
/// setting of the date moves, in whole seconds (`up`) and milliseconds
/// (`up_ms`; the file has hundredths, read as `1NN` so that a leading zero
/// is not octal).
const CLOCK: &str = "up() { read u r </proc/uptime; echo ${u%.*}; }; \
     up_ms() { read u r </proc/uptime; echo $(( ${u%.*} * 1000 + (1${u#*.} - 100) * 10 )); };";

/// Marks the two parts of one test's answer.
const PART: &str = "==systemd-test-part==";

/// The guest's command for test `nn`: `systemctl start --no-block`, then
/// the unit's state polled until it is neither starting nor queued,
/// bounded by `limit` (a blocking `systemctl start` would lose its
/// connection when the script runs `systemctl daemon-reexec`, as
/// testsuite-03's does: systemd's harness starts the tests from its
/// boot's target instead); the verdict files, the unit's state and
/// result, its output (journald's: the unit's standard output and error
/// under either init). First what earlier tests of the boot left is let
/// go: their transient services are stopped and failed units reset
/// ([`LEFTOVERS`]). The time of each part besides the test's own is in
/// the answer too (`leftovers_ms=`, `verdict_ms=`, `journal_ms=`: the
/// test's log), for a round that takes long. A test cut at its limit is
/// stopped after its verdict is read, so that it does not run on beside
/// the next tests of a boot that goes on (the whole run's, under systemd:
/// 02, cut at its 600 s, went on running its unit tests), which changes
/// no verdict (`HARNESS` unchanged). Every time is read from the guest's
/// [`CLOCK`], not its wall clock, which tests set (53 sets it three days
/// back).
fn command(nn: &str, limit: Limit) -> String {
    let unit = format!("testsuite-{nn}.service");
    format!(
        "{CLOCK} z=$(up_ms); {LEFTOVERS} rm -f /testok /failed; a=$(up_ms); \
         systemctl start --no-block {unit} >/tmp/start.out 2>&1; rc=$?; \
         if [ $rc = 0 ]; then {wait} fi; \
         b=$(up_ms); echo \"rc=$rc\"; echo \"ms=$((b - a))\"; \
         echo \"leftovers_ms=$((a - z))\"; \
         [ -e /testok ] && echo testok; [ -s /failed ] && echo failed-nonempty; \
         echo \"result=$(systemctl show -P Result {unit} 2>&1)\"; \
         echo \"state=$(systemctl show -P ActiveState {unit} 2>&1)/$(systemctl show -P SubState \
         {unit} 2>&1)\"; c=$(up_ms); echo \"verdict_ms=$((c - b))\"; echo {PART}; \
         cat /tmp/start.out; head -c 2000 /failed 2>/dev/null; \
         journalctl -b -u {unit} --no-pager -o cat 2>&1 | tail -n 400; \
         d=$(up_ms); echo \"journal_ms=$((d - c))\"; \
         [ $rc = 124 ] && timeout 60 systemctl stop {unit} >/dev/null 2>&1; true",
        wait = wait_loop(&unit, limit),
    )
}

/// The shell loop that waits until `unit` is neither starting nor
/// queued, polled each second, bounded by `limit`: `rc=124` (as
/// `timeout`'s) when it ran [`Limit::total`] in all, or when the last line
/// of its journal (its cursor, looked at every fifth second) has not
/// changed for [`Limit::quiet`].
fn wait_loop(unit: &str, limit: Limit) -> String {
    format!(
        "t0=$(up); seen=$t0; cur=; n=0; while :; do \
         s=$(systemctl show -P ActiveState {unit} 2>/dev/null); case \"$s\" in \
         activating|deactivating|reloading|\"\") ;; \
         inactive) systemctl list-jobs --no-legend 2>/dev/null | grep -q \" {unit} \" || break ;; \
         *) break ;; esac; now=$(up); \
         if [ $((now - t0)) -ge {total} ]; then rc=124; break; fi; n=$((n + 1)); \
         if [ $((n % 5)) = 0 ]; then \
         k=$(journalctl -b -u {unit} -n 1 --show-cursor -q -o cat 2>/dev/null | tail -n 1); \
         if [ \"$k\" != \"$cur\" ]; then cur=$k; seen=$now; \
         elif [ $((now - seen)) -ge {quiet} ]; then rc=124; break; fi; fi; \
         sleep 1; done;",
        total = limit.total.as_secs(),
        quiet = limit.quiet.as_secs(),
    )
}

/// Parses the answer of [`command`].
fn parse(nn: &str, out: &str) -> Outcome {
    let (head, log) = out.split_once(PART).unwrap_or((out, ""));
    let field = |key: &str| {
        head.lines()
            .find_map(|l| l.strip_prefix(key))
            .unwrap_or("")
            .to_string()
    };
    let rc: i32 = field("rc=").parse().unwrap_or(-1);
    let ms: f64 = field("ms=").parse().unwrap_or(0.0);
    let result = field("result=");
    let testok = head.lines().any(|l| l == "testok");
    let failed = head.lines().any(|l| l == "failed-nonempty");
    let lines: Vec<&str> = log.lines().collect();
    let last_command = lines
        .iter()
        .rev()
        .find(|l| l.starts_with('+'))
        .unwrap_or(&"")
        .to_string();
    let tail = lines[lines.len().saturating_sub(25)..].join("\n");
    Outcome {
        test: nn.to_string(),
        passed: rc == 0 && result == "success" && testok && !failed,
        rc,
        state: format!("{}/{result}", field("state=")),
        last_command,
        tail,
        seconds: ms / 1000.0,
    }
}

/// For a diagnosis by hand (`SYSTEMD_TESTS_SHIM=1`), never in the suite:
/// a `systemd-analyze` and a `systemctl` ahead of Debian's on the PATH
/// that answer `log-level` and `log-target` with success and run Debian's
/// for the rest, so that a script whose first line sets the manager's log
/// level gets past it under a flotilla that refuses it, and shows where
/// it fails next.
const SHIM: &str = "for p in systemd-analyze systemctl; do \
     printf '#!/bin/sh\\ncase \"$1\" in log-level|log-target) exit 0 ;; esac\\n\
     exec /usr/bin/%s \"$@\"\\n' $p > /usr/local/bin/$p; chmod +x /usr/local/bin/$p; done; \
     cat /usr/local/bin/systemctl";

/// Waits until the boot is done: systemd's `is-system-running --wait`,
/// flotilla's target reached (`initctl status --json`), each at most three
/// minutes.
fn settle(vm: &Vm, m: &Machine) {
    let wait = match vm.init {
        Init::Systemd => "timeout 180 systemctl is-system-running --wait; true",
        Init::Flotilla => {
            "for i in $(seq 180); do initctl status --json | tr -d ' ' \
             | grep -q '\"target_state\":\"running\"' && break; sleep 1; done; \
             initctl status --json | tr -d ' ' | grep -o '\"target_state\":\"[a-z]*\"'"
        }
    };
    let out = ssh_each(vm, m, &[wait]);
    report(&format!(
        "systemd-tests: {} settled: {}",
        vm.init.name(),
        out[0].trim()
    ));
}

/// Runs `tests` under `init`, in as few boots as it can: every boot is a
/// fresh copy of the image's disk; one test follows another in the same
/// boot until one fails that was expected to pass (`expect_fail` says
/// which are known to fail) or whose round got no answer (the guest
/// powered off or its ssh died: testsuite-18 ends in a `FailureAction=
/// poweroff`), after which the rest get a new boot; each bounded by
/// `limit`. Each test's whole output is kept in `logs/INIT-NN.log`, and
/// its outcome handed to `record` as soon as it is known. The outcomes in
/// the order of `tests`, and the boots it took.
pub fn run(
    image: &Path,
    init: Init,
    tests: &[String],
    expect_fail: &dyn Fn(&str) -> bool,
    limit: &dyn Fn(&str) -> Limit,
    (work, logs): (&Path, &Path),
    record: &dyn Fn(&Outcome),
) -> (Vec<Outcome>, usize) {
    let mut outcomes = Vec::new();
    let mut rest: Vec<String> = tests.to_vec();
    let mut boots = 0;
    while !rest.is_empty() {
        boots += 1;
        let dir = work.join(format!("{}-{boots}", init.name()));
        std::fs::create_dir_all(&dir).expect("mkdir");
        let m = machine(image.to_path_buf(), &dir);
        let t = Instant::now();
        let vm = Vm::boot_with(&m, init, NO_ASLR);
        let timing = boot_to_login(&vm, "systemd tests");
        settle(&vm, &m);
        if init == Init::Flotilla && std::env::var_os("SYSTEMD_TESTS_SHIM").is_some() {
            ssh_each(&vm, &m, &[SHIM]);
        }
        report(&format!(
            "systemd-tests: {} boot {boots}: sshd after {:.1} s, settled after {:.1} s",
            init.name(),
            timing.sshd.as_secs_f64(),
            t.elapsed().as_secs_f64()
        ));
        while let Some(nn) = rest.first().cloned() {
            rest.remove(0);
            let round = Instant::now();
            let out = vm.ssh(&m, &command(&nn, limit(&nn)));
            let round = round.elapsed().as_secs_f64();
            let text = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            let _ = std::fs::write(logs.join(format!("{}-{nn}.log", init.name())), &text);
            let o = parse(&nn, &text);
            report(&format!(
                "systemd-tests: {} {nn}: {} in {:.1} s ({}; the round over ssh {round:.1} s)",
                init.name(),
                if o.passed { "pass" } else { "FAIL" },
                o.seconds,
                o.state
            ));
            let answered = text.lines().any(|l| l.starts_with("rc="));
            let again = !answered || (!o.passed && !expect_fail(&nn));
            if !o.passed {
                report(&o.describe(init));
            }
            record(&o);
            outcomes.push(o);
            if again {
                break;
            }
        }
        drop(vm);
        let _ = std::fs::remove_dir_all(&dir);
    }
    (outcomes, boots)
}

/// Where the test keeps each test's whole output: beside the image cache,
/// so that it outlives the test's temporary directory.
pub fn logs_dir(image: &Path) -> PathBuf {
    let d = image
        .parent()
        .expect("the image cache")
        .join("systemd-tests-logs");
    std::fs::create_dir_all(&d).expect("mkdir logs");
    d
}

/// [`wait_loop`] run by `sh` on the host with stand-ins for the guest's
/// commands on the PATH: `up` (the guest's [`CLOCK`]) counts the loop's rounds (one per
/// call), `sleep` returns at once, `systemctl` says `activating` until
/// round `ends` (then `inactive`, no job), and `journalctl`'s last cursor
/// moves each round when `moving`. Its `rc` and the round it ended in.
#[cfg(test)]
fn wait_loop_on_host(limit: Limit, ends: u64, moving: bool) -> (String, u64) {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("tempdir");
    let tick = dir.path().join("tick");
    std::fs::write(&tick, "0").expect("tick");
    let t = tick.display();
    let cursor = if moving { "$(cat {t})" } else { "still" }.replace("{t}", &t.to_string());
    for (name, body) in [
        (
            "up",
            format!("n=$(cat {t}); echo $((n + 1)) > {t}; echo $n"),
        ),
        ("sleep", String::new()),
        (
            "systemctl",
            format!(
                "[ \"$1\" = show ] || exit 0; [ $(cat {t}) -lt {ends} ] && echo activating \
                 || echo inactive"
            ),
        ),
        (
            "journalctl",
            format!("echo line; echo \"-- cursor: {cursor}\""),
        ),
    ] {
        let p = dir.path().join(name);
        std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).expect("stand-in");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    let script = format!(
        "rc=0; {} echo \"rc=$rc\"; cat {t}",
        wait_loop("testsuite-99.service", limit)
    );
    let path = format!("{}:/usr/bin:/bin", dir.path().display());
    let out = std::process::Command::new("sh")
        .args(["-c", &script])
        .env("PATH", path)
        .output()
        .expect("sh");
    let text = String::from_utf8_lossy(&out.stdout);
    let mut lines = text.lines();
    let rc = lines.next().unwrap_or_default().to_string();
    let round = lines
        .next()
        .and_then(|l| l.trim().parse().ok())
        .unwrap_or(0);
    (rc, round)
}

#[test]
fn a_test_runs_while_its_journal_moves() {
    let limit = Limit {
        total: Duration::from_secs(1000),
        quiet: Duration::from_secs(30),
    };
    // Ends by itself at round 100, well past the quiet limit, its journal
    // moving: not cut.
    assert_eq!(wait_loop_on_host(limit, 100, true), ("rc=0".into(), 100));
    // Its journal still: cut about `quiet` rounds after the last move,
    // by the check of every fifth round.
    let (rc, round) = wait_loop_on_host(limit, 100, false);
    assert_eq!(rc, "rc=124");
    assert!((30..=41).contains(&round), "cut at round {round}");
    // Moving for ever: cut at the total.
    let runaway = Limit {
        total: Duration::from_secs(60),
        ..limit
    };
    let (rc, round) = wait_loop_on_host(runaway, 10_000, true);
    assert_eq!(rc, "rc=124");
    assert!((60..=62).contains(&round), "cut at round {round}");
}
