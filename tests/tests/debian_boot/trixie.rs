//! Boots Debian 13 (trixie: systemd 257, a merged `/usr`, Debian's cloud
//! kernel 6.12) with flotilla as PID 1 and the same disk with systemd, as
//! `main.rs` does Debian 12 (in the same test binary, so both run at
//! once): the image of `contrib/debian/build --suite trixie` (mmdebstrap from Debian's archive, flotilla put in by
//! its package, a GPT disk whose root partition the kernel finds by
//! `root=PARTUUID=`), booted by `contrib/debian/run` in software-emulated
//! qemu. Four boots of one disk, the inits alternately: flotilla (the
//! first boot), systemd, flotilla, systemd. Each boot must give:
//!
//! - the login prompt on the serial console (the getty of systemd's getty
//!   generator) and an ssh login (a key the test makes);
//! - no unit failed: under flotilla `initctl status` lists none failed or
//!   blocked, every unit the target requires active, the target reached
//!   and not degraded; under systemd `systemctl --failed` lists none and
//!   `is-system-running` says `running`;
//! - no ordering cycle on either console;
//! - sshd's login in `journalctl -u ssh` (journald, under both inits);
//! - on the first boot of each, a oneshot's `LogLevelMax=info` and
//!   `LogExtraFields=` applied by journald (its debug line dropped, its
//!   info line with the fields);
//! - a clean file system after `systemctl poweroff` (Debian's systemctl:
//!   under flotilla, over D-Bus through flotilla-busd): the superblock
//!   `clean`, `e2fsck -fn` finding nothing.
//!
//! The first flotilla boot also makes the machine ID, and systemd's boot
//! after it is no first boot. The figures, printed side by side: the
//! login prompt and sshd answering (from the kernel's hand-over),
//! `multi-user.target` reached (from PID 1's start, as each init's analyze
//! says), PID 1's RSS once the target is reached; medians of the two
//! boots of each init.
//!
//! systemd's side is an oracle: its two boots pass or the test fails, and
//! their figures are the same for any flotilla. A run that boots them
//! records the figures under the key of the image's Debian root
//! ([`Record`], [`HARNESS`]); the record of today's root is kept in
//! `oracle/`, and with it only flotilla's two boots run (one after the
//! other, as before), and systemd's row of the medians is the recorded one,
//! from another run's load: printed beside flotilla's, compared with
//! nothing. `DEBIAN_BOOT_SYSTEMD=1` boots systemd again and writes a new
//! record into the image cache.

use crate::debian_support::{
    assert_clean_poweroff, assert_degraded_by_display_manager_only, assert_systemd_settled,
    boot_to_login, build_image, machine, median,
    oracle::{Figures, Record},
    reached_ms, rss_kib, ssh_each, Init, Machine, Timing, Vm,
};
use crate::pid1_support::report;

/// The version of what systemd's boots here observe: part of the key of
/// their record, raised when they change what they check or measure.
const HARNESS: u32 = 1;

/// Set, systemd's side is measured again rather than read from its
/// record (also that of `main.rs`).
pub const FRESH: &str = "DEBIAN_BOOT_SYSTEMD";

/// What one boot measured.
struct Sample {
    timing: Timing,
    /// `multi-user.target` reached, ms after PID 1 started.
    multi_user_ms: f64,
    /// PID 1's resident memory, KiB.
    rss_kib: u64,
}

/// sshd's logins in `journalctl -u ssh`: at least one.
fn assert_ssh_in_journal(init: Init, count: &str) {
    let n: u32 = count.trim().parse().unwrap_or(0);
    assert!(
        n >= 1,
        "{}: no sshd login in journalctl -u ssh: {count:?}",
        init.name()
    );
}

/// The commands both inits answer the same way: sshd's logins in the
/// journal, PID 1's RSS.
const COMMON: [&str; 2] = [
    "journalctl -u ssh --no-pager | grep -c 'Accepted publickey for root'",
    "grep VmRSS /proc/1/status",
];

