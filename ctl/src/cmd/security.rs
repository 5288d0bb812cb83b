//! `initctl analyze security [UNIT] [--json]`: asks the init for each
//! running unit's declared context and main PID, reads what that process
//! has from `/proc` here (initctl, as root: PID 1 stays small), and
//! prints the assessment of `analyze/security.rs`. The reading is
//! documented in docs/initctl.md, "analyze security".

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use super::Ctx;
use crate::analyze::security::{self, Report, Seen};
use crate::client::unexpected;
use crate::error::{CtlError, EXIT_OK};
use flotilla_units::protocol::{Reply, Request, SecurityData};

/// Runs the command.
pub fn run(ctx: &mut Ctx<'_>, unit: Option<String>, json: bool) -> Result<i32, CtlError> {
    let one = unit.is_some();
    let units = match ctx.call(Request::Security { name: unit })? {
        Reply::Security { units } => units,
        other => return Err(unexpected(&other, "analyze security")),
    };
    let mut reports = Vec::new();
    for d in &units {
        let Some(pid) = d.pid else {
            return Err(CtlError::Failed(format!(
                "{} has no running main process to read",
                d.unit
            )));
        };
        let seen = read(pid, d)
            .map_err(|e| CtlError::Failed(format!("{}: cannot read /proc/{pid}: {e}", d.unit)))?;
        reports.push(security::assess(d, &seen));
    }
    match (json, one, reports.first()) {
        (true, true, Some(r)) => ctx.print_json(r)?,
        (true, _, _) => ctx.print_json(&reports)?,
        (false, _, _) => {
            let text: Vec<String> = reports.iter().map(render_one).collect();
            ctx.print(&text.join("\n"))?;
        }
    }
    Ok(EXIT_OK)
}

fn render_one(r: &Report) -> String {
    format!("{}:\n{}", r.unit, security::render(r))
}

/// What process `pid` has, as its `/proc` directory shows it.
pub fn read(pid: i32, d: &SecurityData) -> Result<Seen, String> {
    let base = format!("/proc/{pid}");
    let status = std::fs::read_to_string(format!("{base}/status")).map_err(|e| e.to_string())?;
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .map(str::trim)
            .unwrap_or("")
            .to_string()
    };
    let hex = |name: &str| u64::from_str_radix(&field(name), 16).unwrap_or(0);
    let ns = |kind: &str| {
        let theirs = std::fs::read_link(format!("{base}/ns/{kind}")).ok();
        let ours = std::fs::read_link(format!("/proc/self/ns/{kind}")).ok();
        theirs.is_some() && theirs != ours
    };
    let uid_map = std::fs::read_to_string(format!("{base}/uid_map")).unwrap_or_default();
    let identity = uid_map.split_whitespace().collect::<Vec<_>>() == ["0", "0", "4294967295"];
    let root = format!("{base}/root");
    let same_file = |p: &str| -> Option<bool> {
        let theirs = std::fs::metadata(format!("{root}{p}")).ok()?;
        let ours = std::fs::metadata(p).ok()?;
        Some(theirs.dev() == ours.dev() && theirs.ino() == ours.ino())
    };
    let mountinfo = std::fs::read_to_string(format!("{base}/mountinfo")).unwrap_or_default();
    let proc_hidepid = mountinfo.lines().any(|l| {
        let f: Vec<&str> = l.split(' ').collect();
        f.get(4) == Some(&"/proc") && l.contains("hidepid=")
    });
    let (ro_paths, hidden_paths) = security::paths(d);
    let read_only = ro_paths
        .into_iter()
        .map(|p| {
            let v = read_only(&format!("{root}{p}"));
            (p, v)
        })
        .collect();
    let inaccessible = hidden_paths
        .into_iter()
        .map(|p| {
            let v = match std::fs::symlink_metadata(format!("{root}{p}")) {
                Ok(m) => Some(m.mode() & 0o7777 == 0),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Some(true),
                Err(_) => None,
            };
            (p, v)
        })
        .collect();
    let cgroup = std::fs::read_to_string(format!("{base}/cgroup"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("0::"))
        .unwrap_or("")
        .to_string();
    Ok(Seen {
        cap_eff: hex("CapEff:"),
        cap_bnd: hex("CapBnd:"),
        no_new_privs: field("NoNewPrivs:") == "1",
        seccomp_filter: field("Seccomp:") == "2",
        uid: field("Uid:")
            .split_whitespace()
            .next()
            .and_then(|u| u.parse().ok())
            .unwrap_or(0),
        own_mount_ns: ns("mnt"),
        own_net_ns: ns("net"),
        own_uts_ns: ns("uts"),
        own_user_ns: !uid_map.is_empty() && !identity,
        private_tmp: same_file("/tmp") == Some(false),
        private_dev: same_file("/dev") == Some(false),
        proc_hidepid,
        cgroup,
        read_only,
        inaccessible,
    })
}

/// Whether `path` is on a read-only mount (`statvfs(3)`'s `ST_RDONLY`),
/// as the process sees it through its `/proc/PID/root`.
fn read_only(path: &str) -> Option<bool> {
    let c = CString::new(Path::new(path).as_os_str().as_bytes()).ok()?;
    // SAFETY: an all-zero statvfs is valid; statvfs(3) fills it.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: a valid C string and a struct to write.
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return None;
    }
    Some(st.f_flag & libc::ST_RDONLY != 0)
}
