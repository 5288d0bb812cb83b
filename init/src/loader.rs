//! The unit loader as a child of the init (docs/pid1.md, "Loading the
//! units"): the init's own binary run as `init --load-units JOB`, where
//! `JOB` is a [`Job`] as JSON. The child reads the unit search path as
//! [`crate::unitdir::load_units_naming`] does in process (the YAML reader,
//! systemd's translator, SysV scripts, the init's built-in units) and
//! writes the [`LoadedPath`] (or why the path could not be read) as JSON to
//! its standard output, which is a memory file the init made ([`Output`]);
//! the init maps and parses it once the child's exit is reaped.
//!
//! Why a child: a parser bug or a hostile unit file crashes or hangs the
//! child, not PID 1; and the files' texts, their parse and the code that
//! reads them run in the child's memory, not PID 1's (what that saves, and
//! why it is less than expected: docs/performance.md, "Init memory with
//! 1000 units running"). The child limits itself with `alarm(2)`
//! ([`LIMIT`]): the kernel ends it with `SIGALRM` whatever it is doing, and
//! the init sees a failed load.
//!
//! Why a memory file and not a pipe: the child writes all of it and exits
//! without waiting for the init to read (a pipe holds 64 KiB; a Debian
//! system's units are a few hundred KiB of JSON), so the init never reads
//! a pipe in turns, and it parses the file mapped: the text is never in
//! PID 1's heap.

use crate::settings::Settings;
use crate::sys::env::Env;
use crate::sys::{Pid, SpawnRequest, Stdio, Sys};
use flotilla_systemd::load::LoadedPath;
use serde::{Deserialize, Serialize};
use std::io::{BufWriter, Write};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The first argument that makes the init a unit loader.
pub const RUN_FLAG: &str = "--load-units";

/// How long the loader may take: it ends itself then (`alarm(2)`). A
/// Debian system's units load in well under a second; a minute is for a
/// slow disk, not for a parser that loops.
pub const LIMIT: Duration = Duration::from_secs(60);

/// The most the init reads back: far more than any unit set's JSON (a
/// unit file is at most 1 MiB), so that a broken loader cannot make PID 1
/// allocate without bound.
const MAX_OUTPUT: u64 = 256 * 1024 * 1024;

/// What the child loads: the part of the settings the load reads, and the
/// instances asked for besides those the units name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Job {
    /// The unit search path, the generators' directories placed.
    pub path: Vec<PathBuf>,
    /// The SysV scripts' directory, when they are read.
    pub sysv_dir: Option<PathBuf>,
    /// The log directory: with one, the built-in log writer is a unit.
    pub log_dir: Option<PathBuf>,
    /// The control socket the log writer is given.
    pub control: PathBuf,
    /// Whether systemd's D-Bus interface is one of the units.
    pub systemd_bus: bool,
    /// The instances to make besides those the units name (the target, the
    /// wanted units).
    pub named: Vec<String>,
    /// The config asked for systemd's D-Bus interface itself.
    #[serde(default)]
    pub systemd_bus_asked: bool,
    /// The target (the `-- CMD` unit waits for it).
    #[serde(default)]
    pub target: String,
    /// The command after `--`, a unit of the set (`cmd.rs`).
    #[serde(default)]
    pub cmd: Option<crate::settings::CmdLine>,
    /// The root of the manager's settings (`system.conf`), when read.
    #[serde(default)]
    pub system_conf: Option<PathBuf>,
    /// Whether standard input is a watch of the init's
    /// (`Sys::path_stamp_instance`) that the load adds each directory and
    /// file to before it reads it (`crate::pathstamp::Seen::watched`).
    #[serde(default)]
    pub watch: bool,
}

impl Job {
    /// The job of a load with `settings`, making the instances `named`.
    pub fn new(settings: &Settings, named: &[String]) -> Job {
        Job {
            path: settings.units_path(),
            sysv_dir: settings.sysv_dir.clone(),
            log_dir: settings.log_dir.clone(),
            control: settings.control.clone(),
            systemd_bus: settings.systemd_bus,
            named: named.to_vec(),
            systemd_bus_asked: settings.systemd_bus_asked,
            target: settings.target.clone(),
            cmd: settings.cmd.clone(),
            system_conf: settings.system_conf.clone(),
            watch: false,
        }
    }

