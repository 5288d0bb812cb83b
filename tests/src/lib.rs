//! The system-test harness: temp dirs, the real binaries, and processes that
//! are killed by PID when a test ends, even on failure.
