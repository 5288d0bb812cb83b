//! The stamp of a read of the unit search path through [`Sys`]
//! (`flotilla_units::load::PathStamp`): [`Seen`] takes it as the unit
//! loader lists and reads, and [`unchanged`] tells the init whether a
//! read now would see the same. Both take a directory's entries the same
//! way ([`entries`]): the names `list_dir` gives, each one's modification
//! time with links followed, as a read follows them. The times [`Seen`]
//! takes also stamp each unit's own files ([`Seen::files_stamp`]), for
//! `NeedDaemonReload`. A file is read as the loader takes it by `read`
//! (`unitdir.rs` reads through it too).

use crate::sys::{Sys, SysError};
use flotilla_systemd::load::FileRead;
use flotilla_systemd::EntryKind;
use flotilla_units::load::{Entries, PathStamp, MAX_FILE_SIZE};
use std::collections::{HashMap, HashSet};
use std::ffi::OsString;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// A directory's listing, as [`Sys::list_dir`] gives it.
pub type Listing = Vec<(OsString, EntryKind)>;

/// The listings and reads of one load, each recorded in its stamp before
/// it is made.
pub struct Seen<'a> {
    sys: &'a dyn Sys,
    stamp: PathStamp,
    /// The directories listed, to tell a file read among them (their
    /// digest covers it) from one elsewhere.
    listed: HashSet<String>,
    /// The time each file had when it was taken (an entry of a directory
    /// listed, a file read elsewhere), for the stamp of each unit's files
    /// ([`Seen::files_stamp`]) without a second stat. Kept for the load
    /// only.
    times: HashMap<String, Option<u64>>,
    /// The watch each directory and file is added to before it is listed
    /// or read ([`Seen::watched`]); none once an add failed.
    watch: Option<BorrowedFd<'a>>,
}

impl<'a> Seen<'a> {
    /// A load through `sys` beginning now.
    pub fn new(sys: &'a dyn Sys) -> Seen<'a> {
        let now = sys.wall_now();
        let us = u64::try_from(now.secs)
            .unwrap_or(0)
            .saturating_mul(1_000_000)
            .saturating_add(u64::from(now.nanos / 1000));
        Seen {
            sys,
            stamp: PathStamp::new(us),
            listed: HashSet::new(),
            times: HashMap::new(),
            watch: None,
        }
    }

    /// A load through `sys` beginning now that adds each directory and
    /// file to the watch `fd` (`Sys::path_stamp_instance`) before it lists
    /// or reads it: every change after the load's view of a path shows
    /// on `fd`, so its stamp is trusted however new its times are
    /// (`PathStamp::watched`). An add that fails (the system's limit of
    /// watches) leaves the stamp unwatched, as a load without one.
    pub fn watched(sys: &'a dyn Sys, fd: BorrowedFd<'a>) -> Seen<'a> {
        Seen {
            watch: Some(fd),
            ..Seen::new(sys)
        }
    }

    /// Adds `path` to the watch, if there is one.
    fn watch(&mut self, path: &Path) {
        if let Some(fd) = self.watch {
            if self.sys.path_stamp_add(fd, path).is_err() {
                self.watch = None;
            }
        }
    }

    /// [`Sys::list_dir`], the directory's time taken before.
    pub fn list_dir(&mut self, dir: &Path) -> Result<Listing, SysError> {
        self.watch(dir);
        let dir_time = mtime(self.sys, dir);
        let listing = self.sys.list_dir(dir);
        let times = &mut self.times;
        let taken = listing.as_ref().map_or_else(
            |_| Entries::default(),
            |l| {
                entries(self.sys, dir, l, |path, t| {
                    times.insert(path.to_string_lossy().into_owned(), t);
                })
            },
        );
        let path = dir.to_string_lossy();
        self.stamp.add_dir(&path, dir_time, taken);
        self.listed.insert(path.into_owned());
        listing
    }

    /// [`Sys::read_dir`] as a listing's names.
    pub fn read_dir(&mut self, dir: &Path) -> Result<Vec<OsString>, SysError> {
        self.list_dir(dir)
            .map(|l| l.into_iter().map(|(n, _)| n).collect())
    }

