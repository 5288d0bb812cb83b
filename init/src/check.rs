//! `init --check`: load and validate the units directory, print every
//! problem (`FILE:LINE:COL: message`) and the set of units the target
//! requires, the masks and which provider each declared target runs (and
//! why); exit 0 if there is no error, 1 otherwise. Starts nothing.

use flotilla_init::args::Settings;
use flotilla_init::sys::Sys;
use flotilla_init::unitdir::load_dir;
use flotilla_units::graph::Graph;
use flotilla_units::targets::TargetMode;
use std::process::ExitCode;

/// Runs the check and prints its report.
pub fn run(sys: &dyn Sys, settings: &Settings) -> ExitCode {
    let loaded = match load_dir(sys, &settings.units_dir) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(1);
        }
    };
    let mut diags = loaded.diagnostics;
    let (shape, problems) = flotilla_init::shape::load(sys, settings);
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
    let warnings = diags.len() - errors;
    match graph.required_set(&settings.target) {
        Some(req) => {
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
