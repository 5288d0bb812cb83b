//! PID 1's whole memory, guarded (docs/performance.md, "Init memory with
//! 1000 units running"): the static init as the images ship it
//! (`contrib/build-static`), 1000 `sleep` units running in 10 layers (the
//! shape of `scripts/heap-profile`'s and `bench_sleep`'s graph; the other
//! dependency of each unit is chosen by a formula here, not by their
//! seeded generator), and one `status`
//! request of the whole system answered. The test fails when the init's
//! `VmRSS` then passes [`BUDGET_KIB`]: what grows is mostly the code PID 1
//! touches (`RssFile`), which the per-unit heap budget
//! (`init/tests/memory_budget.rs`) cannot see. Raising the budget is a
//! decision written down in the docs. It fails too when more than
//! [`OUTSIDE_KIB`] of the init's text is resident outside the section of
//! the code PID 1 runs: the list of that code is stale, and
//! `scripts/text-order` makes it again.

use flotilla_tests::init::TestDir;
use flotilla_units::state::UnitState;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use std::process::Command;

/// The most the init may hold resident with the 1000 running, after a
/// status request, in KiB: 4 MiB, the goal, met on 2026-11-28 with
/// `init/pid1-hot.txt` made afresh by `scripts/text-order` for the build
/// the images ship (3,892 KiB; 4,344–4,360 KiB with the list stale or
/// fitted to a build of the init alone). docs/performance.md says what
/// lowers it when it fails.
const BUDGET_KIB: u64 = 4096;

/// The most of the init's text that may be resident outside the section
/// of the code PID 1 runs (`init/pid1-hot.txt`), in KiB: with the list
/// made afresh, 204 KiB on 2026-11-28 (the windows around the start-up's
/// code and what the list cannot gather), 236 KiB once main's next merges
/// joined; with it stale, 652–724 KiB. Each function PID 1 runs that the
/// list misses costs up to a 64 KiB window, so this fails at the second
/// new one, before VmRSS passes its budget.
const OUTSIDE_KIB: u64 = 320;

const LAYERS: usize = 10;
const WIDTH: usize = 100;

/// `VmRSS`, `RssAnon` and `RssFile` of `pid`, in KiB.
fn rss(pid: i32) -> [u64; 3] {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("status");
    ["VmRSS:", "RssAnon:", "RssFile:"].map(|key| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.trim().trim_end_matches(" kB").parse().ok())
            .unwrap_or_else(|| panic!("{key} in /proc/{pid}/status"))
    })
}

/// A hexadecimal field of `readelf` or `/proc/PID/maps`.
fn hex(w: &str) -> u64 {
    u64::from_str_radix(w, 16).unwrap_or_else(|_| panic!("{w}: not hexadecimal"))
}

/// The section `init/build.rs` gathers the functions of
/// `init/pid1-hot.txt` in: its file offset and size, as `readelf -S`
/// prints them.
fn hot_section(exe: &Path) -> (u64, u64) {
    let out = Command::new("readelf")
        .arg("-SW")
        .arg(exe)
        .output()
        .expect("run readelf");
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.contains(" .text.hot_in_pid1 "))
        .unwrap_or_else(|| panic!("no .text.hot_in_pid1 in {}:\n{text}", exe.display()));
    // "[Nr] Name Type Address Off Size ...": the two after the address.
    let words: Vec<&str> = line.split_whitespace().collect();
    let at = words
        .iter()
        .position(|w| *w == "PROGBITS")
        .expect("its type");
    (hex(words[at + 2]), hex(words[at + 3]))
}

