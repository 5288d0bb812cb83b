//! Conditions against a fake machine.

use flotilla_units::condition::*;
use flotilla_units::fleet::UnitOption;

fn parse(text: &str) -> Vec<UnitOption> {
    crate::parse(text).options
}

/// A machine described by a few facts.
struct Fake {
    paths: Vec<(&'static str, &'static str)>, // (path, kind: f/e/x/d/D/l/m/ro)
}

impl Fake {
    fn kind(&self, path: &str) -> Option<&'static str> {
        self.paths.iter().find(|(p, _)| *p == path).map(|(_, k)| *k)
    }
}

impl ConditionFacts for Fake {
    fn path_exists(&self, path: &str) -> Result<bool, String> {
        Ok(self.kind(path).is_some())
    }
    fn glob_matches(&self, pattern: &str) -> Result<bool, String> {
        Ok(self.paths.iter().any(|(p, _)| fnmatch(pattern, p)))
    }
    fn is_directory(&self, path: &str) -> Result<bool, String> {
        Ok(matches!(self.kind(path), Some("d" | "D" | "m")))
    }
    fn is_symlink(&self, path: &str) -> Result<bool, String> {
        Ok(self.kind(path) == Some("l"))
    }
    fn is_mount_point(&self, path: &str) -> Result<bool, String> {
        match self.kind(path) {
            Some(k) => Ok(k == "m"),
            None => Err(format!("{path}: No such file or directory")),
        }
    }
    fn is_read_write(&self, path: &str) -> Result<bool, String> {
        Ok(self.kind(path).is_some_and(|k| k != "ro"))
    }
    fn directory_not_empty(&self, path: &str) -> Result<bool, String> {
        Ok(self.kind(path) == Some("D"))
    }
    fn file_not_empty(&self, path: &str) -> Result<bool, String> {
        Ok(matches!(self.kind(path), Some("f" | "x")))
    }
    fn file_is_executable(&self, path: &str) -> Result<bool, String> {
        Ok(self.kind(path) == Some("x"))
    }
    fn virtualization(&self) -> Option<String> {
        Some("docker".to_string())
    }
    fn kernel_command_line(&self) -> String {
        "BOOT_IMAGE=/vmlinuz root=/dev/vda1 ro quiet debug=all".to_string()
    }
    fn kernel_release(&self) -> String {
        "6.1.0-18-cloud-amd64".to_string()
    }
    fn architecture(&self) -> String {
        "x86-64".to_string()
    }
    fn hostname(&self) -> String {
        "web1.example.org".to_string()
    }
    fn machine_id(&self) -> String {
        "0123456789abcdef0123456789abcdef".to_string()
    }
    fn has_capability(&self, name: &str) -> bool {
        name == "CAP_NET_ADMIN"
    }
    fn on_ac_power(&self) -> bool {
        true
    }
    fn security(&self, name: &str) -> bool {
        name == "apparmor"
    }
    fn first_boot(&self) -> bool {
        false
    }
    fn update_stamps(&self, dir: &str) -> UpdateStamps {
        // /etc brought up to date after /usr's last change, /var before it
        let t = |sec| Some(MTime { sec, nsec: 0 });
        UpdateStamps {
            read_only: self.kind(dir) == Some("ro"),
            stamp: if dir == "/etc" { t(200) } else { t(50) },
            stamp_nsec: None,
            usr: t(100),
        }
    }
    fn environment(&self) -> Vec<(String, String)> {
        vec![("LANG".into(), "C.UTF-8".into())]
    }
    fn user(&self) -> (u32, String) {
        (0, "root".into())
    }
    fn groups(&self) -> Vec<(u32, String)> {
        vec![(0, "root".into()), (4, "adm".into())]
    }
    fn cgroup(&self) -> (Vec<String>, u8) {
        (vec!["cpu".into(), "memory".into(), "pids".into()], 2)
    }
    fn has_credential(&self, name: &str) -> bool {
        name == "token"
    }
    fn os_release(&self, key: &str) -> Option<String> {
        match key {
            "ID" => Some("debian".into()),
            "VERSION_ID" => Some("12".into()),
            _ => None,
        }
    }
}

fn fake() -> Fake {
    Fake {
        paths: vec![
            ("/etc/x.conf", "f"),
            ("/usr/bin/tool", "x"),
            ("/empty", "e"),
            ("/var/lib/d", "d"),
            ("/var/lib/full", "D"),
            ("/etc/link", "l"),
            ("/home", "m"),
            ("/usr", "ro"),
        ],
    }
}

