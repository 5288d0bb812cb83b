//! The boot target's alias across a reload. The init boots a name such as
//! `default.target`, which a link makes another unit's (`graphical.target`
//! on Debian). systemd resolves that link once, when it starts the boot's
//! job: a link changed later (`systemctl set-default`, `ln -sf`) names the
//! target of the next boot, and a `daemon-reload` starts and stops nothing
//! for it. The init's target is the name itself, and the unit providing it
//! decides what runs; so a reload keeps the name on the unit that provided
//! it, whatever the link says now (docs/units.md, "The boot target's
//! link").

use flotilla_units::spec::{Origin, UnitSpec};

/// Keeps `target` on the unit `provider` provided it from, among the
/// reloaded `units`: taken from any other unit that now provides it (the
/// link's new unit) and given back to `provider`. Nothing changes when
/// `provider` is the target's own unit (no alias) or is gone from
/// `units`. The unit that now provides the target by the link, when it
/// was moved.
pub fn keep_target_alias(
    units: &mut [(UnitSpec, Origin)],
    target: &str,
    provider: &str,
) -> Option<String> {
    if provider == target || !units.iter().any(|(s, _)| s.name == provider) {
        return None;
    }
    let mut moved = None;
    for (s, _) in units.iter_mut() {
        if s.name == provider {
            if !s.provides.iter().any(|t| t == target) {
                s.provides.push(target.to_string());
            }
        } else if s.name != target && s.provides.iter().any(|t| t == target) {
            s.provides.retain(|t| t != target);
            moved = Some(s.name.clone());
        }
    }
    moved
}

#[cfg(test)]
mod tests {
    use super::*;
    use flotilla_units::spec::UnitType;

    fn unit(name: &str, provides: &[&str]) -> (UnitSpec, Origin) {
        let mut s = UnitSpec::new(name, UnitType::Virtual);
        s.provides = provides.iter().map(|p| p.to_string()).collect();
        (s, Origin::default())
    }

    fn provides(units: &[(UnitSpec, Origin)], name: &str) -> Vec<String> {
        let s = &units.iter().find(|(s, _)| s.name == name).unwrap().0;
        s.provides.to_vec()
    }

    #[test]
    fn a_relinked_default_target_stays_on_its_boot_unit() {
        let mut units = vec![
            unit("graphical.target", &["graphical.target"]),
            unit("emergency.target", &["emergency.target", "default.target"]),
        ];
        let moved = keep_target_alias(&mut units, "default.target", "graphical.target");
        assert_eq!(moved.as_deref(), Some("emergency.target"));
        assert_eq!(
            provides(&units, "graphical.target"),
            ["graphical.target", "default.target"]
        );
        assert_eq!(provides(&units, "emergency.target"), ["emergency.target"]);
    }

    #[test]
    fn nothing_moves_without_an_alias_or_without_the_boot_unit() {
        let same = vec![
            unit("graphical.target", &["graphical.target", "default.target"]),
            unit("default.target", &["default.target"]),
        ];
        let mut units = same.clone();
        assert_eq!(
            keep_target_alias(&mut units, "default.target", "default.target"),
            None
        );
        assert_eq!(units, same);
        let mut units = vec![unit(
            "multi-user.target",
            &["multi-user.target", "default.target"],
        )];
        assert_eq!(
            keep_target_alias(&mut units, "default.target", "graphical.target"),
            None
        );
        assert_eq!(
            provides(&units, "multi-user.target"),
            ["multi-user.target", "default.target"]
        );
        // Unchanged link: nothing to move.
        let mut units = vec![unit(
            "graphical.target",
            &["graphical.target", "default.target"],
        )];
        assert_eq!(
            keep_target_alias(&mut units, "default.target", "graphical.target"),
            None
        );
        assert_eq!(
            provides(&units, "graphical.target"),
            ["graphical.target", "default.target"]
        );
    }
}
