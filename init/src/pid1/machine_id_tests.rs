//! The machine ID PID 1 sets up before any unit (`machine_id.rs`), with
//! the recording fake: no mount reaches the host.

use super::machine_id::{is_machine_id, machine_id_of_id128, new_machine_id};
use super::*;
use crate::sys::fake::{Call, FakeSys, Op};

const UUID: &str = "6F1C2D3E-4A5B-4C6D-8E7F-0123456789AB\n";
const ID: &str = "6f1c2d3e4a5b4c6d8e7f0123456789ab";

#[test]
fn a_machine_id_is_32_hex_digits_and_the_kernels_uuid_makes_one() {
    assert!(is_machine_id(b"0123456789abcdef0123456789abcdef\n"));
    assert!(is_machine_id(b"0123456789ABCDEF0123456789abcdef"));
    assert!(!is_machine_id(b"uninitialized\n"));
    assert!(!is_machine_id(b""));
    assert!(!is_machine_id(&[b'0'; 32]));
    assert!(!is_machine_id(b"0123456789abcdef0123456789abcdeg"));
    assert_eq!(machine_id_of_id128(UUID.as_bytes()).as_deref(), Some(ID));
    assert_eq!(machine_id_of_id128(ID.as_bytes()).as_deref(), Some(ID));
    assert_eq!(machine_id_of_id128(b"not a uuid"), None);
    // A UUID's dashes in their places only, and never the null ID.
    assert_eq!(
        machine_id_of_id128(b"6f1c2d3e4a5b-4c6d-8e7f-0123-456789ab"),
        None
    );
    assert_eq!(
        machine_id_of_id128(b"00000000-0000-0000-0000-000000000000"),
        None
    );
}

/// A fake PID 1 on a machine whose `/etc/machine-id` holds `etc` (`None`:
/// no such file), booted; its calls.
fn booted(etc: Option<&str>, read_only: bool) -> (FakeSys, Vec<Call>) {
    let sys = FakeSys::pid1();
    sys.set_file("/proc/self/mountinfo", "");
    sys.set_file("/proc/sys/kernel/random/uuid", UUID);
    if let Some(text) = etc {
        sys.set_file("/etc/machine-id", text);
    }
    if read_only {
        // Its first write, the one to /etc/machine-id.
        sys.fail_next(
            Op::WriteFile,
            crate::sys::SysError::Read {
                path: "/etc/machine-id".into(),
                errno: Os(Errno::EROFS),
            },
        );
    }
    boot(&sys);
    let calls = sys.calls();
    (sys, calls)
}

fn text(sys: &FakeSys, path: &str) -> String {
    String::from_utf8(sys.read_file_limited(Path::new(path), 64).unwrap()).unwrap()
}

/// `/run/machine-id` bound read-only over `/etc/machine-id`.
fn bound_over(calls: &[Call]) -> bool {
    let binds: Vec<(Option<String>, MsFlags)> = calls
        .iter()
        .filter_map(|c| match c {
            Call::Mount {
                source,
                target,
                flags,
                ..
            } if target == Path::new("/etc/machine-id") => Some((source.clone(), *flags)),
            _ => None,
        })
        .collect();
    binds
        == [
            (Some("/run/machine-id".to_string()), MsFlags::MS_BIND),
            (
                None,
                MsFlags::MS_BIND | MsFlags::MS_REMOUNT | MsFlags::MS_RDONLY,
            ),
        ]
}

fn wrote(calls: &[Call], path: &str) -> bool {
    calls.contains(&Call::WriteFile(path.into()))
}

#[test]
fn an_id_in_the_file_is_kept() {
    let (_, calls) = booted(Some("0123456789abcdef0123456789abcdef\n"), false);
    assert!(!wrote(&calls, "/etc/machine-id") && !wrote(&calls, "/run/machine-id"));
    assert!(!bound_over(&calls));
}

/// A first boot (`uninitialized`, or no file): a transient ID, which
/// Debian's `systemd-machine-id-commit.service` writes into the file later.
#[test]
fn a_first_boot_gets_a_transient_id_bound_over_the_file() {
    let (sys, calls) = booted(Some("uninitialized\n"), false);
    assert_eq!(text(&sys, "/run/machine-id"), format!("{ID}\n"));
    assert!(!wrote(&calls, "/etc/machine-id"));
    assert!(bound_over(&calls));
    // No file: an empty one is made to bind over.
    let (sys, calls) = booted(None, false);
    assert_eq!(text(&sys, "/etc/machine-id"), "");
    assert_eq!(text(&sys, "/run/machine-id"), format!("{ID}\n"));
    assert!(bound_over(&calls));
}

