//! Preparing what `execve(2)` takes, in the parent before anything is
//! cloned: the program found on `PATH` (so that a missing program is an
//! error before a child exists), and `argv`/`envp` as C arrays laid out in
//! one buffer each.

use std::ffi::{c_char, CStr, CString};

use nix::sys::stat::{stat, SFlag};

use super::nul;
use crate::sys::env::DEFAULT_PATH;
use crate::sys::{Env, Errno, Os, SysError};
pub(crate) fn resolve_program(program: &str, path_var: Option<&[u8]>) -> Result<CString, SysError> {
    let no = |reason: &str| SysError::NoProgram {
        program: program.to_owned(),
        reason: reason.to_owned(),
    };
    if program.as_bytes().contains(&0) {
        return Err(nul(program, "the program name"));
    }
    let mut buf = Vec::with_capacity(program.len() + 64);
    if program.contains('/') {
        buf.extend_from_slice(program.as_bytes());
        buf.push(0);
        return match check_executable(&buf) {
            Ok(()) => Ok(into_cstring(buf)),
            Err(Errno::ENOENT | Errno::ENOTDIR) => Err(no("no such file")),
            Err(Errno::EISDIR) => Err(no("is a directory")),
            Err(Errno::ENOEXEC) => Err(no("not a regular file")),
            Err(Errno::EACCES) => Err(no("permission denied")),
            Err(errno) => Err(no(&Os(errno).to_string())),
        };
    }
    let mut denied = false;
    let path_var = path_var.unwrap_or(DEFAULT_PATH.as_bytes());
    for dir in path_var.split(|&c| c == b':').filter(|d| !d.is_empty()) {
        buf.clear();
        buf.extend_from_slice(dir);
        if !dir.ends_with(b"/") {
            buf.push(b'/');
        }
        buf.extend_from_slice(program.as_bytes());
        buf.push(0);
        match check_executable(&buf) {
            Ok(()) => return Ok(into_cstring(buf)),
            Err(Errno::EACCES) => denied = true,
            Err(_) => {}
        }
    }
    Err(no(if denied {
        "permission denied"
    } else {
        "not found in PATH"
    }))
}

/// Where the init's own `PATH` (else the default one) finds `program`, as
/// a spawn would look for it (the init's companions, `systemd_bus.rs`).
pub fn program_on_path(program: &str) -> Option<std::path::PathBuf> {
    use std::os::unix::ffi::{OsStrExt, OsStringExt};
    let path = std::env::var_os("PATH");
    let found = resolve_program(program, path.as_ref().map(|p| p.as_bytes())).ok()?;
    Some(std::ffi::OsString::from_vec(found.into_bytes()).into())
}

/// `buf` is a path with its trailing NUL.
pub(super) fn check_executable(buf: &[u8]) -> Result<(), Errno> {
    let path = CStr::from_bytes_with_nul(buf).map_err(|_| Errno::EINVAL)?;
    let st = stat(path)?;
    let kind = SFlag::from_bits_truncate(st.st_mode & SFlag::S_IFMT.bits());
    if kind == SFlag::S_IFDIR {
        Err(Errno::EISDIR)
    } else if kind != SFlag::S_IFREG {
        Err(Errno::ENOEXEC)
    } else if st.st_mode & 0o111 == 0 {
        Err(Errno::EACCES)
    } else {
        Ok(())
    }
}

/// `buf` ends with its only NUL (checked by the caller).
pub(super) fn into_cstring(mut buf: Vec<u8>) -> CString {
    buf.pop();
    // No interior NUL: the program and the PATH entry were checked or split
    // on NUL-free input; the fallback is never taken.
    CString::new(buf).unwrap_or_default()
}

/// A NULL-terminated array of C strings laid out in one buffer, as
/// `execve(2)` takes `argv` and `envp`.
pub(crate) struct CStrArray {
    /// The strings, each followed by NUL. Never touched after `ptrs` is
    /// built, so the pointers into it stay valid.
    _buf: Vec<u8>,
    pub(super) ptrs: Vec<*mut c_char>,
}

impl CStrArray {
    /// `argv`; `None` if an argument holds a NUL byte.
    pub(crate) fn argv(args: &[String]) -> Option<CStrArray> {
        if args.iter().any(|a| a.as_bytes().contains(&0)) {
            return None;
        }
        let total = args.iter().map(|a| a.len() + 1).sum();
        let mut buf = Vec::with_capacity(total);
        for a in args {
            buf.extend_from_slice(a.as_bytes());
            buf.push(0);
        }
        Some(CStrArray::index(
            buf,
            args.iter().map(|a| a.len() + 1),
            args.len(),
        ))
    }

    /// `envp`: `KEY=VALUE` for each variable ([`Env`] refuses NUL bytes).
    pub(crate) fn envp(env: &Env) -> CStrArray {
        let total = env.iter().map(|(k, v)| k.len() + v.len() + 2).sum();
        let mut buf = Vec::with_capacity(total);
        for (k, v) in env.iter() {
            buf.extend_from_slice(k);
            buf.push(b'=');
            buf.extend_from_slice(v);
            buf.push(0);
        }
        CStrArray::index(
            buf,
            env.iter().map(|(k, v)| k.len() + v.len() + 2),
            env.len(),
        )
    }

    fn index(buf: Vec<u8>, lens: impl Iterator<Item = usize>, n: usize) -> CStrArray {
        let mut ptrs = Vec::with_capacity(n + 1);
        let base = buf.as_ptr();
        let mut off = 0;
        for len in lens {
            ptrs.push(base.wrapping_add(off).cast::<c_char>().cast_mut());
            off += len;
        }
        ptrs.push(std::ptr::null_mut());
        CStrArray { _buf: buf, ptrs }
    }

    /// Where the value of `key` lies in this `envp`: its first byte and
    /// length, for the child to overwrite in place (`LISTEN_PID`).
    pub(crate) fn value_slot(&self, key: &[u8]) -> Option<(*mut u8, usize)> {
        self.ptrs.iter().filter(|p| !p.is_null()).find_map(|&p| {
            // SAFETY: every non-null pointer is a NUL-terminated string in
            // `_buf`, alive as long as `self`.
            let entry = unsafe { std::ffi::CStr::from_ptr(p) }.to_bytes();
            let value = entry.strip_prefix(key)?.strip_prefix(b"=")?;
            let at = entry.len() - value.len();
            Some((p.cast::<u8>().wrapping_add(at), value.len()))
        })
    }

    pub(crate) fn as_ptr(&self) -> *const *mut c_char {
        self.ptrs.as_ptr()
    }
}
