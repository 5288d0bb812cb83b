//! The units systemd lists that flotilla's init keeps no unit for, added
//! to `ListUnits` and its kin after the init's own (docs/dbus.md, "Units
//! the init does not keep"):
//!
//! - a mount unit for every mount point of the mount table but the API
//!   file systems' (`-.mount`, `run-user-0.mount`, `sys-kernel-debug.mount`),
//!   as [`crate::mounted`] answers each by its name;
//! - the slices the init's units run in (`system.slice`,
//!   `system-getty.slice`): each the init's own status of it, loaded as
//!   `systemctl status` of a slice loads it;
//! - `init.scope`, the manager itself, when the init is PID 1.

use crate::answer::{owned_path, UnitRow};
use crate::dict::Props;
use crate::error::BusError;
use crate::escape::{job_path, unit_path};
use crate::hub::Hub;
use crate::model::{self, systemd_name};
use flotilla_units::escape::name_from_path;
use flotilla_units::mountinfo::{self, MountEntry};
use flotilla_units::protocol::{Reply, Request, UnitStatus, SLICE_SOURCE};
use std::collections::BTreeSet;
use zbus::zvariant::Value;

/// The manager's own unit, as systemd names it.
pub const INIT_SCOPE: &str = "init.scope";

/// `init.scope`'s description, systemd's.
pub const INIT_SCOPE_DESCRIPTION: &str = "System and Service Manager";

/// A `ListUnits` row of a unit the init has.
pub fn unit_row(hub: &Hub, s: &UnitStatus) -> UnitRow {
    let name = systemd_name(s);
    let (job_id, job_kind, job) = match hub.job_of(&name) {
        Some((id, j)) => (id, j.kind.to_string(), job_path(id)),
        None => (0, String::new(), "/".to_string()),
    };
    (
        name.clone(),
        s.description.clone().unwrap_or_else(|| name.clone()),
        s.load_state().to_string(),
        model::active_of(s).to_string(),
        model::sub_of(s).to_string(),
        model::following(s),
        owned_path(&unit_path(&name)),
        job_id,
        job_kind,
        owned_path(&job),
    )
}

/// The rows systemd has beside those of the init's `units`: the mount
/// points', the active slices' the units run in, and `init.scope`'s.
pub async fn extra_rows(hub: &Hub, units: &[UnitStatus]) -> Result<Vec<UnitRow>, BusError> {
    let have: BTreeSet<String> = units.iter().map(systemd_name).collect();
    let mut rows = crate::mounted::table()
        .map(|text| mounts(&text, &have))
        .unwrap_or_default();
    let groups: Vec<String> = units
        .iter()
        .filter_map(|s| s.pid)
        .filter_map(crate::procs::cgroup_of)
        .collect();
    for name in slices(groups.iter().map(String::as_str)) {
        if have.contains(&name) {
            continue;
        }
        if let Some(s) = slice(hub, &name).await? {
            rows.push(unit_row(hub, &s));
        }
    }
    if !have.contains(INIT_SCOPE) && is_pid1(hub).await? {
        rows.push(init_scope_row());
    }
    Ok(rows)
}

/// `ListUnitsByNames`' row of `name`: the init's unit, a mount point's,
/// or `init.scope`'s; none for a name nothing stands for.
pub async fn row_by_name(hub: &Hub, name: &str) -> Result<Option<UnitRow>, BusError> {
    if let Some(s) = hub.find(name).await? {
        return Ok(Some(unit_row(hub, &s)));
    }
    if let Some(e) = crate::mounted::find(name) {
        return Ok(Some(mount_row(name, &e)));
    }
    if name == INIT_SCOPE && is_pid1(hub).await? {
        return Ok(Some(init_scope_row()));
    }
    Ok(None)
}

/// `init.scope`'s row: the manager, always running.
fn init_scope_row() -> UnitRow {
    active_row(INIT_SCOPE, INIT_SCOPE_DESCRIPTION.to_string(), "running")
}

/// Whether the init is PID 1.
pub async fn is_pid1(hub: &Hub) -> Result<bool, BusError> {
    Ok(hub.lasting().await?.pid1)
}

/// The slice `name` as the init has it when a unit runs in it (its cgroup
/// directory exists), loaded from its files and drop-ins so that it has
/// its description (`System Slice`, `Slice /system/getty`), as
/// `systemctl status` of it loads it; none when its directory is not
/// the init's (a level above the init's own cgroup).
async fn slice(hub: &Hub, name: &str) -> Result<Option<UnitStatus>, BusError> {
    let Some(s) = hub.find(name).await? else {
        return Ok(None);
    };
    if s.source != SLICE_SOURCE {
        return Ok(Some(s));
    }
    let load = Request::Load {
        unit: name.to_string(),
    };
    match hub.ask(load).await? {
        Reply::Accepted { .. } => Ok(hub.find(name).await?.or(Some(s))),
        _ => Ok(Some(s)),
    }
}

