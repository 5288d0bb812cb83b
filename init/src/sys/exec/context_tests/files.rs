//! The file half of the context tests: a unit's directories and output
//! files, made and opened by its own process after the spawn has handed it
//! off (`dirs.rs`, `spawn/child.rs`), and what a failure of either gives.

use std::io::Read;
use std::os::fd::AsFd;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use super::{argv, child_context, ctx, env, pipe, run};
use crate::sys::dirs;
use crate::sys::real::RealSys;
use crate::sys::tests::{process_lock, wait_for};
use crate::sys::*;

#[test]
fn directories_are_made_by_the_child_with_owner_mode_and_environment() {
    let _g = process_lock();
    let name = format!("flotilla-ctx-test-{}", std::process::id());
    let c = ctx(&[
        ("RuntimeDirectory", &format!("{name} {name}/sub")),
        ("RuntimeDirectoryMode", "0750"),
        ("StateDirectory", &format!("{name}/deep/er")),
    ]);
    let cc = child_context(
        &c,
        &context::Params {
            owner: Some((65534, 65534)),
            ..Default::default()
        },
    );
    assert!(cc.detaches());
    assert_eq!(
        dirs::environment(&c.directories),
        [
            ("RUNTIME_DIRECTORY", format!("/run/{name}:/run/{name}/sub")),
            ("STATE_DIRECTORY", format!("/var/lib/{name}/deep/er")),
        ]
    );
    // Nothing is made before the process runs.
    let run_dir = Path::new("/run").join(&name);
    assert!(!run_dir.exists());
    let (status, out) = run(&["/bin/true"], &cc, None);
    assert!(status.success(), "{status:?}: {out}");
    let meta = std::fs::metadata(&run_dir).unwrap();
    assert_eq!(
        (meta.uid(), meta.gid(), meta.mode() & 0o7777),
        (65534, 65534, 0o750)
    );
    // Parents are root's, mode 0755; the directory itself the owner's.
    let state = Path::new("/var/lib").join(&name);
    let parent = std::fs::metadata(&state).unwrap();
    assert_eq!((parent.uid(), parent.mode() & 0o7777), (0, 0o755));
    let inner = std::fs::metadata(state.join("deep/er")).unwrap();
    assert_eq!((inner.uid(), inner.mode() & 0o7777), (65534, 0o755));
    // A second run finds them and changes nothing.
    let (status, _) = run(&["/bin/true"], &cc, None);
    assert!(status.success());
    std::fs::write(run_dir.join("sub/pid"), "1").unwrap();
    dirs::remove_runtime(&c.directories).unwrap();
    assert!(!run_dir.exists());
    std::fs::remove_dir_all(&state).unwrap();
}

/// A dynamic user's directories (`Directories::private`): made below
/// their kind's `private/` (0700, root's) with a link from their place,
/// the configuration one in place; the unit's user, who may not search the
/// 0700 root on the host, reaches and writes them through the links in
/// its own mount namespace; the stop removes the runtime one and its link.
#[test]
fn a_dynamic_users_directories_are_below_private_linked_and_reachable() {
    let _g = process_lock();
    let name = format!("flotilla-ctx-private-{}", std::process::id());
    let roots = [Path::new("/run/private"), Path::new("/var/lib/private")];
    let had: Vec<bool> = roots.iter().map(|r| r.exists()).collect();
    // Kept across stops, the runtime directory is below `private/` too.
    let mut c = ctx(&[
        ("RuntimeDirectory", &name),
        ("RuntimeDirectoryPreserve", "yes"),
        ("StateDirectory", &format!("{name}/deep")),
        ("ConfigurationDirectory", &name),
    ]);
    c.directories.private = true;
    let cc = child_context(
        &c,
        &context::Params {
            uid: Some(65534),
            owner: Some((65534, 65534)),
            ..Default::default()
        },
    );
    let creds = Credentials {
        uid: Some(65534),
        gid: Some(65534),
        groups: Some(vec![65534]),
    };
    let script = format!(
        "echo s > /var/lib/{name}/deep/f && echo r > /run/{name}/f && \
         ! ls /var/lib/private/ | grep -v '^{name}$'"
    );
    let (status, out) = run(&["/bin/sh", "-c", &script], &cc, Some(&creds));
    assert!(status.success(), "{status:?}: {out}");
    for root in roots {
        let meta = std::fs::symlink_metadata(root).unwrap();
        assert_eq!((meta.uid(), meta.mode() & 0o7777), (0, 0o700), "{root:?}");
    }
    let run_link = Path::new("/run").join(&name);
    let state_link = Path::new("/var/lib").join(&name).join("deep");
    assert_eq!(
        std::fs::read_link(&run_link).unwrap(),
        Path::new("private").join(&name)
    );
    assert_eq!(
        std::fs::read_link(&state_link).unwrap(),
        Path::new("../private").join(&name).join("deep")
    );
    let written = Path::new("/var/lib/private").join(&name).join("deep/f");
    let meta = std::fs::metadata(&written).unwrap();
    assert_eq!(meta.uid(), 65534);
    assert!(std::fs::symlink_metadata(Path::new("/etc").join(&name))
        .unwrap()
        .is_dir());
    // A second run finds them all and changes nothing.
    let (status, out) = run(&["/bin/true"], &cc, Some(&creds));
    assert!(status.success(), "{status:?}: {out}");
    dirs::remove_runtime(&c.directories).unwrap();
    assert!(std::fs::symlink_metadata(&run_link).is_err());
    assert!(!Path::new("/run/private").join(&name).exists());
    for p in [
        Path::new("/var/lib/private").join(&name),
        Path::new("/var/lib").join(&name),
        Path::new("/etc").join(&name),
    ] {
        std::fs::remove_dir_all(p).unwrap();
    }
    for (root, had) in roots.iter().zip(had) {
        if !had {
            std::fs::remove_dir(root).unwrap();
        }
    }
}

