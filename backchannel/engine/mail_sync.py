"""IMAP sync: what a `mail` wake does, on the daemon's writer thread.

For each folder in `[mail] folders`: select it read-only, compare its UIDVALIDITY with
the one stored in `mail_sync_state` (a change means the server renumbered the folder:
start again from UID 0; Message-IDs keep the re-read messages from doubling), then
fetch the messages above `last_uid` in batches (sizes first: a message over
`max_message_mb` is recorded as an error and never downloaded; bodies with
BODY.PEEK[] so nothing is marked read) and ingest each one.

Crash safety: a message's source commits first, then the folder's `last_uid` moves past
it. A kill -9 between the two re-reads that one message at the next sync, and its
Message-ID makes that a no-op; nothing before `last_uid` is ever lost because it only
moves after the commit. A message that cannot be read is recorded in `mail_errors`
and skipped; a folder that fails (login, network, no such folder) records its
`last_error` and the others go on.
"""

from __future__ import annotations

import ssl
from collections.abc import Callable
from typing import Any

from backchannel.config import Paths, Settings
from backchannel.config.secrets import read_secret
from backchannel.memory.store import Store, utcnow


class MailSyncError(Exception):
    """The account cannot be reached or logged into; the message says what to fix."""


def account_name(settings: Settings) -> str:
    m = settings.mail
    return f"{m.username or ''}@{m.host or ''}:{m.port}"


def configured(settings: Settings) -> bool:
    return bool(settings.mail.enabled and settings.mail.host)


def connect(settings: Settings, paths: Paths) -> Any:
    """A logged-in IMAPClient (imapclient is imported here, not at start-up)."""
    from imapclient import IMAPClient

    m = settings.mail
    if not m.username:
        raise MailSyncError("[mail] username is not set")
    password = read_secret(paths, m.password_secret)
    if not password:
        raise MailSyncError(f"no IMAP password: put it in the secrets dir as a file named {m.password_secret!r}")
    if m.security not in ("tls", "starttls", "none"):
        raise MailSyncError(f"[mail] security must be tls, starttls or none, not {m.security!r}")
    context = ssl.create_default_context(cafile=str(m.ca_file) if m.ca_file else None)
    try:
        client = IMAPClient(m.host, port=m.port, ssl=m.security == "tls", ssl_context=context, timeout=m.timeout_s)
        if m.security == "starttls":
            client.starttls(context)
    except (TimeoutError, OSError, ssl.SSLError) as exc:
        raise MailSyncError(f"cannot reach {m.host}:{m.port}: {exc}") from None
    try:
        client.login(m.username, password)
    except Exception as exc:
        _quietly(client.logout)
        raise MailSyncError(f"login as {m.username!r} refused: {_text(exc)}") from None
    return client


def _text(exc: Exception) -> str:
    msg = exc.args[0] if exc.args else exc
    return msg.decode("utf-8", "replace") if isinstance(msg, bytes) else str(msg)


def _quietly(fn: Callable[[], Any]) -> None:
    try:
        fn()
    except Exception:  # noqa: BLE001 - closing a connection that is already broken
        pass


# -- state --------------------------------------------------------------------------


def folder_state(store: Store, account: str, folder: str) -> dict[str, Any] | None:
    rows = store.query("SELECT * FROM mail_sync_state WHERE account = ? AND folder = ?", [account, folder])
    return rows[0] if rows else None


def _save_state(store: Store, account: str, folder: str, **values: Any) -> None:
    if folder_state(store, account, folder) is None:
        store.con.execute("INSERT INTO mail_sync_state (account, folder) VALUES (?, ?)", [account, folder])
    sets = ", ".join(f"{k} = ?" for k in values)
    store.con.execute(
        f"UPDATE mail_sync_state SET {sets} WHERE account = ? AND folder = ?", [*values.values(), account, folder]
    )


def _record_error(store: Store, origin: str, error: str, message_id: str | None = None) -> None:
    store.con.execute(
        """INSERT INTO mail_errors (origin, message_id, error, seen_at) VALUES (?, ?, ?, ?)
           ON CONFLICT (origin) DO UPDATE SET error = excluded.error, seen_at = excluded.seen_at""",
        [origin, message_id, error[:2000], utcnow()],
    )


