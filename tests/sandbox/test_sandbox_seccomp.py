"""The child's seccomp allow list, checked three ways:

1. every syscall number we name matches libseccomp's own table (libseccomp.so.2,
   the system library, loaded with ctypes; Debian's libseccomp2), on x86_64 and
   aarch64;
2. the BPF program, run through a small classic-BPF interpreter for EVERY
   syscall libseccomp knows on each machine, allows exactly the allow list (with
   its argument rules) and answers EPERM to everything else, every dangerous
   class of call included;
3. a real process under the real filter: what a program needs still works; io_uring,
   memfd, SysV IPC, ptrace, signals, prlimit/setpriority on the parent,
   F_SETOWN/F_SETSIG, clearing PDEATHSIG, namespaces and new processes fail with EPERM.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from backchannel.sandbox import seccomp_policy as sp

SANDBOX_DIR = Path(__file__).resolve().parents[2] / "backchannel" / "sandbox"
DANGEROUS = [
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "memfd_create",
    "memfd_secret",
    "shmget",
    "shmat",
    "shmdt",
    "shmctl",
    "msgget",
    "msgsnd",
    "msgrcv",
    "msgctl",
    "semget",
    "semop",
    "semctl",
    "semtimedop",
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "kcmp",
    "pidfd_open",
    "pidfd_getfd",
    "pidfd_send_signal",
    "kill",
    "tkill",
    "tgkill",
    "rt_sigqueueinfo",
    "rt_tgsigqueueinfo",
    "setpriority",
    "getpriority",
    "sched_setaffinity",
    "sched_setscheduler",
    "sched_setparam",
    "ioprio_set",
    "socket",
    "socketpair",
    "connect",
    "bind",
    "clone",
    "clone3",
    "fork",
    "vfork",
    "execve",
    "execveat",
    "unshare",
    "setns",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "fchdir",
    "chdir",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "keyctl",
    "add_key",
    "request_key",
    "setsid",
    "setpgid",
    "setuid",
    "setgid",
    "setresuid",
    "capset",
    "mknodat",
    "symlinkat",
    "linkat",
    "open_by_handle_at",
    "name_to_handle_at",
    "personality",
    "seccomp",
    "mq_open",
    "move_pages",
    "migrate_pages",
    "process_madvise",
    "fanotify_init",
    "inotify_init1",
    "splice",
    "vmsplice",
    "mlock",
    "swapon",
    "reboot",
    "init_module",
    "finit_module",
    "kexec_load",
    "syslog",
    "acct",
]
# Values a rule must let through, and some it must not.
ARG_CASES = {
    "fcntl": ({1: [0, 1, 2, 3, 4, 1030]}, {1: [8, 10, 15, 1024, 1026, 1031, 1033]}),
    "ioctl": ({1: [0x5401, 0x5451]}, {1: [0x5412, 0x541C, 0x40049409]}),  # TIOCSTI, TIOCLINUX, FICLONE
    "prctl": ({0: [2, 16, 39]}, {0: [1, 4, 15, 22, 36, 38, 59]}),  # SET_PDEATHSIG, SET_SECCOMP, ...
    "prlimit64": ({0: [0]}, {0: [1, 4242]}),
    "sched_getaffinity": ({0: [0]}, {0: [1]}),
}


@pytest.fixture(scope="module")
def libseccomp():
    path = ctypes.util.find_library("seccomp") or "libseccomp.so.2"
    try:
        lib = ctypes.CDLL(path)
    except OSError:
        pytest.skip("libseccomp (Debian libseccomp2) is not installed")
    lib.seccomp_syscall_resolve_name_arch.argtypes = [ctypes.c_uint32, ctypes.c_char_p]
    lib.seccomp_syscall_resolve_num_arch.argtypes = [ctypes.c_uint32, ctypes.c_int]
    lib.seccomp_syscall_resolve_num_arch.restype = ctypes.c_void_p
    return lib


def _table(lib, machine: str) -> dict[int, str]:
    """Every syscall number -> name libseccomp knows for `machine`."""
    libc = ctypes.CDLL(None)
    libc.free.argtypes = [ctypes.c_void_p]
    out = {}
    for nr in range(0, 1024):
        ptr = lib.seccomp_syscall_resolve_num_arch(sp.ARCH_TOKENS[machine], nr)
        if ptr:
            out[nr] = ctypes.string_at(ptr).decode()
            libc.free(ptr)
    return out


def run_bpf(prog, nr: int, arch: int, args=(0, 0, 0, 0, 0, 0)) -> int:
    """A classic-BPF interpreter for the instructions seccomp_policy emits."""

    def word(offset: int) -> int:
        if offset == 0:
            return nr & 0xFFFFFFFF
        if offset == 4:
            return arch
        index, high = divmod(offset - 16, 8)
        value = args[index] & 0xFFFFFFFFFFFFFFFF
        return (value >> 32) if high == 4 else value & 0xFFFFFFFF

    pc, acc, steps = 0, 0, 0
    while True:
        steps += 1
        assert steps < 10_000 and 0 <= pc < len(prog)
        code, jt, jf, k = prog[pc]
        if code == 0x20:
            acc, pc = word(k), pc + 1
        elif code == 0x06:
            return k
        elif code in (0x15, 0x35, 0x45):
            taken = acc == k if code == 0x15 else acc >= k if code == 0x35 else bool(acc & k)
            pc += 1 + (jt if taken else jf)
        else:
            raise AssertionError(f"unexpected BPF opcode {code:#x}")


@pytest.mark.parametrize("machine", sorted(sp.SYSCALLS))
def test_numbers_match_libseccomp(libseccomp, machine):
    for name, nr in sp.SYSCALLS[machine].items():
        assert libseccomp.seccomp_syscall_resolve_name_arch(sp.ARCH_TOKENS[machine], name.encode()) == nr, name
    # Every rule names a real syscall of at least one machine, and the common ones exist everywhere.
    for name in sp.ALLOW_RULES:
        assert any(name in sp.SYSCALLS[m] for m in sp.SYSCALLS), name
    for name in ("read", "write", "openat", "mmap", "futex", "exit_group", "fcntl", "prctl", "prlimit64"):
        assert name in sp.SYSCALLS[machine]


@pytest.mark.parametrize("machine", sorted(sp.SYSCALLS))
def test_the_filter_allows_exactly_the_allow_list(libseccomp, machine):
    prog = sp.child_program(machine)
    arch = sp.ARCH_TOKENS[machine]
    table = _table(libseccomp, machine)
    assert len(table) > 250
    eperm = sp.RET_ERRNO | sp.EPERM
    allowed = []
    for nr, name in table.items():
        got = run_bpf(prog, nr, arch)
        rule = sp.ALLOW_RULES.get(name, "absent")
        if rule == "absent":
            assert got == eperm, f"{name} ({nr}) is not in the allow list but is not refused"
        elif rule is None:
            assert got == sp.RET_ALLOW, name
            allowed.append(name)
        else:
            index, values = rule
            good, bad = ARG_CASES[name]
            for v in good[index]:
                a = [0] * 6
                a[index] = v
                assert run_bpf(prog, nr, arch, a) == sp.RET_ALLOW, (name, v)
            for v in bad[index]:
                a = [0] * 6
                a[index] = v
                assert run_bpf(prog, nr, arch, a) == eperm, (name, hex(v))
    for name in DANGEROUS:
        nr = sp.SYSCALLS[machine].get(name)
        found = [n for n, nm in table.items() if nm == name]
        for nr in found:
            for a in ([0] * 6, [1] * 6, [0xFFFFFFFF] * 6):
                assert run_bpf(prog, nr, arch, a) == eperm, name
    assert len(allowed) < 100  # an allow list, not a deny list
    # A foreign ABI is killed, not merely refused.
    assert run_bpf(prog, 0, 0x40000003) == sp.RET_KILL_PROCESS
    if machine == "x86_64":
        assert run_bpf(prog, sp.X32_BIT | 1, arch) == sp.RET_KILL_PROCESS


def test_unknown_machine_has_no_filter():
    assert sp.child_program("sparc") is None


PROBE = textwrap.dedent("""
    import ctypes, errno, fcntl, json, os, resource, signal, socket, sys
    sys.path.insert(0, sys.argv[1])
    import confine_calls, seccomp_policy
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    ppid = os.getppid()
    r, w = os.pipe()
    scratch = os.path.join(sys.argv[2], "scratch")
    assert libc.prctl(1, 9, 0, 0, 0) == 0  # a death signal to try to clear
    assert libc.prctl(38, 1, 0, 0, 0) == 0
    assert seccomp_policy.install(confine_calls.load()[0], seccomp_policy.child_program(os.uname().machine))
    out = {}
    def attempt(name, fn):
        try:
            rc = fn()
            if isinstance(rc, int) and rc == -1:
                out[name] = errno.errorcode.get(ctypes.get_errno(), "?")
            else:
                out[name] = "ok"
        except OSError as exc:
            out[name] = errno.errorcode.get(exc.errno, str(exc))
        except RuntimeError as exc:
            out[name] = "RuntimeError"
    nr = seccomp_policy.SYSCALLS.get(os.uname().machine, {})
    x86 = os.uname().machine == "x86_64"
    attempt("io_uring_setup", lambda: libc.syscall(425, 8, ctypes.create_string_buffer(120)))
    attempt("memfd_create", lambda: os.memfd_create("x"))
    attempt("shmget", lambda: libc.shmget(0, 4096, 0o1600))
    attempt("msgget", lambda: libc.msgget(0, 0o1600))
    attempt("semget", lambda: libc.semget(0, 1, 0o1600))
    attempt("ptrace", lambda: libc.ptrace(16, ppid, 0, 0))  # PTRACE_ATTACH
    attempt("process_vm_readv", lambda: libc.process_vm_readv(ppid, 0, 0, 0, 0, 0))
    attempt("kill_parent", lambda: os.kill(ppid, 0))
    attempt("killpg", lambda: os.killpg(0, 0))
    attempt("tgkill_self", lambda: signal.pthread_kill(__import__("threading").get_ident(), 0))
    attempt("prlimit_parent", lambda: resource.prlimit(ppid, resource.RLIMIT_NOFILE))
    attempt("setpriority_parent", lambda: os.setpriority(os.PRIO_PROCESS, ppid, 5))
    attempt("setpriority_self", lambda: os.setpriority(os.PRIO_PROCESS, 0, 5))
    attempt("f_setown", lambda: fcntl.fcntl(r, fcntl.F_SETOWN, ppid))
    attempt("f_setsig", lambda: fcntl.fcntl(r, 10, signal.SIGKILL))
    attempt("f_setpipe_sz", lambda: fcntl.fcntl(r, 1031, 1 << 20))
    attempt("clear_pdeathsig", lambda: libc.prctl(1, 0, 0, 0, 0))
    attempt("set_dumpable", lambda: libc.prctl(4, 1, 0, 0, 0))
    attempt("unshare_user", lambda: libc.unshare(0x10000000))
    attempt("setsid", os.setsid)
    attempt("socket", socket.socket)
    attempt("fork", os.fork)
    attempt("exec", lambda: os.execv("/bin/true", ["true"]))
    attempt("chdir", lambda: os.chdir("/"))
    attempt("tiocsti", lambda: fcntl.ioctl(r, 0x5412, b"x"))
    # What a program needs.
    attempt("open_write", lambda: os.write(os.open(scratch, os.O_WRONLY | os.O_CREAT, 0o600), b"hello"))
    attempt("read_back", lambda: None if open(scratch).read() == "hello" else -1)
    attempt("mkdir_rename_unlink", lambda: (os.mkdir(scratch + ".d"), os.rename(scratch, scratch + ".d/f"),
                                            os.unlink(scratch + ".d/f"), os.rmdir(scratch + ".d")) and None)
    attempt("memory", lambda: len(bytearray(50_000_000)) and None)
    attempt("urandom", lambda: len(os.urandom(16)) and None)
    attempt("getrlimit", lambda: resource.getrlimit(resource.RLIMIT_AS) and None)
    attempt("prlimit_self", lambda: resource.prlimit(0, resource.RLIMIT_NOFILE) and None)
    attempt("f_getfl", lambda: fcntl.fcntl(r, fcntl.F_GETFL) and None)
    attempt("isatty", lambda: None if os.isatty(r) is False else -1)
    attempt("sleep", lambda: __import__("time").sleep(0.001))
    attempt("getpid", lambda: None if os.getpid() > 0 else -1)
    print(json.dumps(out), flush=True)
    os._exit(0)
