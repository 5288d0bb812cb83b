//! System tests of the persistent logs (issue 17): the real `init`, the
//! real log writer `flotilla-logd` as a unit of it, and `initctl`.
//!
//! A unit's log survives: lines written before the writer starts, while it
//! is stopped (SIGSTOP) or killed (SIGKILL), and across rotations during
//! `initctl logs -f`, all end up in the files in order, each once; with the
//! writer stopped for longer than the ring holds, the file counts the lines
//! that were not persisted. A full or read-only log directory stops
//! neither the init nor the units, and `initctl status` says why the writer
//! cannot write; a log directory whose disk hangs (FUSE, `scripts/slowfs`)
//! stalls only the writer. A unit's own output rate limit drops and counts
//! what is past it.
//!
//! The units print what the test writes into a FIFO (`cat`), so each line
//! is written when the test says, not on a timer.

use flotilla_tests::init::{log_file_lines_in, Init, TestDir};
use flotilla_tests::{procs, wait_for, WAIT};
use flotilla_units::protocol::LogWriterStatus;
use flotilla_units::state::UnitState;
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.to_string_lossy().as_bytes()).unwrap();
    // SAFETY: mkfifo(3) on a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
}

/// A unit that prints what the test writes into `NAME.in`, a FIFO.
fn fifo_talker(dir: &TestDir, name: &str) -> PathBuf {
    fifo_talker_with(dir, name, "")
}

/// The same, with more keys.
fn fifo_talker_with(dir: &TestDir, name: &str, extra: &str) -> PathBuf {
    let fifo = dir.join(&format!("{name}.in"));
    mkfifo(&fifo);
    dir.unit(
        name,
        &format!(
            "unit: {name}\nexec-start: [sh, -c, 'while :; do cat {}; done']\n{extra}",
            fifo.display()
        ),
    );
    fifo
}

/// The test's end of a talker's FIFO (opened once the unit reads it).
fn mouth(fifo: &PathBuf) -> File {
    std::fs::OpenOptions::new()
        .write(true)
        .open(fifo)
        .expect("open the FIFO")
}

fn say(w: &mut File, from: u32, to: u32) {
    let mut text = String::new();
    for i in from..=to {
        text.push_str(&format!("line {i} {}\n", "x".repeat(40)));
    }
    w.write_all(text.as_bytes()).expect("write the FIFO");
}

/// The `talker` of [`fifo_talker`], the log writer with `flags`, and a
/// `default` target of the talker that waits for the writer; the FIFO.
fn talker_and_writer(dir: &TestDir, flags: &str) -> PathBuf {
    let fifo = fifo_talker(dir, "talker");
    dir.log_writer(flags);
    virtual_unit(
        dir,
        "default",
        "depends-on: talker\nwaits-for: log-writer\n",
    );
    fifo
}

/// The init of [`talker_and_writer`]'s units, once both run.
fn started(dir: &TestDir) -> Init {
    let init = dir.start("default");
    init.wait_all(&["talker", "flotilla-logd"], UnitState::Running);
    init
}

/// Stops the log writer (SIGSTOP); its PID.
fn stop_writer(init: &Init) -> i32 {
    let writer = init.pid_of("flotilla-logd");
    procs::signal(writer, libc::SIGSTOP);
    writer
}

fn virtual_unit(dir: &TestDir, name: &str, extra: &str) {
    dir.unit(name, &format!("unit: {name}\ntype: virtual\n{extra}"));
}

/// The numbers of the `line N` lines of a unit's files, in file order.
fn file_numbers(dir: &TestDir, unit: &str) -> Vec<u32> {
    numbers_in(&dir.logs(), unit)
}

/// The same, of the files in the directory `logs`.
fn numbers_in(logs: &Path, unit: &str) -> Vec<u32> {
    log_file_lines_in(logs, unit)
        .into_iter()
        .filter_map(|(_, t)| line_number(&t))
        .collect()
}

