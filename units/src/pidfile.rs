//! Which PID of a `PIDFile=` the init takes as a forking service's main
//! process: systemd's `service_load_pid_file` as a pure rule
//! (docs/systemd-units.md, "Pidfiles"). The init finds the facts: the
//! file is read through [`crate::chase`], which says whether a link on
//! its way was unsafe, and the file's owner and the PID's process are
//! looked at.

use std::fmt;

/// What the init knows of the PID a pidfile names and of the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Read {
    /// The PID is the manager's own.
    pub manager: bool,
    /// It is one of the commands the init runs for the unit
    /// (`ExecStartPost=` …: systemd's control process).
    pub command: bool,
    /// A process of that PID exists.
    pub exists: bool,
    /// It is a process of the unit (its cgroup, or one the init started
    /// for it); `None` where the init cannot tell (a unit without a
    /// cgroup).
    pub of_unit: Option<bool>,
    /// A step on the way to the file was unsafe ([`crate::chase`]).
    pub unsafe_chain: bool,
    /// The file is owned by the manager's own user (root for PID 1).
    pub owned_by_manager: bool,
}

/// Why a pidfile's PID is not taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// The manager's own PID.
    Manager,
    /// One of the unit's commands, not its main process.
    Command,
    /// No such process.
    Gone,
    /// Another unit's or nobody's process, read through an unsafe link.
    UnsafeChain,
    /// Another unit's or nobody's process, in a file the manager's user
    /// does not own.
    NotOwned,
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Refused::Manager => "it is the manager's own PID",
            Refused::Command => "it is a command the init runs for the unit",
            Refused::Gone => "no such process",
            Refused::UnsafeChain => {
                "not a process of the unit, and read through an unsafe symbolic link"
            }
            Refused::NotOwned => {
                "not a process of the unit, and the file is not owned by the manager's user"
            }
        })
    }
}

/// Whether the PID read is taken. A process of the unit is; another is
/// only from a file reached safely that the manager's user owns, as
/// systemd's (whose user is root): whoever could write it could as well
/// have made the process. Where the init cannot tell whose the process is
/// (no cgroup), the file decides: a safe way to it is enough.
pub fn take(read: Read) -> Result<(), Refused> {
    if read.manager {
        return Err(Refused::Manager);
    }
    if read.command {
        return Err(Refused::Command);
    }
    if !read.exists {
        return Err(Refused::Gone);
    }
    match read.of_unit {
        Some(true) => Ok(()),
        _ if read.unsafe_chain => Err(Refused::UnsafeChain),
        None => Ok(()),
        Some(false) if read.owned_by_manager => Ok(()),
        Some(false) => Err(Refused::NotOwned),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rule_as_a_table() {
        let base = Read {
            manager: false,
            command: false,
            exists: true,
            of_unit: Some(true),
            unsafe_chain: false,
            owned_by_manager: true,
        };
        let with = |f: &dyn Fn(&mut Read)| {
            let mut r = base;
            f(&mut r);
            r
        };
        use Refused as R;
        let table: &[(&str, Read, Result<(), Refused>)] = &[
            ("the unit's process, root's file", base, Ok(())),
            (
                "the unit's process through an unsafe link",
                with(&|r| r.unsafe_chain = true),
                Ok(()),
            ),
            (
                "the unit's process in a user's file (test 20's mainpidsh2)",
                with(&|r| r.owned_by_manager = false),
                Ok(()),
            ),
            (
                "another unit's process in root's file",
                with(&|r| r.of_unit = Some(false)),
                Ok(()),
            ),
            (
                "another unit's process through an unsafe link (test 20's mainpidsh3)",
                with(&|r| {
                    r.of_unit = Some(false);
                    r.unsafe_chain = true;
                }),
                Err(R::UnsafeChain),
            ),
            (
                "another unit's process in a user's file",
                with(&|r| {
                    r.of_unit = Some(false);
                    r.owned_by_manager = false;
                }),
                Err(R::NotOwned),
            ),
            (
                "no cgroup to tell, a safe way",
                with(&|r| {
                    r.of_unit = None;
                    r.owned_by_manager = false;
                }),
                Ok(()),
            ),
            (
                "no cgroup to tell, an unsafe link",
                with(&|r| {
                    r.of_unit = None;
                    r.unsafe_chain = true;
                }),
                Err(R::UnsafeChain),
            ),
            ("the manager", with(&|r| r.manager = true), Err(R::Manager)),
            ("a command", with(&|r| r.command = true), Err(R::Command)),
            ("gone", with(&|r| r.exists = false), Err(R::Gone)),
        ];
        for (what, read, want) in table {
            assert_eq!(take(*read), *want, "{what}");
        }
    }
}
