//! The layering check itself, pure: given the tracked files (path and
//! text) and `docs/design.md`'s text, the violations of the rules that
//! page's "Layering" section states. `layering.rs` runs it on the
//! workspace; `rules_tests.rs` on small made-up trees.

use super::lexer::{self, Named};
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// The longest production file and the longest test file, in lines.
pub const PRODUCTION_LINES: usize = 800;
pub const TEST_LINES: usize = 1500;

/// One broken rule: `text` names the file and the rule and is what
/// `KNOWN_VIOLATIONS` lists; `line` is where (for a long file, its
/// length), printed but not compared, so that an edit above does not
/// change the text.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Violation {
    pub text: String,
    pub line: usize,
}

impl Violation {
    fn new(file: &str, line: usize, rule: String) -> Self {
        Violation {
            text: format!("{file}: {rule}"),
            line,
        }
    }
}

/// The two tables of `docs/design.md`'s "Layering": which crate may depend
/// on which, and each layered crate's top modules by layer.
#[derive(Debug, Default)]
pub struct Tables {
    pub crates: BTreeMap<String, BTreeSet<String>>,
    /// crate name -> top module -> layer.
    pub layers: BTreeMap<String, BTreeMap<String, u32>>,
}

/// The names in backquotes in a table cell.
fn quoted(cell: &str) -> Vec<String> {
    cell.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

/// Reads the tables: rows under a header `| crate | may depend on |` and
/// `| crate | layer | top modules |`.
pub fn parse_tables(design: &str) -> Tables {
    let mut tables = Tables::default();
    let mut kind = "";
    for line in design.lines() {
        let line = line.trim();
        if !line.starts_with('|') {
            kind = "";
            continue;
        }
        let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
        match cells.as_slice() {
            ["crate", "may depend on"] => kind = "crates",
            ["crate", "layer", "top modules"] => kind = "layers",
            [c, ..] if c.starts_with("---") => {}
            [krate, deps] if kind == "crates" => {
                if let Some(name) = quoted(krate).first() {
                    tables
                        .crates
                        .entry(name.clone())
                        .or_default()
                        .extend(quoted(deps));
                }
            }
            [krate, layer, mods] if kind == "layers" => {
                if let (Some(name), Ok(n)) = (quoted(krate).first(), layer.parse::<u32>()) {
                    let entry = tables.layers.entry(name.clone()).or_default();
                    for m in quoted(mods) {
                        entry.insert(m, n);
                    }
                }
            }
            _ => {}
        }
    }
    tables
}

/// The crates that may depend on `name`, directly or through others.
fn above(tables: &Tables, name: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let mut todo = vec![name.to_string()];
    while let Some(n) = todo.pop() {
        for (c, deps) in &tables.crates {
            if deps.contains(&n) && found.insert(c.clone()) {
                todo.push(c.clone());
            }
        }
    }
    found
}

/// Whether `path` is test code by its name or place: `tests.rs`,
/// `*_tests.rs`, anything in a `tests/` folder (the test crate and every
/// crate's integration tests), and the examples and benchmarks (not
/// shipped).
pub fn is_test_path(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    name == "tests.rs"
        || name.ends_with("_tests.rs")
        || path
            .split('/')
            .any(|d| matches!(d, "tests" | "examples" | "benches"))
}

/// A crate of the workspace: its directory, its package name and the
/// flotilla crates its Cargo.toml names (name, line, dev or not).
struct Crate {
    dir: String,
    name: String,
    deps: Vec<(String, usize, bool)>,
}

fn read_manifest(dir: &str, text: &str) -> Option<Crate> {
    let mut section = "";
    let mut name = None;
    let mut deps = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.starts_with('[') {
            section = line;
            continue;
        }
        let key = line
            .split(['=', '.', ' '])
            .next()
            .unwrap_or("")
            .trim_matches('"');
        if section == "[package]" && key == "name" {
            name = line.split('"').nth(1).map(str::to_string);
        } else if section.ends_with("dependencies]") && key.starts_with("flotilla-") {
            deps.push((key.to_string(), n + 1, section.contains("dev-")));
        }
    }
    Some(Crate {
        dir: dir.to_string(),
        name: name?,
        deps,
    })
}

