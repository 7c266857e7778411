"""Japanese person names: one person under every form meetings and calendars write.

田中 / 田中さん / 田中太郎 / 田中太郎様 / Tanaka Taro / Taro Tanaka are one person when
nothing says otherwise. What is exact is done here, with no guess:

- honorifics (さん, 様, 氏, 君, くん, ちゃん, 先生, 殿) are a closed class: memory's name
  normalisation drops them (memory/text.py), so 田中さん and 田中 are the same name;
- a full name splits into family and given name, and each part has a reading, with
  SudachiPy and its small dictionary (`pip install 'backchannel[ja]'`; Apache-2.0,
  about 115 MB on disk, 60 MB of memory, 0.07 ms per sentence, loaded once, lazily).
  The reading gives the romanised forms a calendar uses ("Tanaka Taro", "Taro
  Tanaka", Hepburn without long-vowel marks); without SudachiPy no split and no
  romanised form is made, and the rest still works.

`aliases_for(name)` lists the extra forms of one name; the writer records them as
aliases of the person (`add_aliases`), the family name alone only when no other
person memory knows answers to it (田中 for two 田中s would be a guess).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

from backchannel.memory.text import JA_HONORIFIC as HONORIFIC_RX

_CJK = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")


def is_japanese_name(name: str) -> bool:
    return bool(name) and _CJK.search(name) is not None


def strip_honorific(name: str) -> str:
    """田中さん -> 田中; a Latin name or a bare one unchanged."""
    return HONORIFIC_RX.sub("", name.strip())


@dataclass(frozen=True)
class NameParts:
    family: str
    given: str | None
    family_reading: str | None  # katakana
    given_reading: str | None


@functools.cache
def _tokenizer() -> Any:
    """SudachiPy's tokenizer over the small dictionary, or None when not installed."""
    try:
        from sudachipy import Dictionary
    except ImportError:
        return None
    try:
        return Dictionary(dict="small").create()
    except Exception:  # noqa: BLE001 - a dictionary missing or broken: no split, no reading
        return None


def split_name(name: str) -> NameParts | None:
    """Family and given name with their readings (田中太郎 -> 田中/タナカ, 太郎/タロウ), or
    None when SudachiPy is missing or does not read it as a person's name."""
    tok = _tokenizer()
    base = strip_honorific(name)
    if tok is None or not is_japanese_name(base):
        return None
    from sudachipy import SplitMode

    spaced = _SPACED.fullmatch(base)
    if spaced:  # "木村 拓也", as labels and calendars write it: the space says where the family name ends
        return _split_spaced(tok, spaced.group(1), spaced.group(2))
    parts = [(m.surface(), m.part_of_speech(), m.reading_form()) for m in tok.tokenize(base, SplitMode.C)]
    if not parts or "".join(p[0] for p in parts) != base:
        return None
    family = [p for p in parts if p[1][2:4] == ("人名", "姓")]
    given = [p for p in parts if p[1][2:4] == ("人名", "名")]
    if len(family) != 1 or parts[0] is not family[0] or len(given) > 1 or len(parts) != 1 + len(given):
        return None
    g = given[0] if given else None
    return NameParts(family[0][0], g[0] if g else None, family[0][2], g[2] if g else None)


_SPACED = re.compile(r"([\u3040-\u30ff\u4e00-\u9fff]{1,4})[ \u3000]+([\u3040-\u30ff\u4e00-\u9fff]{1,5})")


def _split_spaced(tok: Any, family: str, given: str) -> NameParts | None:
    """A name written family, space, given: a person when the dictionary reads the first part as a
    family name (営業 部長 is a seat); each part's reading from the dictionary (恵 -> メグミ)."""
    from sudachipy import SplitMode

    fam = tok.tokenize(family, SplitMode.C)
    if len(fam) != 1 or fam[0].part_of_speech()[2:4] != ("人名", "姓"):
        return None
    giv = tok.tokenize(given, SplitMode.C)
    given_reading = giv[0].reading_form() if len(giv) == 1 else None
    return NameParts(family, given, fam[0].reading_form(), given_reading)


