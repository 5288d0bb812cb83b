//! Reading a units directory.

use super::yaml::MAX_FILE_SIZE;
use super::{parse_yaml, LoadedDir, ParsedUnit};
use crate::diag::{Diagnostic, Pos};
use crate::spec::Origin;
use std::ffi::OsString;
use std::io::Read;
use std::path::Path;

/// Loads every unit file of `dir`, in file-name order (byte order):
///
/// - `*.yaml` and `*.yml` files, with [`parse_yaml`];
/// - `*.service` files (systemd units), with
///   [`crate::systemd::translate_file`]; the unit is named after the file
///   (`web.service`), as fleet names its units. Templates
///   (`name@.service`) are skipped with a warning: nothing instantiates them
///   here.
///
/// Hidden files (names starting with `.`), other names, and
/// subdirectories are ignored; the directory is not searched recursively.
/// Symbolic links are followed.
///
/// A file that cannot be read, is larger than 1 MiB, or is not UTF-8 is a
/// [`Diagnostic`] like any other problem of that file; only a directory that
/// cannot be listed is an I/O error. Duplicate unit names and duplicate
/// targets across files are not checked here but when the graph is built.
pub fn load_dir(dir: &Path) -> std::io::Result<LoadedDir> {
    let mut names: Vec<OsString> = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let name = entry?.file_name();
        let path = Path::new(&name);
        let wanted = matches!(
            path.extension().and_then(|e| e.to_str()),
            Some("yaml" | "yml" | "service")
        );
        if wanted && !name.as_encoded_bytes().starts_with(b".") {
            names.push(name);
        }
    }
    names.sort();
    let mut out = LoadedDir::default();
    for name in names {
        let path = dir.join(&name);
        let file = path.display().to_string();
        let parsed = load_file(&path, &file);
        out.diagnostics.extend(parsed.diagnostics);
        if let Some(spec) = parsed.spec {
            out.units.push((spec, parsed.origin));
        }
    }
    Ok(out)
}

fn failed(file: &str, pos: Pos, message: String) -> ParsedUnit {
    ParsedUnit {
        spec: None,
        origin: Origin::unplaced(file),
        diagnostics: vec![Diagnostic::error(file, pos, message)],
    }
}

fn load_file(path: &Path, file: &str) -> ParsedUnit {
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) => return failed(file, Pos::default(), format!("cannot read the file: {e}")),
    };
    if meta.is_dir() {
        return ParsedUnit {
            spec: None,
            origin: Origin::unplaced(file),
            diagnostics: vec![Diagnostic::warning(
                file,
                Pos::default(),
                "a directory, not a unit file; skipped",
            )],
        };
    }
    let text = match read_limited(path) {
        Ok(bytes) if bytes.len() > MAX_FILE_SIZE => {
            return failed(
                file,
                Pos::default(),
                format!("the file is larger than 1 MiB ({MAX_FILE_SIZE} bytes); not read"),
            )
        }
        Ok(bytes) => match String::from_utf8(bytes) {
            Ok(text) => text,
            Err(e) => {
                let good = &e.as_bytes()[..e.utf8_error().valid_up_to()];
                return failed(
                    file,
                    end_pos(good),
                    "the file is not valid UTF-8".to_string(),
                );
            }
        },
        Err(e) => return failed(file, Pos::default(), format!("cannot read the file: {e}")),
    };
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or(file);
    match name.strip_suffix(".service") {
        Some(unit) if unit.ends_with('@') => ParsedUnit {
            spec: None,
            origin: Origin::unplaced(file),
            diagnostics: vec![Diagnostic::warning(
                file,
                Pos::default(),
                "a template unit (`name@.service`) is not loaded from the units directory; \
                 copy it to `name@instance.service` to run an instance",
            )],
        },
        Some(_) => crate::systemd::translate_file(file, name, &text),
        None => parse_yaml(file, &text),
    }
}

/// Reads at most one byte more than the limit, so that a huge (or endless)
/// file is not read whole.
fn read_limited(path: &Path) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    std::fs::File::open(path)?
        .take(MAX_FILE_SIZE as u64 + 1)
        .read_to_end(&mut bytes)?;
    Ok(bytes)
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
