//! `ConditionNeedsUpdate=DIR` as systemd decides it: the vendor tree
//! `/usr` was updated after `DIR` (`/etc` or `/var`) was last brought up
//! to date, which `systemd-update-done` records in `DIR/.updated` (its
//! modification time set to `/usr`'s, and `TIMESTAMP_NSEC=` in it for file
//! systems that keep whole seconds only). Units such as
//! `systemd-sysusers.service`, `ldconfig.service` and
//! `systemd-hwdb-update.service` run on that condition after an upgrade of
//! an image whose `/usr` is replaced whole.
//!
//! The rules, in order: the kernel command line's
//! `systemd.condition_needs_update=BOOL` (or `-`) decides alone; in an
//! initrd nothing needs an update; a relative `DIR` does; a read-only `DIR`
//! does not; a missing stamp (or `/usr` that cannot be read) does; else
//! `/usr` newer than the stamp does.

/// A modification time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MTime {
    /// Whole seconds.
    pub sec: i64,
    /// Nanoseconds into the second.
    pub nsec: i64,
}

/// What the machine says about the directory a `ConditionNeedsUpdate=`
/// names.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct UpdateStamps {
    /// The directory is on a read-only file system.
    pub read_only: bool,
    /// `DIR/.updated`'s modification time (`None`: missing or unreadable).
    pub stamp: Option<MTime>,
    /// The `TIMESTAMP_NSEC=` line of `DIR/.updated`, if any.
    pub stamp_nsec: Option<u64>,
    /// `/usr`'s modification time (`None`: unreadable).
    pub usr: Option<MTime>,
}

/// The verdict of `ConditionNeedsUpdate=dir` (before `!` is applied):
/// `cmdline` is the kernel command line, `in_initrd` whether the manager
/// runs in an initrd, `stamps` asked only when the verdict needs them.
pub fn needs_update(
    dir: &str,
    cmdline: &str,
    in_initrd: bool,
    stamps: impl FnOnce(&str) -> UpdateStamps,
) -> bool {
    if let Some(forced) = forced_by_cmdline(cmdline) {
        return forced;
    }
    if in_initrd {
        return false;
    }
    if !dir.starts_with('/') {
        return true;
    }
    let s = stamps(dir);
    if s.read_only {
        return false;
    }
    let (Some(stamp), Some(usr)) = (s.stamp, s.usr) else {
        return true;
    };
    if usr.sec != stamp.sec {
        return usr.sec > stamp.sec;
    }
    // Same second: the nanoseconds tell, unless the stamp's file system
    // keeps whole seconds only (its nanoseconds 0 while /usr's are not),
    // where TIMESTAMP_NSEC= holds what was meant.
    if usr.nsec == 0 || stamp.nsec > 0 {
        return usr.nsec > stamp.nsec;
    }
    match s.stamp_nsec {
        Some(ns) => total_nsec(usr) > ns,
        None => true,
    }
}

/// `/usr`'s time in nanoseconds since the epoch (0 before it).
fn total_nsec(t: MTime) -> u64 {
    u64::try_from(t.sec)
        .unwrap_or(0)
        .saturating_mul(1_000_000_000)
        .saturating_add(u64::try_from(t.nsec).unwrap_or(0))
}

/// The last `systemd.condition_needs_update` on the command line, as the
/// kernel command line's booleans are read (the key alone is true; `-`
/// and `_` are the same in keys); `None` when absent or not a boolean.
fn forced_by_cmdline(cmdline: &str) -> Option<bool> {
    let mut found = None;
    for word in cmdline.split_whitespace() {
        let (key, value) = match word.split_once('=') {
            Some((k, v)) => (k, Some(v)),
            None => (word, None),
        };
        if key.replace('-', "_") != "systemd.condition_needs_update" {
            continue;
        }
        found = match value {
            None => Some(true),
            Some(v) => crate::fleet::parse_bool(v),
        };
    }
    found
}

/// The `TIMESTAMP_NSEC=` value of a `.updated` file's text.
pub fn stamp_nsec(text: &str) -> Option<u64> {
    text.lines()
        .find_map(|l| l.trim().strip_prefix("TIMESTAMP_NSEC="))
        .and_then(|v| v.trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(sec: i64, nsec: i64) -> Option<MTime> {
        Some(MTime { sec, nsec })
    }

    fn stamps(stamp: Option<MTime>, usr: Option<MTime>) -> UpdateStamps {
        UpdateStamps {
            stamp,
            usr,
            ..UpdateStamps::default()
        }
    }

    #[test]
    fn usr_newer_than_the_stamp_needs_an_update() {
        // (stamp, /usr, TIMESTAMP_NSEC=, needs an update)
        type Case = (Option<MTime>, Option<MTime>, Option<u64>, bool);
        let cases: &[Case] = &[
            (at(100, 0), at(200, 0), None, true),
            (at(200, 0), at(100, 0), None, false),
            (at(100, 5), at(100, 5), None, false),
            (at(100, 5), at(100, 6), None, true),
            (at(100, 7), at(100, 6), None, false),
            // the stamp's file system keeps seconds only: TIMESTAMP_NSEC= tells
            (at(100, 0), at(100, 6), Some(100_000_000_006), false),
            (at(100, 0), at(100, 6), Some(100_000_000_005), true),
            (at(100, 0), at(100, 6), None, true),
            (None, at(100, 0), None, true),
            (at(100, 0), None, None, true),
        ];
        for &(stamp, usr, nsec, want) in cases {
            let mut s = stamps(stamp, usr);
            s.stamp_nsec = nsec;
            let got = needs_update("/etc", "quiet", false, |_| s.clone());
            assert_eq!(got, want, "stamp {stamp:?} usr {usr:?} nsec {nsec:?}");
        }
    }

    #[test]
    fn read_only_initrd_relative_and_the_command_line() {
        let fresh = || stamps(at(200, 0), at(100, 0));
        let ro = UpdateStamps {
            read_only: true,
            ..UpdateStamps::default()
        };
        assert!(!needs_update("/etc", "", false, |_| ro.clone()));
        assert!(!needs_update("/etc", "", true, |_| UpdateStamps::default()));
        assert!(needs_update("etc", "", false, |_| fresh()));
        assert!(needs_update(
            "/etc",
            "ro systemd.condition-needs-update",
            false,
            |_| fresh()
        ));
        assert!(needs_update(
            "/etc",
            "systemd.condition_needs_update=yes",
            true,
            |_| fresh()
        ));
        assert!(!needs_update(
            "/etc",
            "systemd.condition_needs_update=1 systemd.condition_needs_update=0",
            false,
            |_| UpdateStamps::default()
        ));
        // not a boolean: ignored
        assert!(!needs_update(
            "/etc",
            "systemd.condition_needs_update=maybe",
            false,
            |_| fresh()
        ));
    }

    #[test]
    fn stamp_nsec_is_read_from_the_file() {
        let text = "# a comment\nTIMESTAMP_NSEC=1700000000123456789\n";
        assert_eq!(stamp_nsec(text), Some(1_700_000_000_123_456_789));
        assert_eq!(stamp_nsec("TIMESTAMP_NSEC=x\n"), None);
        assert_eq!(stamp_nsec(""), None);
    }
}
