//! udev's database read through [`Sys`] (docs/systemd-units.md, "Device
//! units"): the devices tagged `systemd` (`/run/udev/tags/systemd/ID`),
//! each found in sysfs by its id (`flotilla_units::udev::db::DbId`: the
//! link `/sys/dev/block/8:0`, the interface whose `ifindex` says it, …)
//! and read from its `uevent` file and its record `/run/udev/data/ID`.
//! The init reads it when it starts following udev and at each reload, as
//! systemd enumerates at start and daemon-reload; a device it cannot find
//! (gone meanwhile) is left out. A few small files per tagged device: the
//! tens a machine has, on `/run` and `/sys`, which never wait on a disk.

use crate::sys::Sys;
use flotilla_units::udev::db::{self, DbId};
use flotilla_units::udev::Device;
use std::path::Path;

/// The tag directory of systemd's devices.
const TAGGED: &str = "/run/udev/tags/systemd";
/// The records.
const DATA: &str = "/run/udev/data";
/// The largest record or `uevent` file read.
const MAX_FILE: usize = 64 << 10;

/// The devices tagged `systemd`, each as udev last described it.
pub fn read(sys: &dyn Sys) -> Vec<Device> {
    let Ok(ids) = sys.read_dir(Path::new(TAGGED)) else {
        return Vec::new();
    };
    let mut out: Vec<Device> = ids
        .iter()
        .filter_map(|id| {
            let id = id.to_str()?;
            let syspath = syspath(sys, &DbId::parse(id)?)?;
            let text = |p: &str| {
                let b = sys.read_file_limited(Path::new(p), MAX_FILE).ok()?;
                Some(String::from_utf8_lossy(&b).into_owned())
            };
            let record = db::parse(&text(&format!("{DATA}/{id}"))?);
            let uevent = db::parse_uevent(&text(&format!("{syspath}/uevent")).unwrap_or_default());
            Some(Device::from_db(&syspath, &uevent, record))
        })
        .collect();
    out.sort_by(|a, b| a.syspath.cmp(&b.syspath));
    out
}

/// The sysfs directory of the device `id` names.
fn syspath(sys: &dyn Sys, id: &DbId) -> Option<String> {
    let link = |l: String| -> Option<String> {
        let t = sys.read_link(Path::new(&l)).ok()?;
        db::resolve_link(&l, t.to_str()?)
    };
    match id {
        DbId::Block(a, b) => link(format!("/sys/dev/block/{a}:{b}")),
        DbId::Char(a, b) => link(format!("/sys/dev/char/{a}:{b}")),
        DbId::Net(index) => {
            let names = sys.read_dir(Path::new("/sys/class/net")).ok()?;
            names.iter().filter_map(|n| n.to_str()).find_map(|n| {
                let f = format!("/sys/class/net/{n}/ifindex");
                let b = sys.read_file_limited(Path::new(&f), 32).ok()?;
                (String::from_utf8_lossy(&b).trim() == index.to_string())
                    .then(|| link(format!("/sys/class/net/{n}")))?
            })
        }
        // A kernel module's directory is no link (`+module:configfs`,
        // which udev's rules tag for `sys-kernel-config.mount`), as
        // sd-device finds it.
        DbId::Other { subsystem, sysname } if subsystem == "module" => {
            let dir = format!("/sys/module/{sysname}");
            sys.read_dir(Path::new(&dir)).ok().map(|_| dir)
        }
        DbId::Other { subsystem, sysname } => {
            let name = sysname.replace('/', "!");
            link(format!("/sys/bus/{subsystem}/devices/{name}"))
                .or_else(|| link(format!("/sys/class/{subsystem}/{name}")))
        }
    }
}
