//! Who a process runs as: users and groups looked up in the passwd and
//! group databases (NSS, which reads files: once per start, not per
//! event), for [`RealSys`](crate::sys::real::RealSys).

use std::ffi::CString;
use std::path::PathBuf;

use nix::unistd::{Gid, Group, Uid, User};

use crate::sys::{Errno, Os, SysError, UserInfo};

/// [`Sys::lookup_user`](crate::sys::Sys::lookup_user) on the passwd and
/// group databases (NSS).
pub fn lookup_user(user: &str) -> Result<UserInfo, SysError> {
    let lookup_err = |e: Errno| SysError::Lookup {
        what: "user",
        name: user.to_owned(),
        errno: Os(e),
    };
    let number = user.parse::<u32>().ok();
    let found = match number {
        Some(n) => User::from_uid(Uid::from_raw(n)),
        None => User::from_name(user),
    }
    .map_err(lookup_err)?;
    match (found, number) {
        (Some(u), _) => {
            let cname = CString::new(u.name.as_bytes()).map_err(|_| lookup_err(Errno::EINVAL))?;
            let groups = nix::unistd::getgrouplist(&cname, u.gid).map_err(lookup_err)?;
            Ok(UserInfo {
                name: u.name,
                uid: u.uid.as_raw(),
                gid: u.gid.as_raw(),
                groups: groups.into_iter().map(Gid::as_raw).collect(),
                home: u.dir,
                shell: u.shell,
            })
        }
        // A bare number without an entry: that UID, the same GID, no
        // other group (systemd runs such IDs the same way).
        (None, Some(n)) => Ok(UserInfo {
            name: user.to_owned(),
            uid: n,
            gid: n,
            groups: vec![n],
            home: PathBuf::from("/"),
            shell: PathBuf::from("/bin/sh"),
        }),
        (None, None) => Err(SysError::NoUser(user.to_owned())),
    }
}

/// [`Sys::lookup_group`](crate::sys::Sys::lookup_group).
pub fn lookup_group(group: &str) -> Result<u32, SysError> {
    if let Ok(n) = group.parse::<u32>() {
        return Ok(n);
    }
    match Group::from_name(group) {
        Ok(Some(g)) => Ok(g.gid.as_raw()),
        Ok(None) => Err(SysError::NoGroup(group.to_owned())),
        Err(e) => Err(SysError::Lookup {
            what: "group",
            name: group.to_owned(),
            errno: Os(e),
        }),
    }
}

/// [`Sys::id_in_use`](crate::sys::Sys::id_in_use).
pub fn id_in_use(id: u32) -> bool {
    !matches!(User::from_uid(Uid::from_raw(id)), Ok(None))
        || !matches!(Group::from_gid(Gid::from_raw(id)), Ok(None))
}
