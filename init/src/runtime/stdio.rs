//! Where a spawned process's standard streams go, from its context: the
//! unit's log (an output pipe), `/dev/null`, the init's own descriptor, or
//! what its socket unit hands it (`StandardInput=socket`, `fd:NAME`, and
//! the outputs of the same names). A file or a terminal is opened by the
//! process itself (its context's steps: `sys/fs/dirs.rs`, `sys/exec/terminal.rs`),
//! so the stream it lands on is left as inherited here.
//!
//! With `socket` on any stream the process gets its one socket there and
//! no `LISTEN_FDS` (as systemd: "Got more than one socket" otherwise);
//! `fd:NAME` picks the descriptor of that name from what it is handed,
//! which it also gets as `LISTEN_FDS`.

use std::os::fd::RawFd;

use flotilla_units::context::input::Input;
use flotilla_units::context::process::Output;
use flotilla_units::context::ServiceContext;

use crate::sys::Stdio;

/// The descriptors a main process is handed by its socket units, and
/// their names (`LISTEN_FDNAMES`, `:`-separated).
pub(super) struct Handed {
    pub fds: Vec<RawFd>,
    pub names: String,
}

impl Handed {
    /// Whether a stream is `socket`: then the one socket goes there and
    /// nothing is handed as `LISTEN_FDS`.
    pub fn socket_stream(ctx: &ServiceContext) -> bool {
        ctx.input() == Input::Socket
            || [&ctx.standard_output, &ctx.standard_error]
                .into_iter()
                .any(|o| o == &Some(Output::Socket))
    }

    /// The one socket of `socket` streams.
    fn socket(&self, key: &str) -> Result<RawFd, String> {
        match self.fds.as_slice() {
            [fd] => Ok(*fd),
            [] => Err(format!("{key}=socket: the unit is handed no socket")),
            more => Err(format!(
                "{key}=socket: the unit is handed {} sockets, not one",
                more.len()
            )),
        }
    }

    /// The descriptor named `name` (the first of that name).
    fn named(&self, key: &str, name: &str) -> Result<RawFd, String> {
        self.names
            .split(':')
            .zip(&self.fds)
            .find(|(n, _)| *n == name)
            .map(|(_, fd)| *fd)
            .ok_or_else(|| {
                format!("{key}=fd:{name}: the unit is handed no descriptor of that name")
            })
    }
}

/// The three streams of a process of a unit with context `ctx`: `out` and
/// `err` are its output pipes (the unit's log), `data` its
/// `StandardInput=data` descriptor when it has one.
pub(super) fn streams<'a>(
    ctx: &ServiceContext,
    handed: &Handed,
    out: Stdio<'a>,
    err: Stdio<'a>,
    data: Option<Stdio<'a>>,
) -> Result<[Stdio<'a>; 3], String> {
    let input = match ctx.input() {
        Input::Null => Stdio::Null,
        Input::Socket => Stdio::Socket(handed.socket("StandardInput")?),
        Input::Fd(name) => Stdio::Socket(handed.named("StandardInput", &name)?),
        Input::Data => data.ok_or("StandardInput=data: the unit has no data")?,
        // Opened onto the stream by the process (its context's steps).
        Input::Tty(_) | Input::File(_) => Stdio::Inherit,
    };
    let terminal = ctx.tty_streams().map_or([false; 3], |(_, on)| on);
    let stdout = if terminal[1] {
        Stdio::Inherit
    } else if ctx.output_follows_input() {
        input
    } else {
        output(ctx.standard_output.as_ref(), out, handed, "StandardOutput")?
    };
    let stderr = if terminal[2] {
        Stdio::Inherit
    } else {
        match ctx.standard_error.as_ref() {
            // Standard error goes where standard output goes by default.
            Some(Output::Inherit) => stdout,
            None if ctx.standard_output.is_some() || ctx.output_follows_input() => {
                match stdout {
                    // A separate pipe into the same log.
                    Stdio::Fd(_) => err,
                    same => same,
                }
            }
            o => output(o, err, handed, "StandardError")?,
        }
    };
    Ok([input, stdout, stderr])
}

/// Which of standard output and standard error go to the journal where
/// the init runs journald: those that `journal` (`Output::Log`, systemd's
/// default for its units) sends to the unit's log, by itself or by
/// following the other stream. Their pipes are given too: the child keeps
/// them if it cannot connect (`sys/exec/journal.rs`).
pub(super) fn journal_targets(ctx: &ServiceContext) -> [bool; 2] {
    let terminal = ctx.tty_streams().map_or([false; 3], |(_, on)| on);
    let out =
        !terminal[1] && !ctx.output_follows_input() && ctx.standard_output == Some(Output::Log);
    let err = !terminal[2]
        && match ctx.standard_error.as_ref() {
            // Where standard output goes (by default, a pipe of its own
            // into the same log).
            None | Some(Output::Inherit) => out,
            Some(Output::Log) => true,
            Some(_) => false,
        };
    [out, err]
}

