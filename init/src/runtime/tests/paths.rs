//! Path units through the loop: the unit's paths are watched when it
//! starts (an inotify instance, a watch per directory); a file made in a
//! watched directory that makes `path-exists` hold fires it, and its job
//! runs; the job removed the file: once it settled the unit waits again.

use super::*;
use std::path::Path;

const PATH: &str = "unit: in.path\ntype: path\ntriggers: [job]\npath-exists: /srv/in/flag\n";
const JOB: &str = "unit: job\ntype: oneshot\nexec-start: /bin/job\n";

fn job_runs(calls: &[Call]) -> usize {
    calls
        .iter()
        .filter(|c| matches!(c, Call::Spawn(s) if s.argv == ["/bin/job"]))
        .count()
}

#[test]
fn a_path_that_appears_fires_the_job_and_the_unit_waits_again() {
    let sys = fake_with(&[("in.path", PATH), ("job", JOB)]);
    sys.add_dir("/srv/in");
    let mut h = Harness::start(sys, "in.path");
    assert_eq!(h.state("in.path"), UnitState::Running);
    let calls = h.sys().calls();
    assert!(calls.contains(&Call::PathWatch("/srv/in".into())));
    assert!(calls.contains(&Call::PathWatch("/".into())));
    assert_eq!(job_runs(&calls), 0);

    h.sys().create_watched(Path::new("/srv/in/flag"));
    h.turn_until("the job runs", |h| job_runs(&h.sys().calls()) == 1);
    // The job takes the flag away and exits: settled, the unit waits.
    h.sys().remove_file(Path::new("/srv/in/flag"));
    h.exit("job", ExitStatus::Exited(0));
    h.turn_until("the job settled", |h| h.state("job") == UnitState::Disabled);
    assert_eq!(h.state("in.path"), UnitState::Running);
    h.sys().create_watched(Path::new("/srv/in/flag"));
    h.turn_until("the job runs again", |h| job_runs(&h.sys().calls()) == 2);
}
