//! The per-process keys that are plain values: `UMask=`, `Nice=`,
//! `OOMScoreAdjust=`, `StandardOutput=`/`StandardError=`, `KillMode=`,
//! `OOMPolicy=`,
//! `UnsetEnvironment=` and `PAMName=`.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::sandbox::normal_absolute;
use super::value::{parse_int_in, parse_mode, valid_fd_name, words};

/// Where `StandardOutput=` or `StandardError=` sends a stream.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Output {
    /// `inherit`: stdout gets what stdin is; stderr gets what stdout is.
    Inherit,
    /// `null`: `/dev/null`.
    Null,
    /// `journal`, `syslog`, `kmsg` and their `+console` forms: the unit's
    /// log (what `initctl logs` shows).
    Log,
    /// `tty`: the terminal of `TTYPath=`; without one, the init's
    /// console.
    Tty,
    /// `file:PATH`: the file, written from its start without truncating.
    File(PathBuf),
    /// `append:PATH`: the file, appended to.
    Append(PathBuf),
    /// `truncate:PATH`: the file, emptied first.
    Truncate(PathBuf),
    /// `socket`: the one socket the unit is handed by its socket unit.
    Socket,
    /// `fd:NAME`: the descriptor of that name the unit is handed.
    Fd(String),
}

/// `StandardOutput=`, `StandardError=`.
pub fn parse_output(value: &str) -> Result<Output, String> {
    let t = value.trim();
    let path = |p: &str| normal_absolute(p).map_err(|e| format!("`{t}`: {e}"));
    if let Some(p) = t.strip_prefix("file:") {
        return path(p).map(Output::File);
    }
    if let Some(p) = t.strip_prefix("append:") {
        return path(p).map(Output::Append);
    }
    if let Some(p) = t.strip_prefix("truncate:") {
        return path(p).map(Output::Truncate);
    }
    if let Some(name) = t.strip_prefix("fd:") {
        return valid_fd_name(name).map(|()| Output::Fd(name.to_string()));
    }
    match t {
        "inherit" => Ok(Output::Inherit),
        "null" => Ok(Output::Null),
        "journal" | "syslog" | "kmsg" | "journal+console" | "syslog+console" | "kmsg+console" => {
            Ok(Output::Log)
        }
        "tty" => Ok(Output::Tty),
        "socket" => Ok(Output::Socket),
        _ => Err(format!(
            "`{t}` is not an output (write inherit, null, journal, tty, file:PATH, append:PATH, truncate:PATH, socket or fd:NAME)"
        )),
    }
}

/// `KillMode=`: which processes a stop signals.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum KillMode {
    /// Every process of the unit's cgroup gets the stop signal, then
    /// `SIGKILL` after the timeout.
    #[default]
    ControlGroup,
    /// The main process gets the stop signal; every process of the cgroup
    /// gets `SIGKILL` after the timeout.
    Mixed,
    /// Only the main process is signalled; the rest are left running.
    Process,
    /// No process is signalled (`ExecStop=` alone stops the unit).
    None,
}

impl KillMode {
    /// The name `KillMode=` writes.
    pub fn as_str(self) -> &'static str {
        match self {
            KillMode::ControlGroup => "control-group",
            KillMode::Mixed => "mixed",
            KillMode::Process => "process",
            KillMode::None => "none",
        }
    }
}

/// `KillMode=`.
pub fn parse_kill_mode(value: &str) -> Result<KillMode, String> {
    match value.trim() {
        "control-group" => Ok(KillMode::ControlGroup),
        "mixed" => Ok(KillMode::Mixed),
        "process" => Ok(KillMode::Process),
        "none" => Ok(KillMode::None),
        t => Err(format!(
            "`{t}` is not a kill mode (write control-group, mixed, process or none)"
        )),
    }
}

/// `OOMPolicy=`: what the kernel's OOM killer taking one of the unit's
/// processes does to the unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OomPolicy {
    /// The unit fails (`oom-kill`) and what is left of it is stopped
    /// (systemd's default, `DefaultOOMPolicy=stop`).
    #[default]
    Stop,
    /// The unit fails as with `stop`; the kernel is also told to kill the
    /// whole cgroup at once (`memory.oom.group`).
    Kill,
    /// Nothing: the unit goes on (a main process killed ends it as any
    /// signal does).
    Continue,
}

impl OomPolicy {
    /// systemd's word.
    pub fn as_str(self) -> &'static str {
        match self {
            OomPolicy::Stop => "stop",
            OomPolicy::Kill => "kill",
            OomPolicy::Continue => "continue",
        }
    }
}

/// `OOMPolicy=`.
pub fn parse_oom_policy(value: &str) -> Result<OomPolicy, String> {
    match value.trim() {
        "stop" => Ok(OomPolicy::Stop),
        "kill" => Ok(OomPolicy::Kill),
        "continue" => Ok(OomPolicy::Continue),
        t => Err(format!(
            "`{t}` is not an OOM policy (write stop, kill or continue)"
        )),
    }
}

/// `UMask=`: an octal mode up to `0777`.
pub fn parse_umask(value: &str) -> Result<u32, String> {
    let m = parse_mode(value)?;
    if m > 0o777 {
        return Err(format!("`{}` is more than 0777", value.trim()));
    }
    Ok(m)
}

