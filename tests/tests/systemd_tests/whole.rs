//! The whole run of systemd's own tests (`SYSTEMD_TESTS_ALL=1`,
//! docs/debian.md, "The whole run"): every `testsuite-NN.service` the
//! package ships, on an image of its own (`contrib/debian/build --with
//! systemd-tests-all`), so that the suite's core, its image and its
//! recorded oracle stay as they are. Under systemd the tests share one
//! boot (a new one only when the guest stops answering): most fail here
//! for want of what a qemu guest has not, and a boot after each failure
//! would cost the run an hour of boots.

use super::guest::{Limit, TEST_LIMIT};
use std::path::Path;
use std::time::Duration;

/// The image's `--with`.
pub const WITH: &str = "systemd-tests-all";

/// Whether this run is the whole one.
pub fn enabled() -> bool {
    std::env::var_os("SYSTEMD_TESTS_ALL").is_some()
}

/// systemd's limit in the whole run: [`TEST_LIMIT`] in all, or three
/// minutes without a new line in the test's journal (as flotilla's,
/// [`super::guest::FLOTILLA_LIMIT`]): a test that waits for what the
/// guest has not (a second disk, a TPM) would otherwise hold the shared
/// boot for its whole ten minutes.
pub const SYSTEMD_LIMIT: Limit = Limit {
    total: TEST_LIMIT,
    quiet: Duration::from_secs(180),
};

/// The package's tests, by number, read from the Debian root `image`
/// was made from (`testsuite-NN.service` in its testdata): those not in
/// `core` first, then `core`'s, so that a run cut short has measured the
/// tests the suite's record lacks.
pub fn tests(image: &Path, core: &[&str]) -> Vec<String> {
    let base = std::fs::read_to_string(image.join("base")).expect("the image's base");
    let units = image
        .parent()
        .expect("the image cache")
        .join(base.trim())
        .join("root/usr/lib/systemd/tests/testdata/units");
    let mut all: Vec<String> = std::fs::read_dir(&units)
        .unwrap_or_else(|e| panic!("read {}: {e}", units.display()))
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let nn = name.strip_prefix("testsuite-")?.strip_suffix(".service")?;
            (nn.len() == 2 && nn.chars().all(|c| c.is_ascii_digit())).then(|| nn.to_string())
        })
        .collect();
    all.sort();
    let (mut rest, in_core): (Vec<String>, Vec<String>) =
        all.into_iter().partition(|t| !core.contains(&t.as_str()));
    rest.extend(in_core);
    rest
}
