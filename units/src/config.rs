//! The init's config file (docs/contract.md §2), `/etc/init/init.yaml` by default.
//!
//! ```yaml
//! units-dir: /etc/init/units
//! default-target: default
//! max-concurrent-starts: 8
//! log-dir: /var/log/init
//! control-socket: /run/init/control.sock
//! targets:                      # targets with several providers (docs/contract.md §3b)
//!   logs: {mode: group}
//!   db: {mode: alternative, choose: postgres, failover: true}
//! ```
//!
//! Every key is optional; command-line flags override the file. An empty
//! file (or one with only comments) is an empty config. Problems are
//! reported like those of unit files: `FILE:LINE:COL: message`, all of them
//! at once, unknown keys with a suggestion.

use crate::diag::Diagnostic;
use crate::load::yaml::{self, known_entries, Node, Sink, Value};
use crate::spec::valid_name;
use std::path::PathBuf;

/// Where systemd looks for system generators, first first: what
/// `generators: true` means (the one systemd search path the config
/// file knows; the init calls them as `flotilla_systemd::load::generators`
/// says). Debian 12
/// builds systemd with `/lib/systemd/system-generators`; a merged-`/usr`
/// system (Debian 13) with `/usr/lib/systemd/system-generators`, of
/// which `/lib/...` is the same directory through the `/lib` link: the
/// names are taken once.
pub const GENERATOR_DIRS: &[&str] = &[
    "/run/systemd/system-generators",
    "/etc/systemd/system-generators",
    "/usr/local/lib/systemd/system-generators",
    "/usr/lib/systemd/system-generators",
    "/lib/systemd/system-generators",
];

/// Every key of the config file.
pub const CONFIG_KEYS: &[&str] = &[
    "units-dir",
    "default-target",
    "max-concurrent-starts",
    "log-dir",
    "control-socket",
    "targets",
    "sysv-scripts",
    "generators",
    "generator-output",
    "generator-timeout",
    "console-output",
    "sandbox",
    "systemd-bus",
    "system-conf",
];

/// The init's configuration as the file gives it; `None` is "not set"
/// (the init's default, or its command-line flag, applies).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Config {
    /// `units-dir`: the units directory (default `/etc/init/units`), or
    /// the first directory of the search path when it is a list.
    pub units_dir: Option<PathBuf>,
    /// The rest of a `units-dir` list, in order (docs/contract.md §3c).
    pub more_units_dirs: Vec<PathBuf>,
    /// `default-target`: the target when the kernel command line names none
    /// (default `default`).
    pub default_target: Option<String>,
    /// `max-concurrent-starts`: how many units may be starting at once, a
    /// positive number (default: unlimited).
    pub max_concurrent_starts: Option<usize>,
    /// `log-dir`: where unit output is kept.
    pub log_dir: Option<PathBuf>,
    /// `control-socket`: the control socket's path.
    pub control_socket: Option<PathBuf>,
    /// `targets`: the targets with several providers ([`crate::targets`]).
    pub targets: crate::targets::Targets,
    /// `sysv-scripts`: read `/etc/init.d` scripts with LSB headers as
    /// units ([`crate::sysv`]); off by default.
    pub sysv_scripts: bool,
    /// `generators`: run systemd's generators (`true`: from systemd's
    /// directories; a list: from these directories; `false` or not set:
    /// none; docs/generators.md).
    pub generators: Option<Vec<PathBuf>>,
    /// `generator-output`: where the generators' three output directories
    /// are made (default `/run/systemd`).
    pub generator_output: Option<PathBuf>,
    /// `generator-timeout`: the time all generators of one run may take
    /// together (default 90 s, systemd's).
    pub generator_timeout: Option<std::time::Duration>,
    /// `sandbox`: what a unit's setting that the init lacks the privilege
    /// to apply does, where the unit does not say (default `as-systemd`).
    pub sandbox: crate::context::policy::SandboxPolicy,
    /// `systemd-bus`: serve systemd's D-Bus interface (`None`: the
    /// default, on as PID 1 and off in supervisor mode).
    pub systemd_bus: Option<bool>,
    /// `console-output`: `all` (`true`: each unit's lines also on the
    /// init's standard output) or `none`; `None`: the default, `all` in a
    /// container and `none` on a machine.
    pub console_output: Option<bool>,
    /// `system-conf`: read the manager's settings (systemd's
    /// `system.conf` and its drop-ins, `flotilla_systemd::system_conf`)
    /// below this root (`true`: `/`; `false` or not set: none).
    pub system_conf: Option<PathBuf>,
}