/// A source file of a crate: its path, module path (`None` for a crate
/// root, `lib.rs` or `main.rs`), tokens' paths and length.
struct Source<'a> {
    path: &'a str,
    module: Option<Vec<String>>,
    named: Vec<Named>,
    declared: Vec<(String, bool)>,
    lines: usize,
    whole_test: bool,
}

fn module_of(rel: &str) -> Option<Vec<String>> {
    let rel = rel.strip_suffix(".rs")?;
    let mut segs: Vec<String> = rel.split('/').map(str::to_string).collect();
    if segs.len() == 1 && (segs[0] == "lib" || segs[0] == "main") {
        return None;
    }
    if segs.last().is_some_and(|s| s == "mod") {
        segs.pop();
    }
    Some(segs)
}

/// Every violation of the layering rules in `files` (path, text: the
/// tracked `.rs` files and `Cargo.toml`s) against `design`'s tables.
pub fn check(files: &[(String, String)], design: &str) -> Vec<Violation> {
    let tables = parse_tables(design);
    let crates: Vec<Crate> = files
        .iter()
        .filter_map(|(p, t)| {
            let dir = p.strip_suffix("/Cargo.toml")?;
            (!dir.contains('/')).then(|| read_manifest(dir, t))?
        })
        .collect();
    let lib_names: BTreeMap<String, String> = crates
        .iter()
        .map(|c| (c.name.replace('-', "_"), c.name.clone()))
        .collect();
    let mut out = Vec::new();
    for c in &crates {
        let Some(allowed) = tables.crates.get(&c.name) else {
            out.push(Violation::new(
                &format!("{}/Cargo.toml", c.dir),
                1,
                format!("crate table: {} has no row", c.name),
            ));
            continue;
        };
        let not_below = above(&tables, &c.name);
        for (dep, line, dev) in &c.deps {
            let ok = allowed.contains(dep) || (*dev && !not_below.contains(dep) && *dep != c.name);
            if !ok {
                let what = if *dev { "dev-dependency" } else { "dependency" };
                out.push(Violation::new(
                    &format!("{}/Cargo.toml", c.dir),
                    *line,
                    format!("crate table: {} may not have {dep} as a {what}", c.name),
                ));
            }
        }
        check_crate(c, files, &tables, &lib_names, &not_below, &mut out);
    }
    out.sort();
    out.dedup_by(|a, b| a.text == b.text);
    out
}

