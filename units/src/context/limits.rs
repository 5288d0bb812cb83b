//! The `Limit*=` keys: resource limits (`setrlimit(2)`) as `systemd.exec(5)`
//! writes them: `SOFT:HARD` or one value for both, `infinity`, sizes with
//! binary suffixes for the limits in bytes, time spans for `LimitCPU=`
//! (seconds) and `LimitRTTIME=` (microseconds), nice levels for
//! `LimitNICE=`.

use serde::{Deserialize, Serialize};

use super::value::parse_bytes;
use crate::timespan::parse_timespan;

/// A resource, numbered as the kernel numbers `RLIMIT_*` (the same on
/// every architecture Linux has but alpha, mips and sparc).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Rlimit {
    /// `LimitCPU=`: seconds of CPU time.
    Cpu = 0,
    /// `LimitFSIZE=`: bytes of a file.
    Fsize = 1,
    /// `LimitDATA=`: bytes of the data segment.
    Data = 2,
    /// `LimitSTACK=`: bytes of the stack.
    Stack = 3,
    /// `LimitCORE=`: bytes of a core dump.
    Core = 4,
    /// `LimitRSS=`: bytes resident (ignored by Linux).
    Rss = 5,
    /// `LimitNPROC=`: processes of the user.
    Nproc = 6,
    /// `LimitNOFILE=`: open descriptors.
    Nofile = 7,
    /// `LimitMEMLOCK=`: bytes locked in memory.
    Memlock = 8,
    /// `LimitAS=`: bytes of address space.
    As = 9,
    /// `LimitLOCKS=`: file locks.
    Locks = 10,
    /// `LimitSIGPENDING=`: queued signals.
    Sigpending = 11,
    /// `LimitMSGQUEUE=`: bytes in POSIX message queues.
    Msgqueue = 12,
    /// `LimitNICE=`: the nice ceiling, as `20 - nice`.
    Nice = 13,
    /// `LimitRTPRIO=`: the real-time priority ceiling.
    Rtprio = 14,
    /// `LimitRTTIME=`: microseconds of real-time CPU without a blocking call.
    Rttime = 15,
}

/// What a limit counts, which decides its syntax.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unit {
    Bytes,
    Count,
    Seconds,
    Micros,
    Nice,
}

impl Rlimit {
    /// Every resource, in kernel order.
    pub const ALL: [Rlimit; 16] = [
        Rlimit::Cpu,
        Rlimit::Fsize,
        Rlimit::Data,
        Rlimit::Stack,
        Rlimit::Core,
        Rlimit::Rss,
        Rlimit::Nproc,
        Rlimit::Nofile,
        Rlimit::Memlock,
        Rlimit::As,
        Rlimit::Locks,
        Rlimit::Sigpending,
        Rlimit::Msgqueue,
        Rlimit::Nice,
        Rlimit::Rtprio,
        Rlimit::Rttime,
    ];

    /// `RLIMIT_NOFILE` and so on: the number `setrlimit(2)` takes.
    pub fn number(self) -> u32 {
        self as u32
    }

    /// The systemd key: `LimitNOFILE`.
    pub fn key(self) -> &'static str {
        match self {
            Rlimit::Cpu => "LimitCPU",
            Rlimit::Fsize => "LimitFSIZE",
            Rlimit::Data => "LimitDATA",
            Rlimit::Stack => "LimitSTACK",
            Rlimit::Core => "LimitCORE",
            Rlimit::Rss => "LimitRSS",
            Rlimit::Nproc => "LimitNPROC",
            Rlimit::Nofile => "LimitNOFILE",
            Rlimit::Memlock => "LimitMEMLOCK",
            Rlimit::As => "LimitAS",
            Rlimit::Locks => "LimitLOCKS",
            Rlimit::Sigpending => "LimitSIGPENDING",
            Rlimit::Msgqueue => "LimitMSGQUEUE",
            Rlimit::Nice => "LimitNICE",
            Rlimit::Rtprio => "LimitRTPRIO",
            Rlimit::Rttime => "LimitRTTIME",
        }
    }

    fn unit(self) -> Unit {
        match self {
            Rlimit::Fsize
            | Rlimit::Data
            | Rlimit::Stack
            | Rlimit::Core
            | Rlimit::Rss
            | Rlimit::Memlock
            | Rlimit::As
            | Rlimit::Msgqueue => Unit::Bytes,
            Rlimit::Nproc
            | Rlimit::Nofile
            | Rlimit::Locks
            | Rlimit::Sigpending
            | Rlimit::Rtprio => Unit::Count,
            Rlimit::Cpu => Unit::Seconds,
            Rlimit::Rttime => Unit::Micros,
            Rlimit::Nice => Unit::Nice,
        }
    }
}

/// `RLIM_INFINITY`: no limit.
pub const INFINITY: u64 = u64::MAX;

/// A soft and a hard limit ([`INFINITY`] for none).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct RlimitValue {
    /// The limit the kernel enforces.
    pub soft: u64,
    /// The ceiling the process may raise its soft limit to.
    pub hard: u64,
}

