//! The one rule for adding a dependency that pulls a unit in (systemd's
//! `Requires=` and `Wants=`, and the `NAME.requires/` and `NAME.wants/`
//! links): ordered (`depends-on`, `waits-for`) when the caller says so or
//! something orders them already (an `After=`), `requires`/`wants` (no
//! ordering) otherwise, as in systemd. The translator and the links ask
//! for unordered pulls; systemd's default dependencies
//! (`load/default_deps.rs`, a target's in `load/target_order.rs`) and
//! `RequiresMountsFor=`, `Sockets=` ask for ordered ones.

use super::{TargetList, UnitSpec};

impl UnitSpec {
    /// Adds a dependency that pulls `name` in: a hard one (`Requires=`)
    /// when `hard`, else a soft one (`Wants=`). It is ordered
    /// (`depends-on`, `waits-for`) when `ordered` says so (an implicit
    /// ordering, such as a target's default dependencies) or when the unit
    /// is already ordered after `name` (`after`, or an ordered dependency
    /// on it); else it is `requires` or `wants`. A name already pulled in
    /// as strongly is left as it is; a hard one replaces a soft one of the
    /// same ordering (the caller drops that one's position, if it kept
    /// one). Returns the list `name` was added to.
    pub fn pull(&mut self, name: &str, hard: bool, ordered: bool) -> Option<TargetList> {
        let has = |l: &[String]| l.iter().any(|n| n == name);
        let ordered = ordered
            || has(&self.after)
            || has(&self.depends_on)
            || has(&self.depends_ms)
            || has(&self.waits_for);
        let (strong, weak, lists) = if ordered {
            let lists = (TargetList::DependsOn, TargetList::WaitsFor);
            (&mut self.depends_on, &mut self.waits_for, lists)
        } else {
            let lists = (TargetList::Requires, TargetList::Wants);
            (&mut self.requires, &mut self.wants, lists)
        };
        if has(strong) || (!hard && has(weak)) {
            return None;
        }
        if hard {
            weak.retain(|n| n != name);
            strong.push(name.to_string());
            Some(lists.0)
        } else {
            weak.push(name.to_string());
            Some(lists.1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::UnitType;

    fn unit(f: impl FnOnce(&mut UnitSpec)) -> UnitSpec {
        let mut s = UnitSpec::new("a", UnitType::Virtual);
        f(&mut s);
        s
    }

    #[test]
    fn unordered_pulls_are_requires_and_wants() {
        let mut s = unit(|_| {});
        assert_eq!(s.pull("b", true, false), Some(TargetList::Requires));
        assert_eq!(s.pull("c", false, false), Some(TargetList::Wants));
        // Already required: a want adds nothing.
        assert_eq!(s.pull("b", false, false), None);
        // A want made hard moves.
        assert_eq!(s.pull("c", true, false), Some(TargetList::Requires));
        assert_eq!(s.requires, ["b", "c"]);
        assert!(s.wants.is_empty() && s.depends_on.is_empty() && s.waits_for.is_empty());
    }

    #[test]
    fn ordered_pulls_are_depends_on_and_waits_for() {
        let mut s = unit(|s| s.after = vec!["b".into()].into());
        assert_eq!(s.pull("b", false, false), Some(TargetList::WaitsFor));
        assert_eq!(s.pull("b", true, false), Some(TargetList::DependsOn));
        assert_eq!(s.pull("c", true, true), Some(TargetList::DependsOn));
        assert_eq!(s.depends_on, ["b", "c"]);
        assert!(s.waits_for.is_empty() && s.requires.is_empty() && s.wants.is_empty());
        // An ordered dependency orders what pulls the same unit in later.
        let mut s = unit(|s| s.waits_for = vec!["d".into()].into());
        assert_eq!(s.pull("d", true, false), Some(TargetList::DependsOn));
        assert!(s.waits_for.is_empty());
    }
}