/// Parses the config file `file` whose contents are `text`. Every problem
/// is returned, each with its line and column.
///
/// ```
/// use flotilla_units::config::parse_config;
/// let c = parse_config("init.yaml", "default-target: rescue\nmax-concurrent-starts: 4\n").unwrap();
/// assert_eq!(c.default_target.as_deref(), Some("rescue"));
/// assert_eq!(c.max_concurrent_starts, Some(4));
///
/// let errors = parse_config("init.yaml", "unit-dir: /srv/units\n").unwrap_err();
/// assert_eq!(
///     errors[0].to_string(),
///     "init.yaml:1:1: unknown config key `unit-dir`; did you mean `units-dir`?"
/// );
/// ```
pub fn parse_config(file: &str, text: &str) -> Result<Config, Vec<Diagnostic>> {
    let mut sink = Sink::new(file);
    let root = match yaml::parse(file, text) {
        Ok(Some(root)) => root,
        Ok(None) => return Ok(Config::default()),
        Err(d) => return Err(vec![d]),
    };
    let Value::Map(entries) = &root.value else {
        sink.error(
            root.pos,
            format!(
                "the config file must be a YAML mapping of keys such as `units-dir: DIR`, \
                 found {}",
                root.kind()
            ),
        );
        return Err(sink.into_sorted());
    };
    let mut config = Config::default();
    for e in known_entries(entries, CONFIG_KEYS, "config key", &mut sink) {
        match e.key {
            "units-dir" => {
                let mut dirs = paths(e.key, e.value, &mut sink).into_iter();
                config.units_dir = dirs.next();
                config.more_units_dirs = dirs.collect();
            }
            "log-dir" => config.log_dir = path(e.key, e.value, &mut sink),
            "control-socket" => config.control_socket = path(e.key, e.value, &mut sink),
            "default-target" => config.default_target = target(e.value, &mut sink),
            "max-concurrent-starts" => {
                config.max_concurrent_starts = positive(e.key, e.value, &mut sink)
            }
            "targets" => config.targets = crate::targets::parse(file, e.value, &mut sink),
            "sysv-scripts" => match e.value.value {
                Value::Bool(b) => config.sysv_scripts = b,
                _ => expected(&mut sink, e.value, "`true` or `false` for `sysv-scripts`"),
            },
            "systemd-bus" => match e.value.value {
                Value::Bool(b) => config.systemd_bus = Some(b),
                _ => expected(&mut sink, e.value, "`true` or `false` for `systemd-bus`"),
            },
            "generators" => match &e.value.value {
                Value::Bool(true) => {
                    config.generators = Some(GENERATOR_DIRS.iter().map(PathBuf::from).collect())
                }
                Value::Bool(false) => config.generators = Some(Vec::new()),
                Value::Seq(_) => config.generators = Some(paths(e.key, e.value, &mut sink)),
                _ => expected(
                    &mut sink,
                    e.value,
                    "`true`, `false` or a list of directories for `generators`",
                ),
            },
            "system-conf" => match &e.value.value {
                Value::Bool(true) => config.system_conf = Some(PathBuf::from("/")),
                Value::Bool(false) => config.system_conf = None,
                Value::Str(_) => config.system_conf = path(e.key, e.value, &mut sink),
                _ => expected(
                    &mut sink,
                    e.value,
                    "`true`, `false` or a root directory for `system-conf`",
                ),
            },
            "generator-output" => config.generator_output = path(e.key, e.value, &mut sink),
            "generator-timeout" => match e.value.string_or_number() {
                Some(t) => match crate::duration::parse_duration(&t) {
                    Ok(d) => config.generator_timeout = Some(d),
                    Err(why) => sink.error(e.value.pos, format!("`generator-timeout`: {why}")),
                },
                None => expected(&mut sink, e.value, "a duration for `generator-timeout`"),
            },
            "console-output" => match &e.value.value {
                Value::Str(v) if v == "all" => config.console_output = Some(true),
                Value::Str(v) if v == "none" => config.console_output = Some(false),
                _ => expected(&mut sink, e.value, "`all` or `none` for `console-output`"),
            },
            "sandbox" => match &e.value.value {
                Value::Str(v) => match crate::context::policy::SandboxPolicy::parse(v) {
                    Ok(p) => config.sandbox = p,
                    Err(_) => {
                        expected(&mut sink, e.value, "`as-systemd` or `strict` for `sandbox`")
                    }
                },
                _ => expected(&mut sink, e.value, "`as-systemd` or `strict` for `sandbox`"),
            },
            _ => {}
        }
    }
    if sink.has_errors() {
        Err(sink.into_sorted())
    } else {
        Ok(config)
    }
}