    /// A file's bytes as the loader takes them; its time taken before,
    /// unless a directory listed holds it (its digest has the time).
    pub fn read(&mut self, path: &Path) -> FileRead {
        let among_listed = path
            .parent()
            .is_some_and(|d| self.listed.contains(d.to_string_lossy().as_ref()));
        if !among_listed {
            self.watch(path);
            let t = mtime(self.sys, path);
            let name = path.to_string_lossy();
            self.stamp.add_file(&name, t);
            self.times.insert(name.into_owned(), t);
        }
        read(self.sys, path)
    }

    /// `flotilla_units::load::files_stamp` of a unit's `file` and
    /// `dropins` at the times this load took them: no stat, but for a
    /// file this load neither listed nor read (none, as the loader reads
    /// what it stamps).
    pub fn files_stamp(&self, file: &str, dropins: &[String]) -> u32 {
        let time = |p: &str| match self.times.get(p) {
            Some(t) => *t,
            None => mtime(self.sys, Path::new(p)),
        };
        let fragment = (!file.is_empty()).then(|| (file, time(file)));
        flotilla_units::load::files_stamp(fragment, dropins.iter().map(|d| (d.as_str(), time(d))))
    }

    /// The stamp taken: watched when every path went on the watch.
    pub fn finish(mut self) -> PathStamp {
        self.stamp.watched = self.watch.is_some();
        self.stamp
    }
}

/// A new watch (`Sys::path_stamp_instance`) on `paths`, each added as
/// `Sys::path_stamp_add` adds it: what a read of the search path saw,
/// watched before a check of it (`runtime/on_demand.rs`).
pub fn watch_all(sys: &dyn Sys, paths: &[&Path]) -> Result<OwnedFd, SysError> {
    let fd = sys.path_stamp_instance()?;
    for p in paths {
        sys.path_stamp_add(fd.as_fd(), p)?;
    }
    Ok(fd)
}

/// Whether a read of the search path now would see what the read that
/// took `stamp` saw: it is settled, and every directory and file it
/// holds has the time it had, every directory the same entries with the
/// same times. A stat of each directory and file, then a listing of each
/// directory and a stat of each entry; no file is read.
pub fn unchanged(sys: &dyn Sys, stamp: &PathStamp) -> bool {
    stamp.settled()
        && (stamp.dirs.iter()).all(|d| mtime(sys, Path::new(&d.path)) == d.mtime_us)
        && (stamp.files.iter()).all(|(f, t)| mtime(sys, Path::new(f)) == *t)
        && stamp.dirs.iter().all(|d| {
            let dir = Path::new(&d.path);
            // A directory that was not there: none now either.
            d.mtime_us.is_none()
                || sys
                    .list_dir(dir)
                    .map_or_else(|_| Entries::default(), |l| entries(sys, dir, &l, |_, _| {}))
                    .digest
                    == d.entries
        })
}

/// The entries of `dir` as `listing` names them, each with its time,
/// which `took` is also given with the entry's path.
fn entries(
    sys: &dyn Sys,
    dir: &Path,
    listing: &Listing,
    mut took: impl FnMut(&Path, Option<u64>),
) -> Entries {
    let mut e = Entries::default();
    for (name, _) in listing {
        let path = dir.join(name);
        let t = mtime(sys, &path);
        e.add(name.as_bytes(), t);
        took(&path, t);
    }
    e
}

/// `path`'s modification time, links followed; `None` when there is none
/// to be had.
fn mtime(sys: &dyn Sys, path: &Path) -> Option<u64> {
    sys.file_mtime_us(path).ok().flatten()
}

/// A file's bytes as the loader takes them.
pub(crate) fn read(sys: &dyn Sys, path: &Path) -> FileRead {
    match sys.read_file_limited(path, MAX_FILE_SIZE + 1) {
        Ok(bytes) => FileRead::Bytes(bytes),
        Err(SysError::NotRegular {
            directory: true, ..
        }) => FileRead::Directory,
        Err(e) => FileRead::Failed(reason(&e)),
    }
}

/// Why a file could not be read, without its path (the diagnostic names
/// the file): the system's words for the error number.
fn reason(e: &SysError) -> String {
    match e {
        SysError::Read { errno, .. } => std::io::Error::from(errno.0).to_string(),
        SysError::NotRegular { .. } => "not a regular file".to_string(),
        other => other.to_string(),
    }
}
