"""The tables of config.toml. Every model forbids unknown keys so that a typo is
an error naming the key, never a silently ignored setting; closed sets of words
are `Literal`s, durations and counts carry their bounds, clock times are parsed. So a bad value
fails when the config is loaded, naming its key and the file, not when it is first
used. Time zones, crontab lines and quiet hours are checked by triggers/checks.py
before the daemon starts and at each reload (`backchannel status` reports them)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Literal, get_args

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, field_validator

from backchannel.config.values import clock_time

# Durations and counts: a negative one is a typo; the periods a loop sleeps on must be
# above zero (a zero period spins).
Seconds = Annotated[float, Field(ge=0)]
Period = Annotated[float, Field(gt=0)]
Count = Annotated[int, Field(ge=0)]
Port = Annotated[int, Field(ge=0, le=65535)]
Size = Annotated[int, Field(ge=1)]  # a limit: zero would refuse everything
Fraction = Annotated[float, Field(ge=0, le=1)]
ClockTime = Annotated[str, AfterValidator(clock_time)]


def _lower(v: object) -> object:
    return v.strip().lower() if isinstance(v, str) else v


def _upper(v: object) -> object:
    return v.strip().upper() if isinstance(v, str) else v


# Providers a bare word is most likely meant for ("openai" alone names no model).
_PROVIDERS = (
    "openai",
    "anthropic",
    "ollama",
    "ollama_chat",
    "hosted_vllm",
    "gemini",
    "vertex_ai",
    "mistral",
    "groq",
    "azure",
    "bedrock",
    "lm_studio",
    "openrouter",
    "together_ai",
    "deepseek",
    "cohere",
)
_MODEL_HINT = 'a model is "offline" or a litellm model string such as "openai/gpt-4.1-mini"'


def _model_name(v: str) -> str:
    """ "offline", "provider/model", or a bare model id litellm maps itself ("gpt-4.1-mini": a
    digit or a dash in it). A bare word is a typo: "offlin" fails here, at config load, with
    the nearest name, not at the first ingest with litellm's message. Checked without litellm."""
    import difflib

    name = v.strip()
    if not name:
        raise ValueError(_MODEL_HINT)
    if name == "offline" or ("/" in name and all(part.strip() for part in name.split("/", 1))):
        return name
    if "/" not in name and re.search(r"[\d-]", name) and not name.lower().startswith("offl"):
        return name  # a bare model id ("gpt-4.1-mini", "claude-sonnet-4-5")
    if name.lower() in _PROVIDERS:
        raise ValueError(f'{name!r} is a provider, not a model: write "{name.lower()}/MODEL", or "offline"')
    close = difflib.get_close_matches(name.lower(), ["offline", *_PROVIDERS], n=1, cutoff=0.6)
    if close == ["offline"]:
        raise ValueError(f'{name!r} is not a model: did you mean "offline"?')
    if close:
        raise ValueError(f'{name!r} is not a model: did you mean "{close[0]}/MODEL"? ({_MODEL_HINT})')
    raise ValueError(f"{name!r} is not a model: {_MODEL_HINT}")


ModelName = Annotated[str, AfterValidator(_model_name)]
Channel = Literal["email", "slack", "webhook", "apprise"]
CHANNELS: tuple[str, ...] = get_args(Channel)
LogLevel = Annotated[Literal["DEBUG", "INFO", "WARNING", "WARN", "ERROR", "CRITICAL"], BeforeValidator(_upper)]
SmtpSecurity = Annotated[Literal["starttls", "tls", "none"], BeforeValidator(_lower)]


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class OwnerSettings(Section):
    """Who "me" is: first-person statements by the owner resolve to this entity."""

    name: str = "Me"
    aliases: list[str] = Field(default_factory=list)
    email: str | None = None
    timezone: str = "UTC"


