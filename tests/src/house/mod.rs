//! Checks of the repository itself, run with the harness's unit tests
//! (`cargo test -p flotilla-tests --lib house`): the house stays as
//! `docs/design.md` draws it without anyone having to remember.
//!
//! - `citations`: the code and the docs cite only what the repository has;
//! - `layering`: the crates and modules import only what the layering
//!   tables of `docs/design.md` allow, no two files import each other
//!   through any circle, no file is longer than its limit, and the pure
//!   model touches no file, clock, environment, process or network
//!   (`rules`, with `lexer`, is the check; `rules_tests` tests it on small
//!   made-up trees); and the integration tests build as at most twelve
//!   binaries.

mod citations;
mod layering;
mod lexer;
mod rules;
mod rules_tests;

mod tracked {
    use std::path::{Path, PathBuf};

    pub fn workspace() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
    }

    /// Every file git tracks that `keep` accepts, with its text (a file
    /// that is not text is left out).
    pub fn files(keep: impl Fn(&str) -> bool) -> Vec<(String, String)> {
        let out = std::process::Command::new("git")
            .args(["ls-files", "-z"])
            .current_dir(workspace())
            .output()
            .expect("git ls-files");
        assert!(out.status.success(), "git ls-files failed");
        String::from_utf8_lossy(&out.stdout)
            .split('\0')
            .filter(|f| !f.is_empty() && keep(f))
            .filter_map(|f| {
                let text = std::fs::read_to_string(workspace().join(f)).ok()?;
                Some((f.to_string(), text))
            })
            .collect()
    }
}
