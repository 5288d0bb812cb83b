//! Targets with several providers (docs/contract.md §3b).
//!
//! Two units providing one target are an error, unless the init's config
//! declares the target in its `targets:` map:
//!
//! ```yaml
//! targets:
//!   logs: {mode: group}                        # every provider runs
//!   dhcp: {mode: alternative, failover: true}  # one runs; the next takes over if it fails
//!   db: {mode: alternative, choose: mariadb}   # one runs: this one
//! ```
//!
//! This module holds the declarations ([`Targets`]) and the one rule that
//! orders an alternative's providers and picks one ([`order`], [`pick`]):
//! the unit the config names (`choose`), else the highest `preference`,
//! ties by name. The graph ([`crate::graph`]) gives each declared target a
//! node of its own; the planner's module documentation states what the
//! node's state is and when the choice moves.

use crate::diag::Pos;
use crate::load::yaml::{known_entries, Node, Sink, Value};
use crate::spec::valid_name;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// How a declared target's providers run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TargetMode {
    /// Every provider runs; the target is active when all are, degraded
    /// when some are, failed when none is.
    Group,
    /// Exactly one provider runs; the target's state is its state.
    Alternative,
}

impl TargetMode {
    /// The name in the config file and the protocol.
    pub fn as_str(self) -> &'static str {
        match self {
            TargetMode::Group => "group",
            TargetMode::Alternative => "alternative",
        }
    }

    /// Parses a mode as written in the config.
    pub fn parse(s: &str) -> Option<TargetMode> {
        match s {
            "group" => Some(TargetMode::Group),
            "alternative" => Some(TargetMode::Alternative),
            _ => None,
        }
    }
}

/// One entry of the config's `targets:` map.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetDecl {
    /// `mode`.
    pub mode: TargetMode,
    /// `choose` (alternatives only): the provider to run.
    pub choose: Option<String>,
    /// `failover` (alternatives only, default `false`): when the chosen
    /// provider fails, the next one (by [`order`]) takes over.
    pub failover: bool,
    /// `choose` was set with `initctl set-alternative` (it is kept in the
    /// state directory and replaces the config's).
    pub set: bool,
    /// The config file, for diagnostics.
    pub file: String,
    /// Where the entry's name is.
    pub pos: Pos,
    /// Where `choose`'s value is (the entry's position when there is none).
    pub choose_pos: Pos,
}

impl TargetDecl {
    /// A declaration with nothing but its mode (e.g. in tests).
    pub fn new(mode: TargetMode) -> TargetDecl {
        TargetDecl {
            mode,
            choose: None,
            failover: false,
            set: false,
            file: String::new(),
            pos: Pos::default(),
            choose_pos: Pos::default(),
        }
    }
}

/// The declared targets, by name.
pub type Targets = BTreeMap<String, TargetDecl>;

/// The keys of one entry of `targets:`.
const DECL_KEYS: &[&str] = &["mode", "choose", "failover"];

/// Reads the config's `targets:` map (`file` names the config file in the
/// declarations). Every problem goes to `sink`; bad entries are left out.
pub(crate) fn parse(file: &str, node: &Node, sink: &mut Sink<'_>) -> Targets {
    let mut out = Targets::new();
    let Value::Map(entries) = &node.value else {
        if node.value != Value::Null {
            sink.error(
                node.pos,
                format!(
                    "`targets` must be a mapping such as `db: {{mode: alternative}}`, found {}",
                    node.kind()
                ),
            );
        }
        return out;
    };
    for (k, v) in entries {
        let Some(name) = k.string_or_number().filter(|n| valid_name(n)) else {
            sink.error(
                k.pos,
                "a target name in `targets` has only letters, digits and `:_.@-`",
            );
            continue;
        };
        if out.contains_key(&name) {
            sink.error(k.pos, format!("the target `{name}` is declared twice"));
            continue;
        }
        if let Some(d) = parse_decl(file, &name, k.pos, v, sink) {
            out.insert(name, d);
        }
    }
    out
}

/// One entry of `targets:`, `name: {mode: …, choose: …, failover: …}`.
fn parse_decl(
    file: &str,
    name: &str,
    pos: Pos,
    node: &Node,
    sink: &mut Sink<'_>,
) -> Option<TargetDecl> {
    let Value::Map(entries) = &node.value else {
        sink.error(
            node.pos,
            format!(
                "`{name}` needs a mapping such as `{{mode: group}}`, found {}",
                node.kind()
            ),
        );
        return None;
    };
    let mut mode = None;
    let mut decl = TargetDecl::new(TargetMode::Group);
    decl.file = file.to_string();
    decl.pos = pos;
    decl.choose_pos = pos;
    let mut ok = true;
    for e in known_entries(entries, DECL_KEYS, "key of a target", sink) {
        match e.key {
            "mode" => {
                mode = e.value.text().as_deref().and_then(TargetMode::parse);
                if mode.is_none() {
                    sink.error(
                        e.value.pos,
                        format!("`{name}`: `mode` is `group` or `alternative`"),
                    );
                    ok = false;
                }
            }
            "choose" => match e.value.string_or_number().filter(|n| valid_name(n)) {
                Some(c) => {
                    decl.choose = Some(c);
                    decl.choose_pos = e.value.pos;
                }
                None => {
                    sink.error(e.value.pos, format!("`{name}`: `choose` names a unit"));
                    ok = false;
                }
            },
            "failover" => match e.value.value {
                Value::Bool(b) => decl.failover = b,
                _ => {
                    sink.error(
                        e.value.pos,
                        format!("`{name}`: `failover` is `true` or `false`"),
                    );
                    ok = false;
                }
            },
            _ => {}
        }
    }
    let Some(mode) = mode else {
        if ok {
            sink.error(
                node.pos,
                format!("`{name}` needs a `mode`: `group` or `alternative`"),
            );
        }
        return None;
    };
    decl.mode = mode;
    if mode == TargetMode::Group && (decl.choose.is_some() || decl.failover) {
        sink.error(
            node.pos,
            format!("`{name}` is a group (every provider runs): `choose` and `failover` are for an alternative"),
        );
        return None;
    }
    ok.then_some(decl)
}

