"""The child's seccomp filter: an allow list of the system calls a Python
program computing over JSON needs, compiled to classic BPF by hand (no
libseccomp at run time; tests/sandbox/test_sandbox_seccomp.py checks the numbers below
against libseccomp's own syscall table and runs the program through a BPF
interpreter for every syscall libseccomp knows).

Every call not listed answers EPERM, among them: io_uring_*, memfd_create,
memfd_secret, SysV IPC (shm*, msg*, sem*), ptrace, process_vm_*, kcmp,
pidfd_*, kill/tkill/tgkill/rt_*sigqueueinfo, setpriority, sched_set*, socket*,
clone/clone3/fork/vfork, execve*, unshare, setns, mount, chroot, fchdir, bpf,
perf_event_open, userfaultfd, keyctl, setsid, setuid... Some listed calls are
allowed only with certain arguments: fcntl without F_SETOWN/F_SETSIG/F_SETLEASE/
F_NOTIFY (no signal to another process through a file descriptor), ioctl only
for the tty queries and close-on-exec flags the io module uses, prctl only for
reads (so PR_SET_PDEATHSIG cannot be cleared), prlimit64 and
sched_getaffinity only on the calling process (pid 0). A call from a foreign
ABI (32-bit, x32) kills the process.

Stdlib only: the child loads this file by path, without site-packages.
"""

from __future__ import annotations

import struct
from typing import Any

RET_ALLOW = 0x7FFF0000
RET_ERRNO = 0x00050000
RET_KILL_PROCESS = 0x80000000
EPERM, ENOSYS = 1, 38
X32_BIT = 0x40000000
ARCH_TOKENS = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}

# Syscall numbers per machine (the subset we name), as libseccomp resolves them.
SYSCALLS: dict[str, dict[str, int]] = {
    "x86_64": {
        "read": 0,
        "write": 1,
        "readv": 19,
        "writev": 20,
        "pread64": 17,
        "pwrite64": 18,
        "lseek": 8,
        "close": 3,
        "fstat": 5,
        "newfstatat": 262,
        "stat": 4,
        "lstat": 6,
        "statx": 332,
        "openat": 257,
        "open": 2,
        "access": 21,
        "faccessat": 269,
        "faccessat2": 439,
        "getdents64": 217,
        "readlink": 89,
        "readlinkat": 267,
        "getcwd": 79,
        "mkdir": 83,
        "mkdirat": 258,
        "unlink": 87,
        "unlinkat": 263,
        "rename": 82,
        "renameat": 264,
        "renameat2": 316,
        "rmdir": 84,
        "ftruncate": 77,
        "fsync": 74,
        "fdatasync": 75,
        "fchmod": 91,
        "chmod": 90,
        "fchmodat": 268,
        "umask": 95,
        "dup": 32,
        "dup2": 33,
        "dup3": 292,
        "mmap": 9,
        "munmap": 11,
        "mremap": 25,
        "mprotect": 10,
        "brk": 12,
        "madvise": 28,
        "futex": 202,
        "sched_yield": 24,
        "rseq": 334,
        "set_robust_list": 273,
        "clock_gettime": 228,
        "clock_getres": 229,
        "clock_nanosleep": 230,
        "nanosleep": 35,
        "gettimeofday": 96,
        "time": 201,
        "select": 23,
        "pselect6": 270,
        "poll": 7,
        "ppoll": 271,
        "rt_sigaction": 13,
        "rt_sigprocmask": 14,
        "rt_sigreturn": 15,
        "sigaltstack": 131,
        "restart_syscall": 219,
        "getpid": 39,
        "gettid": 186,
        "getppid": 110,
        "getuid": 102,
        "geteuid": 107,
        "getgid": 104,
        "getegid": 108,
        "getresuid": 118,
        "getresgid": 120,
        "getgroups": 115,
        "uname": 63,
        "getrandom": 318,
        "sysinfo": 99,
        "getrusage": 98,
        "times": 100,
        "getrlimit": 97,
        "setrlimit": 160,
        "exit": 60,
        "exit_group": 231,
        "fcntl": 72,
        "ioctl": 16,
        "prctl": 157,
        "prlimit64": 302,
        "sched_getaffinity": 204,
    },
    "aarch64": {
        "read": 63,
        "write": 64,
        "readv": 65,
        "writev": 66,
        "pread64": 67,
        "pwrite64": 68,
        "lseek": 62,
        "close": 57,
        "fstat": 80,
        "newfstatat": 79,
        "statx": 291,
        "openat": 56,
        "faccessat": 48,
        "faccessat2": 439,
        "getdents64": 61,
        "readlinkat": 78,
        "getcwd": 17,
        "mkdirat": 34,
        "unlinkat": 35,
        "renameat": 38,
        "renameat2": 276,
        "ftruncate": 46,
        "fsync": 82,
        "fdatasync": 83,
        "fchmod": 52,
        "fchmodat": 53,
        "umask": 166,
        "dup": 23,
        "dup3": 24,
        "mmap": 222,
        "munmap": 215,
        "mremap": 216,
        "mprotect": 226,
        "brk": 214,
        "madvise": 233,
        "futex": 98,
        "sched_yield": 124,
        "rseq": 293,
        "set_robust_list": 99,
        "clock_gettime": 113,
        "clock_getres": 114,
        "clock_nanosleep": 115,
        "nanosleep": 101,
        "gettimeofday": 169,
        "pselect6": 72,
        "ppoll": 73,
        "rt_sigaction": 134,
        "rt_sigprocmask": 135,
        "rt_sigreturn": 139,
        "sigaltstack": 132,
        "restart_syscall": 128,
        "getpid": 172,
        "gettid": 178,
        "getppid": 173,
        "getuid": 174,
        "geteuid": 175,
        "getgid": 176,
        "getegid": 177,
        "getresuid": 148,
        "getresgid": 150,
        "getgroups": 158,
        "uname": 160,
        "getrandom": 278,
        "sysinfo": 179,
        "getrusage": 165,
        "times": 153,
        "getrlimit": 163,
        "setrlimit": 164,
        "exit": 93,
        "exit_group": 94,
        "fcntl": 25,
        "ioctl": 29,
        "prctl": 167,
        "prlimit64": 261,
        "sched_getaffinity": 123,
    },
}

