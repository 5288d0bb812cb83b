//! `LoadCredential=` and `SetCredential=`: the credentials a unit's
//! processes find in `$CREDENTIALS_DIRECTORY` (`/run/credentials/UNIT`),
//! as systemd reads the keys (`systemd.exec(5)`, "Credentials").
//!
//! The encrypted kinds (`LoadCredentialEncrypted=`,
//! `SetCredentialEncrypted=`) and `ImportCredential=` are errors: flotilla
//! has neither the TPM2 nor the host key that `systemd-creds` encrypts
//! with, and a unit started without the secret it asks for would run
//! wrong rather than fail.

use std::collections::BTreeSet;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::sandbox::normal_absolute;

/// The directory of a unit's credentials.
pub const BASE: &str = "/run/credentials";

/// Where a credential named without a path is looked for, in order, after
/// the init's own `$CREDENTIALS_DIRECTORY` (systemd's credential store).
pub const STORE: [&str; 3] = ["/etc/credstore", "/run/credstore", "/usr/lib/credstore"];

/// The most a unit's credentials may hold together, as in systemd.
pub const TOTAL_MAX: u64 = 1 << 20;

/// Where a `LoadCredential=` reads from.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Source {
    /// An absolute path: it must be there (unless a `SetCredential=` of
    /// the same ID stands in).
    Path(PathBuf),
    /// A credential name: looked for in the init's own credentials, then
    /// in [`STORE`]; not found, the unit goes without it (as in systemd,
    /// which ships units asking for optional credentials this way).
    Name(String),
}

/// One `LoadCredential=`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Load {
    /// The file name in the unit's directory.
    pub id: String,
    /// Where its bytes come from.
    pub source: Source,
}

/// One `SetCredential=`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Set {
    /// The file name in the unit's directory.
    pub id: String,
    /// Its bytes (C escapes resolved).
    pub value: Vec<u8>,
}

/// A unit's credentials.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(default, rename_all = "kebab-case")]
pub struct Credentials {
    /// `LoadCredential=`, one per ID (a later line for an ID replaces it).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub load: Vec<Load>,
    /// `SetCredential=`, one per ID; a `LoadCredential=` of the same ID
    /// wins, and this is its fallback.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub set: Vec<Set>,
}

impl Credentials {
    /// Whether the unit has none.
    pub fn is_empty(&self) -> bool {
        self.load.is_empty() && self.set.is_empty()
    }

    /// The key a message about them names: `LoadCredential=` when the
    /// unit loads any, else `SetCredential=`.
    pub fn key(&self) -> super::Key {
        if self.load.is_empty() {
            super::Key::SetCredential
        } else {
            super::Key::LoadCredential
        }
    }

    /// Every ID, once, sorted.
    pub fn ids(&self) -> BTreeSet<&str> {
        self.load
            .iter()
            .map(|l| l.id.as_str())
            .chain(self.set.iter().map(|s| s.id.as_str()))
            .collect()
    }

    /// The `SetCredential=` value of `id`, if any.
    pub fn value_of(&self, id: &str) -> Option<&[u8]> {
        self.set
            .iter()
            .find(|s| s.id == id)
            .map(|s| s.value.as_slice())
    }

    /// The directory of `unit`'s credentials.
    pub fn dir(unit: &str) -> PathBuf {
        PathBuf::from(BASE).join(unit)
    }
}

/// Whether `id` may name a credential: systemd's rule (a file name and a
/// descriptor name): 1 to 255 printable ASCII characters, neither `/` nor
/// `:`, not `.` or `..`.
pub fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 255
        && id != "."
        && id != ".."
        && id
            .bytes()
            .all(|b| (b' '..=b'~').contains(&b) && b != b'/' && b != b':')
}

fn check_id(id: &str) -> Result<(), String> {
    if valid_id(id) {
        Ok(())
    } else {
        Err(format!(
            "`{id}` is not a credential ID (1 to 255 printable ASCII characters, no `/` or `:`)"
        ))
    }
}

/// Applies one `LoadCredential=ID[:PATH]` (an empty value forgets every
/// `LoadCredential=` before it).
pub fn assign_load(list: &mut Vec<Load>, value: &str) -> Result<(), String> {
    let value = value.trim();
    if value.is_empty() {
        list.clear();
        return Ok(());
    }
    let (id, path) = value.split_once(':').unwrap_or((value, ""));
    check_id(id)?;
    let path = if path.is_empty() { id } else { path };
    let source = if path.starts_with('/') {
        Source::Path(normal_absolute(path)?)
    } else if valid_id(path) {
        Source::Name(path.to_string())
    } else {
        return Err(format!(
            "`{path}` is neither an absolute path nor a credential name"
        ));
    };
    let load = Load {
        id: id.to_string(),
        source,
    };
    match list.iter_mut().find(|l| l.id == id) {
        Some(l) => *l = load,
        None => list.push(load),
    }
    Ok(())
}

