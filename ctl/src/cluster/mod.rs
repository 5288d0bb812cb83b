//! `initctl cluster [--endpoint URL] [--no-legend] [--full] VERB ...`: a
//! fleetctl-compatible client of the fleet API v1 served by clusterd.
//!
//! Verbs: `submit`, `load`, `start`, `stop`, `unload`, `destroy`, `cat`,
//! `status`, `list-units`, `list-unit-files`, `list-machines`. Waiting verbs
//! poll every 250 ms, 2 s per attempt, `--block-attempts N` attempts (0: no
//! limit), or not at all with `--no-block`. Tables are tab-separated with
//! upper-case headers (`--no-legend` drops them); machine IDs are shown as
//! their first 8 characters plus `...` unless `--full`. The endpoint comes
//! from `--endpoint`, else `$FLEETCTL_ENDPOINT`, else
//! `unix:///run/clusterd/fleet.sock`.
//!
//! Exit status, as for the rest of `initctl` (`docs/cluster.md`): 0 on
//! success; 1 when the request failed (an API error, a unit that does not
//! exist or is not found, a wait that ran out of attempts); 2 for a usage
//! error or when the fleet API cannot be reached. Every message on stderr
//! starts with `initctl cluster: `.

mod http;
mod logs;

use flotilla_units::fleet::UnitOption;
use flotilla_units::fleet_api::{
    ApiUnit, ApiUnitState, ClusterState, ErrorBody, Machine, MachinePage, PutBody, StatePage,
    UnitPage, WireOption,
};
use flotilla_units::unit_name::UNIT_SUFFIXES;
use http::{parse_endpoint, request, Endpoint, Failure};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// The request failed.
pub const EXIT_FAILED: i32 = 1;
/// Usage error, or the fleet API cannot be reached.
pub const EXIT_USAGE: i32 = 2;

type Result<T> = std::result::Result<T, Failure>;

/// Prints one message on stderr with the `initctl cluster: ` prefix.
fn say(msg: &str) {
    eprintln!("initctl cluster: {msg}");
}

/// The default endpoint.
pub const DEFAULT_ENDPOINT: &str = "unix:///run/clusterd/fleet.sock";

struct Opts {
    ep: Endpoint,
    no_legend: bool,
    full: bool,
    block_attempts: u32,
    no_block: bool,
}

const USAGE: &str = "usage: initctl cluster [--endpoint URL] [--no-legend] [--full] [--block-attempts N] [--no-block] VERB [ARGS...]
verbs: submit FILE..., load UNIT..., start UNIT..., stop UNIT..., unload UNIT..., destroy UNIT...,
       cat UNIT, status UNIT..., list-units, list-unit-files, list-machines,
       logs UNIT [-n N] [--since TIME] [-f] [--machine ID]";

