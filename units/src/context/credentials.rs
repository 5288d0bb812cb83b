//! `LoadCredential=`, `ImportCredential=` and `SetCredential=`: the
//! credentials a unit's processes find in `$CREDENTIALS_DIRECTORY`
//! (`/run/credentials/UNIT`), as systemd reads the keys (`systemd.exec(5)`,
//! "Credentials").
//!
//! The encrypted kinds (`LoadCredentialEncrypted=`,
//! `SetCredentialEncrypted=`) are errors: flotilla has neither the TPM2
//! nor the host key that `systemd-creds` encrypts with, and a unit started
//! without the secret it asks for would run wrong rather than fail.
//! `ImportCredential=` takes what the plain stores hold; the encrypted
//! stores (`/etc/credstore.encrypted`, …) are not searched, for the same
//! reason (docs/service-context.md).

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

/// One `ImportCredential=GLOB[:RENAME]` (systemd 257): every credential
/// of the stores whose name matches `glob` (shell globbing), under its own
/// name or, with `rename`, with the glob's fixed prefix (before its final
/// `*`) replaced by `rename`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Import {
    /// The pattern, matched against the names in each store.
    pub glob: String,
    /// What replaces the glob's prefix in the credential's ID.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rename: Option<String>,
}

impl Import {
    /// The ID that the store's credential `name` gets, written into `out`
    /// (its length returned), when `name` matches the glob and the ID is
    /// a valid one that fits. Allocates nothing: a spawned child calls it.
    pub fn id_into(&self, name: &[u8], out: &mut [u8]) -> Option<usize> {
        if !glob_matches(self.glob.as_bytes(), name) {
            return None;
        }
        let (head, tail): (&[u8], &[u8]) = match &self.rename {
            None => (b"", name),
            Some(r) => {
                let prefix = self.glob.strip_suffix('*').unwrap_or(&self.glob);
                (r.as_bytes(), name.strip_prefix(prefix.as_bytes())?)
            }
        };
        let len = head.len() + tail.len();
        out.get_mut(..head.len())?.copy_from_slice(head);
        out.get_mut(head.len()..len)?.copy_from_slice(tail);
        let id = out.get(..len)?;
        let ok = !id.is_empty()
            && len <= 255
            && id != b"."
            && id != b".."
            && id
                .iter()
                .all(|b| (b' '..=b'~').contains(b) && *b != b'/' && *b != b':');
        ok.then_some(len)
    }

    /// [`Import::id_into`] as a string.
    pub fn id_of(&self, name: &str) -> Option<String> {
        let mut buf = [0u8; 256];
        let n = self.id_into(name.as_bytes(), &mut buf)?;
        buf.get(..n)
            .map(|b| String::from_utf8_lossy(b).into_owned())
    }
}

/// Whether `name` matches the shell glob `glob` (`*`, `?`, `[…]` with
/// ranges and `!`/`^` negation; an unclosed `[` is itself), as
/// `fnmatch(3)` without flags matches a credential's name. Allocates
/// nothing.
pub fn glob_matches(glob: &[u8], name: &[u8]) -> bool {
    let (mut g, mut n) = (0, 0);
    // Where to resume after the last `*`: the glob just past it, and the
    // name position it has swallowed up to.
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        let step = match glob.get(g) {
            Some(b'*') => {
                star = Some((g + 1, n));
                g += 1;
                continue;
            }
            Some(b'?') => Some(g + 1),
            Some(b'[') => match class(glob, g, name[n]) {
                Some((true, end)) => Some(end),
                Some((false, _)) => None,
                None => (name[n] == b'[').then_some(g + 1),
            },
            Some(c) => (*c == name[n]).then_some(g + 1),
            None => None,
        };
        match (step, star) {
            (Some(next), _) => {
                g = next;
                n += 1;
            }
            (None, Some((sg, sn))) => {
                g = sg;
                n = sn + 1;
                star = Some((sg, sn + 1));
            }
            (None, None) => return false,
        }
    }
    glob.get(g..)
        .is_some_and(|rest| rest.iter().all(|c| *c == b'*'))
}

/// The bracket expression at `glob[at]` (`[`) against `c`: whether it
/// matches and the index past its `]`; `None` when it is not closed.
fn class(glob: &[u8], at: usize, c: u8) -> Option<(bool, usize)> {
    let mut i = at + 1;
    let negate = matches!(glob.get(i), Some(b'!') | Some(b'^'));
    if negate {
        i += 1;
    }
    let mut hit = false;
    let mut first = true;
    loop {
        let lo = *glob.get(i)?;
        if lo == b']' && !first {
            return Some((hit != negate, i + 1));
        }
        first = false;
        match (glob.get(i + 1), glob.get(i + 2)) {
            (Some(b'-'), Some(hi)) if *hi != b']' => {
                hit |= (lo..=*hi).contains(&c);
                i += 3;
            }
            _ => {
                hit |= lo == c;
                i += 1;
            }
        }
    }
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
    /// `ImportCredential=`, in order, each once; a `LoadCredential=` of
    /// the same ID wins, and a `SetCredential=` is the fallback.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub import: Vec<Import>,
}

