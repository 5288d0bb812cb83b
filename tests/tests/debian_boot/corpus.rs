//! Debian's server daemons as a corpus (docs/debian.md, "The daemons'
//! corpus"): the image of `contrib/debian/build --with daemons` holds
//! Debian 12's popular server daemons, installed from Debian's packages
//! unchanged (contrib/debian/packages-daemons; apache2 moved to port 8080
//! by contrib/debian/daemons), and is booted once under each init on a
//! fresh copy of its disk (software-emulated qemu, one CPU, 2 GiB of
//! memory). Each daemon of [`DAEMONS`] is then observed in turn, over ssh,
//! by `corpus-observe.sh`, the same way under both: active after boot,
//! answering (its port or its own client), `systemctl reload` where its
//! unit has `ExecReload=`, `restart`, `stop` with no process left in its
//! cgroup, `start`, and `journalctl -u UNIT -n 5` showing a line.
//!
//! systemd is the oracle: what it observes is cached beside the image
//! cache, keyed by the Debian root the image was made from (flotilla's
//! binaries do not change it) and [`HARNESS`], and the record of a run for
//! today's root is kept in the repository (`oracle/`, the file the
//! cache would hold), read when the cache has none: a fresh clone boots
//! only flotilla. `CORPUS_FRESH=1` ignores both and boots systemd again;
//! a change of the root's inputs changes the key, and the first run then
//! measures systemd and its file belongs in `oracle/`.
//!
//! Every observation that holds under systemd must hold under flotilla,
//! but those of [`KNOWN`], each with its cause as read in flotilla's code,
//! which must fail (one that starts to hold fails the test, so that the
//! list shrinks). The table of the run (daemon, unit, systemd, flotilla)
//! is printed; docs/debian.md has it.
//!
//! Alone: `cargo test -p flotilla-tests --test debian_boot corpus:: --
//! --nocapture`; `CORPUS_UNITS=nginx.service,ssh.service` observes those
//! alone.

use crate::debian_support::oracle::Record;
use crate::debian_support::{boot_to_login, build_image_with, machine, Init, Machine, Vm, NO_ASLR};
use crate::pid1_support::{report, workspace};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The daemons, in the order they are observed: the package, the unit
/// observed (the daemon's own, a template's instance where Debian starts
/// one), and the probe that succeeds when it answers (a shell command in
/// the guest, no single quote; empty for a daemon that serves nothing one
/// can ask). `port N` is the script's: a connection accepted on
/// 127.0.0.1:N (bash's `/dev/tcp`). sshd, the test's way in,
/// is observed but neither restarted nor stopped ([`NO_CYCLE`]).
pub const DAEMONS: &[(&str, &str, &str)] = &[
    ("nginx", "nginx.service", "port 80"),
    ("apache2", "apache2.service", "port 8080"),
    (
        "haproxy",
        "haproxy.service",
        "ss -Hxl | grep -q /run/haproxy/admin.sock",
    ),
    ("squid", "squid.service", "port 3128"),
    ("tinyproxy", "tinyproxy.service", "port 8888"),
    (
        "redis-server",
        "redis-server.service",
        "redis-cli ping | grep -q PONG",
    ),
    (
        "postgresql",
        "postgresql@15-main.service",
        "runuser -u postgres -- psql -tAc \"select 1\"",
    ),
    (
        "mariadb-server",
        "mariadb.service",
        "mariadb -e \"select 1\"",
    ),
    ("memcached", "memcached.service", "port 11211"),
    ("etcd-server", "etcd.service", "port 2379"),
    ("dovecot-imapd", "dovecot.service", "port 143"),
    ("postfix", "postfix@-.service", "port 25"),
    ("bind9", "named.service", "rndc status"),
    ("chrony", "chrony.service", "chronyc -n tracking"),
    ("slapd", "slapd.service", "port 389"),
    ("vsftpd", "vsftpd.service", "port 21"),
    ("cups-daemon", "cups.service", "port 631"),
    ("nfs-kernel-server", "nfs-server.service", "port 2049"),
    ("rpcbind", "rpcbind.service", "rpcinfo -p"),
    (
        "avahi-daemon",
        "avahi-daemon.service",
        "dbus-send --system --print-reply --dest=org.freedesktop.Avahi / \
         org.freedesktop.Avahi.Server.GetVersionString",
    ),
    ("uuid-runtime", "uuidd.service", "uuidd -t"),
    ("mosquitto", "mosquitto.service", "port 1883"),
    ("tor", "tor@default.service", "port 9050"),
    ("sysstat", "sysstat.service", ""),
    ("logrotate", "logrotate.timer", ""),
    ("nftables", "nftables.service", "nft list ruleset"),
    ("at", "atd.service", ""),
    ("fail2ban", "fail2ban.service", "fail2ban-client ping"),
    (
        "prometheus-node-exporter",
        "prometheus-node-exporter.service",
        "port 9100",
    ),
    (
        "snmpd",
        "snmpd.service",
        "ss -Hlun sport = :161 | grep -q .",
    ),
    ("lldpd", "lldpd.service", "lldpcli show configuration"),
    ("zabbix-agent", "zabbix-agent.service", "port 10050"),
    (
        "nagios-nrpe-server",
        "nagios-nrpe-server.service",
        "port 5666",
    ),
    ("containerd", "containerd.service", "ctr version"),
    ("docker.io", "docker.service", "docker info"),
    ("cron", "cron.service", ""),
    (
        "rsyslog",
        "rsyslog.service",
        "t=corpus-$RANDOM; logger -t $t probe; for i in $(seq 50); do \
         grep -q $t /var/log/syslog && exit 0; sleep 0.2; done; exit 1",
    ),
    ("openssh-server", "ssh.service", "port 22"),
];

