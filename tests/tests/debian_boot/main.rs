//! Boots a real Debian 12 system with flotilla as PID 1, and the same disk
//! with systemd for comparison (contrib/debian: mmdebstrap, flotilla put in
//! by contrib/debian/install, booted by contrib/debian/run in software
//! emulated qemu with the image's own cloud kernel). One disk, five boots:
//!
//! 1. flotilla, first boot: the login prompt on the serial console, sshd
//!    answering through qemu's user-mode forward, an ssh login (a key the
//!    test makes) running `initctl status`: every unit Debian's multi-user.target
//!    requires active (from Debian's own files), none failed;
//!    the early-boot units' work (root read-write, swap, /tmp, the kernel
//!    file systems, a new machine ID, the network (brought up by udev's
//!    hotplug helper asking Debian's systemctl for `ifup@eth0.service`,
//!    as under systemd), what systemd's helpers
//!    did: sysctl.d, tmpfiles.d, the random seed, /run/nologin gone), the
//!    file systems of Debian's `.mount` units mounted; logind's session of
//!    the ssh login (its scope, `/run/user/0`, `user@0.service` in its PAM
//!    session, the ended logins' sessions gone); no unit took more
//!    than 24 s to start (`initctl analyze blame`: a D-Bus call waiting for
//!    systemd takes 25 s); none of flotilla's files is another package's
//!    (`dpkg -S`: the flotilla package's only). flotilla's package upgraded
//!    over the running init (`upgrade.rs`: PID 1 re-executes the new
//!    binary, every service keeps its process). A persistent timer of
//!    the test's (`clock.rs`), its stamp set two days back. The disk
//!    filled to its last block (`disk.rs`: the init, its bus and log
//!    writer answer), and `systemctl reboot` with it full (qemu's
//!    `-no-reboot` ends qemu: the test boots the disk again).
//! 2. flotilla again, after that reboot, the disk still full: the state
//!    written in boot 1 is there, the root's check says `clean`, a login
//!    on the serial console with the password, the persistent timer's
//!    missed run made at boot (`clock.rs`); the target reached as in 1,
//!    and the boot compared with systemd's 3b (`disk.rs`: failed and
//!    active units, `last -x`'s records); the space freed; `poweroff`
//!    typed in that shell (Debian's systemctl reaching flotilla over
//!    D-Bus, through flotilla-busd). Then the host copies the disk's files
//!    out (debugfs) and `dpkg --verify` finds every file of every package
//!    as shipped.
//! 3. systemd (`init=/lib/systemd/systemd`), the baseline: the same prompt,
//!    sshd and login, no failed unit, its timing, Debian's `systemctl`
//!    (`status`, `show -p`, `daemon-reload`, `start` of a oneshot,
//!    `is-system-running`) timed, `hostnamectl`, `timedatectl`,
//!    `journalctl -u ssh`, and rsyslog's logrotate hook (`systemctl kill
//!    -s HUP rsyslog.service`); logind's session as in 1; Debian's
//!    systemctl verbs and `systemd-run` (their lines kept for boot 4);
//!    memory pressure (`pressure.rs`: `MemoryMax=` OOM kills, `OOMPolicy=`,
//!    the OOM scores kept for boot 4); timers and the clock (`clock.rs`:
//!    the persistent timer's missed run at boot, a jump of a day and
//!    back); the restarts of journald, logind and dbus (`life.rs`, its
//!    answers kept for boot 4); the disk filled and `systemctl reboot`,
//!    as in 1. Then systemd after that reboot ("boot 3b"), the disk
//!    still full (`disk.rs`, the answers compared with boots 1 and 2's);
//!    the space freed; `poweroff` over ssh: the one boot the reboot check
//!    adds.
//! 4. flotilla, the timing boot beside systemd's, with the same
//!    `systemctl` commands answering the same way (no wrapper on the
//!    PATH: Debian's own systemctl, over `/run/systemd/private`), the
//!    verbs' lines equal to systemd's, memory pressure as under systemd
//!    (`pressure.rs`); qemu's
//!    ACPI power button (`system_powerdown` on the monitor) powers it
//!    off; blame checked as in 1. Before that, timers and the clock as
//!    under systemd (`clock.rs`), the restarts of `life.rs`, answered as
//!    under systemd; then `apt-get install nginx-light` (the packages
//!    downloaded by the host's apt, copied in with scp): its maintainer
//!    scripts start and enable nginx through Debian's systemctl
//!    (`invoke-rc.d`, `deb-systemd-invoke`), it answers on port 80, and
//!    `apt-get remove` stops it.
//!
//! After every boot, qemu must have exited by itself (the machine powered
//! off) and the host checks the root file system of the disk: state
//! `clean`, and `e2fsck -fn` finds nothing. The boot timing from the
//! kernel's hand-over to the login prompt and to sshd answering is taken
//! the same way for both inits and printed, with `initctl analyze blame`
//! and `critical-chain` and systemd-analyze's view. scripts/test installs
//! qemu, mmdebstrap, openssh-client, e2fsprogs and the musl target; the
//! image is cached under the target directory (target/debian).
//!
//! systemd's boots (3 and 3b) are the oracle: they pass or the test
//! fails, and what they observe is the same for any flotilla. A run that
//! boots them records it (their figures, the lines compared with
//! flotilla's, the OOM scores, the full disk's answers) under the key of
//! the image's Debian root and [`HARNESS`] (`debian_support/oracle.rs`);
//! the record of today's root is kept in `oracle/`, and with it boot 4
//! follows boot 2 and is compared with the record. The timing rows of
//! systemd are then the recorded ones, from another run's load: printed
//! beside flotilla's, and no assertion compares the two inits' times
//! (docs/debian.md, "The recorded systemd side"). What the record cannot
//! hold is not checked with it: that boot 1's state is still there under
//! systemd. `DEBIAN_BOOT_SYSTEMD=1` boots systemd again and writes a new
//! record into the image cache.
//!
//! Debian 13's test (`trixie.rs`) is in this binary, so that the two run
//! at once: each boot keeps one core busy (qemu's one emulated CPU), and
//! the machine has two.

#[path = "../debian_support/mod.rs"]
mod debian_support;
#[path = "../pid1_support/mod.rs"]
mod pid1_support;
// Timers and the wall clock (issue 45): set up in boot 1, a reboot's
// catch-up checked in boots 2, 3 and 4, clock jumps in boots 3 and 4.
mod clock;
// Memory pressure (issue 45), on boots 3 and 4.
mod pressure;
// What the package manager does to a running machine (restarts of
// journald, logind, dbus), under both inits.
mod life;
// `apt-get install --reinstall systemd udev` on the running machine, under
// both inits.
mod reinstall;
// A full disk, and a reboot with it full (issue 45, items 6 and 7), under
// both inits.
mod disk;
// Debian 13's boot, run beside this one: each boot is one emulated CPU,
// qemu's, and the machine has two.
mod trixie;
mod upgrade;
// Debian's server daemons as a corpus, under both inits (issue 61).
mod corpus;

