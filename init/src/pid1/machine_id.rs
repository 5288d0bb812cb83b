//! The machine ID (machine-id(5)) PID 1 sets up before any unit runs, as
//! systemd's PID 1 does (docs/pid1.md, "What PID 1 does at start"): a
//! daemon that starts early (journald names its directory after it) must
//! see the ID the whole boot sees.
//!
//! An ID in `/etc/machine-id` is kept. Otherwise a new one is taken where
//! systemd takes it ([`new_machine_id`]): D-Bus's old ID, a container's
//! `container_uuid`, a virtual machine's UUID, else the kernel's random
//! UUID. On a first boot (the file missing or saying `uninitialized`) or
//! where the file cannot be written (a root mounted read-only), it is
//! written to `/run/machine-id` and bound read-only over
//! `/etc/machine-id` for this boot, and Debian's
//! `systemd-machine-id-commit.service` writes it into the file later (once
//! `first-boot-complete.target` is reached, for a first boot); else (an
//! empty file on a writable root, an image made to be run many times) it
//! is written into the file at once.

use std::path::Path;

use flotilla_units::detect_virt::vm_of_dmi;

use super::Place;
use crate::sys::{MountRequest, MsFlags, Sys};

const ETC: &str = "/etc/machine-id";
const RUN: &str = "/run/machine-id";
const UUID: &str = "/proc/sys/kernel/random/uuid";
/// D-Bus's machine ID from before `/etc/machine-id` (often a link to it).
const DBUS: &str = "/var/lib/dbus/machine-id";
/// PID 1's environment: a container manager's `container_uuid` (the init
/// reads its own as systemd reads PID 1's).
const ENVIRON: &str = "/proc/1/environ";
/// The UUID a virtual machine's firmware gives it (qemu's `-uuid`), and
/// where POWER's device tree has it.
const PRODUCT_UUID: &str = "/sys/class/dmi/id/product_uuid";
const DEVICE_TREE_UUID: &str = "/proc/device-tree/vm,uuid";

/// Whether `text` is a machine ID: 32 hexadecimal digits, not all zero,
/// and an optional newline.
pub(super) fn is_machine_id(text: &[u8]) -> bool {
    let id = text.strip_suffix(b"\n").unwrap_or(text);
    id.len() == 32 && id.iter().all(u8::is_ascii_hexdigit) && id.iter().any(|&b| b != b'0')
}

/// A machine ID from a 128-bit ID as systemd reads one
/// (`sd_id128_from_string`): 32 hexadecimal digits, or a UUID's 36
/// characters (`8-4-4-4-12`), and an optional newline; its digits, lower
/// case. `None` for anything else, and for the null ID.
pub(super) fn machine_id_of_id128(text: &[u8]) -> Option<String> {
    let text = text.strip_suffix(b"\n").unwrap_or(text);
    let digits: Vec<u8> = match text.len() {
        32 => text.to_vec(),
        36 if [8, 13, 18, 23].iter().all(|&i| text.get(i) == Some(&b'-')) => {
            text.iter().copied().filter(|&b| b != b'-').collect()
        }
        _ => return None,
    };
    is_machine_id(&digits).then(|| String::from_utf8_lossy(&digits).to_ascii_lowercase())
}

/// A new machine ID and where it came from, as systemd's
/// `generate_machine_id()` takes one (`src/shared/machine-id-setup.c`):
/// D-Bus's ID from before systemd (unless the file is a link: Debian
/// links it to `/etc/machine-id`); in a container, the `container_uuid`
/// its manager set (libvirt, LXC); in a KVM, QEMU or EC2 virtual machine,
/// its firmware's UUID (not all zero, not all `f`); else the kernel's
/// random UUID.
pub(super) fn new_machine_id(
    sys: &dyn Sys,
    place: Place,
) -> Result<(String, &'static str), String> {
    let read = |path: &str| sys.read_file_limited(Path::new(path), 64 * 1024);
    if sys.read_link(Path::new(DBUS)).is_err() {
        // 32 digits only, as systemd reads it there.
        let dbus = read(DBUS).ok().filter(|t| is_machine_id(t));
        if let Some(id) = dbus.and_then(|t| machine_id_of_id128(&t)) {
            return Ok((id, "D-Bus's machine ID"));
        }
    }
    match place {
        Place::Container => {
            let environ = read(ENVIRON).unwrap_or_default();
            let uuid = environ
                .split(|&b| b == 0)
                .find_map(|v| v.strip_prefix(b"container_uuid="));
            if let Some(id) = uuid.and_then(machine_id_of_id128) {
                return Ok((id, "the container's UUID"));
            }
        }
        Place::Machine => {
            let dmi = |f: &str| {
                String::from_utf8_lossy(
                    &read(&format!("/sys/class/dmi/id/{f}")).unwrap_or_default(),
                )
                .into_owned()
            };
            let vm = vm_of_dmi(&dmi("sys_vendor"), &dmi("product_name"));
            if matches!(vm, Some("kvm" | "qemu" | "amazon")) {
                // A UUID's form only, as systemd reads it there.
                let uuid = read(PRODUCT_UUID).or_else(|_| read(DEVICE_TREE_UUID));
                let id = uuid
                    .ok()
                    .filter(|u| u.trim_ascii_end().len() == 36)
                    .and_then(|u| machine_id_of_id128(&u));
                if let Some(id) = id.filter(|id| id.bytes().any(|b| b != b'f')) {
                    return Ok((id, "the virtual machine's UUID"));
                }
            }
        }
    }
    let uuid = read(UUID).map_err(|e| e.to_string())?;
    machine_id_of_id128(uuid.trim_ascii_end())
        .map(|id| (id, "random"))
        .ok_or_else(|| format!("{UUID} holds no UUID"))
}

/// Sets the machine ID up (the module's documentation says how); the
/// console line that says what was done, none when the file had an ID.
pub(super) fn set_up_machine_id(sys: &dyn Sys, place: Place) -> Option<String> {
    let etc = Path::new(ETC);
    let now = sys.read_file_limited(etc, 64);
    let first_boot = match &now {
        Ok(text) if is_machine_id(text) => return None,
        Ok(text) => text.strip_suffix(b"\n").unwrap_or(text) == b"uninitialized",
        Err(_) => true,
    };
    let (id, source) = match new_machine_id(sys, place) {
        Ok(made) => made,
        Err(e) => return Some(format!("init: no machine ID made: {e}")),
    };
    let line = format!("{id}\n");
    if !first_boot && sys.write_file(etc, line.as_bytes()).is_ok() {
        return Some(format!("init: machine ID {id} ({source}) written to {ETC}"));
    }
    if now.is_err() {
        // The mount point of the transient ID (a root that cannot take
        // it gets no ID, as under systemd).
        let _ = sys.write_file(etc, b"");
    }
    let bound = sys
        .write_file(Path::new(RUN), line.as_bytes())
        .and_then(|()| {
            sys.mount(&MountRequest {
                source: Some(RUN),
                target: etc,
                fstype: None,
                flags: MsFlags::MS_BIND,
                data: None,
            })
        })
        .and_then(|()| {
            sys.mount(&MountRequest {
                source: None,
                target: etc,
                fstype: None,
                flags: MsFlags::MS_BIND | MsFlags::MS_REMOUNT | MsFlags::MS_RDONLY,
                data: None,
            })
        });
    Some(match bound {
        Ok(()) => format!("init: machine ID {id} ({source}): transient, {RUN} bound over {ETC}"),
        Err(e) => format!("init: no machine ID set up: {e}"),
    })
}
