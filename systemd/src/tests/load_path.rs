//! The units of a search path from made-up listings: hiding, aliases,
//! masks, drop-ins (systemd and YAML), `.wants/` and `.requires/` edges,
//! and what each bad input gets.

use crate::load::{load_path, load_path_with, FileRead, LoadedPath};
use crate::{DirRole, Entry, EntryKind, SearchDir};
use flotilla_units::spec::TargetList;
use flotilla_units::specifier::SpecifierContext;
use std::collections::BTreeMap;

/// A search path and the files' texts.
struct Fs {
    dirs: Vec<SearchDir>,
    files: BTreeMap<String, String>,
}

impl Fs {
    fn new(dirs: &[&str]) -> Fs {
        Fs {
            dirs: dirs
                .iter()
                .map(|d| SearchDir {
                    path: d.to_string(),
                    role: DirRole::of_path(d),
                    entries: Vec::new(),
                })
                .collect(),
            files: BTreeMap::new(),
        }
    }

    fn dir(&mut self, dir: &str) -> &mut SearchDir {
        self.dirs.iter_mut().find(|d| d.path == dir).unwrap()
    }

    /// Adds `e` to `dir`, which stays sorted as a listing is.
    fn add(&mut self, dir: &str, e: Entry) {
        let d = self.dir(dir);
        d.entries.push(e);
        d.entries.sort_by(|a, b| a.path.cmp(&b.path));
    }

    /// A file `rel` in `dir` with `text` (empty text: an empty file).
    fn file(&mut self, dir: &str, rel: &str, text: &str) -> &mut Fs {
        self.add(
            dir,
            Entry {
                path: rel.into(),
                kind: EntryKind::File {
                    empty: text.is_empty(),
                },
            },
        );
        self.files.insert(format!("{dir}/{rel}"), text.into());
        self
    }

    fn link(&mut self, dir: &str, rel: &str, target: &str) -> &mut Fs {
        self.add(
            dir,
            Entry {
                path: rel.into(),
                kind: EntryKind::Symlink {
                    target: target.into(),
                },
            },
        );
        self
    }

    fn load(&self) -> LoadedPath {
        load_path(&self.dirs, &mut |p: &str| match self.files.get(p) {
            Some(t) => FileRead::Bytes(t.clone().into_bytes()),
            None => FileRead::Failed("No such file or directory (os error 2)".into()),
        })
    }
}

const ETC: &str = "/etc/systemd/system";
const LIB: &str = "/lib/systemd/system";
const OWN: &str = "/etc/init/units";

fn shown(l: &LoadedPath) -> Vec<String> {
    l.diagnostics.iter().map(ToString::to_string).collect()
}

fn unit<'a>(l: &'a LoadedPath, name: &str) -> &'a flotilla_units::spec::UnitSpec {
    &l.units
        .iter()
        .find(|(s, _)| s.name == name)
        .unwrap_or_else(|| panic!("no unit {name}: {:?}", shown(l)))
        .0
}

fn names(l: &LoadedPath) -> Vec<&str> {
    let mut v: Vec<&str> = l.units.iter().map(|(s, _)| s.name.as_str()).collect();
    v.sort();
    v
}

