//! systemd's generators through the real `init` (docs/generators.md):
//! generator scripts written by the test (one writes a unit and its
//! `.wants/` link, one fails, one hangs) at start and at a reload that does
//! not stop the loop; Debian's own `systemd-getty-generator` and
//! `systemd-fstab-generator`, whose output the init then loads.

use flotilla_tests::init::TestDir;
use flotilla_units::state::UnitState;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// An executable script `name` in `dir`.
fn generator(dir: &Path, name: &str, body: &str) -> PathBuf {
    std::fs::create_dir_all(dir).expect("generator dir");
    let p = dir.join(name);
    std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).expect("write generator");
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    p
}

/// A generator that writes the oneshot `NAME.service` (which writes the
/// file `mark`) and wants it from `default`.
fn unit_writer(name: &str, mark: &Path) -> String {
    format!(
        "printf '[Service]\\nType=oneshot\\nRemainAfterExit=yes\\nExecStart=/bin/sh -c \"echo ran > {mark}\"\\n' \
         > \"$1/{name}.service\"\n\
         mkdir -p \"$1/default.wants\"\n\
         ln -s \"../{name}.service\" \"$1/default.wants/{name}.service\"",
        mark = mark.display()
    )
}

#[test]
fn generated_units_run_and_failing_or_hanging_generators_are_reported() {
    let dir = TestDir::new();
    dir.unit("default", "unit: default\ntype: virtual\n");
    let gens = dir.join("gens");
    let out = dir.join("out");
    let env_file = dir.join("env");
    let mark = dir.join("hello.ran");
    generator(&gens, "10-writes", &unit_writer("hello", &mark));
    generator(
        &gens,
        "20-env",
        &format!(
            "env | grep '^SYSTEMD_' | sort > {}; echo \"$#\" >> {}",
            env_file.display(),
            env_file.display()
        ),
    );
    generator(&gens, "30-fails", "echo failing >&2; exit 3");
    generator(&gens, "40-hangs", "exec sleep 600");
    let config = dir.file(
        "init.yaml",
        &format!(
            "generators: [{}]\ngenerator-output: {}\ngenerator-timeout: 4s\n",
            gens.display(),
            out.display()
        ),
    );
    let t0 = Instant::now();
    let init = dir.init().config(config).start();
    init.wait_state("hello.service", UnitState::Exited);
    let boot = t0.elapsed();
    assert_eq!(std::fs::read_to_string(&mark).expect("mark"), "ran\n");
    // The boot waited for the hanging one's limit, no longer.
    assert!(boot >= Duration::from_secs(4), "{boot:?}");
    let output = init.output();
    let g = gens.display();
    assert!(
        output.contains(&format!("generator {g}/30-fails failed with exit status 3")),
        "{output}"
    );
    assert!(
        output.contains(&format!(
            "generator {g}/40-hangs did not finish within 4 s; killed"
        )),
        "{output}"
    );
    assert!(
        output.contains("generators: 4 run in") && output.contains("2 failed"),
        "{output}"
    );
    let env = std::fs::read_to_string(&env_file).expect("env");
    assert!(env.contains("SYSTEMD_SCOPE=system\n"), "{env}");
    assert!(env.contains("SYSTEMD_IN_INITRD=0\n"), "{env}");
    assert!(env.contains("SYSTEMD_ARCHITECTURE=x86-64\n"), "{env}");
    assert!(env.contains("SYSTEMD_FIRST_BOOT="), "{env}");
    assert!(env.ends_with("3\n"), "three arguments: {env}");
    // The hung generator's process is gone with its group.
    let hung: Vec<i32> = flotilla_tests::procs::marked(&dir.mark)
        .into_iter()
        .filter(|&p| flotilla_tests::procs::cmdline(p) == "sleep 600")
        .collect();
    assert!(
        hung.is_empty(),
        "the hanging generator was left running: {hung:?}"
    );

    // A reload runs them again; the loop answers meanwhile.
    let mark2 = dir.join("bye.ran");
    generator(&gens, "11-writes", &unit_writer("bye", &mark2));
    let t1 = Instant::now();
    let reload = Command::new(flotilla_tests::bins::initctl())
        .arg("--control")
        .arg(dir.control())
        .arg("reload")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("initctl reload");
    let mut reload = reload;
    dir.ctl(&["status", "hello.service"]).expect(0);
    // Answered while the reload still waits for the hanging generator.
    assert!(
        reload.try_wait().expect("try_wait").is_none(),
        "the reload ended before {:?}",
        t1.elapsed()
    );
    let r = flotilla_tests::init::run_child(reload, Duration::from_secs(15));
    assert_eq!(r.code, 0, "{} {}", r.stdout, r.stderr);
    assert!(t1.elapsed() >= Duration::from_secs(4));
    init.wait_state("bye.service", UnitState::Exited);
    assert_eq!(std::fs::read_to_string(&mark2).expect("mark2"), "ran\n");
    // hello.service was unchanged, so it kept its state.
    assert_eq!(init.unit("hello.service").state, UnitState::Exited);
}

