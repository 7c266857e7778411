"""Normalisation shared by entity matching and quote checks."""

from __future__ import annotations

import re
import unicodedata

_WS = re.compile(r"\s+")


def norm_name(name: str) -> str:
    """Casefold, strip accents and punctuation at the edges, collapse spaces:
    'Sophie  Martín.' -> 'sophie martin'."""
    decomposed = unicodedata.normalize("NFKD", name)
    stripped = "".join(c for c in decomposed if not unicodedata.combining(c))
    return _WS.sub(" ", stripped.casefold()).strip(" .,;:'\"()[]")


def norm_space(text: str) -> str:
    return _WS.sub(" ", text).strip()
