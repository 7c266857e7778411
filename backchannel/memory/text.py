"""Normalisation shared by entity matching and quote checks."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

_WS = re.compile(r"\s+")
# Japanese honorifics, a closed class: after a kana or kanji name they are no part of it
# (田中さん is 田中; extraction/mentions/names_ja.py). A Latin name keeps every letter ("Sama").
JA_HONORIFIC = re.compile(r"(?<=[\u3040-\u30ff\u4e00-\u9fff])\s*(?:さん|さま|様|氏|くん|君|ちゃん|先生|殿)$")
# A space between two kana or kanji ("田中 太郎", "田中　太郎" in an invitation) is no part of the name.
_CJK_SPACE = re.compile(r"(?<=[\u3040-\u30ff\u4e00-\u9fff])\s+(?=[\u3040-\u30ff\u4e00-\u9fff])")


# A pure function called for every word a rule or the resolver looks at (~3k a meeting, most
# of them repeats): remembered, so each distinct string is normalised once per process.
@lru_cache(maxsize=1 << 16)
def norm_name(name: str) -> str:
    """Casefold, strip accents and punctuation at the edges, collapse spaces, drop a
    Japanese honorific and the space inside a Japanese name: 'Sophie  Martín.' -> 'sophie martin',
    '田中さん' -> '田中', '田中 太郎' -> '田中太郎'."""
    if not name.isascii():  # the Japanese forms (most names are ASCII: no regex for them)
        name = _CJK_SPACE.sub("", JA_HONORIFIC.sub("", name.strip(" .,;:'\"()[]\u3000")))
    decomposed = unicodedata.normalize("NFKD", name)
    stripped = "".join(c for c in decomposed if not unicodedata.combining(c))
    return _WS.sub(" ", stripped.casefold()).strip(" .,;:'\"()[]")


def norm_space(text: str) -> str:
    return _WS.sub(" ", text).strip()
