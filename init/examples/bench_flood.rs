//! What a unit printing as fast as it can (`yes`) costs the real `init`:
//! its CPU over a window, and how many of the unit's lines it read and
//! kept, with the output rate limit (journald's defaults: 10,000 lines in
//! 30 s) doing its work. Prints figures (docs/performance.md has them).
//!
//! ```text
//! CARGO_TARGET_DIR=/work/target-bench cargo build --release -p flotilla-init --bin init --example bench_flood
//! /work/target-bench/release/examples/bench_flood [SECONDS] [BURST]
//! ```
//!
//! `FLOTILLA_INIT=PATH` measures another init binary. The init runs as a
//! supervisor with one unit, `flood` (`yes flooding`); after a second (the
//! burst is long read by then), the init's and `yes`'s CPU time
//! (`/proc/PID/stat`, user + system) are sampled over the window
//! (default 10 s), with the number of lines the init kept (the unit's log
//! stream's next number, from `logs` with `source`). `BURST` sets the
//! unit's `log-rate-limit-burst` (`0`: no limit).
//!
//! `BENCH_FLOOD_LOG_DIR=DIR` gives the init `--log-dir DIR` and runs the
//! log writer (`flotilla-logd` beside the init, or `FLOTILLA_LOGD=PATH`)
//! as a unit too; its CPU over the window is printed as well.

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
    let burst: Option<u32> = std::env::args().nth(2).map(|a| a.parse()).transpose()?;
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
    let limit = burst.map_or(String::new(), |b| format!("log-rate-limit-burst: {b}\n"));
    std::fs::write(
        units.join("flood.yaml"),
        format!("unit: flood\nexec-start: /usr/bin/yes flooding\n{limit}"),
    )?;
    let log_dir = std::env::var_os("BENCH_FLOOD_LOG_DIR").map(PathBuf::from);
    let mut target = "flood";
    if log_dir.is_some() {
        let logd = std::env::var_os("FLOTILLA_LOGD")
            .map_or_else(|| init.with_file_name("flotilla-logd"), PathBuf::from);
        std::fs::write(
            units.join("flotilla-logd.yaml"),
            format!("unit: flotilla-logd\nexec-start: {}\n", logd.display()),
        )?;
        std::fs::write(
            units.join("all.yaml"),
            "unit: all\ntype: virtual\ndepends-on: flood, flotilla-logd\n",
        )?;
        target = "all";
    }
    let sock = dir.path().join("control.sock");
    let mut cmd = Command::new(&init);
    cmd.arg("--units")
        .arg(&units)
        .args(["--target", target, "--control"])
        .arg(&sock);
    if let Some(d) = &log_dir {
        cmd.arg("--log-dir").arg(d);
    }
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()?;
    let writer = log_dir.is_some().then_some("flotilla-logd");
    let result = measure(&sock, child.id(), writer, Duration::from_secs(secs));
    let _ = child.kill();
    let _ = child.wait();
    let m = result?;
    let share = |cpu: f64| 100.0 * cpu / secs as f64;
    let limit = match burst {
        Some(0) => "no rate limit".to_string(),
        Some(b) => format!("log-rate-limit-burst: {b}"),
        None => "the default rate limit".to_string(),
    };
    let logs = match &log_dir {
        Some(d) => format!("--log-dir {} and the log writer", d.display()),
        None => "no log directory".to_string(),
    };
    println!(
        "init {}, one unit running `yes flooding` ({limit}), {logs}, {secs} s window:",
        init.display()
    );
    println!(
        "  the init's CPU: {:.1}% of a core; yes: {:.1}%",
        share(m.init),
        share(m.unit)
    );
    if let Some(w) = m.writer {
        println!("  the log writer's CPU: {:.1}% of a core", share(w));
    }
    println!("  lines kept in the window: {}", m.kept);
    Ok(())
}

/// CPU seconds over the window, and the lines the init kept meanwhile.
struct Measured {
    init: f64,
    unit: f64,
    writer: Option<f64>,
    kept: u64,
}

/// Samples the init, the `flood` unit and the unit `writer` (if any) over
/// `window`.
fn measure(
    sock: &Path,
    pid: u32,
    writer: Option<&str>,
    window: Duration,
) -> Result<Measured, BoxError> {
    let deadline = Instant::now() + Duration::from_secs(30);
    let pid_of = |name: &str| -> Result<u32, BoxError> {
        loop {
            if let Ok(p) = unit_pid(sock, name) {
                return Ok(u32::try_from(p)?);
            }
            if Instant::now() > deadline {
                return Err(format!("the unit {name} never ran").into());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    };
    let yes = pid_of("flood")?;
    let logd = writer.map(pid_of).transpose()?;
    std::thread::sleep(Duration::from_secs(1));
    let w0 = logd.map(cpu).transpose()?;
    let (i0, y0, n0) = (cpu(pid)?, cpu(yes)?, next_line(sock)?);
    std::thread::sleep(window);
    let (i1, y1, n1) = (cpu(pid)?, cpu(yes)?, next_line(sock)?);
    let w1 = logd.map(cpu).transpose()?;
    Ok(Measured {
        init: i1 - i0,
        unit: y1 - y0,
        writer: w0.zip(w1).map(|(a, b)| b - a),
        kept: n1 - n0,
    })
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

fn unit_pid(sock: &Path, name: &str) -> Result<i32, BoxError> {
    match ask(
        sock,
        Request::Status {
            name: Some(name.into()),
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
