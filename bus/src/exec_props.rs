//! A service's `Exec*` properties (`ExecStart`, `ExecCondition`, …, each
//! `a(sasbttttuii)`) and their `Ex` forms (`ExecStartEx`, …,
//! `a(sasasttttuii)`, the flags as words), from the commands the init
//! reports in the status of one unit (docs/dbus.md). Each command is its
//! program's path, its argument vector, whether its failure is ignored
//! (or the flags of its prefixes), then its last run's start and exit
//! times, PID, `code` and `status`: flotilla keeps no run of a command
//! but the main process's, so those are systemd's "never ran" (0).

use flotilla_units::protocol::ExecList;
use flotilla_units::spec::{Command, Privileges};
use zbus::zvariant::Value;

/// One command as the plain property has it.
type Plain = (String, Vec<String>, bool, u64, u64, u64, u64, u32, i32, i32);
/// One command as the `Ex` property has it.
type Ex = (
    String,
    Vec<String>,
    Vec<String>,
    u64,
    u64,
    u64,
    u64,
    u32,
    i32,
    i32,
);

/// The properties of `lists`: each as it is named and with `Ex`.
pub fn exec_props(lists: &[ExecList]) -> Vec<(&'static str, Value<'static>)> {
    let mut out = Vec::with_capacity(lists.len() * 2);
    for l in lists {
        let Some((plain, ex)) = names(&l.property) else {
            continue;
        };
        let p: Vec<Plain> = l.commands.iter().map(plain_of).collect();
        let e: Vec<Ex> = l.commands.iter().map(ex_of).collect();
        out.push((plain, Value::from(p)));
        out.push((ex, Value::from(e)));
    }
    out
}

/// The two names of a property, as `'static` strings.
fn names(property: &str) -> Option<(&'static str, &'static str)> {
    Some(match property {
        "ExecCondition" => ("ExecCondition", "ExecConditionEx"),
        "ExecStartPre" => ("ExecStartPre", "ExecStartPreEx"),
        "ExecStart" => ("ExecStart", "ExecStartEx"),
        "ExecStartPost" => ("ExecStartPost", "ExecStartPostEx"),
        "ExecReload" => ("ExecReload", "ExecReloadEx"),
        "ExecStop" => ("ExecStop", "ExecStopEx"),
        "ExecStopPost" => ("ExecStopPost", "ExecStopPostEx"),
        _ => return None,
    })
}

/// The program's path and the argument vector it gets: with `@`, the
/// second word is its `argv[0]`.
fn path_argv(c: &Command) -> (String, Vec<String>) {
    let words = c.argv.to_vec();
    let path = words.first().cloned().unwrap_or_default();
    let argv = if c.argv0 {
        words.into_iter().skip(1).collect()
    } else {
        words
    };
    (path, argv)
}

fn plain_of(c: &Command) -> Plain {
    let (path, argv) = path_argv(c);
    (path, argv, c.ignore_failure, 0, 0, 0, 0, 0, 0, 0)
}

fn ex_of(c: &Command) -> Ex {
    let (path, argv) = path_argv(c);
    (path, argv, flags(c), 0, 0, 0, 0, 0, 0, 0)
}

/// systemd's words for a command's prefixes, in its order: `-`
/// `ignore-failure`, `+` `privileged`, `!` `no-setuid`, `:`
/// `no-env-expand` (`!!` is a no-op here, docs/systemd-units.md).
fn flags(c: &Command) -> Vec<String> {
    let mut f = Vec::new();
    if c.ignore_failure {
        f.push("ignore-failure");
    }
    match c.privileges {
        Privileges::Full => f.push("privileged"),
        Privileges::NoUserChange => f.push("no-setuid"),
        Privileges::Unit => {}
    }
    if !c.expand_env {
        f.push("no-env-expand");
    }
    f.into_iter().map(String::from).collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;

    /// A command as the translator reads `line` (its prefixes, then the
    /// words): the prefixes this module shows.
    fn command(line: &str) -> Command {
        let rest = line.trim_start_matches(['-', '@', ':', '+', '!']);
        let prefixes = &line[..line.len() - rest.len()];
        let mut c = Command::new(rest.split(' '));
        c.ignore_failure = prefixes.contains('-');
        c.argv0 = prefixes.contains('@');
        c.expand_env = !prefixes.contains(':');
        c.privileges = if prefixes.contains('+') {
            Privileges::Full
        } else if prefixes.contains('!') {
            Privileges::NoUserChange
        } else {
            Privileges::Unit
        };
        c
    }

    /// A command line, its path, argv, ignore flag and `Ex` flags.
    type Row = (
        &'static str,
        &'static str,
        &'static [&'static str],
        bool,
        &'static [&'static str],
    );

    /// What test 40 of systemd's suite reads: `:` is `no-env-expand`, the
    /// plain form says `ignore_errors=no`.
    #[test]
    fn each_prefix_as_systemd_shows_it() {
        let rows: [Row; 6] = [
            (
                ":/bin/echo ${X}",
                "/bin/echo",
                &["/bin/echo", "${X}"],
                false,
                &["no-env-expand"],
            ),
            (
                "/bin/echo $X",
                "/bin/echo",
                &["/bin/echo", "$X"],
                false,
                &[],
            ),
            (
                "-/bin/false",
                "/bin/false",
                &["/bin/false"],
                true,
                &["ignore-failure"],
            ),
            (
                "@/bin/sh sh -c x",
                "/bin/sh",
                &["sh", "-c", "x"],
                false,
                &[],
            ),
            (
                "+/bin/true",
                "/bin/true",
                &["/bin/true"],
                false,
                &["privileged"],
            ),
            (
                "!/bin/true",
                "/bin/true",
                &["/bin/true"],
                false,
                &["no-setuid"],
            ),
        ];
        for (line, path, argv, ignore, fl) in rows {
            let c = command(line);
            let p = plain_of(&c);
            assert_eq!(
                (p.0.as_str(), p.1.clone(), p.2),
                (path, to(argv), ignore),
                "{line}"
            );
            assert_eq!(ex_of(&c).2, to(fl), "{line}");
        }
    }

    #[test]
    fn every_list_gives_both_properties_with_systemd_signatures() {
        let lists = vec![
            ExecList {
                property: "ExecStartPost".into(),
                commands: vec![command(":/bin/echo x")],
            },
            ExecList {
                property: "ExecCondition".into(),
                commands: vec![],
            },
        ];
        let props = exec_props(&lists);
        let got: Vec<(&str, String)> = props
            .iter()
            .map(|(n, v)| (*n, v.value_signature().to_string()))
            .collect();
        assert_eq!(
            got,
            [
                ("ExecStartPost", "a(sasbttttuii)".to_string()),
                ("ExecStartPostEx", "a(sasasttttuii)".to_string()),
                ("ExecCondition", "a(sasbttttuii)".to_string()),
                ("ExecConditionEx", "a(sasasttttuii)".to_string()),
            ]
        );
    }

    fn to(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }
}
