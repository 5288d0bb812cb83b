//! Time in Debian 12 under both inits (issue 45, item 4), on boots the
//! test makes anyway: [`install`] at the end of boot 1 (flotilla),
//! [`PERSIST_RAN`] typed in boot 2's shell (flotilla), [`check`] in boot 3
//! (systemd) and boot 4 (flotilla).
//!
//! - **A missed `Persistent=yes` timer runs at boot.** `clock-persist.timer`
//!   (`OnCalendar=daily`, `Persistent=yes`, enabled) is installed in boot
//!   1; before each poweroff its stamp, `/var/lib/systemd/timers/stamp-
//!   clock-persist.timer` (systemd's, which flotilla keeps too), is set
//!   two days back: the machine "was off" over a midnight. The next boot
//!   runs it once, early, whichever init boots: boot 2 (flotilla after
//!   flotilla), 3 (systemd after flotilla), 4 (flotilla after systemd).
//!   The clock itself is never moved across a poweroff, so the host's
//!   `e2fsck -fn` finds no superblock time in the future.
//! - **A jump of the wall clock by a day** (`date -s '+1 day'`) runs each
//!   daily timer once: the test's `clock-daily.timer` (`OnCalendar=daily`,
//!   no delay) and Debian's `dpkg-db-backup.timer` (the same) run at once
//!   and wait for the next midnight; `clock-change.timer`
//!   (`OnClockChange=yes`) runs once. Debian's `apt-daily.timer`
//!   (`RandomizedDelaySec=12h`) and `apt-daily-upgrade.timer` (`60m`)
//!   missed their elapse too, and both inits move a missed elapse to the
//!   init's start (on the wall clock as it reads now) plus the random
//!   delay: each either ran at the jump or waits within its delay of the
//!   boot's start. More cannot be asserted: which, is the draw's.
//! - **The clock put back** (`date -s '-1 day'`, before the poweroff):
//!   `clock-change.timer` runs again, and `clock-daily.timer`, whose last
//!   trigger is now in the future, counts it as now and waits for the
//!   coming midnight (not the one after).
//!
//! Under the same assertions for both inits; the lists of
//! `systemctl list-timers --all` before and after the jump are printed.

use super::debian_support::{ssh_each, Machine, Vm};
use super::pid1_support::report;
use std::collections::HashMap;
use std::time::Instant;

/// The test's directory in the guest and its logger: `log NAME` appends
/// `BOOT-ID UPTIME WALL-SECONDS` to `NAME` there.
const LOGGER: &str = "mkdir -p /var/lib/clock-test && \
     printf '#!/bin/sh\\necho \"$(cat /proc/sys/kernel/random/boot_id) $(cut -d\" \" -f1 /proc/uptime) $(date +%%s)\" >> /var/lib/clock-test/$1\\n' \
     > /var/lib/clock-test/log && chmod +x /var/lib/clock-test/log";

/// A timer `NAME.timer` with `keys` (its `[Timer]` lines) and its
/// oneshot `NAME.service`, which logs to `NAME`.
fn unit_pair(name: &str, keys: &str, install: bool) -> String {
    let install = if install {
        "\\n[Install]\\nWantedBy=timers.target"
    } else {
        ""
    };
    format!(
        "printf '[Timer]\\n{keys}{install}\\n' > /etc/systemd/system/{name}.timer && \
         printf '[Service]\\nType=oneshot\\nExecStart=/var/lib/clock-test/log {name}\\n' \
         > /etc/systemd/system/{name}.service"
    )
}

/// The persistent timer's stamp, systemd's file.
const STAMP: &str = "/var/lib/systemd/timers/stamp-clock-persist.timer";

/// Sets the persistent timer's stamp two days back (the next boot has
/// missed a midnight) and prints `stamp-set`.
fn stamp_back() -> String {
    format!("touch -d '2 days ago' {STAMP} && sync && echo stamp-set")
}

