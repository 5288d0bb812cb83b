//! What wakes the agent besides its timers: the local init's `subscribe`
//! stream and the watch of this machine's keys in etcd, each a task that
//! sends the agent its events ([`Ev`]).

use super::{Change, Ev};
use crate::control;
use crate::registry::Registry;
use etcd_client::{EventType, WatchOptions};
use flotilla_units::protocol::Reply;
use std::path::PathBuf;
use std::time::Duration;
use tokio::sync::mpsc;

/// Follows the init's `subscribe` stream, reconnecting as needed.
pub(super) async fn follow_init(path: PathBuf, tx: mpsc::Sender<Ev>) {
    let mut said = false;
    loop {
        match control::subscribe(&path).await {
            Ok(mut sub) => {
                said = false;
                if tx.send(Ev::InitUp).await.is_err() {
                    return;
                }
                loop {
                    match sub.next().await {
                        Ok(Some(Reply::Changed(st))) => {
                            if tx.send(Ev::Changed(Box::new(st))).await.is_err() {
                                return;
                            }
                        }
                        Ok(Some(Reply::Error { message, .. })) => {
                            eprintln!("clusterd: agent: init refused subscribe: {message}");
                            break;
                        }
                        Ok(Some(_)) => {}
                        Ok(None) | Err(_) => break,
                    }
                }
                let _ = tx.send(Ev::InitDown).await;
            }
            Err(e) => {
                if !said {
                    eprintln!(
                        "clusterd: agent: cannot reach the init at {}: {e}; retrying",
                        path.display()
                    );
                    said = true;
                }
            }
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}

/// Follows this machine's keys from `rev` on one watch stream.
pub(super) async fn follow_etcd(reg: Registry, me: String, rev: i64, n: u64, tx: mpsc::Sender<Ev>) {
    let k = reg.keys().clone();
    let from = |prefix: bool| {
        let o = WatchOptions::new().with_start_revision(rev + 1);
        if prefix {
            o.with_prefix()
        } else {
            o
        }
    };
    let why = async {
        let mut stream = reg
            .watch_client()
            .watch(k.schedule_of(&me), Some(from(true)))
            .await?;
        stream.watch(k.metadata(&me), Some(from(false))).await?;
        stream
            .watch(k.log_requests_of(&me), Some(from(true)))
            .await?;
        stream
            .watch(k.log_follows_of(&me), Some(from(true)))
            .await?;
        loop {
            let Some(r) = stream.message().await? else {
                return Ok::<String, etcd_client::Error>("ended".into());
            };
            if r.canceled() {
                return Ok(format!("canceled: {}", r.cancel_reason()));
            }
            let batch: Vec<Change> = r
                .events()
                .iter()
                .filter_map(|e| {
                    let kv = e.kv()?;
                    Some((
                        kv.key_str().ok()?.to_string(),
                        kv.value().to_vec(),
                        e.event_type() == EventType::Delete,
                    ))
                })
                .collect();
            if !batch.is_empty() && tx.send(Ev::Etcd(n, batch)).await.is_err() {
                return Ok("agent gone".into());
            }
        }
    }
    .await
    .unwrap_or_else(|e| e.to_string());
    let _ = tx.send(Ev::EtcdDown(n, why)).await;
}
