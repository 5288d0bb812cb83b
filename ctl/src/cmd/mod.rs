//! The commands: one file per verb, each building its request and printing
//! the reply. Rendering is done by pure functions beside each command, which
//! the unit tests call with hand-made replies.
//!
//! Every command gets a [`Ctx`] (where the socket is, where output goes,
//! whether stdout is a terminal) and returns the exit code, or a
//! [`CtlError`] that `main` reports.

pub mod analyze;
pub mod kill;
pub mod list;
pub mod logs;
pub mod preset;
pub mod reload;
pub mod reset_failed;
pub mod restart;
pub mod security;
pub mod set_target;
pub mod shape;
pub mod shutdown;
pub mod sockets;
pub mod status;
pub mod systemctl;
pub mod timers;
pub mod transient;
pub mod unit_files;
pub mod want;
pub mod yaml_install;

use crate::client::{self, Connection};
use crate::error::CtlError;
use flotilla_units::protocol::{Reply, Request};
use serde::Serialize;
use std::io::{self, Write};
use std::path::Path;

/// What a command needs from its surroundings.
pub struct Ctx<'a> {
    /// The control socket.
    pub socket: &'a Path,
    /// Standard output.
    pub out: &'a mut dyn Write,
    /// Whether standard output is a terminal.
    pub tty: bool,
    /// Whether to colour tables (a terminal, and `$NO_COLOR` unset).
    pub color: bool,
}

impl Ctx<'_> {
    /// Opens a connection to the init.
    pub fn connect(&self) -> Result<Connection, CtlError> {
        Connection::connect(self.socket)
    }

    /// Sends `request` and returns its one reply.
    pub fn call(&self, request: Request) -> Result<Reply, CtlError> {
        client::call(self.socket, request)
    }

    /// The init's current target (for messages).
    pub fn current_target(&self) -> Result<String, CtlError> {
        match self.call(Request::Status { name: None })? {
            Reply::Status(s) => Ok(s.target),
            other => Err(client::unexpected(&other, "status")),
        }
    }

    /// Writes `text` to stdout.
    pub fn print(&mut self, text: &str) -> Result<(), CtlError> {
        self.out
            .write_all(text.as_bytes())
            .map_err(CtlError::output)
    }

    /// Flushes stdout.
    pub fn flush(&mut self) -> Result<(), CtlError> {
        self.out.flush().map_err(CtlError::output)
    }

    /// Writes `value` as pretty JSON and a newline to stdout.
    pub fn print_json<T: Serialize>(&mut self, value: &T) -> Result<(), CtlError> {
        let mut text = serde_json::to_string_pretty(value)
            .map_err(|e| CtlError::Protocol(format!("cannot encode JSON: {e}")))?;
        text.push('\n');
        self.print(&text)
    }
}

/// Writes a line to stderr; a failure to do so is ignored (there is nowhere
/// left to report it).
pub fn eprint_line(line: &str) {
    let mut err = io::stderr().lock();
    let _ = err.write_all(line.as_bytes());
    let _ = err.write_all(b"\n");
}