#[test]
fn earlier_directories_hide_later_ones_and_links_are_followed() {
    let mut fs = Fs::new(&[OWN, ETC, LIB]);
    fs.file(LIB, "web.service", "[Service]\nExecStart=/bin/lib-web\n")
        .file(ETC, "web.service", "[Service]\nExecStart=/bin/etc-web\n")
        .file(LIB, "db.service", "[Service]\nExecStart=/bin/db\n")
        .link(ETC, "db.service", "/dev/null")
        .file(
            LIB,
            "redis-server.service",
            "[Service]\nExecStart=/bin/redis\n",
        )
        .link(
            ETC,
            "redis.service",
            "/lib/systemd/system/redis-server.service",
        )
        .file(LIB, "cron.service", "")
        .file(LIB, "swapfile.swap", "[Swap]\nWhat=/swapfile\n")
        .file(
            LIB,
            "getty@.service",
            "[Service]\nExecStart=/sbin/agetty %I\n",
        )
        .file(OWN, "cache.yaml", "unit: cache\nexec-start: /bin/cache\n");
    let l = fs.load();
    assert!(l.diagnostics.is_empty(), "{:?}", shown(&l));
    assert_eq!(names(&l), ["cache", "redis-server.service", "web.service"]);
    assert_eq!(
        unit(&l, "web.service").exec_start.as_ref().unwrap().argv,
        ["/bin/etc-web"]
    );
    assert_eq!(
        unit(&l, "redis-server.service").provides,
        ["redis-server.service", "redis.service"]
    );
    let web = l.sources.iter().find(|s| s.name == "web.service").unwrap();
    assert_eq!(web.file, "/etc/systemd/system/web.service");
    assert_eq!(web.hides, ["/lib/systemd/system/web.service"]);
    assert_eq!(
        l.masked,
        [
            (
                "cron.service".into(),
                "/lib/systemd/system/cron.service".into()
            ),
            ("db.service".into(), "/etc/systemd/system/db.service".into())
        ]
    );
    assert_eq!(
        l.unsupported,
        [(
            "swapfile.swap".into(),
            "/lib/systemd/system/swapfile.swap".into()
        )]
    );
    assert_eq!(l.templates[0].name, "getty@.service");
}

#[test]
fn a_yaml_unit_replaces_a_packaged_unit_of_its_name() {
    let mut fs = Fs::new(&[OWN, LIB]);
    fs.file(LIB, "web.service", "[Service]\nExecStart=/bin/lib-web\n")
        .file(
            OWN,
            "web.service.yaml",
            "unit: web.service\nexec-start: /bin/mine\n",
        )
        .file(OWN, "a.yaml", "unit: a\nexec-start: /bin/a\n")
        .file(LIB, "a.yaml", "unit: a\nexec-start: /bin/other\n")
        .file(LIB, "b.yaml", "unit: a\nexec-start: /bin/b\n");
    let l = fs.load();
    assert!(l.diagnostics.is_empty(), "{:?}", shown(&l));
    assert_eq!(names(&l), ["a", "web.service"]);
    assert_eq!(
        unit(&l, "web.service").exec_start.as_ref().unwrap().argv,
        ["/bin/mine"]
    );
    let a = l.sources.iter().find(|s| s.name == "a").unwrap();
    // `a.yaml` by its file name, `b.yaml` by the unit's name.
    assert_eq!(
        a.hides,
        ["/lib/systemd/system/a.yaml", "/lib/systemd/system/b.yaml"]
    );
    let web = l.sources.iter().find(|s| s.name == "web.service").unwrap();
    assert_eq!(web.hides, ["/lib/systemd/system/web.service"]);
}

#[test]
fn dropins_override_and_reset_with_errors_in_their_own_file() {
    let mut fs = Fs::new(&[ETC, LIB]);
    fs.file(
        LIB,
        "nginx.service",
        "[Service]\nExecStart=/usr/sbin/nginx\nEnvironment=A=1\n",
    )
    .file(
        ETC,
        "nginx.service.d/override.conf",
        "[Service]\nExecStart=\nExecStart=/usr/sbin/nginx -g 'daemon off;'\nEnvironment=B=2\n",
    )
    .file(LIB, "service.d/10-all.conf", "[Service]\nEnvironment=C=3\n");
    let l = fs.load();
    assert!(l.diagnostics.is_empty(), "{:?}", shown(&l));
    let n = unit(&l, "nginx.service");
    assert_eq!(
        n.exec_start.as_ref().unwrap().argv,
        ["/usr/sbin/nginx", "-g", "daemon off;"]
    );
    let env: Vec<(&str, &str)> = n
        .extras
        .environment
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(env, [("A", "1"), ("B", "2"), ("C", "3")]);
    assert_eq!(
        l.sources[0].dropins,
        [
            "/lib/systemd/system/service.d/10-all.conf",
            "/etc/systemd/system/nginx.service.d/override.conf"
        ]
    );

    // A syntax error and a bad value in a drop-in: named in that file,
    // and the unit is not made.
    fs.file(
        ETC,
        "nginx.service.d/zz-bad.conf",
        "# broken\n[Service\nRestart=sometimes\n",
    );
    let l = fs.load();
    assert_eq!(
        shown(&l),
        [
            "/etc/systemd/system/nginx.service.d/zz-bad.conf:2:1: unterminated section header (no ']')",
            "/etc/systemd/system/nginx.service.d/zz-bad.conf:3:1: invalid Restart=sometimes (no, on-success, on-failure, on-abnormal, on-watchdog, on-abort, always)",
        ]
    );
    assert!(l.units.is_empty());
}

