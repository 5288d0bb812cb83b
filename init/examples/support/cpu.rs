//! A process's CPU time, for the bench binaries (`#[path]`-included).

use std::time::Duration;

/// The user + system CPU time of process `pid` so far (`/proc/PID/stat`).
#[allow(dead_code)] // not every bench binary including this uses it
pub fn cpu_time(pid: u32) -> Result<Duration, Box<dyn std::error::Error>> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    let rest = stat.rsplit_once(')').map(|(_, r)| r).ok_or("bad stat")?;
    let f: Vec<&str> = rest.split_whitespace().collect();
    // Fields 14 and 15 (utime, stime), counted from the state (field 3).
    let ticks: u64 = f.get(11).ok_or("no utime")?.parse::<u64>()?
        + f.get(12).ok_or("no stime")?.parse::<u64>()?;
    // SAFETY: sysconf(3) has no preconditions.
    let hz = u64::try_from(unsafe { libc::sysconf(libc::_SC_CLK_TCK) }).unwrap_or(100);
    Ok(Duration::from_micros(ticks * 1_000_000 / hz.max(1)))
}

/// The CPU time the children of `pid` have run so far, summed
/// (`/proc/CHILD/schedstat`, nanoseconds, rather than `stat`'s 10 ms
/// ticks: a `sleep`'s start is under a millisecond). A child's time counts
/// from its clone, so it includes what its parent's code did in it before
/// `execve`.
#[allow(dead_code)] // not every bench binary including this uses it
pub fn children_run_time(pid: u32) -> Result<Duration, Box<dyn std::error::Error>> {
    let kids = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))?;
    let mut ns = 0u64;
    for kid in kids.split_whitespace() {
        // A child gone meanwhile adds nothing.
        if let Ok(s) = std::fs::read_to_string(format!("/proc/{kid}/schedstat")) {
            ns += s
                .split_whitespace()
                .next()
                .and_then(|t| t.parse::<u64>().ok())
                .unwrap_or(0);
        }
    }
    Ok(Duration::from_nanos(ns))
}

/// The user + system CPU time of `who` so far (`getrusage(2)`:
/// `RUSAGE_SELF`, `RUSAGE_THREAD` or `RUSAGE_CHILDREN`), to the
/// microsecond: a spawn or a launch is too short for `/proc/PID/stat`'s
/// 10 ms ticks.
#[allow(dead_code)] // not every bench binary including this uses it
pub fn rusage(who: libc::c_int) -> Duration {
    // SAFETY: an all-zero rusage is valid; getrusage(2) fills it.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `ru` is valid for writes.
    unsafe { libc::getrusage(who, &mut ru) };
    let tv = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
    };
    tv(ru.ru_utime) + tv(ru.ru_stime)
}
