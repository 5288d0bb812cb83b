//! One directory of the unit search path as the caller listed it: its
//! entries (files, symlinks, subdirectories), its role (systemd's
//! `/etc`, `/run`, vendor, generated, ...) and the paths its symlinks name.
//! What the entries define is `unit_path.rs`'s.

use serde::{Deserialize, Serialize};

/// What a directory entry is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum EntryKind {
    /// A regular file, and whether it is empty (an empty unit file is a mask).
    File {
        /// True for a file of size 0.
        empty: bool,
    },
    /// A directory.
    Dir,
    /// A symbolic link and its target as read (absolute or relative).
    Symlink {
        /// The link's target.
        target: String,
    },
}

/// One entry of a search directory, by its path relative to the directory:
/// `web.service`, `web.service.d/10-x.conf`, `multi-user.target.wants/web.service`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// The path relative to the directory (at most one `/`).
    pub path: String,
    /// What it is.
    pub kind: EntryKind,
}

/// What a search directory is for (systemctl's states depend on it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum DirRole {
    /// Administrator configuration (`/etc/systemd/system`, flotilla's units directory).
    Config,
    /// Runtime configuration (`/run/systemd/system`).
    Runtime,
    /// Generated units (`/run/systemd/generator*`).
    Generator,
    /// Transient units (`/run/systemd/transient`).
    Transient,
    /// Units from packages (`/lib/systemd/system`, `/usr/lib/systemd/system`).
    Vendor,
}

impl DirRole {
    /// The role of the directory the file `file` (a path) is in.
    pub fn of_file(file: &str) -> DirRole {
        DirRole::of_path(file.rsplit_once('/').map_or("", |(d, _)| d))
    }

    /// The role of a directory by where it is (its path's end, so that a
    /// copy under another root keeps it): `…/run/systemd/transient`,
    /// `…/run/systemd/generator*`, `…/run/systemd/system`,
    /// `…/lib/systemd/system` (also under `/usr`); any other directory is
    /// configuration.
    pub fn of_path(path: &str) -> DirRole {
        let p = path.trim_end_matches('/');
        let last = p.rsplit('/').next().unwrap_or("");
        if p.ends_with("/run/systemd/transient") {
            DirRole::Transient
        } else if last.starts_with("generator") && p.ends_with(&format!("/run/systemd/{last}")) {
            DirRole::Generator
        } else if p.ends_with("/run/systemd/system") {
            DirRole::Runtime
        } else if p.ends_with("/lib/systemd/system") {
            DirRole::Vendor
        } else {
            DirRole::Config
        }
    }
}

/// The search path's directory of transient units (`/run/systemd/transient`),
/// where the init writes a transient unit's file (flotilla-busd's) and
/// from which it removes it, if the path has one.
pub fn transient_dir<P: AsRef<std::path::Path>>(path: &[P]) -> Option<&P> {
    path.iter()
        .find(|d| DirRole::of_path(&d.as_ref().to_string_lossy()) == DirRole::Transient)
}

/// Whether a subdirectory of a search directory is listed with it:
/// `NAME.wants`, `NAME.requires` and `NAME.d` (drop-ins), not hidden.
pub fn is_listed_subdir(name: &str) -> bool {
    !name.starts_with('.')
        && [".wants", ".requires", ".d"]
            .iter()
            .any(|s| name.len() > s.len() && name.ends_with(s))
}

/// Lists one directory: its entries' names and kinds, in any order.
pub type ListDir<'a, E> = dyn FnMut(&str) -> Result<Vec<(String, EntryKind)>, E> + 'a;

/// A search directory listed: `list` gives the entries of one directory
/// (name and kind, in any order; the caller reads the file system); the
/// top level is listed, and each subdirectory that
/// [`is_listed_subdir`]. Entries come sorted by path. A subdirectory that
/// cannot be listed (gone since, or not readable) is left out, as systemd
/// leaves it out; only the top level's error is returned.
pub fn list_search_dir<E>(path: &str, list: &mut ListDir<'_, E>) -> Result<SearchDir, E> {
    let path = path.trim_end_matches('/').to_string();
    let mut entries = Vec::new();
    for (name, mut kind) in list(&path)? {
        // A link to a directory is that directory (systemd follows a
        // drop-in directory's link, its issue 21920); a link to anything
        // else, or to nothing, stays a link, which no rule reads.
        let maybe_dir = matches!(kind, EntryKind::Dir | EntryKind::Symlink { .. });
        if maybe_dir && is_listed_subdir(&name) {
            if let Ok(sub) = list(&format!("{path}/{name}")) {
                kind = EntryKind::Dir;
                for (n, k) in sub {
                    entries.push(Entry {
                        path: format!("{name}/{n}"),
                        kind: k,
                    });
                }
            }
        }
        entries.push(Entry { path: name, kind });
    }
    Ok(SearchDir {
        role: DirRole::of_path(&path),
        path,
        entries,
    }
    .sorted())
}

/// One directory of the search path with its listing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SearchDir {
    /// The directory's absolute path, without a trailing `/`.
    pub path: String,
    /// Its role.
    pub role: DirRole,
    /// Its entries (the caller lists the top level and the `.wants/`,
    /// `.requires/` and `.d/` subdirectories), sorted by path, as
    /// [`list_search_dir`] and [`SearchDir::sorted`] make them: the lookups
    /// below search them, so that resolving each unit of a path costs no
    /// pass over every entry of it (a reload resolves them all).
    pub entries: Vec<Entry>,
}

impl SearchDir {
    /// The directory with its entries sorted by path (a listing made by
    /// hand, as the tests make theirs).
    pub fn sorted(mut self) -> SearchDir {
        self.entries.sort_by(|a, b| a.path.cmp(&b.path));
        self
    }

    /// The entry at `name`: a top-level one (`NAME.service`) or one of a
    /// subdirectory (`NAME.wants/UNIT`).
    pub(crate) fn entry(&self, name: &str) -> Option<&Entry> {
        let at = self
            .entries
            .binary_search_by(|e| e.path.as_str().cmp(name))
            .ok()?;
        self.entries.get(at)
    }

    /// The entries whose path starts with `prefix` (`NAME.d/`): one run
    /// of the sorted entries, since every path that starts with `prefix`
    /// sorts after `prefix` and before any other path that does not.
    pub(crate) fn starting_with(&self, prefix: &str) -> &[Entry] {
        let start = self.entries.partition_point(|e| e.path.as_str() < prefix);
        let rest = self.entries.get(start..).unwrap_or(&[]);
        let len = rest.partition_point(|e| e.path.starts_with(prefix));
        rest.get(..len).unwrap_or(&[])
    }
}

/// `target` made absolute against `dir`, `.` and `..` folded.
pub(crate) fn absolute(dir: &str, target: &str) -> String {
    let joined = if target.starts_with('/') {
        target.to_string()
    } else {
        format!("{dir}/{target}")
    };
    let mut parts: Vec<&str> = Vec::new();
    for p in joined.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    format!("/{}", parts.join("/"))
}
