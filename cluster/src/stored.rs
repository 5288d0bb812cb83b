//! What etcd holds, read back: the values of the registry's keys decoded
//! (an undecodable value is skipped with a line on stderr, never fatal), and
//! the error of reaching etcd, which the API answers as 503.

use crate::model::ClusterState;
use etcd_client::KeyValue;

/// A registry error: etcd is unreachable or refused the request.
#[derive(Debug, Clone)]
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

/// Decodes a JSON value, or says why it was skipped.
pub fn decode<T: serde::de::DeserializeOwned>(kv: &KeyValue) -> Option<T> {
    decode_value(kv.key(), kv.value())
}

/// Decodes the JSON value of `key`, or says why it was skipped.
pub fn decode_value<T: serde::de::DeserializeOwned>(key: &[u8], value: &[u8]) -> Option<T> {
    match serde_json::from_slice(value) {
        Ok(v) => Some(v),
        Err(e) => {
            eprintln!(
                "clusterd: ignoring undecodable value at {}: {e}",
                String::from_utf8_lossy(key)
            );
            None
        }
    }
}

/// Decodes a desired-state value.
pub fn decode_desired(key: &[u8], value: &[u8]) -> Option<ClusterState> {
    let s = std::str::from_utf8(value).ok()?;
    let d = ClusterState::parse(s.trim());
    if d.is_none() {
        eprintln!(
            "clusterd: ignoring bad desired state at {}",
            String::from_utf8_lossy(key)
        );
    }
    d
}