#[test]
fn yaml_dropins() {
    let mut fs = Fs::new(&[OWN, ETC]);
    fs.file(OWN, "web.yaml", "unit: web\nexec-start: /bin/web\n")
        .file(ETC, "web.d/10-env.yaml", "environment: {A: '1'}\n")
        .file(OWN, "web.d/20-cmd.yaml", "exec-start: /bin/web --fast\n")
        .file(ETC, "web.d/20-cmd.yaml", "exec-start: /bin/hidden\n");
    let l = fs.load();
    assert!(l.diagnostics.is_empty(), "{:?}", shown(&l));
    let w = unit(&l, "web");
    assert_eq!(w.exec_start.as_ref().unwrap().argv, ["/bin/web", "--fast"]);
    assert_eq!(w.extras.environment.get("A").map(String::as_str), Some("1"));
    fs.file(OWN, "web.d/30-bad.yaml", "restart: sometimes\n");
    let l = fs.load();
    assert!(l.units.is_empty());
    assert!(
        shown(&l)[0].starts_with("/etc/init/units/web.d/30-bad.yaml:1:10: "),
        "{:?}",
        shown(&l)
    );
}

#[test]
fn wants_and_requires_directories_are_edges() {
    let mut fs = Fs::new(&[OWN, ETC, LIB]);
    fs.file(OWN, "default.yaml", "unit: default\ntype: virtual\n")
        .file(LIB, "web.service", "[Service]\nExecStart=/bin/web\n")
        .file(LIB, "db.service", "[Service]\nExecStart=/bin/db\n")
        .file(
            LIB,
            "getty@.service",
            "[Service]\nExecStart=/sbin/agetty %I\n",
        )
        .link(
            ETC,
            "default.wants/web.service",
            "/lib/systemd/system/web.service",
        )
        .file(OWN, "default.requires/db.service", "x")
        .link(
            ETC,
            "default.wants/getty@tty1.service",
            "/lib/systemd/system/getty@.service",
        )
        .link(
            ETC,
            "default.wants/gone.service",
            "/lib/systemd/system/gone.service",
        )
        .file(
            LIB,
            "bad.service",
            "[Service]\nExecStart=/bin/bad\nType=nonsense\n",
        )
        .link(
            ETC,
            "default.wants/bad.service",
            "/lib/systemd/system/bad.service",
        )
        .link(ETC, "masked.service", "/dev/null")
        .link(ETC, "default.wants/masked.service", "/dev/null")
        .link(ETC, "web.service.wants/db.service", "../db.service");
    let l = fs.load();
    let d = unit(&l, "default");
    assert_eq!(d.depends_on, ["db.service"]);
    assert_eq!(d.waits_for, ["getty@tty1.service", "web.service"]);
    // A link to a unit no file defines is no edge, but shown (systemd's
    // dependency on a unit not found); one to a unit that failed to load
    // or a masked one is neither.
    let (_, origin) = l.units.iter().find(|(s, _)| s.name == "default").unwrap();
    assert_eq!(
        origin.unfound_links(),
        [(TargetList::Wants, "gone.service".to_string())]
    );
    // A service's link orders nothing (systemd's `Wants=`).
    assert_eq!(unit(&l, "web.service").wants, ["db.service"]);
    assert!(unit(&l, "web.service").waits_for.is_empty());
    assert_eq!(l.instances, ["getty@tty1.service"]);
    // A unit whose file has an error: the link's warning says so, not
    // that the unit is nowhere (Debian 13's sysinit.target.wants/ named
    // units that failed on a key flotilla refused, and read as missing).
    let mut s = shown(&l);
    s.retain(|d| !d.starts_with("/lib/systemd/system/bad.service:"));
    assert_eq!(
        s,
        [
            "/etc/systemd/system/default.wants/bad.service: warning: default wants bad.service, which could not be loaded (its error is reported at its file); ignored",
            "/etc/systemd/system/default.wants/gone.service: warning: default wants gone.service, which is not on the unit search path; shown, not started"
        ]
    );
    assert_eq!(
        shown(&l).last().map(String::as_str),
        Some(
            "/lib/systemd/system/bad.service:3:1: invalid Type=nonsense (simple, exec, notify, \
             forking, oneshot, idle)"
        )
    );
}

