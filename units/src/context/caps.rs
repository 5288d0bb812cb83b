//! Capability sets (`CapabilityBoundingSet=`, `AmbientCapabilities=`):
//! the names of `capabilities(7)`, lists with `~` inversion, and how
//! several assignments of one key combine.

use serde::{Deserialize, Serialize};

use super::value::{inverted, words};

/// The capabilities by number (`linux/capability.h`, up to Linux 6.18).
const NAMES: [&str; 41] = [
    "CAP_CHOWN",
    "CAP_DAC_OVERRIDE",
    "CAP_DAC_READ_SEARCH",
    "CAP_FOWNER",
    "CAP_FSETID",
    "CAP_KILL",
    "CAP_SETGID",
    "CAP_SETUID",
    "CAP_SETPCAP",
    "CAP_LINUX_IMMUTABLE",
    "CAP_NET_BIND_SERVICE",
    "CAP_NET_BROADCAST",
    "CAP_NET_ADMIN",
    "CAP_NET_RAW",
    "CAP_IPC_LOCK",
    "CAP_IPC_OWNER",
    "CAP_SYS_MODULE",
    "CAP_SYS_RAWIO",
    "CAP_SYS_CHROOT",
    "CAP_SYS_PTRACE",
    "CAP_SYS_PACCT",
    "CAP_SYS_ADMIN",
    "CAP_SYS_BOOT",
    "CAP_SYS_NICE",
    "CAP_SYS_RESOURCE",
    "CAP_SYS_TIME",
    "CAP_SYS_TTY_CONFIG",
    "CAP_MKNOD",
    "CAP_LEASE",
    "CAP_AUDIT_WRITE",
    "CAP_AUDIT_CONTROL",
    "CAP_SETFCAP",
    "CAP_MAC_OVERRIDE",
    "CAP_MAC_ADMIN",
    "CAP_SYSLOG",
    "CAP_WAKE_ALARM",
    "CAP_BLOCK_SUSPEND",
    "CAP_AUDIT_READ",
    "CAP_PERFMON",
    "CAP_BPF",
    "CAP_CHECKPOINT_RESTORE",
];

/// A set of capabilities, one bit per capability number. Bits above the
/// capabilities named here stand for capabilities of newer kernels: "all
/// but CAP_X" keeps them, as systemd does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct CapSet(pub u64);

/// Capability numbers, for the sandbox rules that drop them.
pub mod cap {
    /// `CAP_SYS_MODULE`.
    pub const SYS_MODULE: u32 = 16;
    /// `CAP_SYS_RAWIO`.
    pub const SYS_RAWIO: u32 = 17;
    /// `CAP_SYS_ADMIN`.
    pub const SYS_ADMIN: u32 = 21;
    /// `CAP_SYS_TIME`.
    pub const SYS_TIME: u32 = 25;
    /// `CAP_MKNOD`.
    pub const MKNOD: u32 = 27;
    /// `CAP_SYSLOG`.
    pub const SYSLOG: u32 = 34;
    /// `CAP_WAKE_ALARM`.
    pub const WAKE_ALARM: u32 = 35;
}

impl CapSet {
    /// No capability.
    pub const EMPTY: CapSet = CapSet(0);
    /// Every capability, those of newer kernels included.
    pub const ALL: CapSet = CapSet(u64::MAX);

    /// Whether capability `n` is in the set.
    pub fn has(self, n: u32) -> bool {
        n < 64 && self.0 & (1 << n) != 0
    }

    /// The set without capability `n`.
    pub fn without(self, n: u32) -> CapSet {
        if n < 64 {
            CapSet(self.0 & !(1 << n))
        } else {
            self
        }
    }

    /// The names of the capabilities in the set (numbers for those without
    /// a name here).
    pub fn names(self) -> Vec<String> {
        (0..64)
            .filter(|&n| self.has(n))
            .map(|n| name(n).map_or_else(|| n.to_string(), str::to_string))
            .collect()
    }
}

/// The name of capability `n` (`CAP_CHOWN`), if it has one here.
pub fn name(n: u32) -> Option<&'static str> {
    NAMES.get(n as usize).copied()
}

