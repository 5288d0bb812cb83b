//! `NoExecPaths=`/`ExecPaths=` and `PrivateUsers=`, checked from the
//! spawned process itself and from `/proc/PID`.

use std::os::unix::fs::PermissionsExt;

use super::super::context::Params;
use super::super::real::RealSys;
use super::super::tests::process_lock;
use super::super::*;
use super::{argv, child_context, ctx, env, run, sleeper, stop};

/// A shell script at `path` that prints `ran`.
fn script(path: &std::path::Path) {
    std::fs::write(path, "#!/bin/sh\necho ran\n").unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn no_exec_paths_refuse_an_exec_that_exec_paths_allow_again() {
    let _g = process_lock();
    let work = tempfile::tempdir_in("/var/lib").unwrap();
    let ok = work.path().join("ok");
    std::fs::create_dir(&ok).unwrap();
    script(&work.path().join("no.sh"));
    script(&ok.join("yes.sh"));
    let c = ctx(&[
        ("NoExecPaths", work.path().to_str().unwrap()),
        ("ExecPaths", &format!("{} -/nonexistent/x", ok.display())),
    ]);
    let cc = child_context(&c, &Params::default());
    let cmd = format!(
        "{w}/no.sh; echo no-$?; {w}/ok/yes.sh; echo yes-$?",
        w = work.path().display()
    );
    let (st, out) = run(&["/bin/sh", "-c", &cmd], &cc, None);
    assert!(st.success(), "{st}: {out}");
    // 126: found but not executable (EACCES from execve).
    assert!(out.contains("no-126"), "{out}");
    assert!(out.contains("ran\nyes-0"), "{out}");
    // From /proc: the directory is a noexec mount, the exception not.
    let pid = sleeper(&cc, None);
    let mountinfo = std::fs::read_to_string(format!("/proc/{pid}/mountinfo")).unwrap();
    stop(pid);
    let opts = |mp: &std::path::Path| {
        mountinfo
            .lines()
            .rfind(|l| l.split(' ').nth(4) == mp.to_str())
            .map(|l| l.split(' ').nth(5).unwrap().to_string())
            .unwrap_or_else(|| panic!("{} not a mount point:\n{mountinfo}", mp.display()))
    };
    assert!(
        opts(work.path()).contains("noexec"),
        "{}",
        opts(work.path())
    );
    assert!(!opts(&ok).contains("noexec"), "{}", opts(&ok));
    // On the host nothing changed.
    let host = std::process::Command::new(work.path().join("no.sh"))
        .output()
        .unwrap();
    assert_eq!(host.stdout, b"ran\n");
}

#[test]
fn a_missing_no_exec_path_fails_the_spawn_naming_the_key() {
    let _g = process_lock();
    let c = ctx(&[("NoExecPaths", "/nonexistent/flotilla")]);
    let cc = child_context(&c, &Params::default());
    let a = argv(&["/bin/true"]);
    let e = env();
    let err = RealSys::new()
        .spawn(&SpawnRequest::new(&a, &e).context(&cc))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "/bin/true: NoExecPaths= make /nonexistent/flotilla not executable: no such file or directory"
    );
}
