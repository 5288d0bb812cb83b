//! The agent's side of the local init: what the init has of the transient
//! set `cluster`, and the differences sent to bring it to what etcd assigns.
//!
//! After (re)connecting, the agent lists the init once (states, and which
//! units of the set the init has) and sends the whole assignment as one
//! `transient-patch` (in chunks: a request line has a size limit). From then
//! on each change sends only the units it concerns: upserts for new or
//! changed unit files, removals for units no longer assigned, and the
//! virtual target `cluster` again only when the set of launched units
//! changed. An init that refuses a patch (`invalid`) changed nothing; the
//! agent then sends the removals, each upsert on its own and the target
//! last, so that one bad unit (a dependency cycle, a name taken by a local
//! unit) is reported as `error/inactive/dead` and the others run.

use crate::control;
use crate::model::{Assignment, ClusterState};
use flotilla_units::protocol::{ErrorCode, Reply, Request, UnitStatus};
use flotilla_units::spec::{UnitSpec, UnitType};
use flotilla_units::specifier::SpecifierContext;
use flotilla_units::state::UnitState;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The name of the transient set and of the virtual target unit.
pub const SET: &str = "cluster";

/// Upserts per request: a patch of 10,000 units stays under the init's
/// request-line limit when sent in parts.
const PATCH_CHUNK: usize = 500;

/// What the init has of the set, and the unit files' translations.
#[derive(Debug, Default)]
pub struct Local {
    /// Unit -> (hash, desired) the init has; `None` until listed after
    /// (re)connecting.
    pub applied: Option<BTreeMap<String, (String, ClusterState)>>,
    /// Units left out (their file does not translate, or the init refused
    /// it), with why.
    pub excluded: BTreeMap<String, String>,
    /// The init's states of the units of the set.
    pub states: BTreeMap<String, UnitState>,
    /// The launched units of `applied`.
    launched: BTreeSet<String>,
    /// The init's target `cluster` waits for exactly `launched`.
    target_sent: bool,
    /// Translations by unit, with the hash they are of.
    cache: BTreeMap<String, (String, Result<UnitSpec, String>)>,
    /// The connection to the init, kept between changes.
    conn: Option<control::Connection>,
    /// The `wants` each unit was last sent with from other units'
    /// `[Install] WantedBy=` ([`super::install`]).
    install_wants: BTreeMap<String, BTreeSet<String>>,
    /// What specifiers resolve to on this machine (`%m` its ID, `%H` …):
    /// an instance (`web@1.service`, the template's options under the
    /// instance's name) is translated with `%i` its instance.
    facts: SpecifierContext,
}

/// What one reconciliation did: the units whose reported state may change.
pub type Touched = BTreeSet<String>;

impl Local {
    /// The local side of the machine `machine_id` (its ID is `%m`; the
    /// host name and boot ID are read from `/proc`).
    pub fn on_machine(machine_id: &str) -> Local {
        let mut facts = SpecifierContext::system("");
        facts.machine_id = Some(machine_id.to_string());
        facts.hostname = crate::host::hostname();
        facts.boot_id = crate::host::boot_id().map(|b| b.replace('-', ""));
        facts.kernel_release = crate::host::kernel_release();
        Local {
            facts,
            ..Local::default()
        }
    }

    /// The init (re)connected: what it has is unknown until listed.
    pub fn reset(&mut self) {
        self.conn = None;
        self.applied = None;
        self.launched.clear();
        self.target_sent = false;
    }

    /// A state change the init reported; true for a unit of the set.
    pub fn observe(&mut self, st: &UnitStatus) -> bool {
        let ours = self
            .applied
            .as_ref()
            .is_some_and(|a| a.contains_key(&st.unit));
        if ours {
            self.states.insert(st.unit.clone(), st.state);
        }
        ours
    }

