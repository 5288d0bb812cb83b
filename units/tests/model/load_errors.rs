//! Every kind of problem in a unit file, with the exact `FILE:LINE:COL:
//! message` it prints. Each test says what is wrong with its input.

use flotilla_units::load::parse_yaml;

/// The rendered diagnostics of `text` parsed as `u.yaml`; the file must be
/// refused (no spec) when any of them is an error.
fn diags(text: &str) -> Vec<String> {
    let p = parse_yaml("u.yaml", text);
    if p.diagnostics.iter().any(|d| d.is_error()) {
        assert!(p.spec.is_none(), "a spec despite errors");
    } else {
        assert!(
            p.spec.is_some(),
            "no spec without errors: {:?}",
            p.diagnostics
        );
    }
    p.diagnostics.iter().map(ToString::to_string).collect()
}

#[test]
fn unknown_keys_get_a_suggestion() {
    // `depend-on` is one letter off `depends-on`; `ExecStart` is systemd's
    // spelling; `zzz` is close to nothing.
    assert_eq!(
        diags("unit: u\nexec-start: /bin/u\ndepend-on: a\nExecStart: /bin/u\nzzz: b\n"),
        [
            "u.yaml:3:1: unknown key `depend-on`; did you mean `depends-on`?",
            "u.yaml:4:1: unknown key `ExecStart`; did you mean `exec-start`?",
            "u.yaml:5:1: unknown key `zzz`",
        ]
    );
    // Underscores for dashes, and a transposition.
    assert_eq!(
        diags("unit: u\nexec-start: /bin/u\nwaits_for: a\nrestrat: always\n"),
        [
            "u.yaml:3:1: unknown key `waits_for`; did you mean `waits-for`?",
            "u.yaml:4:1: unknown key `restrat`; did you mean `restart`?",
        ]
    );
}

#[test]
fn keys_that_are_not_names() {
    // A number, a boolean and a list used as keys.
    assert_eq!(
        diags("unit: u\nexec-start: /bin/u\n5: x\ntrue: y\n[a]: z\n"),
        [
            "u.yaml:3:1: a key must be a name, found a number `5`",
            "u.yaml:4:1: a key must be a name, found a boolean `true`",
            "u.yaml:5:1: a key must be a name, found a list",
        ]
    );
}

#[test]
fn duplicate_keys_name_the_first() {
    // `provides` twice; also `unit` together with its alias `name`.
    assert_eq!(
        diags("unit: u\nprovides: a\nexec-start: /bin/u\nprovides: b\nname: u\n"),
        [
            "u.yaml:4:1: duplicate key `provides` (first given at line 2, column 1)",
            "u.yaml:5:1: both `unit` and `name` are given; `name` is an alias of `unit`, keep \
             one (the first is at line 1, column 1)",
        ]
    );
}

#[test]
fn wrong_value_types() {
    // A list for a duration, a mapping for a command, a boolean for a name,
    // nothing for a target list, a list for a path, a string for the
    // environment, a mapping for text.
    assert_eq!(
        diags(
            "unit: u\nexec-start: {a: b}\nstart-timeout: [1s]\nuser: true\ndepends-on:\n\
             pidfile: [/run/u.pid]\nenvironment: A=1\ndescription: {a: 1}\n"
        ),
        [
            "u.yaml:2:13: expected a command for `exec-start` (a string, or a list of words), \
             found a mapping",
            "u.yaml:3:16: expected a duration like `2s` for `start-timeout`, found a list",
            "u.yaml:4:7: expected a user name or number for `user`, found `true`",
            "u.yaml:5:11: expected target names for `depends-on` (a list, or one string of \
             names separated by commas), found nothing",
            "u.yaml:6:1: `pidfile` only applies to `background-pidfile` units, and this one is \
             `foreground-supervised`",
            "u.yaml:6:10: expected a path for `pidfile`, found a list",
            "u.yaml:7:14: expected a mapping of variables for `environment` (`NAME: value`), \
             found a string",
            "u.yaml:8:14: expected text for `description`, found a mapping",
        ]
    );
}

