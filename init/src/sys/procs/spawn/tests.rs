use super::*;
use crate::sys::Env;
use std::ffi::CStr;

fn cstrs(a: &CStrArray) -> Vec<String> {
    let mut out = Vec::new();
    for &p in &a.ptrs {
        if p.is_null() {
            break;
        }
        // SAFETY: pointers into `a.buf`, each NUL-terminated.
        out.push(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned());
    }
    out
}

#[test]
fn argv_and_envp_are_laid_out_in_one_buffer() {
    let args = vec!["prog".to_string(), String::new(), "a b".to_string()];
    let a = CStrArray::argv(&args).unwrap();
    assert_eq!(cstrs(&a), args);
    assert_eq!(a.ptrs.len(), 4);
    assert!(a.ptrs.last().unwrap().is_null());
    assert!(CStrArray::argv(&["a\0b".to_string()]).is_none());

    let mut env = Env::new();
    env.set("B", "2").unwrap();
    env.set("A", "").unwrap();
    let e = CStrArray::envp(&env);
    assert_eq!(cstrs(&e), ["A=", "B=2"]);
    let none = CStrArray::envp(&Env::new());
    assert_eq!(none.ptrs.len(), 1);
}

#[test]
fn resolve_absolute_and_path_programs() {
    assert_eq!(
        resolve_program("/bin/sh", None).unwrap().as_bytes(),
        b"/bin/sh"
    );
    let found = resolve_program("sh", Some(b"/nonexistent::/bin")).unwrap();
    assert_eq!(found.as_bytes(), b"/bin/sh");
    let err = resolve_program("/usr/bin/flotilla-missing", None).unwrap_err();
    assert_eq!(err.to_string(), "/usr/bin/flotilla-missing: no such file");
    let err = resolve_program("flotilla-missing", Some(b"/bin")).unwrap_err();
    assert_eq!(err.to_string(), "flotilla-missing: not found in PATH");
    let err = resolve_program("/tmp", None).unwrap_err();
    assert_eq!(err.to_string(), "/tmp: is a directory");
    let err = resolve_program("/dev/null", None).unwrap_err();
    assert_eq!(err.to_string(), "/dev/null: not a regular file");
    // The current directory is never searched.
    let err = resolve_program("spawn.rs", Some(b"")).unwrap_err();
    assert!(matches!(err, SysError::NoProgram { .. }));
}

#[test]
fn the_inits_own_path_finds_a_program() {
    let sh = super::program_on_path("sh").unwrap();
    assert!(sh.is_absolute() && sh.ends_with("sh"), "{sh:?}");
    assert_eq!(super::program_on_path("flotilla-missing"), None);
}

#[test]
fn non_executable_files_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("script");
    std::fs::write(&f, "#!/bin/sh\n").unwrap();
    let err = resolve_program(f.to_str().unwrap(), None).unwrap_err();
    assert!(err.to_string().ends_with("permission denied"), "{err}");
    let err = resolve_program("script", Some(dir.path().as_os_str().as_bytes())).unwrap_err();
    assert!(err.to_string().ends_with("permission denied"), "{err}");
}

#[test]
fn step_codes_round_trip() {
    for s in Step::ALL {
        assert_eq!(Step::from_u32(s as u32), s);
    }
    assert_eq!(Step::dup2(1), Step::Dup2Stdout);
}

#[test]
fn a_child_killed_before_execve_is_reported_with_its_signal() {
    let err = Failure::Killed(libc::SIGSYS).into_error("/bin/x", None, None);
    assert_eq!(err.to_string(), "/bin/x: killed by SIGSYS before execve");
    let err = Failure::Context(3, Errno::EPERM).into_error("/bin/x", None, None);
    assert_eq!(
        err.to_string(),
        "/bin/x: context step 3: operation not permitted"
    );
}
