//! The ideal starter (`bench_sleep`, `#[path]`-included): the least any
//! init could do to start the benchmark's graph, so that a figure can say
//! how much of a launch is the init's and how much the machine's.
//!
//! Each unit is started as soon as its two providers have exec'd, as the
//! init and dinit start them; nothing else is done. A child is a
//! `clone(CLONE_VM)` without `CLONE_VFORK` (no page tables copied, the
//! starter goes on at once: the init's flying spawn) that calls `setsid`
//! and `execve` and nothing more; its exec is learned as dinit learns it,
//! from the end of a close-on-exec pipe, through epoll. No cgroup, no
//! output pipe, no state, no client: what a unit costs beyond this is the
//! starter's own choice, and what this costs is the machine's.

use std::ffi::{c_char, c_int, c_void, CString};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// A cgroup v2 directory the children's cgroups are made in, removed with
/// them when dropped.
pub struct Cgroups {
    dir: PathBuf,
    fd: OwnedFd,
    made: Vec<CString>,
}

impl Cgroups {
    /// Makes `name` in this process's own cgroup v2, found as the init
    /// finds its own.
    pub fn make(name: &str) -> io::Result<Cgroups> {
        let cgroup = std::fs::read_to_string("/proc/self/cgroup")?;
        let mountinfo = std::fs::read("/proc/self/mountinfo")?;
        let dir = flotilla_init::sys::cgroup::own_cgroup_dir(&cgroup, &mountinfo)
            .map_err(io::Error::other)?
            .join(name);
        std::fs::create_dir(&dir)?;
        let fd = std::fs::File::open(&dir)?.into();
        Ok(Cgroups {
            dir,
            fd,
            made: Vec::new(),
        })
    }

    /// Makes the cgroup `name` below the base; its directory, opened
    /// `O_PATH` (what `CLONE_INTO_CGROUP` takes).
    fn unit(&mut self, name: CString) -> io::Result<OwnedFd> {
        let base = self.fd.as_raw_fd();
        // SAFETY: a valid directory descriptor and C string.
        if unsafe { libc::mkdirat(base, name.as_ptr(), 0o755) } < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: as above.
        let fd = unsafe {
            libc::openat(
                base,
                name.as_ptr(),
                libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC,
            )
        };
        self.made.push(name);
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a new descriptor, owned here.
        Ok(unsafe { OwnedFd::from_raw_fd(fd) })
    }
}

