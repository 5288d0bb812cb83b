//! The snapshot's encoding: every snapshot comes back as it went
//! (property), and what a reader refuses.

use super::*;
use crate::spec::{Command, UnitType};
use proptest::prelude::*;

fn arb_state() -> impl Strategy<Value = UnitState> {
    prop_oneof![
        Just(UnitState::Disabled),
        Just(UnitState::Waiting),
        Just(UnitState::Starting),
        Just(UnitState::Running),
        Just(UnitState::Reloading),
        Just(UnitState::Exited),
        Just(UnitState::Stopping),
        Just(UnitState::Failed),
    ]
}

fn arb_phase() -> impl Strategy<Value = PhaseCarry> {
    prop_oneof![
        Just(PhaseCarry::Idle),
        any::<u16>().prop_map(PhaseCarry::Pre),
        Just(PhaseCarry::Main),
        Just(PhaseCarry::Up),
        Just(PhaseCarry::Reloading),
        Just(PhaseCarry::Stopping),
        any::<u16>().prop_map(PhaseCarry::StopPost),
    ]
}

fn arb_role() -> impl Strategy<Value = RoleCarry> {
    prop_oneof![
        any::<u16>().prop_map(RoleCarry::Pre),
        Just(RoleCarry::Main),
        any::<u16>().prop_map(RoleCarry::Then),
        Just(RoleCarry::Stop),
        any::<u16>().prop_map(RoleCarry::StopPost),
        Just(RoleCarry::Reload),
    ]
}

fn arb_timer() -> impl Strategy<Value = TimerCarry> {
    let kind = prop_oneof![
        Just(TimerKind::Start),
        Just(TimerKind::ReadyWait),
        Just(TimerKind::Reload),
        Just(TimerKind::Stop),
        Just(TimerKind::Abandon),
        Just(TimerKind::Restart),
        Just(TimerKind::Pidfile),
        Just(TimerKind::Watchdog),
    ];
    (any::<u64>(), kind).prop_map(|(remaining_ns, kind)| TimerCarry { remaining_ns, kind })
}

fn spec(name: &str, argv: &str) -> UnitSpec {
    let mut u = UnitSpec::new(name, UnitType::ForegroundSupervised);
    u.exec_start = Some(Command::new([argv]));
    u
}

prop_compose! {
    fn arb_unit()(
        name in "[a-z][a-z0-9.@-]{0,12}",
        phase in arb_phase(),
        state in arb_state(),
        since in any::<u64>(),
        main_pid in proptest::option::of(1..i32::MAX),
        helper in proptest::option::of((arb_role(), proptest::option::of(1..i32::MAX))),
        timer in proptest::option::of(arb_timer()),
        flags in any::<[bool; 6]>(),
        counts in any::<(u32, u32, u32)>(),
        texts in ("\\PC{0,20}", proptest::option::of("\\PC{0,20}"), proptest::option::of("\\PC{0,20}")),
        times in any::<(Option<u64>, Option<u64>, Option<u64>, Option<u64>)>(),
        groups in any::<(Option<i32>, Option<i32>)>(),
        argv in proptest::option::of("/[a-z/]{1,10}"),
        triggered_by in proptest::option::of("[a-z]{1,8}\\.timer"),
        skipped in any::<bool>(),
    ) -> UnitCarry {
        UnitCarry {
            running_spec: argv.map(|a| spec(&name, &a)),
            name,
            phase,
            state,
            since,
            main_pid,
            helper,
            timer,
            restart_due: flags[0],
            restart_ready: flags[1],
            restart_requested: flags[2],
            spec_changed: flags[3],
            exit_ok: flags[4],
            self_stop: flags[5],
            attempt: counts.0,
            restarts: counts.1,
            pidfile_tries: counts.2,
            status: texts.0,
            notify_status: texts.1,
            failure: texts.2,
            failure_kind: None,
            failure_exit: None,
            blocked_by: None,
            start_at: times.0,
            active_at: times.1,
            end_at: times.2,
            pidfile_deadline: times.3,
            dead_leader: groups.0,
            script_group: groups.1,
            triggered_by,
            skipped,
        }
    }
}