/// Parses a `Limit*=` value for `resource`: `VALUE` (soft and hard) or
/// `SOFT:HARD`.
pub fn parse_rlimit(resource: Rlimit, value: &str) -> Result<RlimitValue, String> {
    let t = value.trim();
    let (soft, hard) = match t.split_once(':') {
        Some((s, h)) => (parse_one(resource, s)?, parse_one(resource, h)?),
        None => {
            let v = parse_one(resource, t)?;
            (v, v)
        }
    };
    if soft > hard {
        return Err(format!(
            "`{t}`: the soft limit is above the hard limit (write SOFT:HARD with SOFT at most HARD)"
        ));
    }
    Ok(RlimitValue { soft, hard })
}

fn parse_one(resource: Rlimit, value: &str) -> Result<u64, String> {
    let t = value.trim();
    if t == "infinity" {
        return Ok(INFINITY);
    }
    match resource.unit() {
        Unit::Bytes => parse_bytes(t),
        Unit::Count => t
            .parse::<u64>()
            .map_err(|_| format!("`{t}` is not a number (write a count or `infinity`)")),
        Unit::Seconds => {
            let d = parse_timespan(t).map_err(|e| format!("`{t}`: {e}"))?;
            // Rounded up: a limit of 1.5 s allows 2 s, never less than asked.
            Ok(d.as_secs() + u64::from(d.subsec_nanos() > 0))
        }
        Unit::Micros => {
            if let Ok(n) = t.parse::<u64>() {
                return Ok(n);
            }
            let d = parse_timespan(t).map_err(|e| format!("`{t}`: {e}"))?;
            u64::try_from(d.as_micros()).map_err(|_| format!("`{t}` is too large"))
        }
        Unit::Nice => parse_nice_limit(t),
    }
}

/// `LimitNICE=`: a raw value from 0 to 40, or a nice level with its sign
/// (`+5`, `-10`), which is `20 - level` in the kernel's terms.
fn parse_nice_limit(t: &str) -> Result<u64, String> {
    let bad = || {
        format!(
            "`{t}` is not a nice limit (write a nice level with its sign, -20 to +19, or 0 to 40)"
        )
    };
    if t.starts_with('+') || t.starts_with('-') {
        let level: i64 = t.parse().map_err(|_| bad())?;
        if (-20..=19).contains(&level) {
            return u64::try_from(20 - level).map_err(|_| bad());
        }
        return Err(bad());
    }
    match t.parse::<u64>() {
        Ok(n) if n <= 40 => Ok(n),
        _ => Err(bad()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_sizes_and_infinity() {
        assert_eq!(
            parse_rlimit(Rlimit::Nofile, "65536"),
            Ok(RlimitValue {
                soft: 65536,
                hard: 65536
            })
        );
        assert_eq!(
            parse_rlimit(Rlimit::Nofile, "1024:524288"),
            Ok(RlimitValue {
                soft: 1024,
                hard: 524288
            })
        );
        assert_eq!(
            parse_rlimit(Rlimit::Core, "infinity"),
            Ok(RlimitValue {
                soft: INFINITY,
                hard: INFINITY
            })
        );
        assert_eq!(
            parse_rlimit(Rlimit::Memlock, "64K:infinity"),
            Ok(RlimitValue {
                soft: 65536,
                hard: INFINITY
            })
        );
        assert_eq!(
            parse_rlimit(Rlimit::Nofile, "lots").unwrap_err(),
            "`lots` is not a number (write a count or `infinity`)"
        );
        assert_eq!(
            parse_rlimit(Rlimit::Nofile, "2048:1024").unwrap_err(),
            "`2048:1024`: the soft limit is above the hard limit (write SOFT:HARD with SOFT at most HARD)"
        );
        assert!(parse_rlimit(Rlimit::As, "1Q").is_err());
    }

    #[test]
    fn times_and_nice() {
        assert_eq!(parse_rlimit(Rlimit::Cpu, "30").unwrap().soft, 30);
        assert_eq!(parse_rlimit(Rlimit::Cpu, "1min").unwrap().soft, 60);
        assert_eq!(parse_rlimit(Rlimit::Cpu, "1.5s").unwrap().soft, 2);
        assert_eq!(parse_rlimit(Rlimit::Rttime, "500").unwrap().soft, 500);
        assert_eq!(parse_rlimit(Rlimit::Rttime, "2s").unwrap().soft, 2_000_000);
        assert!(parse_rlimit(Rlimit::Cpu, "soon")
            .unwrap_err()
            .starts_with("`soon`: "));
        assert_eq!(parse_rlimit(Rlimit::Nice, "-10").unwrap().soft, 30);
        assert_eq!(parse_rlimit(Rlimit::Nice, "+19").unwrap().soft, 1);
        assert_eq!(parse_rlimit(Rlimit::Nice, "40").unwrap().soft, 40);
        assert_eq!(
            parse_rlimit(Rlimit::Nice, "41").unwrap_err(),
            "`41` is not a nice limit (write a nice level with its sign, -20 to +19, or 0 to 40)"
        );
        assert!(parse_rlimit(Rlimit::Nice, "-21").is_err());
    }

    #[test]
    fn numbers_and_keys() {
        for (i, r) in Rlimit::ALL.iter().enumerate() {
            assert_eq!(r.number() as usize, i);
            assert!(r.key().starts_with("Limit"));
        }
        assert_eq!(Rlimit::Nofile.key(), "LimitNOFILE");
    }
}