#[test]
fn wrong_types_inside_lists() {
    // A mapping among target names; a list among the words of a command;
    // nothing as a command of `exec-start-pre`.
    assert_eq!(
        diags("unit: u\ndepends-on: [a, {b: 1}]\nexec-start: [/bin/u, [x]]\nexec-start-pre: [~]\n"),
        [
            "u.yaml:2:17: expected a target name in `depends-on`, found a mapping",
            "u.yaml:3:22: expected a word of the command in `exec-start`, found a list",
            "u.yaml:4:18: expected commands for `exec-start-pre` (a command string, or a list \
             of commands), found nothing",
        ]
    );
}

#[test]
fn options_that_do_not_fit_the_type() {
    // `pidfile` and `ready-*` on a oneshot; `restart: always` on a oneshot.
    assert_eq!(
        diags(
            "unit: u\ntype: oneshot\nexec-start: /bin/u\npidfile: /run/u.pid\nready-wait: 2s\n\
             ready-grep: up\nrestart: always\n"
        ),
        [
            "u.yaml:4:1: `pidfile` only applies to `background-pidfile` units, and this one is \
             `oneshot`",
            "u.yaml:5:1: `ready-wait` only applies to `foreground-supervised` units, and this \
             one is `oneshot`",
            "u.yaml:6:1: `ready-grep` only applies to `foreground-supervised` units, and this \
             one is `oneshot`",
            "u.yaml:7:10: `restart: always` would run a oneshot again every time it finishes; \
             use `on-failure`",
        ]
    );
    // Anything about a process on a virtual unit.
    assert_eq!(
        diags(
            "unit: u\ntype: virtual\nexec-start: /bin/u\nuser: nobody\nrestart: always\n\
             environment: {A: 1}\nstop-timeout: 5s\n"
        ),
        [
            "u.yaml:3:1: `exec-start` does not apply to a `virtual` unit (it runs no process)",
            "u.yaml:4:1: `user` does not apply to a `virtual` unit (it runs no process)",
            "u.yaml:5:1: `restart` does not apply to a `virtual` unit (it runs no process)",
            "u.yaml:6:1: `environment` does not apply to a `virtual` unit (it runs no process)",
            "u.yaml:7:1: `stop-timeout` does not apply to a `virtual` unit (it runs no process)",
        ]
    );
    // `ready-grep` on a notified unit, as in the seed's irc-bot.
    assert_eq!(
        diags("unit: u\ntype: foreground-notified\nexec-start: /bin/u\nready-grep: ^up\n"),
        [
            "u.yaml:4:1: `ready-grep` only applies to `foreground-supervised` units, and this one \
          is `foreground-notified` (it is ready when it sends `READY=1`)"
        ]
    );
    // Both readiness options at once.
    assert_eq!(
        diags("unit: u\nexec-start: /bin/u\nready-wait: 1s\nready-grep: up\n"),
        ["u.yaml:4:1: `ready-wait` and `ready-grep` cannot be used together; choose one"]
    );
}

#[test]
fn what_a_type_needs() {
    // No `exec-start` on a (default) foreground-supervised unit.
    assert_eq!(
        diags("unit: u\n"),
        [
            "u.yaml:1:1: missing `exec-start` (a `foreground-supervised` unit needs a command to \
          run)"
        ]
    );
    // No `pidfile` on a background-pidfile unit: reported at the type.
    assert_eq!(
        diags("unit: u\ntype: background-pidfile\nexec-start: /usr/sbin/ud\n"),
        [
            "u.yaml:2:7: a `background-pidfile` unit needs `pidfile` (where the daemon writes its \
          PID)"
        ]
    );
    // No name at all: reported where the mapping starts.
    assert_eq!(
        diags("\n\nexec-start: /bin/u\n"),
        ["u.yaml:3:1: missing `unit` (the unit's name)"]
    );
}

