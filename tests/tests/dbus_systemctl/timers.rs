//! `systemctl list-timers -a` with Debian's `/bin/systemctl`: every unit
//! it lists as a timer is served with the `org.freedesktop.systemd1.Timer`
//! interface it then reads (`NextElapseUSec…`, `LastTriggerUSec`), also a
//! masked timer that has no file but its link to `/dev/null` (systemd's
//! test 07 leaves `my.timer` so; test 26 then lists the timers).

use super::{busd, started, systemctl};
use flotilla_tests::init::TestDir;

#[test]
fn list_timers_reads_every_timer_listed_also_a_masked_one() {
    let dir = TestDir::new();
    dir.file(
        "units/tick.timer",
        "[Timer]\nOnBootSec=1h\nUnit=extra.service\n",
    );
    std::fs::create_dir_all(dir.join("units")).expect("units dir");
    std::os::unix::fs::symlink("/dev/null", dir.join("units/masked.timer"))
        .expect("the mask's link");
    let _init = started(&dir);
    let bus = busd(&dir);
    systemctl(&bus, &["start", "tick.timer"]).expect(0);
    let out = systemctl(&bus, &["list-timers", "-a", "-l", "--no-legend"]);
    out.expect(0);
    let listed: Vec<&str> = out
        .stdout
        .lines()
        .filter_map(|l| l.split_whitespace().find(|w| w.ends_with(".timer")))
        .collect();
    assert!(listed.contains(&"tick.timer"), "{out:?}");
    assert!(listed.contains(&"masked.timer"), "{out:?}");
    let out = systemctl(&bus, &["show", "-P", "LoadState", "masked.timer"]);
    assert_eq!(out.stdout, "masked\n", "{out:?}");
}