/// `N` of a `line N …` line.
fn line_number(text: &str) -> Option<u32> {
    text.strip_prefix("line ")?.split(' ').next()?.parse().ok()
}

/// Waits until the unit's files have `line N`.
fn wait_in_files(dir: &TestDir, unit: &str, n: u32) {
    wait_for(WAIT, &format!("line {n} of {unit} in the files"), || {
        file_numbers(dir, unit).contains(&n).then_some(())
    });
}

/// Waits until the init has read `line N` (it is in memory).
fn wait_read(init: &Init, unit: &str, n: u32) {
    wait_for(
        WAIT,
        &format!("line {n} of {unit} read by the init"),
        || {
            let out = init.ctl(&["logs", unit, "-n", "1"]);
            out.stdout.starts_with(&format!("line {n} ")).then_some(())
        },
    );
}

/// Every numbered line of the unit's current stream is in its files once,
/// in order, or counted by a `not persisted` line; returns how many were
/// counted so.
fn assert_complete(dir: &TestDir, unit: &str) -> u64 {
    let lines = dir.log_file_lines(unit);
    let start = lines
        .iter()
        .rposition(|(_, t)| t.starts_with("-- log "))
        .expect("a header");
    let mut next = 1;
    let mut lost = 0;
    for (seq, text) in &lines[start + 1..] {
        if let Some(n) = text
            .strip_prefix("-- ")
            .and_then(|t| t.strip_suffix(" lines not persisted --"))
        {
            let n: u64 = n.parse().unwrap();
            assert_eq!(seq + 1 - n, next, "the count follows the last line: {text}");
            lost += n;
        } else {
            assert_eq!(*seq, next, "line {text:?} out of place");
        }
        next = seq + 1;
    }
    lost
}

fn writer_status(init: &Init) -> LogWriterStatus {
    init.status().log_writer.expect("a log directory")
}

/// Lines printed before the writer runs wait in the init's memory and
/// reach the files once it does, in order, each once.
#[test]
fn lines_from_before_the_writer_starts_reach_the_files() {
    let dir = TestDir::new();
    let fifo = talker_and_writer(&dir, "");
    virtual_unit(&dir, "early", "depends-on: talker\n");
    let init = dir.start("early");
    init.wait_state("talker", UnitState::Running);
    let mut w = mouth(&fifo);
    say(&mut w, 1, 100);
    wait_read(&init, "talker", 100);
    let st = writer_status(&init);
    assert!(!st.connected);
    assert!(st.waiting >= 100, "{st:?}");
    assert!(!dir.logs().join("talker.log").exists());
    let out = init.ctl(&["status"]).stdout;
    assert!(out.contains("no log writer connected"), "{out}");
    init.ctl(&["set-target", "default", "--wait"]).expect(0);
    wait_in_files(&dir, "talker", 100);
    assert_eq!(file_numbers(&dir, "talker"), (1..=100).collect::<Vec<_>>());
    assert_eq!(assert_complete(&dir, "talker"), 0);
    let st = writer_status(&init);
    assert!(
        st.connected && st.unit.as_deref() == Some("flotilla-logd"),
        "{st:?}"
    );
}

/// A writer stopped (SIGSTOP) or killed (SIGKILL) loses nothing and writes
/// nothing twice; the init keeps answering meanwhile.
#[test]
fn a_stopped_or_killed_writer_loses_nothing() {
    let dir = TestDir::new();
    let fifo = talker_and_writer(&dir, "");
    let init = started(&dir);
    let mut w = mouth(&fifo);
    say(&mut w, 1, 50);
    wait_in_files(&dir, "talker", 50);

    let writer = stop_writer(&init);
    say(&mut w, 51, 100);
    wait_read(&init, "talker", 100);
    let st = writer_status(&init);
    assert!(st.connected && st.waiting >= 50, "{st:?}");
    assert!(!file_numbers(&dir, "talker").contains(&100));
    procs::signal(writer, libc::SIGCONT);
    wait_in_files(&dir, "talker", 100);

    // Killed while lines come: a new writer takes over.
    say(&mut w, 101, 150);
    procs::signal(writer, libc::SIGKILL);
    say(&mut w, 151, 200);
    init.wait_unit("flotilla-logd", "a new writer", |u| {
        u.state == UnitState::Running && u.pid.is_some_and(|p| p != writer)
    });
    wait_in_files(&dir, "talker", 200);
    assert_eq!(file_numbers(&dir, "talker"), (1..=200).collect::<Vec<_>>());
    assert_eq!(assert_complete(&dir, "talker"), 0);
    assert_eq!(writer_status(&init).lost, 0);
}

