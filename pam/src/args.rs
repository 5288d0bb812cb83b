//! `flotilla-pam`'s flags. Parsing does no I/O.

use flotilla_units::cli;
use std::ffi::OsString;

/// The usage text.
pub const USAGE: &str = "\
usage: flotilla-pam --service NAME --uid UID --gid GID [--groups GID,...]
                    [--tty PATH] [--expand-env] [--] PROGRAM ARGV0 [ARG...]

Opens a PAM session for the user UID under the PAM service NAME
(/etc/pam.d/NAME), takes on the user's identity (GID, the supplementary
GIDs) and runs PROGRAM with ARGV0 ARG... and the environment PAM adds to
its own; a child of it waits to close the session when PROGRAM's process
ends. The init runs it for a unit with PAMName= (docs/service-context.md);
it is not meant to be run by hand.

  --service NAME   the PAM service
  --uid UID        the user (its name is looked up: PAM takes names)
  --gid GID        the primary group
  --groups LIST    the supplementary groups, comma-separated (default: none)
  --tty PATH       the session's terminal (PAM_TTY)
  --expand-env     expand $NAME and ${NAME} in ARGV0 ARG... with the
                   environment the program gets, PAM's included, as
                   systemd expands a unit's command line after PAM
";

/// What the init asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Args {
    /// `--service`.
    pub service: String,
    /// `--uid`.
    pub uid: u32,
    /// `--gid`.
    pub gid: u32,
    /// `--groups`.
    pub groups: Vec<u32>,
    /// `--tty`.
    pub tty: Option<String>,
    /// `--expand-env`.
    pub expand_env: bool,
    /// The program's path, then its whole argv (its own argv[0] first).
    pub program: OsString,
    /// The argv `program` gets.
    pub argv: Vec<OsString>,
}

/// The outcome of parsing: a session to open, or the usage asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Parsed {
    /// `--help`.
    Help,
    /// Everything needed to run.
    Run(Args),
}

/// Parses the arguments after the program name.
pub fn parse<I: IntoIterator<Item = String>>(args: I) -> Result<Parsed, String> {
    let (mut service, mut uid, mut gid, mut groups, mut tty) = (None, None, None, Vec::new(), None);
    let mut expand_env = false;
    let mut rest = Vec::new();
    let mut p = cli::parser(args);
    while let Some(arg) = p.next().map_err(cli::usage_error)? {
        if let lexopt::Arg::Value(v) = arg {
            // The program, after `--` or as the first word that is no
            // flag (as env(1) and setpriv(1) take it): everything from
            // here is its own, flags too.
            rest.push(v);
            rest.extend(p.raw_args().map_err(cli::usage_error)?);
            break;
        }
        let flag = cli::flag(arg)?;
        match flag.as_str() {
            "--service" => service = Some(cli::value(&mut p, &flag)?),
            "--uid" => uid = Some(id(&flag, &cli::value(&mut p, &flag)?)?),
            "--gid" => gid = Some(id(&flag, &cli::value(&mut p, &flag)?)?),
            "--groups" => {
                groups = cli::value(&mut p, &flag)?
                    .split(',')
                    .map(|g| id(&flag, g))
                    .collect::<Result<_, _>>()?
            }
            "--tty" => tty = Some(cli::value(&mut p, &flag)?),
            "--expand-env" => expand_env = true,
            "-h" | "--help" => return Ok(Parsed::Help),
            _ => {
                return Err(format!(
                    "unknown argument `{}`",
                    cli::as_written(&flag, &mut p)
                ))
            }
        }
    }
    let need = |what: &str| format!("{what} is required");
    let service = service.ok_or_else(|| need("--service"))?;
    let uid = uid.ok_or_else(|| need("--uid"))?;
    let gid = gid.ok_or_else(|| need("--gid"))?;
    let mut rest = rest.into_iter();
    let program = rest
        .next()
        .ok_or_else(|| "no program: give `-- PROGRAM ARGV0 [ARG...]`".to_string())?;
    let argv: Vec<OsString> = rest.collect();
    if argv.is_empty() {
        return Err("no argv: give `-- PROGRAM ARGV0 [ARG...]`".into());
    }
    Ok(Parsed::Run(Args {
        service,
        uid,
        gid,
        groups,
        tty,
        expand_env,
        program,
        argv,
    }))
}

