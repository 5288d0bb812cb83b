//! The init's memory budget (`docs/performance.md`, "Memory budget"): the
//! heap the loop keeps per loaded unit and per running unit, counted by a
//! global allocator (every byte allocated and not freed), on the fake
//! system: deterministic, no timer. 1000 `sleep` units in 10 layers (each
//! depends on one of the layer before), loaded with a target that needs
//! none of them, then a target that needs all of them, each running, and
//! one `status` request answered. The test fails when a figure passes its
//! budget; raising a budget is a decision written down in the docs.
//!
//! What is counted besides the init's own heap: the fake's record of each
//! child it spawned (its PID and the write ends of its pipes, a few dozen
//! bytes), and nothing of the unit files, which the fake holds before the
//! count starts. The calls the fake records are dropped before each count.
#![allow(clippy::panic)]

use flotilla_init::args::Settings;
use flotilla_init::runtime::Runtime;
use flotilla_init::sys::fake::FakeSys;
use flotilla_units::protocol::{Envelope, Request};
use std::alloc::{GlobalAlloc, Layout, System};
use std::io::{Read, Write};
use std::sync::atomic::{AtomicIsize, Ordering};

/// Heap kept per loaded unit (its spec, graph node, planner record, slot),
/// in bytes.
const BUDGET_PER_LOADED_UNIT: isize = 800;
/// Heap kept per running unit on top of it being loaded (its process,
/// pipes, log ring, run record), in bytes.
const BUDGET_PER_RUNNING_UNIT: isize = 740;

const UNITS: usize = 1000;
const LAYER: usize = 100;
const DIR: &str = "/etc/init/units";
const CONTROL: &str = "/run/init/control.sock";

/// Counts the bytes allocated and not yet freed, and the blocks they are
/// in: the allocator adds its own to every block (musl's: a 4-byte header,
/// and the block rounded up to a size class), so a figure for how many a
/// unit keeps is printed beside the bytes.
struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);
static BLOCKS: AtomicIsize = AtomicIsize::new(0);

// SAFETY: every call is passed to the system allocator unchanged; only a
// counter is added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        BLOCKS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        BLOCKS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: as the caller's.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        BLOCKS.fetch_sub(1, Ordering::Relaxed);
        // SAFETY: as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(
            new_size as isize - layout.size() as isize,
            Ordering::Relaxed,
        );
        // SAFETY: as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// The heap kept: bytes, and blocks.
#[derive(Clone, Copy)]
struct Heap {
    bytes: isize,
    blocks: isize,
}

impl std::ops::Sub for Heap {
    type Output = Heap;
    fn sub(self, less: Heap) -> Heap {
        Heap {
            bytes: self.bytes - less.bytes,
            blocks: self.blocks - less.blocks,
        }
    }
}

fn live() -> Heap {
    Heap {
        bytes: LIVE.load(Ordering::Relaxed),
        blocks: BLOCKS.load(Ordering::Relaxed),
    }
}

fn settings(target: &str) -> Settings {
    Settings::new(DIR, target, CONTROL)
}

/// A fake holding `units` sleep units, `idle` (needs none) and `all`
/// (needs every one, through the last layer).
fn fake(units: usize) -> FakeSys {
    let sys = FakeSys::new();
    // The harness's capture of printed console lines is heap too, and
    // depends on how the test is run.
    sys.set_echo(false);
    sys.add_dir(DIR);
    let mut last = Vec::new();
    for i in 0..units {
        let dep = match i.checked_sub(LAYER) {
            Some(d) => format!("depends-on: s{d:04}\n"),
            None => String::new(),
        };
        sys.set_file(
            format!("{DIR}/s{i:04}.yaml"),
            format!("unit: s{i:04}\nexec-start: sleep 100000\n{dep}"),
        );
        if i + LAYER >= units {
            last.push(format!("s{i:04}"));
        }
    }
    sys.set_file(format!("{DIR}/idle.yaml"), "unit: idle\ntype: virtual\n");
    sys.set_file(
        format!("{DIR}/all.yaml"),
        format!(
            "unit: all\ntype: virtual\ndepends-on: [{}]\n",
            last.join(", ")
        ),
    );
    sys
}

