//! Command-line flags and the settings they resolve to (docs/contract.md §2).
//!
//! Raw flags ([`Args`]) and resolved settings ([`Settings`]) are two types:
//! parsing the flags does no I/O; resolving reads the config file, the
//! kernel command line (as PID 1) and the environment, in the order docs/contract.md §2
//! gives: flags, then the config file, then the defaults.

pub use crate::settings::{CmdLine, Generators, Settings};
use crate::sys::{Errno, Os, Sys, SysError};
use flotilla_systemd::load::generators::{DEFAULT_OUTPUT, DEFAULT_TIMEOUT};
use flotilla_units::cli;
use flotilla_units::config::{parse_config, Config};
use flotilla_units::protocol::{control_socket_path, unprivileged_control_socket};
use std::path::{Path, PathBuf};

/// The flags as given.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Args {
    /// `--units DIR` (the first one).
    pub units: Option<PathBuf>,
    /// Every further `--units DIR`, in order: the search path (docs/contract.md §3c).
    pub more_units: Vec<PathBuf>,
    /// `--target NAME`.
    pub target: Option<String>,
    /// `--control PATH`.
    pub control: Option<PathBuf>,
    /// `--config FILE`.
    pub config: Option<PathBuf>,
    /// `--log-dir DIR`.
    pub log_dir: Option<PathBuf>,
    /// `--check`.
    pub check: bool,
    /// `--help`.
    pub help: bool,
    /// `--version`.
    pub version: bool,
    /// The command after `--` (docs/contract.md §2; `cmd.rs`).
    pub cmd: Vec<String>,
}

/// The usage text.
pub const USAGE: &str = "\
usage: init [--units DIR] [--target NAME] [--control PATH] [--config FILE] [--log-dir DIR]
            [-- CMD [ARG...]]
       init --check [--units DIR] [--target NAME] [--config FILE]

As PID 1 with no arguments: config /etc/init/init.yaml (if present), units
/etc/init/units, target from the kernel command line (init.target=NAME), else
the config's default-target, else `default`. Not PID 1: a foreground
supervisor; SIGTERM, SIGINT or `initctl poweroff` stop every unit and exit 0.

  --units DIR      the units directory; given again, the next directory of
                   the search path (an earlier one's unit hides a later one's)
  --target NAME    the target to reach
  --control PATH   the control socket
  --config FILE    the config file (YAML)
  --log-dir DIR    where each unit's output is also written (<unit>.log)
  --check          validate the units directory, print the required set, exit
                   0 if there is no error and 1 otherwise; starts nothing
  -- CMD [ARG...]  run CMD once the target is reached, with the init's
                   stdio, environment and directory; when it exits every
                   unit stops and the init exits with its status (128+N
                   after signal N)
";

impl Args {
    /// Parses the arguments after the program name (`lexopt`: `--flag
    /// VALUE` and `--flag=VALUE`, `-h`, `-V`).
    pub fn parse<I: IntoIterator<Item = String>>(args: I) -> Result<Args, String> {
        let mut a = Args::default();
        // Everything after the first `--` is the command, flags or not.
        let mut args: Vec<String> = args.into_iter().collect();
        if let Some(at) = args.iter().position(|w| w == "--") {
            a.cmd = args.split_off(at).split_off(1);
            if a.cmd.is_empty() {
                return Err("`--` needs a command after it".to_string());
            }
        }
        let mut p = cli::parser(args);
        while let Some(arg) = p.next().map_err(cli::usage_error)? {
            let flag = cli::flag(arg)?;
            let mut value = || cli::value(&mut p, &flag);
            match flag.as_str() {
                "--units" => {
                    let dir = PathBuf::from(value()?);
                    match a.units {
                        None => a.units = Some(dir),
                        Some(_) => a.more_units.push(dir),
                    }
                }
                "--target" => a.target = Some(value()?),
                "--control" => a.control = Some(PathBuf::from(value()?)),
                "--config" => a.config = Some(PathBuf::from(value()?)),
                "--log-dir" => a.log_dir = Some(PathBuf::from(value()?)),
                "--check" => a.check = true,
                "-h" | "--help" => a.help = true,
                "-V" | "--version" => a.version = true,
                _ => return Err(format!("unknown argument `{flag}`")),
            }
        }
        Ok(a)
    }
}

