//! `systemd-run -p LogNamespace=NAME` with Debian's `systemd-run`, as
//! systemd's TEST-44 runs it: the transient service requires the
//! namespace's journald sockets (instances of the templates here, which
//! stand in for Debian's), its output is a journal stream to the
//! namespace's socket, and its `/run/systemd/journal` is the namespace's
//! directory, read-only (docs/service-context.md, "The journal").

use super::*;

#[test]
fn systemd_run_log_namespace_streams_to_the_namespaces_sockets() {
    let ns = format!("flotilla-test-{}", std::process::id());
    let ns_dir = PathBuf::from(format!("/run/systemd/journal.{ns}"));
    let journal_dir = Path::new("/run/systemd/journal");
    let had_journal_dir = journal_dir.exists();
    let dir = TestDir::new();
    dir.file(
        "units/systemd-journald@.socket",
        "[Socket]\nService=systemd-journald@%i.service\n\
         ListenStream=/run/systemd/journal.%i/stdout\n",
    );
    dir.file(
        "units/systemd-journald-varlink@.socket",
        "[Socket]\nService=systemd-journald@%i.service\n\
         ListenStream=/run/systemd/journal.%i/io.systemd.journal\n",
    );
    dir.file(
        "units/systemd-journald@.service",
        "[Service]\nExecStart=/bin/sleep 1000\n",
    );
    let init = started(&dir);
    let bus = busd(&dir);
    // In the unit: its output is a journal stream, and the namespace's
    // socket is where the system journal's would be, read-only.
    let check = format!(
        "test -n \"$JOURNAL_STREAM\" && \
         test \"$(stat -c %i /run/systemd/journal/stdout)\" = \
              \"$(stat -c %i {}/stdout)\" && \
         ! touch /run/systemd/journal/x 2>/dev/null",
        ns_dir.display()
    );
    let property = format!("LogNamespace={ns}");
    let out = debian_tool(
        &bus,
        "/usr/bin/systemd-run",
        &[
            "--unit",
            "logns",
            "-p",
            "Type=oneshot",
            "-p",
            "RemainAfterExit=yes",
            "-p",
            &property,
            "/bin/sh",
            "-c",
            &check,
        ],
    );
    // A oneshot's start job ends with its command: systemd-run's answer
    // says how the check went.
    let state = |name: &str| init.client().unit(name).map(|u| u.state);
    let after = state("logns.service");
    let shown = systemctl(&bus, &["show", "-P", "LogNamespace", "logns.service"]);
    let sockets = [
        state(&format!("systemd-journald@{ns}.socket")),
        state(&format!("systemd-journald-varlink@{ns}.socket")),
    ];
    drop(init);
    let _ = std::fs::remove_dir_all(&ns_dir);
    if !had_journal_dir {
        let _ = std::fs::remove_dir(journal_dir);
    }
    out.expect(0);
    assert_eq!(
        after,
        Some(UnitState::Exited),
        "the check in the unit failed"
    );
    shown.expect(0);
    assert_eq!(shown.stdout.trim(), ns);
    assert_eq!(sockets, [Some(UnitState::Running); 2]);
}
