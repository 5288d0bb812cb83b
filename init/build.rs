//! Link settings of the init package's programs.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=pid1-text.ld");
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
        // The code PID 1 never runs after the rest of the text, so that
        // its pages are not resident as neighbours of code it does run
        // (pid1-text.ld says which).
        let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default();
        println!("cargo:rustc-link-arg-bins=-Wl,-T,{dir}/pid1-text.ld");
    }
}