class BudgetSettings(Section):
    per_run_tokens: Count | None = 200_000
    per_run_cost_usd: Seconds | None = 0.50  # (a non-negative amount, like a duration)
    per_day_tokens: Count | None = 2_000_000
    per_day_cost_usd: Seconds | None = 5.00


class ModelSettings(Section):
    """Each role is "offline" or a litellm model string such as openai/gpt-4.1-mini."""

    extract: ModelName = "offline"
    sweep: ModelName = "offline"
    draft: ModelName = "offline"
    api_base: str | None = None
    timeout_s: Period = 60.0
    retries: Count = 3
    backoff_s: Seconds = 1.0
    fallbacks: list[ModelName] = Field(default_factory=list)
    max_repair_attempts: Count = 1
    sweep_attempts: Annotated[int, Field(ge=1)] = 3
    chunk_tokens: Annotated[int, Field(ge=1)] = 3000
    chunk_overlap_utterances: Count = 2
    budget: BudgetSettings = Field(default_factory=BudgetSettings)


class InboxSettings(Section):
    enabled: bool = True
    path: Path | None = None  # default: <data_dir>/inbox
    quiet_period_s: Seconds = 2.0
    rescan_interval_s: Period = 300.0
    poll_interval_s: Period = 1.0
    force_polling: bool = False
    max_file_mb: Period = 20.0  # a larger drop goes to failed/ unread (a 10-hour meeting is under 1 MB)


class ScheduleSettings(Section):
    """Cron strings (5 fields, crontab order) for the periodic sweep."""

    sweep: list[str] = Field(default_factory=lambda: ["0 8 * * 1-5"])
    misfire_grace_s: Count = 6 * 3600
    interval_s: Period | None = None  # a plain interval, handy for tests and demos
    wallclock_check_s: Period = 60.0
    wallclock_jump_s: Period = 120.0  # wall minus monotonic drift that counts as a suspend
    timezone: str | None = None  # zone of the cron strings; default: owner.timezone


class CalendarSettings(Section):
    sources: list[str] = Field(default_factory=list)  # ICS paths or URLs
    lead_hours: Seconds = 24.0
    refresh_s: Period = 900.0
    horizon_days: Count = 14
    timeout_s: Period = 20.0  # per URL fetch
    timezone: str | None = None  # for floating times and all-day events; default: owner.timezone


class SignalSettings(Section):
    feeds: list[str] = Field(default_factory=list)  # RSS/Atom URLs or paths
    drop_dir: Path | None = None  # default: <data_dir>/signals
    refresh_s: Period = 1800.0
    drop_poll_s: Period = 30.0  # how often the drop folder is scanned
    timeout_s: Period = 20.0  # per feed fetch


class GateSettings(Section):
    score_threshold: Fraction = 0.6
    dedupe_window_days: Count = 30
    max_per_day: Count = 3
    max_per_week: Count = 10
    min_gap_minutes: Count = 60
    quiet_hours: str | None = "21:00-07:00"  # local to owner.timezone
    similarity_threshold: Fraction = 0.75  # calibrated: docs/rejection-memory.md


class EmailSettings(Section):
    host: str | None = None
    port: Port = 587
    security: SmtpSecurity = "starttls"
    username: str | None = None
    password_secret: str = "smtp_password"  # file name in the secrets dir
    sender: str | None = None
    to: str | None = None  # default: owner.email
    digest: bool = False
    timeout_s: Period = 30.0
    digest_time: ClockTime = "08:00"  # when the daily digest goes out, local to owner.timezone
    ca_file: Path | None = None  # a private CA for a self-hosted SMTP server's certificate


class SlackSettings(Section):
    webhook_secret: str = "slack_webhook_url"


class WebhookSettings(Section):
    url: str | None = None
    secret_name: str = "webhook_hmac_key"


