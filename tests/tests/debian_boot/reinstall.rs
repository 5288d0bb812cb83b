//! `apt-get install --reinstall systemd udev` on a running Debian machine
//! (docs/debian.md, "A machine's life"), under both inits on the same
//! disk with the same commands, the answers compared line for line
//! (`main.rs` calls [`check`] after `life::check` in systemd's boot and
//! in flotilla's timing boot). The packages' maintainer scripts
//! re-execute the manager (`systemctl daemon-reexec`) and restart
//! journald and udevd; afterwards the machine must be as it was:
//!
//! - PID 1 the same process (its start time in `/proc/1/stat`);
//! - `systemctl is-system-running` says `running`, no unit failed;
//! - the same services active as just before;
//! - a service started before with `systemd-run` keeps its PID, and the
//!   lines it writes afterwards are in `journalctl -u`;
//! - this ssh login's session still listed by `loginctl`;
//! - the services whose main PID changed (restarted) the same under
//!   both inits: under flotilla no unit restarted that did not change.
//!
//! Under flotilla the init also says on the console that it re-executed.
//!
//! The run is offline and short: the image's build put the two .debs in
//! its `/var/cache/apt/archives` (contrib/debian/build), and for this
//! check only `update_initramfs=no` in
//! `/etc/initramfs-tools/update-initramfs.conf` (Debian's own knob; with
//! it `update-initramfs -u`, which initramfs-tools' trigger runs, does
//! nothing) spares the initrd's rebuild, minutes in the emulated machine
//! and nothing the boot uses (qemu boots the kernel without an initrd).
//! The file is put back as it was right after the install.

use crate::debian_support::{ssh_each, Machine, Vm};
use std::time::{Duration, Instant};

/// The transient service the reinstall must leave running.
const TICK: &str = "flotilla-reinstall-tick";

/// The console line flotilla writes when it re-executed
/// (init/src/runtime/reexec.rs).
const REEXECUTED: &str = "init: re-executed:";

/// What the check answered: the lines compared between the inits, how
/// long it took in all and how long `apt-get` took.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Reinstall {
    pub lines: Vec<String>,
    pub took: Duration,
    pub apt_ms: u64,
}

