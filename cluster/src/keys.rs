//! The etcd key layout, all under one prefix (`--etcd-prefix`, default
//! `/flotilla/`). `docs/cluster.md` documents it; this module is the only
//! place that spells a key.
//!
//! | key | value | written by | lease |
//! | --- | --- | --- | --- |
//! | `units/<unit>` | [`crate::model::StoredUnit`] JSON | API | none |
//! | `desired/<unit>` | `inactive` / `loaded` / `launched` | API | none |
//! | `placement/<unit>` | machine ID (non-global units) | engine | none |
//! | `unscheduled/<unit>` | why a unit that should run is not scheduled (text) | engine | none |
//! | `schedule/<machine>/<unit>` | [`crate::model::Assignment`] JSON | engine | none |
//! | `state/<machine>/<unit>` | [`crate::model::StoredState`] JSON | agent | agent's |
//! | `machines/<machine>` | [`crate::model::Machine`] JSON | agent, API (metadata) | agent's |
//! | `metadata/<machine>` | API-set metadata JSON (`{"k":"v","gone":null}`) | API | none |
//! | `engine/leader` | machine ID of the leader | engine | leader's |
//! | `engine/committer` | [`crate::forward::Committer`] JSON: the leader's advertised API | engine | leader's |
//! | `logreq/<machine>/<unit>` | [`crate::model::LogRequest`] JSON | API | none |
//! | `logs/<machine>/<unit>` | [`crate::model::LogAnswer`] JSON | agent | agent's |
//! | `logfollow/<machine>/<id>` | [`crate::model::LogFollow`] JSON | API | the asker's |
//! | `logtail/<machine>/<id>` | [`crate::model::LogBatch`] JSON | agent | agent's |
//!
//! Each agent watches only `schedule/<its machine>/`, `metadata/<its
//! machine>`, `logreq/<its machine>/` and `logfollow/<its machine>/`; the engine's leader watches
//! `units/`, `desired/`, `machines/` and `engine/leader` (four watches on
//! one stream), and reads `schedule/`, `placement/` and `unscheduled/`
//! when it becomes leader.

/// The key builder for one prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Keys {
    prefix: String,
}

impl Keys {
    /// Keys under `prefix` (a trailing `/` is added when missing).
    pub fn new(prefix: &str) -> Keys {
        let mut p = prefix.to_string();
        if !p.ends_with('/') {
            p.push('/');
        }
        Keys { prefix: p }
    }

    /// The prefix itself (ends with `/`).
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// `units/` prefix.
    pub fn units(&self) -> String {
        format!("{}units/", self.prefix)
    }
    /// One unit's file.
    pub fn unit(&self, name: &str) -> String {
        format!("{}units/{name}", self.prefix)
    }
    /// `desired/` prefix.
    pub fn desireds(&self) -> String {
        format!("{}desired/", self.prefix)
    }
    /// One unit's desired state.
    pub fn desired(&self, name: &str) -> String {
        format!("{}desired/{name}", self.prefix)
    }
    /// `placement/` prefix.
    pub fn placements(&self) -> String {
        format!("{}placement/", self.prefix)
    }
    /// A non-global unit's machine.
    pub fn placement(&self, name: &str) -> String {
        format!("{}placement/{name}", self.prefix)
    }
    /// `unscheduled/` prefix.
    pub fn unscheduled_all(&self) -> String {
        format!("{}unscheduled/", self.prefix)
    }
    /// Why a unit that should run is not scheduled.
    pub fn unscheduled(&self, name: &str) -> String {
        format!("{}unscheduled/{name}", self.prefix)
    }
    /// `schedule/` prefix.
    pub fn schedules(&self) -> String {
        format!("{}schedule/", self.prefix)
    }
    /// One machine's schedule prefix.
    pub fn schedule_of(&self, machine: &str) -> String {
        format!("{}schedule/{machine}/", self.prefix)
    }
    /// One unit assigned to one machine.
    pub fn schedule(&self, machine: &str, name: &str) -> String {
        format!("{}schedule/{machine}/{name}", self.prefix)
    }
    /// `state/` prefix.
    pub fn states(&self) -> String {
        format!("{}state/", self.prefix)
    }
    /// One machine's states prefix.
    pub fn states_of(&self, machine: &str) -> String {
        format!("{}state/{machine}/", self.prefix)
    }
    /// One unit's state on one machine.
    pub fn state(&self, machine: &str, name: &str) -> String {
        format!("{}state/{machine}/{name}", self.prefix)
    }
    /// `machines/` prefix.
    pub fn machines(&self) -> String {
        format!("{}machines/", self.prefix)
    }
    /// One machine's presence.
    pub fn machine(&self, id: &str) -> String {
        format!("{}machines/{id}", self.prefix)
    }
    /// The claim of a machine ID by one clusterd (`crate::claim`).
    pub fn claim(&self, id: &str) -> String {
        format!("{}claims/{id}", self.prefix)
    }
    /// `metadata/` prefix.
    pub fn metadata_all(&self) -> String {
        format!("{}metadata/", self.prefix)
    }
    /// API-set metadata of one machine (kept when the machine is away).
    pub fn metadata(&self, id: &str) -> String {
        format!("{}metadata/{id}", self.prefix)
    }
    /// The engine leader key.
    pub fn leader(&self) -> String {
        format!("{}engine/leader", self.prefix)
    }
    /// Where the API's unit writes go: the engine leader's advertised API
    /// (`docs/cluster.md`, "One committer"), bound to the leader's lease.
    pub fn committer(&self) -> String {
        format!("{}engine/committer", self.prefix)
    }
    /// One machine's log requests prefix.
    pub fn log_requests_of(&self, machine: &str) -> String {
        format!("{}logreq/{machine}/", self.prefix)
    }
    /// A request for a unit's log lines from one machine.
    pub fn log_request(&self, machine: &str, name: &str) -> String {
        format!("{}logreq/{machine}/{name}", self.prefix)
    }
    /// A machine's answer to a log request.
    pub fn log_answer(&self, machine: &str, name: &str) -> String {
        format!("{}logs/{machine}/{name}", self.prefix)
    }

