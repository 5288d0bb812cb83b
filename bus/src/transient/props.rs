//! A transient unit's properties (`StartTransientUnit`) decoded back
//! into the unit-file lines they stand for, which the translator of unit
//! files then reads (docs/dbus.md, "Transient services"). systemd's client
//! (`systemd-run -p Key=Value`) turns each unit-file setting into a
//! property of a D-Bus type (`RuntimeMaxSec=5s` becomes `RuntimeMaxUSec`,
//! a `t` of microseconds); [`ROWS`] turns it back, one row per shape, so
//! that every key the translator takes is taken here too. Pure: no I/O.

use crate::error::BusError;
use flotilla_units::context::placement::{IndexSet, NumaPolicy};
use flotilla_units::spec::Signal;
use zbus::zvariant::OwnedValue;

/// How a property's value is written as a unit-file value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Form {
    /// `s`: the text as is.
    Text,
    /// `s`: the text after a prefix (`StandardOutputFile` is
    /// `StandardOutput=file:PATH`).
    Prefixed(&'static str),
    /// `b`: `yes` or `no`.
    Bool,
    /// `t`, microseconds: `Nus`, `infinity` for the largest.
    Span,
    /// `t`, `i`, `u`: the number; `infinity` for the largest `t`.
    Number,
    /// `u`: an octal file mode.
    Mode,
    /// `as`: the words, quoted where they need it.
    Words,
    /// `t`: a resource limit's hard value, written with its soft one
    /// (`LimitNOFILESoft`) as `SOFT:HARD`.
    Limit,
    /// `a(sasb)`: commands (program, argv, ignore failure), one line each.
    Commands,
    /// `a(sasas)`: commands with systemd's flags (`ExecStartPostEx`).
    CommandsEx,
    /// `a(sb)`: environment files (path, optional), one line each.
    EnvFiles,
    /// `(aiai)`: exit statuses and signals.
    ExitStatuses,
    /// systemd-run's own bookkeeping, nothing of the unit's (`AddRef`,
    /// `CollectMode`).
    Skip,
    /// `t`: CPU time per second, microseconds, as `CPUQuota=`'s percent
    /// (`10%` for 100000); no quota for the largest.
    Quota,
    /// `ay`: bytes, in Base64 (`StandardInputData=`).
    Base64,
    /// A number that stands for names systemd's client looked up
    /// (capability masks, facility and class numbers …), not decoded.
    Opaque,
    /// `a(st)`: a timer's monotonic elapses (`TimersMonotonic`), each its
    /// key (`OnActiveSec` …) and microseconds: one `KEY=Nus` line each.
    Monotonic,
    /// `a(ss)`: settings of a few keys in one list, each its key (one of
    /// these, as sent: `OnCalendar` of `TimersCalendar`, `PathExists` of
    /// `Paths`, `Stream` of `Listen`) and value: one line each, its key
    /// the prefix (`Listen`) and the key sent; an empty list resets
    /// them, as an empty line of the first key.
    Pairs(&'static [&'static str], &'static str),
    /// `a(ss)`: `TemporaryFileSystem`'s paths and mount options, one
    /// `PATH[:OPTIONS]` line each.
    Tmpfs,
    /// `i`: a NUMA policy's number, as its name (`NUMAPolicy=bind`).
    Policy,
    /// `ay`: a set of CPUs or nodes, bit `n % 8` of byte `n / 8`, as
    /// systemd's list (`0-1 3`).
    Indices,
    /// `b`: this word when true, the key's reset when false
    /// (`CPUAffinityFromNUMA` is `CPUAffinity=numa`).
    IfTrue(&'static str),
    /// `a(sst)`: a directory key's links (`StateDirectorySymlink`), each
    /// its directory, its link and flags (none defined): one `NAME:LINK`
    /// line each, a colon in either written `\:`.
    DirLinks,
}

/// The unit-file key a property stands for.
#[derive(Debug, Clone, Copy)]
enum KeyOf {
    /// The property's own name.
    Same,
    /// Another name.
    Named(&'static str),
    /// The name with this suffix dropped and the other one put instead
    /// (`RuntimeMaxUSec` is `RuntimeMaxSec=`, `ExecStartPostEx` is
    /// `ExecStartPost=`).
    Suffix(&'static str, &'static str),
}

/// One shape of property: its name (`Name`, `*Suffix` or `Prefix*`), its
/// D-Bus signature, the unit-file key and how its value is written.
struct Row(&'static str, &'static str, KeyOf, Form);

use Form::*;
use KeyOf::*;

/// The properties of a transient unit, as systemd's client makes them
/// (src/shared/bus-unit-util.c in systemd's source). The first row whose
/// name and signature match decides; the last rows are by signature alone.
const ROWS: &[Row] = &[
    Row("AddRef", "b", Same, Skip),
    Row("CollectMode", "s", Same, Skip),
    Row(
        "StandardInputFile",
        "s",
        Named("StandardInput"),
        Prefixed("file:"),
    ),
    Row(
        "StandardOutputFile",
        "s",
        Named("StandardOutput"),
        Prefixed("file:"),
    ),
    Row(
        "StandardOutputFileToAppend",
        "s",
        Named("StandardOutput"),
        Prefixed("append:"),
    ),
    Row(
        "StandardOutputFileToTruncate",
        "s",
        Named("StandardOutput"),
        Prefixed("truncate:"),
    ),
    Row(
        "StandardErrorFile",
        "s",
        Named("StandardError"),
        Prefixed("file:"),
    ),
    Row(
        "StandardErrorFileToAppend",
        "s",
        Named("StandardError"),
        Prefixed("append:"),
    ),
    Row(
        "StandardErrorFileToTruncate",
        "s",
        Named("StandardError"),
        Prefixed("truncate:"),
    ),
    Row(
        "StandardInputFileDescriptorName",
        "s",
        Named("StandardInput"),
        Prefixed("fd:"),
    ),
    Row(
        "StandardOutputFileDescriptorName",
        "s",
        Named("StandardOutput"),
        Prefixed("fd:"),
    ),
    Row(
        "StandardErrorFileDescriptorName",
        "s",
        Named("StandardError"),
        Prefixed("fd:"),
    ),
    Row(
        "EnvironmentFiles",
        "a(sb)",
        Named("EnvironmentFile"),
        EnvFiles,
    ),
    Row("DelegateControllers", "as", Named("Delegate"), Words),
    Row("TimersMonotonic", "a(st)", Same, Monotonic),
    Row("TimersCalendar", "a(ss)", Same, Pairs(&["OnCalendar"], "")),
    Row("Paths", "a(ss)", Same, Pairs(&PATHS, "")),
    Row("Listen", "a(ss)", Same, Pairs(&LISTEN, "Listen")),
    Row("StandardInputData", "ay", Same, Base64),
    Row("TemporaryFileSystem", "a(ss)", Same, Tmpfs),
    Row(
        "*DirectorySymlink",
        "a(sst)",
        Suffix("Symlink", ""),
        DirLinks,
    ),
    Row("UMask", "u", Same, Mode),
    Row("*DirectoryMode", "u", Same, Mode),
    // A mount's, a path's, a socket's: the mode of the directories it
    // makes; a socket's file.
    Row("DirectoryMode", "u", Same, Mode),
    Row("SocketMode", "u", Same, Mode),
    Row("Limit*", "t", Same, Limit),
    Row("CapabilityBoundingSet", "t", Same, Opaque),
    Row("AmbientCapabilities", "t", Same, Opaque),
    Row("RestrictNamespaces", "t", Same, Opaque),
    Row("MountFlags", "t", Same, Opaque),
    Row("CoredumpFilter", "t", Same, Opaque),
    Row("CPUQuotaPerSecUSec", "t", Named("CPUQuota"), Quota),
    Row("SyslogFacility", "i", Same, Opaque),
    Row("IOSchedulingClass", "i", Same, Opaque),
    Row("CPUSchedulingPolicy", "i", Same, Opaque),
    Row("SecureBits", "i", Same, Opaque),
    Row("NUMAPolicy", "i", Same, Policy),
    Row("NUMAMask", "ay", Same, Indices),
    Row("CPUAffinity", "ay", Same, Indices),
    Row(
        "CPUAffinityFromNUMA",
        "b",
        Named("CPUAffinity"),
        IfTrue("numa"),
    ),
    Row("SystemCallErrorNumber", "i", Same, Opaque),
    Row("*USec", "t", Suffix("USec", "Sec"), Span),
    Row("*Ex", "a(sasas)", Suffix("Ex", ""), CommandsEx),
    Row("*", "s", Same, Text),
    Row("*", "b", Same, Bool),
    Row("*", "t", Same, Number),
    Row("*", "i", Same, Number),
    Row("*", "u", Same, Number),
    Row("*", "as", Same, Words),
    Row("*", "a(sasb)", Same, Commands),
    Row("*", "(aiai)", Same, ExitStatuses),
];

/// The keys of a timer's monotonic elapses (`TimersMonotonic`).
const MONOTONIC: [&str; 5] = [
    "OnActiveSec",
    "OnBootSec",
    "OnStartupSec",
    "OnUnitActiveSec",
    "OnUnitInactiveSec",
];

/// The keys of a path unit's watched paths (`Paths`), as systemd's
/// client sends them (src/shared/bus-unit-util.c).
const PATHS: [&str; 5] = [
    "PathExists",
    "PathExistsGlob",
    "PathChanged",
    "PathModified",
    "DirectoryNotEmpty",
];

/// The kinds of a socket's sockets (`Listen`: `Stream` is
/// `ListenStream=`), as systemd's client sends them.
const LISTEN: [&str; 8] = [
    "Stream",
    "Datagram",
    "SequentialPacket",
    "Netlink",
    "Special",
    "MessageQueue",
    "FIFO",
    "USBFunction",
];

/// Whether `name` is what the row's pattern names.
fn matches(pattern: &str, name: &str) -> bool {
    if pattern == "*" {
        true
    } else if let Some(suffix) = pattern.strip_prefix('*') {
        name.len() > suffix.len() && name.ends_with(suffix)
    } else if let Some(prefix) = pattern.strip_suffix('*') {
        name.len() > prefix.len() && name.starts_with(prefix)
    } else {
        pattern == name
    }
}

/// One line of the unit file: the property it came from, the key and
/// the value as a unit file writes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// The D-Bus property.
    pub property: String,
    /// The unit-file key.
    pub key: String,
    /// Its value, quoted and escaped as the unit-file reader wants it.
    pub value: String,
}

fn bad(property: &str, e: impl std::fmt::Display) -> BusError {
    BusError::invalid_args(format!("property {property}: {e}"))
}

/// A property no row decodes, or one the table does not decode by design.
fn not_decoded(property: &str, signature: &str, why: &str) -> BusError {
    BusError::not_supported(
        &format!("StartTransientUnit with {property} (D-Bus type {signature})"),
        why,
    )
}

/// The unit-file lines `props` stand for, in order; a property systemd's
/// client sends in a shape no row decodes is refused, naming it.
pub fn lines(props: Vec<(String, OwnedValue)>) -> Result<Vec<Line>, BusError> {
    // A limit's soft value goes with its hard one (`SOFT:HARD`).
    let mut soft = Vec::new();
    let mut out = Vec::new();
    let mut limits = Vec::new();
    for (property, value) in props {
        let signature = value.value_signature().to_string();
        let Some(Row(_, _, key_of, form)) = ROWS
            .iter()
            .find(|Row(p, s, _, _)| *s == signature && matches(p, &property))
        else {
            return Err(not_decoded(
                &property,
                &signature,
                "flotilla decodes a transient unit's properties in the shapes \
                 systemd-run sends for the unit-file keys it takes (docs/dbus.md)",
            ));
        };
        let key = match *key_of {
            Same => property.clone(),
            Named(k) => k.to_string(),
            Suffix(old, new) => {
                format!("{}{new}", property.strip_suffix(old).unwrap_or(&property))
            }
        };
        let keyed = |key: &str, value: String| Line {
            property: property.clone(),
            key: key.to_string(),
            value,
        };
        let one = |value: String| keyed(&key, value);
        match form {
            Skip => {}
            Quota => {
                let us = u64::try_from(value).map_err(|e| bad(&property, e))?;
                out.push(one(match us {
                    u64::MAX => String::new(),
                    n if n % 10_000 == 0 => format!("{}%", n / 10_000),
                    n => format!("{}.{:02}%", n / 10_000, (n % 10_000) / 100),
                }));
            }
            Opaque => {
                return Err(not_decoded(
                    &property,
                    &signature,
                    "its value is a number systemd's client made of names, which flotilla \
                     does not decode: give the setting in a unit file",
                ))
            }
            Policy => {
                let n = i32::try_from(value).map_err(|e| bad(&property, e))?;
                let p = NumaPolicy::from_number(n)
                    .ok_or_else(|| bad(&property, format!("{n} is not a NUMA policy")))?;
                out.push(one(p.name().to_string()));
            }
            Indices => {
                let bytes = <Vec<u8>>::try_from(value).map_err(|e| bad(&property, e))?;
                out.push(one(IndexSet::from_bytes(&bytes).to_text()));
            }
            IfTrue(word) => {
                let b = bool::try_from(value).map_err(|e| bad(&property, e))?;
                out.push(one(if b { word } else { "" }.to_string()));
            }
            Text => out.push(one(text(&property, String::try_from(value))?)),
            Prefixed(prefix) => {
                let v = text(&property, String::try_from(value))?;
                out.push(one(format!("{prefix}{v}")));
            }
            Bool => {
                let b = bool::try_from(value).map_err(|e| bad(&property, e))?;
                out.push(one(if b { "yes" } else { "no" }.to_string()));
            }
            Span => {
                let us = u64::try_from(value).map_err(|e| bad(&property, e))?;
                out.push(one(if us == u64::MAX {
                    "infinity".to_string()
                } else {
                    format!("{us}us")
                }));
            }
            Number => out.push(one(number(&property, value)?)),
            Base64 => {
                let bytes = <Vec<u8>>::try_from(value).map_err(|e| bad(&property, e))?;
                out.push(one(base64(&bytes)));
            }
            Mode => {
                let m = u32::try_from(value).map_err(|e| bad(&property, e))?;
                out.push(one(format!("{m:04o}")));
            }
            Limit => {
                let v = number(&property, value)?;
                match property.strip_suffix("Soft") {
                    Some(hard) => soft.push((hard.to_string(), v)),
                    None => {
                        limits.push(out.len());
                        out.push(one(v));
                    }
                }
            }
            Words => {
                let words = <Vec<String>>::try_from(value).map_err(|e| bad(&property, e))?;
                let quoted: Result<Vec<String>, BusError> =
                    words.iter().map(|w| quote(&property, w)).collect();
                out.push(one(quoted?.join(" ")));
            }
            Commands => {
                let cmds = <Vec<(String, Vec<String>, bool)>>::try_from(value)
                    .map_err(|e| bad(&property, e))?;
                if cmds.is_empty() {
                    out.push(one(String::new()));
                }
                for (path, argv, ignore) in cmds {
                    let prefix = if ignore { "-" } else { "" };
                    out.push(one(command(&property, prefix, &path, &argv)?));
                }
            }
            CommandsEx => {
                let cmds = <Vec<(String, Vec<String>, Vec<String>)>>::try_from(value)
                    .map_err(|e| bad(&property, e))?;
                if cmds.is_empty() {
                    out.push(one(String::new()));
                }
                for (path, argv, flags) in cmds {
                    let prefix = prefixes(&property, &flags)?;
                    out.push(one(command(&property, &prefix, &path, &argv)?));
                }
            }
            EnvFiles => {
                let files =
                    <Vec<(String, bool)>>::try_from(value).map_err(|e| bad(&property, e))?;
                if files.is_empty() {
                    out.push(one(String::new()));
                }
                for (path, optional) in files {
                    let path = text(&property, Ok::<_, std::convert::Infallible>(path))?;
                    out.push(one(format!("{}{path}", if optional { "-" } else { "" })));
                }
            }
            Monotonic => {
                let timers =
                    <Vec<(String, u64)>>::try_from(value).map_err(|e| bad(&property, e))?;
                // An empty list resets them, as an empty line of each key.
                if timers.is_empty() {
                    out.extend(MONOTONIC.iter().map(|k| keyed(k, String::new())));
                }
                for (k, us) in timers {
                    if !MONOTONIC.contains(&k.as_str()) {
                        return Err(bad(&property, format!("{k}: not a monotonic timer")));
                    }
                    out.push(keyed(&k, format!("{us}us")));
                }
            }
            Tmpfs => {
                let mounts =
                    <Vec<(String, String)>>::try_from(value).map_err(|e| bad(&property, e))?;
                if mounts.is_empty() {
                    out.push(one(String::new()));
                }
                for (path, options) in mounts {
                    let word = if options.is_empty() {
                        path
                    } else {
                        format!("{path}:{options}")
                    };
                    out.push(one(quote(&property, &word)?));
                }
            }
            DirLinks => {
                let links =
                    <Vec<(String, String, u64)>>::try_from(value).map_err(|e| bad(&property, e))?;
                for (name, link, flags) in links {
                    if flags != 0 {
                        return Err(bad(&property, format!("flags {flags:#x}: none is defined")));
                    }
                    let word = format!(
                        "{}:{}",
                        dir_word(&property, &name)?,
                        dir_word(&property, &link)?
                    );
                    out.push(one(word));
                }
            }
            Pairs(keys, prefix) => {
                let pairs =
                    <Vec<(String, String)>>::try_from(value).map_err(|e| bad(&property, e))?;
                if let Some(first) = keys.first().filter(|_| pairs.is_empty()) {
                    out.push(keyed(&format!("{prefix}{first}"), String::new()));
                }
                for (k, v) in pairs {
                    if !keys.contains(&k.as_str()) {
                        return Err(bad(
                            &property,
                            format!("{k}: not one of {}", keys.join(", ")),
                        ));
                    }
                    out.push(keyed(
                        &format!("{prefix}{k}"),
                        text(&property, Ok::<_, std::convert::Infallible>(v))?,
                    ));
                }
            }
            ExitStatuses => {
                let (codes, signals) =
                    <(Vec<i32>, Vec<i32>)>::try_from(value).map_err(|e| bad(&property, e))?;
                let words: Vec<String> = codes
                    .iter()
                    .map(ToString::to_string)
                    .chain(signals.iter().map(|&s| Signal(s).name()))
                    .collect();
                out.push(one(words.join(" ")));
            }
        }
    }
    for (hard_property, v) in soft {
        let at = limits
            .iter()
            .copied()
            .find(|&i| out.get(i).is_some_and(|l| l.property == hard_property));
        let Some(line) = at.and_then(|i| out.get_mut(i)) else {
            return Err(bad(
                &format!("{hard_property}Soft"),
                format!("a soft limit without its hard one ({hard_property})"),
            ));
        };
        line.value = format!("{v}:{}", line.value);
    }
    Ok(out)
}

/// `bytes` in Base64 (RFC 4648, with padding), as `StandardInputData=`
/// reads it.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let byte = |i: usize| u32::from(chunk.get(i).copied().unwrap_or(0));
        let n = byte(0) << 16 | byte(1) << 8 | byte(2);
        for (i, shift) in [18u32, 12, 6, 0].into_iter().enumerate() {
            let sextet = ALPHABET.get((n >> shift & 63) as usize).copied();
            // A chunk of k bytes gives k + 1 characters, then padding.
            match sextet.filter(|_| i <= chunk.len()) {
                Some(c) => out.push(char::from(c)),
                None => out.push('='),
            }
        }
    }
    out
}