    /// Settings that load as the job says (the path given whole, so no
    /// generators to place; what the load does not read left at its
    /// default).
    pub fn settings(&self) -> Settings {
        let (first, rest) = self.path.split_first().map_or_else(
            || (PathBuf::new(), Vec::new()),
            |(f, r)| (f.clone(), r.to_vec()),
        );
        Settings {
            more_units_dirs: rest,
            log_dir: self.log_dir.clone(),
            sysv_dir: self.sysv_dir.clone(),
            systemd_bus: self.systemd_bus,
            cmd: self.cmd.clone(),
            systemd_bus_asked: self.systemd_bus_asked,
            system_conf: self.system_conf.clone(),
            ..Settings::new(first, &self.target, self.control.clone())
        }
    }
}

/// The loader's `main`: loads what `job` (JSON) says and writes the result
/// to standard output; returns the exit status (0 once written; 2 for a
/// job that does not parse, 1 when the result cannot be written).
pub fn main(job: &str) -> u8 {
    // SAFETY: alarm(2) only arms this process's timer.
    unsafe { libc::alarm(u32::try_from(LIMIT.as_secs()).unwrap_or(u32::MAX)) };
    let Some(out) = take_stdout() else {
        eprintln!("init: {RUN_FLAG}: no standard output");
        return 1;
    };
    let job: Job = match serde_json::from_str(job) {
        Ok(j) => j,
        Err(e) => {
            eprintln!("init: {RUN_FLAG}: bad job: {e}");
            return 2;
        }
    };
    crate::sys::reexec::remember_exe();
    let sys = crate::sys::real::RealSys::new();
    // SAFETY: descriptor 0 is the watch the init handed over (`spawn`),
    // open for the whole of this process's life.
    let watch = job.watch.then(|| unsafe { BorrowedFd::borrow_raw(0) });
    let loaded = crate::unitdir::load_units_watched(&sys, &job.settings(), &job.named, watch)
        .map_err(|e| e.to_string());
    match write(std::fs::File::from(out), &loaded) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("init: {RUN_FLAG}: cannot write the units: {e}");
            1
        }
    }
}

/// Writes a load's result as the init reads it back ([`read`]).
pub fn write(file: impl Write, loaded: &Result<LoadedPath, String>) -> std::io::Result<()> {
    let mut w = BufWriter::new(file);
    serde_json::to_writer(&mut w, loaded)?;
    w.flush()
}

/// Reads back what [`write`] wrote to `file`, mapped rather than copied
/// (the text is never in PID 1's heap) and parsed by the same reader as the
/// re-exec snapshot (`serde_json::from_slice`), whose code for the specs the
/// binary has anyway.
pub fn read(file: &std::fs::File) -> Result<LoadedPath, String> {
    let len = file
        .metadata()
        .map_err(|e| format!("cannot read the loader's output: {e}"))?
        .len();
    if len == 0 {
        return Err("the loader wrote nothing".to_string());
    }
    if len > MAX_OUTPUT {
        return Err(format!(
            "the loader wrote {len} bytes, more than {MAX_OUTPUT}; not read"
        ));
    }
    let map = Mapped::new(file, len)?;
    let r: Result<LoadedPath, String> = serde_json::from_slice(map.bytes())
        .map_err(|e| format!("the loader's output does not parse: {e}"))?;
    r
}

/// A file mapped read-only, unmapped when dropped.
struct Mapped {
    ptr: *mut libc::c_void,
    len: usize,
}

impl Mapped {
    /// Maps the first `len` bytes of `file`.
    fn new(file: &std::fs::File, len: u64) -> Result<Mapped, String> {
        let len = usize::try_from(len).map_err(|e| e.to_string())?;
        // SAFETY: a new private read-only mapping of an open descriptor;
        // the kernel checks the arguments.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_PRIVATE,
                file.as_raw_fd(),
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(format!(
                "cannot map the loader's output: {}",
                std::io::Error::last_os_error()
            ));
        }
        Ok(Mapped { ptr, len })
    }

    /// The mapped bytes.
    fn bytes(&self) -> &[u8] {
        // SAFETY: `ptr` maps `len` readable bytes until `self` is dropped;
        // the memory file is the init's, and the child that wrote it has
        // exited.
        unsafe { std::slice::from_raw_parts(self.ptr.cast::<u8>(), self.len) }
    }
}

