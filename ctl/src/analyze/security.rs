//! `initctl analyze security`: each confinement setting a unit declared,
//! against what its running main process has (what [`Seen`] holds, read
//! from `/proc` by `cmd/security.rs`), and an exposure score on
//! `systemd-analyze security`'s 0–10 scale: systemd's weights for each
//! setting, applied to what was **achieved**, not to what was declared
//! (docs/initctl.md, "analyze security").

use flotilla_units::context::caps::cap;
use flotilla_units::context::sandbox::{ProtectHome, ProtectProc, ProtectSystem};
use flotilla_units::protocol::SecurityData;
use serde::{Serialize, Serializer};

/// What the running main process has, as `/proc` shows it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Seen {
    /// `CapEff:` of `/proc/PID/status`.
    pub cap_eff: u64,
    /// `CapBnd:`.
    pub cap_bnd: u64,
    /// `NoNewPrivs: 1`.
    pub no_new_privs: bool,
    /// `Seccomp: 2` (a filter is installed).
    pub seccomp_filter: bool,
    /// The real UID (`Uid:`).
    pub uid: u32,
    /// A mount namespace other than initctl's.
    pub own_mount_ns: bool,
    /// A network namespace other than initctl's.
    pub own_net_ns: bool,
    /// A UTS namespace other than initctl's.
    pub own_uts_ns: bool,
    /// `uid_map` is not the identity of the whole range.
    pub own_user_ns: bool,
    /// Its `/tmp` is not initctl's.
    pub private_tmp: bool,
    /// Its `/dev` is not initctl's.
    pub private_dev: bool,
    /// Its `/proc` is mounted with `hidepid=`.
    pub proc_hidepid: bool,
    /// Its cgroup (`/proc/PID/cgroup`).
    pub cgroup: String,
    /// Paths looked at, each with whether it is read-only in its view
    /// (`None`: not there).
    pub read_only: Vec<(String, Option<bool>)>,
    /// Paths looked at, each with whether it is inaccessible (mode 000 or
    /// missing) in its view.
    pub inaccessible: Vec<(String, Option<bool>)>,
}

impl Seen {
    fn ro(&self, path: &str) -> Option<bool> {
        self.read_only
            .iter()
            .find(|(p, _)| p == path)
            .and_then(|(_, v)| *v)
    }

    fn hidden(&self, path: &str) -> Option<bool> {
        self.inaccessible
            .iter()
            .find(|(p, _)| p == path)
            .and_then(|(_, v)| *v)
    }
}

/// The paths [`Seen::read_only`] and [`Seen::inaccessible`] need for
/// unit `d`: the fixed ones of `ProtectSystem=`, `ProtectHome=` and the
/// kernel keys, and the unit's own `ReadOnlyPaths=`, `InaccessiblePaths=`.
pub fn paths(d: &SecurityData) -> (Vec<String>, Vec<String>) {
    let mut ro: Vec<String> = [
        "/",
        "/usr",
        "/boot",
        "/etc",
        "/home",
        "/root",
        "/proc/sys",
        "/sys/fs/cgroup",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let sb = &d.context.sandbox;
    ro.extend(
        sb.read_only_paths
            .iter()
            .map(|r| r.path.display().to_string()),
    );
    let mut hidden: Vec<String> = ["/home", "/root", "/run/user", "/usr/lib/modules"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    hidden.extend(
        sb.inaccessible_paths
            .iter()
            .map(|r| r.path.display().to_string()),
    );
    (ro, hidden)
}

/// Whether a setting is in place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Achieved {
    /// In place.
    Yes,
    /// Not in place.
    No,
    /// In part.
    Partial,
}

impl Serialize for Achieved {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Achieved::Yes => s.serialize_bool(true),
            Achieved::No => s.serialize_bool(false),
            Achieved::Partial => s.serialize_str("partial"),
        }
    }
}

impl Achieved {
    fn of(b: bool) -> Achieved {
        if b {
            Achieved::Yes
        } else {
            Achieved::No
        }
    }

    /// As the plain table shows it.
    pub fn word(self) -> &'static str {
        match self {
            Achieved::Yes => "yes",
            Achieved::No => "NO",
            Achieved::Partial => "partial",
        }
    }
}

