//! The machine ID PID 1 sets up before any unit (`machine_id.rs`), with
//! the recording fake: no mount reaches the host.

use super::machine_id::{is_machine_id, machine_id_of_uuid};
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
    assert_eq!(machine_id_of_uuid(UUID.as_bytes()).as_deref(), Some(ID));
    assert_eq!(machine_id_of_uuid(b"not a uuid"), None);
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
