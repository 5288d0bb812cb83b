//! Real-kernel tests of the search path's watch (`fs/paths.rs`,
//! `crate::pathstamp::watch_all`): a file written in a watched directory, a
//! directory made where a watched one did not exist, a watched file
//! edited in place each show as a change; nothing else does.

use super::*;
use std::path::Path;

#[test]
fn the_search_paths_watch_sees_what_a_listing_would() {
    let sys = RealSys::new();
    let dir = tempfile::tempdir().unwrap();
    let units = dir.path().join("system");
    std::fs::create_dir(&units).unwrap();
    let elsewhere = dir.path().join("app.service");
    std::fs::write(&elsewhere, "[Service]\n").unwrap();
    // Not there yet: watched from the directory above it.
    let dropins = units.join("app.service.d");
    let paths: [&Path; 3] = [&units, &dropins, &elsewhere];
    let fd = crate::pathstamp::watch_all(&sys, &paths).unwrap();
    assert!(!sys.path_stamp_changed(fd.as_fd()));
    // A read changes nothing.
    std::fs::read_to_string(&elsewhere).unwrap();
    std::fs::read_dir(&units).unwrap().for_each(drop);
    assert!(!sys.path_stamp_changed(fd.as_fd()));
    // A unit written.
    std::fs::write(units.join("b.service"), "[Service]\n").unwrap();
    assert!(sys.path_stamp_changed(fd.as_fd()));
    assert!(!sys.path_stamp_changed(fd.as_fd()), "asked once, told once");
    // The drop-in directory made.
    std::fs::create_dir(&dropins).unwrap();
    assert!(sys.path_stamp_changed(fd.as_fd()));
    // The file a link names, edited in place.
    std::fs::write(&elsewhere, "[Service]\nExecStart=/bin/true\n").unwrap();
    assert!(sys.path_stamp_changed(fd.as_fd()));
}

/// A load that watches as it reads (`unitdir::load_units_watched`): each
/// directory it listed, the drop-in directories among them, is on the
/// watch from before its listing, so a change anywhere in what it read
/// shows, and the load itself shows none.
#[test]
fn a_watched_load_sees_each_change_to_what_it_read() {
    let sys = RealSys::new();
    let dir = tempfile::tempdir().unwrap();
    let units = dir.path().join("system");
    let dropins = units.join("app.service.d");
    std::fs::create_dir_all(&dropins).unwrap();
    std::fs::write(
        units.join("app.service"),
        "[Service]\nExecStart=/bin/true\n",
    )
    .unwrap();
    std::fs::write(dropins.join("a.conf"), "[Unit]\nDescription=A\n").unwrap();
    let settings = crate::args::Settings::new(&units, "app.service", dir.path().join("ctl"));
    let fd = sys.path_stamp_instance().unwrap();
    let loaded =
        crate::unitdir::load_units_watched(&sys, &settings, &[], Some(fd.as_fd())).unwrap();
    assert!(loaded.stamp.watched);
    assert!(loaded.units.iter().any(|(u, _)| u.name == "app.service"));
    assert!(!sys.path_stamp_changed(fd.as_fd()), "the load itself");
    // A drop-in edited in place, in a directory the load listed.
    std::fs::write(dropins.join("a.conf"), "[Unit]\nDescription=B\n").unwrap();
    assert!(sys.path_stamp_changed(fd.as_fd()));
    // The unit file edited in place.
    std::fs::write(
        units.join("app.service"),
        "[Service]\nExecStart=/bin/false\n",
    )
    .unwrap();
    assert!(sys.path_stamp_changed(fd.as_fd()));
    // A `.wants/` directory made.
    std::fs::create_dir(units.join("app.service.wants")).unwrap();
    assert!(sys.path_stamp_changed(fd.as_fd()));
}
