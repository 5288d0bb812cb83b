//! `GET /flotilla/v1/logs/<unit>?lines=N&follow=true&machine=ID`: a unit's
//! output on the machine that runs it, for `initctl cluster logs`
//! (flotilla's addition to the fleet API; on the same listener, with the
//! same security).
//!
//! The machine is the unit's placement (for a global unit, `machine=`
//! names one). Without `follow` the answer is
//! `{"unit","machine","lines":[{"time","stream","line"}]}`, read as the
//! dashboard reads log lines (`logreq/`, at most
//! [`crate::agent::MAX_LOG_LINES`]). With `follow=true` it is a stream of
//! one JSON object a line (`application/x-ndjson`): the last N lines, then
//! each new one as the machine's agent sends it (`logfollow/`, `logtail/`,
//! [`crate::agent`]'s `logs`); an object `{"error":"…"}` ends it when the
//! machine stops sending. The request key is bound to a lease of this
//! clusterd, kept alive while the client is connected: when the client
//! goes (or this clusterd dies) the lease ends and the agent stops.

use crate::api::Api;
use crate::keys::valid_machine_id;
use crate::lease::Keeper;
use crate::model::{LogBatch, LogFollow};
use crate::registry::Registry;
use crate::respond::{error_response, json_response, method_not_allowed};
use crate::stored::{decode_value, RegistryError};
use crate::validate::ApiError;
use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use etcd_client::{EventType, PutOptions, WatchOptions};
use flotilla_units::protocol::LogLine;
use serde::Serialize;
use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

/// The lease of a follow request: how long an agent goes on sending after
/// this clusterd died.
const FOLLOW_TTL: Duration = Duration::from_secs(10);

/// How long the machine has to send the first batch of a followed log.
const FOLLOW_FIRST: Duration = Duration::from_secs(5);

/// The route.
pub fn routes() -> Router<Arc<Api>> {
    Router::new().route(
        "/flotilla/v1/logs/{unit}",
        get(logs).fallback(method_not_allowed),
    )
}

/// The answer without `follow`.
#[derive(Debug, Serialize)]
struct Logs {
    unit: String,
    machine: String,
    lines: Vec<LogLine>,
}

/// What was asked.
struct Ask {
    unit: String,
    machine: String,
    lines: usize,
    follow: bool,
}

async fn logs(
    State(api): State<Arc<Api>>,
    Path(unit): Path<String>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    let r = async {
        let ask = parse(&api, unit, &q).await?;
        if ask.follow {
            return follow(&api.registry, ask).await;
        }
        let answer = crate::ui::ask_logs(&api, &ask.machine, &ask.unit, ask.lines).await?;
        match answer.error {
            Some(e) => Err(ApiError::new(404, e)),
            None => Ok(json_response(&Logs {
                unit: ask.unit,
                machine: ask.machine,
                lines: answer.lines,
            })),
        }
    }
    .await;
    r.unwrap_or_else(|e| error_response(&e))
}

/// Checks the request and finds the unit's machine.
async fn parse(api: &Api, unit: String, q: &HashMap<String, String>) -> Result<Ask, ApiError> {
    flotilla_units::unit_name::validate_unit_name(&unit).map_err(|e| ApiError::new(400, e))?;
    let follow = match q.get("follow").map(String::as_str) {
        None | Some("false" | "0") => false,
        Some("true" | "1" | "") => true,
        Some(v) => return Err(ApiError::new(400, format!("follow={v}: true or false"))),
    };
    // Following, 0 is "only the lines from now on".
    let max = crate::agent::MAX_LOG_LINES;
    let least = usize::from(!follow);
    let lines = match q.get("lines") {
        None => max,
        Some(n) => n
            .parse::<usize>()
            .ok()
            .filter(|n| (least..=max).contains(n))
            .ok_or_else(|| ApiError::new(400, format!("lines must be {least} to {max}")))?,
    };
    let rec = api.registry.unit(&unit).await?;
    if rec.unit.is_none() {
        return Err(ApiError::new(404, format!("Unit {unit} not found")));
    }
    let machine = match (q.get("machine"), rec.snapshot.placement.get(&unit)) {
        (Some(m), _) => m.clone(),
        (None, Some(m)) => m.clone(),
        (None, None) if rec.snapshot.global.contains(&unit) => {
            return Err(ApiError::new(
                400,
                format!("{unit} is a global unit: give the machine (?machine=ID)"),
            ))
        }
        (None, None) => {
            let why = rec
                .snapshot
                .unscheduled
                .get(&unit)
                .map_or(String::new(), |w| format!(": {w}"));
            return Err(ApiError::new(
                404,
                format!("{unit} is not scheduled on any machine{why}"),
            ));
        }
    };
    if !valid_machine_id(&machine) {
        return Err(ApiError::new(
            400,
            format!("{machine:?} is not a machine ID"),
        ));
    }
    Ok(Ask {
        unit,
        machine,
        lines,
        follow,
    })
}