/// A `t`, `i` or `u` as a unit file writes it.
fn number(property: &str, value: OwnedValue) -> Result<String, BusError> {
    let signature = value.value_signature().to_string();
    Ok(match signature.as_str() {
        "t" => match u64::try_from(value).map_err(|e| bad(property, e))? {
            u64::MAX => "infinity".to_string(),
            n => n.to_string(),
        },
        "i" => i32::try_from(value)
            .map_err(|e| bad(property, e))?
            .to_string(),
        _ => u32::try_from(value)
            .map_err(|e| bad(property, e))?
            .to_string(),
    })
}

/// A string value written as is: its `%` doubled (a property is not
/// expanded as a unit file's specifiers are), refused where a unit-file
/// line cannot hold it.
fn text<E: std::fmt::Display>(property: &str, v: Result<String, E>) -> Result<String, BusError> {
    let v = v.map_err(|e| bad(property, e))?;
    if v.contains(['\n', '\r', '\0']) || v.ends_with('\\') {
        return Err(bad(
            property,
            format!("{v:?}: a line break, NUL or trailing backslash"),
        ));
    }
    Ok(v.replace('%', "%%"))
}

/// A directory name of a `NAME:LINK` word: its colons escaped (`\:`), `%`
/// doubled; a name the word could not carry as itself is refused.
fn dir_word(property: &str, name: &str) -> Result<String, BusError> {
    if name.is_empty()
        || name
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || matches!(c, '"' | '\'' | '\\'))
    {
        return Err(bad(
            property,
            format!("{name:?}: empty, or a space, quote, backslash or control character"),
        ));
    }
    Ok(name.replace('%', "%%").replace(':', "\\:"))
}

