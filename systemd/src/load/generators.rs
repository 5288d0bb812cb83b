//! systemd's generators as systemd runs them (docs/generators.md): which
//! programs run ([`pick`]), where their output goes on the unit search
//! path ([`place_outputs`]) and the environment they get ([`env`]). The
//! init runs them (`init/src/sys/generators.rs`); this is the pure part.
//!
//! - The programs: every executable in [`GENERATOR_DIRS`], one per file
//!   name (the earliest directory's, as systemd's `conf_files` picks
//!   them: a file in `/etc/systemd/system-generators` hides the packaged
//!   one of the same name, and a link to `/dev/null` or an empty file
//!   there masks it), run in the order of their names.
//! - The output: three directories, `generator.early`, `generator` and
//!   `generator.late` (under `/run/systemd`), each a generator's argument
//!   (normal, early, late: in that order on its command line) and each at
//!   systemd's place on the search path: `early` before
//!   `/etc/systemd/system`, `generator` after `/run/systemd/system` and
//!   before the packaged directories, `late` after all of them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub use flotilla_units::config::GENERATOR_DIRS;

/// Where the three output directories are made by default.
pub const DEFAULT_OUTPUT: &str = "/run/systemd";

/// systemd's total time limit for all generators of one run
/// (`DEFAULT_TIMEOUT_USEC`).
pub const DEFAULT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(90);

/// systemd's system unit search path (`path-lookup.c`, system scope, a
/// split-`/usr` build), with the generator directories by role: a
/// directory's index is its rank.
const SYSTEM_PATH: &[Place] = &[
    Place::Dir("/etc/systemd/system.control"),
    Place::Dir("/run/systemd/system.control"),
    Place::Dir("/run/systemd/transient"),
    Place::Early,
    Place::Dir("/etc/systemd/system"),
    Place::Dir("/etc/systemd/system.attached"),
    Place::Dir("/run/systemd/system"),
    Place::Dir("/run/systemd/system.attached"),
    Place::Normal,
    Place::Dir("/usr/local/lib/systemd/system"),
    Place::Dir("/usr/lib/systemd/system"),
    Place::Dir("/lib/systemd/system"),
    Place::Late,
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    Dir(&'static str),
    Early,
    Normal,
    Late,
}

/// The three output directories of one run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outputs {
    /// `generator.early`: before the administrator's units.
    pub early: PathBuf,
    /// `generator`: between the administrator's and the packages' units.
    pub normal: PathBuf,
    /// `generator.late`: after every other directory.
    pub late: PathBuf,
}

impl Outputs {
    /// The three directories under `base` (`/run/systemd` for the system).
    pub fn under(base: &Path) -> Outputs {
        Outputs {
            early: base.join("generator.early"),
            normal: base.join("generator"),
            late: base.join("generator.late"),
        }
    }

    /// A generator's arguments after its own name, in systemd's order:
    /// normal, early, late.
    pub fn argv(&self) -> [&Path; 3] {
        [&self.normal, &self.early, &self.late]
    }

    /// The three, in search-path order.
    pub fn all(&self) -> [&Path; 3] {
        [&self.early, &self.normal, &self.late]
    }
}

/// The search path `path` (the config's, highest priority first) with the
/// output directories put in at systemd's places: each one just before
/// the first of systemd's directories that systemd ranks after it, the
/// rest at the end. A directory that is not systemd's (flotilla's own
/// `/etc/init/units`) keeps its place among the others, so one before
/// `/etc/systemd/system` is still before `generator.early`.
pub fn place_outputs(path: &[PathBuf], out: &Outputs) -> Vec<PathBuf> {
    let rank = |p: Place| SYSTEM_PATH.iter().position(|q| *q == p).unwrap_or(0);
    let mut pending: Vec<(usize, &Path)> = vec![
        (rank(Place::Early), &out.early),
        (rank(Place::Normal), &out.normal),
        (rank(Place::Late), &out.late),
    ];
    let mut placed = Vec::with_capacity(path.len() + 3);
    for dir in path {
        let r = SYSTEM_PATH
            .iter()
            .position(|p| matches!(p, Place::Dir(d) if Path::new(d) == dir.as_path()));
        if let Some(r) = r {
            while let Some(&(g, p)) = pending.first() {
                if g >= r {
                    break;
                }
                placed.push(p.to_path_buf());
                pending.remove(0);
            }
        }
        // A configured directory that is also an output is taken once.
        if !placed.contains(dir) && !pending.iter().any(|(_, p)| *p == dir.as_path()) {
            placed.push(dir.clone());
        }
    }
    placed.extend(pending.into_iter().map(|(_, p)| p.to_path_buf()));
    placed
}

