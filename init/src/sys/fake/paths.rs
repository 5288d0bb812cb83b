//! The fake's path watches: what its events say and which path a level
//! kind holds for, from the fake's files (the watches themselves are
//! recorded by `answers.rs`).

use super::FakeSys;
use crate::sys::paths::PathEvent;
use flotilla_units::trigger::PathSpec;
use std::ffi::OsString;
use std::os::fd::BorrowedFd;
use std::path::PathBuf;

impl FakeSys {
    /// The fake's events say only that something changed: an `IN_CREATE`
    /// in each watched directory that has a file now (the runtime asks the
    /// file system what holds).
    pub(super) fn read_path_events(&self, fd: BorrowedFd<'_>) -> Vec<PathEvent> {
        let mut b = [0u8; 8];
        if nix::unistd::read(fd, &mut b).is_err() {
            return Vec::new();
        }
        let st = self.state.borrow();
        let mut out = Vec::new();
        for (wd, dir) in st.path_wds.iter().enumerate() {
            for f in st
                .files
                .keys()
                .filter(|f| f.parent() == Some(dir.as_path()))
            {
                out.push(PathEvent {
                    wd: i32::try_from(wd).unwrap_or(i32::MAX),
                    mask: libc::IN_CREATE,
                    name: f.file_name().map(OsString::from),
                });
            }
        }
        out
    }

    /// [`Sys::path_stamp_instance`](crate::sys::Sys::path_stamp_instance):
    /// a descriptor standing for it, and the count of the fake's changes to
    /// its files now.
    pub(super) fn open_stamp_watch(&self) -> Result<std::os::fd::OwnedFd, crate::sys::SysError> {
        let fd = crate::sys::Sys::wall_clock_watch(self)?;
        let mut st = self.state.borrow_mut();
        st.stamp_watch = Some(st.changes);
        Ok(fd)
    }

    /// [`Sys::path_stamp_changed`](crate::sys::Sys::path_stamp_changed):
    /// whether any file, directory, link or time of the fake changed since
    /// the watch was made or last asked (wherever it is: the fake watches
    /// everything).
    pub(super) fn stamp_changed(&self) -> bool {
        let mut st = self.state.borrow_mut();
        let now = st.changes;
        st.stamp_watch.replace(now).is_none_or(|then| then != now)
    }

    /// [`Sys::path_holding`](crate::sys::Sys::path_holding) on the fake's files.
    pub(super) fn path_holds(&self, spec: &PathSpec) -> Option<PathBuf> {
        use flotilla_units::trigger::PathKind;
        let st = self.state.borrow();
        let holds = match spec.kind {
            PathKind::Exists => st.files.contains_key(&spec.path) || st.dirs.contains(&spec.path),
            PathKind::DirectoryNotEmpty => st
                .files
                .keys()
                .any(|f| f.parent() == Some(spec.path.as_path())),
            PathKind::ExistsGlob | PathKind::Changed | PathKind::Modified => false,
        };
        holds.then(|| spec.path.clone())
    }
}