fn check_crate(
    c: &Crate,
    files: &[(String, String)],
    tables: &Tables,
    lib_names: &BTreeMap<String, String>,
    not_below: &BTreeSet<String>,
    out: &mut Vec<Violation>,
) {
    let prefix = format!("{}/", c.dir);
    let src = format!("{}/src/", c.dir);
    let mut files: Vec<&(String, String)> = files
        .iter()
        .filter(|(p, _)| p.starts_with(&prefix) && p.ends_with(".rs"))
        .collect();
    files.sort();
    let sources: Vec<Source> = files
        .into_iter()
        .map(|(p, t)| {
            let toks = lexer::tokens(t);
            Source {
                path: p,
                module: p.strip_prefix(&src).and_then(module_of),
                named: lexer::named_paths(&toks),
                declared: lexer::declared_mods(&toks),
                lines: t.lines().count(),
                whole_test: !toks.is_empty() && toks.iter().all(|t| t.test),
            }
        })
        .collect();
    let modules: BTreeMap<Vec<String>, usize> = sources
        .iter()
        .enumerate()
        .filter(|(_, s)| s.path.starts_with(&src))
        .filter_map(|(i, s)| Some((s.module.clone()?, i)))
        .collect();
    // Modules declared under `#[cfg(test)]`, and everything below them.
    let test_mods: BTreeSet<Vec<String>> = sources
        .iter()
        .filter(|s| s.path.starts_with(&src))
        .flat_map(|s| {
            let base = s.module.clone().unwrap_or_default();
            s.declared.iter().filter(|(_, t)| *t).map(move |(m, _)| {
                let mut p = base.clone();
                p.push(m.clone());
                p
            })
        })
        .collect();
    let is_test = |s: &Source| {
        is_test_path(s.path)
            || s.whole_test
            || s.module
                .as_ref()
                .is_some_and(|m| (1..=m.len()).any(|k| test_mods.contains(&m[..k])))
    };
    let layers = tables.layers.get(&c.name);
    let allowed = &tables.crates.get(&c.name).cloned().unwrap_or_default();
    let mut edges: BTreeMap<usize, BTreeMap<usize, usize>> = BTreeMap::new();
    for (i, s) in sources.iter().enumerate() {
        let test_file = is_test(s);
        let limit = if test_file {
            TEST_LINES
        } else {
            PRODUCTION_LINES
        };
        if s.lines > limit {
            let kind = if test_file { "test" } else { "production" };
            out.push(Violation::new(
                s.path,
                s.lines,
                format!("{kind} file over {limit} lines"),
            ));
        }
        for n in &s.named {
            let test = test_file || n.test;
            let first = n.segs[0].as_str();
            if let Some(other) = lib_names.get(first).filter(|o| **o != c.name) {
                let ok = allowed.contains(other) || (test && !not_below.contains(other));
                if !ok {
                    out.push(Violation::new(
                        s.path,
                        n.line,
                        format!("crate table: {} may not use {other}", c.name),
                    ));
                }
                continue;
            }
            if c.dir == "units" && s.path.starts_with("units/src/") && !test {
                if let Some(what) = impure(&n.segs) {
                    out.push(Violation::new(
                        s.path,
                        n.line,
                        format!("pure model: uses {what}"),
                    ));
                }
            }
            if test || !s.path.starts_with(&src) {
                continue;
            }
            let Some(j) = resolve(s, n, &modules, c) else {
                continue;
            };
            let (Some(from), Some(to)) = (&s.module, &sources[j].module) else {
                continue;
            };
            // A folder's `mod.rs` is its face: it declares and re-exports
            // its files, which use what it defines. Only the imports
            // between files neither of which holds the other count.
            if from.starts_with(to) || to.starts_with(from) {
                continue;
            }
            edges.entry(i).or_default().entry(j).or_insert(n.line);
        }
    }
    // The top modules' layers.
    if let Some(layers) = layers {
        let mut unlayered = BTreeSet::new();
        for (&i, targets) in &edges {
            for (&j, &line) in targets {
                let (Some(a), Some(b)) = (&sources[i].module, &sources[j].module) else {
                    continue;
                };
                if a[0] == b[0] {
                    continue;
                }
                match (layers.get(&a[0]), layers.get(&b[0])) {
                    (Some(la), Some(lb)) if la > lb => {}
                    (Some(la), Some(lb)) => out.push(Violation::new(
                        sources[i].path,
                        line,
                        format!(
                            "module layers: {} ({la}) may not use {} ({lb}): {}",
                            a[0], b[0], sources[j].path
                        ),
                    )),
                    (la, lb) => {
                        for (m, l) in [(&a[0], la), (&b[0], lb)] {
                            if l.is_none() {
                                unlayered.insert(m.clone());
                            }
                        }
                    }
                }
            }
        }
        for (m, &i) in &modules {
            if m.len() == 1 && !layers.contains_key(&m[0]) && !is_test(&sources[i]) {
                unlayered.insert(m[0].clone());
            }
        }
        for m in unlayered {
            out.push(Violation::new(
                &src,
                1,
                format!("module layers: {m} has no layer in {}", c.name),
            ));
        }
    }
    for cycle in circles(&edges) {
        let names: Vec<&str> = cycle.iter().map(|&k| sources[k].path).collect();
        let line = edges[&cycle[0]][&cycle[1]];
        out.push(Violation::new(
            names[0],
            line,
            format!("circle: {}", names.join(" -> ")),
        ));
    }
}

/// What a path of the pure model's code reaches outside it, if anything.
fn impure(segs: &[String]) -> Option<String> {
    let s: Vec<&str> = segs.iter().map(String::as_str).collect();
    let found = match s.as_slice() {
        ["std", "fs" | "process" | "env", ..] => s[..2].join("::"),
        ["std", "net", sock, ..]
            if matches!(
                *sock,
                "TcpStream" | "TcpListener" | "UdpSocket" | "ToSocketAddrs"
            ) =>
        {
            s[..3].join("::")
        }
        ["std", "time", "SystemTime", ..] => "std::time::SystemTime".into(),
        [.., "SystemTime" | "Instant", "now"] => s[s.len() - 2..].join("::"),
        _ => return None,
    };
    Some(found)
}

