//! Whose notify messages a service takes, and which new main PID of a
//! `MAINPID=` message it believes: systemd's `NotifyAccess=` and its
//! checks of a new main PID (docs/systemd-units.md, "Notify access").
//! Pure rules: the init finds the facts (who sent it, which processes
//! are the unit's) and asks here.

use crate::spec::{NotifyAccess, Ready, UnitSpec};

/// The access in force for unit `spec`: what it says, else `main` for a
/// `notified` unit and `none` for the others. As systemd's, a unit that
/// must hear from its process (`notified`, a watchdog, a descriptor
/// store) has at least `main`: `none` would leave it deaf.
pub fn effective(spec: &UnitSpec) -> NotifyAccess {
    let needs = spec.kind.row().ready == Ready::Notified
        || spec.watchdog().is_some()
        || spec.extras.file_descriptor_store_max.unwrap_or(0) > 0;
    match spec.extras.notify_access {
        Some(NotifyAccess::None) | None if needs => NotifyAccess::Main,
        Some(a) => a,
        None => NotifyAccess::None,
    }
}

/// What the init knows of a message's sender.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Sender {
    /// The unit's main process, or a process of the session it leads
    /// (`systemd-notify` in its start script: flotilla's reading of
    /// `main`, which has no control process apart).
    pub main: bool,
    /// One of the commands the init runs for the unit (`ExecStartPre=`,
    /// `ExecReload=` …: systemd's control process).
    pub command: bool,
    /// A process of the unit's cgroup (without cgroups: `main`).
    pub in_unit: bool,
}

/// Whether a message from `sender` is taken under `access`.
pub fn takes(access: NotifyAccess, sender: Sender) -> bool {
    match access {
        NotifyAccess::None => false,
        NotifyAccess::Main => sender.main,
        NotifyAccess::Exec => sender.main || sender.command,
        NotifyAccess::All => sender.main || sender.command || sender.in_unit,
    }
}

/// What the init knows of the PID a `MAINPID=` message names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NewMain {
    /// The PID is the manager's own (systemd's, or this init's).
    pub manager: bool,
    /// A process of that PID exists.
    pub exists: bool,
    /// It is a process of the unit (its cgroup, or one the init started
    /// for it).
    pub of_unit: bool,
    /// The message came from root (its sender's UID is 0).
    pub from_root: bool,
}

/// Why a new main PID is not taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// The manager's own PID.
    Manager,
    /// No such process.
    Gone,
    /// Another unit's or nobody's process, and the sender is not root.
    NotOfUnit,
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Refused::Manager => "it is the manager's own PID",
            Refused::Gone => "no such process",
            Refused::NotOfUnit => "not a process of the unit, and the sender is not root",
        })
    }
}

/// Whether `MAINPID=` naming `pid` is taken: a process of the unit's,
/// or any other process when root asks (systemd's test 20 hands its main
/// PID to another unit's process so), never the manager or a PID no
/// process has.
pub fn new_main(pid: NewMain) -> Result<(), Refused> {
    if pid.manager {
        Err(Refused::Manager)
    } else if !pid.exists {
        Err(Refused::Gone)
    } else if pid.of_unit || pid.from_root {
        Ok(())
    } else {
        Err(Refused::NotOfUnit)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::spec::UnitType;

    #[test]
    fn the_access_in_force() {
        let unit = |kind, access| {
            let mut s = UnitSpec::new("u", kind);
            s.extras.notify_access = access;
            s
        };
        use NotifyAccess as A;
        let fg = UnitType::ForegroundSupervised;
        let notified = UnitType::ForegroundNotified;
        for (kind, given, want) in [
            (fg, None, A::None),
            (fg, Some(A::All), A::All),
            (fg, Some(A::Exec), A::Exec),
            (fg, Some(A::None), A::None),
            (UnitType::Oneshot, Some(A::All), A::All),
            (notified, None, A::Main),
            (notified, Some(A::None), A::Main),
            (notified, Some(A::All), A::All),
        ] {
            assert_eq!(effective(&unit(kind, given)), want, "{kind:?} {given:?}");
        }
        let mut store = unit(fg, None);
        store.extras.file_descriptor_store_max = Some(1);
        assert_eq!(effective(&store), A::Main);
    }

    #[test]
    fn who_is_heard() {
        use NotifyAccess as A;
        let main = Sender {
            main: true,
            ..Sender::default()
        };
        let command = Sender {
            command: true,
            ..Sender::default()
        };
        let other = Sender {
            in_unit: true,
            ..Sender::default()
        };
        let stranger = Sender::default();
        for (access, heard) in [
            (A::None, [false, false, false, false]),
            (A::Main, [true, false, false, false]),
            (A::Exec, [true, true, false, false]),
            (A::All, [true, true, true, false]),
        ] {
            let got = [main, command, other, stranger].map(|s| takes(access, s));
            assert_eq!(got, heard, "{access:?}");
        }
    }

    /// systemd's test 20, line by line.
    #[test]
    fn which_main_pid_is_believed() {
        let pid = |manager, exists, of_unit, from_root| NewMain {
            manager,
            exists,
            of_unit,
            from_root,
        };
        for (what, p, want) in [
            (
                "another unit's, from root",
                pid(false, true, false, true),
                Ok(()),
            ),
            ("its own", pid(false, true, true, true), Ok(())),
            ("PID 1", pid(true, true, false, true), Err(Refused::Manager)),
            (
                "no such PID",
                pid(false, false, false, true),
                Err(Refused::Gone),
            ),
            (
                "another unit's, from uid 1000",
                pid(false, true, false, false),
                Err(Refused::NotOfUnit),
            ),
            (
                "its own, from uid 1000",
                pid(false, true, true, false),
                Ok(()),
            ),
        ] {
            assert_eq!(new_main(p), want, "{what}");
        }
    }
}
