//! systemd's escaping of strings and paths into unit names
//! (`systemd-escape`, `systemd-escape --path`, `-u`, `--template`) and
//! back, as systemd 252 does it.

/// Why a string cannot be escaped or unescaped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EscapeError {
    /// `--path` of a path with `..` (or that is otherwise not normalized).
    #[error("path {0:?} is not normalized (it has a '..' component)")]
    NotNormalized(String),
    /// A `\` not followed by `x` and two hex digits, or `\x00`.
    #[error("{0:?} has a '\\' not followed by 'x' and two hex digits other than 00")]
    BadEscape(String),
    /// Unescaping as a path gives an empty path, a leading or trailing
    /// `/`, `//`, or a `.`/`..` component.
    #[error("{0:?} does not unescape to a normalized absolute path")]
    NotAPath(String),
    /// `--template` with a name that is not a template.
    #[error("{0:?} is not a template name such as foo@.service")]
    NotATemplate(String),
    /// `--template` with an empty string: an instance needs a name.
    #[error("an instance of {0} needs a non-empty instance name")]
    EmptyInstance(String),
}

fn escape_byte(out: &mut String, b: u8) {
    out.push_str(&format!("\\x{b:02x}"));
}

/// `systemd-escape STRING`: `/` becomes `-`; ASCII letters, digits, `:`,
/// `_` and `.` (except a leading `.`) stay; every other byte becomes
/// `\xNN`.
///
/// ```
/// use flotilla_units::escape::escape;
/// assert_eq!(escape("a-b c/d"), r"a\x2db\x20c-d");
/// assert_eq!(escape(".hidden"), r"\x2ehidden");
/// ```
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for (i, &b) in s.as_bytes().iter().enumerate() {
        match b {
            b'/' => out.push('-'),
            b'.' if i == 0 => escape_byte(&mut out, b),
            b if b.is_ascii_alphanumeric() || b":_.".contains(&b) => out.push(char::from(b)),
            b => escape_byte(&mut out, b),
        }
    }
    out
}

/// Simplifies a path as systemd's `path_simplify` does: no doubled `/`, no
/// `.` components, no trailing `/`.
fn simplify(path: &str) -> String {
    let parts: Vec<&str> = path
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    let joined = parts.join("/");
    if path.starts_with('/') {
        format!("/{joined}")
    } else {
        joined
    }
}

/// `systemd-escape --path PATH`: the path simplified, `/` itself as `-`,
/// otherwise without its leading `/` and escaped. A path with a `..`
/// component is refused. A relative path is escaped too (systemd warns
/// that it will not unescape to the same path).
///
/// ```
/// use flotilla_units::escape::escape_path;
/// assert_eq!(escape_path("/dev/disk/by-label/x").unwrap(), r"dev-disk-by\x2dlabel-x");
/// assert_eq!(escape_path("/").unwrap(), "-");
/// ```
pub fn escape_path(path: &str) -> Result<String, EscapeError> {
    let p = simplify(path);
    if p.is_empty() || p == "/" {
        return Ok("-".to_string());
    }
    if p.split('/').any(|c| c == "..") {
        return Err(EscapeError::NotNormalized(path.to_string()));
    }
    Ok(escape(p.trim_start_matches('/')))
}

/// The longest a unit name may be, as systemd's `UNIT_NAME_MAX` (a name
/// is shorter than this).
pub const UNIT_NAME_MAX: usize = 256;

/// systemd's key for the hash of an over-long name (`LONG_UNIT_NAME_HASH_KEY`
/// in its `unit-name.c`).
const LONG_NAME_KEY: [u8; 16] = [
    0xec, 0xf2, 0x37, 0xfb, 0x58, 0x32, 0x4a, 0x32, 0x84, 0x9f, 0x06, 0x9b, 0x0d, 0x21, 0xeb, 0x9a,
];

