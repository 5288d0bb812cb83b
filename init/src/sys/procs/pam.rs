//! `PAMName=`: a process run inside a PAM session. The init is static and
//! cannot load PAM's modules (shared objects of the system's C library), so
//! the unit's child, its context's steps done, executes `flotilla-pam`
//! (crate `pam/`, beside the init) as root instead of the unit's program;
//! the helper opens the session, takes on the unit's identity and
//! executes the program in the same process (docs/service-context.md,
//! "PAM"). This module turns a request's command into the helper's.

use std::ffi::CString;
use std::path::Path;

use crate::sys::spawn::resolve_program;
use crate::sys::{Credentials, SysError};

/// The helper's name, found beside the init's binary, else on `PATH`.
pub const HELPER: &str = "flotilla-pam";

/// The command a session runs.
#[derive(Debug, Clone, Copy)]
pub struct Words<'a> {
    /// Its words, `argv[0]` naming the program.
    pub argv: &'a [String],
    /// `argv[0]` is only the program, `argv[1..]` its whole argv (`@`).
    pub argv0_given: bool,
    /// Its `$NAME`s are the helper's to expand, with the environment the
    /// session adds (systemd expands them after PAM: pam_systemd's
    /// `XDG_RUNTIME_DIR`).
    pub expand_env: bool,
}

/// The command that runs `words` (as a spawn would: `argv[0]` looked up in
/// `path_var`) under `helper` in a session of PAM service `service` with
/// `creds`. Needs a user: `None` when `creds` names none (systemd ignores
/// `PAMName=` without `User=`).
pub fn session_argv(
    helper: &Path,
    service: &str,
    creds: &Credentials,
    tty: Option<&Path>,
    words: Words<'_>,
    path_var: Option<&[u8]>,
) -> Result<Option<Vec<String>>, SysError> {
    let Some(uid) = creds.uid else {
        return Ok(None);
    };
    let argv = words.argv;
    let program = argv.first().ok_or(SysError::EmptyCommand)?;
    let expand_env = words.expand_env;
    let words = match argv.split_first() {
        Some((_, rest)) if words.argv0_given && !rest.is_empty() => rest,
        _ => argv,
    };
    let path = resolve_program(program, path_var)?;
    let path = CString::into_string(path).map_err(|_| SysError::NoProgram {
        program: program.clone(),
        reason: "the path is not UTF-8".into(),
    })?;
    let mut out = vec![
        helper.display().to_string(),
        "--service".into(),
        service.into(),
        "--uid".into(),
        uid.to_string(),
        "--gid".into(),
        creds.gid.unwrap_or(0).to_string(),
    ];
    if let Some(groups) = creds.groups.as_deref().filter(|g| !g.is_empty()) {
        let list: Vec<String> = groups.iter().map(u32::to_string).collect();
        out.extend(["--groups".into(), list.join(",")]);
    }
    if let Some(tty) = tty {
        out.extend(["--tty".into(), tty.display().to_string()]);
    }
    if expand_env {
        out.push("--expand-env".into());
    }
    out.push("--".into());
    out.push(path);
    out.extend(words.iter().cloned());
    Ok(Some(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn creds(uid: Option<u32>, groups: Option<Vec<u32>>) -> Credentials {
        Credentials {
            uid,
            gid: uid.map(|_| 100),
            groups,
        }
    }

    fn argv(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    fn words(argv: &[String], argv0_given: bool, expand_env: bool) -> Words<'_> {
        Words {
            argv,
            argv0_given,
            expand_env,
        }
    }

    #[test]
    fn the_program_runs_under_the_helper_with_the_unit_identity() {
        let got = session_argv(
            Path::new("/sbin/flotilla-pam"),
            "systemd-user",
            &creds(Some(1000), Some(vec![100, 27])),
            None,
            words(&argv(&["sh", "-c", "true"]), false, false),
            Some(b"/nowhere:/bin"),
        );
        assert_eq!(
            got,
            Ok(Some(argv(&[
                "/sbin/flotilla-pam",
                "--service",
                "systemd-user",
                "--uid",
                "1000",
                "--gid",
                "100",
                "--groups",
                "100,27",
                "--",
                "/bin/sh",
                "sh",
                "-c",
                "true",
            ])))
        );
    }

    /// `@` and a terminal; the words' `$NAME`s left to the helper.
    #[test]
    fn an_argv0_of_its_own_and_a_terminal() {
        let got = session_argv(
            Path::new("/x/flotilla-pam"),
            "login",
            &creds(Some(0), None),
            Some(Path::new("/dev/tty1")),
            words(&argv(&["/bin/sh", "-sh", "$HOME"]), true, true),
            None,
        );
        assert_eq!(
            got,
            Ok(Some(argv(&[
                "/x/flotilla-pam",
                "--service",
                "login",
                "--uid",
                "0",
                "--gid",
                "100",
                "--tty",
                "/dev/tty1",
                "--expand-env",
                "--",
                "/bin/sh",
                "-sh",
                "$HOME",
            ])))
        );
    }

    #[test]
    fn without_a_user_there_is_no_session() {
        let got = session_argv(
            Path::new("/sbin/flotilla-pam"),
            "systemd-user",
            &creds(None, None),
            None,
            words(&argv(&["/bin/true"]), false, false),
            None,
        );
        assert_eq!(got, Ok(None));
    }

    #[test]
    fn a_missing_program_fails_before_the_session() {
        let got = session_argv(
            Path::new("/sbin/flotilla-pam"),
            "x",
            &creds(Some(0), None),
            None,
            words(&argv(&["/nonexistent/prog"]), false, false),
            None,
        );
        assert_eq!(
            got,
            Err(SysError::NoProgram {
                program: "/nonexistent/prog".into(),
                reason: "no such file".into()
            })
        );
    }
}
