//! [`Machine`]: the facts `Condition…=`/`Assert…=` are checked against
//! ([`ConditionFacts`]), read from the running system: the file system
//! (`stat`, `statvfs`, a directory's first entries), `/proc` (the kernel
//! command line, release, host name, the bounding set, mounts), `/sys`
//! (DMI and the power supplies, for virtualization and AC power) and
//! `/etc` (`os-release`, `machine-id`).
//!
//! # Why this runs in the loop
//!
//! A unit's conditions are checked when it is about to start, once per
//! start, never per event: each line costs one or two `stat`s or the
//! read of one small file from `/proc` or `/sys` (pseudo-files that never
//! block), bounded by the number of lines the unit has and far cheaper
//! than the spawn it precedes. A glob reads the directories its pattern
//! names, and `DirectoryNotEmpty` stops at the first entry. The facts
//! that cannot change while the init runs (virtualization, the kernel
//! command line and release, the architecture) are read once. Checking in
//! the spawned child instead would not save the `stat`s and would turn a
//! skipped unit (no process runs) into a process that runs.

use std::collections::HashMap;
use std::fs;
use std::io::Read;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use flotilla_units::condition::{fnmatch, stamp_nsec, ConditionFacts, MTime, UpdateStamps};
use flotilla_units::context::caps;
use flotilla_units::detect_virt::{
    detect_container, in_user_namespace, vm_of_dmi, ContainerSigns, CONTAINER_NAMES,
};
use nix::sys::statvfs::{statvfs, FsFlags};
use nix::unistd::{getegid, geteuid, getgroups, Gid, Group, User};

/// The most of a pseudo-file or configuration file read for a fact.
const SMALL_FILE_MAX: u64 = 64 * 1024;

/// The running machine. See the module documentation.
#[derive(Debug, Clone, Copy, Default)]
pub struct Machine;

/// The facts read once per process.
struct Fixed {
    virtualization: Option<String>,
    cmdline: String,
    release: String,
}

fn fixed() -> &'static Fixed {
    static FIXED: OnceLock<Fixed> = OnceLock::new();
    FIXED.get_or_init(|| Fixed {
        virtualization: detect_virtualization(),
        cmdline: read_small("/proc/cmdline").unwrap_or_default(),
        release: read_small("/proc/sys/kernel/osrelease")
            .map(|s| s.trim().to_string())
            .unwrap_or_default(),
    })
}

/// Whether the init runs in a container, by systemd-detect-virt's answer
/// (what systemd's timers ask for `OnBootSec=`: in a container it counts
/// from the init's start, not the kernel's).
pub fn in_container() -> bool {
    fixed()
        .virtualization
        .as_deref()
        .is_some_and(|v| CONTAINER_NAMES.contains(&v))
}

/// Does what systemd's PID 1 does for the other processes of a container
/// (`write_container_id()`): its `container=` variable, which only
/// processes allowed to read `/proc/1/environ` see, is written to
/// `/run/systemd/container`, which systemd-detect-virt reads before that.
/// Nothing when the variable is unset or empty. The error, as a line.
pub fn publish_container_id() -> Result<(), String> {
    let Some(c) = std::env::var_os("container").filter(|c| !c.is_empty()) else {
        return Ok(());
    };
    let path = "/run/systemd/container";
    fs::create_dir_all("/run/systemd")
        .and_then(|()| fs::write(path, c.as_encoded_bytes()))
        .and_then(|()| fs::set_permissions(path, fs::Permissions::from_mode(0o644)))
        .map_err(|e| format!("{path}: {e}"))
}

/// Whether this is the machine's first boot, as systemd decides it when
/// PID 1 starts, before any unit runs (machine-id(5)): `/etc/machine-id`
/// missing or `uninitialized`; an empty one is not a first boot (an image
/// made to run many times, a container's). Read once, by the first call, which
/// [`crate::sys::real::RealSys::new`] makes at start-up: PID 1 binds a transient
/// ID over the file next, which `systemd-machine-id-commit.service` writes
/// into it later in that same boot, and every `ConditionFirstBoot=` of the
/// boot must still see it as the first. (A re-executed init reads it
/// again.)
pub fn first_boot_at_start() -> bool {
    static FIRST: OnceLock<bool> = OnceLock::new();
    *FIRST.get_or_init(|| match read_small("/etc/machine-id") {
        None => !Path::new("/etc/machine-id").exists(),
        Some(id) => id.trim() == "uninitialized",
    })
}

