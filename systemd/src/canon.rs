//! fleet's canonical serialization of a unit and its hash.

use super::parse::{parse_checked, UnitFile, LINE_MAX};
use flotilla_units::fleet::UnitOption;
use sha1::{Digest, Sha1};

/// fleet's canonical text of a unit (go-systemd's `unit.Serialize` as fleet
/// v1.0 had it): the sections in the order they are first seen, each as a
/// `[Section]` line followed by its options as `Name=Value` lines in their
/// order, one blank line between sections, a newline after the last option.
/// No options give the empty text.
///
/// ```
/// use flotilla_systemd::canonical_text;
/// use flotilla_units::fleet::UnitOption;
/// let o = |s: &str, n: &str, v: &str| UnitOption { section: s.into(), name: n.into(), value: v.into() };
/// let opts = [o("Unit", "Description", "Foo"), o("Service", "ExecStart", "/bin/true"), o("Unit", "Wants", "b.service")];
/// assert_eq!(canonical_text(&opts), "[Unit]\nDescription=Foo\nWants=b.service\n\n[Service]\nExecStart=/bin/true\n");
/// ```
pub fn canonical_text(options: &[UnitOption]) -> String {
    let mut sections: Vec<(&str, Vec<&UnitOption>)> = Vec::new();
    for opt in options {
        match sections.iter_mut().find(|(s, _)| *s == opt.section) {
            Some((_, opts)) => opts.push(opt),
            None => sections.push((&opt.section, vec![opt])),
        }
    }
    let mut out = String::new();
    for (i, (section, opts)) in sections.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push('[');
        out.push_str(section);
        out.push_str("]\n");
        for opt in opts {
            out.push_str(&opt.name);
            out.push('=');
            out.push_str(&opt.value);
            out.push('\n');
        }
    }
    out
}

/// fleet's unit hash: the lowercase hex SHA1 of [`canonical_text`].
/// Comments, blank lines and spacing in the file do not change it; the
/// order of options within a section and of sections does.
///
/// ```
/// use flotilla_systemd::{parse, unit_hash};
/// let u = parse("[Service]\nExecStart=/bin/sleep 100\n");
/// assert_eq!(unit_hash(&u.options), "1c6fb6f3684bafb0c173d8b8b957ceff031180c1");
/// ```
pub fn unit_hash(options: &[UnitOption]) -> String {
    let digest = Sha1::digest(canonical_text(options).as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// Checks an option list the way fleet's API did before accepting a unit
/// (it serialized the options and parsed the text again): a canonical line
/// of [`LINE_MAX`] bytes or more, a section name with `]` or a line break,
/// and an option name with a line break are refused, as fleet refused them.
/// The error is a message for a 400 answer.
pub fn check_options(options: &[UnitOption]) -> Result<(), String> {
    for opt in options {
        if opt.section.contains(['\n', '\r']) || opt.section.contains(']') {
            return Err(format!("invalid section name {:?}", opt.section));
        }
        if opt.name.contains(['\n', '\r']) {
            return Err("unexpected newline encountered while parsing option name".to_string());
        }
    }
    let text = canonical_text(options);
    if text.split('\n').any(|l| l.len() >= LINE_MAX) {
        return Err(format!("line too long (max {LINE_MAX} bytes)"));
    }
    let (_, diags) = parse_checked("", &text);
    match diags.iter().find(|d| d.is_error()) {
        Some(d) => Err(d.message.clone()),
        None => Ok(()),
    }
}

/// A parsed file's canonical text and hash, here beside the rules that make
/// them (the parser knows nothing of them).
impl UnitFile {
    /// fleet's canonical text of these options ([`canonical_text`]).
    pub fn canonical_text(&self) -> String {
        canonical_text(&self.options)
    }

    /// fleet's unit hash of these options ([`unit_hash`]).
    pub fn hash(&self) -> String {
        unit_hash(&self.options)
    }
}