impl Drop for Mapped {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping made in `new`.
        unsafe { libc::munmap(self.ptr, self.len) };
    }
}

/// The child's standard output as a descriptor of its own, with
/// descriptor 1 then on standard error (the console): whatever prints a
/// line (`Sys::console` writes to standard output) cannot mix it into the
/// JSON.
fn take_stdout() -> Option<OwnedFd> {
    // SAFETY: F_DUPFD_CLOEXEC makes a new descriptor of 1, ours alone.
    let fd = unsafe { libc::fcntl(1, libc::F_DUPFD_CLOEXEC, 3) };
    if fd < 0 {
        return None;
    }
    // SAFETY: `fd` was just made and is owned by nobody else.
    let out = unsafe { OwnedFd::from_raw_fd(fd) };
    // SAFETY: dup2(2) of two open descriptors of this process.
    unsafe { libc::dup2(2, 1) };
    Some(out)
}

/// The memory file the child writes its result to.
#[derive(Debug)]
pub struct Output(std::fs::File);

impl Output {
    /// A new, empty memory file (close-on-exec: only the child's
    /// descriptor 1, put there by the spawn, survives its `execve`).
    pub fn new() -> Result<Output, String> {
        crate::sys::memfd::create(c"flotilla-units", 0)
            .map(Output)
            .map_err(|e| format!("memfd_create: {e}"))
    }

    /// Another descriptor of the file, for a child started by
    /// `std::process::Command` (the tests).
    pub fn try_clone_file(&self) -> std::io::Result<std::fs::File> {
        self.0.try_clone()
    }

    /// The loaded units the child wrote (call once it has exited).
    pub fn read(self) -> Result<LoadedPath, String> {
        read(&self.0)
    }
}

/// A loader child under way.
#[derive(Debug)]
pub struct Loading {
    /// Its PID.
    pub pid: Pid,
    /// Where it writes.
    pub output: Output,
    /// The watch it adds what it reads to (`Job::watch`), when it was
    /// given one.
    pub watch: Option<OwnedFd>,
}

