"""Driver for tests/sandbox/test_sandbox_modes.py: runs a list of sandbox programs in one
of three modes and prints their results as one JSON line.

- root:      as the test process itself (root);
- userns:    dropped to uid/gid 65534 (an unprivileged daemon) where user
             namespaces work;
- nouserns:  the same, but first a seccomp filter on this driver (inherited by
             every child) makes unshare() and clone() with CLONE_NEWUSER fail
             with EPERM and clone3() with ENOSYS. That is what a kernel without
             unprivileged user namespaces answers, without touching the global
             sysctl user.max_user_namespaces (other test runs share this machine).

Run as: python sandbox_modes_driver.py SPEC_JSON_FILE
"""

from __future__ import annotations

# Modules the parent side imports lazily, loaded while the install is still readable.
import fcntl  # noqa: F401
import json
import os
import resource  # noqa: F401
import select  # noqa: F401
import selectors  # noqa: F401
import signal  # noqa: F401
import sys
import tempfile

NOBODY = 65534


def block_user_namespaces(numbers: dict[str, int]) -> None:
    import ctypes

    from backchannel.sandbox import confine_calls
    from backchannel.sandbox import seccomp_policy as sp

    newuser = 0x10000000
    rules = {
        numbers["unshare"]: ("deny_bits", 0, newuser, sp.EPERM),
        numbers["clone"]: ("deny_bits", 0, newuser, sp.EPERM),
        numbers["clone3"]: ("errno", sp.ENOSYS),
    }
    prog = sp.assemble(os.uname().machine, rules, sp.RET_ALLOW)
    libc = ctypes.CDLL(None, use_errno=True)
    assert libc.prctl(38, 1, 0, 0, 0) == 0  # PR_SET_NO_NEW_PRIVS
    assert sp.install(confine_calls.load()[0], prog)
    assert libc.unshare(newuser) != 0 and ctypes.get_errno() == 1


def drop_to_nobody() -> str | None:
    os.setgroups([])
    os.setresgid(NOBODY, NOBODY, NOBODY)
    os.setresuid(NOBODY, NOBODY, NOBODY)
    if not os.access(sys.executable, os.X_OK):
        # This interpreter lives where nobody may not go (e.g. under /root): use a
        # system Python of the same version for the child (stdlib only, -I -S).
        want = "python%d.%d" % sys.version_info[:2]
        for d in ("/usr/bin", "/usr/local/bin", "/bin"):
            cand = os.path.join(d, want)
            if os.access(cand, os.X_OK):
                sys.executable = cand
                return None
        return "no Python executable for uid 65534"
    return None


class Api:
    def rpc_methods(self):
        return {"echo": lambda x=None: x, "nan": lambda: float("nan"), "inf": lambda: [1.0, float("inf")]}


def main() -> None:
    with open(sys.argv[1]) as fh:  # a file: the cases are over the kernel's limit for one argument
        spec = json.load(fh)
    mode = spec["mode"]
    # Import while the install is readable (uid 65534 may not read /root).
    import ctypes  # noqa: F401

    from backchannel.config import Settings
    from backchannel.config.sections import SandboxSettings
    from backchannel.doctor import check_sandbox
    from backchannel.sandbox import seccomp_policy  # noqa: F401
    from tests.support.sandbox_bypass import execute_layers

    if mode == "nouserns":
        block_user_namespaces(spec["syscalls"])
    if mode in ("userns", "nouserns"):
        skip = drop_to_nobody()
        if skip:
            print(json.dumps({"skip": skip}))
            return
    tempfile.tempdir = spec["tmp"]

    out = {"uid": os.getuid(), "pid": os.getpid(), "results": {}}
    for case in spec["cases"]:
        code = case["code"].replace("PARENT_PID", str(os.getpid()))
        limits = SandboxSettings(**{**spec["limits"], **case.get("limits", {})})
        r = execute_layers(code, Api(), limits, frozenset(case["layers"]))
        out["results"][case["name"]] = r.to_json()
    # What `backchannel doctor` says in this mode, by default and with the opt-in.
    out["doctor"] = {}
    for label, extra in (("default", {}), ("opt_in", {"allow_unisolated": True})):
        settings = Settings(sandbox=SandboxSettings(**{**spec["limits"], **extra}))
        out["doctor"][label] = check_sandbox(settings).to_dict()
    out["alive"] = True
    print(json.dumps(out))


if __name__ == "__main__":
    main()