fn verdict(text: &str) -> Verdict {
    let c = Conditions::from_options(&parse(&format!("[Unit]\n{text}"))).unwrap();
    check(&c.conditions, &fake())
}

fn holds(line: &str) -> bool {
    verdict(line).ok
}

#[test]
fn each_kind_holds_and_fails() {
    let cases: &[(&str, bool)] = &[
        ("ConditionPathExists=/etc/x.conf", true),
        ("ConditionPathExists=/nope", false),
        ("ConditionNeedsUpdate=/etc", false),
        ("ConditionNeedsUpdate=/var", true),
        ("ConditionNeedsUpdate=!/var", false),
        ("ConditionNeedsUpdate=/usr", false),
        ("ConditionPathExists=!/nope", true),
        ("ConditionPathExists=! /nope", true),
        ("ConditionPathExistsGlob=/var/lib/*", true),
        ("ConditionPathExistsGlob=/srv/*", false),
        ("ConditionPathIsDirectory=/var/lib/d", true),
        ("ConditionPathIsDirectory=/etc/x.conf", false),
        ("ConditionPathIsSymbolicLink=/etc/link", true),
        ("ConditionPathIsMountPoint=/home", true),
        ("ConditionPathIsMountPoint=/var/lib/d", false),
        ("ConditionPathIsReadWrite=/usr", false),
        ("ConditionPathIsReadWrite=/var/lib/d", true),
        ("ConditionDirectoryNotEmpty=/var/lib/full", true),
        ("ConditionDirectoryNotEmpty=/var/lib/d", false),
        ("ConditionFileNotEmpty=/etc/x.conf", true),
        ("ConditionFileNotEmpty=/empty", false),
        ("ConditionFileIsExecutable=/usr/bin/tool", true),
        ("ConditionFileIsExecutable=/etc/x.conf", false),
        ("ConditionVirtualization=yes", true),
        ("ConditionVirtualization=no", false),
        ("ConditionVirtualization=container", true),
        ("ConditionVirtualization=vm", false),
        ("ConditionVirtualization=docker", true),
        ("ConditionVirtualization=!kvm", true),
        ("ConditionVirtualization=private-users", false),
        ("ConditionVirtualization=!private-users", true),
        ("ConditionKernelCommandLine=quiet", true),
        ("ConditionKernelCommandLine=root", true),
        ("ConditionKernelCommandLine=root=/dev/vda1", true),
        ("ConditionKernelCommandLine=root=/dev/sda1", false),
        ("ConditionKernelCommandLine=qui", false),
        ("ConditionKernelVersion=>=5.10", true),
        ("ConditionKernelVersion=>=5.10 <6.1", false),
        ("ConditionKernelVersion=6.1.*", true),
        ("ConditionKernelVersion=!=6.1.0-18-cloud-amd64", false),
        ("ConditionArchitecture=x86-64", true),
        ("ConditionArchitecture=arm64", false),
        ("ConditionHost=web1.example.org", true),
        ("ConditionHost=WEB*", true),
        ("ConditionHost=db*", false),
        ("ConditionHost=0123456789ABCDEF0123456789ABCDEF", true),
        ("ConditionCapability=CAP_NET_ADMIN", true),
        ("ConditionCapability=CAP_SYS_ADMIN", false),
        ("ConditionACPower=true", true),
        ("ConditionFirstBoot=yes", false),
        ("ConditionSecurity=apparmor", true),
        ("ConditionSecurity=selinux", false),
        ("ConditionEnvironment=LANG", true),
        ("ConditionEnvironment=LANG=C.UTF-8", true),
        ("ConditionEnvironment=LANG=C", false),
        ("ConditionUser=root", true),
        ("ConditionUser=0", true),
        ("ConditionUser=@system", true),
        ("ConditionUser=nobody", false),
        ("ConditionGroup=adm", true),
        ("ConditionGroup=4", true),
        ("ConditionGroup=wheel", false),
        ("ConditionControlGroupController=memory pids", true),
        ("ConditionControlGroupController=v2", true),
        ("ConditionControlGroupController=io", false),
        ("ConditionCredential=token", true),
        ("ConditionOSRelease=ID=debian", true),
        ("ConditionOSRelease=VERSION_ID>=11", true),
        ("ConditionOSRelease=ID!=debian", false),
    ];
    for (line, want) in cases {
        assert_eq!(holds(line), *want, "{line}");
    }
}

