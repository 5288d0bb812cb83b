//! `LoadCredential=` and `SetCredential=`: the files a process of the unit
//! finds in its credentials directory, their mode and owner, what a
//! missing one does, and the directory gone after the stop.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use flotilla_units::context::credentials::Credentials as UnitCredentials;

use super::{child_context, ctx, run};
use crate::sys::context::{prepare, Host, Params};
use crate::sys::credentials;
use crate::sys::tests::process_lock;
use crate::sys::*;

/// The user the tests' units run as.
const NOBODY: u32 = 65534;

fn nobody() -> Credentials {
    Credentials {
        uid: Some(NOBODY),
        gid: Some(NOBODY),
        groups: Some(vec![NOBODY]),
    }
}

/// Whether `path` is a mount point of this process's namespace.
fn mounted(path: &Path) -> bool {
    std::fs::read_to_string("/proc/self/mountinfo")
        .unwrap()
        .lines()
        .any(|l| l.split(' ').nth(4) == path.to_str())
}

#[test]
fn credentials_are_read_only_files_of_the_units_user_gone_after_the_stop() {
    let _g = process_lock();
    let unit = format!("flotilla-cred-{}.service", std::process::id());
    let dir = UnitCredentials::dir(&unit);
    let work = tempfile::tempdir_in("/var/lib").unwrap();
    let key = work.path().join("key.pem");
    std::fs::write(&key, "secret\n").unwrap();
    // Only root may read the source: the unit reads its copy.
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
    let c = ctx(&[
        ("LoadCredential", &format!("key:{}", key.display())),
        ("SetCredential", r"user:web\x21"),
        // Named only: in no credential store here, so skipped.
        ("LoadCredential", "flotilla-test-not-in-any-store"),
        // A SetCredential= stands in for a LoadCredential= that is missing.
        ("LoadCredential", "fallback:/nonexistent/flotilla"),
        ("SetCredential", "fallback:default"),
    ]);
    let params = Params {
        uid: Some(NOBODY),
        owner: Some((NOBODY, NOBODY)),
        credentials: Some(&dir),
        ..Params::default()
    };
    let cc = child_context(&c, &params);
    assert!(cc.detaches());
    let script = format!(
        "cd {d} && ls -A && cat key user fallback && echo && \
         stat -c '%n %a %u %g' . key user && \
         ({{ echo x > new; }} 2>/dev/null || echo read-only) && \
         id -u",
        d = dir.display()
    );
    let (st, out) = run(&["/bin/sh", "-c", &script], &cc, Some(&nobody()));
    assert!(st.success(), "{st}: {out}");
    assert_eq!(
        out,
        "fallback\nkey\nuser\nsecret\nweb!default\n\
         . 500 65534 65534\nkey 400 65534 65534\nuser 400 65534 65534\n\
         read-only\n65534\n"
    );
    // A second process of the unit gets the credentials again, in place of
    // the first one's.
    let (st, out) = run(&["/bin/cat", &format!("{}/user", dir.display())], &cc, None);
    assert!(st.success(), "{st}: {out}");
    assert_eq!(out, "web!");
    assert!(mounted(&dir));
    credentials::remove(&dir).unwrap();
    assert!(!mounted(&dir));
    assert!(!dir.exists());
    // Removing again is fine.
    credentials::remove(&dir).unwrap();
}

