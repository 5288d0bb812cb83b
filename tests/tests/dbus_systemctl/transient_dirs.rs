//! A transient service's `TemporaryFileSystem=` and directory links, as
//! systemd's TEST-34 sends them through Debian's `systemd-run`: the
//! directories (`as`), their links (`StateDirectorySymlink`, `a(sst)`)
//! and the tmpfs (`a(ss)`).

use super::*;

#[test]
fn a_transient_services_tmpfs_holds_its_directory_and_links() {
    let n = format!("flotilla-run-tmpfs-{}", std::process::id());
    let host = |s: &str| PathBuf::from(format!("/var/lib/{n}{s}"));
    let clean = || {
        let _ = std::fs::remove_dir_all(host(""));
        for s in ["-l", "-l2"] {
            let _ = std::fs::remove_file(host(s));
        }
    };
    clean();
    std::fs::create_dir_all(host("")).expect("mkdir");
    std::fs::write(host("/test"), "x").expect("test file");
    let dir = TestDir::new();
    let _init = started(&dir);
    // `--wait` follows the unit on the system bus.
    let bus = dbus_daemon(&dir);
    let _busd = busd_on(&dir, Some(&bus.socket));
    on_the_bus(&bus.socket);
    let run = |args: &[&str]| on_system_bus(&bus.socket, "/usr/bin/systemd-run", args);
    let dirs = format!("StateDirectory={n}:{n}-l");
    let check =
        format!("test -L /var/lib/{n}-l && test -f /var/lib/{n}-l/test && test ! -e /var/lib/dpkg");
    let out = run(&[
        "--wait",
        "-p",
        &dirs,
        "-p",
        "TemporaryFileSystem=/var/lib:ro",
        "/bin/sh",
        "-c",
        &check,
    ]);
    let kept = std::fs::symlink_metadata(host("-l")).is_ok();
    // Without a namespace the link is the host's.
    let dirs2 = format!("StateDirectory={n}:{n}-l2");
    let out2 = run(&["--wait", "-p", &dirs2, "/bin/true"]);
    let link2 = std::fs::read_link(host("-l2"));
    clean();
    out.expect(0);
    assert!(!kept, "the link in the tmpfs reached the host");
    out2.expect(0);
    assert_eq!(link2.expect("the host's link"), PathBuf::from(&n));
}
