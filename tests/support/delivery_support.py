"""Real loopback servers and fixtures for the delivery tests: an aiosmtpd SMTP
server (plain, STARTTLS or implicit TLS, optional AUTH) that records every
message, and an HTTP server that records every request."""

from __future__ import annotations

import json
import shutil
import socket
import ssl
import subprocess
import threading
import warnings
from dataclasses import dataclass, field
from datetime import datetime
from email import message_from_bytes, policy
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from tests.support.daemon_support import DaemonLog

OWNER = "owner@example.net"
USER, PASSWORD = "bc-user", "s3cret-pass"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def make_cert(dirpath: Path) -> tuple[Path, Path]:
    """A self-signed cert for 127.0.0.1, via the openssl CLI or the cryptography package."""
    cert, key = dirpath / "cert.pem", dirpath / "key.pem"
    if shutil.which("openssl"):
        subprocess.run(
            [
                "openssl",
                "req",
                "-x509",
                "-newkey",
                "ec",
                "-pkeyopt",
                "ec_paramgen_curve:prime256v1",
                "-nodes",
                "-keyout",
                str(key),
                "-out",
                str(cert),
                "-days",
                "1",
                "-subj",
                "/CN=127.0.0.1",
                "-addext",
                "subjectAltName=IP:127.0.0.1,DNS:localhost",
            ],
            check=True,
            capture_output=True,
            timeout=30,
        )
        return cert, key
    import datetime as dt
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    k = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = dt.datetime.now(dt.UTC)
    c = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(k.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
        .sign(k, hashes.SHA256())
    )
    cert.write_bytes(c.public_bytes(serialization.Encoding.PEM))
    key.write_bytes(
        k.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return cert, key


@dataclass
class Received:
    mail_from: str
    rcpt_tos: list[str]
    data: bytes

    @property
    def msg(self):
        return message_from_bytes(self.data, policy=policy.default)


@dataclass
class SmtpServer:
    port: int
    messages: list[Received] = field(default_factory=list)
    controller: Any = None

    def stop(self) -> None:
        if self.controller is not None:
            self.controller.stop()
            self.controller = None


def start_smtp(
    mode: str = "plain", cert: tuple[Path, Path] | None = None, auth: bool = False, port: int | None = None
) -> SmtpServer:
    """mode: plain | starttls | tls (implicit). With auth, USER/PASSWORD are required."""
    for attempt in range(5):
        try:
            return _start_smtp(SmtpServer(port or free_port()), mode, cert, auth)
        except OSError:
            # A free port can be taken by a parallel test before the server binds it: try
            # another, unless the caller asked for this one.
            if port is not None or attempt == 4:
                raise
    raise AssertionError("unreachable")


def _start_smtp(server: SmtpServer, mode: str, cert: tuple[Path, Path] | None, auth: bool) -> SmtpServer:
    from aiosmtpd.controller import Controller
    from aiosmtpd.smtp import AuthResult

    class Handler:
        async def handle_DATA(self, srv, session, envelope):
            server.messages.append(
                Received(envelope.mail_from, list(envelope.rcpt_tos), envelope.original_content or envelope.content)
            )
            return "250 OK"

    def authenticator(srv, session, envelope, mechanism, auth_data):
        ok = auth_data.login == USER.encode() and auth_data.password == PASSWORD.encode()
        return AuthResult(success=ok)

    kwargs: dict[str, Any] = {"hostname": "127.0.0.1", "port": server.port}
    if auth:
        kwargs.update(authenticator=authenticator, auth_required=True, auth_require_tls=mode != "plain")
    ctx = None
    if mode in ("starttls", "tls"):
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ctx.load_cert_chain(str(cert[0]), str(cert[1]))
    if mode == "starttls":
        kwargs.update(tls_context=ctx, require_starttls=True)
    elif mode == "tls":
        kwargs.update(ssl_context=ctx, server_hostname="127.0.0.1")
    with warnings.catch_warnings():  # AUTH without TLS on loopback is what the plain-path tests want
        warnings.simplefilter("ignore")
        controller = Controller(Handler(), **kwargs)
        controller.start()
    server.controller = controller
    return server


@dataclass
class HttpCapture:
    server: ThreadingHTTPServer
    requests: list[dict[str, Any]]
    status: int = 200

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def start_http(status: int = 200) -> HttpCapture:
    cap = HttpCapture(None, [], status)  # type: ignore[arg-type]

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *a: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            cap.requests.append({"path": self.path, "headers": dict(self.headers.items()), "body": body})
            self.send_response(cap.status)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

    cap.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=cap.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    return cap


def make_settings(**delivery: Any):
    from backchannel.config import Settings

    email = delivery.pop("email", {})
    return Settings(
        owner={"name": "Owner", "email": OWNER, "timezone": "UTC"},
        gate={"quiet_hours": None},
        delivery={"channels": delivery.pop("channels", ["email"]), "email": email, **delivery},
    )


def write_secret(home: Path, name: str, value: str) -> None:
    d = home / "secrets"
    d.mkdir(exist_ok=True)
    (d / name).write_text(value)


def add_entity(store: Any, name: str, kind: str = "person") -> int:
    return int(
        store.scalar(
            "INSERT INTO entities (kind, name, norm) VALUES (?, ?, ?) RETURNING id", [kind, name, name.casefold()]
        )
    )


def add_proposal(
    store: Any,
    *,
    kind: str = "introduction",
    entity_ids: list[int] | None = None,
    title: str = "Ask Marc for an introduction to Acme's CIO",
    body: str = "Thursday you see Marc. He worked with Acme's CIO; Acme published a tender.",
    why: str = "Marc Dupont worked with the current CIO of Acme, and Acme published a tender this morning.",
    evidence: list[dict[str, Any]] | None = None,
    action: dict[str, Any] | None = None,
    status: str = "pending",
    created_at: datetime | None = None,
) -> str:
    """Insert a proposal as the daemon's pipeline stores it; returns its id."""
    from backchannel.delivery.approval import action_hash
    from backchannel.memory.store import utcnow

    n = store.scalar("SELECT nextval('proposal_numbers')")
    pid = f"P-{n}"
    ids = sorted(entity_ids or [])
    now = created_at or utcnow()
    ev = (
        evidence
        if evidence is not None
        else [
            {
                "assertion_id": 1,
                "quote": "I worked with their CIO for three years at Globex.",
                "speaker": "Marc Dupont",
                "said_at": "2025-09-12",
                "source_id": "S1",
            }
        ]
    )
    store.con.execute(
        """INSERT INTO proposals (id, run_id, dedupe_key, kind, entity_ids, title, body, score, why, evidence, action,
                                  action_hash, status, created_at, updated_at)
           VALUES (?, 'R-test', ?, ?, ?, ?, ?, 0.8, ?, ?, ?, ?, ?, ?, ?)""",
        [
            pid,
            f"{kind}:" + ",".join(map(str, ids)),
            kind,
            ids,
            title,
            body,
            why,
            json.dumps(ev),
            json.dumps(action) if action else None,
            action_hash(action) if action else None,
            status,
            now,
            now,
        ],
    )
    return pid


# -- a real daemon on a demo-like home ----------------------------------------------
class DaemonProc(DaemonLog):
    """One `backchannel run` child in `home`; its log lines go to a file we poll."""

    def __init__(self, home: Path, crash_at: str | None = None):
        import os
        import subprocess
        import sys

        self.home = home
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("BACKCHANNEL_") and k != "NOTIFY_SOCKET"}
        self.env.update(BACKCHANNEL_HOME=str(home), PYTHONUNBUFFERED="1")
        run_env = dict(self.env)
        if crash_at:  # the daemon dies there at once, as under kill -9 (the test hook)
            run_env["BACKCHANNEL_TEST_CRASH_AT"] = crash_at
        self.log_path = home / ("daemon.log" if not crash_at else f"daemon-crash-{crash_at}.log")
        with self.log_path.open("w") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "backchannel", "run"], env=run_env, stdout=subprocess.DEVNULL, stderr=log
            )

    def wait_log(self, pred, timeout: float = 60.0) -> dict[str, Any]:
        return super().wait_log(pred, timeout, poll=0.1)  # a delivery round trip takes longer

    def cli(self, *args: str, input: str | None = None, env: dict[str, str] | None = None):
        import subprocess
        import sys

        return subprocess.run(
            [sys.executable, "-m", "backchannel", *args],
            env={**self.env, **(env or {})},
            capture_output=True,
            text=True,
            timeout=120,
            input=input,
        )

    def stop(self) -> int:
        import signal

        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=20)
        except Exception:  # noqa: BLE001 - a hung daemon must not outlive the test
            self.proc.kill()
            return self.proc.wait(timeout=10)


