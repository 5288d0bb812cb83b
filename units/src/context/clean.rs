//! `systemctl clean` (systemd's `CleanUnit`, the unit's `Clean`): which
//! resources a unit has that may be removed (`CanClean`), the kinds a
//! client names (`--what=`), the directories they stand for, and when a
//! unit may be cleaned at all (docs/dbus.md, "Cleaning a unit").

use std::path::PathBuf;

use super::dirs::{DirKind, Directories};
use crate::state::UnitState;
use crate::unit_type::UnitType;

/// A kind of resource systemd's clean names: the five directory kinds and
/// the descriptor store.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Resource {
    /// One of the directory kinds.
    Dir(DirKind),
    /// The descriptor store (`FileDescriptorStoreMax=`).
    Fdstore,
}

/// Every resource, in systemd's order (that of its directory types, then
/// the store): the order of `CanClean`.
pub const RESOURCES: [Resource; 6] = [
    Resource::Dir(DirKind::Runtime),
    Resource::Dir(DirKind::State),
    Resource::Dir(DirKind::Cache),
    Resource::Dir(DirKind::Logs),
    Resource::Dir(DirKind::Configuration),
    Resource::Fdstore,
];

impl Resource {
    /// systemd's word for it (`--what=`, `CanClean`).
    pub fn as_str(self) -> &'static str {
        match self {
            Resource::Dir(DirKind::Runtime) => "runtime",
            Resource::Dir(DirKind::State) => "state",
            Resource::Dir(DirKind::Cache) => "cache",
            Resource::Dir(DirKind::Logs) => "logs",
            Resource::Dir(DirKind::Configuration) => "configuration",
            Resource::Fdstore => "fdstore",
        }
    }
}

