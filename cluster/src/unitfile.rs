//! fleet unit files as clusterd needs them: unit-name rules, the canonical
//! text and its SHA1 hash, `[X-Fleet]` value splitting, specifiers and
//! booleans (FLEET-NOTES "Unit files").
//!
//! These follow `flotilla_units::systemd`'s contract; clusterd keeps its own
//! small copy so that the API, the engine and the agent agree on hashes and
//! names byte for byte whatever the translator's state.

use flotilla_units::systemd::UnitOption;
use sha1::{Digest, Sha1};

/// Unit types fleet schedules.
const SUFFIXES: [&str; 13] = [
    "automount",
    "busname",
    "device",
    "mount",
    "path",
    "scope",
    "service",
    "slice",
    "snapshot",
    "socket",
    "swap",
    "target",
    "timer",
];

/// Unit types that may be templates.
const TEMPLATE_SUFFIXES: [&str; 5] = ["path", "service", "socket", "target", "timer"];

/// The longest unit name fleet accepts.
pub const MAX_NAME_LEN: usize = 256;

/// Checks a unit name with fleet's rules.
pub fn validate_unit_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("unit name is empty".into());
    }
    if name.len() > MAX_NAME_LEN {
        return Err(format!(
            "unit name is longer than {MAX_NAME_LEN} characters"
        ));
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || ":_.@-".contains(*c)))
    {
        return Err(format!(
            "unit name {name:?} contains invalid character {c:?}"
        ));
    }
    if name.starts_with('@') {
        return Err(format!("unit name {name:?} starts with '@'"));
    }
    let Some(dot) = name.rfind('.') else {
        return Err(format!("unit name {name:?} has no suffix"));
    };
    let suffix = &name[dot + 1..];
    if suffix.is_empty() {
        return Err(format!("unit name {name:?} ends in a dot"));
    }
    if !SUFFIXES.contains(&suffix) {
        return Err(format!(
            "unit name {name:?} has an unknown suffix {suffix:?}"
        ));
    }
    if name.contains('@') && !TEMPLATE_SUFFIXES.contains(&suffix) {
        return Err(format!(
            "unit name {name:?}: a template or instance cannot have suffix {suffix:?}"
        ));
    }
    if dot == 0 {
        return Err(format!("unit name {name:?} has an empty prefix"));
    }
    Ok(())
}

/// True for a template name, `name@.suffix`.
pub fn is_template(name: &str) -> bool {
    match name.rfind('.') {
        Some(dot) => name[..dot].ends_with('@'),
        None => false,
    }
}

/// For an instance `name@inst.suffix`, its template `name@.suffix`.
pub fn template_of(name: &str) -> Option<String> {
    let at = name.find('@')?;
    let dot = name.rfind('.')?;
    if dot <= at + 1 {
        return None;
    }
    Some(format!("{}@{}", &name[..at], &name[dot..]))
}

/// Whether a name has one of fleet's known suffixes (fleetctl appends
/// `.service` to names that have none).
pub fn has_known_suffix(name: &str) -> bool {
    name.rsplit_once('.')
        .is_some_and(|(_, s)| SUFFIXES.contains(&s))
}

/// The canonical unit file: sections in first-seen order, `[Section]` then
/// `Name=Value` lines, one blank line between sections.
pub fn canonical_text(options: &[UnitOption]) -> String {
    let mut sections: Vec<&str> = Vec::new();
    for o in options {
        if !sections.contains(&o.section.as_str()) {
            sections.push(&o.section);
        }
    }
    let mut out = String::new();
    for (i, s) in sections.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push('[');
        out.push_str(s);
        out.push_str("]\n");
        for o in options.iter().filter(|o| o.section == *s) {
            out.push_str(&o.name);
            out.push('=');
            out.push_str(&o.value);
            out.push('\n');
        }
    }
    out
}

