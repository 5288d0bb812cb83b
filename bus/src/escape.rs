//! systemd's object path labels (`bus_label_escape` in systemd's
//! `bus-label.c`): every byte that is not `[A-Za-z0-9]`, and a digit in
//! the first place, becomes `_` and two lower-case hex digits; the empty
//! label is `_`. A unit's object is `/org/freedesktop/systemd1/unit/`
//! and its escaped name (`cron.service` is `cron_2eservice`).

/// The unit objects' parent path.
pub const UNIT_PREFIX: &str = "/org/freedesktop/systemd1/unit/";

/// The jobs' parent path.
pub const JOB_PREFIX: &str = "/org/freedesktop/systemd1/job/";

/// The manager's object.
pub const MANAGER_PATH: &str = "/org/freedesktop/systemd1";

/// Escapes one path label.
pub fn escape(label: &str) -> String {
    if label.is_empty() {
        return "_".to_string();
    }
    let mut out = String::with_capacity(label.len() * 3);
    for (i, b) in label.bytes().enumerate() {
        let plain = b.is_ascii_alphabetic() || (b.is_ascii_digit() && i > 0);
        if plain {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("_{b:02x}"));
        }
    }
    out
}

/// Unescapes one path label; `None` when it is not one `escape` makes.
pub fn unescape(label: &str) -> Option<String> {
    if label == "_" {
        return Some(String::new());
    }
    let bytes = label.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if b == b'_' {
            let hex = label.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else if b.is_ascii_alphanumeric() {
            out.push(b);
            i += 1;
        } else {
            return None;
        }
    }
    String::from_utf8(out).ok()
}

/// A unit's object path.
pub fn unit_path(name: &str) -> String {
    format!("{UNIT_PREFIX}{}", escape(name))
}

/// The unit name of a unit object path; `None` for other paths.
pub fn unit_of_path(path: &str) -> Option<String> {
    unescape(path.strip_prefix(UNIT_PREFIX)?)
}

/// A job's object path.
pub fn job_path(id: u32) -> String {
    format!("{JOB_PREFIX}{id}")
}

/// The job number of a job object path.
pub fn job_of_path(path: &str) -> Option<u32> {
    path.strip_prefix(JOB_PREFIX)?.parse().ok()
}

/// An object path of ours (always valid: made by these functions).
pub fn as_path(p: &str) -> zbus::zvariant::ObjectPath<'_> {
    zbus::zvariant::ObjectPath::try_from(p)
        .unwrap_or_else(|_| zbus::zvariant::ObjectPath::from_static_str_unchecked("/"))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn labels_escape_as_systemd_escapes_them() {
        assert_eq!(escape("cron.service"), "cron_2eservice");
        assert_eq!(escape("ifup@ens3.service"), "ifup_40ens3_2eservice");
        assert_eq!(escape("2x-y"), "_32x_2dy");
        assert_eq!(escape(""), "_");
        assert_eq!(
            unit_path("dbus.socket"),
            "/org/freedesktop/systemd1/unit/dbus_2esocket"
        );
    }

    #[test]
    fn labels_unescape() {
        for name in [
            "cron.service",
            "ifup@ens3.service",
            "2x-y",
            "",
            "a_b",
            "é.service",
        ] {
            assert_eq!(unescape(&escape(name)).as_deref(), Some(name), "{name}");
        }
        assert_eq!(unescape("_2"), None);
        assert_eq!(unescape("a.b"), None);
        assert_eq!(unescape("_zz"), None);
        assert_eq!(
            unit_of_path("/org/freedesktop/systemd1/unit/cron_2eservice").as_deref(),
            Some("cron.service")
        );
        assert_eq!(unit_of_path("/org/freedesktop/systemd1"), None);
        assert_eq!(job_of_path(&job_path(17)), Some(17));
    }
}
