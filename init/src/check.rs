//! `init --check`: load and validate the unit search path, print every
//! problem (`FILE:LINE:COL: message`), where each unit that is more than
//! its own file came from (what it hides, its drop-ins, aliases and
//! `.wants/`/`.requires/` edges), the masked names, which provider each
//! declared target runs (and why), and the set of units the target
//! requires; exit 0 if there is no error, 1 otherwise. Starts nothing.

use flotilla_init::args::Settings;
use flotilla_init::sys::Sys;
use flotilla_init::unitdir::load_units;
use flotilla_systemd::load::{LoadedPath, UnitSource};
use flotilla_units::graph::Graph;
use flotilla_units::targets::TargetMode;
use std::process::ExitCode;

/// Runs the check and prints its report.
pub fn run(sys: &dyn Sys, settings: &Settings) -> ExitCode {
    let loaded = match load_units(sys, settings) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(1);
        }
    };
    print_origins(&loaded);
    if let Some(dir) = &settings.sysv_dir {
        let prefix = format!("{}/", dir.display());
        for s in loaded
            .sources
            .iter()
            .filter(|s| s.file.starts_with(&prefix))
        {
            println!("unit {}: from {} (SysV init script)", s.name, s.file);
        }
    }
    let mut diags = loaded.diagnostics;
    let (mut shape, problems) = flotilla_init::shape::load(sys, settings);
    flotilla_init::shape::set_unit_file_masks(&mut shape, &loaded.masked);
    for p in &problems {
        println!("warning: {p}");
    }
    let (graph, gdiags) = Graph::build_shaped(loaded.units, shape);
    diags.extend(gdiags);
    for d in &diags {
        println!("{d}");
    }
    for (name, source) in graph.shape().masks.iter() {
        println!("masked: {name} ({source})");
    }
    for (_, t) in graph.declared() {
        let names: Vec<&str> = t
            .members
            .iter()
            .map(|&m| graph.node(m).spec.name.as_str())
            .collect();
        match t
            .chosen_unit()
            .filter(|_| t.mode == TargetMode::Alternative)
        {
            Some(c) => println!(
                "alternative {}: runs {} ({}); providers: {}",
                t.name,
                graph.node(c).spec.name,
                t.why,
                names.join(" ")
            ),
            None => println!("group {}: runs {}", t.name, names.join(" ")),
        }
    }
    let errors = diags.iter().filter(|d| d.is_error()).count();
    let mut warnings = diags.len() - errors;
    match graph.required_set(&settings.target) {
        Some(req) => {
            warnings += print_conflicts(&graph, &settings.target);
            let names: Vec<&str> = graph
                .ids()
                .filter(|i| req.get(i.index()).copied().unwrap_or(false))
                .map(|i| graph.node(i).spec.name.as_str())
                .collect();
            println!(
                "target {} requires {} unit(s): {}",
                settings.target,
                names.len(),
                names.join(" ")
            );
            warnings += print_not_applied(&graph, &req, settings);
        }
        None => {
            println!("error: no unit provides the target `{}`", settings.target);
            return ExitCode::from(1);
        }
    }
    println!(
        "{} unit(s), {errors} error(s), {warnings} warning(s)",
        graph.unit_count()
    );
    if errors > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// What this machine will not apply of each required unit's settings
/// (the init lacks a privilege: docs/service-context.md), said in
/// advance: a warning per unit.
fn print_not_applied(graph: &Graph, req: &[bool], settings: &Settings) -> usize {
    use flotilla_init::sys::context::{predict, set_default_policy, Host};
    set_default_policy(settings.sandbox);
    let host = Host::probe();
    let mut warnings = 0;
    for i in graph.ids() {
        if !req.get(i.index()).copied().unwrap_or(false) {
            continue;
        }
        let node = graph.node(i);
        if node.spec.extras.context.is_empty() {
            continue;
        }
        match predict(&node.spec.extras.context, &host) {
            Ok(list) => {
                for n in &list {
                    println!(
                        "{}: warning: {}: not applied on this machine: {}: {}",
                        node.origin.file, node.spec.name, n.setting, n.reason
                    );
                }
                warnings += usize::from(!list.is_empty());
            }
            Err(e) => {
                println!(
                    "{}: warning: {}: will fail to start on this machine: {e}",
                    node.origin.file, node.spec.name
                );
                warnings += 1;
            }
        }
    }
    warnings
}

/// A warning for each unit that the target would pull in but that a
/// conflict leaves out (docs/contract.md §3a's `conflicts`): how many.
fn print_conflicts(graph: &Graph, target: &str) -> usize {
    let roots: Vec<_> = graph.provider(target).into_iter().collect();
    let losers = graph.conflict_losers(&roots);
    for &(loser, winner) in &losers {
        let (l, w) = (&graph.node(loser).spec, &graph.node(winner).spec);
        println!(
            "{}: warning: {} conflicts with {}, which target {target} requires: {} is not started",
            graph.node(loser).origin.file,
            l.name,
            w.name,
            l.name
        );
    }
    losers.len()
}

/// One line for each unit that is more than a file of its own, and one for
/// each mask.
fn print_origins(loaded: &LoadedPath) {
    for s in loaded.sources.iter().filter(|s| has_more(s)) {
        println!("{}", origin_line(s));
    }
    for (name, mask) in &loaded.masked {
        println!("unit {name}: masked by {mask}");
    }
}

fn has_more(s: &UnitSource) -> bool {
    // An instance made from its template: the file says which.
    let from_template = flotilla_units::unit_name::is_instance(&s.name)
        && !s.file.ends_with(&format!("/{}", s.name));
    from_template
        || !(s.hides.is_empty()
            && s.dropins.is_empty()
            && s.aliases.is_empty()
            && s.wants.is_empty()
            && s.requires.is_empty())
}

/// `unit NAME: from FILE; hides …; drop-ins …; aliases …; wants …; requires …`.
fn origin_line(s: &UnitSource) -> String {
    let mut line = format!("unit {}: from {}", s.name, s.file);
    for (what, list) in [
        ("hides", &s.hides),
        ("drop-ins", &s.dropins),
        ("aliases", &s.aliases),
        ("wants", &s.wants),
        ("requires", &s.requires),
    ] {
        if !list.is_empty() {
            line.push_str(&format!("; {what} {}", list.join(" ")));
        }
    }
    line
}