#[test]
fn a_link_to_a_missing_file() {
    let mut fs = Fs::new(&[ETC, LIB]);
    fs.link(ETC, "ghost.service", "/opt/ghost/ghost.service");
    let l = fs.load();
    assert_eq!(
        shown(&l),
        ["/etc/systemd/system/ghost.service: a link to /opt/ghost/ghost.service, which cannot be read: No such file or directory (os error 2)"]
    );
    assert!(l.units.is_empty());
}

#[test]
fn dropins_for_a_unit_that_is_not_there_are_a_warning() {
    let mut fs = Fs::new(&[OWN, ETC, LIB]);
    fs.file(LIB, "nginx.service", "[Service]\nExecStart=/bin/nginx\n")
        .file(
            LIB,
            "getty@.service",
            "[Service]\nExecStart=/sbin/agetty %I\n",
        )
        .file(OWN, "web.yaml", "unit: web\nexec-start: /bin/web\n")
        // A misspelt unit: the override does nothing, and says so.
        .file(
            ETC,
            "ngnix.service.d/override.conf",
            "[Service]\nEnvironment=A=1\n",
        )
        .file(
            ETC,
            "ngnix.service.d/more.conf",
            "[Service]\nEnvironment=B=1\n",
        )
        .file(OWN, "wbe.d/x.yaml", "restart: always\n")
        // These apply: a unit's, a template's, type-wide and prefix ones.
        .file(
            ETC,
            "nginx.service.d/override.conf",
            "[Service]\nEnvironment=A=1\n",
        )
        .file(
            ETC,
            "getty@.service.d/x.conf",
            "[Service]\nEnvironment=A=1\n",
        )
        .file(ETC, "service.d/x.conf", "[Service]\nEnvironment=A=1\n")
        .file(ETC, "user-.slice.d/x.conf", "[Slice]\nCPUWeight=1\n")
        .file(OWN, "web.d/x.yaml", "restart: always\n")
        // A vendor's drop-in for a package that is not installed: normal.
        .file(LIB, "rc-local.service.d/debian.conf", "[Unit]\nX=1\n");
    let l = fs.load();
    assert_eq!(
        shown(&l),
        [
            "/etc/init/units/wbe.d: warning: drop-ins for wbe, which is not on the unit search path; ignored",
            "/etc/systemd/system/ngnix.service.d: warning: drop-ins for ngnix.service, which is not on the unit search path; ignored",
        ]
    );
    assert_eq!(names(&l), ["nginx.service", "web"]);
}

impl Fs {
    /// [`Fs::load`] with the machine's facts and names the caller asks for.
    fn load_naming(&self, named: &[&str]) -> LoadedPath {
        let mut facts = SpecifierContext::system("");
        facts.hostname = Some("db1.example.org".into());
        facts.machine_id = Some("0123abcd".into());
        facts.boot_id = Some("b007".into());
        let named: Vec<String> = named.iter().map(|n| n.to_string()).collect();
        load_path_with(
            &self.dirs,
            &facts,
            &named,
            &mut |p: &str| match self.files.get(p) {
                Some(t) => FileRead::Bytes(t.clone().into_bytes()),
                None => FileRead::Failed("No such file or directory (os error 2)".into()),
            },
        )
    }
}