_KANA = {
    **dict(zip("アイウエオ", ["a", "i", "u", "e", "o"], strict=True)),
    **dict(zip("カキクケコ", ["ka", "ki", "ku", "ke", "ko"], strict=True)),
    **dict(zip("ガギグゲゴ", ["ga", "gi", "gu", "ge", "go"], strict=True)),
    **dict(zip("サシスセソ", ["sa", "shi", "su", "se", "so"], strict=True)),
    **dict(zip("ザジズゼゾ", ["za", "ji", "zu", "ze", "zo"], strict=True)),
    **dict(zip("タチツテト", ["ta", "chi", "tsu", "te", "to"], strict=True)),
    **dict(zip("ダヂヅデド", ["da", "ji", "zu", "de", "do"], strict=True)),
    **dict(zip("ナニヌネノ", ["na", "ni", "nu", "ne", "no"], strict=True)),
    **dict(zip("ハヒフヘホ", ["ha", "hi", "fu", "he", "ho"], strict=True)),
    **dict(zip("バビブベボ", ["ba", "bi", "bu", "be", "bo"], strict=True)),
    **dict(zip("パピプペポ", ["pa", "pi", "pu", "pe", "po"], strict=True)),
    **dict(zip("マミムメモ", ["ma", "mi", "mu", "me", "mo"], strict=True)),
    "ヤ": "ya",
    "ユ": "yu",
    "ヨ": "yo",
    "ワ": "wa",
    "ヲ": "o",
    "ン": "n",
    "ヴ": "vu",
    **dict(zip("ラリルレロ", ["ra", "ri", "ru", "re", "ro"], strict=True)),
}
_SMALL = {"ャ": "ya", "ュ": "yu", "ョ": "yo"}


def romanise(katakana: str) -> str | None:
    """Hepburn as names are written in Latin letters, long vowels unmarked: タナカ -> Tanaka,
    タロウ -> Taro, シュウヘイ -> Shuhei, イチロウ -> Ichiro, リョウ -> Ryo; None for anything else."""
    out = ""
    i = 0
    double = False
    while i < len(katakana):
        c = katakana[i]
        if c in "ッー":
            double = c == "ッ"
            i += 1
            continue
        if c not in _KANA:
            return None
        nxt = katakana[i + 1] if i + 1 < len(katakana) else ""
        syl = _KANA[c]
        i += 1
        if nxt in _SMALL and syl.endswith("i"):  # キョ -> kyo, シュ -> shu, ジョ -> jo
            head = syl[:-1] if syl[:-1] in ("sh", "ch", "j") else syl[:-1] + "y"
            syl = head + _SMALL[nxt][1:]
            i += 1
        if double:  # ッ doubles the next consonant (ッチ -> tchi)
            syl = ("t" if syl.startswith("ch") else syl[0]) + syl
            double = False
        out += syl
    # a long vowel (イチロウ -> Ichiro, コウイチ -> Koichi), but ウエ is its own word in names (イノウエ -> Inoue)
    out = re.sub(r"ou(?!e)", "o", out).replace("oo", "o").replace("uu", "u")
    return out.capitalize() if out else None


def aliases_for(name: str) -> list[str]:
    """The other forms of a Japanese person's name: without honorific, and with SudachiPy
    the romanised full name in both orders (and the family name alone, for the caller
    to record only when it names one person)."""
    if not is_japanese_name(name):
        return []
    base = strip_honorific(name)
    out = [base] if base != name.strip() else []
    parts = split_name(base)
    if parts is not None and parts.family_reading:
        fam = romanise(parts.family_reading)
        giv = romanise(parts.given_reading) if parts.given_reading else None
        if fam and giv:
            out += [f"{fam} {giv}", f"{giv} {fam}"]
    return list(dict.fromkeys(out))


def looks_like_japanese_person(label: str) -> bool:
    """A kana/kanji label that names a person: with an honorific (田中さん, 佐藤様), or read by
    SudachiPy as a family name with or without a given name (田中, 田中太郎); 司会 or
    インタビュアー are seats, not names."""
    s = label.strip()
    if HONORIFIC_RX.search(s):
        return len(strip_honorific(s)) <= 8
    return split_name(s) is not None


def family_name(name: str) -> str | None:
    """田中 for 田中太郎 (SudachiPy's reading of it as family + given name), else None."""
    parts = split_name(name)
    return parts.family if parts is not None and parts.given else None


def add_aliases(store: Any, entity_id: int, name: str, *, source_id: str | None) -> list[str]:
    """Record `aliases_for(name)` on the person, and the family name alone when no other
    live person answers to it; the aliases added."""
    from backchannel.memory import entities

    added = []
    for alias in aliases_for(name):
        if alias not in added:
            entities.add_alias(store, entity_id, alias, source_id=source_id)
            added.append(alias)
    fam = family_name(name)
    if fam and all(e.id == entity_id for e in entities.find(store, fam, "person")):
        entities.add_alias(store, entity_id, fam, source_id=source_id)
        added.append(fam)
    return added
