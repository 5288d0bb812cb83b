//! A socket unit's commands (systemd.socket(5)'s `ExecStartPre=`,
//! `ExecStartPost=`, `ExecStopPost=`): the pre commands before its
//! sockets are bound, the post commands once they are, the stop-post
//! commands after they are closed; systemd's test 33's
//! `test-service.socket` makes its directories so.

use super::super::facts::{Action, Fact, Role};
use super::super::record::Phase;
use super::super::{Planner, PlannerOptions};
use crate::exits::ExitStatus;
use crate::graph::{Graph, UnitId};
use crate::spec::{Command, Origin, UnitSpec, UnitType};
use crate::state::UnitState;
use crate::time::Instant;

const SOCK: UnitId = UnitId(0);
const OK: ExitStatus = ExitStatus::Code(0);

fn planner() -> Planner {
    let mut sock = UnitSpec::new("sock", UnitType::Socket);
    sock.extras.activation = crate::trigger::Activation::of_type(UnitType::Socket).map(Box::new);
    sock.extras.triggers = thin_vec::thin_vec!["web".to_string()];
    sock.exec_start_pre = vec![Command::new(["/bin/true"])].into();
    sock.extras.exec_start_post = vec![Command::new(["/bin/post"])].into();
    sock.extras.exec_stop_post = vec![Command::new(["/bin/stop-post"])].into();
    let mut web = UnitSpec::new("web", UnitType::ForegroundSupervised);
    web.exec_start = Some(Command::new(["/bin/web"]));
    let (g, d) = Graph::build(
        [sock, web]
            .into_iter()
            .map(|s| {
                let o = Origin::unplaced(format!("{}.yaml", s.name));
                (s, o)
            })
            .collect(),
    );
    assert!(d.iter().all(|d| !d.is_error()), "{d:?}");
    Planner::new(g, "sock", Instant(0), PlannerOptions::default())
}

/// What the planner asked for: `spawn ROLE`, `arm`, `disarm`.
fn asked(p: &mut Planner) -> Vec<String> {
    p.take_actions()
        .iter()
        .filter_map(|a| match a {
            Action::Spawn { role, .. } => Some(format!("spawn {role:?}")),
            Action::Arm { .. } => Some("arm".into()),
            Action::Disarm { .. } => Some("disarm".into()),
            _ => None,
        })
        .collect()
}

/// Runs the command of `role` the planner asked for, as PID `pid`, to a
/// clean exit.
fn run(p: &mut Planner, role: Role, pid: i32, at: u64) {
    p.fact(
        Fact::Spawned {
            unit: SOCK,
            role,
            pid,
        },
        Instant(at),
    );
    p.fact(Fact::Exited { pid, status: OK }, Instant(at));
}

#[test]
fn a_sockets_commands_run_around_its_listening() {
    let mut p = planner();
    assert_eq!(asked(&mut p), ["spawn Pre(0)"]);
    assert_eq!(p.state(SOCK), UnitState::Starting);
    run(&mut p, Role::Pre(0), 10, 1);
    assert_eq!(asked(&mut p), ["arm"], "bound once the pre command is done");
    p.fact(
        Fact::Armed {
            unit: SOCK,
            result: Ok(()),
        },
        Instant(2),
    );
    assert_eq!(asked(&mut p), ["spawn Post(0)"]);
    assert_eq!(p.state(SOCK), UnitState::Starting);
    run(&mut p, Role::Post(0), 11, 3);
    assert_eq!(p.state(SOCK), UnitState::Running);
    assert_eq!(p.units[0].phase, Phase::Up);

    // Stopped: closed, then the stop-post command, then disabled.
    p.set_target("web", Instant(4)).unwrap();
    let a = asked(&mut p);
    let at = |w: &str| a.iter().position(|x| x == w);
    assert!(at("disarm") < at("spawn StopPost(0)"), "{a:?}");
    assert!(at("disarm").is_some(), "{a:?}");
    assert_eq!(p.state(SOCK), UnitState::Stopping);
    run(&mut p, Role::StopPost(0), 12, 5);
    assert_eq!(p.units[0].phase, Phase::Idle);
    assert_eq!(p.state(SOCK), UnitState::Disabled);
}

#[test]
fn a_failed_pre_command_fails_the_socket_unbound() {
    let mut p = planner();
    assert_eq!(asked(&mut p), ["spawn Pre(0)"]);
    p.fact(
        Fact::Spawned {
            unit: SOCK,
            role: Role::Pre(0),
            pid: 10,
        },
        Instant(1),
    );
    p.fact(
        Fact::Exited {
            pid: 10,
            status: ExitStatus::Code(1),
        },
        Instant(1),
    );
    let a = asked(&mut p);
    assert!(!a.contains(&"arm".to_string()), "{a:?}");
    // Its stop-post command runs, as after any failed start.
    assert_eq!(a, ["spawn StopPost(0)"]);
    run(&mut p, Role::StopPost(0), 11, 2);
    assert_eq!(p.state(SOCK), UnitState::Failed);
}
