//! systemd's specifiers (systemd.unit(5), "Specifiers"): `%n`, `%i`, `%H`,
//! `%t` … resolved from facts the caller gathers ([`SpecifierContext`]),
//! fleet's reduced set for `[X-Fleet]` values ([`expand_specifiers`]), and
//! the scanner both use.

use crate::escape::{unescape, unescape_path, EscapeError};
use crate::unit_name::UnitName;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// Why a value's specifiers cannot be expanded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpecifierError {
    /// A `%x` systemd does not define.
    #[error("unknown specifier %{0} (use %% for a literal %)")]
    Unknown(char),
    /// A specifier whose fact the caller did not give.
    #[error("specifier %{0} needs {1}, which is not known here")]
    Unavailable(char, &'static str),
    /// `%I`, `%P`, `%J` or `%f` of a name that does not unescape.
    #[error("specifier %{0}: {1}")]
    Unescape(char, EscapeError),
}

/// The user the service manager runs as (`%u %U %g %G %h %s`): root for
/// the system manager.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManagerUser {
    /// `%u`.
    pub name: String,
    /// `%U`.
    pub uid: u32,
    /// `%g`.
    pub group: String,
    /// `%G`.
    pub gid: u32,
    /// `%h`.
    pub home: String,
    /// `%s`.
    pub shell: String,
}

/// What specifiers resolve to. [`SpecifierContext::system`] fills the
/// system manager's directories; the caller adds the machine's facts.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SpecifierContext {
    /// The unit's full name (`getty@tty1.service`): `%n %N %p %P %i %I %j
    /// %J %f`.
    pub unit: String,
    /// The unit file's path: `%y`, and its directory `%Y`.
    pub fragment_path: Option<String>,
    /// `%H` (and `%l`, up to its first dot).
    pub hostname: Option<String>,
    /// `%q`.
    pub pretty_hostname: Option<String>,
    /// `%m`.
    pub machine_id: Option<String>,
    /// `%b`.
    pub boot_id: Option<String>,
    /// `%a` (systemd's names: `x86-64`, `arm64` …).
    pub architecture: Option<String>,
    /// `%v`.
    pub kernel_release: Option<String>,
    /// os-release `ID` (`%o`), `VERSION_ID` (`%w`), `BUILD_ID` (`%B`),
    /// `VARIANT_ID` (`%W`), `IMAGE_ID` (`%M`), `IMAGE_VERSION` (`%A`).
    pub os_release: Vec<(String, String)>,
    /// `%u %U %g %G %h %s`.
    pub user: Option<ManagerUser>,
    /// `%t` (`/run`).
    pub runtime_dir: String,
    /// `%S` (`/var/lib`).
    pub state_dir: String,
    /// `%C` (`/var/cache`).
    pub cache_dir: String,
    /// `%L` (`/var/log`).
    pub logs_dir: String,
    /// `%E` (`/etc`).
    pub config_dir: String,
    /// `%T` (`/tmp`, or `$TMPDIR`).
    pub tmp_dir: String,
    /// `%V` (`/var/tmp`, or `$TMPDIR`).
    pub var_tmp_dir: String,
    /// `%d`: the unit's credentials directory (`/run/credentials/UNIT`).
    pub credentials_dir: Option<String>,
    /// Besides what specifiers resolve to, the one other thing a unit is
    /// translated with: the manager's `DefaultTimeoutStartSec=` (`None`:
    /// systemd's built-in 90 s), the start timeout of a unit that sets
    /// none (a oneshot has none), and of a mount.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_timeout_start: Option<std::time::Duration>,
    /// Likewise the manager's `DefaultTimeoutStopSec=`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_timeout_stop: Option<std::time::Duration>,
}

impl SpecifierContext {
    /// The system manager's context for `unit`: systemd's system
    /// directories, root as the user, no machine facts yet.
    pub fn system(unit: &str) -> SpecifierContext {
        SpecifierContext {
            unit: unit.to_string(),
            user: Some(ManagerUser {
                name: "root".to_string(),
                uid: 0,
                group: "root".to_string(),
                gid: 0,
                home: "/root".to_string(),
                shell: "/bin/sh".to_string(),
            }),
            runtime_dir: "/run".to_string(),
            state_dir: "/var/lib".to_string(),
            cache_dir: "/var/cache".to_string(),
            logs_dir: "/var/log".to_string(),
            config_dir: "/etc".to_string(),
            tmp_dir: "/tmp".to_string(),
            var_tmp_dir: "/var/tmp".to_string(),
            credentials_dir: Some(format!("/run/credentials/{unit}")),
            ..SpecifierContext::default()
        }
    }

