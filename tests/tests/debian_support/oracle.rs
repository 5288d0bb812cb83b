//! systemd's side of a comparison, kept: what a test observed under
//! Debian's systemd on an image, recorded under a key of the image's
//! Debian root (its `base` file: flotilla's binaries in the image do not
//! change what systemd does) and of the test's own version of what it runs
//! there. The run that measures systemd writes the record into the image
//! cache (`target/debian/`); the record of today's root is kept in the
//! repository (`tests/tests/DIR/oracle/`, the same file) and read when the
//! cache has none, so that a fresh clone runs flotilla's side alone. A
//! change of the root's inputs changes the key: the first run then measures
//! systemd again, and its file belongs in `oracle/` (docs/debian.md).

use super::{Init, Timing};
use serde::{de::DeserializeOwned, Serialize};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A systemd boot's figures as a record keeps them: [`Timing`]'s, seconds
/// from qemu's start, `multi-user.target` reached (ms from PID 1's start)
/// and PID 1's resident memory (KiB).
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Figures {
    pub handover: f64,
    pub prompt: f64,
    pub sshd: f64,
    pub multi_user_ms: f64,
    pub rss_kib: u64,
}

impl Figures {
    pub fn of(t: &Timing, multi_user_ms: f64, rss_kib: u64) -> Figures {
        Figures {
            handover: t.handover.as_secs_f64(),
            prompt: t.prompt.as_secs_f64(),
            sshd: t.sshd.as_secs_f64(),
            multi_user_ms,
            rss_kib,
        }
    }

    /// The boot's timing, labelled `label` (`recorded` when read from
    /// its record).
    pub fn timing(&self, label: &'static str) -> Timing {
        Timing {
            init: Init::Systemd,
            label,
            handover: Duration::from_secs_f64(self.handover),
            prompt: Duration::from_secs_f64(self.prompt),
            sshd: Duration::from_secs_f64(self.sshd),
        }
    }
}

/// Where one test's record of systemd's side is cached and kept.
pub struct Record {
    /// In the image cache: written by a run that measured systemd.
    pub cache: PathBuf,
    /// In the repository: the cache's file of a past run, copied there.
    kept: PathBuf,
}

/// `tests/tests/DIR/oracle/`: where the records of a test are kept.
fn kept_dir(dir: &str) -> PathBuf {
    crate::pid1_support::workspace()
        .join("tests/tests")
        .join(dir)
        .join("oracle")
}

impl Record {
    /// The record `NAME-oracle-BASE-HARNESS.json` of `image`'s Debian
    /// root, kept under `tests/tests/DIR/oracle/`.
    pub fn of(image: &Path, dir: &str, name: &str, harness: u32) -> Record {
        let base = std::fs::read_to_string(image.join("base")).expect("the image's base");
        let file = format!("{name}-oracle-{}-{harness}.json", base.trim());
        Record {
            cache: image.parent().expect("the image cache").join(&file),
            kept: kept_dir(dir).join(file),
        }
    }

    /// Every record of `NAME` and `harness` kept under
    /// `tests/tests/DIR/oracle/` parses as a `T` and is what [`Record::of`]
    /// reads for an image of its root while the image cache has none: the
    /// Debian roots they are of. Checked without a VM, so that a change of
    /// what a record holds without a new `harness` fails at once rather
    /// than booting systemd again unasked.
    pub fn check_kept<T: DeserializeOwned>(dir: &str, name: &str, harness: u32) -> Vec<String> {
        let cache = tempfile::tempdir().expect("tempdir");
        let image = cache.path().join("image");
        std::fs::create_dir(&image).expect("mkdir image");
        let suffix = format!("-{harness}.json");
        let mut bases = Vec::new();
        for entry in std::fs::read_dir(kept_dir(dir)).expect("read oracle/") {
            let file = entry.expect("an entry").file_name();
            let file = file.to_string_lossy();
            let Some(base) = file
                .strip_prefix(&format!("{name}-oracle-"))
                .and_then(|r| r.strip_suffix(&suffix))
            else {
                continue;
            };
            std::fs::write(image.join("base"), base).expect("write base");
            let record = Record::of(&image, dir, name, harness);
            assert_eq!(record.name(), file, "the cache's name for its root");
            assert!(
                record.read::<T>("FLOTILLA_NO_SUCH_VARIABLE").is_some(),
                "{file}: not read as this harness's record"
            );
            bases.push(base.to_string());
        }
        bases
    }

    /// The cached record, else the kept one; none when the environment
    /// has `fresh` set (systemd is to be measured again) or neither holds
    /// one that parses.
    pub fn read<T: DeserializeOwned>(&self, fresh: &str) -> Option<T> {
        if std::env::var_os(fresh).is_some() {
            return None;
        }
        [&self.cache, &self.kept]
            .into_iter()
            .find_map(|f| std::fs::read_to_string(f).ok())
            .and_then(|t| serde_json::from_str(&t).ok())
    }

    /// The record's file name (the same in the cache and the repository).
    pub fn name(&self) -> String {
        self.cache
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    }

    /// Writes `value` into the image cache (a copy into the repository
    /// is the maintainer's step, with the change that needed it).
    pub fn write<T: Serialize>(&self, value: &T) {
        std::fs::write(
            &self.cache,
            serde_json::to_string_pretty(value).expect("json"),
        )
        .expect("cache systemd's record");
    }
}
