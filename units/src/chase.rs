//! Following a path's symbolic links as systemd's `chase_symlinks()` does
//! with `CHASE_SAFE`, noting the first unsafe transition: a step from a
//! file or directory owned by an unprivileged user to one owned by
//! someone else (root above all). A link an unprivileged user made that
//! points into root's files is such a step, and what it leads to is not
//! to be trusted as if root had written it (a `PIDFile=`'s PID:
//! [`crate::pidfile`], docs/systemd-units.md, "Pidfiles").
//!
//! The walk is pure: the file system is a [`Tree`] that opens one name at
//! a time below a handle it gave (the init's is `openat(2)` with
//! `O_PATH|O_NOFOLLOW` on descriptors, so the walk and the file read at
//! its end are one and the same, with no race between the check and the
//! read; the tests' is a described tree of owners and links). Every step
//! is checked against the node looked at before it, the link itself
//! included, as systemd's; the walk goes on past an unsafe step (systemd
//! retries without the check) and reports where it was.

use std::ffi::OsString;
use std::fmt;
use std::path::{Component, Path, PathBuf};

/// The most links followed in one walk (systemd's `CHASE_SYMLINKS_MAX`).
pub const MAX_LINKS: usize = 32;

/// What a node is, as far as the walk cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A directory: the walk can go on below it.
    Dir,
    /// A symbolic link: its target is walked in its place.
    Link,
    /// Anything else (a regular file, a FIFO, a device …): the end.
    Other,
}

/// One node the tree opened: its handle, owner and kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node<H> {
    /// How the tree finds it again.
    pub handle: H,
    /// Its owner (`st_uid`).
    pub uid: u32,
    /// What it is.
    pub kind: Kind,
}

/// A file system as the walk sees it.
pub trait Tree {
    /// An opened node (a descriptor in the init).
    type Handle;
    /// Why a node could not be opened or read.
    type Error;
    /// The root directory, `/`.
    fn root(&mut self) -> Result<Node<Self::Handle>, Self::Error>;
    /// The entry `name` of directory `dir`, not followed if it is a link.
    fn child(
        &mut self,
        dir: &Self::Handle,
        name: &OsString,
    ) -> Result<Node<Self::Handle>, Self::Error>;
    /// The target of the link `name` in directory `dir`.
    fn read_link(&mut self, dir: &Self::Handle, name: &OsString) -> Result<PathBuf, Self::Error>;
}

/// A step from a node of one owner to a node of another that an
/// unprivileged owner must not lead to (systemd's `unsafe_transition`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unsafe {
    /// The node stepped from (a link, or a directory).
    pub from: PathBuf,
    /// Its owner.
    pub from_uid: u32,
    /// The node stepped to.
    pub to: PathBuf,
    /// Its owner.
    pub to_uid: u32,
}

impl fmt::Display for Unsafe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unsafe path transition {} (uid {}) -> {} (uid {})",
            self.from.display(),
            self.from_uid,
            self.to.display(),
            self.to_uid
        )
    }
}

/// Whether a step from a node owned by `from` to one owned by `to` is
/// unsafe: root may lead anywhere, anyone else only to their own.
pub fn unsafe_step(from: u32, to: u32) -> bool {
    from != 0 && from != to
}

/// Where a walk ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chased<H> {
    /// The node the path names, its links followed.
    pub node: Node<H>,
    /// Its path without links, `.` or `..`.
    pub path: PathBuf,
    /// The first unsafe step on the way, if any.
    pub unsafe_step: Option<Unsafe>,
}

/// Why a walk stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChaseError<E> {
    /// The tree could not open or read a node.
    Tree(E),
    /// More than [`MAX_LINKS`] links (`ELOOP`).
    TooManyLinks,
    /// A link with an empty target (`EINVAL`).
    EmptyLink(PathBuf),
    /// A name below something that is not a directory (`ENOTDIR`).
    NotADirectory(PathBuf),
    /// The path is not absolute: there is no directory to start from.
    Relative,
}