/// Where an output goes: `output` as the unit says (`None`: its log,
/// through `pipe`).
fn output<'a>(
    output: Option<&Output>,
    pipe: Stdio<'a>,
    handed: &Handed,
    key: &str,
) -> Result<Stdio<'a>, String> {
    Ok(match output {
        // A file is opened onto the stream by the unit's own process (its
        // context's first steps, `sys/fs/dirs.rs`), off the loop.
        Some(Output::File(_) | Output::Append(_) | Output::Truncate(_)) => Stdio::Inherit,
        Some(Output::Null) => Stdio::Null,
        Some(Output::Inherit | Output::Tty) => Stdio::Inherit,
        Some(Output::Socket) => Stdio::Socket(handed.socket(key)?),
        Some(Output::Fd(name)) => Stdio::Socket(handed.named(key, name)?),
        Some(Output::Log) | None => pipe,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use flotilla_units::context::Key;

    fn ctx(pairs: &[(&str, &str)]) -> ServiceContext {
        let mut c = ServiceContext::default();
        for (k, v) in pairs {
            c.set(Key::from_name(k).unwrap(), v).unwrap();
        }
        c
    }

    /// The streams as letters: n null, i inherit, s:N socket N, p pipe.
    fn shown(pairs: &[(&str, &str)], handed: &Handed) -> Result<String, String> {
        let streams = streams(&ctx(pairs), handed, Stdio::Inherit, Stdio::Inherit, None)?;
        Ok(streams
            .iter()
            .map(|s| match s {
                Stdio::Null => "n".to_string(),
                Stdio::Inherit => "i".to_string(),
                Stdio::Socket(fd) => format!("s{fd}"),
                Stdio::Fd(_) => "p".to_string(),
            })
            .collect::<Vec<_>>()
            .join(" "))
    }

    #[test]
    fn sockets_go_where_the_unit_says() {
        let one = Handed {
            fds: vec![7],
            names: "echo.socket".into(),
        };
        let two = Handed {
            fds: vec![7, 8],
            names: "a:b".into(),
        };
        let none = Handed {
            fds: vec![],
            names: String::new(),
        };
        assert_eq!(
            shown(&[("StandardInput", "socket")], &one).unwrap(),
            "s7 s7 s7"
        );
        assert_eq!(
            shown(
                &[("StandardInput", "socket"), ("StandardError", "null")],
                &one
            )
            .unwrap(),
            "s7 s7 n"
        );
        assert_eq!(
            shown(&[("StandardOutput", "socket")], &one).unwrap(),
            "n s7 s7"
        );
        assert_eq!(
            shown(&[("StandardInput", "fd:b")], &two).unwrap(),
            "s8 s8 s8"
        );
        assert_eq!(
            shown(&[("StandardInput", "socket")], &two).unwrap_err(),
            "StandardInput=socket: the unit is handed 2 sockets, not one"
        );
        assert_eq!(
            shown(&[("StandardError", "socket")], &none).unwrap_err(),
            "StandardError=socket: the unit is handed no socket"
        );
        assert_eq!(
            shown(&[("StandardInput", "fd:c")], &two).unwrap_err(),
            "StandardInput=fd:c: the unit is handed no descriptor of that name"
        );
        assert!(Handed::socket_stream(&ctx(&[("StandardError", "socket")])));
        assert!(!Handed::socket_stream(&ctx(&[("StandardInput", "fd:a")])));
    }

    #[test]
    fn a_terminal_or_a_file_is_left_to_the_process() {
        let none = Handed {
            fds: vec![],
            names: String::new(),
        };
        let getty = [
            ("StandardInput", "tty"),
            ("StandardOutput", "tty"),
            ("TTYPath", "/dev/ttyS0"),
        ];
        assert_eq!(shown(&getty, &none).unwrap(), "i i i");
        assert_eq!(
            shown(
                &[
                    ("StandardInput", "file:/etc/motd"),
                    ("StandardOutput", "null")
                ],
                &none
            )
            .unwrap(),
            "i n n"
        );
        assert_eq!(
            shown(&[("StandardInputText", "x")], &none).unwrap_err(),
            "StandardInput=data: the unit has no data"
        );
        assert_eq!(
            shown(
                &[("StandardOutput", "tty"), ("TTYPath", "/dev/tty5")],
                &none
            )
            .unwrap(),
            "n i i"
        );
        assert_eq!(shown(&[("StandardError", "null")], &none).unwrap(), "n i n");
    }

    #[test]
    fn the_journal_takes_what_journal_sends_to_the_log() {
        let t = |pairs: &[(&str, &str)]| journal_targets(&ctx(pairs));
        // systemd's default for its units, as the translator sets it.
        assert_eq!(t(&[("StandardOutput", "journal")]), [true, true]);
        assert_eq!(
            t(&[("StandardOutput", "journal"), ("StandardError", "null")]),
            [true, false]
        );
        assert_eq!(
            t(&[("StandardOutput", "null"), ("StandardError", "journal")]),
            [false, true]
        );
        // Unset (a YAML unit): the unit's log, not the journal.
        assert_eq!(t(&[]), [false, false]);
        // A terminal, a file, the input's socket: theirs.
        assert_eq!(
            t(&[("StandardInput", "tty"), ("StandardOutput", "inherit")]),
            [false, false]
        );
        assert_eq!(
            t(&[
                ("StandardOutput", "journal"),
                ("StandardError", "file:/tmp/e")
            ]),
            [true, false]
        );
    }
}
