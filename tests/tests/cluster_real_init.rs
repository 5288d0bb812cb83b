//! clusterd with the real init in supervisor mode (one per machine) on one
//! real etcd: a fleet unit really runs, survives a clusterd SIGKILL with
//! the same PID, stops on `loaded`, is destroyed, and moves to the other
//! machine when its machine is lost.

mod cluster_support;

use cluster_support::etcd::Etcd;
use cluster_support::*;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

const JSON: Option<&str> = Some("application/json");

/// The real init in supervisor mode, stopped (SIGTERM, then SIGKILL) on drop.
struct Init {
    child: Option<Child>,
    control: PathBuf,
}

impl Init {
    fn start(dir: &Path, name: &str) -> Init {
        let units = dir.join(format!("{name}-units"));
        std::fs::create_dir_all(&units).unwrap();
        std::fs::write(
            units.join("default.yaml"),
            "unit: default\ntype: virtual\nprovides: default\nwaits-for: cluster\n",
        )
        .unwrap();
        let control = dir.join(format!("{name}.control.sock"));
        let log = std::fs::File::create(dir.join(format!("{name}.init.log"))).unwrap();
        let child = Command::new(bin("init", "flotilla-init"))
            .arg("--units")
            .arg(&units)
            .arg("--control")
            .arg(&control)
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("start init");
        let c = control.clone();
        wait_for(Duration::from_secs(10), "init control socket", || {
            c.exists().then_some(())
        });
        Init {
            child: Some(child),
            control,
        }
    }

