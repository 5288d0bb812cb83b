//! `init --check`: load and validate the units directory, print every
//! problem (`FILE:LINE:COL: message`) and the set of units the target
//! requires; exit 0 if there is no error, 1 otherwise. Starts nothing.

use flotilla_init::args::Settings;
use flotilla_init::sys::Sys;
use flotilla_init::unitdir::load_dir;
use flotilla_units::graph::Graph;
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
    let (graph, gdiags) = Graph::build(loaded.units);
    diags.extend(gdiags);
    for d in &diags {
        println!("{d}");
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
        graph.len()
    );
    if errors > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