impl Credentials {
    /// Whether the unit has none.
    pub fn is_empty(&self) -> bool {
        self.load.is_empty() && self.set.is_empty() && self.import.is_empty()
    }

    /// The key a message about them names: `LoadCredential=` when the
    /// unit loads any, else `ImportCredential=` when it imports, else
    /// `SetCredential=`.
    pub fn key(&self) -> super::Key {
        if !self.load.is_empty() {
            super::Key::LoadCredential
        } else if !self.import.is_empty() {
            super::Key::ImportCredential
        } else {
            super::Key::SetCredential
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
    let bytes = crate::c_words::c_unescape(data)?.into_bytes();
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

/// Applies one `ImportCredential=GLOB[:RENAME]` (an empty value forgets
/// every `ImportCredential=` before it). With `RENAME`, the glob must end
/// in `*` (systemd's rule: the fixed part before it is what is renamed).
pub fn assign_import(list: &mut Vec<Import>, value: &str) -> Result<(), String> {
    let value = value.trim();
    if value.is_empty() {
        list.clear();
        return Ok(());
    }
    let (glob, rename) = match value.split_once(':') {
        Some((g, r)) => (g, Some(r)),
        None => (value, None),
    };
    // A glob's own characters (`*`, `?`, `[`, `]`) are an ID's too.
    if !valid_id(glob) {
        return Err(format!(
            "`{glob}` is not a credential name or glob (1 to 255 printable ASCII characters, no `/` or `:`)"
        ));
    }
    if let Some(r) = rename {
        if !glob.ends_with('*') {
            return Err(format!(
                "`{glob}` does not end in `*`: a renamed import replaces the part before it"
            ));
        }
        if !valid_id(r) {
            return Err(format!("`{r}` is not a credential name prefix"));
        }
    }
    let import = Import {
        glob: glob.to_string(),
        rename: rename.map(str::to_string),
    };
    if !list.contains(&import) {
        list.push(import);
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

    #[test]
    fn globs_match_as_fnmatch() {
        for (glob, name, want) in [
            ("agetty.*", "agetty.autologin", true),
            ("agetty.*", "agetty.", true),
            ("agetty.*", "agetty", false),
            ("agetty.*", "xagetty.a", false),
            ("*", "", true),
            ("a*b*c", "axxbyyc", true),
            ("a*b*c", "axxbyy", false),
            ("a*bc", "abcbc", true),
            ("?x", "ax", true),
            ("?x", "x", false),
            ("[ab]x", "bx", true),
            ("[!ab]x", "bx", false),
            ("[^ab]x", "cx", true),
            ("[a-c]", "b", true),
            ("[a-c]", "d", false),
            ("[]]", "]", true),
            ("[a-]", "-", true),
            ("[ab", "[ab", true),
            (
                "passwd.hashed-password.root",
                "passwd.hashed-password.root",
                true,
            ),
            (
                "passwd.hashed-password.root",
                "passwd.hashed-password.roots",
                false,
            ),
        ] {
            assert_eq!(
                glob_matches(glob.as_bytes(), name.as_bytes()),
                want,
                "{glob} against {name}"
            );
        }
    }

    #[test]
    fn import_credential_globs_and_renames() {
        let mut c = Credentials::default();
        // Debian 13's serial-getty@ttyS0.service, its specifier expanded.
        assign_import(&mut c.import, "agetty.*").unwrap();
        assign_import(&mut c.import, "tty.serial.ttyS0.agetty.*:agetty.").unwrap();
        assign_import(&mut c.import, "agetty.*").unwrap();
        assert_eq!(c.import.len(), 2, "the same line twice is one import");
        assert_eq!(c.key(), crate::context::Key::ImportCredential);
        assert!(!c.is_empty());
        let plain = &c.import[0];
        assert_eq!(
            plain.id_of("agetty.autologin").as_deref(),
            Some("agetty.autologin")
        );
        let renamed = &c.import[1];
        assert_eq!(
            renamed
                .id_of("tty.serial.ttyS0.agetty.autologin")
                .as_deref(),
            Some("agetty.autologin")
        );
        assert_eq!(renamed.id_of("other.name"), None);
        assert_eq!(plain.id_of("login.motd"), None, "not matched");
        let mut small = [0u8; 4];
        assert_eq!(plain.id_into(b"agetty.x", &mut small), None, "no room");
        assert_eq!(
            assign_import(&mut c.import, "a*b:x.").unwrap_err(),
            "`a*b` does not end in `*`: a renamed import replaces the part before it"
        );
        assert_eq!(
            assign_import(&mut c.import, "a/b*").unwrap_err(),
            "`a/b*` is not a credential name or glob (1 to 255 printable ASCII characters, no \
             `/` or `:`)"
        );
        assert_eq!(
            assign_import(&mut c.import, "x.*:a/b").unwrap_err(),
            "`a/b` is not a credential name prefix"
        );
        assert_eq!(c.import.len(), 2, "a bad line loses nothing");
        assert_eq!(
            assign_import(&mut c.import, "login.*:").unwrap_err(),
            "`` is not a credential name prefix"
        );
        assign_import(&mut c.import, "").unwrap();
        assert!(c.import.is_empty());
        assert!(c.is_empty());
    }
}
