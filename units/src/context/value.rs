//! The value syntax the context keys share, as `systemd.exec(5)` and
//! `systemd.resource-control(5)` write it: booleans, octal modes, sizes
//! with binary suffixes, percentages, bounded integers, lists of words and
//! descriptor names.
//!
//! Every parser returns the value or a sentence fragment that says what is
//! wrong with it (``` `12x` is not a size … ```), for the caller to prefix
//! with the key and position.

/// systemd's booleans: `1`, `yes`, `y`, `true`, `t`, `on` and `0`, `no`,
/// `n`, `false`, `f`, `off`, in any case.
pub fn parse_bool(value: &str) -> Result<bool, String> {
    match value.trim().to_ascii_lowercase().as_str() {
        "1" | "yes" | "y" | "true" | "t" | "on" => Ok(true),
        "0" | "no" | "n" | "false" | "f" | "off" => Ok(false),
        other => Err(format!(
            "`{other}` is not a boolean (write yes or no, true or false, on or off, 1 or 0)"
        )),
    }
}

/// An octal file mode from `0` to `07777` (`0755`, `750`, `0o700`).
pub fn parse_mode(value: &str) -> Result<u32, String> {
    let t = value.trim();
    let digits = t.strip_prefix("0o").unwrap_or(t);
    if digits.is_empty() || !digits.bytes().all(|b| (b'0'..=b'7').contains(&b)) {
        return Err(format!("`{t}` is not an octal mode (write e.g. 0755)"));
    }
    match u32::from_str_radix(digits, 8) {
        Ok(m) if m <= 0o7777 => Ok(m),
        _ => Err(format!("`{t}` is more than 07777")),
    }
}

/// The binary suffixes of sizes: each is 1024 times the one before.
const SIZE_SUFFIXES: [(char, u32); 7] = [
    ('B', 0),
    ('K', 1),
    ('M', 2),
    ('G', 3),
    ('T', 4),
    ('P', 5),
    ('E', 6),
];

