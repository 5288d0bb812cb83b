//! Help texts and usage lines, one per command.
//!
//! `initctl -h`, `initctl help VERB` and `initctl VERB -h` print [`help`] on
//! stdout; a usage error prints the message, then [`usage`] on stderr.

use crate::command::{Topic, VERBS};

const MAIN: &str = "\
initctl: control the flotilla init

Usage: initctl [--control PATH] COMMAND [ARGS...]

Commands:
  status [NAME...] [--json]       the target and every unit, or units/targets
  list [--json] [--degraded]      every unit: name, type, state, pid, provides
  set-target NAME [--wait] [--timeout DUR]
                                  switch to another target
  reload | daemon-reload          re-read the unit search path
  reexec | daemon-reexec          run the init's binary again, every unit kept
  enable|disable [--now] UNIT...  make or remove the links [Install] names
  is-enabled [--quiet] UNIT...    enabled, disabled, static, masked, alias, ...
  cat UNIT...                     a unit file and its drop-ins
  show [-p KEY]... UNIT           the keys in force after the drop-ins
  list-unit-files                 every unit file, its state and preset
  preset UNIT...                  enable or disable as the *.preset files say
  start|stop UNIT...              start a unit (until set-target), or stop it
  restart UNIT                    restart one required unit
  kill [-s SIGNAL] UNIT...        send a signal to a unit's processes
  reset-failed [UNIT...]          forget failures (a required unit starts again)
  logs UNIT [-n N] [-f]           a unit's captured output
  poweroff | reboot | halt        orderly shutdown
  analyze blame                   units by the time they took to start
  analyze critical-chain [NAME]   the chain of units that delayed a target
  analyze plot                    an SVG timeline of the start-up (on stdout)
  analyze dot                     the unit graph in Graphviz dot (on stdout)
  analyze security [UNIT] [--json]
                                  declared confinement against what runs
  cluster ...                     the cluster (fleet API)
  mask UNIT, unmask UNIT          keep a unit from starting by any path
  set-alternative TARGET UNIT     choose the provider an alternative runs
  run [--name N] [--depends-on T]... -- COMMAND...
                                  run a command as a transient unit
  add FILE                        add a unit file as a transient unit
  stop-transient NAME             stop a transient unit and remove it
  help [COMMAND]                  this text, or a command's

Options:
  --control PATH   the init's control socket (default: $INIT_CONTROL, else
                   /run/init/control.sock as root, else
                   $XDG_RUNTIME_DIR/init/control.sock)
  -h, --help       help (also after a command)
  -V, --version    the version

Exit status: 0 success; 1 failed (target failed, wait timed out, reload
refused, error from the init); 2 usage error or no init to talk to;
3 permission denied; 4 unknown unit or target.
";

const STATUS: &str = "\
Usage: initctl status [NAME...] [--json]

Without NAME: the current target, its state, whether it is degraded, whether
the init runs as PID 1, and a table of every unit (UNIT TYPE STATE PID
PROVIDES STATUS). With NAME (a unit, or a target: its provider): a detailed
block for that unit; with several, one block each, in order, an unknown
name reported on stderr and the others still shown.

Options:
  --json   print the status object as JSON (one unit's object with one NAME,
           an array of them with several)

Exit status: 0; 4 if a NAME is neither a unit nor a target.
";

const LIST: &str = "\
Usage: initctl list [--json] [--degraded]

Every unit: name, type, state, main PID and the targets it provides.

Options:
  --json       print {\"units\": [...]} as JSON
  --degraded   only the units some of whose settings the init could not
               apply (a missing privilege), and which

Exit status: 0.
";

const SET_TARGET: &str = "\
Usage: initctl set-target NAME [--wait] [--timeout DUR]

Switch the init to the target NAME: what it requires starts, everything else
stops.

Options:
  -w, --wait           show progress until the target is active or failed
  -t, --timeout DUR    stop waiting after DUR (500ms, 2s, 1m, 1h or seconds;
                       implies --wait; 0 waits forever). The switch goes on.

Exit status: 0 switched (with --wait: the target is active); 1 the target
failed or the wait timed out; 4 unknown target.
";

const RELOAD: &str = "\
Usage: initctl reload [UNIT]
       initctl reexec

Re-read the unit directory. Unchanged units keep running, changed running
units restart, removed ones stop. A set with any error is refused whole:
every problem is printed on stderr and nothing changes.

With UNIT: run that running unit's exec-reload ($MAINPID is its main
process); it is `reloading` until the command exits.

