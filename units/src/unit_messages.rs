//! The manager's own messages about a unit, as systemd's PID 1 writes them
//! to the journal: `Starting …`, `Started …`, `Stopping …`, `Stopped …`,
//! `… Failed with result '…'`, each with the unit's `UNIT=` field and
//! systemd's message ID (docs/systemd-units.md, "The manager's messages in
//! the journal"). `journalctl -u UNIT` shows a message of PID 1 whose
//! `UNIT=` names the unit, so they are what an administrator sees of a
//! daemon that logs to its own files (postgresql, redis) or not at all.
//!
//! This module decides which messages a change of state makes and writes
//! them in journald's native protocol; the init sends them.

use crate::state::{FailureKind, UnitState};

/// systemd's message IDs (`sd-messages.h`), as journald stores them.
pub mod id {
    /// `SD_MESSAGE_UNIT_STARTING`.
    pub const STARTING: &str = "7d4958e842da4a758f6c1cdc7b36dcc5";
    /// `SD_MESSAGE_UNIT_STARTED`.
    pub const STARTED: &str = "39f53479d3a045ac8e11786248231fbf";
    /// `SD_MESSAGE_UNIT_STOPPING`.
    pub const STOPPING: &str = "de5b426a63be47a7b6ac3eaac82e2f6f";
    /// `SD_MESSAGE_UNIT_STOPPED`.
    pub const STOPPED: &str = "9d1aaa27d60140bd96365438aad20286";
    /// `SD_MESSAGE_UNIT_FAILED`: a start job that failed.
    pub const FAILED: &str = "be02cf6855d2428ba40df7e9d022f03d";
    /// `SD_MESSAGE_UNIT_SUCCESS`: deactivated with success.
    pub const SUCCESS: &str = "7ad2d189f7e94e70a38c781354912448";
    /// `SD_MESSAGE_UNIT_FAILURE_RESULT`: the unit's result.
    pub const FAILURE_RESULT: &str = "d9b373ed55a64feb8242e02dbe79a49c";
}

/// syslog priorities.
const ERR: u8 = 3;
const WARNING: u8 = 4;
const INFO: u8 = 6;

/// What kind of unit the message is about: systemd words a target's and a
/// oneshot's messages in their own way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A `.target`: `Reached target …`, `Stopped target …`, nothing when
    /// it begins either.
    Target,
    /// A service that is done when its command exits (`Type=oneshot`):
    /// `Finished …`.
    Oneshot,
    /// Every other unit.
    Other,
}

/// One message of the manager about a unit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// The syslog priority.
    pub priority: u8,
    /// systemd's message ID ([`id`]).
    pub id: &'static str,
    /// The text.
    pub text: String,
    /// `JOB_TYPE=` and `JOB_RESULT=`, or `UNIT_RESULT=`: what systemd
    /// adds to the message.
    pub fields: Vec<(&'static str, &'static str)>,
}

/// A unit's change of state, with what the messages name.
#[derive(Debug, Clone, Copy)]
pub struct Change<'a> {
    /// The unit's name.
    pub unit: &'a str,
    /// Its description, if it has one.
    pub description: Option<&'a str>,
    /// What kind of unit it is.
    pub kind: Kind,
    /// The state it was in.
    pub last: UnitState,
    /// The state it is in now.
    pub now: UnitState,
    /// Its result, when it failed.
    pub result: Option<FailureKind>,
    /// It went from `exited` to inactive at once: a oneshot without
    /// `RemainAfterExit=`, which systemd shows inactive when it is done.
    pub ended: bool,
}