/// A capability by name (`CAP_NET_ADMIN`, any case) or number (0 to 63).
pub fn parse_cap(word: &str) -> Result<u32, String> {
    if let Ok(n) = word.parse::<u32>() {
        return if n < 64 {
            Ok(n)
        } else {
            Err(format!("{n} is not a capability number (0 to 63)"))
        };
    }
    NAMES
        .iter()
        .position(|n| n.eq_ignore_ascii_case(word))
        .map(|i| i as u32)
        .ok_or_else(|| format!("`{word}` is not a capability (write e.g. CAP_NET_BIND_SERVICE)"))
}

/// A list of capabilities, `~` meaning "all but these": the set it names.
pub fn parse_cap_list(value: &str) -> Result<(bool, CapSet), String> {
    let (invert, rest) = inverted(value);
    let mut set = CapSet::EMPTY;
    for w in words(rest)? {
        set.0 |= 1 << parse_cap(&w)?;
    }
    Ok((invert, if invert { CapSet(!set.0) } else { set }))
}

/// Applies one assignment of a capability key to `current` (`None`: never
/// assigned), as systemd combines them: an empty value makes the set empty
/// (no capability at all) and forgets earlier assignments; the first
/// assignment sets the set; a later plain list adds to it, a later `~`
/// list removes from it.
pub fn assign(current: &mut Option<CapSet>, value: &str) -> Result<(), String> {
    if value.trim().is_empty() {
        *current = Some(CapSet::EMPTY);
        return Ok(());
    }
    let (invert, set) = parse_cap_list(value)?;
    *current = Some(match *current {
        None => set,
        Some(cur) if invert => CapSet(cur.0 & set.0),
        Some(cur) => CapSet(cur.0 | set.0),
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_numbers() {
        assert_eq!(parse_cap("CAP_CHOWN"), Ok(0));
        assert_eq!(parse_cap("cap_net_bind_service"), Ok(10));
        assert_eq!(parse_cap("40"), Ok(40));
        assert_eq!(parse_cap("CAP_CHECKPOINT_RESTORE"), Ok(40));
        assert_eq!(
            parse_cap("CAP_FLY").unwrap_err(),
            "`CAP_FLY` is not a capability (write e.g. CAP_NET_BIND_SERVICE)"
        );
        assert_eq!(
            parse_cap("64").unwrap_err(),
            "64 is not a capability number (0 to 63)"
        );
        assert_eq!(name(21), Some("CAP_SYS_ADMIN"));
        assert_eq!(name(cap::SYSLOG), Some("CAP_SYSLOG"));
        assert_eq!(name(cap::MKNOD), Some("CAP_MKNOD"));
        assert_eq!(name(99), None);
    }

    #[test]
    fn lists_and_inversion() {
        let (inv, s) = parse_cap_list("CAP_CHOWN CAP_KILL").unwrap();
        assert!(!inv);
        assert_eq!(s, CapSet(1 | 1 << 5));
        assert_eq!(s.names(), ["CAP_CHOWN", "CAP_KILL"]);
        let (inv, s) = parse_cap_list("~CAP_SYS_ADMIN").unwrap();
        assert!(inv);
        assert!(!s.has(21) && s.has(0) && s.has(63));
        assert!(parse_cap_list("CAP_CHOWN CAP_NOPE").is_err());
    }

    #[test]
    fn assignments_combine_as_systemd_does() {
        let mut c = None;
        assign(&mut c, "CAP_CHOWN").unwrap();
        assign(&mut c, "CAP_KILL").unwrap();
        assert_eq!(c, Some(CapSet(1 | 1 << 5)));
        assign(&mut c, "~CAP_CHOWN").unwrap();
        assert_eq!(c, Some(CapSet(1 << 5)));
        // An empty value is the empty set: no capability at all.
        assign(&mut c, "").unwrap();
        assert_eq!(c, Some(CapSet::EMPTY));
        assign(&mut c, "CAP_KILL").unwrap();
        assert_eq!(c, Some(CapSet(1 << 5)));
        let mut all = None;
        assign(&mut all, "~").unwrap();
        assert_eq!(all, Some(CapSet::ALL));
        let mut d = None;
        assign(&mut d, "~CAP_SYS_ADMIN CAP_SYS_MODULE").unwrap();
        assert!(!d.unwrap().has(21) && !d.unwrap().has(16) && d.unwrap().has(0));
        assert!(!CapSet::ALL.without(3).has(3));
    }
}
