//! Linux-PAM, loaded at run time (`dlopen("libpam.so.0")`): the helper
//! needs no PAM headers or development library to build, and says clearly
//! when a machine has no PAM, rather than failing to start in the dynamic
//! linker. Only the calls a session needs (`pam_start(3)` …
//! `pam_end(3)`), with Linux-PAM's constants (`<security/_pam_types.h>`).

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::ptr;

/// `PAM_SUCCESS`.
pub const SUCCESS: c_int = 0;
/// `PAM_CONV_ERR`: what the conversation answers, as nobody is there.
const CONV_ERR: c_int = 19;
/// `PAM_NEW_AUTHTOK_REQD`: the account's password has expired.
pub const NEW_AUTHTOK_REQD: c_int = 12;
/// `PAM_SILENT`: the modules print nothing.
pub const SILENT: c_int = 0x8000;
/// `PAM_ESTABLISH_CRED`.
pub const ESTABLISH_CRED: c_int = 0x0002;
/// `PAM_DELETE_CRED`.
pub const DELETE_CRED: c_int = 0x0004;
/// `PAM_DATA_SILENT`: `pam_end` in a process that goes on without the
/// session (the modules' cleanup must not end it there).
pub const DATA_SILENT: c_int = 0x4000_0000;
/// `PAM_TTY`, the item.
const TTY: c_int = 3;

/// `struct pam_conv`.
#[repr(C)]
struct Conv {
    conv: extern "C" fn(c_int, *mut *const c_void, *mut *mut c_void, *mut c_void) -> c_int,
    appdata: *mut c_void,
}

/// The conversation of a session nobody types into: every question is
/// refused (a module that must ask fails, as under systemd).
extern "C" fn no_conversation(
    _n: c_int,
    _msg: *mut *const c_void,
    _resp: *mut *mut c_void,
    _data: *mut c_void,
) -> c_int {
    CONV_ERR
}

static CONV: Conv = Conv {
    conv: no_conversation,
    appdata: ptr::null_mut(),
};

// SAFETY: `CONV` is immutable and its pointer is null.
unsafe impl Sync for Conv {}

type Handle = *mut c_void;

/// The library's entry points.
struct Fns {
    start: unsafe extern "C" fn(*const c_char, *const c_char, *const Conv, *mut Handle) -> c_int,
    set_item: unsafe extern "C" fn(Handle, c_int, *const c_void) -> c_int,
    putenv: unsafe extern "C" fn(Handle, *const c_char) -> c_int,
    acct_mgmt: unsafe extern "C" fn(Handle, c_int) -> c_int,
    setcred: unsafe extern "C" fn(Handle, c_int) -> c_int,
    open_session: unsafe extern "C" fn(Handle, c_int) -> c_int,
    close_session: unsafe extern "C" fn(Handle, c_int) -> c_int,
    getenvlist: unsafe extern "C" fn(Handle) -> *mut *mut c_char,
    end: unsafe extern "C" fn(Handle, c_int) -> c_int,
    strerror: unsafe extern "C" fn(Handle, c_int) -> *const c_char,
}

/// A PAM transaction (`pam_start` … `pam_end`).
pub struct Pam {
    fns: Fns,
    handle: Handle,
}

/// A failed call: which, and PAM's words for why.
#[derive(Debug)]
pub struct Error {
    /// The call (`pam_open_session` …).
    pub call: &'static str,
    /// Its result code.
    pub code: c_int,
    /// `pam_strerror`'s text.
    pub text: String,
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.call, self.text)
    }
}

/// Looks up `name` in `lib`.
///
/// # Safety
///
/// `T` must be the function pointer type of the symbol.
unsafe fn symbol<T: Copy>(lib: *mut c_void, name: &CStr) -> Result<T, String> {
    let p = libc::dlsym(lib, name.as_ptr());
    if p.is_null() {
        return Err(format!("libpam.so.0 has no {}", name.to_string_lossy()));
    }
    // SAFETY: the caller names the symbol's type; a function pointer has
    // the size of a data pointer on every platform Linux-PAM runs on.
    Ok(std::mem::transmute_copy::<*mut c_void, T>(&p))
}

