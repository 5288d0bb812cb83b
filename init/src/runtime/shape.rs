//! The requests that change the graph's shape (docs/contract.md §3b): `mask`,
//! `unmask` and `set-alternative`. Each writes its file under the state
//! directory first ([`crate::shape`]), then changes the planner; a write
//! that fails changes nothing. A mask or unmask rebuilds the graph with the
//! same units (unchanged units keep running; a masked one stops);
//! `set-alternative` moves the choice in place, as a target switch.

use super::Runtime;
use crate::shape::{alternatives_dir, masks_dir};
use crate::sys::Sys;
use flotilla_units::graph::Shape;
use flotilla_units::mask::MaskSource;
use flotilla_units::planner::{AlternativeError, OnChange};
use flotilla_units::protocol::{ErrorCode, Reply};
use std::path::PathBuf;

impl<S: Sys> Runtime<S> {
    /// The state directory, or the reply saying there is none.
    fn state_dir(&self, what: &str) -> Result<PathBuf, Box<Reply>> {
        self.settings.state_dir.clone().ok_or_else(|| {
            Box::new(Reply::error(
                ErrorCode::NotPossible,
                format!(
                    "the init was started without a config file (`--config FILE`): there is \
                     no directory to keep {what} in"
                ),
            ))
        })
    }

    /// `initctl mask UNIT`.
    pub(super) fn mask(&mut self, unit: &str) -> Reply {
        let g = self.planner.graph();
        let known = g
            .unit(unit)
            .is_some_and(|i| !g.node(i).ghost && !g.node(i).synthetic);
        let mut shape = (**g.shape()).clone();
        if shape.masks.contains(unit) {
            return Reply::error(
                ErrorCode::NotPossible,
                format!("`{unit}` is masked already"),
            );
        }
        if !known {
            return Reply::error(ErrorCode::UnknownUnit, format!("no unit named `{unit}`"));
        }
        let dir = match self.state_dir("masks") {
            Ok(d) => masks_dir(&d),
            Err(r) => return *r,
        };
        let path = dir.join(unit);
        let written = self
            .sys
            .create_dir_all(&dir)
            .and_then(|()| self.sys.write_file(&path, b"masked by initctl mask\n"));
        if let Err(e) = written {
            return Reply::error(ErrorCode::Failed, format!("{e}; nothing changed"));
        }
        shape.masks.insert(unit, MaskSource::State(path.clone()));
        let r = self.reshape(shape);
        if matches!(r, Reply::Error { .. }) {
            let _ = self.sys.remove_file(&path);
        } else {
            self.sys.console(&format!("init: masked {unit}"));
        }
        r
    }

    /// `initctl unmask UNIT`.
    pub(super) fn unmask(&mut self, unit: &str) -> Reply {
        let mut shape = (**self.planner.graph().shape()).clone();
        let Some(source) = shape.masks.remove(unit) else {
            return Reply::error(ErrorCode::NotPossible, format!("`{unit}` is not masked"));
        };
        if let MaskSource::DevNull(p) = &source {
            return Reply::error(
                ErrorCode::NotPossible,
                format!(
                    "`{unit}` is masked by its unit file {} -> /dev/null: remove that link",
                    p.display()
                ),
            );
        }
        if let Err(e) = self.sys.remove_file(source.path()) {
            return Reply::error(ErrorCode::Failed, format!("{e}; nothing changed"));
        }
        let r = self.reshape(shape);
        if matches!(r, Reply::Error { .. }) {
            let _ = self
                .sys
                .write_file(source.path(), b"masked by initctl mask\n");
        } else {
            self.sys.console(&format!("init: unmasked {unit}"));
        }
        r
    }

    /// Rebuilds the graph with the same units and `shape`.
    fn reshape(&mut self, shape: Shape) -> Reply {
        let mut all = self.units.dir_shared(self.planner.graph());
        all.extend(self.units.transient_specs());
        match self.replace_with(all, Some(shape), OnChange::Restart) {
            Ok(applied) => Reply::Applied(applied),
            Err(details) => Reply::Error {
                code: ErrorCode::Invalid,
                message: "the unit set has errors; nothing changed".to_string(),
                details,
            },
        }
    }

    /// `initctl set-alternative TARGET UNIT`.
    pub(super) fn set_alternative(&mut self, target: &str, unit: &str) -> Reply {
        if let Err(e) = self.planner.check_alternative(target, unit) {
            let code = match e {
                AlternativeError::UnknownTarget(_) => ErrorCode::UnknownTarget,
                AlternativeError::UnknownUnit(_) => ErrorCode::UnknownUnit,
                _ => ErrorCode::Invalid,
            };
            return Reply::error(code, format!("{e}; nothing changed"));
        }
        let dir = match self.state_dir("the alternative's choice") {
            Ok(d) => alternatives_dir(&d),
            Err(r) => return *r,
        };
        let written = self.sys.create_dir_all(&dir).and_then(|()| {
            self.sys
                .write_file(&dir.join(target), format!("{unit}\n").as_bytes())
        });
        if let Err(e) = written {
            return Reply::error(ErrorCode::Failed, format!("{e}; nothing changed"));
        }
        let now = self.now();
        match self.planner.set_alternative(target, unit, now) {
            Ok(()) => {
                self.sys
                    .console(&format!("init: the alternative {target} runs {unit}"));
                Reply::Accepted {
                    message: format!("the alternative `{target}` runs `{unit}`"),
                }
            }
            Err(e) => Reply::error(ErrorCode::NotPossible, e.to_string()),
        }
    }
}