use debian_support::{
    assert_clean_poweroff, assert_degraded_by_display_manager_only, assert_systemd_settled,
    blame_ms, boot_to_login, build_image, host, machine, median,
    oracle::{Figures, Record},
    reached_ms, root_fs, rss_kib, ssh_each, Init, Machine, Timing, Vm, BOOT, PROMPT,
};
use pid1_support::report;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

/// The longest start `initctl analyze blame` may show for a unit of the
/// boot without its log being read. What it catches is a D-Bus call that
/// waits for systemd to join the bus: the client gives up after 25 s, so a
/// unit making one takes at least that, and the bound sits just under it.
/// It does not bound how long the boot's work takes: on the one emulated
/// CPU, shared with udev's coldplug, `networking.service` (`ifup -a` and
/// its hook scripts) took 12.8 s alone, 15.6 s with Debian 13's test
/// booting beside it and 25.4 s on a machine loaded by three more VMs, and
/// systemd's own `dev-nvme0n1p1.device` 17.5 s on the same disk. So a unit
/// over the bound fails the test only when its log says a call timed out.
const SLOWEST_UNIT: Duration = Duration::from_secs(24);
/// Units of the boot that Debian runs at `CPUSchedulingPolicy=idle`
/// (`IOSchedulingClass=idle` too): they get the CPU only when nothing else
/// wants it, so their start lasts as long as the rest of the boot, by
/// design; [`SLOWEST_UNIT`] does not bound them.
const IDLE_CLASS: [&str; 1] = ["e2scrub_reap.service"];

/// Every unit of `initctl analyze blame`'s output started within
/// [`SLOWEST_UNIT`], or its log (`logs` of its name) says no call timed
/// out, and none failed; the units it lists (at least `least`).
fn assert_no_slow_unit(blame: &str, least: usize, logs: impl Fn(&str) -> String) -> usize {
    let mut slow = Vec::new();
    let mut n = 0;
    for line in blame.lines().filter(|l| !l.trim().is_empty()) {
        assert!(!line.ends_with("(failed)"), "a failed start: {line}");
        let words: Vec<&str> = line.split_whitespace().collect();
        let (unit, time) = words.split_last().expect("a blame line");
        let ms = blame_ms(time).unwrap_or_else(|| panic!("blame line {line:?}"));
        if ms > SLOWEST_UNIT.as_millis() as f64 && !IDLE_CLASS.contains(unit) {
            let log = logs(unit);
            if log.to_lowercase().contains("timed out") {
                slow.push(format!("{unit} took {ms:.0} ms; its log:\n{log}"));
            } else {
                report(&format!(
                    "debian: {unit} took {ms:.0} ms (slow machine: its log names no time-out)"
                ));
            }
        }
        n += 1;
    }
    assert!(
        slow.is_empty(),
        "units slower than {SLOWEST_UNIT:?}: {slow:?}\n{blame}"
    );
    assert!(n >= least, "only {n} units in blame:\n{blame}");
    n
}