    /// This context for the unit `unit` (`%n %i` …, and its credentials
    /// directory, `%d`, when the context has one).
    pub fn for_unit(&self, unit: &str) -> SpecifierContext {
        let mut c = self.clone();
        c.unit = unit.to_string();
        if c.credentials_dir.is_some() {
            c.credentials_dir = Some(format!("{}/credentials/{unit}", c.runtime_dir));
        }
        c
    }

    fn os(&self, key: &str) -> String {
        // A missing os-release field is empty, as in systemd.
        self.os_release
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    }

    /// What `%c` is in this context.
    pub fn resolve(&self, c: char) -> Result<Cow<'_, str>, SpecifierError> {
        let n = UnitName::split(&self.unit);
        let need = |v: &Option<String>, what| {
            v.clone()
                .map(Cow::Owned)
                .ok_or(SpecifierError::Unavailable(c, what))
        };
        let user = || {
            self.user
                .as_ref()
                .ok_or(SpecifierError::Unavailable(c, "the manager's user"))
        };
        let unesc = |s: &str| unescape(s).map_err(|e| SpecifierError::Unescape(c, e));
        // %j: the prefix's last dash-separated part.
        let last_part = || n.prefix.rsplit('-').next().unwrap_or("").to_string();
        Ok(Cow::Owned(match c {
            'n' => n.full,
            'N' => n.name,
            'p' => n.prefix,
            'P' => unesc(&n.prefix)?,
            'i' => n.instance,
            'I' => unesc(&n.instance)?,
            'j' => last_part(),
            'J' => unesc(&last_part())?,
            'f' => {
                let from = if n.instance.is_empty() {
                    &n.prefix
                } else {
                    &n.instance
                };
                unescape_path(from).map_err(|e| SpecifierError::Unescape(c, e))?
            }
            'y' => return need(&self.fragment_path, "the unit file's path"),
            'Y' => {
                let p = need(&self.fragment_path, "the unit file's path")?;
                match p.rfind('/') {
                    Some(0) => "/".to_string(),
                    Some(i) => p[..i].to_string(),
                    None => ".".to_string(),
                }
            }
            'H' => return need(&self.hostname, "the host name"),
            'l' => {
                let h = need(&self.hostname, "the host name")?;
                h.split('.').next().unwrap_or("").to_string()
            }
            'q' => return need(&self.pretty_hostname, "the pretty host name"),
            'm' => return need(&self.machine_id, "the machine ID"),
            'b' => return need(&self.boot_id, "the boot ID"),
            'a' => return need(&self.architecture, "the architecture"),
            'v' => return need(&self.kernel_release, "the kernel release"),
            'o' => self.os("ID"),
            'w' => self.os("VERSION_ID"),
            'B' => self.os("BUILD_ID"),
            'W' => self.os("VARIANT_ID"),
            'M' => self.os("IMAGE_ID"),
            'A' => self.os("IMAGE_VERSION"),
            'u' => user()?.name.clone(),
            'U' => user()?.uid.to_string(),
            'g' => user()?.group.clone(),
            'G' => user()?.gid.to_string(),
            'h' => user()?.home.clone(),
            's' => user()?.shell.clone(),
            't' => self.runtime_dir.clone(),
            'S' => self.state_dir.clone(),
            'C' => self.cache_dir.clone(),
            'L' => self.logs_dir.clone(),
            'E' => self.config_dir.clone(),
            'T' => self.tmp_dir.clone(),
            'V' => self.var_tmp_dir.clone(),
            'd' => return need(&self.credentials_dir, "the credentials directory"),
            '%' => "%".to_string(),
            other => return Err(SpecifierError::Unknown(other)),
        }))
    }

    /// Expands every specifier of `value` (systemd's `specifier_printf`): a
    /// `%` at the very end stays; an unknown specifier is an error naming
    /// it.
    ///
    /// ```
    /// use flotilla_units::specifier::SpecifierContext;
    /// let mut c = SpecifierContext::system(r"getty@tty1.service");
    /// c.hostname = Some("web1.example.org".into());
    /// assert_eq!(c.expand("%p on %I at %l, state in %S/%N, 100%%").unwrap(),
    ///            "getty on tty1 at web1, state in /var/lib/getty@tty1, 100%");
    /// assert_eq!(c.expand("%Z").unwrap_err().to_string(), "unknown specifier %Z (use %% for a literal %)");
    /// ```
    pub fn expand(&self, value: &str) -> Result<String, SpecifierError> {
        replace_specifiers(value, |c| self.resolve(c))
    }
}

