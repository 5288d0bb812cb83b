//! Enablement as Debian does it, with the real nginx package: its
//! postinst enabled it with `deb-systemd-helper` (the link
//! `/etc/systemd/system/multi-user.target.wants/nginx.service`). Copies of
//! this machine's `/etc/systemd/system` and `/lib/systemd/system`,
//! unchanged, are the search path behind a flotilla directory that holds
//! only `multi-user.target` (a virtual unit) and masks (links to
//! `/dev/null`, which hide the copies' files as `systemctl mask` would) for
//! the other units Debian's links pull in, so that nginx is the one daemon
//! that runs. The init is PID 1 of a PID, mount and network namespace of
//! its own, with a private `/run`; the test talks to nginx through
//! `nsenter` and to the init through `systemctl` (a link to `initctl`).
//!
//! Every process the test starts carries its mark and is killed when the
//! test ends, pass or fail.

use flotilla_tests::init::{Out, TestDir};
use flotilla_tests::{bins, procs, wait_for, WAIT};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// The init, PID 1 of new PID, mount and network namespaces (`lo` up, a
/// tmpfs on `/run`); killed with everything it started on drop.
struct NsInit {
    child: Child,
    mark: String,
}

impl NsInit {
    fn start(dir: &TestDir, path: &[&Path]) -> NsInit {
        let out = std::fs::File::create(dir.join("init.out")).expect("init.out");
        let mut cmd = Command::new("unshare");
        cmd.args([
            "--pid",
            "--fork",
            "--mount-proc",
            "--kill-child",
            "--net",
            "--",
            "/bin/sh",
            "-c",
            "mount -t tmpfs tmpfs /run && ip link set lo up && exec \"$0\" \"$@\"",
        ])
        .arg(bins::init());
        for p in path {
            cmd.arg("--units").arg(p);
        }
        let child = cmd
            .arg("--control")
            .arg(dir.control())
            .args(["--target", "multi-user.target"])
            .env(procs::MARK_VAR, &dir.mark)
            .env_remove("NOTIFY_SOCKET")
            .stdin(Stdio::null())
            .stdout(out.try_clone().expect("dup"))
            .stderr(out)
            .spawn()
            .expect("unshare");
        NsInit {
            child,
            mark: dir.mark.clone(),
        }
    }

    /// The HTTP status nginx answers `/` with, if it answers.
    fn http(&self) -> Option<String> {
        let out = Command::new("nsenter")
            .arg(format!("--net=/proc/{}/ns/net", self.child.id()))
            .args([
                "--",
                "curl",
                "-s",
                "-m",
                "2",
                "-o",
                "/dev/null",
                "-w",
                "%{http_code}",
                "http://127.0.0.1/",
            ])
            .stderr(Stdio::null())
            .output()
            .ok()?;
        let code = String::from_utf8_lossy(&out.stdout).trim().to_string();
        (out.status.success() && code != "000").then_some(code)
    }

    /// nginx's master process below the init, if there is one.
    fn master(&self) -> Option<i32> {
        procs::descendants(self.child.id() as i32)
            .into_iter()
            .find(|&p| procs::cmdline(p).starts_with("nginx: master process"))
    }
}

impl Drop for NsInit {
    fn drop(&mut self) {
        procs::kill_all(&procs::descendants(self.child.id() as i32));
        let _ = self.child.kill();
        let _ = self.child.wait();
        procs::kill_marked(&self.mark);
    }
}

/// The lines of `init --check` that are errors (`FILE…: message`, not a
/// warning).
fn errors(out: &Out) -> Vec<&str> {
    out.stdout
        .lines()
        .filter(|l| l.starts_with('/') && !l.contains(": warning: "))
        .collect()
}

