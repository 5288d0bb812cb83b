//! What the chaos soaks (`tests/tests/chaos.rs`, `chaos_cluster.rs`)
//! share: a seeded RNG to pick actions, and their settings from the
//! environment (`docs/chaos.md`).

use std::time::Duration;

/// SplitMix64: small, seeded, good enough to pick actions.
pub struct Rng(u64);

impl Rng {
    /// An RNG that gives the same numbers for the same seed.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next number.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

/// How long the chaos lasts: `FLOTILLA_CHAOS_SECS`, else `default`.
pub fn duration(default: u64) -> Duration {
    let secs = std::env::var("FLOTILLA_CHAOS_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default);
    Duration::from_secs(secs)
}

/// The seed: `FLOTILLA_CHAOS_SEED`, else from the clock. Printed, with
/// how to replay it, under `name`.
pub fn seed(name: &str) -> u64 {
    let seed = std::env::var("FLOTILLA_CHAOS_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| d.as_nanos() as u64)
        });
    eprintln!("{name}: seed {seed} (FLOTILLA_CHAOS_SEED={seed} replays it)");
    seed
}
