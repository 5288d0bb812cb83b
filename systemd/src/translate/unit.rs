//! [`translate_at`]: one unit file's options, in file order, read into a
//! [`UnitSpec`] key by key (the name and type first, then every key by its
//! rule or its YAML twin, then the rules across keys).

use super::mount::MountKeys;
use super::rules::{self, Reading, Rule};
use super::*;
use flotilla_units::spec::{Arm, Privileges, Ready, Runs};

/// The keys `DynamicUser=yes` implies, as systemd.exec(5) lists them.
const DYNAMIC_USER_SANDBOX: [(&str, &str); 6] = [
    ("ProtectSystem", "strict"),
    ("ProtectHome", "read-only"),
    ("PrivateTmp", "yes"),
    ("RemoveIPC", "yes"),
    ("NoNewPrivileges", "yes"),
    ("RestrictSUIDSGID", "yes"),
];

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

    // The name: a valid systemd name of a kind flotilla reads, not a template.
    let n = UnitName::split(unit_name);
    let mut suffix_type = suffix_kind(&n.suffix);
    match validate_systemd_unit_name(unit_name) {
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
    // No `Type=` and a `BusName=`: systemd's default is `dbus`, not
    // `simple` (Debian's logind, hostnamed, timedated and localed rely on
    // it: ready once their name is owned, stopped once it is lost).
    // An invalid one is an error below, and ignored as systemd ignores it.
    let bus_name_given = options
        .iter()
        .rev()
        .filter(|o| o.section == "Service" && o.name == "BusName")
        .map(|o| o.value.trim())
        .find(|v| v.is_empty() || flotilla_units::keys::check::bus_name(v).is_ok())
        .is_some_and(|v| !v.is_empty());
    let type_value = match type_index.map(|i| options[i].value.trim()) {
        Some(v) if !v.is_empty() => v.to_string(),
        _ if bus_name_given => "dbus".to_string(),
        _ => String::new(),
    };
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
    // A trigger or a slice has no process to remain after, nor a scope one
    // it started (the key does not apply).
    let adopts = kind.row().adopts();
    spec.remain_after_exit =
        (!kind.is_trigger() && !kind.row().holds_units && !adopts).then_some(false);
    // As systemd's scopes: `systemctl isolate` leaves them (a login's
    // session survives a switch of the target).
    if adopts {
        spec.extras.ignore_on_isolate = Some(true);
    }
    spec.stop_timeout = t.default_stop();
    // systemd: a oneshot has no start timeout unless it sets one.
    let start_default = if kind.row().ready == Ready::Exited {
        TIMESPAN_INFINITY
    } else {
        t.default_start()
    };
    spec.start_timeout = start_default;
    spec.extras.activation = flotilla_units::trigger::Activation::of_type(kind).map(Box::new);
    // systemd's `Type=simple` (its default) and `idle` are started once
    // forked; `Type=exec` once its program runs, as flotilla's own type
    // (`dbus` once its name is taken).
    let at_fork = matches!(type_value.as_str(), "" | "simple" | "idle");
    if kind.row().ready == Ready::Spawned && !only_an_action && at_fork {
        spec.extras.started_at_fork = Some(true);
    }
    // systemd judges a daemon's main process by `EXIT_CLEAN_DAEMON`, a
    // oneshot's by `EXIT_CLEAN_COMMAND` (no signal is clean).
    if kind.row().runs == Runs::Process
        && kind.row().ready != Ready::Exited
        && !only_an_action
        && !adopts
    {
        spec.extras.daemon_clean_signals = Some(true);
    }
    // `DynamicUser=yes` implies a sandbox (systemd.exec(5)), set before the
    // unit's own keys so that those override it.
    let dynamic = options
        .iter()
        .rev()
        .find(|o| o.section == "Service" && o.name == "DynamicUser")
        .and_then(|o| super::sd_bool(o.value.trim()));
    if dynamic == Some(true) && kind.row().runs == Runs::Process {
        for (k, v) in DYNAMIC_USER_SANDBOX {
            if let Some(key) = flotilla_units::context::Key::from_name(k) {
                let _ = spec.extras.context.set(key, v);
            }
        }
    }

    let is_mount = n.suffix == "mount";
    let mut r = Reading {
        t,
        spec,
        start_default,
        exec_start: Vec::new(),
        singles: Vec::new(),
        requires: Vec::new(),
        wants: Vec::new(),
        mounts_for: Vec::new(),
        pidfile: None,
        restart_sec: None,
        restart_at: None,
        permissions_start_only: false,
        default_deps: true,
        mount_keys: is_mount.then(MountKeys::default),
        bus_readiness: type_value == "dbus",
    };

    read_keys(&mut r, options, positions, &n.suffix);
    let Reading {
        mut t,
        mut spec,
        exec_start,
        singles,
        requires,
        mut wants,
        mounts_for,
        pidfile,
        restart_sec,
        restart_at,
        permissions_start_only,
        default_deps,
        mount_keys,
        ..
    } = r;

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
    if kind.row().holds_units {
        slice_defaults(&mut t, &mut spec);
    }
    if let Some(m) = mount_keys {
        m.finish(&mut t, &mut spec, default_deps);
    }
    // systemd's `DefaultStandardOutput=journal`: a service's output goes
    // to the journal unless it says otherwise or follows its input (a
    // terminal, a socket). `Output::Log` is the journal where the init runs
    // journald, the unit's log elsewhere (docs/service-context.md).
    if flotilla_units::keys::CONTEXT_APPLIES_TO.contains(&spec.kind)
        && !adopts
        && spec.extras.context.standard_output.is_none()
        && !spec.extras.context.output_follows_input()
    {
        spec.extras.context.standard_output = Some(flotilla_units::context::process::Output::Log);
    }
    spec.extras.normalize();
    // A key of one command: the first one, the others warned about; but
    // systemd runs every `ExecReload=` line, in order.
    for (key, name, list) in singles {
        let mut list = list.into_iter();
        let first = list.next().map(|(c, _)| c);
        if key.name == "exec-reload" {
            spec.extras.exec_reload_then = list.map(|(c, _)| c).collect();
        } else {
            for (_, p) in list {
                t.warn(
                    p,
                    format!("{name}= ignored: only the first {name}= command is used"),
                );
            }
        }
        if let Slot::Command(f) = (key.slot)(&mut spec) {
            *f = first;
        }
    }
    // systemd's old spelling of `+` on every command but ExecStart=: they
    // run as root, outside the sandbox.
    if permissions_start_only {
        let extras = &mut *spec.extras;
        let others = spec
            .exec_start_pre
            .iter_mut()
            .chain(&mut extras.exec_condition)
            .chain(&mut extras.exec_start_post)
            .chain(&mut extras.exec_stop_post)
            .chain(&mut spec.exec_stop)
            .chain(&mut extras.exec_reload)
            .chain(&mut extras.exec_reload_then);
        for c in others {
            if c.privileges == Privileges::Unit {
                c.privileges = Privileges::Full;
            }
        }
    }
    if kind.row().ready == Ready::Pidfile {
        spec.extras.pidfile = pidfile;
    }
    // A mount's commands are its own (`mount.rs` said what is missing).
    if !is_mount {
        t.rules(&spec, type_index.map(pos), &type_value, &restart_at);
    }
    // systemd refuses a D-Bus service it cannot tell ready.
    if type_value == "dbus" && spec.extras.ready_bus_name.is_none() {
        t.error(
            type_index.map(pos).unwrap_or_default(),
            "Type=dbus needs BusName= (the name whose taking makes it ready)",
        );
    }
    if let Some(d) = restart_sec {
        spec.restart_delay = d;
        spec.restart_max_delay = d.max(defaults::RESTART_MAX_DELAY);
    }

    // A trigger's unit, when it names none: the unit of its own name
    // (`backup.timer` starts `backup.service`), a template with Accept=yes.
    if kind.is_trigger() && spec.extras.triggers.is_empty() {
        let accept = spec.socket().is_some_and(|s| s.accept);
        let at = if accept { "@" } else { "" };
        spec.extras.triggers = thin_vec::thin_vec![format!("{}{at}.service", n.name)];
    }
    // systemd orders a socket's service after the socket (an implicit
    // `Before=`), so that a service the target requires anyway is handed
    // its sockets.
    if kind.row().ready == Ready::Armed(Arm::Sockets) {
        if let Some(s) = spec
            .extras
            .triggers
            .first()
            .filter(|s| !flotilla_units::unit_name::is_template(s))
        {
            if !spec.before.contains(s) {
                spec.before.push(s.clone());
            }
        }
    }
    // A socket whose every `Listen…=` is of a kind the init cannot make
    // (`ListenMessageQueue=`, `ListenUSBFunction=`: each already a warning)
    // loads, and fails at its start saying so, rather than being refused.
    let other_listen = spec.socket().is_some_and(|s| s.listen.is_empty())
        && options
            .iter()
            .any(|o| o.section == "Socket" && o.name.starts_with("Listen"));
    for (key, why) in flotilla_units::keys::trigger_problems(&spec) {
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
    let socket_pos = origin.positions(TargetList::Sockets);
    for (i, name) in spec.extras.sockets.iter().enumerate() {
        let pos = socket_pos.get(i).copied().unwrap_or(origin_pos);
        wants.push(Dep {
            name: name.clone(),
            pos,
        });
    }
    let sockets = wants.len().saturating_sub(spec.extras.sockets.len());
    // systemd: `LogNamespace=` requires the namespace's journald sockets
    // and orders the unit after them (`Requires=` + `After=`), so that
    // they listen before its output is connected.
    let log_pos = options
        .iter()
        .rposition(|o| o.name == "LogNamespace")
        .map_or(origin_pos, pos);
    let log_sockets: Vec<Dep> = (spec.extras.context.log_namespace.iter())
        .flat_map(|ns| ns.socket_units())
        .map(|name| Dep { name, pos: log_pos })
        .collect();
    let pulled = (requires.iter().map(|d| (d, true, false)))
        .chain(mounts_for.iter().map(|d| (d, true, true)))
        .chain(log_sockets.iter().map(|d| (d, true, true)))
        .chain(
            wants
                .iter()
                .enumerate()
                .map(|(i, d)| (d, false, i >= sockets)),
        );
    for (d, hard, ordered) in pulled {
        if let Some(list) = spec.pull(&d.name, hard, ordered) {
            origin.push_position(list, d.pos);
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

/// What a slice's name gives it (systemd's `slice_load`): its place below
/// its parent slice, and its description when its files give none.
fn slice_defaults(t: &mut Tr<'_>, spec: &mut UnitSpec) {
    use flotilla_units::context::slice;
    if let Err(e) = slice::parse_slice(&spec.name) {
        t.error(Pos::default(), format!("invalid slice name: {e}"));
        return;
    }
    spec.extras.context.resources.slice = slice::parent_slice(&spec.name);
    if spec.description.is_none() {
        spec.description = Some(slice::default_description(&spec.name));
    }
}

/// Every key of the file, in order, read by its rule ([`rules::rule_of`]);
/// `suffix` is the unit's (`service`, `mount` …).
fn read_keys(r: &mut Reading<'_>, options: &[UnitOption], positions: &[Pos], suffix: &str) {
    let is_mount = suffix == "mount";
    for (i, o) in options.iter().enumerate() {
        let p = positions.get(i).copied().unwrap_or_default();
        let (sec, key) = (o.section.as_str(), o.name.as_str());
        let rule = rules::rule_of(sec, key, r.t.kind, is_mount);
        let not_here = || {
            format!(
                "[{sec}] {key}= does not apply to a .{} unit, ignored",
                suffix
            )
        };
        match rule {
            Rule::Ignored => {}
            Rule::Unsupported => {
                r.t.warn(p, format!("[{sec}] {key}= is not supported, ignored"))
            }
            Rule::NotThisType => r.t.warn(p, not_here()),
            // A mount's section: its value is expanded first (a specifier
            // problem is reported), whatever then becomes of it.
            Rule::Mount(read) => {
                let v = r.t.value(p, key, &o.value);
                if let Some(m) = r.mount_keys.as_mut() {
                    read(m, &mut r.t, p, key, &v);
                }
            }
            Rule::MountUnsupported => {
                r.t.value(p, key, &o.value);
                r.t.warn(p, format!("[{sec}] {key}= is not supported, ignored"));
            }
            Rule::OtherSection => {
                r.t.value(p, key, &o.value);
                r.t.warn(p, not_here());
            }
            Rule::Twin(twin) => {
                let v = r.t.value(p, key, &o.value);
                r.t.twin(&mut r.spec, &mut r.singles, twin, p, key, &v);
            }
            Rule::Context(k) => {
                let v = r.t.value(p, key, &o.value);
                if let Err(e) = r.spec.extras.context.set(k, &v) {
                    r.t.error(p, format!("invalid {key}={v}: {e}"));
                }
            }
            Rule::Own(read) => {
                let v = r.t.value(p, key, &o.value);
                read(r, p, key, &v);
            }
        }
    }
}
