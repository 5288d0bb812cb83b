//! `Condition*=` and `Assert*=` of systemd.unit(5): read from a unit's
//! `[Unit]` section into a typed list ([`Conditions::from_options`]) and
//! checked against facts the caller provides ([`ConditionFacts`]; the init
//! implements it with real probes), with systemd's rules: `!` negates, `|`
//! makes a triggering condition (all plain conditions must hold, and at
//! least one triggering one if there are any), an empty assignment of any
//! condition resets every condition before it (likewise for assertions),
//! and a condition that cannot be checked counts as failed. A failed
//! condition skips the unit; a failed assertion fails it.

use crate::fleet::UnitOption;
use serde::{Deserialize, Serialize};
use std::cmp::Ordering;

/// The kinds of condition systemd 252 knows (each `Condition…=` has an
/// `Assert…=` twin); the ten path kinds come first.
pub const CONDITION_KINDS: [&str; 33] = [
    "PathExists",
    "PathExistsGlob",
    "PathIsDirectory",
    "PathIsSymbolicLink",
    "PathIsMountPoint",
    "PathIsReadWrite",
    "PathIsEncrypted",
    "DirectoryNotEmpty",
    "FileNotEmpty",
    "FileIsExecutable",
    "Virtualization",
    "KernelCommandLine",
    "KernelVersion",
    "Architecture",
    "Firmware",
    "Host",
    "Capability",
    "ACPower",
    "NeedsUpdate",
    "FirstBoot",
    "Security",
    "Environment",
    "User",
    "Group",
    "ControlGroupController",
    "Credential",
    "OSRelease",
    "Memory",
    "CPUs",
    "CPUFeature",
    "MemoryPressure",
    "CPUPressure",
    "IOPressure",
];

/// One `Condition…=` or `Assert…=` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Condition {
    /// The kind, one of [`CONDITION_KINDS`] (`PathExists`).
    pub kind: &'static str,
    /// True for `Assert…=`.
    pub assert: bool,
    /// `|`: a triggering condition.
    pub trigger: bool,
    /// `!`: the result is inverted.
    pub negate: bool,
    /// The parameter after the prefixes.
    pub param: String,
    /// The index of the option in the unit file (for its position).
    pub option: usize,
}

impl Condition {
    /// The setting as written back: `ConditionPathExists=|!/etc/x`.
    pub fn setting(&self) -> String {
        format!(
            "{}{}={}{}{}",
            if self.assert { "Assert" } else { "Condition" },
            self.kind,
            if self.trigger { "|" } else { "" },
            if self.negate { "!" } else { "" },
            self.param
        )
    }
}

/// A bad condition line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{key}={value}: {reason}")]
pub struct ConditionError {
    /// The key as written.
    pub key: String,
    /// The value as written.
    pub value: String,
    /// What is wrong.
    pub reason: String,
    /// The option's index in the unit file.
    pub option: usize,
}

