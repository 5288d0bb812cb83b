//! `TemporaryFileSystem=`: a new tmpfs over a path of the service's mount
//! namespace, hiding what is there (`systemd.exec(5)`).
//!
//! Each word is `PATH[:OPTIONS]`. The tmpfs is mounted with `nodev`,
//! `strictatime`, `mode=0755` and systemd's limits for a nested tmpfs
//! (`size=10%`, `nr_inodes=400k`); `OPTIONS` (comma-separated) come after
//! them, so `dev`, `nostrictatime`, `mode=0700` or `size=1M` override
//! them, and `ro` makes it read-only once the directories and links the
//! unit's own keys put in it are made. The service's own directories
//! below it (`StateDirectory=` …) are put back on it
//! ([`super::mounts`]).

use super::sandbox::{assign_words, normal_absolute, TmpfsRule};

/// How a tmpfs is mounted: `mount(2)`'s flags and data, and whether it is
/// made read-only at the end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TmpfsMount {
    /// `MS_*` flags (Linux's numbers), `MS_RDONLY` left out.
    pub flags: u64,
    /// The file system's own options (`mode=`, `size=` …).
    pub data: String,
    /// `ro`: read-only once its mount points and links are made.
    pub read_only: bool,
}

/// Linux's `MS_*` flags a mount option word sets or clears.
const FLAG_WORDS: [(&str, u64, bool); 22] = [
    ("ro", MS_RDONLY, true),
    ("rw", MS_RDONLY, false),
    ("nosuid", 2, true),
    ("suid", 2, false),
    ("nodev", MS_NODEV, true),
    ("dev", MS_NODEV, false),
    ("noexec", 8, true),
    ("exec", 8, false),
    ("sync", 16, true),
    ("async", 16, false),
    ("dirsync", 128, true),
    ("noatime", 1024, true),
    ("atime", 1024, false),
    ("nodiratime", 2048, true),
    ("diratime", 2048, false),
    ("relatime", 1 << 21, true),
    ("norelatime", 1 << 21, false),
    ("strictatime", MS_STRICTATIME, true),
    ("nostrictatime", MS_STRICTATIME, false),
    ("lazytime", 1 << 25, true),
    ("nolazytime", 1 << 25, false),
    ("silent", 1 << 15, true),
];

const MS_RDONLY: u64 = 1;
const MS_NODEV: u64 = 4;
const MS_STRICTATIME: u64 = 1 << 24;

/// What every such tmpfs starts from, as systemd's `namespace.c` mounts it.
const DEFAULT_DATA: &str = "mode=0755,size=10%,nr_inodes=400k";

impl TmpfsRule {
    /// The flags and data to mount it with: the defaults, then its
    /// options in order (a later word wins).
    pub fn mount(&self) -> TmpfsMount {
        let mut flags = MS_NODEV | MS_STRICTATIME;
        let mut data = DEFAULT_DATA.to_string();
        for word in self.options.split(',').filter(|w| !w.is_empty()) {
            match FLAG_WORDS.iter().find(|(w, _, _)| *w == word) {
                Some(&(_, bit, true)) => flags |= bit,
                Some(&(_, bit, false)) => flags &= !bit,
                None => {
                    data.push(',');
                    data.push_str(word);
                }
            }
        }
        TmpfsMount {
            read_only: flags & MS_RDONLY != 0,
            flags: flags & !MS_RDONLY,
            data,
        }
    }
}

/// One word of `TemporaryFileSystem=`.
pub fn parse_tmpfs(word: &str) -> Result<TmpfsRule, String> {
    let (path, options) = word.split_once(':').unwrap_or((word, ""));
    Ok(TmpfsRule {
        path: normal_absolute(path)?,
        options: options.to_string(),
    })
}

/// Adds the tmpfs of one assignment (an empty value clears the list).
pub fn assign(list: &mut Vec<TmpfsRule>, value: &str) -> Result<(), String> {
    assign_words(list, value, parse_tmpfs)
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::path::PathBuf;

    #[test]
    fn defaults_then_the_options_in_order() {
        let plain = parse_tmpfs("/var/lib").unwrap();
        assert_eq!(plain.path, PathBuf::from("/var/lib"));
        assert_eq!(
            plain.mount(),
            TmpfsMount {
                flags: MS_NODEV | MS_STRICTATIME,
                data: DEFAULT_DATA.into(),
                read_only: false,
            }
        );
        let m = parse_tmpfs("/run:ro,dev,noexec,size=1M,mode=0700")
            .unwrap()
            .mount();
        assert!(m.read_only);
        assert_eq!(m.flags, MS_STRICTATIME | 8);
        assert_eq!(m.data, format!("{DEFAULT_DATA},size=1M,mode=0700"));
    }

    #[test]
    fn the_path_is_absolute_and_a_list_accumulates() {
        assert!(parse_tmpfs("var/lib").is_err());
        assert!(parse_tmpfs("/var/../lib").is_err());
        let mut list = Vec::new();
        assign(&mut list, "/var/lib /run:ro").unwrap();
        assign(&mut list, "/var/lib").unwrap();
        assert_eq!(list.len(), 2);
        assert_eq!(list[1].options, "ro");
        assign(&mut list, "").unwrap();
        assert!(list.is_empty());
    }
}