impl Change<'_> {
    /// The manager's messages for this change, in systemd's order.
    pub fn messages(&self) -> Vec<Message> {
        // systemd 252's `StatusUnitFormat=combined`, its default: the name
        // and the description (`ssh.service - OpenBSD Secure Shell server`).
        let d = match self.description {
            Some(text) if !text.is_empty() && text != self.unit => {
                format!("{} - {text}", self.unit)
            }
            _ => self.unit.to_string(),
        };
        let target = self.kind == Kind::Target;
        let job = |priority, id, text: String, fields: Vec<_>| Message {
            priority,
            id,
            text,
            fields,
        };
        let start_done = || {
            job(
                INFO,
                id::STARTED,
                match self.kind {
                    Kind::Target => format!("Reached target {d}."),
                    Kind::Oneshot => format!("Finished {d}."),
                    Kind::Other => format!("Started {d}."),
                },
                vec![("JOB_TYPE", "start"), ("JOB_RESULT", "done")],
            )
        };
        let deactivated = || {
            job(
                INFO,
                id::SUCCESS,
                format!("{}: Deactivated successfully.", self.unit),
                Vec::new(),
            )
        };
        let starting = || {
            job(
                INFO,
                id::STARTING,
                format!("Starting {d}..."),
                vec![("JOB_TYPE", "start")],
            )
        };
        let was_active = self.last.is_active();
        // Up at once (a service ready when spawned) or failed at once: the
        // start began all the same.
        let began = (!target && self.last != UnitState::Starting).then(starting);
        match self.now {
            UnitState::Starting if !was_active && !target => vec![starting()],
            UnitState::Running | UnitState::Exited if !was_active => {
                let mut out: Vec<Message> = began.into_iter().collect();
                if self.ended && !target {
                    out.push(deactivated());
                }
                out.push(start_done());
                out
            }
            UnitState::Stopping if (was_active || self.last == UnitState::Starting) && !target => {
                vec![job(
                    INFO,
                    id::STOPPING,
                    format!("Stopping {d}..."),
                    vec![("JOB_TYPE", "stop")],
                )]
            }
            UnitState::Disabled if was_active || self.last == UnitState::Stopping => {
                let stopped = job(
                    INFO,
                    id::STOPPED,
                    match self.kind {
                        Kind::Target => format!("Stopped target {d}."),
                        Kind::Oneshot | Kind::Other => format!("Stopped {d}."),
                    },
                    vec![("JOB_TYPE", "stop"), ("JOB_RESULT", "done")],
                );
                match (target, self.last) {
                    (true, _) => vec![stopped],
                    (false, UnitState::Stopping) => vec![deactivated(), stopped],
                    // It ended by itself: no stop job, no `Stopped`.
                    (false, _) => vec![deactivated()],
                }
            }
            UnitState::Failed if self.last != UnitState::Failed => {
                let result = self.result.map_or("resources", FailureKind::as_str);
                let mut out: Vec<Message> = match self.last {
                    UnitState::Waiting | UnitState::Disabled => began.into_iter().collect(),
                    _ => Vec::new(),
                };
                out.push(job(
                    WARNING,
                    id::FAILURE_RESULT,
                    format!("{}: Failed with result '{result}'.", self.unit),
                    vec![("UNIT_RESULT", result)],
                ));
                if matches!(
                    self.last,
                    UnitState::Starting | UnitState::Waiting | UnitState::Disabled
                ) {
                    out.push(job(
                        ERR,
                        id::FAILED,
                        format!("Failed to start {d}."),
                        vec![("JOB_TYPE", "start"), ("JOB_RESULT", "failed")],
                    ));
                }
                out
            }
            _ => Vec::new(),
        }
    }
}

