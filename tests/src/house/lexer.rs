//! Just enough of Rust's lexical grammar for the layering check: the
//! tokens of a file without its comments and literals, which of them are
//! test code (`#[cfg(test)]` items), the paths its `use` declarations name
//! and the paths its code spells out (`crate::a::f(..)`).

/// One token: an identifier (keywords and numbers too), `::`, or one
/// punctuation character.
#[derive(Debug, Clone)]
pub struct Tok {
    pub text: String,
    pub line: usize,
    /// Inside an item under `#[cfg(test)]`.
    pub test: bool,
    /// The inline modules (`mod name { .. }`) the token is in, outermost
    /// first: `super` inside them is relative to them, not to the file.
    pub inline: Vec<String>,
}

/// A path the code names, with the line it starts on.
#[derive(Debug, Clone, PartialEq)]
pub struct Named {
    pub segs: Vec<String>,
    pub line: usize,
    pub test: bool,
    pub inline: Vec<String>,
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The tokens of `src`; comments, strings, characters and lifetimes
/// dropped.
pub fn tokens(src: &str) -> Vec<Tok> {
    let s: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let (mut i, mut line) = (0, 1);
    let push = |out: &mut Vec<Tok>, text: String, line: usize| {
        out.push(Tok {
            text,
            line,
            test: false,
            inline: Vec::new(),
        })
    };
    while i < s.len() {
        let c = s[i];
        let next = s.get(i + 1).copied();
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if c == '/' && next == Some('/') {
            while i < s.len() && s[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < s.len() {
                if s[i] == '/' && s.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if s[i] == '*' && s.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    line += usize::from(s[i] == '\n');
                    i += 1;
                }
            }
        } else if c == '"' {
            i = skip_string(&s, i + 1, &mut line);
        } else if c == '\'' {
            // A character ('a', '\n', '"') or a lifetime ('a, 'static).
            if next == Some('\\') {
                i += 2;
                while i < s.len() && s[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if s.get(i + 2) == Some(&'\'') {
                i += 3;
            } else {
                i += 1;
                while i < s.len() && is_ident(s[i]) {
                    i += 1;
                }
            }
        } else if is_ident(c) {
            let start = i;
            while i < s.len() && is_ident(s[i]) {
                i += 1;
            }
            let word: String = s[start..i].iter().collect();
            let at = s.get(i).copied();
            if matches!(word.as_str(), "r" | "br" | "cr") && matches!(at, Some('"') | Some('#')) {
                // A raw string: r"..", r#".."#.
                let mut hashes = 0;
                while s.get(i) == Some(&'#') {
                    hashes += 1;
                    i += 1;
                }
                if s.get(i) != Some(&'"') {
                    // `r#ident`, a raw identifier.
                    let start = i;
                    while i < s.len() && is_ident(s[i]) {
                        i += 1;
                    }
                    push(&mut out, s[start..i].iter().collect(), line);
                    continue;
                }
                i += 1;
                loop {
                    if i >= s.len() {
                        break;
                    }
                    if s[i] == '"' && (1..=hashes).all(|k| s.get(i + k) == Some(&'#')) {
                        i += 1 + hashes;
                        break;
                    }
                    line += usize::from(s[i] == '\n');
                    i += 1;
                }
            } else if matches!(word.as_str(), "b" | "c") && at == Some('"') {
                i = skip_string(&s, i + 1, &mut line);
            } else if word == "b" && at == Some('\'') {
                i += 1;
                while i < s.len() && s[i] != '\'' {
                    i += if s[i] == '\\' { 2 } else { 1 };
                }
                i += 1;
            } else {
                push(&mut out, word, line);
            }
        } else if c == ':' && next == Some(':') {
            push(&mut out, "::".into(), line);
            i += 2;
        } else {
            push(&mut out, c.to_string(), line);
            i += 1;
        }
    }
    mark_test_and_inline(&mut out);
    out
}

/// Past the string whose opening quote is before `i`.
fn skip_string(s: &[char], mut i: usize, line: &mut usize) -> usize {
    while i < s.len() && s[i] != '"' {
        if s[i] == '\\' {
            i += 1;
        }
        if s.get(i) == Some(&'\n') {
            *line += 1;
        }
        i += 1;
    }
    i + 1
}

fn text(toks: &[Tok], i: usize) -> &str {
    toks.get(i).map_or("", |t| t.text.as_str())
}

/// Whether the attribute at `i` (`#`) is `#[cfg(test)]` or
/// `#[cfg(all(test, ..))]`, inner or outer; and the index past it.
fn attribute(toks: &[Tok], i: usize) -> Option<(bool, usize)> {
    if text(toks, i) != "#" {
        return None;
    }
    let mut j = i + 1;
    if text(toks, j) == "!" {
        j += 1;
    }
    if text(toks, j) != "[" {
        return None;
    }
    let words: Vec<&str> = (j + 1..j + 6).map(|k| text(toks, k)).collect();
    let test = words[..3] == ["cfg", "(", "test"] || words == ["cfg", "(", "all", "(", "test"];
    Some((test, past_closing(toks, j, "[", "]")))
}

/// The index past the `close` that matches the `open` at `i`.
fn past_closing(toks: &[Tok], mut i: usize, open: &str, close: &str) -> usize {
    let mut depth = 0;
    while i < toks.len() {
        let t = text(toks, i);
        if t == open {
            depth += 1;
        } else if t == close {
            depth -= 1;
            if depth == 0 {
                return i + 1;
            }
        }
        i += 1;
    }
    i
}

/// The index past the item that starts at `i`: its `;` or its block's `}`
/// at depth 0.
fn item_end(toks: &[Tok], mut i: usize) -> usize {
    let mut depth = 0i32;
    while i < toks.len() {
        match text(toks, i) {
            "(" | "[" => depth += 1,
            ")" | "]" => depth -= 1,
            ";" if depth == 0 => return i + 1,
            "{" if depth == 0 => return past_closing(toks, i, "{", "}"),
            _ => {}
        }
        i += 1;
    }
    i
}

fn mark_test_and_inline(toks: &mut [Tok]) {
    let mut i = 0;
    while i < toks.len() {
        if text(toks, i) == "#" && text(toks, i + 1) == "!" {
            if let Some((true, _)) = attribute(toks, i) {
                toks.iter_mut().for_each(|t| t.test = true);
            }
        }
        match attribute(toks, i) {
            Some((true, mut j)) => {
                // Further attributes of the same item.
                while let Some((_, k)) = attribute(toks, j) {
                    j = k;
                }
                let end = item_end(toks, j);
                toks[i..end].iter_mut().for_each(|t| t.test = true);
                i = end;
            }
            Some((false, j)) => i = j,
            None => i += 1,
        }
    }
    // Inline modules: `mod name {`.
    let mut stack: Vec<(String, i32)> = Vec::new();
    let mut depth = 0;
    for i in 0..toks.len() {
        match toks[i].text.as_str() {
            "{" => {
                depth += 1;
                if i >= 2 && toks[i - 2].text == "mod" {
                    stack.push((toks[i - 1].text.clone(), depth));
                }
            }
            "}" => {
                if stack.last().is_some_and(|(_, d)| *d == depth) {
                    stack.pop();
                }
                depth -= 1;
            }
            _ => {}
        }
        toks[i].inline = stack.iter().map(|(n, _)| n.clone()).collect();
    }
}

/// The modules a file declares (`mod name;`), each with whether the
/// declaration is test code.
pub fn declared_mods(toks: &[Tok]) -> Vec<(String, bool)> {
    (0..toks.len().saturating_sub(2))
        .filter(|&i| toks[i].text == "mod" && toks[i + 2].text == ";" && toks[i].inline.is_empty())
        .map(|i| (toks[i + 1].text.clone(), toks[i].test))
        .collect()
}

/// Every path the file names: each leaf of its `use` trees (a glob names
/// the module it takes from) and each path in its code that starts with
/// `crate`, `self`, `super` or any other name followed by `::`.
pub fn named_paths(toks: &[Tok]) -> Vec<Named> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        let prev = if i > 0 { text(toks, i - 1) } else { "" };
        if toks[i].text == "use" && prev != "::" {
            let mut leaves = Vec::new();
            let start = if text(toks, i + 1) == "::" {
                i + 2
            } else {
                i + 1
            };
            let end = use_tree(toks, start, Vec::new(), &mut leaves);
            for segs in leaves {
                out.push(Named {
                    segs,
                    line: toks[i].line,
                    test: toks[i].test,
                    inline: toks[i].inline.clone(),
                });
            }
            i = end.max(i + 1);
        } else if text(toks, i + 1) == "::"
            && prev != "::"
            && toks[i]
                .text
                .starts_with(|c: char| c.is_alphabetic() || c == '_')
        {
            let mut segs = vec![toks[i].text.clone()];
            let mut j = i + 1;
            while text(toks, j) == "::"
                && toks
                    .get(j + 1)
                    .is_some_and(|t| t.text.starts_with(is_ident))
            {
                segs.push(toks[j + 1].text.clone());
                j += 2;
            }
            out.push(Named {
                segs,
                line: toks[i].line,
                test: toks[i].test,
                inline: toks[i].inline.clone(),
            });
            i = j;
        } else {
            i += 1;
        }
    }
    out
}

/// The leaves of the use tree at `i` under `prefix`; returns the index
/// past the tree.
fn use_tree(
    toks: &[Tok],
    mut i: usize,
    mut path: Vec<String>,
    out: &mut Vec<Vec<String>>,
) -> usize {
    loop {
        match text(toks, i) {
            "{" => {
                i += 1;
                while i < toks.len() && text(toks, i) != "}" {
                    i = use_tree(toks, i, path.clone(), out);
                    if text(toks, i) == "," {
                        i += 1;
                    }
                }
                return i + 1;
            }
            "*" => {
                out.push(path);
                return i + 1;
            }
            "" | ";" | "}" | "," => return i,
            word => {
                path.push(word.to_string());
                i += 1;
                match text(toks, i) {
                    "::" => i += 1,
                    "as" => {
                        out.push(path);
                        return i + 2;
                    }
                    _ => {
                        out.push(path);
                        return i;
                    }
                }
            }
        }
    }
}