/// Runs `initctl cluster` with the arguments after `cluster`; returns the exit status.
pub fn run(args: &[String]) -> i32 {
    let mut endpoint = std::env::var("FLEETCTL_ENDPOINT")
        .ok()
        .filter(|s| !s.is_empty());
    let (mut no_legend, mut full, mut no_block, mut attempts) = (false, false, false, 0u32);
    let mut rest = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        // The options after `logs` are its own (as `initctl logs`'s).
        if rest.first().is_some_and(|v: &String| v == "logs") {
            rest.push(args[i].clone());
            i += 1;
            continue;
        }
        let (name, inline) = match a.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n, Some(v.to_string())),
            _ => (a, None),
        };
        let value = |i: &mut usize| -> Option<String> {
            inline.clone().or_else(|| {
                *i += 1;
                args.get(*i).cloned()
            })
        };
        match name {
            "--endpoint" => match value(&mut i) {
                Some(v) => endpoint = Some(v),
                None => return usage_error("--endpoint needs a URL"),
            },
            "--block-attempts" => match value(&mut i).and_then(|v| v.parse().ok()) {
                Some(n) => attempts = n,
                None => return usage_error("--block-attempts needs a number"),
            },
            "--no-legend" => no_legend = true,
            "--full" | "-l" => full = true,
            "--no-block" => no_block = true,
            "-h" | "--help" | "help" if rest.is_empty() => {
                println!("{USAGE}");
                return 0;
            }
            _ if a.len() > 1 && a.starts_with('-') => {
                return usage_error(&format!("unknown option {a:?}"))
            }
            _ => rest.push(args[i].clone()),
        }
        i += 1;
    }
    let ep = match parse_endpoint(endpoint.as_deref().unwrap_or(DEFAULT_ENDPOINT)) {
        Ok(e) => e,
        Err(e) => return usage_error(&e),
    };
    let Some((verb, names)) = rest.split_first() else {
        return usage_error("no verb given");
    };
    let o = Opts {
        ep,
        no_legend,
        full,
        block_attempts: attempts,
        no_block,
    };
    let arity = match verb.as_str() {
        "submit" | "load" | "start" | "stop" | "unload" | "destroy" | "status" => (!names
            .is_empty())
        .then_some(())
        .ok_or("needs at least one unit"),
        "cat" => (names.len() == 1)
            .then_some(())
            .ok_or("needs exactly one unit"),
        "list-units" | "list-unit-files" | "list-machines" => {
            names.is_empty().then_some(()).ok_or("takes no arguments")
        }
        "logs" => match logs::parse(names) {
            Ok(ask) => {
                return match logs::run(&o.ep, &ask) {
                    Ok(()) => 0,
                    Err(e) => {
                        say(&e.message);
                        e.code
                    }
                }
            }
            Err(e) => return usage_error(&e),
        },
        v => return usage_error(&format!("unknown verb {v:?}")),
    };
    if let Err(e) = arity {
        return usage_error(&format!("{verb} {e}"));
    }
    let r = match verb.as_str() {
        "submit" => submit(&o, names).map(|_| ()),
        "load" => change(&o, names, ClusterState::Loaded),
        "start" => change(&o, names, ClusterState::Launched),
        "stop" => stop_unload(&o, names, ClusterState::Loaded),
        "unload" => stop_unload(&o, names, ClusterState::Inactive),
        "destroy" => destroy(&o, names),
        "cat" => cat(&o, names),
        "status" => status(&o, names),
        "list-units" => list_units(&o),
        "list-unit-files" => list_unit_files(&o),
        _ => list_machines(&o),
    };
    match r {
        Ok(()) => 0,
        Err(e) => {
            if !e.message.is_empty() {
                say(&e.message);
            }
            e.code
        }
    }
}

fn usage_error(msg: &str) -> i32 {
    say(msg);
    eprintln!("{USAGE}");
    EXIT_USAGE
}

/// fleetctl appends `.service` to names without a known suffix.
fn unit_name(arg: &str) -> String {
    let base = std::path::Path::new(arg)
        .file_name()
        .and_then(|s| s.to_str())
        .unwrap_or(arg);
    match base.rsplit_once('.') {
        Some((_, s)) if UNIT_SUFFIXES.contains(&s) => base.to_string(),
        _ => format!("{base}.service"),
    }
}

/// One request; the status and the body (empty when there is none).
fn api(o: &Opts, method: &str, path: &str, body: Option<&str>) -> Result<(u16, Vec<u8>)> {
    let r = request(&o.ep, method, path, body)?;
    Ok((r.status, r.body))
}

/// Decodes a body the API sent with a 2xx status.
fn decode<T: serde::de::DeserializeOwned>(what: &str, body: &[u8]) -> Result<T> {
    serde_json::from_slice(body)
        .map_err(|e| Failure::failed(format!("the fleet API sent a bad {what}: {e}")))
}

/// The message of an error entity, with the status.
fn api_error(body: &[u8], status: u16) -> String {
    match serde_json::from_slice::<ErrorBody>(body) {
        Ok(e) => format!("{} (HTTP {status})", e.error.message),
        Err(_) => format!("HTTP {status}"),
    }
}