/// Replaces each `%c` of `value` by `f(c)` (a `%` at the end stays as it
/// is); the first error stops.
pub fn replace_specifiers<'a, E>(
    value: &str,
    mut f: impl FnMut(char) -> Result<Cow<'a, str>, E>,
) -> Result<String, E> {
    if !value.contains('%') {
        return Ok(value.to_string());
    }
    let mut out = String::with_capacity(value.len());
    let mut chars = value.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some(s) => out.push_str(&f(s)?),
            None => out.push('%'),
        }
    }
    Ok(out)
}

/// Expands systemd specifiers in `value` for the unit `unit_name`, as fleet
/// did in `[X-Fleet]` values: `%n` the full name, `%N` the name without
/// suffix, `%p` the prefix, `%i` the instance; `%P` and `%I` (systemd's
/// unescaped forms) are the same as `%p` and `%i` since valid names have
/// nothing to unescape; `%%` is `%`. Any other `%x` is left as it is.
///
/// ```
/// use flotilla_units::specifier::expand_specifiers;
/// assert_eq!(expand_specifiers("%n %N %p %i 100%%", "ssh@2.service"), "ssh@2.service ssh@2 ssh 2 100%");
/// ```
pub fn expand_specifiers(value: &str, unit_name: &str) -> String {
    expand_specifiers_noting(value, unit_name, &mut |_| {})
}

/// [`expand_specifiers`], calling `unknown` with each specifier letter left
/// as it is.
pub(crate) fn expand_specifiers_noting(
    value: &str,
    unit_name: &str,
    unknown: &mut dyn FnMut(char),
) -> String {
    let n = UnitName::split(unit_name);
    let result: Result<String, std::convert::Infallible> = replace_specifiers(value, |c| {
        Ok(std::borrow::Cow::Borrowed(match c {
            'n' => n.full.as_str(),
            'N' => n.name.as_str(),
            'p' | 'P' => n.prefix.as_str(),
            'i' | 'I' => n.instance.as_str(),
            '%' => "%",
            other => {
                unknown(other);
                return Ok(std::borrow::Cow::Owned(format!("%{other}")));
            }
        }))
    });
    match result {
        Ok(s) => s,
        Err(never) => match never {},
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unit_name_specifiers() {
        let c = SpecifierContext::system(r"systemd-fsck@dev-disk-by\x2dlabel-root.service");
        let e = |v: &str| c.expand(v).unwrap();
        assert_eq!(e("%n"), r"systemd-fsck@dev-disk-by\x2dlabel-root.service");
        assert_eq!(e("%N"), r"systemd-fsck@dev-disk-by\x2dlabel-root");
        assert_eq!(e("%p|%P|%j|%J"), "systemd-fsck|systemd/fsck|fsck|fsck");
        assert_eq!(e("%i"), r"dev-disk-by\x2dlabel-root");
        assert_eq!(e("%I"), "dev/disk/by-label/root");
        assert_eq!(e("%f"), "/dev/disk/by-label/root");
        let plain = SpecifierContext::system("home.mount");
        assert_eq!(plain.expand("%f %i.").unwrap(), "/home .");
    }

    #[test]
    fn machine_and_directory_specifiers() {
        let mut c = SpecifierContext::system("web.service");
        assert_eq!(
            c.expand("%t %S %C %L %E %T %V %u %U %g %G %h %s %d").unwrap(),
            "/run /var/lib /var/cache /var/log /etc /tmp /var/tmp root 0 root 0 /root /bin/sh /run/credentials/web.service"
        );
        assert_eq!(
            c.expand("%H").unwrap_err().to_string(),
            "specifier %H needs the host name, which is not known here"
        );
        assert_eq!(
            c.expand("%m").unwrap_err(),
            SpecifierError::Unavailable('m', "the machine ID")
        );
        c.hostname = Some("db".into());
        c.machine_id = Some("0123".into());
        c.boot_id = Some("abcd".into());
        c.fragment_path = Some("/etc/systemd/system/web.service".into());
        c.os_release = vec![
            ("ID".into(), "debian".into()),
            ("VERSION_ID".into(), "12".into()),
        ];
        assert_eq!(
            c.expand("%H %l %m %b %y %Y %o %w [%B] 5%").unwrap(),
            "db db 0123 abcd /etc/systemd/system/web.service /etc/systemd/system debian 12 [] 5%"
        );
        assert_eq!(c.expand("%z").unwrap_err(), SpecifierError::Unknown('z'));
        let bad = SpecifierContext::system(r"a@x\q.service");
        assert!(matches!(
            bad.expand("%I"),
            Err(SpecifierError::Unescape('I', _))
        ));
    }
}