/// One entry of a generator directory, as the caller saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// Its file name.
    pub name: String,
    /// The file it resolves to is executable by the init.
    pub executable: bool,
    /// A link to `/dev/null` or an empty file: a mask.
    pub masked: bool,
}

/// The generators to run, in order, from each directory's entries
/// (`listed`: the directories first first): one per file name, the
/// earliest directory's; a masked name runs nothing; hidden and backup
/// names (`.x`, `x~`) and files that are not executable are skipped, as
/// systemd skips them.
pub fn pick(listed: &[(PathBuf, Vec<Candidate>)]) -> Vec<PathBuf> {
    let mut chosen: BTreeMap<&str, Option<PathBuf>> = BTreeMap::new();
    for (dir, entries) in listed {
        for c in entries {
            if c.name.starts_with('.') || c.name.ends_with('~') || c.name.contains('/') {
                continue;
            }
            if chosen.contains_key(c.name.as_str()) {
                continue;
            }
            let run = (!c.masked && c.executable).then(|| dir.join(&c.name));
            // A file that is not executable still hides a later one of its
            // name only when it is a mask; otherwise the next directory's
            // executable of that name may run (systemd filters the
            // non-executables before it picks per name).
            if run.is_some() || c.masked {
                chosen.insert(&c.name, run);
            }
        }
    }
    chosen.into_values().flatten().collect()
}

/// What the generators are told about the machine.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Facts {
    /// Running in an initrd.
    pub in_initrd: bool,
    /// The machine's first boot (`/etc/machine-id` missing or
    /// `uninitialized` when the init started); `None`: not known.
    pub first_boot: Option<bool>,
    /// systemd-detect-virt's name (`kvm`, `docker`, …); `None`: none.
    pub virtualization: Option<String>,
    /// systemd's name of the architecture (`x86-64`).
    pub architecture: String,
}