/// With the writer stopped for longer than the ring holds, the file says
/// how many lines were not persisted, in their place.
#[test]
fn lines_past_the_ring_are_counted_in_the_file() {
    let dir = TestDir::new();
    let fifo = talker_and_writer(&dir, "");
    let init = started(&dir);
    let mut w = mouth(&fifo);
    say(&mut w, 1, 10);
    wait_in_files(&dir, "talker", 10);
    let writer = stop_writer(&init);
    // 3,000 lines of about 50 bytes: three times what the ring keeps.
    say(&mut w, 11, 3000);
    wait_read(&init, "talker", 3000);
    procs::signal(writer, libc::SIGCONT);
    wait_in_files(&dir, "talker", 3000);
    let lost = assert_complete(&dir, "talker");
    assert!(lost > 1000, "{lost}");
    let kept = file_numbers(&dir, "talker").len() as u64;
    assert_eq!(kept + lost, 3000, "every line is in the file or counted");
    // The init counts a batch's lost lines when the writer acknowledges it,
    // in its next pull: after the file has them.
    wait_for(
        WAIT,
        &format!("{lost} lines counted lost by the init"),
        || (writer_status(&init).lost == lost).then_some(()),
    );
    // `initctl logs` shows the counts where the lines were.
    let all = init.ctl(&["logs", "talker"]).expect(0).stdout.clone();
    let counted: u64 = all
        .lines()
        .filter_map(|l| {
            l.strip_prefix("-- ")?
                .strip_suffix(" lines not persisted --")
        })
        .map(|n| n.parse::<u64>().unwrap())
        .sum();
    assert_eq!(counted, lost, "{}", &all[..all.len().min(2000)]);
}

/// Rotations while `initctl logs -f` follows: the follower sees every line
/// once, in order; the files keep the newest lines, each once, up to their
/// count; `initctl logs` joins them with memory.
#[test]
fn rotation_in_the_middle_of_logs_follow() {
    let dir = TestDir::new();
    let fifo = talker_and_writer(&dir, "--max-size 2K --max-files 3");
    let init = started(&dir);
    let follow = init.follow(&["logs", "talker", "-f"]);
    let mut w = mouth(&fifo);
    for batch in 0..10 {
        say(&mut w, batch * 30 + 1, batch * 30 + 30);
        wait_in_files(&dir, "talker", batch * 30 + 30);
    }
    let mut seen = Vec::new();
    while seen.last() != Some(&300) {
        let line = follow.next("a followed line");
        if let Some(n) = line
            .strip_prefix("line ")
            .and_then(|t| t.split(' ').next())
            .and_then(|n| n.parse::<u32>().ok())
        {
            seen.push(n);
        }
    }
    assert_eq!(seen, (1..=300).collect::<Vec<_>>());
    drop(follow);
    assert!(dir.logs().join("talker.log.2").exists(), "rotated");
    assert!(
        !dir.logs().join("talker.log.3").exists(),
        "three files kept"
    );
    for n in ["talker.log", "talker.log.1", "talker.log.2"] {
        let size = std::fs::metadata(dir.logs().join(n)).unwrap().len();
        assert!(size <= 2048 + 1024, "{n}: {size} bytes");
    }
    let kept = file_numbers(&dir, "talker");
    assert!(kept.len() < 300 && kept.last() == Some(&300), "{kept:?}");
    assert!(kept.windows(2).all(|p| p[1] == p[0] + 1), "{kept:?}");
    let all = init.ctl(&["logs", "talker"]).expect(0).stdout.clone();
    let nums: Vec<u32> = all
        .lines()
        .filter_map(|l| l.strip_prefix("line ")?.split(' ').next()?.parse().ok())
        .collect();
    assert_eq!(nums, (1..=300).collect::<Vec<_>>());
    let verbose = init
        .ctl(&["logs", "talker", "-n", "200", "--verbose"])
        .expect(0)
        .stdout
        .clone();
    assert!(verbose.contains("-- from the init's memory"), "{verbose}");
}

