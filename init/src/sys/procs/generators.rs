//! The generator runner (docs/generators.md): the init's own binary run as
//! `init --run-generators OUTPUT TIMEOUT_MS DIR…`, a child of the init,
//! which empties and makes the three output directories under `OUTPUT`,
//! runs every generator of the `DIR`s (`flotilla_systemd::load::generators`
//! picks them) at once, as systemd runs them in parallel, each with
//! `NORMAL EARLY LATE` as its arguments and the environment it was given,
//! and exits when all have ended or `TIMEOUT_MS` has passed: a generator
//! still running then is killed with its whole process group. It reports
//! each failure and the run on its standard output (the init's console)
//! and exits 0: a generator that fails never stops a boot.
//!
//! A child of its own, so that the init's loop never waits for a
//! generator: at boot the init waits for this process before it reads the
//! units (as systemd does), at a reload it reads them when this process's
//! exit is reaped.

use crate::sys::context::ChildContext;
use crate::sys::env::Env;
use crate::sys::ExecOutcome;
use crate::sys::{Pid, SpawnRequest, Stdio, Sys};
use flotilla_systemd::load::generators::{pick, Candidate, Outputs};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The first argument that makes the init a generator runner.
pub const RUN_FLAG: &str = "--run-generators";

/// One run's parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Run {
    /// Where the output directories are made.
    pub output: PathBuf,
    /// The time all generators may take together.
    pub timeout: Duration,
    /// The generator directories, first first.
    pub dirs: Vec<PathBuf>,
}

impl Run {
    /// The runner's command line: `exe` (the init's binary) and the run.
    pub fn argv(&self, exe: &Path) -> Vec<String> {
        let mut argv = vec![
            exe.display().to_string(),
            RUN_FLAG.to_string(),
            self.output.display().to_string(),
            self.timeout.as_millis().to_string(),
        ];
        argv.extend(self.dirs.iter().map(|d| d.display().to_string()));
        argv
    }

    /// The run from the runner's arguments after [`RUN_FLAG`].
    pub fn parse(args: &[String]) -> Option<Run> {
        let (output, rest) = args.split_first()?;
        let (ms, dirs) = rest.split_first()?;
        Some(Run {
            output: PathBuf::from(output),
            timeout: Duration::from_millis(ms.parse().ok()?),
            dirs: dirs.iter().map(PathBuf::from).collect(),
        })
    }
}

/// The runner's `main`: runs `run`, prints its report, returns the exit
/// status (0 unless the output directories cannot be made).
pub fn main(run: &Run) -> u8 {
    let started = Instant::now();
    let out = Outputs::under(&run.output);
    for dir in out.all() {
        // systemd flushes the last run's output whole before a run.
        if let Err(e) = std::fs::remove_dir_all(dir) {
            if e.kind() != std::io::ErrorKind::NotFound {
                println!("init: generators: cannot empty {}: {e}", dir.display());
            }
        }
        let made = std::fs::create_dir_all(dir)
            .and_then(|()| std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)));
        if let Err(e) = made {
            println!("init: generators: cannot make {}: {e}", dir.display());
            return 1;
        }
    }
    let listed: Vec<(PathBuf, Vec<Candidate>)> = run
        .dirs
        .iter()
        .map(|d| (d.clone(), candidates(d)))
        .collect();
    let programs = pick(&listed);
    let deadline = started + run.timeout;
    let mut failed = 0usize;
    let mut running = start_all(&programs, &out, &mut failed);
    while !running.is_empty() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        wait_some(&running, left);
        let mut i = 0;
        while let Some(g) = running.get(i) {
            match try_reap(g.pid) {
                Ok(Some(status)) => {
                    if !status.success() {
                        failed += 1;
                        println!(
                            "init: generator {} {}",
                            g.program.display(),
                            describe(status)
                        );
                    }
                    running.remove(i);
                }
                Ok(None) => i += 1,
                Err(_) => {
                    running.remove(i);
                }
            }
        }
    }
    for g in running {
        failed += 1;
        // The whole group: what a hung generator started goes with it
        // (each leads a group of its own, its PGID its PID).
        // SAFETY: kill(2) with a negative PID signals that group only.
        unsafe { libc::kill(-g.pid, libc::SIGKILL) };
        let mut status = 0;
        // SAFETY: waitpid(2) for this child of ours.
        unsafe { libc::waitpid(g.pid, &mut status, 0) };
        println!(
            "init: generator {} did not finish within {} s; killed",
            g.program.display(),
            run.timeout.as_secs_f64()
        );
    }
    println!(
        "init: generators: {} run in {} ms, {} failed",
        programs.len(),
        started.elapsed().as_millis(),
        failed
    );
    0
}

