//! `NotifyAccess=`: which processes of a service get the notify socket
//! (`notify_access.rs` in flotilla-units has the rules).

use super::{fake_with, Harness, UNITS};
use crate::sys::ExitStatus;

/// The environment of the spawns of `svc.service` written as `text`:
/// whether each role got `NOTIFY_SOCKET`.
fn sockets(text: &str) -> Vec<(String, bool)> {
    let sys = fake_with(&[]);
    sys.set_file(format!("{UNITS}/svc.service"), text);
    sys.hold_clock(true);
    let mut h = Harness::start(sys, "svc.service");
    // The pre command ends: the main process is spawned.
    let pre = h.sys().spawns()[0]
        .pid
        .unwrap_or_else(|| panic!("the pre command has no PID"));
    h.sys().exit(pre, ExitStatus::Exited(0));
    h.turn_until("the main process", |h| h.sys().spawns().len() == 2);
    h.sys()
        .spawns()
        .iter()
        .map(|s| (s.argv[0].clone(), s.env_var("NOTIFY_SOCKET").is_some()))
        .collect()
}

/// systemd's test 20: a `Type=oneshot` service with `NotifyAccess=all`
/// runs `systemd-notify MAINPID=…` from its script, which needs the
/// socket; without `NotifyAccess=` a oneshot gets none; `exec` and `all`
/// give it to the commands run for the unit too, `main` to its main
/// process only.
#[test]
fn the_socket_goes_where_the_access_reaches() {
    let unit = |access: &str| {
        format!("[Service]\nType=oneshot\nExecStartPre=/bin/pre\nExecStart=/bin/main\n{access}")
    };
    for (access, pre, main) in [
        ("", false, false),
        ("NotifyAccess=none\n", false, false),
        ("NotifyAccess=main\n", false, true),
        ("NotifyAccess=exec\n", true, true),
        ("NotifyAccess=all\n", true, true),
    ] {
        let got = sockets(&unit(access));
        assert_eq!(
            got,
            [
                ("/bin/pre".to_string(), pre),
                ("/bin/main".to_string(), main)
            ],
            "{access:?}"
        );
    }
}
