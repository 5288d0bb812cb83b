//! This host's facts as the kernel gives them (`/proc/sys/kernel`): its
//! name, the ID of its boot, its kernel's release. Each is read when asked
//! and trimmed; `None` when the file cannot be read or is empty.

/// A file of `/proc/sys/kernel`, trimmed.
fn kernel(name: &str) -> Option<String> {
    std::fs::read_to_string(format!("/proc/sys/kernel/{name}"))
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// The host name.
pub fn hostname() -> Option<String> {
    kernel("hostname")
}

/// The boot ID (`random/boot_id`, with its dashes): a new one at every
/// boot, the same for every process of the host.
pub fn boot_id() -> Option<String> {
    kernel("random/boot_id")
}

/// The kernel's release (`osrelease`).
pub fn kernel_release() -> Option<String> {
    kernel("osrelease")
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn the_boot_id_is_a_uuid_and_read_alike_twice() {
        let id = boot_id().expect("a boot ID");
        assert_eq!(id.len(), 36, "{id}");
        assert_eq!(id.matches('-').count(), 4, "{id}");
        assert_eq!(boot_id(), Some(id));
        assert!(kernel_release().is_some());
    }
}