/// The last lines of `unit`'s log in the guest (`initctl logs`).
fn unit_log(vm: &Vm, m: &Machine, unit: &str) -> String {
    let out = vm.ssh(m, &format!("initctl logs {unit} -n 40"));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Debian's first-boot wizard (`ConditionFirstBoot=yes`, decided when the
/// init started: /etc/machine-id said `uninitialized` in the image) ran on the first
/// boot, finding everything configured, and is skipped on a later one.
fn assert_first_boot(json: &str, first: bool) {
    let u: serde_json::Value = serde_json::from_str(json).expect("initctl status NAME --json");
    assert_eq!(u["state"], "exited", "{json}");
    assert_eq!(u["skipped"].as_bool().unwrap_or(false), !first, "{json}");
    if !first {
        assert_eq!(
            u["status"], "skipped: ConditionFirstBoot=yes was not met",
            "{json}"
        );
    }
}

/// The state of flotilla after boot: the target running, not degraded,
/// every required unit active (`initctl status --json`); prints `initctl
/// status`. Runs `more` in the same ssh session and returns their output.
fn assert_flotilla_settled(vm: &Vm, m: &Machine, more: &[&str]) -> Vec<String> {
    // The prompt and sshd come before the target is reached (an idle-class
    // unit may still be starting), and a timer may start its service
    // after (a missed `Persistent=yes` one at its spot of the minute, up
    // to a minute after the init's start): wait for the target running
    // and nothing starting, asking the init once a second, for at most
    // three minutes.
    let mut commands = vec![
        "for i in $(seq 180); do s=$(initctl status --json | tr -d ' '); \
         echo \"$s\" | grep -q '\"target_state\":\"running\"' \
         && ! echo \"$s\" | grep -q '\"state\":\"starting\"' && break; sleep 1; done; \
         initctl status --json",
        "NO_COLOR=1 initctl status | sed '/^Problems found/,/^$/d'",
    ];
    commands.extend_from_slice(more);
    let mut out = ssh_each(vm, m, &commands);
    let rest = out.split_off(2);
    let (json, table) = (&out[0], &out[1]);
    let v: serde_json::Value = serde_json::from_str(json).expect("initctl status --json");
    let units = v["units"].as_array().expect("units");
    let failed: Vec<String> = units
        .iter()
        .filter(|u| u["state"] == "failed" || !u["blocked_by"].is_null())
        .map(|u| format!("{} ({}: {})", u["unit"], u["state"], u["status"]))
        .collect();
    assert!(failed.is_empty(), "units failed or blocked: {failed:?}");
    // Every unit the target requires is up; the rest of Debian's units on
    // the search path (rescue.target, the initrd's, …) stay disabled.
    let inactive: Vec<String> = units
        .iter()
        .filter(|u| u["required"] == true)
        .filter(|u| !["running", "exited"].contains(&u["state"].as_str().unwrap_or("")))
        .map(|u| format!("{} ({})", u["unit"], u["state"]))
        .collect();
    assert!(inactive.is_empty(), "units not active: {inactive:?}");
    // The package's init.yaml names systemd's default.target (a link
    // to graphical.target here), as systemd boots.
    assert_eq!(v["target"], "default.target");
    assert_eq!(v["target_state"], "running", "{json}");
    assert_degraded_by_display_manager_only(&v, json);
    assert!(
        units.len() >= 40,
        "only {} units: the early-boot set is missing",
        units.len()
    );
    // Debian's own units do the work, from their own files: sshd and the
    // getty the kernel's console gets (what systemd's getty generator
    // makes), the logger, cron, udev, the network, D-Bus.
    let source = |name: &str| -> String {
        let u = units
            .iter()
            .find(|u| u["unit"] == name)
            .unwrap_or_else(|| panic!("no unit {name} in initctl status"));
        assert!(
            ["running", "exited"].contains(&u["state"].as_str().unwrap_or("")),
            "{name}: {u}"
        );
        u["source"].as_str().unwrap_or("").to_string()
    };
    for (name, file) in [
        ("ssh.service", "/lib/systemd/system/ssh.service"),
        (
            "serial-getty@ttyS0.service",
            "/lib/systemd/system/serial-getty@.service",
        ),
        ("rsyslog.service", "/lib/systemd/system/rsyslog.service"),
        ("syslog.socket", "/lib/systemd/system/syslog.socket"),
        ("cron.service", "/lib/systemd/system/cron.service"),
        (
            "networking.service",
            "/lib/systemd/system/networking.service",
        ),
        (
            "systemd-udevd.service",
            "/lib/systemd/system/systemd-udevd.service",
        ),
        ("dbus.service", "/lib/systemd/system/dbus.service"),
        ("dev-mqueue.mount", "/lib/systemd/system/dev-mqueue.mount"),
        (
            "sys-kernel-config.mount",
            "/lib/systemd/system/sys-kernel-config.mount",
        ),
        ("sysinit.target", "/lib/systemd/system/sysinit.target"),
        ("multi-user.target", "/lib/systemd/system/multi-user.target"),
    ] {
        let got = source(name);
        assert!(got.contains(file), "{name} from {got:?}, not {file}");
    }
    let masked: Vec<&str> = units
        .iter()
        .filter(|u| u["masked"] == true && u["required"] == true)
        .filter_map(|u| u["unit"].as_str())
        .collect();
    assert!(masked.is_empty(), "masked units in the target: {masked:?}");
    report(&format!("debian: initctl status in the guest:\n{table}"));
    rest
}

/// logind's session of an ssh login, the same under either init: the
/// login is a session (`loginctl`) whose scope holds the login's processes
/// (`/proc/self/cgroup`: `…/session-N.scope`), the user's runtime
/// directory is a tmpfs (`user-runtime-dir@0.service`, which logind's
/// start of `user@0.service` pulls in), the user manager runs (its PAM
/// session opened by `flotilla-pam` under flotilla), and the sessions of
/// earlier logins, all ended, are gone (logind closes a session when its
/// scope's end is reported). Polls the guest for the last, at most 30 s.
fn assert_login_session(vm: &Vm, m: &Machine, init: &str) {
    let out = ssh_each(
        vm,
        m,
        &[
            "cat /proc/self/cgroup",
            "for i in $(seq 150); do [ \"$(loginctl list-sessions --no-legend | wc -l)\" = 1 ] \
             && break; sleep 0.2; done; loginctl list-sessions --no-legend",
            "echo $XDG_RUNTIME_DIR; findmnt -no FSTYPE /run/user/0; stat -c %U /run/user/0",
            "systemctl is-active user@0.service user-runtime-dir@0.service",
        ],
    );
    let scope = out[0]
        .lines()
        .find_map(|l| l.rsplit('/').next().filter(|s| s.starts_with("session-")))
        .unwrap_or_else(|| panic!("{init}: the login is in no session scope: {}", out[0]));
    let id = scope
        .trim_start_matches("session-")
        .trim_end_matches(".scope");
    let sessions: Vec<&str> = out[1].lines().collect();
    assert_eq!(
        sessions.len(),
        1,
        "{init}: the ended logins' sessions are still listed: {}",
        out[1]
    );
    let words: Vec<&str> = sessions[0].split_whitespace().collect();
    assert_eq!(
        (words.first().copied(), words.get(2).copied()),
        (Some(id), Some("root")),
        "{init}: loginctl: {}",
        out[1]
    );
    assert_eq!(
        out[2], "/run/user/0\ntmpfs\nroot\n",
        "{init}: the runtime directory"
    );
    assert_eq!(out[3], "active\nactive\n", "{init}: the user manager");
}

/// A oneshot that Debian's `systemctl` starts in [`systemctl_as_debian`].
const ONESHOT: &str = "printf '[Unit]\\nDescription=flotilla test oneshot\\n[Service]\\n\
     Type=oneshot\\nExecStart=/bin/sh -c \"echo ran > /run/flotilla-oneshot; \
     echo flotilla-oneshot-said-hello; echo flotilla-oneshot-stream=$${JOURNAL_STREAM:+set}\"\\n' \
     > /etc/systemd/system/flotilla-oneshot.service";

/// The oneshot's line in the journal (its standard output, systemd's
/// default `StandardOutput=journal`), as journald recorded it: the fields
/// that say whose it is. Polled: journald reads the stream on its own.
const ONESHOT_JOURNAL: &str = "for i in $(seq 100); do \
     journalctl -b -u flotilla-oneshot.service -o verbose --no-pager 2>/dev/null \
     | grep -q 'MESSAGE=flotilla-oneshot-stream=' && break; sleep 0.1; done; \
     journalctl -b -u flotilla-oneshot.service MESSAGE=flotilla-oneshot-said-hello -o verbose \
     --no-pager | grep -E '^ *(MESSAGE=flotilla-oneshot|_SYSTEMD_UNIT=|SYSLOG_IDENTIFIER=|_TRANSPORT=)' \
     | sed 's/^ *//' | LC_ALL=C sort -u; \
     journalctl -b -u flotilla-oneshot.service -o cat --no-pager | grep -x 'flotilla-oneshot-stream=.*'";

/// What a sysadmin types, with Debian's own `/bin/systemctl` (no wrapper
/// on the PATH: under flotilla it goes over `/run/systemd/private` to
/// flotilla-busd): `status ssh` (exit 0, active), `show -p`, a new
/// oneshot's file read by `daemon-reload` and run by `start`,
/// `is-system-running`, `hostnamectl` and `timedatectl` (their daemons
/// started by D-Bus activation through the manager), and sshd's logins in
/// `journalctl -u ssh` and in rsyslog's `/var/log/auth.log`. The same assertions hold under either init; the
/// times of `systemctl status ssh` (median of five) and of the oneshot's
/// `systemctl start`, in ms.
fn systemctl_as_debian(vm: &Vm, m: &Machine) -> (u64, u64) {
    let out = ssh_each(
        vm,
        m,
        &[
            "readlink -f \"$(command -v systemctl)\"",
            "systemctl status ssh --no-pager; echo \"exit $?\"",
            "systemctl show -p MainPID -p ActiveState ssh",
            &format!(
                "{ONESHOT} && systemctl daemon-reload && \
                 for i in 1 2 3 4 5; do a=$(date +%s%N); systemctl status ssh --no-pager \
                 >/dev/null; b=$(date +%s%N); echo $(( (b - a) / 1000000 )); done | sort -n \
                 | sed -n 3p; a=$(date +%s%N); systemctl start flotilla-oneshot.service; \
                 echo \"exit $?\"; b=$(date +%s%N); echo $(( (b - a) / 1000000 )); \
                 cat /run/flotilla-oneshot; rm /etc/systemd/system/flotilla-oneshot.service; \
                 systemctl daemon-reload"
            ),
            ONESHOT_JOURNAL,
            "systemctl is-system-running",
            // Their daemons are D-Bus-activated through the manager.
            "hostnamectl status; echo \"exit $?\"",
            "timedatectl status; echo \"exit $?\"",
            // sshd logs through syslog(3): journald (from /dev/log, the
            // unit found by the process's cgroup), then rsyslog.
            "journalctl -u ssh --no-pager | grep -c 'Accepted publickey for root'; \
             grep -c 'Accepted publickey for root' /var/log/auth.log",
            // What logrotate runs for rsyslog: `systemctl kill -s HUP
            // rsyslog.service`, which must reach rsyslogd and leave it up.
            "p=$(systemctl show -p MainPID --value rsyslog); \
             /usr/lib/rsyslog/rsyslog-rotate; echo \"exit $?\"; \
             systemctl is-active rsyslog; \
             test \"$(systemctl show -p MainPID --value rsyslog)\" = \"$p\" && echo same-pid",
            // The manager's own messages about units (PID 1's, with their
            // `UNIT=`), which `journalctl -u` and `systemctl status` show.
            "journalctl -b -u ssh.service -o cat --no-pager \
             | grep -qx 'Started ssh.service - OpenBSD Secure Shell server[.]' && echo started; \
             journalctl -b -u flotilla-oneshot.service -o cat --no-pager | grep -x \
             -e 'Starting flotilla-oneshot.service - flotilla test oneshot[.][.][.]' \
             -e 'flotilla-oneshot.service: Deactivated successfully[.]' \
             -e 'Finished flotilla-oneshot.service - flotilla test oneshot[.]'; \
             journalctl -b -u flotilla-oneshot.service MESSAGE_ID=39f53479d3a045ac8e11786248231fbf \
             -o verbose --no-pager | grep -x -e ' *_PID=1' -e ' *JOB_RESULT=done' \
             | sed 's/^ *//' | LC_ALL=C sort -u",
        ],
    );
    let init = vm.init.name();
    assert!(
        out[0].trim().ends_with("/bin/systemctl") && !out[0].contains("/local/"),
        "{init}: systemctl is {:?}, not Debian's",
        out[0]
    );
    assert!(
        out[1].contains("Active: active (running)") && out[1].trim_end().ends_with("exit 0"),
        "{init}: systemctl status ssh:\n{}",
        out[1]
    );
    let show: Vec<&str> = out[2].lines().collect();
    let pid = show
        .iter()
        .find_map(|l| l.strip_prefix("MainPID="))
        .and_then(|p| p.parse::<u32>().ok());
    assert!(
        pid.is_some_and(|p| p > 1) && show.contains(&"ActiveState=active"),
        "{init}: systemctl show -p MainPID -p ActiveState ssh: {:?}",
        out[2]
    );
    let lines: Vec<&str> = out[3].lines().collect();
    assert!(
        lines.len() == 4 && lines[1] == "exit 0" && lines[3] == "ran",
        "{init}: the oneshot's daemon-reload and start: {:?}",
        out[3]
    );
    assert_eq!(
        out[4].lines().collect::<Vec<_>>(),
        [
            "MESSAGE=flotilla-oneshot-said-hello",
            "SYSLOG_IDENTIFIER=sh",
            "_SYSTEMD_UNIT=flotilla-oneshot.service",
            "_TRANSPORT=stdout",
            // JOURNAL_STREAM was set: the program knew its output is on
            // the journal.
            "flotilla-oneshot-stream=set",
        ],
        "{init}: the oneshot's output in the journal"
    );
    assert_eq!(out[5].trim(), "running", "{init}: is-system-running");
    assert!(
        out[6].contains("Static hostname: flotilla-debian")
            && out[6].trim_end().ends_with("exit 0"),
        "{init}: hostnamectl:\n{}",
        out[6]
    );
    assert!(
        out[7].contains("Time zone: ") && out[7].trim_end().ends_with("exit 0"),
        "{init}: timedatectl:\n{}",
        out[7]
    );
    let logged: Vec<u32> = out[8]
        .lines()
        .map(|l| l.trim().parse().unwrap_or(0))
        .collect();
    assert!(
        logged.len() == 2 && logged.iter().all(|n| *n >= 1),
        "{init}: sshd's logins in journalctl -u ssh and in /var/log/auth.log: {:?}",
        out[8]
    );
    assert_eq!(
        out[9].lines().collect::<Vec<_>>(),
        ["exit 0", "active", "same-pid"],
        "{init}: rsyslog-rotate (systemctl kill -s HUP rsyslog.service)"
    );
    let manager: Vec<&str> = out[10].lines().map(str::trim).collect();
    assert_eq!(
        manager,
        [
            "started",
            "Starting flotilla-oneshot.service - flotilla test oneshot...",
            "flotilla-oneshot.service: Deactivated successfully.",
            "Finished flotilla-oneshot.service - flotilla test oneshot.",
            "JOB_RESULT=done",
            "_PID=1",
        ],
        "{init}: the manager's messages about ssh.service and the oneshot in the journal"
    );
    let ms = |s: &str| s.parse::<u64>().unwrap_or_else(|_| panic!("a time: {s:?}"));
    (ms(lines[0]), ms(lines[2]))
}

/// A unit of the test's with an `[Install]` section, for `enable --now`
/// and `disable --now`.
const VERB_UNIT: &str = "printf '[Unit]\\nDescription=flotilla verb test\\n[Service]\\n\
     ExecStart=/bin/sleep 1000\\n[Install]\\nWantedBy=multi-user.target\\n' \
     > /etc/systemd/system/flotilla-verb.service && systemctl daemon-reload";

/// Debian's `/bin/systemctl` verbs a sysadmin types, each with its exit
/// status, their output made comparable across boots (no PIDs, times or
/// sizes): the same lines must come under systemd and under flotilla on
/// the same image. Leaves the machine as it found it.
fn systemctl_verbs(vm: &Vm, m: &Machine) -> Vec<String> {
    // `mask` of a unit that is not running: systemd's mask leaves a
    // running unit running, flotilla's takes it out of the graph at the
    // reload.
    let verbs = [
        "systemctl stop cron; echo rc=$?; systemctl is-active cron; echo rc=$?",
        "systemctl start cron; echo rc=$?; systemctl is-active cron; echo rc=$?",
        "systemctl restart cron; echo rc=$?; systemctl is-active cron",
        "systemctl reload ssh; echo rc=$?; systemctl is-active ssh",
        "systemctl is-enabled ssh cron; echo rc=$?",
        "systemctl is-failed ssh; echo rc=$?",
        "systemctl is-active nothere.service; echo rc=$?",
        "systemctl status nothere.service 2>&1; echo rc=$?",
        "systemctl cat cron.service > /tmp/cat; echo rc=$?; head -n 1 /tmp/cat",
        "systemctl show -p Id -p LoadState -p ActiveState -p SubState -p Type \
         -p FragmentPath cron",
        "systemctl list-units --no-legend --plain cron.service ssh.service \
         | awk '{print $1, $2, $3, $4}'; echo rc=$?",
        "systemctl list-unit-files --no-legend cron.service ssh.service \
         | awk '{print $1, $2}'; echo rc=$?",
        "systemctl list-timers --all --no-legend | awk '{print $(NF-1), $NF}' | sort; echo rc=$?",
        VERB_UNIT,
        "systemctl enable --now flotilla-verb.service 2>&1; echo rc=$?; \
         systemctl is-active flotilla-verb; systemctl is-enabled flotilla-verb",
        "systemctl disable --now flotilla-verb.service 2>&1; echo rc=$?; \
         systemctl is-active flotilla-verb; systemctl is-enabled flotilla-verb",
        // Its file is where the mask would go: refused, naming it.
        "systemctl mask flotilla-verb.service 2>&1; echo rc=$?",
        "systemctl mask systemd-tmpfiles-clean.service 2>&1; echo rc=$?; \
         systemctl is-enabled systemd-tmpfiles-clean.service; echo rc=$?; \
         systemctl start systemd-tmpfiles-clean.service 2>&1; echo rc=$?",
        "systemctl unmask systemd-tmpfiles-clean.service 2>&1; echo rc=$?; \
         systemctl is-enabled systemd-tmpfiles-clean.service; echo rc=$?",
        "rm /etc/systemd/system/flotilla-verb.service; systemctl daemon-reload; echo rc=$?",
        "systemctl isolate multi-user.target; echo rc=$?; systemctl is-active ssh cron",
        "systemd-run --unit flotilla-run /bin/sleep 300 2>&1; echo rc=$?; \
         systemctl is-active flotilla-run; systemctl stop flotilla-run; echo rc=$?",
        "systemd-run --scope /bin/sh -c 'grep -c \"/run-.*\\.scope$\" /proc/self/cgroup' 2>&1 \
         | sed 's/run-[a-z0-9]*\\.scope/run-N.scope/'; echo rc=$?",
    ];
    let out = ssh_each(vm, m, &verbs);
    verbs
        .iter()
        .zip(out)
        .map(|(v, o)| format!("$ {v}\n{o}"))
        .collect()
}

/// nginx-light and what the image lacks of its dependencies, as Debian's
/// archive has them today, downloaded by the host's apt (the guest has no
/// package lists to resolve them from).
const NGINX: [&str; 4] = [
    "nginx-light",
    "nginx",
    "nginx-common",
    "libnginx-mod-http-echo",
];

/// The packages of [`NGINX`] in `dir`, downloaded by the host's apt.
fn download_nginx(dir: &std::path::Path) -> Vec<PathBuf> {
    std::fs::create_dir_all(dir).expect("mkdir debs");
    let (ok, out) = host(
        Command::new("apt-get")
            .arg("download")
            .args(NGINX)
            .current_dir(dir),
    );
    assert!(ok, "apt-get download {NGINX:?}: {out}");
    let mut debs: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("read debs")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "deb"))
        .collect();
    debs.sort();
    assert_eq!(debs.len(), NGINX.len(), "{debs:?}");
    debs
}

