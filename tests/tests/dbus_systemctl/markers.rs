//! `Markers=` (docs/dbus.md, "Markers") with Debian's `/bin/systemctl`:
//! `set-property UNIT Markers=…` as systemd reads it (plain words, or
//! each with `+`/`-`; a bad word refused with the set unchanged), the
//! unit's `Markers` property, and `reload-or-restart --marked`
//! (`EnqueueMarkedJobs`): each marked unit restarted, or reloaded for
//! `needs-reload` alone, its markers gone after; nothing written to a
//! file, so a YAML unit takes markers too (systemd's test 26).

use super::{busd, systemctl, units, Busd};
use flotilla_tests::init::TestDir;
use flotilla_units::state::UnitState;

fn markers(bus: &Busd, unit: &str) -> String {
    let out = systemctl(bus, &["show", "-P", "Markers", unit]);
    out.expect(0);
    out.stdout.trim_end().to_string()
}

#[test]
fn markers_are_set_shown_and_acted_on_by_reload_or_restart_marked() {
    let dir = TestDir::new();
    units(&dir);
    dir.file(
        "units/rl.service",
        "[Service]\nExecStart=/bin/sleep 1000\nExecReload=/bin/true\n",
    );
    let init = dir.start("default");
    init.wait_state("web", UnitState::Running);
    let bus = busd(&dir);
    systemctl(&bus, &["start", "extra.service", "rl.service"]).expect(0);
    let (extra, rl, web) = (
        init.pid_of("extra.service"),
        init.pid_of("rl.service"),
        init.pid_of("web"),
    );

    // Nothing marked: nothing done.
    assert_eq!(markers(&bus, "extra.service"), "");
    systemctl(&bus, &["reload-or-restart", "--marked"]).expect(0);
    assert_eq!(init.pid_of("extra.service"), extra);

    let set = |unit: &str, value: &str| {
        systemctl(&bus, &["set-property", unit, &format!("Markers={value}")])
    };
    set("extra.service", "needs-restart").expect(0);
    assert_eq!(markers(&bus, "extra.service"), "needs-restart");
    set("extra.service", "+needs-reload").expect(0);
    assert_eq!(markers(&bus, "extra.service"), "needs-reload needs-restart");
    set("extra.service", "-needs-reload").expect(0);
    assert_eq!(markers(&bus, "extra.service"), "needs-restart");
    for bad in ["needs-stop", "+needs-reload needs-restart"] {
        let out = set("extra.service", bad);
        assert_ne!(out.code, 0, "{bad}: {out:?}");
        assert!(out.stderr.contains("marker"), "{bad}: {out:?}");
        assert_eq!(markers(&bus, "extra.service"), "needs-restart", "{bad}");
    }
    set("rl.service", "needs-reload").expect(0);
    // A YAML unit has no file for drop-ins; its markers are no file's.
    set("web.service", "needs-reload").expect(0);
    assert_eq!(markers(&bus, "web.service"), "needs-reload");
    assert!(
        !dir.join("units/extra.service.d").exists(),
        "a marker written to a file"
    );

    // It returns once every job ended (systemctl waits for them).
    systemctl(&bus, &["reload-or-restart", "--marked"]).expect(0);
    assert_ne!(init.pid_of("extra.service"), extra, "not restarted");
    assert_eq!(init.unit("extra.service").state, UnitState::Running);
    // needs-reload alone: reloaded where it can be, restarted where not.
    assert_eq!(init.pid_of("rl.service"), rl, "rl.service restarted");
    assert_ne!(init.pid_of("web"), web, "web not restarted");
    for unit in ["extra.service", "rl.service", "web.service"] {
        assert_eq!(markers(&bus, unit), "", "{unit}'s markers left");
    }
    let reloads = init.unit("rl.service");
    assert_eq!(reloads.state, UnitState::Running, "{reloads:?}");

    // A marked unit gone from the set since is no longer marked.
    set("bad.service", "needs-restart").expect(0);
    std::fs::remove_file(dir.join("units/bad.service")).expect("rm");
    systemctl(&bus, &["daemon-reload"]).expect(0);
    systemctl(&bus, &["reload-or-restart", "--marked"]).expect(0);
}