/// The log directory on a full file system: units and the init go on (a
/// unit's lines are read and kept, a target switch settles at once),
/// `initctl status` says why the writer cannot write; once there is room,
/// the lines get there.
#[test]
fn a_full_log_directory() {
    let dir = TestDir::new();
    let logs = dir.logs().display().to_string();
    let fifo = talker_and_writer(&dir, "");
    dir.unit("other", "unit: other\nexec-start: sleep 100\n");
    virtual_unit(&dir, "more", "depends-on: default, other\n");
    let init = dir
        .init()
        .in_mount_namespace(&format!(
            "mkdir -p {logs}; mount -t tmpfs -o size=64k,mode=0755 flotilla-test {logs}; \
             head -c 1M /dev/zero > {logs}/fill || true"
        ))
        .target("default")
        .start();
    init.wait_all(&["talker", "flotilla-logd"], UnitState::Running);
    let mut w = mouth(&fifo);
    say(&mut w, 1, 20);
    wait_read(&init, "talker", 20);
    let st = wait_for(WAIT, "the writer to say why", || {
        Some(writer_status(&init)).filter(|s| s.error.is_some())
    });
    let e = st.error.unwrap();
    assert!(e.contains("no space left on device"), "{e}");
    let out = init.ctl(&["status"]).expect(0).stdout.clone();
    assert!(
        out.contains("cannot write:") && out.contains("no space left on device"),
        "{out}"
    );
    init.ctl(&["set-target", "more", "--wait"]).expect(0);
    assert_eq!(
        init.ctl(&["logs", "talker", "-n", "20"])
            .stdout
            .lines()
            .count(),
        20
    );
    // Room again: the writer's retry gets the lines there.
    let free = std::process::Command::new("nsenter")
        .args([
            "-t",
            &init.pid.to_string(),
            "-m",
            "rm",
            &format!("{logs}/fill"),
        ])
        .status()
        .expect("nsenter");
    assert!(free.success());
    let inside = PathBuf::from(format!("/proc/{}/root{logs}/talker.log", init.pid));
    wait_for(WAIT + WAIT, "the lines in the file", || {
        std::fs::read_to_string(&inside)
            .ok()
            .filter(|t| t.contains("line 20 "))
    });
    wait_for(WAIT, "the error to clear", || {
        writer_status(&init).error.is_none().then_some(())
    });
}

/// A read-only log directory: the same, and the reason says so.
#[test]
fn a_read_only_log_directory() {
    let dir = TestDir::new();
    let logs = dir.logs().display().to_string();
    let fifo = talker_and_writer(&dir, "");
    let init = dir
        .init()
        .in_mount_namespace(&format!(
            "mkdir -p {logs}; mount --bind {logs} {logs}; mount -o remount,bind,ro {logs}"
        ))
        .target("default")
        .start();
    init.wait_all(&["talker", "flotilla-logd"], UnitState::Running);
    let mut w = mouth(&fifo);
    say(&mut w, 1, 5);
    let st = wait_for(WAIT, "the writer to say why", || {
        Some(writer_status(&init)).filter(|s| s.error.is_some())
    });
    let e = st.error.unwrap();
    assert!(e.contains("read-only file system"), "{e}");
    wait_read(&init, "talker", 5);
    assert!(init
        .status()
        .units
        .iter()
        .all(|u| u.state != UnitState::Failed));
}