/// A small file as text (at most [`SMALL_FILE_MAX`] bytes), `None` when it
/// cannot be read.
fn read_small(path: impl AsRef<Path>) -> Option<String> {
    let mut text = String::new();
    fs::File::open(path)
        .ok()?
        .take(SMALL_FILE_MAX)
        .read_to_string(&mut text)
        .ok()?;
    Some(text)
}

/// `Err` for an error other than "not there", which counts as `false`.
fn exists_as(path: &str, f: impl FnOnce(&fs::Metadata) -> bool) -> Result<bool, String> {
    match fs::metadata(path) {
        Ok(m) => Ok(f(&m)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(format!("{path}: {e}")),
    }
}

/// systemd-detect-virt's answer: a container first, by the signs a
/// container manager leaves (read here, weighed by
/// [`flotilla_units::detect_virt::detect_container`] in systemd's order), then
/// what a hypervisor shows (DMI vendor and product, the CPU's
/// `hypervisor` flag).
fn detect_virtualization() -> Option<String> {
    if let Some(c) = detect_container(&container_signs()) {
        return Some(c);
    }
    let dmi = |f: &str| read_small(format!("/sys/class/dmi/id/{f}")).unwrap_or_default();
    if let Some(vm) = vm_of_dmi(&dmi("sys_vendor"), &dmi("product_name")) {
        return Some(vm.to_string());
    }
    let cpuinfo = read_small("/proc/cpuinfo").unwrap_or_default();
    let flagged = cpuinfo
        .lines()
        .any(|l| l.starts_with("flags") && l.split_whitespace().any(|w| w == "hypervisor"));
    flagged.then(|| "vm-other".to_string())
}

/// What [`detect_container`] weighs, read from this system.
fn container_signs() -> ContainerSigns {
    let exists = |p: &str| Path::new(p).exists();
    let first_line = |p: &str| {
        read_small(p)
            .and_then(|t| t.lines().next().map(|l| l.trim().to_string()))
            .filter(|l| !l.is_empty())
    };
    let pid1 = std::process::id() == 1;
    let tracer = read_small("/proc/self/status")
        .and_then(|st| {
            st.lines()
                .find_map(|l| l.strip_prefix("TracerPid:"))
                .map(|v| v.trim().to_string())
        })
        .filter(|pid| pid != "0")
        .and_then(|pid| first_line(&format!("/proc/{pid}/comm")));
    // PID 1's environment needs CAP_SYS_PTRACE to read when it is not
    // this process; unreadable counts as unset, as in systemd.
    let pid1_container_env = if pid1 {
        None
    } else {
        fs::read("/proc/1/environ").ok().and_then(|env| {
            env.split(|&b| b == 0).find_map(|var| {
                var.strip_prefix(b"container=")
                    .map(|v| String::from_utf8_lossy(v).into_owned())
            })
        })
    };
    ContainerSigns {
        openvz: exists("/proc/vz") && !exists("/proc/bc"),
        os_release: read_small("/proc/sys/kernel/osrelease").unwrap_or_default(),
        tracer,
        host_container_manager: first_line("/run/host/container-manager"),
        pid1,
        own_container_env: if pid1 {
            std::env::var_os("container").map(|v| v.to_string_lossy().into_owned())
        } else {
            None
        },
        run_systemd_container: first_line("/run/systemd/container"),
        pid1_container_env,
        containerenv: exists("/run/.containerenv"),
        dockerenv: exists("/.dockerenv"),
        cgroupns: in_cgroup_namespace(),
    }
}

/// systemd's `running_in_cgroupns()`: a cgroup namespace of its own shows
/// as a root that is not the hierarchy's (with cgroup v2, a
/// `cgroup.events` and, on kernels that have it, `cgroup.type`, which only
/// a nested group has; with v1, the named systemd hierarchy without the
/// root's `release_agent`).
fn in_cgroup_namespace() -> bool {
    let exists = |p: &str| Path::new(p).exists();
    if !exists("/proc/self/ns/cgroup") {
        return false;
    }
    if exists("/sys/fs/cgroup/cgroup.controllers") {
        exists("/sys/fs/cgroup/cgroup.events")
            && (exists("/sys/fs/cgroup/cgroup.type") || !exists("/sys/kernel/cgroup/features"))
    } else {
        exists("/sys/fs/cgroup/systemd") && !exists("/sys/fs/cgroup/systemd/release_agent")
    }
}

/// systemd's name of the architecture the init was built for.
fn architecture() -> &'static str {
    if cfg!(target_arch = "x86_64") {
        "x86-64"
    } else if cfg!(target_arch = "x86") {
        "x86"
    } else if cfg!(target_arch = "aarch64") {
        "arm64"
    } else if cfg!(target_arch = "arm") {
        "arm"
    } else if cfg!(target_arch = "riscv64") {
        "riscv64"
    } else if cfg!(all(target_arch = "powerpc64", target_endian = "little")) {
        "ppc64-le"
    } else if cfg!(target_arch = "powerpc64") {
        "ppc64"
    } else if cfg!(target_arch = "s390x") {
        "s390x"
    } else if cfg!(target_arch = "loongarch64") {
        "loongarch64"
    } else {
        std::env::consts::ARCH
    }
}

