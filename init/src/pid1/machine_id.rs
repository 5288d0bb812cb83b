//! The machine ID (machine-id(5)) PID 1 sets up before any unit runs, as
//! systemd's PID 1 does (docs/pid1.md, "What PID 1 does at start"): a
//! daemon that starts early (journald names its directory after it) must
//! see the ID the whole boot sees.
//!
//! An ID in `/etc/machine-id` is kept. Otherwise a new one is made (the
//! kernel's random UUID): on a first boot (the file missing or saying
//! `uninitialized`) or where the file cannot be written (a root mounted
//! read-only), it is written to `/run/machine-id` and bound read-only over
//! `/etc/machine-id` for this boot, and Debian's
//! `systemd-machine-id-commit.service` writes it into the file later (once
//! `first-boot-complete.target` is reached, for a first boot); else (an
//! empty file on a writable root, an image made to be run many times) it
//! is written into the file at once.

use std::path::Path;

use crate::sys::{MountRequest, MsFlags, Sys};

const ETC: &str = "/etc/machine-id";
const RUN: &str = "/run/machine-id";
const UUID: &str = "/proc/sys/kernel/random/uuid";

/// Whether `text` is a machine ID: 32 hexadecimal digits, not all zero,
/// and an optional newline.
pub(super) fn is_machine_id(text: &[u8]) -> bool {
    let id = text.strip_suffix(b"\n").unwrap_or(text);
    id.len() == 32 && id.iter().all(u8::is_ascii_hexdigit) && id.iter().any(|&b| b != b'0')
}

/// A machine ID from the kernel's random UUID (`8-4-4-4-12` hexadecimal
/// digits, a version 4 UUID as systemd makes its IDs): its digits, lower
/// case.
pub(super) fn machine_id_of_uuid(uuid: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(uuid).ok()?.trim();
    let id: String = text
        .chars()
        .filter(|&c| c != '-')
        .map(|c| c.to_ascii_lowercase())
        .collect();
    is_machine_id(id.as_bytes()).then_some(id)
}

/// Sets the machine ID up (the module's documentation says how); the
/// console line that says what was done, none when the file had an ID.
pub(super) fn set_up_machine_id(sys: &dyn Sys) -> Option<String> {
    let etc = Path::new(ETC);
    let now = sys.read_file_limited(etc, 64);
    let first_boot = match &now {
        Ok(text) if is_machine_id(text) => return None,
        Ok(text) => text.strip_suffix(b"\n").unwrap_or(text) == b"uninitialized",
        Err(_) => true,
    };
    let id = match sys.read_file_limited(Path::new(UUID), 64) {
        Ok(uuid) => match machine_id_of_uuid(&uuid) {
            Some(id) => id,
            None => return Some(format!("init: no machine ID made: {UUID} holds no UUID")),
        },
        Err(e) => return Some(format!("init: no machine ID made: {e}")),
    };
    let line = format!("{id}\n");
    if !first_boot && sys.write_file(etc, line.as_bytes()).is_ok() {
        return Some(format!("init: machine ID {id} written to {ETC}"));
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
        Ok(()) => format!("init: machine ID {id}: transient, {RUN} bound over {ETC}"),
        Err(e) => format!("init: no machine ID set up: {e}"),
    })
}