/// The shell lines that mount `backing` at `mnt` through `scripts/slowfs`
/// with its gate `gate` shut (a disk that hangs until the test opens the
/// gate), for [`flotilla_tests::init::InitBuilder::in_mount_namespace`]:
/// the FUSE daemon runs in the init's mount namespace (it goes with it),
/// carrying the test's mark (killed at the end).
fn hanging_disk(backing: &Path, mnt: &Path, gate: &Path) -> String {
    let slowfs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/slowfs");
    format!(
        "mkdir -p {m}; {} {} {m} --delay-ms 0 --gate {} & \
         for i in $(seq 1000); do mountpoint -q {m} && break; sleep 0.01; done; \
         mountpoint -q {m}",
        slowfs.display(),
        backing.display(),
        gate.display(),
        m = mnt.display(),
    )
}

/// Lets a [`hanging_disk`] answer.
fn open_gate(gate: &Path) {
    drop(
        std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(gate)
            .expect("open the gate (is slowfs running?)"),
    );
}

/// The log directory on a disk that hangs: a FUSE directory whose every
/// change waits until the test lets it go (`scripts/slowfs --gate`). The
/// writer is stuck in its first write; the init is not: it reads the
/// unit's lines, a target switch starts a unit and settles, `initctl
/// status` answers and counts the lines waiting. Once the disk answers,
/// every line gets there, in order, once.
#[test]
fn a_log_directory_that_hangs() {
    let dir = TestDir::new();
    let logs = dir.logs().display().to_string();
    let backing = dir.join("backing");
    std::fs::create_dir(&backing).expect("mkdir");
    let gate = dir.join("gate");
    mkfifo(&gate);
    let fifo = talker_and_writer(&dir, "");
    dir.unit("other", "unit: other\nexec-start: sleep 100\n");
    virtual_unit(&dir, "more", "depends-on: default, other\n");
    let init = dir
        .init()
        .in_mount_namespace(&hanging_disk(&backing, Path::new(&logs), &gate))
        .target("default")
        .start();
    init.wait_all(&["talker", "flotilla-logd"], UnitState::Running);
    let mut w = mouth(&fifo);
    say(&mut w, 1, 20);
    wait_read(&init, "talker", 20);
    init.ctl(&["set-target", "more", "--wait"]).expect(0);
    assert_eq!(init.unit("other").state, UnitState::Running);
    let st = writer_status(&init);
    assert!(
        st.connected && st.waiting >= 20 && st.error.is_none(),
        "{st:?}"
    );
    assert!(numbers_in(&backing, "talker").is_empty());
    // The disk answers.
    open_gate(&gate);
    wait_for(WAIT, "line 20 of talker in the files", || {
        numbers_in(&backing, "talker").contains(&20).then_some(())
    });
    assert_eq!(numbers_in(&backing, "talker"), (1..=20).collect::<Vec<_>>());
    wait_for(WAIT, "no line waiting", || {
        (writer_status(&init).waiting == 0).then_some(())
    });
}