/// The unit hash: hex SHA1 of [`canonical_text`].
pub fn unit_hash(options: &[UnitOption]) -> String {
    let digest = Sha1::digest(canonical_text(options).as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// Parses a unit file with fleet's rules: text before the first section is
/// ignored, `#`/`;` comments, `Name=Value` trimmed, `\` continuation lines
/// (the backslash and newline are kept), repeated keys kept in order.
pub fn parse(text: &str) -> Vec<UnitOption> {
    let mut out = Vec::new();
    let mut section: Option<String> = None;
    let mut lines = text.lines();
    while let Some(raw) = lines.next() {
        let mut line = raw.to_string();
        while line.ends_with('\\') {
            match lines.next() {
                Some(next) => {
                    line.push('\n');
                    line.push_str(next);
                }
                None => break,
            }
        }
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') || t.starts_with(';') {
            continue;
        }
        if t.starts_with('[') && t.ends_with(']') {
            section = Some(t[1..t.len() - 1].to_string());
            continue;
        }
        let Some(sec) = &section else { continue };
        if let Some((k, v)) = t.split_once('=') {
            out.push(UnitOption {
                section: sec.clone(),
                name: k.trim().to_string(),
                value: v.trim().to_string(),
            });
        }
    }
    out
}

/// Splits an `[X-Fleet]` value: into several only if it starts and ends
/// with `"`, on spaces outside quotes (quotes removed).
pub fn fleet_values(value: &str) -> Vec<String> {
    let v = value.trim();
    if !(v.len() >= 2 && v.starts_with('"') && v.ends_with('"')) {
        return vec![v.to_string()];
    }
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    for c in v.chars() {
        match c {
            '"' => quoted = !quoted,
            ' ' if !quoted => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
            c => cur.push(c),
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Expands `%n %N %p %i` (and `%%`) for `unit_name`.
pub fn expand_specifiers(value: &str, unit_name: &str) -> String {
    let stem = unit_name
        .rsplit_once('.')
        .map(|(s, _)| s)
        .unwrap_or(unit_name);
    let (prefix, instance) = match stem.split_once('@') {
        Some((p, i)) => (p, i),
        None => (stem, ""),
    };
    let mut out = String::with_capacity(value.len());
    let mut it = value.chars();
    while let Some(c) = it.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match it.next() {
            Some('n') => out.push_str(unit_name),
            Some('N') => out.push_str(stem),
            Some('p') => out.push_str(prefix),
            Some('i') => out.push_str(instance),
            Some('%') => out.push('%'),
            Some(o) => {
                out.push('%');
                out.push(o);
            }
            None => out.push('%'),
        }
    }
    out
}

/// fleet's booleans: true for `true yes 1 on t` in any case.
pub fn parse_bool(value: &str) -> bool {
    matches!(
        value.trim().to_ascii_lowercase().as_str(),
        "true" | "yes" | "1" | "on" | "t"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opt(s: &str, n: &str, v: &str) -> UnitOption {
        UnitOption {
            section: s.into(),
            name: n.into(),
            value: v.into(),
        }
    }

    #[test]
    fn hash_of_the_fleet_notes_example() {
        let o = [opt("Service", "ExecStart", "/bin/sleep 100")];
        assert_eq!(canonical_text(&o), "[Service]\nExecStart=/bin/sleep 100\n");
        assert_eq!(unit_hash(&o), "1c6fb6f3684bafb0c173d8b8b957ceff031180c1");
    }

    #[test]
    fn canonical_groups_sections_in_first_seen_order() {
        let o = [
            opt("Unit", "A", "1"),
            opt("Service", "B", "2"),
            opt("Unit", "C", "3"),
        ];
        assert_eq!(canonical_text(&o), "[Unit]\nA=1\nC=3\n\n[Service]\nB=2\n");
    }

    #[test]
    fn parse_comments_and_spacing_do_not_change_the_hash() {
        let a = parse("junk\n[Service]\n# c\n ExecStart = /bin/sleep 100 \n; x\n");
        assert_eq!(unit_hash(&a), "1c6fb6f3684bafb0c173d8b8b957ceff031180c1");
        let b = parse("[Service]\nExecStart=a \\\n b\nX=1\nX=2\n");
        assert_eq!(b[0].value, "a \\\n b");
        assert_eq!(b.len(), 3);
    }

    #[test]
    fn names() {
        let ok = [
            "foo.service",
            "a:b_c-d.e.service",
            "foo@.service",
            "foo@1.service",
            "x.mount",
        ];
        for n in ok {
            assert!(validate_unit_name(n).is_ok(), "{n}");
        }
        let long = format!("{}.service", "a".repeat(250));
        let bad = [
            "",
            "foo",
            "foo.",
            "foo.bar",
            "@foo.service",
            "foo@.mount",
            "fo o.service",
            &long,
        ];
        for n in bad {
            assert!(validate_unit_name(n).is_err(), "{n}");
        }
        assert!(is_template("foo@.service"));
        assert!(!is_template("foo@1.service"));
        assert_eq!(
            template_of("foo@1.service").as_deref(),
            Some("foo@.service")
        );
        assert_eq!(template_of("foo@.service"), None);
    }

    #[test]
    fn values_and_specifiers() {
        assert_eq!(fleet_values("a=b c=d"), vec!["a=b c=d"]);
        assert_eq!(fleet_values("\"a=b\" \"c=d\""), vec!["a=b", "c=d"]);
        assert_eq!(fleet_values("\"a=b c\" \"d\""), vec!["a=b c", "d"]);
        let n = "ssh@2.service";
        assert_eq!(
            expand_specifiers("%n|%N|%p|%i|%%|%x", n),
            "ssh@2.service|ssh@2|ssh|2|%|%x"
        );
        assert!(parse_bool("T") && parse_bool("on") && parse_bool("YES") && !parse_bool("no"));
    }
}