reexec (systemctl daemon-reexec): the init executes its binary again (the
file at the path it was started from: an upgraded one) and carries every unit
over: processes and PIDs, states, restart counters, timers, logs. The new
init answers. If the binary cannot be executed, the init goes on as it was
and the error is printed.

Exit status: 0 applied (re-executed); 1 refused (or UNIT is not running or
has no exec-reload, or the re-exec failed); 4 UNIT is unknown.
";

const UNIT_FILES: &str = "\
Usage: initctl enable [--now] UNIT...
       initctl disable [--now] UNIT...
       initctl is-enabled [--quiet] UNIT...
       initctl cat UNIT...
       initctl show [-p KEY]... UNIT
       initctl list-unit-files
       initctl preset UNIT...

The unit files of the init's search path, as systemctl handles them. enable
creates the links the unit's [Install] section names (WantedBy=, RequiredBy=,
Alias=, Also=, DefaultInstance=) in /etc/systemd/system when it is on the
path (else the first directory), exactly where systemctl enable puts them;
disable removes them; both then reload the init, which starts a unit the
current target now wants and stops one it no longer wants (so --now changes
nothing more). is-enabled prints enabled, disabled, static, masked, alias,
indirect, ... (exit 0 when enabled, static, alias or indirect; 1 otherwise).
cat prints the file and its drop-ins, each under a '# PATH' line. show prints
the keys in force after the drop-ins (KEY=VALUE), only KEY with -p.
preset enables or disables each unit as the *.preset files of the
system-preset directories say (first matching line; none: enable), and
list-unit-files shows what they say in its PRESET column.

Exit status: 0; 1 failed (no such unit file, no [Install] rules, a link
that cannot be made); 2 usage error or no init to talk to.
";

const RESTART: &str = "\
Usage: initctl restart UNIT

Restart one unit that the current target requires.

Exit status: 0; 1 not possible (e.g. the unit is not required); 4 unknown unit.
";

const KILL: &str = "\
Usage: initctl kill [-s SIGNAL] [--kill-whom=all|main] UNIT...
       initctl reset-failed [UNIT...]

Send SIGNAL (a name such as HUP or SIGHUP, or a number; default TERM) to every
process of each unit: its process group and its cgroup, whatever its
kill-mode (--kill-whom=all), or to its main process alone (main). Nothing else
changes: what a process does with the signal is its own affair.

reset-failed: each failed unit (every failed unit without a name) forgets its
failure, its restart attempts and its start limit's count: one the target
does not require is then disabled, one it requires starts again.

Exit status: 0; 1 no process of the unit got it; 4 unknown unit.
";

const START: &str = "\
Usage: initctl start [--no-block] UNIT...
       initctl stop [--no-block] UNIT...

start: a unit the current target does not require is wanted besides it
(started, with what it depends on) until the next set-target; a failed one is
restarted. stop: such a want is dropped and the unit stops; a unit the target
requires stops too and stays stopped until it is started again or the target
switches. Both wait
until the unit is active or failed (start) or stopped (stop); with --no-block
they return once the init has taken the request. A name without a suffix is
NAME.service if there is one, else the unit NAME.

Exit status: 0; 1 failed or refused (masked, required by the target); 5 unknown
unit (as systemctl).
";

const MASK: &str = "\
Usage: initctl mask UNIT
       initctl unmask UNIT