/// A unit's output file on a disk that hangs (`standard-output:
/// append:` into a `scripts/slowfs` directory whose gate is shut): the
/// unit's own process opens it, after the spawn handed it off, so the init
/// does not wait with it. The unit stays `starting` (its process is
/// there, stuck in `open`: a start is done once the program runs), while a
/// target switch starts another unit and `initctl status` answers; once
/// the disk answers, the unit is `running`, the target reached and the
/// line in the file.
#[test]
fn a_units_output_file_on_a_disk_that_hangs() {
    let dir = TestDir::new();
    let mnt = dir.join("slow");
    let backing = dir.join("backing");
    std::fs::create_dir(&backing).expect("mkdir");
    let gate = dir.join("gate");
    mkfifo(&gate);
    dir.unit(
        "stuck",
        &format!(
            "unit: stuck\nexec-start: [sh, -c, 'echo hello; exec sleep 100']\n\
             standard-output: append:{}/out.log\n",
            mnt.display()
        ),
    );
    dir.unit("other", "unit: other\nexec-start: sleep 100\n");
    virtual_unit(&dir, "default", "depends-on: stuck\n");
    virtual_unit(&dir, "more", "depends-on: default, other\n");
    let init = dir
        .init()
        .in_mount_namespace(&hanging_disk(&backing, &mnt, &gate))
        .target("default")
        .start();
    init.wait_state("stuck", UnitState::Starting);
    init.ctl(&["set-target", "more"]).expect(0);
    init.wait_state("other", UnitState::Running);
    assert_eq!(init.unit("stuck").state, UnitState::Starting);
    assert!(!backing.join("out.log").exists());
    open_gate(&gate);
    init.wait_state("stuck", UnitState::Running);
    init.ctl(&["set-target", "more", "--wait"]).expect(0);
    wait_for(WAIT, "the unit's line in its file", || {
        std::fs::read_to_string(backing.join("out.log"))
            .ok()
            .filter(|t| t == "hello\n")
    });
}

/// A unit's own output rate limit: the lines past `log-rate-limit-burst`
/// in a `log-rate-limit-interval-sec` window are dropped, and the first
/// line kept after the window is preceded by their count.
#[test]
fn a_units_own_rate_limit() {
    let dir = TestDir::new();
    let fifo = fifo_talker_with(
        &dir,
        "talker",
        "log-rate-limit-burst: 5\nlog-rate-limit-interval-sec: 300ms\n",
    );
    let init = dir.start("talker");
    init.wait_state("talker", UnitState::Running);
    let mut w = mouth(&fifo);
    say(&mut w, 1, 20);
    // One more line at each look, until one is kept after the window: the
    // count and then that line (on a loaded machine a look came between
    // the two).
    let mut next = 20;
    let out = wait_for(WAIT, "a line kept after the window", || {
        next += 1;
        say(&mut w, next, next);
        let out = init.ctl(&["logs", "talker"]).expect(0).stdout.clone();
        let kept_after = out
            .split_once("-- rate limit: ")
            .is_some_and(|(_, rest)| rest.lines().skip(1).any(|l| l.starts_with("line ")));
        kept_after.then_some(out)
    });
    let lines: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("line ") || l.starts_with("-- rate limit: "))
        .collect();
    // The first window's 5, the count, and up to 5 of the next window,
    // which begins with the line after the count.
    assert!((7..=11).contains(&lines.len()), "{out}");
    let kept: Vec<u32> = lines[..5].iter().filter_map(|l| line_number(l)).collect();
    assert_eq!(kept, [1, 2, 3, 4, 5], "{out}");
    let after = line_number(lines[6]).expect("a line after the note");
    let next: Vec<u32> = lines[6..].iter().filter_map(|l| line_number(l)).collect();
    assert_eq!(next, (after..after + next.len() as u32).collect::<Vec<_>>());
    assert_eq!(
        lines[5],
        format!(
            "-- rate limit: {} lines dropped (more than 5 in 300ms) --",
            after - 6
        ),
        "{out}"
    );
}

/// The `talker` of [`fifo_talker`] and a `default` target of it, no
/// writer's unit: `--log-dir` alone. The init with both running, its own
/// writer among them; the FIFO.
fn talker_and_log_dir_alone(dir: &TestDir) -> (Init, PathBuf) {
    let fifo = fifo_talker(dir, "talker");
    virtual_unit(dir, "default", "depends-on: talker\n");
    let init = dir.init().log_dir().start();
    init.wait_all(&["talker", "flotilla-logd"], UnitState::Running);
    (init, fifo)
}

