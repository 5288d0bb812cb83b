//! Boots `init/examples/vm_context.rs`, built static (musl), as PID 1 of a
//! qemu VM (Debian's cloud kernel, software emulation): there, with
//! cgroup2 and every controller, it checks the cgroup limits of a unit
//! (`MemoryMax=` OOM-kills, `TasksMax=` stops forks, `CPUQuota=` throttles,
//! the files hold what the keys say), a kill that takes a unit's orphans,
//! and a sandboxed child of the static build (its seccomp filter, bounding
//! set, mount namespace, cgroup). The hosts the suite runs on have a
//! hybrid hierarchy whose cgroup2 has no controllers, hence the VM. Each
//! check prints a `vm-context: ok` line; the test wants them all and no
//! `FAIL`. scripts/test installs qemu, the kernel, cpio and the musl
//! target.

use crate::pid1_support;

use pid1_support::{bin_dir, workspace, Lines};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// qemu, killed by PID on drop.
struct Qemu(Child);

impl Drop for Qemu {
    fn drop(&mut self) {
        // SAFETY: kill(2) on our own child's PID.
        unsafe { libc::kill(self.0.id() as i32, libc::SIGTERM) };
        let _ = self.0.wait();
    }
}

/// Builds the program for musl and packs it as `/init` of an initramfs.
fn initramfs(dir: &std::path::Path) -> std::path::PathBuf {
    let target = bin_dir().parent().unwrap().join("vm-context-build");
    let st = Command::new("cargo")
        .current_dir(workspace())
        .args([
            "build",
            "--locked",
            "--quiet",
            "--target",
            "x86_64-unknown-linux-musl",
        ])
        .args(["-p", "flotilla-init", "--example", "vm_context"])
        .env("CARGO_TARGET_DIR", &target)
        .status()
        .expect("run cargo");
    assert!(st.success(), "building vm_context for musl failed");
    let prog = target.join("x86_64-unknown-linux-musl/debug/examples/vm_context");
    let stage = dir.join("stage");
    for d in ["dev", "proc", "sys", "run", "tmp"] {
        std::fs::create_dir_all(stage.join(d)).unwrap();
    }
    std::fs::copy(&prog, stage.join("init")).unwrap();
    let st = Command::new("mknod")
        .args(["-m", "600"])
        .arg(stage.join("dev/console"))
        .args(["c", "5", "1"])
        .status()
        .unwrap();
    assert!(st.success(), "mknod /dev/console");
    let img = dir.join("initramfs.cpio.gz");
    let st = Command::new("sh")
        .arg("-c")
        .arg("find . -mindepth 1 | LC_ALL=C sort | cpio --quiet -o -H newc -R 0:0 | gzip -1 > \"$1\"")
        .arg("sh")
        .arg(&img)
        .current_dir(&stage)
        .status()
        .unwrap();
    assert!(st.success(), "cpio");
    img
}

#[test]
fn cgroup_limits_and_the_sandbox_in_a_vm() {
    // One VM or whole system at a time in this binary (`heavy`).
    let _heavy = flotilla_tests::heavy();
    let dir = tempfile::Builder::new()
        .prefix("flotilla-vm-context-")
        .tempdir()
        .unwrap();
    let t = Instant::now();
    let img = initramfs(dir.path());
    pid1_support::report(&format!(
        "vm-context: image built in {} ms",
        t.elapsed().as_millis()
    ));
    let limit = 240;
    let mut child = Command::new("timeout")
        .args(["-k", "5", &limit.to_string()])
        .arg(workspace().join("contrib/image/run"))
        .arg("--initrd")
        .arg(&img)
        .args(["--", "rdinit=/init"])
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
    out.wait("reboot: Power down", Duration::from_secs(5));
    let all = out.all();
    assert_ne!(status.code(), Some(124), "qemu was stopped by the time-out");
    let fails: Vec<&String> = all
        .iter()
        .filter(|l| l.contains("vm-context: FAIL"))
        .collect();
    assert!(fails.is_empty(), "{fails:#?}");
    for want in [
        "ok LimitNOFILE=infinity: the unit's limit is fs.nr_open (1048576): exited with status 0",
        "ok PID 1's units go below the root cgroup",
        "ok the kernel has cgroup.kill",
        "ok memory.max is 33554432",
        "ok memory.high is 25165824",
        "ok cpu.weight is 50",
        "ok cpu.max is 20000 100000",
        "ok pids.max is 8",
        "ok io.weight is",
        "ok MemoryMax=32M: allocating 64 MiB killed by SIGKILL",
        "ok MemoryMax=32M: allocating 8 MiB exited with status 0",
        "ok TasksMax=8: forked exited with status 7",
        "ok cgroup.kill took the 7 orphans",
        "ok Delegate=pids memory: the unit's cgroup offers",
        "ok Delegate=: the cgroup and its three files belong to the unit's user",
        "ok Delegate=: a cgroup below the unit's has pids.max \"max\"",
        "ok the delegated subtree is removed with the unit's cgroup",
        "ok Slice=system-foo-bar.slice: the cgroup is /sys/fs/cgroup/system.slice/system-foo.slice/system-foo-bar.slice/acct.service",
        "ok IOAccounting=yes: the unit's cgroup offers",
        "ok the empty slices are gone, io stays on for limits.service",
        "ok CPUQuota=20%",
        "ok stats",
        "ok Seccomp:",
        "ok NoNewPrivs:",
        "ok CapBnd:",
        "ok the sandboxed child has its own mount namespace",
        "ok ProtectSystem=strict: / is read-only in it",
        "ok born in its cgroup",
        "ok the sandboxed child killed by SIGKILL",
        "ok no unit left: the root's subtree_control is \"\", system.slice gone",
        "vm-context: done",
    ] {
        assert!(
            all.iter().any(|l| l.contains(want)),
            "no {want:?} on the console"
        );
    }
    assert!(
        all.iter().any(|l| l.contains("reboot: Power down")),
        "no power-off"
    );
    let cpu = all
        .iter()
        .find(|l| l.contains("CPUQuota=20%"))
        .cloned()
        .unwrap_or_default();
    pid1_support::report(&format!("vm-context: {}", cpu.trim()));
}
