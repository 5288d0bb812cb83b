//! System tests of path units through the real `init` and `initctl`
//! binaries (harness: `tests/src/`): `.path` files beside their services
//! in the units directory, the paths watched by inotify in the loop. Each
//! service is a oneshot that appends a line to a file of the test and
//! takes away what fired it, so that a level kind waits again.

use flotilla_tests::init::TestDir;
use flotilla_tests::{wait_for, WAIT};
use flotilla_units::state::UnitState;

/// `NAME.path` with `keys`, and `NAME.service`, a oneshot running `sh`
/// `script` then appending NAME to `ran`.
fn path_unit(dir: &TestDir, name: &str, keys: &str, script: &str) {
    let ran = dir.join("ran");
    dir.file(&format!("units/{name}.path"), &format!("[Path]\n{keys}"));
    dir.file(
        &format!("units/{name}.service"),
        &format!(
            "[Service]\nType=oneshot\nExecStart=/bin/sh -c '{script}; echo {name} >> {}'\n",
            ran.display()
        ),
    );
}

fn ran(dir: &TestDir, name: &str) -> usize {
    if !dir.join("ran").exists() {
        return 0;
    }
    dir.lines("ran").iter().filter(|l| *l == name).count()
}

#[test]
fn path_units_fire_their_services_on_what_they_watch() {
    let dir = TestDir::new();
    let w = dir.join("w");
    std::fs::create_dir(&w).expect("mkdir");
    let flag = w.join("deep/er/flag");
    path_unit(
        &dir,
        "exists",
        &format!("PathExists={}\n", flag.display()),
        &format!("rm {}", flag.display()),
    );
    let conf = w.join("app.conf");
    std::fs::write(&conf, "a=1\n").expect("conf");
    path_unit(
        &dir,
        "changed",
        &format!("PathChanged={}\n", conf.display()),
        "true",
    );
    let spool = w.join("spool");
    path_unit(
        &dir,
        "spool",
        &format!(
            "DirectoryNotEmpty={}\nMakeDirectory=yes\nDirectoryMode=0700\n",
            spool.display()
        ),
        &format!("rm -f {}/*", spool.display()),
    );
    path_unit(
        &dir,
        "glob",
        &format!("PathExistsGlob={}/*.job\n", w.display()),
        &format!("rm -f {}/*.job", w.display()),
    );
    dir.unit(
        "default",
        "unit: default\ntype: virtual\n\
         depends-on: [exists.path, changed.path, spool.path, glob.path]\n",
    );
    let init = dir.start("default");
    for p in ["exists.path", "changed.path", "spool.path", "glob.path"] {
        let u = init.wait_state(p, UnitState::Running);
        assert_eq!(u.status, "waiting", "{p}");
    }
    // MakeDirectory= made the spool, with its mode.
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&spool)
        .expect("spool")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o700);
    assert_eq!(init.unit("exists.service").state, UnitState::Disabled);

    // A path made below directories that did not exist yet.
    std::fs::create_dir_all(flag.parent().expect("dir")).expect("mkdir");
    std::fs::write(&flag, "").expect("flag");
    wait_for(WAIT, "exists.service to run", || {
        (ran(&dir, "exists") == 1).then_some(())
    });
    // Settled and waiting again: the next flag fires it again.
    init.wait_state("exists.service", UnitState::Disabled);
    init.wait_unit("exists.path", "waiting again", |u| u.status == "waiting");
    std::fs::write(&flag, "").expect("flag");
    wait_for(WAIT, "exists.service to run again", || {
        (ran(&dir, "exists") == 2).then_some(())
    });

    assert_eq!(ran(&dir, "changed"), 0, "nothing changed yet");
    std::fs::write(&conf, "a=2\n").expect("conf");
    wait_for(WAIT, "changed.service to run", || {
        (ran(&dir, "changed") >= 1).then_some(())
    });

    std::fs::write(spool.join("mail"), "x").expect("spool file");
    wait_for(WAIT, "spool.service to run", || {
        (ran(&dir, "spool") == 1).then_some(())
    });

    std::fs::write(w.join("one.txt"), "").expect("txt");
    std::fs::write(w.join("a.job"), "").expect("job");
    wait_for(WAIT, "glob.service to run", || {
        (ran(&dir, "glob") == 1).then_some(())
    });
    assert!(w.join("one.txt").exists());
}

