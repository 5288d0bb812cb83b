//! `NoExecPaths=`/`ExecPaths=` and `PrivateUsers=`, checked from the
//! spawned process itself and from `/proc/PID`.

use std::os::unix::fs::PermissionsExt;

use super::{child_context, ctx, run, sleeper, spawn_error, stop};
use crate::sys::context::Params;
use crate::sys::tests::process_lock;
use crate::sys::*;

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
    assert_eq!(
        spawn_error(&cc),
        "/bin/true: NoExecPaths= make /nonexistent/flotilla not executable: no such file or directory"
    );
}

/// The lines of `/proc/PID/FILE`, each split into its words.
fn map(pid: Pid, file: &str) -> Vec<Vec<String>> {
    std::fs::read_to_string(format!("/proc/{pid}/{file}"))
        .unwrap()
        .lines()
        .map(|l| l.split_whitespace().map(str::to_string).collect())
        .collect()
}

#[test]
fn private_users_maps_root_and_the_units_user_and_nobody_else() {
    let _g = process_lock();
    let c = ctx(&[
        ("PrivateUsers", "yes"),
        ("ProtectSystem", "strict"),
        ("PrivateNetwork", "yes"),
    ]);
    let params = Params {
        uid: Some(65534),
        owner: Some((65534, 65534)),
        ..Params::default()
    };
    let cc = child_context(&c, &params);
    let creds = Credentials {
        uid: Some(65534),
        gid: Some(65534),
        // A supplementary group outside the maps: set before the namespace.
        groups: Some(vec![65534, 4]),
    };
    let pid = sleeper(&cc, Some(&creds));
    let (uid_map, gid_map) = (map(pid, "uid_map"), map(pid, "gid_map"));
    let setgroups = std::fs::read_to_string(format!("/proc/{pid}/setgroups")).unwrap();
    let (mine, theirs) = (
        super::ns("self", "user"),
        super::ns(&pid.to_string(), "user"),
    );
    let (uid, groups) = (super::status(pid, "Uid"), super::status(pid, "Groups"));
    stop(pid);
    assert_ne!(mine, theirs, "no user namespace of its own");
    let want = [["0", "0", "1"], ["65534", "65534", "1"]];
    assert_eq!(uid_map, want);
    assert_eq!(gid_map, want);
    assert_eq!(setgroups.trim(), "deny");
    // Seen from the host, the process keeps its IDs and its groups.
    assert!(uid.starts_with("65534"), "{uid}");
    assert_eq!(groups, "4 65534");
    // From inside: its user, everyone else's files are nobody's, and the
    // mounts made before the namespace stay (read-only /usr).
    let work = tempfile::tempdir_in("/var/lib").unwrap();
    let theirs_file = work.path().join("f");
    std::fs::write(&theirs_file, "").unwrap();
    std::os::unix::fs::chown(&theirs_file, Some(12345), Some(12345)).unwrap();
    std::fs::set_permissions(work.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let script = format!(
        "id -u; stat -c '%u %g' {f} /; touch /usr/x 2>/dev/null || echo usr-ro; \
         unshare --mount true 2>/dev/null || echo no-mount-ns-admin",
        f = theirs_file.display()
    );
    let (st, out) = run(&["/bin/sh", "-c", &script], &cc, Some(&creds));
    assert!(st.success(), "{st}: {out}");
    assert_eq!(out, "65534\n65534 65534\n0 0\nusr-ro\nno-mount-ns-admin\n");
}

#[test]
fn private_users_for_root_maps_root_alone_and_needs_the_kernels_support() {
    let _g = process_lock();
    let c = ctx(&[("PrivateUsers", "yes")]);
    let cc = child_context(&c, &Params::default());
    let pid = sleeper(&cc, None);
    let uid_map = map(pid, "uid_map");
    stop(pid);
    assert_eq!(uid_map, [["0", "0", "1"]]);
    let mut host = crate::sys::context::Host::probe();
    host.user_ns = false;
    let err = crate::sys::context::prepare(&c, &Params::default(), &host).unwrap_err();
    assert_eq!(
        err.to_string(),
        "PrivateUsers= needs user namespaces, which this kernel lacks or has turned off (user.max_user_namespaces)"
    );
}
