//! A transient service handed its caller's standard streams
//! (`transient-add` with `stdio` and the descriptors sent along,
//! `passed.rs`): its process gets them as its descriptors 0, 1 and 2, in
//! place of its log, and the init closes its copies when the unit ends.

use super::*;
use crate::sys::fake::StdioRecord;
use flotilla_units::protocol::{ErrorCode, StdStream};
use nix::sys::socket::{sendmsg, ControlMessage, MsgFlags};
use std::io::IoSlice;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};

const DEFAULT: &str = "unit: default\ntype: virtual\n";

/// Sends `request` on `c` with `fds` attached to its line.
fn send_passing(c: &Client, request: &Request, fds: &[RawFd]) {
    let mut line =
        serde_json::to_vec(&Envelope::new(request.clone())).unwrap_or_else(|e| panic!("{e}"));
    line.push(b'\n');
    let cmsg = [ControlMessage::ScmRights(fds)];
    let n = sendmsg::<()>(
        c.stream.as_raw_fd(),
        &[IoSlice::new(&line)],
        &cmsg,
        MsgFlags::empty(),
        None,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(n, line.len());
}

fn add(stdio: Vec<StdStream>) -> Request {
    add_tool("piped.service", stdio)
}

/// The file (device, inode) a descriptor of this process is open on.
fn file_of(fd: RawFd) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(format!("/proc/self/fd/{fd}"))
        .unwrap_or_else(|e| panic!("descriptor {fd}: {e}"));
    (m.dev(), m.ino())
}

fn pipe() -> (OwnedFd, OwnedFd) {
    nix::unistd::pipe().unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn the_callers_streams_are_the_units_until_it_ends() {
    let mut h = Harness::start(fake_with(&[("default", DEFAULT)]), "default");
    let (in_r, in_w) = pipe();
    let (out_r, out_w) = pipe();
    let (err_r, err_w) = pipe();
    let mut c = h.connect();
    let all = vec![StdStream::Stdin, StdStream::Stdout, StdStream::Stderr];
    send_passing(
        &c,
        &add(all),
        &[in_r.as_raw_fd(), out_w.as_raw_fd(), err_w.as_raw_fd()],
    );
    let r = h.replies_until_final(&mut c);
    assert!(matches!(r.last(), Some(Reply::Applied(_))), "{r:?}");
    h.turn_until("piped runs", |h| {
        h.state("piped.service") == UnitState::Running
    });
    // The caller's copies go: only the init's are left.
    let want = [
        file_of(in_r.as_raw_fd()),
        file_of(out_w.as_raw_fd()),
        file_of(err_w.as_raw_fd()),
    ];
    drop((in_r, out_w, err_w));
    let spawn = h
        .sys()
        .spawns()
        .into_iter()
        .find(|s| s.argv.first().map(String::as_str) == Some("/bin/tool"))
        .unwrap_or_else(|| panic!("no spawn of /bin/tool"));
    let got: Vec<(u64, u64)> = [&spawn.stdin, &spawn.stdout, &spawn.stderr]
        .iter()
        .map(|s| match s {
            StdioRecord::Fd(fd) => file_of(*fd),
            other => panic!("not a descriptor: {other:?}"),
        })
        .collect();
    assert_eq!(got, want);
    // Not handed as sockets of a socket unit.
    assert_eq!(spawn.listen_fds, 0);
    assert_eq!(spawn.env_var("LISTEN_FDS"), None);
    // While it runs the init holds the write ends: no end of output yet.
    let mut buf = [0u8; 8];
    nix::fcntl::fcntl(
        &out_r,
        nix::fcntl::FcntlArg::F_SETFL(nix::fcntl::OFlag::O_NONBLOCK),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        nix::unistd::read(&out_r, &mut buf),
        Err(nix::errno::Errno::EAGAIN)
    );
    h.exit("piped.service", ExitStatus::Exited(3));
    h.turn_until("piped failed", |h| {
        h.state("piped.service") == UnitState::Failed
    });
    // Ended: the init's copies are closed, the caller's readers see the end.
    assert_eq!(nix::unistd::read(&out_r, &mut buf), Ok(0));
    assert_eq!(nix::unistd::read(&err_r, &mut buf), Ok(0));
    // And the input's writer sees no reader left.
    assert_eq!(
        nix::unistd::write(&in_w, b"x"),
        Err(nix::errno::Errno::EPIPE)
    );
}

#[test]
fn a_request_without_the_descriptors_it_names_is_refused() {
    let mut h = Harness::start(fake_with(&[("default", DEFAULT)]), "default");
    let r = h.request(add(vec![StdStream::Stdout]));
    match r.last() {
        Some(Reply::Error { code, message, .. }) => {
            assert_eq!(*code, ErrorCode::BadRequest);
            assert!(
                message.contains("carries 1 descriptors, 0 came"),
                "{message}"
            );
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(h.state("piped.service"), UnitState::Disabled);
}