/// `--log-dir` alone: the init runs its own writer, shown by `initctl
/// status`, and a unit's lines reach `DIR/UNIT.log`.
#[test]
fn the_log_dir_alone_writes_the_files() {
    let dir = TestDir::new();
    let (init, fifo) = talker_and_log_dir_alone(&dir);
    let mut w = mouth(&fifo);
    say(&mut w, 1, 20);
    wait_in_files(&dir, "talker", 20);
    assert_eq!(file_numbers(&dir, "talker"), (1..=20).collect::<Vec<_>>());
    let st = writer_status(&init);
    assert!(
        st.connected && st.unit.as_deref() == Some("flotilla-logd"),
        "{st:?}"
    );
    let out = init.ctl(&["status"]).expect(0).stdout.clone();
    let row = out
        .lines()
        .find(|l| l.starts_with("flotilla-logd "))
        .unwrap_or_else(|| panic!("no writer in the status:\n{out}"));
    assert!(
        row.contains("running") && row.contains("log-writer"),
        "{row}"
    );
    assert!(!row.contains("log-writer*"), "not coincidental: {row}");
}

/// The init's own writer, killed, is restarted; no line is lost or
/// written twice.
#[test]
fn the_inits_own_writer_is_restarted() {
    let dir = TestDir::new();
    let (init, fifo) = talker_and_log_dir_alone(&dir);
    let mut w = mouth(&fifo);
    say(&mut w, 1, 50);
    wait_in_files(&dir, "talker", 50);
    let writer = init.pid_of("flotilla-logd");
    procs::signal(writer, libc::SIGKILL);
    say(&mut w, 51, 100);
    init.wait_unit("flotilla-logd", "a new writer", |u| {
        u.state == UnitState::Running && u.pid.is_some_and(|p| p != writer)
    });
    wait_in_files(&dir, "talker", 100);
    assert_eq!(file_numbers(&dir, "talker"), (1..=100).collect::<Vec<_>>());
    assert_eq!(assert_complete(&dir, "talker"), 0);
    assert_eq!(writer_status(&init).lost, 0);
}

/// A unit of the user's providing `log-writer` replaces the init's own:
/// at start, and when a reload brings it.
#[test]
fn a_users_writer_replaces_the_inits_own() {
    let dir = TestDir::new();
    let (init, fifo) = talker_and_log_dir_alone(&dir);
    let mut w = mouth(&fifo);
    say(&mut w, 1, 10);
    wait_in_files(&dir, "talker", 10);
    let builtin = init.pid_of("flotilla-logd");

    dir.unit(
        "my-writer",
        &format!(
            "unit: my-writer\nprovides: log-writer\nexec-start: {}\n",
            flotilla_tests::bins::logd().display()
        ),
    );
    virtual_unit(
        &dir,
        "default",
        "depends-on: talker\nwaits-for: log-writer\n",
    );
    init.ctl(&["reload"]).expect(0);
    init.wait("the user's writer alone", |s| {
        s.units.iter().all(|u| u.unit != "flotilla-logd")
            && s.units
                .iter()
                .any(|u| u.unit == "my-writer" && u.state == UnitState::Running)
    });
    wait_for(WAIT, "the init's own writer gone", || {
        (!procs::alive(builtin)).then_some(())
    });
    say(&mut w, 11, 20);
    wait_in_files(&dir, "talker", 20);
    assert_eq!(
        writer_status(&init).unit.as_deref(),
        Some("my-writer"),
        "the user's writer writes"
    );
    assert_eq!(file_numbers(&dir, "talker"), (1..=20).collect::<Vec<_>>());
    drop(w);

    // At start: the user's writer only.
    let dir = TestDir::new();
    fifo_talker(&dir, "talker");
    dir.unit(
        "my-writer",
        &format!(
            "unit: my-writer\nprovides: log-writer\nexec-start: {}\n",
            flotilla_tests::bins::logd().display()
        ),
    );
    virtual_unit(
        &dir,
        "default",
        "depends-on: talker\nwaits-for: log-writer\n",
    );
    let init = dir.init().log_dir().start();
    init.wait_all(&["talker", "my-writer"], UnitState::Running);
    assert!(
        init.status()
            .units
            .iter()
            .all(|u| u.unit != "flotilla-logd"),
        "{}",
        init.ctl(&["status"]).stdout
    );
}