impl Message {
    /// The message as one datagram of journald's native protocol (its
    /// `/run/systemd/journal/socket`) from the manager about `unit` (no
    /// `MESSAGE_ID=` when `id` is empty): a
    /// `FIELD=value` line each, a value with a newline in it written as
    /// the field's name, a newline, its length (64 bits, little-endian),
    /// the value and a newline.
    pub fn native(&self, unit: &str) -> Vec<u8> {
        let mut out = Vec::with_capacity(160 + self.text.len() + unit.len());
        let priority = [b'0' + self.priority.min(7)];
        let mut field = |name: &str, value: &[u8]| {
            out.extend_from_slice(name.as_bytes());
            if value.contains(&b'\n') {
                out.push(b'\n');
                out.extend_from_slice(&(value.len() as u64).to_le_bytes());
            } else {
                out.push(b'=');
            }
            out.extend_from_slice(value);
            out.push(b'\n');
        };
        field("MESSAGE", self.text.as_bytes());
        if !self.id.is_empty() {
            field("MESSAGE_ID", self.id.as_bytes());
        }
        field("PRIORITY", &priority);
        field("SYSLOG_FACILITY", b"3");
        field("SYSLOG_IDENTIFIER", b"systemd");
        field("UNIT", unit.as_bytes());
        for (name, value) in &self.fields {
            field(name, value.as_bytes());
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use UnitState as S;

    fn change(kind: Kind, last: UnitState, now: UnitState) -> Change<'static> {
        Change {
            unit: "redis-server.service",
            description: Some("A"),
            kind,
            last,
            now,
            result: None,
            ended: false,
        }
    }

    fn texts(c: Change) -> Vec<String> {
        c.messages().into_iter().map(|m| m.text).collect()
    }

    #[test]
    fn a_service_started_and_stopped_as_systemd_words_it() {
        let k = Kind::Other;
        assert_eq!(
            texts(change(k, S::Waiting, S::Starting)),
            ["Starting redis-server.service - A..."]
        );
        assert_eq!(
            texts(change(k, S::Starting, S::Running)),
            ["Started redis-server.service - A."]
        );
        // Ready at once: the start began all the same.
        assert_eq!(
            texts(change(k, S::Waiting, S::Running)),
            [
                "Starting redis-server.service - A...",
                "Started redis-server.service - A."
            ]
        );
        assert_eq!(
            texts(change(k, S::Running, S::Stopping)),
            ["Stopping redis-server.service - A..."]
        );
        assert_eq!(
            texts(change(k, S::Stopping, S::Disabled)),
            [
                "redis-server.service: Deactivated successfully.",
                "Stopped redis-server.service - A."
            ]
        );
        // Ended by itself, with success: no stop job was done.
        assert_eq!(
            texts(change(k, S::Running, S::Disabled)),
            ["redis-server.service: Deactivated successfully."]
        );
        // No change worth a message: a reload, a wait.
        assert!(texts(change(k, S::Running, S::Reloading)).is_empty());
        assert!(texts(change(k, S::Disabled, S::Waiting)).is_empty());
    }

    #[test]
    fn a_unit_without_a_description_is_named_alone() {
        let mut c = change(Kind::Other, S::Starting, S::Running);
        c.description = None;
        assert_eq!(texts(c), ["Started redis-server.service."]);
        c.description = Some("redis-server.service");
        assert_eq!(texts(c), ["Started redis-server.service."]);
    }

    #[test]
    fn ids_and_job_fields_are_systemds() {
        let m = change(Kind::Other, S::Starting, S::Running).messages();
        assert_eq!(m[0].id, id::STARTED);
        assert_eq!(m[0].priority, INFO);
        assert_eq!(m[0].fields, [("JOB_TYPE", "start"), ("JOB_RESULT", "done")]);
        let m = change(Kind::Other, S::Stopping, S::Disabled).messages();
        assert_eq!((m[0].id, m[1].id), (id::SUCCESS, id::STOPPED));
    }

    #[test]
    fn a_failed_start_says_its_result_then_that_the_start_failed() {
        let mut c = change(Kind::Other, S::Starting, S::Failed);
        c.result = Some(FailureKind::Timeout);
        let m = c.messages();
        assert_eq!(
            m.iter().map(|m| m.text.as_str()).collect::<Vec<_>>(),
            [
                "redis-server.service: Failed with result 'timeout'.",
                "Failed to start redis-server.service - A."
            ]
        );
        assert_eq!((m[0].priority, m[1].priority), (WARNING, ERR));
        assert_eq!(m[0].fields, [("UNIT_RESULT", "timeout")]);
        assert_eq!(m[1].id, id::FAILED);
        // Failed while running: the result only.
        c.last = S::Running;
        c.result = Some(FailureKind::ExitCode);
        assert_eq!(
            texts(c),
            ["redis-server.service: Failed with result 'exit-code'."]
        );
    }

    #[test]
    fn targets_and_oneshots_have_their_own_words() {
        assert!(texts(change(Kind::Target, S::Waiting, S::Starting)).is_empty());
        assert_eq!(
            texts(change(Kind::Target, S::Waiting, S::Running)),
            ["Reached target redis-server.service - A."]
        );
        assert_eq!(
            texts(change(Kind::Target, S::Starting, S::Running)),
            ["Reached target redis-server.service - A."]
        );
        assert_eq!(
            texts(change(Kind::Target, S::Running, S::Disabled)),
            ["Stopped target redis-server.service - A."]
        );
        let mut done = change(Kind::Oneshot, S::Starting, S::Exited);
        done.ended = true;
        assert_eq!(
            texts(done),
            [
                "redis-server.service: Deactivated successfully.",
                "Finished redis-server.service - A."
            ]
        );
    }

    #[test]
    fn the_native_datagram_has_a_line_a_field_and_binary_values_with_newlines() {
        let m = Message {
            priority: INFO,
            id: id::STARTED,
            text: "Started a.".into(),
            fields: vec![("JOB_TYPE", "start")],
        };
        assert_eq!(
            String::from_utf8(m.native("a.service")).unwrap(),
            "MESSAGE=Started a.\nMESSAGE_ID=39f53479d3a045ac8e11786248231fbf\nPRIORITY=6\n\
             SYSLOG_FACILITY=3\nSYSLOG_IDENTIFIER=systemd\nUNIT=a.service\nJOB_TYPE=start\n"
        );
        let two = Message {
            text: "one\ntwo".into(),
            ..m
        };
        let d = two.native("a.service");
        let mut want = b"MESSAGE\n".to_vec();
        want.extend_from_slice(&7u64.to_le_bytes());
        want.extend_from_slice(b"one\ntwo\n");
        assert!(d.starts_with(&want), "{d:?}");
        let own = Message {
            priority: 4,
            id: "",
            text: "Failed.".into(),
            fields: Vec::new(),
        };
        assert_eq!(
            String::from_utf8(own.native("init.scope")).unwrap(),
            "MESSAGE=Failed.\nPRIORITY=4\nSYSLOG_FACILITY=3\nSYSLOG_IDENTIFIER=systemd\nUNIT=init.scope\n"
        );
    }
}