impl Drop for Cgroups {
    /// Removes the children's cgroups (their processes reaped by then)
    /// and the base.
    fn drop(&mut self) {
        for name in &self.made {
            // SAFETY: a valid directory descriptor and C string.
            unsafe { libc::unlinkat(self.fd.as_raw_fd(), name.as_ptr(), libc::AT_REMOVEDIR) };
        }
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// What every child executes, prepared once.
struct Exec {
    path: *const c_char,
    argv: *const *mut c_char,
    envp: *const *mut c_char,
}

/// A child's stack: the child runs on it in the starter's memory until its
/// `execve`, so it is kept until the launch is over.
const STACK: usize = 64 * 1024;

/// The child: a session of its own, then the program. Raw system calls
/// only: it shares the starter's memory.
extern "C" fn child(arg: *mut c_void) -> c_int {
    // SAFETY: `arg` is the `Exec` that `launch` keeps alive until every
    // child has exec'd; the pointers in it are valid C strings and arrays.
    unsafe {
        let e = &*arg.cast::<Exec>();
        libc::syscall(libc::SYS_setsid);
        libc::syscall(libc::SYS_execve, e.path, e.argv, e.envp);
        libc::syscall(libc::SYS_exit, 127);
    }
    127
}

/// One unit of the graph, as the starter tracks it.
struct Unit {
    /// Its providers not yet exec'd.
    waiting: usize,
    /// The units that depend on it.
    dependents: Vec<usize>,
    /// The read end of its child's close-on-exec pipe, once started.
    read: c_int,
}

/// Starts the graph (each unit's providers as indexes into `providers`)
/// and returns the time from the first start to the last exec, with the
/// children's PIDs (running; the caller kills and reaps them).
pub fn launch(
    providers: &[Vec<usize>],
    path: *const c_char,
    argv: *const *mut c_char,
    envp: *const *mut c_char,
    mut cgroups: Option<&mut Cgroups>,
) -> io::Result<(Duration, Vec<libc::pid_t>)> {
    let n = providers.len();
    let mut units: Vec<Unit> = providers
        .iter()
        .map(|ps| Unit {
            waiting: ps.len(),
            dependents: Vec::new(),
            read: -1,
        })
        .collect();
    for (u, ps) in providers.iter().enumerate() {
        for &p in ps {
            if let Some(p) = units.get_mut(p) {
                p.dependents.push(u);
            }
        }
    }
    let exec = Exec { path, argv, envp };
    let mut stacks: Vec<Vec<u8>> = Vec::with_capacity(n);
    let mut pids = Vec::with_capacity(n);
    // SAFETY: epoll_create1(2) has no preconditions.
    let ep = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
    if ep < 0 {
        return Err(io::Error::last_os_error());
    }
    // Starts unit `u`: its child, and the read end of its pipe in epoll.
    let mut start = |u: usize, stacks: &mut Vec<Vec<u8>>, pids: &mut Vec<libc::pid_t>| {
        let mut fds = [0; 2];
        // SAFETY: `fds` has room for the two descriptors.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } < 0 {
            return Err(io::Error::last_os_error());
        }
        let [read, write] = fds;
        let mut stack = vec![0u8; STACK];
        let arg = std::ptr::from_ref(&exec).cast_mut().cast();
        let pid = match cgroups.as_deref_mut() {
            None => {
                // SAFETY: the stack grows down from its end, which is
                // 16-byte aligned below; `child` only reads `exec`, which
                // outlives it.
                unsafe {
                    let top = stack.as_mut_ptr().add(STACK);
                    let top = top.sub(top as usize % 16);
                    libc::clone(child, top.cast(), libc::CLONE_VM | libc::SIGCHLD, arg)
                }
            }
            Some(cg) => {
                let name = CString::new(format!("u{u}.service")).map_err(io::Error::other)?;
                let dir = cg.unit(name)?;
                // SAFETY: as above; clone3 takes the stack's lowest
                // address and its size, and starts the child at its end
                // (16-byte aligned: the allocator aligns the start and the
                // size is a multiple of 16).
                let r = unsafe {
                    crate::clone3::clone_into(
                        libc::CLONE_VM,
                        Some(dir.as_raw_fd()),
                        None,
                        stack.as_mut_ptr().cast(),
                        STACK,
                        child,
                        arg,
                    )
                };
                match r {
                    Ok(pid) => pid,
                    Err(e) => return Err(io::Error::other(format!("clone3: {e:?}"))),
                }
            }
        };
        let err = io::Error::last_os_error();
        // SAFETY: our own descriptor, closed once.
        unsafe { libc::close(write) };
        if pid < 0 {
            return Err(err);
        }
        stacks.push(stack);
        pids.push(pid);
        let mut ev = libc::epoll_event {
            events: libc::EPOLLIN as u32,
            u64: u as u64,
        };
        // SAFETY: valid epoll and pipe descriptors.
        if unsafe { libc::epoll_ctl(ep, libc::EPOLL_CTL_ADD, read, &mut ev) } < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(read)
    };
    let began = Instant::now();
    for (u, unit) in units.iter_mut().enumerate() {
        if unit.waiting == 0 {
            unit.read = start(u, &mut stacks, &mut pids)?;
        }
    }
    let mut left = n;
    let mut events = vec![libc::epoll_event { events: 0, u64: 0 }; 128];
    while left > 0 {
        // SAFETY: `events` has room for the count given.
        let got = unsafe { libc::epoll_wait(ep, events.as_mut_ptr(), 128, -1) };
        if got < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        for ev in events.iter().take(usize::try_from(got).unwrap_or(0)) {
            let Some(unit) = units.get_mut(ev.u64 as usize) else {
                continue;
            };
            // The write end closes at the child's execve: end of file, and
            // the child's memory is no longer ours. Removed from epoll
            // before it is closed: a child not yet exec'd holds a copy of
            // the read end, and epoll would go on reporting it.
            // SAFETY: our own descriptor, closed once.
            unsafe {
                libc::epoll_ctl(ep, libc::EPOLL_CTL_DEL, unit.read, std::ptr::null_mut());
                libc::close(unit.read);
            }
            left -= 1;
            let dependents = std::mem::take(&mut unit.dependents);
            for d in dependents {
                let Some(dep) = units.get_mut(d) else {
                    continue;
                };
                dep.waiting -= 1;
                if dep.waiting == 0 {
                    dep.read = start(d, &mut stacks, &mut pids)?;
                }
            }
        }
    }
    let took = began.elapsed();
    // SAFETY: our own descriptor.
    unsafe { libc::close(ep) };
    drop(stacks);
    Ok((took, pids))
}