/// The names in `dir` that match the glob `pattern`, for each pattern
/// component with a glob character; the paths matching the whole pattern.
fn glob(pattern: &str) -> Vec<PathBuf> {
    let mut found = vec![PathBuf::from("/")];
    for part in pattern.split('/').filter(|p| !p.is_empty()) {
        let mut next = Vec::new();
        for base in &found {
            if !part.contains(['*', '?', '[']) {
                let p = base.join(part);
                if fs::symlink_metadata(&p).is_ok() {
                    next.push(p);
                }
                continue;
            }
            let Ok(entries) = fs::read_dir(base) else {
                continue;
            };
            for e in entries.flatten() {
                let name = e.file_name();
                let name = name.to_string_lossy();
                // As glob(3): a leading dot is matched only by a dot.
                if name.starts_with('.') && !part.starts_with('.') {
                    continue;
                }
                if fnmatch(part, &name) {
                    next.push(base.join(&*name));
                }
            }
        }
        found = next;
        if found.is_empty() {
            break;
        }
    }
    found
}

impl ConditionFacts for Machine {
    fn path_exists(&self, path: &str) -> Result<bool, String> {
        exists_as(path, |_| true)
    }

    fn glob_matches(&self, pattern: &str) -> Result<bool, String> {
        Ok(!glob(pattern).is_empty())
    }

    fn is_directory(&self, path: &str) -> Result<bool, String> {
        exists_as(path, fs::Metadata::is_dir)
    }