/// One setting ([`Report::settings`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// systemd's name: `ProtectSystem`.
    pub setting: String,
    /// As declared (`no` when the unit does not set it).
    pub declared: String,
    /// Whether the running process has it.
    pub achieved: Achieved,
    /// What `/proc` showed.
    pub detail: String,
    /// systemd's weight of the setting in the exposure (not in the JSON).
    #[serde(skip)]
    pub weight: u32,
    /// How bad what was achieved is, 0 (best) to 1 (worst).
    #[serde(skip)]
    pub badness: f64,
}

/// One unit's report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// The unit.
    pub unit: String,
    /// 0 (confined) to 10 (exposed), as `systemd-analyze security`.
    pub exposure: f64,
    /// Each setting assessed.
    pub settings: Vec<Row>,
}

fn yes_no(b: bool) -> String {
    if b { "yes" } else { "no" }.to_string()
}

fn word<T: Serialize>(v: &T) -> String {
    serde_json::to_value(v)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_else(|| "?".into())
}

/// The rows of a report, as [`assess`] adds them.
struct Rows(Vec<Row>);

impl Rows {
    fn add(
        &mut self,
        setting: &str,
        declared: String,
        achieved: Achieved,
        detail: String,
        weight: u32,
        badness: f64,
    ) {
        self.0.push(Row {
            setting: setting.into(),
            declared,
            achieved,
            detail,
            weight,
            badness,
        });
    }

    /// A yes/no setting: in place or not.
    fn flag(&mut self, setting: &str, declared: bool, got: bool, detail: String, weight: u32) {
        let badness = if got { 0.0 } else { 1.0 };
        self.add(
            setting,
            yes_no(declared),
            Achieved::of(got),
            detail,
            weight,
            badness,
        );
    }
}

