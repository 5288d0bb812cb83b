//! The unit search path through the real `init` binary (docs/contract.md §3c): copies
//! of this machine's `/etc/systemd/system` and `/lib/systemd/system`
//! (Debian's own unit files and enablement links, unchanged) behind a
//! flotilla units directory, with drop-ins, an alias and a mask added;
//! YAML units hiding each other across directories with YAML drop-ins.

use flotilla_tests::init::TestDir;
use flotilla_units::state::UnitState;
use std::path::Path;
use std::process::Command;

/// The `.service` units that `multi-user.target.wants/` in `etc` and `lib`
/// name and that `lib` defines by a file of their own.
fn enabled_services(etc: &Path, lib: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for dir in [etc, lib] {
        let Ok(rd) = std::fs::read_dir(dir.join("multi-user.target.wants")) else {
            continue;
        };
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let file = lib.join(&name);
            let real = std::fs::read_link(&file).is_err() && file.is_file();
            if name.ends_with(".service") && !name.contains('@') && real && !out.contains(&name) {
                out.push(name);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn debian_units_enabled_by_wants_links_with_dropins_aliases_and_masks() {
    let dir = TestDir::new();
    let etc = dir.join("etc");
    let lib = dir.join("lib");
    flotilla_tests::init::copy_tree("/etc/systemd/system", &etc);
    flotilla_tests::init::copy_tree("/lib/systemd/system", &lib);
    // flotilla's own directory comes first: `multi-user.target` is a
    // virtual unit there, and Debian's `.wants/` links give it its edges.
    dir.unit(
        "multi-user.target",
        "unit: multi-user.target\ntype: virtual\n",
    );

    let enabled = enabled_services(&etc, &lib);
    assert!(
        enabled.iter().any(|n| n == "nginx.service"),
        "nginx's postinst enables it: {enabled:?}"
    );
    let masked = enabled
        .iter()
        .find(|n| *n != "nginx.service")
        .expect("a second enabled service")
        .clone();
    std::os::unix::fs::symlink("/dev/null", etc.join(&masked)).expect("mask");
    let over = dir.file(
        "etc/nginx.service.d/override.conf",
        "[Service]\nEnvironment=FROM_DROPIN=1\n",
    );
    std::os::unix::fs::symlink("../lib/nginx.service", etc.join("www.service")).expect("alias");

    let (u, e, l) = (
        dir.units().display().to_string(),
        etc.display().to_string(),
        lib.display().to_string(),
    );
    let check = || {
        dir.run_init(&[
            "--check",
            "--units",
            &u,
            "--units",
            &e,
            "--units",
            &l,
            "--target",
            "multi-user.target",
        ])
    };
    let out = check();
    let req = &out.required("multi-user.target");
    for name in enabled.iter().filter(|n| **n != masked) {
        assert!(
            req.contains(name),
            "{name} is enabled: {req:?}\n{}",
            out.stdout
        );
    }
    assert!(!req.contains(&masked), "{masked} is masked: {req:?}");
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert!(
        lines.contains(&format!("unit {masked}: masked by {e}/{masked}").as_str()),
        "{}",
        out.stdout
    );
    let nginx = lines
        .iter()
        .find(|l| l.starts_with("unit nginx.service: "))
        .unwrap_or_else(|| panic!("no origin of nginx: {}", out.stdout));
    assert!(
        nginx.starts_with(&format!(
            "unit nginx.service: from {l}/nginx.service; drop-ins {}; aliases www.service",
            over.display(),
        )),
        "{nginx}"
    );

    // A drop-in's error is its own, at its own line; it makes nginx a unit
    // with an error, left out. A line without `=` is what systemd makes
    // it: a warning, the line ignored.
    let broken = dir.file(
        "lib/nginx.service.d/zz-broken.conf",
        "[Service]\nNoEquals\nRestart=sometimes\n",
    );
    let out = check();
    let req = &out.required("multi-user.target");
    let lines: Vec<&str> = out.stdout.lines().collect();
    let warned = format!(
        "{}:2:1: warning: missing '=', line ignored",
        broken.display()
    );
    assert!(lines.contains(&warned.as_str()), "{warned}\n{}", out.stdout);
    let at = format!("{}:3:1: invalid Restart=sometimes", broken.display());
    assert!(
        lines.iter().any(|l| l.starts_with(&at)),
        "{at}…\n{}",
        out.stdout
    );
    assert_eq!(out.code, 1, "the broken drop-in is an error");
    assert!(!req.contains(&"nginx.service".to_string()), "{req:?}");
}

#[test]
fn yaml_units_hide_across_directories_and_take_yaml_dropins() {
    let dir = TestDir::new();
    dir.unit(
        "web",
        "unit: web\nexec-start: /bin/sleep 100\ndepends-on: db\n",
    );
    dir.file("units/web.d/10-no-db.yaml", "depends-on: []\n");
    dir.file("vendor/web.yaml", "unit: web\nexec-start: /bin/vendor\n");
    dir.file("vendor/db.yaml", "unit: db\nexec-start: /bin/sleep 100\n");
    dir.file(
        "vendor/default.yaml",
        "unit: default\ntype: virtual\ndepends-on: web\n",
    );
    dir.file("vendor/bad.d/x.yaml", "restart: sometimes\n");
    let (u, v) = (
        dir.units().display().to_string(),
        dir.join("vendor").display().to_string(),
    );
    let out = dir.run_init(&["--check", "--units", &u, "--units", &v]);
    out.expect(0);
    assert_eq!(out.required("default"), ["default", "web"], "{out:?}");
    assert!(
        out.stdout.lines().any(|l| l
            == format!(
                "unit web: from {u}/web.yaml; hides {v}/web.yaml; drop-ins {u}/web.d/10-no-db.yaml"
            )),
        "{}",
        out.stdout
    );

    // A drop-in's error is reported in its file.
    dir.file("units/web.d/20-bad.yaml", "\nrestart: sometimes\n");
    let out = dir.run_init(&["--check", "--units", &u, "--units", &v]);
    out.expect(1);
    assert!(
        out.stdout
            .contains(&format!("{u}/web.d/20-bad.yaml:2:10: ")),
        "{}",
        out.stdout
    );
}

/// `initctl enable`, `disable`, `is-enabled`, `cat`, `show`,
/// `list-unit-files` and `daemon-reload` against a running init whose
/// search path is `units`, `etc/systemd/system`, `lib/systemd/system`.
#[test]
fn enable_disable_and_reading_unit_files() {
    let dir = TestDir::new();
    dir.unit(
        "multi-user.target",
        "unit: multi-user.target\ntype: virtual\n",
    );
    let etc = dir.join("etc/systemd/system");
    let lib = dir.join("lib/systemd/system");
    std::fs::create_dir_all(&etc).expect("etc");
    let web_text = "[Unit]\nDescription=web\n\n[Service]\nExecStart=/bin/sleep 1000\n\n\
                    [Install]\nWantedBy=multi-user.target\n";
    dir.file("lib/systemd/system/web.service", web_text);
    dir.file(
        "lib/systemd/system/helper.service",
        "[Service]\nExecStart=/bin/sleep 1000\n",
    );
    let init = dir
        .init()
        .target("multi-user.target")
        .more_units(etc.clone())
        .more_units(lib.clone())
        .start();
    init.wait_state("multi-user.target", UnitState::Running);
    assert_eq!(init.unit("web.service").state, UnitState::Disabled);
    let (e, l) = (etc.display().to_string(), lib.display().to_string());

    // is-enabled: systemctl's words and exit codes.
    let out = init.ctl(&["is-enabled", "web.service"]);
    out.expect(1);
    assert_eq!(out.stdout, "disabled\n");
    let out = init.ctl(&["is-enabled", "helper.service"]);
    out.expect(0);
    assert_eq!(out.stdout, "static\n");
    let out = init.ctl(&["is-enabled", "--quiet", "nope.service"]);
    out.expect(1);
    assert_eq!(
        out.stderr.trim_end(),
        "Failed to get unit file state for nope.service: No such file or directory"
    );

    // Bad input changes nothing.
    let out = init.ctl(&["enable", "nope.service"]);
    out.expect(1);
    assert!(
        out.stderr
            .contains("Failed to enable unit: Unit file nope.service does not exist."),
        "{out:?}"
    );
    let out = init.ctl(&["enable", "helper.service"]);
    out.expect(0);
    assert!(
        out.stderr
            .contains("The unit files have no installation config"),
        "{out:?}"
    );
    assert!(!dir
        .join("etc/systemd/system/multi-user.target.wants")
        .exists());

    // enable: the link systemctl makes, then the init reloads and starts it.
    let out = init.ctl(&["enable", "web.service"]);
    out.expect(0);
    let link = format!("{e}/multi-user.target.wants/web.service");
    assert!(
        out.stderr
            .contains(&format!("Created symlink {link} \u{2192} {l}/web.service.")),
        "{out:?}"
    );
    assert_eq!(
        std::fs::read_link(&link).expect("link"),
        Path::new(&format!("{l}/web.service"))
    );
    init.wait_state("web.service", UnitState::Running);
    init.ctl(&["is-enabled", "web.service"]).expect(0);

    // A drop-in: cat shows it under its path, show the keys in force.
    let over = dir.file(
        "etc/systemd/system/web.service.d/override.conf",
        "[Service]\nEnvironment=GREETING=hi\n",
    );
    let out = init.ctl(&["cat", "web.service"]);
    out.expect(0);
    assert_eq!(
        out.stdout,
        format!(
            "# {l}/web.service\n{web_text}\n# {}\n[Service]\nEnvironment=GREETING=hi\n",
            over.display()
        )
    );
    let out = init.ctl(&["show", "-p", "Environment,ExecStart", "web.service"]);
    out.expect(0);
    assert_eq!(
        out.stdout,
        "ExecStart=/bin/sleep 1000\nEnvironment=GREETING=hi\n"
    );
    // The drop-in takes effect on daemon-reload: the unit restarts with
    // the new command and environment.
    let before = init.pid_of("web.service");
    dir.file(
        "etc/systemd/system/web.service.d/override.conf",
        "[Service]\nEnvironment=GREETING=hi\nExecStart=\nExecStart=/bin/sleep 1001\n",
    );
    init.ctl(&["daemon-reload"]).expect(0);
    let after = init
        .wait("web.service restarted", |s| {
            s.units.iter().any(|u| {
                u.unit == "web.service" && u.state == UnitState::Running && u.pid != Some(before)
            })
        })
        .units
        .iter()
        .find(|u| u.unit == "web.service")
        .and_then(|u| u.pid)
        .expect("pid");
    // The child execs after the init saw it spawn: await the new program.
    let want: &[u8] = b"/bin/sleep\x001001\x00";
    flotilla_tests::wait_for(flotilla_tests::WAIT, "the drop-in's ExecStart", || {
        let cmdline = std::fs::read(format!("/proc/{after}/cmdline")).ok()?;
        (cmdline == want).then_some(())
    });
    let environ = std::fs::read(format!("/proc/{after}/environ")).expect("environ");
    assert!(
        environ.split(|b| *b == 0).any(|v| v == b"GREETING=hi"),
        "{}",
        String::from_utf8_lossy(&environ)
    );

    // A bad [Install] line: its error, nothing made.
    dir.file(
        "lib/systemd/system/bad.service",
        "[Service]\nExecStart=/bin/true\n[Install]\nWantedBy=no/such\n",
    );
    let out = init.ctl(&["enable", "bad.service"]);
    out.expect(1);
    assert!(
        out.stderr
            .contains("Failed to enable unit: WantedBy=no/such: "),
        "{out:?}"
    );

    let out = init.ctl(&["list-unit-files"]);
    out.expect(0);
    let rows: Vec<Vec<&str>> = out
        .stdout
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert!(
        rows.contains(&vec!["web.service", "enabled", "enabled"]),
        "{}",
        out.stdout
    );
    assert!(
        rows.contains(&vec!["helper.service", "static", "-"]),
        "{}",
        out.stdout
    );
    // Its [Install] cannot be read: nothing names a way to enable it.
    assert!(
        rows.contains(&vec!["bad.service", "static", "-"]),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.ends_with("\n3 unit files listed.\n"),
        "{}",
        out.stdout
    );

    // disable: the link goes, the init stops the unit.
    let out = init.ctl(&["disable", "web.service"]);
    out.expect(0);
    assert!(
        out.stderr.contains(&format!("Removed \"{link}\".")),
        "{out:?}"
    );
    assert!(!Path::new(&link).exists());
    init.wait_state("web.service", UnitState::Disabled);
    init.ctl(&["is-enabled", "web.service"]).expect(1);

    // Presets: the vendor's file enables web, a local file of a name that
    // sorts first disables it; a bad line is a warning.
    dir.file(
        "lib/systemd/system-preset/90-vendor.preset",
        "# vendor policy\nenable web.service\nfrobnicate x\ndisable *\n",
    );
    let preset_row = |init: &flotilla_tests::init::Init| {
        let out = init.ctl(&["list-unit-files"]);
        out.expect(0);
        out.stdout
            .lines()
            .find(|l| l.starts_with("web.service "))
            .map(|l| l.split_whitespace().map(str::to_string).collect::<Vec<_>>())
            .unwrap_or_default()
    };
    assert_eq!(preset_row(&init), ["web.service", "disabled", "enabled"]);
    let out = init.ctl(&["preset", "web.service"]);
    out.expect(0);
    assert!(
        out.stderr.contains(&format!(
            "{}/lib/systemd/system-preset/90-vendor.preset:3: unknown command 'frobnicate'",
            dir.path().display()
        )),
        "{out:?}"
    );
    assert!(
        out.stderr.contains(&format!("Created symlink {link} ")),
        "{out:?}"
    );
    init.wait_state("web.service", UnitState::Running);
    dir.file(
        "etc/systemd/system-preset/10-local.preset",
        "disable web.service\n",
    );
    assert_eq!(preset_row(&init), ["web.service", "enabled", "disabled"]);
    let out = init.ctl(&["preset", "web.service"]);
    out.expect(0);
    assert!(
        out.stderr.contains(&format!("Removed \"{link}\".")),
        "{out:?}"
    );
    init.wait_state("web.service", UnitState::Disabled);
    // systemctl's preset is the same verb.
    std::fs::remove_file(dir.join("etc/systemd/system-preset/10-local.preset")).expect("rm");
    let systemctl = dir.join("systemctl");
    std::os::unix::fs::symlink(flotilla_tests::bins::initctl(), &systemctl).expect("link");
    let mut cmd = Command::new(&systemctl);
    cmd.args(["preset", "web"])
        .env("INIT_CONTROL", dir.control());
    flotilla_tests::init::run(cmd, std::time::Duration::from_secs(15)).expect(0);
    init.wait_state("web.service", UnitState::Running);
}

/// `initctl` run as `systemctl` (a link named so): systemctl's verbs,
/// words and exit codes, mapped onto flotilla's declarative model.
#[test]
fn initctl_as_systemctl() {
    let dir = TestDir::new();
    dir.unit("web", "unit: web\nexec-start: /bin/sleep 1000\n");
    dir.unit(
        "multi-user.target",
        "unit: multi-user.target\ntype: virtual\ndepends-on: web\n",
    );
    let etc = dir.join("etc/systemd/system");
    let lib = dir.join("lib/systemd/system");
    std::fs::create_dir_all(&etc).expect("etc");
    dir.file(
        "lib/systemd/system/extra.service",
        "[Unit]\nDescription=an extra\n[Service]\nExecStart=/bin/sleep 1000\n\
         [Install]\nWantedBy=multi-user.target\n",
    );
    dir.file(
        "lib/systemd/system/final.target",
        "[Unit]\nDescription=Late Shutdown Services\nRefuseManualStart=yes\n",
    );
    dir.file(
        "lib/systemd/system/rescue.target",
        "[Unit]\nDescription=Rescue Mode\nAllowIsolate=yes\n",
    );
    dir.file(
        "lib/systemd/system/keep.service",
        "[Unit]\nRefuseManualStop=yes\n[Service]\nExecStart=/bin/sleep 1000\n",
    );
    // Never ready (no READY=1): a blocking start would wait past the
    // test's 15 s.
    dir.file(
        "lib/systemd/system/slow.service",
        "[Service]\nType=notify\nExecStart=/bin/sleep 1000\nTimeoutStartSec=300\n",
    );
    let init = dir
        .init()
        .target("multi-user.target")
        .more_units(etc.clone())
        .more_units(lib.clone())
        .start();
    init.wait_state("multi-user.target", UnitState::Running);
    let run = |args: &[&str]| dir.systemctl(args);

    let out = run(&["is-active", "--quiet", "web"]);
    out.expect(0);
    assert_eq!(out.stdout, "");
    let out = run(&["is-active", "extra", "nope"]);
    out.expect(3);
    assert_eq!(out.stdout, "inactive\ninactive\n");
    run(&["status", "web", "--no-pager"]).expect(0);
    run(&["status", "extra"]).expect(3);
    let out = run(&["status", "nope"]);
    out.expect(4);
    assert_eq!(
        out.stderr.trim_end(),
        "Unit nope.service could not be found."
    );

    // start of a unit the target does not want: a transient want, until
    // the next set-target; it waits until the unit runs.
    let out = run(&["start", "extra"]);
    out.expect(0);
    assert!(
        out.stderr.contains(
            "extra.service: wanted besides the target multi-user.target until the next set-target"
        ),
        "{out:?}"
    );
    assert_eq!(init.unit("extra.service").state, UnitState::Running);
    run(&["is-active", "--quiet", "extra"]).expect(0);
    // stop drops the want and waits until the unit is stopped.
    run(&["stop", "extra"]).expect(0);
    assert_eq!(init.unit("extra.service").state, UnitState::Disabled);
    run(&["stop", "extra"]).expect(0);
    // initctl's own verbs are the same; a target switch ends the want.
    init.ctl(&["start", "extra.service"]).expect(0);
    init.ctl(&["set-target", "multi-user.target", "--wait"])
        .expect(0);
    init.wait_state("extra.service", UnitState::Disabled);
    // --no-block: start returns once the want is taken, the unit still on
    // its way up; stop returns once the want is dropped.
    run(&["start", "--no-block", "slow"]).expect(0);
    assert_eq!(init.unit("slow.service").state, UnitState::Starting);
    run(&["--no-block", "stop", "slow"]).expect(0);
    init.wait_state("slow.service", UnitState::Disabled);
    // A refusal: exit 1, saying why.
    let refused = |args: &[&str], why: &str| {
        let out = run(args);
        out.expect(1);
        assert!(out.stderr.contains(why), "{out:?}");
    };
    // RefuseManualStart=: refused; nothing changes.
    refused(
        &["start", "final.target"],
        "Failed to start final.target: `final.target` may not be started by hand \
         (RefuseManualStart=)",
    );
    assert!(!init.unit("final.target").required);
    // RefuseManualStop=: started by hand, it may not be stopped by hand
    // (it keeps running); a switch stops it.
    run(&["start", "keep"]).expect(0);
    refused(
        &["stop", "keep"],
        "Failed to stop keep.service: `keep.service` may not be stopped by hand \
         (RefuseManualStop=)",
    );
    assert_eq!(init.unit("keep.service").state, UnitState::Running);
    init.ctl(&["stop", "keep.service"]).expect(1);
    init.ctl(&["set-target", "multi-user.target", "--wait"])
        .expect(0);
    init.wait_state("keep.service", UnitState::Disabled);
    // isolate: only to a target whose unit says AllowIsolate=yes (a YAML
    // one: `allow-isolate: true`); set-target switches to any.
    refused(
        &["isolate", "final.target"],
        "`final.target` may not be isolated (its unit does not say AllowIsolate=yes)",
    );
    assert_eq!(init.status().target, "multi-user.target");
    run(&["isolate", "rescue.target"]).expect(0);
    init.wait_state("web", UnitState::Disabled);
    init.ctl(&["set-target", "multi-user.target", "--wait"])
        .expect(0);
    let out = run(&["start", "nope"]);
    out.expect(5);
    assert_eq!(
        out.stderr.trim_end(),
        "Failed to start nope.service: Unit nope.service not found."
    );
    // stop of a unit the target requires: stopped, as systemd stops it,
    // and held stopped (not required) until started again.
    run(&["stop", "web"]).expect(0);
    let u = init.unit("web");
    assert_eq!((u.state, u.required), (UnitState::Disabled, false), "{u:?}");
    run(&["start", "web"]).expect(0);
    assert_eq!(init.unit("web").state, UnitState::Running);
    // start of a masked unit: systemctl's words.
    run(&["mask", "extra"]).expect(0);
    let out = run(&["start", "extra"]);
    out.expect(1);
    assert_eq!(
        out.stderr.trim_end(),
        "Failed to start extra.service: Unit extra.service is masked."
    );
    run(&["unmask", "extra"]).expect(0);

    let before = init.pid_of("web");
    run(&["restart", "web"]).expect(0);
    init.wait("web restarted", |s| {
        s.units
            .iter()
            .any(|u| u.unit == "web" && u.state == UnitState::Running && u.pid != Some(before))
    });

    // enable --now: the link, a reload, and the unit runs.
    run(&["enable", "--now", "extra"]).expect(0);
    init.wait_state("extra.service", UnitState::Running);
    run(&["is-active", "--quiet", "extra"]).expect(0);
    run(&["is-enabled", "extra"]).expect(0);
    let out = run(&["list-units", "--type=service", "--no-legend", "--plain"]);
    out.expect(0);
    assert!(
        out.stdout
            .lines()
            .any(|l| l.split_whitespace().collect::<Vec<_>>()
                == [
                    "extra.service",
                    "loaded",
                    "active",
                    "running",
                    "an",
                    "extra"
                ]),
        "{}",
        out.stdout
    );

    // mask: the /dev/null link where systemctl makes it; the unit is
    // masked as `initctl mask` masks (stopped, listed as masked).
    let out = run(&["mask", "extra"]);
    out.expect(0);
    let mask = format!("{}/extra.service", etc.display());
    assert!(
        out.stderr
            .contains(&format!("Created symlink {mask} \u{2192} /dev/null.")),
        "{out:?}"
    );
    let out = run(&["is-enabled", "extra"]);
    out.expect(1);
    assert_eq!(out.stdout, "masked\n");
    let masked = init.wait("extra.service masked", |s| {
        s.units
            .iter()
            .any(|u| u.unit == "extra.service" && u.masked && u.state == UnitState::Disabled)
    });
    let row = masked
        .units
        .iter()
        .find(|u| u.unit == "extra.service")
        .expect("row");
    assert_eq!(row.source, mask, "{row:?}");
    let out = init.ctl(&["status", "extra.service"]);
    assert!(out.stdout.contains("masked"), "{out:?}");
    run(&["unmask", "extra"]).expect(0);
    assert!(std::fs::symlink_metadata(&mask).is_err());
    init.wait_state("extra.service", UnitState::Running);
    assert!(!init.unit("extra.service").masked);

    // initctl mask of a systemd unit writes the same link; unmask removes it.
    let out = init.ctl(&["mask", "extra.service"]);
    out.expect(0);
    assert_eq!(
        std::fs::read_link(&mask).expect("mask link"),
        Path::new("/dev/null")
    );
    init.wait("extra.service masked", |s| {
        s.units
            .iter()
            .any(|u| u.unit == "extra.service" && u.masked && u.state == UnitState::Disabled)
    });
    let out = init.ctl(&["mask", "extra.service"]);
    out.expect(1);
    assert!(out.stderr.contains("masked already"), "{out:?}");
    init.ctl(&["unmask", "extra.service"]).expect(0);
    assert!(std::fs::symlink_metadata(&mask).is_err());
    init.wait_state("extra.service", UnitState::Running);
    // A name the init does not know: refused, no link made.
    init.ctl(&["mask", "nope.service"]).expect(4);
    assert!(std::fs::symlink_metadata(etc.join("nope.service")).is_err());

    run(&["daemon-reload"]).expect(0);
    run(&["frobnicate"]).expect(2);
}

/// A YAML unit's `wanted-by` is its `[Install] WantedBy=`: `initctl
/// enable`, `disable` and `is-enabled` make, remove and read the same
/// links as for a systemd unit, and the init follows them.
#[test]
fn yaml_units_enabled_through_wanted_by() {
    let dir = TestDir::new();
    dir.unit(
        "multi-user.target",
        "unit: multi-user.target\ntype: virtual\n",
    );
    let etc = dir.join("etc/systemd/system");
    std::fs::create_dir_all(&etc).expect("etc");
    let web = dir.file(
        "lib/systemd/system/web.yaml",
        "unit: web\nexec-start: /bin/sleep 1000\nwanted-by: [multi-user.target]\n",
    );
    dir.file(
        "lib/systemd/system/helper.yaml",
        "unit: helper\nexec-start: /bin/sleep 1000\n",
    );
    let init = dir
        .init()
        .target("multi-user.target")
        .more_units(etc.clone())
        .more_units(dir.join("lib/systemd/system"))
        .start();
    init.wait_state("multi-user.target", UnitState::Running);
    assert_eq!(init.unit("web").state, UnitState::Disabled);

    let out = init.ctl(&["is-enabled", "web"]);
    out.expect(1);
    assert_eq!(out.stdout, "disabled\n");
    let out = init.ctl(&["is-enabled", "helper"]);
    out.expect(0);
    assert_eq!(out.stdout, "static\n");

    // Without wanted-by: said, nothing made.
    let out = init.ctl(&["enable", "helper"]);
    out.expect(0);
    assert!(out.stderr.contains("has no wanted-by key"), "{out:?}");
    assert!(!etc.join("multi-user.target.wants").exists());

    let out = init.ctl(&["enable", "web"]);
    out.expect(0);
    let link = etc.join("multi-user.target.wants/web");
    assert!(
        out.stderr.contains(&format!(
            "Created symlink {} \u{2192} {}.",
            link.display(),
            web.display()
        )),
        "{out:?}"
    );
    assert_eq!(std::fs::read_link(&link).expect("link"), web);
    init.wait_state("web", UnitState::Running);
    let out = init.ctl(&["is-enabled", "web"]);
    out.expect(0);
    assert_eq!(out.stdout, "enabled\n");

    let out = init.ctl(&["disable", "web"]);
    out.expect(0);
    assert!(
        out.stderr
            .contains(&format!("Removed \"{}\".", link.display())),
        "{out:?}"
    );
    assert!(std::fs::symlink_metadata(&link).is_err());
    init.wait_state("web", UnitState::Disabled);
    init.ctl(&["is-enabled", "web"]).expect(1);
}

/// Names with systemd's escapes, as its generators write them
/// (`systemd-fsck@dev-disk-by\x2duuid-….service`): an instance of a
/// template whose instance holds `\x2d`, enabled by a wants link and
/// requiring a unit whose own name holds one, both run and are named so.
#[test]
fn units_whose_names_hold_systemds_escapes_run() {
    let dir = TestDir::new();
    dir.unit(
        "multi-user.target",
        "unit: multi-user.target\ntype: virtual\n",
    );
    let lib = dir.join("lib/systemd/system");
    dir.file(
        "lib/systemd/system/check@.service",
        "[Unit]\nRequires=my\\x2dprep.service\nAfter=my\\x2dprep.service\n\
         [Service]\nExecStart=/bin/sleep 1000\n",
    );
    dir.file(
        "lib/systemd/system/my\\x2dprep.service",
        "[Service]\nType=oneshot\nRemainAfterExit=yes\nExecStart=/bin/true\n",
    );
    let wants = lib.join("multi-user.target.wants");
    std::fs::create_dir_all(&wants).expect("wants");
    let instance = "check@dev-disk-by\\x2duuid-1234.service";
    std::os::unix::fs::symlink(lib.join("check@.service"), wants.join(instance)).expect("link");
    let init = dir
        .init()
        .target("multi-user.target")
        .more_units(lib.clone())
        .start();
    init.wait_state(instance, UnitState::Running);
    assert_eq!(init.unit("my\\x2dprep.service").state, UnitState::Exited);
    let out = init.ctl(&["status", instance]);
    out.expect(0);
    assert!(out.stdout.contains(instance), "{out:?}");
}