/// One word of a command line or a list: as is where it reads back as
/// itself, else in double quotes with C escapes; `%` doubled.
fn quote(property: &str, w: &str) -> Result<String, BusError> {
    if w.contains('\0') {
        return Err(bad(property, format!("{w:?}: a NUL")));
    }
    let plain = !w.is_empty()
        && w != ";"
        && !w
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || matches!(c, '"' | '\'' | '\\'));
    let w = w.replace('%', "%%");
    if plain {
        return Ok(w);
    }
    let mut q = String::with_capacity(w.len() + 2);
    q.push('"');
    for c in w.chars() {
        match c {
            '"' => q.push_str("\\\""),
            '\\' => q.push_str("\\\\"),
            '\n' => q.push_str("\\n"),
            '\t' => q.push_str("\\t"),
            '\r' => q.push_str("\\r"),
            c if c.is_control() => q.push_str(&format!("\\x{:02x}", u32::from(c))),
            c => q.push(c),
        }
    }
    q.push('"');
    Ok(q)
}

/// A command line: the prefixes, then the program and its arguments;
/// `@PROGRAM ARGV0` where argv[0] is not the program.
fn command(property: &str, prefix: &str, path: &str, argv: &[String]) -> Result<String, BusError> {
    // systemd refuses a command without argv[0] (its issue 20933, its
    // test 23); a unit file's command always has one.
    if argv.is_empty() {
        return Err(bad(property, format!("the argv of {path} cannot be empty")));
    }
    let mut words = vec![quote(property, path)?];
    let mut at = "";
    if let Some((argv0, rest)) = argv.split_first() {
        if argv0 != path {
            at = "@";
            words.push(quote(property, argv0)?);
        }
        for w in rest {
            words.push(quote(property, w)?);
        }
    }
    Ok(format!("{prefix}{at}{}", words.join(" ")))
}

