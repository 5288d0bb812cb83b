//! flotilla's Debian package (docs/debian.md): built by
//! `contrib/debian/package`, installed with `apt-get install ./….deb`
//! into a Debian 12 root (the cached mmdebstrap root of
//! `contrib/debian/build --base-only`, copied), where every file of every
//! other package stays as shipped (`dpkg --verify`); its GRUB script adds
//! entries with `init=/sbin/flotilla`; `apt-get remove` takes it out
//! (keeping the configuration, as Debian does), `purge` the rest; and
//! `contrib/debian/install ROOT` installs the same package with the root's
//! dpkg, also where its statoverride names a group the host lacks.

use crate::pid1_support;

use pid1_support::{bin_dir, report, workspace};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// Runs `cmd`, asserts it succeeds, returns its stdout.
#[track_caller]
fn ok(cmd: &mut Command) -> String {
    let out = cmd.output().expect("run");
    assert!(
        out.status.success(),
        "{cmd:?}: {}\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `chroot ROOT ARGS…` with apt's non-interactive settings.
fn chroot(root: &Path, args: &[&str]) -> Command {
    let mut c = Command::new("chroot");
    c.arg(root)
        .args(args)
        .env("DEBIAN_FRONTEND", "noninteractive")
        .env("PATH", "/usr/sbin:/usr/bin:/sbin:/bin");
    c
}

/// `dpkg --root ROOT ARGS…` (the host's dpkg on the root's database).
fn dpkg(root: &Path, args: &[&str]) -> Command {
    let mut c = Command::new("dpkg");
    c.arg("--root").arg(root).args(args);
    c
}

/// Every file of every package of `root` as shipped: `dpkg --verify`
/// prints nothing.
#[track_caller]
fn verified(root: &Path) {
    let out = ok(&mut dpkg(root, &["--verify"]));
    assert!(out.trim().is_empty(), "dpkg --verify:\n{out}");
}

#[test]
fn the_package_installs_beside_systemd_and_removes_cleanly() {
    // One VM or whole system at a time in this binary (`heavy`).
    let _heavy = flotilla_tests::heavy();
    let target = bin_dir().parent().expect("target dir").to_path_buf();
    let t = Instant::now();
    let base = ok(Command::new(workspace().join("contrib/debian/build"))
        .arg("--base-only")
        .arg("--cache")
        .arg(target.join("debian"))
        .stderr(std::process::Stdio::inherit()));
    let base = PathBuf::from(base.lines().last().expect("the root's directory").trim());
    let out = tempfile::Builder::new()
        .prefix("debian-package-")
        .tempdir_in(&target)
        .expect("tempdir");
    // The musl build of debian_boot's image: the same binaries.
    let deb = ok(Command::new(workspace().join("contrib/debian/package"))
        .arg("--out")
        .arg(out.path())
        .env("CARGO_TARGET_DIR", target.join("image-build"))
        .stderr(std::process::Stdio::inherit()));
    let deb = PathBuf::from(deb.lines().last().expect("the package").trim());
    report(&format!(
        "debian package: {} built in {:.1} s",
        deb.display(),
        t.elapsed().as_secs_f64()
    ));
    let name = deb
        .file_name()
        .expect("name")
        .to_string_lossy()
        .into_owned();
    let version = env!("CARGO_PKG_VERSION");
    assert_eq!(name, format!("flotilla_{version}_amd64.deb"));
    let fields = ok(Command::new("dpkg-deb").arg("-f").arg(&deb).args([
        "Package",
        "Version",
        "Architecture",
        "Depends",
    ]));
    assert_eq!(
        fields,
        // The C library, for flotilla-pam (the init and the rest are
        // static).
        format!(
            "Package: flotilla\nVersion: {version}\nArchitecture: amd64\nDepends: libc6 (>= 2.34)\n"
        )
    );

    // A copy of the root: hard links, but the files apt and dpkg rewrite
    // or append to are copies, so the cached root stays as it was.
    let root = out.path().join("root");
    ok(Command::new("cp")
        .arg("-al")
        .arg(base.join("root"))
        .arg(&root));
    for d in ["var/lib/dpkg", "var/log", "var/lib/apt", "var/cache/apt"] {
        std::fs::remove_dir_all(root.join(d)).expect("rm");
        ok(Command::new("cp")
            .arg("-a")
            .arg(base.join("root").join(d))
            .arg(root.join(d)));
    }
    verified(&root);
    std::fs::copy(&deb, root.join("tmp").join(&name)).expect("copy the package in");

    // apt-get install ./flotilla_….deb, as on a running system.
    let local = format!("/tmp/{name}");
    ok(&mut chroot(&root, &["apt-get", "install", "-y", &local]));
    let listed = ok(&mut dpkg(&root, &["-L", "flotilla"]));
    for path in [
        "/sbin/flotilla",
        "/usr/local/bin/initctl",
        "/sbin/flotilla-logd",
        "/sbin/flotilla-busd",
        "/etc/init/init.yaml",
        "/etc/init/units/MASKED",
        "/etc/grub.d/42_flotilla",
    ] {
        assert!(
            listed.lines().any(|l| l == path),
            "{path} not in:\n{listed}"
        );
    }
    // Nothing of systemd's (nor of any other package) changed, and
    // flotilla's own files are as packaged.
    verified(&root);
    let v = ok(&mut chroot(&root, &["/sbin/flotilla", "--version"]));
    assert_eq!(v.trim(), format!("init (flotilla) {version}"));
    assert!(root.join("lib/systemd/systemd").exists());
    assert!(root.join("bin/systemctl").exists());

    // The GRUB entry: Debian's 10_linux run again with init=/sbin/flotilla
    // and its titles renamed. grub is not in this root: a stand-in for
    // 10_linux that prints an entry as 10_linux does, with the command
    // line it was given.
    std::fs::write(
        root.join("tmp/10_linux"),
        "#!/bin/sh\ncat <<EOF\nmenuentry 'Debian GNU/Linux' --class debian \
         \\$menuentry_id_option 'gnulinux-simple-1234' {\n\tlinux /vmlinuz root=UUID=1234 ro \
         ${GRUB_CMDLINE_LINUX}\n}\nEOF\n",
    )
    .expect("10_linux");
    ok(Command::new("chmod")
        .arg("755")
        .arg(root.join("tmp/10_linux")));
    let grub = || {
        let mut c = chroot(&root, &["/etc/grub.d/42_flotilla"]);
        c.env("FLOTILLA_GRUB_LINUX", "/tmp/10_linux")
            .env("GRUB_CMDLINE_LINUX", "console=ttyS0");
        ok(&mut c)
    };
    let entry = grub();
    assert!(
        entry.contains("menuentry 'Debian GNU/Linux, with flotilla' --class debian")
            && entry.contains("'flotilla-gnulinux-simple-1234'")
            && entry.contains("root=UUID=1234 ro console=ttyS0 init=/sbin/flotilla"),
        "{entry}"
    );

    // apt-get remove: the programs go, the configuration stays (Debian's
    // conffiles), the GRUB script then prints nothing.
    ok(&mut chroot(&root, &["apt-get", "remove", "-y", "flotilla"]));
    for gone in [
        "sbin/flotilla",
        "usr/local/bin/initctl",
        "sbin/flotilla-busd",
        "usr/local/lib/flotilla/initctl-fifo",
        "etc/init/units/getty.target.wants",
    ] {
        assert!(
            std::fs::symlink_metadata(root.join(gone)).is_err(),
            "{gone} left after remove"
        );
    }
    assert!(root.join("etc/init/init.yaml").exists());
    let status = ok(&mut dpkg(&root, &["-s", "flotilla"]));
    assert!(
        status.contains("Status: deinstall ok config-files"),
        "{status}"
    );
    assert_eq!(grub(), "");
    ok(&mut chroot(&root, &["apt-get", "purge", "-y", "flotilla"]));
    assert!(
        !root.join("etc/init").exists(),
        "/etc/init left after purge"
    );
    assert!(!root.join("etc/grub.d/42_flotilla").exists());
    let gone = dpkg(&root, &["-s", "flotilla"]).output().expect("dpkg -s");
    assert!(!gone.status.success(), "flotilla still known after purge");
    verified(&root);

    // contrib/debian/install ROOT: the same package, by the root's dpkg,
    // on a root whose statoverride names a group the host does not have
    // (postfix's `postdrop`, which the host's dpkg --root refused).
    ok(&mut chroot(
        &root,
        &["groupadd", "--system", "flotilla-postdrop"],
    ));
    ok(&mut chroot(
        &root,
        &[
            "dpkg-statoverride",
            "--add",
            "root",
            "flotilla-postdrop",
            "0755",
            "/var/tmp",
        ],
    ));
    ok(Command::new(workspace().join("contrib/debian/install"))
        .arg("--deb")
        .arg(&deb)
        .arg(&root));
    ok(&mut chroot(
        &root,
        &["dpkg-statoverride", "--remove", "/var/tmp"],
    ));
    ok(&mut chroot(&root, &["groupdel", "flotilla-postdrop"]));
    let listed = ok(&mut dpkg(&root, &["-L", "flotilla"]));
    assert!(listed.lines().any(|l| l == "/sbin/flotilla"), "{listed}");
    verified(&root);
    ok(&mut dpkg(&root, &["--purge", "flotilla"]));
    assert!(!root.join("sbin/flotilla").exists());
    verified(&root);
}