/// flotilla's boot: the target reached with nothing failed or blocked and
/// every required unit active; the machine ID; the sample.
fn flotilla_boot(vm: &Vm, m: &Machine, timing: Timing) -> (Sample, String) {
    let mut commands = vec![
        // The prompt and sshd come before the target is reached: wait for
        // it, asking once a second, for at most three minutes.
        "for i in $(seq 180); do initctl status --json | tr -d ' ' \
         | grep -q '\"target_state\":\"running\"' && break; sleep 1; done; \
         initctl status --json",
        "NO_COLOR=1 initctl analyze critical-chain multi-user.target",
        "cat /etc/machine-id",
    ];
    commands.extend(COMMON);
    let out = ssh_each(vm, m, &commands);
    let v: serde_json::Value = serde_json::from_str(&out[0]).expect("initctl status --json");
    let units = v["units"].as_array().expect("units");
    let failed: Vec<String> = units
        .iter()
        .filter(|u| u["state"] == "failed" || !u["blocked_by"].is_null())
        .map(|u| format!("{} ({}: {})", u["unit"], u["state"], u["status"]))
        .collect();
    assert!(
        failed.is_empty(),
        "flotilla: units failed or blocked: {failed:?}"
    );
    let inactive: Vec<String> = units
        .iter()
        .filter(|u| u["required"] == true)
        .filter(|u| !["running", "exited"].contains(&u["state"].as_str().unwrap_or("")))
        .map(|u| format!("{} ({})", u["unit"], u["state"]))
        .collect();
    assert!(
        inactive.is_empty(),
        "flotilla: units not active: {inactive:?}"
    );
    // The package's init.yaml names systemd's default.target (a link
    // to graphical.target here), as systemd boots.
    assert_eq!(v["target"], "default.target");
    assert_eq!(v["target_state"], "running", "{}", out[0]);
    assert_degraded_by_display_manager_only(&v, &out[0]);
    // Debian 13's own units did the work: sysinit.target's (which import
    // credentials), the getty of the getty generator, sshd.
    for name in [
        "systemd-sysctl.service",
        "systemd-sysusers.service",
        "systemd-tmpfiles-setup.service",
        "systemd-tmpfiles-setup-dev.service",
        "systemd-tmpfiles-setup-dev-early.service",
        "serial-getty@ttyS0.service",
        "ssh.service",
        "systemd-journald.service",
    ] {
        let u = units
            .iter()
            .find(|u| u["unit"] == name)
            .unwrap_or_else(|| panic!("flotilla: no unit {name} in initctl status"));
        assert!(
            ["running", "exited"].contains(&u["state"].as_str().unwrap_or("")),
            "flotilla: {name}: {u}"
        );
    }
    assert_ssh_in_journal(Init::Flotilla, &out[3]);
    let sample = Sample {
        timing,
        multi_user_ms: reached_ms(&out[1], "multi-user.target"),
        rss_kib: rss_kib(&out[4]),
    };
    (sample, out[2].trim().to_string())
}

/// systemd's boot: running, nothing failed, not a first boot; the sample.
fn systemd_boot(vm: &Vm, m: &Machine, timing: Timing) -> Sample {
    let mut commands = vec![
        "systemctl is-system-running --wait; true",
        "systemctl --failed --no-legend --plain",
        "systemd-analyze critical-chain multi-user.target",
        "journalctl -b --no-pager | grep -c 'Detected first boot'; true",
    ];
    commands.extend(COMMON);
    let out = ssh_each(vm, m, &commands);
    assert_systemd_settled(&out[0], &out[1]);
    assert_eq!(
        out[3].trim(),
        "0",
        "systemd: a first boot after flotilla's (the machine ID was not kept)"
    );
    assert_ssh_in_journal(Init::Systemd, &out[4]);
    Sample {
        timing,
        multi_user_ms: reached_ms(&out[2], "multi-user.target"),
        rss_kib: rss_kib(&out[5]),
    }
}

/// A oneshot with `LogLevelMax=info` and `LogExtraFields=`, whose output
/// has a debug and an info line (`<N>` prefixes, `SyslogLevelPrefix=`'s
/// default).
const LOG_UNIT: &str = "[Service]
Type=oneshot
LogLevelMax=info
LogExtraFields=FLOTILLA_TEST=extra \"FLOTILLA_SPACED=a b\"
ExecStart=/bin/sh -c 'echo \"<7>flotilla-debug-line\"; echo \"<6>flotilla-info-line\"; sleep 2'
";

/// Installs [`LOG_UNIT`], starts it, waits for its info line in the
/// journal (journald reads the stream on its own), prints the fields
/// that matter of its output's lines (systemd's own messages about the
/// unit carry the extra fields too, under systemd only: they are left
/// out), removes it.
fn log_unit_script() -> String {
    format!(
        "cat > /etc/systemd/system/flotilla-log.service <<'EOF'\n{LOG_UNIT}EOF\n\
         systemctl daemon-reload && systemctl start flotilla-log.service; \
         for i in $(seq 100); do journalctl -b -u flotilla-log.service -o cat --no-pager \
         | grep -q flotilla-info-line && break; sleep 0.1; done; \
         journalctl -b _SYSTEMD_UNIT=flotilla-log.service _TRANSPORT=stdout -o verbose \
         --no-pager | grep -E '^ *(MESSAGE=flotilla|FLOTILLA_|PRIORITY=)' | sed 's/^ *//' | LC_ALL=C sort; \
         rm /etc/systemd/system/flotilla-log.service; systemctl daemon-reload"
    )
}

/// `LogLevelMax=` and `LogExtraFields=` reach journald (files under
/// `/run/systemd/units/` that it reads for the unit): the debug line is
/// dropped, the info line carries the extra fields. The same under both
/// inits.
fn assert_log_settings(vm: &Vm, m: &Machine, init: Init) {
    let out = vm.ssh_ok(m, &log_unit_script());
    assert_eq!(
        out.lines().collect::<Vec<_>>(),
        [
            "FLOTILLA_SPACED=a b",
            "FLOTILLA_TEST=extra",
            "MESSAGE=flotilla-info-line",
            "PRIORITY=6"
        ],
        "{}: LogLevelMax=info and LogExtraFields= in the journal",
        init.name()
    );
}