/// One part of what is left to walk.
enum Part {
    Up,
    Name(OsString),
    Root,
}

/// The parts of `path`, in walking order.
fn parts(path: &Path) -> impl DoubleEndedIterator<Item = Part> + '_ {
    path.components().filter_map(|c| match c {
        Component::RootDir => Some(Part::Root),
        Component::ParentDir => Some(Part::Up),
        Component::Normal(n) => Some(Part::Name(n.to_owned())),
        Component::CurDir | Component::Prefix(_) => None,
    })
}

/// The node looked at last, which the next step is checked against.
struct Seen {
    path: PathBuf,
    uid: u32,
}

/// Walks the absolute `path` in `tree`, following every link (the last
/// one too), and returns the node it names with the first unsafe step.
pub fn chase<T: Tree>(
    tree: &mut T,
    path: &Path,
) -> Result<Chased<T::Handle>, ChaseError<T::Error>> {
    if !path.is_absolute() {
        return Err(ChaseError::Relative);
    }
    let root = tree.root().map_err(ChaseError::Tree)?;
    let mut seen = Seen {
        path: PathBuf::from("/"),
        uid: root.uid,
    };
    // The directories from the root down to where the walk is, with
    // their paths: `..` goes back one, as the kernel's does.
    let mut dirs: Vec<(PathBuf, Node<T::Handle>)> = vec![(PathBuf::from("/"), root)];
    // A node that is not a directory, where the walk must end.
    let mut last: Option<(PathBuf, Node<T::Handle>)> = None;
    // What is left, last part first (a link's target is pushed on top).
    let mut todo: Vec<Part> = parts(path).rev().collect();
    let mut first_unsafe: Option<Unsafe> = None;
    let mut links = 0usize;
    let check = |seen: &Seen, to: &Path, to_uid: u32, found: &mut Option<Unsafe>| {
        if found.is_none() && unsafe_step(seen.uid, to_uid) {
            *found = Some(Unsafe {
                from: seen.path.clone(),
                from_uid: seen.uid,
                to: to.to_owned(),
                to_uid,
            });
        }
    };
    while let Some(part) = todo.pop() {
        if let Some((p, _)) = &last {
            return Err(ChaseError::NotADirectory(p.clone()));
        }
        match part {
            // Only a link's absolute target starts again at the root;
            // the path's own leading `/` is where the walk began.
            Part::Root => {}
            Part::Up => {
                // At the root `..` is the root, and nothing is stepped.
                if dirs.len() > 1 {
                    dirs.pop();
                    if let Some((p, dir)) = dirs.last() {
                        check(&seen, p, dir.uid, &mut first_unsafe);
                        seen = Seen {
                            path: p.clone(),
                            uid: dir.uid,
                        };
                    }
                }
            }
            Part::Name(name) => {
                let Some((dir_path, dir)) = dirs.last() else {
                    return Err(ChaseError::Relative);
                };
                let node = tree.child(&dir.handle, &name).map_err(ChaseError::Tree)?;
                let node_path = dir_path.join(&name);
                check(&seen, &node_path, node.uid, &mut first_unsafe);
                seen = Seen {
                    path: node_path.clone(),
                    uid: node.uid,
                };
                match node.kind {
                    Kind::Dir => dirs.push((node_path, node)),
                    Kind::Other => last = Some((node_path, node)),
                    Kind::Link => {
                        links += 1;
                        if links > MAX_LINKS {
                            return Err(ChaseError::TooManyLinks);
                        }
                        let target = tree
                            .read_link(&dir.handle, &name)
                            .map_err(ChaseError::Tree)?;
                        if target.as_os_str().is_empty() {
                            return Err(ChaseError::EmptyLink(node_path));
                        }
                        if target.is_absolute() {
                            dirs.truncate(1);
                            if let Some((p, root)) = dirs.first() {
                                check(&seen, p, root.uid, &mut first_unsafe);
                                seen = Seen {
                                    path: p.clone(),
                                    uid: root.uid,
                                };
                            }
                        }
                        todo.extend(parts(&target).rev());
                    }
                }
            }
        }
    }
    let (path, node) = match last {
        Some(end) => end,
        None => dirs.pop().ok_or(ChaseError::Relative)?,
    };
    Ok(Chased {
        node,
        path,
        unsafe_step: first_unsafe,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// A described tree: each path with its owner and kind (a link with
    /// its target). Handles are the paths themselves.
    struct Described(BTreeMap<PathBuf, (u32, Option<String>, Kind)>);

    impl Described {
        fn new(rows: &[(&str, u32, &str)]) -> Self {
            let mut map = BTreeMap::new();
            for &(path, uid, what) in rows {
                let (target, kind) = match what {
                    "dir" => (None, Kind::Dir),
                    "file" => (None, Kind::Other),
                    link => (Some(link.to_owned()), Kind::Link),
                };
                map.insert(PathBuf::from(path), (uid, target, kind));
            }
            Described(map)
        }
    }

    impl Tree for Described {
        type Handle = PathBuf;
        type Error = String;
        fn root(&mut self) -> Result<Node<PathBuf>, String> {
            self.child(&PathBuf::from("/"), &OsString::new())
        }
        fn child(&mut self, dir: &PathBuf, name: &OsString) -> Result<Node<PathBuf>, String> {
            let p = if name.is_empty() {
                dir.clone()
            } else {
                dir.join(name)
            };
            let (uid, _, kind) = self
                .0
                .get(&p)
                .ok_or_else(|| format!("{}: no such file", p.display()))?;
            Ok(Node {
                handle: p,
                uid: *uid,
                kind: *kind,
            })
        }
        fn read_link(&mut self, dir: &PathBuf, name: &OsString) -> Result<PathBuf, String> {
            let p = dir.join(name);
            match self.0.get(&p) {
                Some((_, Some(t), Kind::Link)) => Ok(PathBuf::from(t)),
                _ => Err(format!("{}: not a link", p.display())),
            }
        }
    }

    /// systemd's test 20 and its neighbours: root's `/run`, a root-owned
    /// pidfile of another unit, and a dynamic user's runtime directory.
    fn machine() -> Described {
        Described::new(&[
            ("/", 0, "dir"),
            ("/run", 0, "dir"),
            ("/run/mainpidsh", 0, "dir"),
            ("/run/mainpidsh/pid", 0, "file"),
            ("/run/mainpidsh2", 0, "dir"),
            ("/run/mainpidsh2/pid", 1001, "file"),
            ("/run/mainpidsh3", 61184, "dir"),
            ("/run/mainpidsh3/pid", 61184, "../mainpidsh/pid"),
            ("/run/mainpidsh3/abs", 61184, "/run/mainpidsh/pid"),
            ("/run/mainpidsh3/own", 61184, "file"),
            ("/run/mainpidsh3/mine", 61184, "own"),
            ("/run/mainpidsh3/up", 61184, "../mainpidsh3/own"),
            ("/run/mainpidsh3/loop", 61184, "loop"),
            ("/run/mainpidsh3/empty", 61184, ""),
            ("/run/rootlink", 0, "mainpidsh3/own"),
            ("/run/rootabs", 0, "/run/mainpidsh/pid"),
            ("/run/lock", 0, "/run/mainpidsh"),
            ("/run/user", 1000, "dir"),
            ("/run/user/hard", 1000, "dir"),
            ("/run/user/hard/pid", 0, "file"),
        ])
    }

    #[test]
    fn a_table_of_walks() {
        // (path, where it ends, the unsafe step's "from -> to" or "")
        let table: &[(&str, &str, &str)] = &[
            // Root's files, straight or through root's links: safe.
            ("/run/mainpidsh/pid", "/run/mainpidsh/pid", ""),
            ("/run/rootabs", "/run/mainpidsh/pid", ""),
            ("/run/lock/pid", "/run/mainpidsh/pid", ""),
            ("/run/lock/../mainpidsh/./pid", "/run/mainpidsh/pid", ""),
            // A file root made and gave away: root may lead to it.
            ("/run/mainpidsh2/pid", "/run/mainpidsh2/pid", ""),
            // Root's link into a user's directory: safe, down the tree.
            ("/run/rootlink", "/run/mainpidsh3/own", ""),
            // The user's own file, through the user's own links: safe.
            ("/run/mainpidsh3/own", "/run/mainpidsh3/own", ""),
            ("/run/mainpidsh3/mine", "/run/mainpidsh3/own", ""),
            // Test 20's game: the user's link goes up into root's /run.
            (
                "/run/mainpidsh3/pid",
                "/run/mainpidsh/pid",
                "/run/mainpidsh3/pid -> /run",
            ),
            // An absolute target starts at root's `/`: unsafe at once.
            (
                "/run/mainpidsh3/abs",
                "/run/mainpidsh/pid",
                "/run/mainpidsh3/abs -> /",
            ),
            // Up and back into the user's own directory: `..` is root's.
            (
                "/run/mainpidsh3/up",
                "/run/mainpidsh3/own",
                "/run/mainpidsh3/up -> /run",
            ),
            // A plain `..` out of the user's directory is a step too.
            (
                "/run/mainpidsh3/../mainpidsh/pid",
                "/run/mainpidsh/pid",
                "/run/mainpidsh3 -> /run",
            ),
            // Root's file in a user's directory (a hard link): unsafe.
            (
                "/run/user/hard/pid",
                "/run/user/hard/pid",
                "/run/user/hard -> /run/user/hard/pid",
            ),
            // `..` above the root stays there.
            ("/../../run/mainpidsh/pid", "/run/mainpidsh/pid", ""),
        ];
        for &(path, end, step) in table {
            let got =
                chase(&mut machine(), Path::new(path)).unwrap_or_else(|e| panic!("{path}: {e:?}"));
            assert_eq!(got.path, PathBuf::from(end), "{path}");
            assert_eq!(got.node.handle, PathBuf::from(end), "{path}");
            let seen = got
                .unsafe_step
                .as_ref()
                .map(|u| format!("{} -> {}", u.from.display(), u.to.display()))
                .unwrap_or_default();
            assert_eq!(seen, step, "{path}");
        }
    }

    #[test]
    fn the_unsafe_step_names_both_owners() {
        let got = chase(&mut machine(), Path::new("/run/mainpidsh3/pid")).unwrap();
        assert_eq!(
            got.unsafe_step.unwrap().to_string(),
            "unsafe path transition /run/mainpidsh3/pid (uid 61184) -> /run (uid 0)"
        );
    }

    #[test]
    fn walks_that_fail() {
        let err = |p: &str| chase(&mut machine(), Path::new(p)).unwrap_err();
        assert_eq!(err("/run/mainpidsh3/loop"), ChaseError::TooManyLinks);
        assert_eq!(
            err("/run/mainpidsh3/empty"),
            ChaseError::EmptyLink(PathBuf::from("/run/mainpidsh3/empty"))
        );
        assert_eq!(
            err("/run/mainpidsh/pid/x"),
            ChaseError::NotADirectory(PathBuf::from("/run/mainpidsh/pid"))
        );
        assert_eq!(
            err("/run/none"),
            ChaseError::Tree("/run/none: no such file".into())
        );
        assert_eq!(err("run/mainpidsh/pid"), ChaseError::Relative);
    }

    #[test]
    fn the_owner_rule() {
        for (from, to, bad) in [
            (0, 0, false),
            (0, 1000, false),
            (1000, 1000, false),
            (1000, 0, true),
            (1000, 1001, true),
        ] {
            assert_eq!(unsafe_step(from, to), bad, "{from} -> {to}");
        }
    }
}