class DeliverySettings(Section):
    channels: list[Channel] = Field(default_factory=list)
    email: EmailSettings = Field(default_factory=EmailSettings)
    slack: SlackSettings = Field(default_factory=SlackSettings)
    webhook: WebhookSettings = Field(default_factory=WebhookSettings)
    apprise_urls_secret: str = "apprise_urls"
    max_attempts: Annotated[int, Field(ge=1)] = 8
    link_ttl_hours: Count = 72
    retry_base_s: Seconds = 30.0  # first retry delay; doubles per failed attempt
    retry_max_s: Seconds = 6 * 3600.0  # the delay stops growing here; a delivery is never dropped
    public_base_url: str | None = None  # default: the local API address


class SandboxSettings(Section):
    cpu_s: Size = 10
    wall_s: Period = 20.0
    memory_mb: Size = 1024
    max_output_bytes: Size = 1_000_000
    max_result_bytes: Size = 2_000_000
    max_api_calls: Size = 10_000
    max_rows: Size = 5_000_000
    max_file_bytes: Size = 16_000_000  # RLIMIT_FSIZE: largest file the child may write in its temp dir
    max_open_files: Size = 64  # RLIMIT_NOFILE of the child
    workdir_mb: Size = 64  # size of the child's private tmpfs (its only writable place)
    workdir_inodes: Size = 2048  # files and directories that tmpfs may hold
    # Run generated code even where no namespaces exist (non-root without user
    # namespaces): a read-only landlock domain, seccomp and the rlimits then stand,
    # and without landlock nothing runs. Off by default.
    allow_unisolated: bool = False


class ApiSettings(Section):
    host: str = "127.0.0.1"
    port: Port = 0  # 0: pick a free port, written to the state dir


class LoggingSettings(Section):
    level: LogLevel = "INFO"
    json_logs: bool | None = None  # default: JSON when stderr is not a TTY


LOOPBACK_HOSTS = ("127.0.0.1", "::1", "localhost")


def loopback_only(host: str) -> str:
    if host.strip("[]").lower() not in LOOPBACK_HOSTS:
        raise ValueError(f"must be a loopback address ({', '.join(LOOPBACK_HOSTS)}), got {host!r}")
    return host.strip("[]")


class WebSettings(Section):
    """The local web app: served by the daemon when enabled, else by `backchannel web`.
    Loopback only: it shows everything the memory holds."""

    enabled: bool = False  # true: `backchannel run` serves it too
    host: str = "127.0.0.1"
    port: Port = 0  # 0: any free port (written to <state>/web.port)
    session_hours: Period = 12.0
    login_link_minutes: Period = 10.0  # a one-time login link expires after this

    _loopback = field_validator("host")(loopback_only)


class McpSettings(Section):
    """`backchannel mcp`: read tools always; the feedback tool only with allow_feedback.
    Nothing it exposes can send a message."""

    allow_feedback: bool = False
    host: str = "127.0.0.1"  # for `backchannel mcp --http`
    port: Port = 0

    _loopback = field_validator("host")(loopback_only)


class MailSettings(Section):
    """Email as a source: IMAP sync on a schedule; Maildir, mbox and .eml
    files go through `backchannel ingest` and the inbox."""

    enabled: bool = True  # IMAP sync runs only when `host` is set too
    host: str | None = None  # IMAP server
    port: Port = 993
    security: Literal["tls", "starttls", "none"] = "tls"  # none: loopback only (doctor warns otherwise)
    username: str | None = None
    password_secret: str = "imap_password"  # file name in the secrets dir
    folders: list[str] = Field(default_factory=lambda: ["INBOX"])
    sync_interval_s: Period = 900.0  # how often the schedule enqueues a mail wake
    batch: Annotated[int, Field(ge=1)] = 25  # messages fetched per IMAP round trip
    max_per_sync: Annotated[int, Field(ge=1)] = (
        2000  # per wake; the rest is the next wake's, so one sync never holds the daemon for long
    )
    max_message_mb: Period = 25.0  # larger messages are recorded as errors, unread (attachments are never kept)
    timeout_s: Period = 30.0
    ca_file: Path | None = None  # a private CA for a self-hosted server's certificate
