//! Units read again when asked for (docs/systemd-units.md, "Unit files
//! read again when asked for"): systemd frees a unit that nothing holds
//! (inactive, no job, no held unit referring to it) and reads its files
//! again the next time something names it, so that a file, drop-in or
//! `.wants/` link written since the last daemon-reload shows at the next
//! `systemctl show` or `start`. flotilla keeps every unit, and instead
//! takes such a unit's definition from the search path again when one is
//! asked for: these are the rules of which units that is, and which of a
//! fresh read of the path replace the graph's.

use super::Graph;
use crate::spec::{Origin, UnitSpec};
use crate::state::DepKind;

impl Graph {
    /// The units nothing holds, a flag per node: not `held` themselves
    /// (the caller's say: active, failed, a job, required) and not
    /// referred to, transitively, by a unit that is, over every kind of
    /// dependency but ordering (systemd's `unit_gc_sweep`: a unit
    /// referenced by a kept unit is kept; `After=` refers to nothing).
    /// Ghosts, masked units, declared targets' and made-up nodes are
    /// never collectable: no file of theirs is read again.
    pub fn collectable(&self, held: &[bool]) -> Vec<bool> {
        let mut kept = vec![false; self.len()];
        let mut work: Vec<super::UnitId> = Vec::new();
        for id in self.node_ids() {
            let n = self.node(id);
            let fixed = n.ghost || n.masked || n.synthetic || id.index() >= self.units_len;
            if fixed || held.get(id.index()).copied().unwrap_or(false) {
                kept[id.index()] = true;
                work.push(id);
            }
        }
        while let Some(u) = work.pop() {
            let refs = self.deps(u).iter().filter(|e| e.kind != DepKind::After);
            for p in refs.filter_map(|e| e.provider) {
                if let Some(k) = kept.get_mut(p.index()).filter(|k| !**k) {
                    *k = true;
                    work.push(p);
                }
            }
        }
        kept.into_iter().map(|k| !k).collect()
    }

    /// The units of `read` (every unit the search path defines now) that
    /// replace a unit of the graph: one of the same name that is
    /// `collectable` ([`Graph::collectable`]) and differs from the read
    /// one (its definition or where it came from). Indices into `read`,
    /// in its order; empty when nothing changed on disk.
    pub fn rereads(&self, collectable: &[bool], read: &[(UnitSpec, Origin)]) -> Vec<usize> {
        read.iter()
            .enumerate()
            .filter(|(_, (spec, origin))| {
                self.unit(&spec.name).is_some_and(|id| {
                    let n = self.node(id);
                    collectable.get(id.index()).copied().unwrap_or(false)
                        && (*n.spec != *spec || n.origin != *origin)
                })
            })
            .map(|(i, _)| i)
            .collect()
    }
}

