//! Standard input and the terminal: `StandardInput=`,
//! `StandardInputText=`, `StandardInputData=`, `TTYPath=`, `TTYReset=`,
//! `TTYVHangup=`, `TTYVTDisallocate=` (systemd.exec(5)), and the rules by
//! which standard output and error follow standard input.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::process::Output;
use super::sandbox::normal_absolute;
use super::value::{parse_bool, valid_fd_name};

/// The most bytes `StandardInputText=` and `StandardInputData=` add up to
/// (systemd's `EXEC_STDIN_DATA_MAX`).
pub const DATA_MAX: usize = 64 << 20;

/// Where `StandardInput=` takes a service's standard input from.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Input {
    /// `null`: `/dev/null`.
    Null,
    /// `tty`, `tty-force`, `tty-fail`: the terminal of `TTYPath=`, made
    /// the process's controlling terminal.
    Tty(TtyMode),
    /// `data`: the bytes of `StandardInputText=` and `StandardInputData=`.
    Data,
    /// `file:PATH`: the file, read from its start.
    File(PathBuf),
    /// `socket`: the one socket the unit is handed by its socket unit.
    Socket,
    /// `fd:NAME`: the descriptor of that name the unit is handed.
    Fd(String),
}

/// How the terminal is taken when another session holds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TtyMode {
    /// `tty`: wait until the other session lets it go.
    Wait,
    /// `tty-force`: take it from the other session.
    Force,
    /// `tty-fail`: fail the start.
    Fail,
}

/// `TTYPath=` and what is done to the terminal before a process gets it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(default, rename_all = "kebab-case")]
pub struct Tty {
    /// `TTYPath=`; `None`: `/dev/console`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<PathBuf>,
    /// `TTYReset=`: the terminal's modes set back to sane defaults.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub reset: bool,
    /// `TTYVHangup=`: every process that has the terminal open is hung up.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub vhangup: bool,
    /// `TTYVTDisallocate=`: a virtual console's scroll-back is freed.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub vt_disallocate: bool,
}

impl Tty {
    /// The terminal's path: `TTYPath=` or `/dev/console`.
    pub fn path(&self) -> &Path {
        self.path.as_deref().unwrap_or(Path::new("/dev/console"))
    }

    /// Whether anything is done to the terminal before it is handed out.
    pub fn prepares(&self) -> bool {
        self.reset || self.vhangup || self.vt_disallocate
    }

    /// The number N of a virtual console `/dev/ttyN` (N ≥ 1), for
    /// `TTYVTDisallocate=`: other terminals have no scroll-back to free.
    pub fn vt_number(&self) -> Option<u32> {
        let n = self.path().to_str()?.strip_prefix("/dev/tty")?;
        n.parse().ok().filter(|&n| n >= 1)
    }

    /// `$TERM` for a process on this terminal, as systemd sets it:
    /// `linux` on a virtual console, `vt220` elsewhere (a serial line).
    pub fn default_term(&self) -> &'static str {
        let p = self.path();
        if self.vt_number().is_some() || p == Path::new("/dev/tty0") {
            "linux"
        } else {
            "vt220"
        }
    }
}

/// `StandardInput=`.
pub fn parse_input(value: &str) -> Result<Input, String> {
    let t = value.trim();
    if let Some(p) = t.strip_prefix("file:") {
        return normal_absolute(p)
            .map(Input::File)
            .map_err(|e| format!("`{t}`: {e}"));
    }
    if let Some(name) = t.strip_prefix("fd:") {
        return valid_fd_name(name).map(|()| Input::Fd(name.to_string()));
    }
    match t {
        "null" => Ok(Input::Null),
        "tty" => Ok(Input::Tty(TtyMode::Wait)),
        "tty-force" => Ok(Input::Tty(TtyMode::Force)),
        "tty-fail" => Ok(Input::Tty(TtyMode::Fail)),
        "data" => Ok(Input::Data),
        "socket" => Ok(Input::Socket),
        _ => Err(format!(
            "`{t}` is not an input (write null, tty, tty-force, tty-fail, data, file:PATH, socket or fd:NAME)"
        )),
    }
}

/// `TTYPath=`: an absolute path.
pub fn parse_tty_path(value: &str) -> Result<PathBuf, String> {
    normal_absolute(value.trim())
}

/// `TTYReset=`, `TTYVHangup=`, `TTYVTDisallocate=`: empty is `no`.
pub fn parse_flag(value: &str) -> Result<bool, String> {
    if value.trim().is_empty() {
        Ok(false)
    } else {
        parse_bool(value)
    }
}

/// Adds one `StandardInputText=` line (C escapes resolved, a newline
/// after it) to `data`; an empty value empties it.
pub fn add_text(data: &mut Vec<u8>, value: &str) -> Result<(), String> {
    if value.is_empty() {
        data.clear();
        return Ok(());
    }
    let text = crate::c_words::c_unescape(value)?;
    add_bytes(data, text.as_bytes())?;
    add_bytes(data, b"\n")
}

/// Adds one `StandardInputData=` value (Base64; whitespace ignored) to
/// `data`; an empty value empties it.
pub fn add_data(data: &mut Vec<u8>, value: &str) -> Result<(), String> {
    if value.trim().is_empty() {
        data.clear();
        return Ok(());
    }
    let bytes = base64(value)?;
    add_bytes(data, &bytes)
}

fn add_bytes(data: &mut Vec<u8>, more: &[u8]) -> Result<(), String> {
    if data.len() + more.len() > DATA_MAX {
        return Err(format!(
            "the standard input data would be more than {} MiB",
            DATA_MAX >> 20
        ));
    }
    data.extend_from_slice(more);
    Ok(())
}