#[test]
fn an_instance_is_made_from_its_template_with_every_specifier_expanded() {
    let mut fs = Fs::new(&[OWN, ETC, LIB]);
    fs.file(
        LIB,
        "pg@.service",
        "[Unit]\nDescription=cluster %I on %H\nWants=wal@%i.service\nOnFailure=alarm@%i.service\n\
         [Service]\nExecStart=/bin/pg %i %I %n %N %p %P %H %m %b %t 100%%\n\
         Environment=STATE=%S/%p-%i\n",
    )
    .file(
        LIB,
        "wal@.service",
        "[Unit]\nAfter=pg@%i.service\n[Service]\nExecStart=/bin/wal %i\n",
    )
    .file(
        LIB,
        "alarm@.service",
        "[Service]\nExecStart=/bin/alarm %i\n",
    )
    .file(LIB, "pg@.service.d/10-base.conf", "[Service]\nNice=5\n")
    .file(
        ETC,
        "pg@main-1.service.d/30-own.conf",
        "[Service]\nEnvironment=OWN=%i\n",
    )
    .file(ETC, "pg@.service.d/20-own.conf", "[Service]\nNice=7\n")
    .file(
        OWN,
        "app.yaml",
        "unit: app\nexec-start: /bin/app\ndepends-on: [pg@main-1.service]\n",
    );
    let l = fs.load_naming(&[]);
    assert_eq!(shown(&l), Vec::<String>::new());
    assert_eq!(
        names(&l),
        [
            "alarm@main-1.service",
            "app",
            "pg@main-1.service",
            "wal@main-1.service"
        ],
        "an instance named by an instance is made too"
    );
    let pg = unit(&l, "pg@main-1.service");
    assert_eq!(
        pg.exec_start.as_ref().unwrap().argv,
        [
            "/bin/pg",
            "main-1",
            "main/1",
            "pg@main-1.service",
            "pg@main-1",
            "pg",
            "pg",
            "db1.example.org",
            "0123abcd",
            "b007",
            "/run",
            "100%"
        ]
    );
    assert_eq!(
        pg.description.as_deref(),
        Some("cluster main/1 on db1.example.org")
    );
    assert_eq!(pg.extras.environment["STATE"], "/var/lib/pg-main-1");
    assert_eq!(pg.wants, ["wal@main-1.service"]);
    let src = l
        .sources
        .iter()
        .find(|s| s.name == "pg@main-1.service")
        .unwrap();
    assert_eq!(src.file, "/lib/systemd/system/pg@.service");
    // The template's drop-ins and the instance's own, by file name.
    assert_eq!(
        src.dropins,
        [
            "/lib/systemd/system/pg@.service.d/10-base.conf",
            "/etc/systemd/system/pg@.service.d/20-own.conf",
            "/etc/systemd/system/pg@main-1.service.d/30-own.conf"
        ]
    );
    assert_eq!(pg.extras.environment["OWN"], "main-1");
    assert_eq!(unit(&l, "wal@main-1.service").after, ["pg@main-1.service"]);
    assert!(l.templates.iter().any(|t| t.name == "pg@.service"));
}

#[test]
fn instance_drop_ins_apply_after_the_templates_and_links_name_instances() {
    let mut fs = Fs::new(&[ETC, LIB]);
    fs.file(
        LIB,
        "getty@.service",
        "[Service]\nExecStart=/sbin/agetty %I\nEnvironment=A=template B=template\n",
    )
    .file(
        LIB,
        "getty@.service.d/10-a.conf",
        "[Service]\nEnvironment=A=template-dropin\n",
    )
    .file(
        ETC,
        "getty@tty1.service.d/20-b.conf",
        "[Service]\nEnvironment=B=%i\n",
    )
    .file(LIB, "getty.target", "[Unit]\nDescription=gettys\n")
    .link(
        ETC,
        "getty.target.wants/getty@tty1.service",
        "/lib/systemd/system/getty@.service",
    )
    .link(LIB, "autovt@.service", "getty@.service")
    .file(
        LIB,
        "vt.timer",
        "[Timer]\nOnBootSec=1\nUnit=autovt@tty2.service\n",
    );
    let l = fs.load_naming(&[]);
    assert_eq!(shown(&l), Vec::<String>::new());
    let tty1 = unit(&l, "getty@tty1.service");
    assert_eq!(tty1.extras.environment["A"], "template-dropin");
    assert_eq!(tty1.extras.environment["B"], "tty1");
    assert_eq!(
        tty1.exec_start.as_ref().unwrap().argv,
        ["/sbin/agetty", "tty1"]
    );
    assert_eq!(unit(&l, "getty.target").waits_for, ["getty@tty1.service"]);
    // A timer's unit, through an alias of the template: the instance of
    // the template it links to, with the alias among its names (systemd's
    // `autovt@tty2.service` is `getty@tty2.service`).
    let tty2 = unit(&l, "getty@tty2.service");
    assert_eq!(
        tty2.exec_start.as_ref().unwrap().argv,
        ["/sbin/agetty", "tty2"]
    );
    assert!(tty2.provides.iter().any(|p| p == "autovt@tty2.service"));
    assert!(!names(&l).contains(&"autovt@tty2.service"));
    // What the caller names (the target, a wanted unit) is made too.
    let l = fs.load_naming(&["getty@tty9.service", "getty@tty1.service"]);
    assert!(names(&l).contains(&"getty@tty9.service"));
}