/// What a check needs to know about the machine. Path checks get absolute
/// paths; an `Err` is a check that could not be made (it fails, and its
/// message is shown). Kinds without a method here go to [`other`],
/// which by default says they cannot be checked.
///
/// [`other`]: ConditionFacts::other
pub trait ConditionFacts {
    /// `PathExists`.
    fn path_exists(&self, path: &str) -> Result<bool, String>;
    /// `PathExistsGlob`: some path matches the glob.
    fn glob_matches(&self, pattern: &str) -> Result<bool, String>;
    /// `PathIsDirectory`.
    fn is_directory(&self, path: &str) -> Result<bool, String>;
    /// `PathIsSymbolicLink`.
    fn is_symlink(&self, path: &str) -> Result<bool, String>;
    /// `PathIsMountPoint`.
    fn is_mount_point(&self, path: &str) -> Result<bool, String>;
    /// `PathIsReadWrite`: on a file system mounted read-write.
    fn is_read_write(&self, path: &str) -> Result<bool, String>;
    /// `DirectoryNotEmpty`: a directory with an entry.
    fn directory_not_empty(&self, path: &str) -> Result<bool, String>;
    /// `FileNotEmpty`: a regular file of non-zero size.
    fn file_not_empty(&self, path: &str) -> Result<bool, String>;
    /// `FileIsExecutable`: a regular file marked executable.
    fn file_is_executable(&self, path: &str) -> Result<bool, String>;
    /// The detected virtualization (`systemd-detect-virt`'s names:
    /// `kvm`, `qemu`, `docker`, `lxc` …), `None` on bare metal.
    fn virtualization(&self) -> Option<String>;
    /// In a user namespace (`ConditionVirtualization=private-users`).
    fn in_user_namespace(&self) -> bool {
        false
    }
    /// `/proc/cmdline`.
    fn kernel_command_line(&self) -> String;
    /// `uname -r`.
    fn kernel_release(&self) -> String;
    /// systemd's architecture name (`x86-64`, `arm64` …).
    fn architecture(&self) -> String;
    /// The host name.
    fn hostname(&self) -> String;
    /// The machine ID (32 hex digits).
    fn machine_id(&self) -> String;
    /// `Capability`: the capability (`CAP_NET_ADMIN`) is in the bounding set.
    fn has_capability(&self, name: &str) -> bool;
    /// `ACPower`: the machine is on AC power (or has no battery).
    fn on_ac_power(&self) -> bool;
    /// `Security`: the technology (`selinux`, `apparmor`, `audit` …) is on.
    fn security(&self, name: &str) -> bool;
    /// `FirstBoot`: this is the machine's first boot.
    fn first_boot(&self) -> bool;
    /// `NeedsUpdate`: the stamps of `dir` (absolute) and of `/usr`.
    fn update_stamps(&self, dir: &str) -> UpdateStamps;
    /// The manager's environment.
    fn environment(&self) -> Vec<(String, String)>;
    /// The manager's user: UID and name.
    fn user(&self) -> (u32, String);
    /// The manager's groups (primary and supplementary): GIDs and names.
    fn groups(&self) -> Vec<(u32, String)>;
    /// The cgroup controllers available, and the cgroup version (1 or 2).
    fn cgroup(&self) -> (Vec<String>, u8);
    /// `Credential`: the credential is passed to the manager.
    fn has_credential(&self, name: &str) -> bool;
    /// A field of `/etc/os-release` (`ID`, `VERSION_ID` …).
    fn os_release(&self, key: &str) -> Option<String>;
    /// Any other kind (`Firmware`, `Memory`, `CPUs`,
    /// `CPUFeature`, the pressure ones, `PathIsEncrypted`).
    fn other(&self, kind: &str, param: &str) -> Result<bool, String> {
        let _ = param;
        Err(format!("Condition{kind}= cannot be checked by flotilla"))
    }
}

/// A unit's conditions and assertions, in file order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Conditions {
    /// `Condition…=`: a failure skips the unit.
    pub conditions: Vec<Condition>,
    /// `Assert…=`: a failure fails the unit.
    pub asserts: Vec<Condition>,
}

/// The outcome of checking a list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// True when the list holds.
    pub ok: bool,
    /// Why not, one line per failure as systemd's status shows them
    /// (`ConditionPathExists=/etc/x was not met`).
    pub failures: Vec<String>,
}

/// The kinds whose parameter is a path (the first ten).
const PATH_KINDS: &[&str] = CONDITION_KINDS.split_at(10).0;

impl Conditions {
    /// Reads every `Condition…=`/`Assert…=` of `[Unit]` in a unit's
    /// options (a unit file's, in file order). Other keys are
    /// the caller's. Errors: an unknown kind, a relative path, a parameter
    /// that is not a boolean where one is needed, an empty parameter after
    /// `|` or `!`.
    pub fn from_options(options: &[UnitOption]) -> Result<Conditions, ConditionError> {
        let mut out = Conditions::default();
        for (i, o) in options.iter().enumerate() {
            if o.section != "Unit" {
                continue;
            }
            let (assert, rest) = if let Some(r) = o.name.strip_prefix("Condition") {
                (false, r)
            } else if let Some(r) = o.name.strip_prefix("Assert") {
                (true, r)
            } else {
                continue;
            };
            let kind = CONDITION_KINDS
                .iter()
                .find(|k| **k == rest)
                .copied()
                .ok_or_else(|| ConditionError {
                    key: o.name.clone(),
                    value: o.value.clone(),
                    reason: format!("unknown condition (known: {})", CONDITION_KINDS.join(", ")),
                    option: i,
                })?;
            let list = if assert {
                &mut out.asserts
            } else {
                &mut out.conditions
            };
            match parse_value(kind, assert, &o.value) {
                Ok(None) => list.clear(),
                Ok(Some(mut c)) => {
                    c.option = i;
                    list.push(c);
                }
                Err(reason) => {
                    return Err(ConditionError {
                        key: o.name.clone(),
                        value: o.value.clone(),
                        reason,
                        option: i,
                    })
                }
            }
        }
        Ok(out)
    }
}