mask: the unit never starts, by any path (as the target, a dependency or a
restart); a running one stops. What hard-depends on a target only it
provides waits, blocked by `masked`. Kept across reboots as the file
masked/UNIT in the config file's directory. unmask takes the mask away.
A systemd unit (NAME.service, ...) is masked as systemctl masks it: a link
to /dev/null in /etc/systemd/system (or the search path's first directory).

Exit status: 0 applied; 1 not possible (already masked, not masked, no
config directory); 4 unknown unit.
";

const SET_ALTERNATIVE: &str = "\
Usage: initctl set-alternative TARGET UNIT

Make UNIT the provider that the target TARGET (declared `mode: alternative`
in the config's `targets:`) runs. As a target switch: what hard-depends on
TARGET stops, the old provider stops, UNIT starts, the dependents follow.
Kept across reboots as the file alternatives/TARGET in the config file's
directory.

Exit status: 0 accepted; 1 refused (UNIT does not provide TARGET, TARGET is
a group or not declared, UNIT is masked); 4 unknown target or unit.
";

const TRANSIENT: &str = "\
Usage: initctl run [--name N] [--depends-on T]... -- COMMAND...
       initctl add FILE
       initctl stop-transient NAME

run: COMMAND becomes a transient unit (foreground-supervised, restart: no),
named N or run-1, run-2, ...; it starts once every target T is active and
its output is captured (initctl logs N). add: the unit file FILE (YAML, or a
systemd unit by its .service/.socket/... name) becomes a transient unit.
Both are required besides the current target's units, across target
switches, until stop-transient NAME stops the unit and removes it, or the
machine reboots; status shows their source as transient:initctl.

Options:
  --name N         the unit's name (default: run-N)
  --depends-on T   a hard dependency (repeatable)

Exit status: 0 added or removed; 1 refused (bad unit, name taken, masked);
2 usage error (no command); 4 stop-transient of an unknown name.
";

const LOGS: &str = "\
Usage: initctl logs UNIT [-n N] [--since TIME] [-f] [--verbose]

Print the unit's captured stdout and stderr, one line per line: the older
lines from the log directory's files (<dir>/<unit>.log and its rotated
files, when the init has a log directory and they can be read), the newer
ones from the init's memory, each line once.

Options:
  -n, --lines N       only the last N lines
  -S, --since TIME    only lines from TIME on (UTC): 2026-11-22,
                      '2026-11-22 04:00', RFC 3339, today, yesterday,
                      -10m, '1h ago'
  -f, --follow        keep printing new lines until interrupted (without -n:
                      from what the init holds in memory)
  -v, --verbose       say where each part comes from (a file, the init's
                      memory)

Exit status: 0; 4 unknown unit.
";

const SHUTDOWN: &str = "\
Usage: initctl poweroff | reboot | halt

Stop every unit in reverse dependency order, then power off, reboot or halt.
When the init is not PID 1, all three stop everything and make it exit.

Exit status: 0 accepted.
";

const ANALYZE: &str = "\
Usage: initctl analyze blame
       initctl analyze critical-chain [NAME]
       initctl analyze plot > boot.svg
       initctl analyze dot | dot -Tsvg > graph.svg
       initctl analyze security [UNIT] [--json]

  blame            every unit by the time it took from starting to active,
                   slowest first
  critical-chain   the chain of units that delayed NAME (default: the current
                   target): each unit's latest dependency to become active
                   before it started. @ is when a unit became active, + how
                   long it took to start (ms since the init started)
  plot             an SVG timeline of the units' start-up
  dot              the unit graph in Graphviz dot: depends-on solid,
                   depends-ms dashed, waits-for dotted; missing targets red;
                   requires and wants with a hollow arrow (no ordering)
  security         per running unit (or UNIT), each confinement setting
                   declared against what its main process has, read from
                   /proc as root; an exposure score on systemd-analyze
                   security's 0-10 scale. --json: one object for UNIT, an
                   array without

Exit status: 0; 4 if NAME is neither a unit nor a target (UNIT unknown).
";

const CLUSTER: &str = "\
Usage: initctl cluster [--endpoint URL] [--no-legend] [--full] VERB ...

Talk to the cluster's fleet API with fleetctl's verbs: submit, load, start,
stop, unload, destroy, cat, status, list-units, list-unit-files, list-machines;
and logs UNIT [-n N] [--since TIME] [-f], a unit's output on its machine.
See `initctl cluster --help`.
";

/// The full help text of a topic.
pub fn help(topic: Topic) -> &'static str {
    match topic {
        Topic::Main => MAIN,
        Topic::Status => STATUS,
        Topic::List => LIST,
        Topic::SetTarget => SET_TARGET,
        Topic::Reload => RELOAD,
        Topic::Restart => RESTART,
        Topic::Kill => KILL,
        Topic::Logs => LOGS,
        Topic::Shutdown => SHUTDOWN,
        Topic::Analyze => ANALYZE,
        Topic::Cluster => CLUSTER,
        Topic::UnitFiles => UNIT_FILES,
        Topic::Mask => MASK,
        Topic::SetAlternative => SET_ALTERNATIVE,
        Topic::Transient => TRANSIENT,
        Topic::Start => START,
    }
}

