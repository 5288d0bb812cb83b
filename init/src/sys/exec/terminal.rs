//! Standard input in the unit's own process: a file (`StandardInput=file:`)
//! and a terminal (`StandardInput=tty`, `tty-force`, `tty-fail`,
//! `StandardOutput=tty` with `TTYPath=`, and `TTYReset=`, `TTYVHangup=`,
//! `TTYVTDisallocate=`), opened by context steps (`sandbox.rs`) as the
//! output files are (`dirs.rs`): never on the init's loop, since opening a
//! serial line may wait for its carrier and `tty` waits for another session
//! to let the terminal go. A spawn with such a step hands its child off
//! first (`spawn/child.rs`).
//!
//! The child has called `setsid` by then: it leads a session without a
//! controlling terminal, so `TIOCSCTTY` makes the terminal its own. What is
//! done, in systemd's order (`exec_context_tty_reset`, then
//! `acquire_terminal`): the terminal's modes set back to sane ones
//! (`TTYReset=`), every other opener hung up (`TTYVHangup=`,
//! `TIOCVHANGUP`), a virtual console's scroll-back freed
//! (`TTYVTDisallocate=`), each on a descriptor of its own that is closed
//! again; failures of these are ignored, as systemd ignores them. Then the
//! terminal is opened anew and taken as the controlling terminal: `tty`
//! waits (inotify, `IN_CLOSE`) while another session holds it, `tty-force`
//! takes it (`TIOCSCTTY` with 1: root's privilege), `tty-fail` fails the
//! start (exit status 208, systemd's `EXIT_STDIN`). A terminal for output
//! only is not taken.

use std::ffi::{c_int, CString};
use std::os::unix::ffi::OsStrExt;

use flotilla_units::context::input::{Input, TtyMode};
use flotilla_units::context::{Key, ServiceContext};

use crate::sys::steps::{Op, TtyPrepare};

/// `TIOCVHANGUP` (not in the libc crate for every target).
const TIOCVHANGUP: libc::c_ulong = 0x5437;
/// `VT_DISALLOCATE`.
const VT_DISALLOCATE: libc::c_ulong = 0x5608;

/// The steps that open a unit's standard input (and the outputs that
/// follow it), each with its name: a file, or a terminal.
pub(crate) fn stdio_ops(ctx: &ServiceContext) -> Result<Vec<(Op, String)>, (Key, String)> {
    let mut ops = Vec::new();
    if let Some((mode, targets)) = ctx.tty_streams() {
        let path = ctx.tty.path();
        let key = if mode.is_some() {
            Key::StandardInput
        } else {
            Key::StandardOutput
        };
        let cpath = cstring(path.as_os_str().as_bytes()).map_err(|e| (key, e))?;
        let prepare = TtyPrepare {
            reset: ctx.tty.reset,
            vhangup: ctx.tty.vhangup,
            vt: ctx.tty.vt_number().filter(|_| ctx.tty.vt_disallocate),
        };
        let how = match mode {
            Some(TtyMode::Wait) => "take",
            Some(TtyMode::Force) => "take by force",
            Some(TtyMode::Fail) => "take (or fail)",
            None => "open for output",
        };
        ops.push((
            Op::OpenTty {
                path: cpath,
                mode,
                prepare,
                targets,
            },
            format!("{key} {how} the terminal {}", path.display()),
        ));
    }
    if let Input::File(path) = ctx.input() {
        let key = Key::StandardInput;
        ops.push((
            Op::OpenInput {
                path: cstring(path.as_os_str().as_bytes()).map_err(|e| (key, e))?,
                stdout: ctx.output_follows_input(),
                stderr: ctx.error_follows_input(),
            },
            format!("{key} open {}", path.display()),
        ));
    }
    Ok(ops)
}

fn cstring(b: &[u8]) -> Result<CString, String> {
    CString::new(b).map_err(|_| "the path contains a NUL byte".to_string())
}

fn errno() -> c_int {
    nix::errno::Errno::last_raw()
}

/// Puts `fd` on the standard streams `targets` says, then closes it
/// unless it is one of them.
///
/// # Safety
///
/// In the spawned child only.
pub(in crate::sys) unsafe fn onto(fd: c_int, targets: [bool; 3]) -> Result<(), c_int> {
    for (target, on) in (0..).zip(targets) {
        // dup2 onto itself would leave close-on-exec set.
        let r = if !on {
            0
        } else if fd == target {
            libc::fcntl(fd, libc::F_SETFD, 0)
        } else {
            libc::dup2(fd, target)
        };
        if r < 0 {
            let e = errno();
            libc::close(fd);
            return Err(e);
        }
    }
    if fd > 2 {
        libc::close(fd);
    }
    Ok(())
}

/// `StandardInput=file:`: the file read-only, or read-write when an
/// output follows it.
///
/// # Safety
///
/// In the spawned child only.
pub(crate) unsafe fn open_input(path: &CString, stdout: bool, stderr: bool) -> Result<(), c_int> {
    let access = if stdout || stderr {
        libc::O_RDWR
    } else {
        libc::O_RDONLY
    };
    let fd = libc::open(path.as_ptr(), access | libc::O_CLOEXEC | libc::O_NOCTTY);
    if fd < 0 {
        return Err(errno());
    }
    onto(fd, [true, stdout, stderr])
}

