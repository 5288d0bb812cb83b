//! A machine given as data, for checking conditions where the real one
//! must not be asked: the init's fake OS layer and the planner's tests.
//! Everything is what its fields say; a path not listed does not exist.

use super::{fnmatch, ConditionFacts, UpdateStamps};

/// What a listed path is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScriptedPath {
    /// A regular file with content.
    File,
    /// An empty regular file.
    EmptyFile,
    /// An executable regular file with content.
    Executable,
    /// An empty directory.
    Dir,
    /// A directory with entries.
    FullDir,
    /// A symbolic link.
    Symlink,
    /// A mount point (a directory).
    MountPoint,
    /// A file on a read-only file system.
    ReadOnly,
}

/// A scripted machine: see the module documentation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptedFacts {
    /// The paths that exist.
    pub paths: Vec<(String, ScriptedPath)>,
    /// `systemd-detect-virt`'s answer (`None`: bare metal).
    pub virtualization: Option<String>,
    /// In a user namespace.
    pub private_users: bool,
    /// `/proc/cmdline`.
    pub kernel_command_line: String,
    /// `uname -r`.
    pub kernel_release: String,
    /// systemd's architecture name.
    pub architecture: String,
    /// The host name.
    pub hostname: String,
    /// The machine ID.
    pub machine_id: String,
    /// The capabilities in the bounding set (`CAP_NET_ADMIN`).
    pub capabilities: Vec<String>,
    /// The manager's environment.
    pub environment: Vec<(String, String)>,
}

impl Default for ScriptedFacts {
    /// A root container on x86-64 with every capability named here, and
    /// no paths.
    fn default() -> ScriptedFacts {
        ScriptedFacts {
            paths: Vec::new(),
            virtualization: Some("docker".to_string()),
            private_users: false,
            kernel_command_line: "quiet".to_string(),
            kernel_release: "6.1.0".to_string(),
            architecture: "x86-64".to_string(),
            hostname: "localhost".to_string(),
            machine_id: "0".repeat(32),
            capabilities: vec!["CAP_SYS_ADMIN".to_string(), "CAP_NET_ADMIN".to_string()],
            environment: Vec::new(),
        }
    }
}

impl ScriptedFacts {
    /// Adds a path of kind `kind`.
    pub fn with_path(mut self, path: &str, kind: ScriptedPath) -> ScriptedFacts {
        self.paths.push((path.to_string(), kind));
        self
    }

    fn kind(&self, path: &str) -> Option<ScriptedPath> {
        self.paths.iter().find(|(p, _)| p == path).map(|(_, k)| *k)
    }

    fn is(&self, path: &str, kinds: &[ScriptedPath]) -> Result<bool, String> {
        Ok(self.kind(path).is_some_and(|k| kinds.contains(&k)))
    }
}

impl ConditionFacts for ScriptedFacts {
    fn path_exists(&self, path: &str) -> Result<bool, String> {
        Ok(self.kind(path).is_some())
    }
    fn glob_matches(&self, pattern: &str) -> Result<bool, String> {
        Ok(self.paths.iter().any(|(p, _)| fnmatch(pattern, p)))
    }
    fn is_directory(&self, path: &str) -> Result<bool, String> {
        use ScriptedPath as K;
        self.is(path, &[K::Dir, K::FullDir, K::MountPoint])
    }
    fn is_symlink(&self, path: &str) -> Result<bool, String> {
        self.is(path, &[ScriptedPath::Symlink])
    }
    fn is_mount_point(&self, path: &str) -> Result<bool, String> {
        self.is(path, &[ScriptedPath::MountPoint])
    }
    fn is_read_write(&self, path: &str) -> Result<bool, String> {
        Ok(self.kind(path).is_some_and(|k| k != ScriptedPath::ReadOnly))
    }
    fn directory_not_empty(&self, path: &str) -> Result<bool, String> {
        self.is(path, &[ScriptedPath::FullDir])
    }
    fn file_not_empty(&self, path: &str) -> Result<bool, String> {
        use ScriptedPath as K;
        self.is(path, &[K::File, K::Executable, K::ReadOnly])
    }
    fn file_is_executable(&self, path: &str) -> Result<bool, String> {
        self.is(path, &[ScriptedPath::Executable])
    }
    fn virtualization(&self) -> Option<String> {
        self.virtualization.clone()
    }

    fn in_user_namespace(&self) -> bool {
        self.private_users
    }
    fn kernel_command_line(&self) -> String {
        self.kernel_command_line.clone()
    }
    fn kernel_release(&self) -> String {
        self.kernel_release.clone()
    }
    fn architecture(&self) -> String {
        self.architecture.clone()
    }
    fn hostname(&self) -> String {
        self.hostname.clone()
    }
    fn machine_id(&self) -> String {
        self.machine_id.clone()
    }
    fn has_capability(&self, name: &str) -> bool {
        self.capabilities.iter().any(|c| c == name)
    }
    fn on_ac_power(&self) -> bool {
        true
    }
    fn security(&self, _name: &str) -> bool {
        false
    }
    fn first_boot(&self) -> bool {
        false
    }
    /// No stamps: a directory listed read-only needs no update, any other
    /// does (its `.updated` is missing), as systemd decides.
    fn update_stamps(&self, dir: &str) -> UpdateStamps {
        UpdateStamps {
            read_only: self.kind(dir) == Some(ScriptedPath::ReadOnly),
            ..UpdateStamps::default()
        }
    }
    fn environment(&self) -> Vec<(String, String)> {
        self.environment.clone()
    }
    fn user(&self) -> (u32, String) {
        (0, "root".to_string())
    }
    fn groups(&self) -> Vec<(u32, String)> {
        vec![(0, "root".to_string())]
    }
    fn cgroup(&self) -> (Vec<String>, u8) {
        (Vec::new(), 2)
    }
    fn has_credential(&self, _name: &str) -> bool {
        false
    }
    fn os_release(&self, key: &str) -> Option<String> {
        match key {
            "ID" => Some("debian".to_string()),
            _ => None,
        }
    }
}
