//! Boots the image of contrib/image in qemu (Debian's cloud kernel,
//! software emulation, serial console) with `init.target=selftest`: the
//! init mounts the API file systems, sets the hostname, reaches the target
//! (each unit's status line and the marker on the console), the selftest
//! unit prints `initctl status` and the marker's log as the log writer
//! wrote it to /var/log/init/ (the marker ran before /var was mounted: its
//! lines waited in the init's memory) and re-executes the init (`initctl
//! reexec`: the web server keeps its PID), then powers off through the whole
//! shutdown sequence. The test asserts the order of the console lines and that qemu
//! exited because the machine powered off (`reboot: Power down`, no
//! `Kernel panic`), not by time-out. scripts/test installs qemu, the
//! kernel, busybox-static, cpio and the musl target.

use crate::pid1_support;

use pid1_support::{bin_dir, workspace, Lines};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// qemu, killed by PID on drop (the run script execs qemu, `timeout`
/// forwards SIGTERM to it).
struct Qemu(Child);

impl Drop for Qemu {
    fn drop(&mut self) {
        // SAFETY: kill(2) on our own child's PID.
        unsafe { libc::kill(self.0.id() as i32, libc::SIGTERM) };
        let _ = self.0.wait();
    }
}

/// The UUID the VM's firmware is given.
const VM_UUID: &str = "5c0ffee0-1dea-4b0b-9a11-f1071a000001";

fn ms(d: Duration) -> u128 {
    d.as_millis()
}

