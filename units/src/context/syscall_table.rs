//! Data: the x86_64 system call numbers and systemd's system call groups.
//!
//! The group contents are those systemd 252 (Debian 12) documents with
//! `systemd-analyze syscall-filter`, restricted to the calls x86_64 has,
//! plus `fchmodat2` in `@file-system` (the C library uses it where it
//! exists) and the `@sandbox` group of later systemd releases.

/// One `@group`.
#[derive(Debug)]
pub(crate) struct Group {
    /// `@file-system`.
    pub name: &'static str,
    /// What it is for.
    pub about: &'static str,
    /// System calls and other groups, separated by spaces.
    pub members: &'static str,
}

/// x86_64 system calls by name (sorted), as the kernel numbers them
/// (`arch/x86/entry/syscalls/syscall_64.tbl`, up to Linux 6.18).
#[rustfmt::skip]
pub(crate) const X86_64: [(&str, u32); 382] = [
    ("_sysctl", 156), ("accept", 43), ("accept4", 288), ("access", 21), ("acct", 163),
    ("add_key", 248), ("adjtimex", 159), ("afs_syscall", 183), ("alarm", 37), ("arch_prctl", 158),
    ("bind", 49), ("bpf", 321), ("brk", 12), ("cachestat", 451), ("capget", 125), ("capset", 126),
    ("chdir", 80), ("chmod", 90), ("chown", 92), ("chroot", 161), ("clock_adjtime", 305),
    ("clock_getres", 229), ("clock_gettime", 228), ("clock_nanosleep", 230),
    ("clock_settime", 227), ("clone", 56), ("clone3", 435), ("close", 3), ("close_range", 436),
    ("connect", 42), ("copy_file_range", 326), ("creat", 85), ("create_module", 174),
    ("delete_module", 176), ("dup", 32), ("dup2", 33), ("dup3", 292), ("epoll_create", 213),
    ("epoll_create1", 291), ("epoll_ctl", 233), ("epoll_ctl_old", 214), ("epoll_pwait", 281),
    ("epoll_pwait2", 441), ("epoll_wait", 232), ("epoll_wait_old", 215), ("eventfd", 284),
    ("eventfd2", 290), ("execve", 59), ("execveat", 322), ("exit", 60), ("exit_group", 231),
    ("faccessat", 269), ("faccessat2", 439), ("fadvise64", 221), ("fallocate", 285),
    ("fanotify_init", 300), ("fanotify_mark", 301), ("fchdir", 81), ("fchmod", 91),
    ("fchmodat", 268), ("fchmodat2", 452), ("fchown", 93), ("fchownat", 260), ("fcntl", 72),
    ("fdatasync", 75), ("fgetxattr", 193), ("file_getattr", 468), ("file_setattr", 469),
    ("finit_module", 313), ("flistxattr", 196), ("flock", 73), ("fork", 57),
    ("fremovexattr", 199), ("fsconfig", 431), ("fsetxattr", 190), ("fsmount", 432),
    ("fsopen", 430), ("fspick", 433), ("fstat", 5), ("fstatfs", 138), ("fsync", 74),
    ("ftruncate", 77), ("futex", 202), ("futex_requeue", 456), ("futex_wait", 455),
    ("futex_waitv", 449), ("futex_wake", 454), ("futimesat", 261), ("get_kernel_syms", 177),
    ("get_mempolicy", 239), ("get_robust_list", 274), ("get_thread_area", 211), ("getcpu", 309),
    ("getcwd", 79), ("getdents", 78), ("getdents64", 217), ("getegid", 108), ("geteuid", 107),
    ("getgid", 104), ("getgroups", 115), ("getitimer", 36), ("getpeername", 52), ("getpgid", 121),
    ("getpgrp", 111), ("getpid", 39), ("getpmsg", 181), ("getppid", 110), ("getpriority", 140),
    ("getrandom", 318), ("getresgid", 120), ("getresuid", 118), ("getrlimit", 97),
    ("getrusage", 98), ("getsid", 124), ("getsockname", 51), ("getsockopt", 55), ("gettid", 186),
    ("gettimeofday", 96), ("getuid", 102), ("getxattr", 191), ("getxattrat", 464),
    ("init_module", 175), ("inotify_add_watch", 254), ("inotify_init", 253),
    ("inotify_init1", 294), ("inotify_rm_watch", 255), ("io_cancel", 210), ("io_destroy", 207),
    ("io_getevents", 208), ("io_pgetevents", 333), ("io_setup", 206), ("io_submit", 209),
    ("io_uring_enter", 426), ("io_uring_register", 427), ("io_uring_setup", 425), ("ioctl", 16),
    ("ioperm", 173), ("iopl", 172), ("ioprio_get", 252), ("ioprio_set", 251), ("kcmp", 312),
    ("kexec_file_load", 320), ("kexec_load", 246), ("keyctl", 250), ("kill", 62),
    ("landlock_add_rule", 445), ("landlock_create_ruleset", 444), ("landlock_restrict_self", 446),
    ("lchown", 94), ("lgetxattr", 192), ("link", 86), ("linkat", 265), ("listen", 50),
    ("listmount", 458), ("listxattr", 194), ("listxattrat", 465), ("llistxattr", 195),
    ("lookup_dcookie", 212), ("lremovexattr", 198), ("lseek", 8), ("lsetxattr", 189),
    ("lsm_get_self_attr", 459), ("lsm_list_modules", 461), ("lsm_set_self_attr", 460),
    ("lstat", 6), ("madvise", 28), ("map_shadow_stack", 453), ("mbind", 237), ("membarrier", 324),
    ("memfd_create", 319), ("memfd_secret", 447), ("migrate_pages", 256), ("mincore", 27),
    ("mkdir", 83), ("mkdirat", 258), ("mknod", 133), ("mknodat", 259), ("mlock", 149),
    ("mlock2", 325), ("mlockall", 151), ("mmap", 9), ("modify_ldt", 154), ("mount", 165),
    ("mount_setattr", 442), ("move_mount", 429), ("move_pages", 279), ("mprotect", 10),
    ("mq_getsetattr", 245), ("mq_notify", 244), ("mq_open", 240), ("mq_timedreceive", 243),
    ("mq_timedsend", 242), ("mq_unlink", 241), ("mremap", 25), ("mseal", 462), ("msgctl", 71),
    ("msgget", 68), ("msgrcv", 70), ("msgsnd", 69), ("msync", 26), ("munlock", 150),
    ("munlockall", 152), ("munmap", 11), ("name_to_handle_at", 303), ("nanosleep", 35),
    ("newfstatat", 262), ("nfsservctl", 180), ("open", 2), ("open_by_handle_at", 304),
    ("open_tree", 428), ("open_tree_attr", 467), ("openat", 257), ("openat2", 437), ("pause", 34),
    ("perf_event_open", 298), ("personality", 135), ("pidfd_getfd", 438), ("pidfd_open", 434),
    ("pidfd_send_signal", 424), ("pipe", 22), ("pipe2", 293), ("pivot_root", 155),
    ("pkey_alloc", 330), ("pkey_free", 331), ("pkey_mprotect", 329), ("poll", 7), ("ppoll", 271),
    ("prctl", 157), ("pread64", 17), ("preadv", 295), ("preadv2", 327), ("prlimit64", 302),
    ("process_madvise", 440), ("process_mrelease", 448), ("process_vm_readv", 310),
    ("process_vm_writev", 311), ("pselect6", 270), ("ptrace", 101), ("putpmsg", 182),
    ("pwrite64", 18), ("pwritev", 296), ("pwritev2", 328), ("query_module", 178),
    ("quotactl", 179), ("quotactl_fd", 443), ("read", 0), ("readahead", 187), ("readlink", 89),
    ("readlinkat", 267), ("readv", 19), ("reboot", 169), ("recvfrom", 45), ("recvmmsg", 299),
    ("recvmsg", 47), ("remap_file_pages", 216), ("removexattr", 197), ("removexattrat", 466),
    ("rename", 82), ("renameat", 264), ("renameat2", 316), ("request_key", 249),
    ("restart_syscall", 219), ("rmdir", 84), ("rseq", 334), ("rt_sigaction", 13),
    ("rt_sigpending", 127), ("rt_sigprocmask", 14), ("rt_sigqueueinfo", 129),
    ("rt_sigreturn", 15), ("rt_sigsuspend", 130), ("rt_sigtimedwait", 128),
    ("rt_tgsigqueueinfo", 297), ("sched_get_priority_max", 146), ("sched_get_priority_min", 147),
    ("sched_getaffinity", 204), ("sched_getattr", 315), ("sched_getparam", 143),
    ("sched_getscheduler", 145), ("sched_rr_get_interval", 148), ("sched_setaffinity", 203),
    ("sched_setattr", 314), ("sched_setparam", 142), ("sched_setscheduler", 144),
    ("sched_yield", 24), ("seccomp", 317), ("security", 185), ("select", 23), ("semctl", 66),
    ("semget", 64), ("semop", 65), ("semtimedop", 220), ("sendfile", 40), ("sendmmsg", 307),
    ("sendmsg", 46), ("sendto", 44), ("set_mempolicy", 238), ("set_mempolicy_home_node", 450),
    ("set_robust_list", 273), ("set_thread_area", 205), ("set_tid_address", 218),
    ("setdomainname", 171), ("setfsgid", 123), ("setfsuid", 122), ("setgid", 106),
    ("setgroups", 116), ("sethostname", 170), ("setitimer", 38), ("setns", 308), ("setpgid", 109),
    ("setpriority", 141), ("setregid", 114), ("setresgid", 119), ("setresuid", 117),
    ("setreuid", 113), ("setrlimit", 160), ("setsid", 112), ("setsockopt", 54),
    ("settimeofday", 164), ("setuid", 105), ("setxattr", 188), ("setxattrat", 463), ("shmat", 30),
    ("shmctl", 31), ("shmdt", 67), ("shmget", 29), ("shutdown", 48), ("sigaltstack", 131),
    ("signalfd", 282), ("signalfd4", 289), ("socket", 41), ("socketpair", 53), ("splice", 275),
    ("stat", 4), ("statfs", 137), ("statmount", 457), ("statx", 332), ("swapoff", 168),
    ("swapon", 167), ("symlink", 88), ("symlinkat", 266), ("sync", 162), ("sync_file_range", 277),
    ("syncfs", 306), ("sysfs", 139), ("sysinfo", 99), ("syslog", 103), ("tee", 276),
    ("tgkill", 234), ("time", 201), ("timer_create", 222), ("timer_delete", 226),
    ("timer_getoverrun", 225), ("timer_gettime", 224), ("timer_settime", 223),
    ("timerfd_create", 283), ("timerfd_gettime", 287), ("timerfd_settime", 286), ("times", 100),
    ("tkill", 200), ("truncate", 76), ("tuxcall", 184), ("umask", 95), ("umount2", 166),
    ("uname", 63), ("unlink", 87), ("unlinkat", 263), ("unshare", 272), ("uretprobe", 335),
    ("uselib", 134), ("userfaultfd", 323), ("ustat", 136), ("utime", 132), ("utimensat", 280),
    ("utimes", 235), ("vfork", 58), ("vhangup", 153), ("vmsplice", 278), ("vserver", 236),
    ("wait4", 61), ("waitid", 247), ("write", 1), ("writev", 20),
];