#[test]
fn a_missing_credential_file_fails_the_start_with_systemds_status() {
    let _g = process_lock();
    let unit = format!("flotilla-cred-missing-{}.service", std::process::id());
    let dir = UnitCredentials::dir(&unit);
    let c = ctx(&[("LoadCredential", "key:/nonexistent/flotilla.pem")]);
    let params = Params {
        credentials: Some(&dir),
        ..Params::default()
    };
    let (st, out) = run(&["/bin/echo", "never"], &child_context(&c, &params), None);
    credentials::remove(&dir).unwrap();
    assert_eq!(st, ExitStatus::Exited(243), "{out}");
    assert_eq!(
        out,
        "flotilla: cannot start: LoadCredential= load key from /nonexistent/flotilla.pem: \
         No such file or directory\n"
    );
    // Without a directory from the init, the context cannot be prepared.
    let err = context::prepare(&c, &Params::default(), &context::Host::probe()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "LoadCredential= the init gave no credentials directory for this unit"
    );
    // A kernel without the mount API: an error naming the key.
    let mut host = context::Host::probe();
    host.mount_api = false;
    let c = ctx(&[("SetCredential", "tok:abc")]);
    let err = context::prepare(&c, &params, &host).unwrap_err();
    assert_eq!(
        err.to_string(),
        "SetCredential= needs the mount API of Linux 5.12 (fsmount, move_mount), which this kernel lacks"
    );
}

#[test]
fn credentials_over_a_mebibyte_fail_the_start() {
    let _g = process_lock();
    let unit = format!("flotilla-cred-big-{}.service", std::process::id());
    let dir = UnitCredentials::dir(&unit);
    let work = tempfile::tempdir_in("/var/lib").unwrap();
    let big = work.path().join("big");
    std::fs::write(&big, vec![b'x'; (1 << 20) + 1]).unwrap();
    let c = ctx(&[("LoadCredential", &format!("big:{}", big.display()))]);
    let params = Params {
        credentials: Some(&dir),
        ..Params::default()
    };
    let (st, out) = run(&["/bin/echo", "never"], &child_context(&c, &params), None);
    credentials::remove(&dir).unwrap();
    assert_eq!(st, ExitStatus::Exited(243), "{out}");
    assert!(out.ends_with(": File too large\n"), "{out}");
}

/// An init without `CAP_SYS_ADMIN` (a container's) cannot mount the
/// credentials' file system: as systemd does, it writes them into a plain
/// directory instead, mode 0500, the same files of mode 0400, and says
/// so; `sandbox: strict` refuses.
#[test]
fn without_cap_sys_admin_the_credentials_are_a_plain_directory() {
    let _g = process_lock();
    let unit = format!("flotilla-cred-plain-{}.service", std::process::id());
    let dir = UnitCredentials::dir(&unit);
    let mut host = Host::probe();
    host.sys_admin = false;
    let c = ctx(&[("SetCredential", "token:one")]);
    let params = Params {
        uid: Some(NOBODY),
        owner: Some((NOBODY, NOBODY)),
        credentials: Some(&dir),
        ..Params::default()
    };
    let cc = prepare(&c, &params, &host).unwrap();
    let na = cc.not_applied();
    assert_eq!(na.len(), 1, "{na:?}");
    assert_eq!(na[0].setting, "SetCredential");
    assert!(na[0].reason.contains("plain directory"), "{na:?}");
    let script = format!(
        "cd {d} && cat token && echo && stat -c '%n %a %u %g' . token && id -u",
        d = dir.display()
    );
    let (st, out) = run(&["/bin/sh", "-c", &script], &cc, Some(&nobody()));
    assert!(st.success(), "{st}: {out}");
    assert_eq!(
        out,
        "one\n. 500 65534 65534\ntoken 400 65534 65534\n65534\n"
    );
    assert!(!mounted(&dir));
    // A second process of the unit gets them again, in place of the
    // first one's.
    let (st, out) = run(
        &["/bin/cat", &format!("{}/token", dir.display())],
        &cc,
        None,
    );
    assert!(st.success(), "{st}: {out}");
    assert_eq!(out, "one");
    credentials::remove(&dir).unwrap();
    assert!(!dir.exists());
    // Strict: refused.
    let c = ctx(&[("SetCredential", "token:one"), ("X-Sandbox", "strict")]);
    let err = prepare(&c, &params, &host).unwrap_err();
    assert!(err.to_string().contains("CAP_SYS_ADMIN"), "{err}");
}
