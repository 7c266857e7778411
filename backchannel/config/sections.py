"""The tables of config.toml. Every model forbids unknown keys so that a typo is
an error naming the key, never a silently ignored setting."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class OwnerSettings(Section):
    """Who "me" is: first-person statements by the owner resolve to this entity."""

    name: str = "Me"
    aliases: list[str] = Field(default_factory=list)
    email: str | None = None
    timezone: str = "UTC"


class BudgetSettings(Section):
    per_run_tokens: int | None = 200_000
    per_run_cost_usd: float | None = 0.50
    per_day_tokens: int | None = 2_000_000
    per_day_cost_usd: float | None = 5.00


class ModelSettings(Section):
    """Each role is "offline" or a litellm model string such as openai/gpt-4.1-mini."""

    extract: str = "offline"
    sweep: str = "offline"
    draft: str = "offline"
    api_base: str | None = None
    timeout_s: float = 60.0
    retries: int = 3
    backoff_s: float = 1.0
    fallbacks: list[str] = Field(default_factory=list)
    max_repair_attempts: int = 1
    sweep_attempts: int = 3
    chunk_tokens: int = 3000
    chunk_overlap_utterances: int = 2
    budget: BudgetSettings = Field(default_factory=BudgetSettings)


class InboxSettings(Section):
    enabled: bool = True
    path: Path | None = None  # default: <data_dir>/inbox
    quiet_period_s: float = 2.0
    rescan_interval_s: float = 300.0
    poll_interval_s: float = 1.0
    force_polling: bool = False
    max_file_mb: float = 20.0  # a larger drop goes to failed/ unread (a 10-hour meeting is under 1 MB)


class ScheduleSettings(Section):
    """Cron strings (5 fields, crontab order) for the periodic sweep."""

    sweep: list[str] = Field(default_factory=lambda: ["0 8 * * 1-5"])
    misfire_grace_s: int = 6 * 3600
    interval_s: float | None = None  # a plain interval, handy for tests and demos
    wallclock_check_s: float = 60.0
    wallclock_jump_s: float = 120.0  # wall minus monotonic drift that counts as a suspend
    timezone: str | None = None  # zone of the cron strings; default: owner.timezone


class CalendarSettings(Section):
    sources: list[str] = Field(default_factory=list)  # ICS paths or URLs
    lead_hours: float = 24.0
    refresh_s: float = 900.0
    horizon_days: int = 14
    timeout_s: float = 20.0  # per URL fetch
    timezone: str | None = None  # for floating times and all-day events; default: owner.timezone


class SignalSettings(Section):
    feeds: list[str] = Field(default_factory=list)  # RSS/Atom URLs or paths
    drop_dir: Path | None = None  # default: <data_dir>/signals
    refresh_s: float = 1800.0
    drop_poll_s: float = 30.0  # how often the drop folder is scanned
    timeout_s: float = 20.0  # per feed fetch


class GateSettings(Section):
    score_threshold: float = 0.6
    dedupe_window_days: int = 30
    max_per_day: int = 3
    max_per_week: int = 10
    min_gap_minutes: int = 60
    quiet_hours: str | None = "21:00-07:00"  # local to owner.timezone
    similarity_threshold: float = 0.75  # calibrated: docs/rejection-memory.md


class EmailSettings(Section):
    host: str | None = None
    port: int = 587
    security: str = "starttls"  # starttls | tls | none
    username: str | None = None
    password_secret: str = "smtp_password"  # file name in the secrets dir
    sender: str | None = None
    to: str | None = None  # default: owner.email
    digest: bool = False
    timeout_s: float = 30.0
    digest_time: str = "08:00"  # when the daily digest goes out, local to owner.timezone
    ca_file: Path | None = None  # a private CA for a self-hosted SMTP server's certificate


class SlackSettings(Section):
    webhook_secret: str = "slack_webhook_url"


class WebhookSettings(Section):
    url: str | None = None
    secret_name: str = "webhook_hmac_key"


class DeliverySettings(Section):
    channels: list[str] = Field(default_factory=list)  # email, slack, webhook, apprise
    email: EmailSettings = Field(default_factory=EmailSettings)
    slack: SlackSettings = Field(default_factory=SlackSettings)
    webhook: WebhookSettings = Field(default_factory=WebhookSettings)
    apprise_urls_secret: str = "apprise_urls"
    max_attempts: int = 8
    link_ttl_hours: int = 72
    retry_base_s: float = 30.0  # first retry delay; doubles per failed attempt
    retry_max_s: float = 6 * 3600.0  # the delay stops growing here; a delivery is never dropped
    public_base_url: str | None = None  # default: the local API address


class SandboxSettings(Section):
    cpu_s: int = 10
    wall_s: float = 20.0
    memory_mb: int = 1024
    max_output_bytes: int = 1_000_000
    max_result_bytes: int = 2_000_000
    max_api_calls: int = 10_000
    max_rows: int = 5_000_000
    max_file_bytes: int = 16_000_000  # RLIMIT_FSIZE: largest file the child may write in its temp dir
    max_open_files: int = 64  # RLIMIT_NOFILE of the child
    workdir_mb: int = 64  # size of the child's private tmpfs (its only writable place)
    workdir_inodes: int = 2048  # files and directories that tmpfs may hold
    # Run generated code even where no OS isolation exists (non-root without user
    # namespaces): only the Python layers and seccomp then stand. Off by default.
    allow_unisolated: bool = False


class ApiSettings(Section):
    host: str = "127.0.0.1"
    port: int = 0  # 0: pick a free port, written to the state dir


class LoggingSettings(Section):
    level: str = "INFO"
    json_logs: bool | None = None  # default: JSON when stderr is not a TTY


LOOPBACK_HOSTS = ("127.0.0.1", "::1", "localhost")


def loopback_only(host: str) -> str:
    if host.strip("[]").lower() not in LOOPBACK_HOSTS:
        raise ValueError(f"must be a loopback address ({', '.join(LOOPBACK_HOSTS)}), got {host!r}")
    return host.strip("[]")


class WebSettings(Section):
    """The local web app (issue 13): served by the daemon when enabled, else by `backchannel web`.
    Loopback only: it shows everything the memory holds."""

    enabled: bool = False  # true: `backchannel run` serves it too
    host: str = "127.0.0.1"
    port: int = 0  # 0: any free port (written to <state>/web.port)
    session_hours: float = 12.0
    login_link_minutes: float = 10.0  # a one-time login link expires after this

    _loopback = field_validator("host")(loopback_only)


class McpSettings(Section):
    """`backchannel mcp`: read tools always; the feedback tool only with allow_feedback.
    Nothing it exposes can send a message."""

    allow_feedback: bool = False
    host: str = "127.0.0.1"  # for `backchannel mcp --http`
    port: int = 0

    _loopback = field_validator("host")(loopback_only)
class MailSettings(Section):
    """Email as a source (issue 14): IMAP sync on a schedule; Maildir, mbox and .eml
    files go through `backchannel ingest` and the inbox."""

    enabled: bool = True  # IMAP sync runs only when `host` is set too
    host: str | None = None  # IMAP server
    port: int = 993
    security: Literal["tls", "starttls", "none"] = "tls"  # none: loopback only (doctor warns otherwise)
    username: str | None = None
    password_secret: str = "imap_password"  # file name in the secrets dir
    folders: list[str] = Field(default_factory=lambda: ["INBOX"])
    sync_interval_s: float = 900.0  # how often the schedule enqueues a mail wake
    batch: int = 25  # messages fetched per IMAP round trip
    max_per_sync: int = 2000  # per wake; the rest is the next wake's, so one sync never holds the daemon for long
    max_message_mb: float = 25.0  # larger messages are recorded as errors, unread (attachments are never kept)
    timeout_s: float = 30.0
    ca_file: Path | None = None  # a private CA for a self-hosted server's certificate