/// Assesses unit `d` against what was seen of its main process.
pub fn assess(d: &SecurityData, seen: &Seen) -> Report {
    let sb = &d.context.sandbox;
    let mut rows = Rows(Vec::new());
    // User=: root is systemd's worst (10 of 10).
    let user = d.user.clone().unwrap_or_else(|| "root".into());
    rows.add(
        "User",
        user,
        Achieved::of(seen.uid != 0),
        format!("Uid: {}", seen.uid),
        2000,
        if seen.uid == 0 { 1.0 } else { 0.0 },
    );
    // ProtectSystem=: strict 0, full 3, yes 5, no 10 (of 10).
    let (ps_ok, ps_detail) = {
        let root = seen.ro("/") == Some(true);
        let usr = seen.ro("/usr") == Some(true);
        let etc = seen.ro("/etc") == Some(true);
        let ok = match sb.protect_system {
            ProtectSystem::Strict => root,
            ProtectSystem::Full => usr && etc,
            ProtectSystem::Yes => usr,
            ProtectSystem::No => root || usr,
        };
        (
            ok,
            format!(
                "read-only: / {}, /usr {}, /etc {}",
                yes_no(root),
                yes_no(usr),
                yes_no(etc)
            ),
        )
    };
    let ps_bad = if seen.ro("/") == Some(true) {
        0.0
    } else if seen.ro("/usr") == Some(true) && seen.ro("/etc") == Some(true) {
        0.3
    } else if seen.ro("/usr") == Some(true) {
        0.5
    } else {
        1.0
    };
    rows.add(
        "ProtectSystem",
        word(&sb.protect_system),
        if sb.protect_system == ProtectSystem::No {
            Achieved::of(false)
        } else {
            Achieved::of(ps_ok)
        },
        ps_detail,
        1000,
        ps_bad,
    );
    // ProtectHome=: yes 0, read-only or tmpfs 5, no 10 (of 10).
    let home_hidden = seen.hidden("/home") == Some(true) && seen.hidden("/root") == Some(true);
    let home_ro = seen.ro("/home") == Some(true) && seen.ro("/root") == Some(true);
    let (ph_ok, ph_bad) = match sb.protect_home {
        ProtectHome::No => (
            false,
            if home_hidden {
                0.0
            } else if home_ro {
                0.5
            } else {
                1.0
            },
        ),
        ProtectHome::Yes => (
            home_hidden,
            if home_hidden {
                0.0
            } else if home_ro {
                0.5
            } else {
                1.0
            },
        ),
        _ => (
            home_ro || home_hidden,
            if home_ro || home_hidden { 0.5 } else { 1.0 },
        ),
    };
    rows.add(
        "ProtectHome",
        word(&sb.protect_home),
        Achieved::of(ph_ok),
        format!(
            "/home and /root: inaccessible {}, read-only {}",
            yes_no(home_hidden),
            yes_no(home_ro)
        ),
        1000,
        ph_bad,
    );
    rows.flag(
        "PrivateTmp",
        sb.private_tmp,
        seen.private_tmp,
        format!(
            "/tmp is {}",
            if seen.private_tmp {
                "its own"
            } else {
                "the host's"
            }
        ),
        1000,
    );
    let dev_caps_gone = !has(seen.cap_bnd, cap::MKNOD) && !has(seen.cap_bnd, cap::SYS_RAWIO);
    let pd = match (seen.private_dev, dev_caps_gone) {
        (true, true) => Achieved::Yes,
        (false, false) => Achieved::No,
        _ => Achieved::Partial,
    };
    rows.add(
        "PrivateDevices",
        yes_no(sb.private_devices),
        pd,
        format!(
            "/dev is {}; CAP_MKNOD, CAP_SYS_RAWIO {}",
            if seen.private_dev {
                "its own"
            } else {
                "the host's"
            },
            if dev_caps_gone { "dropped" } else { "held" }
        ),
        1000,
        badness(pd),
    );
    rows.flag(
        "PrivateNetwork",
        sb.private_network,
        seen.own_net_ns,
        format!(
            "network namespace: {}",
            if seen.own_net_ns {
                "its own"
            } else {
                "the host's"
            }
        ),
        2500,
    );
    rows.flag(
        "PrivateUsers",
        sb.private_users,
        seen.own_user_ns,
        format!(
            "uid_map: {}",
            if seen.own_user_ns {
                "its own"
            } else {
                "the identity"
            }
        ),
        1000,
    );
    rows.flag(
        "PrivateMounts",
        d.context.needs_mount_namespace(),
        seen.own_mount_ns,
        format!(
            "mount namespace: {}",
            if seen.own_mount_ns {
                "its own"
            } else {
                "the host's"
            }
        ),
        1000,
    );
    rows.flag(
        "ProtectKernelTunables",
        sb.protect_kernel_tunables,
        seen.ro("/proc/sys") == Some(true),
        format!(
            "/proc/sys read-only: {}",
            yes_no(seen.ro("/proc/sys") == Some(true))
        ),
        1000,
    );
    let cg_ro = seen.ro("/sys/fs/cgroup") == Some(true);
    rows.flag(
        "ProtectControlGroups",
        sb.protect_control_groups,
        cg_ro,
        format!(
            "/sys/fs/cgroup read-only: {}; cgroup {}",
            yes_no(cg_ro),
            seen.cgroup
        ),
        1000,
    );
    let km_cap = !has(seen.cap_bnd, cap::SYS_MODULE);
    let km_files = seen.hidden("/usr/lib/modules") == Some(true);
    let km = both(km_cap && seen.seccomp_filter, km_files);
    rows.add(
        "ProtectKernelModules",
        yes_no(sb.protect_kernel_modules),
        km,
        format!(
            "CAP_SYS_MODULE {}; /usr/lib/modules {}",
            if km_cap { "dropped" } else { "held" },
            if km_files { "hidden" } else { "visible" }
        ),
        1000,
        badness(km),
    );
    let kl = Achieved::of(!has(seen.cap_bnd, cap::SYSLOG) && seen.seccomp_filter);
    rows.add(
        "ProtectKernelLogs",
        yes_no(sb.protect_kernel_logs),
        kl,
        format!("CAP_SYSLOG {}", held(seen.cap_bnd, cap::SYSLOG)),
        1000,
        badness(kl),
    );
    let clock = Achieved::of(!has(seen.cap_bnd, cap::SYS_TIME) && seen.seccomp_filter);
    rows.add(
        "ProtectClock",
        yes_no(sb.protect_clock),
        clock,
        format!("CAP_SYS_TIME {}", held(seen.cap_bnd, cap::SYS_TIME)),
        1000,
        badness(clock),
    );
    let host = match (seen.own_uts_ns, seen.seccomp_filter) {
        (true, true) => Achieved::Yes,
        (false, false) => Achieved::No,
        _ => Achieved::Partial,
    };
    rows.add(
        "ProtectHostname",
        yes_no(sb.protect_hostname),
        host,
        format!(
            "UTS namespace: {}",
            if seen.own_uts_ns {
                "its own"
            } else {
                "the host's"
            }
        ),
        50,
        badness(host),
    );
    let pp = sb.protect_proc != ProtectProc::Default;
    rows.add(
        "ProtectProc",
        word(&sb.protect_proc),
        Achieved::of(seen.proc_hidepid),
        format!("/proc hidepid: {}", yes_no(seen.proc_hidepid)),
        1000,
        if seen.proc_hidepid { 0.0 } else { 1.0 },
    );
    let _ = pp;
    rows.flag(
        "NoNewPrivileges",
        sb.no_new_privileges,
        seen.no_new_privs,
        format!("NoNewPrivs: {}", u8::from(seen.no_new_privs)),
        1000,
    );
    let filter = format!("Seccomp: {}", if seen.seccomp_filter { 2 } else { 0 });
    rows.flag(
        "SystemCallFilter",
        !sb.system_call_filter.is_empty(),
        seen.seccomp_filter,
        filter.clone(),
        1000,
    );
    rows.flag(
        "SystemCallArchitectures",
        !sb.system_call_architectures.is_empty(),
        seen.seccomp_filter,
        filter.clone(),
        1000,
    );
    rows.flag(
        "RestrictAddressFamilies",
        sb.restrict_address_families.is_some(),
        seen.seccomp_filter,
        filter.clone(),
        1500,
    );
    rows.flag(
        "RestrictNamespaces",
        sb.restrict_namespaces.is_some(),
        seen.seccomp_filter,
        filter.clone(),
        3500,
    );
    rows.flag(
        "RestrictRealtime",
        sb.restrict_realtime,
        seen.seccomp_filter,
        filter.clone(),
        500,
    );
    rows.flag(
        "RestrictSUIDSGID",
        sb.restrict_suid_sgid,
        seen.seccomp_filter,
        filter.clone(),
        1000,
    );
    rows.flag(
        "LockPersonality",
        sb.lock_personality,
        seen.seccomp_filter,
        filter.clone(),
        100,
    );
    rows.flag(
        "MemoryDenyWriteExecute",
        sb.memory_deny_write_execute,
        seen.seccomp_filter,
        filter,
        100,
    );
    // CapabilityBoundingSet=: systemd's groups, each weighed by whether
    // the process still holds any capability of it.
    let declared = sb.capability_bounding_set.map_or_else(
        || "all".to_string(),
        |c| {
            let n = c.names();
            if n.is_empty() {
                "(empty)".to_string()
            } else {
                n.join(" ")
            }
        },
    );
    let mut groups_held = Vec::new();
    let mut cap_bad = 0.0;
    let mut cap_weight = 0;
    for (name, bits, weight) in CAP_GROUPS {
        cap_weight += weight;
        if seen.cap_bnd & bits != 0 {
            groups_held.push(name);
            cap_bad += f64::from(weight);
        }
    }
    let want = sb.capability_bounding_set.map_or(u64::MAX, |c| c.0);
    let cb = if seen.cap_bnd & !want == 0 {
        Achieved::Yes
    } else {
        Achieved::Partial
    };
    rows.add(
        "CapabilityBoundingSet",
        declared,
        if sb.capability_bounding_set.is_none() {
            Achieved::No
        } else {
            cb
        },
        format!(
            "CapBnd: {:016x}; CapEff: {:016x}; dangerous groups held: {}",
            seen.cap_bnd,
            seen.cap_eff,
            if groups_held.is_empty() {
                "none".to_string()
            } else {
                groups_held.join(", ")
            }
        ),
        cap_weight,
        cap_bad / f64::from(cap_weight.max(1)),
    );
    let mut weight = 0.0;
    let mut bad = 0.0;
    for r in &rows.0 {
        weight += f64::from(r.weight);
        bad += f64::from(r.weight) * r.badness;
    }
    let exposure = if weight > 0.0 {
        (bad * 100.0 / weight).round() / 10.0
    } else {
        10.0
    };
    Report {
        unit: d.unit.clone(),
        exposure,
        settings: rows.0,
    }
}

