//! The session, in systemd's order (its executor's PAM setup): start the
//! transaction for the user, hand the modules the process's environment,
//! check the account, establish the credentials, open the session, take
//! the variables the modules set; then fork the holder of the session,
//! change identity and execute the program. Nobody can answer a question
//! (the conversation refuses every one) and the modules are silent.

use crate::args::Args;
use crate::libpam::{self, Pam};
use std::ffi::{c_int, CStr, CString, OsStr};
use std::os::unix::ffi::OsStrExt;

/// systemd's exit statuses (`systemd.exec(5)`), so that the init reports
/// a failure here as systemd reports it.
const EXIT_GROUP: u8 = 216;
const EXIT_USER: u8 = 217;
const EXIT_EXEC: u8 = 203;
const EXIT_PAM: u8 = 224;

/// Why the program was not run: the exit status and a line for the log.
#[derive(Debug)]
pub struct Failure {
    /// The process's exit status.
    pub status: u8,
    /// What failed.
    pub message: String,
}

fn fail(status: u8, message: impl Into<String>) -> Failure {
    Failure {
        status,
        message: message.into(),
    }
}

fn c_string(what: &str, s: &OsStr) -> Result<CString, Failure> {
    CString::new(s.as_bytes()).map_err(|_| fail(EXIT_EXEC, format!("{what} holds a NUL byte")))
}

/// Opens the session and runs the program; returns only on a failure.
pub fn run(a: &Args) -> Failure {
    match open_and_exec(a) {
        Ok(never) => match never {},
        Err(f) => f,
    }
}

fn open_and_exec(a: &Args) -> Result<std::convert::Infallible, Failure> {
    // Everything the exec needs is made before the session opens, so that
    // a bad argument cannot leave a session behind.
    let program = c_string("the program's path", &a.program)?;
    let mut argv = a
        .argv
        .iter()
        .map(|w| c_string("an argument", w))
        .collect::<Result<Vec<_>, _>>()?;
    let user = user_name(a.uid)?;
    let service = CString::new(a.service.as_str())
        .map_err(|_| fail(EXIT_PAM, "the PAM service's name holds a NUL byte"))?;
    let mut pam =
        Pam::start(&service, &user).map_err(|e| fail(EXIT_PAM, format!("{}: {e}", a.service)))?;
    let opened = open(&mut pam, a);
    if let Err(e) = opened {
        pam.end(e.code);
        return Err(fail(
            EXIT_PAM,
            format!(
                "PAM service {} for {}: {e}",
                a.service,
                user.to_string_lossy()
            ),
        ));
    }
    let env = pam.env();
    hold(pam, a)?;
    for entry in &env {
        let mut parts = entry.as_bytes().splitn(2, |&b| b == b'=');
        if let (Some(name), Some(value)) = (parts.next(), parts.next()) {
            // A single thread: the process's own environment, which
            // execv(3) hands on.
            std::env::set_var(OsStr::from_bytes(name), OsStr::from_bytes(value));
        }
    }
    if a.expand_env {
        argv = expanded(&a.argv)?;
    }
    become_user(a)?;
    let mut ptrs: Vec<*const libc::c_char> = argv.iter().map(|c| c.as_ptr()).collect();
    ptrs.push(std::ptr::null());
    // SAFETY: NUL-terminated strings and a NULL-terminated array, alive
    // across the call; execv returns only on failure.
    unsafe { libc::execv(program.as_ptr(), ptrs.as_ptr()) };
    let err = std::io::Error::last_os_error();
    Err(fail(
        EXIT_EXEC,
        format!("execute {}: {err}", a.program.to_string_lossy()),
    ))
}

/// `argv` with its `$NAME`s expanded as systemd expands a command line
/// (`flotilla_units::exec::expand_env`), from the process's environment,
/// which holds PAM's by now (pam_systemd's `XDG_RUNTIME_DIR`). A word that
/// is not UTF-8 holds no name systemd would expand, and stays as it is.
fn expanded(argv: &[std::ffi::OsString]) -> Result<Vec<CString>, Failure> {
    let env: std::collections::HashMap<String, String> = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .collect();
    let mut out = Vec::with_capacity(argv.len());
    for w in argv {
        match w.to_str() {
            Some(text) => {
                let words = flotilla_units::exec::expand_env(&[text.to_string()], |n| {
                    env.get(n).map(String::as_str)
                });
                for word in words {
                    out.push(c_string("an argument", OsStr::new(&word))?);
                }
            }
            None => out.push(c_string("an argument", w)?),
        }
    }
    Ok(out)
}

/// The user's name (PAM takes names), from the system's user database
/// (NSS: the C library's, as PAM's modules read it).
fn user_name(uid: u32) -> Result<CString, Failure> {
    let mut buf = vec![0u8; 4096];
    let mut pw: libc::passwd = unsafe { std::mem::zeroed() };
    let mut found: *mut libc::passwd = std::ptr::null_mut();
    loop {
        // SAFETY: buffers of the given sizes; `found` is set to `pw` or NULL.
        let r = unsafe {
            libc::getpwuid_r(uid, &mut pw, buf.as_mut_ptr().cast(), buf.len(), &mut found)
        };
        if r == libc::ERANGE && buf.len() < 1 << 20 {
            buf.resize(buf.len() * 4, 0);
            continue;
        }
        if found.is_null() || pw.pw_name.is_null() {
            return Err(fail(EXIT_USER, format!("no user with UID {uid}")));
        }
        // SAFETY: getpwuid_r points pw_name into `buf`.
        return Ok(unsafe { CStr::from_ptr(pw.pw_name) }.to_owned());
    }
}

