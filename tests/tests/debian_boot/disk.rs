//! A full disk and a reboot with it still full (issue 45, items 6 and 7;
//! docs/debian.md, "A machine's life"), the same commands under both
//! inits on the same disk, the answers compared line for line. `main.rs`
//! runs [`fill`] and [`reboot`] at the end of flotilla's first boot (1,
//! whose `systemctl reboot` makes boot 2 the boot after it) and of
//! systemd's boot (3, followed by a systemd boot of its own, 3b), and
//! [`after_reboot`] in boots 2 and 3b:
//!
//! - [`fill`]: the file system holding `/var` (the image's root) filled
//!   as root to the last block, root's reserved blocks too (`fallocate`,
//!   then `dd` until `ENOSPC`): a write fails; the init, its bus
//!   (`systemctl` over it) and the log writer still answer; a service
//!   started with `systemd-run` has its line in `journalctl -u` (and in
//!   `initctl logs` under flotilla, from the init's memory: the log
//!   writer cannot write it); `systemctl restart cron` works; no job is
//!   left queued; the same units failed.
//! - [`reboot`]: `systemctl reboot`, the disk still full; the machine
//!   goes down in order (the root file system clean).
//! - [`after_reboot`]: the boot with the disk still full reaches the
//!   target: `is-system-running`, the failed and the active services,
//!   and `last -x`'s records from this boot back to the one before
//!   (`reboot`, `runlevel`, `shutdown`: Debian's
//!   `systemd-update-utmp.service` and `systemd-update-utmp-runlevel.service`
//!   write them, under either init); then the space is freed.
//!
//! `/var/log/wtmp` is given 64 KiB of room past its end before the disk
//! is filled (`fallocate --keep-size`): whether a record fits in a full
//! disk depends otherwise on where the file's last block ends, which
//! differs with the number of logins each boot had; with the room, the
//! records compared are what each init writes.

use super::clock;
use crate::debian_support::{assert_clean_end, ssh_each, End, Init, Machine, Vm};
use std::time::Instant;

/// The transient service started on the full disk.
const UNIT: &str = "flotilla-full";

/// Polls until `$1` (a shell condition) holds, at most 60 s.
const UNTIL: &str = "until_() { for i in $(seq 300); do eval \"$1\" && return 0; sleep 0.2; done; \
     return 1; }";

/// Fills the file system of `/var` to its last block, as root; prints
/// the free blocks left and ext4's own reserve (`reserved_clusters` in
/// sysfs: blocks only the file system itself may take, for the metadata
/// of writes already under way, never a process, root's included; 4096
/// on this disk). A disk is full when its free blocks are no more than
/// that reserve: in the run of 2026-11-26 both inits' fills read 4096,
/// the reserve; an earlier run read `0` once under systemd (what the
/// kernel had lent out of the reserve at that moment) and 4096 again at
/// its next boot. The fallocate stops
/// 4096 blocks above the reserve, so that `dd` (root, until `ENOSPC`)
/// takes the last ones. `/var/lib/clock-test/clock-persist` (clock.rs's
/// persistent timer logs a line there at the next boot) gets the same
/// room as wtmp.
const FILL: &str = "for f in /var/log/wtmp /var/lib/clock-test/clock-persist; do \
     [ -e $f ] && fallocate -n -l $(( $(stat -c %s $f) + 65536 )) $f; done; \
     r=$(cat /sys/fs/ext4/$(basename \"$(findmnt -no SOURCE -T /var)\")/reserved_clusters); \
     s=$(stat -f -c %S /var); f=$(stat -f -c %f /var); \
     fallocate -l $(( f > r + 8192 ? (f - r - 4096) * s : s )) /var/flotilla-fill.0; \
     for i in 1 2 3 4 5 6; do dd if=/dev/zero of=/var/flotilla-fill.$i bs=$s 2>/dev/null; \
     sync; [ \"$(stat -f -c %f /var)\" -le $r ] && break; done; echo \"$(stat -f -c %f /var) $r\"";

/// Whether [`FILL`]'s last line (`FREE RESERVE`) says the disk is full.
fn full(line: Option<&str>) -> bool {
    let n: Vec<u64> = line
        .unwrap_or("")
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect();
    matches!(n[..], [free, reserve] if free <= reserve)
}

/// What the full disk was answered with.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Full {
    /// The lines that must be the same under both inits.
    pub lines: Vec<String>,
    /// What flotilla answered wrong (asserted by [`compare`]).
    pub problems: Vec<String>,
    /// `initctl logs` of the service (flotilla), reported.
    pub logd: String,
    /// The fill's last line (`FREE RESERVE`), reported.
    pub fill: String,
    pub took: f64,
}

