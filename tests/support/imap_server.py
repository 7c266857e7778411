"""A real IMAP server for the mail tests: Debian's dovecot (`.ci/run` installs
dovecot-imapd), started in the foreground with its own config in a temp dir, listening
on a free loopback port, with one passwd-file user whose Maildir lives in that dir."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

DOVECOT = shutil.which("dovecot") or "/usr/sbin/dovecot"
USER, PASSWORD = "alex", "imap-test-password"

_CONF = """\
base_dir = {root}/run
state_dir = {root}/state
log_path = {root}/dovecot.log
instance_name = bc-test-{port}
protocols = imap
listen = 127.0.0.1
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain login
default_login_user = {login_user}
default_internal_user = {internal_user}
first_valid_uid = 1
mail_location = maildir:{root}/mail/%u
passdb {{
  driver = passwd-file
  args = scheme=PLAIN username_format=%u {root}/passwd
}}
userdb {{
  driver = passwd-file
  args = username_format=%u {root}/passwd
}}
service imap-login {{
  inet_listener imap {{
    address = 127.0.0.1
    port = {port}
  }}
  inet_listener imaps {{
    port = 0
  }}
  chroot =
}}
service anvil {{
  chroot =
}}
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Dovecot:
    def __init__(self) -> None:
        if not os.path.exists(DOVECOT):
            pytest.skip("dovecot is not installed (.ci/run installs dovecot-imapd)")
        # Not under pytest's tmp dir: its 0700 parents would keep dovecot's unprivileged
        # mail process out.
        self.root = Path(tempfile.mkdtemp(prefix="bc-dovecot-"))
        self.root.chmod(0o755)
        if os.geteuid() == 0:
            import pwd

            login = "dovenull" if _user_exists("dovenull") else "nobody"
            internal = "dovecot" if _user_exists("dovecot") else "nobody"
            uid = gid = pwd.getpwnam("nobody").pw_uid
            gid = pwd.getpwnam("nobody").pw_gid
        else:
            import getpass

            login = internal = getpass.getuser()
            uid, gid = os.getuid(), os.getgid()
        mail = self.root / "mail"
        mail.mkdir()
        if os.geteuid() == 0:
            os.chown(mail, uid, gid)
        (self.root / "passwd").write_text(f"{USER}:{{PLAIN}}{PASSWORD}:{uid}:{gid}::{mail}/{USER}::\n")
        for attempt in range(5):
            self.port = _free_port()
            (self.root / "dovecot.conf").write_text(
                _CONF.format(root=self.root, port=self.port, login_user=login, internal_user=internal)
            )
            try:
                self._start()
                return
            except RuntimeError as exc:
                # A free port can be taken by a test on another worker before dovecot binds
                # it: try another.
                if "Address already in use" not in str(exc) or attempt == 4:
                    raise

    def _start(self) -> None:
        self.proc = subprocess.Popen(
            [DOVECOT, "-F", "-c", str(self.root / "dovecot.conf")],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"dovecot exited: {self.proc.stderr.read().decode()} {self.log()}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as s:
                    if s.recv(100).startswith(b"* OK"):
                        return
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"dovecot did not listen on {self.port}: {self.log()}")

    def log(self) -> str:
        p = self.root / "dovecot.log"
        return p.read_text()[-3000:] if p.exists() else ""

    def client(self):
        from imapclient import IMAPClient

        c = IMAPClient("127.0.0.1", port=self.port, ssl=False, timeout=10)
        c.login(USER, PASSWORD)
        return c

    def append(self, folder: str, messages: list[bytes]) -> None:
        c = self.client()
        try:
            if folder != "INBOX" and not c.folder_exists(folder):
                c.create_folder(folder)
            for data in messages:
                c.append(folder, data)
        finally:
            c.logout()

    def stop(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
                self.proc.wait(timeout=10)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=5)
        shutil.rmtree(self.root, ignore_errors=True)

    def config(self, folders: list[str], **extra) -> str:
        """The [mail] table that points at this server."""
        lines = [
            "[mail]",
            'host = "127.0.0.1"',
            f"port = {self.port}",
            'security = "none"',
            f'username = "{USER}"',
            "folders = [" + ", ".join(f'"{f}"' for f in folders) + "]",
        ]
        lines += [f"{k} = {v!r}" if not isinstance(v, str) else f'{k} = "{v}"' for k, v in extra.items()]
        return "\n".join(lines) + "\n"


def _user_exists(name: str) -> bool:
    import pwd

    try:
        pwd.getpwnam(name)
        return True
    except KeyError:
        return False


@pytest.fixture
def dovecot():
    server = Dovecot()
    yield server
    server.stop()
