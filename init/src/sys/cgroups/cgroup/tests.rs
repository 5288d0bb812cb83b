use super::*;

const MOUNTINFO: &str = "\
22 1 0:21 / /sys rw,nosuid - sysfs sysfs rw
30 22 0:26 / /sys/fs/cgroup rw - tmpfs tmpfs rw
40 30 0:35 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw
";

#[test]
fn the_machine_has_memory_and_a_task_limit() {
    let (memory, tasks) = machine();
    assert!(memory > 64 << 20, "{memory}");
    assert!(tasks >= 1024, "{tasks}");
}

#[test]
fn own_dir_from_proc_files() {
    let cg = "4:memory:/x\n0::/user.slice/app\n";
    assert_eq!(
        own_cgroup_dir(cg, MOUNTINFO.as_bytes()).unwrap(),
        PathBuf::from("/sys/fs/cgroup/unified/user.slice/app")
    );
    assert_eq!(
        own_cgroup_dir("0::/\n", MOUNTINFO.as_bytes()).unwrap(),
        PathBuf::from("/sys/fs/cgroup/unified")
    );
    assert_eq!(
        own_cgroup_dir("4:memory:/x\n", MOUNTINFO.as_bytes()).unwrap_err(),
        "no cgroup v2 hierarchy in /proc/self/cgroup"
    );
    assert_eq!(
        own_cgroup_dir("0::/\n", b"22 1 0:21 / /sys rw - sysfs sysfs rw\n").unwrap_err(),
        "no cgroup2 file system is mounted"
    );
    // A mount of a subtree (a container's view) that does not hold the
    // init's cgroup.
    let sub = "40 30 0:35 /lxc/c1 /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n";
    assert!(own_cgroup_dir("0::/other\n", sub.as_bytes()).is_err());
    assert_eq!(
        own_cgroup_dir("0::/lxc/c1/init\n", sub.as_bytes()).unwrap(),
        PathBuf::from("/sys/fs/cgroup/init")
    );
}

/// `memory.events` (a plain file here: no cgroup needed) is read for
/// the kills since the last look; those before the run are not news.
#[test]
fn oom_kills_are_counted_once() {
    let base = tempfile::tempdir().unwrap();
    let cgroups = Cgroups {
        base: base.path().to_path_buf(),
        at_root: false,
        has_kill: false,
    };
    let dir = base.path().join(cgroup_name("web"));
    std::fs::create_dir(&dir).unwrap();
    let events = |n: u32| {
        let text = format!("low 0\nhigh 0\nmax 7\noom {n}\noom_kill {n}\noom_group_kill 0\n");
        std::fs::write(dir.join("memory.events"), text).unwrap();
    };
    events(2);
    let cg = cgroups.unit(base.path(), "web");
    // What `create` does with a cgroup it reuses.
    assert_eq!(cg.new_oom_kills(), 2);
    assert_eq!(cg.new_oom_kills(), 0, "an earlier run's, seen");
    events(3);
    assert_eq!(cg.new_oom_kills(), 1);
    assert_eq!(cg.new_oom_kills(), 0, "told once");
    events(6);
    assert_eq!(cg.new_oom_kills(), 3);
    std::fs::remove_file(dir.join("memory.events")).unwrap();
    assert_eq!(cg.new_oom_kills(), 0, "no memory controller");
    assert_eq!(oom_kills("oom 1\n"), 0);
}
