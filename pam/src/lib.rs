//! `flotilla-pam`: a unit's process run inside a PAM session, what
//! systemd's `PAMName=` asks for (docs/service-context.md, "PAM").
//!
//! The init is a static program, and PAM's modules are shared objects of
//! the system's C library: PID 1 cannot load them. So for a unit with
//! `PAMName=` and `User=`, the init's child runs its context's steps as
//! root and then executes this helper (the unit's main PID from then on),
//! which opens the session, takes on the unit's identity and executes the
//! unit's program in the same process, with the environment PAM's modules
//! set. As under systemd, a child of it holds the session: it waits for
//! `SIGTERM`, which the kernel sends it when the unit's process ends
//! (`PR_SET_PDEATHSIG`), and closes the session then.
//!
//! | module | what |
//! | --- | --- |
//! | [`args`] | the flags the init passes |
//! | [`libpam`] | Linux-PAM, loaded at run time |
//! | [`session`] | the session: open, hand over, hold, close |

pub mod args;
pub mod libpam;
pub mod session;