/// The source file a path names inside its crate: the longest prefix of
/// the module path it spells that is a file.
fn resolve(
    s: &Source,
    n: &Named,
    modules: &BTreeMap<Vec<String>, usize>,
    c: &Crate,
) -> Option<usize> {
    let mut here = s.module.clone().unwrap_or_default();
    here.extend(n.inline.iter().cloned());
    let segs = &n.segs;
    let (mut target, rest): (Vec<String>, &[String]) = match segs[0].as_str() {
        "crate" => (Vec::new(), &segs[1..]),
        first if first == c.name.replace('-', "_") => (Vec::new(), &segs[1..]),
        "self" => (here, &segs[1..]),
        "super" => {
            let k = segs.iter().take_while(|s| *s == "super").count();
            (here[..here.len().checked_sub(k)?].to_vec(), &segs[k..])
        }
        first => {
            let mut child = here.clone();
            child.push(first.to_string());
            if !modules.contains_key(&child) {
                return None;
            }
            (here, &segs[..])
        }
    };
    target.extend(rest.iter().cloned());
    (1..=target.len())
        .rev()
        .find_map(|k| modules.get(&target[..k]).copied())
}

/// The circles of the import graph: for each knot (a strongly connected
/// set of two or more files), the shortest circle through its first file,
/// then through the first file no circle so far passes, until every file
/// of the knot is on one; each circle starts at its first file.
fn circles(edges: &BTreeMap<usize, BTreeMap<usize, usize>>) -> Vec<Vec<usize>> {
    let nodes: BTreeSet<usize> = edges
        .iter()
        .flat_map(|(a, bs)| std::iter::once(*a).chain(bs.keys().copied()))
        .collect();
    let next = |a: usize| edges.get(&a).into_iter().flat_map(|m| m.keys().copied());
    let reach = |from: usize| {
        let mut seen = BTreeSet::from([from]);
        let mut todo = vec![from];
        while let Some(a) = todo.pop() {
            for b in next(a) {
                if seen.insert(b) {
                    todo.push(b);
                }
            }
        }
        seen
    };
    let reached: BTreeMap<usize, BTreeSet<usize>> = nodes.iter().map(|&n| (n, reach(n))).collect();
    let mut covered = BTreeSet::new();
    let mut out = Vec::new();
    for &a in &nodes {
        if covered.contains(&a) {
            continue;
        }
        let knot: BTreeSet<usize> = reached[&a]
            .iter()
            .copied()
            .filter(|b| reached[b].contains(&a))
            .collect();
        if knot.len() < 2 {
            continue;
        }
        // Breadth first from `a` to a file that imports `a`.
        let mut back: BTreeMap<usize, usize> = BTreeMap::new();
        let mut queue = VecDeque::from([a]);
        let mut last = None;
        while let (None, Some(x)) = (last, queue.pop_front()) {
            for y in next(x) {
                if y == a {
                    last = Some(x);
                    break;
                }
                if knot.contains(&y) && !back.contains_key(&y) {
                    back.insert(y, x);
                    queue.push_back(y);
                }
            }
        }
        let mut way = Vec::new();
        let mut x = last.expect("a knot has a way back");
        while x != a {
            way.push(x);
            x = back[&x];
        }
        way.reverse();
        let mut cycle = vec![a];
        cycle.extend(way);
        cycle.push(a);
        covered.extend(cycle.iter().copied());
        let first = cycle[..cycle.len() - 1].iter().min().copied().unwrap_or(a);
        let at = cycle.iter().position(|&n| n == first).unwrap_or(0);
        let mut turned: Vec<usize> = cycle[at..cycle.len() - 1].to_vec();
        turned.extend_from_slice(&cycle[..at]);
        turned.push(first);
        out.push(turned);
    }
    out.sort();
    out.dedup();
    out
}