fn get_unit(o: &Opts, name: &str) -> Result<Option<ApiUnit>> {
    match api(o, "GET", &format!("units/{name}"), None)? {
        (200, b) => decode("unit", &b).map(Some),
        (404, _) => Ok(None),
        (s, b) => Err(Failure::failed(api_error(&b, s))),
    }
}

/// A page of a listing: its items and the token of the next page.
trait Page: serde::de::DeserializeOwned {
    type Item;
    fn split(self) -> (Vec<Self::Item>, Option<String>);
}

impl Page for UnitPage {
    type Item = ApiUnit;
    fn split(self) -> (Vec<ApiUnit>, Option<String>) {
        (self.units, self.next_page_token)
    }
}

impl Page for StatePage {
    type Item = ApiUnitState;
    fn split(self) -> (Vec<ApiUnitState>, Option<String>) {
        (self.states, self.next_page_token)
    }
}

impl Page for MachinePage {
    type Item = Machine;
    fn split(self) -> (Vec<Machine>, Option<String>) {
        (self.machines, self.next_page_token)
    }
}

/// Every item of a paged listing (`path` may carry a query).
fn list_all<P: Page>(o: &Opts, path: &str) -> Result<Vec<P::Item>> {
    let mut out = Vec::new();
    let mut next = path.to_string();
    let sep = if path.contains('?') { '&' } else { '?' };
    loop {
        let (s, b) = api(o, "GET", &next, None)?;
        if s != 200 {
            return Err(Failure::failed(api_error(&b, s)));
        }
        let (items, token) = decode::<P>("page", &b)?.split();
        out.extend(items);
        match token {
            Some(t) => next = format!("{path}{sep}nextPageToken={t}"),
            None => return Ok(out),
        }
    }
}

fn body_of(put: &PutBody) -> String {
    // A PutBody always encodes; fleetctl ends its bodies with a newline.
    serde_json::to_string(put).unwrap_or_default() + "\n"
}

/// Finds a unit's file: the path given, or for an instance its template
/// (a local file beside it, or the template already in the cluster).
fn unit_options(o: &Opts, arg: &str, name: &str) -> Result<Vec<UnitOption>> {
    let path = std::path::Path::new(arg);
    if let Ok(text) = std::fs::read_to_string(path) {
        return Ok(flotilla_systemd::parse(&text).options);
    }
    if let Some(t) = flotilla_units::unit_name::template_of(name) {
        let local = path.with_file_name(&t);
        if let Ok(text) = std::fs::read_to_string(&local) {
            return Ok(flotilla_systemd::parse(&text).options);
        }
        if let Some(u) = get_unit(o, &t)? {
            return Ok(u.unit_options());
        }
    }
    Err(Failure::failed(format!(
        "unable to find unit file or template for {name}"
    )))
}

/// Creates the units that do not exist yet; returns their names.
fn submit(o: &Opts, args: &[String]) -> Result<Vec<String>> {
    let mut names = Vec::new();
    for arg in args {
        let name = unit_name(arg);
        if get_unit(o, &name)?.is_none() {
            let opts = unit_options(o, arg, &name)?;
            let body = body_of(&PutBody {
                desired_state: Some(ClusterState::Inactive.as_str().into()),
                options: Some(opts.iter().map(WireOption::from).collect()),
                ..Default::default()
            });
            let (s, b) = api(o, "PUT", &format!("units/{name}"), Some(&body))?;
            if s != 201 && s != 204 {
                return Err(Failure::failed(format!(
                    "error creating unit {name}: {}",
                    api_error(&b, s)
                )));
            }
        }
        names.push(name);
    }
    Ok(names)
}

fn machines(o: &Opts) -> Result<BTreeMap<String, String>> {
    Ok(list_all::<MachinePage>(o, "machines")?
        .into_iter()
        .map(|m| (m.id, m.primary_ip))
        .collect())
}

/// A machine ID as fleetctl shows it: its first 8 characters and `...`,
/// or the whole ID with `--full`.
fn short_id(o: &Opts, id: &str) -> String {
    if o.full {
        id.to_string()
    } else {
        format!("{}...", id.get(..8).unwrap_or(id))
    }
}

