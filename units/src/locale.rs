//! The system's locale in the manager's environment, as systemd's PID 1
//! reads it at start, at every reload and at a re-exec (docs/dbus.md,
//! "The manager's environment"): the variables of locale(7) that
//! [`VARIABLES`] names, from the kernel command line's `locale.NAME=`
//! words when there is any, else from the first of [`FILES`] that exists
//! (Debian's systemd reads `/etc/default/locale` when `/etc/locale.conf`
//! is missing), else `LANG=`[`DEFAULT_LANG`]. What the source does not
//! set is taken out of the environment, so that a variable removed from
//! the file is gone after the next reload. Pure: the caller reads the
//! files (`init/src/runtime/locale.rs`) and applies the answer.

/// The variables of the locale, in systemd's order.
pub const VARIABLES: [&str; 14] = [
    "LANG",
    "LANGUAGE",
    "LC_CTYPE",
    "LC_NUMERIC",
    "LC_TIME",
    "LC_COLLATE",
    "LC_MONETARY",
    "LC_MESSAGES",
    "LC_PAPER",
    "LC_NAME",
    "LC_ADDRESS",
    "LC_TELEPHONE",
    "LC_MEASUREMENT",
    "LC_IDENTIFICATION",
];

/// The locale files, the first that exists read: systemd's
/// `/etc/locale.conf`, then Debian's `/etc/default/locale`.
pub const FILES: [&str; 2] = ["/etc/locale.conf", "/etc/default/locale"];

/// `LANG` when nothing sets any variable (Debian's build of systemd:
/// `C.UTF-8`).
pub const DEFAULT_LANG: &str = "C.UTF-8";

/// The prefix of the kernel command line's words that set the locale
/// (`locale.LANG=de_DE.UTF-8`).
const CMDLINE_PREFIX: &str = "locale.";

/// What reading one locale file gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileRead {
    /// The file does not exist: the next one is read.
    Missing,
    /// Its assignments, in file order.
    Read(Vec<(String, String)>),
    /// It exists but could not be read or parsed (the message says why):
    /// no locale is set, as systemd's PID 1 then sets none.
    Failed(String),
}

/// The locale the manager's environment gets.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Locale {
    /// The variables set, in [`VARIABLES`]' order.
    set: Vec<(&'static str, String)>,
    /// Why no locale could be read, when a file failed.
    pub problem: Option<String>,
}

impl Locale {
    /// The variables to set, in [`VARIABLES`]' order.
    pub fn set(&self) -> impl Iterator<Item = (&'static str, &str)> {
        self.set.iter().map(|(k, v)| (*k, v.as_str()))
    }

    /// The variables of [`VARIABLES`] to take out: those not set.
    pub fn unset(&self) -> impl Iterator<Item = &'static str> + '_ {
        VARIABLES
            .into_iter()
            .filter(|n| !self.set.iter().any(|(k, _)| k == n))
    }

    /// The variables of [`VARIABLES`] that `pairs` sets to a non-empty
    /// value, the last assignment of a name winning; other names ignored.
    fn of<'a>(pairs: impl Iterator<Item = (&'a str, &'a str)>) -> Locale {
        let mut values: [Option<&str>; VARIABLES.len()] = [None; VARIABLES.len()];
        for (k, v) in pairs {
            if let Some(slot) = VARIABLES
                .iter()
                .position(|n| *n == k)
                .and_then(|i| values.get_mut(i))
            {
                *slot = Some(v);
            }
        }
        let set = VARIABLES
            .into_iter()
            .zip(values)
            .filter_map(|(k, v)| v.filter(|v| !v.is_empty()).map(|v| (k, v.to_string())))
            .collect();
        Locale { set, problem: None }
    }
}

/// The `locale.NAME=VALUE` words of a kernel command line as assignments;
/// `None` when there is none (the files are read then).
fn from_cmdline(cmdline: &str) -> Option<Locale> {
    let pairs: Vec<(&str, &str)> = cmdline
        .split_ascii_whitespace()
        .filter_map(|w| w.strip_prefix(CMDLINE_PREFIX)?.split_once('='))
        .filter(|(k, _)| VARIABLES.contains(k))
        .collect();
    (!pairs.is_empty()).then(|| Locale::of(pairs.into_iter()))
}

