//! A Debian machine's life after its boot (docs/debian.md, "A machine's
//! life"): what the package manager does to a running machine, checked
//! under both inits on the same disk with the same commands, the answers
//! compared line for line (`main.rs` calls [`check`] once in systemd's
//! boot and once in flotilla's timing boot):
//!
//! - `systemctl restart systemd-journald` (Debian's systemd package does it
//!   on upgrades): a service started by `systemd-run` has its lines in
//!   `journalctl -u`, and the lines it writes after the restart too (its
//!   output stream kept in journald's descriptor store by the manager);
//! - `systemctl restart systemd-logind`: this login's session is still
//!   listed by `loginctl` (logind's descriptor store);
//! - `systemctl restart dbus`: `systemctl is-system-running`, `loginctl
//!   list-sessions` and `hostnamectl` answer again, and this login's
//!   session is still there (logind, `Type=dbus` by systemd's default for
//!   a `BusName=` without `Type=`, is stopped once the new bus has no
//!   owner for its name, and `Restart=always` brings it back onto it).
//!
//! `apt-get install --reinstall systemd udev` is beside it, in
//! `reinstall.rs`, run right after [`check`] in the same two boots.

use crate::debian_support::{ssh_each, Machine, Vm};
use std::time::{Duration, Instant};

/// The transient service of the journald check.
const TICK: &str = "flotilla-tick";

/// Runs `$@` until it succeeds, at most 60 s, each try at most 10 s (a
/// D-Bus call waiting for a service that never comes times out after 25
/// s); its last output in /tmp/life.out, and how long it took (ms) on
/// the line `took=N` of stderr's file /tmp/life.ms.
const ASK: &str = "ask() { a=$(date +%s%N); d=$(( $(date +%s) + 60 )); \
     until timeout 10 \"$@\" > /tmp/life.out 2>&1; do \
     [ \"$(date +%s)\" -ge \"$d\" ] && break; sleep 0.2; done; \
     b=$(date +%s%N); echo $(( (b - a) / 1000000 )) > /tmp/life.ms; }";

/// Polls until `$1` (a shell condition) holds, at most 30 s.
const UNTIL: &str = "until_() { for i in $(seq 150); do eval \"$1\" && return 0; sleep 0.2; done; \
     return 1; }";

/// What the checks of one boot answered: the lines that must be the same
/// under both inits, and the seconds each restart took to be answered
/// again (reported, not compared).
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Life {
    pub lines: Vec<String>,
    pub took: Duration,
    pub answered_ms: Vec<(String, u64)>,
}

/// The restarts of journald, logind and dbus, in one ssh login (its own
/// session is the one logind must keep). Asserts each answer; the lines
/// for the comparison between the inits.
pub fn check(vm: &Vm, m: &Machine) -> Life {
    let started = Instant::now();
    let ticks =
        |n: &str| format!("journalctl -u {TICK} -o cat --no-pager {n} 2>/dev/null | grep -cx tick");
    let journald = format!(
        "{UNTIL}; systemd-run --unit {TICK} /bin/sh -c 'while :; do echo tick; sleep 1; done' \
         2>&1; echo rc=$?; \
         until_ '[ \"$({before})\" -ge 2 ]' && echo ticks-before-restart; \
         systemctl restart systemd-journald; echo rc=$?; t=$(( $(date +%s) + 1 )); \
         until_ '[ \"$({after})\" -ge 2 ]' && echo ticks-after-restart; \
         systemctl is-active {TICK}; systemctl stop {TICK}; echo rc=$?",
        before = ticks(""),
        after = ticks("--since @$t"),
    );
    let logind = format!(
        "{UNTIL}; id=$XDG_SESSION_ID; echo session=${{id:+set}}; \
         systemctl restart systemd-logind; echo rc=$?; \
         until_ 'loginctl list-sessions --no-legend | awk \"\\$1 == $id\" | grep -q .' \
         && echo session-listed; loginctl show-session \"$id\" -p State -p Remote; \
         systemctl is-active systemd-logind"
    );
    let dbus = format!(
        "{ASK}; systemctl restart dbus; echo rc=$?; \
         ask systemctl is-system-running; cat /tmp/life.out; l=$(cat /tmp/life.ms); \
         ask loginctl list-sessions --no-legend; \
         awk -v id=\"$XDG_SESSION_ID\" '$1 == id {{print \"session-listed\"}}' /tmp/life.out; \
         l=\"$l $(cat /tmp/life.ms)\"; \
         ask hostnamectl; grep -o 'Static hostname: .*' /tmp/life.out; \
         echo \"$l $(cat /tmp/life.ms)\" >&2; systemctl is-active dbus systemd-logind"
    );
    let script = [journald.as_str(), logind.as_str(), dbus.as_str()];
    let out = vm.ssh(
        m,
        &script.join(&format!(
            "; printf '{}'; ",
            crate::debian_support::SPLIT.replace('\n', "\\n")
        )),
    );
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let parts: Vec<&str> = text.split(crate::debian_support::SPLIT).collect();
    let init = vm.init.name();
    let diagnose = || {
        ssh_each(
            vm,
            m,
            &[&format!(
                "systemctl status {TICK} systemd-journald systemd-logind dbus --no-pager \
                 -n 8 2>&1; journalctl -n 30 --no-pager 2>&1; \
                 command -v initctl >/dev/null && initctl logs flotilla-busd.service \
                 2>&1 | tail -n 20; true"
            )],
        )
        .join("")
    };
    assert_eq!(
        parts.len(),
        3,
        "{init}: the life checks' ssh: {:?}\nstdout: {text}\nstderr: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr),
        diagnose()
    );
    let want: [&[&str]; 3] = [
        &[
            "Running as unit: flotilla-tick.service",
            "rc=0",
            "ticks-before-restart",
            "rc=0",
            "ticks-after-restart",
            "active",
            "rc=0",
        ],
        &[
            "session=set",
            "rc=0",
            "session-listed",
            "Remote=yes",
            "State=active",
            "active",
        ],
        &[
            "rc=0",
            "running",
            "session-listed",
            "Static hostname: flotilla-debian",
            "active",
            "active",
        ],
    ];
    let names = [
        "systemctl restart systemd-journald",
        "systemctl restart systemd-logind",
        "systemctl restart dbus",
    ];
    let mut lines = Vec::new();
    for ((part, want), name) in parts.iter().zip(want).zip(names) {
        let got: Vec<&str> = part.lines().collect();
        if got != want {
            panic!("{init}: {name}: got {got:?}, want {want:?}\n{}", diagnose());
        }
        lines.extend(got.iter().map(|l| format!("{name}: {l}")));
    }
    // The dbus check's three times, on stderr's last line.
    let stderr = String::from_utf8_lossy(&out.stderr);
    let ms: Vec<u64> = stderr
        .lines()
        .last()
        .unwrap_or("")
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect();
    assert_eq!(ms.len(), 3, "{init}: the dbus check's times: {stderr}");
    let answered_ms = ["systemctl is-system-running", "loginctl", "hostnamectl"]
        .iter()
        .zip(ms)
        .map(|(n, ms)| (n.to_string(), ms))
        .collect();
    Life {
        lines,
        took: started.elapsed(),
        answered_ms,
    }
}
