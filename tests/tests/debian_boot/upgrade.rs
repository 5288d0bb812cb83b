//! Item of boot 1 (flotilla): flotilla's package upgraded over the running
//! init, as `apt-get upgrade` does it. The package the image was made with,
//! its version raised (so that dpkg runs the upgrade path: the old
//! package's files replaced, `postinst configure OLD`), installed with
//! `dpkg -i`: PID 1 is the same process (its start time), now running the
//! new file (`/proc/1/exe` no longer names a deleted one), every service
//! kept its process, the D-Bus bridge was restarted and answers, and the
//! journal still answers for a service.

use crate::debian_support::{host, Machine, Vm};
use crate::pid1_support::{bin_dir, report};
use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

/// The package `contrib/debian/build` made for the image.
fn built_package() -> PathBuf {
    let dir = bin_dir()
        .parent()
        .expect("target dir")
        .join("image-build/debian-package");
    let mut debs: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("flotilla_") && n.ends_with("_amd64.deb"))
        })
        .collect();
    assert_eq!(debs.len(), 1, "one package in {}: {debs:?}", dir.display());
    debs.remove(0)
}

/// A copy of `deb` whose version is `VERSION+upgrade1`, in `dir`.
fn newer_package(deb: &std::path::Path, dir: &std::path::Path) -> PathBuf {
    // Not `tree`: `assert_packages_intact` copies the disk's files there.
    let tree = dir.join("upgrade-package");
    let (ok, text) = host(Command::new("dpkg-deb").arg("-R").arg(deb).arg(&tree));
    assert!(ok, "dpkg-deb -R: {text}");
    let control = tree.join("DEBIAN/control");
    let old = std::fs::read_to_string(&control).expect("read control");
    let new: String = old
        .lines()
        .map(|l| match l.strip_prefix("Version: ") {
            Some(v) => format!("Version: {v}+upgrade1\n"),
            None => format!("{l}\n"),
        })
        .collect();
    assert_ne!(old, new, "no Version: line in {old}");
    std::fs::write(&control, new).expect("write control");
    let out = dir.join("flotilla-upgrade.deb");
    let (ok, text) = host(
        Command::new("dpkg-deb")
            .args(["--root-owner-group", "-Zzstd", "--build"])
            .arg(&tree)
            .arg(&out),
    );
    assert!(ok, "dpkg-deb --build: {text}");
    std::fs::remove_dir_all(&tree).expect("remove the unpacked package");
    out
}

/// What must not change across the upgrade, and what must.
const FACTS: &str = "cut -d' ' -f22 /proc/1/stat; readlink /proc/1/exe; \
    systemctl show -P MainPID ssh.service; systemctl show -P MainPID cron.service; \
    systemctl show -P MainPID systemd-journald.service; \
    initctl status flotilla-busd.service --json | grep -o '\"pid\": *[0-9]*'; \
    dpkg-query -W -f '${Version}\\n' flotilla";

/// Upgrades flotilla's package in the running guest and checks what held.
pub fn upgrade_in_place(vm: &Vm, m: &Machine, work: &std::path::Path) {
    let deb = newer_package(&built_package(), work);
    vm.copy_in(m, &[deb], "/root/upgrade");
    let before: Vec<String> = vm.ssh_ok(m, FACTS).lines().map(String::from).collect();
    assert_eq!(before.len(), 7, "{before:?}");
    // /sbin is /usr/sbin on Debian 12 (merged /usr): the kernel names the
    // file it resolved.
    assert!(
        matches!(before[1].as_str(), "/sbin/flotilla" | "/usr/sbin/flotilla"),
        "{before:?}"
    );
    let t = Instant::now();
    let out = vm.ssh_ok(m, "dpkg -i /root/upgrade/flotilla-upgrade.deb 2>&1");
    let took = t.elapsed();
    assert!(!out.contains("flotilla: initctl reexec failed"), "{out}");
    let after: Vec<String> = vm.ssh_ok(m, FACTS).lines().map(String::from).collect();
    assert_eq!(after.len(), 7, "{after:?}\ndpkg -i: {out}");
    let what = [
        "PID 1's start time",
        "PID 1's binary",
        "ssh's main PID",
        "cron's main PID",
        "journald's main PID",
    ];
    for (i, w) in what.iter().enumerate() {
        // The binary is the new file: before the re-exec the kernel would
        // name the replaced one `/sbin/flotilla (deleted)`.
        assert_eq!(
            before[i], after[i],
            "{w} changed: {before:?} -> {after:?}\n{out}"
        );
    }
    assert_ne!(
        before[5], after[5],
        "flotilla-busd not restarted: {after:?}\n{out}"
    );
    assert!(after[6].ends_with("+upgrade1"), "{after:?}");
    // The bridge answers Debian's systemctl again; the journal answers.
    let state = vm.ssh_ok(m, "systemctl is-system-running || true");
    assert!(
        matches!(state.trim(), "running" | "degraded"),
        "systemctl is-system-running after the upgrade: {state}"
    );
    vm.ssh_ok(m, "journalctl -u cron.service -n 1 --no-pager >/dev/null");
    report(&format!(
        "debian bookworm: flotilla upgraded in place (dpkg -i, re-exec, busd restarted) in {:.1} s",
        took.as_secs_f64()
    ));
}