/// Applies one `SetCredential=ID:VALUE` (C escapes in `VALUE`; an empty
/// value forgets every `SetCredential=` before it).
pub fn assign_set(list: &mut Vec<Set>, value: &str) -> Result<(), String> {
    if value.trim().is_empty() {
        list.clear();
        return Ok(());
    }
    let (id, data) = value
        .trim_start()
        .split_once(':')
        .ok_or_else(|| format!("`{value}` has no `:` between the ID and the value"))?;
    check_id(id)?;
    let bytes = crate::systemd::c_unescape(data)?.into_bytes();
    if bytes.len() as u64 > TOTAL_MAX {
        return Err(format!("the value is more than {} MiB", TOTAL_MAX >> 20));
    }
    let set = Set {
        id: id.to_string(),
        value: bytes,
    };
    match list.iter_mut().find(|s| s.id == id) {
        Some(s) => *s = set,
        None => list.push(set),
    }
    Ok(())
}

/// The error of `LoadCredentialEncrypted=` and `SetCredentialEncrypted=`.
pub fn refuse_encrypted() -> Result<(), String> {
    Err(
        "encrypted credentials are not supported: flotilla has no TPM2 or host key to decrypt \
         them (systemd-creds); load the plain credential with LoadCredential= instead"
            .into(),
    )
}

/// The error of `ImportCredential=`.
pub fn refuse_import() -> Result<(), String> {
    Err(
        "importing credentials by pattern is not supported: name each with \
         LoadCredential=ID instead"
            .into(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn load_credential_forms() {
        let mut l = Vec::new();
        assign_load(&mut l, "sysctl.extra").unwrap();
        assign_load(&mut l, "key:/etc/web//key.pem").unwrap();
        assign_load(&mut l, "other:store-name").unwrap();
        assert_eq!(
            l,
            [
                Load {
                    id: "sysctl.extra".into(),
                    source: Source::Name("sysctl.extra".into())
                },
                Load {
                    id: "key".into(),
                    source: Source::Path("/etc/web/key.pem".into())
                },
                Load {
                    id: "other".into(),
                    source: Source::Name("store-name".into())
                },
            ]
        );
        // A later line for an ID replaces it; an empty one clears them all.
        assign_load(&mut l, "key:/etc/other").unwrap();
        assert_eq!(l[1].source, Source::Path("/etc/other".into()));
        assert_eq!(l.len(), 3);
        assign_load(&mut l, "").unwrap();
        assert!(l.is_empty());
        assert_eq!(
            assign_load(&mut l, "a/b:/etc/x").unwrap_err(),
            "`a/b` is not a credential ID (1 to 255 printable ASCII characters, no `/` or `:`)"
        );
        assert_eq!(
            assign_load(&mut l, "x:../etc/x").unwrap_err(),
            "`../etc/x` is neither an absolute path nor a credential name"
        );
        assert_eq!(
            assign_load(&mut l, "x:/etc/../x").unwrap_err(),
            "`/etc/../x` contains `..`"
        );
        assert!(assign_load(&mut l, "..").is_err());
    }

    #[test]
    fn set_credential_unescapes_and_the_load_of_an_id_wins() {
        let mut c = Credentials::default();
        assign_set(&mut c.set, r"token:a\nb\x41:c").unwrap();
        assign_set(&mut c.set, "empty:").unwrap();
        assert_eq!(c.value_of("token"), Some(b"a\nbA:c".as_slice()));
        assert_eq!(c.value_of("empty"), Some(b"".as_slice()));
        assign_load(&mut c.load, "token:/etc/token").unwrap();
        assert_eq!(c.ids().into_iter().collect::<Vec<_>>(), ["empty", "token"]);
        assert_eq!(
            assign_set(&mut c.set, "novalue").unwrap_err(),
            "`novalue` has no `:` between the ID and the value"
        );
        assign_set(&mut c.set, " ").unwrap();
        assert!(c.set.is_empty());
        assert_eq!(
            Credentials::dir("web.service"),
            PathBuf::from("/run/credentials/web.service")
        );
    }
}