    fn is_symlink(&self, path: &str) -> Result<bool, String> {
        Ok(fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()))
    }

    fn is_mount_point(&self, path: &str) -> Result<bool, String> {
        let Ok(real) = fs::canonicalize(path) else {
            return Ok(false);
        };
        let text = fs::File::open("/proc/self/mountinfo")
            .and_then(|f| {
                let mut v = Vec::new();
                f.take(crate::sys::MOUNTINFO_MAX as u64)
                    .read_to_end(&mut v)?;
                Ok(v)
            })
            .map_err(|e| format!("/proc/self/mountinfo: {e}"))?;
        Ok(crate::sys::mountinfo::is_mount_point(&text, &real))
    }

    fn is_read_write(&self, path: &str) -> Result<bool, String> {
        match statvfs(path) {
            Ok(s) => Ok(!s.flags().contains(FsFlags::ST_RDONLY)),
            Err(nix::errno::Errno::ENOENT) => Ok(false),
            Err(e) => Err(format!("{path}: {e}")),
        }
    }

    fn directory_not_empty(&self, path: &str) -> Result<bool, String> {
        // As systemd: hidden entries do not count.
        Ok(fs::read_dir(path).is_ok_and(|mut d| {
            d.any(|e| e.is_ok_and(|e| !e.file_name().to_string_lossy().starts_with('.')))
        }))
    }

    fn file_not_empty(&self, path: &str) -> Result<bool, String> {
        exists_as(path, |m| m.is_file() && m.len() > 0)
    }

    fn file_is_executable(&self, path: &str) -> Result<bool, String> {
        exists_as(path, |m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }

    fn virtualization(&self) -> Option<String> {
        fixed().virtualization.clone()
    }

    fn in_user_namespace(&self) -> bool {
        in_user_namespace(
            read_small("/proc/self/uid_map").as_deref(),
            read_small("/proc/self/gid_map").as_deref(),
            read_small("/proc/self/setgroups").as_deref(),
        )
    }

    fn kernel_command_line(&self) -> String {
        fixed().cmdline.clone()
    }

    fn kernel_release(&self) -> String {
        fixed().release.clone()
    }

    fn architecture(&self) -> String {
        architecture().to_string()
    }

    fn hostname(&self) -> String {
        read_small("/proc/sys/kernel/hostname")
            .map(|s| s.trim().to_string())
            .unwrap_or_default()
    }

    fn machine_id(&self) -> String {
        read_small("/etc/machine-id")
            .map(|s| s.trim().to_string())
            .unwrap_or_default()
    }

    fn has_capability(&self, name: &str) -> bool {
        let Ok(n) = caps::parse_cap(name) else {
            return false;
        };
        let status = read_small("/proc/self/status").unwrap_or_default();
        status
            .lines()
            .find_map(|l| l.strip_prefix("CapBnd:"))
            .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
            .is_some_and(|set| set & (1u64 << n) != 0)
    }

    fn on_ac_power(&self) -> bool {
        // As systemd: on AC power unless a mains supply says it is offline
        // and none says it is online (no supply at all: a desktop or VM).
        let Ok(dir) = fs::read_dir("/sys/class/power_supply") else {
            return true;
        };
        let mut mains_offline = false;
        for e in dir.flatten() {
            let p = e.path();
            if read_small(p.join("type")).is_some_and(|t| t.trim() == "Mains") {
                match read_small(p.join("online")).as_deref().map(str::trim) {
                    Some("1") => return true,
                    _ => mains_offline = true,
                }
            }
        }
        !mains_offline
    }

    fn security(&self, name: &str) -> bool {
        match name {
            "selinux" => Path::new("/sys/fs/selinux/enforce").exists(),
            "apparmor" => read_small("/sys/module/apparmor/parameters/enabled")
                .is_some_and(|v| v.trim() == "Y"),
            "smack" => Path::new("/sys/fs/smackfs").exists(),
            "audit" => Path::new("/proc/self/loginuid").exists(),
            "tpm2" => fs::read_dir("/sys/class/tpmrm").is_ok_and(|mut d| d.next().is_some()),
            _ => false,
        }
    }

    fn first_boot(&self) -> bool {
        first_boot_at_start()
    }

    fn update_stamps(&self, dir: &str) -> UpdateStamps {
        let mtime = |path: &str| {
            fs::symlink_metadata(path).ok().map(|m| MTime {
                sec: m.mtime(),
                nsec: m.mtime_nsec(),
            })
        };
        let path = format!("{}/.updated", dir.trim_end_matches('/'));
        let stamp = mtime(&path);
        // TIMESTAMP_NSEC= matters only on a file system of whole seconds
        let stamp_nsec = match stamp {
            Some(t) if t.nsec == 0 => read_small(&path).as_deref().and_then(stamp_nsec),
            _ => None,
        };
        UpdateStamps {
            read_only: statvfs(dir).is_ok_and(|s| s.flags().contains(FsFlags::ST_RDONLY)),
            stamp,
            stamp_nsec,
            usr: mtime("/usr/"),
        }
    }

    fn environment(&self) -> Vec<(String, String)> {
        std::env::vars_os()
            .map(|(k, v)| {
                (
                    k.to_string_lossy().into_owned(),
                    v.to_string_lossy().into_owned(),
                )
            })
            .collect()
    }

    fn user(&self) -> (u32, String) {
        let uid = geteuid();
        let name = User::from_uid(uid)
            .ok()
            .flatten()
            .map_or_else(|| uid.to_string(), |u| u.name);
        (uid.as_raw(), name)
    }

    fn groups(&self) -> Vec<(u32, String)> {
        let mut gids = vec![getegid()];
        gids.extend(getgroups().unwrap_or_default());
        gids.dedup();
        gids.into_iter()
            .map(|g: Gid| {
                let name = Group::from_gid(g)
                    .ok()
                    .flatten()
                    .map_or_else(|| g.to_string(), |gr| gr.name);
                (g.as_raw(), name)
            })
            .collect()
    }

    fn cgroup(&self) -> (Vec<String>, u8) {
        if let Some(c) = read_small("/sys/fs/cgroup/cgroup.controllers") {
            return (c.split_whitespace().map(str::to_string).collect(), 2);
        }
        let v1 = read_small("/proc/cgroups").unwrap_or_default();
        let names = v1
            .lines()
            .filter(|l| !l.starts_with('#'))
            .filter_map(|l| l.split_whitespace().next().map(str::to_string))
            .collect();
        (names, 1)
    }

    fn has_credential(&self, name: &str) -> bool {
        std::env::var_os("CREDENTIALS_DIRECTORY")
            .is_some_and(|d| !name.contains('/') && Path::new(&d).join(name).exists())
    }

    fn os_release(&self, key: &str) -> Option<String> {
        let text = read_small("/etc/os-release").or_else(|| read_small("/usr/lib/os-release"))?;
        let fields: HashMap<&str, &str> = text
            .lines()
            .filter_map(|l| l.split_once('='))
            .map(|(k, v)| (k.trim(), v.trim().trim_matches(['"', '\''])))
            .collect();
        fields.get(key).map(|v| v.to_string())
    }
}

