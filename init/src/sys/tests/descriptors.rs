//! Real-process tests of `io/`: the event queue, the control socket and
//! the console's writes that never wait. The set-up is `tests/mod.rs`'s.

use super::*;

// ---- the event queue (events.rs) ----

/// The process's event queue reports a watched pipe when it has data (once
/// per edge), a handled signal as an event, and nothing after a time-out.
#[test]
fn the_event_queue_reports_readiness_and_signals() {
    use crate::sys::events::HANDLED_SIGNALS;
    use crate::sys::{Event, Interest, Token as SysToken};
    let _g = process_lock();
    let sys = RealSys::new();
    sys.open_events().unwrap();
    let mut pipe = OutPipe::new(Stream::Stdout).unwrap();
    sys.watch(pipe.as_raw_fd(), SysToken(77), Interest::Read)
        .unwrap();
    let mut events = Vec::new();
    sys.wait(&mut events, Some(Duration::from_millis(1)))
        .unwrap();
    assert!(events.is_empty(), "{events:?}");
    let mut w = std::fs::File::from(pipe.writer().unwrap().try_clone_to_owned().unwrap());
    std::io::Write::write_all(&mut w, b"ping\n").unwrap();
    sys.wait(&mut events, Some(Duration::from_secs(20)))
        .unwrap();
    assert_eq!(events, [Event::Ready(SysToken(77))]);
    // Edge-triggered: no new event until new data.
    events.clear();
    sys.wait(&mut events, Some(Duration::from_millis(1)))
        .unwrap();
    assert!(events.is_empty(), "{events:?}");
    sys.unwatch(pipe.as_raw_fd()).unwrap();
    pipe.close_writer();
    // A handled signal, blocked in this thread (the queue blocks them in
    // the thread that made it, which may be another test's) and sent to it.
    let mut set = nix::sys::signal::SigSet::empty();
    set.add(nix::sys::signal::Signal::SIGUSR1);
    set.thread_block().unwrap();
    assert!(HANDLED_SIGNALS.contains(&nix::sys::signal::Signal::SIGUSR1));
    nix::sys::signal::raise(nix::sys::signal::Signal::SIGUSR1).unwrap();
    sys.wait(&mut events, Some(Duration::from_secs(20)))
        .unwrap();
    assert_eq!(events, [Event::Signal(libc::SIGUSR1)]);
}

// ---- the control socket (sockets.rs) ----

/// The control listener replaces a stale socket but nothing else, is
/// world-connectable, accepts with the peer's credentials, and is removed
/// only while the path is still its own.
#[test]
fn the_control_listener() {
    use std::os::unix::fs::PermissionsExt;
    let sys = RealSys::new();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("control.sock");
    // A socket file already there (an earlier init's) is replaced; the
    // old listener, kept open, keeps its file's inode from being reused.
    let (_old, old_id) = sys.bind_listener(&path).unwrap();
    let (listener, id) = sys.bind_listener(&path).unwrap();
    assert_ne!(id, old_id);
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o666);
    assert!(sys.accept(&listener).unwrap().is_none(), "none pending");
    let _client = std::os::unix::net::UnixStream::connect(&path).unwrap();
    let got = sys.accept(&listener).unwrap().unwrap();
    assert_eq!(got.uid, sys.geteuid());
    assert_eq!(got.pid, std::process::id() as i32);
    // The old listener's identity no longer names the file: kept.
    sys.remove_socket(&path, old_id);
    assert!(path.exists());
    sys.remove_socket(&path, id);
    assert!(!path.exists());
    // Anything else at the path is left alone.
    std::fs::write(&path, "not a socket").unwrap();
    assert_eq!(
        sys.bind_listener(&path).unwrap_err(),
        SysError::NotASocket(path.clone())
    );
    let long = dir.path().join("x".repeat(120));
    assert!(matches!(
        sys.bind_listener(&long),
        Err(SysError::BadSocketPath { .. })
    ));
}

/// `write_now` on a full pipe whose descriptor is blocking returns 0 at
/// once (RWF_NOWAIT), never waits: the console mirror's promise.
#[test]
fn write_now_never_waits_on_a_full_pipe() {
    let sys = RealSys::new();
    let (r, w) = nix::unistd::pipe().unwrap();
    let chunk = [b'x'; 4096];
    let mut total = 0;
    for _ in 0..1000 {
        let n = sys.write_now(w.as_raw_fd(), &chunk).unwrap();
        if n == 0 {
            break;
        }
        total += n;
    }
    assert!((4096..4096 * 1000).contains(&total), "{total}");
    assert_eq!(sys.write_now(w.as_raw_fd(), b"more").unwrap(), 0);
    drop(r);
}