fn machine_label(o: &Opts, id: &str, ips: &BTreeMap<String, String>) -> String {
    let short = short_id(o, id);
    match ips.get(id).filter(|ip| !ip.is_empty()) {
        Some(ip) => format!("{short}/{ip}"),
        None => short,
    }
}

/// Polls until `done` holds for every unit; honours `--no-block` and `--block-attempts`.
fn wait_all(o: &Opts, names: &[String], mut done: impl FnMut(&str) -> Result<bool>) -> Result<()> {
    if o.no_block {
        return Ok(());
    }
    let deadline =
        (o.block_attempts > 0).then(|| Instant::now() + Duration::from_secs(2) * o.block_attempts);
    let mut pending: Vec<String> = names.to_vec();
    loop {
        let mut still = Vec::new();
        for n in pending {
            if !done(&n)? {
                still.push(n);
            }
        }
        pending = still;
        if pending.is_empty() {
            return Ok(());
        }
        if deadline.is_some_and(|d| Instant::now() > d) {
            return Err(Failure::failed(format!(
                "error waiting for units: {} did not reach the desired state",
                pending.join(", ")
            )));
        }
        std::thread::sleep(Duration::from_millis(250));
    }
}

fn set_desired(o: &Opts, name: &str, desired: ClusterState) -> Result<()> {
    let body = body_of(&PutBody {
        desired_state: Some(desired.as_str().into()),
        ..Default::default()
    });
    match api(o, "PUT", &format!("units/{name}"), Some(&body))? {
        (204, _) | (201, _) => Ok(()),
        (s, b) => Err(Failure::failed(format!(
            "error setting {name} to {}: {}",
            desired.as_str(),
            api_error(&b, s)
        ))),
    }
}

/// `load` and `start`: submit, set the desired state, wait for it.
fn change(o: &Opts, args: &[String], goal: ClusterState) -> Result<()> {
    let names = submit(o, args)?;
    let mut global = Vec::new();
    for n in &names {
        set_desired(o, n, goal)?;
        if let Some(u) = get_unit(o, n)? {
            if u.is_global() {
                global.push(n.clone());
                println!(
                    "Triggered global unit {n} {}",
                    if goal == ClusterState::Launched {
                        "start"
                    } else {
                        "load"
                    }
                );
            }
        }
    }
    let local: Vec<String> = names
        .iter()
        .filter(|n| !global.contains(n))
        .cloned()
        .collect();
    let ips = machines(o)?;
    let placed = wait_all(o, &local, |n| {
        let Some(u) = get_unit(o, n)? else {
            return Err(Failure::failed(format!("unit {n} disappeared")));
        };
        if u.current_state.as_deref() != Some(goal.as_str()) {
            return Ok(false);
        }
        let m = u.machine_id.as_deref().unwrap_or("");
        println!(
            "Unit {n} {} on {}",
            goal.as_str(),
            machine_label(o, m, &ips)
        );
        Ok(true)
    });
    if placed.is_err() {
        // Say why the units that fit nowhere wait.
        for n in &local {
            if let Ok(Some(u)) = get_unit(o, n) {
                if let Some(why) = u.unscheduled_reason {
                    say(&format!("Unit {n} is not scheduled: {why}"));
                }
            }
        }
    }
    placed?;
    if goal == ClusterState::Launched {
        wait_all(o, &local, |n| {
            let (s, b) = api(o, "GET", &format!("state/{n}"), None)?;
            if s != 200 {
                return Ok(false);
            }
            let st: ApiUnitState = decode("unit state", &b)?;
            Ok(st.active_state == "active" && st.load_state == "loaded")
        })?;
    }
    Ok(())
}