/// The resources a client's words name: each a resource's word, or `all`
/// for every one. An empty list names none (systemd then answers that
/// nothing matches). A word that is none of these is refused with
/// systemd's message.
pub fn parse_what(words: &[String]) -> Result<Vec<Resource>, String> {
    let mut out: Vec<Resource> = Vec::new();
    for w in words {
        let named: Vec<Resource> = if w == "all" {
            RESOURCES.to_vec()
        } else {
            match RESOURCES.iter().find(|r| r.as_str() == w) {
                Some(r) => vec![*r],
                None => return Err(format!("Invalid resource type: {w}")),
            }
        };
        for r in named {
            if !out.contains(&r) {
                out.push(r);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// What a unit has to clean (`CanClean`): each directory kind it lists
/// directories of, and the store when `FileDescriptorStoreMax=` is above
/// zero; in [`RESOURCES`]' order.
pub fn can_clean(dirs: &Directories, fdstore_max: u32) -> Vec<Resource> {
    RESOURCES
        .iter()
        .copied()
        .filter(|r| match r {
            Resource::Dir(k) => !dirs.get(*k).names.is_empty(),
            Resource::Fdstore => fdstore_max > 0,
        })
        .collect()
}

/// The paths a clean of `what` removes: each directory of the kinds named,
/// and, for every kind but the configuration one, its twin below the
/// kind's `private/` (where a `DynamicUser=` service's directories are
/// kept, `dirs.rs`'s [`Directories::private`], the path itself being a
/// link to it; removed whether or not the unit has that user now, as
/// systemd does, so that a unit that had one leaves nothing). Removing a
/// path that does not exist is no error; a link is removed, not what it
/// points to.
pub fn paths(dirs: &Directories, what: &[Resource]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for r in what {
        let Resource::Dir(kind) = *r else { continue };
        for name in &dirs.get(kind).names {
            out.push(kind.base().join(name));
            if kind != DirKind::Configuration {
                out.push(kind.base().join("private").join(name));
            }
        }
    }
    out
}

/// Whether a unit of `kind` can be cleaned at all: those that run a
/// command of their own and sockets, whose directory keys are read (as
/// systemd cleans services, sockets, mounts and swaps); a target, timer,
/// path or scope has nothing to clean (systemd: "does not support
/// cleaning").
pub fn supports(kind: UnitType) -> bool {
    crate::unit_type::SPAWNING.contains(&kind) || kind.row().systemd_suffixes.contains(&"socket")
}

/// Why a clean is refused before anything is removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The unit runs, starts, stops or waits to start (systemd's
    /// `UnitBusy`).
    Busy,
    /// Nothing of what was named exists for the unit (systemd's
    /// `NothingToClean`).
    NothingToClean,
}

impl Refusal {
    /// systemd's message.
    pub fn message(&self) -> &'static str {
        match self {
            Refusal::Busy => "Unit is not inactive or has pending job.",
            Refusal::NothingToClean => "No matching resources found.",
        }
    }
}

/// Whether a unit in `state` may be cleaned: only when it is down
/// (`inactive` or `failed` in systemd's words; `shown_inactive` is a unit
/// `exited` that systemd shows `inactive`, `bus/src/model.rs`'s `shown`).
/// A unit waiting to start has a job pending.
pub fn may_clean(state: UnitState, shown_inactive: bool) -> bool {
    match state {
        UnitState::Disabled | UnitState::Failed => true,
        UnitState::Exited => shown_inactive,
        UnitState::Waiting
        | UnitState::Starting
        | UnitState::Running
        | UnitState::Reloading
        | UnitState::Stopping => false,
    }
}

/// A clean of `what` for a unit in `state` with `dirs` and a store of
/// `fdstore_max`: the paths to remove, or why not, checked in systemd's
/// order (a unit that runs is busy, whatever was named; then nothing to
/// clean when no path and no store is named). A store is emptied by the
/// stop already (flotilla keeps none across a stop), so naming it alone
/// removes nothing and is answered as done.
pub fn plan(
    dirs: &Directories,
    fdstore_max: u32,
    what: &[Resource],
    state: UnitState,
    shown_inactive: bool,
) -> Result<Vec<PathBuf>, Refusal> {
    if what.is_empty() {
        return Err(Refusal::NothingToClean);
    }
    if !may_clean(state, shown_inactive) {
        return Err(Refusal::Busy);
    }
    let store = what.contains(&Resource::Fdstore) && fdstore_max > 0;
    let out = paths(dirs, what);
    if out.is_empty() && !store {
        return Err(Refusal::NothingToClean);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn dirs() -> Directories {
        let mut d = Directories::default();
        d.state.names.push(PathBuf::from("app"));
        d.cache.names.push(PathBuf::from("app"));
        d.configuration.names.push(PathBuf::from("app/conf"));
        d
    }

    fn words(w: &[&str]) -> Vec<String> {
        w.iter().map(|s| s.to_string()).collect()
    }

    /// Words given, and the resources they name or the error.
    type Row<'a> = (&'a [&'a str], Result<Vec<&'a str>, &'a str>);

    #[test]
    fn words_name_resources() {
        let table: &[Row] = &[
            (&[], Ok(vec![])),
            (&["cache", "runtime"], Ok(vec!["runtime", "cache"])),
            (&["state", "state"], Ok(vec!["state"])),
            (
                &["all"],
                Ok(vec![
                    "runtime",
                    "state",
                    "cache",
                    "logs",
                    "configuration",
                    "fdstore",
                ]),
            ),
            (&["logs", "bogus"], Err("Invalid resource type: bogus")),
            (&["Cache"], Err("Invalid resource type: Cache")),
        ];
        for (input, want) in table {
            let got = parse_what(&words(input))
                .map(|v| v.into_iter().map(Resource::as_str).collect::<Vec<_>>());
            let want = want.clone().map_err(str::to_string);
            assert_eq!(got, want, "{input:?}");
        }
    }

    #[test]
    fn can_clean_lists_the_kinds_set() {
        let got: Vec<&str> = can_clean(&dirs(), 0)
            .into_iter()
            .map(Resource::as_str)
            .collect();
        assert_eq!(got, ["state", "cache", "configuration"]);
        let got: Vec<&str> = can_clean(&Directories::default(), 4)
            .into_iter()
            .map(Resource::as_str)
            .collect();
        assert_eq!(got, ["fdstore"]);
        assert!(can_clean(&Directories::default(), 0).is_empty());
    }

    #[test]
    fn paths_of_each_kind_with_their_private_twins() {
        let all = parse_what(&words(&["all"])).unwrap_or_default();
        let got = paths(&dirs(), &all);
        let want: Vec<&Path> = vec![
            Path::new("/var/lib/app"),
            Path::new("/var/lib/private/app"),
            Path::new("/var/cache/app"),
            Path::new("/var/cache/private/app"),
            Path::new("/etc/app/conf"),
        ];
        assert_eq!(got, want);
        let conf = parse_what(&words(&["configuration"])).unwrap_or_default();
        assert_eq!(paths(&dirs(), &conf), vec![PathBuf::from("/etc/app/conf")]);
        let logs = parse_what(&words(&["logs"])).unwrap_or_default();
        assert!(paths(&dirs(), &logs).is_empty());
    }

    #[test]
    fn services_sockets_and_mounts_are_cleaned() {
        let table = [
            (UnitType::ForegroundSupervised, true),
            (UnitType::ForegroundNotified, true),
            (UnitType::BackgroundPidfile, true),
            (UnitType::BackgroundScripted, true),
            (UnitType::Oneshot, true),
            (UnitType::Socket, true),
            (UnitType::Virtual, false),
            (UnitType::Timer, false),
            (UnitType::Path, false),
            (UnitType::Scope, false),
        ];
        for (kind, want) in table {
            assert_eq!(supports(kind), want, "{kind:?}");
        }
    }

    #[test]
    fn only_a_unit_that_is_down_is_cleaned() {
        use UnitState::*;
        let table = [
            (Disabled, false, true),
            (Failed, false, true),
            (Exited, true, true),
            (Exited, false, false),
            (Waiting, false, false),
            (Starting, false, false),
            (Running, false, false),
            (Reloading, false, false),
            (Stopping, false, false),
        ];
        for (state, shown_inactive, want) in table {
            assert_eq!(may_clean(state, shown_inactive), want, "{state:?}");
        }
    }

    #[test]
    fn plan_checks_in_systemds_order() {
        let cache = parse_what(&words(&["cache"])).unwrap_or_default();
        let logs = parse_what(&words(&["logs"])).unwrap_or_default();
        let store = parse_what(&words(&["fdstore"])).unwrap_or_default();
        let d = dirs();
        assert_eq!(
            plan(&d, 0, &cache, UnitState::Running, false),
            Err(Refusal::Busy)
        );
        assert_eq!(
            plan(&d, 0, &logs, UnitState::Running, false),
            Err(Refusal::Busy)
        );
        assert_eq!(
            plan(&d, 0, &[], UnitState::Running, false),
            Err(Refusal::NothingToClean)
        );
        assert_eq!(
            plan(&d, 0, &logs, UnitState::Disabled, false),
            Err(Refusal::NothingToClean)
        );
        assert_eq!(
            plan(&d, 0, &store, UnitState::Failed, false),
            Err(Refusal::NothingToClean)
        );
        assert_eq!(plan(&d, 2, &store, UnitState::Failed, false), Ok(vec![]));
        assert_eq!(
            plan(&d, 0, &cache, UnitState::Failed, false),
            Ok(vec![
                PathBuf::from("/var/cache/app"),
                PathBuf::from("/var/cache/private/app")
            ])
        );
    }
}