#[test]
fn unknown_types() {
    // A wrong case, systemd's name for a type, and something else.
    assert_eq!(
        diags("unit: u\ntype: Oneshot\nexec-start: /bin/u\n"),
        ["u.yaml:2:7: unknown type `Oneshot`; did you mean `oneshot`?"]
    );
    assert_eq!(
        diags("unit: u\ntype: forking\nexec-start: /bin/u\n"),
        [
            "u.yaml:2:7: unknown type `forking`; systemd's `Type=forking` is `background-pidfile` \
          here"
        ]
    );
    assert_eq!(
        diags("unit: u\ntype: daemon\nexec-start: /bin/u\n"),
        [
            "u.yaml:2:7: unknown type `daemon` (the types are foreground-notified, \
          foreground-supervised, background-pidfile, background-scripted, oneshot, virtual, timer, socket, path, slice)"
        ]
    );
}

#[test]
fn bad_names() {
    // A space in the unit name; an empty entry, a space and a slash in
    // target names (each at its own column inside the comma string).
    assert_eq!(
        diags("unit: my unit\nexec-start: /bin/u\nprovides: a,, b c\ndepends-on: [x/y]\n"),
        [
            "u.yaml:1:7: invalid unit name `my unit`: a name has only letters, digits and \
             `:_.@-`",
            "u.yaml:3:13: empty target name in `provides` (a comma too many, or nothing given)",
            "u.yaml:3:15: invalid target name `b c` in `provides`: a name has only letters, \
             digits and `:_.@-`",
            "u.yaml:4:14: invalid target name `x/y` in `depends-on`: a name has only letters, \
             digits and `:_.@-`",
        ]
    );
    // No target at all to provide.
    assert_eq!(
        diags("unit: u\nexec-start: /bin/u\nprovides: []\n"),
        ["u.yaml:3:11: `provides` needs at least one target"]
    );
    assert_eq!(
        diags("unit: u\nexec-start: /bin/u\nwaits-for: \"\"\n"),
        ["u.yaml:3:12: no target names in `waits-for` (leave the key out, or write `[]`)"]
    );
}

#[test]
fn bad_durations() {
    // An unknown unit, a number without its unit inside a combination, a
    // negative number, zero timeouts.
    assert_eq!(
        diags(
            "unit: u\nexec-start: /bin/u\nstart-timeout: 5x\nrestart-delay: 1m30\n\
             ready-wait: -1s\nstop-timeout: 0\n"
        ),
        [
            "u.yaml:3:16: bad duration for `start-timeout`: unknown unit `x` in `5x` (use `ns`, \
             `us`, `ms`, `s`, `m` or `min`, `h`, `d`)",
            "u.yaml:4:16: bad duration for `restart-delay`: missing unit after `30` in `1m30` \
             (use `ns`, `us`, `ms`, `s`, `m` or `min`, `h`, `d`)",
            "u.yaml:5:13: bad duration for `ready-wait`: `-1s` is negative; a duration is 0 or \
             more",
            "u.yaml:6:15: `stop-timeout` must be longer than 0",
        ]
    );
}

#[test]
fn bad_commands() {
    // An unterminated quote, a shell pipe, an empty command, an empty
    // program name, and `-` where it means nothing.
    assert_eq!(
        diags(
            "unit: u\nexec-start: /bin/u 'oops\nexec-stop: /bin/kill $MAINPID | logger\n\
             exec-reload: ''\nexec-start-pre: [[\"\", x]]\n"
        ),
        [
            "u.yaml:2:13: bad command in `exec-start`: unterminated single quote (')",
            "u.yaml:3:12: bad command in `exec-stop`: unquoted `|`: no shell runs the command, \
             so shell operators do not work; quote it, or run the command with `/bin/sh -c \
             '...'`",
            "u.yaml:4:14: bad command in `exec-reload`: empty command",
            "u.yaml:5:18: bad command in `exec-start-pre`: the program name is empty",
        ]
    );
    assert_eq!(
        diags("unit: u\nexec-start: -/bin/u\n"),
        [
            "u.yaml:2:13: bad command in `exec-start`: a leading `-` (ignore failure) only works \
          in `exec-start-pre` and `exec-stop-post`"
        ]
    );
    assert_eq!(
        diags("unit: u\nexec-start: []\n"),
        ["u.yaml:2:13: bad command in `exec-start`: empty command"]
    );
}