#[test]
fn a_directory_that_cannot_be_made_ends_the_process_with_systemds_status_and_says_why() {
    let _g = process_lock();
    let name = format!("flotilla-ctx-file-{}", std::process::id());
    // Something in the way: a file where the directory goes.
    let file = Path::new("/run").join(&name);
    std::fs::write(&file, "").unwrap();
    let cc = child_context(&ctx(&[("RuntimeDirectory", &name)]), &Default::default());
    let (status, out) = run(&["/bin/echo", "never"], &cc, None);
    std::fs::remove_file(&file).unwrap();
    assert_eq!(status, ExitStatus::Exited(233), "{out}");
    assert_eq!(
        out,
        format!("flotilla: cannot start: RuntimeDirectory= make /run/{name}: Not a directory\n")
    );
    // A state directory below a file: 238, EXIT_STATE_DIRECTORY.
    let in_the_way = Path::new("/var/lib").join(format!("{name}-f"));
    std::fs::write(&in_the_way, "").unwrap();
    let c = ctx(&[("StateDirectory", &format!("{name}-f/x"))]);
    let (status, out) = run(
        &["/bin/true"],
        &child_context(&c, &Default::default()),
        None,
    );
    std::fs::remove_file(&in_the_way).unwrap();
    assert_eq!(status, ExitStatus::Exited(238), "{out}");
    assert!(out.contains("StateDirectory= make /var/lib/"), "{out}");
}

#[test]
fn output_files_are_opened_by_the_child_as_asked() {
    let _g = process_lock();
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("out.log");
    for (key, value, want) in [
        ("StandardOutput", "append:", "old content\nnew\nerr\n"),
        ("StandardOutput", "truncate:", "new\nerr\n"),
        // file: writes from the start without truncating, as systemd's.
        ("StandardOutput", "file:", "new\nerr\nent\n"),
    ] {
        std::fs::write(&f, "old content\n").unwrap();
        let c = ctx(&[(key, &format!("{value}{}", f.display()))]);
        let cc = child_context(&c, &Default::default());
        assert!(cc.detaches());
        // Both streams follow StandardOutput= (no StandardError=): the
        // spawn leaves them to the child.
        let a = argv(&["/bin/sh", "-c", "echo new; echo err >&2"]);
        let e = env();
        let sys = RealSys::new();
        let pid = sys
            .spawn(
                &SpawnRequest::new(&a, &e)
                    .stdout(Stdio::Inherit)
                    .stderr(Stdio::Inherit)
                    .context(&cc),
            )
            .unwrap();
        assert!(wait_for(&sys, pid).success());
        assert_eq!(std::fs::read_to_string(&f).unwrap(), want, "{value}");
    }
    // StandardError= of its own: standard output stays where the spawn
    // put it.
    let err = dir.path().join("err.log");
    let c = ctx(&[("StandardError", &format!("file:{}", err.display()))]);
    let (r, w) = pipe();
    let a = argv(&["/bin/sh", "-c", "echo out; echo err >&2"]);
    let e = env();
    let sys = RealSys::new();
    let pid = sys
        .spawn(
            &SpawnRequest::new(&a, &e)
                .stdout(Stdio::Fd(w.as_fd()))
                .stderr(Stdio::Inherit)
                .context(&child_context(&c, &Default::default())),
        )
        .unwrap();
    drop(w);
    let mut out = String::new();
    std::fs::File::from(r).read_to_string(&mut out).unwrap();
    assert!(wait_for(&sys, pid).success());
    assert_eq!(
        (
            out.as_str(),
            std::fs::read_to_string(&err).unwrap().as_str()
        ),
        ("out\n", "err\n")
    );
}

#[test]
fn an_output_file_that_cannot_be_opened_ends_the_process_with_status_209() {
    let _g = process_lock();
    let c = ctx(&[
        ("StandardOutput", "file:/nonexistent/x"),
        ("StandardError", "journal"),
    ]);
    let (status, out) = run(
        &["/bin/echo", "never"],
        &child_context(&c, &Default::default()),
        None,
    );
    assert_eq!(status, ExitStatus::Exited(209), "{out}");
    assert_eq!(
        out,
        "flotilla: cannot start: StandardOutput= open /nonexistent/x: No such file or directory\n"
    );
}

