//! `BindPaths=` and `BindReadOnlyPaths=`: a path of the host bound at a
//! place of the service's mount namespace (`systemd.exec(5)`).
//!
//! Each word is `[-]SOURCE[:DESTINATION[:OPTIONS]]`: a leading `-` skips a
//! missing source; the destination defaults to the source; the one option
//! is `rbind` (the default: what is mounted below the source comes along)
//! or `norbind` (the source's own mount only). A `:` inside a path is not
//! read (systemd's `\:` escape is not either).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::sandbox::normal_absolute;
use super::value::words;

/// One bind of `BindPaths=` or `BindReadOnlyPaths=`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct BindRule {
    /// The host's path, absolute and normal.
    pub source: PathBuf,
    /// Where the service sees it, absolute and normal.
    pub destination: PathBuf,
    /// Written with a leading `-`: a missing source is skipped.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub optional: bool,
    /// `norbind`: only the source's own mount, not those below it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_recursive: bool,
}

/// One word of a bind list.
pub fn parse_bind(word: &str) -> Result<BindRule, String> {
    let (optional, rest) = match word.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, word),
    };
    let mut parts = rest.splitn(3, ':');
    let source = normal_absolute(parts.next().unwrap_or_default())?;
    let destination = match parts.next() {
        Some(d) => normal_absolute(d)?,
        None => source.clone(),
    };
    let no_recursive = match parts.next() {
        None | Some("rbind") => false,
        Some("norbind") => true,
        Some(o) => {
            return Err(format!(
                "`{o}` is not a bind option (write rbind or norbind)"
            ))
        }
    };
    Ok(BindRule {
        source,
        destination,
        optional,
        no_recursive,
    })
}

/// Adds the binds of one assignment to a list (an empty value clears it).
pub fn assign(list: &mut Vec<BindRule>, value: &str) -> Result<(), String> {
    if value.trim().is_empty() {
        list.clear();
        return Ok(());
    }
    for w in words(value)? {
        let rule = parse_bind(&w)?;
        if !list.contains(&rule) {
            list.push(rule);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(source: &str, destination: &str, optional: bool, no_recursive: bool) -> BindRule {
        BindRule {
            source: source.into(),
            destination: destination.into(),
            optional,
            no_recursive,
        }
    }

    #[test]
    fn words_are_source_destination_and_options() {
        let mut l = Vec::new();
        assign(
            &mut l,
            "/run/testservice-49-fixed:/tmp/testfile_fixed -/srv//data /a:/b:norbind /c:/d:rbind",
        )
        .unwrap();
        assert_eq!(
            l,
            [
                rule(
                    "/run/testservice-49-fixed",
                    "/tmp/testfile_fixed",
                    false,
                    false
                ),
                rule("/srv/data", "/srv/data", true, false),
                rule("/a", "/b", false, true),
                rule("/c", "/d", false, false),
            ]
        );
        assign(&mut l, "").unwrap();
        assert!(l.is_empty());
    }

    #[test]
    fn bad_words_say_what_is_wrong() {
        let mut l = Vec::new();
        assert_eq!(
            assign(&mut l, "srv:/x").unwrap_err(),
            "`srv` is not an absolute path"
        );
        assert_eq!(
            assign(&mut l, "/srv:x").unwrap_err(),
            "`x` is not an absolute path"
        );
        assert_eq!(
            assign(&mut l, "/a:/b:ro").unwrap_err(),
            "`ro` is not a bind option (write rbind or norbind)"
        );
        assert!(l.is_empty());
    }
}
