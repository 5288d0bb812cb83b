//! The connections signals go to, each with a queue of its own: a signal
//! is queued on every connection at once, and each connection's own task
//! writes its queue out. A connection whose client stops reading (its
//! socket full) holds up only its own queue: the changes stream, the other
//! clients' `JobRemoved`, and the jobs that wait for it go on.
//!
//! A queue holds at most [`MAX_QUEUED`] signals; past that, the
//! connection misses signals until it reads again, as systemd's
//! connections do once their write queue is full (the send fails, the
//! manager goes on).

use std::sync::{Mutex, MutexGuard};
use tokio::sync::mpsc;
use zbus::message::Message;

/// The signals a connection may have waiting to be written.
pub const MAX_QUEUED: usize = 4096;

struct Peer {
    conn: zbus::Connection,
    queue: mpsc::Sender<Message>,
}

/// The connections, and their queues.
#[derive(Default)]
pub struct Peers {
    all: Mutex<Vec<Peer>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Peers {
    /// A connection that gets the signals from now on; its queue's writer
    /// runs on the tokio runtime until the connection or the queue goes.
    pub fn add(&self, conn: zbus::Connection) {
        let (queue, mut next) = mpsc::channel::<Message>(MAX_QUEUED);
        let writer = conn.clone();
        tokio::spawn(async move {
            while let Some(m) = next.recv().await {
                if writer.send(&m).await.is_err() {
                    return;
                }
            }
        });
        lock(&self.all).push(Peer { conn, queue });
    }

    /// Queues a signal from `path` on every connection; waits for none.
    pub fn emit<B>(&self, path: &str, iface: &str, member: &str, body: &B)
    where
        B: serde::Serialize + zbus::zvariant::DynamicType,
    {
        let mut all = lock(&self.all);
        // A connection that closed, or whose writer ended on an error,
        // is dropped.
        all.retain(|p| !p.conn.is_closed() && !p.queue.is_closed());
        for p in all.iter() {
            let Ok(m) = signal(&p.conn, path, iface, member, body) else {
                continue;
            };
            // Full: the client has not read the last MAX_QUEUED signals
            // (the module documentation).
            let _ = p.queue.try_send(m);
        }
    }
}

/// The signal as `zbus::Connection::emit_signal` makes it for `conn`:
/// with its unique name as the sender, when it has one (the system bus).
fn signal<B>(
    conn: &zbus::Connection,
    path: &str,
    iface: &str,
    member: &str,
    body: &B,
) -> zbus::Result<Message>
where
    B: serde::Serialize + zbus::zvariant::DynamicType,
{
    let mut b = Message::signal(path, iface, member)?;
    if let Some(sender) = conn.unique_name() {
        b = b.sender(sender)?;
    }
    b.build(body)
}
