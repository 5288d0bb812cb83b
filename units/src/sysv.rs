//! SysV init scripts (`/etc/init.d/NAME`) as units, by the rules of
//! systemd's `systemd-sysv-generator`: the LSB header between `### BEGIN
//! INIT INFO` and `### END INIT INFO` ([`LsbHeader::parse`]) makes the unit
//! `NAME.service` ([`script_unit`]), a `background-scripted` unit whose
//! start and stop are the script's `start` and `stop` (a pidfile when the
//! script names one in a `# pidfile:` line). `Required-Start` and
//! `Should-Start` order it after what they name (`After=`, with the LSB
//! facilities `$network`, `$remote_fs` … mapped to systemd's targets as
//! the generator maps them); `X-Start-Before` before; other names in
//! `Provides` are names it provides too; `Short-Description` is its
//! description as `LSB: …`. A script without a header is no unit (the
//! generator needs one to know anything of it). A script is enabled as
//! the generator enables it: an `S` link in `/etc/rc2.d` … `rc5.d` (which
//! `update-rc.d` makes from `Default-Start`) makes `multi-user.target`
//! (runlevel 5: `graphical.target`) want it ([`runlevel_target`]). Pure:
//! the caller reads the files and the directories.

use crate::spec::{Command, UnitSpec, UnitType};
use std::path::PathBuf;

/// The LSB header of an init script.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LsbHeader {
    /// `Provides:`.
    pub provides: Vec<String>,
    /// `Required-Start:`.
    pub required_start: Vec<String>,
    /// `Should-Start:`.
    pub should_start: Vec<String>,
    /// `Required-Stop:`.
    pub required_stop: Vec<String>,
    /// `Default-Start:` (runlevels).
    pub default_start: Vec<String>,
    /// `X-Start-Before:`.
    pub start_before: Vec<String>,
    /// `Short-Description:`.
    pub short_description: Option<String>,
    /// `# pidfile:` (chkconfig's header, outside the LSB block).
    pub pidfile: Option<String>,
}

impl LsbHeader {
    /// The header of `text`; `None` when it has no `### BEGIN INIT INFO`
    /// block.
    pub fn parse(text: &str) -> Option<LsbHeader> {
        let mut h = LsbHeader::default();
        let mut inside = false;
        let mut found = false;
        for line in text.lines() {
            let t = line.trim();
            if t == "### BEGIN INIT INFO" {
                inside = true;
                found = true;
                continue;
            }
            if t == "### END INIT INFO" {
                inside = false;
                continue;
            }
            let Some(body) = t.strip_prefix('#') else {
                continue;
            };
            let Some((key, value)) = body.split_once(':') else {
                continue;
            };
            let key = key.trim();
            let words = || value.split_whitespace().map(str::to_string).collect();
            if !inside {
                if key == "pidfile" && !value.trim().is_empty() {
                    h.pidfile = Some(value.trim().to_string());
                }
                continue;
            }
            match key {
                "Provides" => h.provides = words(),
                "Required-Start" => h.required_start = words(),
                "Should-Start" => h.should_start = words(),
                "Required-Stop" => h.required_stop = words(),
                "Default-Start" => h.default_start = words(),
                "X-Start-Before" => h.start_before = words(),
                "Short-Description" => {
                    h.short_description = Some(value.trim().to_string()).filter(|s| !s.is_empty())
                }
                _ => {}
            }
        }
        found.then_some(h)
    }
}

/// The systemd unit an LSB name means (`$network` → `network.target`,
/// `cron` → `cron.service`); `None` for facilities systemd provides
/// itself or ignores (`$syslog`, `$local_fs` is always up early, …).
pub fn lsb_name(name: &str) -> Option<String> {
    let facility = match name {
        "$network" => Some("network.target"),
        "$named" => Some("nss-lookup.target"),
        "$portmap" => Some("rpcbind.target"),
        "$remote_fs" => Some("remote-fs.target"),
        "$time" => Some("time-sync.target"),
        "$local_fs" => Some("local-fs.target"),
        "$x-display-manager" => Some("display-manager.service"),
        "$mail-transport-agent" => Some("mail-transport-agent.target"),
        n if n.starts_with('$') => return None,
        _ => None,
    };
    Some(facility.map_or_else(|| format!("{name}.service"), str::to_string))
}

/// The target that an `S` link in `/etc/rcN.d` makes want its script, by
/// systemd-sysv-generator's rule: runlevels 2, 3 and 4 are
/// `multi-user.target`, 5 is `graphical.target`; other runlevels (`S`,
/// 0, 1, 6) enable nothing.
pub fn runlevel_target(runlevel: u8) -> Option<&'static str> {
    match runlevel {
        2..=4 => Some("multi-user.target"),
        5 => Some("graphical.target"),
        _ => None,
    }
}

/// The runlevels whose `rcN.d` directories enable scripts.
pub const ENABLING_RUNLEVELS: [u8; 4] = [2, 3, 4, 5];

/// The script a start link of an `rcN.d` directory names: `S01cron` is
/// `cron` (`S`, two digits, the name); a kill link (`K01cron`) or another
/// name is `None`.
pub fn start_link_script(entry: &str) -> Option<&str> {
    let rest = entry.strip_prefix('S')?;
    let digits = rest.get(..2)?;
    let name = rest.get(2..)?;
    (digits.bytes().all(|b| b.is_ascii_digit()) && !name.is_empty()).then_some(name)
}

