//! A `path` unit's settings (systemd.path(5)): which paths it watches and
//! for what. The values are read in systemd's syntax
//! ([`PathSettings::set`]); the init watches them with inotify
//! (`init/src/runtime/watches.rs`) and asks [`PathSpec::matches_now`]'s
//! questions of the file system.

use super::{mode, tristate, TriggerLimit};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::{Component, Path, PathBuf};

/// What a watched path waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PathKind {
    /// `PathExists=`: the path exists.
    Exists,
    /// `PathExistsGlob=`: some path matches the glob.
    ExistsGlob,
    /// `PathChanged=`: the file was written and closed, or its attributes,
    /// or an entry of the directory, changed.
    Changed,
    /// `PathModified=`: as `PathChanged=`, and every write.
    Modified,
    /// `DirectoryNotEmpty=`: the directory has an entry.
    DirectoryNotEmpty,
}

impl PathKind {
    /// The systemd key.
    pub fn key(self) -> &'static str {
        match self {
            PathKind::Exists => "PathExists",
            PathKind::ExistsGlob => "PathExistsGlob",
            PathKind::Changed => "PathChanged",
            PathKind::Modified => "PathModified",
            PathKind::DirectoryNotEmpty => "DirectoryNotEmpty",
        }
    }

    /// Whether the kind is a state that holds or not (checked again when
    /// the triggered unit settles), rather than an event.
    pub fn is_level(self) -> bool {
        matches!(
            self,
            PathKind::Exists | PathKind::ExistsGlob | PathKind::DirectoryNotEmpty
        )
    }
}

/// One watched path.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PathSpec {
    /// What it waits for.
    pub kind: PathKind,
    /// The path (absolute, normalized; a glob for `ExistsGlob`).
    pub path: PathBuf,
}

impl fmt::Display for PathSpec {
    /// `PathExists=/x`, as status shows it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}={}", self.kind.key(), self.path.display())
    }
}

impl PathSpec {
    /// The directories to watch for this spec: the path's own directory
    /// (for a glob, the part before the first wildcard) and each of its
    /// parents up to `/`, nearest first. A change in any of them may make
    /// the path appear, vanish or change.
    pub fn watched_dirs(&self) -> Vec<PathBuf> {
        let base: PathBuf = if self.kind == PathKind::ExistsGlob {
            self.path
                .components()
                .take_while(|c| !c.as_os_str().to_string_lossy().contains(['*', '?', '[']))
                .collect()
        } else {
            self.path.clone()
        };
        let mut out = Vec::new();
        let mut cur = base.as_path();
        if matches!(
            self.kind,
            PathKind::DirectoryNotEmpty | PathKind::Changed | PathKind::Modified
        ) || self.kind == PathKind::ExistsGlob
        {
            out.push(cur.to_path_buf());
        }
        while let Some(parent) = cur.parent() {
            out.push(parent.to_path_buf());
            cur = parent;
        }
        out
    }
}

/// A `[Path]` section (the unit it starts is the unit's `triggers`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "kebab-case")]
pub struct PathSettings {
    /// Every watched path, in order.
    pub paths: Vec<PathSpec>,
    /// `MakeDirectory=`: the watched directories are made when the path
    /// unit starts.
    pub make_directory: bool,
    /// `DirectoryMode=` of the directories made (0755).
    pub directory_mode: u32,
    /// `TriggerLimitIntervalSec=`, `TriggerLimitBurst=`.
    pub trigger_limit: TriggerLimit,
}

impl Default for PathSettings {
    fn default() -> PathSettings {
        PathSettings {
            paths: Vec::new(),
            make_directory: false,
            directory_mode: 0o755,
            trigger_limit: TriggerLimit::PATH,
        }
    }
}

impl PathSettings {
    /// One `[Path]` assignment in systemd's syntax: a path key adds a path
    /// and an empty one removes every path; an empty value resets any other
    /// setting. Returns whether the key is one it reads.
    pub fn set(&mut self, key: &str, value: &str) -> Result<bool, String> {
        let v = value.trim();
        let kind = match key {
            "PathExists" => Some(PathKind::Exists),
            "PathExistsGlob" => Some(PathKind::ExistsGlob),
            "PathChanged" => Some(PathKind::Changed),
            "PathModified" => Some(PathKind::Modified),
            "DirectoryNotEmpty" => Some(PathKind::DirectoryNotEmpty),
            _ => None,
        };
        if let Some(kind) = kind {
            if v.is_empty() {
                self.paths.clear();
            } else {
                self.paths.push(PathSpec {
                    kind,
                    path: normalized(v)?,
                });
            }
            return Ok(true);
        }
        match key {
            "MakeDirectory" => self.make_directory = tristate(v, false)?,
            "DirectoryMode" => self.directory_mode = mode(v, 0o755)?,
            "TriggerLimitIntervalSec" | "TriggerLimitBurst" => {
                self.trigger_limit.set(key, v, TriggerLimit::PATH)?
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// What a path unit needs: a path to watch.
    pub fn check(&self) -> Result<(), String> {
        if self.paths.is_empty() {
            return Err("a path unit needs PathExists=, PathExistsGlob=, PathChanged=, PathModified= or DirectoryNotEmpty=".to_string());
        }
        Ok(())
    }
}

/// An absolute path without `.` or `..` components or doubled slashes.
fn normalized(v: &str) -> Result<PathBuf, String> {
    if !v.starts_with('/') {
        return Err(format!("{v:?} is not an absolute path"));
    }
    let mut out = PathBuf::from("/");
    for c in Path::new(v).components() {
        match c {
            Component::Normal(n) => out.push(n),
            Component::RootDir | Component::CurDir => {}
            Component::ParentDir | Component::Prefix(_) => {
                return Err(format!("{v:?} has a `..` component"))
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_and_what_to_watch() {
        let mut s = PathSettings::default();
        assert!(s.set("PathExists", "/run//x/./y").unwrap());
        assert!(s.set("DirectoryNotEmpty", "/var/spool/q").unwrap());
        assert!(s.set("PathExistsGlob", "/tmp/in/*.job").unwrap());
        assert!(s.set("MakeDirectory", "yes").unwrap());
        assert!(!s.set("Unit", "x.service").unwrap());
        assert_eq!(s.paths[0].path, Path::new("/run/x/y"));
        assert_eq!(s.paths[0].to_string(), "PathExists=/run/x/y");
        let dirs = |i: usize| -> Vec<String> {
            s.paths[i]
                .watched_dirs()
                .iter()
                .map(|p| p.display().to_string())
                .collect()
        };
        assert_eq!(dirs(0), ["/run/x", "/run", "/"]);
        assert_eq!(dirs(1), ["/var/spool/q", "/var/spool", "/var", "/"]);
        assert_eq!(dirs(2), ["/tmp/in", "/tmp", "/"]);
        assert!(s.set("PathChanged", "etc/x").is_err());
        assert!(s.set("PathChanged", "/etc/../x").is_err());
        assert!(s.set("PathExists", "").unwrap());
        assert!(s.check().is_err());
    }
}