#[test]
fn each_bad_instance_is_said_in_its_file_and_loses_nothing_else() {
    let mut fs = Fs::new(&[ETC, LIB]);
    fs.file(
        LIB,
        "bad@.service",
        "[Service]\nExecStart=/bin/bad %i\nEnvironment=X=%z\n",
    )
    .file(LIB, "path@.service", "[Service]\nExecStart=/bin/fsck %f\n")
    .file(
        ETC,
        "app.service",
        "[Unit]\nWants=bad@1.service path@a--b.service\nRequires=gone@1.service\n\
         [Service]\nExecStart=/bin/app\n",
    )
    .file(ETC, "good.service", "[Service]\nExecStart=/bin/good\n")
    .link(ETC, "bad@2.service", "/dev/null");
    let l = fs.load_naming(&["bad@2.service", "nothing@1.service"]);
    assert_eq!(
        shown(&l),
        [
            "/etc/systemd/system/app.service:3:1: warning: gone@1.service is named here, but \
             neither a unit file gone@1.service nor its template gone@.service is on the unit \
             search path",
            "/lib/systemd/system/bad@.service:3:1: invalid Environment=: unknown specifier %z \
             (use %% for a literal %) (instance bad@1.service)",
            "/lib/systemd/system/path@.service:2:1: invalid ExecStart=: specifier %f: \"a--b\" \
             does not unescape to a normalized absolute path (instance path@a--b.service)",
        ]
    );
    assert_eq!(names(&l), ["app.service", "good.service"]);
    assert!(l.masked.iter().any(|(n, _)| n == "bad@2.service"));
    // What the caller named that no template makes is for it to say.
    let mut l = fs.load_naming(&[]);
    assert_eq!(
        l.add_instances(&["nothing@1.service".into()]),
        ["nothing@1.service"]
    );
}

#[test]
fn an_old_loaders_output_has_no_stamp() {
    let mut json =
        serde_json::to_value(crate::load::LoadedPath::default()).unwrap_or_else(|e| panic!("{e}"));
    if let Some(m) = json.as_object_mut() {
        assert!(m.remove("stamp").is_some());
    }
    let old: crate::load::LoadedPath =
        serde_json::from_value(json).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(old.stamp, flotilla_units::load::PathStamp::default());
    assert!(!old.stamp.settled());
}

/// A `.scope` file is read from `/run/systemd/transient` only, where
/// the init writes a scope's (with the drop-ins of its name); one
/// anywhere else is not a unit, as systemd loads no other scope file.
#[test]
fn a_scope_file_is_read_from_the_transient_directory_only() {
    const TRANSIENT: &str = "/run/systemd/transient";
    let mut fs = Fs::new(&[ETC, TRANSIENT, LIB]);
    fs.file(TRANSIENT, "run-a.scope", "[Scope]\nSlice=x.slice\n")
        .file(
            ETC,
            "run-a.scope.d/limit.conf",
            "[Scope]\nRuntimeMaxSec=5s\n",
        )
        .file(LIB, "stray.scope", "[Scope]\nSlice=x.slice\n");
    let l = fs.load();
    assert!(l.diagnostics.is_empty(), "{:?}", shown(&l));
    assert_eq!(names(&l), ["run-a.scope"]);
    let a = unit(&l, "run-a.scope");
    assert_eq!(
        a.extras.runtime_max,
        Some(std::time::Duration::from_secs(5))
    );
    assert_eq!(
        l.unsupported,
        [(
            "stray.scope".into(),
            "/lib/systemd/system/stray.scope".into()
        )]
    );
}