/// The unit of the init script `path` named `name` (its file name), with
/// the text `text`; `None` without an LSB header.
pub fn script_unit(name: &str, path: &str, text: &str) -> Option<UnitSpec> {
    let h = LsbHeader::parse(text)?;
    let unit = format!("{name}.service");
    let mut spec = UnitSpec::new(&unit, UnitType::BackgroundScripted);
    spec.description = Some(format!(
        "LSB: {}",
        h.short_description.as_deref().unwrap_or(name)
    ));
    for p in &h.provides {
        let p = format!("{p}.service");
        if !spec.provides.contains(&p) {
            spec.provides.push(p);
        }
    }
    spec.exec_start = Some(Command::new([path, "start"]));
    spec.exec_stop = Some(Command::new([path, "stop"]));
    spec.extras.exec_reload = Some(Command::new([path, "reload"]));
    spec.extras.pidfile = h.pidfile.as_deref().map(PathBuf::from);
    for n in h.required_start.iter().chain(&h.should_start) {
        if let Some(u) = lsb_name(n).filter(|u| *u != unit && !spec.after.contains(u)) {
            spec.after.push(u);
        }
    }
    for n in &h.start_before {
        if let Some(u) = lsb_name(n).filter(|u| *u != unit && !spec.before.contains(u)) {
            spec.before.push(u);
        }
    }
    Some(spec)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// Debian's `/etc/init.d/cron` header, as cron 3.0pl1 ships it.
    const CRON: &str = "#!/bin/sh\n# Start/stop the cron daemon.\n#\n### BEGIN INIT INFO\n\
# Provides:          cron\n# Required-Start:    $remote_fs $syslog $time\n\
# Required-Stop:     $remote_fs $syslog $time\n\
# Should-Start:      $network $named slapd autofs ypbind nscd nslcd winbind sssd\n\
# Should-Stop:       $network $named slapd autofs ypbind nscd nslcd winbind sssd\n\
# Default-Start:     2 3 4 5\n# Default-Stop:\n\
# Short-Description: Regular background program processing daemon\n\
# Description:       cron is a standard UNIX program that runs user-specified \n\
#                    programs at periodic scheduled times.\n### END INIT INFO\n\n\
PATH=/bin:/usr/bin:/sbin:/usr/sbin\n";

    #[test]
    fn start_links_and_their_runlevels() {
        assert_eq!(start_link_script("S01cron"), Some("cron"));
        assert_eq!(start_link_script("S20redis-server"), Some("redis-server"));
        assert_eq!(start_link_script("K01cron"), None);
        assert_eq!(start_link_script("S1cron"), None);
        assert_eq!(start_link_script("S01"), None);
        assert_eq!(start_link_script("README"), None);
        assert_eq!(runlevel_target(2), Some("multi-user.target"));
        assert_eq!(runlevel_target(4), Some("multi-user.target"));
        assert_eq!(runlevel_target(5), Some("graphical.target"));
        assert_eq!(runlevel_target(1), None);
    }

    #[test]
    fn debians_cron_header() {
        let h = LsbHeader::parse(CRON).unwrap();
        assert_eq!(h.provides, ["cron"]);
        assert_eq!(h.required_start, ["$remote_fs", "$syslog", "$time"]);
        assert_eq!(h.default_start, ["2", "3", "4", "5"]);
        assert_eq!(
            h.short_description.as_deref(),
            Some("Regular background program processing daemon")
        );
        assert_eq!(h.pidfile, None);
    }

    #[test]
    fn a_script_becomes_a_background_scripted_service() {
        let s = script_unit("cron", "/etc/init.d/cron", CRON).unwrap();
        assert_eq!(s.name, "cron.service");
        assert_eq!(s.kind, UnitType::BackgroundScripted);
        assert_eq!(
            s.description.as_deref(),
            Some("LSB: Regular background program processing daemon")
        );
        assert_eq!(s.provides, ["cron.service"]);
        assert_eq!(
            s.exec_start.as_ref().unwrap().argv.to_vec(),
            ["/etc/init.d/cron", "start"]
        );
        assert_eq!(
            s.exec_stop.as_ref().unwrap().argv.to_vec(),
            ["/etc/init.d/cron", "stop"]
        );
        // $syslog is nothing; the rest in order, each once.
        assert_eq!(
            s.after,
            [
                "remote-fs.target",
                "time-sync.target",
                "network.target",
                "nss-lookup.target",
                "slapd.service",
                "autofs.service",
                "ypbind.service",
                "nscd.service",
                "nslcd.service",
                "winbind.service",
                "sssd.service"
            ]
        );
        assert!(s.depends_on.is_empty() && s.waits_for.is_empty());
    }

    #[test]
    fn other_provides_a_pidfile_and_start_before() {
        let text = "#!/bin/sh\n# pidfile: /run/food.pid\n### BEGIN INIT INFO\n\
# Provides: food food-compat\n# X-Start-Before: nginx $network\n### END INIT INFO\n";
        let s = script_unit("food", "/etc/init.d/food", text).unwrap();
        assert_eq!(s.provides, ["food.service", "food-compat.service"]);
        assert_eq!(s.extras.pidfile, Some(PathBuf::from("/run/food.pid")));
        assert_eq!(s.before, ["nginx.service", "network.target"]);
        assert_eq!(s.description.as_deref(), Some("LSB: food"));
    }

    #[test]
    fn a_script_without_a_header_is_no_unit() {
        assert_eq!(
            script_unit("x", "/etc/init.d/x", "#!/bin/sh\necho hi\n"),
            None
        );
        assert_eq!(LsbHeader::parse(""), None);
    }
}
