//! `initctl analyze plot`: an SVG timeline of the units' start-up, like
//! `systemd-analyze plot`.
//!
//! One row per unit that has started, in the order they started. Each row
//! has a light bar while the unit was starting and a dark bar while it was
//! active, coloured by the unit's state now (failed units in red), and the
//! activation time after the bars. A time axis with gridlines runs over the
//! rows; dashed lines mark when the target was set and when it became
//! active. Hovering a bar shows its times (`<title>`). The SVG is standalone:
//! no scripts, no external styles or fonts. What has not ended runs to the
//! init's present ([`AnalyzeData::now_ms`]).

use super::activation_ms;
use crate::duration::format_ms;
use flotilla_units::protocol::{AnalyzeData, UnitTiming};
use flotilla_units::state::UnitState;
use std::fmt::Write;

const CHART_WIDTH: f64 = 900.0;
const ROW_HEIGHT: f64 = 22.0;
const BAR_HEIGHT: f64 = 14.0;
const TOP: f64 = 84.0;
const RIGHT_PAD: f64 = 110.0;
const CHAR_WIDTH: f64 = 7.2;

/// The dark (active) and light (starting) colour of a state.
pub fn colors(state: UnitState) -> (&'static str, &'static str) {
    match state {
        UnitState::Running | UnitState::Reloading => ("#2e7d32", "#a5d6a7"),
        UnitState::Exited => ("#1565c0", "#90caf9"),
        UnitState::Starting => ("#ef6c00", "#ffcc80"),
        UnitState::Waiting => ("#616161", "#e0e0e0"),
        UnitState::Stopping => ("#6a1b9a", "#ce93d8"),
        UnitState::Failed => ("#c62828", "#ef9a9a"),
        UnitState::Disabled => ("#9e9e9e", "#eeeeee"),
    }
}

/// Escapes text for XML content and attribute values.
pub fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // Characters XML 1.0 does not allow.
            c if (c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r') => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

/// A tick step of 1, 2 or 5 times a power of ten ms, for at most 10 ticks.
pub fn tick_step(span_ms: u64) -> u64 {
    let mut magnitude = 1u64;
    loop {
        for m in [1, 2, 5] {
            let step = m * magnitude;
            if span_ms.div_ceil(step) <= 10 {
                return step;
            }
        }
        magnitude = magnitude.saturating_mul(10);
    }
}

/// One unit's bars, in ms since the init started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bars {
    /// Starting: from, to.
    pub starting: (u64, u64),
    /// Active: from, to.
    pub active: Option<(u64, u64)>,
}

/// The bars of a unit that has started; `now` ends what has not ended.
pub fn bars(u: &UnitTiming, now: u64) -> Option<Bars> {
    let start = u.start_ms?;
    let end_after = |t: u64| u.end_ms.filter(|&e| e >= t);
    match u.active_ms.filter(|&a| a >= start) {
        Some(active) => {
            let until = if u.state.is_active() {
                now
            } else {
                end_after(active).unwrap_or(now)
            };
            Some(Bars {
                starting: (start, active),
                active: Some((active, until.max(active))),
            })
        }
        None => {
            let until = if u.state == UnitState::Starting {
                now
            } else {
                end_after(start).unwrap_or(now)
            };
            Some(Bars {
                starting: (start, until.max(start)),
                active: None,
            })
        }
    }
}