/// `apt-get install nginx-light` in the guest: the maintainer scripts
/// (nginx's `invoke-rc.d nginx start`, nginx-common's `deb-systemd-helper
/// enable` and `deb-systemd-invoke`) start and enable it through Debian's
/// systemctl, and it answers on port 80; `apt-get remove` stops it. The
/// install's time in ms.
fn apt_installs_and_removes_nginx(vm: &Vm, m: &Machine, debs: &[PathBuf]) -> u64 {
    vm.copy_in(m, debs, "/root/debs");
    let out = ssh_each(
        vm,
        m,
        &[
            "a=$(date +%s%N); DEBIAN_FRONTEND=noninteractive apt-get install -y \
             --no-install-recommends /root/debs/*.deb > /root/apt.log 2>&1; s=$?; \
             b=$(date +%s%N); echo \"exit $s\"; echo $(( (b - a) / 1000000 )); \
             grep -i 'runlevel\\|failed\\|error' /root/apt.log; true",
            "systemctl is-active nginx; systemctl is-enabled nginx; true",
            "(exec 3<>/dev/tcp/127.0.0.1/80 && printf 'GET / HTTP/1.0\\r\\n\\r\\n' >&3 && \
             head -n 1 <&3); true",
            "DEBIAN_FRONTEND=noninteractive apt-get remove -y nginx-light nginx \
             > /root/apt-remove.log 2>&1; echo \"exit $?\"; systemctl is-active nginx; \
             pgrep -x nginx || echo no-nginx; true",
        ],
    );
    let init = vm.init.name();
    let install: Vec<&str> = out[0].lines().collect();
    assert!(
        install.first() == Some(&"exit 0") && install.len() == 2,
        "{init}: apt-get install nginx-light: {:?}\n{}",
        out[0],
        vm.ssh(m, "cat /root/apt.log").stdout.escape_ascii()
    );
    assert_eq!(
        out[1].lines().collect::<Vec<_>>(),
        ["active", "enabled"],
        "{init}: systemctl is-active/is-enabled nginx after the install"
    );
    assert!(
        out[2].starts_with("HTTP/1.1 200 OK"),
        "{init}: nginx on port 80: {:?}",
        out[2]
    );
    let removed: Vec<&str> = out[3].lines().collect();
    assert_eq!(
        removed,
        ["exit 0", "inactive", "no-nginx"],
        "{init}: apt-get remove nginx-light nginx: {}",
        vm.ssh(m, "cat /root/apt-remove.log").stdout.escape_ascii()
    );
    install[1].parse().expect("the install's time")
}

