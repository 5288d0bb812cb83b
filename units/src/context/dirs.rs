//! `RuntimeDirectory=`, `StateDirectory=`, `CacheDirectory=`,
//! `LogsDirectory=`, `ConfigurationDirectory=`, their `…Mode=` keys and
//! `RuntimeDirectoryPreserve=`: the directories made for a service before
//! it starts.
//!
//! A word `NAME:LINK` also asks for a link at `LINK` (relative to the same
//! base) to the directory `NAME`, relative as systemd makes it (`LINK`'s
//! own directory to `NAME`); `\:` is a colon inside either. A link whose
//! place the unit's mount namespace covers with a tmpfs
//! (`TemporaryFileSystem=`) is made in that tmpfs only, else on the host
//! before the service starts ([`super::mounts`]).

use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::value::{parse_bool, parse_mode, words};
use super::Key;

/// The five kinds of directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DirKind {
    /// `RuntimeDirectory=`, below `/run`; removed when the service stops.
    Runtime,
    /// `StateDirectory=`, below `/var/lib`.
    State,
    /// `CacheDirectory=`, below `/var/cache`.
    Cache,
    /// `LogsDirectory=`, below `/var/log`.
    Logs,
    /// `ConfigurationDirectory=`, below `/etc`.
    Configuration,
}

impl DirKind {
    /// Every kind.
    pub const ALL: [DirKind; 5] = [
        DirKind::Runtime,
        DirKind::State,
        DirKind::Cache,
        DirKind::Logs,
        DirKind::Configuration,
    ];

    /// Where the directories of this kind go, for a system service.
    pub fn base(self) -> &'static Path {
        Path::new(match self {
            DirKind::Runtime => "/run",
            DirKind::State => "/var/lib",
            DirKind::Cache => "/var/cache",
            DirKind::Logs => "/var/log",
            DirKind::Configuration => "/etc",
        })
    }

    /// The environment variable that lists them for the service
    /// (`RUNTIME_DIRECTORY=/run/foo:/run/bar`).
    pub fn env_var(self) -> &'static str {
        match self {
            DirKind::Runtime => "RUNTIME_DIRECTORY",
            DirKind::State => "STATE_DIRECTORY",
            DirKind::Cache => "CACHE_DIRECTORY",
            DirKind::Logs => "LOGS_DIRECTORY",
            DirKind::Configuration => "CONFIGURATION_DIRECTORY",
        }
    }

    /// The key that lists them (`RuntimeDirectory=` …).
    pub fn key(self) -> Key {
        match self {
            DirKind::Runtime => Key::RuntimeDirectory,
            DirKind::State => Key::StateDirectory,
            DirKind::Cache => Key::CacheDirectory,
            DirKind::Logs => Key::LogsDirectory,
            DirKind::Configuration => Key::ConfigurationDirectory,
        }
    }

    /// Whether the service's user owns them and may write them even under
    /// `ProtectSystem=strict` (every kind but the configuration one).
    pub fn owned_and_writable(self) -> bool {
        self != DirKind::Configuration
    }
}

/// The directories of one kind and their mode.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct DirSet {
    /// Relative to the kind's base, normal (no `.`, `..`, `//`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub names: Vec<PathBuf>,
    /// The mode of the innermost directory of each name.
    #[serde(default = "default_mode")]
    pub mode: u32,
    /// The links of `NAME:LINK` words: the name and the link, both
    /// relative to the kind's base and normal.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub links: Vec<(PathBuf, PathBuf)>,
}

fn default_mode() -> u32 {
    0o755
}

impl Default for DirSet {
    fn default() -> DirSet {
        DirSet {
            names: Vec::new(),
            mode: default_mode(),
            links: Vec::new(),
        }
    }
}

/// `RuntimeDirectoryPreserve=`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Preserve {
    /// Removed whenever the service stops.
    #[default]
    No,
    /// Kept.
    Yes,
    /// Kept across a restart, removed when the service stops for good.
    Restart,
}