""")


def test_a_real_process_under_the_filter(tmp_path):
    if sys.platform != "linux" or sp.child_program(__import__("os").uname().machine) is None:
        pytest.skip("no seccomp table for this machine")
    probe = tmp_path / "probe.py"
    probe.write_text(PROBE)
    proc = subprocess.run(
        [sys.executable, "-I", str(probe), str(SANDBOX_DIR), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        env={},
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout)
    refused = [
        "io_uring_setup",
        "memfd_create",
        "shmget",
        "msgget",
        "semget",
        "ptrace",
        "process_vm_readv",
        "kill_parent",
        "killpg",
        "tgkill_self",
        "prlimit_parent",
        "setpriority_parent",
        "setpriority_self",
        "f_setown",
        "f_setsig",
        "f_setpipe_sz",
        "clear_pdeathsig",
        "set_dumpable",
        "unshare_user",
        "setsid",
        "socket",
        "fork",
        "exec",
        "chdir",
        "tiocsti",
    ]
    for name in refused:
        assert out[name] == "EPERM" or (name == "fork" and out[name] == "RuntimeError"), (name, out[name])
    for name in (
        "open_write",
        "read_back",
        "mkdir_rename_unlink",
        "memory",
        "urandom",
        "getrlimit",
        "prlimit_self",
        "f_getfl",
        "isatty",
        "sleep",
        "getpid",
    ):
        assert out[name] == "ok", (name, out[name])