/// Installing flotilla and booting it changed no file of a Debian package:
/// the disk's files, copied out with debugfs once qemu has exited, checked
/// by the host's `dpkg --root DIR --verify` against the image's package
/// database (the same check in the emulated machine takes half a minute).
fn assert_packages_intact(m: &Machine) {
    let tree = m.dir.join("tree");
    std::fs::create_dir(&tree).expect("mkdir tree");
    let (ok, text) = host(
        Command::new("debugfs")
            .arg("-R")
            .arg(format!("rdump / {}", tree.display()))
            .arg(root_fs(&m.disk)),
    );
    assert!(ok, "debugfs rdump: {text}");
    let (ok, text) = host(
        Command::new("dpkg")
            .arg("--root")
            .arg(&tree)
            .arg("--verify"),
    );
    assert!(ok && text.trim().is_empty(), "dpkg --verify: {text}");
    std::fs::remove_dir_all(&tree).expect("remove the copy");
}

/// The version of what systemd's boots 3 and 3b observe: part of the
/// key of their record, raised when they change what they check or
/// measure (or when flotilla's boots 1 and 2 change what they leave on
/// the disk for them).
const HARNESS: u32 = 1;

/// systemd's side of the comparison (boots 3 and 3b), as its record
/// keeps it: what flotilla's boot 4 is compared with.
#[derive(serde::Serialize, serde::Deserialize)]
struct Baseline {
    /// Boot 3's figures.
    boot: Figures,
    /// `systemd-analyze time`, `blame` and `critical-chain` of boot 3.
    view: String,
    /// The OOM score adjustments (`pressure.rs`).
    scores: String,
    /// [`systemctl_as_debian`]'s times, ms.
    ctl: (u64, u64),
    /// [`systemctl_verbs`]' lines.
    verbs: Vec<String>,
    life: life::Life,
    reinstall: reinstall::Reinstall,
    /// The full disk (boot 3) and the boot after its reboot (3b).
    full: disk::Full,
    back: disk::Back,
    /// Boot 3b's seconds of qemu.
    added: f64,
}