/// Decodes Base64 (RFC 4648, `=` padding optional), whitespace ignored.
fn base64(value: &str) -> Result<Vec<u8>, String> {
    let digit = |c: u8| -> Option<u32> {
        match c {
            b'A'..=b'Z' => Some(u32::from(c - b'A')),
            b'a'..=b'z' => Some(u32::from(c - b'a') + 26),
            b'0'..=b'9' => Some(u32::from(c - b'0') + 52),
            b'+' => Some(62),
            b'/' => Some(63),
            _ => None,
        }
    };
    let text: Vec<u8> = value.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    let body = text
        .iter()
        .position(|&b| b == b'=')
        .map_or(&text[..], |i| &text[..i]);
    let pad = text.len() - body.len();
    if pad > 2 || text[body.len()..].iter().any(|&b| b != b'=') || body.len() % 4 == 1 {
        return Err("not valid Base64".to_string());
    }
    let mut out = Vec::with_capacity(body.len() * 3 / 4);
    for chunk in body.chunks(4) {
        let mut acc = 0u32;
        for &c in chunk {
            acc = (acc << 6) | digit(c).ok_or("not valid Base64")?;
        }
        acc <<= 6 * (4 - chunk.len() as u32);
        let bytes = acc.to_be_bytes();
        out.extend_from_slice(&bytes[1..chunk.len()]);
    }
    Ok(out)
}

/// Whether standard output is what standard input is: `StandardOutput=`
/// unset with a terminal, socket or named descriptor as input (systemd's
/// default `inherit` for those), or `inherit` with an input that is not
/// `null` or `data`.
pub fn output_follows_input(input: &Input, output: Option<&Output>) -> bool {
    match output {
        None => matches!(input, Input::Tty(_) | Input::Socket | Input::Fd(_)),
        Some(Output::Inherit) => !matches!(input, Input::Null | Input::Data),
        Some(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inputs() {
        assert_eq!(parse_input("null"), Ok(Input::Null));
        assert_eq!(parse_input("tty"), Ok(Input::Tty(TtyMode::Wait)));
        assert_eq!(parse_input(" tty-force"), Ok(Input::Tty(TtyMode::Force)));
        assert_eq!(parse_input("tty-fail"), Ok(Input::Tty(TtyMode::Fail)));
        assert_eq!(parse_input("data"), Ok(Input::Data));
        assert_eq!(parse_input("socket"), Ok(Input::Socket));
        assert_eq!(
            parse_input("file:/etc//motd"),
            Ok(Input::File("/etc/motd".into()))
        );
        assert_eq!(parse_input("fd:stdin"), Ok(Input::Fd("stdin".into())));
        assert_eq!(
            parse_input("file:motd").unwrap_err(),
            "`file:motd`: `motd` is not an absolute path"
        );
        assert_eq!(
            parse_input("fd:a:b").unwrap_err(),
            "`a:b` is not a descriptor name (printable characters, no `:`)"
        );
        assert_eq!(
            parse_input("keyboard").unwrap_err(),
            "`keyboard` is not an input (write null, tty, tty-force, tty-fail, data, file:PATH, socket or fd:NAME)"
        );
    }

    #[test]
    fn text_and_data_add_up_and_an_empty_value_resets() {
        let mut d = Vec::new();
        add_text(&mut d, r"hello\tworld").unwrap();
        add_data(&mut d, "AAEC /w==").unwrap();
        add_text(&mut d, r"\x41").unwrap();
        assert_eq!(d, b"hello\tworld\n\x00\x01\x02\xffA\n");
        add_data(&mut d, "").unwrap();
        assert!(d.is_empty());
        add_data(&mut d, "aGk").unwrap();
        assert_eq!(d, b"hi");
        assert_eq!(add_data(&mut d, "a*==").unwrap_err(), "not valid Base64");
        assert_eq!(add_data(&mut d, "abcde").unwrap_err(), "not valid Base64");
        assert_eq!(add_text(&mut d, r"\q").unwrap_err(), "invalid escape \\q");
        assert_eq!(d, b"hi");
    }

    #[test]
    fn the_terminal() {
        let mut t = Tty::default();
        assert_eq!(t.path(), Path::new("/dev/console"));
        assert_eq!(t.default_term(), "vt220");
        assert!(!t.prepares());
        t.path = Some("/dev/tty3".into());
        assert_eq!((t.vt_number(), t.default_term()), (Some(3), "linux"));
        t.path = Some("/dev/ttyS0".into());
        assert_eq!((t.vt_number(), t.default_term()), (None, "vt220"));
        t.vhangup = true;
        assert!(t.prepares());
        assert_eq!(parse_flag(""), Ok(false));
        assert_eq!(parse_tty_path("/dev/ttyS0"), Ok("/dev/ttyS0".into()));
        assert!(parse_tty_path("ttyS0").is_err());
    }

    #[test]
    fn output_follows_a_terminal_a_socket_or_a_descriptor() {
        let tty = Input::Tty(TtyMode::Wait);
        assert!(output_follows_input(&tty, None));
        assert!(output_follows_input(&Input::Socket, None));
        assert!(output_follows_input(&Input::Fd("x".into()), None));
        assert!(!output_follows_input(&Input::Null, None));
        assert!(!output_follows_input(&Input::File("/f".into()), None));
        assert!(output_follows_input(
            &Input::File("/f".into()),
            Some(&Output::Inherit)
        ));
        assert!(!output_follows_input(&Input::Data, Some(&Output::Inherit)));
        assert!(!output_follows_input(&tty, Some(&Output::Null)));
    }
}
