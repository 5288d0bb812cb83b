//! The harness of `initctl`'s integration tests: a fake init on a unix
//! socket in a temp dir, and a runner for the real `initctl` binary.
//!
//! The fake init accepts one connection, records the request line it gets,
//! then plays a script: reply lines, raw bytes, pauses, and finally closes
//! the connection (or holds it open for a while).

#![allow(dead_code)]

use flotilla_units::protocol::Reply;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::thread::JoinHandle;
use std::time::Duration;

/// One step of the fake init's script.
pub enum Step {
    /// Send this reply as a JSON line.
    Reply(Box<Reply>),
    /// Send these bytes as they are.
    Raw(String),
    /// Wait.
    Sleep(Duration),
}

impl Step {
    /// Send this reply as a JSON line.
    pub fn reply(r: Reply) -> Step {
        Step::Reply(Box::new(r))
    }
}

/// A fake init answering one connection.
pub struct FakeInit {
    _dir: tempfile::TempDir,
    path: PathBuf,
    handle: Option<JoinHandle<Option<String>>>,
}

impl FakeInit {
    /// Starts a fake init that plays `script` to the first connection.
    pub fn start(script: Vec<Step>) -> FakeInit {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("control.sock");
        let listener = UnixListener::bind(&path).unwrap();
        let handle = std::thread::spawn(move || {
            let (stream, _) = listener.accept().ok()?;
            let mut reader = BufReader::new(stream);
            let mut line = String::new();
            reader.read_line(&mut line).ok()?;
            let mut stream = reader.into_inner();
            for step in script {
                let ok = match step {
                    Step::Reply(r) => {
                        let mut text = serde_json::to_string(&r).unwrap();
                        text.push('\n');
                        stream.write_all(text.as_bytes()).is_ok()
                    }
                    Step::Raw(text) => stream.write_all(text.as_bytes()).is_ok(),
                    Step::Sleep(d) => {
                        std::thread::sleep(d);
                        true
                    }
                };
                if !ok {
                    break;
                }
            }
            Some(line)
        });
        FakeInit {
            _dir: dir,
            path,
            handle: Some(handle),
        }
    }

    /// A fake init that sends these replies, then closes.
    pub fn replying(replies: Vec<Reply>) -> FakeInit {
        FakeInit::start(replies.into_iter().map(Step::reply).collect())
    }

    /// The socket's path.
    pub fn socket(&self) -> &Path {
        &self.path
    }

    /// The request line it got, parsed (waits for the script to end).
    pub fn request(mut self) -> serde_json::Value {
        let line = self
            .handle
            .take()
            .unwrap()
            .join()
            .unwrap()
            .expect("no request");
        assert!(
            line.ends_with('\n'),
            "request line not terminated: {line:?}"
        );
        serde_json::from_str(&line).unwrap()
    }
}

/// What a run of `initctl` did.
pub struct Run {
    /// Exit code.
    pub code: i32,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

impl From<Output> for Run {
    fn from(o: Output) -> Run {
        Run {
            code: o.status.code().expect("killed by a signal"),
            stdout: String::from_utf8(o.stdout).unwrap(),
            stderr: String::from_utf8(o.stderr).unwrap(),
        }
    }
}

/// `initctl` with a clean environment (no `INIT_CONTROL`).
pub fn initctl() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_initctl"));
    c.env_remove("INIT_CONTROL")
        .env_remove("XDG_RUNTIME_DIR")
        .stdin(Stdio::null());
    c
}

/// Runs `initctl --control SOCKET ARGS...`.
pub fn run(init: &FakeInit, args: &[&str]) -> Run {
    initctl()
        .arg("--control")
        .arg(init.socket())
        .args(args)
        .output()
        .unwrap()
        .into()
}

/// Runs `initctl ARGS...` without a socket option.
pub fn run_bare(args: &[&str]) -> Run {
    initctl().args(args).output().unwrap().into()
}
