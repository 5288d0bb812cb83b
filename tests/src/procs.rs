//! Process facts from `/proc`, and killing what a test left behind.
//!
//! Every init a test starts gets a unique marker in its environment
//! ([`MARK_VAR`]); the init passes its environment on, so every unit process
//! carries it. Daemons that rewrite their environment area for their process
//! title (redis, nginx) lose it, but they are the init's children (it is a
//! subreaper), so the clean-up also takes the init's descendants while it
//! still runs.

use std::path::Path;
use std::time::{Duration, Instant};

/// The environment variable that marks a test's processes.
pub const MARK_VAR: &str = "FLOTILLA_TEST_MARK";

/// Whether `pid` is a live process (a zombie counts as dead).
pub fn alive(pid: i32) -> bool {
    if pid <= 0 {
        return false;
    }
    // SAFETY: signal 0 only checks that the process exists.
    if unsafe { libc::kill(pid, 0) } != 0 {
        return false;
    }
    !matches!(state(pid), Some('Z') | Some('X') | None)
}

/// The one-letter state of `pid` (`R`, `S`, `Z`, ...) from `/proc/PID/stat`.
pub fn state(pid: i32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = stat.rsplit_once(')')?.1;
    after.trim_start().chars().next()
}

/// The parent of `pid`.
pub fn ppid(pid: i32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = stat.rsplit_once(')')?.1;
    after.split_whitespace().nth(1)?.parse().ok()
}

/// The real user id of `pid`.
pub fn uid(pid: i32) -> Option<u32> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("Uid:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Every PID on the system.
pub fn all_pids() -> Vec<i32> {
    let Ok(rd) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    rd.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect()
}

/// The live descendants of `root` (not `root` itself).
pub fn descendants(root: i32) -> Vec<i32> {
    let parents: Vec<(i32, i32)> = all_pids()
        .into_iter()
        .filter_map(|p| Some((p, ppid(p)?)))
        .collect();
    let mut out = Vec::new();
    let mut frontier = vec![root];
    while let Some(p) = frontier.pop() {
        for &(c, pp) in &parents {
            if pp == p && !out.contains(&c) {
                out.push(c);
                frontier.push(c);
            }
        }
    }
    out
}

/// Whether `pid`'s environment holds `MARK_VAR=mark`.
pub fn has_mark(pid: i32, mark: &str) -> bool {
    let Ok(env) = std::fs::read(format!("/proc/{pid}/environ")) else {
        return false;
    };
    let want = format!("{MARK_VAR}={mark}");
    env.split(|&b| b == 0).any(|kv| kv == want.as_bytes())
}

/// The live processes carrying `mark`, other than this test process.
pub fn marked(mark: &str) -> Vec<i32> {
    let me = std::process::id() as i32;
    all_pids()
        .into_iter()
        .filter(|&p| p != me && has_mark(p, mark) && alive(p))
        .collect()
}

/// The command line of `pid`, words joined by spaces.
pub fn cmdline(pid: i32) -> String {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|b| {
            b.split(|&c| c == 0)
                .filter(|w| !w.is_empty())
                .map(|w| String::from_utf8_lossy(w).into_owned())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_default()
}

/// Sends `signal` to `pid` (errors ignored).
pub fn signal(pid: i32, signal: i32) {
    if pid > 0 {
        // SAFETY: plain kill(2).
        unsafe { libc::kill(pid, signal) };
    }
}

/// SIGKILLs each PID and its process group (errors ignored).
pub fn kill_all(pids: &[i32]) {
    for &p in pids {
        if p > 1 {
            // SAFETY: plain kill(2) on a PID (and its group) the test owns.
            unsafe {
                libc::kill(-p, libc::SIGKILL);
                libc::kill(p, libc::SIGKILL);
            }
        }
    }
}

/// Kills every process carrying `mark` until none is left (at most 2 s:
/// a process forking as it dies gets a second round).
pub fn kill_marked(mark: &str) {
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        let left = marked(mark);
        if left.is_empty() || Instant::now() > deadline {
            return;
        }
        kill_all(&left);
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Whether a PID file names a live process.
pub fn pidfile_alive(path: &Path) -> Option<i32> {
    let pid: i32 = std::fs::read_to_string(path).ok()?.trim().parse().ok()?;
    alive(pid).then_some(pid)
}
