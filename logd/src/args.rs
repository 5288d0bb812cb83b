//! `flotilla-logd`'s flags. Parsing does no I/O.

use crate::store::Rotation;
use flotilla_units::cli;
use std::path::PathBuf;

/// The usage text.
pub const USAGE: &str = "\
usage: flotilla-logd [--control PATH] [--max-size SIZE] [--max-files N]

Writes the units' output, which the init keeps in memory, to the init's log
directory (init --log-dir, config log-dir): <dir>/<unit>.log, rotated to
<unit>.log.1, .2, ... Run it as a unit of the init (contrib/units/).

  --control PATH   the init's control socket (default: $INIT_CONTROL, which
                   the init sets for its units, else the system's)
  --max-size SIZE  rotate <unit>.log before it passes SIZE bytes (K, M, G
                   suffixes; default 8M)
  --max-files N    files kept per unit, <unit>.log included (default 5)
";

/// The flags as given, defaults filled in.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Args {
    /// `--control PATH`.
    pub control: Option<PathBuf>,
    /// `--max-size` and `--max-files`.
    pub rotation: Rotation,
    /// `--help`.
    pub help: bool,
}

/// Parses the arguments after the program name.
pub fn parse<I: IntoIterator<Item = String>>(args: I) -> Result<Args, String> {
    let mut a = Args::default();
    let mut p = cli::parser(args);
    while let Some(arg) = p.next().map_err(cli::usage_error)? {
        let flag = cli::flag(arg)?;
        let mut value = || cli::value(&mut p, &flag);
        match flag.as_str() {
            "--control" => a.control = Some(PathBuf::from(value()?)),
            "--max-size" => {
                let v = value()?;
                a.rotation.max_size =
                    size(&v).ok_or_else(|| format!("--max-size: invalid size `{v}`"))?;
            }
            "--max-files" => {
                let v = value()?;
                a.rotation.max_files =
                    v.parse().ok().filter(|&n| n >= 1).ok_or_else(|| {
                        format!("--max-files: expected a number from 1, got `{v}`")
                    })?;
            }
            "-h" | "--help" => a.help = true,
            _ => return Err(format!("unknown argument `{flag}`")),
        }
    }
    Ok(a)
}

/// `4096`, `512K`, `8M`, `1G` (powers of 1024); at least 1 byte.
fn size(s: &str) -> Option<u64> {
    let (digits, shift) = match s.char_indices().last()? {
        (i, 'k' | 'K') => (s.get(..i)?, 10),
        (i, 'm' | 'M') => (s.get(..i)?, 20),
        (i, 'g' | 'G') => (s.get(..i)?, 30),
        _ => (s, 0),
    };
    let n: u64 = digits.parse().ok()?;
    n.checked_mul(1 << shift).filter(|&b| b > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(args: &[&str]) -> Result<Args, String> {
        parse(args.iter().map(|s| s.to_string()))
    }

    #[test]
    fn flags_and_defaults() {
        assert_eq!(p(&[]), Ok(Args::default()));
        assert_eq!(Rotation::default().max_size, 8 << 20);
        let a = p(&[
            "--control",
            "/c.sock",
            "--max-size=512K",
            "--max-files",
            "3",
        ]);
        assert_eq!(
            a,
            Ok(Args {
                control: Some("/c.sock".into()),
                rotation: Rotation {
                    max_size: 512 << 10,
                    max_files: 3
                },
                help: false,
            })
        );
        assert_eq!(
            p(&["--max-size", "2G"]).map(|a| a.rotation.max_size),
            Ok(2 << 30)
        );
        assert_eq!(
            p(&["--max-size", "100"]).map(|a| a.rotation.max_size),
            Ok(100)
        );
        assert!(p(&["-h"]).is_ok_and(|a| a.help));
    }

    #[test]
    fn bad_flags_say_what_is_wrong() {
        assert_eq!(
            p(&["--max-size", "8X"]),
            Err("--max-size: invalid size `8X`".into())
        );
        assert_eq!(
            p(&["--max-size", "0"]),
            Err("--max-size: invalid size `0`".into())
        );
        assert_eq!(
            p(&["--max-files", "0"]),
            Err("--max-files: expected a number from 1, got `0`".into())
        );
        assert_eq!(p(&["--control"]), Err("--control needs a value".into()));
        assert_eq!(p(&["--bogus"]), Err("unknown argument `--bogus`".into()));
        assert_eq!(p(&["--bogus=1"]), Err("unknown argument `--bogus`".into()));
        assert_eq!(p(&["x.log"]), Err("unknown argument `x.log`".into()));
        assert_eq!(
            p(&["--max-files="]),
            Err("--max-files needs a value".into())
        );
        assert_eq!(p(&["--help=yes"]), Err("--help takes no value".into()));
    }
}