fn expected(sink: &mut Sink<'_>, node: &Node, what: &str) {
    let found = match &node.value {
        Value::Bool(b) => format!("`{b}`"),
        _ => node.kind().to_string(),
    };
    sink.error(node.pos, format!("expected {what}, found {found}"));
}

/// A path; relative paths are taken as they are (from the init's working
/// directory), which suits a supervisor started by hand.
fn path(key: &str, node: &Node, sink: &mut Sink<'_>) -> Option<PathBuf> {
    let Some(text) = node.string_or_number() else {
        expected(sink, node, &format!("a path for `{key}`"));
        return None;
    };
    if text.is_empty() || text.contains('\0') {
        sink.error(node.pos, format!("`{key}` is not a usable path"));
        return None;
    }
    Some(PathBuf::from(text))
}

/// One path, or a non-empty list of paths (a search path, first first).
fn paths(key: &str, node: &Node, sink: &mut Sink<'_>) -> Vec<PathBuf> {
    let Value::Seq(items) = &node.value else {
        return path(key, node, sink).into_iter().collect();
    };
    if items.is_empty() {
        sink.error(
            node.pos,
            format!("`{key}` is an empty list: give at least one directory"),
        );
    }
    items.iter().filter_map(|n| path(key, n, sink)).collect()
}

fn target(node: &Node, sink: &mut Sink<'_>) -> Option<String> {
    let Some(text) = node.string_or_number() else {
        expected(sink, node, "a target name for `default-target`");
        return None;
    };
    if !valid_name(&text) {
        sink.error(
            node.pos,
            format!(
                "invalid target name `{}` for `default-target`: a name has only letters, \
                 digits and `:_.@-`",
                text.escape_debug()
            ),
        );
        return None;
    }
    Some(text)
}

