"""The privacy tables of config.toml: [consent], [scope] and [retention].

Kept apart from sections.py because a data-protection officer reads these three
together (docs/privacy.md): who is never captured, which sources each reader may
see, and how long each kind of record is kept."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from backchannel.config.sections import Section

Days = Annotated[int, Field(ge=0)]


class ConsentSettings(Section):
    """People who withdrew consent, by name, alias or address (besides those withdrawn with
    `backchannel consent withdraw`, which the database keeps only as hashes), and what a
    meeting marked no-capture becomes."""

    withdrawn: list[str] = Field(default_factory=list)
    # refuse: the file goes to failed/ with the reason; owner_only: only the owner's own turns are kept.
    no_capture: Literal["refuse", "owner_only"] = "refuse"
    # Summary words that flag a calendar event (and the meeting recorded in its slot) as no-capture.
    calendar_markers: list[str] = Field(default_factory=lambda: ["no-capture", "off the record"])


class ScopeSettings(Section):
    """Each source carries one scope (a word: work, personal, a client's name). A reader
    listed here sees only its scopes; one left out (None) sees every scope."""

    default: str = "default"
    # Folder (absolute path or a folder name met anywhere under the inbox) -> scope.
    folders: dict[str, str] = Field(default_factory=dict)
    sweep: list[str] | None = None
    ask: list[str] | None = None
    mcp: list[str] | None = None
    export: list[str] | None = None
    # Channel name (email, slack, webhook, apprise) -> the scopes its proposals may cite.
    channels: dict[str, list[str]] = Field(default_factory=dict)


class RetentionSettings(Section):
    """How long each kind of record is kept; None keeps it. 0 days: at the next sweep."""

    utterances_days: Days | None = None
    keep_quotes: bool = True  # with utterances gone, keep the quoted spans that back assertions
    assertions_days: Days | None = None  # unless a newer source confirms the same fact
    proposals_days: Days | None = None
    runs_days: Days | None = None
    schedule: str = "30 3 * * *"  # crontab: when the daemon runs the retention sweep