/// A directory's entries as [`pick`] takes them (none when it cannot be
/// read: most of the directories do not exist on a given system).
fn candidates(dir: &Path) -> Vec<Candidate> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let null_rdev = std::fs::metadata("/dev/null").map(|m| m.rdev()).ok();
    let mut out = Vec::new();
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let path = e.path();
        let Ok(meta) = std::fs::metadata(&path) else {
            continue;
        };
        let ft = meta.file_type();
        let masked = (ft.is_char_device() && Some(meta.rdev()) == null_rdev)
            || (ft.is_file() && meta.len() == 0);
        let executable = ft.is_file() && meta.permissions().mode() & 0o111 != 0;
        out.push(Candidate {
            name,
            executable,
            masked,
        });
    }
    out
}

/// A generator started and not yet ended.
struct Running {
    program: PathBuf,
    pid: Pid,
    /// Its pidfd (Linux 5.3), to wait for several children with one
    /// `poll(2)`; `None` where the kernel has none (then the wait polls).
    fd: Option<OwnedFd>,
}

/// Starts every generator of `programs` with the output directories as
/// arguments, and only then learns whether each one's `execve(2)`
/// succeeded: the init's spawner (`crate::sys::spawn`) returns before the child
/// has exec'd, so the generators start together, as systemd forks them,
/// instead of each waiting for the `execve` of the ones before it (a wait
/// for a CPU each on a loaded machine). Each has `/` as its directory,
/// `/dev/null` as its standard input, the runner's output and environment,
/// and leads a session and process group of its own (killed whole at the
/// time limit). One that cannot be started is said and counted in
/// `failed`.
fn start_all(programs: &[PathBuf], out: &Outputs, failed: &mut usize) -> Vec<Running> {
    let sys = crate::sys::real::RealSys::new();
    let env = Env::from_current();
    let mut started = Vec::with_capacity(programs.len());
    for p in programs {
        let mut argv = vec![p.to_string_lossy().into_owned()];
        argv.extend(out.argv().map(|d| d.to_string_lossy().into_owned()));
        let mut req = SpawnRequest::new(&argv, &env);
        req.cwd = Some(Path::new("/"));
        req.stdout = Stdio::Inherit;
        req.stderr = Stdio::Inherit;
        match sys.spawn_started(&req) {
            Ok((pid, watch)) => started.push((p, pid, watch)),
            Err(e) => {
                *failed += 1;
                println!("init: generator {} failed to start: {e}", p.display());
            }
        }
    }
    let mut running = Vec::with_capacity(started.len());
    for (p, pid, watch) in started {
        let outcome = watch.map(|mut w| w.wait(|| None::<&ChildContext>));
        if let Some(ExecOutcome::Failed(e)) = outcome {
            *failed += 1;
            println!("init: generator {} failed to start: {e}", p.display());
            continue;
        }
        running.push(Running {
            program: p.clone(),
            pid,
            fd: crate::sys::pidfd::open(pid).ok(),
        });
    }
    running
}

/// How `pid`, a child of ours, ended once it has (reaped), `None` while it
/// runs; an error when it is no child of ours.
fn try_reap(pid: Pid) -> std::io::Result<Option<std::process::ExitStatus>> {
    let mut status = 0;
    // SAFETY: waitpid(2) for one child, without blocking.
    match unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) } {
        0 => Ok(None),
        r if r == pid => Ok(Some(std::process::ExitStatus::from_raw(status))),
        _ => Err(std::io::Error::last_os_error()),
    }
}