/// Units observed without `restart`, `stop` and `start`: the test's ssh
/// session runs through sshd.
const NO_CYCLE: &[&str] = &["ssh.service"];

/// The version of what `corpus-observe.sh` observes and of the image's
/// readying (contrib/debian/daemons, which the key of the Debian root
/// does not cover) and of how the guest boots: part of the key of the
/// cached systemd results, raised when any of them changes (3: the
/// kernel's `norandmaps`, [`NO_ASLR`]).
const HARNESS: u32 = 3;

/// The observations (unit, observation) that hold under systemd and fail
/// under flotilla today, with the cause as read in the guest and in
/// flotilla's code (docs/debian.md, "The daemons' corpus").
pub const KNOWN: &[(&str, &str, &str)] = &[];

/// Each unit's observations: the name (`active`, `answers`, …) and `ok`
/// or `no: WHY`.
type Observed = BTreeMap<String, BTreeMap<String, String>>;

/// The daemons observed: all of [`DAEMONS`], or those whose units
/// `CORPUS_UNITS` names (comma-separated), by hand.
fn chosen() -> Vec<(&'static str, &'static str, &'static str)> {
    let only = std::env::var("CORPUS_UNITS").unwrap_or_default();
    let only: Vec<&str> = only
        .split(',')
        .map(str::trim)
        .filter(|u| !u.is_empty())
        .collect();
    for u in &only {
        assert!(
            DAEMONS.iter().any(|(_, unit, _)| unit == u),
            "CORPUS_UNITS: {u} is not a unit of DAEMONS"
        );
    }
    DAEMONS
        .iter()
        .filter(|(_, unit, _)| only.is_empty() || only.contains(unit))
        .copied()
        .collect()
}

/// The script that observes one unit, as the guest runs it.
fn script() -> PathBuf {
    workspace().join("tests/tests/debian_boot/corpus-observe.sh")
}

/// The record of systemd's observations of `image`'s Debian root
/// (`debian_support::oracle`): `corpus-oracle-BASE-HARNESS.json`, kept
/// under `tests/tests/debian_boot/oracle/` with debian_boot's other
/// records.
fn oracle(image: &Path) -> Record {
    Record::of(image, "debian_boot", "corpus", HARNESS)
}

/// `text` as one word of the guest's shell (single-quoted).
fn quoted(text: &str) -> String {
    assert!(!text.contains('\''), "a probe with a single quote: {text}");
    format!("'{text}'")
}

/// The lines of `corpus-observe.sh`: each observation's name and verdict.
fn parse(out: &str) -> BTreeMap<String, String> {
    out.lines()
        .filter_map(|l| l.split_once(' '))
        .filter(|(name, _)| !name.is_empty())
        .map(|(name, verdict)| (name.to_string(), verdict.to_string()))
        .collect()
}