/// Starts the loader `exe` (the init's binary) for `job`, with the
/// environment `env`, its standard error on the init's; with a watch of
/// the path (`Sys::path_stamp_instance`) as its standard input when one
/// can be made.
pub fn spawn(sys: &dyn Sys, exe: &Path, job: &Job, env: &Env) -> Result<Loading, String> {
    let cannot = |e: String| format!("cannot run the unit loader: {e}");
    let output = Output::new().map_err(cannot)?;
    let watch = sys.path_stamp_instance().ok();
    let job = Job {
        watch: watch.is_some(),
        ..job.clone()
    };
    let json = serde_json::to_string(&job).map_err(|e| cannot(e.to_string()))?;
    let argv = [exe.display().to_string(), RUN_FLAG.to_string(), json];
    let mut req = SpawnRequest::new(&argv, env)
        .stdout(Stdio::Fd(output.0.as_fd()))
        .stderr(Stdio::Inherit);
    if let Some(fd) = &watch {
        req = req.stdin(Stdio::Fd(fd.as_fd()));
    }
    let pid = sys.spawn(&req).map_err(|e| cannot(e.to_string()))?;
    Ok(Loading { pid, output, watch })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;
    use crate::sys::real::RealSys;

    /// Writes `loaded` to a memory file and reads it back as the init does.
    fn round_trip(loaded: &Result<LoadedPath, String>) -> Result<LoadedPath, String> {
        let out = Output::new().unwrap();
        write(&out.0, loaded).unwrap();
        out.read()
    }

    fn repo(p: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(p)
    }

    /// Loads `path` as the child does and checks that what the init reads
    /// back is the same, field by field (then whole).
    fn same_after_round_trip(path: Vec<PathBuf>, named: &[&str], sysv: Option<PathBuf>) -> usize {
        let job = Job {
            path,
            sysv_dir: sysv,
            log_dir: Some(PathBuf::from("/var/log/units")),
            control: PathBuf::from("/run/init/control.sock"),
            systemd_bus: true,
            named: named.iter().map(|s| s.to_string()).collect(),
            systemd_bus_asked: false,
            target: String::new(),
            cmd: None,
            system_conf: None,
            watch: true,
        };
        let settings = job.settings();
        assert_eq!(settings.units_path(), job.path);
        // RealSys::new() makes the process's spawner, which the tests of
        // spawning look at under this lock.
        let _g = crate::sys::tests::process_lock();
        let sys = RealSys::new();
        let watch = sys.path_stamp_instance().unwrap();
        let loaded =
            crate::unitdir::load_units_watched(&sys, &settings, &job.named, Some(watch.as_fd()));
        let loaded = loaded.unwrap();
        assert!(loaded.stamp.watched, "every path added to the watch");
        let back = round_trip(&Ok(loaded.clone())).unwrap();
        assert_eq!(back.units.len(), loaded.units.len());
        for (a, b) in back.units.iter().zip(&loaded.units) {
            assert_eq!(a, b, "{}", b.0.name);
        }
        assert_eq!(back.diagnostics, loaded.diagnostics);
        assert_eq!(back.sources, loaded.sources);
        assert_eq!(back.masked, loaded.masked);
        assert_eq!(back.templates, loaded.templates);
        assert_eq!(back.instances, loaded.instances);
        assert_eq!(back.unsupported, loaded.unsupported);
        assert_eq!(back.template_files, loaded.template_files);
        assert_eq!(back, loaded);
        loaded.units.len()
    }

    #[test]
    fn the_repositorys_units_round_trip() {
        let mut n = 0;
        for dir in [
            "contrib/units",
            "contrib/seed/units",
            "contrib/image/units",
            "contrib/container/units",
            "contrib/cluster",
            "contrib/debian/tree/etc/init/units",
            "init/tests/fixtures/unitdir-mixed",
            "units/tests/fixtures/yaml/seed",
            "systemd/tests/fixtures/systemd",
            "fuzz/seeds/systemd_unit",
        ] {
            n += same_after_round_trip(vec![repo(dir)], &["web@x.service", "t@y.service"], None);
        }
        assert!(n > 30, "{n} units");
    }

    #[test]
    fn a_debian_systems_units_round_trip() {
        // The build host's own systemd units, when it has them (Debian's
        // packages: templates, aliases, masks, drop-ins, instances).
        let vendor = PathBuf::from("/lib/systemd/system");
        if !vendor.join("basic.target").exists() {
            return;
        }
        let etc = repo("contrib/debian/tree/etc/init/units");
        let sysv = Path::new("/etc/init.d")
            .is_dir()
            .then(|| PathBuf::from("/etc/init.d"));
        let n = same_after_round_trip(
            vec![etc, PathBuf::from("/etc/systemd/system"), vendor],
            &["getty@tty2.service", "multi-user.target"],
            sysv,
        );
        assert!(n > 50, "{n} units");
    }

    #[test]
    fn a_failed_load_and_bad_output_are_errors() {
        assert_eq!(
            round_trip(&Err("cannot list /x".to_string())),
            Err("cannot list /x".to_string())
        );
        assert_eq!(
            Output::new().unwrap().read(),
            Err("the loader wrote nothing".to_string())
        );
        let out = Output::new().unwrap();
        (&out.0).write_all(b"{\"Ok\":{\"units\":[").unwrap();
        let e = out.read().unwrap_err();
        assert!(e.starts_with("the loader's output does not parse"), "{e}");
    }

    #[test]
    fn the_job_goes_through_its_argument() {
        let settings = Settings {
            more_units_dirs: vec![PathBuf::from("/lib/systemd/system")],
            sysv_dir: Some(PathBuf::from("/etc/init.d")),
            ..Settings::new("/etc/init/units", "default", "/run/init/control.sock")
        };
        let job = Job::new(&settings, &["getty@tty1.service".to_string()]);
        let json = serde_json::to_string(&job).unwrap();
        let back: Job = serde_json::from_str(&json).unwrap();
        assert_eq!(back, job);
        assert_eq!(back.settings().units_path(), settings.units_path());
        assert_eq!(back.settings().sysv_dir, settings.sysv_dir);
    }
}