/// Waits until one of `running` ends or `left` has passed.
fn wait_some(running: &[Running], left: Duration) {
    let mut fds: Vec<libc::pollfd> = running
        .iter()
        .filter_map(|g| g.fd.as_ref())
        .map(|fd| libc::pollfd {
            fd: fd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    // Without pidfds, look again every 10 ms.
    let ms = if fds.len() == running.len() {
        left.as_millis().min(i32::MAX as u128) as i32
    } else {
        left.as_millis().min(10) as i32
    };
    let n = libc::nfds_t::try_from(fds.len()).unwrap_or(0);
    // SAFETY: `fds` holds `n` valid pollfd structures.
    unsafe { libc::poll(fds.as_mut_ptr(), n, ms.max(1)) };
}

/// An exit status in words.
fn describe(status: std::process::ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (Some(c), _) => format!("failed with exit status {c}"),
        (None, Some(s)) => format!("was killed by signal {s}"),
        _ => "failed".to_string(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;

    #[test]
    fn the_command_line_goes_both_ways() {
        let run = Run {
            output: PathBuf::from("/run/systemd"),
            timeout: Duration::from_secs(90),
            dirs: vec![PathBuf::from("/etc/systemd/system-generators")],
        };
        let argv = run.argv(Path::new("/sbin/flotilla"));
        assert_eq!(
            argv,
            [
                "/sbin/flotilla",
                "--run-generators",
                "/run/systemd",
                "90000",
                "/etc/systemd/system-generators"
            ]
        );
        assert_eq!(Run::parse(&argv[2..]), Some(run));
        assert_eq!(Run::parse(&["/x".to_string()]), None);
    }

    #[test]
    fn runs_them_and_reports_failures() {
        // Its children must not be reaped by another test's wait for any
        // child, nor it reap theirs.
        let _g = crate::sys::tests::process_lock();
        let tmp = tempfile::tempdir().unwrap();
        let gens = tmp.path().join("gens");
        std::fs::create_dir(&gens).unwrap();
        let script = |name: &str, body: &str| {
            let p = gens.join(name);
            std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        };
        script("a-writes", "echo \"$1 $2 $3\" > \"$1/args\"");
        script("b-fails", "exit 3");
        script("c-hangs", "exec sleep 1000");
        let out = tmp.path().join("out");
        let run = Run {
            output: out.clone(),
            timeout: Duration::from_millis(500),
            dirs: vec![gens],
        };
        assert_eq!(main(&run), 0);
        let o = Outputs::under(&out);
        assert_eq!(
            std::fs::read_to_string(o.normal.join("args")).unwrap(),
            format!(
                "{} {} {}\n",
                o.normal.display(),
                o.early.display(),
                o.late.display()
            )
        );
        // A second run starts from empty directories.
        std::fs::write(o.late.join("stale"), "").unwrap();
        assert_eq!(main(&run), 0);
        assert!(!o.late.join("stale").exists());
    }

    /// Each generator as the init starts a unit: its own session and
    /// process group (so that the group kill at the limit reaches what it
    /// started), `/` as its directory, `/dev/null` as its input. One whose
    /// `execve` fails (a missing interpreter: the spawner finds the file,
    /// the kernel refuses it) is learnt once all are started, counted and
    /// left out; the others run.
    #[test]
    fn starts_them_as_units_and_counts_what_cannot_run() {
        let _g = crate::sys::tests::process_lock();
        let tmp = tempfile::tempdir().unwrap();
        let script = |name: &str, text: &str| {
            let p = tmp.path().join(name);
            std::fs::write(&p, text).unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
            p
        };
        let bad = script("a-no-interpreter", "#!/nonexistent/sh\nexit 0\n");
        let good = script(
            "b-says-where",
            "#!/bin/sh\nd=$1\nset -- $(cat /proc/$$/stat)\n\
             echo \"$1 $5 $6 $PWD $(readlink /proc/$$/fd/0)\" > \"$d/where\"\n",
        );
        let out = Outputs::under(&tmp.path().join("out"));
        std::fs::create_dir_all(&out.normal).unwrap();
        let mut failed = 0;
        let running = start_all(&[bad, good.clone()], &out, &mut failed);
        assert_eq!(failed, 1);
        assert_eq!(running.len(), 1);
        assert_eq!(running[0].program, good);
        let pid = running[0].pid;
        let mut status = 0;
        // SAFETY: waitpid(2) for the child just started.
        assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
        assert_eq!(status, 0);
        assert_eq!(
            std::fs::read_to_string(out.normal.join("where")).unwrap(),
            format!("{pid} {pid} {pid} / /dev/null\n")
        );
    }
}