/// The variables systemd's `build_generator_environment()` adds to the
/// manager's environment for a system manager's generators:
/// `SYSTEMD_SCOPE=system`, `SYSTEMD_IN_INITRD`, `SYSTEMD_FIRST_BOOT`
/// (when known), `SYSTEMD_VIRTUALIZATION` (`vm:kvm`, `container:docker`;
/// none on bare metal) and `SYSTEMD_ARCHITECTURE`.
pub fn env(facts: &Facts) -> Vec<(String, String)> {
    let one_zero = |b: bool| if b { "1" } else { "0" }.to_string();
    let mut env = vec![
        ("SYSTEMD_SCOPE".to_string(), "system".to_string()),
        ("SYSTEMD_IN_INITRD".to_string(), one_zero(facts.in_initrd)),
    ];
    if let Some(f) = facts.first_boot {
        env.push(("SYSTEMD_FIRST_BOOT".to_string(), one_zero(f)));
    }
    if let Some(v) = facts.virtualization.as_deref().filter(|v| !v.is_empty()) {
        let kind = if flotilla_units::detect_virt::CONTAINER_NAMES.contains(&v) {
            "container"
        } else {
            "vm"
        };
        env.push(("SYSTEMD_VIRTUALIZATION".to_string(), format!("{kind}:{v}")));
    }
    env.push((
        "SYSTEMD_ARCHITECTURE".to_string(),
        facts.architecture.clone(),
    ));
    env
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn p(xs: &[&str]) -> Vec<PathBuf> {
        xs.iter().map(PathBuf::from).collect()
    }

    #[test]
    fn outputs_go_where_systemd_puts_them() {
        let out = Outputs::under(Path::new("/run/systemd"));
        // Debian's config: flotilla's directory, then systemd's two.
        assert_eq!(
            place_outputs(
                &p(&[
                    "/etc/init/units",
                    "/etc/systemd/system",
                    "/lib/systemd/system"
                ]),
                &out
            ),
            p(&[
                "/etc/init/units",
                "/run/systemd/generator.early",
                "/etc/systemd/system",
                "/run/systemd/generator",
                "/lib/systemd/system",
                "/run/systemd/generator.late",
            ])
        );
        // systemd's whole path (a merged /usr lists /usr/lib only).
        assert_eq!(
            place_outputs(
                &p(&[
                    "/etc/systemd/system",
                    "/run/systemd/system",
                    "/usr/local/lib/systemd/system",
                    "/usr/lib/systemd/system",
                ]),
                &out
            ),
            p(&[
                "/run/systemd/generator.early",
                "/etc/systemd/system",
                "/run/systemd/system",
                "/run/systemd/generator",
                "/usr/local/lib/systemd/system",
                "/usr/lib/systemd/system",
                "/run/systemd/generator.late",
            ])
        );
        // The transient and control directories come before early.
        assert_eq!(
            place_outputs(&p(&["/run/systemd/transient", "/etc/systemd/system"]), &out)[..2],
            p(&["/run/systemd/transient", "/run/systemd/generator.early"])[..]
        );
        // A path of flotilla's own directories: the outputs after them,
        // in their order.
        let t = Outputs::under(Path::new("/tmp/g"));
        assert_eq!(
            place_outputs(&p(&["/srv/units"]), &t),
            p(&[
                "/srv/units",
                "/tmp/g/generator.early",
                "/tmp/g/generator",
                "/tmp/g/generator.late"
            ])
        );
        // An output already configured is not listed twice.
        assert_eq!(
            place_outputs(&p(&["/srv/units", "/tmp/g/generator"]), &t).len(),
            4
        );
    }

    #[test]
    fn a_generator_is_called_with_normal_early_late() {
        let out = Outputs::under(Path::new("/run/systemd"));
        assert_eq!(
            out.argv(),
            [
                Path::new("/run/systemd/generator"),
                Path::new("/run/systemd/generator.early"),
                Path::new("/run/systemd/generator.late")
            ]
        );
    }

    fn c(name: &str, executable: bool, masked: bool) -> Candidate {
        Candidate {
            name: name.to_string(),
            executable,
            masked,
        }
    }

    #[test]
    fn one_per_name_the_earliest_directory_wins() {
        let listed = vec![
            (
                PathBuf::from("/etc/systemd/system-generators"),
                vec![
                    c("systemd-getty-generator", true, false),
                    c("systemd-gpt-auto-generator", false, true),
                    c("notes.txt", false, false),
                    c(".hidden", true, false),
                    c("old~", true, false),
                ],
            ),
            (
                PathBuf::from("/usr/lib/systemd/system-generators"),
                vec![
                    c("systemd-fstab-generator", true, false),
                    c("systemd-getty-generator", true, false),
                    c("systemd-gpt-auto-generator", true, false),
                    c("notes.txt", true, false),
                ],
            ),
            // The same directory through /lib: names already taken.
            (
                PathBuf::from("/lib/systemd/system-generators"),
                vec![c("systemd-fstab-generator", true, false)],
            ),
        ];
        assert_eq!(
            pick(&listed),
            p(&[
                "/usr/lib/systemd/system-generators/notes.txt",
                "/usr/lib/systemd/system-generators/systemd-fstab-generator",
                "/etc/systemd/system-generators/systemd-getty-generator",
            ])
        );
    }

    #[test]
    fn the_environment_systemd_gives_them() {
        let e = env(&Facts {
            in_initrd: false,
            first_boot: Some(false),
            virtualization: Some("kvm".into()),
            architecture: "x86-64".into(),
        });
        let shown: Vec<String> = e.iter().map(|(k, v)| format!("{k}={v}")).collect();
        assert_eq!(
            shown,
            [
                "SYSTEMD_SCOPE=system",
                "SYSTEMD_IN_INITRD=0",
                "SYSTEMD_FIRST_BOOT=0",
                "SYSTEMD_VIRTUALIZATION=vm:kvm",
                "SYSTEMD_ARCHITECTURE=x86-64"
            ]
        );
        let e = env(&Facts {
            virtualization: Some("docker".into()),
            architecture: "arm64".into(),
            ..Facts::default()
        });
        assert!(e.contains(&(
            "SYSTEMD_VIRTUALIZATION".to_string(),
            "container:docker".to_string()
        )));
        assert!(!e.iter().any(|(k, _)| k == "SYSTEMD_FIRST_BOOT"));
    }
}