#[test]
fn bad_regex_points_into_the_pattern() {
    // The `(` that is never closed is the 2nd character of the pattern,
    // which starts after the quote at column 13.
    assert_eq!(
        diags("unit: u\nexec-start: /bin/u\nready-grep: \"a(b\"\n"),
        ["u.yaml:3:15: bad regular expression for `ready-grep`: found open group without closing ')'"]
    );
    // The second group is the one left open.
    assert_eq!(
        diags("unit: u\nexec-start: /bin/u\nready-grep: \"(a)(b\"\n"),
        ["u.yaml:3:17: bad regular expression for `ready-grep`: found open group without closing ')'"]
    );
    // A `)` never opened.
    assert_eq!(
        diags("unit: u\nexec-start: /bin/u\nready-grep: \"ab)c\"\n"),
        ["u.yaml:3:16: bad regular expression for `ready-grep`: found closing ')' without matching '('"]
    );
    // A repetition with nothing to repeat.
    assert_eq!(
        diags("unit: u\nexec-start: /bin/u\nready-grep: '*up'\n"),
        [
            "u.yaml:3:14: bad regular expression for `ready-grep`: uncounted repetition operator \
             must be applied to a sub-expression"
        ]
    );
    // Unicode classes are not part of the syntax.
    assert_eq!(
        diags("unit: u\nexec-start: /bin/u\nready-grep: 'up \\pL'\n"),
        ["u.yaml:3:17: bad regular expression for `ready-grep`: Unicode character classes are not supported"]
    );
    // Too big once compiled: the whole value.
    assert_eq!(
        diags("unit: u\nexec-start: /bin/u\nready-grep: 'a{1000}{1000}'\n"),
        [
            "u.yaml:3:13: bad regular expression for `ready-grep`: the expression is too big \
             once compiled (the limit is 1 MiB)"
        ]
    );
    // Too long to be a readiness pattern: the first character past the
    // limit (the pattern starts at column 14).
    let long = "x".repeat(1500);
    assert_eq!(
        diags(&format!(
            "unit: u\nexec-start: /bin/u\nready-grep: '{long}'\n"
        )),
        [
            "u.yaml:3:1038: bad regular expression for `ready-grep`: the expression is 1500 \
             characters long (the limit is 1024)"
        ]
    );
}

#[test]
fn bad_restart_signal_and_accounts() {
    // `true` is not a policy; `on-fail` is close to one; `SIGFOO` is not a
    // signal; a user name with a space.
    assert_eq!(
        diags("unit: u\nexec-start: /bin/u\nrestart: true\nkill-signal: SIGFOO\nuser: a b\n"),
        [
            "u.yaml:3:10: `restart: true` is ambiguous; write `on-failure` or `always`",
            "u.yaml:4:14: unknown signal `SIGFOO` for `kill-signal` (write a name like \
             `SIGTERM` or `SIGINT`, or a number from 1 to 64)",
            "u.yaml:5:7: invalid `user` `a b`",
        ]
    );
    assert_eq!(
        diags("unit: u\nexec-start: /bin/u\nrestart: on-fail\n"),
        ["u.yaml:3:10: unknown restart policy `on-fail`; did you mean `on-failure`?"]
    );
    assert_eq!(
        diags("unit: u\nexec-start: /bin/u\nrestart: sometimes\n"),
        ["u.yaml:3:10: unknown restart policy `sometimes` (use `no`, `on-failure` or `always`)"]
    );
}