/// systemd's capability groups in `analyze security` and their weights.
const CAP_GROUPS: [(&str, u64, u32); 10] = [
    ("CAP_SYS_ADMIN", 1 << 21, 1500),
    (
        "CAP_SET(UID|GID|PCAP)",
        (1 << 7) | (1 << 6) | (1 << 8),
        1500,
    ),
    ("CAP_SYS_PTRACE", 1 << 19, 1500),
    ("CAP_SYS_TIME", 1 << 25, 1000),
    ("CAP_NET_ADMIN", 1 << 12, 1000),
    ("CAP_SYS_RAWIO", 1 << 17, 1000),
    ("CAP_SYS_MODULE", 1 << 16, 1000),
    ("CAP_AUDIT_*", (1 << 29) | (1 << 30) | (1 << 37), 500),
    ("CAP_SYSLOG", 1 << 34, 500),
    ("CAP_SYS_(NICE|RESOURCE)", (1 << 23) | (1 << 24), 500),
];

fn has(set: u64, n: u32) -> bool {
    n < 64 && set & (1u64 << n) != 0
}

fn held(set: u64, n: u32) -> &'static str {
    if has(set, n) {
        "held"
    } else {
        "dropped"
    }
}

fn both(a: bool, b: bool) -> Achieved {
    match (a, b) {
        (true, true) => Achieved::Yes,
        (false, false) => Achieved::No,
        _ => Achieved::Partial,
    }
}

