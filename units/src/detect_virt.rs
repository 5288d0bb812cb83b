//! systemd-detect-virt's answer for containers (`detect_container()` of
//! systemd's `src/basic/virt.c`), as a function of what the caller read
//! from the running system ([`ContainerSigns`]): the order of the checks
//! and the spelling of the names are systemd's, so that
//! `ConditionVirtualization=` skips in a container exactly the units that
//! systemd skips there.
//!
//! The order matters: a file that a container manager leaves
//! (`/run/.containerenv`, `/.dockerenv`) can end up in an image by
//! accident, so it counts only after what a manager says on purpose
//! (`/run/host/container-manager`, the `container=` variable of PID 1).

/// What the running system shows, read by the caller (the init: `/proc`,
/// `/run`, its own environment).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ContainerSigns {
    /// `/proc/vz` exists and `/proc/bc` does not (OpenVZ, inside).
    pub openvz: bool,
    /// `/proc/sys/kernel/osrelease`.
    pub os_release: String,
    /// The name (`comm`) of the process tracing this one, if any.
    pub tracer: Option<String>,
    /// The first line of `/run/host/container-manager`, if not empty.
    pub host_container_manager: Option<String>,
    /// The reader is PID 1: its own `container` variable is authoritative.
    pub pid1: bool,
    /// The reader's own `container` variable (read when [`pid1`]):
    /// `Some("")` is set but empty, which means "no container".
    ///
    /// [`pid1`]: ContainerSigns::pid1
    pub own_container_env: Option<String>,
    /// The first line of `/run/systemd/container`, if not empty (what a
    /// systemd PID 1 writes there for the others).
    pub run_systemd_container: Option<String>,
    /// `container=` in `/proc/1/environ`, if set and readable.
    pub pid1_container_env: Option<String>,
    /// `/run/.containerenv` exists (podman).
    pub containerenv: bool,
    /// `/.dockerenv` exists (docker).
    pub dockerenv: bool,
    /// In a cgroup namespace of its own (systemd's `running_in_cgroupns()`).
    pub cgroupns: bool,
}

/// The container names systemd knows; any other is `container-other`.
pub const CONTAINER_NAMES: [&str; 11] = [
    "openvz",
    "lxc",
    "lxc-libvirt",
    "systemd-nspawn",
    "docker",
    "podman",
    "rkt",
    "wsl",
    "proot",
    "pouch",
    "container-other",
];

/// The container detected, by systemd-detect-virt's name; `None`: not in
/// a container (a VM may still be detected by other means).
pub fn detect_container(s: &ContainerSigns) -> Option<String> {
    if s.openvz {
        return Some("openvz".into());
    }
    if s.os_release.contains("Microsoft") || s.os_release.contains("WSL") {
        return Some("wsl".into());
    }
    if s.tracer.as_deref().is_some_and(|c| c.starts_with("proot")) {
        return Some("proot".into());
    }
    if let Some(m) = &s.host_container_manager {
        return Some(translate(m, s));
    }
    if s.pid1 {
        match s.own_container_env.as_deref() {
            Some("") => return None,
            Some(v) => return Some(translate(v, s)),
            None => return files(s).or_else(|| s.cgroupns.then(|| "container-other".into())),
        }
    }
    if let Some(v) = s
        .run_systemd_container
        .as_ref()
        .or(s.pid1_container_env.as_ref())
    {
        if !v.is_empty() {
            return Some(translate(v, s));
        }
    }
    files(s).or_else(|| s.cgroupns.then(|| "container-other".into()))
}

/// The marker files: podman's first, docker's last.
fn files(s: &ContainerSigns) -> Option<String> {
    if s.containerenv {
        Some("podman".into())
    } else if s.dockerenv {
        Some("docker".into())
    } else {
        None
    }
}

/// A manager's name as systemd spells it: `oci` (which names no manager)
/// by the marker files, an unknown one `container-other`.
fn translate(name: &str, s: &ContainerSigns) -> String {
    let name = name.trim();
    if name == "oci" {
        return files(s).unwrap_or_else(|| "container-other".into());
    }
    if CONTAINER_NAMES.contains(&name) {
        name.to_string()
    } else {
        "container-other".into()
    }
}

/// The hypervisor that the firmware's DMI names (`sys_vendor` and
/// `product_name` of `/sys/class/dmi/id`), by systemd-detect-virt's name;
/// `None`: none it knows (the CPU's `hypervisor` flag may still say
/// `vm-other`).
pub fn vm_of_dmi(vendor: &str, product: &str) -> Option<&'static str> {
    const KNOWN: [(&str, &str); 12] = [
        ("KVM", "kvm"),
        ("QEMU", "qemu"),
        ("VMware", "vmware"),
        ("VMW", "vmware"),
        ("innotek GmbH", "oracle"),
        ("VirtualBox", "oracle"),
        ("Xen", "xen"),
        ("Bochs", "bochs"),
        ("Parallels", "parallels"),
        ("BHYVE", "bhyve"),
        ("Amazon EC2", "amazon"),
        ("Google Compute Engine", "google"),
    ];
    let (vendor, product) = (vendor.trim_start(), product.trim_start());
    if let Some((_, name)) = KNOWN
        .iter()
        .find(|(mark, _)| product.starts_with(mark) || vendor.starts_with(mark))
    {
        return Some(name);
    }
    (vendor.starts_with("Microsoft Corporation") && product.contains("Virtual Machine"))
        .then_some("microsoft")
}

