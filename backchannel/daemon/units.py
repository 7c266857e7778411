"""Service units: a systemd user unit and a launchd LaunchAgent plist, generated
for this installation (the absolute path of this interpreter, so the venv's
python runs the daemon), and their install/uninstall.

systemd: Type=notify (the daemon sends READY=1 and pings the watchdog),
Restart=on-failure, WatchdogSec, secrets passed with LoadCredential= (the
daemon reads $CREDENTIALS_DIRECTORY first). No After=network-online.target: a
user manager cannot order on it (it is a system target), and the daemon works
offline anyway.

launchd: RunAtLoad, KeepAlive on failure, logs under ~/Library/Logs. macOS
privacy protection (TCC) blocks a LaunchAgent from ~/Documents and ~/Desktop,
so default folders live elsewhere and `check_macos_folders()` warns about them.
"""

from __future__ import annotations

import os
import plistlib
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

from backchannel.config import Paths, Settings

UNIT_NAME = "backchannel.service"
LAUNCHD_LABEL = "io.backchannel.daemon"
WATCHDOG_SEC = 60
ENV_PASSTHROUGH = ("BACKCHANNEL_HOME", "BACKCHANNEL_CONFIG", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME")


def python_path() -> str:
    return os.path.abspath(sys.executable)


def _secret_files(paths: Paths) -> list[Path]:
    """Secret files to hand over as credentials (the config's secrets dir only)."""
    d = paths.config_dir / "secrets"
    if not d.is_dir():
        return []
    return sorted(f for f in d.iterdir() if f.is_file() and not f.name.startswith("."))


def _systemd_quote(value: str) -> str:
    if not value or any(c in value for c in " \t\"'\\$%;"):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%").replace("$", "$$") + '"'
    return value


def systemd_unit(paths: Paths, environ: dict[str, str] | None = None) -> str:
    env = os.environ if environ is None else environ
    lines = [
        "[Unit]",
        "Description=backchannel: meeting memory and quiet proposals",
        "Documentation=https://github.com/backchannel/backchannel/blob/main/docs/daemon.md",
        "StartLimitIntervalSec=300",
        "StartLimitBurst=5",
        "",
        "[Service]",
        "Type=notify",
        "NotifyAccess=main",
        f"ExecStart={_systemd_quote(python_path())} -m backchannel run",
        "ExecReload=/bin/kill -HUP $MAINPID",
        "Restart=on-failure",
        "RestartSec=5",
        f"WatchdogSec={WATCHDOG_SEC}",
        "TimeoutStopSec=15",
        "KillMode=mixed",
        "Environment=PYTHONUNBUFFERED=1",
    ]
    for var in ENV_PASSTHROUGH:
        if env.get(var):
            lines.append(f"Environment={_systemd_quote(f'{var}={env[var]}')}")
    for f in _secret_files(paths):
        lines.append(f"LoadCredential={f.name}:{_systemd_quote(str(f))}")
    lines += [
        "NoNewPrivileges=yes",
        "PrivateTmp=yes",
        "",
        "[Install]",
        "WantedBy=default.target",
        "",
    ]
    return "\n".join(lines)


def launchd_plist(paths: Paths, environ: dict[str, str] | None = None, home: Path | None = None) -> bytes:
    env = os.environ if environ is None else environ
    home = home or Path.home()
    logs = home / "Library" / "Logs" / "backchannel"
    envvars = {"PYTHONUNBUFFERED": "1"}
    envvars.update({v: env[v] for v in ENV_PASSTHROUGH if env.get(v)})
    doc = {
        "Label": LAUNCHD_LABEL,
        "ProgramArguments": [python_path(), "-m", "backchannel", "run"],
        "RunAtLoad": True,
        "KeepAlive": {"SuccessfulExit": False},
        "ThrottleInterval": 30,
        "ProcessType": "Background",
        "WorkingDirectory": str(paths.data_dir),
        "EnvironmentVariables": envvars,
        "StandardOutPath": str(logs / "daemon.log"),
        "StandardErrorPath": str(logs / "daemon.log"),
        "ExitTimeOut": 15,
    }
    return plistlib.dumps(doc, fmt=plistlib.FMT_XML, sort_keys=False)


def check_macos_folders(settings: Settings, paths: Paths, home: Path | None = None) -> list[str]:
    """Folders launchd cannot read without Full Disk Access (TCC): warnings."""
    home = home or Path.home()
    protected = [home / "Documents", home / "Desktop", home / "Downloads"]
    folders = {"data dir": paths.data_dir, "config dir": paths.config_dir}
    if settings.inbox.path:
        folders["inbox"] = Path(settings.inbox.path).expanduser()
    if settings.signals.drop_dir:
        folders["signal drop folder"] = Path(settings.signals.drop_dir).expanduser()
    warnings = []
    for what, f in folders.items():
        f = f.resolve() if f.exists() else f
        for p in protected:
            if f == p or p in f.parents:
                warnings.append(
                    f"the {what} {f} is inside {p}: a LaunchAgent cannot read it without Full Disk "
                    f"Access; move it elsewhere (e.g. ~/backchannel)"
                )
    return warnings


def check_private_tmp(settings: Settings, paths: Paths, python: str | None = None) -> list[str]:
    """What the systemd unit cannot reach because it sets PrivateTmp=yes: the service
    gets its own empty /tmp, so a venv, data or config under /tmp (or /var/tmp) is
    not there for it. Warnings, one per place."""
    places = {
        "Python (the venv)": Path(python or python_path()),
        "data dir": paths.data_dir,
        "config dir": paths.config_dir,
    }
    if settings.inbox.path:
        places["inbox"] = Path(settings.inbox.path).expanduser()
    out = []
    for what, p in places.items():
        p = Path(os.path.abspath(p))  # not resolved: /tmp behind a link is still the unit's private /tmp
        for tmp in (Path("/tmp"), Path("/var/tmp")):
            if p == tmp or tmp in p.parents:
                out.append(
                    f"the {what} {p} is under {tmp}, but the unit sets PrivateTmp=yes: the service would see "
                    f"an empty {tmp} and not find it; move it (e.g. under ~/.local) before installing"
                )
    return out


def default_kind() -> str:
    return "launchd" if sys.platform == "darwin" else "systemd"


def unit_path(kind: str, environ: dict[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    home = Path(env.get("HOME") or Path.home())
    if kind == "systemd":
        base = Path(env["XDG_CONFIG_HOME"]) if env.get("XDG_CONFIG_HOME") else home / ".config"
        return base / "systemd" / "user" / UNIT_NAME
    if kind == "launchd":
        return home / "Library" / "LaunchAgents" / f"{LAUNCHD_LABEL}.plist"
    raise ValueError(f"unknown service kind {kind!r}; use systemd or launchd")


def render(kind: str, paths: Paths) -> bytes:
    if kind == "systemd":
        return systemd_unit(paths).encode()
    if kind == "launchd":
        return launchd_plist(paths)
    raise ValueError(f"unknown service kind {kind!r}; use systemd or launchd")


def _run(cmd: list[str]) -> tuple[int, str]:
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return 127, str(exc)
    return p.returncode, (p.stderr or p.stdout).strip()


def install(kind: str, paths: Paths, *, activate: bool = True) -> dict[str, Any]:
    """Write the unit (mode 0644) and, with `activate`, enable and start it."""
    target = unit_path(kind)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.tmp")
    tmp.write_bytes(render(kind, paths))
    os.chmod(tmp, 0o644)
    os.replace(tmp, target)
    steps: list[dict[str, Any]] = []
    if activate:
        if kind == "systemd":
            cmds = [["systemctl", "--user", "daemon-reload"], ["systemctl", "--user", "enable", "--now", UNIT_NAME]]
        else:
            (Path.home() / "Library" / "Logs" / "backchannel").mkdir(parents=True, exist_ok=True)
            cmds = [["launchctl", "bootstrap", f"gui/{os.getuid()}", str(target)]]
        for c in cmds:
            rc, msg = _run(c)
            steps.append({"command": shlex.join(c), "rc": rc, "output": msg})
            if rc != 0:
                break
    return {"kind": kind, "path": str(target), "activated": activate, "steps": steps}


def uninstall(kind: str, *, deactivate: bool = True) -> dict[str, Any]:
    target = unit_path(kind)
    steps: list[dict[str, Any]] = []
    if deactivate:
        if kind == "systemd":
            cmds = [["systemctl", "--user", "disable", "--now", UNIT_NAME]]
        else:
            cmds = [["launchctl", "bootout", f"gui/{os.getuid()}/{LAUNCHD_LABEL}"]]
        for c in cmds:
            rc, msg = _run(c)
            steps.append({"command": shlex.join(c), "rc": rc, "output": msg})
    existed = target.exists()
    if existed:
        target.unlink()
    if deactivate and kind == "systemd":
        rc, msg = _run(["systemctl", "--user", "daemon-reload"])
        steps.append({"command": "systemctl --user daemon-reload", "rc": rc, "output": msg})
    return {"kind": kind, "path": str(target), "removed": existed, "steps": steps}