impl Graph {
    /// The masks of `masked` (the names the search path masks now, and
    /// each mask's path) that mask a unit of the graph that is
    /// `collectable` and not masked yet: such a unit, read again, is
    /// masked (`UnitFileState=masked`), as systemd reads a freed unit
    /// whose file is a link to `/dev/null` now. Indices into `masked`.
    pub fn masked_now(&self, collectable: &[bool], masked: &[(String, String)]) -> Vec<usize> {
        masked
            .iter()
            .enumerate()
            .filter(|(_, (name, _))| {
                self.unit(name).is_some_and(|id| {
                    !self.node(id).masked && collectable.get(id.index()).copied().unwrap_or(false)
                })
            })
            .map(|(i, _)| i)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use crate::graph::{Graph, Shape};
    use crate::mask::Masks;
    use crate::spec::{Origin, UnitSpec, UnitType};

    fn unit(name: &str, f: impl FnOnce(&mut UnitSpec)) -> (UnitSpec, Origin) {
        let mut s = UnitSpec::new(name, UnitType::Virtual);
        f(&mut s);
        (s, Origin::default())
    }

    /// The graph of: `t` wants `a`; `a` after `b`; `c` wants `d`, `d`
    /// requires `e`; `f` alone.
    fn graph() -> Graph {
        Graph::build(vec![
            unit("t", |s| s.wants.push("a".into())),
            unit("a", |s| s.after.push("b".into())),
            unit("b", |_| {}),
            unit("c", |s| s.wants.push("d".into())),
            unit("d", |s| s.requires.push("e".into())),
            unit("e", |_| {}),
            unit("f", |_| {}),
        ])
        .0
    }

    /// The names of the collectable units when the units `held` are held.
    fn collectable(g: &Graph, held: &[&str]) -> Vec<String> {
        let mut flags = vec![false; g.len()];
        for h in held {
            if let Some(id) = g.unit(h) {
                flags[id.index()] = true;
            }
        }
        let c = g.collectable(&flags);
        g.ids()
            .filter(|id| c[id.index()])
            .map(|id| g.node(id).spec.name.clone())
            .collect()
    }

    #[test]
    fn a_unit_is_collectable_unless_held_or_referred_to_by_a_held_unit() {
        let g = graph();
        // (held, collectable)
        let table: &[(&[&str], &[&str])] = &[
            (&[], &["a", "b", "c", "d", "e", "f", "t"]),
            // `t` holds `a` (wants); `a` only orders itself after `b`.
            (&["t"], &["b", "c", "d", "e", "f"]),
            // Transitively: `c` holds `d`, which holds `e`.
            (&["c"], &["a", "b", "f", "t"]),
            // Held from the middle: what refers to `d` is free.
            (&["d"], &["a", "b", "c", "f", "t"]),
            (&["t", "c", "f"], &["b"]),
        ];
        for (held, want) in table {
            assert_eq!(collectable(&g, held), *want, "held: {held:?}");
        }
    }

    #[test]
    fn masked_units_are_never_collectable() {
        let mut masks = Masks::default();
        masks.insert("f", crate::mask::MaskSource::State("masked/f".into()));
        let (g, _) = Graph::build_shaped(
            vec![unit("f", |_| {}), unit("g", |_| {})],
            Shape {
                masks,
                ..Shape::default()
            },
        );
        assert_eq!(collectable(&g, &[]), ["g"]);
    }

    #[test]
    fn a_read_unit_replaces_a_collectable_one_that_differs() {
        let g = graph();
        let mut flags = vec![false; g.len()];
        flags[g.unit("t").unwrap().index()] = true;
        let c = g.collectable(&flags);
        let read = vec![
            // Held by `t`: not replaced, though it changed.
            unit("a", |s| s.wants.push("x".into())),
            // Collectable and unchanged.
            unit("b", |_| {}),
            // Collectable and changed.
            unit("c", |s| s.wants.push("x".into())),
            // Collectable, another file.
            (UnitSpec::new("e", UnitType::Virtual), {
                let mut o = Origin::default();
                o.file = "/etc/systemd/system/e.service".into();
                o
            }),
            // Not in the graph: loading it is another rule's.
            unit("new", |_| {}),
        ];
        assert_eq!(g.rereads(&c, &read), [2, 3]);
        // Nothing read differs: nothing to replace.
        let same = vec![unit("b", |_| {}), unit("f", |_| {})];
        assert!(g.rereads(&c, &same).is_empty());
    }

    #[test]
    fn a_collectable_unit_masked_on_disk_now_is_masked() {
        let g = graph();
        let mut flags = vec![false; g.len()];
        flags[g.unit("t").unwrap().index()] = true;
        let c = g.collectable(&flags);
        let masked: Vec<(String, String)> = ["a", "b", "gone"]
            .iter()
            .map(|n| (n.to_string(), "/etc/systemd/system/x".to_string()))
            .collect();
        // `a` is held by `t`; `gone` is no unit of the graph.
        assert_eq!(g.masked_now(&c, &masked), [1]);
    }
}