/// The SVG document.
pub fn plot(data: &AnalyzeData) -> String {
    let mut rows: Vec<&UnitTiming> = data.units.iter().filter(|u| u.start_ms.is_some()).collect();
    rows.sort_by(|a, b| {
        (a.start_ms, a.active_ms.unwrap_or(u64::MAX), &a.unit).cmp(&(
            b.start_ms,
            b.active_ms.unwrap_or(u64::MAX),
            &b.unit,
        ))
    });

    let times = rows
        .iter()
        .flat_map(|u| [u.start_ms, u.active_ms, u.end_ms])
        .chain([Some(data.target_set_ms), data.target_active_ms])
        .flatten();
    let t0 = rows
        .iter()
        .filter_map(|u| u.start_ms)
        .min()
        .unwrap_or(data.target_set_ms)
        .min(data.target_set_ms);
    // What is still going on runs to the init's present (`now_ms`); data
    // from an init that does not send it runs past the last recorded event
    // by an eighth of the span, so that it shows.
    let last = times.max().unwrap_or(t0).max(t0);
    let now = if data.now_ms >= last {
        data.now_ms.max(t0 + 1)
    } else {
        last + ((last - t0) / 8).max(1)
    };
    let step = tick_step((now - t0).max(1));
    let axis_ms = (now - t0).max(1).div_ceil(step) * step;
    let scale = CHART_WIDTH / axis_ms as f64;

    let longest = rows
        .iter()
        .map(|u| u.unit.chars().count())
        .max()
        .unwrap_or(0);
    let left = (longest as f64 * CHAR_WIDTH + 24.0).max(140.0);
    let width = left + CHART_WIDTH + RIGHT_PAD;
    let rows_bottom = TOP + ROW_HEIGHT * rows.len().max(1) as f64;
    let legend_y = rows_bottom + 44.0;
    let height = legend_y + 28.0;
    let x = |t: u64| left + (t.saturating_sub(t0)) as f64 * scale;

    let provider = data
        .units
        .iter()
        .find(|u| u.provides.contains(&data.target));
    let target_state = provider.map(|u| u.state);
    let title = match data.target_active_ms {
        Some(a) if target_state.is_none_or(UnitState::is_active) => format!(
            "Start-up of target \u{201c}{}\u{201d}: {}",
            data.target,
            format_ms(a.saturating_sub(data.target_set_ms))
        ),
        _ => format!(
            "Start-up of target \u{201c}{}\u{201d}: not active ({})",
            data.target,
            target_state.map_or("no provider", UnitState::as_str)
        ),
    };
    let failed = rows.iter().filter(|u| u.state == UnitState::Failed).count();
    let mut subtitle = format!(
        "{} unit{} started; target set @{}",
        rows.len(),
        if rows.len() == 1 { "" } else { "s" },
        format_ms(data.target_set_ms)
    );
    if failed > 0 {
        let _ = write!(subtitle, "; {failed} failed");
    }
    subtitle.push_str("; times since the init started");

    let mut s = String::new();
    let _ = writeln!(
        s,
        r##"<?xml version="1.0" encoding="UTF-8" standalone="no"?>"##
    );
    let _ = writeln!(
        s,
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0}" height="{height:.0}" viewBox="0 0 {width:.0} {height:.0}" font-family="DejaVu Sans, Verdana, Helvetica, Arial, sans-serif" font-size="12">"##
    );
    let _ = writeln!(s, "<title>{}</title>", esc(&title));
    let _ = writeln!(
        s,
        r##"<rect x="0" y="0" width="{width:.0}" height="{height:.0}" fill="#ffffff"/>"##
    );
    let _ = writeln!(
        s,
        r##"<text x="16" y="28" font-size="18" font-weight="bold" fill="#212121">{}</text>"##,
        esc(&title)
    );
    let _ = writeln!(
        s,
        r##"<text x="16" y="48" fill="#616161">{}</text>"##,
        esc(&subtitle)
    );

    // Row stripes.
    let _ = writeln!(s, r##"<g id="stripes">"##);
    for i in (1..rows.len()).step_by(2) {
        let y = TOP + ROW_HEIGHT * i as f64;
        let _ = writeln!(
            s,
            r##"<rect x="0" y="{y:.1}" width="{width:.0}" height="{ROW_HEIGHT}" fill="#f5f5f5"/>"##
        );
    }
    let _ = writeln!(s, "</g>");

    // Axis: gridlines and labels.
    let _ = writeln!(
        s,
        r##"<g id="axis" font-size="11" fill="#616161" text-anchor="middle">"##
    );
    let mut t = 0;
    while t <= axis_ms {
        let gx = left + t as f64 * scale;
        let _ = writeln!(
            s,
            r##"<line x1="{gx:.1}" y1="{:.1}" x2="{gx:.1}" y2="{rows_bottom:.1}" stroke="#d0d0d0" stroke-width="1"/>"##,
            TOP - 6.0
        );
        let _ = writeln!(
            s,
            r##"<text x="{gx:.1}" y="{:.1}">{}</text>"##,
            TOP - 10.0,
            esc(&format_ms(t0 + t))
        );
        t += step;
    }
    let _ = writeln!(
        s,
        r##"<line x1="{left:.1}" y1="{rows_bottom:.1}" x2="{:.1}" y2="{rows_bottom:.1}" stroke="#9e9e9e" stroke-width="1"/>"##,
        left + CHART_WIDTH
    );
    let _ = writeln!(s, "</g>");

    // Units.
    let _ = writeln!(s, r##"<g id="units">"##);
    if rows.is_empty() {
        let _ = writeln!(
            s,
            r##"<text x="{:.1}" y="{:.1}" fill="#616161">no unit has started yet</text>"##,
            left + 8.0,
            TOP + 15.0
        );
    }
    for (i, u) in rows.iter().enumerate() {
        let Some(b) = bars(u, now) else { continue };
        let y = TOP + ROW_HEIGHT * i as f64;
        let bar_y = y + (ROW_HEIGHT - BAR_HEIGHT) / 2.0;
        let (dark, light) = colors(u.state);
        let name_fill = match u.state {
            UnitState::Failed => "#c62828",
            _ if !u.required => "#9e9e9e",
            _ => "#212121",
        };
        let _ = writeln!(s, r##"<g class="unit">"##);
        let _ = writeln!(s, "<title>{}</title>", esc(&tooltip(u)));
        let _ = writeln!(
            s,
            r##"<text x="{:.1}" y="{:.1}" text-anchor="end" fill="{name_fill}">{}</text>"##,
            left - 8.0,
            y + 15.0,
            esc(&u.unit)
        );
        let (sx, ex) = (x(b.starting.0), x(b.starting.1));
        let _ = writeln!(
            s,
            r##"<rect x="{sx:.1}" y="{bar_y:.1}" width="{:.1}" height="{BAR_HEIGHT}" fill="{light}"/>"##,
            (ex - sx).max(1.0)
        );
        let mut bar_end = ex.max(sx + 1.0);
        if let Some((from, to)) = b.active {
            let (ax, bx) = (x(from), x(to));
            let _ = writeln!(
                s,
                r##"<rect x="{ax:.1}" y="{bar_y:.1}" width="{:.1}" height="{BAR_HEIGHT}" fill="{dark}"/>"##,
                (bx - ax).max(1.0)
            );
            bar_end = bar_end.max(bx.max(ax + 1.0));
        }
        let label = match (activation_ms(u), u.state) {
            (Some(ms), UnitState::Failed) => format!("+{} (failed)", format_ms(ms)),
            (Some(ms), _) => format!("+{}", format_ms(ms)),
            (None, UnitState::Failed) => match (u.start_ms, u.end_ms) {
                (Some(st), Some(e)) if e >= st => format!("failed after {}", format_ms(e - st)),
                _ => "failed".to_string(),
            },
            (None, state) => state.to_string(),
        };
        let _ = writeln!(
            s,
            r##"<text x="{:.1}" y="{:.1}" font-size="11" fill="#424242">{}</text>"##,
            bar_end + 4.0,
            y + 15.0,
            esc(&label)
        );
        let _ = writeln!(s, "</g>");
    }
    let _ = writeln!(s, "</g>");

    // Target markers.
    let _ = writeln!(s, r##"<g id="target" font-size="11">"##);
    let mut markers = vec![(
        data.target_set_ms,
        "#1565c0",
        format!("target set @{}", format_ms(data.target_set_ms)),
    )];
    if let Some(a) = data.target_active_ms {
        markers.push((
            a,
            "#2e7d32",
            format!("{} active @{}", data.target, format_ms(a)),
        ));
    }
    for (i, (t, color, label)) in markers.iter().enumerate() {
        let mx = x(*t);
        let anchor = if i == 0 { "start" } else { "end" };
        let _ = writeln!(
            s,
            r##"<line x1="{mx:.1}" y1="{:.1}" x2="{mx:.1}" y2="{:.1}" stroke="{color}" stroke-width="1.5" stroke-dasharray="6,4"/>"##,
            TOP - 6.0,
            rows_bottom + 6.0
        );
        let _ = writeln!(
            s,
            r##"<text x="{mx:.1}" y="{:.1}" text-anchor="{anchor}" fill="{color}">{}</text>"##,
            rows_bottom + 20.0,
            esc(label)
        );
    }
    let _ = writeln!(s, "</g>");

    // Legend: what light and dark mean, then one swatch per state shown.
    let _ = writeln!(s, r##"<g id="legend" font-size="11" fill="#424242">"##);
    let intro = "light: starting, dark: active; colour: state now:";
    let _ = writeln!(
        s,
        r##"<text x="16" y="{legend_y:.1}">{}</text>"##,
        esc(intro)
    );
    let mut lx = 16.0 + intro.chars().count() as f64 * 6.0 + 12.0;
    let mut states: Vec<UnitState> = rows.iter().map(|u| u.state).collect();
    states.sort();
    states.dedup();
    for state in states {
        let (dark, light) = colors(state);
        let y = legend_y - 9.0;
        let _ = writeln!(
            s,
            r##"<rect x="{lx:.1}" y="{y:.1}" width="10" height="10" fill="{light}"/>"##
        );
        let _ = writeln!(
            s,
            r##"<rect x="{:.1}" y="{y:.1}" width="10" height="10" fill="{dark}"/>"##,
            lx + 10.0
        );
        let _ = writeln!(
            s,
            r##"<text x="{:.1}" y="{legend_y:.1}">{}</text>"##,
            lx + 24.0,
            state.as_str()
        );
        lx += 24.0 + state.as_str().len() as f64 * 6.6 + 16.0;
    }
    let _ = writeln!(s, "</g>");
    s.push_str("</svg>\n");
    s
}

/// The hover text of a unit's row.
fn tooltip(u: &UnitTiming) -> String {
    let mut t = format!("{} ({}, {})", u.unit, u.kind.as_str(), u.state);
    if let Some(s) = u.start_ms {
        let _ = write!(t, "\nstarting @{}", format_ms(s));
    }
    if let Some(a) = u.active_ms.filter(|&a| Some(a) >= u.start_ms) {
        let _ = write!(t, "\nactive @{}", format_ms(a));
        if let Some(ms) = activation_ms(u) {
            let _ = write!(t, " (+{})", format_ms(ms));
        }
    }
    if let Some(e) = u.end_ms.filter(|&e| Some(e) >= u.start_ms) {
        let _ = write!(t, "\nended @{}", format_ms(e));
    }
    if !u.provides.is_empty() && u.provides != [u.unit.clone()] {
        let _ = write!(t, "\nprovides {}", u.provides.join(", "));
    }
    t
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::analyze::tests::{boot, timing};

    /// Checks that `doc` is well-formed XML: one root, balanced tags, quoted
    /// attributes, no stray `<` or `&` in text.
    pub(crate) fn assert_well_formed(doc: &str) {
        let mut stack: Vec<String> = Vec::new();
        let mut rest = doc;
        let mut roots = 0;
        while let Some(open) = rest.find('<') {
            check_text(&rest[..open]);
            rest = &rest[open..];
            if let Some(r) = rest.strip_prefix("<?") {
                let end = r.find("?>").expect("unterminated <?");
                rest = &r[end + 2..];
                continue;
            }
            if let Some(r) = rest.strip_prefix("<!--") {
                let end = r.find("-->").expect("unterminated comment");
                rest = &r[end + 3..];
                continue;
            }
            let end = find_tag_end(rest);
            let tag = &rest[1..end];
            rest = &rest[end + 1..];
            if let Some(name) = tag.strip_prefix('/') {
                let top = stack
                    .pop()
                    .unwrap_or_else(|| panic!("closing </{name}> with nothing open"));
                assert_eq!(top, name.trim(), "mismatched tags");
                continue;
            }
            let self_closing = tag.ends_with('/');
            let tag = tag.trim_end_matches('/');
            let name = tag
                .split_whitespace()
                .next()
                .expect("empty tag")
                .to_string();
            check_attributes(&tag[name.len()..]);
            if stack.is_empty() {
                roots += 1;
            }
            if !self_closing {
                stack.push(name);
            }
        }
        check_text(rest);
        assert!(stack.is_empty(), "unclosed: {stack:?}");
        assert_eq!(roots, 1, "one root element");
    }

    fn find_tag_end(s: &str) -> usize {
        let mut quote = None;
        for (i, c) in s.char_indices() {
            match (quote, c) {
                (None, '"' | '\'') => quote = Some(c),
                (Some(q), c) if c == q => quote = None,
                (None, '>') => return i,
                (None, '<') if i > 0 => panic!("'<' inside a tag: {}", &s[..i]),
                _ => {}
            }
        }
        panic!("unterminated tag");
    }

    fn check_attributes(mut a: &str) {
        loop {
            a = a.trim_start();
            if a.is_empty() {
                return;
            }
            let eq = a
                .find('=')
                .unwrap_or_else(|| panic!("attribute without value: {a}"));
            let name = a[..eq].trim();
            assert!(
                !name.is_empty() && !name.contains(char::is_whitespace),
                "bad attribute name '{name}'"
            );
            let v = &a[eq + 1..];
            let q = v.chars().next().expect("missing value");
            assert!(q == '"' || q == '\'', "unquoted attribute {name}");
            let close = v[1..].find(q).expect("unterminated attribute") + 1;
            check_text(&v[1..close]);
            a = &v[close + 1..];
        }
    }

    fn check_text(t: &str) {
        assert!(!t.contains('<'), "stray '<' in {t:?}");
        let mut rest = t;
        while let Some(i) = rest.find('&') {
            let r = &rest[i + 1..];
            let semi = r.find(';').unwrap_or_else(|| panic!("bare '&' in {t:?}"));
            let entity = &r[..semi];
            assert!(
                ["amp", "lt", "gt", "quot", "apos"].contains(&entity) || entity.starts_with('#'),
                "unknown entity &{entity};"
            );
            rest = &r[semi + 1..];
        }
    }

    #[test]
    fn the_checker_catches_bad_xml() {
        for bad in [
            "<a><b></a>",
            "<a>",
            "<a></a><b/>",
            "<a>x & y</a>",
            "<a x=1/>",
            "<a>1 < 2</a>",
        ] {
            assert!(
                std::panic::catch_unwind(|| assert_well_formed(bad)).is_err(),
                "{bad}"
            );
        }
        assert_well_formed("<?xml version=\"1.0\"?>\n<a x=\"1\"><b/><!-- c --><c>&amp;</c></a>\n");
    }

    #[test]
    fn ticks_are_round() {
        assert_eq!(tick_step(1), 1);
        assert_eq!(tick_step(10), 1);
        assert_eq!(tick_step(11), 2);
        assert_eq!(tick_step(45), 5);
        assert_eq!(tick_step(2345), 500);
        assert_eq!(tick_step(100_000), 10_000);
        assert_eq!(tick_step(100_001), 20_000);
    }

    #[test]
    fn bars_by_state() {
        use UnitState::*;
        // Active: starting until active, active until now.
        let b = bars(&timing("a", Running, Some(10), Some(30), None), 100).unwrap();
        assert_eq!(
            b,
            Bars {
                starting: (10, 30),
                active: Some((30, 100))
            }
        );
        // Failed after being active.
        let b = bars(&timing("a", Failed, Some(10), Some(30), Some(50)), 100).unwrap();
        assert_eq!(
            b,
            Bars {
                starting: (10, 30),
                active: Some((30, 50))
            }
        );
        // Failed while starting.
        let b = bars(&timing("a", Failed, Some(10), None, Some(50)), 100).unwrap();
        assert_eq!(
            b,
            Bars {
                starting: (10, 50),
                active: None
            }
        );
        // Still starting; an old end does not count.
        let b = bars(&timing("a", Starting, Some(10), Some(5), Some(8)), 100).unwrap();
        assert_eq!(
            b,
            Bars {
                starting: (10, 100),
                active: None
            }
        );
        // Running, with an end left from an earlier run.
        let b = bars(&timing("a", Running, Some(10), Some(20), Some(5)), 100).unwrap();
        assert_eq!(
            b,
            Bars {
                starting: (10, 20),
                active: Some((20, 100))
            }
        );
        assert_eq!(bars(&timing("a", Waiting, None, None, None), 100), None);
    }

    #[test]
    fn plot_is_a_readable_standalone_svg() {
        let svg = plot(&boot());
        assert_well_formed(&svg);
        assert!(svg.starts_with("<?xml"));
        assert!(svg.contains(r##"xmlns="http://www.w3.org/2000/svg""##));
        assert!(
            svg.contains("Start-up of target \u{201c}default\u{201d}: 2.345s"),
            "{svg}"
        );
        // Every started unit has a row; the never-started one has not.
        for name in ["net", "db", "cache", "opt", "web", "default"] {
            assert!(
                svg.contains(&format!(
                    r##"fill="{}">{name}</text>"##,
                    if name == "opt" { "#c62828" } else { "#212121" }
                )),
                "{name}"
            );
        }
        assert!(!svg.contains(">old</text>"));
        // The failed unit's bar is red; an active unit has a dark bar.
        assert!(svg.contains(r##"fill="#ef9a9a""##));
        assert!(svg.contains(r##"fill="#2e7d32""##));
        // Gridlines every 500ms up to 2.5s, with labels.
        for label in ["0ms", "500ms", "1s", "1.5s", "2s", "2.5s"] {
            assert!(svg.contains(&format!(">{label}</text>")), "{label}");
        }
        assert!(svg.contains("+1.2s"));
        assert!(svg.contains("default active @2.345s"));
    }

    #[test]
    fn rows_in_start_order() {
        let svg = plot(&boot());
        let pos = |name: &str| svg.find(&format!(">{name}</text>")).unwrap();
        assert!(pos("net") < pos("cache"));
        assert!(pos("cache") < pos("db"));
        assert!(pos("db") < pos("web"));
    }

    #[test]
    fn empty_and_unusual_data_still_make_valid_svg() {
        let mut d = boot();
        d.units.clear();
        d.target_active_ms = None;
        let svg = plot(&d);
        assert_well_formed(&svg);
        assert!(svg.contains("no unit has started yet"));
        assert!(svg.contains("not active (no provider)"));

        let mut d = boot();
        d.target = "a<b>&\"c\"".into();
        d.units = vec![timing("x&y", UnitState::Starting, Some(7), None, None)];
        d.target_set_ms = 7;
        let svg = plot(&d);
        assert_well_formed(&svg);
        assert!(svg.contains("x&amp;y"));
    }
}
