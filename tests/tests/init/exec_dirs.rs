//! The unit's directories as systemd's TEST-34 moves them about, under
//! the init: `TemporaryFileSystem=` over `/var/lib` with a state
//! directory put back on it, its `NAME:LINK` link made in the tmpfs only
//! (the host's `/var/lib` untouched), a dynamic user's link to its
//! `private/` directory made there too; a link of a unit without a
//! namespace made on the host; and a directory a dynamic user left below
//! `private/` moved back when the unit runs without one.

use std::path::{Path, PathBuf};

use flotilla_tests::init::TestDir;
use flotilla_units::state::UnitState;

/// The test's names below `/var/lib`, removed at its end (the host's
/// `/var/lib` is the real one: these tests run as root).
struct StateNames(Vec<PathBuf>);

impl StateNames {
    fn new(names: &[&str]) -> StateNames {
        let names = names
            .iter()
            .flat_map(|n| {
                [
                    Path::new("/var/lib").join(n),
                    Path::new("/var/lib/private").join(n),
                ]
            })
            .collect();
        let s = StateNames(names);
        s.remove();
        s
    }

    fn remove(&self) {
        for p in &self.0 {
            let _ = std::fs::remove_file(p);
            let _ = std::fs::remove_dir_all(p);
        }
    }
}

impl Drop for StateNames {
    fn drop(&mut self) {
        self.remove();
    }
}

/// A oneshot whose `ExecStart=` shell checks what it sees; the unit is
/// `exited` (`RemainAfterExit=yes`) only if every check held.
fn checking_unit(dir: &TestDir, name: &str, keys: &str, checks: &str) {
    dir.file(
        &format!("units/{name}"),
        &format!(
            "[Service]\nType=oneshot\nRemainAfterExit=yes\n{keys}\n\
             ExecStart=/bin/sh -exc '{checks}'\n"
        ),
    );
}

#[test]
fn a_temporary_file_system_holds_the_state_directory_and_its_links() {
    let n = format!("flotilla-tmpfs-{}", std::process::id());
    let names = StateNames::new(&[&n, &format!("{n}-l"), &format!("{n}-dyn")]);
    std::fs::create_dir_all(format!("/var/lib/{n}")).expect("mkdir");
    std::fs::write(format!("/var/lib/{n}/test"), "x").expect("test file");
    let dir = TestDir::new_in(Path::new("/run"));
    // Read-only: the link was made before the tmpfs became so; dpkg's
    // directory (the host's /var/lib) is hidden.
    checking_unit(
        &dir,
        "plain.service",
        &format!("StateDirectory={n}:{n}-l\nTemporaryFileSystem=/var/lib:ro"),
        &format!(
            "test -f /var/lib/{n}/test; test -L /var/lib/{n}-l; \
             test \"$(readlink /var/lib/{n}-l)\" = {n}; test -f /var/lib/{n}-l/test; \
             test ! -e /var/lib/dpkg; if touch /var/lib/other; then exit 1; fi; \
             touch /var/lib/{n}/written"
        ),
    );
    // A dynamic user: the directory moves below private/, and the link to
    // it is made in the tmpfs, where the host's is hidden.
    std::fs::create_dir_all(format!("/var/lib/{n}-dyn")).expect("mkdir");
    std::fs::write(format!("/var/lib/{n}-dyn/test"), "x").expect("test file");
    checking_unit(
        &dir,
        "dynamic.service",
        &format!("DynamicUser=yes\nStateDirectory={n}-dyn\nTemporaryFileSystem=/var/lib"),
        &format!(
            "test \"$(readlink /var/lib/{n}-dyn)\" = private/{n}-dyn; test -f /var/lib/{n}-dyn/test"
        ),
    );
    dir.file(
        "units/both.target",
        "[Unit]\nRequires=plain.service dynamic.service\n\
         After=plain.service dynamic.service\n",
    );
    let init = dir.start("both.target");
    init.wait_all(&["plain.service", "dynamic.service"], UnitState::Exited);
    // The host: the directory written through, no link made.
    assert!(Path::new(&format!("/var/lib/{n}/written")).exists());
    assert!(std::fs::symlink_metadata(format!("/var/lib/{n}-l")).is_err());
    assert!(Path::new(&format!("/var/lib/private/{n}-dyn/test")).exists());
    drop(init);
    drop(names);
}

