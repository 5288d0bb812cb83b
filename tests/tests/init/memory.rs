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
//! decision written down in the docs.

use flotilla_tests::init::TestDir;
use flotilla_units::state::UnitState;

/// The most the init may hold resident with the 1000 running, after a
/// status request, in KiB: 4.5 MiB today. The goal is 4 MiB, which the
/// init met (4,032 KiB) with its list of hot code made afresh, before the
/// code of `BindPaths=`, the locale and the new keys joined PID 1's path
/// outside that list (4,360 KiB); docs/performance.md says what lowers it
/// again.
const BUDGET_KIB: u64 = 4608;

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
    let dir = TestDir::new();
    write_units(&dir);
    let init = dir
        .init()
        .binary(init_bin)
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
    eprintln!(
        "init memory, static build: idle {}; 1000 running {}; after a status {}",
        show(idle),
        show(before),
        show(after)
    );
    assert!(
        after[0] <= BUDGET_KIB,
        "PID 1 holds {} with 1000 units running after a status request, over its budget of \
         {BUDGET_KIB} KiB (docs/performance.md, \"Init memory with 1000 units running\")",
        show(after)
    );
}