/// A path that holds when the path unit starts fires it at once.
#[test]
fn a_path_that_exists_at_start_fires_at_once() {
    let dir = TestDir::new();
    let flag = dir.join("flag");
    std::fs::write(&flag, "").expect("flag");
    path_unit(
        &dir,
        "early",
        &format!("PathExists={}\n", flag.display()),
        &format!("rm {}", flag.display()),
    );
    let init = dir.start("early.path");
    wait_for(WAIT, "early.service to run", || {
        (ran(&dir, "early") == 1).then_some(())
    });
    init.wait_state("early.service", UnitState::Disabled);
    assert_eq!(init.unit("early.path").state, UnitState::Running);
}

/// After `initctl reexec` a path unit watches its paths again.
#[test]
fn a_path_unit_watches_again_after_a_reexec() {
    let dir = TestDir::new();
    let flag = dir.join("flag");
    path_unit(
        &dir,
        "after",
        &format!("PathExists={}\n", flag.display()),
        &format!("rm {}", flag.display()),
    );
    let copy = dir.init_copy();
    let init = dir.init().target("after.path").binary(copy).start();
    init.wait_state("after.path", UnitState::Running);
    init.ctl(&["reexec"]).expect(0);
    std::fs::write(&flag, "").expect("flag");
    wait_for(WAIT, "after.service to run", || {
        (ran(&dir, "after") == 1).then_some(())
    });
}

/// The service a path unit started is told which path unit and which
/// path fired it (`TRIGGER_UNIT`, `TRIGGER_PATH`: systemd's; for a glob
/// the first match), in every command, as systemd's `testsuite-63`'s
/// service checks in its `ExecStartPre=`; `initctl status` shows the
/// same as `activation` while the service remains (held up by the path
/// unit, which does not fire it again meanwhile), and not once the path
/// unit, and with it the service, is stopped.
#[test]
fn a_path_units_service_is_told_the_trigger_and_the_path() {
    let dir = TestDir::new();
    let w = dir.join("w");
    std::fs::create_dir(&w).expect("mkdir");
    let told = dir.join("told");
    dir.file(
        "units/seen.path",
        &format!("[Path]\nPathExistsGlob={}/seen-*\n", w.display()),
    );
    dir.file(
        "units/seen.service",
        &format!(
            "[Service]\nType=oneshot\nRemainAfterExit=yes\n\
             ExecStartPre=/bin/sh -c 'echo \"pre $TRIGGER_UNIT $TRIGGER_PATH\" >> {t}'\n\
             ExecStart=/bin/sh -c 'echo \"main $TRIGGER_UNIT $TRIGGER_PATH\" >> {t}'\n",
            t = told.display()
        ),
    );
    let init = dir.start("seen.path");
    init.wait_unit("seen.path", "waiting", |u| u.status == "waiting");
    std::fs::write(w.join("seen-foo"), "").expect("file");
    std::fs::write(w.join("seen-zzz"), "").expect("file");
    init.wait_state("seen.service", UnitState::Exited);
    let first = w.join("seen-foo");
    assert_eq!(
        dir.lines("told"),
        [
            format!("pre seen.path {}", first.display()),
            format!("main seen.path {}", first.display()),
        ]
    );
    let pairs = |list: &[(&str, String)]| -> Vec<(String, String)> {
        list.iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect()
    };
    assert_eq!(
        init.unit("seen.service").activation,
        pairs(&[
            ("trigger_unit", "seen.path".into()),
            ("trigger_path", first.display().to_string()),
        ])
    );
    // It remains: the path unit does not fire it again meanwhile.
    std::fs::write(w.join("seen-again"), "").expect("file");
    init.wait_unit("seen.path", "its event seen", |u| {
        u.state == UnitState::Running
    });
    assert_eq!(dir.lines("told").len(), 2, "fired once");
    init.ctl(&["stop", "seen.path"]).expect(0);
    init.wait_state("seen.service", UnitState::Disabled);
    assert_eq!(init.unit("seen.service").activation, pairs(&[]));
}