/// `Nice=`: -20 (most favoured) to 19.
pub fn parse_nice(value: &str) -> Result<i32, String> {
    parse_int_in(value, -20, 19, "a nice level").map(|n| n as i32)
}

/// `OOMScoreAdjust=`: -1000 (never killed for memory) to 1000.
pub fn parse_oom_score_adjust(value: &str) -> Result<i32, String> {
    parse_int_in(value, -1000, 1000, "an OOM score adjustment").map(|n| n as i32)
}

/// `UnsetEnvironment=`: names (`LANG`) or assignments (`LANG=C`, taken
/// out only when the value is that one), added to `list`; an empty value
/// empties it. A name is not empty and holds no `=` or control character.
pub fn assign_unset(list: &mut Vec<String>, value: &str) -> Result<(), String> {
    if value.trim().is_empty() {
        list.clear();
        return Ok(());
    }
    let entries = words(value)?;
    for e in &entries {
        let name = e.split_once('=').map_or(e.as_str(), |(n, _)| n);
        if name.is_empty() || name.chars().any(char::is_control) {
            return Err(format!("`{e}` is not a variable name or an assignment"));
        }
    }
    list.extend(entries);
    Ok(())
}

/// `PAMName=`: a PAM service, the name of a file in `/etc/pam.d`.
pub(crate) fn parse_pam_name(v: &str) -> Result<String, String> {
    if v == "."
        || v == ".."
        || v.contains('/')
        || v.chars().any(|c| c.is_whitespace() || c.is_control())
    {
        return Err(format!(
            "`{}` is not a PAM service (the name of a file in /etc/pam.d)",
            v.escape_debug()
        ));
    }
    Ok(v.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unset_environment_lists() {
        let mut l = Vec::new();
        assign_unset(&mut l, "LANG LC_ALL=C").unwrap();
        assign_unset(&mut l, "TERM").unwrap();
        assert_eq!(l, ["LANG", "LC_ALL=C", "TERM"]);
        assert_eq!(
            assign_unset(&mut l, "=x").unwrap_err(),
            "`=x` is not a variable name or an assignment"
        );
        assert_eq!(l.len(), 3, "nothing changes on error");
        assign_unset(&mut l, "").unwrap();
        assert!(l.is_empty());
    }

    #[test]
    fn outputs() {
        assert_eq!(parse_output("null"), Ok(Output::Null));
        assert_eq!(parse_output("inherit"), Ok(Output::Inherit));
        assert_eq!(parse_output("journal"), Ok(Output::Log));
        assert_eq!(parse_output("kmsg+console"), Ok(Output::Log));
        assert_eq!(
            parse_output("file:/var/log/x.log"),
            Ok(Output::File("/var/log/x.log".into()))
        );
        assert_eq!(
            parse_output("append:/var/log//x"),
            Ok(Output::Append("/var/log/x".into()))
        );
        assert_eq!(
            parse_output("truncate:/tmp/t"),
            Ok(Output::Truncate("/tmp/t".into()))
        );
        assert_eq!(parse_output("fd:web"), Ok(Output::Fd("web".into())));
        assert_eq!(parse_output("socket"), Ok(Output::Socket));
        assert!(parse_output("fd:").is_err());
        assert_eq!(
            parse_output("file:relative").unwrap_err(),
            "`file:relative`: `relative` is not an absolute path"
        );
        assert_eq!(
            parse_output("printer").unwrap_err(),
            "`printer` is not an output (write inherit, null, journal, tty, file:PATH, append:PATH, truncate:PATH, socket or fd:NAME)"
        );
    }

    #[test]
    fn oom_policies() {
        for p in [OomPolicy::Stop, OomPolicy::Kill, OomPolicy::Continue] {
            assert_eq!(parse_oom_policy(p.as_str()), Ok(p));
        }
        assert_eq!(OomPolicy::default(), OomPolicy::Stop);
        assert_eq!(
            parse_oom_policy("ignore").unwrap_err(),
            "`ignore` is not an OOM policy (write stop, kill or continue)"
        );
    }

    #[test]
    fn kill_modes() {
        assert_eq!(parse_kill_mode("control-group"), Ok(KillMode::ControlGroup));
        assert_eq!(parse_kill_mode("mixed"), Ok(KillMode::Mixed));
        assert_eq!(parse_kill_mode("process"), Ok(KillMode::Process));
        assert_eq!(parse_kill_mode("none"), Ok(KillMode::None));
        assert_eq!(
            parse_kill_mode("all").unwrap_err(),
            "`all` is not a kill mode (write control-group, mixed, process or none)"
        );
    }

    #[test]
    fn umask_nice_and_oom() {
        assert_eq!(parse_umask("0027"), Ok(0o027));
        assert_eq!(parse_umask("0777"), Ok(0o777));
        assert_eq!(parse_umask("1777").unwrap_err(), "`1777` is more than 0777");
        assert_eq!(parse_nice("-5"), Ok(-5));
        assert_eq!(
            parse_nice("20").unwrap_err(),
            "20 is out of range (a nice level is from -20 to 19)"
        );
        assert_eq!(parse_oom_score_adjust("-1000"), Ok(-1000));
        assert_eq!(
            parse_oom_score_adjust("1001").unwrap_err(),
            "1001 is out of range (an OOM score adjustment is from -1000 to 1000)"
        );
    }
}