/// The generators' settings from the config: `generators: true` (systemd's
/// directories) or a list of directories turns them on; without the key
/// none run (docs/generators.md: a unit set that was not written for them,
/// say one that stands in for them with links of its own, is not changed
/// behind its back).
fn generators_of(config: &Config) -> Option<Generators> {
    let dirs = config.generators.clone().filter(|d| !d.is_empty())?;
    Some(Generators {
        dirs,
        output: config
            .generator_output
            .clone()
            .unwrap_or_else(|| PathBuf::from(DEFAULT_OUTPUT)),
        timeout: config.generator_timeout.unwrap_or(DEFAULT_TIMEOUT),
    })
}

/// The facts about the environment that settings depend on.
#[derive(Debug, Clone, Default)]
pub struct Context {
    /// Running as PID 1.
    pub pid1: bool,
    /// Effective uid is 0.
    pub root: bool,
    /// `$INIT_CONTROL`.
    pub env_control: Option<PathBuf>,
    /// `$XDG_RUNTIME_DIR`.
    pub xdg_runtime_dir: Option<PathBuf>,
    /// The kernel command line (PID 1 only).
    pub cmdline: Option<String>,
    /// The effective uid (a non-root PID 1's socket is named by it).
    pub uid: u32,
    /// A non-root PID 1 could make `/run/init` (its control socket goes
    /// there, else under `/tmp`).
    pub run_usable: bool,
    /// PID 1 in a container (its `console-output` default is `all`).
    pub container: bool,
    /// The working directory (the `-- CMD`'s).
    pub cwd: Option<PathBuf>,
}

impl Context {
    /// The context from this process's environment: `$INIT_CONTROL`,
    /// `$XDG_RUNTIME_DIR` (empty values count as unset), and what the
    /// caller knows: PID 1, an effective uid of 0, the kernel command line.
    pub fn from_env(pid1: bool, root: bool, cmdline: Option<String>) -> Context {
        let var = |k: &str| {
            std::env::var_os(k)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        Context {
            pid1,
            root,
            env_control: var("INIT_CONTROL"),
            xdg_runtime_dir: var("XDG_RUNTIME_DIR"),
            cmdline,
            uid: 0,
            run_usable: false,
            container: false,
            cwd: std::env::current_dir().ok(),
        }
    }
}

/// Why the config file was not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigReadError {
    /// There is none (fine for the default path).
    NotFound,
    /// It exists and cannot be read; the message names it.
    Unreadable(String),
}

/// The longest config file read.
const MAX_CONFIG: usize = 1 << 20;

/// Reads the config file at `path` through `sys`.
pub fn read_config(sys: &dyn Sys, path: &Path) -> Result<String, ConfigReadError> {
    match sys.read_file_limited(path, MAX_CONFIG) {
        Ok(bytes) => String::from_utf8(bytes)
            .map_err(|_| ConfigReadError::Unreadable(format!("{}: not UTF-8", path.display()))),
        Err(SysError::Read {
            errno: Os(Errno::ENOENT),
            ..
        }) => Err(ConfigReadError::NotFound),
        Err(e) => Err(ConfigReadError::Unreadable(e.to_string())),
    }
}

/// The default config file.
pub const DEFAULT_CONFIG: &str = "/etc/init/init.yaml";
/// The default units directory.
pub const DEFAULT_UNITS: &str = "/etc/init/units";

/// The target named on a kernel command line (`init.target=NAME`), the last
/// one winning as the kernel's own parameters do.
pub fn cmdline_target(cmdline: &str) -> Option<String> {
    cmdline
        .split_ascii_whitespace()
        .filter_map(|w| w.strip_prefix("init.target="))
        .rfind(|t| !t.is_empty())
        .map(str::to_string)
}

/// The control socket path without a flag or config: the one rule of
/// docs/contract.md §2 ([`control_socket_path`]); a non-root PID 1 without
/// `$XDG_RUNTIME_DIR` takes [`unprivileged_control_socket`].
pub fn default_control(ctx: &Context) -> Result<PathBuf, String> {
    control_socket_path(
        ctx.env_control.as_deref().map(Path::as_os_str),
        ctx.root,
        ctx.xdg_runtime_dir.as_deref().map(Path::as_os_str),
    )
    .or_else(|| {
        ctx.pid1
            .then(|| unprivileged_control_socket(ctx.uid, ctx.run_usable))
    })
    .ok_or_else(|| {
        "no control socket: give --control PATH, or set INIT_CONTROL or XDG_RUNTIME_DIR".to_string()
    })
}

