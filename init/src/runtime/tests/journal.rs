//! The manager's own messages about each unit in the journal, where the
//! init runs journald (its `systemd-journald.socket` listens): systemd's
//! words, message IDs and `UNIT=` field, one datagram each to journald's
//! native socket (`flotilla_units::unit_messages`).

use super::*;

const JOURNALD_SOCKET: &str = "unit: systemd-journald.socket\ntype: socket\n\
     triggers: [systemd-journald]\nlisten-datagram: /run/systemd/journal/socket\n";
const JOURNALD: &str = "unit: systemd-journald\nexec-start: /bin/journald\n";
/// After journald's socket, as every unit of a booting system is.
const DB: &str = "unit: db\nexec-start: /bin/db\ndescription: The database\n\
     depends-on: systemd-journald.socket\n";
const DEFAULT: &str = "unit: default\ntype: virtual\ndepends-on: db\n";

/// `MESSAGE=` of each datagram sent about `unit`.
fn messages_of(sys: &FakeSys, unit: &str) -> Vec<String> {
    let field = format!("\nUNIT={unit}\n");
    sys.journal_messages()
        .iter()
        .filter(|m| m.contains(&field))
        .filter_map(|m| {
            m.lines()
                .next()?
                .strip_prefix("MESSAGE=")
                .map(str::to_string)
        })
        .collect()
}

#[test]
fn a_units_start_failure_and_stop_are_in_the_journal_as_systemd_writes_them() {
    let sys = fake_with(&[
        ("systemd-journald.socket", JOURNALD_SOCKET),
        ("systemd-journald", JOURNALD),
        ("db", DB),
        ("default", DEFAULT),
    ]);
    let mut h = Harness::start(sys, "default");
    h.turn_until("db runs", |h| h.state("db") == UnitState::Running);
    assert_eq!(
        messages_of(h.sys(), "db"),
        [
            "Starting db - The database...",
            "Started db - The database."
        ]
    );
    let started = h
        .sys()
        .journal_messages()
        .into_iter()
        .find(|m| m.starts_with("MESSAGE=Started db - The database."))
        .unwrap_or_default();
    for field in [
        "MESSAGE_ID=39f53479d3a045ac8e11786248231fbf",
        "PRIORITY=6",
        "SYSLOG_IDENTIFIER=systemd",
        "UNIT=db",
        "JOB_TYPE=start",
        "JOB_RESULT=done",
    ] {
        assert!(started.lines().any(|l| l == field), "{field}: {started}");
    }

    h.exit("db", ExitStatus::Exited(3));
    h.turn_until("db failed", |h| h.state("db") == UnitState::Failed);
    assert_eq!(
        messages_of(h.sys(), "db")[2..],
        ["db: Failed with result 'exit-code'."]
    );
}

/// systemd's test 04 (`silent-success.service`, `LogLevelMax=notice`):
/// `journalctl -u` of the unit is empty after its start, and a failure,
/// a warning, is still there.
#[test]
fn the_units_log_level_max_leaves_out_the_managers_messages_below_it() {
    let db = format!("{DB}log-level-max: notice\n");
    let sys = fake_with(&[
        ("systemd-journald.socket", JOURNALD_SOCKET),
        ("systemd-journald", JOURNALD),
        ("db", &db),
        ("default", DEFAULT),
    ]);
    let mut h = Harness::start(sys, "default");
    h.turn_until("db runs", |h| h.state("db") == UnitState::Running);
    assert!(messages_of(h.sys(), "db").is_empty());
    h.exit("db", ExitStatus::Exited(3));
    h.turn_until("db failed", |h| h.state("db") == UnitState::Failed);
    assert_eq!(
        messages_of(h.sys(), "db"),
        ["db: Failed with result 'exit-code'."]
    );
}

#[test]
fn nothing_is_sent_where_the_init_runs_no_journald() {
    let sys = fake_with(&[
        ("db", "unit: db\nexec-start: /bin/db\n"),
        ("default", DEFAULT),
    ]);
    let mut h = Harness::start(sys, "default");
    h.turn_until("db runs", |h| h.state("db") == UnitState::Running);
    assert!(h.sys().journal_messages().is_empty());
}

