//! What a method answers, as one type whatever its D-Bus signature, so
//! that dispatch stays one function and the reply is written in one
//! place ([`Answer::send`]).

use zbus::message::Header;
use zbus::zvariant::{OwnedObjectPath, Value};

/// A row of `ListUnits`: `(ssssssouso)`.
pub type UnitRow = (
    String,
    String,
    String,
    String,
    String,
    String,
    OwnedObjectPath,
    u32,
    String,
    OwnedObjectPath,
);

/// A row of `ListJobs`: `(usssoo)`.
pub type JobRow = (
    u32,
    String,
    String,
    String,
    OwnedObjectPath,
    OwnedObjectPath,
);

/// `EnqueueUnitJob`'s answer: `uososa(uosos)`: the job (id, path), its
/// unit (name, path), its type, and the other jobs the transaction made
/// (each id, path, unit name, unit path, type).
pub type Enqueued = (
    u32,
    OwnedObjectPath,
    String,
    OwnedObjectPath,
    String,
    Vec<(u32, OwnedObjectPath, String, OwnedObjectPath, String)>,
);

/// A unit-file change: `(sss)` type, file, destination.
pub type Change = (String, String, String);

/// A method's answer.
pub enum Answer {
    /// No values.
    Empty,
    /// `o`.
    Path(OwnedObjectPath),
    /// `s`.
    Str(String),
    /// `as`.
    Strs(Vec<String>),
    /// `ao`.
    Paths(Vec<OwnedObjectPath>),
    /// `v`.
    Var(Value<'static>),
    /// `a{sv}`.
    Dict(crate::dict::Dict),
    /// `a(ssssssouso)`.
    Units(Vec<UnitRow>),
    /// `a(usssoo)`.
    Jobs(Vec<JobRow>),
    /// `a(sss)`.
    Changes(Vec<Change>),
    /// `ba(sss)`: whether the units had an `[Install]` section, and the
    /// changes.
    Enabled(bool, Vec<Change>),
    /// `a(ss)`: unit file, state.
    Files(Vec<(String, String)>),
    /// `a(sus)`: cgroup, PID, command line.
    Processes(Vec<(String, u32, String)>),
    /// `uososa(uosos)` ([`Enqueued`]).
    Enqueued(Enqueued),
}

/// An owned object path of ours (always valid: made by `escape`).
pub fn owned_path(p: &str) -> OwnedObjectPath {
    OwnedObjectPath::try_from(p.to_string()).unwrap_or_else(|_| {
        OwnedObjectPath::from(zbus::zvariant::ObjectPath::from_static_str_unchecked("/"))
    })
}

impl Answer {
    /// Replies to `call` on `conn`.
    pub async fn send(self, conn: &zbus::Connection, call: &Header<'_>) -> zbus::Result<()> {
        match self {
            Answer::Empty => conn.reply(call, &()).await,
            Answer::Path(p) => conn.reply(call, &p).await,
            Answer::Str(s) => conn.reply(call, &s).await,
            Answer::Strs(s) => conn.reply(call, &s).await,
            Answer::Paths(p) => conn.reply(call, &p).await,
            Answer::Var(v) => conn.reply(call, &v).await,
            Answer::Dict(d) => conn.reply(call, &d).await,
            Answer::Units(u) => conn.reply(call, &u).await,
            Answer::Jobs(j) => conn.reply(call, &j).await,
            Answer::Changes(c) => conn.reply(call, &c).await,
            Answer::Processes(p) => conn.reply(call, &p).await,
            Answer::Files(f) => conn.reply(call, &f).await,
            Answer::Enabled(b, c) => conn.reply(call, &(b, c)).await,
            Answer::Enqueued(e) => conn.reply(call, &e).await,
        }
    }
}