#[test]
fn nginx_runs_because_debian_enabled_it() {
    let dir = TestDir::new();
    let etc = dir.join("etc/systemd/system");
    let lib = dir.join("lib/systemd/system");
    std::fs::create_dir_all(dir.join("etc/systemd")).expect("etc");
    std::fs::create_dir_all(dir.join("lib/systemd")).expect("lib");
    flotilla_tests::init::copy_tree("/etc/systemd/system", &etc);
    flotilla_tests::init::copy_tree("/lib/systemd/system", &lib);
    let wants = etc.join("multi-user.target.wants/nginx.service");
    assert_eq!(
        std::fs::read_link(&wants).expect("nginx's postinst enabled it"),
        PathBuf::from("/lib/systemd/system/nginx.service")
    );
    dir.unit(
        "multi-user.target",
        "unit: multi-user.target\ntype: virtual\n",
    );
    let units = dir.units();
    let path: [&Path; 3] = [&units, &etc, &lib];
    let check = || {
        let mut args = vec!["--check".to_string()];
        for p in path {
            args.push("--units".into());
            args.push(p.display().to_string());
        }
        args.extend(["--target".into(), "multi-user.target".into()]);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        dir.run_init(&args)
    };
    // Mask what else the machine's links pull in (its other daemons,
    // Debian's getty and logind links): nginx alone runs.
    let first = check();
    let masked: Vec<String> = first
        .required("multi-user.target")
        .into_iter()
        .filter(|n| n != "nginx.service" && n != "multi-user.target")
        .collect();
    for name in &masked {
        std::os::unix::fs::symlink("/dev/null", units.join(name)).expect("mask");
    }
    let out = check();
    assert_eq!(
        out.required("multi-user.target"),
        ["multi-user.target", "nginx.service"],
        "nginx is required through its .wants/ link"
    );
    // Debian's files that flotilla cannot load (if any) stay on the path,
    // as they are: each reload below must tolerate them, unchanged.
    let unloadable = errors(&out);
    assert!(
        out.stdout
            .contains(&format!(" {} error(s), ", unloadable.len())),
        "{}",
        out.stdout
    );
    eprintln!(
        "debian path: {} file(s) flotilla cannot load: {unloadable:?}",
        unloadable.len()
    );

    let init = NsInit::start(&dir, &path);
    let code = wait_for(WAIT, "nginx answers over HTTP", || {
        init.http().filter(|c| c == "200")
    });
    assert_eq!(code, "200");
    // nginx answers once its master listens, before the init has read its
    // pidfile (its start command's exit comes after): on a loaded machine
    // the unit is still `activating` for a moment.
    wait_for(WAIT, "nginx active", || {
        let out = dir.systemctl(&["is-active", "--quiet", "nginx"]);
        (out.code == 0 && out.stdout.is_empty()).then_some(())
    });
    let out = dir.systemctl(&["is-enabled", "nginx"]);
    assert_eq!((out.code, out.stdout.as_str()), (0, "enabled\n"), "{out:?}");
    let first_master = init.master().expect("nginx's master");

    // An override drop-in: its Environment= and ExecStart= take effect at
    // daemon-reload (nginx restarts, its workers' open-files limit set).
    dir.file(
        "etc/systemd/system/nginx.service.d/override.conf",
        "[Service]\nEnvironment=FILES=4321\nExecStart=\n\
         ExecStart=/usr/sbin/nginx -g 'daemon on; master_process on; worker_rlimit_nofile ${FILES};'\n",
    );
    dir.systemctl(&["daemon-reload"]).expect(0);
    let master = wait_for(WAIT, "nginx restarted with the override", || {
        init.master().filter(|&m| {
            m != first_master && procs::cmdline(m).contains("worker_rlimit_nofile 4321;")
        })
    });
    let limits = wait_for(WAIT, "a worker with the override's limit", || {
        procs::descendants(master)
            .into_iter()
            .filter(|&p| procs::cmdline(p).starts_with("nginx: worker process"))
            .find_map(|p| std::fs::read_to_string(format!("/proc/{p}/limits")).ok())
    });
    assert!(
        limits
            .lines()
            .any(|l| l.starts_with("Max open files") && l.split_whitespace().nth(3) == Some("4321")),
        "{limits}"
    );
    wait_for(WAIT, "nginx answers again", || {
        init.http().filter(|c| c == "200")
    });

    // Bad input changes nothing: each is said, nginx keeps its process.
    let gone = etc.join("multi-user.target.wants/gone.service");
    std::os::unix::fs::symlink("/lib/systemd/system/gone.service", &gone).expect("link");
    let misspelt = dir.file(
        "etc/systemd/system/ngnix.service.d/override.conf",
        "[Service]\nEnvironment=X=1\n",
    );
    let out = dir.systemctl(&["daemon-reload"]);
    out.expect(0);
    assert!(
        out.stderr.contains(&format!(
            "{}: warning: multi-user.target wants gone.service, which is not on the unit search \
             path; shown, not started",
            gone.display()
        )),
        "{out:?}"
    );
    assert!(
        out.stderr.contains(&format!(
            "{}: warning: drop-ins for ngnix.service, which is not on the unit search path; \
             ignored",
            misspelt.parent().expect("dir").display()
        )),
        "{out:?}"
    );
    let bad = dir.file(
        "etc/systemd/system/nginx.service.d/zz-bad.conf",
        "[Service]\nRestart=sometimes\n",
    );
    let out = dir.systemctl(&["daemon-reload"]);
    out.expect(1);
    assert!(
        out.stderr
            .contains(&format!("{}:2:1: invalid Restart=sometimes", bad.display())),
        "{out:?}"
    );
    assert!(
        out.stderr.contains("1 error(s) in ") && unloadable.iter().all(|e| !out.stderr.contains(e)),
        "only the new error refuses the reload: {out:?}"
    );
    std::fs::remove_file(&bad).expect("rm");
    if let Some(m) = masked.iter().find(|n| n.ends_with(".service")) {
        let out = dir.systemctl(&["enable", m]);
        out.expect(1);
        assert!(
            out.stderr
                .contains(&format!("Failed to enable unit: Unit file {m} is masked.")),
            "{out:?}"
        );
    }
    assert_eq!(init.master(), Some(master), "nothing changed");

    // Disabled (the link removed): nginx stops, and systemctl says so.
    let out = dir.systemctl(&["disable", "nginx"]);
    out.expect(0);
    assert!(
        out.stderr
            .contains(&format!("Removed \"{}\".", wants.display())),
        "{out:?}"
    );
    // The master exits before its workers do, so the unit is settled only
    // when systemctl says `inactive` (it says `deactivating` until then).
    wait_for(WAIT, "nginx inactive", || {
        let out = dir.systemctl(&["is-active", "nginx"]);
        (out.stdout == "inactive\n").then_some(out)
    })
    .expect(3);
    assert_eq!(init.master(), None);
    assert_eq!(init.http(), None);
    let out = dir.systemctl(&["is-active", "--quiet", "nginx"]);
    assert_eq!((out.code, out.stdout.as_str()), (3, ""), "{out:?}");
    assert_eq!(
        check().required("multi-user.target"),
        ["multi-user.target"],
        "not enabled, not required"
    );

    // Enabled again: the same link as deb-systemd-helper's, and it runs.
    dir.systemctl(&["enable", "nginx"]).expect(0);
    assert_eq!(
        std::fs::read_link(&wants).expect("link"),
        lib.join("nginx.service")
    );
    wait_for(WAIT, "nginx answers after enable", || {
        init.http().filter(|c| c == "200")
    });
    dir.systemctl(&["is-active", "--quiet", "nginx"]).expect(0);
}
