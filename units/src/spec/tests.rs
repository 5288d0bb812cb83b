use super::*;

/// A spec with every field set, and one with none of the extras.
fn specs() -> (UnitSpec, UnitSpec) {
    let mut full = UnitSpec::new("web", UnitType::ForegroundSupervised);
    full.provides.push("http".into());
    full.depends_on = vec!["db".into()].into();
    full.depends_ms = vec!["net".into()].into();
    full.waits_for = vec!["log".into()].into();
    full.exec_start_pre = vec![Command::new(["/bin/true"])].into();
    full.exec_start = Some(Command::new(["/bin/web", "--port", "80"]));
    let mut stop = Command::new(["/bin/stop"]);
    stop.ignore_failure = true;
    full.exec_stop = Some(stop);
    full.extras.exec_stop_post = vec![Command::new(["/bin/post"])].into();
    full.extras.exec_reload = Some(Command::new(["/bin/kill", "-HUP", "$MAINPID"]));
    full.extras.ready_wait = Some(Duration::from_millis(1500));
    full.extras.ready_grep = Some("ready".into());
    full.extras.pidfile = Some("/run/web.pid".into());
    full.kill_signal = Signal(2);
    full.description = Some("Web".into());
    full.extras.user = Some("www".into());
    full.extras.group = Some("33".into());
    full.extras.working_directory = Some("/srv".into());
    full.extras.environment.insert("A".into(), "1".into());
    full.extras.environment_files = vec![("/etc/web.env".into(), true)];
    (full, UnitSpec::new("bare", UnitType::Oneshot))
}

#[test]
fn json_form_is_unchanged() {
    let (full, bare) = specs();
    assert_eq!(
        serde_json::to_string(&full).unwrap(),
        concat!(
            r#"{"name":"web","description":"Web","type":"foreground-supervised","provides":["web","http"],"#,
            r#""depends_on":["db"],"depends_ms":["net"],"waits_for":["log"],"exec_start_pre":[{"argv":["/bin/true"]}],"#,
            r#""exec_start":{"argv":["/bin/web","--port","80"]},"exec_stop":{"argv":["/bin/stop"],"ignore_failure":true},"#,
            r#""start_timeout":{"secs":90,"nanos":0},"stop_timeout":{"secs":10,"nanos":0},"restart":"on-failure","#,
            r#""restart_delay":{"secs":1,"nanos":0},"restart_max_delay":{"secs":60,"nanos":0},"kill_signal":2,"#,
            r#""user":"www","group":"33","working_directory":"/srv","environment":{"A":"1"},"#,
            r#""environment_files":[["/etc/web.env",true]],"#,
            r#""exec_stop_post":[{"argv":["/bin/post"]}],"exec_reload":{"argv":["/bin/kill","-HUP","$MAINPID"]},"#,
            r#""ready_wait":{"secs":1,"nanos":500000000},"ready_grep":"ready","pidfile":"/run/web.pid"}"#
        )
    );
    assert_eq!(
        serde_json::to_string(&bare).unwrap(),
        concat!(
            r#"{"name":"bare","type":"oneshot","provides":["bare"],"depends_on":[],"depends_ms":[],"#,
            r#""waits_for":[],"exec_start_pre":[],"exec_start":null,"exec_stop":null,"#,
            r#""start_timeout":{"secs":90,"nanos":0},"stop_timeout":{"secs":10,"nanos":0},"restart":"no","#,
            r#""restart_delay":{"secs":1,"nanos":0},"restart_max_delay":{"secs":60,"nanos":0},"kill_signal":15,"#,
            r#""user":null,"group":null,"working_directory":null,"environment":{},"environment_files":[],"#,
            r#""exec_stop_post":[],"exec_reload":null,"ready_wait":null,"ready_grep":null,"pidfile":null}"#
        )
    );
    for s in [full, bare] {
        let back: UnitSpec = serde_json::from_str(&serde_json::to_string(&s).unwrap()).unwrap();
        assert_eq!(back, s);
    }
}

/// The fields that moved into the extras came earlier in the JSON of an
/// older init (a re-exec snapshot, a client's transient unit): a spec in
/// that order reads the same.
#[test]
fn the_former_order_of_the_fields_reads_the_same() {
    let (full, _) = specs();
    let former = concat!(
        r#"{"name":"web","description":"Web","type":"foreground-supervised","provides":["web","http"],"#,
        r#""depends_on":["db"],"depends_ms":["net"],"waits_for":["log"],"exec_start_pre":[{"argv":["/bin/true"]}],"#,
        r#""exec_start":{"argv":["/bin/web","--port","80"]},"exec_stop":{"argv":["/bin/stop"],"ignore_failure":true},"#,
        r#""exec_stop_post":[{"argv":["/bin/post"]}],"exec_reload":{"argv":["/bin/kill","-HUP","$MAINPID"]},"#,
        r#""ready_wait":{"secs":1,"nanos":500000000},"ready_grep":"ready","pidfile":"/run/web.pid","#,
        r#""start_timeout":{"secs":90,"nanos":0},"stop_timeout":{"secs":10,"nanos":0},"restart":"on-failure","#,
        r#""restart_delay":{"secs":1,"nanos":0},"restart_max_delay":{"secs":60,"nanos":0},"kill_signal":2,"#,
        r#""user":"www","group":"33","working_directory":"/srv","environment":{"A":"1"},"#,
        r#""environment_files":[["/etc/web.env",true]]}"#
    );
    assert_eq!(serde_json::from_str::<UnitSpec>(former).unwrap(), full);
}

#[test]
fn extras_are_boxed_only_when_set() {
    let (full, bare) = specs();
    assert!(full.extras.0.is_some() && bare.extras.0.is_none());
    let back: UnitSpec = serde_json::from_str(&serde_json::to_string(&bare).unwrap()).unwrap();
    assert!(back.extras.0.is_none());
    // A box of unset fields equals no box.
    let mut touched = bare.clone();
    touched.extras.user = None;
    assert!(touched.extras.0.is_some());
    assert_eq!(touched, bare);
    let err = serde_json::from_str::<UnitSpec>(r#"{"name":1}"#).unwrap_err();
    assert!(err.to_string().contains("invalid type"), "{err}");
}

/// systemd's `Restart=` table (`service_shall_restart()`), every row.
#[test]
fn restart_policies_follow_systemds_table() {
    use crate::state::FailureKind as F;
    use RestartPolicy as R;
    let rows: [(Option<F>, &[R]); 8] = [
        (None, &[R::Always, R::OnSuccess]),
        (Some(F::ExitCode), &[R::Always, R::OnFailure]),
        (
            Some(F::Signal),
            &[R::Always, R::OnFailure, R::OnAbnormal, R::OnAbort],
        ),
        (Some(F::Timeout), &[R::Always, R::OnFailure, R::OnAbnormal]),
        (
            Some(F::Watchdog),
            &[R::Always, R::OnFailure, R::OnAbnormal, R::OnWatchdog],
        ),
        (
            Some(F::Resources),
            &[R::Always, R::OnFailure, R::OnAbnormal],
        ),
        (Some(F::OomKill), &[R::Always, R::OnFailure, R::OnAbnormal]),
        (Some(F::ExecCondition), &[]),
    ];
    for (end, restarting) in rows {
        for p in R::ALL {
            assert_eq!(
                p.restarts_after(end),
                restarting.contains(&p),
                "Restart={} after {end:?}",
                p.as_str()
            );
        }
    }
}
