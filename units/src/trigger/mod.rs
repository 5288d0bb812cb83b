//! The settings of the trigger units — `timer`, `socket` and `path`
//! (systemd's `.timer`, `.socket`, `.path`) — as one [`Activation`] per
//! unit, read key by key in systemd's syntax ([`set`]) whether the key
//! came from a systemd file or its YAML twin. What a trigger does is the
//! planner's (its model is the module doc of [`crate::planner`]); the
//! timer's arithmetic is [`crate::timer::TimerSettings`]'s.

pub mod accept;
pub mod path;
pub mod socket;

use crate::fleet::parse_bool;
use crate::timer::TimerSettings;
use crate::timespan::parse_timespan;
use crate::unit_type::UnitType;
use serde::{Deserialize, Serialize};
use std::time::Duration;

pub use accept::{instance_name, Peer};
pub use path::{PathKind, PathSettings, PathSpec};
pub use socket::{BindIpv6Only, Listen, ListenAddr, ListenKind, SocketSettings, Timestamping};

/// A trigger unit's settings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Activation {
    /// A `timer`'s `[Timer]`.
    Timer(TimerSettings),
    /// A `socket`'s `[Socket]`.
    Socket(SocketSettings),
    /// A `path`'s `[Path]`.
    Path(PathSettings),
}

impl Activation {
    /// The defaults of a trigger of type `kind` (`None` for other types).
    pub fn of_type(kind: UnitType) -> Option<Activation> {
        match kind {
            UnitType::Timer => Some(Activation::Timer(TimerSettings::default())),
            UnitType::Socket => Some(Activation::Socket(SocketSettings::default())),
            UnitType::Path => Some(Activation::Path(PathSettings::default())),
            _ => None,
        }
    }

    /// The unit type these settings belong to.
    pub fn kind(&self) -> UnitType {
        match self {
            Activation::Timer(_) => UnitType::Timer,
            Activation::Socket(_) => UnitType::Socket,
            Activation::Path(_) => UnitType::Path,
        }
    }

    /// The timer's settings, if these are a timer's.
    pub fn timer(&self) -> Option<&TimerSettings> {
        match self {
            Activation::Timer(t) => Some(t),
            _ => None,
        }
    }

    /// The socket's settings, if these are a socket's.
    pub fn socket(&self) -> Option<&SocketSettings> {
        match self {
            Activation::Socket(s) => Some(s),
            _ => None,
        }
    }

    /// The path unit's settings, if these are a path unit's.
    pub fn path(&self) -> Option<&PathSettings> {
        match self {
            Activation::Path(p) => Some(p),
            _ => None,
        }
    }
}

/// Sets the systemd key `key` (its name in `[Timer]`, `[Socket]` or
/// `[Path]`) of a unit of type `kind` to `value`, in systemd's syntax,
/// making the unit's settings first if it has none. The error says what is
/// wrong with the value, or that the key does not belong to the type.
pub fn set(
    slot: &mut Option<Box<Activation>>,
    kind: UnitType,
    key: &str,
    value: &str,
) -> Result<(), String> {
    if slot.as_ref().is_none_or(|a| a.kind() != kind) {
        *slot = Activation::of_type(kind).map(Box::new);
    }
    let Some(a) = slot.as_deref_mut() else {
        return Err(format!("does not apply to a `{}` unit", kind.as_str()));
    };
    let known = match a {
        Activation::Timer(t) => t.set(key, value)?,
        Activation::Socket(s) => s.set(key, value)?,
        Activation::Path(p) => p.set(key, value)?,
    };
    if known {
        Ok(())
    } else {
        Err(format!("does not apply to a `{}` unit", kind.as_str()))
    }
}

/// How often a socket or path unit may fire: at most `burst` times in
/// `interval` (systemd's `TriggerLimitIntervalSec=`, `TriggerLimitBurst=`);
/// past it the trigger fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TriggerLimit {
    /// The window.
    pub interval: Duration,
    /// Fires allowed in it (0: no limit).
    pub burst: u32,
}

