//! The unit loader as the init runs it (`init/src/loader.rs`,
//! docs/pid1.md "Loading the units"): the real binary started as
//! `init --load-units JOB` with its standard output on a memory file, as
//! the init starts it, and what the init reads back compared with the same
//! load in process. Each child is waited for by its PID.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use flotilla_init::loader::{self, Job, Output};
use flotilla_init::sys::real::RealSys;
use flotilla_init::sys::Sys;
use flotilla_init::unitdir;
use flotilla_systemd::load::LoadedPath;
use flotilla_units::spec::Words;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn repo(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(p)
}

/// Runs the loader for `job` and returns what the init reads back, with
/// what the child printed on its standard error. With `job.watch`, its
/// standard input is the watch `watch`, as the init hands it over.
fn run(job: &Job, watch: Option<&OwnedFd>) -> (Result<LoadedPath, String>, String) {
    let out = Output::new().unwrap();
    let json = serde_json::to_string(job).unwrap();
    let stdin = match watch {
        Some(fd) => Stdio::from(fd.try_clone().unwrap()),
        None => Stdio::null(),
    };
    let child = Command::new(env!("CARGO_BIN_EXE_init"))
        .args([loader::RUN_FLAG, &json])
        .stdin(stdin)
        .stdout(out.try_clone_file().unwrap())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // wait_with_output waits for this child's PID only.
    let done = child.wait_with_output().unwrap();
    assert!(done.status.success(), "{:?}", done.status);
    (
        out.read(),
        String::from_utf8_lossy(&done.stderr).into_owned(),
    )
}

/// The built-in writer's program is `flotilla-logd` beside the loading
/// process's own binary when one is there (`logwriter.rs`): beside the
/// init in the child, beside this test's binary in process, so where the
/// two differ depends on what the build made. Everything else must be the
/// same, so the program is compared by its name.
fn writer_by_name(loaded: &mut LoadedPath) {
    for (u, _) in &mut loaded.units {
        if u.name != "flotilla-logd" {
            continue;
        }
        if let Some(c) = u.exec_start.as_mut() {
            let mut argv = c.argv.to_vec();
            let program = argv.first_mut().unwrap();
            *program = Path::new(program.as_str())
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned();
            c.argv = Words::new(argv);
        }
    }
}

#[test]
fn the_child_hands_over_what_the_init_would_load() {
    let dirs = [
        repo("contrib/debian/tree/etc/init/units"),
        repo("init/tests/fixtures/unitdir-mixed"),
        repo("systemd/tests/fixtures/systemd"),
    ];
    // The manager's settings are read below the job's root, in the child.
    let root = std::env::temp_dir().join(format!("flotilla-loader-conf-{}", std::process::id()));
    let dropins = root.join("run/systemd/system.conf.d");
    std::fs::create_dir_all(&dropins).unwrap();
    std::fs::write(
        dropins.join("rlimits.conf"),
        "[Manager]\nDefaultLimitNOFILE=10000:16384\n",
    )
    .unwrap();
    let job = Job {
        path: dirs.to_vec(),
        sysv_dir: None,
        log_dir: Some(PathBuf::from("/var/log/units")),
        control: PathBuf::from("/run/init/control.sock"),
        systemd_bus: false,
        named: vec!["web@x.service".to_string()],
        systemd_bus_asked: false,
        target: "default".to_string(),
        // The command after `--` is a unit of the loaded set.
        cmd: Some(flotilla_init::settings::CmdLine {
            argv: vec!["app".to_string()],
            cwd: None,
        }),
        system_conf: Some(root.clone()),
        watch: true,
    };
    let sys = RealSys::new();
    let watch = sys.path_stamp_instance().unwrap();
    let (back, stderr) = run(&job, Some(&watch));
    let mut back = back.unwrap();
    // The child added every directory it listed to the init's watch.
    assert!(back.stamp.watched);
    assert!(!sys.path_stamp_changed(watch.as_fd()), "the load itself");
    let mine = sys.path_stamp_instance().unwrap();
    let mut here =
        unitdir::load_units_watched(&sys, &job.settings(), &job.named, Some(mine.as_fd())).unwrap();
    writer_by_name(&mut back);
    writer_by_name(&mut here);
    // The child hands over what it saw, taken at its own time.
    assert!(!back.stamp.dirs.is_empty());
    assert!(back.stamp.taken_at_us > 0 && here.stamp.taken_at_us >= back.stamp.taken_at_us);
    here.stamp.taken_at_us = back.stamp.taken_at_us;
    assert_eq!(back, here);
    assert!(back.units.iter().any(|(u, _)| u.name == "web@x.service"));
    assert!(back.units.iter().any(|(u, _)| u.name == "flotilla-logd"));
    assert!(back.units.iter().any(|(u, _)| u.name == "cmd"));
    let nofile = flotilla_units::context::limits::Rlimit::Nofile;
    let got = back
        .manager
        .default_limits
        .get(&nofile)
        .map(|v| (v.soft, v.hard));
    assert_eq!(got, Some((10000, 16384)));
    assert_eq!(stderr, "");
    std::fs::write(dropins.join("more.conf"), "[Manager]\n").unwrap();
    assert!(
        sys.path_stamp_changed(watch.as_fd()),
        "a drop-in written since"
    );
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn a_search_path_that_cannot_be_read_is_the_loads_error() {
    let job = Job {
        path: vec![PathBuf::from("/nonexistent/flotilla/units")],
        sysv_dir: None,
        log_dir: None,
        control: PathBuf::from("/run/init/control.sock"),
        systemd_bus: false,
        named: Vec::new(),
        systemd_bus_asked: false,
        target: String::new(),
        cmd: None,
        system_conf: None,
        watch: false,
    };
    let (back, _) = run(&job, None);
    let e = back.unwrap_err();
    assert!(e.contains("/nonexistent/flotilla/units"), "{e}");
}

#[test]
fn a_bad_job_is_refused() {
    let out = Output::new().unwrap();
    let done = Command::new(env!("CARGO_BIN_EXE_init"))
        .args([loader::RUN_FLAG, "{not json"])
        .stdout(out.try_clone_file().unwrap())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert_eq!(done.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&done.stderr).contains("bad job"));
    assert_eq!(out.read(), Err("the loader wrote nothing".to_string()));
}