fn badness(a: Achieved) -> f64 {
    match a {
        Achieved::Yes => 0.0,
        Achieved::Partial => 0.5,
        Achieved::No => 1.0,
    }
}

/// systemd's word for an exposure.
pub fn level(exposure: f64) -> &'static str {
    match exposure {
        e if e <= 0.0 => "PERFECT",
        e if e < 2.0 => "SAFE",
        e if e < 5.0 => "OK",
        e if e < 7.0 => "MEDIUM",
        e if e < 9.0 => "EXPOSED",
        _ => "UNSAFE",
    }
}

/// The plain report of one unit.
pub fn render(r: &Report) -> String {
    let mut t = crate::table::Table::new(&["SETTING", "DECLARED", "ACHIEVED", "DETAIL"]);
    for s in &r.settings {
        t.row(vec![
            s.setting.clone(),
            s.declared.clone(),
            s.achieved.word().to_string(),
            s.detail.clone(),
        ]);
    }
    let mut out = t.render(false);
    out.push_str(&format!(
        "\n-> Overall exposure level for {}: {:.1} {}\n",
        r.unit,
        r.exposure,
        level(r.exposure)
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use flotilla_units::context::ServiceContext;

    fn data(keys: &[(&str, &str)]) -> SecurityData {
        let mut context = ServiceContext::default();
        for (k, v) in keys {
            let key = flotilla_units::context::Key::from_name(k).unwrap();
            context.set(key, v).unwrap();
        }
        SecurityData {
            unit: "u".into(),
            pid: Some(1),
            user: None,
            context,
            not_applied: Vec::new(),
        }
    }

    #[test]
    fn root_with_nothing_is_unsafe_and_a_confined_one_scores_lower() {
        let bare = assess(
            &data(&[]),
            &Seen {
                cap_bnd: u64::MAX,
                cap_eff: u64::MAX,
                ..Seen::default()
            },
        );
        assert_eq!(bare.exposure, 10.0);
        assert_eq!(level(bare.exposure), "UNSAFE");
        let d = data(&[("ProtectSystem", "strict"), ("NoNewPrivileges", "yes")]);
        let seen = Seen {
            uid: 100,
            no_new_privs: true,
            own_mount_ns: true,
            read_only: vec![("/".into(), Some(true)), ("/usr".into(), Some(true))],
            ..Seen::default()
        };
        let r = assess(&d, &seen);
        assert!(r.exposure < bare.exposure, "{}", r.exposure);
        let ps = r
            .settings
            .iter()
            .find(|s| s.setting == "ProtectSystem")
            .unwrap();
        assert_eq!(
            (ps.declared.as_str(), ps.achieved),
            ("strict", Achieved::Yes)
        );
        // Declared but not in place: achieved false, and scored as absent.
        let r2 = assess(
            &d,
            &Seen {
                uid: 100,
                ..Seen::default()
            },
        );
        let ps = r2
            .settings
            .iter()
            .find(|s| s.setting == "ProtectSystem")
            .unwrap();
        assert_eq!(ps.achieved, Achieved::No);
        assert!(r2.exposure > r.exposure);
        let json = serde_json::to_string(&r2).unwrap();
        assert!(
            json.contains(r#""setting":"ProtectSystem","declared":"strict","achieved":false"#),
            "{json}"
        );
    }
}