/// Why an alternative runs the provider it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Why {
    /// It is the only provider.
    Only,
    /// The config names it (`choose`).
    Choose,
    /// It has the highest `preference` (`tie`: others have it too and it
    /// comes first by name); `instead_of` is the config's choice when that
    /// one cannot run (it is masked).
    Preference {
        /// Its preference.
        preference: i32,
        /// Another provider has the same preference.
        tie: bool,
        /// The config's `choose`, masked.
        instead_of: Option<String>,
    },
    /// `initctl set-alternative` chose it (and wrote it in the config).
    Set,
    /// The provider chosen before it failed (`failover: true`).
    Failover {
        /// The one that failed.
        failed: String,
    },
}

impl fmt::Display for Why {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Why::Only => write!(f, "the only provider"),
            Why::Choose => write!(f, "chosen in the config (`choose`)"),
            Why::Preference {
                preference,
                tie,
                instead_of,
            } => {
                if *tie {
                    write!(
                        f,
                        "highest preference ({preference}), first by name among equals"
                    )?;
                } else {
                    write!(f, "highest preference ({preference})")?;
                }
                if let Some(c) = instead_of {
                    write!(f, "; the config's choice `{c}` is masked")?;
                }
                Ok(())
            }
            Why::Set => write!(f, "set with `initctl set-alternative`"),
            Why::Failover { failed } => write!(f, "failover: `{failed}` failed"),
        }
    }
}

/// The providers of an alternative in the order they are picked and take
/// over: highest `preference` first, ties by name. `providers` are (name,
/// preference); the result is their indices.
pub fn order(providers: &[(&str, i32)]) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..providers.len()).collect();
    idx.sort_by(|&a, &b| {
        let (na, pa) = providers[a];
        let (nb, pb) = providers[b];
        pb.cmp(&pa).then_with(|| na.cmp(nb))
    });
    idx
}

/// Which of `providers` (already in [`order`]) an alternative runs, and
/// why: the config's `choose` when it is one of them, else the first.
/// `masked_choice` says that `choose` names a masked unit (which is not
/// among the providers, and is said in the reason). `None` when there is
/// no provider. A `choose` that names neither a provider nor a masked unit
/// is the graph's error to report; the first provider runs meanwhile.
pub fn pick(
    decl: &TargetDecl,
    providers: &[(&str, i32)],
    masked_choice: bool,
) -> Option<(usize, Why)> {
    let &(_, first_pref) = providers.first()?;
    if let Some(c) = &decl.choose {
        if let Some(i) = providers.iter().position(|(n, _)| n == c) {
            return Some((i, if decl.set { Why::Set } else { Why::Choose }));
        }
    }
    if providers.len() == 1 && !masked_choice {
        return Some((0, Why::Only));
    }
    let tie = providers.get(1).is_some_and(|&(_, p)| p == first_pref);
    Some((
        0,
        Why::Preference {
            preference: first_pref,
            tie,
            instead_of: decl.choose.clone().filter(|_| masked_choice),
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ordered<'a>(p: &[(&'a str, i32)]) -> Vec<(&'a str, i32)> {
        order(p).into_iter().map(|i| p[i]).collect()
    }

    #[test]
    fn highest_preference_first_then_by_name() {
        assert_eq!(
            ordered(&[("c", 0), ("a", 0), ("b", 10), ("d", -5)]),
            [("b", 10), ("a", 0), ("c", 0), ("d", -5)]
        );
    }

    #[test]
    fn the_config_choice_wins_else_the_first() {
        let p = [("b", 10), ("a", 0), ("c", 0)];
        let mut d = TargetDecl::new(TargetMode::Alternative);
        assert_eq!(
            pick(&d, &p, false),
            Some((
                0,
                Why::Preference {
                    preference: 10,
                    tie: false,
                    instead_of: None
                }
            ))
        );
        d.choose = Some("c".into());
        assert_eq!(pick(&d, &p, false), Some((2, Why::Choose)));
        // A choice that is masked: the first, and the reason says so.
        d.choose = Some("m".into());
        let (i, why) = pick(&d, &p, true).unwrap();
        assert_eq!(i, 0);
        assert_eq!(
            why.to_string(),
            "highest preference (10); the config's choice `m` is masked"
        );
        let ties = [("a", 0), ("b", 0)];
        assert_eq!(
            pick(&TargetDecl::new(TargetMode::Alternative), &ties, false)
                .unwrap()
                .1
                .to_string(),
            "highest preference (0), first by name among equals"
        );
        assert_eq!(
            pick(
                &TargetDecl::new(TargetMode::Alternative),
                &[("a", 3)],
                false
            ),
            Some((0, Why::Only))
        );
        assert_eq!(pick(&d, &[], false), None);
    }
}
