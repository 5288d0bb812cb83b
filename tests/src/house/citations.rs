//! The code and the docs cite only what the repository has (`docs/design.md`,
//! "Where the rules are written"). A citation of a document kept outside
//! the repository (the interface contract and the fleet notes live in
//! `docs/contract.md` and `docs/fleet-compat.md`), or of a `docs/` page that
//! does not exist, is a newcomer's dead end.

use super::tracked::{self, workspace};

/// Every file git tracks whose text the house rules cover: the code,
/// the docs, the scripts.
fn tracked_texts() -> Vec<(String, String)> {
    tracked::files(|f| {
        f.ends_with(".rs")
            || f.ends_with(".md")
            || f.ends_with(".toml")
            || f.starts_with("scripts/")
            || f.starts_with("contrib/")
    })
}

/// The words that cite a document outside the repository. Spelled in
/// pieces so that this file does not match itself.
fn outside_citations() -> Vec<String> {
    vec![
        format!("{}{}", "SPEC", " §"),
        format!("{}{}", "SPEC", ".md"),
        format!("{}{}", "FLEET", "-NOTES"),
        format!("{}{}", "seeds", "/0"),
        format!("{}{}", "seed ", "00"),
    ]
}

#[test]
fn nothing_cites_a_document_outside_the_repository() {
    let words = outside_citations();
    let mut found = Vec::new();
    for (file, text) in tracked_texts() {
        for (n, line) in text.lines().enumerate() {
            if let Some(w) = words.iter().find(|w| line.contains(w.as_str())) {
                found.push(format!("{file}:{}: cites `{w}`", n + 1));
            }
        }
    }
    assert!(
        found.is_empty(),
        "cite docs/ instead:\n{}",
        found.join("\n")
    );
}

#[test]
fn every_cited_docs_page_exists() {
    let mut missing = Vec::new();
    for (file, text) in tracked_texts() {
        for (n, line) in text.lines().enumerate() {
            let mut rest = line;
            while let Some(at) = rest.find("docs/") {
                let tail = &rest[at + 5..];
                let name: String = tail
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
                    .collect();
                let is_page = tail[name.len()..].starts_with(".md");
                // `fuzz/docs/`, `/usr/share/docs/` and the like are not ours.
                let ours =
                    at == 0 || !rest[..at].ends_with(|c: char| c.is_alphanumeric() || c == '/');
                if is_page
                    && ours
                    && !workspace()
                        .join("docs")
                        .join(format!("{name}.md"))
                        .is_file()
                {
                    missing.push(format!("{file}:{}: docs/{name}.md", n + 1));
                }
                rest = &tail[name.len()..];
            }
        }
    }
    assert!(missing.is_empty(), "no such page:\n{}", missing.join("\n"));
}