#[test]
fn bad_paths_and_environment() {
    // Relative paths, an empty path, a variable with no value, a variable
    // name with `=`, a list as a value, a duplicate variable.
    assert_eq!(
        diags(
            "unit: u\nexec-start: /bin/u\nworking-directory: srv\n\
             environment-file: [-/etc/u.env, u.env, '']\n\
             environment:\n  A:\n  B=C: x\n  D: [1]\n  E: 1\n  E: 2\n"
        ),
        [
            "u.yaml:3:20: `working-directory` must be an absolute path (starting with `/`), \
             found `srv`",
            "u.yaml:4:33: `environment-file` must be an absolute path (starting with `/`), \
             found `u.env`",
            "u.yaml:4:40: `environment-file` is an empty path",
            "u.yaml:6:4: no value for `A` in `environment` (write `A: \"\"` for an empty one)",
            "u.yaml:7:3: invalid variable name `B=C` in `environment` (no `=`, spaces or control \
             characters)",
            "u.yaml:8:6: expected a value for `D` in `environment`, found a list",
            "u.yaml:10:3: duplicate variable `E` in `environment` (first given at line 9, \
             column 3)",
        ]
    );
}

#[test]
fn not_a_mapping_empty_and_bad_yaml() {
    // A list, a plain string, nothing at all, only comments.
    assert_eq!(
        diags("- unit: u\n"),
        [
            "u.yaml:1:1: a unit file must be a YAML mapping of keys such as `unit: NAME`, found a \
          list"
        ]
    );
    assert_eq!(
        diags("unit u\n"),
        [
            "u.yaml:1:1: a unit file must be a YAML mapping of keys such as `unit: NAME`, found a \
          string"
        ]
    );
    let empty = "u.yaml:1:1: the file is empty; a unit file is a YAML mapping with at least \
                 `unit:` (and `exec-start:` unless the unit is virtual)";
    assert_eq!(diags(""), [empty]);
    assert_eq!(diags("# just a comment\n"), [empty]);
    // YAML syntax errors carry the parser's line and column.
    assert_eq!(
        diags("unit: u\nexec-start: [/bin/u\n"),
        ["u.yaml:2:13: invalid YAML: unclosed bracket '['"]
    );
    assert_eq!(
        diags("unit: u\n  exec-start: /bin/u\n"),
        ["u.yaml:2:13: invalid YAML: mapping values are not allowed in this context"]
    );
    assert_eq!(
        diags("unit: u\nexec-start: /bin/u\n---\nunit: v\n"),
        ["u.yaml:4:1: a second YAML document starts here; a file holds exactly one"]
    );
}

#[test]
fn too_large_files_are_refused_unread() {
    let mut text = String::from("unit: u\nexec-start: /bin/u\ndescription: ");
    text.push_str(&"x".repeat(1024 * 1024));
    assert_eq!(
        diags(&text),
        [format!(
            "u.yaml:1:1: the file is {} bytes; the limit is 1 MiB (1048576 bytes)",
            text.len()
        )]
    );
}

#[test]
fn warnings_keep_the_unit() {
    // A name that is not the file's; delays in the wrong order; a target
    // listed twice; a background-scripted unit without a stop script.
    let p = parse_yaml(
        "units/web.yaml",
        "unit: www\ntype: background-scripted\nexec-start: /etc/rc.d/www start\n\
         provides: a, a\nrestart-delay: 10s\nrestart-max-delay: 5s\n",
    );
    let shown: Vec<String> = p.diagnostics.iter().map(ToString::to_string).collect();
    assert_eq!(
        shown,
        [
            "units/web.yaml:1:7: warning: the unit is named `www` but its file is `web.yaml`",
            "units/web.yaml:2:7: warning: a `background-scripted` unit without `exec-stop` is \
             stopped by sending `kill-signal` to the processes its start script left behind",
            "units/web.yaml:4:14: warning: `a` is listed twice in `provides`",
            "units/web.yaml:6:20: warning: `restart-max-delay` (5s) is shorter than \
             `restart-delay` (10s); every restart waits 5s",
        ]
    );
    let spec = p.spec.expect("warnings do not refuse a unit");
    assert_eq!(spec.provides, ["a"]);
    // The same warning when the max is the default.
    assert_eq!(
        diags("unit: u\nexec-start: /bin/u\nrestart-delay: 2m\n"),
        ["u.yaml:3:16: warning: `restart-delay` (2m) is longer than `restart-max-delay` (1m, the \
          default); every restart waits 1m"]
    );
}