/// Fills the disk and checks that the machine still answers (see the
/// module's comment).
pub fn fill(vm: &Vm, m: &Machine) -> Full {
    let started = Instant::now();
    let init = vm.init.name();
    let out = ssh_each(
        vm,
        m,
        &[
            FILL,
            "head -c 4096 /dev/zero > /var/tmp/flotilla-probe; echo rc=$?; \
             rm -f /var/tmp/flotilla-probe",
            &format!(
                "systemd-run --unit {UNIT} /bin/sh -c 'echo full-disk-line; exec sleep 1000' \
                 >/dev/null 2>&1; echo rc=$?; {UNTIL}; \
                 until_ 'journalctl -u {UNIT} -o cat --no-pager | grep -qx full-disk-line' \
                 && echo journal-has-line; systemctl is-active {UNIT}"
            ),
            "systemctl restart cron; echo rc=$?; systemctl is-active cron",
            "timeout 60 journalctl -n 1 --no-pager >/dev/null; echo journalctl-rc=$?; \
             systemctl is-active systemd-journald",
            "systemctl status ssh --no-pager >/dev/null; echo status-rc=$?",
            &format!(
                "{UNTIL}; until_ '[ -z \"$(systemctl list-jobs --no-legend)\" ]' && echo no-jobs; \
                 systemctl list-jobs --no-legend"
            ),
            // pressure.rs's units fail on purpose (OOM-killed) in boots
            // 3 and 4.
            "systemctl --failed --no-legend --plain | awk '{print $1}' \
             | grep -v '^pressure-' | sort; true",
        ],
    );
    let lines: Vec<String> = out[1..].iter().map(|s| s.trim_end().to_string()).collect();
    // flotilla's first boot comes before systemd's: what is wrong is
    // kept and asserted in [`compare`], once both inits' answers are in.
    let mut problems = Vec::new();
    if !full(out[0].lines().last()) {
        problems.push(format!(
            "{init}: free blocks left after the fill above ext4's reserve (free, reserve): {}",
            out[0]
        ));
    }
    let mut logd = String::new();
    if vm.init == Init::Flotilla {
        // The init and its bus answer; the service's output went to
        // journald (Debian's log writer: flotilla runs no flotilla-logd
        // there), which `initctl logs` names.
        let fl = ssh_each(
            vm,
            m,
            &[
                "initctl status flotilla-busd.service --json",
                &format!("initctl logs {UNIT}.service -n 5; echo logs-rc=$?"),
            ],
        );
        let busd: serde_json::Value = serde_json::from_str(&fl[0]).unwrap_or_default();
        if busd["state"] != "running" {
            problems.push(format!("flotilla-busd on the full disk: {}", fl[0]));
        }
        if !fl[1].contains("logs-rc=0") {
            problems.push(format!(
                "initctl logs {UNIT}.service on the full disk: {}",
                fl[1]
            ));
        }
        logd = fl[1].clone();
    }
    vm.ssh_ok(m, &format!("systemctl stop {UNIT}"));
    Full {
        lines,
        problems,
        logd,
        fill: out[0].lines().last().unwrap_or("").to_string(),
        took: started.elapsed().as_secs_f64(),
    }
}

/// `systemctl reboot` over ssh, the disk still full; the machine goes
/// down in order and qemu ends (`-no-reboot`).
pub fn reboot(vm: &mut Vm, m: &Machine) {
    let out = vm.ssh(m, "systemctl reboot");
    assert!(
        matches!(out.status.code(), Some(0) | Some(255)),
        "systemctl reboot: {out:?}"
    );
    assert_clean_end(vm, m, "systemctl reboot on a full disk", End::Reboot);
}

/// What the boot after the reboot answered.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Back {
    /// `is-system-running`, the failed units, the active services,
    /// `last -x`'s records: the same under both inits.
    pub lines: Vec<String>,
    /// Free blocks when the boot was checked (reported: the boot's own
    /// writes may have found a block freed meanwhile).
    pub free: String,
}

/// The boot after [`reboot`], the disk still full; frees the space.
/// Under flotilla, `main.rs` has checked the target (every required unit
/// active) before.
pub fn after_reboot(vm: &Vm, m: &Machine) -> Back {
    let out = ssh_each(
        vm,
        m,
        &[
            "stat -f -c %f /var; ls /var/flotilla-fill.0",
            "timeout 120 systemctl is-system-running --wait; true",
            "systemctl --failed --no-legend --plain | awk '{print $1}' | sort; true",
            "systemctl list-units --type=service --state=active --no-legend --plain \
             | awk '{print $1}' | sort",
            // This boot's records and the shutdown record of the boot
            // before (newest first): what the reboot wrote. The boot
            // before's own runlevel records are not the same check under
            // both inits (systemd's boot 3 ran other checks).
            "last -x -w -R --time-format notime | awk '$1 == \"runlevel\" { print $1, $2, $3, $4 } \
             $1 == \"reboot\" || $1 == \"shutdown\" { print $1, $2, $3 } \
             $1 == \"shutdown\" { exit }'",
            // clock.rs's persistent timer, its stamp set two days back
            // before the reboot, ran once at this boot on the full disk;
            // its stamp set back again for the next boot.
            clock::PERSIST_RAN,
            "rm -f /var/flotilla-fill.*; sync; [ \"$(stat -f -c %f /var)\" -gt 10000 ] \
             && echo freed || echo not-freed",
        ],
    );
    let init = vm.init.name();
    assert!(
        out[0].contains("/var/flotilla-fill.0"),
        "{init}: the disk was not full at the boot: {}",
        out[0]
    );
    assert_eq!(out[6].trim(), "freed", "{init}: freeing the disk");
    Back {
        lines: out[1..6].iter().map(|s| s.trim_end().to_string()).collect(),
        free: out[0].lines().next().unwrap_or("").to_string(),
    }
}

