//! The etcd registry: every read and write clusterd makes, on top of
//! [`crate::keys::Keys`]. Values written by others that do not decode are
//! skipped with a message, never trusted and never fatal.

use crate::keys::{Key, Keys};
use crate::model::{ApiUnit, ApiUnitState, ClusterState, Machine, StoredState, StoredUnit};
use crate::requirements::Requirements;
use crate::validate::MetadataChange;
use etcd_client::{
    Certificate, Client, Compare, CompareOp, ConnectOptions, GetOptions, Identity, KeyValue,
    PutOptions, TlsOptions, Txn, TxnOp, TxnOpResponse,
};
use std::collections::BTreeMap;
use std::time::Duration;

/// Largest number of operations put in one etcd transaction (etcd's
/// default `--max-txn-ops` is 128).
pub const MAX_TXN_OPS: usize = 120;

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

/// A registry error: etcd is unreachable or refused the request.
#[derive(Debug)]
pub struct RegistryError(pub String);

impl std::fmt::Display for RegistryError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "etcd: {}", self.0)
    }
}

impl std::error::Error for RegistryError {}

impl From<etcd_client::Error> for RegistryError {
    fn from(e: etcd_client::Error) -> Self {
        RegistryError(e.to_string())
    }
}

/// Result of registry calls.
pub type Result<T> = std::result::Result<T, RegistryError>;

/// A handle on etcd with clusterd's key layout. Cheap to clone.
#[derive(Clone)]
pub struct Registry {
    client: Client,
    keys: Keys,
}

/// Decodes a JSON value, or says why it was skipped.
pub fn decode<T: serde::de::DeserializeOwned>(kv: &KeyValue) -> Option<T> {
    match serde_json::from_slice(kv.value()) {
        Ok(v) => Some(v),
        Err(e) => {
            eprintln!(
                "clusterd: ignoring undecodable value at {}: {e}",
                String::from_utf8_lossy(kv.key())
            );
            None
        }
    }
}

/// Decodes a desired-state value.
pub fn decode_desired(kv: &KeyValue) -> Option<ClusterState> {
    let s = std::str::from_utf8(kv.value()).ok()?;
    let d = ClusterState::parse(s.trim());
    if d.is_none() {
        eprintln!(
            "clusterd: ignoring bad desired state at {}",
            String::from_utf8_lossy(kv.key())
        );
    }
    d
}

/// Everything the API needs, read at one revision.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    /// The revision read.
    pub revision: i64,
    /// Unit files.
    pub units: BTreeMap<String, StoredUnit>,
    /// Desired states.
    pub desired: BTreeMap<String, ClusterState>,
    /// Non-global unit -> machine.
    pub placement: BTreeMap<String, String>,
    /// (unit, machine) -> reported state.
    pub states: BTreeMap<(String, String), StoredState>,
    /// Present machines.
    pub machines: BTreeMap<String, Machine>,
}

impl Snapshot {
    /// Adds one key-value pair.
    pub fn absorb(&mut self, keys: &Keys, kv: &KeyValue) {
        let Ok(key) = kv.key_str() else { return };
        match keys.parse(key) {
            Key::Unit(n) => {
                if let Some(u) = decode::<StoredUnit>(kv) {
                    self.units.insert(n.to_string(), u);
                }
            }
            Key::Desired(n) => {
                if let Some(d) = decode_desired(kv) {
                    self.desired.insert(n.to_string(), d);
                }
            }
            Key::Placement(n) => {
                if let Ok(m) = std::str::from_utf8(kv.value()) {
                    self.placement.insert(n.to_string(), m.to_string());
                }
            }
            Key::State(m, n) => {
                if let Some(s) = decode::<StoredState>(kv) {
                    self.states.insert((n.to_string(), m.to_string()), s);
                }
            }
            Key::Machine(m) => {
                if let Some(mut mach) = decode::<Machine>(kv) {
                    mach.id = m.to_string();
                    self.machines.insert(m.to_string(), mach);
                }
            }
            _ => {}
        }
    }