#[test]
fn the_image_boots_reaches_its_target_and_powers_off() {
    // One VM or whole system at a time in this binary (`heavy`).
    let _heavy = flotilla_tests::heavy();
    let dir = tempfile::Builder::new()
        .prefix("flotilla-vm-")
        .tempdir()
        .unwrap();
    let img = dir.path().join("initramfs.cpio.gz");
    // A target dir of its own: the musl build must not wait for the lock
    // of the build that runs this test.
    let target = bin_dir().parent().unwrap().join("image-build");
    let t = Instant::now();
    let st = Command::new(workspace().join("contrib/image/build"))
        .arg("--out")
        .arg(&img)
        .env("CARGO_TARGET_DIR", &target)
        .status()
        .expect("run contrib/image/build");
    assert!(st.success(), "contrib/image/build failed");
    pid1_support::report(&format!("vm: image built in {} ms", ms(t.elapsed())));

    let limit = 120;
    let start = Instant::now();
    let mut child = Command::new("timeout")
        .args(["-k", "5", &limit.to_string()])
        .arg(workspace().join("contrib/image/run"))
        .arg("--initrd")
        .arg(&img)
        .args(["--uuid", VM_UUID, "--", "init.target=selftest"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("run qemu");
    let out = Lines::follow(child.stdout.take().unwrap(), "  vm| ");
    let mut qemu = Qemu(child);
    let status = pid1_support::wait_for(Duration::from_secs(limit + 10), "qemu to exit", || {
        qemu.0.try_wait().unwrap()
    });
    let total = start.elapsed();
    // Let the reader thread take the last bytes: the pipe is at EOF now.
    out.wait("reboot: Power down", Duration::from_secs(5));
    let all = out.all();
    assert_ne!(status.code(), Some(124), "qemu was stopped by the time-out");
    assert!(status.success(), "qemu: {status:?}");
    assert!(
        !all.iter().any(|l| l.contains("Kernel panic")),
        "the kernel panicked"
    );
    for bad in ["[FAILED]", "EMERGENCY", "internal error", "init: mount "] {
        assert!(
            !all.iter().any(|l| l.contains(bad)),
            "{bad:?} on the console"
        );
    }
    out.assert_order(&[
        "Run /sbin/init as init process",
        "as PID 1 on a machine: the initial PID namespace",
        "init: mounted /proc (proc)",
        "init: mounted /sys (sysfs)",
        "init: mounted /sys/fs/cgroup (cgroup2)",
        "init: mounted /dev (devtmpfs)",
        "init: mounted /dev/pts (devpts)",
        "init: mounted /dev/shm (tmpfs)",
        "init: mounted /run (tmpfs)",
        "init: hostname flotilla-vm",
        "init: target selftest, units /etc/init/units",
        "[  OK  ] started loopback",
        "[  OK  ] started web",
        "[  OK  ] started default",
        "flotilla-image: web says: <h1>flotilla</h1>",
        "Target:   selftest",
        "Init:     PID 1",
        "[  OK  ] started selftest",
        "init: requested: stopping every unit (poweroff)",
        "[  OK  ] stopped default",
        "[  OK  ] stopped web",
        "[  OK  ] stopped loopback",
        "init: every unit stopped",
        "init: syncing file systems",
        "init: unmounted /run",
        "init: powering off",
        "reboot: Power down",
    ]);
    // The image has no /etc/machine-id: a first boot, whose ID is the
    // firmware's UUID (qemu's -uuid), as under systemd.
    out.assert_order(&[
        "init: mounted /run (tmpfs)",
        &format!(
            "init: machine ID {} (the virtual machine's UUID): transient, /run/machine-id bound over /etc/machine-id",
            VM_UUID.replace('-', "")
        ),
        "init: target selftest, units /etc/init/units",
    ]);
    out.assert_order(&[
        "flotilla-image: marker unit ran on flotilla-vm",
        "[  OK  ] started marker",
        "[  OK  ] started default",
    ]);
    // The early boot's lines reach /var/log/init/ once /var is writable.
    out.assert_order(&[
        "[  OK  ] started marker",
        "[  OK  ] started var",
        "[  OK  ] started flotilla-logd",
        "flotilla-image: /var/log/init/marker.log: ",
        "[  OK  ] started selftest",
    ]);
    let file: Vec<&String> = all
        .iter()
        .filter(|l| l.contains("flotilla-image: /var/log/init/marker.log: "))
        .collect();
    assert!(
        file.iter()
            .any(|l| l.contains(" stdout marker: hello from the early boot")),
        "the marker's line in its log file: {file:?}"
    );
    assert!(
        file.iter().any(|l| l.contains(" init -- log ")),
        "the file's header: {file:?}"
    );
    // The re-exec: PID 1 ran its binary again while the selftest ran, and
    // the web server kept its PID.
    out.assert_order(&[
        "[  OK  ] started default",
        "init: re-executing",
        "init: re-executed: target selftest",
        "re-executed /sbin/init",
        "flotilla-image: web pid",
        "[  OK  ] started selftest",
    ]);
    let pids: Vec<&str> = all
        .iter()
        .find(|l| l.contains("flotilla-image: web pid"))
        .map(|l| {
            l.split_whitespace()
                .filter(|w| w.parse::<u32>().is_ok())
                .collect()
        })
        .unwrap_or_default();
    assert!(
        pids.len() == 2 && pids[0] == pids[1],
        "web's PID before and after the re-exec: {pids:?}"
    );
    // systemd's layout: PID 1 in /init.scope, its units below the root,
    // and both where they were after the re-exec.
    for when in ["before", "after"] {
        let line = format!(
            "flotilla-image: cgroups {when} the re-exec: init /init.scope web /system.slice/web "
        );
        assert!(
            all.iter().any(|l| l.contains(&line)),
            "no {line:?}: {:?}",
            all.iter()
                .filter(|l| l.contains("cgroups"))
                .collect::<Vec<_>>()
        );
    }
    // The status table, as initctl printed it inside the VM.
    for (unit, state) in [
        ("default", "running"),
        ("loopback", "exited"),
        ("marker", "exited"),
        ("web", "running"),
        ("var", "exited"),
        ("flotilla-logd", "running"),
        ("selftest", "starting"),
    ] {
        assert!(
            all.iter().any(|l| {
                let w: Vec<&str> = l.split_whitespace().collect();
                w.first() == Some(&unit) && w.get(2) == Some(&state)
            }),
            "no status row `{unit} ... {state}`"
        );
    }

    let at = |s: &str| out.time_of(s).unwrap_or_else(|| panic!("no {s:?}"));
    let kernel = at("Run /sbin/init as init process") - start;
    let to_target = at("[  OK  ] started default") - at("init: flotilla");
    let to_selftest = at("[  OK  ] started selftest") - at("init: flotilla");
    let shutdown = at("reboot: Power down") - at("init: requested: stopping every unit");
    pid1_support::report(&format!(
        "vm: qemu start to /sbin/init {} ms; init start to target default {} ms \
         (selftest {} ms); poweroff request to power down {} ms; qemu total {} ms",
        ms(kernel),
        ms(to_target),
        ms(to_selftest),
        ms(shutdown),
        ms(total)
    ));
}