/// `stop` (to `loaded`) and `unload` (to `inactive`).
fn stop_unload(o: &Opts, args: &[String], goal: ClusterState) -> Result<()> {
    let known: BTreeMap<String, ApiUnit> = list_all::<UnitPage>(o, "units")?
        .into_iter()
        .map(|u| (u.name.clone(), u))
        .collect();
    let mut names = Vec::new();
    let mut failed = false;
    for a in args {
        let n = unit_name(a);
        match known.get(&n) {
            None => {
                say(&format!("Unit {n} does not exist."));
                failed = true;
            }
            Some(u) => {
                if goal == ClusterState::Loaded
                    && u.desired_state.as_deref() == Some(ClusterState::Inactive.as_str())
                {
                    say(&format!("Unable to stop unit {n} in state inactive"));
                    failed = true;
                    continue;
                }
                set_desired(o, &n, goal)?;
                names.push(n);
            }
        }
    }
    let ips = machines(o)?;
    wait_all(o, &names, |n| {
        let Some(u) = get_unit(o, n)? else {
            return Ok(true);
        };
        if u.is_global() {
            return Ok(true);
        }
        if u.current_state.as_deref() != Some(goal.as_str()) {
            return Ok(false);
        }
        if goal == ClusterState::Inactive {
            println!("Unit {n} inactive");
        } else {
            println!(
                "Unit {n} loaded on {}",
                machine_label(o, u.machine_id.as_deref().unwrap_or(""), &ips)
            );
        }
        Ok(true)
    })?;
    if failed {
        Err(Failure::failed(String::new()))
    } else {
        Ok(())
    }
}

fn destroy(o: &Opts, args: &[String]) -> Result<()> {
    let mut names = Vec::new();
    for a in args {
        let n = unit_name(a);
        match api(o, "DELETE", &format!("units/{n}"), None)? {
            (204, _) => println!("Destroyed {n}"),
            (404, _) => {}
            (s, b) => {
                return Err(Failure::failed(format!(
                    "error destroying {n}: {}",
                    api_error(&b, s)
                )))
            }
        }
        names.push(n);
    }
    wait_all(o, &names, |n| Ok(get_unit(o, n)?.is_none()))
}

fn cat(o: &Opts, args: &[String]) -> Result<()> {
    let n = unit_name(&args[0]);
    let Some(u) = get_unit(o, &n)? else {
        return Err(Failure::failed(format!("Unit {n} not found")));
    };
    print!("{}", flotilla_systemd::canonical_text(&u.unit_options()));
    Ok(())
}

fn status(o: &Opts, args: &[String]) -> Result<()> {
    let ips = machines(o)?;
    let mut failed = false;
    for a in args {
        let n = unit_name(a);
        let Some(unit) = get_unit(o, &n)? else {
            say(&format!("Unit {n} does not exist."));
            failed = true;
            continue;
        };
        let states = list_all::<StatePage>(o, &format!("state?unitName={n}"))?;
        let mine: Vec<&ApiUnitState> = states.iter().filter(|s| s.name == n).collect();
        if mine.is_empty() {
            match &unit.unscheduled_reason {
                Some(why) => say(&format!("Unit {n} is not scheduled: {why}")),
                None => say(&format!("Unit {n} does not appear to be running.")),
            }
            failed = true;
            continue;
        }
        for s in mine {
            println!("● {n} on {}", machine_label(o, &s.machine_id, &ips));
            println!("   Loaded: {}", dash(&s.load_state));
            println!(
                "   Active: {} ({})",
                dash(&s.active_state),
                dash(&s.sub_state)
            );
            println!("     Hash: {}", dash(&s.hash));
        }
        // A global unit some machines have no room for.
        if let Some(why) = &unit.unscheduled_reason {
            println!("  Not scheduled everywhere: {why}");
        }
    }
    if failed {
        Err(Failure::failed(String::new()))
    } else {
        Ok(())
    }
}

fn table(o: &Opts, header: &[&str], rows: Vec<Vec<String>>) {
    if !o.no_legend {
        println!("{}", header.join("\t"));
    }
    for r in rows {
        println!("{}", r.join("\t"));
    }
}

/// A value as the tables show it: `-` when missing.
fn dash(v: &str) -> String {
    if v.is_empty() {
        "-".to_string()
    } else {
        v.to_string()
    }
}

