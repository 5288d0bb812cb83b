//! The etcd registry: every read and write clusterd makes, on top of
//! [`crate::keys::Keys`]. Values written by others that do not decode are
//! skipped with a message, never trusted and never fatal.

use crate::batch::{chunks, Op};
use crate::keys::Keys;
use crate::model::StoredUnit;
use crate::stored::{decode, RegistryError, Result};
use crate::validate::MetadataChange;
use crate::view::View;
use crate::write::{Change, Guard, Write};
use etcd_client::{
    Certificate, Client, Compare, CompareOp, ConnectOptions, GetOptions, Identity, KeyValue,
    KvClient, TlsOptions, Txn, TxnOp, TxnOpResponse, WatchClient,
};
use std::collections::BTreeMap;
use std::time::Duration;

/// Keys read per request when reading a whole prefix: a page stays far
/// under the message limit below even with unit files at their largest.
pub const READ_PAGE: i64 = 500;

/// Largest message clusterd accepts from etcd (gRPC's default is 4 MiB; a
/// watch response carries a whole transaction of up to
/// [`crate::batch::MAX_TXN_BYTES`], a read page up to [`READ_PAGE`] keys).
pub const MAX_MESSAGE: usize = 64 * 1024 * 1024;

/// How to reach etcd.
#[derive(Debug, Clone, Default)]
pub struct EtcdConfig {
    /// Endpoints, `http://host:port`.
    pub endpoints: Vec<String>,
    /// Key prefix.
    pub prefix: String,
    /// CA, client certificate and key (PEM files) for TLS.
    pub ca: Option<std::path::PathBuf>,
    /// Client certificate.
    pub cert: Option<std::path::PathBuf>,
    /// Client key.
    pub key: Option<std::path::PathBuf>,
    /// Per-request timeout.
    pub timeout: Option<Duration>,
}

/// A handle on etcd with clusterd's key layout. Cheap to clone.
#[derive(Clone)]
pub struct Registry {
    client: Client,
    kv: KvClient,
    watch: WatchClient,
    keys: Keys,
}

/// One unit's records.
#[derive(Debug, Clone, Default)]
pub struct UnitRecord {
    /// The unit file.
    pub unit: Option<StoredUnit>,
    /// Its mod revision (0 when absent).
    pub mod_revision: i64,
    /// This unit's keys (for [`View::api_unit`]).
    pub snapshot: View,
}

impl Registry {
    /// Connects (lazily: an etcd that is down now is retried per request).
    pub async fn connect(cfg: &EtcdConfig) -> Result<Registry> {
        let mut opts = ConnectOptions::new()
            .with_connect_timeout(Duration::from_secs(2))
            .with_timeout(cfg.timeout.unwrap_or(Duration::from_secs(5)))
            .with_keep_alive(Duration::from_secs(2), Duration::from_secs(2))
            .with_keep_alive_while_idle(true);
        if cfg.ca.is_some() || cfg.cert.is_some() || cfg.key.is_some() {
            opts = tls_options(cfg, opts)?;
        }
        let client = Client::connect(&cfg.endpoints, Some(opts)).await?;
        Ok(Registry {
            kv: client.kv_client().max_decoding_message_size(MAX_MESSAGE),
            watch: client.watch_client().max_decoding_message_size(MAX_MESSAGE),
            client,
            keys: Keys::new(&cfg.prefix),
        })
    }

    /// The key layout.
    pub fn keys(&self) -> &Keys {
        &self.keys
    }

    /// The raw client (for leases).
    pub fn client(&self) -> Client {
        self.client.clone()
    }

    /// A watch client that takes messages up to [`MAX_MESSAGE`].
    pub fn watch_client(&self) -> WatchClient {
        self.watch.clone()
    }

    /// The current revision of the store (a linearizable read of one key's
    /// count: one small request).
    pub async fn revision(&self) -> Result<i64> {
        let resp = self
            .kv
            .clone()
            .get(
                self.keys.leader(),
                Some(GetOptions::new().with_count_only()),
            )
            .await?;
        Ok(resp.header().map(|h| h.revision()).unwrap_or(0))
    }

    /// How many keys are under `prefix` (one small read).
    pub async fn count(&self, prefix: &str) -> Result<usize> {
        let resp = self
            .kv
            .clone()
            .get(
                prefix,
                Some(GetOptions::new().with_prefix().with_count_only()),
            )
            .await?;
        Ok(usize::try_from(resp.count()).unwrap_or(0))
    }