#[cfg(test)]
#[allow(clippy::panic)]
mod tests {
    use super::*;

    fn ok<T, E: std::fmt::Display>(r: Result<T, E>) -> T {
        r.unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn path_kinds_on_the_real_file_system() {
        let m = Machine;
        let dir = std::env::temp_dir().join(format!("flotilla-cond-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        ok(fs::create_dir_all(dir.join("sub/.hidden")));
        ok(fs::write(dir.join("empty"), b""));
        ok(fs::write(dir.join("full"), b"x"));
        let p = |n: &str| dir.join(n).to_string_lossy().into_owned();
        assert_eq!(m.path_exists(&p("full")), Ok(true));
        assert_eq!(m.path_exists(&p("nope")), Ok(false));
        assert_eq!(m.is_directory(&p("sub")), Ok(true));
        assert_eq!(m.file_not_empty(&p("empty")), Ok(false));
        assert_eq!(m.file_not_empty(&p("full")), Ok(true));
        assert_eq!(m.file_is_executable(&p("full")), Ok(false));
        // Only a hidden entry: empty, as systemd counts it.
        assert_eq!(m.directory_not_empty(&p("sub")), Ok(false));
        assert_eq!(m.directory_not_empty(&dir.to_string_lossy()), Ok(true));
        assert_eq!(m.glob_matches(&p("f*")), Ok(true));
        assert_eq!(m.glob_matches(&p("z*")), Ok(false));
        assert_eq!(m.is_mount_point("/"), Ok(true));
        assert_eq!(m.is_mount_point(&p("sub")), Ok(false));
        assert_eq!(m.is_read_write(&p("full")), Ok(true));
        ok(fs::remove_dir_all(&dir));
    }

    #[test]
    fn update_stamps_read_from_the_file_system() {
        let m = Machine;
        let dir = std::env::temp_dir().join(format!("flotilla-upd-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        ok(fs::create_dir_all(&dir));
        let d = dir.to_string_lossy().into_owned();
        let missing = m.update_stamps(&d);
        assert_eq!(missing.stamp, None);
        assert!(!missing.read_only);
        let usr = ok(fs::symlink_metadata("/usr/"));
        assert_eq!(missing.usr.map(|t| t.sec), Some(usr.mtime()));
        ok(fs::write(dir.join(".updated"), b"TIMESTAMP_NSEC=5\n"));
        let written = ok(fs::symlink_metadata(dir.join(".updated")));
        let found = m.update_stamps(&d);
        assert_eq!(
            found.stamp,
            Some(MTime {
                sec: written.mtime(),
                nsec: written.mtime_nsec()
            })
        );
        // read only where the stamp's nanoseconds are 0
        let want = (written.mtime_nsec() == 0).then_some(5);
        assert_eq!(found.stamp_nsec, want);
        ok(fs::remove_dir_all(&dir));
    }

    #[test]
    fn machine_facts_read_from_proc() {
        let m = Machine;
        assert!(!m.kernel_release().is_empty());
        assert!(!m.hostname().is_empty());
        assert_eq!(m.architecture(), architecture());
        assert_eq!(m.user().0, geteuid().as_raw());
        // The test runs as root with a full bounding set, or not: either
        // way the answer is the one /proc/self/status gives.
        let status = ok(fs::read_to_string("/proc/self/status"));
        let bnd = status
            .lines()
            .find_map(|l| l.strip_prefix("CapBnd:"))
            .unwrap_or_else(|| panic!("no CapBnd"));
        let set = ok(u64::from_str_radix(bnd.trim(), 16));
        assert_eq!(m.has_capability("CAP_SYS_ADMIN"), set & (1 << 21) != 0);
        assert!(!m.has_capability("CAP_NOT_A_THING"));
    }
}