/// Every directory key of a service.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(default, rename_all = "kebab-case")]
pub struct Directories {
    /// `RuntimeDirectory=`, `RuntimeDirectoryMode=`.
    #[serde(skip_serializing_if = "is_default")]
    pub runtime: DirSet,
    /// `StateDirectory=`, `StateDirectoryMode=`.
    #[serde(skip_serializing_if = "is_default")]
    pub state: DirSet,
    /// `CacheDirectory=`, `CacheDirectoryMode=`.
    #[serde(skip_serializing_if = "is_default")]
    pub cache: DirSet,
    /// `LogsDirectory=`, `LogsDirectoryMode=`.
    #[serde(skip_serializing_if = "is_default")]
    pub logs: DirSet,
    /// `ConfigurationDirectory=`, `ConfigurationDirectoryMode=`.
    #[serde(skip_serializing_if = "is_default")]
    pub configuration: DirSet,
    /// `RuntimeDirectoryPreserve=`.
    #[serde(skip_serializing_if = "is_default")]
    pub runtime_preserve: Preserve,
    /// The directories of every kind but the configuration one live below
    /// their base's `private/` (mode 0700), each reached by a link where
    /// it would be otherwise: systemd's layout for a `DynamicUser=`
    /// service, whose numbers a later service may get (the 0700 parent
    /// keeps it out of what an earlier one left). Set by the init for a
    /// unit that runs with a dynamic user, by no key.
    #[serde(skip_serializing_if = "is_default")]
    pub private: bool,
}

/// Where one directory of a unit is made ([`Directories::places`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    /// Its kind.
    pub kind: DirKind,
    /// The path the service is told (`STATE_DIRECTORY=`) and uses: the
    /// directory itself, or the link to it.
    pub path: PathBuf,
    /// The mode of the directory.
    pub mode: u32,
    /// Below `private/`: the kind's private root (`/var/lib/private`),
    /// the directory (`/var/lib/private/NAME`) and what the link at
    /// `path` says (`private/NAME`, relative to the link's directory).
    pub private: Option<Private>,
    /// Not below `private/` (and not the configuration kind): where the
    /// directory would be kept if it were (`/var/lib/private/NAME`). A
    /// link at `path` to that directory is what an earlier start with a
    /// dynamic user left; the directory is moved back in its place, as
    /// systemd's `setup_exec_directory` migrates it.
    pub private_copy: Option<PathBuf>,
}

/// A directory kept below its kind's `private/` ([`Place::private`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Private {
    /// `BASE/private`, mode 0700, owned by root.
    pub root: PathBuf,
    /// `BASE/private/NAME`: the directory.
    pub dir: PathBuf,
    /// The link's text: `private/NAME` from the link's own directory
    /// (`../private/a/b` for the name `a/b`); none for a name below
    /// another of its kind's (`aaa/bbb` beside `aaa`), which is reached
    /// through that one's link, as systemd's `only_create` directories.
    pub target: Option<PathBuf>,
}

/// A link of a `NAME:LINK` word ([`Directories::links`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirLink {
    /// The kind whose key asked for it.
    pub kind: DirKind,
    /// Where the link is: `BASE/LINK`.
    pub path: PathBuf,
    /// What it says: `NAME` from the link's own directory
    /// (`../xxx/yyy` for `xxx/yyy:aaa/111`).
    pub target: PathBuf,
}

fn is_default<T: Default + PartialEq>(v: &T) -> bool {
    *v == T::default()
}

impl Directories {
    /// The set of one kind.
    pub fn get(&self, kind: DirKind) -> &DirSet {
        match kind {
            DirKind::Runtime => &self.runtime,
            DirKind::State => &self.state,
            DirKind::Cache => &self.cache,
            DirKind::Logs => &self.logs,
            DirKind::Configuration => &self.configuration,
        }
    }

    /// The set of one kind, to change it.
    pub fn get_mut(&mut self, kind: DirKind) -> &mut DirSet {
        match kind {
            DirKind::Runtime => &mut self.runtime,
            DirKind::State => &mut self.state,
            DirKind::Cache => &mut self.cache,
            DirKind::Logs => &mut self.logs,
            DirKind::Configuration => &mut self.configuration,
        }
    }

    /// Whether no directory is asked for.
    pub fn is_empty(&self) -> bool {
        DirKind::ALL.iter().all(|&k| self.get(k).names.is_empty())
    }