/// The steps up to the open session.
fn open(pam: &mut Pam, a: &Args) -> Result<(), libpam::Error> {
    if let Some(tty) = &a.tty {
        if let Ok(tty) = CString::new(tty.as_str()) {
            pam.set_tty(&tty)?;
        }
    }
    // The modules see the variables the program will have (pam_env,
    // pam_systemd read some).
    for (k, v) in std::env::vars_os() {
        let mut entry = k.as_bytes().to_vec();
        entry.push(b'=');
        entry.extend_from_slice(v.as_bytes());
        if let Ok(entry) = CString::new(entry) {
            pam.putenv(&entry)?;
        }
    }
    let flags = libpam::SILENT;
    pam.acct_mgmt(flags).map_err(|mut e| {
        if e.code == libpam::NEW_AUTHTOK_REQD {
            e.text = "the account's password has expired and nobody can change it here".into();
        }
        e
    })?;
    pam.setcred(libpam::ESTABLISH_CRED | flags)?;
    pam.open_session(flags)
}

/// Forks the process that holds the session: it closes it when the
/// program's process (this one, after the exec) ends. Returns in the
/// process that goes on to the program.
fn hold(pam: Pam, a: &Args) -> Result<(), Failure> {
    // SIGTERM blocked before the fork, so that one sent before the holder
    // waits for it stays pending.
    let mut term: libc::sigset_t = unsafe { std::mem::zeroed() };
    let mut old: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: plain signal-set calls on local sets.
    unsafe {
        libc::sigemptyset(&mut term);
        libc::sigaddset(&mut term, libc::SIGTERM);
        libc::sigprocmask(libc::SIG_BLOCK, &term, &mut old);
    }
    let parent = unsafe { libc::getpid() };
    // SAFETY: a single-threaded process; the child runs only the code
    // below and exits.
    match unsafe { libc::fork() } {
        -1 => {
            let err = std::io::Error::last_os_error();
            close(pam);
            Err(fail(EXIT_PAM, format!("fork the session's holder: {err}")))
        }
        0 => holder(pam, parent, &term, a),
        _ => {
            // This process goes on without the session: the modules'
            // cleanup must leave it open (the holder closes it).
            pam.end(libpam::SUCCESS | libpam::DATA_SILENT);
            // SAFETY: the mask as it was given.
            unsafe { libc::sigprocmask(libc::SIG_SETMASK, &old, std::ptr::null_mut()) };
            Ok(())
        }
    }
}

/// The holder: waits for the program's process to end, then closes the
/// session and exits.
fn holder(pam: Pam, parent: libc::pid_t, term: &libc::sigset_t, a: &Args) -> ! {
    // SAFETY: plain system calls on the holder's own process.
    unsafe {
        libc::prctl(libc::PR_SET_NAME, c"(flotilla-pam)".as_ptr());
        // Nothing of the program's: its output pipes must close when it
        // ends, not when the holder does.
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR | libc::O_CLOEXEC);
        for fd in 0..3 {
            if null >= 0 {
                libc::dup2(null, fd);
            }
        }
        libc::close_range(3, u32::MAX, 0);
        // As systemd's holder: the user's identity, which closing the
        // session needs no more than. First: a change of identity clears
        // the death signal (prctl(2)).
        let _ = libc::setgroups(0, std::ptr::null());
        let _ = libc::setresgid(a.gid, a.gid, a.gid);
        let _ = libc::setresuid(a.uid, a.uid, a.uid);
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
        // The program's process may have ended before the death signal
        // was asked for.
        if libc::getppid() == parent {
            let mut sig: c_int = 0;
            while libc::sigwait(term, &mut sig) != 0 {}
        }
    }
    close(pam);
    // SAFETY: ends the holder without running the program's exit handlers.
    unsafe { libc::_exit(0) }
}

/// Closes the session and ends the transaction, its modules' cleanup
/// included (what the holder does; nothing is left to report to).
fn close(mut pam: Pam) {
    let _ = pam.close_session(libpam::SILENT);
    let _ = pam.setcred(libpam::DELETE_CRED | libpam::SILENT);
    pam.end(libpam::SUCCESS);
}

/// The unit's identity: groups first, as they need the privilege the user
/// change gives up.
fn become_user(a: &Args) -> Result<(), Failure> {
    let groups: Vec<libc::gid_t> = a.groups.clone();
    // SAFETY: a valid list of the given length.
    if unsafe { libc::setgroups(groups.len(), groups.as_ptr()) } < 0 {
        let err = std::io::Error::last_os_error();
        return Err(fail(EXIT_GROUP, format!("setgroups: {err}")));
    }
    if unsafe { libc::setresgid(a.gid, a.gid, a.gid) } < 0 {
        let err = std::io::Error::last_os_error();
        return Err(fail(EXIT_GROUP, format!("setresgid({}): {err}", a.gid)));
    }
    if unsafe { libc::setresuid(a.uid, a.uid, a.uid) } < 0 {
        let err = std::io::Error::last_os_error();
        return Err(fail(EXIT_USER, format!("setresuid({}): {err}", a.uid)));
    }
    Ok(())
}
