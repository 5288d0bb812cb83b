//! The fake's files, directories, links and owners as the walk of
//! [`flotilla_units::chase`] sees them ([`super::super::Sys::read_file_chased`]):
//! a path is a link if a test made it one, a file if it has contents, a
//! directory if a test made it one or anything lies below it; its owner
//! is the one a test set, else root.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use flotilla_units::chase::{self, Kind, Node, Tree, Unsafe};

use super::State;
use crate::sys::{Errno, Os, SysError};

struct Fake<'a>(&'a State);

impl Fake<'_> {
    fn node(&self, p: PathBuf) -> Result<Node<PathBuf>, Errno> {
        let st = self.0;
        let kind = if st.links.contains_key(&p) {
            Kind::Link
        } else if st.files.contains_key(&p) {
            Kind::Other
        } else if p == Path::new("/")
            || st.dirs.contains(&p)
            || st
                .files
                .keys()
                .chain(st.links.keys())
                .any(|f| f.starts_with(&p))
        {
            Kind::Dir
        } else {
            return Err(Errno::ENOENT);
        };
        let uid = st.owners.get(&p).map_or(0, |o| o.uid);
        Ok(Node {
            handle: p,
            uid,
            kind,
        })
    }
}

impl Tree for Fake<'_> {
    type Handle = PathBuf;
    type Error = Errno;
    fn root(&mut self) -> Result<Node<PathBuf>, Errno> {
        self.node(PathBuf::from("/"))
    }
    fn child(&mut self, dir: &PathBuf, name: &OsString) -> Result<Node<PathBuf>, Errno> {
        self.node(dir.join(name))
    }
    fn read_link(&mut self, dir: &PathBuf, name: &OsString) -> Result<PathBuf, Errno> {
        self.0
            .links
            .get(&dir.join(name))
            .cloned()
            .ok_or(Errno::EINVAL)
    }
}

/// Where `path` leads in the fake, its owner and the first unsafe step.
pub(super) fn chase(st: &State, path: &Path) -> Result<(PathBuf, u32, Option<Unsafe>), SysError> {
    let chased = chase::chase(&mut Fake(st), path).map_err(|e| SysError::Read {
        path: path.to_owned(),
        errno: Os(crate::sys::chase::errno(e)),
    })?;
    Ok((chased.path, chased.node.uid, chased.unsafe_step))
}

/// The entries of directory `dir` ([`super::super::Sys::list_dir`]): each
/// file, link and directory right below it, a deeper file making its
/// first component a directory.
pub(super) fn list_dir(
    st: &State,
    dir: &Path,
) -> Result<Vec<(OsString, flotilla_systemd::EntryKind)>, SysError> {
    use flotilla_systemd::EntryKind;
    let mut out: std::collections::BTreeMap<OsString, EntryKind> = Default::default();
    let all = st
        .files
        .iter()
        .map(|(p, b)| {
            (
                p,
                EntryKind::File {
                    empty: b.is_empty(),
                },
            )
        })
        .chain(st.dirs.iter().map(|p| (p, EntryKind::Dir)))
        .chain(st.links.iter().map(|(p, t)| {
            let target = t.to_string_lossy().into_owned();
            (p, EntryKind::Symlink { target })
        }));
    for (path, kind) in all {
        let Ok(rest) = path.strip_prefix(dir) else {
            continue;
        };
        let mut parts = rest.components();
        let Some(first) = parts.next() else {
            continue;
        };
        // A file deeper down makes its first component a directory.
        let kind = if parts.next().is_some() {
            EntryKind::Dir
        } else {
            kind
        };
        out.insert(first.as_os_str().to_owned(), kind);
    }
    if out.is_empty() && !st.dirs.contains(dir) {
        return Err(SysError::File {
            op: "read directory",
            path: dir.to_owned(),
            errno: Os(Errno::ENOENT),
        });
    }
    Ok(out.into_iter().collect())
}

/// The contents of file `path`, if it has at most `max` bytes
/// ([`super::super::Sys::read_file_limited`]).
pub(super) fn read_limited(st: &State, path: &Path, max: usize) -> Result<Vec<u8>, SysError> {
    match st.files.get(path) {
        None => Err(SysError::Read {
            path: path.to_owned(),
            errno: Os(Errno::ENOENT),
        }),
        Some(data) if data.len() > max => Err(SysError::TooLarge {
            path: path.to_owned(),
            max,
        }),
        Some(data) => Ok(data.clone()),
    }
}