    /// The API's view of one unit.
    pub fn api_unit(&self, name: &str) -> Option<ApiUnit> {
        let u = self.units.get(name)?;
        let desired = self
            .desired
            .get(name)
            .copied()
            .unwrap_or(ClusterState::Inactive);
        let global = Requirements::from_options(name, &u.options).global;
        let (current, machine) = if global {
            (None, None)
        } else {
            let machine = self.placement.get(name).cloned();
            let cur = machine
                .as_ref()
                .and_then(|m| self.states.get(&(name.to_string(), m.clone())))
                .map(|s| s.current)
                .unwrap_or(ClusterState::Inactive);
            (Some(cur.as_str().to_string()), machine)
        };
        Some(ApiUnit {
            current_state: current,
            desired_state: Some(desired.as_str().to_string()),
            machine_id: machine,
            name: name.to_string(),
            options: u.options.iter().map(Into::into).collect(),
        })
    }

    /// Every unit state, sorted by unit then machine.
    pub fn api_states(&self) -> impl Iterator<Item = &ApiUnitState> {
        self.states.values().map(|s| &s.state)
    }
}

/// One unit's records.
#[derive(Debug, Clone, Default)]
pub struct UnitRecord {
    /// The unit file.
    pub unit: Option<StoredUnit>,
    /// Its mod revision (0 when absent).
    pub mod_revision: i64,
    /// The snapshot of this unit (for [`Snapshot::api_unit`]).
    pub snapshot: Snapshot,
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
            client,
            keys: Keys::new(&cfg.prefix),
        })
    }

    /// The key layout.
    pub fn keys(&self) -> &Keys {
        &self.keys
    }

    /// The raw client (for watches and leases).
    pub fn client(&self) -> Client {
        self.client.clone()
    }

    /// Reads the API's whole view at one revision (one request).
    pub async fn snapshot(&self) -> Result<Snapshot> {
        let k = &self.keys;
        let prefixes = [
            k.units(),
            k.desireds(),
            k.placements(),
            k.states(),
            k.machines(),
        ];
        let ops: Vec<TxnOp> = prefixes
            .iter()
            .map(|p| TxnOp::get(p.as_str(), Some(GetOptions::new().with_prefix())))
            .collect();
        let resp = self.client.clone().txn(Txn::new().and_then(ops)).await?;
        let mut snap = Snapshot {
            revision: resp.header().map(|h| h.revision()).unwrap_or(0),
            ..Default::default()
        };
        for op in resp.op_responses() {
            if let TxnOpResponse::Get(g) = op {
                for kv in g.kvs() {
                    snap.absorb(k, kv);
                }
            }
        }
        Ok(snap)
    }

    /// Reads every unit file (one request).
    pub async fn units(&self) -> Result<BTreeMap<String, StoredUnit>> {
        let resp = self
            .client
            .clone()
            .get(self.keys.units(), Some(GetOptions::new().with_prefix()))
            .await?;
        let mut snap = Snapshot::default();
        for kv in resp.kvs() {
            snap.absorb(&self.keys, kv);
        }
        Ok(snap.units)
    }

    /// Reads one unit with its desired state and placement (one request),
    /// then the state its machine reports (a second one, when placed).
    pub async fn unit(&self, name: &str) -> Result<UnitRecord> {
        let k = &self.keys;
        let ops = vec![
            TxnOp::get(k.unit(name), None),
            TxnOp::get(k.desired(name), None),
            TxnOp::get(k.placement(name), None),
        ];
        let resp = self.client.clone().txn(Txn::new().and_then(ops)).await?;
        let mut rec = UnitRecord::default();
        for (i, op) in resp.op_responses().into_iter().enumerate() {
            if let TxnOpResponse::Get(g) = op {
                for kv in g.kvs() {
                    if i == 0 {
                        rec.mod_revision = kv.mod_revision();
                    }
                    rec.snapshot.absorb(k, kv);
                }
            }
        }
        if let Some(m) = rec.snapshot.placement.get(name).cloned() {
            let resp = self.client.clone().get(k.state(&m, name), None).await?;
            for kv in resp.kvs() {
                rec.snapshot.absorb(k, kv);
            }
        }
        rec.unit = rec.snapshot.units.get(name).cloned();
        Ok(rec)
    }

    /// Creates a unit if it does not exist; false if it appeared meanwhile.
    pub async fn create_unit(&self, unit: &StoredUnit, desired: ClusterState) -> Result<bool> {
        let k = &self.keys;
        let body = serde_json::to_vec(unit).map_err(|e| RegistryError(e.to_string()))?;
        let txn = Txn::new()
            .when([Compare::create_revision(
                k.unit(&unit.name),
                CompareOp::Equal,
                0,
            )])
            .and_then([
                TxnOp::put(k.unit(&unit.name), body, None),
                TxnOp::put(k.desired(&unit.name), desired.as_str(), None),
            ]);
        Ok(self.client.clone().txn(txn).await?.succeeded())
    }

    /// Replaces a unit's file (and maybe its desired state) if it is still
    /// at `mod_revision`; false otherwise.
    pub async fn replace_unit(
        &self,
        unit: &StoredUnit,
        desired: Option<ClusterState>,
        mod_revision: i64,
    ) -> Result<bool> {
        let k = &self.keys;
        let body = serde_json::to_vec(unit).map_err(|e| RegistryError(e.to_string()))?;
        let mut ops = vec![TxnOp::put(k.unit(&unit.name), body, None)];
        if let Some(d) = desired {
            ops.push(TxnOp::put(k.desired(&unit.name), d.as_str(), None));
        }
        let txn = Txn::new()
            .when([Compare::mod_revision(
                k.unit(&unit.name),
                CompareOp::Equal,
                mod_revision,
            )])
            .and_then(ops);
        Ok(self.client.clone().txn(txn).await?.succeeded())
    }

    /// Sets a unit's desired state if the unit is still at `mod_revision`.
    pub async fn set_desired(
        &self,
        name: &str,
        desired: ClusterState,
        mod_revision: i64,
    ) -> Result<bool> {
        let k = &self.keys;
        let txn = Txn::new()
            .when([Compare::mod_revision(
                k.unit(name),
                CompareOp::Equal,
                mod_revision,
            )])
            .and_then([TxnOp::put(k.desired(name), desired.as_str(), None)]);
        Ok(self.client.clone().txn(txn).await?.succeeded())
    }

    /// Removes a unit; false if there was none.
    pub async fn destroy_unit(&self, name: &str) -> Result<bool> {
        let k = &self.keys;
        let txn = Txn::new()
            .when([Compare::version(k.unit(name), CompareOp::Greater, 0)])
            .and_then([
                TxnOp::delete(k.unit(name), None),
                TxnOp::delete(k.desired(name), None),
            ]);
        Ok(self.client.clone().txn(txn).await?.succeeded())
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
                let resp = self.client.clone().get(key.as_str(), None).await?;
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
                if self.client.clone().txn(txn).await?.succeeded() {
                    break;
                }
            }
        }
        Ok(())
    }

    /// Runs `ops` in transactions of at most [`MAX_TXN_OPS`], each guarded by
    /// `guard`; false as soon as a guard fails.
    pub async fn write_batched(&self, guard: &[Compare], ops: Vec<TxnOp>) -> Result<bool> {
        let mut ops = ops;
        while !ops.is_empty() {
            let rest = ops.split_off(ops.len().min(MAX_TXN_OPS));
            let chunk = std::mem::replace(&mut ops, rest);
            let txn = Txn::new().when(guard.to_vec()).and_then(chunk);
            if !self.client.clone().txn(txn).await?.succeeded() {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// A put bound to a lease.
    pub fn put_leased(key: String, value: Vec<u8>, lease: i64) -> TxnOp {
        TxnOp::put(key, value, Some(PutOptions::new().with_lease(lease)))
    }

    /// Encodes an assignment.
    pub fn encode<T: serde::Serialize>(v: &T) -> Vec<u8> {
        serde_json::to_vec(v).unwrap_or_default()
    }
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
