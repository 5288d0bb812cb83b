//! A YAML unit file with its drop-ins (`NAME.d/*.yaml`, in the order the
//! search path gives them): each key a drop-in sets replaces the unit
//! file's (and a later drop-in's replaces an earlier one's), whole: a list
//! or a mapping given in a drop-in is the new list or mapping. The unit is
//! then checked as one file, and every problem is reported in the file and
//! at the line it is about ([`Joined`]).

use super::unit::{finish, Unit, UNIT_KEYS};
use super::yaml::{self, known_entries, Entry, Node, Sink, Value};
use super::{parse_yaml, ParsedUnit};
use crate::diag::{Diagnostic, Joined};
use crate::keys::NAME_ALIAS;
use crate::spec::Origin;

/// Parses the unit file `file` (`text`) with its drop-ins, given as
/// `(path, text)`. Without drop-ins this is [`parse_yaml`].
///
/// ```
/// use flotilla_units::load::parse_yaml_with_dropins;
/// let p = parse_yaml_with_dropins(
///     "/etc/init/units/web.yaml",
///     "unit: web\nexec-start: /bin/web\nenvironment: {A: '1'}\n",
///     &[("/etc/init/units/web.d/env.yaml", "environment: {B: '2'}\n")],
/// );
/// let spec = p.spec.unwrap();
/// assert_eq!(spec.extras.environment.len(), 1, "the mapping is replaced whole");
/// ```
pub fn parse_yaml_with_dropins(file: &str, text: &str, dropins: &[(&str, &str)]) -> ParsedUnit {
    if dropins.is_empty() {
        return parse_yaml(file, text);
    }
    let mut joined = Joined::default();
    // Problems found in one file's own numbering (YAML syntax, unknown or
    // repeated keys): already in their file.
    let mut own: Vec<Diagnostic> = Vec::new();
    let mut roots: Vec<Node> = Vec::new();
    for (i, &(path, t)) in std::iter::once(&(file, text)).chain(dropins).enumerate() {
        let base = joined.push(path, t);
        let mut root = match yaml::parse(path, t) {
            Ok(Some(root)) => root,
            // An empty drop-in overrides nothing.
            Ok(None) if i > 0 => continue,
            Ok(None) | Err(_) if i == 0 => return with_dropin_problems(file, text, dropins),
            Ok(None) => continue,
            Err(d) => {
                own.push(d);
                continue;
            }
        };
        let Value::Map(entries) = &root.value else {
            if i == 0 {
                return with_dropin_problems(file, text, dropins);
            }
            own.push(Diagnostic::error(
                path,
                root.pos,
                format!(
                    "a drop-in must be a YAML mapping of the keys it overrides, found {}",
                    root.kind()
                ),
            ));
            continue;
        };
        let mut sink = Sink::new(path);
        known_entries(entries, &UNIT_KEYS, "key", &mut sink);
        own.extend(sink.into_sorted());
        root.shift_lines(base);
        roots.push(root);
    }
    let mut merged: Vec<Entry<'_>> = Vec::new();
    let mut sink = Sink::new(file);
    let mut quiet = Sink::new(file);
    for (i, root) in roots.iter().enumerate() {
        let Value::Map(entries) = &root.value else {
            continue;
        };
        for e in known_entries(entries, &UNIT_KEYS, "key", &mut quiet) {
            let renames = e.key == "unit" || e.key == NAME_ALIAS;
            if i > 0 && renames {
                sink.error(
                    e.key_pos,
                    format!(
                        "a drop-in cannot rename the unit: `{}` is set by its unit file",
                        e.key
                    ),
                );
                continue;
            }
            match merged.iter_mut().find(|m| m.key == e.key) {
                Some(m) => *m = e,
                None => merged.push(e),
            }
        }
    }
    let start = roots.first().map(|r| r.pos).unwrap_or_default();
    let mut origin = Origin::unplaced(file);
    let spec = Unit::new(file, start, &merged, &mut sink, &mut origin).check();
    let mut parsed = finish(spec, origin, sink);
    parsed.origin.keep_positions_below(joined.base(1));
    let files: Vec<&str> = std::iter::once(file)
        .chain(dropins.iter().map(|d| d.0))
        .collect();
    let index = |d: &Diagnostic| files.iter().position(|f| *f == d.file).unwrap_or(0);
    let mut all: Vec<Diagnostic> = parsed
        .diagnostics
        .drain(..)
        .map(|d| joined.place(d))
        .chain(own)
        .collect();
    all.sort_by_key(|d| (index(d), d.pos));
    if all.iter().any(Diagnostic::is_error) {
        parsed.spec = None;
    }
    parsed.diagnostics = all;
    parsed
}

/// The unit file's own problems (it is not a usable mapping) and the
/// drop-ins' syntax errors: there is no unit to override.
fn with_dropin_problems(file: &str, text: &str, dropins: &[(&str, &str)]) -> ParsedUnit {
    let mut parsed = parse_yaml(file, text);
    parsed.spec = None;
    for (path, t) in dropins {
        if let Err(d) = yaml::parse(path, t) {
            parsed.diagnostics.push(d);
        }
    }
    parsed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(p: &ParsedUnit) -> Vec<String> {
        p.diagnostics.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn a_dropin_replaces_keys_whole() {
        let p = parse_yaml_with_dropins(
            "u/web.yaml",
            "unit: web\nexec-start: /bin/web\ndepends-on: [db, net]\nrestart: always\n",
            &[
                ("u/web.d/10-a.yaml", "exec-start: /bin/web --fast\n"),
                (
                    "u/web.d/20-b.yaml",
                    "depends-on: []\nexec-start: /bin/web --b\n",
                ),
            ],
        );
        assert!(p.diagnostics.is_empty(), "{:?}", shown(&p));
        let s = p.spec.unwrap();
        assert_eq!(s.exec_start.unwrap().argv, ["/bin/web", "--b"]);
        assert!(s.depends_on.is_empty());
        assert_eq!(s.restart, crate::spec::RestartPolicy::Always);
    }

    #[test]
    fn problems_are_reported_in_their_own_file() {
        let p = parse_yaml_with_dropins(
            "u/web.yaml",
            "unit: web\nexec-start: /bin/web\n",
            &[
                ("u/web.d/a.yaml", "# a comment\nrestart: sometimes\n"),
                ("u/web.d/b.yaml", "\n\nbogus: 1\nunit: other\n"),
                ("u/web.d/c.yaml", "exec-start: [\n"),
                ("u/web.d/d.yaml", "- a list\n"),
            ],
        );
        assert!(p.spec.is_none());
        let d = shown(&p);
        assert!(d[0].starts_with("u/web.d/a.yaml:2:10: "), "{d:?}");
        assert_eq!(d[1], "u/web.d/b.yaml:3:1: unknown key `bogus`");
        assert_eq!(
            d[2],
            "u/web.d/b.yaml:4:1: a drop-in cannot rename the unit: `unit` is set by its unit file"
        );
        assert!(d[3].starts_with("u/web.d/c.yaml:"), "{d:?}");
        assert_eq!(
            d[4],
            "u/web.d/d.yaml:1:1: a drop-in must be a YAML mapping of the keys it overrides, found a list"
        );
        assert_eq!(d.len(), 5, "{d:?}");
    }

    #[test]
    fn a_broken_unit_file_is_reported_as_without_dropins() {
        let p = parse_yaml_with_dropins("u/x.yaml", "", &[("u/x.d/a.yaml", "restart: no\n")]);
        assert!(p.spec.is_none());
        assert!(shown(&p)[0].starts_with("u/x.yaml:1:1: the file is empty"));
    }
}
