//! The unit search path (systemd.unit(5), "Unit File Load Path"): from a
//! listing of each directory that the caller reads, which file defines a
//! unit name, what it hides, its aliases and masks, its drop-in files in
//! systemd's order, its template, and the `Wants=`/`Requires=` edges of
//! `NAME.wants/` and `NAME.requires/` directories. An earlier directory
//! hides the same name in a later one.

use crate::search_dir::{absolute, Entry, EntryKind, SearchDir};
use flotilla_units::unit_name::UnitName;
use std::collections::BTreeSet;

/// How a unit name is defined.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Definition {
    /// By a file (for an instance: its template's file).
    File(String),
    /// Masked: a symlink to `/dev/null` or an empty file (its path).
    Masked(String),
    /// Not found anywhere on the path.
    NotFound,
}

/// Everything the search path says about one unit name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedUnit {
    /// The name asked for.
    pub name: String,
    /// The name it resolves to (itself, or the unit an alias points to).
    pub id: String,
    /// How it is defined.
    pub definition: Definition,
    /// The template whose file defines it, for an instance without a file
    /// of its own (`getty@.service` for `getty@tty1.service`).
    pub template: Option<String>,
    /// Alias links followed from `name` to `id` (their paths).
    pub via: Vec<String>,
    /// Other names that are symlinks to `id` (its aliases), sorted.
    pub aliases: Vec<String>,
    /// Paths of the same name in later directories, hidden by the definition.
    pub hides: Vec<String>,
    /// Drop-in files to apply, in the order they apply.
    pub dropins: Vec<String>,
    /// Units wanted through `NAME.wants/`, sorted.
    pub wants: Vec<String>,
    /// Units required through `NAME.requires/`, sorted.
    pub requires: Vec<String>,
}

