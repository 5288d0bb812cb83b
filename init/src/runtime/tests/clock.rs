//! The wall clock set while the init runs (`date -s`): a unit's `since`
//! is the time the clock showed when it changed, as systemd's unit
//! timestamps are (`runtime/wallclock.rs`).

use super::*;
use crate::sys::WallTime;
use flotilla_units::protocol::{rfc3339, Reply};

const ONE: &str = "unit: one\nexec-start: /bin/one\nrestart: no\n";
const TWO: &str = "unit: two\nexec-start: /bin/two\nrestart: no\n";
const DEFAULT: &str = "unit: default\ntype: virtual\ndepends-on: [one, two]\n";

fn since(h: &mut Harness, name: &str) -> String {
    let r = h.request(Request::Status {
        name: Some(name.to_string()),
    });
    match r.first() {
        Some(Reply::Unit(u)) => u.since.clone(),
        _ => panic!("{r:?}"),
    }
}

#[test]
fn a_change_after_the_clock_was_set_is_on_the_new_clock() {
    let sys = fake_with(&[("one", ONE), ("two", TWO), ("default", DEFAULT)]);
    let mut h = Harness::start(sys, "default");
    h.sys().advance(Duration::from_secs(5));
    h.exit("one", ExitStatus::Exited(3));
    h.turn_until("one failed", |h| h.state("one") == UnitState::Failed);
    let before = since(&mut h, "one");
    h.sys().advance(Duration::from_secs(1));
    let boot = h.sys().wall_now();
    // A day forward.
    let jumped = WallTime {
        secs: boot.secs + 86_400,
        nanos: 0,
    };
    h.sys().jump_wall(jumped);
    h.rt.on_wall_clock();
    h.sys().advance(Duration::from_secs(2));
    h.exit("two", ExitStatus::Exited(3));
    h.turn_until("two failed", |h| h.state("two") == UnitState::Failed);
    assert_eq!(
        since(&mut h, "one"),
        before,
        "a moment before the jump keeps its time"
    );
    assert_eq!(
        since(&mut h, "two"),
        rfc3339(jumped.secs + 2, 0),
        "a moment after it is on the new clock"
    );
    // Set back: what came before stays as it was.
    h.sys().advance(Duration::from_secs(1));
    h.sys().jump_wall(WallTime {
        secs: boot.secs - 86_400,
        nanos: 0,
    });
    h.rt.on_wall_clock();
    assert_eq!(since(&mut h, "two"), rfc3339(jumped.secs + 2, 0));
    assert_eq!(since(&mut h, "one"), before);
}
