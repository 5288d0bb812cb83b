//! The manager's environment set at run time (systemd's `SetEnvironment`,
//! `UnsetEnvironment`, `UnsetAndSetEnvironment`: `systemctl
//! set-environment`, `unset-environment`, `import-environment`): the
//! variables every unit's processes get on top of the init's own
//! environment (docs/dbus.md, "The manager's environment"). Unsetting
//! takes back only what was set here, so a variable of the init's own
//! (`PATH`) is back to the init's value, as systemd's built-in one is.
//! Pure: the changes checked and applied; the init keeps the set and
//! gives it to every spawn (`init/src/runtime/executor.rs`).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The variables set, by name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ManagerEnv {
    vars: BTreeMap<String, String>,
}

/// systemd's rule for a variable's name: letters, digits and `_`, not
/// starting with a digit.
fn name_ok(n: &str) -> bool {
    !n.is_empty()
        && !n.starts_with(|c: char| c.is_ascii_digit())
        && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `NAME=VALUE` with a valid name and a value without NUL, split.
fn assignment(a: &str) -> Option<(&str, &str)> {
    let (n, v) = a.split_once('=')?;
    (name_ok(n) && !v.contains('\0')).then_some((n, v))
}

impl ManagerEnv {
    /// The variables, in name order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.vars.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// Takes out what `unset` names (a name, or `NAME=VALUE`: only while it
    /// has that value), then sets each `NAME=VALUE` of `set`, as systemd's
    /// `UnsetAndSetEnvironment`. A bad name or assignment is an error
    /// naming it, and nothing changes.
    pub fn modify(&mut self, unset: &[String], set: &[String]) -> Result<(), String> {
        for u in unset {
            if !name_ok(u) && assignment(u).is_none() {
                return Err(format!(
                    "Invalid environment variable name or assignment: {u:?}"
                ));
            }
        }
        let mut sets = Vec::new();
        for s in set {
            match assignment(s) {
                Some(a) => sets.push(a),
                None => return Err(format!("Invalid environment assignment: {s:?}")),
            }
        }
        for u in unset {
            match u.split_once('=') {
                Some((n, v)) if self.vars.get(n).is_some_and(|have| have == v) => {
                    self.vars.remove(n);
                }
                Some(_) => {}
                None => {
                    self.vars.remove(u.as_str());
                }
            }
        }
        for (n, v) in sets {
            self.vars.insert(n.to_string(), v.to_string());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    fn shown(e: &ManagerEnv) -> Vec<String> {
        e.iter().map(|(k, v)| format!("{k}={v}")).collect()
    }

    #[test]
    fn set_unset_and_both_as_systemd() {
        // (set before, unset, set, after)
        type Row<'a> = (&'a [&'a str], &'a [&'a str], &'a [&'a str], &'a [&'a str]);
        let table: &[Row] = &[
            (&[], &[], &["FOO=BAR", "PATH=/x"], &["FOO=BAR", "PATH=/x"]),
            (&["FOO=BAR"], &[], &["FOO=baz"], &["FOO=baz"]),
            (&["FOO=BAR", "PATH=/x"], &["FOO", "PATH"], &[], &[]),
            (&["FOO=BAR"], &["NOPE"], &[], &["FOO=BAR"]),
            (&["FOO=BAR"], &["FOO=other"], &[], &["FOO=BAR"]),
            (&["FOO=BAR"], &["FOO=BAR"], &[], &[]),
            (&["FOO=BAR"], &["FOO"], &["FOO=new"], &["FOO=new"]),
            (&[], &[], &["EMPTY="], &["EMPTY="]),
            (&[], &[], &["A=b=c"], &["A=b=c"]),
        ];
        for (before, unset, set, after) in table {
            let mut e = ManagerEnv::default();
            e.modify(&[], &v(before)).expect("before");
            assert_eq!(e.modify(&v(unset), &v(set)), Ok(()), "{unset:?} {set:?}");
            assert_eq!(shown(&e), v(after), "{before:?} {unset:?} {set:?}");
        }
    }

    #[test]
    fn a_bad_name_or_assignment_changes_nothing() {
        let bad: &[(&[&str], &[&str])] = &[
            (&[], &["FOO"]),
            (&[], &["=x"]),
            (&[], &["1A=x"]),
            (&[], &["A-B=x"]),
            (&[], &["A=x\0y"]),
            (&["A B"], &[]),
            (&[""], &[]),
            (&["FOO"], &["OK=1", "bad"]),
        ];
        for (unset, set) in bad {
            let mut e = ManagerEnv::default();
            e.modify(&[], &v(&["FOO=BAR"])).expect("before");
            let r = e.modify(&v(unset), &v(set));
            assert!(
                r.as_ref().is_err_and(|m| m.contains("Invalid environment")),
                "{unset:?} {set:?}: {r:?}"
            );
            assert_eq!(shown(&e), v(&["FOO=BAR"]), "{unset:?} {set:?}");
        }
    }
}