    fn translated(&mut self, name: &str, a: &Assignment) -> Result<UnitSpec, String> {
        if let Some((h, r)) = self.cache.get(name) {
            if *h == a.hash {
                return r.clone();
            }
        }
        let file = format!("fleet:{name}");
        let options = super::limits::with_limits(name, &a.options);
        let parsed = flotilla_systemd::translate_with(&self.facts, &file, name, &options);
        let r = match parsed.spec {
            Some(mut spec) => {
                if !spec.provides.iter().any(|p| p == name) {
                    spec.provides.push(name.to_string());
                }
                Ok(spec)
            }
            None => Err(parsed
                .diagnostics
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join("; ")),
        };
        self.cache
            .insert(name.to_string(), (a.hash.clone(), r.clone()));
        r
    }

    /// Brings the init's set to `assigned` for the units in `dirty` (every
    /// unit after a reconnection); returns the units whose reported state
    /// may have changed. On an error, what the init has is unknown: the
    /// caller resets ([`Local::reset`]) and the next call lists it again.
    pub async fn reconcile(
        &mut self,
        control: &Path,
        assigned: &BTreeMap<String, Assignment>,
        dirty: &BTreeSet<String>,
    ) -> std::io::Result<Touched> {
        let full = self.applied.is_none();
        let members = if full {
            self.cache.retain(|n, _| assigned.contains_key(n));
            self.list(control).await?
        } else {
            BTreeSet::new()
        };
        let wants = super::install::install_wants(assigned);
        // Units whose wants from other units' `[Install]` changed: sent again.
        let rewanted: BTreeSet<String> = wants
            .keys()
            .chain(self.install_wants.keys())
            .filter(|n| wants.get(*n) != self.install_wants.get(*n))
            .cloned()
            .collect();
        let names: BTreeSet<String> = if full {
            members.iter().chain(assigned.keys()).cloned().collect()
        } else {
            dirty.iter().chain(&rewanted).cloned().collect()
        };
        let mut applied = self.applied.take().unwrap_or_default();
        let mut upsert = Vec::new();
        let mut remove = Vec::new();
        // Units whose new file replaces one the init has.
        let mut replacing = BTreeSet::new();
        for n in &names {
            let spec = assigned.get(n).map(|a| (a, self.translated(n, a)));
            match spec {
                Some((a, Ok(mut spec))) => {
                    self.excluded.remove(n);
                    for w in wants.get(n).into_iter().flatten() {
                        if !spec.wants.contains(w) {
                            spec.wants.push(w.clone());
                        }
                    }
                    let had = applied.get(n);
                    if had.is_none_or(|(h, _)| *h != a.hash) || rewanted.contains(n) {
                        if had.is_some() || members.contains(n) {
                            replacing.insert(n.clone());
                        }
                        upsert.push(spec);
                    }
                    applied.insert(n.clone(), (a.hash.clone(), a.desired));
                    self.set_launched(n, a.desired == ClusterState::Launched);
                }
                other => {
                    match other {
                        Some((_, Err(why))) => self.excluded.insert(n.clone(), why),
                        _ => {
                            self.cache.remove(n);
                            self.excluded.remove(n)
                        }
                    };
                    self.set_launched(n, false);
                    if applied.remove(n).is_some() || members.contains(n) {
                        remove.push(n.clone());
                        self.states.remove(n);
                    }
                }
            }
        }
        let target = (!self.target_sent).then(|| target_unit(&self.launched));
        if !upsert.is_empty() || !remove.is_empty() || target.is_some() {
            self.target_sent = true;
            if let Err(why) = self
                .send(control, upsert.clone(), remove.clone(), target)
                .await?
            {
                // Nothing changed: find the units it refuses one by one.
                eprintln!(
                    "clusterd: agent: the init refused the changes ({why}); applying them one by one"
                );
                let refused = self.one_by_one(control, upsert, remove).await?;
                // A refused new file of a unit the init runs: the old one stops.
                let mut stale = Vec::new();
                for (n, why) in refused {
                    applied.remove(&n);
                    self.set_launched(&n, false);
                    if replacing.contains(&n) {
                        stale.push(n.clone());
                    }
                    self.excluded
                        .insert(n, format!("refused by the init: {why}"));
                }
                let target = target_unit(&self.launched);
                if let Err(why) = self.send(control, Vec::new(), stale, Some(target)).await? {
                    return Err(std::io::Error::other(format!(
                        "the init refused the target {SET}: {why}"
                    )));
                }
            }
        }
        self.applied = Some(applied);
        self.install_wants = wants;
        Ok(names)
    }

