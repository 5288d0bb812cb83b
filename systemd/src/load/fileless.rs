//! Units of a type that needs no file (`TypeRow::needs_file`: a slice),
//! made from the search path's drop-ins for their name alone when no
//! file defines them, as systemd loads such a unit whenever something
//! names it (its `slice_load`): `a-b-c.slice` with nothing on the path
//! but `slice.d/` and `a-.slice.d/` is a slice with their settings, and
//! with none at all a slice with its defaults.
//!
//! A transient unit of such a type has been loaded this way before its
//! properties apply, and systemd 252 then reads its drop-ins once more
//! ([`transient_files`]; its test 15 counts the repeated
//! `Documentation=`).

use super::dir::ReadFile;
use crate::{resolve_unit, Definition, MergedUnit, SearchDir};
use flotilla_units::load::ParsedUnit;
use flotilla_units::spec::UnitType;
use flotilla_units::specifier::SpecifierContext;
use flotilla_units::unit_name::UnitName;

/// Whether a unit named `name` may be loaded with no file: its type's
/// row says it needs none.
pub fn loads_without_file(name: &str) -> bool {
    UnitType::of_systemd_suffix(&UnitName::split(name).suffix).is_some_and(|t| !t.row().needs_file)
}

/// The unit `name` made from its drop-ins on the path `dirs` (read with
/// `read`), when its type needs no file and the path neither defines nor
/// masks it (a file makes it as any unit's does); `None` otherwise. A
/// drop-in that cannot be read is left out.
pub fn without_file(
    dirs: &[SearchDir],
    facts: &SpecifierContext,
    name: &str,
    read: &mut ReadFile<'_>,
) -> Option<ParsedUnit> {
    if !loads_without_file(name)
        || flotilla_units::unit_name::validate_systemd_unit_name(name).is_err()
    {
        return None;
    }
    let r = resolve_unit(dirs, name);
    if r.definition != Definition::NotFound || r.id != name {
        return None;
    }
    let texts: Vec<(String, String)> = r
        .dropins
        .iter()
        .filter_map(|p| {
            super::dir::file_text(p, read(p))
                .ok()
                .map(|t| (p.clone(), t))
        })
        .collect();
    let pairs: Vec<(&str, &str)> = texts
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    let mut parsed = MergedUnit::merge(("", ""), &pairs).translate_with(facts, name);
    // Nothing was read from a file of its own.
    parsed.origin.file = String::new();
    Some(parsed)
}

/// The files a transient unit is read from, in order: its properties
/// (`props`: a unit file's path and text), then its drop-ins, as systemd
/// applies them over its file; for a type that needs no file, the
/// drop-ins also before the properties, since systemd 252 has loaded the
/// unit with them before a `StartTransientUnit` of its name (the
/// settings are read twice: a list such as `Documentation=` then holds
/// the drop-ins' entries twice, until a reload reads the unit once).
pub fn transient_files<'a>(
    name: &str,
    props: (&'a str, &'a str),
    dropins: &[(&'a str, &'a str)],
) -> Vec<(&'a str, &'a str)> {
    let mut out = Vec::with_capacity(dropins.len() * 2 + 1);
    if loads_without_file(name) {
        out.extend_from_slice(dropins);
    }
    out.push(props);
    out.extend_from_slice(dropins);
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;
    use crate::load::FileRead;
    use crate::{Entry, EntryKind, SearchDir};

    fn dir(path: &str, files: &[&str]) -> SearchDir {
        SearchDir {
            path: path.to_string(),
            role: crate::DirRole::of_path(path),
            entries: files
                .iter()
                .map(|f| Entry {
                    path: f.to_string(),
                    kind: EntryKind::File { empty: false },
                })
                .collect(),
        }
        .sorted()
    }

    fn text<'a>(files: &'a [(&'a str, &'a str)]) -> impl FnMut(&str) -> FileRead + 'a {
        move |p: &str| match files.iter().find(|(f, _)| *f == p) {
            Some((_, t)) => FileRead::Bytes(t.as_bytes().to_vec()),
            None => FileRead::Failed("no such file".to_string()),
        }
    }

    #[test]
    fn a_slice_loads_with_no_file_with_its_defaults() {
        let dirs = [dir("/etc/systemd/system", &[])];
        let facts = SpecifierContext::system("");
        let p = without_file(&dirs, &facts, "a-b-c.slice", &mut text(&[])).unwrap();
        let s = p.spec.unwrap();
        assert_eq!(s.kind, UnitType::Slice);
        assert_eq!(s.description.as_deref(), Some("Slice /a/b/c"));
        assert_eq!(
            s.extras.context.resources.slice.as_deref(),
            Some("a-b.slice")
        );
        assert_eq!(s.extras.context.resources.memory_max, None);
        // A service needs its file.
        assert!(without_file(&dirs, &facts, "a.service", &mut text(&[])).is_none());
    }

    /// `slice.d/`, `a-.slice.d/`, `a-b-.slice.d/`, `a-b-c.slice.d/` all
    /// apply, in systemd's order: the most specific last.
    #[test]
    fn a_slice_takes_its_hierarchical_dropins() {
        let files = [
            (
                "/usr/lib/systemd/system/slice.d/o.conf",
                "[Slice]\nMemoryMax=1000\n",
            ),
            (
                "/usr/lib/systemd/system/a-.slice.d/p.conf",
                "[Slice]\nMemoryMax=2000\n",
            ),
            (
                "/usr/lib/systemd/system/a-b-c.slice.d/q.conf",
                "[Unit]\nDescription=mine\n[Slice]\nTasksMax=7\n",
            ),
        ];
        let dirs = [dir(
            "/usr/lib/systemd/system",
            &[
                "slice.d/o.conf",
                "a-.slice.d/p.conf",
                "a-b-c.slice.d/q.conf",
            ],
        )];
        let facts = SpecifierContext::system("");
        let p = without_file(&dirs, &facts, "a-b-c.slice", &mut text(&files)).unwrap();
        assert!(p.diagnostics.is_empty(), "{:?}", p.diagnostics);
        let s = p.spec.unwrap();
        let r = &s.extras.context.resources;
        assert_eq!(
            r.memory_max,
            Some(flotilla_units::context::resources::Amount::Absolute(2000))
        );
        assert_eq!(
            r.tasks_max,
            Some(flotilla_units::context::resources::Amount::Absolute(7))
        );
        assert_eq!(s.description.as_deref(), Some("mine"));
    }

    #[test]
    fn a_slice_reads_its_dropins_twice_when_made_transient() {
        let d = [("d1", "x"), ("d2", "y")];
        assert_eq!(
            transient_files("a-b-c.slice", ("p", "z"), &d),
            [
                ("d1", "x"),
                ("d2", "y"),
                ("p", "z"),
                ("d1", "x"),
                ("d2", "y")
            ]
        );
        assert_eq!(
            transient_files("a-b-c.service", ("p", "z"), &d),
            [("p", "z"), ("d1", "x"), ("d2", "y")]
        );
    }
}