fn list_machines(o: &Opts) -> Result<()> {
    let ms = list_all::<MachinePage>(o, "machines")?;
    let rows = ms
        .iter()
        .map(|m| {
            let md = if m.metadata.is_empty() {
                "-".to_string()
            } else {
                m.metadata
                    .iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect::<Vec<_>>()
                    .join(",")
            };
            vec![short_id(o, &m.id), dash(&m.primary_ip), md]
        })
        .collect();
    table(o, &["MACHINE", "IP", "METADATA"], rows);
    Ok(())
}

fn list_units(o: &Opts) -> Result<()> {
    let ips = machines(o)?;
    let states = list_all::<StatePage>(o, "state")?;
    let rows = states
        .iter()
        .map(|s| {
            let label = if s.machine_id.is_empty() {
                "-".to_string()
            } else {
                machine_label(o, &s.machine_id, &ips)
            };
            vec![
                dash(&s.name),
                label,
                dash(&s.active_state),
                dash(&s.sub_state),
            ]
        })
        .collect();
    table(o, &["UNIT", "MACHINE", "ACTIVE", "SUB"], rows);
    Ok(())
}

fn list_unit_files(o: &Opts) -> Result<()> {
    let ips = machines(o)?;
    let units = list_all::<UnitPage>(o, "units")?;
    let rows = units
        .iter()
        .map(|u| {
            let hash = flotilla_systemd::unit_hash(&u.unit_options());
            let hash = if o.full {
                hash
            } else {
                hash.chars().take(7).collect()
            };
            let (state, target) = if u.is_global() {
                ("-".to_string(), "global".to_string())
            } else {
                let target = match u.machine_id.as_deref() {
                    None | Some("") => "-".to_string(),
                    Some(m) => machine_label(o, m, &ips),
                };
                (dash(u.current_state.as_deref().unwrap_or("")), target)
            };
            vec![
                dash(&u.name),
                hash,
                dash(u.desired_state.as_deref().unwrap_or("")),
                state,
                target,
            ]
        })
        .collect();
    table(o, &["UNIT", "HASH", "DSTATE", "STATE", "TARGET"], rows);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(args: &[&str]) -> i32 {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        run(&args)
    }

    #[test]
    fn usage_errors_and_an_unreachable_api_exit_2() {
        let ep = "--endpoint=unix:///nonexistent/flotilla-test/fleet.sock";
        for bad in [
            &[ep][..],
            &[ep, "bogus"],
            &[ep, "--bogus", "list-units"],
            &[ep, "cat"],
            &[ep, "cat", "a", "b"],
            &[ep, "start"],
            &[ep, "list-units", "extra"],
            &["--endpoint"],
            &["--endpoint", "ftp://x", "list-units"],
            &[ep, "--block-attempts", "x", "start", "a"],
        ] {
            assert_eq!(code(bad), EXIT_USAGE, "{bad:?}");
        }
        // Well-formed, but nobody listens: 2, as initctl without its init.
        assert_eq!(code(&[ep, "list-machines"]), EXIT_USAGE);
        assert_eq!(code(&[ep, "--help"]), 0);
    }

    #[test]
    fn short_ids_as_fleetctl() {
        let o = |full| Opts {
            ep: Endpoint::Unix("/x".into()),
            no_legend: false,
            full,
            block_attempts: 0,
            no_block: false,
        };
        assert_eq!(short_id(&o(false), "0123456789ab"), "01234567...");
        assert_eq!(short_id(&o(false), "abc"), "abc...");
        assert_eq!(short_id(&o(true), "0123456789ab"), "0123456789ab");
        let ips = BTreeMap::from([("0123456789ab".to_string(), "10.0.0.1".to_string())]);
        assert_eq!(
            machine_label(&o(false), "0123456789ab", &ips),
            "01234567.../10.0.0.1"
        );
    }

    #[test]
    fn names_get_service_appended() {
        assert_eq!(unit_name("foo"), "foo.service");
        assert_eq!(unit_name("dir/foo.service"), "foo.service");
        assert_eq!(unit_name("foo.timer"), "foo.timer");
        assert_eq!(unit_name("foo@1"), "foo@1.service");
        assert_eq!(unit_name("a.b"), "a.b.service");
    }
}