/// At a shutdown the init's own writer stops last: the line a unit prints
/// as it stops is in the files.
#[test]
fn shutdown_stops_the_inits_own_writer_last() {
    let dir = TestDir::new();
    dir.unit(
        "talker",
        "unit: talker\nexec-start: [sh, -c, \"trap 'sleep 0.3; echo last words; exit 0' TERM; \
         echo up; while :; do sleep 0.1; done\"]\n",
    );
    virtual_unit(&dir, "default", "depends-on: talker\n");
    let mut init = dir.init().log_dir().start();
    init.wait_all(&["talker", "flotilla-logd"], UnitState::Running);
    wait_for(WAIT, "up in the file", || {
        log_file_lines_in(&dir.logs(), "talker")
            .iter()
            .any(|(_, t)| t == "up")
            .then_some(())
    });
    init.ctl(&["poweroff"]).expect(0);
    assert_eq!(init.wait_exit(), 0, "{}", init.output());
    let lines = log_file_lines_in(&dir.logs(), "talker");
    assert!(
        lines.iter().any(|(_, t)| t == "last words"),
        "{lines:?}\n{}",
        init.output()
    );
    let out = init.output();
    let talker = out.find("stopped talker").expect("talker stopped");
    let writer = out.find("stopped flotilla-logd").expect("writer stopped");
    assert!(talker < writer, "{out}");
}

/// A `yes` flood past the rate limit is named while it happens: `initctl
/// status UNIT` (plain and `--json`) says lines are being dropped and how
/// many so far; stopped inside the window, the count is in `initctl logs`.
#[test]
fn a_flood_is_named_while_it_happens_and_counted_when_it_stops() {
    let dir = TestDir::new();
    dir.unit(
        "flood",
        "unit: flood\nexec-start: yes flooding\nlog-rate-limit-burst: 100\n\
         log-rate-limit-interval-sec: 1h\n",
    );
    virtual_unit(&dir, "default", "");
    let init = dir.start("default");
    init.ctl(&["start", "flood"]).expect(0);
    init.wait_state("flood", UnitState::Running);
    let first = init.wait_unit("flood", "dropping lines", |u| {
        u.dropping_lines.is_some_and(|n| n > 0)
    });
    let json = init
        .ctl(&["status", "flood", "--json"])
        .expect(0)
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let n = v["dropping_lines"]
        .as_u64()
        .unwrap_or_else(|| panic!("{json}"));
    assert!(
        n >= first.dropping_lines.unwrap(),
        "so far, growing: {json}"
    );
    let plain = init.ctl(&["status", "flood"]).expect(0).stdout.clone();
    assert!(
        plain.contains("Output: over its rate limit: ") && plain.contains(" lines dropped so far"),
        "{plain}"
    );
    assert!(!init
        .ctl(&["logs", "flood"])
        .stdout
        .contains("-- rate limit"));

    // Stopped an hour before the window ends: the count is told now.
    init.ctl(&["stop", "flood"]).expect(0);
    init.wait_state("flood", UnitState::Disabled);
    let out = wait_for(WAIT, "the count in the log", || {
        let out = init.ctl(&["logs", "flood"]).stdout.clone();
        out.contains("-- rate limit: ").then_some(out)
    });
    let lines: Vec<&str> = out.lines().collect();
    let kept = lines.iter().filter(|l| **l == "flooding").count();
    assert_eq!(kept, 100, "the burst");
    let note = lines
        .iter()
        .find(|l| l.starts_with("-- rate limit: "))
        .unwrap();
    let dropped: u64 = note
        .strip_prefix("-- rate limit: ")
        .and_then(|t| t.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{note}"));
    assert!(dropped >= n, "{note} after {n} so far");
    assert!(
        note.ends_with(" lines dropped (more than 100 in 1h) --"),
        "{note}"
    );
    assert_eq!(init.unit("flood").dropping_lines, None, "{note}");
}
