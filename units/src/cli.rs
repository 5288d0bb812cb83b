//! What the programs' flag parsers share (`init`, `flotilla-logd`,
//! `clusterd`, `initctl` and its `systemctl` grammar all read their
//! arguments with `lexopt`): an argument as a flag's name or a plain word,
//! a flag as the user wrote it, a flag's value and lexopt's errors, in
//! flotilla's words, so that every program says a bad flag the same way.

use lexopt::Parser;

/// A parser of the arguments after the program name.
pub fn parser<I: IntoIterator<Item = String>>(args: I) -> Parser {
    Parser::from_args(args)
}

/// The value of `flag` (`--flag VALUE` or `--flag=VALUE`): missing or
/// empty is `FLAG needs a value`.
pub fn value(p: &mut Parser, flag: &str) -> Result<String, String> {
    match p.value().map(|v| v.into_string()) {
        Ok(Ok(v)) if !v.is_empty() => Ok(v),
        Ok(Err(_)) => Err(format!("{flag}: the value is not UTF-8")),
        _ => Err(format!("{flag} needs a value")),
    }
}

/// One argument as lexopt reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Word {
    /// A flag, named as it is written: `--units`, `-h`.
    Flag(String),
    /// Anything else: a verb, a unit's name, a stray value.
    Value(String),
}

/// `arg` as a [`Word`].
pub fn word(arg: lexopt::Arg<'_>) -> Word {
    match arg {
        lexopt::Arg::Long(name) => Word::Flag(format!("--{name}")),
        lexopt::Arg::Short(c) => Word::Flag(format!("-{c}")),
        lexopt::Arg::Value(v) => Word::Value(v.to_string_lossy().into_owned()),
    }
}

/// The flag as written (`--units`, `-h`), or the error for an argument
/// that is not a flag: `unknown argument `ARG``.
pub fn flag(arg: lexopt::Arg<'_>) -> Result<String, String> {
    match word(arg) {
        Word::Flag(f) => Ok(f),
        Word::Value(v) => Err(format!("unknown argument `{v}`")),
    }
}

/// Flag `name`, which nobody knows, as the user wrote it, with what was
/// attached to it: `--bogus=1`, `-xyz` (the rest of a bundle), for the
/// message that refuses it.
pub fn as_written(name: &str, p: &mut Parser) -> String {
    match p.optional_value() {
        Some(v) if name.starts_with("--") => format!("{name}={}", v.to_string_lossy()),
        Some(v) => format!("{name}{}", v.to_string_lossy()),
        None => name.to_string(),
    }
}

/// lexopt's own errors in flotilla's words: a flag given a value it does
/// not take (`--check=yes`).
pub fn usage_error(e: lexopt::Error) -> String {
    match e {
        lexopt::Error::UnexpectedValue { option, .. } => format!("{option} takes no value"),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parser(args: &[&str]) -> Parser {
        Parser::from_args(args.iter().map(|a| a.to_string()))
    }

    #[test]
    fn values_flags_and_errors() {
        let mut p = parser(&[
            "--units=/u",
            "--target",
            "-x",
            "--target=",
            "stray",
            "--check=yes",
        ]);
        let f = p.next().ok().flatten().map(flag);
        assert_eq!(f, Some(Ok("--units".to_string())));
        assert_eq!(value(&mut p, "--units"), Ok("/u".to_string()));
        assert!(p.next().is_ok());
        assert_eq!(value(&mut p, "--target"), Ok("-x".to_string()));
        assert!(p.next().is_ok());
        assert_eq!(
            value(&mut p, "--target"),
            Err("--target needs a value".to_string())
        );
        let stray = p.next().ok().flatten().map(flag);
        assert_eq!(stray, Some(Err("unknown argument `stray`".to_string())));
        assert!(p.next().is_ok());
        let e = p.next().err().map(usage_error);
        assert_eq!(e, Some("--check takes no value".to_string()));
    }

    #[test]
    fn unknown_flags_as_written() {
        for (args, written) in [
            (&["--bogus=1"][..], "--bogus=1"),
            (&["--bogus"][..], "--bogus"),
            (&["-xyz"][..], "-xyz"),
            (&["-x"][..], "-x"),
        ] {
            let mut p = parser(args);
            let Some(Word::Flag(name)) = p.next().ok().flatten().map(word) else {
                panic!("{args:?}: no flag");
            };
            assert_eq!(as_written(&name, &mut p), written);
        }
        let mut p = parser(&["--", "--etcd"]);
        let w = p.next().ok().flatten().map(word);
        assert_eq!(w, Some(Word::Value("--etcd".to_string())));
    }
}