    /// One machine's followed-log requests prefix.
    pub fn log_follows_of(&self, machine: &str) -> String {
        format!("{}logfollow/{machine}/", self.prefix)
    }
    /// A request to follow a unit's log on one machine (bound to the
    /// asker's lease: it ends when the asker goes).
    pub fn log_follow(&self, machine: &str, id: &str) -> String {
        format!("{}logfollow/{machine}/{id}", self.prefix)
    }
    /// The lines a machine sends for a followed log, one batch at a time.
    pub fn log_tail(&self, machine: &str, id: &str) -> String {
        format!("{}logtail/{machine}/{id}", self.prefix)
    }

    /// Classifies a key read from etcd.
    pub fn parse<'a>(&self, key: &'a str) -> Key<'a> {
        let Some(rest) = key.strip_prefix(self.prefix.as_str()) else {
            return Key::Other;
        };
        let Some((kind, rest)) = rest.split_once('/') else {
            return Key::Other;
        };
        let two = || {
            rest.split_once('/')
                .filter(|(m, u)| !m.is_empty() && !u.is_empty() && !u.contains('/'))
        };
        let one = || Some(rest).filter(|r| !r.is_empty() && !r.contains('/'));
        match kind {
            "units" => one().map(Key::Unit),
            "desired" => one().map(Key::Desired),
            "placement" => one().map(Key::Placement),
            "unscheduled" => one().map(Key::Unscheduled),
            "machines" => one().map(Key::Machine),
            "metadata" => one().map(Key::Metadata),
            "schedule" => two().map(|(m, u)| Key::Schedule(m, u)),
            "state" => two().map(|(m, u)| Key::State(m, u)),
            "logreq" => two().map(|(m, u)| Key::LogRequest(m, u)),
            "logs" => two().map(|(m, u)| Key::LogAnswer(m, u)),
            "logfollow" => two().map(|(m, i)| Key::LogFollow(m, i)),
            "logtail" => two().map(|(m, i)| Key::LogTail(m, i)),
            "engine" if rest == "leader" => Some(Key::Leader),
            _ => None,
        }
        .unwrap_or(Key::Other)
    }
}

/// A key, classified.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key<'a> {
    /// `units/<unit>`.
    Unit(&'a str),
    /// `desired/<unit>`.
    Desired(&'a str),
    /// `placement/<unit>`.
    Placement(&'a str),
    /// `unscheduled/<unit>`.
    Unscheduled(&'a str),
    /// `schedule/<machine>/<unit>`.
    Schedule(&'a str, &'a str),
    /// `state/<machine>/<unit>`.
    State(&'a str, &'a str),
    /// `machines/<machine>`.
    Machine(&'a str),
    /// `metadata/<machine>`.
    Metadata(&'a str),
    /// `engine/leader`.
    Leader,
    /// `logreq/<machine>/<unit>`.
    LogRequest(&'a str, &'a str),
    /// `logs/<machine>/<unit>`.
    LogAnswer(&'a str, &'a str),
    /// `logfollow/<machine>/<id>`.
    LogFollow(&'a str, &'a str),
    /// `logtail/<machine>/<id>`.
    LogTail(&'a str, &'a str),
    /// Anything else (ignored).
    Other,
}

/// Checks a machine ID: it becomes part of keys, so no `/` and not empty.
pub fn valid_machine_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 128
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_.:-".contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_round_trips() {
        let k = Keys::new("/flotilla");
        assert_eq!(k.unit("a.service"), "/flotilla/units/a.service");
        assert_eq!(
            k.schedule("m1", "a.service"),
            "/flotilla/schedule/m1/a.service"
        );
        let table = [
            (k.unit("a.service"), Key::Unit("a.service")),
            (k.desired("a.service"), Key::Desired("a.service")),
            (k.placement("a.service"), Key::Placement("a.service")),
            (k.unscheduled("a.service"), Key::Unscheduled("a.service")),
            (
                k.schedule("m1", "a.service"),
                Key::Schedule("m1", "a.service"),
            ),
            (k.state("m1", "a.service"), Key::State("m1", "a.service")),
            (k.machine("m1"), Key::Machine("m1")),
            (k.leader(), Key::Leader),
            (k.metadata("m1"), Key::Metadata("m1")),
            (
                k.log_request("m1", "a.service"),
                Key::LogRequest("m1", "a.service"),
            ),
            (
                k.log_answer("m1", "a.service"),
                Key::LogAnswer("m1", "a.service"),
            ),
            (k.log_follow("m1", "x1"), Key::LogFollow("m1", "x1")),
            (k.log_tail("m1", "x1"), Key::LogTail("m1", "x1")),
            ("/flotilla/units/".to_string(), Key::Other),
            ("/flotilla/state/m1".to_string(), Key::Other),
            ("/other/units/a.service".to_string(), Key::Other),
            ("/flotilla/zzz/a".to_string(), Key::Other),
        ];
        for (key, want) in &table {
            assert_eq!(k.parse(key), *want, "{key}");
        }
        assert!(valid_machine_id("0123abcd"));
        assert!(!valid_machine_id("a/b"));
        assert!(!valid_machine_id(""));
    }
}