/// An empty file (an image made to be run many times) gets the ID written
/// into it, or, on a read-only root, a transient one.
#[test]
fn an_empty_file_gets_the_id_written_or_bound_over_it() {
    let (sys, calls) = booted(Some(""), false);
    assert_eq!(text(&sys, "/etc/machine-id"), format!("{ID}\n"));
    assert!(!bound_over(&calls));
    let (sys, calls) = booted(Some(""), true);
    assert_eq!(text(&sys, "/etc/machine-id"), "");
    assert!(bound_over(&calls));
    assert_eq!(text(&sys, "/run/machine-id"), format!("{ID}\n"));
}

/// The kernel's random UUID a fake machine would give, and a UUID of its
/// firmware.
const VM_UUID: &str = "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d\n";
const VM_ID: &str = "0a1b2c3d4e5f4a6b8c7d9e0f1a2b3c4d";

/// A fake whose firmware says `vendor` and holds the UUID `uuid`.
fn firmware(vendor: &str, uuid: &str) -> FakeSys {
    let sys = FakeSys::pid1();
    sys.set_file("/proc/sys/kernel/random/uuid", UUID);
    sys.set_file("/sys/class/dmi/id/sys_vendor", vendor);
    sys.set_file(
        "/sys/class/dmi/id/product_name",
        "Standard PC (Q35 + ICH9, 2009)\n",
    );
    sys.set_file("/sys/class/dmi/id/product_uuid", uuid);
    sys
}

/// As systemd: a KVM, QEMU or EC2 machine takes its firmware's UUID
/// (qemu's `-uuid`); one that is all zero or all `f` (qemu without
/// `-uuid` gives the null one), or on bare metal, is not taken.
#[test]
fn a_virtual_machine_takes_its_firmwares_uuid() {
    let sys = firmware("QEMU\n", VM_UUID);
    assert_eq!(
        new_machine_id(&sys, Place::Machine),
        Ok((VM_ID.to_string(), "the virtual machine's UUID"))
    );
    for null in [
        "00000000-0000-0000-0000-000000000000\n",
        "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF\n",
    ] {
        let sys = firmware("QEMU\n", null);
        assert_eq!(
            new_machine_id(&sys, Place::Machine),
            Ok((ID.to_string(), "random"))
        );
    }
    let sys = firmware("Dell Inc.\n", VM_UUID);
    assert_eq!(
        new_machine_id(&sys, Place::Machine),
        Ok((ID.to_string(), "random"))
    );
    // A container does not take its host's.
    assert_eq!(
        new_machine_id(&firmware("QEMU\n", VM_UUID), Place::Container),
        Ok((ID.to_string(), "random"))
    );
    // Booted: the console says where the ID came from.
    let sys = firmware("QEMU\n", VM_UUID);
    sys.set_file("/proc/self/mountinfo", "");
    sys.set_file("/etc/machine-id", "uninitialized\n");
    boot(&sys);
    assert_eq!(text(&sys, "/run/machine-id"), format!("{VM_ID}\n"));
    assert!(
        sys.console_lines().iter().any(|l| l.contains(&format!(
            "machine ID {VM_ID} (the virtual machine's UUID): transient"
        ))),
        "{:?}",
        sys.console_lines()
    );
}

/// A container takes the `container_uuid` its manager put in PID 1's
/// environment (libvirt's LXC driver does), in either form systemd reads.
#[test]
fn a_container_takes_its_managers_uuid() {
    for uuid in [VM_UUID.trim_end(), VM_ID] {
        let sys = FakeSys::pid1();
        sys.set_file("/proc/sys/kernel/random/uuid", UUID);
        sys.set_file(
            "/proc/1/environ",
            format!("container=lxc-libvirt\0container_uuid={uuid}\0HOME=/\0"),
        );
        assert_eq!(
            new_machine_id(&sys, Place::Container),
            Ok((VM_ID.to_string(), "the container's UUID"))
        );
        // Not on a machine, and not a bad one.
        assert_eq!(
            new_machine_id(&sys, Place::Machine),
            Ok((ID.to_string(), "random"))
        );
    }
    let sys = FakeSys::pid1();
    sys.set_file("/proc/sys/kernel/random/uuid", UUID);
    sys.set_file("/proc/1/environ", "container_uuid=nonsense\0");
    assert_eq!(
        new_machine_id(&sys, Place::Container),
        Ok((ID.to_string(), "random"))
    );
}

/// D-Bus's ID from before systemd comes first, unless its file is a link
/// (Debian links it to `/etc/machine-id`).
#[test]
fn d_bus_s_old_id_comes_first_unless_it_is_a_link() {
    let sys = firmware("QEMU\n", VM_UUID);
    sys.set_file(
        "/var/lib/dbus/machine-id",
        "0123456789ABCDEF0123456789abcdef\n",
    );
    assert_eq!(
        new_machine_id(&sys, Place::Machine),
        Ok((
            "0123456789abcdef0123456789abcdef".to_string(),
            "D-Bus's machine ID"
        ))
    );
    sys.set_link("/var/lib/dbus/machine-id", "/etc/machine-id");
    assert_eq!(
        new_machine_id(&sys, Place::Machine),
        Ok((VM_ID.to_string(), "the virtual machine's UUID"))
    );
}
