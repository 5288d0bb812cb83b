//! The boxes that keep a [`UnitSpec`](super::UnitSpec) small when a unit
//! sets none of the rarer keys: [`Context`] (the service context) and
//! [`Extras`] (the other systemd-only fields). Each dereferences to an
//! empty value when unset and allocates on its first write.

use super::*;

/// Every extra field unset.
static NO_EXTRAS: ExtraFields = ExtraFields {
    user: None,
    group: None,
    working_directory: None,
    working_directory_optional: None,
    non_blocking: None,
    started_at_fork: None,
    daemon_clean_signals: None,
    dynamic_user: None,
    collect_mode: None,
    notify_access: None,
    environment: BTreeMap::new(),
    environment_files: Vec::new(),
    log_rate_limit_interval: None,
    log_rate_limit_burst: None,
    file_descriptor_store_max: None,
    context: Context(None),
    exec_start_then: Commands::new(),
    exit_type: ExitType::Main,
    exec_condition: Commands::new(),
    exec_start_post: Commands::new(),
    activation: None,
    success_exit_status: ExitSet {
        codes: Vec::new(),
        signals: Vec::new(),
    },
    restart_prevent_exit_status: ExitSet {
        codes: Vec::new(),
        signals: Vec::new(),
    },
    restart_force_exit_status: ExitSet {
        codes: Vec::new(),
        signals: Vec::new(),
    },
    watchdog: None,
    runtime_max: None,
    runtime_randomized_extra: None,
    on_failure: Names::new(),
    on_success: Names::new(),
    ready_bus_name: None,
    sockets: Names::new(),
    requisite: Names::new(),
    part_of: Names::new(),
    upholds: Names::new(),
    reload_propagated_from: Names::new(),
    propagates_reload_to: Names::new(),
    stop_propagated_from: Names::new(),
    propagates_stop_to: Names::new(),
    success_action: None,
    failure_action: None,
    refuse_manual_start: None,
    refuse_manual_stop: None,
    ignore_on_isolate: None,
    guess_main_pid: None,
    allow_isolate: None,
    documentation: Names::new(),
    restart_kill_signal: None,
    start_limit_interval: None,
    start_limit_burst: None,
    exec_stop_post: Commands::new(),
    exec_reload: None,
    exec_reload_then: Commands::new(),
    ready_wait: None,
    ready_grep: None,
    pidfile: None,
    triggers: Names::new(),
    wanted_by: Names::new(),
    conditions: Vec::new(),
    mount: None,
};
/// A unit's [`ServiceContext`], boxed only when a key of it is set.
///
/// It dereferences to the context (the empty one when there is no box);
/// a write through it allocates the box. Two compare by their contexts,
/// so a reload restarts a unit exactly when its context changed.
#[derive(Clone, Default)]
pub struct Context(Option<Box<ServiceContext>>);

/// The context of a unit that sets no key of it.
static EMPTY_CONTEXT: std::sync::LazyLock<ServiceContext> =
    std::sync::LazyLock::new(ServiceContext::default);

impl Context {
    /// Whether no key is set.
    pub fn is_empty(&self) -> bool {
        self.0.as_deref().is_none_or(ServiceContext::is_empty)
    }

    /// Drops the box when no key is set (after a loader set keys and
    /// reset them again).
    pub fn normalize(&mut self) {
        if self.is_empty() {
            self.0 = None;
        }
    }
}

impl std::ops::Deref for Context {
    type Target = ServiceContext;
    fn deref(&self) -> &ServiceContext {
        self.0.as_deref().unwrap_or(&EMPTY_CONTEXT)
    }
}

impl std::ops::DerefMut for Context {
    fn deref_mut(&mut self) -> &mut ServiceContext {
        self.0.get_or_insert_with(Box::default)
    }
}

impl PartialEq for Context {
    fn eq(&self, other: &Context) -> bool {
        **self == **other
    }
}

impl Eq for Context {}

impl std::fmt::Debug for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        (**self).fmt(f)
    }
}

impl Serialize for Context {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        (**self).serialize(s)
    }
}

impl<'de> Deserialize<'de> for Context {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Context, D::Error> {
        let mut c = Context(Some(Box::new(ServiceContext::deserialize(d)?)));
        c.normalize();
        Ok(c)
    }
}

/// The [`ExtraFields`] of a spec, boxed only when one of them is set.
///
/// It dereferences to the fields (all unset when there is no box), so
/// `spec.extras.user` reads and `spec.extras.user = …` writes (a write
/// allocates the box). Two of them compare by their fields: no box equals a
/// box of unset fields.
#[derive(Clone, Default)]
pub struct Extras(pub(super) Option<Box<ExtraFields>>);

impl Extras {
    /// The fields, boxed unless all are unset.
    pub fn new(fields: ExtraFields) -> Extras {
        if fields == NO_EXTRAS {
            Extras(None)
        } else {
            Extras(Some(Box::new(fields)))
        }
    }

    /// Drops the boxes a loader allocated but left unset: the context's,
    /// then this one when nothing is set. Never allocates (a loader calls
    /// it for every unit, most of which set nothing here).
    pub fn normalize(&mut self) {
        if let Some(fields) = self.0.as_deref_mut() {
            fields.context.normalize();
            if *fields == NO_EXTRAS {
                self.0 = None;
            }
        }
    }
}

impl std::ops::Deref for Extras {
    type Target = ExtraFields;
    fn deref(&self) -> &ExtraFields {
        self.0.as_deref().unwrap_or(&NO_EXTRAS)
    }
}

impl std::ops::DerefMut for Extras {
    fn deref_mut(&mut self) -> &mut ExtraFields {
        self.0.get_or_insert_with(Box::default)
    }
}

impl PartialEq for Extras {
    fn eq(&self, other: &Extras) -> bool {
        **self == **other
    }
}

impl Eq for Extras {}

impl std::fmt::Debug for Extras {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        (**self).fmt(f)
    }
}

impl Serialize for Extras {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        (**self).serialize(s)
    }
}

impl<'de> Deserialize<'de> for Extras {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Extras, D::Error> {
        ExtraFields::deserialize(d).map(Extras::new)
    }
}