/// The manager's `NUMAPolicy=` (`runtime/mem_policy.rs`): set at boot and
/// at each reload; one the kernel would refuse is a warning of the
/// manager's own, about `init.scope` (where `journalctl -u init.scope`
/// finds systemd's, with its `Reloading.`), and the init goes on.
#[test]
fn the_managers_memory_policy_is_set_at_boot_and_at_each_reload() {
    use flotilla_units::context::placement::{InvalidPolicy, MemRequest};
    let sys = fake_with(&[
        ("systemd-journald.socket", JOURNALD_SOCKET),
        ("systemd-journald", JOURNALD),
        ("db", DB),
        ("default", DEFAULT),
    ]);
    let conf = "/etc/systemd/system.conf";
    sys.set_file(conf, "[Manager]\nNUMAPolicy=bind\nNUMAMask=0\n");
    let mut s = settings("default");
    s.system_conf = Some("/".into());
    let rt = Runtime::new(sys, s, false).unwrap_or_else(|e| panic!("{e}"));
    let mut h = Harness { rt };
    h.settle();
    h.turn_until("db runs", |h| h.state("db") == UnitState::Running);
    let policies = |h: &Harness| -> Vec<Result<MemRequest, InvalidPolicy>> {
        h.sys()
            .take_calls()
            .into_iter()
            .filter_map(|c| match c {
                Call::SetMempolicy(r) => Some(r),
                _ => None,
            })
            .collect()
    };
    let bind = MemRequest {
        mode: 2,
        nodes: Some(vec![1]),
    };
    assert_eq!(policies(&h), [Ok(bind)]);

    h.sys().set_file(conf, "[Manager]\nNUMAPolicy=interleave\n");
    let r = h.request(Request::Reload {
        keep_running: false,
    });
    assert!(matches!(r.last(), Some(Reply::Applied(_))), "{r:?}");
    assert_eq!(policies(&h), [Err(InvalidPolicy)]);
    let text = "Failed to set NUMA memory policy, ignoring: Invalid argument";
    let warning = h
        .sys()
        .journal_messages()
        .into_iter()
        .find(|m| m.starts_with(&format!("MESSAGE={text}\n")))
        .unwrap_or_else(|| panic!("no warning in {:?}", h.sys().journal_messages()));
    assert!(
        warning.contains("\nPRIORITY=4\n") && warning.contains("\nUNIT=init.scope\n"),
        "{warning}"
    );
    assert!(h.sys().console_lines().iter().any(|l| l.ends_with(text)));
    // The reload itself, as systemd's PID 1 tells it.
    let own = messages_of(h.sys(), "init.scope");
    assert_eq!(
        own.first().map(String::as_str),
        Some("Reloading."),
        "{own:?}"
    );
    assert!(
        own.last()
            .is_some_and(|m| m.starts_with("Reloading finished in ") && m.ends_with(" ms.")),
        "{own:?}"
    );

    // Without either key, the policy the init has stays.
    h.sys().set_file(conf, "[Manager]\n");
    h.request(Request::Reload {
        keep_running: false,
    });
    assert_eq!(policies(&h), []);
}

/// `LogNamespace=` (systemd's TEST-44): the unit's output is connected
/// to its namespace's stdout socket once `systemd-journald@NAME.socket`
/// listens, another unit's still to the system journal's; a unit whose
/// namespace's socket is not running keeps its output on its log.
#[test]
fn a_log_namespace_connects_the_output_to_its_own_journald() {
    let ns_socket = "unit: systemd-journald@foobar.socket\ntype: socket\n\
         triggers: [systemd-journald@foobar]\n\
         listen-stream: /run/systemd/journal.foobar/stdout\n";
    let ns_journald = "unit: systemd-journald@foobar\nexec-start: /bin/journald foobar\n";
    let out = "standard-output: journal\n";
    let echo = format!(
        "unit: echo\nexec-start: /bin/echo hi\nlog-namespace: foobar\n{out}\
         depends-on: systemd-journald@foobar.socket, systemd-journald.socket\n"
    );
    let plain = format!("unit: plain\nexec-start: /bin/plain\n{out}depends-on: echo\n");
    let orphan = format!("unit: orphan\nexec-start: /bin/orphan\nlog-namespace: other\n{out}");
    let sys = fake_with(&[
        ("systemd-journald.socket", JOURNALD_SOCKET),
        ("systemd-journald", JOURNALD),
        ("systemd-journald@foobar.socket", ns_socket),
        ("systemd-journald@foobar", ns_journald),
        ("echo", &echo),
        ("plain", &plain),
        ("orphan", &orphan),
        (
            "default",
            "unit: default\ntype: virtual\ndepends-on: plain, orphan\n",
        ),
    ]);
    let mut h = Harness::start(sys, "default");
    h.turn_until("plain runs", |h| h.state("plain") == UnitState::Running);
    let journal_of = |argv0: &str| {
        h.sys()
            .spawns()
            .into_iter()
            .find(|s| s.argv.first().map(String::as_str) == Some(argv0))
            .unwrap_or_else(|| panic!("{argv0} not spawned"))
            .journal
    };
    assert_eq!(
        journal_of("/bin/echo"),
        Some("/run/systemd/journal.foobar/stdout".into())
    );
    assert_eq!(
        journal_of("/bin/plain"),
        Some("/run/systemd/journal/stdout".into())
    );
    assert_eq!(journal_of("/bin/orphan"), None);
}
