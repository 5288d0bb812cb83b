//! The choice of a dynamic user's UID and GID (systemd's `DynamicUser=`):
//! a pair of equal numbers in systemd's range for them, 61184–65519,
//! picked by hashing the user's name, so that the same service gets the
//! same number run after run as long as nothing else holds it; the next
//! numbers of the range, in turn, when it is held. Which numbers are held
//! (the passwd and group databases, the other dynamic users the init
//! holds) is the init's to say. Pure: no I/O.

/// The first UID (and GID) of systemd's range for dynamic users.
pub const FIRST: u32 = 61184;
/// The last one.
pub const LAST: u32 = 65519;

/// The name of the dynamic user of unit `unit` (`NAME.service`): its
/// `User=` if it gives one, else the unit's name without its type suffix,
/// as systemd derives it; characters a user name may not have (`@`, `.`,
/// `\`) become `-`.
pub fn user_name(unit: &str, user: Option<&str>) -> String {
    if let Some(u) = user.filter(|u| !u.is_empty()) {
        return u.to_string();
    }
    let stem = unit.rsplit_once('.').map_or(unit, |(stem, _)| stem);
    stem.chars()
        .map(|c| match c {
            '@' | '.' | '\\' => '-',
            c => c,
        })
        .collect()
}

/// The number a name hashes to in the range (FNV-1a, 64 bits, of its
/// bytes): the first one tried.
pub fn hashed(name: &str) -> u32 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let h = name
        .bytes()
        .fold(OFFSET, |h, b| (h ^ u64::from(b)).wrapping_mul(PRIME));
    let span = u64::from(LAST - FIRST + 1);
    // The remainder is below `span`, which fits a u32.
    FIRST + u32::try_from(h % span).unwrap_or(0)
}

/// The UID (and GID) for the dynamic user `name`: the hashed number, or
/// the first after it (wrapping to [`FIRST`]) that `held` says is free;
/// `None` when every number of the range is held.
pub fn pick(name: &str, held: impl Fn(u32) -> bool) -> Option<u32> {
    let start = hashed(name);
    let span = LAST - FIRST + 1;
    (0..span)
        .map(|i| FIRST + (start - FIRST + i) % span)
        .find(|&n| !held(n))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_name_is_the_users_or_the_units_stem() {
        for (unit, user, want) in [
            ("test-sleep.service", None, "test-sleep"),
            ("test-sleep.service", Some("sleeper"), "sleeper"),
            ("test-sleep.service", Some(""), "test-sleep"),
            ("getty@tty1.service", None, "getty-tty1"),
            ("a.b.service", None, "a-b"),
            ("plain", None, "plain"),
        ] {
            assert_eq!(user_name(unit, user), want, "{unit} {user:?}");
        }
    }

    #[test]
    fn the_hash_is_in_the_range_and_stable() {
        for name in [
            "",
            "a",
            "test-sleep",
            "sleeper",
            "getty-tty1",
            "x".repeat(300).as_str(),
        ] {
            let n = hashed(name);
            assert!((FIRST..=LAST).contains(&n), "{name}: {n}");
            assert_eq!(hashed(name), n);
        }
        // Names that differ get different numbers (for these).
        assert_ne!(hashed("test-sleep"), hashed("test-sleep2"));
    }

    #[test]
    fn a_held_number_moves_to_the_next_free_one_wrapping() {
        let name = "test-sleep";
        let first = hashed(name);
        assert_eq!(pick(name, |_| false), Some(first));
        let next = if first == LAST { FIRST } else { first + 1 };
        assert_eq!(pick(name, |n| n == first), Some(next));
        // Everything from the hashed number to the end held: the range's
        // start.
        let want = (first > FIRST).then_some(FIRST);
        assert_eq!(pick(name, |n| n >= first), want);
        assert_eq!(pick(name, |_| true), None);
        // One number free in the whole range: that one.
        assert_eq!(pick(name, |n| n != 61200), Some(61200));
    }
}
