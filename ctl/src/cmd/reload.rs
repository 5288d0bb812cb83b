//! `initctl reload`: re-read the unit directory and say what changed;
//! `initctl reload UNIT`: run one running unit's `exec-reload`;
//! `initctl reexec`: the init executes its binary again (upgrade in place).
//!
//! A refused set (`invalid`) prints every problem on stderr and exits 1;
//! warnings of an applied set go to stderr too, so that stdout is only the
//! summary.

use super::{eprint_line, Ctx};
use crate::client::unexpected;
use crate::error::{CtlError, EXIT_FAILED, EXIT_OK};
use flotilla_units::protocol::{Applied, ErrorCode, Reply, Request};

/// Runs the command.
pub fn run(ctx: &mut Ctx<'_>) -> Result<i32, CtlError> {
    match ctx.call(Request::Reload {
        keep_running: false,
    })? {
        Reply::Applied(applied) => {
            for w in &applied.warnings {
                eprint_line(w);
            }
            ctx.print(&render(&applied))?;
            Ok(EXIT_OK)
        }
        Reply::Error {
            code: ErrorCode::Invalid,
            message,
            details,
        } => {
            eprint_line(&refused(&message));
            for d in &details {
                eprint_line(d);
            }
            Ok(EXIT_FAILED)
        }
        other => Err(unexpected(&other, "applied")),
    }
}

/// `initctl reload UNIT`: run the unit's `exec-reload`.
pub fn run_unit(ctx: &mut Ctx<'_>, unit: String) -> Result<i32, CtlError> {
    match ctx.call(Request::ReloadUnit { unit })? {
        Reply::Accepted { message } => {
            ctx.print(&format!("{message}\n"))?;
            Ok(EXIT_OK)
        }
        other => Err(unexpected(&other, "accepted")),
    }
}

/// `initctl reexec`: the init executes its binary again, keeping its
/// state; the new image answers. A failed exec is an error from the old
/// one, which goes on.
pub fn reexec(ctx: &mut Ctx<'_>) -> Result<i32, CtlError> {
    match ctx.call(Request::Reexec)? {
        Reply::Accepted { message } => {
            ctx.print(&format!("{message}\n"))?;
            Ok(EXIT_OK)
        }
        other => Err(unexpected(&other, "accepted")),
    }
}

/// The first line of a refusal (an `invalid` reply: the init's message
/// says that nothing changed).
fn refused(message: &str) -> String {
    if message.is_empty() {
        "initctl: reload refused; nothing changed".to_string()
    } else {
        format!("initctl: reload refused: {message}")
    }
}

/// What changed, one line per kind of change.
pub fn render(a: &Applied) -> String {
    if a.added.is_empty() && a.changed.is_empty() && a.removed.is_empty() {
        return format!(
            "no changes ({} unit{} unchanged)\n",
            a.unchanged,
            plural(a.unchanged)
        );
    }
    let mut out = String::new();
    if !a.added.is_empty() {
        out.push_str(&format!("added:     {}\n", a.added.join(", ")));
    }
    if !a.changed.is_empty() {
        out.push_str(&format!(
            "changed:   {} (restarted if running)\n",
            a.changed.join(", ")
        ));
    }
    if !a.removed.is_empty() {
        out.push_str(&format!("removed:   {} (stopped)\n", a.removed.join(", ")));
    }
    out.push_str(&format!("unchanged: {}\n", a.unchanged));
    out
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_changed() {
        let a = Applied {
            unchanged: 5,
            ..Applied::default()
        };
        assert_eq!(render(&a), "no changes (5 units unchanged)\n");
        let a = Applied {
            unchanged: 1,
            ..Applied::default()
        };
        assert_eq!(render(&a), "no changes (1 unit unchanged)\n");
    }

    #[test]
    fn every_kind_of_change() {
        let a = Applied {
            added: vec!["a".into(), "b".into()],
            changed: vec!["c".into()],
            removed: vec!["d".into()],
            unchanged: 3,
            warnings: vec!["w".into()],
        };
        assert_eq!(
            render(&a),
            "added:     a, b\nchanged:   c (restarted if running)\nremoved:   d (stopped)\nunchanged: 3\n"
        );
        let a = Applied {
            removed: vec!["d".into()],
            ..Applied::default()
        };
        assert_eq!(render(&a), "removed:   d (stopped)\nunchanged: 0\n");
    }

    #[test]
    fn refusal_line() {
        assert_eq!(refused(""), "initctl: reload refused; nothing changed");
        assert_eq!(
            refused("2 errors; nothing changed"),
            "initctl: reload refused: 2 errors; nothing changed"
        );
    }
}