    /// Every key under each of `prefixes`, all at one revision, read in
    /// pages of [`READ_PAGE`] keys; returns the revision and the keys.
    pub async fn read_prefixes(&self, prefixes: &[String]) -> Result<(i64, Vec<KeyValue>)> {
        let mut kv = self.kv.clone();
        let mut rev = 0;
        let mut out = Vec::new();
        for p in prefixes {
            let end = prefix_end(p.as_bytes());
            let mut from = p.as_bytes().to_vec();
            loop {
                let mut opts = GetOptions::new()
                    .with_range(end.clone())
                    .with_limit(READ_PAGE);
                if rev != 0 {
                    opts = opts.with_revision(rev);
                }
                let mut resp = kv.get(from.clone(), Some(opts)).await?;
                if rev == 0 {
                    rev = resp.header().map(|h| h.revision()).unwrap_or(0);
                }
                let more = resp.more();
                let kvs = resp.take_kvs();
                let Some(last) = kvs.last() else { break };
                from = last.key().to_vec();
                from.push(0);
                out.extend(kvs);
                if !more {
                    break;
                }
            }
        }
        Ok((rev, out))
    }

    /// Reads every unit file.
    pub async fn units(&self) -> Result<BTreeMap<String, StoredUnit>> {
        let (_, kvs) = self.read_prefixes(&[self.keys.units()]).await?;
        let mut v = View::default();
        for kv in &kvs {
            v.absorb(&self.keys, kv);
        }
        Ok(v.units)
    }

    /// Reads one unit with its desired state and placement (one request),
    /// then the state its machine reports (a second one, when placed).
    pub async fn unit(&self, name: &str) -> Result<UnitRecord> {
        let resp = self
            .kv
            .clone()
            .txn(Txn::new().and_then(self.unit_reads(name)))
            .await?;
        let mut rec = self.unit_record(name, resp.op_responses());
        if let Some(m) = rec.snapshot.placement.get(name).cloned() {
            let resp = self.kv.clone().get(self.keys.state(&m, name), None).await?;
            for kv in resp.kvs() {
                rec.snapshot.absorb(&self.keys, kv);
            }
        }
        Ok(rec)
    }

    fn unit_reads(&self, name: &str) -> Vec<TxnOp> {
        let k = &self.keys;
        vec![
            TxnOp::get(k.unit(name), None),
            TxnOp::get(k.desired(name), None),
            TxnOp::get(k.placement(name), None),
            TxnOp::get(k.unscheduled(name), None),
        ]
    }

    fn unit_record(&self, name: &str, ops: Vec<TxnOpResponse>) -> UnitRecord {
        let mut rec = UnitRecord::default();
        for (i, op) in ops.into_iter().enumerate() {
            if let TxnOpResponse::Get(g) = op {
                for kv in g.kvs() {
                    if i == 0 {
                        rec.mod_revision = kv.mod_revision();
                    }
                    rec.snapshot.absorb(&self.keys, kv);
                }
            }
        }
        rec.unit = rec.snapshot.units.get(name).cloned();
        rec
    }

    /// Reads one unit's file and its mod revision (one request): what a
    /// `PUT` decides from.
    pub async fn unit_file(&self, name: &str) -> Result<UnitRecord> {
        let resp = self.kv.clone().get(self.keys.unit(name), None).await?;
        let mut rec = UnitRecord::default();
        for kv in resp.kvs() {
            rec.mod_revision = kv.mod_revision();
            rec.snapshot.absorb(&self.keys, kv);
        }
        rec.unit = rec.snapshot.units.get(name).cloned();
        Ok(rec)
    }

    /// Applies `writes` ([`crate::commit`]) in one transaction if every
    /// guard holds: `None`. When one does not, nothing is written and the
    /// same transaction reads each write's unit file: its record as it was
    /// then, in the order of `writes`.
    pub async fn commit(&self, writes: &[&Write]) -> Result<Option<Vec<UnitRecord>>> {
        let k = &self.keys;
        let mut cmp = Vec::with_capacity(writes.len());
        let mut ops = Vec::new();
        let mut reads = Vec::with_capacity(writes.len());
        for w in writes {
            let key = k.unit(&w.name);
            cmp.push(match w.guard {
                Guard::Absent => Compare::create_revision(key.as_str(), CompareOp::Equal, 0),
                Guard::Present => Compare::version(key.as_str(), CompareOp::Greater, 0),
                Guard::At(r) => Compare::mod_revision(key.as_str(), CompareOp::Equal, r),
            });
            match &w.change {
                Change::Put { unit, desired } => {
                    if let Some(u) = unit {
                        let body =
                            serde_json::to_vec(u).map_err(|e| RegistryError(e.to_string()))?;
                        ops.push(TxnOp::put(key.as_str(), body, None));
                    }
                    if let Some(d) = desired {
                        ops.push(TxnOp::put(k.desired(&w.name), d.as_str(), None));
                    }
                }
                Change::Delete => {
                    ops.push(TxnOp::delete(key.as_str(), None));
                    ops.push(TxnOp::delete(k.desired(&w.name), None));
                }
            }
            reads.push(TxnOp::get(key, None));
        }
        let txn = Txn::new().when(cmp).and_then(ops).or_else(reads);
        let resp = self.kv.clone().txn(txn).await?;
        if resp.succeeded() {
            return Ok(None);
        }
        let mut found = Vec::with_capacity(writes.len());
        for (w, op) in writes.iter().zip(resp.op_responses()) {
            let mut rec = UnitRecord::default();
            if let TxnOpResponse::Get(g) = op {
                for kv in g.kvs() {
                    rec.mod_revision = kv.mod_revision();
                    rec.snapshot.absorb(&self.keys, kv);
                }
            }
            rec.unit = rec.snapshot.units.get(&w.name).cloned();
            found.push(rec);
        }
        Ok(Some(found))
    }