    /// Notes whether an applied unit is launched; the target `cluster` is
    /// sent again when that changes the units it waits for.
    fn set_launched(&mut self, name: &str, launched: bool) {
        let changed = if launched {
            self.launched.insert(name.to_string())
        } else {
            self.launched.remove(name)
        };
        if changed {
            self.target_sent = false;
        }
    }

    /// Lists the init: the states of the set's units, and the set's members.
    async fn list(&mut self, control: &Path) -> std::io::Result<BTreeSet<String>> {
        let reply = self.request(control, Request::List).await?;
        let Reply::List { units } = reply else {
            return Err(std::io::Error::other(format!(
                "unexpected reply to list: {reply:?}"
            )));
        };
        let source = format!("transient:{SET}");
        self.states.clear();
        let mut members = BTreeSet::new();
        for u in units {
            if u.source == source && u.unit != SET {
                self.states.insert(u.unit.clone(), u.state);
                members.insert(u.unit);
            }
        }
        Ok(members)
    }

    /// One request on the kept connection (opened when there is none,
    /// dropped when it fails).
    async fn request(&mut self, control: &Path, req: Request) -> std::io::Result<Reply> {
        if self.conn.is_none() {
            self.conn = Some(control::Connection::open(control).await?);
        }
        let conn = self.conn.as_mut().expect("just opened");
        let r = conn.request(req).await;
        if r.is_err() {
            self.conn = None;
        }
        Ok(r?)
    }

    /// Sends a patch in parts; `Ok(Err(message))` when the init refused a
    /// part as invalid (that part changed nothing).
    async fn send(
        &mut self,
        control: &Path,
        upsert: Vec<UnitSpec>,
        remove: Vec<String>,
        target: Option<UnitSpec>,
    ) -> std::io::Result<Result<(), String>> {
        let mut parts: Vec<(Vec<UnitSpec>, Vec<String>)> = Vec::new();
        let mut it = upsert.into_iter().peekable();
        let mut remove = Some(remove);
        while it.peek().is_some() || remove.is_some() {
            let chunk: Vec<UnitSpec> = it.by_ref().take(PATCH_CHUNK).collect();
            parts.push((chunk, remove.take().unwrap_or_default()));
        }
        if let Some(t) = target {
            match parts.last_mut() {
                Some((u, _)) if u.len() < PATCH_CHUNK => u.push(t),
                _ => parts.push((vec![t], Vec::new())),
            }
        }
        for (upsert, remove) in parts {
            if upsert.is_empty() && remove.is_empty() {
                continue;
            }
            let reply = self
                .request(
                    control,
                    Request::TransientPatch {
                        set: SET.into(),
                        upsert,
                        remove,
                    },
                )
                .await?;
            match reply {
                Reply::Applied(_) => {}
                Reply::Error {
                    code: ErrorCode::Invalid,
                    message,
                    details,
                } => return Ok(Err(refusal(&message, &details))),
                other => {
                    return Err(std::io::Error::other(format!(
                        "the init did not apply the set: {other:?}"
                    )))
                }
            }
        }
        Ok(Ok(()))
    }

    /// The patch was refused: the removals, then each upsert alone;
    /// returns the units refused alone, with why.
    async fn one_by_one(
        &mut self,
        control: &Path,
        upsert: Vec<UnitSpec>,
        remove: Vec<String>,
    ) -> std::io::Result<Vec<(String, String)>> {
        if let Err(why) = self.send(control, Vec::new(), remove, None).await? {
            return Err(std::io::Error::other(format!(
                "the init refused to remove units: {why}"
            )));
        }
        let mut refused = Vec::new();
        for spec in upsert {
            let name = spec.name.clone();
            if let Err(why) = self.send(control, vec![spec], Vec::new(), None).await? {
                refused.push((name, why));
            }
        }
        Ok(refused)
    }

    /// Whether the init has the unit with file `hash`, launched.
    pub fn runs_launched(&self, name: &str, hash: &str) -> bool {
        self.applied
            .as_ref()
            .and_then(|a| a.get(name))
            .is_some_and(|(h, d)| h == hash && *d == ClusterState::Launched)
    }

