//! Memory pressure in Debian 12 under both inits (issue 45, item 5), on
//! boots the test makes anyway (systemd's baseline and flotilla's timing
//! boot), one call each: [`check`].
//!
//! Three services written to `/etc/systemd/system`, each with
//! `MemoryMax=32M` and a shell that doubles a string until the kernel's
//! OOM killer takes it (swap is off meanwhile, or the cgroup would page
//! out instead):
//! - `pressure-main`: the allocating shell is the main process;
//! - `pressure-stop`: it is an orphan (its parent exited, so the init
//!   reaps it) beside a main `sleep`; `OOMPolicy=stop`, the default;
//! - `pressure-continue`: the same with `OOMPolicy=continue`.
//!
//! Afterwards the first two are `failed` with `Result=oom-kill` (the
//! second's `sleep` stopped with it), the third is `active` with
//! `Result=success`, and ssh and cron run with the main PIDs they had.
//! The init's own processes carry the OOM score adjustments that
//! systemd's do: PID 1 as systemd's PID 1, `flotilla-busd` as
//! `dbus-daemon` (the bus it serves through); journald (the image's log
//! writer under both inits) and dbus-daemon as under systemd (their
//! units' `OOMScoreAdjust=`).

use super::debian_support::{Machine, Vm};
use super::pid1_support::report;
use std::time::Instant;

/// The three services, written and started, awaited, their states
/// printed, then removed (swap back on).
const SCRIPT: &str = r#"set -u
swapoff -a
printf '#!/bin/sh\nx=a; while :; do x=$x$x; done\n' > /usr/local/bin/pressure-grow
chmod +x /usr/local/bin/pressure-grow
unit() {
    printf '[Service]\nMemoryMax=32M\n%s\nExecStart=%s\n' "$2" "$3" \
        > /etc/systemd/system/$1.service
}
orphan="/bin/sh -c '(/usr/local/bin/pressure-grow &); exec sleep infinity'"
unit pressure-main "" /usr/local/bin/pressure-grow
unit pressure-stop "OOMPolicy=stop" "$orphan"
unit pressure-continue "OOMPolicy=continue" "$orphan"
systemctl daemon-reload
others() { for u in ssh cron; do echo "$u $(systemctl show -P MainPID $u) $(systemctl is-active $u)"; done; }
before=$(others)
systemctl start pressure-main pressure-stop pressure-continue
# Each allocating shell is killed within seconds; the first two units
# fail. Awaited with a deadline of 60 s.
for i in $(seq 300); do
    [ "$(systemctl show -P ActiveState pressure-main)" = failed ] &&
    [ "$(systemctl show -P ActiveState pressure-stop)" = failed ] &&
    [ "$(dmesg | grep -c 'Memory cgroup out of memory: Killed process')" -ge 3 ] && break
    sleep 0.2
done
for u in pressure-main pressure-stop pressure-continue; do
    echo "$u $(systemctl show -P ActiveState $u) $(systemctl show -P Result $u)"
done
echo "continue's main: $(cat /proc/$(systemctl show -P MainPID pressure-continue)/comm)"
echo "kills: $(dmesg | grep -c 'Memory cgroup out of memory: Killed process')"
after=$(others)
[ "$before" = "$after" ] && echo "others untouched" || printf 'others changed:\n%s\n%s\n' "$before" "$after"
systemctl stop pressure-continue
systemctl reset-failed pressure-main pressure-stop 2>/dev/null
rm -f /etc/systemd/system/pressure-*.service /usr/local/bin/pressure-grow
systemctl daemon-reload
swapon -a
"#;

/// What both inits must answer.
const WANT: &str = "pressure-main failed oom-kill
pressure-stop failed oom-kill
pressure-continue active success
continue's main: sleep
kills: 3
others untouched
";

/// The OOM score adjustments: PID 1, the bus's server (flotilla-busd;
/// under systemd PID 1 serves it itself through dbus-daemon, whose score
/// flotilla-busd takes), then journald (the log writer of Debian's image
/// under both inits) and dbus-daemon.
fn scores(vm: &Vm, m: &Machine, systemd: bool) -> String {
    let bus = if systemd {
        "dbus-daemon"
    } else {
        "flotilla-busd"
    };
    vm.ssh_ok(
        m,
        &format!(
            "for p in 1 $(pidof -s {bus}) $(pidof -s systemd-journald) $(pidof -s dbus-daemon); \
             do cat /proc/$p/oom_score_adj; done | paste -sd ' '"
        ),
    )
}

/// The memory checks on a booted machine; `systemd`: the baseline's OOM
/// scores (`None` on systemd's boot, which returns them), which
/// flotilla's must equal. Prints the seconds it took.
pub fn check(vm: &Vm, m: &Machine, systemd: Option<&str>) -> String {
    let t = Instant::now();
    let name = if systemd.is_none() {
        "systemd"
    } else {
        "flotilla"
    };
    let out = vm.ssh(m, SCRIPT);
    let got = String::from_utf8_lossy(&out.stdout);
    if got != WANT {
        let logs = vm.ssh(
            m,
            "for u in pressure-main pressure-stop pressure-continue; do \
             systemctl status --no-pager -n 20 $u; done; dmesg | grep -i oom | tail -n 20",
        );
        panic!(
            "{name}: memory pressure:\n{got}\nwant:\n{WANT}\nstderr: {}\n{}",
            String::from_utf8_lossy(&out.stderr),
            String::from_utf8_lossy(&logs.stdout)
        );
    }
    let scores = scores(vm, m, systemd.is_none());
    if let Some(want) = systemd {
        assert_eq!(
            scores, want,
            "oom_score_adj of PID 1, the bus's server, journald, dbus-daemon: flotilla's, \
             systemd's"
        );
    }
    assert_eq!(scores.split_whitespace().count(), 4, "{scores}");
    report(&format!(
        "debian: {name}: memory pressure (MemoryMax= OOM kills, OOMPolicy=, oom_score_adj \
         {}): as expected, {:.1} s",
        scores.trim(),
        t.elapsed().as_secs_f64()
    ));
    scores
}