/// The command-line prefixes of systemd's flags
/// (`exec_command_flags_to_strv`'s names).
fn prefixes(property: &str, flags: &[String]) -> Result<String, BusError> {
    let mut out = String::new();
    for f in flags {
        out.push_str(match f.as_str() {
            "ignore-failure" => "-",
            "privileged" => "+",
            "no-setuid" => "!",
            "ambient" => "!!",
            "no-env-expand" => ":",
            other => return Err(bad(property, format!("unknown command flag {other:?}"))),
        });
    }
    Ok(out)
}

/// The unit file of a service made of `lines`: each in its section
/// (`flotilla_systemd::service_section`), and, for each line of
/// the text, the property it came from (by 1-based line number).
pub fn unit_file(lines: &[Line]) -> (String, Vec<Option<String>>) {
    unit_file_of(lines, "Service")
}

/// [`unit_file`] of a unit whose type's section is `own` (`Slice` for a
/// slice): what is not `[Unit]`'s goes there.
pub fn unit_file_of(lines: &[Line], own: &str) -> (String, Vec<Option<String>>) {
    let mut text = String::new();
    // Line 0 is nowhere (a diagnostic without a position).
    let mut by_line: Vec<Option<String>> = vec![None];
    for section in ["Unit", own] {
        text.push_str(&format!("[{section}]\n"));
        by_line.push(None);
        let unit = section == "Unit";
        for l in lines
            .iter()
            .filter(|l| (flotilla_systemd::service_section(&l.key) == "Unit") == unit)
        {
            text.push_str(&format!("{}={}\n", l.key, l.value));
            by_line.push(Some(l.property.clone()));
        }
    }
    (text, by_line)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]
#[path = "props_tests.rs"]
mod tests;