    /// Whether the directories of `kind` live below its `private/`: not
    /// the configuration one, nor a runtime one removed at every stop
    /// (`RuntimeDirectoryPreserve=no`, the default), which no later unit
    /// can find, as systemd's `exec_directory_is_private` says.
    pub fn is_private(&self, kind: DirKind) -> bool {
        self.private
            && match kind {
                DirKind::Configuration => false,
                DirKind::Runtime => self.runtime_preserve != Preserve::No,
                _ => true,
            }
    }

    /// Where each directory asked for is made: by kind in key order, each
    /// kind's names in path order, parents first (`StateDirectory=aaa/bbb
    /// aaa` makes `aaa` first), as systemd's `exec_directory_sort`.
    pub fn places(&self) -> Vec<Place> {
        DirKind::ALL
            .iter()
            .flat_map(|&kind| {
                let set = self.get(kind);
                let private = self.is_private(kind);
                let mut names: Vec<&PathBuf> = set.names.iter().collect();
                names.sort();
                let below_another = move |n: &Path| {
                    set.names
                        .iter()
                        .any(|other| other.as_path() != n && n.starts_with(other))
                };
                names.into_iter().map(move |n| Place {
                    kind,
                    path: kind.base().join(n),
                    mode: set.mode,
                    private_copy: (!private && kind != DirKind::Configuration)
                        .then(|| kind.base().join("private").join(n)),
                    private: private.then(|| {
                        let root = kind.base().join("private");
                        let up = n.components().count().saturating_sub(1);
                        let mut target: PathBuf = std::iter::repeat_n("..", up).collect();
                        target.push("private");
                        target.push(n);
                        Private {
                            dir: root.join(n),
                            root,
                            target: (!below_another(n)).then_some(target),
                        }
                    }),
                })
            })
            .collect()
    }

    /// The links of every `NAME:LINK` word, in key order.
    pub fn links(&self) -> Vec<DirLink> {
        DirKind::ALL
            .iter()
            .flat_map(|&kind| {
                self.get(kind)
                    .links
                    .iter()
                    .map(move |(name, link)| DirLink {
                        kind,
                        path: kind.base().join(link),
                        target: relative_to(link.parent().unwrap_or(Path::new("")), name),
                    })
            })
            .collect()
    }

    /// Every directory asked for: kind, full path and mode, in the order
    /// of [`Directories::places`].
    pub fn paths(&self) -> Vec<(DirKind, PathBuf, u32)> {
        self.places()
            .into_iter()
            .map(|p| (p.kind, p.path, p.mode))
            .collect()
    }
}

/// `to` as a path relative to `from`, both relative to one base.
fn relative_to(from: &Path, to: &Path) -> PathBuf {
    let common = from
        .components()
        .zip(to.components())
        .take_while(|(a, b)| a == b)
        .count();
    let up = from.components().count() - common;
    let mut out: PathBuf = std::iter::repeat_n("..", up).collect();
    out.extend(to.components().skip(common));
    out
}

/// A directory name: relative, normal, without `..`.
pub fn parse_dir_name(word: &str) -> Result<PathBuf, String> {
    if word.starts_with('/') {
        return Err(format!(
            "`{word}` is absolute; give the directory relative to its base (/run, /var/lib, …)"
        ));
    }
    let mut out = PathBuf::new();
    for c in Path::new(word).components() {
        match c {
            Component::Normal(n) => out.push(n),
            Component::CurDir => {}
            _ => return Err(format!("`{word}` contains `..`")),
        }
    }
    if out.as_os_str().is_empty() {
        return Err(format!("`{word}` names no directory"));
    }
    Ok(out)
}

/// Adds the names of one assignment (an empty value clears the list).
pub fn assign_dirs(set: &mut DirSet, value: &str) -> Result<(), String> {
    if value.trim().is_empty() {
        set.names.clear();
        set.links.clear();
        return Ok(());
    }
    for w in words(value)? {
        let (name, link) = split_link(&w);
        let name = parse_dir_name(&name)?;
        if let Some(link) = link {
            let link = parse_dir_name(&link)?;
            if !set.links.contains(&(name.clone(), link.clone())) {
                set.links.push((name.clone(), link));
            }
        }
        if !set.names.contains(&name) {
            set.names.push(name);
        }
    }
    Ok(())
}

