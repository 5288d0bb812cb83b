//! [`translate_at`]: one unit file's options, in file order, read into a
//! [`UnitSpec`] key by key (the name and type first, then every key by its
//! rule or its YAML twin, then the rules across keys).

use super::mount::{self, MountKeys};
use super::*;
use crate::spec::{Arm, Privileges, Ready};

/// Translates the options of one unit file, with the position of each, into
/// the unit `unit_name`; `facts` are what specifiers resolve to.
pub(crate) fn translate_at(
    facts: &SpecifierContext,
    file: &str,
    unit_name: &str,
    options: &[UnitOption],
    positions: &[Pos],
    origin_pos: Pos,
) -> ParsedUnit {
    let mut specifiers = facts.for_unit(unit_name);
    if positions.is_empty() {
        specifiers.fragment_path = None;
    } else {
        specifiers.fragment_path = Some(file.to_string());
    }
    let mut t = Tr {
        file,
        unit: unit_name,
        kind: UnitType::ForegroundSupervised,
        specifiers,
        diags: Vec::new(),
        origin: Origin::at(file, origin_pos),
    };
    let pos = |i: usize| positions.get(i).copied().unwrap_or_default();
    let nowhere = Pos::default();

    // The name: a valid fleet name of a kind flotilla reads, not a template.
    let n = UnitName::split(unit_name);
    let mut suffix_type = suffix_kind(&n.suffix);
    match validate_unit_name(unit_name) {
        Err(e) => t.error(nowhere, format!("invalid unit name: {e}")),
        Ok(()) if suffix_type.is_none() => {
            t.error(
                nowhere,
                format!(
                    "only .{} units can be translated, not {unit_name}",
                    TRANSLATED_SUFFIXES.join(", .")
                ),
            );
            suffix_type = Some(UnitType::Virtual);
        }
        Ok(()) if n.is_template() => t.error(
            nowhere,
            format!(
                "{unit_name} is a template: run an instance such as {}@NAME.{}",
                n.prefix, n.suffix
            ),
        ),
        Ok(()) => {}
    }

    // The type first: other keys depend on it. The last Type= wins.
    let type_index = options
        .iter()
        .rposition(|o| o.section == "Service" && o.name == "Type");
    let type_value = type_index
        .map(|i| options[i].value.trim().to_string())
        .unwrap_or_default();
    // A service with nothing to run but an action (systemd-poweroff.service:
    // `SuccessAction=poweroff-force`, no `[Service]` at all) is a unit with
    // no process: up as soon as it starts, its action then taken.
    let given = |section: &str, name: &str| {
        options
            .iter()
            .any(|o| o.section == section && o.name == name && !o.value.trim().is_empty())
    };
    let only_an_action =
        type_value.is_empty() && !given("Service", "ExecStart") && given("Unit", "SuccessAction");
    let kind = match (suffix_type, type_value.as_str()) {
        (Some(UnitType::ForegroundSupervised), _) if only_an_action => UnitType::Virtual,
        // A service's type is its `Type=`'s (an invalid one is an error
        // below, and the default meanwhile).
        (Some(UnitType::ForegroundSupervised), v) => {
            UnitType::of_systemd_type(v).unwrap_or(UnitType::ForegroundSupervised)
        }
        (Some(k), _) => k,
        (None, _) => UnitType::ForegroundSupervised,
    };
    t.kind = kind;
    let mut spec = UnitSpec::new(unit_name, kind);
    spec.restart = RestartPolicy::No;
    // A trigger has no process to remain after (the key does not apply).
    spec.remain_after_exit = (!kind.is_trigger()).then_some(false);
    spec.stop_timeout = SYSTEMD_DEFAULT_TIMEOUT;
    // systemd: a oneshot has no start timeout unless it sets one.
    let start_default = if kind.row().ready == Ready::Exited {
        TIMESPAN_INFINITY
    } else {
        SYSTEMD_DEFAULT_TIMEOUT
    };
    spec.start_timeout = start_default;
    spec.activation = crate::trigger::Activation::of_type(kind).map(Box::new);

    let mut exec_start: Vec<(Command, Pos)> = Vec::new();
    let mut singles: Singles = Vec::new();
    let mut requires: Vec<Dep> = Vec::new();
    let mut wants: Vec<Dep> = Vec::new();
    // `RequiresMountsFor=`: `Requires=` and `After=` of each mount.
    let mut mounts_for: Vec<Dep> = Vec::new();
    let mut pidfile: Option<PathBuf> = None;
    let mut restart_sec: Option<Duration> = None;
    let mut restart_at: Option<(String, Pos)> = None;
    let mut permissions_start_only = false;
    let is_mount = n.suffix == "mount";
    let mut mount_keys = is_mount.then(MountKeys::default);
    let mut default_deps = true;

    for (i, o) in options.iter().enumerate() {
        let p = pos(i);
        let (sec, key) = (o.section.as_str(), o.name.as_str());
        let context_key = keys::systemd_context_key(sec, key);
        // systemd ignores X- sections and keys by design; [X-Fleet] is the
        // cluster's. flotilla's own X-SkipUnsupported= is a context key.
        if (sec.starts_with("X-") || key.starts_with("X-")) && context_key.is_none() {
            continue;
        }
        // What enabling links the unit into: `initctl enable` reads it.
        if sec == "Install" {
            continue;
        }
        // A mount's own section, and a service's, which a mount has not.
        if sec == "Mount" || (is_mount && sec == "Service") {
            let v = t.value(p, key, &o.value);
            match mount_keys.as_mut() {
                Some(m) if sec == "Mount" && mount::KEYS.contains(&key) => {
                    m.read(&mut t, p, key, &v)
                }
                Some(_) if sec == "Mount" => {
                    t.warn(p, format!("[{sec}] {key}= is not supported, ignored"))
                }
                _ => t.warn(
                    p,
                    format!(
                        "[{sec}] {key}= does not apply to a .{} unit, ignored",
                        n.suffix
                    ),
                ),
            }
            continue;
        }
        let special = SPECIAL.contains(&(sec, key));
        let twin = keys::systemd_twin(sec, key).filter(|_| !special);
        if !special && twin.is_none() && context_key.is_none() {
            t.warn(p, format!("[{sec}] {key}= is not supported, ignored"));
            continue;
        }
        if twin.is_some_and(|k| !k.applies(kind))
            || (special && sec == "Service" && !kind.runs_processes())
        {
            t.warn(
                p,
                format!(
                    "[{sec}] {key}= does not apply to a .{} unit, ignored",
                    n.suffix
                ),
            );
            continue;
        }
        let v = t.value(p, key, &o.value);
        let v = v.as_str();
        if let Some(twin) = twin {
            t.twin(&mut spec, &mut singles, twin, p, key, v);
            continue;
        }
        if let Some(k) = context_key {
            if let Err(e) = spec.extras.context.set(k, v) {
                t.error(p, format!("invalid {key}={v}: {e}"));
            }
            continue;
        }
        match (sec, key) {
            ("Unit", "Documentation") => {}
            // What flotilla does with every unit: one no target needs
            // (any more) is stopped.
            ("Unit", "StopWhenUnneeded") if sd_bool(v).is_none() => {
                t.error(p, format!("invalid StopWhenUnneeded={v}: not a boolean"));
            }
            // flotilla has no job queue: an `OnFailure=` unit is started
            // and no later request cancels that, as `replace-irreversibly`
            // asks. Isolating (switching the target) on a failure is not
            // done.
            ("Unit", "OnFailureJobMode") => match v {
                "" | "replace" | "replace-irreversibly" => {}
                "fail" | "flush" | "isolate" | "ignore-dependencies" | "ignore-requirements" => {
                    t.warn(
                        p,
                        format!("OnFailureJobMode={v} is run as replace: the OnFailure= units are started"),
                    )
                }
                _ => t.error(
                    p,
                    format!(
                        "invalid OnFailureJobMode={v} (replace, replace-irreversibly, fail, flush, isolate, ignore-dependencies, ignore-requirements)"
                    ),
                ),
            },
            // The name the service takes on D-Bus: for `Type=dbus`, its
            // readiness (warned about with the type); for any other type
            // only a label (systemd uses it to map a bus name to the unit).
            ("Service", "BusName") if !v.is_empty() && !valid_bus_name(v) => {
                t.error(p, format!("invalid BusName={v}: not a D-Bus well-known name"));
            }
            ("Unit", "Requires") => t.deps(&mut requires, p, "Requires", v),
            ("Unit", "BindsTo") => t.deps(&mut requires, p, "BindsTo", v),
            ("Unit", "Wants") => t.deps(&mut wants, p, "Wants", v),
            ("Unit", "RequiresMountsFor") => {
                for path in v.split_whitespace() {
                    if t.absolute(p, key, path).is_none() {
                        continue;
                    }
                    for name in mount::mounts_for(path).into_iter().filter(|m| m != unit_name) {
                        mounts_for.push(Dep { name, pos: p });
                    }
                }
            }
            ("Unit", "DefaultDependencies") => match sd_bool(v) {
                Some(b) => default_deps = b,
                None => t.error(p, format!("invalid DefaultDependencies={v}: not a boolean")),
            },
            ("Service", "Type") => match v {
                "" | "simple" | "exec" | "idle" | "notify" | "forking" | "oneshot" => {}
                "dbus" => t.warn(
                    p,
                    "Type=dbus is run as foreground-supervised: readiness on BusName= is not supported",
                ),
                "notify-reload" => t.warn(
                    p,
                    "Type=notify-reload is run as foreground-notified: reloading by signal is not supported",
                ),
                _ => t.error(p, format!("invalid Type={v} (simple, exec, notify, forking, oneshot, idle)")),
            },
            ("Service", "ExecStart") => {
                if v.is_empty() {
                    exec_start.clear();
                }
                for c in t.commands(p, key, v) {
                    exec_start.push((c, p));
                }
            }
            ("Service", "Restart") => {
                let policy = match v {
                    "" | "no" => Some(RestartPolicy::No),
                    "on-failure" => Some(RestartPolicy::OnFailure),
                    "on-abnormal" | "on-abort" | "on-watchdog" => {
                        t.warn(p, format!("Restart={v} is run as on-failure (restart after any failure)"));
                        Some(RestartPolicy::OnFailure)
                    }
                    "always" => Some(RestartPolicy::Always),
                    "on-success" => {
                        t.warn(p, "Restart=on-success is run as always (restart after any exit)");
                        Some(RestartPolicy::Always)
                    }
                    _ => {
                        t.error(
                            p,
                            format!(
                                "invalid Restart={v} (no, on-success, on-failure, on-abnormal, on-watchdog, on-abort, always)"
                            ),
                        );
                        None
                    }
                };
                if let Some(policy) = policy {
                    spec.restart = policy;
                    restart_at = Some((v.to_string(), p));
                }
            }
            ("Service", "RestartSec") => {
                if v.is_empty() {
                    restart_sec = None;
                } else {
                    match parse_timespan(v) {
                        Ok(d) => restart_sec = Some(d),
                        Err(e) => t.error(p, format!("invalid RestartSec={v}: {e}")),
                    }
                }
            }
            ("Service", "TimeoutStartSec" | "TimeoutStopSec" | "TimeoutSec") => {
                // Empty: back to the defaults; 0 or infinity: no timeout.
                let (start, stop) = if v.is_empty() {
                    (start_default, SYSTEMD_DEFAULT_TIMEOUT)
                } else {
                    match timeout(v) {
                        Ok(d) => (d, d),
                        Err(e) => {
                            t.error(p, format!("invalid {key}={v}: {e}"));
                            continue;
                        }
                    }
                };
                if key != "TimeoutStopSec" {
                    spec.start_timeout = start;
                }
                if key != "TimeoutStartSec" {
                    spec.stop_timeout = stop;
                }
            }
            ("Service", "WorkingDirectory") => {
                spec.extras.working_directory = None;
                let optional = v.starts_with('-');
                spec.extras.working_directory_optional = optional.then_some(true);
                let path = v.strip_prefix('-').unwrap_or(v);
                if path == "~" {
                    t.warn(p, "WorkingDirectory=~ (the user's home directory) is not supported, ignored");
                } else if !path.is_empty() {
                    spec.extras.working_directory = t.absolute(p, key, path);
                }
            }
            // flotilla takes a notify message from the main process and
            // the processes of the session it leads (`docs/units.md`).
            ("Service", "NotifyAccess") => match v {
                "" | "main" | "exec" | "all" => {}
                "none" => t.warn(
                    p,
                    "NotifyAccess=none is not supported: messages from the main process and its session are taken",
                ),
                _ => t.error(p, format!("invalid NotifyAccess={v} (none, main, exec, all)")),
            },
            ("Service", "PIDFile") => {
                if kind.row().ready != Ready::Pidfile {
                    t.warn(p, "PIDFile= is used only with Type=forking, ignored");
                } else if v.is_empty() {
                    pidfile = None;
                } else if Path::new(v).is_absolute() {
                    pidfile = Some(PathBuf::from(v));
                } else {
                    // systemd: a relative PIDFile= is under /run.
                    pidfile = Some(Path::new("/run").join(v));
                }
            }
            ("Service", "PermissionsStartOnly") => match sd_bool(v) {
                Some(b) => permissions_start_only = b,
                None => t.error(p, format!("invalid PermissionsStartOnly={v}: not a boolean")),
            },
            // Not in SPECIAL: read above.
            _ => {}
        }
    }

    // The main command (none: [`Tr::rules`]); a oneshot's others run
    // after it, in order.
    if exec_start.len() > 1 && kind.row().ready != Ready::Exited {
        t.error(
            exec_start[1].1,
            "more than one ExecStart= command: only Type=oneshot may have several",
        );
    }
    let mut commands = exec_start.into_iter().map(|(c, _)| c);
    spec.exec_start = commands.next();
    spec.extras.exec_start_then = commands.collect();
    if let Some(m) = mount_keys {
        m.finish(&mut t, &mut spec, default_deps);
    }
    spec.extras.context.normalize();
    // A key of one command: the first one, the others warned about.
    for (key, name, list) in singles {
        for (_, p) in list.iter().skip(1) {
            t.warn(
                *p,
                format!("{name}= ignored: only the first {name}= command is used"),
            );
        }
        if let Slot::Command(f) = (key.slot)(&mut spec) {
            *f = list.into_iter().next().map(|(c, _)| c);
        }
    }
    // systemd's old spelling of `+` on every command but ExecStart=: they
    // run as root, outside the sandbox.
    if permissions_start_only {
        let others = spec
            .exec_start_pre
            .iter_mut()
            .chain(&mut spec.extras.exec_start_post)
            .chain(&mut spec.exec_stop_post)
            .chain(&mut spec.exec_stop)
            .chain(&mut spec.exec_reload);
        for c in others {
            if c.privileges == Privileges::Unit {
                c.privileges = Privileges::Full;
            }
        }
    }
    if kind.row().ready == Ready::Pidfile {
        spec.pidfile = pidfile;
    }
    // A mount's commands are its own (`mount.rs` said what is missing).
    if !is_mount {
        t.rules(&spec, type_index.map(pos), &type_value, &restart_at);
    }
    if let Some(d) = restart_sec {
        spec.restart_delay = d;
        spec.restart_max_delay = d.max(defaults::RESTART_MAX_DELAY);
    }

    // A trigger's unit, when it names none: the unit of its own name
    // (`backup.timer` starts `backup.service`), a template with Accept=yes.
    if kind.is_trigger() && spec.triggers.is_empty() {
        let accept = spec
            .activation
            .as_deref()
            .and_then(crate::trigger::Activation::socket)
            .is_some_and(|s| s.accept);
        let at = if accept { "@" } else { "" };
        spec.triggers = vec![format!("{}{at}.service", n.name)];
    }
    // systemd orders a socket's service after the socket (an implicit
    // `Before=`), so that a service the target requires anyway is handed
    // its sockets.
    if kind.row().ready == Ready::Armed(Arm::Sockets) {
        if let Some(s) = spec
            .triggers
            .first()
            .filter(|s| !crate::systemd::is_template(s))
        {
            if !spec.before.contains(s) {
                spec.before.push(s.clone());
            }
        }
    }
    // A socket whose every `Listen…=` is of a kind the init cannot make
    // (`ListenMessageQueue=`, `ListenUSBFunction=`: each already a warning)
    // loads, and fails at its start saying so, rather than being refused.
    let other_listen = spec
        .activation
        .as_deref()
        .and_then(crate::trigger::Activation::socket)
        .is_some_and(|s| s.listen.is_empty())
        && options
            .iter()
            .any(|o| o.section == "Socket" && o.name.starts_with("Listen"));
    for (key, why) in crate::trigger::problems(&spec) {
        if key == "listen-stream" && other_listen {
            continue;
        }
        t.error(nowhere, format!("{unit_name}: {why}"));
    }

    // Dependencies as systemd's: Requires=/BindsTo= pull in and fail
    // with, Wants= pulls in, and none of them orders anything; only
    // After= does (`UnitSpec::pull`: `depends-on`/`waits-for` where After=
    // names the unit, else `requires`/`wants`). The default dependencies
    // (DefaultDependencies=, a target's ordering after what it pulls in)
    // are added over the whole unit set (`load/default_deps.rs`).
    let mut origin = std::mem::take(&mut t.origin);
    origin.default_dependencies = default_deps;
    // systemd: `Sockets=` also wants each socket and orders the service
    // after it (`Wants=` + `After=`).
    let socket_pos = origin.positions(TargetList::Sockets).to_vec();
    for (i, name) in spec.extras.sockets.iter().enumerate() {
        let pos = socket_pos.get(i).copied().unwrap_or(origin_pos);
        wants.push(Dep {
            name: name.clone(),
            pos,
        });
    }
    let sockets = wants.len().saturating_sub(spec.extras.sockets.len());
    let pulled = (requires.iter().map(|d| (d, true, false)))
        .chain(mounts_for.iter().map(|d| (d, true, true)))
        .chain(
            wants
                .iter()
                .enumerate()
                .map(|(i, d)| (d, false, i >= sockets)),
        );
    for (d, hard, ordered) in pulled {
        if let Some(list) = spec.pull(&d.name, hard, ordered) {
            origin.positions_mut(list).push(d.pos);
        }
    }

    // Every value also passes the table's own checks, the ones a transient
    // unit gets, so that no reader lets through what another refuses (a NUL
    // in a Description= would otherwise reach `status`). Which keys a type
    // takes is the translator's own mapping (`Type=forking` without
    // `PIDFile=` is fine here), so only the values are checked.
    let checked = !t.diags.iter().any(Diagnostic::is_error);
    let invalid = match checked.then(|| keys::validate(spec.clone())) {
        Some(Err(problems)) => problems
            .into_iter()
            .filter(|p| matches!(p.what, keys::What::Invalid(..)))
            .collect(),
        _ => Vec::new(),
    };
    for problem in invalid {
        let twins = keys::key(problem.key).map_or(&[][..], |k| k.systemd);
        let at = options
            .iter()
            .rposition(|o| twins.contains(&(o.section.as_str(), o.name.as_str())))
            .map_or(origin_pos, pos);
        t.error(at, problem.to_string());
    }
    let spec = (!t.diags.iter().any(Diagnostic::is_error)).then_some(spec);

    let mut diags = t.diags;
    diags.sort_by_key(|d| d.pos);
    ParsedUnit {
        spec,
        origin,
        diagnostics: diags,
    }
}
