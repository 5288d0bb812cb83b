//! Property tests: `parse_yaml` never panics, whatever the text (arbitrary
//! strings, and arbitrary mutations of a valid file), its result is always
//! coherent, and valid units written in any of the accepted forms read back
//! as the spec they describe.

use flotilla_units::config::parse_config;
use flotilla_units::duration::format_duration;
use flotilla_units::load::{parse_yaml, ParsedUnit};
use flotilla_units::spec::{Command, RestartPolicy, Signal, UnitSpec, UnitType};
use proptest::prelude::*;
use std::time::Duration;

const VALID: &str = "\
# a unit with most keys
unit: web
description: \"The web server\"
type: foreground-supervised
provides: [http, https]
depends-on: db, cache
depends-ms:
  - network-online
waits-for: [dns]
exec-start-pre: [\"-/bin/rm -f /run/web.sock\"]
exec-start: /usr/bin/web --port 80 'a b' \"c\\\"d\"
exec-stop: [/bin/kill, -TERM, $MAINPID]
exec-reload: /bin/kill -HUP $MAINPID
ready-grep: ^listening
start-timeout: 1m30s
stop-timeout: 5
restart: always
restart-delay: 500ms
restart-max-delay: 2m
kill-signal: SIGINT
user: www
group: 33
working-directory: /srv/web
environment: {PORT: 80, MODE: prod}
environment-file: -/etc/default/web
";

/// What must hold for any input: errors and spec exclude each other, every
/// diagnostic names the file, positioned ones are in the file, and the
/// diagnostics are in file order.
fn coherent(p: &ParsedUnit, text: &str) -> Result<(), TestCaseError> {
    let has_error = p.diagnostics.iter().any(|d| d.is_error());
    prop_assert_eq!(p.spec.is_some(), !has_error, "{:?}", p.diagnostics);
    // YAML ends lines at `\n`, `\r\n` and a lone `\r`.
    let lines = text.matches(['\n', '\r']).count() as u32 + 2;
    for d in &p.diagnostics {
        prop_assert_eq!(&d.file, "f.yaml");
        prop_assert!(
            d.pos.line >= 1 && d.pos.line <= lines,
            "{} ({} lines)",
            d,
            lines
        );
        prop_assert!(d.pos.col >= 1, "{}", d);
        prop_assert!(!d.message.is_empty());
        prop_assert!(!d.message.contains('\n'), "{}", d);
    }
    prop_assert!(p.diagnostics.windows(2).all(|w| w[0].pos <= w[1].pos));
    prop_assert_eq!(&p.origin.file, "f.yaml");
    if let Some(s) = &p.spec {
        prop_assert!(!s.provides.is_empty());
        prop_assert_eq!(p.origin.provides_pos().len(), s.provides.len());
        prop_assert_eq!(p.origin.depends_on_pos().len(), s.depends_on.len());
        prop_assert_eq!(p.origin.depends_ms_pos().len(), s.depends_ms.len());
        prop_assert_eq!(p.origin.waits_for_pos().len(), s.waits_for.len());
    }
    Ok(())
}

#[test]
fn the_valid_file_is_valid() {
    let p = parse_yaml("web.yaml", VALID);
    assert_eq!(p.diagnostics, []);
    assert!(p.spec.is_some());
}

/// One edit of a text.
#[derive(Debug, Clone)]
enum Edit {
    Delete(usize, usize),
    Insert(usize, String),
    Replace(usize, char),
    DuplicateLine(usize),
    SwapLines(usize, usize),
    Indent(usize, usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    let piece = prop_oneof![
        "[-:,#&*!|>'\"\\[\\]{}?%@` \n\t~]{1,3}",
        "[a-z0-9]{1,6}",
        Just("\u{0}".to_string()),
        Just("\u{feff}".to_string()),
        Just("é".to_string()),
        Just("\r\n".to_string()),
        Just("---\n".to_string()),
        Just(": ".to_string()),
        Just("- ".to_string()),
    ];
    prop_oneof![
        (any::<usize>(), 1usize..20).prop_map(|(a, n)| Edit::Delete(a, n)),
        (any::<usize>(), piece).prop_map(|(a, s)| Edit::Insert(a, s)),
        (any::<usize>(), any::<char>()).prop_map(|(a, c)| Edit::Replace(a, c)),
        any::<usize>().prop_map(Edit::DuplicateLine),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Edit::SwapLines(a, b)),
        (any::<usize>(), 1usize..6).prop_map(|(a, n)| Edit::Indent(a, n)),
    ]
}

fn apply(text: &str, e: &Edit) -> String {
    let chars: Vec<char> = text.chars().collect();
    let at = |i: usize| {
        if chars.is_empty() {
            0
        } else {
            i % (chars.len() + 1)
        }
    };
    let mut lines: Vec<String> = text.split('\n').map(str::to_string).collect();
    let n = lines.len();
    match e {
        Edit::Delete(a, len) => {
            let a = at(*a);
            let b = (a + len).min(chars.len());
            chars[..a].iter().chain(&chars[b..]).collect()
        }
        Edit::Insert(a, s) => {
            let a = at(*a);
            let mut out: String = chars[..a].iter().collect();
            out.push_str(s);
            out.extend(&chars[a..]);
            out
        }
        Edit::Replace(a, c) => {
            let mut cs = chars.clone();
            if !cs.is_empty() {
                let i = a % cs.len();
                cs[i] = *c;
            }
            cs.into_iter().collect()
        }
        Edit::DuplicateLine(a) => {
            let l = lines[a % n].clone();
            lines.insert(a % n, l);
            lines.join("\n")
        }
        Edit::SwapLines(a, b) => {
            lines.swap(a % n, b % n);
            lines.join("\n")
        }
        Edit::Indent(a, k) => {
            lines[a % n] = format!("{}{}", " ".repeat(*k), lines[a % n]);
            lines.join("\n")
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn never_panics_on_any_string(text in "\\PC*") {
        let p = parse_yaml("f.yaml", &text);
        coherent(&p, &text)?;
        let _ = parse_config("init.yaml", &text);
    }

    #[test]
    fn never_panics_on_any_characters(text in proptest::collection::vec(any::<char>(), 0..200)) {
        let text: String = text.into_iter().collect();
        let p = parse_yaml("f.yaml", &text);
        coherent(&p, &text)?;
    }

    #[test]
    fn never_panics_on_mutations_of_a_valid_file(edits in proptest::collection::vec(edit(), 1..8)) {
        let mut text = VALID.to_string();
        for e in &edits {
            text = apply(&text, e);
        }
        let p = parse_yaml("f.yaml", &text);
        coherent(&p, &text)?;
        let _ = parse_config("init.yaml", &text);
    }
}

/// A valid unit described two ways: the spec we expect, and fields to write.
#[derive(Debug, Clone)]
struct Case {
    spec: UnitSpec,
    flow_lists: bool,
    command_as_list: bool,
}

fn name() -> impl Strategy<Value = String> {
    "[a-z][a-z0-9_.@:-]{0,11}"
}

fn names(min: usize) -> impl Strategy<Value = Vec<String>> {
    proptest::collection::btree_set(name(), min..4).prop_map(|s| s.into_iter().collect())
}

fn duration() -> impl Strategy<Value = Duration> {
    prop_oneof![
        (1u64..100_000).prop_map(Duration::from_millis),
        (1u64..1_000_000).prop_map(Duration::from_secs),
        (1u64..u64::from(u32::MAX), 0u32..1_000_000_000).prop_map(|(s, n)| Duration::new(s, n)),
    ]
}

fn word() -> impl Strategy<Value = String> {
    prop_oneof!["[A-Za-z0-9/._=+-]{1,10}", "\\PC{0,8}",]
}

fn case() -> impl Strategy<Value = Case> {
    (
        name(),
        // The triggers need settings of their own (their tests are in
        // `trigger/`).
        prop::sample::select(
            UnitType::ALL
                .into_iter()
                .filter(|t| !t.is_trigger())
                .collect::<Vec<_>>(),
        ),
        names(1),
        (names(0), names(0), names(0)),
        ("/[a-z]{1,8}", proptest::collection::vec(word(), 0..4)),
        (duration(), duration(), duration(), duration()),
        (0usize..3, 1i32..=64),
        (any::<bool>(), any::<bool>()),
    )
        .prop_map(
            |(name, kind, provides, deps, (prog, args), durs, (restart, sig), forms)| {
                let mut spec = UnitSpec::new(name, kind);
                spec.provides = provides.into();
                let (on, ms, waits) = deps;
                (spec.depends_on, spec.depends_ms, spec.waits_for) =
                    (on.into(), ms.into(), waits.into());
                if kind.row().runs != flotilla_units::spec::Runs::Nothing {
                    let mut argv = vec![prog];
                    argv.extend(args);
                    spec.exec_start = Some(Command::new(argv));
                    spec.start_timeout = durs.0;
                    spec.stop_timeout = durs.1;
                    spec.restart_delay = durs.2.min(durs.3);
                    spec.restart_max_delay = durs.2.max(durs.3);
                    spec.restart = match (restart, kind) {
                        (0, _) => RestartPolicy::No,
                        (1, _) | (_, UnitType::Oneshot) => RestartPolicy::OnFailure,
                        _ => RestartPolicy::Always,
                    };
                    spec.kill_signal = Signal(sig);
                }
                if kind == UnitType::BackgroundScripted {
                    spec.exec_stop = Some(Command::new(["/etc/rc.d/x", "stop"]));
                }
                if kind == UnitType::BackgroundPidfile {
                    spec.extras.pidfile = Some("/run/x.pid".into());
                }
                Case {
                    spec,
                    flow_lists: forms.0,
                    command_as_list: forms.1,
                }
            },
        )
}

/// A YAML double-quoted string.
fn quoted(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A shell single-quoted word.
fn shell_quoted(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

fn render(c: &Case) -> String {
    let s = &c.spec;
    let mut y = format!("unit: {}\ntype: {}\n", quoted(&s.name), s.kind.as_str());
    let list = |key: &str, v: &[String], y: &mut String| {
        if v.is_empty() {
            return;
        }
        if c.flow_lists {
            let v: Vec<String> = v.iter().map(|n| quoted(n)).collect();
            y.push_str(&format!("{key}: [{}]\n", v.join(", ")));
        } else {
            y.push_str(&format!("{key}: {}\n", quoted(&v.join(" , "))));
        }
    };
    list("provides", &s.provides, &mut y);
    list("depends-on", &s.depends_on, &mut y);
    list("depends-ms", &s.depends_ms, &mut y);
    list("waits-for", &s.waits_for, &mut y);
    if let Some(cmd) = &s.exec_start {
        if c.command_as_list {
            let words: Vec<String> = cmd.argv.iter().map(quoted).collect();
            y.push_str(&format!("exec-start: [{}]\n", words.join(", ")));
        } else {
            let words: Vec<String> = cmd.argv.iter().map(shell_quoted).collect();
            y.push_str(&format!("exec-start: {}\n", quoted(&words.join(" "))));
        }
        y.push_str(&format!(
            "start-timeout: {}\n",
            format_duration(s.start_timeout)
        ));
        y.push_str(&format!(
            "stop-timeout: {}\n",
            format_duration(s.stop_timeout)
        ));
        y.push_str(&format!("restart: {}\n", s.restart.as_str()));
        y.push_str(&format!(
            "restart-delay: {}\n",
            format_duration(s.restart_delay)
        ));
        y.push_str(&format!(
            "restart-max-delay: {}\n",
            format_duration(s.restart_max_delay)
        ));
        y.push_str(&format!("kill-signal: {}\n", s.kill_signal.name()));
    }
    if let Some(stop) = &s.exec_stop {
        y.push_str(&format!("exec-stop: {}\n", stop.argv.join(" ")));
    }
    if let Some(p) = &s.extras.pidfile {
        y.push_str(&format!("pidfile: {}\n", p.display()));
    }
    y
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

    /// Any valid unit, written with flow lists or comma strings, with the
    /// command as words or as a shell-quoted string, reads back exactly.
    #[test]
    fn valid_units_read_back(c in case()) {
        let text = render(&c);
        let file = format!("{}.yaml", c.spec.name);
        let p = parse_yaml(&file, &text);
        prop_assert_eq!(&p.diagnostics, &vec![], "{}", text);
        prop_assert_eq!(p.spec.as_ref(), Some(&c.spec), "{}", text);
    }
}
