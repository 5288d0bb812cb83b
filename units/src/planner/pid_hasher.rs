//! The hasher of the planner's map from PIDs to units.

use std::hash::Hasher;

/// The hasher of the PID map: a PID is a small integer the kernel hands
/// out, not chosen by an attacker, so one multiply (FxHash's) spreads it
/// well enough; SipHash cost more than the rest of a fact's map work.
#[derive(Default)]
pub(super) struct PidHasher(u64);

impl Hasher for PidHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(5) ^ u64::from(b)).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
    }

    fn write_i32(&mut self, n: i32) {
        self.0 =
            (self.0.rotate_left(5) ^ u64::from(n as u32)).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}
