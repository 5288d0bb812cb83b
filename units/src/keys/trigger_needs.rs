//! What a trigger unit (`timer`, `socket`, `path`) must have as a whole,
//! beyond its keys one by one: the unit-wide check the YAML loader, the
//! translator and transient units all make.

use crate::spec::UnitSpec;
use crate::trigger::Activation;

/// What a trigger unit must have, beyond its keys one by one: settings of
/// its own type, something to fire on, one unit to trigger (a template
/// with `accept: yes`, a unit that is not a template otherwise). Each
/// problem names the key it is about.
pub fn trigger_problems(spec: &UnitSpec) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    if !spec.kind.is_trigger() {
        if spec.activation().is_some() {
            out.push((
                "type",
                format!(
                    "a `{}` unit has no timer, socket or path settings",
                    spec.kind.as_str()
                ),
            ));
        }
        return out;
    }
    let settings = spec
        .activation()
        .filter(|a| a.kind() == spec.kind)
        .cloned()
        .or_else(|| Activation::of_type(spec.kind));
    let (key, checked) = match &settings {
        Some(Activation::Timer(t)) => ("on-calendar", t.check(&spec.name)),
        Some(Activation::Socket(s)) => ("listen-stream", s.check()),
        Some(Activation::Path(p)) => ("path-exists", p.check()),
        None => ("type", Ok(())),
    };
    if let Err(e) = checked {
        out.push((key, e));
    }
    let accept = settings
        .as_ref()
        .and_then(Activation::socket)
        .is_some_and(|s| s.accept);
    // None at all is the rule `Needs` of the key table.
    match spec.extras.triggers.as_slice() {
        [] => {}
        [one] => {
            let template = crate::unit_name::is_template(one);
            if accept && !template {
                out.push((
                    "triggers",
                    format!("with `accept: yes`, the unit started is a template (`name@.service`), not `{one}`"),
                ));
            } else if !accept && template {
                out.push((
                    "triggers",
                    format!("`{one}` is a template: name an instance (`name@inst.service`), or set `accept: yes`"),
                ));
            } else if one == &spec.name {
                out.push(("triggers", "a unit cannot trigger itself".to_string()));
            }
        }
        [_, more @ ..] => out.push((
            "triggers",
            format!("a trigger starts one unit ({} more given)", more.len()),
        )),
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::UnitType;
    use crate::trigger::set;

    fn trigger(kind: UnitType, triggers: &[&str], keys: &[(&str, &str)]) -> UnitSpec {
        let mut s = UnitSpec::new("t", kind);
        s.extras.triggers = triggers.iter().map(|t| t.to_string()).collect();
        for (k, v) in keys {
            set(&mut s.extras.activation, kind, k, v).unwrap();
        }
        s
    }

    #[test]
    fn what_a_trigger_needs() {
        let p = |s: &UnitSpec| -> Vec<String> {
            trigger_problems(s)
                .into_iter()
                .map(|(k, e)| format!("{k}: {e}"))
                .collect()
        };
        let ok = trigger(UnitType::Timer, &["a.service"], &[("OnBootSec", "1")]);
        assert!(p(&ok).is_empty());
        assert_eq!(
            p(&trigger(UnitType::Timer, &[], &[])),
            ["on-calendar: t has no OnActiveSec=, OnBootSec=, OnStartupSec=, OnUnitActiveSec=, OnUnitInactiveSec=, OnCalendar= or OnClockChange= setting"]
        );
        let sock = trigger(UnitType::Socket, &["s@.service"], &[("ListenStream", "22")]);
        assert!(p(&sock)[0].contains("is a template"));
        let acc = trigger(
            UnitType::Socket,
            &["s@.service"],
            &[("ListenStream", "22"), ("Accept", "yes")],
        );
        assert!(p(&acc).is_empty());
        let two = trigger(
            UnitType::Path,
            &["a.service", "b.service"],
            &[("PathExists", "/x")],
        );
        assert_eq!(
            p(&two),
            ["triggers: a trigger starts one unit (1 more given)"]
        );
    }
}
