//! `RuntimeDirectory=`, `StateDirectory=`, `CacheDirectory=`,
//! `LogsDirectory=`, `ConfigurationDirectory=`, their `…Mode=` keys and
//! `RuntimeDirectoryPreserve=`: the directories made for a service before
//! it starts.

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
}

fn default_mode() -> u32 {
    0o755
}

impl Default for DirSet {
    fn default() -> DirSet {
        DirSet {
            names: Vec::new(),
            mode: default_mode(),
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

    /// Every directory asked for: kind, full path and mode, in key order.
    pub fn paths(&self) -> Vec<(DirKind, PathBuf, u32)> {
        DirKind::ALL
            .iter()
            .flat_map(|&k| {
                let set = self.get(k);
                set.names
                    .iter()
                    .map(move |n| (k, k.base().join(n), set.mode))
            })
            .collect()
    }
}

/// A directory name: relative, normal, without `..`.
pub fn parse_dir_name(word: &str) -> Result<PathBuf, String> {
    if word.contains(':') {
        return Err(format!(
            "`{word}`: the `SOURCE:LINK` form is not supported (give the directory alone)"
        ));
    }
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
        return Ok(());
    }
    for w in words(value)? {
        let name = parse_dir_name(&w)?;
        if !set.names.contains(&name) {
            set.names.push(name);
        }
    }
    Ok(())
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
            assign_dirs(&mut s, "a:b").unwrap_err(),
            "`a:b`: the `SOURCE:LINK` form is not supported (give the directory alone)"
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
        assert!(!DirKind::Configuration.owned_and_writable());
        assert_eq!(DirKind::Logs.env_var(), "LOGS_DIRECTORY");
    }
}