    /// Applies validated metadata changes (API `PATCH /machines`).
    pub async fn apply_metadata(&self, changes: &[MetadataChange]) -> Result<()> {
        let mut by_machine: BTreeMap<&str, Vec<&MetadataChange>> = BTreeMap::new();
        for c in changes {
            by_machine.entry(c.machine.as_str()).or_default().push(c);
        }
        for (machine, cs) in by_machine {
            let key = self.keys.metadata(machine);
            // Read-modify-write with a compare on the revision read, retried.
            for _ in 0..10 {
                let resp = self.kv.clone().get(key.as_str(), None).await?;
                let (mut map, rev) = match resp.kvs().first() {
                    Some(kv) => (
                        decode::<BTreeMap<String, Option<String>>>(kv).unwrap_or_default(),
                        kv.mod_revision(),
                    ),
                    None => (BTreeMap::new(), 0),
                };
                for c in &cs {
                    map.insert(c.key.clone(), c.value.clone());
                }
                let body = serde_json::to_vec(&map).map_err(|e| RegistryError(e.to_string()))?;
                let cmp = if rev == 0 {
                    Compare::create_revision(key.as_str(), CompareOp::Equal, 0)
                } else {
                    Compare::mod_revision(key.as_str(), CompareOp::Equal, rev)
                };
                let txn = Txn::new()
                    .when([cmp])
                    .and_then([TxnOp::put(key.as_str(), body, None)]);
                if self.kv.clone().txn(txn).await?.succeeded() {
                    break;
                }
            }
        }
        Ok(())
    }

    /// Writes groups of operations ([`crate::batch`]: each group lands in
    /// one revision), in as few transactions as etcd's limits allow, each
    /// guarded by `guard`; false as soon as a guard fails.
    pub async fn write_groups(&self, guard: &[Compare], groups: Vec<Vec<Op>>) -> Result<bool> {
        for chunk in chunks(groups) {
            let ops: Vec<TxnOp> = chunk.iter().map(Op::to_txn_op).collect();
            let txn = Txn::new().when(guard.to_vec()).and_then(ops);
            if !self.kv.clone().txn(txn).await?.succeeded() {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Encodes an assignment.
    pub fn encode<T: serde::Serialize>(v: &T) -> Vec<u8> {
        serde_json::to_vec(v).unwrap_or_default()
    }
}

/// The end of the range of keys starting with `prefix`.
fn prefix_end(prefix: &[u8]) -> Vec<u8> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xff {
            end.push(last + 1);
            return end;
        }
    }
    vec![0]
}

/// TLS to etcd with a client certificate: the CA that signed etcd's
/// certificate, and this client's certificate and key (PEM files), through
/// etcd-client's rustls (with *ring*).
fn tls_options(cfg: &EtcdConfig, opts: ConnectOptions) -> Result<ConnectOptions> {
    let read = |flag: &str, p: &Option<std::path::PathBuf>| -> Result<Vec<u8>> {
        let p = p
            .as_ref()
            .ok_or_else(|| RegistryError(format!("{flag} is missing")))?;
        std::fs::read(p).map_err(|e| RegistryError(format!("{flag} {}: {e}", p.display())))
    };
    let ca = read("--etcd-ca", &cfg.ca)?;
    let cert = read("--etcd-cert", &cfg.cert)?;
    let key = read("--etcd-key", &cfg.key)?;
    for (flag, pem) in [
        ("--etcd-ca", &ca),
        ("--etcd-cert", &cert),
        ("--etcd-key", &key),
    ] {
        if !String::from_utf8_lossy(pem).contains("-----BEGIN ") {
            return Err(RegistryError(format!("{flag}: not a PEM file")));
        }
    }
    let tls = TlsOptions::new()
        .ca_certificate(Certificate::from_pem(ca))
        .identity(Identity::from_pem(cert, key));
    Ok(opts.with_tls(tls))
}