/// The init's config running Debian's generators `names` (links to them
/// in `gens`), their output in `out`, both in the test dir.
fn debian_generators(dir: &TestDir, names: &[&str]) -> PathBuf {
    let gens = dir.join("gens");
    std::fs::create_dir_all(&gens).expect("gens");
    for g in names {
        std::os::unix::fs::symlink(
            Path::new("/lib/systemd/system-generators").join(g),
            gens.join(g),
        )
        .expect("link generator");
    }
    dir.file(
        "init.yaml",
        &format!(
            "generators: [{}]\ngenerator-output: {}\n",
            gens.display(),
            dir.join("out").display()
        ),
    )
}

#[test]
fn debian_getty_and_fstab_generators_feed_the_init() {
    let dir = TestDir::new();
    dir.unit("default", "unit: default\ntype: virtual\n");
    let config = debian_generators(
        &dir,
        &["systemd-getty-generator", "systemd-fstab-generator"],
    );
    let fstab = dir.file("fstab", "/dev/vdz1 /srv/data ext4 defaults 0 2\n");
    let out = dir.join("out");
    let init = dir
        .init()
        .config(config)
        .more_units(PathBuf::from("/lib/systemd/system"))
        .env("SYSTEMD_PROC_CMDLINE", "console=ttyS0")
        .env("SYSTEMD_FSTAB", &fstab.display().to_string())
        .start();
    init.wait_state("default", UnitState::Running);
    // What the getty generator made of console=ttyS0 here: a serial getty
    // on a machine, the console getty in a container.
    let wants: Vec<String> = std::fs::read_dir(out.join("generator/getty.target.wants"))
        .expect("the getty generator's output")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(wants.len(), 1, "{wants:?}");
    let getty = &wants[0];
    assert!(
        getty == "serial-getty@ttyS0.service" || getty == "console-getty.service",
        "{getty}"
    );
    // The init loaded what they wrote: getty.target wants the getty;
    // local-fs.target requires the mount of /srv/data and wants the
    // remount of the root.
    assert!(out.join("generator/srv-data.mount").exists());
    let dot = dir.ctl(&["analyze", "dot"]).stdout;
    for edge in [
        format!("\"getty.target\" -> \"{getty}\" [style=dotted, tooltip=\"getty.target waits-for"),
        // Requires= orders nothing (docs/systemd-units.md): the mount's
        // own `Before=local-fs.target` orders it, checked below.
        "\"local-fs.target\" -> \"srv-data.mount\" [style=solid, arrowhead=empty, tooltip=\"local-fs.target requires"
            .to_string(),
        "\"local-fs.target\" -> \"systemd-remount-fs.service\" [style=dotted".to_string(),
    ] {
        assert!(dot.contains(&edge), "{edge} not in:\n{dot}");
    }
    let mount = dir.ctl(&["cat", "srv-data.mount"]).stdout;
    assert!(mount.contains("What=/dev/vdz1"), "{mount}");
    assert!(mount.contains("Before=local-fs.target"), "{mount}");
    // Nothing of Debian's started: the target is `default`.
    assert_eq!(init.unit(getty).state, UnitState::Disabled);
}

/// Debian's `systemd-sysv-generator` on an LSB script in a directory of
/// the test's (`SYSTEMD_SYSVINIT_PATH`, `SYSTEMD_SYSVRCND_PATH`): the
/// service it writes (`Type=forking`, `GuessMainPID=no`,
/// `KillMode=process`, `RemainAfterExit=yes`) starts, restarts and
/// stops under the init as under systemd (TEST-26's `issue-24990`).
#[test]
fn debian_sysv_generator_services_start_restart_and_stop() {
    let dir = TestDir::new();
    crate::service::lsb_script(&dir, "init.d/flotilla-lsb");
    std::fs::create_dir_all(dir.join("rc.d")).expect("rc.d");
    let config = debian_generators(&dir, &["systemd-sysv-generator"]);
    dir.unit(
        "default",
        "unit: default\ntype: virtual\ndepends-on: [flotilla-lsb.service]\n",
    );
    let init = dir
        .init()
        .config(config)
        .env(
            "SYSTEMD_SYSVINIT_PATH",
            &dir.join("init.d").display().to_string(),
        )
        .env(
            "SYSTEMD_SYSVRCND_PATH",
            &dir.join("rc.d").display().to_string(),
        )
        .start();
    let unit = dir.ctl(&["cat", "flotilla-lsb.service"]).stdout;
    for key in ["GuessMainPID=no", "KillMode=process", "RemainAfterExit=yes"] {
        assert!(unit.contains(key), "{key} not in:\n{unit}");
    }
    let pids = crate::service::start_restart_stop(&init, &dir, "flotilla-lsb.service");
    crate::service::kill_all(&pids);
}