/// Boot 1 (flotilla): the logger and `clock-persist.timer`, enabled and
/// started (which makes its stamp), then the stamp set two days back.
pub fn install(vm: &Vm, m: &Machine) {
    let out = vm.ssh_ok(
        m,
        &format!(
            "set -e; {LOGGER}; {}; systemctl daemon-reload; \
             systemctl enable --now clock-persist.timer 2>&1; \
             for i in $(seq 100); do test -e {STAMP} && break; sleep 0.1; done; \
             systemctl is-active clock-persist.timer; {}",
            unit_pair("clock-persist", "OnCalendar=daily\\nPersistent=yes", true),
            stamp_back()
        ),
    );
    assert!(
        out.ends_with("active\nstamp-set\n"),
        "flotilla: clock-persist.timer enabled, its stamp made at its start: {out}"
    );
}

/// Typed in boot 2's console shell, and run over ssh in each boot after
/// a reboot on the full disk (`disk.rs`, boots 2 and 3b): waits (at most 2 min) for the
/// persistent timer's run in this boot, prints `persist-ran: N` (the runs
/// of this boot), and sets the stamp back for the next boot.
pub const PERSIST_RAN: &str = "b=$(cat /proc/sys/kernel/random/boot_id); for i in $(seq 120); do \
     grep -q \"^$b \" /var/lib/clock-test/clock-persist && break; sleep 1; done; \
     n=$(grep -c \"^$b \" /var/lib/clock-test/clock-persist); \
     touch -d '2 days ago' /var/lib/systemd/timers/stamp-clock-persist.timer; \
     echo \"persist-ran: $n\"";

/// What [`PERSIST_RAN`] prints when the timer ran once in boot 2.
pub const CONSOLE_RAN: &str = "persist-ran: 1";

/// The timers whose times are read (`systemctl show`), before and after.
const TIMERS: [&str; 6] = [
    "clock-daily.timer",
    "clock-change.timer",
    "clock-persist.timer",
    "dpkg-db-backup.timer",
    "apt-daily.timer",
    "apt-daily-upgrade.timer",
];

/// Defines `ts UNIT PROPERTY`: the time `systemctl show -P` prints, in
/// seconds since the epoch, or `-` when there is none. (Debian 12's
/// systemctl honours `--timestamp=unix` for the `…Timestamp` properties
/// only, not for a timer's `NextElapseUSecRealtime` or `LastTriggerUSec`.)
const TS: &str = "ts() { x=$(systemctl show -P \"$2\" \"$1\"); case \"$x\" in ''|n/a) echo -;; \
     *) date -d \"$x\" +%s 2>/dev/null || echo -;; esac; }";

/// Prints `TAG TIMER NEXT LAST` for each of [`TIMERS`] (seconds, or `-`).
fn show(tag: &str) -> String {
    format!(
        "for t in {}; do echo \"{tag} $t $(ts $t NextElapseUSecRealtime) \
         $(ts $t LastTriggerUSec)\"; done",
        TIMERS.join(" ")
    )
}

/// Waits (at most 2 min) until `cond` (a shell test) holds.
fn await_cond(cond: &str) -> String {
    format!("for i in $(seq 240); do {cond} && break; sleep 0.5; done")
}

