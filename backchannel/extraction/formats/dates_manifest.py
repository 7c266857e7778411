"""The dates manifest: meeting dates for files whose content and name carry none.

A file named `meeting-dates.toml` in a folder of transcripts (or in a folder above
it) maps file names, relative to the manifest's folder, to dates:

    "standup.vtt" = 2026-03-05
    "board/q3 review.txt" = 2026-03-05T10:00:00
    "coffee.txt" = "5 March 2026"

Values are TOML dates or date-times, or strings `meeting_date.parse_date_value` reads.
A manifest is read when the files beside it are ingested; a file already stored and
dated only by its mtime moves to the manifest's date (`redate.redate_source`).
"""

from __future__ import annotations

import tomllib
from datetime import datetime
from pathlib import Path

MANIFEST_NAME = "meeting-dates.toml"
# How many folders above a file are searched for a manifest (a corpus of a few levels).
_LEVELS_UP = 3


class ManifestError(ValueError):
    """A manifest that cannot be read; the message names the file and the key."""


def read_manifest(path: Path) -> dict[str, datetime]:
    """{relative posix path: date} from one manifest; ManifestError says what is wrong."""
    from backchannel.extraction.formats.meeting_date import parse_date_value

    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ManifestError(f"{path}: cannot read the dates manifest: {exc}") from None
    out: dict[str, datetime] = {}
    for key, value in data.items():
        when = parse_date_value(value)
        if when is None:
            raise ManifestError(
                f'{path}: {key!r} = {value!r} is not a date (write 2026-03-05, 2026-03-05T10:00:00 or "5 March 2026")'
            )
        out[Path(key).as_posix().lstrip("./") if key.startswith("./") else Path(key).as_posix()] = when
    return out


class ManifestCache:
    """Manifests found while ingesting, each folder's read once."""

    def __init__(self) -> None:
        self._by_folder: dict[Path, dict[str, datetime] | None] = {}

    def _manifest(self, folder: Path) -> dict[str, datetime] | None:
        if folder not in self._by_folder:
            f = folder / MANIFEST_NAME
            self._by_folder[folder] = read_manifest(f) if f.is_file() else None
        return self._by_folder[folder]

    def date_for(self, path: Path) -> datetime | None:
        """The manifest's date for `path`, from the nearest manifest that names it."""
        path = path.resolve()
        folder = path.parent
        for _ in range(_LEVELS_UP + 1):
            found = self._manifest(folder)
            if found:
                when = found.get(path.relative_to(folder).as_posix())
                if when is not None:
                    return when
            if folder.parent == folder:
                break
            folder = folder.parent
        return None
