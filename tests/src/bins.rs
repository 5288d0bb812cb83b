//! Where the workspace's binaries are.
//!
//! A test executable lives in `<target>/<profile>/deps/`; the binaries of the
//! same build are in `<target>/<profile>/`. Finding them from the test's own
//! path honours `CARGO_TARGET_DIR`, `--target` and the profile without
//! reading any of them. `FLOTILLA_BIN_DIR` overrides the directory (to test
//! installed binaries). The README's test command builds the whole
//! workspace first; a binary that is still missing is built here with
//! `cargo build -p PACKAGE --bin NAME` into the same target dir.

use std::path::PathBuf;
use std::process::Command;
use std::sync::Mutex;

/// The directory holding the built binaries.
pub fn bin_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("FLOTILLA_BIN_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(d);
    }
    let exe = std::env::current_exe().expect("current_exe");
    let deps = exe.parent().expect("deps dir");
    deps.parent().expect("profile dir").to_path_buf()
}

/// The binary `name` of `package`, built when it is missing.
pub fn bin(name: &str, package: &str) -> PathBuf {
    static BUILD: Mutex<()> = Mutex::new(());
    let p = bin_dir().join(name);
    if p.exists() {
        return p;
    }
    let _guard = BUILD.lock().unwrap_or_else(|e| e.into_inner());
    if !p.exists() {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let profile_dir = bin_dir();
        let target = profile_dir.parent().expect("target dir").to_path_buf();
        let mut cmd = Command::new(cargo);
        cmd.args(["build", "-p", package, "--bin", name, "--target-dir"])
            .arg(&target);
        if profile_dir.file_name().is_some_and(|n| n == "release") {
            cmd.arg("--release");
        }
        let st = cmd.status().expect("run cargo build");
        assert!(st.success(), "building {name} failed");
    }
    p
}

/// The `init` binary.
pub fn init() -> PathBuf {
    bin("init", "flotilla-init")
}

/// The `initctl` binary.
pub fn initctl() -> PathBuf {
    bin("initctl", "flotilla-ctl")
}
