//! `RemoveIPC=`: when the last running unit of a user (or group) stops and
//! one of them said `RemoveIPC=yes`, the System V shared memory segments,
//! semaphore sets and message queues, the POSIX message queues
//! (`/dev/mqueue`) and shared memory (`/dev/shm`) that user (or group) owns
//! are removed, as systemd does; never root's.
//!
//! The users of the running units are counted here ([`Users`]): a unit
//! counts from its start to its stop (a restart in between does not clean).
//! Everything is read from `/proc/sysvipc`, `/dev/mqueue` and `/dev/shm`,
//! memory file systems: the init's loop does it at the stop without waiting
//! on a disk.

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// A unit's user and group, as counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Owner {
    /// The user (`None` or 0: not counted).
    pub uid: Option<u32>,
    /// The group.
    pub gid: Option<u32>,
    /// The unit says `RemoveIPC=yes`.
    pub remove: bool,
}

/// The users and groups of the running units: for each, how many units run
/// as it and whether one of them said `RemoveIPC=yes`.
#[derive(Debug, Default)]
pub struct Users {
    uids: BTreeMap<u32, (u32, bool)>,
    gids: BTreeMap<u32, (u32, bool)>,
}

fn take(map: &mut BTreeMap<u32, (u32, bool)>, id: Option<u32>, remove: bool) {
    if let Some(id) = id.filter(|&i| i != 0) {
        let e = map.entry(id).or_insert((0, false));
        e.0 += 1;
        e.1 |= remove;
    }
}

/// Drops one unit of `id`; `Some(id)` when it was the last and one of them
/// asked for the removal.
fn give(map: &mut BTreeMap<u32, (u32, bool)>, id: Option<u32>, clean: bool) -> Option<u32> {
    let id = id.filter(|&i| i != 0)?;
    let e = map.get_mut(&id)?;
    e.0 = e.0.saturating_sub(1);
    if e.0 > 0 || !clean {
        return None;
    }
    let (_, remove) = map.remove(&id)?;
    remove.then_some(id)
}

impl Users {
    /// A unit of `owner` starts.
    pub fn start(&mut self, owner: Owner) {
        take(&mut self.uids, owner.uid, owner.remove);
        take(&mut self.gids, owner.gid, owner.remove);
    }

    /// A unit of `owner` stops (`restart`: it starts again at once, and
    /// nothing is removed). Returns the user and group whose IPC objects
    /// are to be removed now.
    pub fn stop(&mut self, owner: Owner, restart: bool) -> (Option<u32>, Option<u32>) {
        (
            give(&mut self.uids, owner.uid, !restart),
            give(&mut self.gids, owner.gid, !restart),
        )
    }
}

/// The System V kinds: the file of `/proc/sysvipc`, the column of the
/// owner's user and group, and how an object is removed.
const SYSV: [(&str, usize, usize); 3] = [("shm", 7, 8), ("sem", 4, 5), ("msg", 7, 8)];

/// Removes what `uid` or `gid` owns; how many objects went. The first
/// error is returned after trying everything.
pub fn remove(uid: Option<u32>, gid: Option<u32>) -> Result<usize, String> {
    let owns = |u: u32, g: u32| uid == Some(u) || gid == Some(g);
    let mut gone = 0;
    let mut first_err = None;
    for (kind, ucol, gcol) in SYSV {
        let path = format!("/proc/sysvipc/{kind}");
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        for line in text.lines().skip(1) {
            let cols: Vec<&str> = line.split_whitespace().collect();
            let num = |i: usize| cols.get(i).and_then(|c| c.parse::<u32>().ok());
            let (Some(id), Some(u), Some(g)) = (num(1), num(ucol), num(gcol)) else {
                continue;
            };
            if !owns(u, g) {
                continue;
            }
            match remove_sysv(kind, id) {
                Ok(()) => gone += 1,
                Err(e) => {
                    first_err.get_or_insert(format!("remove {kind} {id}: {e}"));
                }
            }
        }
    }
    for dir in ["/dev/mqueue", "/dev/shm"] {
        if let Err(e) = remove_files(Path::new(dir), &owns, &mut gone) {
            first_err.get_or_insert(e);
        }
    }
    match first_err {
        Some(e) => Err(e),
        None => Ok(gone),
    }
}