/// One value of `Condition{kind}=` (or `Assert{kind}=`): `None` for an
/// empty value (which resets the list), else the condition, or what is
/// wrong: a relative path, a parameter that is not a boolean where one is
/// needed, nothing after `|` or `!`.
pub fn parse_value(
    kind: &'static str,
    assert: bool,
    value: &str,
) -> Result<Option<Condition>, String> {
    let mut v = value.trim();
    if v.is_empty() {
        return Ok(None);
    }
    let trigger = v.starts_with('|');
    if trigger {
        v = v[1..].trim_start();
    }
    let negate = v.starts_with('!');
    if negate {
        v = v[1..].trim_start();
    }
    if v.is_empty() {
        return Err("nothing to check after the '|' or '!'".to_string());
    }
    if PATH_KINDS.contains(&kind) && !v.starts_with('/') {
        return Err(format!("path {v:?} is not absolute"));
    }
    if matches!(kind, "ACPower" | "FirstBoot") && crate::fleet::parse_bool(v).is_none() {
        return Err(format!("{v:?} is not a boolean (yes/no)"));
    }
    Ok(Some(Condition {
        kind,
        assert,
        trigger,
        negate,
        param: v.to_string(),
        option: 0,
    }))
}

/// The kind of `Condition{kind}=`/`Assert{kind}=` given without its
/// prefix (`PathExists`), as the `'static` name of [`CONDITION_KINDS`].
pub fn condition_kind(name: &str) -> Option<&'static str> {
    CONDITION_KINDS.iter().find(|k| **k == name).copied()
}

/// A condition in a unit's JSON form: its kind, the flags and the
/// parameter (not the option's index, which only places diagnostics).
#[derive(Serialize, Deserialize)]
struct ConditionJson {
    kind: String,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    assert: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    trigger: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    negate: bool,
    param: String,
}