/// System calls that exist on other architectures (or existed once)
/// but not on x86_64: accepted in a filter, where they change nothing.
#[rustfmt::skip]
pub(crate) const OTHER_ARCHES: [&str; 171] = [
    "_llseek", "_newselect", "arc_gettls", "arc_settls", "arc_usr_cmpxchg", "arm_fadvise64_64",
    "atomic_barrier", "atomic_cmpxchg_32", "bdflush", "break", "cachectl", "cacheflush", "chown32",
    "clock_adjtime64", "clock_getres_time64", "clock_gettime64", "clock_nanosleep_time64",
    "clock_settime64", "dipc", "exec_with_loader", "execv", "fadvise64_64", "fchown32", "fcntl64",
    "fstat64", "fstatat64", "fstatfs64", "ftime", "ftruncate64", "futex_time64", "getdomainname",
    "getdtablesize", "getegid32", "geteuid32", "getgid32", "getgroups32", "gethostname",
    "getpagesize", "getresgid32", "getresuid32", "getuid32", "getxgid", "getxpid", "getxuid",
    "gtty", "idle", "io_pgetevents_time64", "ipc", "kern_features", "lchown32", "lock", "lstat64",
    "memory_ordering", "mmap2", "mpx", "mq_timedreceive_time64", "mq_timedsend_time64",
    "multiplexer", "nice", "old_adjtimex", "oldfstat", "oldlstat", "oldolduname", "oldstat",
    "oldumount", "olduname", "or1k_atomic", "osf_fstat", "osf_fstatfs", "osf_fstatfs64",
    "osf_getdirentries", "osf_getdomainname", "osf_getitimer", "osf_getrusage", "osf_getsysinfo",
    "osf_gettimeofday", "osf_lstat", "osf_mount", "osf_proplist_syscall", "osf_select",
    "osf_set_program_attributes", "osf_setitimer", "osf_setsysinfo", "osf_settimeofday",
    "osf_shmat", "osf_sigprocmask", "osf_sigstack", "osf_stat", "osf_statfs", "osf_statfs64",
    "osf_swapon", "osf_syscall", "osf_sysinfo", "osf_usleep_thread", "osf_utimes", "osf_utsname",
    "osf_wait4", "pciconfig_iobase", "pciconfig_read", "pciconfig_write", "perfctr",
    "ppoll_time64", "prof", "profil", "pselect6_time64", "readdir", "recv", "recvmmsg_time64",
    "riscv_flush_icache", "riscv_hwprobe", "rt_sigtimedwait_time64", "rtas",
    "s390_guarded_storage", "s390_pci_mmio_read", "s390_pci_mmio_write", "s390_runtime_instr",
    "s390_sthyi", "sched_get_affinity", "sched_rr_get_interval_time64", "sched_set_affinity",
    "semtimedop_time64", "send", "sendfile64", "set_tls", "setfsgid32", "setfsuid32", "setgid32",
    "setgroups32", "sethae", "setpgrp", "setregid32", "setresgid32", "setresuid32", "setreuid32",
    "setuid32", "sgetmask", "sigaction", "signal", "sigpending", "sigprocmask", "sigreturn",
    "sigsuspend", "socketcall", "spu_create", "spu_run", "ssetmask", "stat64", "statfs64", "stime",
    "stty", "subpage_prot", "swapcontext", "switch_endian", "sync_file_range2",
    "sys_debug_setcontext", "syscall", "sysmips", "timer_gettime64", "timer_settime64", "timerfd",
    "timerfd_gettime64", "timerfd_settime64", "truncate64", "ugetrlimit", "ulimit", "umount",
    "utimensat_time64", "utrap_install", "vm86", "vm86old", "waitpid",
];

