//! Dynamic users (systemd's `DynamicUser=yes`): the UID and equal GID the
//! init holds for a unit while it runs, picked by the pure rule of
//! `flotilla_units::dynamic_user` (the name hashed into 61184–65519, the
//! next free number when that one is held), free in the passwd and group
//! databases (`Sys::id_in_use`) and among the other units' dynamic users.
//! Taken at the unit's first spawn of a run, given back when its run ends.
//! The numbers have no passwd entry: without nss-systemd (which flotilla
//! does not provide) their names do not resolve (docs/service-context.md).

use super::execs::SpawnError;
use super::Runtime;
use crate::sys::{Credentials, Sys};
use flotilla_units::dynamic_user;
use flotilla_units::spec::UnitSpec;

impl<S: Sys> Runtime<S> {
    /// Holds a dynamic user for `spec` if it asks for one and holds none
    /// yet: its credentials, or why none could be picked.
    pub(super) fn hold_dynamic_user(&mut self, spec: &UnitSpec) -> Result<(), SpawnError> {
        if spec.extras.dynamic_user != Some(true) || self.dynamic_user(spec).is_some() {
            return Ok(());
        }
        let name = dynamic_user::user_name(&spec.name, spec.extras.user.as_deref());
        let held = &self.dynamic_users;
        let sys = &self.sys;
        let id = dynamic_user::pick(&name, |n| {
            held.iter().any(|(_, h)| *h == n) || sys.id_in_use(n)
        })
        .ok_or_else(|| SpawnError {
            text: format!(
                "dynamic user {name}: every UID of {}-{} is in use",
                dynamic_user::FIRST,
                dynamic_user::LAST
            ),
            // systemd's `EXIT_USER`.
            status: Some(217),
        })?;
        self.dynamic_users.push((spec.name.clone(), id));
        Ok(())
    }

    /// The credentials of `spec`'s dynamic user, while it holds one.
    pub(super) fn dynamic_user(&self, spec: &UnitSpec) -> Option<Credentials> {
        if spec.extras.dynamic_user != Some(true) {
            return None;
        }
        let (_, id) = self.dynamic_users.iter().find(|(n, _)| *n == spec.name)?;
        Some(Credentials {
            uid: Some(*id),
            gid: Some(*id),
            groups: Some(vec![*id]),
        })
    }

    /// Gives back the dynamic user of unit `name`, if it holds one (its
    /// run ended).
    pub(super) fn release_dynamic_user(&mut self, name: &str) {
        self.dynamic_users.retain(|(n, _)| n != name);
    }
}