/// Prepares the terminal (as `prepare` says), opens it onto `targets` and,
/// for input (`mode`), takes it as the controlling terminal.
///
/// # Safety
///
/// In the spawned child only, after `setsid`.
pub(crate) unsafe fn open_tty(
    path: &CString,
    mode: Option<TtyMode>,
    prepare: TtyPrepare,
    targets: [bool; 3],
) -> Result<(), c_int> {
    prepare_tty(path, prepare);
    let Some(mode) = mode else {
        let fd = libc::open(
            path.as_ptr(),
            libc::O_WRONLY | libc::O_CLOEXEC | libc::O_NOCTTY,
        );
        if fd < 0 {
            return Err(errno());
        }
        return onto(fd, targets);
    };
    // Watched before the first try, so that a close between a refused
    // try and the wait is not missed.
    let watch = if mode == TtyMode::Wait {
        let w = libc::inotify_init1(libc::IN_CLOEXEC | libc::IN_NONBLOCK);
        if w < 0 || libc::inotify_add_watch(w, path.as_ptr(), libc::IN_CLOSE) < 0 {
            let e = errno();
            if w >= 0 {
                libc::close(w);
            }
            return Err(e);
        }
        w
    } else {
        -1
    };
    let mut events = [0u8; 512];
    let res = loop {
        // What is queued (our own close of the last try among it) is old.
        while watch >= 0 && libc::read(watch, events.as_mut_ptr().cast(), events.len()) > 0 {}
        let fd = libc::open(
            path.as_ptr(),
            libc::O_RDWR | libc::O_CLOEXEC | libc::O_NOCTTY,
        );
        if fd < 0 {
            break Err(errno());
        }
        let force = c_int::from(mode == TtyMode::Force);
        if libc::ioctl(fd, libc::TIOCSCTTY, force) == 0 {
            break onto(fd, targets);
        }
        let e = errno();
        if e != libc::EPERM || watch < 0 {
            libc::close(fd);
            break Err(e);
        }
        // Another session's terminal: wait (holding it open, so that our
        // own close does not wake us) for one of its openers to close it,
        // then try again.
        let mut p = libc::pollfd {
            fd: watch,
            events: libc::POLLIN,
            revents: 0,
        };
        let r = libc::poll(&mut p, 1, -1);
        let e = errno();
        libc::close(fd);
        if r < 0 && e != libc::EINTR {
            break Err(e);
        }
    };
    if watch >= 0 {
        libc::close(watch);
    }
    res
}

/// `TTYReset=`, `TTYVHangup=`, `TTYVTDisallocate=`; what fails is left
/// as it is.
unsafe fn prepare_tty(path: &CString, p: TtyPrepare) {
    if p.reset || p.vhangup {
        let fd = libc::open(
            path.as_ptr(),
            libc::O_RDWR | libc::O_CLOEXEC | libc::O_NOCTTY | libc::O_NONBLOCK,
        );
        if fd >= 0 {
            if p.reset {
                reset(fd);
            }
            if p.vhangup {
                libc::ioctl(fd, TIOCVHANGUP as _, 0);
            }
            libc::close(fd);
        }
    }
    if let Some(n) = p.vt {
        let fd = libc::open(
            c"/dev/tty0".as_ptr(),
            libc::O_RDWR | libc::O_CLOEXEC | libc::O_NOCTTY | libc::O_NONBLOCK,
        );
        if fd >= 0 {
            let busy = libc::ioctl(fd, VT_DISALLOCATE as _, n as libc::c_ulong) < 0;
            libc::close(fd);
            // The console in use cannot be freed: clear its scroll-back.
            if busy {
                let t = libc::open(
                    path.as_ptr(),
                    libc::O_WRONLY | libc::O_CLOEXEC | libc::O_NOCTTY | libc::O_NONBLOCK,
                );
                if t >= 0 {
                    let seq = b"\x1b[r\x1b[H\x1b[3J";
                    libc::write(t, seq.as_ptr().cast(), seq.len());
                    libc::close(t);
                }
            }
        }
    }
}

/// The terminal's modes set to sane ones (systemd's `reset_terminal_fd`):
/// canonical input with echo, CR to NL, NL to CR-NL on output, the usual
/// control characters; pending input and output discarded.
unsafe fn reset(fd: c_int) {
    let mut t: libc::termios = std::mem::zeroed();
    if libc::tcgetattr(fd, &mut t) < 0 {
        return;
    }
    t.c_iflag &=
        !(libc::IGNBRK | libc::BRKINT | libc::ISTRIP | libc::INLCR | libc::IGNCR | libc::IUCLC);
    t.c_iflag |= libc::ICRNL | libc::IMAXBEL | libc::IUTF8;
    t.c_oflag |= libc::ONLCR | libc::OPOST;
    t.c_cflag |= libc::CREAD;
    t.c_lflag = libc::ISIG
        | libc::ICANON
        | libc::IEXTEN
        | libc::ECHO
        | libc::ECHOE
        | libc::ECHOK
        | libc::ECHOCTL
        | libc::ECHOKE;
    for (i, v) in [
        (libc::VINTR, 0o3),
        (libc::VQUIT, 0o34),
        (libc::VERASE, 0o177),
        (libc::VKILL, 0o25),
        (libc::VEOF, 0o4),
        (libc::VSTART, 0o21),
        (libc::VSTOP, 0o23),
        (libc::VSUSP, 0o32),
        (libc::VLNEXT, 0o26),
        (libc::VWERASE, 0o27),
        (libc::VREPRINT, 0o22),
        (libc::VEOL, 0),
        (libc::VEOL2, 0),
        (libc::VTIME, 0),
        (libc::VMIN, 1),
    ] {
        if let Some(c) = t.c_cc.get_mut(i) {
            *c = v;
        }
    }
    libc::tcsetattr(fd, libc::TCSANOW, &t);
    libc::tcflush(fd, libc::TCIOFLUSH);
}