/// systemd's groups (`@name`): what each is for, and its members on x86_64
/// (system calls and other groups, separated by spaces).
#[rustfmt::skip]
pub(crate) const GROUPS: [Group; 29] = [
    Group {
        name: "@aio",
        about: "asynchronous I/O (POSIX AIO and io_uring)",
        members: "io_cancel io_destroy io_getevents io_pgetevents io_setup io_submit \
            io_uring_enter io_uring_register io_uring_setup",
    },
    Group {
        name: "@basic-io",
        about: "reading, writing, seeking and closing descriptors",
        members: "close close_range dup dup2 dup3 lseek pread64 preadv preadv2 pwrite64 pwritev \
            pwritev2 read readv write writev",
    },
    Group {
        name: "@chown",
        about: "changing the owner of files",
        members: "chown fchown fchownat lchown",
    },
    Group {
        name: "@clock",
        about: "setting the system clock",
        members: "adjtimex clock_adjtime clock_settime settimeofday",
    },
    Group {
        name: "@cpu-emulation",
        about: "CPU emulation (LDT changes)",
        members: "modify_ldt",
    },
    Group {
        name: "@debug",
        about: "tracing, debugging and performance counters",
        members: "lookup_dcookie perf_event_open pidfd_getfd ptrace",
    },
    Group {
        name: "@default",
        about: "what every process needs: exits, memory maps, clocks, its own ids, futexes",
        members: "arch_prctl brk clock_getres clock_gettime clock_nanosleep execve exit exit_group \
            futex futex_waitv get_robust_list get_thread_area getegid geteuid getgid \
            getgroups getpgid getpgrp getpid getppid getrandom getresgid getresuid getrlimit \
            getsid gettid gettimeofday getuid membarrier mmap mprotect munmap nanosleep \
            pause prlimit64 restart_syscall rseq rt_sigreturn sched_getaffinity sched_yield \
            set_robust_list set_thread_area set_tid_address time uretprobe",
    },
    Group {
        name: "@file-system",
        about: "file and directory operations: open, stat, link, rename, xattrs, inotify",
        members: "access chdir chmod close creat faccessat faccessat2 fallocate fchdir fchmod \
            fchmodat fchmodat2 fcntl fgetxattr flistxattr fremovexattr fsetxattr fstat \
            fstatfs ftruncate futimesat getcwd getdents getdents64 getxattr \
            inotify_add_watch inotify_init inotify_init1 inotify_rm_watch lgetxattr link \
            linkat listxattr llistxattr lremovexattr lsetxattr lstat mkdir mkdirat mknod \
            mknodat newfstatat open openat openat2 readlink readlinkat removexattr rename \
            renameat renameat2 rmdir setxattr stat statfs statx symlink symlinkat truncate \
            unlink unlinkat utime utimensat utimes",
    },
    Group {
        name: "@io-event",
        about: "event loops: poll, select, epoll, eventfd",
        members: "epoll_create epoll_create1 epoll_ctl epoll_ctl_old epoll_pwait epoll_pwait2 \
            epoll_wait epoll_wait_old eventfd eventfd2 poll ppoll pselect6 select",
    },
    Group {
        name: "@ipc",
        about: "System V and POSIX IPC, pipes, process memory access",
        members: "memfd_create mq_getsetattr mq_notify mq_open mq_timedreceive mq_timedsend \
            mq_unlink msgctl msgget msgrcv msgsnd pipe pipe2 process_madvise \
            process_vm_readv process_vm_writev semctl semget semop semtimedop shmat shmctl \
            shmdt shmget",
    },
    Group {
        name: "@keyring",
        about: "the kernel key rings",
        members: "add_key keyctl request_key",
    },
    Group {
        name: "@memlock",
        about: "locking memory in RAM",
        members: "mlock mlock2 mlockall munlock munlockall",
    },
    Group {
        name: "@module",
        about: "loading and unloading kernel modules",
        members: "delete_module finit_module init_module",
    },
    Group {
        name: "@mount",
        about: "mounting and unmounting, the new mount API, chroot, pivot_root",
        members: "chroot fsconfig fsmount fsopen fspick mount mount_setattr move_mount open_tree \
            pivot_root umount2",
    },
    Group {
        name: "@network-io",
        about: "sockets: create, connect, send, receive",
        members: "accept accept4 bind connect getpeername getsockname getsockopt listen recvfrom \
            recvmmsg recvmsg sendmmsg sendmsg sendto setsockopt shutdown socket socketpair",
    },
    Group {
        name: "@obsolete",
        about: "calls the kernel no longer implements or were never used",
        members: "_sysctl afs_syscall create_module get_kernel_syms getpmsg putpmsg query_module \
            security sysfs tuxcall uselib ustat vserver",
    },
    Group {
        name: "@pkey",
        about: "memory protection keys",
        members: "pkey_alloc pkey_free pkey_mprotect",
    },
    Group {
        name: "@privileged",
        about: "calls that need super-user capabilities",
        members: "@chown @clock @module @raw-io @reboot @swap _sysctl acct bpf capset chroot \
            fanotify_init fanotify_mark nfsservctl open_by_handle_at pivot_root quotactl \
            quotactl_fd setdomainname setfsuid setgroups sethostname setresuid setreuid \
            setuid vhangup",
    },
    Group {
        name: "@process",
        about: "processes and threads: clone, exec, kill, wait, namespaces",
        members: "capget clone clone3 execveat fork getrusage kill pidfd_open pidfd_send_signal \
            prctl rt_sigqueueinfo rt_tgsigqueueinfo setns tgkill times tkill unshare vfork \
            wait4 waitid",
    },
    Group {
        name: "@raw-io",
        about: "raw I/O ports and PCI configuration",
        members: "ioperm iopl",
    },
    Group {
        name: "@reboot",
        about: "rebooting and loading a new kernel",
        members: "kexec_file_load kexec_load reboot",
    },
    Group {
        name: "@resources",
        about: "resource limits, scheduling, NUMA memory policy",
        members: "ioprio_set mbind migrate_pages move_pages sched_setaffinity sched_setattr \
            sched_setparam sched_setscheduler set_mempolicy set_mempolicy_home_node \
            setpriority setrlimit",
    },
    Group {
        name: "@sandbox",
        about: "[]",
        members: "landlock_add_rule landlock_create_ruleset landlock_restrict_self seccomp",
    },
    Group {
        name: "@setuid",
        about: "changing user and group ids",
        members: "setgid setgroups setregid setresgid setresuid setreuid setuid",
    },
    Group {
        name: "@signal",
        about: "signal handlers, masks and alternate stacks",
        members: "rt_sigaction rt_sigpending rt_sigprocmask rt_sigsuspend rt_sigtimedwait \
            sigaltstack signalfd signalfd4",
    },
    Group {
        name: "@swap",
        about: "turning swap on and off",
        members: "swapoff swapon",
    },
    Group {
        name: "@sync",
        about: "flushing file data to disk",
        members: "fdatasync fsync msync sync sync_file_range syncfs",
    },
    Group {
        name: "@system-service",
        about: "what a typical system service needs (several groups and more)",
        members: "@aio @basic-io @chown @default @file-system @io-event @ipc @keyring @memlock \
            @network-io @process @resources @setuid @signal @sync @timer capget capset \
            copy_file_range fadvise64 flock get_mempolicy getcpu getpriority ioctl \
            ioprio_get kcmp madvise mremap name_to_handle_at personality readahead \
            remap_file_pages sched_get_priority_max sched_get_priority_min sched_getattr \
            sched_getparam sched_getscheduler sched_rr_get_interval sched_yield sendfile \
            setfsgid setfsuid setpgid setsid splice sysinfo tee umask uname userfaultfd \
            vmsplice",
    },
    Group {
        name: "@timer",
        about: "timers and alarms",
        members: "alarm getitimer setitimer timer_create timer_delete timer_getoverrun \
            timer_gettime timer_settime timerfd_create timerfd_gettime timerfd_settime times",
    },
];