/// Runs the reinstall in one ssh login (its session is the one logind
/// must keep), asserts each answer but the restarted services, which
/// `main.rs` compares between the inits.
pub fn check(vm: &Vm, m: &Machine) -> Reinstall {
    let started = Instant::now();
    let reexecs = || {
        vm.console
            .all()
            .iter()
            .filter(|l| l.contains(REEXECUTED))
            .count()
    };
    let reexecs_before = reexecs();
    // Services that exit when idle (the bus daemons hostnamectl,
    // timedatectl and localectl start, systemd-fsckd 30 s after its last
    // client) are active or not by when the list is taken, under either
    // init: left out of the comparison.
    let script = format!(
        "U={TICK}; A=/var/cache/apt/archives; C=/etc/initramfs-tools/update-initramfs.conf; \
         until_() {{ d=$(( $(date +%s) + 90 )); until eval \"$1\"; do \
         [ \"$(date +%s)\" -ge \"$d\" ] && return 1; sleep 0.5; done; }}; \
         svc() {{ systemctl list-units --type=service --state=active --no-legend --plain \
         | awk '{{print $1}}' \
         | grep -vxE 'systemd-(hostnamed|timedated|localed|fsckd)\\.service' | sort; }}; \
         pids() {{ systemctl show -p Id -p MainPID $(svc) | awk -F= \
         '/^Id=/ {{i = $2}} /^MainPID=/ {{p = $2}} /^$/ {{if (i != \"\") print i, p; i = \"\"}} \
         END {{if (i != \"\") print i, p}}' | sort; }}; \
         ticks() {{ journalctl -u $U -o cat --no-pager \"$@\" 2>/dev/null | grep -cx tick; }}; \
         s1=$(awk '{{print $22}}' /proc/1/stat); \
         systemd-run --unit $U /bin/sh -c 'while :; do echo tick; sleep 1; done' \
         >/dev/null 2>&1; echo run=$?; \
         until_ '[ \"$(ticks)\" -ge 2 ]' && echo ticks-before; \
         p=$(systemctl show -p MainPID --value $U); \
         svc > /tmp/ri.svc; pids > /tmp/ri.pids; \
         cp -p $C /tmp/ri.conf && sed -i 's/^update_initramfs=.*/update_initramfs=no/' $C \
         && grep -qx update_initramfs=no $C && echo initrd-off; \
         a=$(date +%s%N); \
         DEBIAN_FRONTEND=noninteractive apt-get install -y --reinstall --no-download \
         $A/systemd_*.deb $A/udev_*.deb > /root/reinstall.log 2>&1; echo apt=$?; \
         b=$(date +%s%N); echo $(( (b - a) / 1000000 )) >&2; \
         cp -p /tmp/ri.conf $C && cmp -s /tmp/ri.conf $C && echo conf-restored; \
         [ \"$(awk '{{print $22}}' /proc/1/stat)\" = \"$s1\" ] && echo pid1-same; \
         until_ '[ \"$(timeout 10 systemctl is-system-running 2>/dev/null)\" = running ]'; \
         timeout 10 systemctl is-system-running; \
         echo \"failed: $(systemctl list-units --state=failed --no-legend --plain \
         | awk '{{print $1}}' | paste -sd' ')\"; \
         svc | diff /tmp/ri.svc - && echo services-same; \
         [ \"$(systemctl show -p MainPID --value $U)\" = \"$p\" ] && echo tick-pid-kept; \
         t=$(( $(date +%s) + 1 )); until_ '[ \"$(ticks --since @$t)\" -ge 2 ]' \
         && echo ticks-after; \
         loginctl list-sessions --no-legend \
         | awk -v id=\"$XDG_SESSION_ID\" '$1 == id {{print \"session-listed\"}}'; \
         echo \"restarted: $(pids | join /tmp/ri.pids - | awk '$2 != $3 {{print $1}}' \
         | paste -sd' ')\"; \
         systemctl stop $U; echo stop=$?"
    );
    let out = vm.ssh(m, &script);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let init = vm.init.name();
    let diagnose = || {
        ssh_each(
            vm,
            m,
            &[&format!(
                "tail -n 30 /root/reinstall.log; systemctl --failed --no-pager 2>&1; \
                 systemctl status {TICK} systemd-journald systemd-udevd --no-pager -n 8 2>&1; \
                 journalctl -n 40 --no-pager 2>&1; true"
            )],
        )
        .join("")
    };
    let got: Vec<&str> = text.lines().collect();
    let (restarted, rest): (Vec<&str>, Vec<&str>) =
        got.iter().partition(|l| l.starts_with("restarted: "));
    let want = [
        "run=0",
        "ticks-before",
        "initrd-off",
        "apt=0",
        "conf-restored",
        "pid1-same",
        "running",
        "failed: ",
        "services-same",
        "tick-pid-kept",
        "ticks-after",
        "session-listed",
        "stop=0",
    ];
    if rest != want || restarted.len() != 1 {
        panic!(
            "{init}: apt-get install --reinstall systemd udev: got {got:?}, want {want:?} and one \
             `restarted:` line\nstderr: {stderr}\n{}",
            diagnose()
        );
    }
    if matches!(vm.init, crate::debian_support::Init::Flotilla) {
        assert!(
            reexecs() > reexecs_before,
            "flotilla: no `{REEXECUTED}` on the console after the reinstall\n{}",
            diagnose()
        );
    }
    let apt_ms = stderr
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .next_back()
        .unwrap_or_else(|| panic!("{init}: the reinstall's time: {stderr}"));
    Reinstall {
        lines: got
            .iter()
            .map(|l| format!("apt-get install --reinstall systemd udev: {l}"))
            .collect(),
        took: started.elapsed(),
        apt_ms,
    }
}