impl TriggerLimit {
    /// A path unit's default: 200 in 2 s.
    pub const PATH: TriggerLimit = TriggerLimit {
        interval: Duration::from_secs(2),
        burst: 200,
    };
    /// A socket unit's default (`Accept=no`): 20 in 2 s.
    pub const SOCKET: TriggerLimit = TriggerLimit {
        interval: Duration::from_secs(2),
        burst: 20,
    };

    /// A socket unit's default (200 with `Accept=yes`).
    pub fn socket(accept: bool) -> TriggerLimit {
        if accept {
            TriggerLimit::PATH
        } else {
            TriggerLimit::SOCKET
        }
    }

    fn set(&mut self, key: &str, v: &str, default: TriggerLimit) -> Result<(), String> {
        match key {
            "TriggerLimitIntervalSec" if v.is_empty() => self.interval = default.interval,
            "TriggerLimitIntervalSec" => self.interval = parse_timespan(v)?,
            _ if v.is_empty() => self.burst = default.burst,
            _ => self.burst = u32_value(v, 0)?,
        }
        Ok(())
    }
}

impl Default for TriggerLimit {
    fn default() -> TriggerLimit {
        TriggerLimit::PATH
    }
}

/// A boolean, or `default` for an empty value.
fn tristate(v: &str, default: bool) -> Result<bool, String> {
    if v.is_empty() {
        return Ok(default);
    }
    parse_bool(v).ok_or_else(|| format!("{v:?} is not a boolean (yes/no)"))
}

/// An octal file mode (`0600`), or `default` for an empty value.
fn mode(v: &str, default: u32) -> Result<u32, String> {
    if v.is_empty() {
        return Ok(default);
    }
    match u32::from_str_radix(v, 8) {
        Ok(m) if m <= 0o7777 => Ok(m),
        _ => Err(format!("{v:?} is not an octal file mode such as 0644")),
    }
}

/// A whole number of at least `min`.
fn u32_value(v: &str, min: u32) -> Result<u32, String> {
    match v.parse::<u32>() {
        Ok(n) if n >= min => Ok(n),
        _ => Err(format!("{v:?} is not a number of at least {min}")),
    }
}

/// A size in bytes with systemd's 1024-based suffixes (`8M`), or none for
/// an empty value.
fn size(v: &str) -> Result<Option<u64>, String> {
    if v.is_empty() {
        return Ok(None);
    }
    let (num, mult) = match v.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        None => (v, 1u64),
        Some((i, _)) => {
            let m = match &v[i..] {
                "B" => 1,
                "K" => 1 << 10,
                "M" => 1 << 20,
                "G" => 1 << 30,
                "T" => 1 << 40,
                _ => return Err(format!("{v:?} is not a size such as 8M (B, K, M, G, T)")),
            };
            (&v[..i], m)
        }
    };
    num.parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(mult))
        .map(Some)
        .ok_or_else(|| format!("{v:?} is not a size such as 8M (B, K, M, G, T)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_belong_to_their_type() {
        let mut slot = None;
        set(&mut slot, UnitType::Timer, "OnCalendar", "daily").unwrap();
        assert_eq!(
            set(&mut slot, UnitType::Timer, "ListenStream", "22").unwrap_err(),
            "does not apply to a `timer` unit"
        );
        assert!(set(&mut slot, UnitType::Oneshot, "OnCalendar", "daily").is_err());
        assert!(set(&mut slot, UnitType::Timer, "OnCalendar", "someday")
            .unwrap_err()
            .contains("invalid calendar"));
    }

    #[test]
    fn values() {
        assert_eq!(size("8M").unwrap(), Some(8 << 20));
        assert_eq!(size("512").unwrap(), Some(512));
        assert!(size("8Q").is_err());
        assert_eq!(mode("0600", 0o666).unwrap(), 0o600);
        assert!(mode("9", 0).is_err());
        assert!(tristate("maybe", false).is_err());
    }
}
