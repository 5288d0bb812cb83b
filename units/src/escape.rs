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
