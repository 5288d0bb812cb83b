//! The search path, enablement and `is-enabled` on a copy of this
//! machine's real `/etc/systemd/system` and `/lib/systemd/system`, against
//! `systemctl --root=COPY` (which works offline).

use crate::{
    enable_links, is_enabled, parse, resolve_unit, unit_names, Definition, DirRole, Entry,
    EntryKind, InstallInfo, SearchDir,
};
use std::path::{Path, PathBuf};
use std::process::Command;

/// A copy of the machine's unit directories under a temporary root,
/// removed when dropped.
struct Root(PathBuf);

impl Root {
    fn copy() -> Root {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let root =
            std::env::temp_dir().join(format!("flotilla-unit-path-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        for dir in ["etc/systemd/system", "lib/systemd/system"] {
            let to = root.join(dir);
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            let st = Command::new("cp")
                .arg("-a")
                .arg(format!("/{dir}"))
                .arg(&to)
                .status()
                .unwrap();
            assert!(st.success(), "cp -a /{dir}");
        }
        Root(root)
    }

    /// The listing of `dir` (logical path, e.g. `/etc/systemd/system`).
    fn list(&self, dir: &str, role: DirRole) -> SearchDir {
        let real = self.0.join(dir.trim_start_matches('/'));
        let mut entries = Vec::new();
        let mut add = |rel: String, p: &Path| {
            let meta = std::fs::symlink_metadata(p).unwrap();
            let kind = if meta.file_type().is_symlink() {
                EntryKind::Symlink {
                    target: std::fs::read_link(p)
                        .unwrap()
                        .to_string_lossy()
                        .into_owned(),
                }
            } else if meta.is_dir() {
                EntryKind::Dir
            } else {
                EntryKind::File {
                    empty: meta.len() == 0,
                }
            };
            let is_dir = kind == EntryKind::Dir;
            entries.push(Entry { path: rel, kind });
            is_dir
        };
        for e in std::fs::read_dir(&real).unwrap() {
            let e = e.unwrap();
            let name = e.file_name().to_string_lossy().into_owned();
            if add(name.clone(), &e.path()) {
                for s in std::fs::read_dir(e.path()).unwrap() {
                    let s = s.unwrap();
                    add(
                        format!("{name}/{}", s.file_name().to_string_lossy()),
                        &s.path(),
                    );
                }
            }
        }
        entries.sort_by(|a, b| a.path.cmp(&b.path));
        SearchDir {
            path: dir.to_string(),
            role,
            entries,
        }
    }

    fn install(&self, dirs: &[SearchDir], name: &str) -> Option<InstallInfo> {
        let Definition::File(path) = resolve_unit(dirs, name).definition else {
            return None;
        };
        let text = std::fs::read_to_string(self.0.join(path.trim_start_matches('/'))).ok()?;
        InstallInfo::from_unit_file(name, &parse(&text)).ok()
    }
}

impl Drop for Root {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn search_path(root: &Root) -> Vec<SearchDir> {
    vec![
        root.list("/etc/systemd/system", DirRole::Config),
        root.list("/lib/systemd/system", DirRole::Vendor),
    ]
}

#[test]
fn is_enabled_matches_systemctl_for_every_unit() {
    let root = Root::copy();
    let dirs = search_path(&root);
    let names = unit_names(&dirs);
    assert!(names.len() > 100, "{} units", names.len());
    let out = Command::new("systemctl")
        .arg(format!("--root={}", root.0.display()))
        .arg("is-enabled")
        .args(&names)
        .output()
        .expect("systemctl (package systemd) runs");
    let want: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(
        want.len(),
        names.len(),
        "one answer per unit: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut differ = Vec::new();
    for (name, want) in names.iter().zip(&want) {
        let info = root.install(&dirs, name).unwrap_or_default();
        let got = is_enabled(&dirs, name, &info).unwrap_or("not-found");
        if got != want {
            differ.push(format!("{name}: systemctl {want}, ours {got}"));
        }
    }
    assert!(
        differ.is_empty(),
        "{} of {} differ:\n{}",
        differ.len(),
        names.len(),
        differ.join("\n")
    );
}

#[test]
fn enabling_creates_exactly_what_systemctl_creates() {
    let root = Root::copy();
    let dirs = search_path(&root);
    // Units with [Install] rules that are not enabled yet.
    let candidates: Vec<String> = unit_names(&dirs)
        .into_iter()
        .filter(|n| {
            root.install(&dirs, n).is_some_and(|i| i.has_rules())
                && is_enabled(&dirs, n, &root.install(&dirs, n).unwrap()) == Some("disabled")
        })
        .collect();
    assert!(!candidates.is_empty());
    for name in candidates {
        let ours = enable_links(&dirs, "/etc/systemd/system", &name, &|n| {
            root.install(&dirs, n)
        });
        let out = Command::new("systemctl")
            .arg(format!("--root={}", root.0.display()))
            .args(["enable", "--no-reload", &name])
            .output()
            .unwrap();
        let Ok(ours) = ours else {
            assert!(
                !out.status.success(),
                "{name}: ours {ours:?}, systemctl succeeded"
            );
            continue;
        };
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        // systemctl prints `Created symlink LINK → TARGET.` per link.
        let prefix = root.0.display().to_string();
        let mut theirs: Vec<(String, String)> = String::from_utf8_lossy(&out.stderr)
            .lines()
            .chain(String::from_utf8_lossy(&out.stdout).lines())
            .filter_map(|l| l.strip_prefix("Created symlink "))
            .filter_map(|l| l.trim_end_matches('.').split_once(" → "))
            .map(|(a, b)| {
                (
                    a.trim_start_matches(&prefix).to_string(),
                    b.trim_start_matches(&prefix).to_string(),
                )
            })
            .collect();
        theirs.sort();
        let ours: Vec<(String, String)> = ours.into_iter().map(|l| (l.path, l.target)).collect();
        assert_eq!(ours, theirs, "enable {name}");
        // Undo, so the next unit sees the machine's state again.
        let st = Command::new("systemctl")
            .arg(format!("--root={}", root.0.display()))
            .args(["disable", "--no-reload", "--quiet", &name])
            .status()
            .unwrap();
        assert!(st.success());
    }
}

#[test]
fn multi_user_target_pulls_in_its_wants_links() {
    let root = Root::copy();
    let dirs = search_path(&root);
    let t = resolve_unit(&dirs, "multi-user.target");
    assert_eq!(
        t.definition,
        Definition::File("/lib/systemd/system/multi-user.target".into())
    );
    // Independently: the names in both .wants directories.
    let mut want: Vec<String> = ["etc/systemd/system", "lib/systemd/system"]
        .iter()
        .filter_map(|d| std::fs::read_dir(root.0.join(d).join("multi-user.target.wants")).ok())
        .flatten()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    want.sort();
    want.dedup();
    assert_eq!(t.wants, want);
    assert!(
        t.wants.iter().any(|w| w == "getty.target"),
        "Debian's multi-user.target wants getty.target"
    );
    // rc-local.service carries Debian's own drop-in.
    let rc = resolve_unit(&dirs, "rc-local.service");
    assert_eq!(
        rc.dropins,
        ["/lib/systemd/system/rc-local.service.d/debian.conf"]
    );
    // An instance of getty@.service is defined by the template.
    let g = resolve_unit(&dirs, "getty@tty1.service");
    assert_eq!(g.template.as_deref(), Some("getty@.service"));
}
