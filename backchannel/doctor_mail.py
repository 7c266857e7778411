"""`doctor`'s check of `[mail]`: the IMAP settings and secret, locally;
with --deep, a real login and a read-only look at each folder."""

from __future__ import annotations

import importlib.util
import ipaddress
from typing import TYPE_CHECKING

from backchannel.config import Paths, Settings, read_secret

if TYPE_CHECKING:
    from backchannel.doctor import Check


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_mail(settings: Settings, paths: Paths, deep: bool = False) -> Check:
    from backchannel.doctor import Check

    m = settings.mail
    if not m.enabled or not m.host:
        why = "disabled" if not m.enabled else "[mail] host not set"
        return Check(
            "mail",
            "ok",
            f"IMAP sync off ({why}); Maildir, mbox and .eml files go through `backchannel ingest` and the inbox",
        )
    problems: list[str] = []
    if importlib.util.find_spec("imapclient") is None:
        return Check("mail", "fail", "the imapclient package is not installed (pip install -e .)")
    if not m.username:
        problems.append("[mail] username is not set")
    if not read_secret(paths, m.password_secret):
        problems.append(f"secret {m.password_secret!r} missing (a file in the secrets dir)")
    if m.security == "none" and not _loopback(m.host):
        problems.append(f"security = 'none' sends the password to {m.host} in clear text")
    if m.ca_file and not m.ca_file.expanduser().is_file():
        problems.append(f"[mail] ca_file {m.ca_file} does not exist")
    if not m.folders:
        problems.append("[mail] folders is empty: nothing would be synced")
    if problems:
        return Check(
            "mail", "fail" if any("missing" in p or "not set" in p for p in problems) else "warn", "; ".join(problems)
        )
    where = (
        f"{m.username}@{m.host}:{m.port} ({m.security}), folders {', '.join(m.folders)}, every {m.sync_interval_s:g} s"
    )
    if not deep:
        return Check("mail", "ok", where + " (`doctor --deep` logs in)")
    from backchannel.engine.mail_sync import MailSyncError, connect

    try:
        client = connect(settings, paths)
    except MailSyncError as exc:
        return Check("mail", "fail", str(exc))
    seen, missing = [], []
    try:
        for folder in m.folders:
            try:
                info = client.select_folder(folder, readonly=True)
                seen.append(f"{folder}: {int(info.get(b'EXISTS', 0))} messages")
            except Exception as exc:  # noqa: BLE001 - the server's refusal, reported per folder
                missing.append(f"{folder}: {exc}")
    finally:
        try:
            client.logout()
        except Exception:  # noqa: BLE001 - a broken connection at the end changes nothing
            pass
    if missing:
        return Check("mail", "fail", f"{where}; cannot open " + "; ".join(missing))
    return Check("mail", "ok", f"{where}; logged in: " + ", ".join(seen))
