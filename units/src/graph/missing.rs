//! What a start would pull in that no unit of the graph provides, and
//! which units read from the search path now fill the gap: the init's load
//! on demand (docs/units.md, "Units loaded when first asked for"), as
//! systemd loads a unit whose file appeared after its last reload when a
//! job first needs it.

use super::build::dep_lists;
use super::Graph;
use crate::spec::{Origin, UnitSpec};
use std::collections::HashSet;

impl Graph {
    /// The targets a start of `name` pulls in (over every kind that pulls,
    /// transitively) that no unit of the graph provides, each once in the
    /// order met; `[name]` itself when no unit provides it.
    pub fn missing_pulls(&self, name: &str) -> Vec<String> {
        // A unit by its name, also one that provides other targets only.
        let Some(root) = self.provider(name).or_else(|| self.live_unit(name)) else {
            return vec![name.to_string()];
        };
        let mut seen = vec![false; self.len()];
        seen[root.index()] = true;
        let mut queue = vec![root];
        let mut out: Vec<String> = Vec::new();
        while let Some(id) = queue.pop() {
            for d in self.named_deps(id).filter(|d| d.kind.pulls_in()) {
                match d.provider {
                    Some(p) => {
                        if let Some(s) = seen.get_mut(p.index()).filter(|s| !**s) {
                            *s = true;
                            queue.push(p);
                        }
                    }
                    None if !out.iter().any(|o| o == d.target) => out.push(d.target.to_string()),
                    None => {}
                }
            }
        }
        out
    }

    /// [`Graph::units_to_load_within`] the whole path: `read` is every
    /// unit the search path defines now.
    #[cfg(test)]
    pub fn units_to_load(&self, name: &str, read: &[(UnitSpec, Origin)]) -> Vec<usize> {
        self.units_to_load_within(name, read, |_| false)
            .unwrap_or_default()
    }

    /// The units of `read` that a start of `name` needs and the graph
    /// lacks: those providing one of [`Graph::missing_pulls`], and in turn
    /// those providing what they pull in that the graph and the units
    /// already chosen lack. Indices into `read`, in the order chosen;
    /// empty when nothing is missing or the path has none of it. `read`
    /// may be a part of the units the search path defines: `None` when the
    /// start needs a name `elsewhere` says the rest of the path defines
    /// (only a read of the whole path would give it).
    pub fn units_to_load_within(
        &self,
        name: &str,
        read: &[(UnitSpec, Origin)],
        elsewhere: impl Fn(&str) -> bool,
    ) -> Option<Vec<usize>> {
        let mut wanted = self.missing_pulls(name);
        let mut chosen: Vec<usize> = Vec::new();
        let mut looked: HashSet<String> = HashSet::new();
        while let Some(target) = wanted.pop() {
            if !looked.insert(target.clone()) {
                continue;
            }
            // A unit of that name already (one the graph left out) is not
            // read again.
            let provides = |s: &UnitSpec| {
                (s.name == target || s.provides.contains(&target))
                    && self.live_unit(&s.name).is_none()
            };
            let Some(i) = read.iter().position(|(s, _)| provides(s)) else {
                if elsewhere(&target) {
                    return None;
                }
                continue;
            };
            if chosen.contains(&i) {
                continue;
            }
            chosen.push(i);
            let spec = &read[i].0;
            for (kind, names) in dep_lists(spec) {
                if !kind.pulls_in() {
                    continue;
                }
                wanted.extend(names.iter().filter(|n| self.provider(n).is_none()).cloned());
            }
        }
        Some(chosen)
    }
}

#[cfg(test)]
mod tests {
    use crate::graph::Graph;
    use crate::spec::{Origin, UnitSpec, UnitType};

    fn unit(name: &str, f: impl FnOnce(&mut UnitSpec)) -> (UnitSpec, Origin) {
        let mut s = UnitSpec::new(name, UnitType::Virtual);
        f(&mut s);
        (s, Origin::default())
    }

    #[test]
    fn what_a_start_pulls_in_that_no_unit_provides() {
        let (g, _) = Graph::build(vec![
            unit("t.target", |s| {
                s.wants.push("new.service".into());
                s.depends_on.push("a.service".into());
                s.after.push("ordered-only.service".into());
            }),
            unit("a.service", |s| s.waits_for.push("gone.service".into())),
        ]);
        assert_eq!(g.missing_pulls("t.target"), ["new.service", "gone.service"]);
        assert_eq!(g.missing_pulls("a.service"), ["gone.service"]);
        assert_eq!(g.missing_pulls("x.service"), ["x.service"]);
        // A unit that provides other targets only is found by its name.
        let (g, _) = Graph::build(vec![unit("web", |s| {
            s.provides = vec!["webd".to_string()].into();
        })]);
        assert!(g.missing_pulls("web").is_empty());
    }

    #[test]
    fn the_units_read_now_that_fill_the_gaps_and_what_they_pull_in() {
        let (g, _) = Graph::build(vec![
            unit("t.target", |s| s.wants.push("new.service".into())),
            unit("old.service", |_| {}),
        ]);
        let read = vec![
            unit("old.service", |_| {}),
            unit("other.service", |_| {}),
            unit("dep.service", |_| {}),
            unit("new.service", |s| {
                s.requires.push("dep.service".into());
                s.wants.push("old.service".into());
                s.wants.push("absent.service".into());
            }),
            unit("t.target", |s| s.wants.push("new.service".into())),
        ];
        assert_eq!(g.units_to_load("t.target", &read), [3, 2]);
        assert_eq!(g.units_to_load("other.service", &read), [1]);
        assert!(g.units_to_load("old.service", &read).is_empty());
        assert!(g.units_to_load("absent.service", &read).is_empty());
    }

    #[test]
    fn a_part_of_the_path_serves_only_when_the_rest_adds_nothing() {
        let (g, _) = Graph::build(vec![unit("old.service", |_| {})]);
        let part = vec![
            unit("new.service", |s| {
                s.requires.push("dep.service".into());
                s.wants.push("old.service".into());
            }),
            unit("dep.service", |s| s.wants.push("elsewhere.service".into())),
        ];
        let rest = |n: &str| n == "elsewhere.service";
        assert_eq!(g.units_to_load_within("new.service", &part, rest), None);
        let none = |_: &str| false;
        assert_eq!(
            g.units_to_load_within("new.service", &part, none),
            Some(vec![0, 1])
        );
        assert_eq!(
            g.units_to_load_within("dep.service", &part[..1], |n| n == "dep.service"),
            None
        );
    }
}