impl Serialize for Condition {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        ConditionJson {
            kind: self.kind.to_string(),
            assert: self.assert,
            trigger: self.trigger,
            negate: self.negate,
            param: self.param.clone(),
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for Condition {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Condition, D::Error> {
        let j = ConditionJson::deserialize(d)?;
        let kind = condition_kind(&j.kind)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown condition {:?}", j.kind)))?;
        let mut value = String::new();
        if j.trigger {
            value.push('|');
        }
        if j.negate {
            value.push('!');
        }
        value.push_str(&j.param);
        parse_value(kind, j.assert, &value)
            .map_err(serde::de::Error::custom)?
            .ok_or_else(|| serde::de::Error::custom("a condition with nothing to check"))
    }
}

/// Checks a list with systemd's rule: every plain condition holds, and if
/// there are triggering ones, at least one of them holds.
pub fn check(list: &[Condition], facts: &dyn ConditionFacts) -> Verdict {
    let mut failures = Vec::new();
    let mut any_trigger = false;
    let mut trigger_ok = false;
    let mut trigger_failures = Vec::new();
    for c in list {
        let (passed, why) = match test(c, facts) {
            Ok(r) => (r != c.negate, format!("{} was not met", c.setting())),
            Err(e) => (false, format!("{} could not be checked: {e}", c.setting())),
        };
        if c.trigger {
            any_trigger = true;
            trigger_ok |= passed;
            if !passed {
                trigger_failures.push(why);
            }
        } else if !passed {
            failures.push(why);
        }
    }
    if any_trigger && !trigger_ok {
        failures.push(format!(
            "none of the triggering conditions was met ({})",
            trigger_failures.join("; ")
        ));
    }
    Verdict {
        ok: failures.is_empty(),
        failures,
    }
}

fn test(c: &Condition, f: &dyn ConditionFacts) -> Result<bool, String> {
    let p = c.param.as_str();
    let boolean = || crate::fleet::parse_bool(p).ok_or_else(|| format!("{p:?} is not a boolean"));
    Ok(match c.kind {
        "PathExists" => f.path_exists(p)?,
        "PathExistsGlob" => f.glob_matches(p)?,
        "PathIsDirectory" => f.is_directory(p)?,
        "PathIsSymbolicLink" => f.is_symlink(p)?,
        "PathIsMountPoint" => f.is_mount_point(p)?,
        "PathIsReadWrite" => f.is_read_write(p)?,
        "DirectoryNotEmpty" => f.directory_not_empty(p)?,
        "FileNotEmpty" => f.file_not_empty(p)?,
        "FileIsExecutable" => f.file_is_executable(p)?,
        "Virtualization" => virtualization(p, f.virtualization(), f.in_user_namespace()),
        "KernelCommandLine" => {
            let line = f.kernel_command_line();
            line.split_whitespace().any(|w| {
                w == p || (!p.contains('=') && w.split_once('=').is_some_and(|(k, _)| k == p))
            })
        }
        "KernelVersion" => {
            let release = f.kernel_release();
            let mut all = true;
            for expr in p.split_whitespace() {
                all &= compare_expr(expr, &release)?;
            }
            all
        }
        "Architecture" => p == "native" || p == f.architecture(),
        "Host" => {
            let id = p.to_ascii_lowercase().replace('-', "");
            if id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit()) {
                id == f.machine_id().to_ascii_lowercase()
            } else {
                fnmatch(&p.to_ascii_lowercase(), &f.hostname().to_ascii_lowercase())
            }
        }
        "Capability" => {
            if !p.to_ascii_uppercase().starts_with("CAP_") {
                return Err(format!(
                    "{p:?} is not a capability name such as CAP_NET_ADMIN"
                ));
            }
            f.has_capability(&p.to_ascii_uppercase())
        }
        "ACPower" => f.on_ac_power() == boolean()?,
        "FirstBoot" => f.first_boot() == boolean()?,
        "NeedsUpdate" => needs_update::needs_update(
            p,
            &f.kernel_command_line(),
            f.path_exists("/etc/initrd-release")?,
            |dir| f.update_stamps(dir),
        ),
        "Security" => f.security(p),
        "Environment" => f
            .environment()
            .iter()
            .any(|(k, v)| match p.split_once('=') {
                Some((pk, pv)) => k == pk && v == pv,
                None => k == p,
            }),
        "User" => {
            let (uid, name) = f.user();
            match p {
                "@system" => uid <= 999,
                _ => p.parse::<u32>().map_or(p == name, |n| n == uid),
            }
        }
        "Group" => f
            .groups()
            .iter()
            .any(|(gid, name)| p.parse::<u32>().map_or(p == name, |n| n == *gid)),
        "ControlGroupController" => {
            let (have, version) = f.cgroup();
            p.split_whitespace().all(|w| match w {
                "v1" => version == 1,
                "v2" => version == 2,
                w => have.iter().any(|h| h == w),
            })
        }
        "Credential" => f.has_credential(p),
        "OSRelease" => {
            let mut all = true;
            for expr in p.split_whitespace() {
                let op_at = expr.find(['=', '!', '<', '>']).ok_or_else(|| {
                    format!("{expr:?} is not KEY=VALUE, KEY!=VALUE or KEY<VERSION…")
                })?;
                let (key, rest) = expr.split_at(op_at);
                let value = f.os_release(key).unwrap_or_default();
                all &= compare_expr(rest, &value)?;
            }
            all
        }
        other => f.other(other, p)?,
    })
}

/// `ConditionVirtualization=` as systemd tests it: `private-users` (a
/// user namespace), a boolean (any virtualization), `vm`, `container`, or
/// the detected name.
fn virtualization(p: &str, detected: Option<String>, private_users: bool) -> bool {
    let is_container = detected
        .as_deref()
        .is_some_and(|d| crate::detect_virt::CONTAINER_NAMES.contains(&d));
    match p {
        "private-users" => private_users,
        "vm" => detected.is_some() && !is_container,
        "container" => is_container,
        _ => match crate::fleet::parse_bool(p) {
            Some(b) => detected.is_some() == b,
            None => detected.as_deref() == Some(p),
        },
    }
}

/// `OP VALUE` against `actual`: `=`, `!=`, `<`, `<=`, `>`, `>=` compare
/// versions; without an operator, `VALUE` is a glob.
fn compare_expr(expr: &str, actual: &str) -> Result<bool, String> {
    let ops = [
        ("<=", [Ordering::Less, Ordering::Equal]),
        (">=", [Ordering::Greater, Ordering::Equal]),
        ("!=", [Ordering::Less, Ordering::Greater]),
        ("<", [Ordering::Less, Ordering::Less]),
        (">", [Ordering::Greater, Ordering::Greater]),
        ("=", [Ordering::Equal, Ordering::Equal]),
    ];
    for (op, ok) in ops {
        if let Some(v) = expr.strip_prefix(op) {
            let v = v.trim();
            if v.is_empty() {
                return Err(format!("{expr:?} has nothing after {op}"));
            }
            return Ok(ok.contains(&version_cmp(actual, v)));
        }
    }
    Ok(fnmatch(expr, actual))
}

/// Compares versions as systemd's `strverscmp_improved` does in the usual
/// cases: runs of digits numerically, runs of letters alphabetically,
/// `~` before anything (even the end), other characters as separators.
pub fn version_cmp(a: &str, b: &str) -> Ordering {
    fn skip_separators(s: &[u8]) -> &[u8] {
        let n = s
            .iter()
            .take_while(|c| !c.is_ascii_alphanumeric() && **c != b'~')
            .count();
        &s[n..]
    }
    fn run(s: &[u8], digits: bool) -> usize {
        s.iter()
            .take_while(|c| {
                if digits {
                    c.is_ascii_digit()
                } else {
                    c.is_ascii_alphabetic()
                }
            })
            .count()
    }
    let (mut x, mut y) = (a.as_bytes(), b.as_bytes());
    loop {
        x = skip_separators(x);
        y = skip_separators(y);
        match (x.first(), y.first()) {
            (Some(b'~'), Some(b'~')) => {
                x = &x[1..];
                y = &y[1..];
                continue;
            }
            (Some(b'~'), _) => return Ordering::Less,
            (_, Some(b'~')) => return Ordering::Greater,
            (None, None) => return Ordering::Equal,
            (None, _) => return Ordering::Less,
            (_, None) => return Ordering::Greater,
            _ => {}
        }
        let (dx, dy) = (x[0].is_ascii_digit(), y[0].is_ascii_digit());
        if dx != dy {
            // A number is newer than letters.
            return if dx {
                Ordering::Greater
            } else {
                Ordering::Less
            };
        }
        let (nx, ny) = (run(x, dx), run(y, dy));
        let (rx, ry) = (&x[..nx], &y[..ny]);
        let ord = if dx {
            let tx = &rx[rx.iter().take_while(|c| **c == b'0').count()..];
            let ty = &ry[ry.iter().take_while(|c| **c == b'0').count()..];
            tx.len().cmp(&ty.len()).then(tx.cmp(ty))
        } else {
            rx.cmp(ry)
        };
        if ord != Ordering::Equal {
            return ord;
        }
        x = &x[nx..];
        y = &y[ny..];
    }
}

/// Shell glob matching (`*`, `?`, `[…]` with ranges and `!`/`^`), as
/// `fnmatch(3)` without flags.
pub fn fnmatch(pattern: &str, s: &str) -> bool {
    fn go(p: &[char], s: &[char]) -> bool {
        match p.first() {
            None => s.is_empty(),
            Some('*') => (0..=s.len()).any(|i| go(&p[1..], &s[i..])),
            Some('?') => !s.is_empty() && go(&p[1..], &s[1..]),
            Some('[') => {
                let Some(c) = s.first() else { return false };
                let mut i = 1;
                let neg = matches!(p.get(1), Some('!' | '^'));
                if neg {
                    i += 1;
                }
                let start = i;
                let mut hit = false;
                while i < p.len() && (p[i] != ']' || i == start) {
                    if p.get(i + 1) == Some(&'-') && p.get(i + 2).is_some_and(|e| *e != ']') {
                        hit |= p[i] <= *c && *c <= p[i + 2];
                        i += 3;
                    } else {
                        hit |= p[i] == *c;
                        i += 1;
                    }
                }
                if i >= p.len() {
                    // No closing ']': a literal '['.
                    return *c == '[' && go(&p[1..], &s[1..]);
                }
                hit != neg && go(&p[i + 1..], &s[1..])
            }
            Some('\\') if p.len() > 1 => s.first() == Some(&p[1]) && go(&p[2..], &s[1..]),
            Some(c) => s.first() == Some(c) && go(&p[1..], &s[1..]),
        }
    }
    let p: Vec<char> = pattern.chars().collect();
    let s: Vec<char> = s.chars().collect();
    go(&p, &s)
}

mod needs_update;
mod scripted;

pub use needs_update::{stamp_nsec, MTime, UpdateStamps};
pub use scripted::{ScriptedFacts, ScriptedPath};