prop_compose! {
    fn arb_line()(seq in any::<u64>(), time in any::<(i64, u32)>(), stderr in any::<bool>(),
                  text in "\\PC{0,40}", cut in any::<bool>()) -> LineCarry {
        LineCarry { seq, time, stderr, text, cut }
    }
}

prop_compose! {
    fn arb_io()(
        unit in "[a-z]{1,8}",
        reported in arb_state(),
        pipes in proptest::collection::vec((0..4096i32, any::<bool>()), 0..3),
        notify in proptest::option::of((0..4096i32, "/[a-z/]{1,20}", any::<u64>(), any::<u64>())),
        log in (any::<u32>(), any::<u64>(), any::<u64>(), proptest::collection::vec(arb_line(), 0..5)),
        had_run in any::<bool>(),
        listening in proptest::collection::vec(0..4096i32, 0..3),
        connections in proptest::collection::vec(("[a-z@0-9.-]{1,12}", 0..4096i32), 0..3),
        accepted in any::<u64>(),
        adopted in proptest::option::of(proptest::collection::vec((2..1_000_000i32, 3..4096i32), 0..3)),
        stored in proptest::collection::vec((3..4096i32, "[a-z:-]{0,8}", any::<bool>()), 0..3),
    ) -> IoCarry {
        IoCarry {
            unit,
            reported,
            pipes,
            notify: notify.map(|(fd, path, dev, ino)| NotifyCarry { fd, path, dev, ino }),
            log: Some(LogCarry { id: log.0, next_seq: log.1, persisted: log.2, lines: log.3 }),
            had_run,
            listening,
            connections,
            accepted,
            adopted,
            stored: stored
                .into_iter()
                .map(|(fd, name, poll)| StoredCarry { fd, name, poll })
                .collect(),
        }
    }
}

prop_compose! {
    fn arb_snapshot()(
        target in "[a-z]{1,10}",
        dir in proptest::collection::vec(("[a-z]{1,8}", "/[a-z]{1,8}"), 0..4),
        transient in proptest::collection::btree_map("[a-z]{1,6}", proptest::collection::vec(("[a-z]{1,8}", "/[a-z]{1,8}"), 1..3), 0..3),
        wants in proptest::collection::vec(("[a-z]{1,8}", any::<bool>()), 0..3),
        units in proptest::collection::vec(arb_unit(), 0..6),
        io in proptest::collection::vec(arb_io(), 0..4),
        control in (0..4096i32, any::<u64>(), any::<u64>(), proptest::option::of(0..4096i32)),
        clocks in any::<(u64, i64, u32, u64, u32)>(),
        log_instance in "[0-9.-]{1,30}",
        pending_scopes in proptest::collection::vec(("[a-z]{1,8}", proptest::collection::vec(2..1_000_000i32, 1..3)), 0..2),
        manager in (
            proptest::collection::vec("org\\.[a-z]{1,8}", 0..3),
            proptest::collection::vec("[A-Z_]{1,6}=[a-z/:]{0,8}", 0..3),
            any::<bool>(),
        ),
        wall_sets in proptest::collection::vec(any::<(u64, (i64, u32))>(), 0..3),
    ) -> Snapshot {
        Snapshot {
            magic: MAGIC.to_string(),
            version: VERSION,
            target,
            dir_units: dir
                .iter()
                .map(|(n, a)| (spec(n, a), Origin::unplaced(format!("/etc/units/{n}.yaml"))))
                .collect(),
            load_errors: Vec::new(),
            transient: transient
                .into_iter()
                .map(|(set, us)| (set, us.iter().map(|(n, a)| spec(n, a)).collect()))
                .collect(),
            leases: BTreeMap::new(),
            wants: wants.into_iter().map(|(unit, kept)| WantCarry { unit, kept }).collect(),
            held: Vec::new(),
            units,
            io,
            control: ControlCarry {
                listener: control.0,
                dev: control.1,
                ino: control.2,
                requester: control.3,
            },
            mono0: clocks.0,
            wall0: (clocks.1, clocks.2),
            wall_sets,
            notify_seq: clocks.3,
            log_instance,
            next_log_id: clocks.4,
            pending_scopes: pending_scopes
                .into_iter()
                .map(|(n, pids)| (format!("{n}.scope"), pids))
                .collect(),
            log: Default::default(),
            bus_names: manager.0,
            manager_env: {
                let mut e = crate::manager_env::ManagerEnv::default();
                let _ = e.modify(&[], &manager.1);
                e
            },
            service_watchdogs: manager.2,
        }
    }
}

