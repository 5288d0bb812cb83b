//! What a unit printing as fast as it can (`yes`) costs the real `init`:
//! its CPU over a window, and how many of the unit's lines it read and
//! kept, with the output rate limit (journald's defaults: 10,000 lines in
//! 30 s) doing its work. Prints figures (docs/performance.md has them).
//!
//! ```text
//! CARGO_TARGET_DIR=/work/target-bench cargo build --release -p flotilla-init --bin init --example bench_flood
//! /work/target-bench/release/examples/bench_flood [SECONDS]
//! ```
//!
//! `FLOTILLA_INIT=PATH` measures another init binary. The init runs as a
//! supervisor with one unit, `flood` (`yes flooding`); after a second (the
//! burst is long read by then), the init's and `yes`'s CPU time
//! (`/proc/PID/stat`, user + system) are sampled over the window
//! (default 10 s), with the number of lines the init kept (the unit's log
//! stream's next number, from `logs` with `source`).

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use flotilla_units::protocol::{Envelope, Reply, Request};

#[path = "support/cpu.rs"]
mod cpu;

type BoxError = Box<dyn std::error::Error>;

fn main() -> Result<(), BoxError> {
    let secs: u64 = std::env::args()
        .nth(1)
        .map(|a| a.parse())
        .transpose()?
        .unwrap_or(10);
    let init = match std::env::var_os("FLOTILLA_INIT") {
        Some(p) => PathBuf::from(p),
        None => std::env::current_exe()?
            .parent()
            .and_then(Path::parent)
            .ok_or("no directory for the init binary")?
            .join("init"),
    };
    let dir = tempfile::tempdir()?;
    let units = dir.path().join("units");
    std::fs::create_dir_all(&units)?;
    std::fs::write(
        units.join("flood.yaml"),
        "unit: flood\nexec-start: /usr/bin/yes flooding\n",
    )?;
    let sock = dir.path().join("control.sock");
    let mut child = Command::new(&init)
        .arg("--units")
        .arg(&units)
        .args(["--target", "flood", "--control"])
        .arg(&sock)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()?;
    let result = measure(&sock, child.id(), Duration::from_secs(secs));
    let _ = child.kill();
    let _ = child.wait();
    let (init_cpu, yes_cpu, kept) = result?;
    println!(
        "init {}, one unit running `yes flooding`, {secs} s window:",
        init.display()
    );
    println!(
        "  the init's CPU: {:.1}% of a core; yes: {:.1}%",
        100.0 * init_cpu / secs as f64,
        100.0 * yes_cpu / secs as f64
    );
    println!("  lines kept in the window: {kept}");
    Ok(())
}

/// The init's and the unit's CPU seconds over `window`, and the lines the
/// init kept meanwhile.
fn measure(sock: &Path, pid: u32, window: Duration) -> Result<(f64, f64, u64), BoxError> {
    let deadline = Instant::now() + Duration::from_secs(30);
    let yes = loop {
        if let Ok(p) = unit_pid(sock) {
            break p;
        }
        if Instant::now() > deadline {
            return Err("the flood unit never ran".into());
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    std::thread::sleep(Duration::from_secs(1));
    let (i0, y0, n0) = (cpu(pid)?, cpu(yes as u32)?, next_line(sock)?);
    std::thread::sleep(window);
    let (i1, y1, n1) = (cpu(pid)?, cpu(yes as u32)?, next_line(sock)?);
    Ok((i1 - i0, y1 - y0, n1 - n0))
}

fn ask(sock: &Path, req: Request) -> Result<Vec<Reply>, BoxError> {
    let mut s = UnixStream::connect(sock)?;
    let mut line = serde_json::to_vec(&Envelope::new(req))?;
    line.push(b'\n');
    s.write_all(&line)?;
    let mut out = Vec::new();
    for l in BufReader::new(s).lines() {
        let r: Reply = serde_json::from_str(&l?)?;
        let last = r.is_final();
        out.push(r);
        if last {
            break;
        }
    }
    Ok(out)
}

fn unit_pid(sock: &Path) -> Result<i32, BoxError> {
    match ask(
        sock,
        Request::Status {
            name: Some("flood".into()),
        },
    )?
    .pop()
    {
        Some(Reply::Unit(u)) => u.pid.ok_or_else(|| "no PID yet".into()),
        other => Err(format!("status: {other:?}").into()),
    }
}

/// The number the unit's next line will get.
fn next_line(sock: &Path) -> Result<u64, BoxError> {
    let replies = ask(
        sock,
        Request::Logs {
            unit: "flood".into(),
            lines: Some(0),
            follow: false,
            source: true,
        },
    )?;
    replies
        .into_iter()
        .find_map(|r| match r {
            Reply::LogSource(s) => Some(s.next),
            _ => None,
        })
        .ok_or_else(|| "no log-source reply".into())
}

/// User + system CPU seconds of a process.
fn cpu(pid: u32) -> Result<f64, BoxError> {
    Ok(cpu::cpu_time(pid)?.as_secs_f64())
}