impl Pam {
    /// `pam_start(service, user)`: loads the library and starts the
    /// transaction.
    pub fn start(service: &CStr, user: &CStr) -> Result<Pam, String> {
        // SAFETY: a constant, NUL-terminated name; the library is never
        // closed (the session's modules live in it until the end).
        let lib = unsafe { libc::dlopen(c"libpam.so.0".as_ptr(), libc::RTLD_NOW) };
        if lib.is_null() {
            // SAFETY: dlerror's text is valid until the next dl call.
            let why = unsafe { libc::dlerror() };
            let why = if why.is_null() {
                "not found".into()
            } else {
                unsafe { CStr::from_ptr(why) }
                    .to_string_lossy()
                    .into_owned()
            };
            return Err(format!(
                "cannot load libpam.so.0 (Linux-PAM, Debian's libpam0g): {why}"
            ));
        }
        // SAFETY: each type is the symbol's as <security/pam_appl.h> declares it.
        let fns = unsafe {
            Fns {
                start: symbol(lib, c"pam_start")?,
                set_item: symbol(lib, c"pam_set_item")?,
                putenv: symbol(lib, c"pam_putenv")?,
                acct_mgmt: symbol(lib, c"pam_acct_mgmt")?,
                setcred: symbol(lib, c"pam_setcred")?,
                open_session: symbol(lib, c"pam_open_session")?,
                close_session: symbol(lib, c"pam_close_session")?,
                getenvlist: symbol(lib, c"pam_getenvlist")?,
                end: symbol(lib, c"pam_end")?,
                strerror: symbol(lib, c"pam_strerror")?,
            }
        };
        let mut handle: Handle = ptr::null_mut();
        // SAFETY: valid C strings and conversation; `handle` is written.
        let code = unsafe { (fns.start)(service.as_ptr(), user.as_ptr(), &CONV, &mut handle) };
        if code != SUCCESS || handle.is_null() {
            return Err(format!("pam_start: error {code}"));
        }
        Ok(Pam { fns, handle })
    }

    fn check(&self, call: &'static str, code: c_int) -> Result<(), Error> {
        if code == SUCCESS {
            return Ok(());
        }
        // SAFETY: a live handle; the text is static or the handle's.
        let text = unsafe { (self.fns.strerror)(self.handle, code) };
        let text = if text.is_null() {
            format!("error {code}")
        } else {
            unsafe { CStr::from_ptr(text) }
                .to_string_lossy()
                .into_owned()
        };
        Err(Error { call, code, text })
    }

    /// `pam_set_item(PAM_TTY)`.
    pub fn set_tty(&mut self, tty: &CStr) -> Result<(), Error> {
        // SAFETY: PAM copies the string.
        let code = unsafe { (self.fns.set_item)(self.handle, TTY, tty.as_ptr().cast()) };
        self.check("pam_set_item(PAM_TTY)", code)
    }

    /// `pam_putenv("NAME=value")`: the modules see the process's variables.
    pub fn putenv(&mut self, entry: &CStr) -> Result<(), Error> {
        // SAFETY: PAM copies the string.
        let code = unsafe { (self.fns.putenv)(self.handle, entry.as_ptr()) };
        self.check("pam_putenv", code)
    }

    /// `pam_acct_mgmt(flags)`.
    pub fn acct_mgmt(&mut self, flags: c_int) -> Result<(), Error> {
        let code = unsafe { (self.fns.acct_mgmt)(self.handle, flags) };
        self.check("pam_acct_mgmt", code)
    }

    /// `pam_setcred(flags)`.
    pub fn setcred(&mut self, flags: c_int) -> Result<(), Error> {
        let code = unsafe { (self.fns.setcred)(self.handle, flags) };
        self.check("pam_setcred", code)
    }

    /// `pam_open_session(flags)`.
    pub fn open_session(&mut self, flags: c_int) -> Result<(), Error> {
        let code = unsafe { (self.fns.open_session)(self.handle, flags) };
        self.check("pam_open_session", code)
    }

    /// `pam_close_session(flags)`.
    pub fn close_session(&mut self, flags: c_int) -> Result<(), Error> {
        let code = unsafe { (self.fns.close_session)(self.handle, flags) };
        self.check("pam_close_session", code)
    }

    /// `pam_getenvlist`: the variables the modules set (`NAME=value`).
    pub fn env(&self) -> Vec<CString> {
        // SAFETY: a NULL-terminated array of malloc'd strings that we own
        // and free.
        unsafe {
            let list = (self.fns.getenvlist)(self.handle);
            let mut out = Vec::new();
            if list.is_null() {
                return out;
            }
            let mut i = 0;
            loop {
                let entry = *list.add(i);
                if entry.is_null() {
                    break;
                }
                out.push(CStr::from_ptr(entry).to_owned());
                libc::free(entry.cast());
                i += 1;
            }
            libc::free(list.cast());
            out
        }
    }

    /// `pam_end(status | flags)`, which frees the transaction.
    pub fn end(self, status: c_int) {
        // SAFETY: a live handle, not used after this.
        unsafe { (self.fns.end)(self.handle, status) };
    }
}