#[test]
fn a_handed_off_child_is_the_process_that_runs_and_the_spawners_child() {
    let _g = process_lock();
    let name = format!("flotilla-ctx-pid-{}", std::process::id());
    let c = ctx(&[("RuntimeDirectory", &name)]);
    let cc = child_context(&c, &Default::default());
    let (r, w) = pipe();
    let a = argv(&["/bin/sh", "-c", "echo $$ $PPID"]);
    let e = env();
    let sys = RealSys::new();
    let pid = sys
        .spawn(
            &SpawnRequest::new(&a, &e)
                .stdout(Stdio::Fd(w.as_fd()))
                .context(&cc),
        )
        .unwrap();
    drop(w);
    let mut out = String::new();
    std::fs::File::from(r).read_to_string(&mut out).unwrap();
    // The PID the spawn returned is the shell's, and its parent is this
    // process (CLONE_PARENT), which reaps it: the intermediate child left
    // nothing to reap.
    assert_eq!(out, format!("{pid} {}\n", std::process::id()));
    assert!(wait_for(&sys, pid).success());
    assert!(sys.wait_any().unwrap().is_none());
    dirs::remove_runtime(&c.directories).unwrap();
}

/// A unit's main process is started without waiting for its `execve`
/// (`Sys::spawn_started`): handed off, it too comes with a watch of the
/// process that goes on, whose report ends only once that process has
/// exec'd, its directories made by then, or failed a step, with the same
/// error and exit status as a spawn that waits. Told at the hand-off, a
/// `Type=exec` unit's start was done before its directories existed
/// (systemd's test 33: `systemctl start` of a unit with
/// `ConfigurationDirectory=`, then `test -d` of it, failed under load).
#[test]
fn a_started_handed_off_child_is_watched_until_it_has_execed() {
    let _g = process_lock();
    let name = format!("flotilla-ctx-started-{}", std::process::id());
    let dir = Path::new("/etc").join(&name);
    let c = ctx(&[("ConfigurationDirectory", &name)]);
    let cc = child_context(&c, &Default::default());
    assert!(cc.detaches());
    let a = argv(&["/bin/sh", "-c", "exit 7"]);
    let e = env();
    let sys = RealSys::new();
    let req = SpawnRequest::new(&a, &e).context(&cc);
    let (pid, watch) = sys.spawn_started(&req).unwrap();
    let mut watch = watch.expect("a handed-off child is watched");
    assert_eq!(watch.pid(), pid);
    let outcome = watch.wait(|| Some(&cc));
    assert!(
        matches!(outcome, ExecOutcome::Execed { denied: 0 }),
        "{outcome:?}"
    );
    assert!(dir.is_dir(), "{} missing once exec'd", dir.display());
    // The process that exec'd is the one the spawn named.
    assert_eq!(wait_for(&sys, pid), ExitStatus::Exited(7));
    std::fs::remove_dir(&dir).unwrap();

    // With a handed descriptor too: it is 3, and the report's write end
    // did not reach the program.
    let null = std::fs::File::open("/dev/null").unwrap();
    let handed = [std::os::fd::AsRawFd::as_raw_fd(&null)];
    let a = argv(&[
        "/bin/sh",
        "-c",
        "[ -e /proc/$$/fd/3 ] && [ ! -e /proc/$$/fd/4 ]",
    ]);
    let (pid, watch) = sys
        .spawn_started(&SpawnRequest::new(&a, &e).context(&cc).listen_fds(&handed))
        .unwrap();
    let outcome = watch.expect("watched").wait(|| Some(&cc));
    assert!(matches!(outcome, ExecOutcome::Execed { .. }), "{outcome:?}");
    assert_eq!(wait_for(&sys, pid), ExitStatus::Exited(0));
    std::fs::remove_dir(&dir).unwrap();

    // A file in the directory's place: the step fails, as it does for a
    // spawn that waits (whose handed-off process says so by its exit
    // status), and the process is reaped by the reading.
    std::fs::write(&dir, "").unwrap();
    let waited = sys.spawn(&req).unwrap();
    assert_eq!(wait_for(&sys, waited), ExitStatus::Exited(241));
    let (_, watch) = sys.spawn_started(&req).unwrap();
    let outcome = watch.expect("watched").wait(|| Some(&cc));
    std::fs::remove_file(&dir).unwrap();
    match outcome {
        ExecOutcome::Failed(e) => {
            assert_eq!(e.exit_status(), Some(241), "{e}");
            assert_eq!(
                e.to_string(),
                format!(
                    "/bin/sh: ConfigurationDirectory= make {}: not a directory",
                    dir.display()
                )
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(sys.wait_any().unwrap().is_none());
}