/// The record of systemd's boots kept in `oracle/` is read for its
/// Debian root as this harness's: checked without a VM.
#[test]
fn the_kept_record_of_systemds_trixie_boots_is_read() {
    let bases = Record::check_kept::<Vec<Figures>>("debian_boot", "debian-boot-trixie", HARNESS);
    assert!(!bases.is_empty(), "no record of harness {HARNESS} kept");
}

// scripts/test runs this binary beside the rest of the suite and skips
// this test by its name in the rest: a new name goes there too.
#[test]
fn trixie_boots_with_flotilla_as_with_systemd() {
    let image = build_image("trixie");
    let dir = tempfile::Builder::new()
        .prefix("flotilla-trixie-")
        .tempdir()
        .expect("tempdir");
    let record = Record::of(&image, "debian_boot", "debian-boot-trixie", HARNESS);
    let kept: Option<Vec<Figures>> = record.read(FRESH);
    // With systemd's record, its boots are not booted again.
    let inits: &[Init] = match kept {
        Some(_) => &[Init::Flotilla],
        None => &[Init::Flotilla, Init::Systemd],
    };
    let m = machine(image, dir.path());
    let mut flotilla = Vec::new();
    let mut systemd = Vec::new();
    for round in 0..2 {
        for &init in inits {
            let label = if round == 0 && init == Init::Flotilla {
                "first boot"
            } else {
                "same disk"
            };
            let mut vm = Vm::boot(&m, init);
            let timing = boot_to_login(&vm, label);
            match init {
                Init::Flotilla => {
                    let (s, id) = flotilla_boot(&vm, &m, timing);
                    assert!(
                        id.len() == 32 && id.chars().all(|c| c.is_ascii_hexdigit()),
                        "flotilla: machine ID {id:?}"
                    );
                    flotilla.push(s);
                }
                Init::Systemd => systemd.push(systemd_boot(&vm, &m, timing)),
            }
            if round == 0 {
                assert_log_settings(&vm, &m, init);
            }
            let cycles: Vec<String> = vm
                .console
                .all()
                .into_iter()
                .filter(|l| l.contains("ordering cycle") || l.contains("Found ordering cycle"))
                .collect();
            assert!(cycles.is_empty(), "{}: {cycles:?}", init.name());
            let out = vm.ssh(&m, "systemctl poweroff");
            assert!(
                matches!(out.status.code(), Some(0) | Some(255)),
                "{}: systemctl poweroff: {out:?}",
                init.name()
            );
            assert_clean_poweroff(&mut vm, &m, "systemctl poweroff");
            drop(vm);
        }
    }
    match kept {
        Some(k) => {
            systemd = k
                .iter()
                .map(|f| Sample {
                    timing: f.timing("recorded"),
                    multi_user_ms: f.multi_user_ms,
                    rss_kib: f.rss_kib,
                })
                .collect()
        }
        None => record.write(
            &systemd
                .iter()
                .map(|s| Figures::of(&s.timing, s.multi_user_ms, s.rss_kib))
                .collect::<Vec<_>>(),
        ),
    }

    let mut table = String::from(
        "debian trixie: boot timing, software-emulated qemu (1 vCPU, 512 MiB), from qemu's start to \
         the kernel's hand-over, then from the hand-over to the login prompt and sshd answering:\n  \
         init                       hand-over  login prompt  sshd answers\n",
    );
    for s in flotilla.iter().chain(&systemd) {
        table.push_str(&s.timing.line());
        table.push('\n');
    }
    report(&table);
    let row = |name: &str, v: &[Sample]| {
        let secs = |f: fn(&Sample) -> f64| median(v.iter().map(f).collect());
        format!(
            "  {name:<10}{:>10.2} s{:>10.2} s{:>14.2} s{:>10.0} KiB\n",
            secs(|s| (s.timing.prompt - s.timing.handover).as_secs_f64()),
            secs(|s| (s.timing.sshd - s.timing.handover).as_secs_f64()),
            secs(|s| s.multi_user_ms / 1000.0),
            secs(|s| s.rss_kib as f64),
        )
    };
    report(&format!(
        "debian trixie: medians of {} boots each (prompt and ssh from the hand-over; \
         multi-user.target from PID 1's start, as its analyze says; PID 1's VmRSS with the \
         target reached; systemd's {}):\n  init          prompt       ssh  multi-user.target    \
         PID 1 RSS\n{}{}",
        flotilla.len(),
        if inits.len() == 1 {
            format!("from its record, {}", record.name())
        } else {
            format!("booted in this run, recorded in {}", record.cache.display())
        },
        row("flotilla", &flotilla),
        row("systemd", &systemd)
    ));
}