/// The check on a booted machine (boot 3 or 4). Prints what it saw and
/// the seconds it took.
pub fn check(vm: &Vm, m: &Machine) {
    let init = vm.init.name();
    let t = Instant::now();
    let lines = |tag: &str| format!("grep -c . /var/lib/clock-test/{tag} 2>/dev/null || true");
    // When a oneshot went inactive again: after the jump, it ran after it.
    // (flotilla-busd keeps one time per unit, that of its present state:
    // `InactiveExitTimestamp` is 0 there once it is inactive again.)
    let started = |unit: &str| format!("echo \"ran {unit} $(ts {unit} InactiveEnterTimestamp)\"");
    let out = ssh_each(
        vm,
        m,
        &[
            // The missed persistent timer ran at this boot, once.
            &format!(
                "{TS}; b=$(cat /proc/sys/kernel/random/boot_id); {}; \
                 echo \"runs $(grep -c \"^$b \" /var/lib/clock-test/clock-persist)\"; \
                 echo \"at $(grep \"^$b \" /var/lib/clock-test/clock-persist | head -n 1 | cut -d' ' -f2)\"; \
                 echo \"boot $(( $(date +%s) - $(cut -d. -f1 /proc/uptime) ))\"; \
                 echo \"last $(ts clock-persist.timer LastTriggerUSec)\"; \
                 echo \"stamp $(stat -c %Y {STAMP})\"",
                await_cond("grep -q \"^$b \" /var/lib/clock-test/clock-persist")
            ),
            &format!(
                "{}; {}; systemctl daemon-reload; \
                 systemctl start clock-daily.timer clock-change.timer; {}; \
                 systemctl list-timers --all --no-pager",
                unit_pair("clock-daily", "OnCalendar=daily\\nAccuracySec=1s", false),
                unit_pair("clock-change", "OnClockChange=yes", false),
                show("before")
            ),
            // The jump, and what ran after it.
            &format!(
                "date -s '+1 day' > /dev/null; j=$(date +%s); echo \"jump $j\"; \
                 echo \"jumped-boot $(( j - $(cut -d. -f1 /proc/uptime) ))\"; \
                 echo \"midnight $(date -d 'tomorrow 00:00' +%s)\"; {}; \
                 sleep 2; {}; {}; {}; {}; \
                 echo \"daily-runs $({})\"; echo \"change-runs $({})\"",
                await_cond(
                    "[ \"$(grep -c . /var/lib/clock-test/clock-daily 2>/dev/null)\" = 1 ] && \
                     [ \"$(grep -c . /var/lib/clock-test/clock-change 2>/dev/null)\" = 1 ] && \
                     d=$(ts dpkg-db-backup.service InactiveEnterTimestamp) && \
                     [ \"$d\" != - ] && [ \"$d\" -ge $((j - 86400)) ] && \
                     [ \"$(systemctl is-active dpkg-db-backup.service clock-change.service \
                     clock-daily.service | sort -u)\" = inactive ]"
                ),
                show("after"),
                started("dpkg-db-backup.service"),
                started("apt-daily.service"),
                started("apt-daily-upgrade.service"),
                lines("clock-daily"),
                lines("clock-change"),
            ),
            "systemctl list-timers --all --no-pager",
            // The clock put back.
            &format!(
                "date -s '-1 day' > /dev/null; echo \"put-back $(date +%s)\"; \
                 echo \"back-midnight $(date -d 'tomorrow 00:00' +%s)\"; {}; {}; \
                 echo \"change-runs $({})\"",
                await_cond(
                    "[ \"$(grep -c . /var/lib/clock-test/clock-change)\" = 2 ] && \
                     [ \"$(systemctl is-active clock-change.service)\" = inactive ]"
                ),
                show("back"),
                lines("clock-change")
            ),
            // Leave the machine as found (but the persistent timer, its
            // stamp set back for the next boot).
            &format!(
                "systemctl stop clock-daily.timer clock-change.timer; \
                 rm -f /etc/systemd/system/clock-daily.* /etc/systemd/system/clock-change.* \
                 /var/lib/clock-test/clock-daily /var/lib/clock-test/clock-change; \
                 systemctl daemon-reload; {}",
                stamp_back()
            ),
        ],
    );
    let all = out.join("");
    let fail = |what: &str| -> ! {
        let logs = vm.ssh(
            m,
            "for u in clock-daily clock-change clock-persist dpkg-db-backup; do \
             systemctl status --no-pager -n 10 $u.timer $u.service; done; \
             ls -l --time-style=+%s /var/lib/systemd/timers; cat /var/lib/clock-test/*",
        );
        panic!(
            "{init}: {what}\n{all}\nstatus:\n{}",
            String::from_utf8_lossy(&logs.stdout)
        )
    };
    // `KEY VALUE…` lines; the times as seconds (`-`: none).
    let mut v: HashMap<String, Option<u64>> = HashMap::new();
    for l in all.lines() {
        let w: Vec<&str> = l.split_whitespace().collect();
        let num = |s: Option<&&str>| s.and_then(|s| s.parse::<u64>().ok());
        match w.first().copied() {
            Some("before" | "after" | "back") if w.len() >= 2 => {
                v.insert(format!("{} {} next", w[0], w[1]), num(w.get(2)));
                v.insert(format!("{} {} last", w[0], w[1]), num(w.get(3)));
            }
            Some("ran") if w.len() >= 2 => {
                v.insert(format!("ran {}", w[1]), num(w.get(2)));
            }
            Some(k) if w.len() == 2 => {
                v.insert(k.to_string(), num(w.get(1)));
            }
            _ => {}
        }
    }
    let get = |k: &str| -> u64 {
        v.get(k)
            .copied()
            .flatten()
            .unwrap_or_else(|| fail(&format!("no {k}")))
    };
    let opt = |k: &str| -> Option<u64> { v.get(k).copied().flatten() };

    // The persistent timer: once in this boot, early, its stamp the run.
    let boot = get("boot");
    if get("runs") != 1 {
        fail("clock-persist.service (its stamp two days old) did not run once at boot");
    }
    let last = get("last");
    if last < boot || get("stamp").abs_diff(last) > 1 {
        fail("clock-persist.timer's LAST is not its run at this boot, kept in its stamp");
    }

    // The jump.
    let (j, jumped_boot, midnight) = (get("jump"), get("jumped-boot"), get("midnight"));
    if get("daily-runs") != 1 {
        fail("clock-daily.service did not run once after the jump");
    }
    for t in ["clock-daily.timer", "dpkg-db-backup.timer"] {
        let last = opt(&format!("after {t} last")).unwrap_or(0);
        let next = opt(&format!("after {t} next")).unwrap_or(0);
        if last + 5 < j || !(midnight..=midnight + 60).contains(&next) {
            fail(&format!(
                "{t} after the jump: LAST {last} (the jump {j}), NEXT {next} (midnight {midnight})"
            ));
        }
    }
    let backup_ran = get("ran dpkg-db-backup.service");
    // Its `InactiveEnterTimestamp` is on the jumped clock under both
    // inits: each reads the wall clock as it was at the change.
    if backup_ran + 5 < j || backup_ran > j + 300 {
        fail("dpkg-db-backup.service did not run (go inactive again) after the jump");
    }
    // The random delays: ran at the jump, or due within the delay of the
    // boot's start (on the jumped clock; the init starts a few seconds
    // after the kernel, and an elapse may be a minute late: 5 min slack).
    let mut delayed = Vec::new();
    for (t, delay) in [
        ("apt-daily.timer", 12 * 3600),
        ("apt-daily-upgrade.timer", 3600),
    ] {
        let last = opt(&format!("after {t} last")).unwrap_or(0);
        let next = opt(&format!("after {t} next")).unwrap_or(0);
        let ran = last + 5 >= j;
        if !ran && !(jumped_boot..=jumped_boot + delay + 300).contains(&next) {
            fail(&format!(
                "{t} after the jump: NEXT {next} is not within {delay} s of the boot's start \
                 {jumped_boot}, and it did not run (LAST {last})"
            ));
        }
        delayed.push(if ran {
            format!("{t} ran at the jump")
        } else {
            format!("{t} due {} s after the boot's start", next - jumped_boot)
        });
    }
    // OnClockChange=: once for the jump, once more for the way back.
    let change: Vec<u64> = all
        .lines()
        .filter_map(|l| l.strip_prefix("change-runs "))
        .filter_map(|n| n.trim().parse().ok())
        .collect();
    if change != [1, 2] {
        fail(&format!(
            "clock-change.service's runs after the jump and after the way back: {change:?}"
        ));
    }
    // Back: the daily timer's trigger (in the future) counts as now.
    let back_midnight = get("back-midnight");
    let next = opt("back clock-daily.timer next").unwrap_or(0);
    let last = opt("back clock-daily.timer last").unwrap_or(u64::MAX);
    if !(back_midnight..=back_midnight + 60).contains(&next) || last > get("put-back") + 30 {
        fail(&format!(
            "clock-daily.timer after the clock was put back: NEXT {next} (want the coming \
             midnight {back_midnight}), LAST {last}"
        ));
    }
    report(&format!(
        "debian: {init}: timers and the clock: the missed persistent timer ran at boot \
         ({} s of uptime); after `date -s '+1 day'` clock-daily, \
         dpkg-db-backup (done {} s after the jump) and OnClockChange= ran once; {}; put back: \
         OnClockChange= again, clock-daily due at the coming midnight; {:.1} s\n\
         systemctl list-timers --all before:\n{}after the jump:\n{}",
        all.lines()
            .find(|l| l.starts_with("at "))
            .unwrap_or("")
            .trim_start_matches("at "),
        backup_ran.saturating_sub(j),
        delayed.join(", "),
        t.elapsed().as_secs_f64(),
        out[1]
            .lines()
            .filter(|l| !l.starts_with("before "))
            .collect::<Vec<_>>()
            .join("\n")
            + "\n",
        out[3]
    ));
}