/// Turns the loop until it would sleep with nothing due.
fn settle(rt: &mut Runtime<FakeSys>) {
    for _ in 0..100_000 {
        if rt.turn().is_some() || rt.sys().idle() {
            return;
        }
    }
    panic!("the loop never went idle");
}

/// A `status` request answered (its reply read and dropped).
fn status(rt: &mut Runtime<FakeSys>) {
    let mut c = rt.sys().connect_control().unwrap_or_else(|e| panic!("{e}"));
    let mut line = serde_json::to_vec(&Envelope::new(Request::Status { name: None }))
        .unwrap_or_else(|e| panic!("{e}"));
    line.push(b'\n');
    c.write_all(&line).unwrap_or_else(|e| panic!("{e}"));
    c.set_nonblocking(true).unwrap_or_else(|e| panic!("{e}"));
    let mut got = Vec::new();
    let mut chunk = vec![0u8; 65536];
    for _ in 0..10_000 {
        rt.turn();
        while let Ok(n) = c.read(&mut chunk) {
            if n == 0 {
                break;
            }
            got.extend_from_slice(chunk.get(..n).unwrap_or_default());
        }
        if got.ends_with(b"\n") {
            return;
        }
    }
    panic!("no answer to status");
}

/// The heap a loop keeps for `units` units once settled on `target`
/// (after a `status` request when `ask` is set).
fn kept(units: usize, target: &str, ask: bool) -> Heap {
    let sys = fake(units);
    let before = live();
    let mut rt = Runtime::new(sys, settings(target), false).unwrap_or_else(|e| panic!("{e}"));
    settle(&mut rt);
    if ask {
        status(&mut rt);
        settle(&mut rt);
    }
    drop(rt.sys().take_calls());
    drop(rt.sys().take_runs());
    drop(rt.sys().take_console());
    let kept = live() - before;
    rt.close();
    kept
}

#[test]
fn heap_per_loaded_and_per_running_unit_within_budget() {
    // Every unit's environment starts from the init's own, so the figure
    // would follow the shell the test runs from (CI's differs from a
    // developer's): the test's process gets a fixed environment first.
    for (name, _) in std::env::vars_os() {
        std::env::remove_var(name);
    }
    std::env::set_var("PATH", "/usr/bin:/bin");
    let base = kept(0, "idle", false);
    let loaded = kept(UNITS, "idle", false);
    let running = kept(UNITS, "all", true);
    let n = UNITS as isize;
    let per_loaded = (loaded - base).bytes / n;
    let per_running = (running - loaded).bytes / n;
    // Tenths of a block per unit.
    let (blocks_loaded, blocks_running) = (
        (loaded - base).blocks * 10 / n,
        (running - loaded).blocks * 10 / n,
    );
    println!(
        "heap: base {} B; {UNITS} loaded {} B ({per_loaded} B per unit, in {}.{} blocks); \
         running, after a status {} B ({per_running} B more per unit, in {}.{} blocks)",
        base.bytes,
        loaded.bytes,
        blocks_loaded / 10,
        blocks_loaded % 10,
        running.bytes,
        blocks_running / 10,
        blocks_running % 10,
    );
    assert!(
        per_loaded <= BUDGET_PER_LOADED_UNIT,
        "a loaded unit keeps {per_loaded} B of heap, over its budget of \
         {BUDGET_PER_LOADED_UNIT} B (docs/performance.md)"
    );
    assert!(
        per_running <= BUDGET_PER_RUNNING_UNIT,
        "a running unit keeps {per_running} B more, over its budget of \
         {BUDGET_PER_RUNNING_UNIT} B (docs/performance.md)"
    );
}