/// Services active under flotilla only, each for a reason: flotilla's
/// own (its bus, and what systemd does inside PID 1 and its fstab
/// generator, contrib/debian/tree/etc/init/units: the fstab mounts and
/// their checks, the kernel file systems, the loopback device, swap,
/// `/run/initctl`), and Debian's acpid, which flotilla
/// runs for the power button where logind does not (its drop-in there
/// says why; under systemd only its socket and path units are enabled).
const FLOTILLA_OWN: [&str; 8] = [
    "flotilla-busd.service",
    "flotilla-logd.service",
    "fstab.service",
    "kernel-fs.service",
    "loopback.service",
    "swap.service",
    "sysv-initctl.service",
    "acpid.service",
];

/// Services that end by themselves once idle, so whether the list shows
/// them depends on when it was taken, under either init:
/// `systemd-fsckd.service` is started through its socket by the boot's
/// file system checks and exits 30 s after its last client.
const EXIT_WHEN_IDLE: [&str; 1] = ["systemd-fsckd.service"];

/// The active services compared as a user would: every service active
/// under systemd is active under flotilla, and one active under flotilla
/// only is one of [`FLOTILLA_OWN`]; the differences, if any. Those of
/// [`EXIT_WHEN_IDLE`] are left out of the comparison.
fn active_differences(sd: &str, fl: &str) -> Vec<String> {
    let sd: Vec<&str> = sd.lines().filter(|u| !EXIT_WHEN_IDLE.contains(u)).collect();
    let fl: Vec<&str> = fl.lines().filter(|u| !EXIT_WHEN_IDLE.contains(u)).collect();
    let mut wrong = Vec::new();
    for u in &sd {
        if !fl.contains(u) {
            wrong.push(format!("{u} active under systemd, not under flotilla"));
        }
    }
    for u in &fl {
        if !sd.contains(u) && !FLOTILLA_OWN.contains(u) {
            wrong.push(format!("{u} active under flotilla only"));
        }
    }
    wrong
}

/// What each check on the full disk must answer, under either init.
const FULL: [&str; 7] = [
    "rc=1",
    "rc=0\njournal-has-line\nactive",
    "rc=0\nactive",
    "journalctl-rc=0\nactive",
    "status-rc=0",
    "no-jobs",
    "",
];

/// The same answers under both inits, on the full disk and after the
/// reboot: every difference is collected and printed at once (a run
/// costs minutes), then asserted.
pub fn compare(sd: (&Full, &Back), fl: (&Full, &Back)) {
    let mut wrong = fl.0.problems.clone();
    for (i, want) in FULL.iter().enumerate() {
        // The failed units: compared, not fixed.
        if i == 6 {
            continue;
        }
        if sd.0.lines[i] != *want {
            wrong.push(format!(
                "systemd on the full disk: {:?}, not {want:?}",
                sd.0.lines[i]
            ));
        }
    }
    for (i, (f, s)) in fl.0.lines.iter().zip(&sd.0.lines).enumerate() {
        if f != s {
            wrong.push(format!(
                "on the full disk, check {i}: flotilla {f:?}, systemd {s:?}"
            ));
        }
    }
    wrong.extend(
        active_differences(&sd.1.lines[2], &fl.1.lines[2])
            .into_iter()
            .map(|d| format!("after the reboot on the full disk: {d}")),
    );
    let names = [
        "is-system-running",
        "failed units",
        "active services",
        "last -x",
        "the persistent timer's runs at this boot",
    ];
    for (i, ((what, s), f)) in names.iter().zip(&sd.1.lines).zip(&fl.1.lines).enumerate() {
        if i != 2 && f != s {
            wrong.push(format!(
                "after the reboot on the full disk, {what}:\n  flotilla: {f:?}\n  systemd:  {s:?}"
            ));
        }
    }
    if sd.1.lines[3].lines().next() != Some("runlevel (to lvl 5)") {
        wrong.push(format!(
            "systemd's runlevel after the reboot is not 5 (graphical.target, the image's \
             default.target): {:?}",
            sd.1.lines[3]
        ));
    }
    assert!(
        wrong.is_empty(),
        "full disk and reboot:\n{}",
        wrong.join("\n")
    );
}