/// The record of boots 3 and 3b kept in `oracle/` is read for its Debian
/// root as this harness's: checked without a VM (scripts/test runs it in
/// both of its runs of this binary, as every test but the two boots).
#[test]
fn the_kept_record_of_systemds_boots_is_read() {
    let bases = Record::check_kept::<Baseline>("debian_boot", "debian-boot-bookworm", HARNESS);
    assert!(!bases.is_empty(), "no record of harness {HARNESS} kept");
}

/// Boots 3 and 3b: systemd on the disk flotilla's boots 1 and 2 left
/// (`token`: the state boot 1 wrote), every check of the module doc's
/// third item; what flotilla's are compared with.
fn systemd_boots(m: &Machine, token: &str) -> Baseline {
    let mut vm = Vm::boot(m, Init::Systemd);
    let sd = boot_to_login(&vm, "same disk");
    let sd_out = ssh_each(
        &vm,
        m,
        &[
            "systemctl is-system-running --wait; true",
            "systemctl --failed --no-legend --plain",
            "cat /root/flotilla-state",
            "systemd-analyze time; systemd-analyze blame | head -n 12; \
             systemd-analyze critical-chain",
            "grep VmRSS /proc/1/status",
        ],
    );
    let boot = Figures::of(
        &sd,
        reached_ms(&sd_out[3], "multi-user.target"),
        rss_kib(&sd_out[4]),
    );
    assert_systemd_settled(&sd_out[0], &sd_out[1]);
    assert!(
        sd_out[2].contains(token),
        "the state written under flotilla is gone under systemd"
    );
    assert_login_session(&vm, m, "systemd");
    let scores = pressure::check(&vm, m, None);
    let ctl = systemctl_as_debian(&vm, m);
    let verbs = systemctl_verbs(&vm, m);
    // Before the restarts: flotilla's answers after dbus's restart are
    // slow (a known difference, `life.rs`), and each check is by itself.
    clock::check(&vm, m);
    let life = life::check(&vm, m);
    let reinstall = reinstall::check(&vm, m);
    let full = disk::fill(&vm, m);
    disk::reboot(&mut vm, m);
    drop(vm);

    // 3b. systemd after its reboot on the full disk: the boot the reboot
    // check adds (flotilla's reboot leads into boot 2).
    let mut vm = Vm::boot(m, Init::Systemd);
    boot_to_login(&vm, "after its reboot");
    let back = disk::after_reboot(&vm, m);
    let out = vm.ssh(m, "poweroff");
    assert!(
        matches!(out.status.code(), Some(0) | Some(255)),
        "poweroff: {out:?}"
    );
    assert_clean_poweroff(&mut vm, m, "poweroff under systemd");
    let added = vm.started.elapsed().as_secs_f64();
    drop(vm);
    Baseline {
        boot,
        view: sd_out[3].clone(),
        scores,
        ctl,
        verbs,
        life,
        reinstall,
        full,
        back,
        added,
    }
}