# fcntl commands: dup, fd and status flags, POSIX record locks.
FCNTL_ALLOWED = frozenset({0, 1, 2, 3, 4, 5, 6, 7, 1030})
# ioctl requests: TCGETS and TIOCGWINSZ (isatty, terminal size), FIONBIO, FIONCLEX, FIOCLEX.
IOCTL_ALLOWED = frozenset({0x5401, 0x5413, 0x5421, 0x5450, 0x5451})
# prctl options that only read: GET_PDEATHSIG, GET_DUMPABLE, GET_NAME, GET_SECCOMP,
# CAPBSET_READ, GET_NO_NEW_PRIVS.
PRCTL_ALLOWED = frozenset({2, 3, 16, 21, 23, 39})

# name -> None (always allowed) or (argument index, allowed values of its low 32 bits).
ALLOW_RULES: dict[str, tuple[int, frozenset[int]] | None] = {
    **{
        name: None
        for name in (
            "read",
            "write",
            "readv",
            "writev",
            "pread64",
            "pwrite64",
            "lseek",
            "close",
            "fstat",
            "newfstatat",
            "stat",
            "lstat",
            "statx",
            "openat",
            "open",
            "access",
            "faccessat",
            "faccessat2",
            "getdents64",
            "readlink",
            "readlinkat",
            "getcwd",
            "mkdir",
            "mkdirat",
            "unlink",
            "unlinkat",
            "rename",
            "renameat",
            "renameat2",
            "rmdir",
            "ftruncate",
            "fsync",
            "fdatasync",
            "fchmod",
            "chmod",
            "fchmodat",
            "umask",
            "dup",
            "dup2",
            "dup3",
            "mmap",
            "munmap",
            "mremap",
            "mprotect",
            "brk",
            "madvise",
            "futex",
            "sched_yield",
            "rseq",
            "set_robust_list",
            "clock_gettime",
            "clock_getres",
            "clock_nanosleep",
            "nanosleep",
            "gettimeofday",
            "time",
            "select",
            "pselect6",
            "poll",
            "ppoll",
            "rt_sigaction",
            "rt_sigprocmask",
            "rt_sigreturn",
            "sigaltstack",
            "restart_syscall",
            "getpid",
            "gettid",
            "getppid",
            "getuid",
            "geteuid",
            "getgid",
            "getegid",
            "getresuid",
            "getresgid",
            "getgroups",
            "uname",
            "getrandom",
            "sysinfo",
            "getrusage",
            "times",
            "getrlimit",
            "setrlimit",
            "exit",
            "exit_group",
        )
    },
    "fcntl": (1, FCNTL_ALLOWED),
    "ioctl": (1, IOCTL_ALLOWED),
    "prctl": (0, PRCTL_ALLOWED),
    "prlimit64": (0, frozenset({0})),
    "sched_getaffinity": (0, frozenset({0})),
}