/// Boots a fresh copy of the image under `init` and observes every daemon
/// in turn; what was observed. The copy is removed at the end (the disk
/// holds about 1.5 GiB).
fn observe(image: &Path, init: Init, daemons: &[(&str, &str, &str)]) -> Observed {
    let dir = tempfile::Builder::new()
        .prefix(&format!("flotilla-corpus-{}-", init.name()))
        .tempdir()
        .expect("tempdir");
    let m: Machine = machine(image.to_path_buf(), dir.path());
    let vm = Vm::boot_with(&m, init, &[&["--memory", "2048"], NO_ASLR].concat());
    let timing = boot_to_login(&vm, "corpus");
    report(&format!("corpus: {}", timing.line()));
    vm.copy_in(&m, &[script()], "/root");
    let t0 = Instant::now();
    let mut seen = Observed::new();
    for (_, unit, probe) in daemons {
        let t = Instant::now();
        let cycle = if NO_CYCLE.contains(unit) { "no" } else { "yes" };
        let out = vm.ssh(
            &m,
            &format!(
                "bash /root/corpus-observe.sh {unit} {cycle} {}",
                quoted(probe)
            ),
        );
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let obs = parse(&text);
        assert!(
            obs.contains_key("active") && obs.contains_key("journal"),
            "{}: {unit}: corpus-observe gave {text:?}, stderr {:?}",
            init.name(),
            String::from_utf8_lossy(&out.stderr)
        );
        let failed: Vec<String> = obs
            .iter()
            .filter(|(_, v)| *v != "ok")
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        report(&format!(
            "corpus {}: {unit}: {}/{} in {:.1} s{}{}",
            init.name(),
            obs.len() - failed.len(),
            obs.len(),
            t.elapsed().as_secs_f64(),
            if failed.is_empty() { "" } else { ": " },
            failed.join("; ")
        ));
        seen.insert(unit.to_string(), obs);
    }
    report(&format!(
        "corpus {}: {} daemons observed in {:.0} s",
        init.name(),
        daemons.len(),
        t0.elapsed().as_secs_f64()
    ));
    seen
}

/// The observations of `obs` that hold, by name.
fn holding(obs: &BTreeMap<String, String>) -> Vec<&str> {
    obs.iter()
        .filter(|(_, v)| *v == "ok")
        .map(|(k, _)| k.as_str())
        .collect()
}

/// The table of docs/debian.md: a row a daemon, systemd's holding
/// observations of those made, flotilla's of systemd's, and what fails.
fn table(sd: &Observed, fl: &Observed, daemons: &[(&str, &str, &str)]) -> String {
    let mut out = String::from("| daemon | unit | systemd | flotilla |\n|---|---|---|---|\n");
    let (mut sd_all, mut sd_ok, mut fl_ok) = (0, 0, 0);
    for (package, unit, _) in daemons {
        let s = &sd[*unit];
        let f = &fl[*unit];
        let held = holding(s);
        let fl_held: Vec<&str> = held
            .iter()
            .copied()
            .filter(|o| f.get(*o).is_some_and(|v| v == "ok"))
            .collect();
        let sd_missing: Vec<&str> = s
            .keys()
            .map(String::as_str)
            .filter(|o| !held.contains(o))
            .collect();
        let fl_missing: Vec<&str> = held
            .iter()
            .copied()
            .filter(|o| !fl_held.contains(o))
            .collect();
        let note = |missing: &[&str]| {
            if missing.is_empty() {
                String::new()
            } else {
                format!(" (not {})", missing.join(", "))
            }
        };
        out.push_str(&format!(
            "| {package} | `{unit}` | {}/{}{} | {}/{}{} |\n",
            held.len(),
            s.len(),
            note(&sd_missing),
            fl_held.len(),
            held.len(),
            note(&fl_missing)
        ));
        sd_all += s.len();
        sd_ok += held.len();
        fl_ok += fl_held.len();
    }
    out.push_str(&format!(
        "| all | {} units | {sd_ok}/{sd_all} | {fl_ok}/{sd_ok} |\n",
        daemons.len()
    ));
    out
}