/// `NAME` and `LINK` of a `NAME[:LINK]` word: split at its first colon
/// that no backslash escapes, `\:` read as a colon.
fn split_link(word: &str) -> (String, Option<String>) {
    let mut name = String::new();
    let mut link: Option<String> = None;
    let mut chars = word.chars().peekable();
    while let Some(mut c) = chars.next() {
        if c == '\\' && chars.peek() == Some(&':') {
            c = ':';
            chars.next();
        } else if c == ':' && link.is_none() {
            link = Some(String::new());
            continue;
        }
        link.as_mut().unwrap_or(&mut name).push(c);
    }
    (name, link)
}

/// `RuntimeDirectoryPreserve=`: a boolean or `restart`.
pub fn parse_preserve(value: &str) -> Result<Preserve, String> {
    match value.trim() {
        "restart" => Ok(Preserve::Restart),
        v => match parse_bool(v) {
            Ok(true) => Ok(Preserve::Yes),
            Ok(false) => Ok(Preserve::No),
            Err(_) => Err(format!(
                "`{v}` is not a RuntimeDirectoryPreserve= value (write yes, no or restart)"
            )),
        },
    }
}

/// A `…DirectoryMode=` value.
pub fn parse_dir_mode(value: &str) -> Result<u32, String> {
    parse_mode(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// systemd's TEST-34 words: `NAME:LINK`, `\\:` a colon in a name,
    /// links relative from their own directory.
    #[test]
    fn name_colon_link_words_ask_for_links() {
        let mut set = DirSet::default();
        assign_dirs(&mut set, r"zzz:xxx zzz:xxx2 zzz:x\:yz xxx/yyy:aaa/111").unwrap();
        assert_eq!(set.names, [PathBuf::from("zzz"), PathBuf::from("xxx/yyy")]);
        assert_eq!(set.links.len(), 4);
        assert_eq!(set.links[2], ("zzz".into(), "x:yz".into()));
        let dirs = Directories {
            state: set,
            ..Directories::default()
        };
        let shown: Vec<(String, String)> = dirs
            .links()
            .iter()
            .map(|l| (l.path.display().to_string(), l.target.display().to_string()))
            .collect();
        assert_eq!(
            shown,
            [
                ("/var/lib/xxx".to_string(), "zzz".to_string()),
                ("/var/lib/xxx2".into(), "zzz".into()),
                ("/var/lib/x:yz".into(), "zzz".into()),
                ("/var/lib/aaa/111".into(), "../xxx/yyy".into()),
            ]
        );
        assert!(assign_dirs(&mut DirSet::default(), "zzz:/abs").is_err());
        assert!(assign_dirs(&mut DirSet::default(), "zzz:../up").is_err());
    }

    /// With a dynamic user (`private`), every kind but the configuration
    /// one is made below its base's `private/` and linked from its place,
    /// as systemd's `setup_exec_directory` lays it out.
    #[test]
    fn private_places_are_below_private_with_a_relative_link() {
        let mut d = Directories::default();
        assign_dirs(&mut d.runtime, "svc").unwrap();
        assign_dirs(&mut d.state, "svc a/b/c").unwrap();
        assign_dirs(&mut d.configuration, "svc").unwrap();
        d.private = true;
        // Kept across stops: below `private/` too.
        d.runtime_preserve = Preserve::Yes;
        type Row = (PathBuf, Option<(PathBuf, PathBuf, Option<PathBuf>)>);
        let got: Vec<Row> = d
            .places()
            .into_iter()
            .map(|p| {
                let private = p.private.map(|x| (x.root, x.dir, x.target));
                (p.path, private)
            })
            .collect();
        let row = |path: &str, root: &str, dir: &str, target: &str| {
            let private = Some((root.into(), dir.into(), Some(target.into())));
            (PathBuf::from(path), private)
        };
        assert_eq!(
            got,
            [
                row(
                    "/run/svc",
                    "/run/private",
                    "/run/private/svc",
                    "private/svc"
                ),
                // Each kind's names in path order.
                row(
                    "/var/lib/a/b/c",
                    "/var/lib/private",
                    "/var/lib/private/a/b/c",
                    "../../private/a/b/c"
                ),
                row(
                    "/var/lib/svc",
                    "/var/lib/private",
                    "/var/lib/private/svc",
                    "private/svc"
                ),
                (PathBuf::from("/etc/svc"), None),
            ]
        );
        assert!(d.is_private(DirKind::Logs));
        assert!(!d.is_private(DirKind::Configuration));
        // Removed at every stop (the default): in its place, as systemd's
        // (test 20's dynamic user links up from `/run/mainpidsh3`).
        d.runtime_preserve = Preserve::No;
        assert!(!d.is_private(DirKind::Runtime));
        assert_eq!(d.places()[0].path, PathBuf::from("/run/svc"));
        assert_eq!(d.places()[0].private, None);
        d.runtime_preserve = Preserve::Restart;
        assert!(d.is_private(DirKind::Runtime));
    }

    /// systemd's TEST-34 `check-writable` unit: parents first, and a name
    /// below another of its kind's is made in that one's private
    /// directory with no link of its own.
    #[test]
    fn a_name_below_another_is_made_after_it_without_a_link() {
        let mut d = Directories::default();
        assign_dirs(&mut d.state, "waldo aaa/bbb aaa xxx/yyy:aaa/111").unwrap();
        d.private = true;
        let got: Vec<(String, bool)> = d
            .places()
            .into_iter()
            .map(|p| {
                let linked = p.private.and_then(|x| x.target).is_some();
                (p.path.display().to_string(), linked)
            })
            .collect();
        assert_eq!(
            got,
            [
                ("/var/lib/aaa".to_string(), true),
                ("/var/lib/aaa/bbb".into(), false),
                ("/var/lib/waldo".into(), true),
                ("/var/lib/xxx/yyy".into(), true),
            ]
        );
    }

    #[test]
    fn names_are_relative_and_normal() {
        let mut s = DirSet::default();
        assign_dirs(&mut s, "redis  foo/./bar").unwrap();
        assert_eq!(s.names, [PathBuf::from("redis"), PathBuf::from("foo/bar")]);
        assert_eq!(
            assign_dirs(&mut s, "/run/redis").unwrap_err(),
            "`/run/redis` is absolute; give the directory relative to its base (/run, /var/lib, …)"
        );
        assert_eq!(
            assign_dirs(&mut s, "a/../b").unwrap_err(),
            "`a/../b` contains `..`"
        );
        assert_eq!(
            assign_dirs(&mut s, ".").unwrap_err(),
            "`.` names no directory"
        );
        assert_eq!(
            assign_dirs(&mut s, "a:/b").unwrap_err(),
            "`/b` is absolute; give the directory relative to its base (/run, /var/lib, …)"
        );
        assign_dirs(&mut s, "").unwrap();
        assert!(s.names.is_empty());
    }

    #[test]
    fn paths_modes_and_preserve() {
        let mut d = Directories::default();
        assert!(d.is_empty());
        assign_dirs(&mut d.runtime, "redis").unwrap();
        assign_dirs(&mut d.state, "redis").unwrap();
        d.state.mode = parse_dir_mode("0750").unwrap();
        assert_eq!(
            d.paths(),
            [
                (DirKind::Runtime, PathBuf::from("/run/redis"), 0o755),
                (DirKind::State, PathBuf::from("/var/lib/redis"), 0o750),
            ]
        );
        assert_eq!(parse_preserve("restart"), Ok(Preserve::Restart));
        assert_eq!(parse_preserve("yes"), Ok(Preserve::Yes));
        assert_eq!(
            parse_preserve("later").unwrap_err(),
            "`later` is not a RuntimeDirectoryPreserve= value (write yes, no or restart)"
        );
        assert!(parse_dir_mode("999").is_err());
        assert!(d.places().iter().all(|p| p.private.is_none()));
        assert!(!DirKind::Configuration.owned_and_writable());
        assert_eq!(DirKind::Logs.env_var(), "LOGS_DIRECTORY");
    }
}