fn remove_sysv(kind: &str, id: u32) -> Result<(), std::io::Error> {
    let id = id as libc::c_int;
    // SAFETY: IPC_RMID takes no buffer that is read (NULL is allowed).
    let r = unsafe {
        match kind {
            "shm" => libc::shmctl(id, libc::IPC_RMID, std::ptr::null_mut()),
            "sem" => libc::semctl(id, 0, libc::IPC_RMID),
            _ => libc::msgctl(id, libc::IPC_RMID, std::ptr::null_mut()),
        }
    };
    if r < 0 {
        let e = std::io::Error::last_os_error();
        // Gone meanwhile.
        if matches!(e.raw_os_error(), Some(libc::EINVAL | libc::EIDRM)) {
            return Ok(());
        }
        return Err(e);
    }
    Ok(())
}

/// Removes the entries of `dir` (recursively) that `owns` says are the
/// user's; a directory of the user's goes with everything in it.
fn remove_files(
    dir: &Path,
    owns: &dyn Fn(u32, u32) -> bool,
    gone: &mut usize,
) -> Result<(), String> {
    let Ok(list) = std::fs::read_dir(dir) else {
        return Ok(());
    };
    let mut first_err = None;
    for e in list.flatten() {
        let path = e.path();
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        let mine = owns(meta.uid(), meta.gid());
        let r = if meta.is_dir() {
            remove_files(&path, owns, gone).and_then(|()| {
                if mine {
                    std::fs::remove_dir(&path)
                        .map(|()| *gone += 1)
                        .map_err(|e| format!("remove {}: {e}", path.display()))
                } else {
                    Ok(())
                }
            })
        } else if mine {
            std::fs::remove_file(&path)
                .map(|()| *gone += 1)
                .map_err(|e| format!("remove {}: {e}", path.display()))
        } else {
            Ok(())
        };
        if let Err(e) = r {
            first_err.get_or_insert(e);
        }
    }
    first_err.map_or(Ok(()), Err)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]

    use super::*;
    use std::process::Command;

    #[test]
    fn the_last_unit_of_a_user_cleans_if_one_of_them_asked() {
        let mut u = Users::default();
        let a = Owner {
            uid: Some(998),
            gid: Some(997),
            remove: true,
        };
        let b = Owner { remove: false, ..a };
        u.start(a);
        u.start(b);
        assert_eq!(u.stop(b, false), (None, None));
        // A restart keeps the count.
        assert_eq!(u.stop(a, true), (None, None));
        u.start(a);
        assert_eq!(u.stop(a, false), (Some(998), Some(997)));
        // Root is never counted; a user nobody asked for is not cleaned.
        let root = Owner {
            uid: Some(0),
            gid: Some(0),
            remove: true,
        };
        u.start(root);
        assert_eq!(u.stop(root, false), (None, None));
        u.start(b);
        assert_eq!(u.stop(b, false), (None, None));
    }

    /// A user no account has, for the test's objects alone.
    const USER: u32 = 61_234;

    /// Runs `ipcmk ARG` as [`USER`]; the ID it made.
    fn ipcmk(arg: &str) -> String {
        let (u, g) = (format!("--reuid={USER}"), format!("--regid={USER}"));
        let out = Command::new("setpriv")
            .args([u.as_str(), g.as_str(), "--clear-groups", "ipcmk", arg])
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        let text = String::from_utf8(out.stdout).unwrap();
        text.split(':').nth(1).unwrap().trim().to_string()
    }

    fn listed(kind: &str, id: &str) -> bool {
        std::fs::read_to_string(format!("/proc/sysvipc/{kind}"))
            .unwrap()
            .lines()
            .any(|l| l.split_whitespace().nth(1) == Some(id))
    }

    #[test]
    fn a_users_sysv_objects_and_posix_files_are_removed() {
        let shm = ipcmk("-M 4096");
        let sem = ipcmk("-S 1");
        let msg = ipcmk("-Q");
        let name = format!("flotilla-ipc-{}", std::process::id());
        let shm_file = Path::new("/dev/shm").join(&name);
        std::fs::write(&shm_file, "x").unwrap();
        std::os::unix::fs::chown(&shm_file, Some(USER), Some(USER)).unwrap();
        // Root's own stays.
        let roots = Path::new("/dev/shm").join(format!("{name}-root"));
        std::fs::write(&roots, "x").unwrap();
        assert!(listed("shm", &shm) && listed("sem", &sem) && listed("msg", &msg));
        let gone = remove(Some(USER), None).unwrap();
        assert!(gone >= 4, "{gone}");
        assert!(!listed("shm", &shm) && !listed("sem", &sem) && !listed("msg", &msg));
        assert!(!shm_file.exists());
        assert!(roots.exists());
        std::fs::remove_file(&roots).unwrap();
    }
}
