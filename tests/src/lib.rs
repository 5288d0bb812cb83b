//! The system-test harness: temp dirs, the real binaries, and processes that
//! are killed by PID when a test ends, even on failure.
//!
//! The pieces, each in its own module:
//!
//! - [`bins`]: where the workspace's binaries are (`target/<profile>/`,
//!   found from the test executable, so `CARGO_TARGET_DIR` is honoured),
//!   built when missing;
//! - [`procs`]: process facts from `/proc` (alive, descendants, a marker in
//!   the environment) and the clean-up that kills what a test left;
//! - [`control`]: a client of the init's control socket (JSON lines) and a
//!   `subscribe` stream;
//! - [`init`]: a temp dir with a units directory, the real `init` started in
//!   it with a guard, waits on the init's state driven by its `subscribe`
//!   stream, and `initctl` run as a subprocess;
//! - [`etcd`]: a real etcd for the cluster tests;
//! - [`chaos`]: the seeded RNG and settings of the chaos soaks.
//!
//! Waiting is always for an event with a deadline, never a fixed sleep: the
//! deadline only bounds how long a broken test takes to fail.

pub mod bins;
pub mod chaos;
pub mod control;
pub mod etcd;
pub mod init;
pub mod procs;

#[cfg(test)]
mod house;

use std::time::{Duration, Instant};

// In `etcd.rs`, which the cluster's benchmark also includes by path.
pub use etcd::free_port;

/// How long a wait may take before the test fails. Generous: a passing test
/// never comes near it; it only bounds how long a broken one hangs.
pub const WAIT: Duration = Duration::from_secs(10);

/// Calls `f` until it returns `Some`, checking again every 10 ms; panics
/// with `what` after `limit`. For facts no event announces (a file appears,
/// a process dies); the init's own state is awaited with
/// [`init::Init::wait`], which follows its `subscribe` stream.
pub fn wait_for<T>(limit: Duration, what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(v) = f() {
            return v;
        }
        if Instant::now() > deadline {
            panic!("timed out after {limit:?} waiting for {what}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Taken for its whole run by each test that boots a VM or a whole system
/// in a container (one emulated CPU busy, or a system's worth of daemons):
/// the binaries that hold several of them (`vm`, `container`) run them one
/// after another, as when each had a binary of its own, so that the
/// machine's two cores are shared with `debian_boot`'s VM only. The other
/// tests of those binaries run beside them.
pub fn heavy() -> std::sync::MutexGuard<'static, ()> {
    static HEAVY: std::sync::Mutex<()> = std::sync::Mutex::new(());
    HEAVY.lock().unwrap_or_else(|e| e.into_inner())
}