/// The packages of contrib/debian/packages-daemons (and the base's whose
/// daemons are observed), each a daemon of [`DAEMONS`]; [`KNOWN`] names
/// units of [`DAEMONS`] with a cause; docs/debian.md's table has a row
/// for each unit, and its known differences each of [`KNOWN`]: checked
/// without a VM.
#[test]
fn corpus_lists_agree() {
    let list = std::fs::read_to_string(workspace().join("contrib/debian/packages-daemons"))
        .expect("read contrib/debian/packages-daemons");
    let mut listed: Vec<&str> = list
        .lines()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .filter(|l| !l.is_empty())
        .chain(["cron", "rsyslog", "openssh-server"])
        .collect();
    listed.sort();
    let mut packages: Vec<&str> = DAEMONS.iter().map(|(p, _, _)| *p).collect();
    packages.sort();
    assert_eq!(
        listed, packages,
        "contrib/debian/packages-daemons and DAEMONS differ"
    );
    assert!(DAEMONS.len() >= 30, "{} daemons", DAEMONS.len());
    for (unit, what, cause) in KNOWN {
        assert!(
            DAEMONS.iter().any(|(_, u, _)| u == unit),
            "KNOWN names {unit}, not a unit of DAEMONS"
        );
        assert!(!what.is_empty() && !cause.is_empty(), "KNOWN: {unit}");
    }
    let doc =
        std::fs::read_to_string(workspace().join("docs/debian.md")).expect("read docs/debian.md");
    for (_, unit, _) in DAEMONS {
        assert!(
            doc.contains(&format!("| `{unit}` |")),
            "docs/debian.md's corpus table has no row for {unit}"
        );
    }
    let known = doc
        .split("<!-- corpus known differences -->")
        .nth(1)
        .expect("docs/debian.md has the corpus's known differences");
    for (unit, what, _) in KNOWN {
        assert!(
            known
                .lines()
                .any(|l| l.starts_with(&format!("| `{unit}` |")) && l.contains(what)),
            "docs/debian.md's known differences have no {unit} {what}"
        );
    }
}

/// The record of systemd's observations kept in `oracle/` is read for its
/// Debian root as this harness's: checked without a VM.
#[test]
fn the_kept_record_of_the_corpus_is_read() {
    let bases = Record::check_kept::<Observed>("debian_boot", "corpus", HARNESS);
    assert!(!bases.is_empty(), "no record of harness {HARNESS} kept");
}

#[test]
fn debian_daemons_behave_under_flotilla_as_under_systemd() {
    let start = Instant::now();
    let image = build_image_with("bookworm", Some("daemons"));
    let record = oracle(&image);
    let mut cached: Observed = record.read("CORPUS_FRESH").unwrap_or_default();
    let daemons = chosen();
    let missing: Vec<_> = daemons
        .iter()
        .filter(|(_, u, _)| !cached.contains_key(*u))
        .copied()
        .collect();
    let sd = if missing.is_empty() {
        report(&format!(
            "corpus: systemd's observations read from their record ({})",
            record.name()
        ));
        cached
    } else {
        cached.extend(observe(&image, Init::Systemd, &missing));
        record.write(&cached);
        report(&format!(
            "corpus: systemd's observations cached in {} (record it in \
             tests/tests/debian_boot/oracle/)",
            record.cache.display()
        ));
        cached
    };
    let fl = observe(&image, Init::Flotilla, &daemons);
    eprintln!("{}", table(&sd, &fl, &daemons));
    let mut wrong = Vec::new();
    for (_, unit, _) in &daemons {
        for what in holding(&sd[*unit]) {
            let got = fl[*unit].get(what).map(String::as_str).unwrap_or("missing");
            let known = KNOWN.iter().any(|(u, w, _)| u == unit && *w == what);
            match (got == "ok", known) {
                (true, true) => wrong.push(format!("{unit} {what}: known to fail, now holds")),
                (false, false) => wrong.push(format!("{unit} {what}: {got}")),
                _ => {}
            }
        }
    }
    for (unit, what, _) in KNOWN.iter().filter(|(u, _, _)| fl.contains_key(*u)) {
        assert!(
            sd[*unit].get(*what).is_some_and(|v| v == "ok"),
            "KNOWN lists {unit} {what}, which does not hold under systemd"
        );
    }
    report(&format!(
        "corpus: done in {:.0} s",
        start.elapsed().as_secs_f64()
    ));
    assert!(
        wrong.is_empty(),
        "observations holding under systemd that differ under flotilla:\n{}",
        wrong.join("\n")
    );
}