/// The usage lines of a topic, for usage errors.
pub fn usage(topic: Topic) -> String {
    let text = help(topic);
    let mut out = String::new();
    match topic {
        Topic::Main => {
            out.push_str("Usage: initctl [--control PATH] COMMAND [ARGS...]\n");
            // Every verb, wrapped within 80 columns.
            let mut line = String::from("Commands:");
            for (i, (verb, _)) in VERBS.iter().enumerate() {
                let last = i + 1 == VERBS.len();
                let word = format!(" {verb}{}", if last { "" } else { "," });
                if line.len() + word.len() > 79 {
                    out.push_str(&line);
                    out.push('\n');
                    line = " ".repeat("Commands:".len());
                }
                line.push_str(&word);
            }
            out.push_str(&line);
            out.push('\n');
        }
        _ => {
            for line in text.lines().skip_while(|l| !l.starts_with("Usage:")) {
                if line.is_empty() {
                    break;
                }
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    out.push_str("Run 'initctl --help' for more.\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [Topic; 16] = [
        Topic::Main,
        Topic::Status,
        Topic::List,
        Topic::SetTarget,
        Topic::Reload,
        Topic::Restart,
        Topic::Kill,
        Topic::Logs,
        Topic::Shutdown,
        Topic::Analyze,
        Topic::Cluster,
        Topic::UnitFiles,
        Topic::Mask,
        Topic::SetAlternative,
        Topic::Transient,
        Topic::Start,
    ];

    #[test]
    fn every_topic_has_a_usage_line() {
        for t in ALL {
            let u = usage(t);
            assert!(u.starts_with("Usage: initctl"), "{t:?}: {u}");
            assert!(u.ends_with("Run 'initctl --help' for more.\n"));
        }
        assert_eq!(
            usage(Topic::Analyze)
                .lines()
                .filter(|l| l.contains("initctl analyze"))
                .count(),
            5
        );
    }

    #[test]
    fn the_short_usage_lists_every_verb_within_80_columns() {
        let u = usage(Topic::Main);
        for (verb, _) in VERBS {
            assert!(u.split([' ', ',', '\n']).any(|w| w == *verb), "{verb}: {u}");
            assert!(MAIN.contains(verb), "{verb} is in the long help");
        }
        assert!(u.lines().all(|l| l.len() < 80), "{u}");
    }

    #[test]
    fn main_help_lists_every_verb() {
        for verb in [
            "status",
            "list",
            "set-target",
            "reload",
            "restart",
            "kill",
            "reset-failed",
            "logs",
            "poweroff",
            "reboot",
            "halt",
            "analyze blame",
            "critical-chain",
            "analyze plot",
            "analyze dot",
            "cluster",
        ] {
            assert!(MAIN.contains(verb), "{verb}");
        }
    }

    #[test]
    fn help_fits_80_columns() {
        for t in ALL {
            for line in help(t).lines() {
                assert!(line.chars().count() <= 80, "{t:?}: {line}");
            }
        }
    }
}