def status(store: Store, settings: Settings) -> dict[str, Any]:
    """What `backchannel status` shows: each folder's last sync, counts and last error,
    and the latest per-message errors."""
    folders = store.query(
        """SELECT account, folder, uidvalidity, last_uid, messages, failed, last_sync_at, last_error
           FROM mail_sync_state ORDER BY account, folder"""
    )
    for f in folders:
        f["last_sync_at"] = f["last_sync_at"].isoformat() if f["last_sync_at"] else None
    errors = store.query("SELECT origin, error, seen_at FROM mail_errors ORDER BY seen_at DESC LIMIT 10")
    for e in errors:
        e["seen_at"] = e["seen_at"].isoformat()
    return {
        "configured": configured(settings),
        "account": account_name(settings) if configured(settings) else None,
        "folders": folders,
        "recent_errors": errors,
        "messages": int(store.scalar("SELECT count(*) FROM mail_messages") or 0),
    }


# -- sync ---------------------------------------------------------------------------


def sync(
    store: Store,
    settings: Settings,
    paths: Paths,
    *,
    gateway: Any = None,
    run_id: str | None = None,
    checkpoint: Callable[[], None] | None = None,
    crashpoint: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Sync every configured folder once; returns counts and errors (never raises for
    the server's or a message's failures)."""
    account = account_name(settings)
    m = settings.mail
    summary: dict[str, Any] = {
        "account": account,
        "ingested": 0,
        "skipped": 0,
        "failed": 0,
        "folders": {},
        "errors": [],
    }
    try:
        client = connect(settings, paths)
    except MailSyncError as exc:
        with store.transaction():
            for folder in m.folders:
                _save_state(store, account, folder, last_error=str(exc), last_sync_at=utcnow())
        summary["errors"].append(str(exc))
        return summary
    budget = max(1, int(m.max_per_sync))
    try:
        for folder in m.folders:
            try:
                with store.single_threaded():  # ~15 small statements per message: see Store.single_threaded
                    done = _sync_folder(
                        store,
                        settings,
                        client,
                        account,
                        folder,
                        budget,
                        summary,
                        gateway=gateway,
                        run_id=run_id,
                        checkpoint=checkpoint,
                        crashpoint=crashpoint,
                    )
                budget -= done
            except (TimeoutError, MailSyncError, OSError) as exc:
                _folder_failed(store, account, folder, exc, summary)
            except Exception as exc:  # imapclient's IMAPClientError and friends: the server refused
                if type(exc).__module__.startswith(("imapclient", "imaplib")):
                    _folder_failed(store, account, folder, exc, summary)
                else:
                    raise
            if budget <= 0:
                summary["more"] = True  # the daemon enqueues the next slice as its own wake
                break
    finally:
        _quietly(client.logout)
    return summary


def _folder_failed(store: Store, account: str, folder: str, exc: Exception, summary: dict[str, Any]) -> None:
    why = f"{folder}: {_text(exc)}"
    with store.transaction():
        _save_state(store, account, folder, last_error=why, last_sync_at=utcnow())
    summary["errors"].append(why)


def _sync_folder(
    store: Store,
    settings: Settings,
    client: Any,
    account: str,
    folder: str,
    budget: int,
    summary: dict[str, Any],
    *,
    gateway: Any,
    run_id: str | None,
    checkpoint: Callable[[], None] | None,
    crashpoint: Callable[[str], None] | None,
) -> int:
    from backchannel.extraction.mail.batch import batchable, ingest_messages

    m = settings.mail
    limit = int(m.max_message_mb * 1_000_000)
    info = client.select_folder(folder, readonly=True)
    uidvalidity = int(info[b"UIDVALIDITY"])
    state = folder_state(store, account, folder)
    last_uid = int(state["last_uid"]) if state else 0
    if state is None or state["uidvalidity"] != uidvalidity:
        with store.transaction():
            if state is not None:
                store.append_event(
                    "mail.uidvalidity_changed",
                    {"account": account, "folder": folder, "old": state["uidvalidity"], "new": uidvalidity},
                    run_id=run_id,
                )
            _save_state(store, account, folder, uidvalidity=uidvalidity, last_uid=0)
        last_uid = 0
    # "UID n:*" always answers the highest UID, even below n: filter.
    uids = sorted(u for u in client.search(["UID", f"{last_uid + 1}:*"]) if u > last_uid)[:budget]
    counts = {"ingested": 0, "skipped": 0, "failed": 0}
    step = max(1, int(m.batch))
    # Offline, a fetched batch's messages are written in one transaction (mail/batch.py);
    # with a model, one message at a time.
    group_size = step if batchable(settings, gateway) else 1
    for i in range(0, len(uids), step):
        batch = uids[i : i + step]
        sizes = client.fetch(batch, ["RFC822.SIZE"])
        wanted = [u for u in batch if int(sizes.get(u, {}).get(b"RFC822.SIZE", 0)) <= limit]
        bodies = client.fetch(wanted, ["BODY.PEEK[]"]) if wanted else {}
        done: list[tuple[int, str, str | None]] = []  # (uid, status, error) read, not yet past last_uid
        for j in range(0, len(batch), group_size):
            if checkpoint is not None:
                checkpoint()
            group, messages = batch[j : j + group_size], []
            for uid in group:
                raw = bodies.get(uid, {}).get(b"BODY[]") if uid in wanted else None
                if raw is not None:
                    messages.append((uid, (f"imap:{account}/{folder}/{uidvalidity}/{uid}", _reader(bytes(raw)))))
            outcomes = dict(
                zip(
                    (u for u, _m in messages),
                    ingest_messages(
                        store,
                        settings,
                        [m for _u, m in messages],
                        gateway=gateway,
                        run_id=run_id,
                        max_bytes=limit,
                        size=group_size,
                    ),
                )
            )
            for uid in group:
                if uid not in wanted:
                    size = int(sizes.get(uid, {}).get(b"RFC822.SIZE", 0))
                    done.append(
                        (
                            uid,
                            "failed",
                            f"too large: {size / 1e6:.1f} MB; messages up to "
                            f"{limit / 1e6:.0f} MB are read ([mail] max_message_mb); not downloaded",
                        )
                    )
                elif uid not in outcomes:  # expunged between SEARCH and FETCH
                    done.append((uid, "skipped", None))
                elif outcomes[uid].status == "deferred":
                    summary["deferred"] = outcomes[uid].error
                    _advance(store, account, folder, uidvalidity, done, counts)
                    return sum(counts.values())  # the model budget is spent: this UID is read again later
                else:
                    done.append((uid, outcomes[uid].status, outcomes[uid].error))
            if crashpoint is not None:
                crashpoint("mail.after_message")
            # The messages are committed; only now does the folder's position move past them.
            _advance(store, account, folder, uidvalidity, done, counts)
            done = []
    with store.transaction():
        _save_state(store, account, folder, last_sync_at=utcnow(), last_error=None)
    for k, v in counts.items():
        summary[k] += v
    summary["folders"][folder] = {"uidvalidity": uidvalidity, "new": len(uids), **counts}
    return len(uids)


def _reader(raw: bytes) -> Callable[[], bytes]:
    return lambda: raw


def _advance(
    store: Store,
    account: str,
    folder: str,
    uidvalidity: int,
    done: list[tuple[int, str, str | None]],
    counts: dict[str, int],
) -> None:
    """Move the folder's `last_uid` past `done` (read in UID order, their messages committed),
    recording each failed message's error, in one transaction."""
    if not done:
        return
    with store.transaction():
        for uid, status, error in done:
            if status == "failed":
                _record_error(store, f"imap:{account}/{folder}/{uidvalidity}/{uid}", error or "unknown error")
        store.con.execute(
            """UPDATE mail_sync_state SET last_uid = ?, last_sync_at = ?, last_error = NULL,
                   messages = messages + ?, failed = failed + ? WHERE account = ? AND folder = ?""",
            [
                done[-1][0],
                utcnow(),
                sum(s == "ingested" for _u, s, _e in done),
                sum(s not in ("ingested", "skipped") for _u, s, _e in done),
                account,
                folder,
            ],
        )
    for _uid, status, _error in done:
        counts[status if status in counts else "failed"] += 1
