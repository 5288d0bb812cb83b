//! The files by which systemd tells journald a unit's `LogLevelMax=` and
//! `LogExtraFields=` (docs/service-context.md, "The journal"): under
//! `/run/systemd/units/`, `log-level-max:UNIT`, a symbolic link to the
//! level's number, and `log-extra-fields:UNIT`, the fields each as its
//! 64-bit little-endian length and `FIELD=value`. journald finds a
//! message's unit from its sender's cgroup and reads them for it. Each is
//! made under a temporary name and renamed into place, so that journald
//! never reads half of one; the end of the unit's run removes them. All of it is on
//! `/run`, a memory file system: no call waits on a disk.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use flotilla_units::context::journal::Syslog;

/// Where systemd keeps its units' state for other daemons.
pub const DIR: &str = "/run/systemd/units";

/// Writes the files of `unit` that `syslog` calls for under `dir` (none
/// when it sets neither key). The error names what failed.
pub fn export(dir: &Path, unit: &str, syslog: &Syslog) -> Result<(), String> {
    let level = syslog.level_max_link();
    let fields = syslog.extra_fields_file();
    if level.is_none() && fields.is_none() {
        return Ok(());
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("mkdir {}: {e}", dir.display()))?;
    let temp = |path: &Path| {
        let mut t = path.as_os_str().to_owned();
        t.push(format!(".{}", std::process::id()));
        PathBuf::from(t)
    };
    if let Some(level) = level {
        let path = dir.join(format!("log-level-max:{unit}"));
        let tmp = temp(&path);
        let _ = std::fs::remove_file(&tmp);
        std::os::unix::fs::symlink(&level, &tmp)
            .and_then(|()| std::fs::rename(&tmp, &path))
            .map_err(|e| {
                let _ = std::fs::remove_file(&tmp);
                format!("LogLevelMax= {}: {e}", path.display())
            })?;
    }
    if let Some(bytes) = fields {
        let path = dir.join(format!("log-extra-fields:{unit}"));
        let tmp = temp(&path);
        let _ = std::fs::remove_file(&tmp);
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o644)
            .open(&tmp)
            .and_then(|mut f| f.write_all(&bytes))
            .and_then(|()| std::fs::rename(&tmp, &path))
            .map_err(|e| {
                let _ = std::fs::remove_file(&tmp);
                format!("LogExtraFields= {}: {e}", path.display())
            })?;
    }
    Ok(())
}

/// Removes the files of `unit` under `dir` (gone already is fine): at
/// the end of every run of a unit, whatever its settings are now (a
/// reload may have dropped the keys since the start).
pub fn remove(dir: &Path, unit: &str) {
    for kind in ["log-level-max", "log-extra-fields"] {
        let _ = std::fs::remove_file(dir.join(format!("{kind}:{unit}")));
    }
}

#[cfg(test)]
#[allow(clippy::expect_used, clippy::indexing_slicing)]
mod tests {
    use super::*;

    #[test]
    fn files_as_journald_reads_them_and_gone_at_the_end() {
        let dir = tempfile::tempdir().expect("tempdir");
        let units = dir.path().join("units");
        let mut s = Syslog::default();
        assert_eq!(export(&units, "web.service", &s), Ok(()));
        assert!(!units.exists(), "nothing to say, nothing made");
        s.level_max = Some(6);
        s.extra_fields = vec!["FOO=bar".into(), "N=".into()];
        assert_eq!(export(&units, "web.service", &s), Ok(()));
        let paths = [
            units.join("log-level-max:web.service"),
            units.join("log-extra-fields:web.service"),
        ];
        assert_eq!(
            std::fs::read_link(&paths[0]).expect("the link"),
            PathBuf::from("6")
        );
        let bytes = std::fs::read(&paths[1]).expect("the fields");
        assert_eq!(
            bytes,
            [
                &7u64.to_le_bytes()[..],
                b"FOO=bar",
                &2u64.to_le_bytes()[..],
                b"N="
            ]
            .concat()
        );
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&paths[1])
            .expect("stat")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o644);
        // A second start replaces them (the rename), leaving no temporary.
        s.level_max = Some(3);
        assert_eq!(export(&units, "web.service", &s), Ok(()));
        assert_eq!(std::fs::read_link(&paths[0]).ok(), Some(PathBuf::from("3")));
        assert_eq!(std::fs::read_dir(&units).expect("ls").count(), 2);
        remove(&units, "other.service");
        assert_eq!(std::fs::read_dir(&units).expect("ls").count(), 2);
        remove(&units, "web.service");
        assert_eq!(std::fs::read_dir(&units).expect("ls").count(), 0);
    }
}