/// The manager's locale: from `cmdline` (the kernel's, `None` where it is
/// not read: in a container) when it has a `locale.` word for one of the
/// variables, else from the first of [`FILES`] that `read_file` does not
/// find missing. `LANG=`[`DEFAULT_LANG`] when neither sets anything; none
/// at all when a file failed.
pub fn manager_locale(
    cmdline: Option<&str>,
    mut read_file: impl FnMut(&str) -> FileRead,
) -> Locale {
    let read = match cmdline.and_then(from_cmdline) {
        Some(l) => l,
        None => {
            let file = FILES
                .into_iter()
                .map(&mut read_file)
                .find(|r| *r != FileRead::Missing);
            match file {
                Some(FileRead::Read(pairs)) => {
                    Locale::of(pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())))
                }
                Some(FileRead::Failed(why)) => {
                    return Locale {
                        set: Vec::new(),
                        problem: Some(why),
                    }
                }
                Some(FileRead::Missing) | None => Locale::default(),
            }
        }
    };
    if read.set.is_empty() {
        return Locale {
            set: vec![("LANG", DEFAULT_LANG.to_string())],
            problem: None,
        };
    }
    read
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(s: &[(&str, &str)]) -> FileRead {
        FileRead::Read(
            s.iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        )
    }

    fn shown(l: &Locale) -> Vec<String> {
        l.set().map(|(k, v)| format!("{k}={v}")).collect()
    }

    /// A reader answering from (path, answer) pairs, the rest missing,
    /// that records the paths asked for.
    fn files<'a>(
        table: &'a [(&'a str, FileRead)],
        asked: &'a mut Vec<String>,
    ) -> impl FnMut(&str) -> FileRead + 'a {
        move |p| {
            asked.push(p.to_string());
            table
                .iter()
                .find(|(q, _)| *q == p)
                .map(|(_, r)| r.clone())
                .unwrap_or(FileRead::Missing)
        }
    }

    #[test]
    fn locale_conf_first_then_debians_file_then_the_default() {
        let conf = ("/etc/locale.conf", pairs(&[("LANG", "en_US.UTF-8")]));
        let debian = (
            "/etc/default/locale",
            pairs(&[("LANG", "de_DE.UTF-8"), ("LC_CTYPE", "C")]),
        );
        // (files present, variables, files read)
        type Row<'a> = (Vec<(&'a str, FileRead)>, Vec<&'a str>, Vec<&'a str>);
        let table: Vec<Row> = vec![
            (
                vec![conf.clone(), debian.clone()],
                vec!["LANG=en_US.UTF-8"],
                vec!["/etc/locale.conf"],
            ),
            (
                vec![debian.clone()],
                vec!["LANG=de_DE.UTF-8", "LC_CTYPE=C"],
                vec!["/etc/locale.conf", "/etc/default/locale"],
            ),
            (
                vec![],
                vec!["LANG=C.UTF-8"],
                vec!["/etc/locale.conf", "/etc/default/locale"],
            ),
            // A file that exists and sets nothing (Debian's as installed:
            // a comment) is read, and the default taken.
            (
                vec![("/etc/locale.conf", pairs(&[])), debian.clone()],
                vec!["LANG=C.UTF-8"],
                vec!["/etc/locale.conf"],
            ),
        ];
        for (present, want, want_asked) in table {
            let mut asked = Vec::new();
            let l = manager_locale(None, files(&present, &mut asked));
            assert_eq!(shown(&l), want, "{present:?}");
            assert_eq!(asked, want_asked, "{present:?}");
            assert_eq!(l.problem, None);
        }
    }

    #[test]
    fn what_the_source_does_not_set_is_unset() {
        let l = manager_locale(None, |_| {
            pairs(&[("LC_TIME", "C"), ("LANG", "fr_FR.UTF-8")])
        });
        assert_eq!(shown(&l), ["LANG=fr_FR.UTF-8", "LC_TIME=C"]);
        let unset: Vec<&str> = l.unset().collect();
        assert_eq!(unset.len(), VARIABLES.len() - 2);
        assert!(unset.contains(&"LC_CTYPE") && unset.contains(&"LANGUAGE"));
        assert!(!unset.contains(&"LANG") && !unset.contains(&"LC_TIME"));
    }

    #[test]
    fn other_names_empty_values_and_repeats_as_systemd() {
        let l = manager_locale(None, |_| {
            pairs(&[
                ("LC_ALL", "C"),
                ("PATH", "/x"),
                ("LANG", "a"),
                ("LANG", "b"),
                ("LC_CTYPE", ""),
            ])
        });
        assert_eq!(shown(&l), ["LANG=b"]);
        assert!(l.unset().any(|n| n == "LC_CTYPE"));
    }

    #[test]
    fn the_kernel_command_line_wins_over_the_files() {
        let file = |_: &str| pairs(&[("LANG", "de_DE.UTF-8"), ("LC_CTYPE", "C")]);
        let l = manager_locale(
            Some(
                "ro quiet locale.LC_CTYPE=ja_JP.UTF-8 locale.LANG=C.UTF-8 locale.LANG=en_US.UTF-8",
            ),
            file,
        );
        assert_eq!(shown(&l), ["LANG=en_US.UTF-8", "LC_CTYPE=ja_JP.UTF-8"]);
        // Nothing of the locale's there (a word without `=`, another
        // name): the files are read.
        for cmdline in ["ro quiet", "locale.LANG locale.LC_ALL=C", "xlocale.LANG=C"] {
            let l = manager_locale(Some(cmdline), file);
            assert_eq!(shown(&l), ["LANG=de_DE.UTF-8", "LC_CTYPE=C"], "{cmdline}");
        }
        // A word that sets a variable empty still makes the command line
        // the source: the default then.
        let l = manager_locale(Some("locale.LANG="), file);
        assert_eq!(shown(&l), ["LANG=C.UTF-8"]);
    }

    #[test]
    fn a_file_that_fails_sets_no_locale_at_all() {
        let mut asked = Vec::new();
        let present = [(
            "/etc/locale.conf",
            FileRead::Failed("line 2: unterminated double quote".to_string()),
        )];
        let l = manager_locale(None, files(&present, &mut asked));
        assert_eq!(shown(&l), Vec::<String>::new());
        assert_eq!(l.unset().count(), VARIABLES.len());
        assert_eq!(
            l.problem.as_deref(),
            Some("line 2: unterminated double quote")
        );
        assert_eq!(asked, ["/etc/locale.conf"]);
    }
}