/// The unit named after `path` with the type `suffix` (`mount`, `device`,
/// `swap`, `automount`), as systemd's `unit_name_from_path` (and
/// `systemd-escape --suffix=mount --path`) makes it: the escaped path and
/// the suffix, unless that is [`UNIT_NAME_MAX`] or longer (a mount at a
/// deep path): then its first bytes, `_`, the 16 hex digits of its
/// SipHash-2-4 under systemd's key (little-endian) and the suffix, 255
/// bytes in all, so that every program that names the path finds the
/// same unit.
///
/// ```
/// use flotilla_units::escape::name_from_path;
/// assert_eq!(name_from_path("/tmp/x", "mount").unwrap(), "tmp-x.mount");
/// let long = name_from_path(&"/x".repeat(200), "mount").unwrap();
/// assert_eq!(long.len(), 255);
/// assert!(long.ends_with(".mount"));
/// ```
pub fn name_from_path(path: &str, suffix: &str) -> Result<String, EscapeError> {
    let name = format!("{}.{suffix}", escape_path(path)?);
    if name.len() < UNIT_NAME_MAX {
        return Ok(name);
    }
    let keep = UNIT_NAME_MAX - 1 - suffix.len() - 16 - 2;
    // systemd's `siphash24_string` hashes the string with its NUL.
    let mut bytes = name.clone().into_bytes();
    bytes.push(0);
    let hash = siphash24(&bytes, &LONG_NAME_KEY);
    let hex: String = hash
        .to_le_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    // The escaped name is ASCII: any byte is a character boundary.
    Ok(format!("{}_{hex}.{suffix}", &name[..keep]))
}

/// Whether `name` is one [`name_from_path`] hashed: a valid name whose stem
/// ends in `_` and 16 lowercase hex digits (systemd's
/// `unit_name_is_hashed`). Its path cannot be read back from it.
pub fn is_hashed(name: &str) -> bool {
    let Some((stem, _)) = name.rsplit_once('.') else {
        return false;
    };
    stem.len() > 16
        && stem.as_bytes()[stem.len() - 17] == b'_'
        && stem[stem.len() - 16..]
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// SipHash-2-4 of `data` under `key`, as systemd's `siphash24` (std's
/// `SipHasher` is the same function, kept deprecated only because std
/// does not promise it for `Hash`).
fn siphash24(data: &[u8], key: &[u8; 16]) -> u64 {
    use std::hash::Hasher;
    let half = |i: usize| {
        let mut b = [0u8; 8];
        b.copy_from_slice(&key[i..i + 8]);
        u64::from_le_bytes(b)
    };
    #[allow(deprecated)]
    let mut h = std::hash::SipHasher::new_with_keys(half(0), half(8));
    h.write(data);
    h.finish()
}

/// `systemd-escape -u NAME`: `\xNN` becomes its byte and `-` becomes `/`.
/// Bytes that are not UTF-8 are replaced (U+FFFD); `\x00` is refused
/// (systemd cuts the string there).
///
/// ```
/// use flotilla_units::escape::unescape;
/// assert_eq!(unescape(r"foo-bar\x2dbaz").unwrap(), "foo/bar-baz");
/// ```
pub fn unescape(s: &str) -> Result<String, EscapeError> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'-' => out.push(b'/'),
            b'\\' => {
                let hex = b
                    .get(i + 1..i + 4)
                    .filter(|h| h[0] == b'x')
                    .and_then(|h| std::str::from_utf8(&h[1..]).ok())
                    .and_then(|h| u8::from_str_radix(h, 16).ok())
                    .filter(|&v| {
                        v != 0 && b[i + 2].is_ascii_hexdigit() && b[i + 3].is_ascii_hexdigit()
                    })
                    .ok_or_else(|| EscapeError::BadEscape(s.to_string()))?;
                out.push(hex);
                i += 3;
            }
            c => out.push(c),
        }
        i += 1;
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// `systemd-escape -u --path NAME`: `-` is `/`; otherwise [`unescape`]
/// with a `/` in front, which must be a normalized absolute path.
///
/// ```
/// use flotilla_units::escape::unescape_path;
/// assert_eq!(unescape_path(r"dev-disk-by\x2dlabel-x").unwrap(), "/dev/disk/by-label/x");
/// assert!(unescape_path("a--b").is_err());
/// ```
pub fn unescape_path(s: &str) -> Result<String, EscapeError> {
    if s == "-" {
        return Ok("/".to_string());
    }
    let w = unescape(s)?;
    let bad = || EscapeError::NotAPath(s.to_string());
    if w.is_empty() || w.starts_with('/') || w.ends_with('/') {
        return Err(bad());
    }
    if w.split('/').any(|c| c.is_empty() || c == "." || c == "..") {
        return Err(bad());
    }
    Ok(format!("/{w}"))
}