// scripts/test runs this binary beside the rest of the suite and skips
// this test by its name in the rest: a new name goes there too.
#[test]
fn debian_boots_with_flotilla_as_pid1_and_with_systemd() {
    let image = build_image("bookworm");
    let dir = tempfile::Builder::new()
        .prefix("flotilla-debian-")
        .tempdir()
        .expect("tempdir");
    let m = machine(image.clone(), dir.path());
    let debs = download_nginx(&dir.path().join("debs"));
    let token = format!("state-{}", m.password);
    let mut timings = Vec::new();

    // 1. flotilla, first boot.
    let mut vm = Vm::boot(&m, Init::Flotilla);
    let first = boot_to_login(&vm, "first boot");
    vm.console.wait("as PID 1 on a machine", BOOT);
    // The early-boot units did their work; flotilla's files are no
    // package's but flotilla's own (one dpkg -S for all); sshd's
    // login reached rsyslog; a state for the next boot.
    let facts = assert_flotilla_settled(
        &vm,
        &m,
        &[
            "findmnt -no OPTIONS /; findmnt -no FSTYPE /tmp; findmnt -no FSTYPE /sys/fs/cgroup; \
             swapon --noheadings --show=NAME; ip -4 -o addr show dev eth0; cat /etc/machine-id; \
             hostname; stat -c %F /run/initctl; sysctl -n kernel.pid_max; \
             test -s /var/lib/systemd/random-seed && echo seed-saved; stat -c %G /run/utmp; \
             test -e /run/nologin || echo no-nologin; \
             for m in /dev/mqueue /dev/hugepages /sys/kernel/debug /sys/kernel/tracing \
             /sys/kernel/config /sys/fs/fuse/connections; do findmnt -no FSTYPE $m; done \
             | paste -sd ' '",
            "dpkg -S /sbin/flotilla /usr/local/bin/initctl \
             $(find /etc/init /usr/local/lib/flotilla -type f -o -type l) 2>&1; true",
            "grep -c 'Accepted publickey for root' /var/log/auth.log",
            &format!("echo {token} > /root/flotilla-state && sync"),
            "NO_COLOR=1 initctl analyze blame",
            "initctl status systemd-firstboot.service --json",
            "initctl status ifup@eth0.service --json",
            "NO_COLOR=1 initctl analyze critical-chain multi-user.target",
            "grep VmRSS /proc/1/status",
        ],
    );
    let first_sample = (
        reached_ms(&facts[7], "multi-user.target"),
        rss_kib(&facts[8]),
    );
    // udev's hotplug helper saw /run/systemd/system (flotilla-busd's) and
    // asked for ifup@eth0.service with Debian's systemctl, as under
    // systemd: the interface was brought up by a unit of its own.
    let ifup: serde_json::Value =
        serde_json::from_str(&facts[6]).expect("initctl status ifup@eth0.service --json");
    assert_eq!(ifup["state"], "exited", "ifup@eth0.service: {}", facts[6]);
    let lines: Vec<&str> = facts[0].lines().collect();
    let expect = [
        ("root mount options", "rw,"),
        ("/tmp", "tmpfs"),
        ("/sys/fs/cgroup", "cgroup2"),
        ("swap", "/dev/nvme0n2"),
        ("eth0", "inet 10.0.2.15/24"),
        ("machine ID", ""),
        ("host name", "flotilla-debian"),
        ("/run/initctl", "fifo"),
        // systemd's 50-pid-max.conf, applied by systemd-sysctl.
        ("kernel.pid_max", "4194304"),
        // systemd-random-seed saved a new seed after loading.
        ("random seed", "seed-saved"),
        // systemd-tmpfiles made /run/utmp for the utmp group.
        ("/run/utmp group", "utmp"),
        // systemd-user-sessions removed it.
        ("/run/nologin", "no-nologin"),
        // Debian's .mount units, by mount(8).
        (
            "kernel file systems",
            "mqueue hugetlbfs debugfs tracefs configfs fusectl",
        ),
    ];
    assert_eq!(lines.len(), expect.len(), "{}", facts[0]);
    for ((what, want), got) in expect.iter().zip(&lines) {
        assert!(got.contains(want), "{what}: {got:?} (want {want:?})");
    }
    let id = lines[5];
    assert!(
        id.len() == 32 && id.chars().all(|c| c.is_ascii_hexdigit()),
        "machine ID {id:?}"
    );
    let owned: Vec<&str> = facts[1]
        .lines()
        .filter(|l| !l.starts_with("dpkg-query: no path found matching pattern"))
        // The flotilla package's own (contrib/debian/package).
        .filter(|l| !l.starts_with("flotilla: "))
        .collect();
    assert!(
        owned.is_empty(),
        "flotilla's files owned by packages: {owned:?}"
    );
    assert!(
        facts[1].lines().count() >= 20,
        "too few files checked: {}",
        facts[1]
    );
    assert_eq!(
        facts[2].trim(),
        "1",
        "sshd's login is not in /var/log/auth.log"
    );
    assert_no_slow_unit(&facts[4], 40, |u| unit_log(&vm, &m, u));
    assert_first_boot(&facts[5], true);
    assert_login_session(&vm, &m, "flotilla");
    // `systemctl daemon-reexec` from a login, as the systemd package's
    // upgrade runs it (the login's scope is the last part of its cgroup,
    // `/user.slice/user-0.slice/session-N.scope`): the init carries that login's scope across its
    // `execve`, so the scope still ends with the login and logind closes the
    // session (the next login finds one session only).
    assert_eq!(
        vm.ssh_ok(&m, "systemctl daemon-reexec && systemctl is-active \"$(basename \"$(tail -n1 /proc/self/cgroup)\")\""),
        "active\n",
        "the login's scope after daemon-reexec"
    );
    assert_login_session(&vm, &m, "flotilla after daemon-reexec");
    upgrade::upgrade_in_place(&vm, &m, dir.path());
    clock::install(&vm, &m);
    // The disk filled, and `systemctl reboot` with it full: boot 2 is
    // the boot after it (`disk.rs`).
    let fl_full = disk::fill(&vm, &m);
    disk::reboot(&mut vm, &m);
    drop(vm);
    timings.push(first);

    // 2. flotilla again: the state kept, a login on the console, `poweroff`.
    let mut vm = Vm::boot(&m, Init::Flotilla);
    let (prompt_line, _) = vm.console.wait_from(0, PROMPT, BOOT);
    vm.type_in("root\n");
    vm.console.wait_from(prompt_line, "Password:", BOOT);
    vm.type_in(&format!("{}\n", m.password));
    let (shell, _) = vm
        .console
        .wait_from(prompt_line, "root@flotilla-debian:~#", BOOT);
    // The root's check (systemd-fsck in the fsck-root unit) found it clean.
    vm.type_in(
        "echo \"kept: $(cat /root/flotilla-state) fsck-clean: \
         $({ initctl logs systemd-fsck-root.service; journalctl -b -o cat \
         -u systemd-fsck-root.service; } | grep -c ': clean,')\"\n",
    );
    // The count is asserted once the run's comparisons are made (this
    // boot has the disk full).
    let kept = format!("kept: {token} fsck-clean: ");
    vm.console.wait_from(shell, &kept, BOOT);
    // The line complete (its newline read).
    let fsck_line = pid1_support::wait_for(Duration::from_secs(30), "the line's end", || {
        vm.console
            .all()
            .into_iter()
            .rev()
            .find(|l| l.contains(&kept))
    });
    // The persistent timer whose stamp boot 1 set two days back ran at
    // this boot (`clock.rs`; `disk.rs` gave its log room on the full
    // disk); its stamp set back again for boot 3.
    vm.type_in(&format!("{}\n", clock::PERSIST_RAN));
    vm.console.wait_from(shell, clock::CONSOLE_RAN, BOOT);
    // The boot after the reboot on the full disk reached the target; the
    // space freed.
    vm.wait_sshd(BOOT);
    assert_flotilla_settled(&vm, &m, &[]);
    let fl_back = disk::after_reboot(&vm, &m);
    vm.type_in("poweroff\n");
    assert_clean_poweroff(&mut vm, &m, "poweroff in a console shell");
    drop(vm);
    assert_packages_intact(&m);

    // 3 and 3b. systemd, the baseline: booted, or read from its record.
    let record = Record::of(&image, "debian_boot", "debian-boot-bookworm", HARNESS);
    let (sd, booted) = match record.read::<Baseline>(trixie::FRESH) {
        Some(sd) => (sd, false),
        None => {
            let sd = systemd_boots(&m, &token);
            record.write(&sd);
            (sd, true)
        }
    };
    let sd_source = if booted {
        format!("booted in this run, recorded in {}", record.cache.display())
    } else {
        format!("from its record, {}", record.name())
    };
    report(&format!(
        "debian: systemd's boots 3 and 3b: {sd_source}; its view of its boot 3:\n{}",
        sd.view
    ));
    timings.push(
        sd.boot
            .timing(if booted { "same disk" } else { "recorded" }),
    );
    let sd_sample = (sd.boot.multi_user_ms, sd.boot.rss_kib);
    let (sd_full, sd_back, added) = (&sd.full, &sd.back, sd.added);
    report(&format!(
        "debian: the full disk (issue 45, item 6): systemd {:.1} s, flotilla {:.1} s; free blocks \
         and ext4's reserve after the fill: systemd {}, flotilla {}; its answers (flotilla): {:?}; `initctl logs` of its service:\n{}\nafter the reboot (item 7), free blocks \
         at the check: systemd {}, flotilla {}; answers: systemd {:?}, flotilla {:?}; systemd's \
         boot after its reboot (3b) took {added:.1} s of qemu",
        sd_full.took,
        fl_full.took,
        sd_full.fill,
        fl_full.fill,
        fl_full.lines,
        fl_full.logd,
        sd_back.free,
        fl_back.free,
        sd_back.lines,
        fl_back.lines,
    ));
    disk::compare((sd_full, sd_back), (&fl_full, &fl_back));
    assert!(
        fsck_line.trim_end().ends_with("fsck-clean: 1"),
        "boot 2, the root's check: {fsck_line:?}"
    );

    // 4. flotilla, the timing boot; the ACPI power button ends it.
    let mut vm = Vm::boot(&m, Init::Flotilla);
    let fl = boot_to_login(&vm, "same disk");
    let more = assert_flotilla_settled(
        &vm,
        &m,
        &[
            "NO_COLOR=1 initctl analyze blame",
            "NO_COLOR=1 initctl analyze critical-chain",
            // The button's input device, which acpid reads (udev loaded
            // the `button` module in the coldplug).
            "cat /sys/class/input/input*/name",
            "initctl status systemd-firstboot.service --json",
            "grep VmRSS /proc/1/status",
        ],
    );
    let fl_sample = (reached_ms(&more[1], "multi-user.target"), rss_kib(&more[4]));
    let (blame, chain) = (&more[0], &more[1]);
    assert!(blame.contains("ssh.service"), "{blame}");
    assert_no_slow_unit(blame, 40, |u| unit_log(&vm, &m, u));
    assert!(chain.starts_with("The time when"), "{chain}");
    assert!(
        more[2].contains("Power Button"),
        "no power button: {}",
        more[2]
    );
    assert_first_boot(&more[3], false);
    pressure::check(&vm, &m, Some(&sd.scores));
    let fl_ctl = systemctl_as_debian(&vm, &m);
    // The same verbs, the same lines as under systemd on this disk.
    let fl_verbs = systemctl_verbs(&vm, &m);
    for (sd, fl) in sd.verbs.iter().zip(&fl_verbs) {
        assert_eq!(
            fl, sd,
            "Debian's systemctl under flotilla and under systemd"
        );
    }
    report(&format!(
        "debian: Debian's systemctl verbs, the same under both inits:\n{}",
        fl_verbs.join("\n")
    ));
    clock::check(&vm, &m);
    let fl_life = life::check(&vm, &m);
    let fl_reinstall = reinstall::check(&vm, &m);
    let nginx_ms = apt_installs_and_removes_nginx(&vm, &m, &debs);
    assert_eq!(
        fl_life.lines, sd.life.lines,
        "the restarts' answers under flotilla and under systemd (journald, logind, dbus)"
    );
    report(&format!(
        "debian: the restarts' checks (journald, logind, dbus) took {:.1} s under systemd, {:.1} s under flotilla; answering \
         again after `systemctl restart dbus` (is-system-running, loginctl, hostnamectl), ms: \
         systemd {:?}, flotilla {:?}",
        sd.life.took.as_secs_f64(),
        fl_life.took.as_secs_f64(),
        sd.life.answered_ms,
        fl_life.answered_ms,
    ));
    assert_eq!(
        fl_reinstall.lines, sd.reinstall.lines,
        "apt-get install --reinstall systemd udev: the answers under flotilla and under systemd"
    );
    report(&format!(
        "debian: apt-get install --reinstall systemd udev (issue 45, item 3): the check took \
         {:.1} s under systemd, {:.1} s under flotilla (apt-get: {} ms, {} ms); its answers:\n{}",
        sd.reinstall.took.as_secs_f64(),
        fl_reinstall.took.as_secs_f64(),
        sd.reinstall.apt_ms,
        fl_reinstall.apt_ms,
        fl_reinstall.lines.join("\n"),
    ));
    report(&format!(
        "debian: flotilla's view of its boot:\n{blame}{chain}"
    ));
    vm.monitor("system_powerdown");
    assert_clean_poweroff(&mut vm, &m, "the ACPI power button");
    drop(vm);
    timings.insert(1, fl);

    let mut table = String::from(
        "debian: boot timing, software-emulated qemu (1 vCPU, 512 MiB), from qemu's start to the \
         kernel's hand-over (`Run INIT as init process`), then from the hand-over to:\n  \
         init                       hand-over  login prompt  sshd answers\n",
    );
    for t in &timings {
        table.push_str(&t.line());
        table.push('\n');
    }
    report(&table);
    // timings: flotilla's first boot, its timing boot, systemd's.
    let row = |name: &str, t: &[&Timing], s: &[(f64, u64)]| {
        let med = |f: &dyn Fn(usize) -> f64| median((0..t.len()).map(f).collect());
        format!(
            "  {name:<10}{:>10.2} s{:>10.2} s{:>14.2} s{:>10.0} KiB\n",
            med(&|i| (t[i].prompt - t[i].handover).as_secs_f64()),
            med(&|i| (t[i].sshd - t[i].handover).as_secs_f64()),
            med(&|i| s[i].0 / 1000.0),
            med(&|i| s[i].1 as f64),
        )
    };
    report(&format!(
        "debian: medians (flotilla: its first and its timing boot; systemd: its boot; prompt \
         and ssh from the hand-over; multi-user.target from PID 1's start, as its analyze \
         says; PID 1's VmRSS with the target reached):\n  init          prompt       ssh  \
         multi-user.target    PID 1 RSS\n{}{}",
        row(
            "flotilla",
            &[&timings[0], &timings[1]],
            &[first_sample, fl_sample]
        ),
        row("systemd", &[&timings[2]], &[sd_sample])
    ));
    report(&format!(
        "debian: Debian's /bin/systemctl in the guest, ms: `systemctl status ssh` (median of 5) \
         systemd {} flotilla {}; `systemctl start` of a oneshot: systemd {} flotilla {}",
        sd.ctl.0, fl_ctl.0, sd.ctl.1, fl_ctl.1
    ));
    report(&format!(
        "debian: flotilla: apt-get install nginx-light (4 packages) to nginx started and \
         enabled by its maintainer scripts: {nginx_ms} ms"
    ));
}