fn positive(key: &str, node: &Node, sink: &mut Sink<'_>) -> Option<usize> {
    let n = match &node.value {
        Value::Int(n) => *n,
        _ => {
            expected(
                sink,
                node,
                &format!("a positive whole number for `{key}` (leave it out for no limit)"),
            );
            return None;
        }
    };
    match usize::try_from(n) {
        Ok(n) if n > 0 => Some(n),
        _ => {
            sink.error(
                node.pos,
                format!(
                    "`{key}` must be a positive whole number, found {} (leave it out for no \
                     limit)",
                    node.text().unwrap_or_default()
                ),
            );
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn errors(text: &str) -> Vec<String> {
        match parse_config("init.yaml", text) {
            Ok(c) => panic!("{text:?} parsed: {c:?}"),
            Err(d) => d.iter().map(ToString::to_string).collect(),
        }
    }

    #[test]
    fn every_key() {
        let c = parse_config(
            "init.yaml",
            "units-dir: /etc/init/units\ndefault-target: multi-user\nmax-concurrent-starts: 8\n\
             log-dir: /var/log/init\ncontrol-socket: /run/init/control.sock\n",
        )
        .unwrap();
        assert_eq!(
            c,
            Config {
                units_dir: Some("/etc/init/units".into()),
                default_target: Some("multi-user".into()),
                max_concurrent_starts: Some(8),
                log_dir: Some("/var/log/init".into()),
                control_socket: Some("/run/init/control.sock".into()),
                more_units_dirs: Vec::new(),
                targets: Default::default(),
                sysv_scripts: false,
                generators: None,
                generator_output: None,
                generator_timeout: None,
                sandbox: Default::default(),
                systemd_bus: None,
                console_output: None,
                system_conf: None,
            }
        );
        let c = parse_config("init.yaml", "console-output: none\n").unwrap();
        assert_eq!(c.console_output, Some(false));
        let e = parse_config("init.yaml", "console-output: some\n").unwrap_err();
        assert_eq!(
            e[0].to_string(),
            "init.yaml:1:17: expected `all` or `none` for `console-output`, found a string"
        );
    }

    #[test]
    fn generators_keys() {
        let c = parse_config(
            "init.yaml",
            "generators: [/srv/gens]\ngenerator-output: /tmp/out\ngenerator-timeout: 2s\n",
        )
        .unwrap();
        assert_eq!(c.generators, Some(vec![PathBuf::from("/srv/gens")]));
        assert_eq!(c.generator_output, Some(PathBuf::from("/tmp/out")));
        assert_eq!(c.generator_timeout, Some(std::time::Duration::from_secs(2)));
        let c = parse_config("init.yaml", "generators: true\n").unwrap();
        assert_eq!(
            c.generators.unwrap()[1],
            PathBuf::from("/etc/systemd/system-generators")
        );
        let c = parse_config("init.yaml", "generators: false\n").unwrap();
        assert_eq!(c.generators, Some(Vec::new()));
        assert_eq!(
            errors("generators: 3\n"),
            [
                "init.yaml:1:13: expected `true`, `false` or a list of directories for \
              `generators`, found a number"
            ]
        );
    }

    #[test]
    fn system_conf_key() {
        let cases: &[(&str, Option<&str>)] = &[
            ("system-conf: true\n", Some("/")),
            ("system-conf: /srv/root\n", Some("/srv/root")),
            ("system-conf: false\n", None),
            ("default-target: x\n", None),
        ];
        for (text, want) in cases {
            let c = parse_config("init.yaml", text).unwrap();
            assert_eq!(c.system_conf, want.map(PathBuf::from), "{text}");
        }
        assert_eq!(
            errors("system-conf: [a]\n"),
            [
                "init.yaml:1:14: expected `true`, `false` or a root directory for \
              `system-conf`, found a list"
            ]
        );
    }

    #[test]
    fn sandbox_policy() {
        use crate::context::policy::SandboxPolicy;
        let c = parse_config("init.yaml", "sandbox: strict\n").unwrap();
        assert_eq!(c.sandbox, SandboxPolicy::Strict);
        let e = parse_config("init.yaml", "sandbox: loose\n").unwrap_err();
        assert!(
            e[0].to_string().contains("`as-systemd` or `strict`"),
            "{}",
            e[0]
        );
    }

    #[test]
    fn units_dir_may_be_a_search_path() {
        let c = parse_config(
            "init.yaml",
            "units-dir: [/etc/init/units, /etc/systemd/system, /lib/systemd/system]\n",
        )
        .unwrap();
        assert_eq!(c.units_dir, Some("/etc/init/units".into()));
        assert_eq!(
            c.more_units_dirs,
            [
                PathBuf::from("/etc/systemd/system"),
                PathBuf::from("/lib/systemd/system")
            ]
        );
        assert_eq!(
            errors("units-dir: []\n"),
            ["init.yaml:1:12: `units-dir` is an empty list: give at least one directory"]
        );
    }

    #[test]
    fn empty_is_default() {
        assert_eq!(parse_config("init.yaml", ""), Ok(Config::default()));
        assert_eq!(
            parse_config("init.yaml", "# nothing yet\n"),
            Ok(Config::default())
        );
        assert_eq!(parse_config("init.yaml", "{}\n"), Ok(Config::default()));
    }

    #[test]
    fn relative_paths_are_kept() {
        let c = parse_config("init.yaml", "units-dir: units\n").unwrap();
        assert_eq!(c.units_dir, Some("units".into()));
    }

    #[test]
    fn every_error_at_once() {
        // Five problems, one per line; all are reported, in file order.
        assert_eq!(
            errors(
                "units_dir: /x\nmax-concurrent-starts: 0\ndefault-target: a b\nlog-dir: [a]\n\
                 units_dir: /y\ncontrol-socket:\n"
            ),
            [
                "init.yaml:1:1: unknown config key `units_dir`; did you mean `units-dir`?",
                "init.yaml:2:24: `max-concurrent-starts` must be a positive whole number, \
                 found 0 (leave it out for no limit)",
                "init.yaml:3:17: invalid target name `a b` for `default-target`: a name has \
                 only letters, digits and `:_.@-`",
                "init.yaml:4:10: expected a path for `log-dir`, found a list",
                "init.yaml:5:1: duplicate config key `units_dir` (first given at line 1, column 1)",
                "init.yaml:6:15: expected a path for `control-socket`, found nothing",
            ]
        );
    }

    #[test]
    fn max_concurrent_starts_must_be_a_whole_number() {
        // A string, a fraction, a negative number, a boolean.
        assert_eq!(
            errors("max-concurrent-starts: four\n"),
            [
                "init.yaml:1:24: expected a positive whole number for `max-concurrent-starts` \
              (leave it out for no limit), found a string"
            ]
        );
        assert_eq!(
            errors("max-concurrent-starts: 1.5\n"),
            [
                "init.yaml:1:24: expected a positive whole number for `max-concurrent-starts` \
              (leave it out for no limit), found a number"
            ]
        );
        assert_eq!(
            errors("max-concurrent-starts: -2\n"),
            [
                "init.yaml:1:24: `max-concurrent-starts` must be a positive whole number, found \
              -2 (leave it out for no limit)"
            ]
        );
        assert_eq!(
            errors("max-concurrent-starts: true\n"),
            [
                "init.yaml:1:24: expected a positive whole number for `max-concurrent-starts` \
              (leave it out for no limit), found `true`"
            ]
        );
    }

    #[test]
    fn not_a_mapping_and_bad_yaml() {
        assert_eq!(
            errors("- units-dir: /x\n"),
            [
                "init.yaml:1:1: the config file must be a YAML mapping of keys such as \
              `units-dir: DIR`, found a list"
            ]
        );
        assert_eq!(
            errors("units-dir: [/x\n"),
            ["init.yaml:1:12: invalid YAML: unclosed bracket '['"]
        );
    }

    proptest::proptest! {
        #[test]
        fn never_panics(s in "\\PC*") {
            let _ = parse_config("init.yaml", &s);
        }
    }

    #[test]
    fn the_config_declares_targets_and_says_what_is_wrong() {
        let c = parse_config(
            "init.yaml",
            "targets:\n  logs: {mode: group}\n  db: {mode: alternative, choose: pg, failover: true}\n",
        )
        .unwrap();
        assert_eq!(c.targets["logs"].mode, crate::targets::TargetMode::Group);
        let db = &c.targets["db"];
        assert_eq!(
            (db.mode, db.choose.as_deref(), db.failover),
            (crate::targets::TargetMode::Alternative, Some("pg"), true)
        );
        let errors: Vec<String> = parse_config(
            "init.yaml",
            "targets:\n  a: {mode: any}\n  b: {choose: x}\n  c: {mode: group, choose: x}\n  \
             d: group\n  e: {mode: alternative, failover: 1}\n",
        )
        .unwrap_err()
        .iter()
        .map(ToString::to_string)
        .collect();
        assert_eq!(
            errors,
            [
                "init.yaml:2:13: `a`: `mode` is `group` or `alternative`",
                "init.yaml:3:6: `b` needs a `mode`: `group` or `alternative`",
                "init.yaml:4:6: `c` is a group (every provider runs): `choose` and `failover` \
                 are for an alternative",
                "init.yaml:5:6: `d` needs a mapping such as `{mode: group}`, found a string",
                "init.yaml:6:36: `e`: `failover` is `true` or `false`",
            ]
        );
    }
}