/// systemd's `running_in_userns()` from the contents of
/// `/proc/self/uid_map`, `gid_map` and `setgroups` (`None`: not there): a
/// user namespace unless both maps are the full identity; with both
/// full, one whose `setgroups` says `deny`.
pub fn in_user_namespace(
    uid_map: Option<&str>,
    gid_map: Option<&str>,
    setgroups: Option<&str>,
) -> bool {
    // An empty map is a namespace not set up yet; a missing file, a
    // kernel without user namespaces.
    let mapped = |m: Option<&str>| {
        m.is_some_and(|m| {
            let f: Vec<&str> = m.split_whitespace().collect();
            f.as_slice() != ["0", "0", "4294967295"]
        })
    };
    mapped(uid_map) || mapped(gid_map) || setgroups.is_some_and(|s| s.trim() == "deny")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_firmware_names_the_hypervisor() {
        assert_eq!(
            vm_of_dmi("QEMU\n", "Standard PC (i440FX + PIIX, 1996)\n"),
            Some("qemu")
        );
        assert_eq!(vm_of_dmi("Amazon EC2\n", "m5.large\n"), Some("amazon"));
        assert_eq!(vm_of_dmi("Red Hat\n", "KVM\n"), Some("kvm"));
        assert_eq!(
            vm_of_dmi("Microsoft Corporation\n", "Virtual Machine\n"),
            Some("microsoft")
        );
        assert_eq!(vm_of_dmi("Microsoft Corporation\n", "Surface Pro\n"), None);
        assert_eq!(vm_of_dmi("Dell Inc.\n", "PowerEdge R640\n"), None);
        assert_eq!(vm_of_dmi("", ""), None);
    }

    fn podman() -> ContainerSigns {
        ContainerSigns {
            os_release: "6.1.0-13-amd64".into(),
            containerenv: true,
            ..ContainerSigns::default()
        }
    }

    #[test]
    fn podman_pid1_by_its_variable_and_others_by_the_marker_file() {
        let mut s = podman();
        s.pid1 = true;
        s.own_container_env = Some("podman".into());
        assert_eq!(detect_container(&s).as_deref(), Some("podman"));
        // A process that is not PID 1 and cannot read /proc/1/environ.
        s.pid1 = false;
        assert_eq!(detect_container(&s).as_deref(), Some("podman"));
        // Podman's file wins over docker's, which an image may carry.
        s.dockerenv = true;
        assert_eq!(detect_container(&s).as_deref(), Some("podman"));
        s.containerenv = false;
        assert_eq!(detect_container(&s).as_deref(), Some("docker"));
    }

    #[test]
    fn pid1_takes_its_own_variable_as_the_answer() {
        let mut s = podman();
        s.pid1 = true;
        // Set but empty: no container, whatever the files say.
        s.own_container_env = Some(String::new());
        assert_eq!(detect_container(&s), None);
        s.own_container_env = Some("lxc".into());
        assert_eq!(detect_container(&s).as_deref(), Some("lxc"));
        // Not set: the files.
        s.own_container_env = None;
        assert_eq!(detect_container(&s).as_deref(), Some("podman"));
    }

    #[test]
    fn names_are_translated_as_systemd_does() {
        let mut s = ContainerSigns {
            pid1_container_env: Some("oci".into()),
            ..ContainerSigns::default()
        };
        assert_eq!(detect_container(&s).as_deref(), Some("container-other"));
        s.dockerenv = true;
        assert_eq!(detect_container(&s).as_deref(), Some("docker"));
        s.pid1_container_env = Some("garden".into());
        assert_eq!(detect_container(&s).as_deref(), Some("container-other"));
        // /run/systemd/container before PID 1's environment.
        s.run_systemd_container = Some("systemd-nspawn".into());
        assert_eq!(detect_container(&s).as_deref(), Some("systemd-nspawn"));
        // /run/host/container-manager before anything but the kernel's signs.
        s.host_container_manager = Some("podman\n".into());
        assert_eq!(detect_container(&s).as_deref(), Some("podman"));
        s.os_release = "5.15.90.1-microsoft-standard-WSL2".into();
        assert_eq!(detect_container(&s).as_deref(), Some("wsl"));
        s.openvz = true;
        assert_eq!(detect_container(&s).as_deref(), Some("openvz"));
    }

    #[test]
    fn a_cgroup_namespace_alone_is_some_container() {
        let mut s = ContainerSigns::default();
        assert_eq!(detect_container(&s), None);
        s.tracer = Some("gdb".into());
        assert_eq!(detect_container(&s), None);
        s.cgroupns = true;
        assert_eq!(detect_container(&s).as_deref(), Some("container-other"));
        s.tracer = Some("proot".into());
        assert_eq!(detect_container(&s).as_deref(), Some("proot"));
    }

    #[test]
    fn user_namespace_from_the_maps() {
        let full = "         0          0 4294967295\n";
        assert!(!in_user_namespace(Some(full), Some(full), Some("allow\n")));
        assert!(!in_user_namespace(None, None, None));
        assert!(in_user_namespace(Some(full), Some(full), Some("deny\n")));
        let rootless = "         0       1000          1\n         1     100000      65536\n";
        assert!(in_user_namespace(Some(rootless), Some(full), None));
        assert!(in_user_namespace(Some(""), Some(full), None));
    }
}