/// Whether each unit's lines go to the init's standard output too: the
/// config's `console-output` (`all` or `none`), else `all` in a container
/// and `none` elsewhere (a machine's console gets status lines only).
fn console_output(config: Option<bool>, ctx: &Context) -> bool {
    config.unwrap_or(ctx.container)
}

/// systemd's directory of `Persistent=` timers' stamps (systemd.timer(5)).
pub const SYSTEMD_TIMER_STAMPS: &str = "/var/lib/systemd/timers";

/// Resolves flags, the config file and the defaults into settings.
/// `read` reads a file (the config); errors name the file and line.
pub fn resolve(
    args: &Args,
    ctx: &Context,
    read: impl Fn(&Path) -> Result<String, ConfigReadError>,
) -> Result<Settings, Vec<String>> {
    let (config_path, explicit) = match &args.config {
        Some(p) => (p.clone(), true),
        None => (PathBuf::from(DEFAULT_CONFIG), false),
    };
    let state_dir = (explicit || ctx.pid1)
        .then(|| config_path.parent())
        .flatten()
        .map(|d| match d.as_os_str().is_empty() {
            true => PathBuf::from("."),
            false => d.to_path_buf(),
        });
    let config = if explicit || ctx.pid1 {
        match read(&config_path) {
            Ok(text) => parse_config(&config_path.display().to_string(), &text)
                .map_err(|ds| ds.iter().map(ToString::to_string).collect::<Vec<_>>())?,
            Err(ConfigReadError::NotFound) if !explicit => Config::default(),
            Err(ConfigReadError::NotFound) => {
                return Err(vec![format!(
                    "{}: {}",
                    config_path.display(),
                    std::io::Error::from(Errno::ENOENT)
                )])
            }
            Err(ConfigReadError::Unreadable(e)) => return Err(vec![e]),
        }
    } else {
        Config::default()
    };
    let target = args
        .target
        .clone()
        .or_else(|| {
            if ctx.pid1 {
                ctx.cmdline.as_deref().and_then(cmdline_target)
            } else {
                None
            }
        })
        .or_else(|| config.default_target.clone())
        .unwrap_or_else(|| "default".to_string());
    let control = match args
        .control
        .clone()
        .or_else(|| config.control_socket.clone())
    {
        Some(p) => p,
        None => default_control(ctx).map_err(|e| vec![e])?,
    };
    // The flags' directories replace the config's list whole.
    let (units_dir, more_units_dirs) = match &args.units {
        Some(first) => (first.clone(), args.more_units.clone()),
        None => match &config.units_dir {
            Some(first) => (first.clone(), config.more_units_dirs.clone()),
            None => (PathBuf::from(DEFAULT_UNITS), Vec::new()),
        },
    };
    let generators = generators_of(&config);
    // A non-root PID 1 (a container's `--user`) cannot bind the machine's
    // /run/systemd/private: off unless asked, and refused when asked.
    let systemd_bus = config.systemd_bus.unwrap_or(ctx.pid1 && ctx.root);
    if systemd_bus && !ctx.root {
        return Err(vec![format!(
            "{}: `systemd-bus: true` needs root: /run/systemd/private and /run/systemd/system/ \
             are the machine's",
            config_path.display()
        )]);
    }
    Ok(Settings {
        generators,
        units_dir,
        more_units_dirs,
        target,
        control,
        log_dir: args.log_dir.clone().or_else(|| config.log_dir.clone()),
        max_concurrent_starts: config.max_concurrent_starts,
        targets: config.targets,
        config_file: (explicit || ctx.pid1).then_some(config_path),
        sysv_dir: config.sysv_scripts.then(|| PathBuf::from("/etc/init.d")),
        system_conf: config.system_conf.clone(),
        sandbox: config.sandbox,
        systemd_bus,
        systemd_bus_asked: config.systemd_bus == Some(true),
        cmd: (!args.cmd.is_empty()).then(|| CmdLine {
            argv: args.cmd.clone(),
            cwd: ctx.cwd.clone(),
        }),
        console_output: console_output(config.console_output, ctx),
        kernel_cmdline: ctx.cmdline.clone().filter(|_| ctx.pid1),
        timer_stamps: match ctx.pid1 {
            true => Some(PathBuf::from(SYSTEMD_TIMER_STAMPS)),
            false => state_dir.as_ref().map(|d| d.join("timers")),
        },
        state_dir,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic, clippy::indexing_slicing)]
mod tests {
    use super::*;

    fn parse(xs: &[&str]) -> Result<Args, String> {
        Args::parse(xs.iter().map(|x| x.to_string()))
    }

    #[test]
    fn flags_parse_in_both_forms() {
        let a = parse(&["--units", "/u", "--target=web", "--check"]).unwrap_or_default();
        assert_eq!(a.units, Some(PathBuf::from("/u")));
        assert_eq!(a.target.as_deref(), Some("web"));
        assert!(a.check);
        assert_eq!(
            parse(&["--bogus"]),
            Err("unknown argument `--bogus`".to_string())
        );
        assert_eq!(
            parse(&["--units"]),
            Err("--units needs a value".to_string())
        );
        assert_eq!(
            parse(&["--target="]),
            Err("--target needs a value".to_string())
        );
        assert_eq!(
            parse(&["--bogus=1"]),
            Err("unknown argument `--bogus`".to_string())
        );
        assert_eq!(
            parse(&["/etc/units"]),
            Err("unknown argument `/etc/units`".to_string())
        );
        assert_eq!(
            parse(&["--check=yes"]),
            Err("--check takes no value".to_string())
        );
        // A value may start with a dash; short flags may be grouped.
        let a = parse(&["--target", "-x", "-hV"]).unwrap_or_default();
        assert_eq!(a.target.as_deref(), Some("-x"));
        assert!(a.help && a.version);
    }

    #[test]
    fn systemd_bus_is_on_as_pid1_and_where_the_config_says() {
        let ctx = |pid1, root| Context {
            pid1,
            root,
            ..Context::default()
        };
        let read = |text: &'static str| move |_: &Path| Ok(text.to_string());
        let with_config = Args {
            config: Some(PathBuf::from("/x/init.yaml")),
            control: Some(PathBuf::from("/x/c.sock")),
            ..Args::default()
        };
        let on = |a: &Args, c: Context, text: &'static str| {
            resolve(a, &c, read(text)).map(|s| s.systemd_bus)
        };
        assert_eq!(on(&Args::default(), ctx(true, true), ""), Ok(true));
        assert_eq!(on(&with_config, ctx(false, true), ""), Ok(false));
        let off = "systemd-bus: false\n";
        assert_eq!(on(&Args::default(), ctx(true, true), off), Ok(false));
        let yes = "systemd-bus: true\n";
        assert_eq!(on(&with_config, ctx(false, true), yes), Ok(true));
        assert_eq!(
            on(&with_config, ctx(false, false), yes),
            Err(vec![
                "/x/init.yaml: `systemd-bus: true` needs root: /run/systemd/private and \
                 /run/systemd/system/ are the machine's"
                    .to_string()
            ])
        );
        assert_eq!(
            on(&with_config, ctx(false, true), "systemd-bus: 1\n"),
            Err(vec![
                "/x/init.yaml:1:14: expected `true` or `false` for `systemd-bus`, found a number"
                    .to_string()
            ])
        );
    }

    /// Debian's config (contrib/debian) reads the units of every
    /// directory systemd reads, in systemd's order, the generators'
    /// output at systemd's places among them: a unit a program writes into
    /// /run/systemd/system is found at the next daemon-reload, and a
    /// transient slice's file in /run/systemd/transient too.
    #[test]
    fn debians_config_has_systemds_unit_path() {
        let ctx = Context {
            pid1: true,
            root: true,
            ..Context::default()
        };
        let text = include_str!("../../contrib/debian/tree/etc/init/init.yaml");
        let s = resolve(&Args::default(), &ctx, |_: &Path| Ok(text.to_string())).unwrap();
        assert_eq!(
            s.units_path(),
            [
                "/etc/init/units",
                "/etc/systemd/system.control",
                "/run/systemd/system.control",
                "/run/systemd/transient",
                "/run/systemd/generator.early",
                "/etc/systemd/system",
                "/etc/systemd/system.attached",
                "/run/systemd/system",
                "/run/systemd/system.attached",
                "/run/systemd/generator",
                "/usr/local/lib/systemd/system",
                "/lib/systemd/system",
                "/run/systemd/generator.late"
            ]
            .map(PathBuf::from)
        );
        // The target is systemd's default.target, whatever it links to
        // (graphical.target on Debian's images), as under systemd.
        assert_eq!(s.target, "default.target");
        // The kernel's `init.target=` still picks another.
        let ctx = Context {
            cmdline: Some("ro init.target=rescue.target".into()),
            ..ctx
        };
        let s = resolve(&Args::default(), &ctx, |_: &Path| Ok(text.to_string())).unwrap();
        assert_eq!(s.target, "rescue.target");
    }

    #[test]
    fn generators_run_when_the_config_asks() {
        let ctx = |pid1| Context {
            pid1,
            root: true,
            ..Context::default()
        };
        let read = |text: &'static str| move |_: &Path| Ok(text.to_string());
        let debian = "units-dir: [/etc/init/units, /etc/systemd/system, /lib/systemd/system]\n\
                      generators: true\n";
        let s = resolve(&Args::default(), &ctx(true), read(debian)).unwrap();
        let g = s.generators.clone().unwrap();
        assert_eq!(g.output, Path::new("/run/systemd"));
        assert_eq!(g.timeout, std::time::Duration::from_secs(90));
        assert_eq!(g.dirs.len(), 5);
        assert_eq!(
            s.units_path(),
            [
                "/etc/init/units",
                "/run/systemd/generator.early",
                "/etc/systemd/system",
                "/run/systemd/generator",
                "/lib/systemd/system",
                "/run/systemd/generator.late"
            ]
            .map(PathBuf::from)
        );
        // Without the key, or with `false`: none, and the path as given.
        let plain = "units-dir: [/etc/init/units, /lib/systemd/system]\n";
        let s = resolve(&Args::default(), &ctx(true), read(plain)).unwrap();
        assert_eq!(s.generators, None);
        assert_eq!(s.units_path().len(), 2);
        let off = "units-dir: /lib/systemd/system\ngenerators: false\n";
        let s = resolve(&Args::default(), &ctx(true), read(off)).unwrap();
        assert_eq!(s.generators, None);
        let a = Args {
            config: Some(PathBuf::from("/x/init.yaml")),
            ..Args::default()
        };
        let s = resolve(&a, &ctx(false), read("generators: [/g]\n")).unwrap();
        assert_eq!(s.generators.unwrap().dirs, [PathBuf::from("/g")]);
    }

    #[test]
    fn the_command_after_the_double_dash() {
        let a = parse(&["--target", "web", "--", "app", "--units", "x"]).unwrap();
        assert_eq!(a.target.as_deref(), Some("web"));
        assert_eq!(a.units, None);
        assert_eq!(a.cmd, ["app", "--units", "x"]);
        assert_eq!(parse(&["--", "sh"]).unwrap().cmd, ["sh"]);
        assert_eq!(
            parse(&["--units", "/u", "--"]),
            Err("`--` needs a command after it".to_string())
        );
        let ctx = Context {
            root: true,
            cwd: Some(PathBuf::from("/srv")),
            ..Context::default()
        };
        let s = resolve(&parse(&["--", "app"]).unwrap(), &ctx, |_: &Path| {
            Err(ConfigReadError::NotFound)
        })
        .unwrap();
        assert_eq!(
            s.cmd,
            Some(CmdLine {
                argv: vec!["app".into()],
                cwd: Some(PathBuf::from("/srv"))
            })
        );
    }

    #[test]
    fn console_output_is_all_in_a_container_unless_the_config_says() {
        let ctx = |container| Context {
            pid1: true,
            root: true,
            container,
            ..Context::default()
        };
        let read = |text: &'static str| move |_: &Path| Ok(text.to_string());
        let on = |c, text| {
            resolve(&Args::default(), &ctx(c), read(text))
                .unwrap()
                .console_output
        };
        assert!(on(true, ""));
        assert!(!on(false, ""));
        assert!(!on(true, "console-output: none\n"));
        assert!(on(false, "console-output: all\n"));
    }

    #[test]
    fn units_given_again_make_a_search_path() {
        let a = parse(&["--units", "/a", "--units=/b", "--units", "/c"]).unwrap_or_default();
        let ctx = Context {
            root: true,
            ..Context::default()
        };
        let s = resolve(&a, &ctx, |_: &Path| Ok("units-dir: [/x, /y]\n".to_string()));
        let s = s.unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(
            s.units_path(),
            [Path::new("/a"), Path::new("/b"), Path::new("/c")]
        );
        let a = Args {
            config: Some("/init.yaml".into()),
            ..Args::default()
        };
        let s = resolve(&a, &ctx, |_: &Path| Ok("units-dir: [/x, /y]\n".to_string()))
            .unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(s.units_path(), [Path::new("/x"), Path::new("/y")]);
    }

    #[test]
    fn kernel_command_line_target() {
        assert_eq!(
            cmdline_target("console=ttyS0 init.target=rescue quiet"),
            Some("rescue".into())
        );
        assert_eq!(
            cmdline_target("init.target=a init.target=b"),
            Some("b".into())
        );
        assert_eq!(cmdline_target("init.target= ro"), None);
    }

    #[test]
    fn precedence_flags_config_defaults() {
        let ctx = Context {
            pid1: true,
            root: true,
            cmdline: Some("init.target=k".into()),
            ..Context::default()
        };
        let read = |_: &Path| {
            Ok("default-target: c\nunits-dir: /cu\nmax-concurrent-starts: 4\n".to_string())
        };
        let s = resolve(&Args::default(), &ctx, read).unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(s.target, "k", "kernel command line beats the config");
        assert_eq!(s.kernel_cmdline.as_deref(), Some("init.target=k"));
        assert_eq!(s.units_dir, PathBuf::from("/cu"));
        assert_eq!(s.max_concurrent_starts, Some(4));
        assert_eq!(s.control, PathBuf::from("/run/init/control.sock"));
        let args = Args {
            target: Some("f".into()),
            ..Args::default()
        };
        assert_eq!(
            resolve(&args, &ctx, read).map(|s| s.target),
            Ok("f".to_string())
        );
        let missing = |_: &Path| Err(ConfigReadError::NotFound);
        let s = resolve(
            &Args::default(),
            &Context {
                pid1: true,
                ..Context::default()
            },
            missing,
        );
        assert_eq!(
            s.map(|s| (s.target, s.units_dir)),
            Ok(("default".into(), PathBuf::from(DEFAULT_UNITS)))
        );
    }

    #[test]
    fn control_socket_resolution() {
        let user = Context {
            xdg_runtime_dir: Some("/run/user/1000".into()),
            ..Context::default()
        };
        assert_eq!(
            default_control(&user),
            Ok(PathBuf::from("/run/user/1000/init/control.sock"))
        );
        let env = Context {
            env_control: Some("/tmp/c.sock".into()),
            root: true,
            ..Context::default()
        };
        assert_eq!(default_control(&env), Ok(PathBuf::from("/tmp/c.sock")));
        assert!(default_control(&Context::default()).is_err());
        // A non-root PID 1 (`podman run --user 1000`): XDG_RUNTIME_DIR if
        // set, else /run/init where it could be made, else /tmp.
        let pid1 = |xdg: Option<&str>, run_usable| Context {
            pid1: true,
            uid: 1000,
            run_usable,
            xdg_runtime_dir: xdg.map(PathBuf::from),
            ..Context::default()
        };
        assert_eq!(
            default_control(&pid1(None, true)),
            Ok(PathBuf::from("/run/init/control.sock"))
        );
        assert_eq!(
            default_control(&pid1(None, false)),
            Ok(PathBuf::from("/tmp/flotilla-1000/control.sock"))
        );
        assert_eq!(
            default_control(&pid1(Some("/run/user/1000"), false)),
            Ok(PathBuf::from("/run/user/1000/init/control.sock"))
        );
        let root_pid1 = Context {
            pid1: true,
            root: true,
            ..Context::default()
        };
        assert_eq!(
            default_control(&root_pid1),
            Ok(PathBuf::from("/run/init/control.sock"))
        );
    }

    #[test]
    fn a_bad_config_names_file_and_line() {
        let args = Args {
            config: Some("/etc/x.yaml".into()),
            ..Args::default()
        };
        let read = |_: &Path| Ok("units-dri: /x\n".to_string());
        let err = resolve(&args, &Context::default(), read).unwrap_err();
        assert!(err[0].starts_with("/etc/x.yaml:1:1:"), "{err:?}");
    }
}