/// A user or group ID: a decimal number below 2^32 - 1 (`(uid_t) -1` means
/// "unchanged" to the kernel).
fn id(flag: &str, v: &str) -> Result<u32, String> {
    v.parse::<u32>()
        .ok()
        .filter(|&n| n != u32::MAX)
        .ok_or_else(|| format!("{flag}: `{v}` is not a user or group ID"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(args: &[&str]) -> Result<Parsed, String> {
        parse(args.iter().map(|s| s.to_string()))
    }

    #[test]
    fn a_whole_request() {
        let got = p(&[
            "--service",
            "systemd-user",
            "--uid",
            "1000",
            "--gid",
            "100",
            "--groups",
            "100,27",
            "--tty",
            "/dev/tty1",
            "--expand-env",
            "--",
            "/lib/systemd/systemd",
            "systemd",
            "--user",
        ]);
        assert_eq!(
            got,
            Ok(Parsed::Run(Args {
                service: "systemd-user".into(),
                uid: 1000,
                gid: 100,
                groups: vec![100, 27],
                tty: Some("/dev/tty1".into()),
                expand_env: true,
                program: "/lib/systemd/systemd".into(),
                argv: vec!["systemd".into(), "--user".into()],
            }))
        );
    }

    #[test]
    fn the_program_may_take_flags_of_its_own() {
        let Ok(Parsed::Run(a)) = p(&[
            "--service=x",
            "--uid=0",
            "--gid=0",
            "--",
            "/bin/sh",
            "sh",
            "--uid",
            "-c",
            "true",
        ]) else {
            unreachable!("parses")
        };
        assert_eq!(a.groups, Vec::<u32>::new());
        assert_eq!(a.argv, ["sh", "--uid", "-c", "true"].map(OsString::from));
    }

    #[test]
    fn bad_input_is_named() {
        let cases: &[(&[&str], &str)] = &[
            (
                &["--uid", "0", "--gid", "0", "--", "/bin/true", "true"],
                "--service is required",
            ),
            (
                &["--service", "x", "--gid", "0", "--", "/bin/true", "true"],
                "--uid is required",
            ),
            (
                &["--service", "x", "--uid", "0", "--", "/bin/true", "true"],
                "--gid is required",
            ),
            (
                &["--service", "x", "--uid", "0", "--gid", "0"],
                "no program: give `-- PROGRAM ARGV0 [ARG...]`",
            ),
            (
                &[
                    "--service",
                    "x",
                    "--uid",
                    "0",
                    "--gid",
                    "0",
                    "--",
                    "/bin/true",
                ],
                "no argv: give `-- PROGRAM ARGV0 [ARG...]`",
            ),
            (
                &[
                    "--service",
                    "x",
                    "--uid",
                    "root",
                    "--gid",
                    "0",
                    "--",
                    "/bin/true",
                    "true",
                ],
                "--uid: `root` is not a user or group ID",
            ),
            (
                &[
                    "--service",
                    "x",
                    "--uid",
                    "0",
                    "--gid",
                    "4294967295",
                    "--",
                    "/bin/true",
                    "true",
                ],
                "--gid: `4294967295` is not a user or group ID",
            ),
            (
                &[
                    "--service",
                    "x",
                    "--uid",
                    "0",
                    "--gid",
                    "0",
                    "--groups",
                    "1,,2",
                ],
                "--groups: `` is not a user or group ID",
            ),
            (&["--service"], "--service needs a value"),
            (&["--bogus=1"], "unknown argument `--bogus=1`"),
        ];
        for (args, want) in cases {
            assert_eq!(p(args), Err(want.to_string()), "{args:?}");
        }
    }

    #[test]
    fn help() {
        assert_eq!(p(&["--help"]), Ok(Parsed::Help));
    }
}