    fn stop(&mut self) {
        if let Some(mut c) = self.child.take() {
            // SAFETY: plain kill(2) on our own child's PID.
            unsafe { libc::kill(c.id() as i32, libc::SIGTERM) };
            let deadline = std::time::Instant::now() + Duration::from_secs(10);
            while std::time::Instant::now() < deadline {
                if let Ok(Some(_)) = c.try_wait() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for Init {
    fn drop(&mut self) {
        self.stop();
    }
}

fn pid_alive(pid: i32) -> bool {
    // SAFETY: signal 0 only checks for existence.
    pid > 0 && unsafe { libc::kill(pid, 0) } == 0
}

fn read_pid(p: &Path) -> Option<i32> {
    std::fs::read_to_string(p).ok()?.trim().parse().ok()
}

#[test]
fn fleet_units_run_under_the_real_init() {
    let etcd = Etcd::start();
    let dir = tempdir();
    let mut init_a = Init::start(dir.path(), "a");
    let mut init_b = Init::start(dir.path(), "b");
    let mut cd_a = Clusterd::start(
        &etcd.url(),
        dir.path(),
        "aaaaaaaa0001",
        "",
        &init_a.control,
        "2s",
    );
    let mut cd_b = Clusterd::start(
        &etcd.url(),
        dir.path(),
        "bbbbbbbb0002",
        "",
        &init_b.control,
        "2s",
    );
    cd_a.wait_api();
    let s = cd_a.sock.clone();
    let req = |m: &str, p: &str, b: Option<&str>| {
        http_unix(&s, m, p, if b.is_some() { JSON } else { None }, b)
    };
    wait_for(Duration::from_secs(10), "two machines", || {
        (json(&req("GET", "/fleet/v1/machines", None).1)["machines"]
            .as_array()?
            .len()
            == 2)
            .then_some(())
    });

    // A unit that writes its PID, pinned to machine b.
    let pidfile = dir.path().join("work.pid");
    let exec = format!(
        "/bin/sh -c 'echo $$$$ > {}; exec sleep 120'",
        pidfile.display()
    );
    let body = unit_body("launched", &exec, &[("MachineID", "bbbbbbbb")]);
    assert_eq!(
        req("PUT", "/fleet/v1/units/work.service", Some(&body)).0,
        201
    );
    wait_for(Duration::from_secs(15), "work.service active on b", || {
        let (c, b) = req("GET", "/fleet/v1/state/work.service", None);
        let v = json(&b);
        (c == 200 && v["systemdActiveState"] == "active" && v["machineID"] == "bbbbbbbb0002")
            .then_some(())
    });
    let pid = wait_for(Duration::from_secs(5), "pid file", || read_pid(&pidfile));
    assert!(pid_alive(pid));

    // clusterd SIGKILL and restart: the process is untouched.
    cd_b.kill();
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        pid_alive(pid),
        "the unit keeps running while clusterd is down"
    );
    cd_b.restart();
    std::thread::sleep(Duration::from_secs(1));
    assert_eq!(read_pid(&pidfile), Some(pid));
    assert!(
        pid_alive(pid),
        "a restarted clusterd must not restart its units"
    );

    // stop: loaded, the process ends; start again: a new process.
    assert_eq!(
        req(
            "PUT",
            "/fleet/v1/units/work.service",
            Some(r#"{"desiredState":"loaded"}"#)
        )
        .0,
        204
    );
    wait_for(Duration::from_secs(15), "stopped", || {
        (!pid_alive(pid)).then_some(())
    });
    wait_for(Duration::from_secs(10), "state inactive", || {
        let v = json(&req("GET", "/fleet/v1/state/work.service", None).1);
        (v["systemdActiveState"] == "inactive" && v["systemdLoadState"] == "loaded").then_some(())
    });

    // A floating unit, and machine loss: b's init and clusterd go away.
    let pidfile2 = dir.path().join("float.pid");
    let exec2 = format!(
        "/bin/sh -c 'echo $$$$ >> {}; exec sleep 120'",
        pidfile2.display()
    );
    let body2 = unit_body("launched", &exec2, &[("MachineMetadata", "any=thing")]);
    assert_eq!(
        req("PUT", "/fleet/v1/units/float.service", Some(&body2)).0,
        201
    );
    // Nothing has that metadata yet: give it to b through the API.
    let patch = r#"[{"op":"add","path":"/bbbbbbbb0002/metadata/any","value":{"value":"thing"}},{"op":"add","path":"/aaaaaaaa0001/metadata/any","value":{"value":"thing"}}]"#;
    assert_eq!(req("PATCH", "/fleet/v1/machines", Some(patch)).0, 204);
    let first = wait_for(Duration::from_secs(15), "float launched", || {
        let u = json(&req("GET", "/fleet/v1/units/float.service", None).1);
        (u["currentState"] == "launched")
            .then(|| u["machineID"].as_str().map(str::to_string))
            .flatten()
    });
    let (lost_init, lost_cd) = if first == "bbbbbbbb0002" {
        (&mut init_b, &mut cd_b)
    } else {
        (&mut init_a, &mut cd_a)
    };
    lost_cd.kill();
    lost_init.stop();
    let api = if first == "bbbbbbbb0002" {
        cd_a.sock.clone()
    } else {
        cd_b.sock.clone()
    };
    let t0 = std::time::Instant::now();
    wait_for(
        Duration::from_secs(4) + Duration::from_secs(4),
        "float moved",
        || {
            let u = json(&http_unix(&api, "GET", "/fleet/v1/units/float.service", None, None).1);
            (u["currentState"] == "launched" && u["machineID"] != first.as_str()).then_some(())
        },
    );
    eprintln!("float.service moved after {:?}", t0.elapsed());
    let pids: Vec<i32> = std::fs::read_to_string(&pidfile2)
        .unwrap()
        .lines()
        .filter_map(|l| l.parse().ok())
        .collect();
    assert_eq!(
        pids.iter().filter(|p| pid_alive(**p)).count(),
        1,
        "exactly one copy runs"
    );

    // destroy: the process ends.
    let last = *pids.last().unwrap();
    assert_eq!(
        http_unix(&api, "DELETE", "/fleet/v1/units/float.service", None, None).0,
        204
    );
    wait_for(Duration::from_secs(15), "destroyed unit stopped", || {
        (!pid_alive(last)).then_some(())
    });
}