    /// Restarts a launched unit (the init's `restart`: stopped, started).
    pub async fn restart(&mut self, control: &Path, name: &str) -> std::io::Result<()> {
        let req = Request::Restart {
            unit: name.to_string(),
        };
        match self.request(control, req).await? {
            Reply::Accepted { .. } => Ok(()),
            other => Err(std::io::Error::other(format!(
                "the init did not restart it: {other:?}"
            ))),
        }
    }

    /// (LOAD, ACTIVE, SUB, currentState) to report for an assigned unit,
    /// `None` while the init has not taken it (or, launched, not reported
    /// its first state).
    pub fn report(
        &self,
        name: &str,
    ) -> Option<(&'static str, &'static str, &'static str, ClusterState)> {
        if self.excluded.contains_key(name) {
            return Some(("error", "inactive", "dead", ClusterState::Inactive));
        }
        let (_, desired) = self.applied.as_ref()?.get(name)?;
        let state = match self.states.get(name) {
            Some(s) => *s,
            // Launched and not reported yet: its start is on the way (one
            // write with the state it reaches, not two).
            None if *desired == ClusterState::Launched => return None,
            // Loaded and not reported since the init took it: it stays in
            // its first state.
            None => UnitState::Disabled,
        };
        let (l, a, s) = systemd_states(Some(state));
        Some((l, a, s, *desired))
    }
}

/// The virtual unit `cluster`, waiting for every launched unit.
fn target_unit(launched: &BTreeSet<String>) -> UnitSpec {
    let mut target = UnitSpec::new(SET, UnitType::Virtual);
    target.description = Some("fleet units launched on this machine".into());
    target.waits_for = launched.iter().cloned().collect();
    target
}

/// An init's refusal as one line (shown to people, never matched).
fn refusal(message: &str, details: &[String]) -> String {
    if details.is_empty() {
        message.to_string()
    } else {
        format!("{message}: {}", details.join("; "))
    }
}

/// systemd's (LOAD, ACTIVE, SUB) for a local state (docs/contract.md §7).
pub fn systemd_states(state: Option<UnitState>) -> (&'static str, &'static str, &'static str) {
    match state {
        None => ("not-found", "inactive", "dead"),
        Some(UnitState::Running) => ("loaded", "active", "running"),
        Some(UnitState::Reloading) => ("loaded", "active", "reload"),
        Some(UnitState::Exited) => ("loaded", "active", "exited"),
        Some(UnitState::Starting) | Some(UnitState::Waiting) => ("loaded", "activating", "start"),
        Some(UnitState::Stopping) => ("loaded", "deactivating", "stop"),
        Some(UnitState::Failed) => ("loaded", "failed", "failed"),
        Some(UnitState::Disabled) => ("loaded", "inactive", "dead"),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use flotilla_units::fleet::UnitOption;

    fn opt(section: &str, name: &str, value: &str) -> UnitOption {
        UnitOption {
            section: section.into(),
            name: name.into(),
            value: value.into(),
        }
    }

    #[test]
    fn an_instance_runs_with_its_specifiers_expanded_for_this_machine() {
        let mut local = Local::on_machine("bbbbbbbb0002");
        let a = Assignment {
            desired: ClusterState::Launched,
            hash: "h".into(),
            options: vec![
                opt("Service", "ExecStart", "/usr/bin/web --port 80%i --name %p"),
                opt("Service", "Environment", "MACHINE=%m UNIT=%n"),
            ],
            global: false,
        };
        let spec = local.translated("web@81.service", &a).unwrap();
        assert_eq!(
            spec.exec_start.unwrap().argv,
            ["/usr/bin/web", "--port", "8081", "--name", "web"]
        );
        assert_eq!(spec.extras.environment["MACHINE"], "bbbbbbbb0002");
        assert_eq!(spec.extras.environment["UNIT"], "web@81.service");
        // A specifier systemd does not know: the unit is left out, said.
        let bad = Assignment {
            hash: "h2".into(),
            options: vec![opt("Service", "ExecStart", "/bin/x %z")],
            ..a
        };
        let err = local.translated("web@82.service", &bad).unwrap_err();
        assert!(err.contains("unknown specifier %z"), "{err}");
    }
}
