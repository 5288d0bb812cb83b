//! What the init runs with ([`Settings`]): the flags, the config file and
//! the defaults resolved (`args.rs`), read by the loop, the loader and the
//! built-in units (`cmd.rs`, `logwriter.rs`, `systemd_bus.rs`). Plain data:
//! nothing here reads a file or the environment.

use flotilla_systemd::load::generators::{place_outputs, Outputs};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// What the init runs with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// The units directory (the first of the search path).
    pub units_dir: PathBuf,
    /// The rest of the unit search path, in order (docs/contract.md §3c).
    pub more_units_dirs: Vec<PathBuf>,
    /// The target.
    pub target: String,
    /// The control socket.
    pub control: PathBuf,
    /// Where unit logs are also written.
    pub log_dir: Option<PathBuf>,
    /// At most this many units starting at once.
    pub max_concurrent_starts: Option<usize>,
    /// The config's `targets:` map.
    pub targets: flotilla_units::targets::Targets,
    /// Where the init keeps what `initctl mask` and `set-alternative` set
    /// (the config file's directory); `None` without a config file.
    pub state_dir: Option<PathBuf>,
    /// Where `Persistent=` timers' stamps are kept (a file
    /// `stamp-NAME` each, its modification time the last trigger):
    /// systemd's `/var/lib/systemd/timers` as PID 1, so that both inits of
    /// one machine share them; `timers/` in the state directory otherwise;
    /// `None` (in memory only) without either.
    pub timer_stamps: Option<PathBuf>,
    /// The config file `initctl reload` reads `targets:` from again;
    /// `None` when none is read.
    pub config_file: Option<PathBuf>,
    /// The directory of SysV init scripts read as units (`/etc/init.d`
    /// with the config's `sysv-scripts: true`).
    pub sysv_dir: Option<PathBuf>,
    /// The root below which the manager's settings (`system.conf`) are
    /// read at every load (the config's `system-conf`).
    pub system_conf: Option<PathBuf>,
    /// systemd's generators, when they run (docs/generators.md).
    pub generators: Option<Generators>,
    /// The config's `sandbox`: what a setting the init lacks the privilege
    /// to apply does, where a unit does not say.
    pub sandbox: flotilla_units::context::policy::SandboxPolicy,
    /// Serve systemd's D-Bus interface (`systemd_bus.rs`): the config's
    /// `systemd-bus`, on by default as root's PID 1.
    pub systemd_bus: bool,
    /// The config asked for `systemd-bus: true` itself (a missing binary
    /// is then worth a warning even for a set with no systemd unit).
    pub systemd_bus_asked: bool,
    /// The command after `--` (`cmd.rs`).
    pub cmd: Option<CmdLine>,
    /// Each unit's lines also on the init's standard output (config
    /// `console-output`; `runtime/mirror.rs`).
    pub console_output: bool,
    /// The kernel command line, as PID 1 on a machine (`None` in a
    /// container, whose command line is the host's, and for a
    /// supervisor): its `locale.NAME=` words set the manager's locale
    /// (`runtime/locale.rs`).
    pub kernel_cmdline: Option<String>,
}

/// Where the generators are, where their output goes, how long they may
/// take (config `generators`, `generator-output`, `generator-timeout`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Generators {
    /// The directories the generators are taken from, first first.
    pub dirs: Vec<PathBuf>,
    /// Where the three output directories are made.
    pub output: PathBuf,
    /// The time all of one run may take together.
    pub timeout: std::time::Duration,
}

impl Generators {
    /// The three output directories.
    pub fn outputs(&self) -> Outputs {
        Outputs::under(&self.output)
    }
}

impl Settings {
    /// The settings of an init given only its units directory, target and
    /// control socket: no config file, nothing else set. What the tests
    /// start from, so that a new setting is added here and in the flags'
    /// resolution, not in every test.
    pub fn new(
        units_dir: impl Into<PathBuf>,
        target: &str,
        control: impl Into<PathBuf>,
    ) -> Settings {
        Settings {
            units_dir: units_dir.into(),
            more_units_dirs: Vec::new(),
            target: target.to_string(),
            control: control.into(),
            log_dir: None,
            max_concurrent_starts: None,
            targets: Default::default(),
            state_dir: None,
            timer_stamps: None,
            config_file: None,
            sysv_dir: None,
            system_conf: None,
            generators: None,
            sandbox: Default::default(),
            systemd_bus: false,
            systemd_bus_asked: false,
            cmd: None,
            console_output: false,
            kernel_cmdline: None,
        }
    }

    /// The unit search path: the units directory, then the others, with
    /// the generators' output directories at systemd's places when they
    /// run.
    pub fn units_path(&self) -> Vec<PathBuf> {
        let path: Vec<PathBuf> = std::iter::once(self.units_dir.clone())
            .chain(self.more_units_dirs.iter().cloned())
            .collect();
        match &self.generators {
            Some(g) => place_outputs(&path, &g.outputs()),
            None => path,
        }
    }
}

/// The command after `--` and where it runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CmdLine {
    /// The program and its arguments (at least the program).
    pub argv: Vec<String>,
    /// The init's working directory, the command's.
    pub cwd: Option<PathBuf>,
}