_LD_ABS, _JEQ, _JGE, _JSET, _RET = 0x20, 0x15, 0x35, 0x45, 0x06


def _arg_low(index: int) -> int:
    """Offset of the low 32 bits of argument `index` in struct seccomp_data (little-endian)."""
    return 16 + 8 * index


def assemble(machine: str, rules: dict[int, Any], default: int) -> list[tuple[int, int, int, int]]:
    """A classic-BPF program as (code, jt, jf, k) rows. `rules` maps a syscall number
    to None (allow), ("in", index, values) (allow when the argument's low 32 bits
    are one of values, else EPERM), ("deny_bits", index, mask, errno) (that errno
    when the argument has any bit of mask, else allow) or ("errno", errno).
    Everything not in `rules` gets `default`. Every jump is short (each rule
    carries its own return), so the program has no 255-instruction limit."""
    prog = [(_LD_ABS, 0, 0, 4), (_JEQ, 1, 0, ARCH_TOKENS[machine]), (_RET, 0, 0, RET_KILL_PROCESS), (_LD_ABS, 0, 0, 0)]
    if machine == "x86_64":
        prog += [(_JGE, 0, 1, X32_BIT), (_RET, 0, 0, RET_KILL_PROCESS)]
    for nr in sorted(rules):
        rule = rules[nr]
        if rule is None:
            block = [(_RET, 0, 0, RET_ALLOW)]
        elif rule[0] == "errno":
            block = [(_RET, 0, 0, RET_ERRNO | rule[1])]
        elif rule[0] == "in":
            values = sorted(rule[2])
            block = [(_LD_ABS, 0, 0, _arg_low(rule[1]))]
            block += [(_JEQ, len(values) - k, 0, v) for k, v in enumerate(values)]
            block += [(_RET, 0, 0, RET_ERRNO | EPERM), (_RET, 0, 0, RET_ALLOW)]
        elif rule[0] == "deny_bits":
            block = [
                (_LD_ABS, 0, 0, _arg_low(rule[1])),
                (_JSET, 0, 1, rule[2]),
                (_RET, 0, 0, RET_ERRNO | rule[3]),
                (_RET, 0, 0, RET_ALLOW),
            ]
        else:
            raise ValueError(f"unknown rule {rule!r}")
        prog.append((_JEQ, 0, len(block), nr))
        prog += block
    prog.append((_RET, 0, 0, default))
    return prog


def child_program(machine: str) -> list[tuple[int, int, int, int]] | None:
    """The sandbox child's allow-list filter for `machine` (os.uname().machine),
    or None for a machine we have no syscall table for."""
    table = SYSCALLS.get(machine)
    if table is None:
        return None
    rules = {
        table[name]: (None if rule is None else ("in", rule[0], rule[1]))
        for name, rule in ALLOW_RULES.items()
        if name in table
    }
    return assemble(machine, rules, RET_ERRNO | EPERM)


def pack(prog: list[tuple[int, int, int, int]]) -> bytes:
    """The rows as the kernel's array of struct sock_filter {u16 code; u8 jt; u8 jf; u32 k}."""
    return b"".join(struct.pack("=HBBI", *row) for row in prog)


def install(calls: Any, prog: list[tuple[int, int, int, int]]) -> bool:
    """Load `prog` as this thread's seccomp filter through `calls`
    (confine_calls.load(); no_new_privs must be set). False when refused."""
    try:
        calls.install_seccomp(pack(prog))
    except OSError:
        return False
    return True
