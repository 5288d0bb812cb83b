//! The files of a units directory, turned into units. Pure: the init reads
//! the directory (through its `Sys`) and hands each file's name and bytes
//! here, so this crate does no I/O and the rules below are tested with
//! made-up files.

use flotilla_units::diag::{Diagnostic, Pos};
use flotilla_units::load::MAX_FILE_SIZE;
use flotilla_units::load::{parse_yaml, LoadedDir, ParsedUnit};
use flotilla_units::spec::Origin;

/// A file's modification time in µs since the epoch, as the loader and
/// the bus both take it (0 for one before the epoch).
pub fn mtime_us(t: std::time::SystemTime) -> u64 {
    t.duration_since(std::time::SystemTime::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX))
}

/// Reads a file: its path in, what reading gave out.
pub type ReadFile<'a> = dyn FnMut(&str) -> FileRead + 'a;

/// What reading one file of a units directory gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileRead {
    /// Its bytes. A reader stops after `MAX_FILE_SIZE + 1` bytes: more
    /// than [`MAX_FILE_SIZE`] means the file is too large.
    Bytes(Vec<u8>),
    /// The name is a directory.
    Directory,
    /// It could not be read; the reason, for people.
    Failed(String),
}

/// Whether a directory entry named `name` is a unit file: `*.yaml`,
/// `*.yml`, `*.service` or `*.target`, not hidden (no leading `.`).
pub fn is_unit_file_name(name: &str) -> bool {
    let wanted = [".yaml", ".yml", ".service", ".target"]
        .iter()
        .any(|ext| name.len() > ext.len() && name.ends_with(ext));
    wanted && !name.starts_with('.')
}

/// Loads the files of a units directory, given as (path, what reading it
/// gave) in the order to load them (the init sorts them by file name):
///
/// - `*.yaml` and `*.yml` files, with [`parse_yaml`];
/// - `*.service` and `*.target` files (systemd units), with
///   [`crate::translate_file`]; the unit is named after the file
///   (`web.service`), as fleet names its units; a target is a `virtual`
///   unit. Templates (`name@.service`) are skipped with a warning: nothing
///   instantiates them here.
///
/// A file that could not be read, is larger than 1 MiB, or is not UTF-8 is
/// a [`Diagnostic`] like any other problem of that file; a directory is a
/// warning. Duplicate unit names and duplicate targets across files are not
/// checked here but when the graph is built.
pub fn load_files(files: impl IntoIterator<Item = (String, FileRead)>) -> LoadedDir {
    let mut out = LoadedDir::default();
    for (file, read) in files {
        let parsed = load_file(&file, read);
        out.diagnostics.extend(parsed.diagnostics);
        if let Some(spec) = parsed.spec {
            out.units.push((spec, parsed.origin));
        }
    }
    out
}

fn failed(file: &str, pos: Pos, message: String) -> ParsedUnit {
    ParsedUnit {
        spec: None,
        origin: Origin::unplaced(file),
        diagnostics: vec![Diagnostic::error(file, pos, message)],
    }
}

fn skipped(file: &str, message: &str) -> ParsedUnit {
    ParsedUnit {
        spec: None,
        origin: Origin::unplaced(file),
        diagnostics: vec![Diagnostic::warning(file, Pos::default(), message)],
    }
}

/// The text of a unit file (or drop-in) as read, or why it cannot be
/// used: not readable, a directory, larger than 1 MiB, not UTF-8.
pub(super) fn file_text(file: &str, read: FileRead) -> Result<String, Box<ParsedUnit>> {
    let bytes = match read {
        FileRead::Bytes(bytes) => bytes,
        FileRead::Directory => {
            return Err(Box::new(skipped(
                file,
                "a directory, not a unit file; skipped",
            )))
        }
        FileRead::Failed(why) => {
            return Err(Box::new(failed(
                file,
                Pos::default(),
                format!("cannot read the file: {why}"),
            )))
        }
    };
    if bytes.len() > MAX_FILE_SIZE {
        return Err(Box::new(failed(
            file,
            Pos::default(),
            format!("the file is larger than 1 MiB ({MAX_FILE_SIZE} bytes); not read"),
        )));
    }
    String::from_utf8(bytes).map_err(|e| {
        let good = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        Box::new(failed(
            file,
            end_pos(good),
            "the file is not valid UTF-8".to_string(),
        ))
    })
}

/// What a template unit file in the units directory gets.
pub(super) const TEMPLATE_NOT_LOADED: &str =
    "a template unit (`name@.service`) is not loaded from the units directory; \
     copy it to `name@instance.service` to run an instance";

fn load_file(file: &str, read: FileRead) -> ParsedUnit {
    let text = match file_text(file, read) {
        Ok(text) => text,
        Err(not) => return *not,
    };
    let name = file.rsplit('/').next().unwrap_or(file);
    let systemd = name
        .strip_suffix(".service")
        .or_else(|| name.strip_suffix(".target"));
    match systemd {
        Some(unit) if unit.ends_with('@') => skipped(file, TEMPLATE_NOT_LOADED),
        Some(_) => crate::translate_file(file, name, &text),
        None => parse_yaml(file, &text),
    }
}

/// The position just after `valid`, a valid UTF-8 prefix of the file.
fn end_pos(valid: &[u8]) -> Pos {
    let text = std::str::from_utf8(valid).unwrap_or_default();
    let line = text.matches('\n').count() + 1;
    let col = text.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    Pos::new(
        u32::try_from(line).unwrap_or(u32::MAX),
        u32::try_from(col).unwrap_or(u32::MAX),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_in_microseconds_since_the_epoch() {
        let t = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::new(2, 345_678_901);
        assert_eq!(mtime_us(t), 2_345_678);
        let before = std::time::SystemTime::UNIX_EPOCH - std::time::Duration::from_secs(1);
        assert_eq!(mtime_us(before), 0);
    }

    #[test]
    fn unit_file_names() {
        for yes in [
            "a.yaml",
            "b.yml",
            "web.service",
            "t@.service",
            "x.y.yaml",
            "multi-user.target",
        ] {
            assert!(is_unit_file_name(yes), "{yes}");
        }
        for no in [
            ".hidden.yaml",
            "notes.txt",
            "z.yaml~",
            ".yaml",
            "yaml",
            "a.YAML",
        ] {
            assert!(!is_unit_file_name(no), "{no}");
        }
    }
}