/// `private-users` asks for a user namespace, not for a virtualization:
/// a rootless container skips `sys-fs-fuse-connections.mount` by it.
#[test]
fn private_users_is_the_user_namespace() {
    let line = "[Unit]\nConditionVirtualization=!private-users\n";
    let c = Conditions::from_options(&parse(line)).expect("conditions");
    let rootful = flotilla_units::condition::ScriptedFacts::default();
    assert!(check(&c.conditions, &rootful).ok);
    let rootless = flotilla_units::condition::ScriptedFacts {
        private_users: true,
        ..rootful
    };
    assert!(!check(&c.conditions, &rootless).ok);
}

#[test]
fn triggering_conditions_need_one_and_plain_ones_all() {
    assert!(holds(
        "ConditionPathExists=|/nope\nConditionPathExists=|/etc/x.conf"
    ));
    let v = verdict("ConditionPathExists=|/nope\nConditionPathExists=|/gone");
    assert!(!v.ok);
    assert_eq!(
        v.failures,
        ["none of the triggering conditions was met (ConditionPathExists=|/nope was not met; ConditionPathExists=|/gone was not met)"]
    );
    let v = verdict("ConditionPathExists=|/etc/x.conf\nConditionFileNotEmpty=/empty");
    assert_eq!(v.failures, ["ConditionFileNotEmpty=/empty was not met"]);
    assert!(holds("ConditionPathExists=|!/nope"));
}

#[test]
fn an_empty_assignment_resets_every_condition_before_it() {
    assert!(holds(
        "ConditionPathExists=/nope\nConditionHost=db\nConditionPathExists=\nConditionUser=root"
    ));
    let c = Conditions::from_options(&parse(
        "[Unit]\nAssertPathExists=/a\nConditionPathExists=/b\nAssertHost=\nAssertUser=root\n",
    ))
    .unwrap();
    assert_eq!(c.conditions.len(), 1);
    assert_eq!(c.asserts.len(), 1);
    assert_eq!(c.asserts[0].setting(), "AssertUser=root");
    assert!(c.asserts[0].assert);
}

#[test]
fn a_check_that_cannot_be_made_fails_even_negated() {
    let v = verdict("ConditionPathIsMountPoint=!/gone");
    assert_eq!(
        v.failures,
        ["ConditionPathIsMountPoint=!/gone could not be checked: /gone: No such file or directory"]
    );
    let v = verdict("ConditionMemory=>=1G");
    assert_eq!(
        v.failures,
        ["ConditionMemory=>=1G could not be checked: ConditionMemory= cannot be checked by flotilla"]
    );
}

#[test]
fn bad_lines_say_what_is_wrong() {
    let e = |text: &str| {
        Conditions::from_options(&parse(&format!("[Unit]\n{text}")))
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        e("ConditionPathExists=etc/x"),
        "ConditionPathExists=etc/x: path \"etc/x\" is not absolute"
    );
    assert!(
        e("ConditionFoo=1").starts_with("ConditionFoo=1: unknown condition (known: PathExists, ")
    );
    assert_eq!(
        e("ConditionACPower=maybe"),
        "ConditionACPower=maybe: \"maybe\" is not a boolean (yes/no)"
    );
    assert_eq!(
        e("AssertHost=|!"),
        "AssertHost=|!: nothing to check after the '|' or '!'"
    );
}

#[test]
fn versions_and_globs() {
    use std::cmp::Ordering::*;
    for (a, b, want) in [
        ("5.10", "5.9", Greater),
        ("6.1.0-18-cloud-amd64", "6.1", Greater),
        ("1.0~rc1", "1.0", Less),
        ("1.02", "1.2", Equal),
        ("2a", "2", Greater),
        ("1.0a", "1.0.1", Less),
        ("", "0", Less),
    ] {
        assert_eq!(version_cmp(a, b), want, "{a} vs {b}");
    }
    assert!(fnmatch("a[0-9]?c*", "a5xcde"));
    assert!(!fnmatch("a[!0-9]c", "a5c"));
    assert!(fnmatch("[]]x", "]x"));
    assert!(fnmatch("\\*", "*"));
    assert!(!fnmatch("\\*", "a"));
}