/// One line of the followed stream.
fn ndjson<T: Serialize>(v: &T) -> Result<axum::body::Bytes, Infallible> {
    let mut b = serde_json::to_vec(v).unwrap_or_default();
    b.push(b'\n');
    Ok(b.into())
}

/// Asks the machine to send the unit's lines as they come, and streams
/// them to the client until it goes.
async fn follow(reg: &Registry, ask: Ask) -> Result<Response, ApiError> {
    let k = reg.keys().clone();
    let mut c = reg.client();
    if c.get(k.machine(&ask.machine), None)
        .await
        .map_err(RegistryError::from)?
        .kvs()
        .is_empty()
    {
        return Err(ApiError::new(
            404,
            format!("machine {} is not in the cluster", ask.machine),
        ));
    }
    let id = crate::model::log_request_id();
    let lease = c
        .lease_grant(FOLLOW_TTL.as_secs() as i64, None)
        .await
        .map_err(RegistryError::from)?
        .id();
    let mut keeper = Keeper::start(c.clone(), lease, FOLLOW_TTL);
    let tail = k.log_tail(&ask.machine, &id);
    // Watch the answer from before the request, so nothing is missed.
    let now = c
        .get(tail.as_str(), None)
        .await
        .map_err(RegistryError::from)?;
    let rev = now.header().map(|h| h.revision()).unwrap_or(0);
    let mut stream = reg
        .watch_client()
        .watch(
            tail.as_str(),
            Some(WatchOptions::new().with_start_revision(rev + 1)),
        )
        .await
        .map_err(RegistryError::from)?;
    let req = Registry::encode(&LogFollow {
        unit: ask.unit.clone(),
        lines: ask.lines,
    });
    c.put(
        k.log_follow(&ask.machine, &id),
        req,
        Some(PutOptions::new().with_lease(lease)),
    )
    .await
    .map_err(RegistryError::from)?;
    let (tx, rx) = mpsc::channel::<Result<axum::body::Bytes, Infallible>>(64);
    let machine = ask.machine.clone();
    tokio::spawn(async move {
        let mut first = true;
        let end = loop {
            let wait = async {
                if first {
                    tokio::time::timeout(FOLLOW_FIRST, stream.message())
                        .await
                        .unwrap_or(Ok(None))
                } else {
                    stream.message().await
                }
            };
            let msg = tokio::select! {
                m = wait => m,
                why = keeper.lost() => break Some(format!("the request's lease: {why}")),
                _ = tx.closed() => break None,
            };
            let r = match msg {
                Ok(Some(r)) => r,
                Ok(None) if first => {
                    break Some(format!(
                        "machine {machine} did not answer within {FOLLOW_FIRST:?}"
                    ))
                }
                Ok(None) => break Some("the watch ended".to_string()),
                Err(e) => break Some(e.to_string()),
            };
            first = false;
            let mut done = None;
            for e in r.events() {
                let Some(kv) = e.kv() else { continue };
                if e.event_type() != EventType::Put {
                    continue;
                }
                let Some(batch) = decode_value::<LogBatch>(kv.key(), kv.value()) else {
                    continue;
                };
                for l in &batch.lines {
                    if tx.send(ndjson(l)).await.is_err() {
                        done = Some(None);
                    }
                }
                if batch.error.is_some() {
                    done = Some(batch.error);
                }
            }
            if let Some(d) = done {
                break d;
            }
        };
        if let Some(why) = end {
            let _ = tx.send(ndjson(&serde_json::json!({ "error": why }))).await;
        }
        // The request goes with its lease; the agent stops and deletes
        // its answer.
        drop(keeper);
        let _ = c.lease_revoke(lease).await;
    });
    Ok((
        [
            (header::CONTENT_TYPE, "application/x-ndjson"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        Body::from_stream(tokio_stream::wrappers::ReceiverStream::new(rx)),
    )
        .into_response())
}