/// `init.scope`'s unit and scope interfaces: the manager, perpetual,
/// in the cgroup the init itself runs in.
pub fn init_scope() -> Vec<(&'static str, Props)> {
    let cgroup = crate::procs::cgroup_of(1).unwrap_or_else(|| "/".to_string());
    vec![
        (
            "org.freedesktop.systemd1.Scope",
            vec![
                ("ControlGroup", Value::from(cgroup)),
                ("Result", Value::from("success")),
                ("Controller", Value::from("")),
            ],
        ),
        (
            "org.freedesktop.systemd1.Unit",
            crate::fixed::unit(
                INIT_SCOPE,
                INIT_SCOPE_DESCRIPTION.to_string(),
                "running",
                true,
            ),
        ),
    ]
}

/// A row of a unit that is loaded and active in `sub`, with no job.
pub fn active_row(name: &str, description: String, sub: &str) -> UnitRow {
    (
        name.to_string(),
        description,
        "loaded".to_string(),
        "active".to_string(),
        sub.to_string(),
        String::new(),
        owned_path(&unit_path(name)),
        0,
        String::new(),
        owned_path("/"),
    )
}

/// The row of the mount unit `name` of the mount `e`.
fn mount_row(name: &str, e: &MountEntry) -> UnitRow {
    active_row(name, crate::mounted::description(name, e), "mounted")
}

/// The unit name of a mount point systemd keeps a unit for.
pub fn mount_unit_name(e: &MountEntry) -> Option<String> {
    if !mountinfo::entry_has_unit(e) {
        return None;
    }
    name_from_path(e.mount_point.to_str()?, "mount").ok()
}

/// The mount units of the mount table `text` that `have` (the init's
/// units) does not name, each once, in the table's order.
pub fn mounts(text: &[u8], have: &BTreeSet<String>) -> Vec<UnitRow> {
    let mut seen = BTreeSet::new();
    mountinfo::entries(text)
        .filter_map(|e| {
            let name = mount_unit_name(&e)?;
            if have.contains(&name) || !seen.insert(name.clone()) {
                return None;
            }
            Some(mount_row(&name, &e))
        })
        .collect()
}

/// The slices of the cgroups `groups` (each a unit's, `/system.slice/
/// system-getty.slice/getty@tty1.service`): every level's that is named as
/// a slice, in name order. Levels above the init's own base may be among
/// them; the init answers only those below it.
pub fn slices<'a>(groups: impl Iterator<Item = &'a str>) -> BTreeSet<String> {
    groups
        .flat_map(|g| g.split('/'))
        .filter(|c| c.len() > ".slice".len() && c.ends_with(".slice"))
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;

    const TABLE: &[u8] = b"\
21 1 254:1 / / rw,relatime shared:1 - ext4 /dev/vda1 rw\n\
22 21 0:21 / /proc rw shared:5 - proc proc rw\n\
23 21 0:22 / /sys rw shared:6 - sysfs sysfs rw\n\
24 23 0:23 / /sys/fs/cgroup rw shared:7 - cgroup2 cgroup2 rw\n\
25 23 0:24 / /sys/kernel/debug rw shared:8 - debugfs debugfs rw\n\
26 21 0:25 / /run rw shared:9 - tmpfs tmpfs rw\n\
27 26 0:26 / /run/user/0 rw shared:10 - tmpfs tmpfs rw\n\
28 21 0:27 / /dev rw shared:2 - devtmpfs udev rw\n\
29 28 0:28 / /dev/mqueue rw shared:11 - mqueue mqueue rw\n\
30 21 0:29 / /srv rw shared:12 - tmpfs a rw\n\
31 30 0:30 / /srv rw shared:13 - tmpfs b rw\n\
32 21 0:31 / /mnt/auto rw shared:14 - autofs systemd-1 rw\n";

    #[test]
    fn every_mount_point_but_the_api_file_systems_is_listed_once() {
        let have = BTreeSet::from(["dev-mqueue.mount".to_string()]);
        let rows = mounts(TABLE, &have);
        let got: Vec<(&str, &str, &str, &str)> = rows
            .iter()
            .map(|r| (r.0.as_str(), r.1.as_str(), r.3.as_str(), r.4.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                ("-.mount", "Root Mount", "active", "mounted"),
                (
                    "sys-kernel-debug.mount",
                    "/sys/kernel/debug",
                    "active",
                    "mounted"
                ),
                ("run-user-0.mount", "/run/user/0", "active", "mounted"),
                ("srv.mount", "/srv", "active", "mounted"),
            ]
        );
    }

    #[test]
    fn the_slices_are_every_level_named_as_one() {
        let groups = [
            "/system.slice/system-getty.slice/getty@tty1.service",
            "/system.slice/cron.service",
            "/user.slice/user-0.slice/session-1.scope",
            "/init.scope",
            "/",
            "/odd/.slice/x.service",
        ];
        let got: Vec<String> = slices(groups.iter().copied()).into_iter().collect();
        assert_eq!(
            got,
            [
                "system-getty.slice",
                "system.slice",
                "user-0.slice",
                "user.slice"
            ]
        );
    }
}