fn basename(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// What one entry of a name says.
enum Found {
    File(String),
    Masked(String),
    Alias(String, String),
}

fn classify(dir: &SearchDir, e: &Entry, name: &str) -> Option<Found> {
    let path = format!("{}/{}", dir.path, e.path);
    match &e.kind {
        EntryKind::Dir => None,
        EntryKind::File { empty: true } => Some(Found::Masked(path)),
        EntryKind::File { empty: false } => Some(Found::File(path)),
        EntryKind::Symlink { target } => {
            let t = absolute(&dir.path, target);
            if t == "/dev/null" {
                Some(Found::Masked(path))
            } else if basename(&t) == name {
                // A link to a file of the same name: that file defines it.
                Some(Found::File(t))
            } else if UnitName::split(basename(&t)).suffix != UnitName::split(name).suffix {
                // A link to a file named as another type (`a.service` to
                // `/a@.scope`): no alias (an alias keeps its type), the
                // file linked defines it, as systemd loads a linked unit
                // file whatever its name.
                Some(Found::File(t))
            } else {
                Some(Found::Alias(basename(&t).to_string(), path))
            }
        }
    }
}

/// Where a name's chain of links ends ([`follow`]).
struct Followed {
    id: String,
    definition: Definition,
    template: Option<String>,
    via: Vec<String>,
    hides: Vec<String>,
}

/// `template` (`name@.TYPE`) with the instance `instance`.
fn with_instance(template: &str, instance: &str) -> String {
    let n = UnitName::split(template);
    format!("{}@{instance}.{}", n.prefix, n.suffix)
}

/// Follows `name`'s links to the unit they end at (systemd's
/// `unit_ids_map_get`): an alias to its unit; an instance without an entry
/// to its template's file, and to the instance of the template that one
/// is an alias of (`bar-alias@0.service`, with `bar-alias@.service` a link
/// to `bar@.service`, is `bar@0.service`); an instance linked to a
/// template (`bar-alias@2.service` to `yup@.service`) to that template's
/// instance (`yup@2.service`).
fn follow(dirs: &[SearchDir], name: &str) -> Followed {
    let mut f = Followed {
        id: name.to_string(),
        definition: Definition::NotFound,
        template: None,
        via: Vec::new(),
        hides: Vec::new(),
    };
    // Follow aliases (a bounded chain: systemd refuses loops too).
    for _ in 0..16 {
        let mut found = None;
        for d in dirs {
            if let Some(e) = d.entry(&f.id) {
                if found.is_none() {
                    found = classify(d, e, &f.id);
                } else if !matches!(e.kind, EntryKind::Dir) {
                    f.hides.push(format!("{}/{}", d.path, e.path));
                }
            }
        }
        let here = UnitName::split(&f.id);
        match found {
            Some(Found::File(p)) => f.definition = Definition::File(p),
            Some(Found::Masked(p)) => f.definition = Definition::Masked(p),
            Some(Found::Alias(to, link)) => {
                f.via.push(link);
                f.hides.clear();
                f.id = if here.is_instance() && UnitName::split(&to).is_template() {
                    with_instance(&to, &here.instance)
                } else {
                    to
                };
                continue;
            }
            None => {
                if let Some(t) = here.template.as_ref().filter(|_| here.is_instance()) {
                    let inner = follow(dirs, t);
                    if inner.id != *t && UnitName::split(&inner.id).is_template() {
                        f.id = with_instance(&inner.id, &here.instance);
                    }
                    f.template = Some(inner.id);
                    f.hides = inner.hides;
                    f.definition = inner.definition;
                }
            }
        }
        break;
    }
    f
}

/// Resolves `name` on the search path `dirs` (highest priority first).
pub fn resolve(dirs: &[SearchDir], name: &str) -> ResolvedUnit {
    let f = follow(dirs, name);
    let id = f.id;
    let aliases = names_of(dirs, &id);
    // The `.wants/` and `.requires/` of every name, and of each
    // instance's template.
    let mut names = vec![id.clone()];
    names.extend(aliases.iter().cloned());
    for n in [id.as_str()]
        .into_iter()
        .chain(aliases.iter().map(String::as_str))
    {
        let n = UnitName::split(n);
        if n.is_instance() {
            names.extend(n.template);
        }
    }
    ResolvedUnit {
        name: name.to_string(),
        dropins: dropins(dirs, &id, &aliases),
        wants: edges(dirs, &names, "wants"),
        requires: edges(dirs, &names, "requires"),
        id,
        definition: f.definition,
        template: f.template,
        via: f.via,
        aliases,
        hides: f.hides,
    }
}

/// The other names of the unit `id` (systemd's `unit_file_find_fragment`):
/// the links to it, and for an instance, the instances of its template's
/// aliases (`bar-alias@1.service` of `bar@1.service` when
/// `bar-alias@.service` links to `bar@.service`), unless that name has
/// an entry of its own that ends elsewhere, and the links of its instance
/// to its template; sorted.
fn names_of(dirs: &[SearchDir], id: &str) -> Vec<String> {
    let mut out: BTreeSet<String> = aliases_of(dirs, id).into_iter().collect();
    let n = UnitName::split(id);
    if let Some(t) = n.template.as_ref().filter(|_| n.is_instance()) {
        for a in aliases_of(dirs, t) {
            let inst = with_instance(&a, &n.instance);
            if inst != id && follow(dirs, &inst).id == id {
                out.insert(inst);
            }
        }
        // Instances of that instance linked to its template
        // (`bar-alias@2.service` to `yup@.service`, of `yup@2.service`).
        for d in dirs {
            for e in &d.entries {
                let linked =
                    matches!(&e.kind, EntryKind::Symlink { target } if basename(target) == t);
                if linked
                    && !e.path.contains('/')
                    && UnitName::split(&e.path).instance == n.instance
                    && follow(dirs, &e.path).id == id
                {
                    out.insert(e.path.clone());
                }
            }
        }
    }
    out.into_iter().collect()
}

/// Names whose winning entry is a symlink to `id` (under another name).
/// Called for every unit loaded: only a top-level link whose target may
/// end in `id` is looked at further (its target made absolute, and no
/// earlier directory holding the name), so that a unit costs a pass over
/// the listings without an allocation per entry.
fn aliases_of(dirs: &[SearchDir], id: &str) -> Vec<String> {
    let mut out = BTreeSet::new();
    for (i, d) in dirs.iter().enumerate() {
        for e in &d.entries {
            let EntryKind::Symlink { target } = &e.kind else {
                continue;
            };
            // `.` and `..` at the end fold away: the name is known only
            // once the target is made absolute. Most links end in another
            // name: told by their end alone.
            if !(target.ends_with(id) || target.ends_with('/') || target.ends_with('.')) {
                continue;
            }
            let last = basename(target);
            let maybe = last == id || last.is_empty() || last == "." || last == "..";
            if !maybe || e.path.contains('/') || e.path == id {
                continue;
            }
            // An instance linked to a template is that template's
            // instance, no alias of the template (systemd's name map).
            if UnitName::split(id).is_template() && UnitName::split(&e.path).is_instance() {
                continue;
            }
            let hidden = dirs
                .get(..i)
                .unwrap_or(&[])
                .iter()
                .any(|h| h.entry(&e.path).is_some());
            if hidden {
                continue;
            }
            if let Some(Found::Alias(to, _)) = classify(d, e, &e.path) {
                if to == id {
                    out.insert(e.path.clone());
                }
            }
        }
    }
    out.into_iter().collect()
}

/// The drop-in directories of a name in systemd's order within one search
/// directory: the name's own, its template's, then its dash prefixes
/// longest first (`foo-bar-.service.d`, `foo-.service.d`), then the type's
/// (`service.d`).
pub fn dropin_dir_names(name: &str) -> Vec<String> {
    let n = UnitName::split(name);
    let mut out = vec![format!("{name}.d")];
    if n.is_instance() {
        if let Some(t) = &n.template {
            out.push(format!("{t}.d"));
        }
    }
    let stem = if n.template.is_some() {
        &n.prefix
    } else {
        &n.name
    };
    let mut cut = stem.len();
    while let Some(i) = stem[..cut].rfind('-') {
        out.push(format!("{}-.{}.d", &stem[..i], n.suffix));
        cut = i;
    }
    if !n.suffix.is_empty() {
        out.push(format!("{}.d", n.suffix));
    }
    out
}

/// The drop-in files (`*.conf`) of a unit and its aliases across the
/// path, in the directories of [`dropin_dir_names`].
fn dropins(dirs: &[SearchDir], id: &str, aliases: &[String]) -> Vec<String> {
    let subdirs: Vec<String> = std::iter::once(id)
        .chain(aliases.iter().map(String::as_str))
        .flat_map(dropin_dir_names)
        .collect();
    collect_dropins(dirs, &subdirs, |f| f.ends_with(".conf"))
}

/// The drop-in files of a YAML unit across the path: `NAME.d/*.yaml` (and
/// `*.yml`), by systemd's rules.
pub fn yaml_dropins(dirs: &[SearchDir], name: &str) -> Vec<String> {
    collect_dropins(dirs, &[format!("{name}.d")], |f| {
        f.ends_with(".yaml") || f.ends_with(".yml")
    })
}

/// The files of the drop-in directories `subdirs` (most specific first)
/// across the path whose names pass `is_dropin`: a file name seen first
/// (earlier search directory, then more specific drop-in directory) hides
/// the same file name later; the result is ordered by file name. Masked
/// drop-ins (empty, or a link to `/dev/null`) hide their name and are not
/// returned.
fn collect_dropins(
    dirs: &[SearchDir],
    subdirs: &[String],
    is_dropin: impl Fn(&str) -> bool,
) -> Vec<String> {
    let mut by_name: std::collections::BTreeMap<String, Option<String>> = Default::default();
    let prefixes: Vec<String> = subdirs.iter().map(|s| format!("{s}/")).collect();
    for d in dirs {
        for prefix in &prefixes {
            for e in d.starting_with(prefix) {
                let Some(file) = e.path.strip_prefix(prefix.as_str()) else {
                    continue;
                };
                if !is_dropin(file) || file.starts_with('.') || by_name.contains_key(file) {
                    continue;
                }
                let path = format!("{}/{}", d.path, e.path);
                let real = match &e.kind {
                    EntryKind::File { empty: false } => Some(path),
                    EntryKind::Symlink { target } if absolute(&d.path, target) != "/dev/null" => {
                        Some(path)
                    }
                    EntryKind::Dir => continue,
                    _ => None,
                };
                by_name.insert(file.to_string(), real);
            }
        }
    }
    by_name.into_values().flatten().collect()
}

/// The entries of `NAME.wants/` (or `.requires/`) for any of `names`. An
/// entry's name seen first (earlier search directory) hides the same name
/// later, and one that is a link to `/dev/null` masks it: no edge (as
/// systemd's drop-in directories merge by file name).
fn edges(dirs: &[SearchDir], names: &[String], kind: &str) -> Vec<String> {
    let mut seen: std::collections::BTreeMap<String, bool> = Default::default();
    for d in dirs {
        for n in names {
            let prefix = format!("{n}.{kind}/");
            for e in d.starting_with(&prefix) {
                if let Some(unit) = e.path.strip_prefix(&prefix) {
                    // A flotilla unit's name (`web`) or a systemd unit's.
                    if matches!(e.kind, EntryKind::Dir)
                        || !flotilla_units::spec::valid_systemd_name(unit)
                    {
                        continue;
                    }
                    let masked = matches!(&e.kind, EntryKind::Symlink { target }
                        if absolute(&d.path, target) == "/dev/null");
                    seen.entry(unit.to_string()).or_insert(!masked);
                }
            }
        }
    }
    seen.into_iter()
        .filter(|(_, on)| *on)
        .map(|(u, _)| u)
        .collect()
}

/// Every unit name the path defines (top-level entries that are unit
/// names), sorted.
pub fn unit_names(dirs: &[SearchDir]) -> Vec<String> {
    let mut out = BTreeSet::new();
    for d in dirs {
        for e in &d.entries {
            if !e.path.contains('/')
                && !matches!(e.kind, EntryKind::Dir)
                && flotilla_units::unit_name::validate_systemd_unit_name(&e.path).is_ok()
            {
                out.insert(e.path.clone());
            }
        }
    }
    out.into_iter().collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::search_dir::{list_search_dir, DirRole};

    /// A non-empty regular file.
    pub(crate) fn f(path: &str) -> Entry {
        Entry {
            path: path.into(),
            kind: EntryKind::File { empty: false },
        }
    }
    /// A symlink.
    pub(crate) fn l(path: &str, target: &str) -> Entry {
        Entry {
            path: path.into(),
            kind: EntryKind::Symlink {
                target: target.into(),
            },
        }
    }

    fn path() -> Vec<SearchDir> {
        vec![
            SearchDir {
                path: "/etc/systemd/system".into(),
                role: DirRole::Config,
                entries: vec![
                    f("web.service"),
                    l("db.service", "/dev/null"),
                    Entry {
                        path: "cron.service".into(),
                        kind: EntryKind::File { empty: true },
                    },
                    l("www.service", "web.service"),
                    l("linked.service", "/opt/linked@.scope"),
                    l(
                        "multi-user.target.wants/web.service",
                        "/etc/systemd/system/web.service",
                    ),
                    l(
                        "multi-user.target.wants/getty@tty2.service",
                        "/lib/systemd/system/getty@.service",
                    ),
                    f("web.service.d/10-env.conf"),
                    f("service.d/50-all.conf"),
                    l("web.service.d/20-off.conf", "/dev/null"),
                ],
            }
            .sorted(),
            SearchDir {
                path: "/lib/systemd/system".into(),
                role: DirRole::Vendor,
                entries: vec![
                    f("web.service"),
                    f("db.service"),
                    f("getty@.service"),
                    f("multi-user.target"),
                    f("getty@.service.d/x.conf"),
                    f("web.service.d/20-off.conf"),
                    f("web.service.d/10-env.conf"),
                    f("web-.service.d/05-prefix.conf"),
                    f("www.service.d/30-alias.conf"),
                    f("getty@.service.wants/helper.service"),
                    f("multi-user.target.requires/db.service"),
                ],
            }
            .sorted(),
        ]
    }

    #[test]
    fn definitions_masks_aliases_and_hiding() {
        let p = path();
        let web = resolve(&p, "web.service");
        assert_eq!(
            web.definition,
            Definition::File("/etc/systemd/system/web.service".into())
        );
        assert_eq!(web.hides, ["/lib/systemd/system/web.service"]);
        assert_eq!(web.aliases, ["www.service"]);
        assert_eq!(
            web.dropins,
            [
                "/etc/systemd/system/web.service.d/10-env.conf",
                "/lib/systemd/system/www.service.d/30-alias.conf",
                "/etc/systemd/system/service.d/50-all.conf",
            ]
        );
        let db = resolve(&p, "db.service");
        assert_eq!(
            db.definition,
            Definition::Masked("/etc/systemd/system/db.service".into())
        );
        assert_eq!(
            resolve(&p, "cron.service").definition,
            Definition::Masked("/etc/systemd/system/cron.service".into())
        );
        let www = resolve(&p, "www.service");
        assert_eq!(www.id, "web.service");
        assert_eq!(www.via, ["/etc/systemd/system/www.service"]);
        assert_eq!(www.definition, web.definition);
        assert_eq!(resolve(&p, "nope.service").definition, Definition::NotFound);
        // A link to a file named as another type: no alias, that file.
        let linked = resolve(&p, "linked.service");
        assert_eq!(linked.id, "linked.service");
        assert_eq!(
            linked.definition,
            Definition::File("/opt/linked@.scope".into())
        );
    }

    #[test]
    fn templates_instances_and_edges() {
        let p = path();
        let g = resolve(&p, "getty@tty2.service");
        assert_eq!(g.template.as_deref(), Some("getty@.service"));
        assert_eq!(
            g.definition,
            Definition::File("/lib/systemd/system/getty@.service".into())
        );
        assert_eq!(
            g.dropins,
            [
                "/etc/systemd/system/service.d/50-all.conf",
                "/lib/systemd/system/getty@.service.d/x.conf"
            ]
        );
        // `web-.service.d` applies to `web-api.service`, not to `web.service`.
        assert_eq!(
            resolve(&p, "web-api.service").dropins,
            [
                "/lib/systemd/system/web-.service.d/05-prefix.conf",
                "/etc/systemd/system/service.d/50-all.conf"
            ]
        );
        assert_eq!(g.wants, ["helper.service"]);
        let t = resolve(&p, "multi-user.target");
        assert_eq!(t.wants, ["getty@tty2.service", "web.service"]);
        assert_eq!(t.requires, ["db.service"]);
        assert_eq!(
            unit_names(&p),
            [
                "cron.service",
                "db.service",
                "getty@.service",
                "linked.service",
                "multi-user.target",
                "web.service",
                "www.service"
            ]
        );
    }

    /// systemd's test 15's templates and their aliases: `bar-alias@.service`
    /// a link to `bar@.service`, instance links to an instance of the same
    /// template (`bar-alias@1`), to another template (`bar-alias@2` to
    /// `yup@.service`) and to another template's instance (`bar-alias@3`
    /// to `yup@3`); `test15-b@inst.service` a link to an instance whose
    /// template alone has a file.
    #[test]
    fn instances_and_the_aliases_of_templates() {
        let d = |e: &str| format!("{e}.requires/x-{e}.device");
        let mut entries = vec![
            f("bar@.service"),
            f("yup@.service"),
            l("bar-alias@.service", "bar@.service"),
            l("bar-alias@1.service", "bar@1.service"),
            l("bar-alias@2.service", "yup@.service"),
            l("bar-alias@3.service", "yup@3.service"),
            f("test15-a@.service"),
            l("test15-b@inst.service", "test15-a@inst.service"),
        ];
        for n in ["bar", "yup", "bar-alias"] {
            for i in ["", "1", "2", "3"] {
                entries.push(f(&d(&format!("{n}@{i}.service"))));
            }
        }
        let p = vec![SearchDir {
            path: "/etc/systemd/system".into(),
            role: DirRole::Config,
            entries,
        }
        .sorted()];
        // (name asked for, the unit, its other names, what it requires)
        let table: &[(&str, &str, &[&str], &[&str])] = &[
            (
                "bar@0.service",
                "bar@0.service",
                &["bar-alias@0.service"],
                &["bar-alias@", "bar@"],
            ),
            (
                "bar-alias@0.service",
                "bar@0.service",
                &["bar-alias@0.service"],
                &["bar-alias@", "bar@"],
            ),
            (
                "bar@1.service",
                "bar@1.service",
                &["bar-alias@1.service"],
                &["bar-alias@", "bar-alias@1", "bar@", "bar@1"],
            ),
            ("bar@2.service", "bar@2.service", &[], &["bar@", "bar@2"]),
            (
                "bar-alias@2.service",
                "yup@2.service",
                &["bar-alias@2.service"],
                &["bar-alias@", "bar-alias@2", "yup@", "yup@2"],
            ),
            ("bar@3.service", "bar@3.service", &[], &["bar@", "bar@3"]),
            (
                "bar-alias@3.service",
                "yup@3.service",
                &["bar-alias@3.service"],
                &["bar-alias@", "bar-alias@3", "yup@", "yup@3"],
            ),
            (
                "test15-a@inst.service",
                "test15-a@inst.service",
                &["test15-b@inst.service"],
                &[],
            ),
            (
                "test15-b@inst.service",
                "test15-a@inst.service",
                &["test15-b@inst.service"],
                &[],
            ),
            ("test15-a@other.service", "test15-a@other.service", &[], &[]),
        ];
        for (name, id, aliases, requires) in table {
            let r = resolve(&p, name);
            assert_eq!(r.id, *id, "{name}");
            assert_eq!(r.aliases, *aliases, "{name}");
            let want: Vec<String> = requires
                .iter()
                .map(|e| format!("x-{e}.service.device"))
                .collect();
            assert_eq!(r.requires, want, "{name}");
            assert!(matches!(r.definition, Definition::File(_)), "{name}");
        }
        assert_eq!(
            resolve(&p, "test15-b@other.service").definition,
            Definition::NotFound
        );
    }

    /// A `.wants/` or `.requires/` entry seen first hides the same name
    /// later, and a link to `/dev/null` masks it (systemd's test 15, its
    /// masked drop-ins): (entries in `/etc`, in `/usr/lib`, what `a`
    /// wants).
    #[test]
    fn a_link_to_dev_null_masks_a_wants_entry_of_its_name() {
        type Links<'a> = &'a [(&'a str, &'a str)];
        let null = "/dev/null";
        let table: &[(Links, Links, &[&str])] = &[
            (&[("b.service", null)], &[], &[]),
            (
                &[("b.service", "../b.service")],
                &[("b.service", null)],
                &["b.service"],
            ),
            (
                &[("b.service", null)],
                &[("b.service", "../b.service")],
                &[],
            ),
            // Another name is another entry.
            (
                &[("b1.service", null)],
                &[
                    ("b1.service", "../b1.service"),
                    ("b2.service", "../b2.service"),
                ],
                &["b2.service"],
            ),
        ];
        for (etc, lib, want) in table {
            let dir = |path: &str, links: &[(&str, &str)]| {
                SearchDir {
                    path: path.into(),
                    role: DirRole::of_path(path),
                    entries: (links.iter())
                        .map(|(n, t)| l(&format!("a.service.wants/{n}"), t))
                        .chain([f("a.service")])
                        .collect(),
                }
                .sorted()
            };
            let p = [
                dir("/etc/systemd/system", etc),
                dir("/usr/lib/systemd/system", lib),
            ];
            assert_eq!(resolve(&p, "a.service").wants, *want, "{etc:?} {lib:?}");
        }
    }

    /// A listed subdirectory that is a link to a directory is listed as
    /// that directory (systemd's test 15, its issue 21920); a link of
    /// such a name to a file or to nothing stays a link, with no entries.
    #[test]
    fn a_link_to_a_drop_in_directory_is_followed() {
        let sym = |t: &str| EntryKind::Symlink { target: t.into() };
        let mut list = |p: &str| -> Result<Vec<(String, EntryKind)>, ()> {
            match p {
                "/etc/systemd/system" => Ok(vec![
                    ("a.service".into(), EntryKind::File { empty: false }),
                    ("a.service.d".into(), sym("/tmp/dir")),
                    ("b.service.d".into(), sym("/tmp/file")),
                    ("c.service.d".into(), sym("/tmp/nothing")),
                ]),
                "/etc/systemd/system/a.service.d" => {
                    Ok(vec![("x.conf".into(), EntryKind::File { empty: false })])
                }
                _ => Err(()),
            }
        };
        let d = list_search_dir("/etc/systemd/system", &mut list).unwrap();
        let paths: Vec<(&str, bool)> = (d.entries.iter())
            .map(|e| (e.path.as_str(), e.kind == EntryKind::Dir))
            .collect();
        assert_eq!(
            paths,
            [
                ("a.service", false),
                ("a.service.d", true),
                ("a.service.d/x.conf", false),
                ("b.service.d", false),
                ("c.service.d", false)
            ]
        );
        assert_eq!(
            resolve(&[d], "a.service").dropins,
            ["/etc/systemd/system/a.service.d/x.conf"]
        );
    }

    #[test]
    fn dropin_directory_order() {
        assert_eq!(
            dropin_dir_names("foo-bar-baz@x.service"),
            [
                "foo-bar-baz@x.service.d",
                "foo-bar-baz@.service.d",
                "foo-bar-.service.d",
                "foo-.service.d",
                "service.d"
            ]
        );
        assert_eq!(dropin_dir_names("a.socket"), ["a.socket.d", "socket.d"]);
        assert_eq!(absolute("/etc/x", "../y/./z"), "/etc/y/z");
    }
}
