//! Debian's `systemd-localed` on a real system bus beside
//! `flotilla-busd`: `localectl set-locale` writes Debian's
//! `/etc/default/locale` and has the manager reload, `set-x11-keymap`
//! writes the keyboard's files and has the manager restart
//! `systemd-vconsole-setup.service`, as under systemd (docs/dbus.md, "The
//! daemons beside the manager").

use super::*;

/// `localectl set-locale` and `set-x11-keymap` against localed, whose
/// calls to the manager (`Reload`, `RestartUnit`) are answered: the files
/// in the namespace's `/etc`, and the console's unit (here one that
/// counts its runs, as Debian's would set the host's console) run again.
#[test]
fn localectl_sets_the_locale_and_the_keymap() {
    let dir = TestDir::new();
    let runs = dir.join("vconsole.runs");
    dir.file(
        "units/systemd-vconsole-setup.service",
        &format!(
            "[Service]\nType=oneshot\nRemainAfterExit=yes\n\
             ExecStart=/bin/sh -c 'echo run >> {}'\n",
            runs.display()
        ),
    );
    let _init = started(&dir);
    let bus = dbus_daemon(&dir);
    let _busd = busd_on(&dir, Some(&bus.socket));
    on_the_bus(&bus.socket);
    let _localed = sd_daemon(
        &dir,
        &bus.socket,
        "/lib/systemd/systemd-localed",
        "org.freedesktop.locale1",
    );
    let localectl = |args: &[&str]| on_system_bus(&bus.socket, "localectl --no-pager", args);

    localectl(&["set-locale", "LANG=C.UTF-8", "LC_MESSAGES=C"]).expect(0);
    assert_eq!(
        dir.read("etc/default/locale"),
        "LANG=C.UTF-8\nLC_MESSAGES=C\n"
    );
    let out = localectl(&["status"]);
    out.expect(0);
    assert!(
        out.stdout.contains("System Locale: LANG=C.UTF-8\n")
            && out.stdout.contains("LC_MESSAGES=C\n"),
        "{out:?}"
    );

    localectl(&["set-x11-keymap", "de"]).expect(0);
    assert!(
        dir.read("etc/default/keyboard").contains("XKBLAYOUT=de\n"),
        "{}",
        dir.read("etc/default/keyboard")
    );
    assert_eq!(dir.read("etc/vconsole.conf"), "KEYMAP=de\n");
    wait_for(WAIT, "systemd-vconsole-setup.service run", || {
        std::fs::read_to_string(&runs)
            .ok()
            .filter(|r| r == "run\n")
            .map(|_| ())
    });
    let out = localectl(&["status"]);
    out.expect(0);
    assert!(
        out.stdout.contains("VC Keymap: de\n") && out.stdout.contains("X11 Layout: de\n"),
        "{out:?}"
    );
}