def wait_for(pred, timeout: float = 60.0, what: str = "condition") -> Any:
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = pred()
        if got:
            return got
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def demo_home(
    home: Path, delivery_toml: str, *, marc_email: bool = True, extra_files: list[Path] | None = None, gate: str = ""
) -> None:
    """The demo's story (its corpus, a meeting with Marc on Thursday, Acme's tender),
    ingested in-process before any daemon, with `delivery_toml` appended to the config.
    Without `marc_email` the invitation names Marc but gives no address."""
    from backchannel.config import load_settings, resolve_paths
    from backchannel.demo import corpus_files
    from backchannel.demo.scenario import prepare_home
    from backchannel.extraction.ingest import ingest_file
    from backchannel.memory import Store, entities

    prepare_home(home)
    if not marc_email:
        ics = home / "demo" / "calendar.ics"
        ics.write_text(
            ics.read_text().replace(
                "ATTENDEE;CN=Marc Dupont:mailto:marc@example.org", "ATTENDEE;CN=Marc Dupont:Marc Dupont"
            )
        )
    cfg = (home / "config.toml").read_text()
    cfg = cfg.replace('[gate]\nquiet_hours = ""', '[gate]\nquiet_hours = ""\nmin_gap_minutes = 0\n' + gate)
    cfg = cfg.replace("[signals]\n", "[signals]\ndrop_poll_s = 0.3\n")
    (home / "config.toml").write_text(cfg + "\n" + delivery_toml)
    env = {"BACKCHANNEL_HOME": str(home)}
    paths = resolve_paths(env).ensure()
    settings = load_settings(paths, environ=env)
    with Store.open(paths.db_file) as st:
        entities.ensure_owner(st, settings.owner.name, settings.owner.aliases)
        for f in [*corpus_files(), *(extra_files or [])]:
            assert ingest_file(st, settings, f).status == "ingested", f


def email_toml(smtp_port: int, *, auth: bool = False) -> str:
    login = f'username = "{USER}"\n' if auth else ""
    return (
        f'[delivery.email]\nhost = "127.0.0.1"\nport = {smtp_port}\nsecurity = "none"\n{login}'
        f'sender = "bc@example.net"\n'
    )
