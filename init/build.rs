//! Link settings of the init package's programs.

use std::fmt::Write as _;

fn main() -> std::io::Result<()> {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=pid1-hot.txt");
    // The static build is the one PID 1 runs (docs/pid1.md); a glibc build
    // is left as it is, since the first setting below would need glibc
    // 2.36 where it runs.
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os == "linux" && env == "musl" {
        // Its relative relocations packed (DT_RELR; GNU ld 2.38 and
        // later): the table its start-up code applies is 2 KB rather than
        // 130 KB, pages PID 1 would keep mapped for life
        // (docs/performance.md, "Init memory"). musl's start-up reads the
        // packed form from 1.2.4 (Rust's musl target ships 1.2.5).
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
        // The code PID 1 runs first and together, so that the kernel's 64
        // KiB windows around the code that runs hold little else
        // (pid1-hot.txt).
        let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default();
        let out = std::env::var("OUT_DIR").unwrap_or_default();
        let hot = format!("{out}/pid1-hot.ld");
        let list = std::fs::read_to_string(format!("{dir}/pid1-hot.txt"))?;
        std::fs::write(&hot, hot_script(&list))?;
        println!("cargo:rustc-link-arg-bins=-Wl,-T,{hot}");
    }
    Ok(())
}

/// A GNU ld script gathering the functions `list` names (one symbol per
/// line, `*` standing for any text, `#` starting a comment) in a section
/// before the rest of the text, with what the profile that wrote the list
/// does not see: the C library (PID 1 runs its allocator and system calls
/// all the time), the start-up code and `main`.
fn hot_script(list: &str) -> String {
    let mut s = String::from("/* Written by init/build.rs from init/pid1-hot.txt. */\n");
    s.push_str("SECTIONS\n{\n  .text.hot_in_pid1 :\n  {\n");
    s.push_str("    *libc.a:*(.text .text.*)\n");
    s.push_str("    *rcrt1.o(.text .text.*)\n");
    s.push_str("    *(.text.main)\n");
    for name in list.lines().map(str::trim) {
        if name.is_empty() || name.starts_with('#') {
            continue;
        }
        // LTO's copies of a local function are "<name>.<n>".
        let _ = writeln!(s, "    *(.text.{name} .text.{name}.*)");
    }
    s.push_str("  }\n}\nINSERT BEFORE .text;\n");
    s
}