proptest! {
    #[test]
    fn every_snapshot_comes_back_as_it_went(s in arb_snapshot()) {
        prop_assert_eq!(decode(&encode(&s)), Ok(s));
    }

    #[test]
    fn no_bytes_make_the_reader_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        let _ = decode(&bytes);
    }
}

fn minimal() -> Snapshot {
    Snapshot {
        magic: MAGIC.to_string(),
        version: VERSION,
        target: "default".into(),
        dir_units: Vec::new(),
        load_errors: Vec::new(),
        transient: BTreeMap::new(),
        leases: BTreeMap::new(),
        wants: Vec::new(),
        held: Vec::new(),
        units: vec![UnitCarry::idle("a")],
        io: Vec::new(),
        control: ControlCarry {
            listener: 3,
            dev: 1,
            ino: 2,
            requester: None,
        },
        mono0: 0,
        wall0: (0, 0),
        wall_sets: Vec::new(),
        notify_seq: 0,
        log_instance: "x".into(),
        next_log_id: 0,
        pending_scopes: Vec::new(),
        log: Default::default(),
        bus_names: Vec::new(),
        manager_env: Default::default(),
        service_watchdogs: true,
    }
}

#[test]
fn another_version_is_refused_before_the_rest_is_read() {
    let mut v: serde_json::Value = serde_json::from_slice(&encode(&minimal())).unwrap();
    v["version"] = serde_json::json!(VERSION + 1);
    // A later version may change any field: only the header is read.
    v["units"] = serde_json::json!("something else");
    let bytes = serde_json::to_vec(&v).unwrap();
    assert_eq!(
        decode(&bytes),
        Err(SnapshotError::Version {
            found: VERSION + 1,
            supported: VERSION
        })
    );
    assert_eq!(
        decode(&bytes).unwrap_err().to_string(),
        format!(
            "re-exec snapshot version {}, this init reads version {VERSION}",
            VERSION + 1
        )
    );
}

#[test]
fn what_is_not_a_snapshot_is_said_so() {
    assert!(matches!(
        decode(b"garbage"),
        Err(SnapshotError::NotASnapshot(_))
    ));
    assert!(matches!(
        decode(br#"{"magic":"other","version":1}"#),
        Err(SnapshotError::NotASnapshot(m)) if m == "magic `other`"
    ));
    let mut v: serde_json::Value = serde_json::from_slice(&encode(&minimal())).unwrap();
    v["units"] = serde_json::json!(7);
    assert!(matches!(
        decode(&serde_json::to_vec(&v).unwrap()),
        Err(SnapshotError::Malformed(_))
    ));
}

#[test]
fn a_record_names_all_its_processes() {
    let mut u = UnitCarry::idle("a");
    u.main_pid = Some(10);
    u.helper = Some((RoleCarry::Stop, Some(11)));
    u.dead_leader = Some(12);
    assert_eq!(u.pids().collect::<Vec<_>>(), [10, 11, 12]);
}