/// A size in bytes: a number with an optional fraction and one of the
/// suffixes `B`, `K`, `M`, `G`, `T`, `P`, `E` (powers of 1024, as systemd
/// reads them: `1K` is 1024 bytes). `infinity` is not accepted here: the
/// callers that allow it say so.
pub fn parse_bytes(value: &str) -> Result<u64, String> {
    let t = value.trim();
    let bad = || format!("`{t}` is not a size (write e.g. 512M, 2G or a number of bytes)");
    let (number, shift) = match t.chars().last() {
        Some(c) if c.is_ascii_alphabetic() => {
            let up = c.to_ascii_uppercase();
            let (_, power) = SIZE_SUFFIXES
                .iter()
                .find(|(s, _)| *s == up)
                .ok_or_else(bad)?;
            (&t[..t.len() - 1], *power)
        }
        _ => (t, 0),
    };
    let number = number.trim_end();
    if number.starts_with('-') {
        return Err(format!("`{t}` is negative; a size is 0 or more"));
    }
    let (int, frac) = number.split_once('.').unwrap_or((number, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if int.is_empty() && frac.is_empty() || !digits(int) || !digits(frac) {
        return Err(bad());
    }
    let too_large = || format!("`{t}` is too large");
    let unit: u128 = 1u128 << (10 * shift);
    let whole: u128 = if int.is_empty() {
        0
    } else {
        int.parse::<u128>().map_err(|_| too_large())?
    };
    let mut bytes = whole.checked_mul(unit).ok_or_else(too_large)?;
    let frac = &frac[..frac.len().min(18)];
    if !frac.is_empty() {
        let f: u128 = frac.parse().map_err(|_| bad())?;
        bytes = bytes
            .checked_add(f * unit / 10u128.pow(frac.len() as u32))
            .ok_or_else(too_large)?;
    }
    u64::try_from(bytes).map_err(|_| too_large())
}

/// A percentage, as parts per ten thousand: `20%` is 2000, `20.5%` is
/// 2050, `5‰` is 50, `5‱` is 5. `None` when `value` carries none of these
/// signs (so the caller can try another form).
pub fn parse_permyriad(value: &str) -> Option<Result<u32, String>> {
    let t = value.trim();
    let (number, scale) = if let Some(n) = t.strip_suffix('%') {
        (n, 100u64)
    } else if let Some(n) = t.strip_suffix('‰') {
        (n, 10)
    } else if let Some(n) = t.strip_suffix('‱') {
        (n, 1)
    } else {
        return None;
    };
    let bad = || format!("`{t}` is not a percentage (write e.g. 20% or 12.5%)");
    let (int, frac) = number.split_once('.').unwrap_or((number, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if int.is_empty() || !digits(int) || !digits(frac) {
        return Some(Err(bad()));
    }
    // Parts per ten thousand: at most two decimals of a percentage, one of
    // a per-mille, none of a per-myriad.
    let allowed = match scale {
        100 => 2,
        10 => 1,
        _ => 0,
    };
    if frac.len() > allowed {
        return Some(Err(format!("`{t}` is more precise than 0.01%")));
    }
    let whole: u64 = match int.parse() {
        Ok(n) => n,
        Err(_) => return Some(Err(format!("`{t}` is too large"))),
    };
    let frac_value: u64 = if frac.is_empty() {
        0
    } else {
        frac.parse().unwrap_or(0) * 10u64.pow((allowed - frac.len()) as u32)
    };
    let unit_frac = 10u64.pow(allowed as u32);
    let total = whole
        .saturating_mul(scale)
        .saturating_add(frac_value * scale / unit_frac);
    Some(u32::try_from(total).map_err(|_| format!("`{t}` is too large")))
}

/// A decimal integer in `min..=max`; `what` names it in errors ("a nice
/// level").
pub fn parse_int_in(value: &str, min: i64, max: i64, what: &str) -> Result<i64, String> {
    let t = value.trim();
    let n: i64 = t
        .parse()
        .map_err(|_| format!("`{t}` is not a number ({what} is from {min} to {max})"))?;
    if (min..=max).contains(&n) {
        Ok(n)
    } else {
        Err(format!(
            "{n} is out of range ({what} is from {min} to {max})"
        ))
    }
}

/// Splits a list value into words: separated by whitespace, `"…"` and
/// `'…'` quote (the quotes are removed), as systemd reads lists of paths
/// and names.
pub fn words(value: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    for c in value.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => cur.push(c),
            None if c == '"' || c == '\'' => {
                quote = Some(c);
                in_word = true;
            }
            None if c.is_whitespace() => {
                if in_word {
                    out.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            None => {
                cur.push(c);
                in_word = true;
            }
        }
    }
    if let Some(q) = quote {
        return Err(format!("unterminated {q} quote in `{}`", value.trim()));
    }
    if in_word {
        out.push(cur);
    }
    Ok(out)
}

/// A list with systemd's inversion: a leading `~` means "all but these".
/// Returns whether it was inverted and the rest of the value.
pub fn inverted(value: &str) -> (bool, &str) {
    let t = value.trim();
    match t.strip_prefix('~') {
        Some(rest) => (true, rest),
        None => (false, t),
    }
}

/// A descriptor name as `FileDescriptorName=` allows it: 1 to 255
/// printable ASCII characters, no `:`.
pub fn valid_fd_name(name: &str) -> Result<(), String> {
    if name.is_empty() || name.len() > 255 {
        return Err(format!(
            "`{name}` is not a descriptor name (1 to 255 characters)"
        ));
    }
    if !name.bytes().all(|b| b.is_ascii_graphic() && b != b':') {
        return Err(format!(
            "`{name}` is not a descriptor name (printable characters, no `:`)"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn booleans() {
        for v in ["1", "yes", "Y", "true", "t", "ON"] {
            assert_eq!(parse_bool(v), Ok(true), "{v}");
        }
        for v in ["0", "no", "n", "False", "f", "off"] {
            assert_eq!(parse_bool(v), Ok(false), "{v}");
        }
        assert_eq!(
            parse_bool("maybe").unwrap_err(),
            "`maybe` is not a boolean (write yes or no, true or false, on or off, 1 or 0)"
        );
    }

    #[test]
    fn modes() {
        assert_eq!(parse_mode("0755"), Ok(0o755));
        assert_eq!(parse_mode("750"), Ok(0o750));
        assert_eq!(parse_mode("0o700"), Ok(0o700));
        assert_eq!(parse_mode("07777"), Ok(0o7777));
        assert_eq!(
            parse_mode("0758").unwrap_err(),
            "`0758` is not an octal mode (write e.g. 0755)"
        );
        assert_eq!(
            parse_mode("17777").unwrap_err(),
            "`17777` is more than 07777"
        );
        assert!(parse_mode("").is_err());
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_bytes("100"), Ok(100));
        assert_eq!(parse_bytes("1K"), Ok(1024));
        assert_eq!(parse_bytes("512M"), Ok(512 << 20));
        assert_eq!(parse_bytes("2g"), Ok(2 << 30));
        assert_eq!(parse_bytes("1.5G"), Ok(3 << 29));
        assert_eq!(parse_bytes("3B"), Ok(3));
        assert_eq!(parse_bytes("1E"), Ok(1 << 60));
        assert_eq!(
            parse_bytes("12x").unwrap_err(),
            "`12x` is not a size (write e.g. 512M, 2G or a number of bytes)"
        );
        assert_eq!(
            parse_bytes("-1M").unwrap_err(),
            "`-1M` is negative; a size is 0 or more"
        );
        assert_eq!(parse_bytes("16E").unwrap_err(), "`16E` is too large");
        assert!(parse_bytes("M").is_err());
        assert!(parse_bytes("").is_err());
    }

    #[test]
    fn percentages() {
        assert_eq!(parse_permyriad("20%"), Some(Ok(2000)));
        assert_eq!(parse_permyriad("20.5%"), Some(Ok(2050)));
        assert_eq!(parse_permyriad("0.01%"), Some(Ok(1)));
        assert_eq!(parse_permyriad("250%"), Some(Ok(25000)));
        assert_eq!(parse_permyriad("5‰"), Some(Ok(50)));
        assert_eq!(parse_permyriad("5‱"), Some(Ok(5)));
        assert_eq!(parse_permyriad("20"), None);
        assert_eq!(
            parse_permyriad("1.234%"),
            Some(Err("`1.234%` is more precise than 0.01%".into()))
        );
        assert_eq!(
            parse_permyriad("x%"),
            Some(Err(
                "`x%` is not a percentage (write e.g. 20% or 12.5%)".into()
            ))
        );
        assert!(matches!(parse_permyriad("-5%"), Some(Err(_))));
    }

    #[test]
    fn integers() {
        assert_eq!(parse_int_in("-5", -20, 19, "a nice level"), Ok(-5));
        assert_eq!(
            parse_int_in("20", -20, 19, "a nice level").unwrap_err(),
            "20 is out of range (a nice level is from -20 to 19)"
        );
        assert_eq!(
            parse_int_in("x", -20, 19, "a nice level").unwrap_err(),
            "`x` is not a number (a nice level is from -20 to 19)"
        );
    }

    #[test]
    fn word_lists() {
        assert_eq!(words(" a  b\tc ").unwrap(), ["a", "b", "c"]);
        assert_eq!(
            words(r#"-/var/lib "/a b" 'c d'e"#).unwrap(),
            ["-/var/lib", "/a b", "c de"]
        );
        assert_eq!(words("").unwrap(), Vec::<String>::new());
        assert_eq!(words(r#""""#).unwrap(), [""]);
        assert_eq!(
            words(r#""/a"#).unwrap_err(),
            r#"unterminated " quote in `"/a`"#
        );
        assert_eq!(inverted(" ~CAP_A"), (true, "CAP_A"));
        assert_eq!(inverted("CAP_A"), (false, "CAP_A"));
    }
}