/// `systemd-escape --template=TEMPLATE STRING`: the instance of
/// `TEMPLATE` (`foo@.service`) named by the escaped string.
///
/// ```
/// use flotilla_units::escape::escape_into_template;
/// assert_eq!(escape_into_template("foo@.service", "a/b").unwrap(), "foo@a-b.service");
/// ```
pub fn escape_into_template(template: &str, s: &str) -> Result<String, EscapeError> {
    let n = crate::unit_name::UnitName::split(template);
    if s.is_empty() && n.is_template() {
        return Err(EscapeError::EmptyInstance(template.to_string()));
    }
    n.instantiate(&escape(s))
        .ok_or_else(|| EscapeError::NotATemplate(template.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SipHash-2-4's reference vector (the paper's appendix: key 00..0f,
    /// message 00..0e), which systemd's own test of `siphash24` checks.
    #[test]
    fn siphash_is_the_reference_function() {
        let key: [u8; 16] = std::array::from_fn(|i| i as u8);
        let msg: Vec<u8> = (0u8..15).collect();
        assert_eq!(siphash24(&msg, &key), 0xa129ca6149be45e5);
    }

    /// A mount at a path of seven 255-byte components, as systemd's test
    /// 60 makes it: the name Debian's systemd 252 gives it (its
    /// `systemd-fstab-generator`, given that path in an fstab, writes
    /// this unit).
    #[test]
    fn an_over_long_name_is_hashed_as_systemd_does() {
        let long = format!("/{}", "x".repeat(255)).repeat(7);
        let name = name_from_path(&long, "mount").unwrap();
        assert_eq!(name.len(), 255);
        assert_eq!(
            &name[..232],
            &format!("{}-", "x".repeat(255)).repeat(7)[..232]
        );
        assert_eq!(&name[232..], "_d47b8f53acebf7de.mount");
        assert!(is_hashed(&name));
        assert!(!is_hashed("tmp-x.mount"));
        assert!(!is_hashed(
            &name_from_path("/tmp/abcdefabcdefabcdef", "mount").unwrap()
        ));
        // One byte short of the limit is kept whole.
        let edge = format!("/{}", "y".repeat(UNIT_NAME_MAX - 1 - ".mount".len()));
        assert_eq!(
            name_from_path(&edge, "mount").unwrap().len(),
            UNIT_NAME_MAX - 1
        );
    }

    #[test]
    fn bad_input_says_what_is_wrong() {
        assert_eq!(
            escape_path("/a/../b").unwrap_err().to_string(),
            "path \"/a/../b\" is not normalized (it has a '..' component)"
        );
        assert_eq!(
            unescape(r"a\x2").unwrap_err(),
            EscapeError::BadEscape(r"a\x2".into())
        );
        assert_eq!(
            unescape(r"a\xzz").unwrap_err(),
            EscapeError::BadEscape(r"a\xzz".into())
        );
        assert_eq!(
            unescape(r"a\q00").unwrap_err(),
            EscapeError::BadEscape(r"a\q00".into())
        );
        assert_eq!(
            unescape_path("").unwrap_err(),
            EscapeError::NotAPath(String::new())
        );
        assert_eq!(
            escape_into_template("foo.service", "x")
                .unwrap_err()
                .to_string(),
            "\"foo.service\" is not a template name such as foo@.service"
        );
    }
}
