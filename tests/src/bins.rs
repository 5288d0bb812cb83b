//! Where the workspace's binaries are.
//!
//! A test executable lives in `<target>/<profile>/deps/`; the binaries of the
//! same build are in `<target>/<profile>/`. Finding them from the test's own
//! path honours `CARGO_TARGET_DIR`, `--target` and the profile without
//! reading any of them. `FLOTILLA_BIN_DIR` overrides the directory (to test
//! installed binaries, used as they are). The README's test command builds
//! the whole workspace first; a binary that is still missing, or older than
//! its sources, is built here with `cargo build -p PACKAGE --bin NAME` into
//! the same target dir.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::time::SystemTime;

/// The directory holding the built binaries.
pub fn bin_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("FLOTILLA_BIN_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(d);
    }
    let exe = std::env::current_exe().expect("current_exe");
    let deps = exe.parent().expect("deps dir");
    deps.parent().expect("profile dir").to_path_buf()
}

/// The binary `name` of `package` (whose crate is `crate_dir` in the
/// workspace), built when it is missing or older than its sources, once
/// per test process: `cargo test -p flotilla-tests` alone does not build
/// other packages' binaries, and a stale one would test old code.
pub fn bin(name: &str, package: &str, crate_dir: &str) -> PathBuf {
    static BUILT: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let p = bin_dir().join(name);
    if std::env::var_os("FLOTILLA_BIN_DIR").is_some() {
        return p;
    }
    let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    if built.iter().any(|b| b == name) {
        return p;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf();
    let newest = [
        root.join(crate_dir).join("src"),
        root.join(crate_dir).join("Cargo.toml"),
        root.join("units/src"),
        root.join("units/Cargo.toml"),
        root.join("Cargo.lock"),
    ]
    .iter()
    .filter_map(|p| newest_mtime(p))
    .max();
    let fresh = match (std::fs::metadata(&p).and_then(|m| m.modified()), newest) {
        (Ok(b), Some(n)) => b >= n,
        (Ok(_), None) => true,
        (Err(_), _) => false,
    };
    if !fresh {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let profile_dir = bin_dir();
        let target = profile_dir.parent().expect("target dir").to_path_buf();
        let mut cmd = Command::new(cargo);
        cmd.args(["build", "-p", package, "--bin", name, "--target-dir"])
            .arg(&target)
            .current_dir(&root);
        if profile_dir.file_name().is_some_and(|n| n == "release") {
            cmd.arg("--release");
        }
        let st = cmd.status().expect("run cargo build");
        assert!(st.success(), "building {name} failed");
    }
    built.push(name.to_string());
    p
}

/// The newest modification time of a file, or of the files under a
/// directory (`target` directories are skipped).
fn newest_mtime(p: &Path) -> Option<SystemTime> {
    let m = std::fs::metadata(p).ok()?;
    if !m.is_dir() {
        return m.modified().ok();
    }
    std::fs::read_dir(p)
        .ok()?
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name() != "target")
        .filter_map(|e| newest_mtime(&e.path()))
        .max()
}

/// The `init` binary.
pub fn init() -> PathBuf {
    bin("init", "flotilla-init", "init")
}

/// The `initctl` binary.
pub fn initctl() -> PathBuf {
    bin("initctl", "flotilla-ctl", "ctl")
}

/// The `flotilla-busd` binary (systemd's D-Bus interface).
pub fn busd() -> PathBuf {
    bin("flotilla-busd", "flotilla-bus", "bus")
}

/// The `flotilla-pam` binary (the PAM session of `PAMName=`).
pub fn pam() -> PathBuf {
    bin("flotilla-pam", "flotilla-pam", "pam")
}

/// The `flotilla-logd` binary (the log writer).
pub fn logd() -> PathBuf {
    bin("flotilla-logd", "flotilla-logd", "logd")
}

/// The directory of the static programs as the images ship them
/// (`contrib/build-static`: init, initctl, flotilla-logd, flotilla-busd,
/// musl, release), built into `<target>/image-build`, the target
/// directory every image's build shares (scripts/test builds it there
/// beside the first tests), once per test process.
pub fn static_dir() -> PathBuf {
    static DIR: Mutex<Option<PathBuf>> = Mutex::new(None);
    let mut dir = DIR.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(d) = &*dir {
        return d.clone();
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root");
    let target = bin_dir().parent().expect("target dir").to_path_buf();
    let out = Command::new(root.join("contrib/build-static"))
        .env("CARGO_TARGET_DIR", target.join("image-build"))
        .stderr(std::process::Stdio::inherit())
        .output()
        .expect("run contrib/build-static");
    assert!(out.status.success(), "contrib/build-static failed");
    let text = String::from_utf8_lossy(&out.stdout);
    let d = PathBuf::from(text.lines().last().expect("the binaries' directory").trim());
    *dir = Some(d.clone());
    d
}

/// Puts an executable copy of `from` at `to` with `mode`, written by an
/// `install` child rather than by the test process: a file this process
/// writes stays open for writing in any child another test thread forks
/// meanwhile (until that child execs), and executing it then fails with
/// ETXTBSY. A file that is already there is replaced by a rename, as an
/// upgrade replaces a running binary.
pub fn install(from: &Path, to: &Path, mode: u32) {
    let new = to.with_extension("installing");
    let out = Command::new("install")
        .arg("-m")
        .arg(format!("{mode:o}"))
        .arg(from)
        .arg(&new)
        .output()
        .expect("run install");
    assert!(
        out.status.success(),
        "install {} {}: {}",
        from.display(),
        new.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::rename(&new, to).expect("rename the installed file");
}