/// Without a mount namespace the link is the host's, relative from its
/// own directory, and a link already there saying something else fails
/// the start (systemd's `symlink_idempotent`).
#[test]
fn a_link_of_a_unit_without_a_namespace_is_made_on_the_host() {
    let n = format!("flotilla-links-{}", std::process::id());
    let names = StateNames::new(&[&n, &format!("{n}-l"), &format!("{n}-other")]);
    let dir = TestDir::new_in(Path::new("/run"));
    checking_unit(
        &dir,
        "host.service",
        &format!("StateDirectory={n}/inner:{n}-l/deeper"),
        &format!("test -d /var/lib/{n}-l/deeper"),
    );
    std::os::unix::fs::symlink("elsewhere", format!("/var/lib/{n}-other")).expect("link");
    checking_unit(
        &dir,
        "clash.service",
        &format!("StateDirectory={n}:{n}-other"),
        "true",
    );
    let init = dir.start("host.service");
    init.wait_state("host.service", UnitState::Exited);
    assert_eq!(
        std::fs::read_link(format!("/var/lib/{n}-l/deeper")).expect("link"),
        PathBuf::from(format!("../{n}/inner"))
    );
    init.ctl(&["start", "clash.service"]);
    let st = init.wait_state("clash.service", UnitState::Failed);
    assert_eq!(
        std::fs::read_link(format!("/var/lib/{n}-other")).expect("link"),
        PathBuf::from("elsewhere"),
        "{st:?}"
    );
    drop(init);
    drop(names);
}

/// A unit that ran with `DynamicUser=yes` left its directory below
/// `private/` and a link to it; started again without a dynamic user, the
/// directory is moved back in its place (systemd's migration), its files
/// with it.
#[test]
fn a_directory_a_dynamic_user_left_is_moved_back() {
    let n = format!("flotilla-migrate-{}", std::process::id());
    let names = StateNames::new(&[&n]);
    let dir = TestDir::new_in(Path::new("/run"));
    checking_unit(
        &dir,
        "dynamic.service",
        &format!("DynamicUser=yes\nStateDirectory={n}"),
        &format!("touch /var/lib/{n}/made"),
    );
    checking_unit(
        &dir,
        "plain.service",
        &format!("StateDirectory={n}"),
        &format!("test -f /var/lib/{n}/made"),
    );
    let init = dir.start("dynamic.service");
    init.wait_state("dynamic.service", UnitState::Exited);
    let host = PathBuf::from(format!("/var/lib/{n}"));
    assert!(std::fs::symlink_metadata(&host).expect("link").is_symlink());
    init.ctl(&["stop", "dynamic.service"]);
    init.ctl(&["start", "plain.service"]);
    init.wait_state("plain.service", UnitState::Exited);
    assert!(std::fs::symlink_metadata(&host).expect("dir").is_dir());
    assert!(host.join("made").exists());
    assert!(!Path::new(&format!("/var/lib/private/{n}")).exists());
    drop(init);
    drop(names);
}

/// A dynamic user's nested state directories (systemd's TEST-34
/// `check-writable` unit): the parent is made first and linked, the name
/// below it made in its private directory with no link of its own, and
/// both are writable for the unit.
#[test]
fn a_dynamic_users_nested_directories_share_the_parents_link() {
    let n = format!("flotilla-nested-{}", std::process::id());
    let names = StateNames::new(&[&n]);
    let dir = TestDir::new_in(Path::new("/run"));
    checking_unit(
        &dir,
        "nested.service",
        &format!("DynamicUser=yes\nStateDirectory={n}/inner {n}"),
        &format!(
            "touch /var/lib/{n}/a /var/lib/{n}/inner/b; \
             test \"$STATE_DIRECTORY\" = /var/lib/{n}:/var/lib/{n}/inner"
        ),
    );
    let init = dir.start("nested.service");
    init.wait_state("nested.service", UnitState::Exited);
    assert_eq!(
        std::fs::read_link(format!("/var/lib/{n}")).expect("link"),
        PathBuf::from(format!("private/{n}"))
    );
    let inner = PathBuf::from(format!("/var/lib/private/{n}/inner"));
    assert!(std::fs::symlink_metadata(&inner).expect("inner").is_dir());
    assert!(inner.join("b").exists());
    drop(init);
    drop(names);
}