#[test]
fn every_problem_of_a_file_at_once() {
    // Seven independent mistakes; all seven are reported, in file order,
    // and the origin is still filled.
    let p = parse_yaml(
        "u.yaml",
        "unit: u\ntype: oneshot\nprovids: a\ndepends-on: [b, 'c d']\nexec-start: \"x\n\
         start-timeout: soon\npidfile: /run/u.pid\nkill-signal: 99\n",
    );
    let shown: Vec<String> = p.diagnostics.iter().map(ToString::to_string).collect();
    assert_eq!(
        shown,
        ["u.yaml:6:1: invalid YAML: invalid indentation in multiline quoted scalar"],
        "a syntax error stops the file: nothing after it can be trusted"
    );
    let p = parse_yaml(
        "u.yaml",
        "unit: u\ntype: oneshot\nprovids: a\ndepends-on: [b, 'c d']\nexec-start: \"x\"\n\
         start-timeout: soon\npidfile: /run/u.pid\nkill-signal: 99\nrestart: always\n\
         bogus: 1\n",
    );
    let shown: Vec<String> = p.diagnostics.iter().map(ToString::to_string).collect();
    assert_eq!(
        shown,
        [
            "u.yaml:3:1: unknown key `provids`; did you mean `provides`?",
            "u.yaml:4:17: invalid target name `c d` in `depends-on`: a name has only letters, \
             digits and `:_.@-`",
            "u.yaml:6:16: bad duration for `start-timeout`: `soon` is not a duration (write e.g. \
             `2s` or `500ms`)",
            "u.yaml:7:1: `pidfile` only applies to `background-pidfile` units, and this one is \
             `oneshot`",
            "u.yaml:8:14: unknown signal `99` for `kill-signal` (write a name like `SIGTERM` or \
             `SIGINT`, or a number from 1 to 64)",
            "u.yaml:9:10: `restart: always` would run a oneshot again every time it finishes; \
             use `on-failure`",
            "u.yaml:10:1: unknown key `bogus`",
        ]
    );
    assert!(p.spec.is_none());
    assert_eq!(p.origin.pos, flotilla_units::diag::Pos::new(1, 7));
    assert_eq!(
        p.origin.depends_on_pos(),
        [flotilla_units::diag::Pos::new(4, 14)]
    );
}

#[test]
fn diagnostics_are_sorted_and_carry_severity() {
    use flotilla_units::diag::{Pos, Severity};
    let p = parse_yaml("u.yaml", "unit: x\nexec-start: /bin/u\nbogus: 1\n");
    assert_eq!(p.diagnostics.len(), 2);
    assert_eq!(p.diagnostics[0].severity, Severity::Warning);
    assert_eq!(p.diagnostics[0].pos, Pos::new(1, 7));
    assert_eq!(p.diagnostics[1].severity, Severity::Error);
    assert_eq!(p.diagnostics[1].pos, Pos::new(3, 1));
    assert_eq!(p.diagnostics[1].file, "u.yaml");
}

#[test]
fn a_file_gets_at_most_a_hundred_diagnostics() {
    // 150 unknown keys: the first 100 are shown, the rest counted.
    let text: String = (0..150).map(|i| format!("k{i}: v\n")).collect();
    let shown = diags(&format!("unit: u\nexec-start: /bin/u\n{text}"));
    assert_eq!(shown.len(), flotilla_units::load::MAX_DIAGNOSTICS + 1);
    assert_eq!(shown[0], "u.yaml:3:1: unknown key `k0`");
    assert_eq!(
        shown[100],
        "u.yaml:102:1: 50 more errors and 0 more warnings in this file are not shown"
    );
}
