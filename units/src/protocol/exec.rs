//! A unit's commands as systemd's `Exec*` properties list them
//! ([`ExecList`]): in the status of one unit, for `flotilla-busd`'s
//! `ExecStart`, `ExecCondition`, … (docs/dbus.md).

use crate::spec::{Command, UnitSpec};
use serde::{Deserialize, Serialize};

/// The commands of one of systemd's `Exec*` properties, in order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecList {
    /// systemd's property: `ExecCondition`, `ExecStartPre`, `ExecStart`,
    /// `ExecStartPost`, `ExecReload`, `ExecStop` or `ExecStopPost`.
    pub property: String,
    /// Its commands (for `ExecStart` and `ExecReload`, the first one and
    /// the further lines of a oneshot or a reload).
    pub commands: Vec<Command>,
}

impl ExecList {
    /// The seven lists of `spec`, each given even when empty (systemd
    /// serves every one of a service).
    pub fn of(spec: &UnitSpec) -> Vec<ExecList> {
        let x = &spec.extras;
        let one = |c: &Option<Command>, more: &[Command]| -> Vec<Command> {
            c.iter().chain(more).cloned().collect()
        };
        [
            ("ExecCondition", x.exec_condition.to_vec()),
            ("ExecStartPre", spec.exec_start_pre.to_vec()),
            ("ExecStart", one(&spec.exec_start, &x.exec_start_then)),
            ("ExecStartPost", x.exec_start_post.to_vec()),
            ("ExecReload", one(&x.exec_reload, &x.exec_reload_then)),
            ("ExecStop", one(&spec.exec_stop, &[])),
            ("ExecStopPost", x.exec_stop_post.to_vec()),
        ]
        .into_iter()
        .map(|(property, commands)| ExecList {
            property: property.to_string(),
            commands,
        })
        .collect()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::spec::UnitType;

    #[test]
    fn every_list_in_systemd_order_with_further_lines() {
        let mut s = UnitSpec::new("svc", UnitType::Oneshot);
        s.exec_start = Some(Command::new(["/bin/a"]));
        s.extras.exec_start_then = vec![Command::new(["/bin/b"])].into();
        s.extras.exec_condition = vec![Command::new(["/bin/c"])].into();
        let lists = ExecList::of(&s);
        let names: Vec<&str> = lists.iter().map(|l| l.property.as_str()).collect();
        assert_eq!(
            names,
            [
                "ExecCondition",
                "ExecStartPre",
                "ExecStart",
                "ExecStartPost",
                "ExecReload",
                "ExecStop",
                "ExecStopPost"
            ]
        );
        let argv0 = |l: &ExecList| -> Vec<String> {
            l.commands
                .iter()
                .map(|c| c.argv.first().unwrap().to_string())
                .collect()
        };
        assert_eq!(argv0(&lists[0]), ["/bin/c"]);
        assert_eq!(argv0(&lists[2]), ["/bin/a", "/bin/b"]);
        assert!(lists[5].commands.is_empty());
    }
}