/// The KiB of `exe`'s text that `pid` has resident outside the gathered
/// section: the 64 KiB windows the kernel maps around code PID 1 ran that
/// the list does not name (each page's present bit from
/// `/proc/PID/pagemap`, which any reader of the process may see).
fn text_outside_hot(pid: i32, exe: &Path) -> u64 {
    let (start, size) = hot_section(exe);
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).expect("maps");
    let mut pagemap = std::fs::File::open(format!("/proc/{pid}/pagemap")).expect("pagemap");
    let mut kib = 0;
    for m in maps.lines() {
        // "lo-hi perms offset dev inode path"
        let f: Vec<&str> = m.split_whitespace().collect();
        if f.len() < 6 || !f[1].contains('x') || Path::new(f[5]) != exe {
            continue;
        }
        let (lo, hi) = f[0].split_once('-').expect("a range");
        let (lo, hi, offset) = (hex(lo), hex(hi), hex(f[2]));
        for va in (lo..hi).step_by(4096) {
            let mut entry = [0u8; 8];
            pagemap.seek(SeekFrom::Start(va / 4096 * 8)).expect("seek");
            pagemap.read_exact(&mut entry).expect("a pagemap entry");
            let in_hot = (start..start + size).contains(&(offset + va - lo));
            if u64::from_le_bytes(entry) >> 63 == 1 && !in_hot {
                kib += 4;
            }
        }
    }
    kib
}

fn show([vm, anon, file]: [u64; 3]) -> String {
    format!("VmRSS {vm} KiB (RssAnon {anon} KiB, RssFile {file} KiB)")
}

/// The graph: unit `l<L>-<NN>` of layer L > 0 depends on the unit of its
/// own number in layer L-1 and on another one; `all` on layer 9, `idle`
/// on nothing.
fn write_units(dir: &TestDir) {
    for layer in 0..LAYERS {
        for i in 0..WIDTH {
            let mut u = format!(
                "unit: l{layer}-{i:02}\nexec-start: /usr/bin/sleep 3600\nrestart-delay: 0s\n"
            );
            if layer > 0 {
                let other = (i * 37 + layer * 11) % WIDTH;
                u += &format!(
                    "depends-on: [l{}-{i:02}, l{}-{other:02}]\n",
                    layer - 1,
                    layer - 1
                );
            }
            dir.unit(&format!("l{layer}-{i:02}"), &u);
        }
    }
    let top: Vec<String> = (0..WIDTH)
        .map(|i| format!("l{}-{i:02}", LAYERS - 1))
        .collect();
    dir.unit(
        "all",
        &format!(
            "unit: all\ntype: virtual\ndepends-on: [{}]\n",
            top.join(", ")
        ),
    );
    dir.unit("idle", "unit: idle\ntype: virtual\n");
}

#[test]
fn the_static_init_stays_within_its_memory_budget_with_1000_units_running() {
    let init_bin = flotilla_tests::bins::static_dir().join("init");
    let init_bin = init_bin.canonicalize().expect("the static init");
    let dir = TestDir::new();
    write_units(&dir);
    let init = dir
        .init()
        .binary(init_bin.clone())
        .target("idle")
        .no_log_dir()
        .start();
    let idle = rss(init.pid);
    // `set-target --wait` answers once the system has settled; then one
    // status request, which also says that all 1000 run.
    init.ctl(&["set-target", "all", "--wait"]).expect(0);
    let before = rss(init.pid);
    let st = init.status();
    let after = rss(init.pid);
    let running = st
        .units
        .iter()
        .filter(|u| u.unit.starts_with('l') && u.state == UnitState::Running)
        .count();
    assert!(
        st.target == "all" && st.target_state == UnitState::Running && running == LAYERS * WIDTH,
        "not all 1000 running after set-target --wait ({running}):\n{}\n{}",
        flotilla_tests::init::describe(&st),
        init.output()
    );
    let outside = text_outside_hot(init.pid, &init_bin);
    eprintln!(
        "init memory, static build: idle {}; 1000 running {}; after a status {}; \
         text resident outside .text.hot_in_pid1 {outside} KiB",
        show(idle),
        show(before),
        show(after)
    );
    assert!(
        after[0] <= BUDGET_KIB,
        "PID 1 holds {} with 1000 units running after a status request, over its budget of \
         {BUDGET_KIB} KiB, {outside} KiB of its text resident outside the list of the code it \
         runs: run scripts/text-order, then look at what grew (docs/performance.md, \"Init \
         memory with 1000 units running\")",
        show(after)
    );
    assert!(
        outside <= OUTSIDE_KIB,
        "PID 1 has {outside} KiB of its text resident outside .text.hot_in_pid1 (at most \
         {OUTSIDE_KIB} KiB): it runs code init/pid1-hot.txt does not name; run scripts/text-order \
         (docs/performance.md, \"Init memory with 1000 units running\"); {}",
        show(after)
    );
}
