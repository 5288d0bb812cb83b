//! `PAMName=` on the runtime's side: the command a process of a unit with
//! a PAM service runs instead of its own (`sys/procs/pam.rs` says why), and the
//! combinations the helper cannot honour, refused by name.

use super::Runtime;
use crate::sys::{self, pam, Credentials, Sys};
use flotilla_units::context::caps::CapSet;
use flotilla_units::context::ServiceContext;

impl<S: Sys> Runtime<S> {
    /// The helper's command for a process of a unit with `PAMName=`
    /// (`service`) running as `creds`; `None` without a user (systemd
    /// ignores `PAMName=` then), and the spawn goes on as without it.
    pub(super) fn pam_command(
        &self,
        service: &str,
        creds: &Credentials,
        ctx: &ServiceContext,
        words: pam::Words<'_>,
        path_var: Option<&[u8]>,
    ) -> Result<Option<Vec<String>>, String> {
        let Some(uid) = creds.uid else {
            return Ok(None);
        };
        // The helper changes the identity after every step of the child,
        // the raising of ambient capabilities included, and a user change
        // away from root empties the ambient set.
        if uid != 0
            && ctx
                .sandbox
                .ambient_capabilities
                .is_some_and(|c| c != CapSet::EMPTY)
        {
            return Err(format!(
                "PAMName={service} with AmbientCapabilities= for a user other than root is not \
                 supported: the PAM helper changes the identity after the capabilities are raised"
            ));
        }
        let helper = crate::logwriter::beside_init(&self.sys, pam::HELPER)
            .or_else(|| sys::program_on_path(pam::HELPER))
            .ok_or_else(|| {
                format!(
                    "PAMName={service}: {} is neither beside the init nor on PATH",
                    pam::HELPER
                )
            })?;
        let tty = ctx.uses_tty().then_some(ctx.tty.path.as_deref()).flatten();
        pam::session_argv(&helper, service, creds, tty, words, path_var).map_err(|e| e.to_string())
    }
}
