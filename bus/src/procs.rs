//! What `/proc` and the cgroup tree say of a unit's processes: the
//! cgroup its main process is in (systemd's `ControlGroup`: flotilla puts
//! a unit in a cgroup of its own under the init's,
//! `docs/service-context.md`), and the processes in it
//! (`GetUnitProcesses`, which `systemctl status` lists).

/// The cgroup2 path of a process (`0::PATH` in `/proc/PID/cgroup`).
pub fn cgroup_of(pid: i32) -> Option<String> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix("0::"))
        .map(str::to_string)
}

/// A process's command line, its arguments joined by spaces; a kernel
/// thread, which has none, as `[comm]` (as systemd shows it).
fn cmdline(pid: u32) -> String {
    let raw = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let line = raw
        .split(|b| *b == 0)
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect::<Vec<_>>()
        .join(" ");
    if line.is_empty() {
        let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
        return format!("[{}]", comm.trim());
    }
    line
}

/// Where the cgroup2 tree is mounted (`/sys/fs/cgroup`, or
/// `/sys/fs/cgroup/unified` on a hybrid host), from `/proc/self/mountinfo`.
fn cgroup2_root() -> String {
    let text = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    text.lines()
        .find(|l| l.contains(" - cgroup2 "))
        .and_then(|l| l.split(' ').nth(4))
        .unwrap_or("/sys/fs/cgroup")
        .to_string()
}

/// The processes of a cgroup and its children, as `GetUnitProcesses`
/// gives them: `(cgroup, pid, command line)`.
pub fn processes(cgroup: &str) -> Vec<(String, u32, String)> {
    let mut out = Vec::new();
    let mount = cgroup2_root();
    let mut dirs = vec![cgroup.to_string()];
    while let Some(cg) = dirs.pop() {
        let root = format!("{mount}{cg}");
        if let Ok(text) = std::fs::read_to_string(format!("{root}/cgroup.procs")) {
            for pid in text.lines().filter_map(|l| l.trim().parse::<u32>().ok()) {
                out.push((cg.clone(), pid, cmdline(pid)));
            }
        }
        if let Ok(entries) = std::fs::read_dir(&root) {
            for e in entries.flatten() {
                if e.file_type().is_ok_and(|t| t.is_dir()) {
                    dirs.push(format!("{cg}/{}", e.file_name().to_string_lossy()));
                }
            }
        }
    }
    out
}

/// When the init started, in µs: (`CLOCK_REALTIME`, `CLOCK_MONOTONIC`),
/// systemd's `UserspaceTimestamp` (what `systemctl status` shows as
/// "Since:"). The init is this process's parent: it spawns busd as one of
/// its units. Read from `/proc/PPID/stat` (its start in clock ticks after
/// the boot) and `/proc/stat` (`btime`, the boot in seconds of the epoch);
/// `(0, 0)`, systemd's "unknown", when either cannot be read.
pub fn init_started() -> (u64, u64) {
    // SAFETY: getppid(2) and sysconf(3) take no pointers.
    let (ppid, ticks) = unsafe { (libc::getppid(), libc::sysconf(libc::_SC_CLK_TCK)) };
    let Ok(ticks) = u64::try_from(ticks) else {
        return (0, 0);
    };
    let stat = std::fs::read_to_string(format!("/proc/{ppid}/stat")).unwrap_or_default();
    // The fields after the command (which may hold spaces) start at the
    // state, field 3; the start time is field 22.
    let start = stat
        .rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().nth(19))
        .and_then(|v| v.parse::<u64>().ok());
    let btime = std::fs::read_to_string("/proc/stat")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("btime "))
        .and_then(|v| v.trim().parse::<u64>().ok());
    match (start, btime) {
        (Some(start), Some(btime)) if ticks > 0 => {
            let mono = start.saturating_mul(1_000_000) / ticks;
            (btime.saturating_mul(1_000_000).saturating_add(mono), mono)
        }
        _ => (0, 0),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_in_its_cgroup() {
        let me = i32::try_from(std::process::id()).unwrap();
        let cg = cgroup_of(me).unwrap();
        assert!(cg.starts_with('/'), "{cg}");
        let procs = processes(&cg);
        assert!(
            procs
                .iter()
                .any(|(_, p, cmd)| *p == std::process::id() && !cmd.is_empty()),
            "{procs:?}"
        );
        assert_eq!(cgroup_of(-1), None);
    }

    #[test]
    fn the_parents_start_is_after_the_boot_and_before_now() {
        let (real, mono) = init_started();
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_micros();
        assert!(mono > 0 && real > mono, "{real} {mono}");
        assert!(u128::from(real) <= now, "{real} {now}");
    }
}
