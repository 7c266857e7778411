"""Organisation acronyms and their long forms, as one meeting uses them.

"the Crown Prosecution Service ... the CPS", "WLGA (Welsh Local Government
Association)", "the Canadian Food Inspection Agency, the CFIA": `organisation_aliases`
returns {long form: acronym} so the writer records the acronym as an alias of the
organisation, and "works at the CPS" and "the Crown Prosecution Service" reach one entity.

A pair is kept only when the acronym's letters are the initials of the long form's
words (function words such as "of", "and", "the" may be skipped), the long form is
an organisation beyond doubt (a head word such as Service, Agency, Council,
Association), and the acronym stands for one long form only in that meeting.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from backchannel.extraction.formats.transcript import Transcript
from backchannel.extraction.mentions.names import NATIONALITIES, ORG_HEADS, STOP

_ACRONYM = re.compile(r"(?<![\w&.-])([A-Z][A-Z&]{1,6})(?![\w&-])")
# A capitalised run: "Welsh Local Government Association", "Association of Directors of Education in Wales".
_CAP_RUN = re.compile(
    r"(?<![\w'’-])[A-Z][\w’'-]*(?:\s+(?:(?:of|for|and|&|in|on|the|de|du|des|la|le)\s+)*"
    r"[A-Z][\w’'-]*){1,8}"
)
_ORG_LEADS = NATIONALITIES | {"new", "national", "royal", "united", "general", "first"}  # "Welsh Government"
_SKIPPABLE = {"of", "for", "and", "&", "in", "on", "the", "de", "du", "des", "la", "le"}
_NOT_ACRONYMS = {
    "OK",
    "TV",
    "AM",
    "PM",
    "MS",
    "MP",
    "II",
    "III",
    "IV",
    "UK",
    "US",
    "USA",
    "EU",
    "ID",
    "FAQ",
    "CV",
    "PR",
    "PS",
    "VS",
    "AI",
    "IT",
    "HR",
    "QA",
    "PDF",
    "CEO",
    "CTO",
    "CIO",
    "CFO",
    "COO",
    "VP",
    "I",
}


def spells_initials(acronym: str, words: list[str]) -> bool:
    """Whether `acronym` spells the initials of `words`, skipping function words at will."""
    letters = acronym.replace("&", "")

    def walk(i: int, j: int) -> bool:
        if i == len(letters):
            return all(w.lower() in _SKIPPABLE for w in words[j:])
        if j == len(words):
            return False
        w = words[j]
        if w.lower() in _SKIPPABLE and walk(i, j + 1):
            return True
        return w[:1].upper() == letters[i] and walk(i + 1, j + 1)

    return walk(0, 0)


def _long_forms(text: str) -> Iterator[list[str]]:
    """Capitalised runs that end on an organisation head word, and their prefixes that do
    ("Crown Prosecution Service Cymru Wales" also offers "Crown Prosecution Service"). Two names
    joined by "and (the)" are also offered apart: "the Welsh Local Government Association and the
    Association of Directors of Education Wales" offers the second name on its own."""
    for m in _CAP_RUN.finditer(text):
        words = m.group(0).split()
        while words and words[0].lower() in STOP and words[0].lower() not in _ORG_LEADS:
            words = words[1:]  # "And the Education Workforce Council": a sentence opener is no part of it
        starts = [0] + [
            j
            for j in range(1, len(words))
            if words[j][:1].isupper()
            and (
                words[j - 1].lower() in ("and", "&")
                or words[j - 1].lower() == "the"
                and j > 1
                and words[j - 2].lower() in ("and", "&")
            )
        ]
        for j in starts:
            yield from _org_forms(words[j:])
            if j:  # and the name before "and (the)"
                yield from _org_forms(words[: j - 2 if words[j - 1].lower() == "the" else j - 1])


def _org_forms(words: list[str]) -> Iterator[list[str]]:
    if len(words) > 2 and any(w.lower() in ORG_HEADS for w in words[:-1]):
        yield words  # "Association of Directors of Education in Wales"
    for k in range(len(words), 1, -1):
        if words[k - 1].lower().strip(".,") in ORG_HEADS:
            yield words[:k]


def organisation_aliases(transcript: Transcript) -> dict[str, str]:
    """{long form: acronym} for the organisations this meeting names both ways."""
    return aliases_in_texts([u.text for u in transcript.utterances if u.text])


def aliases_in_texts(texts: Iterable[str]) -> dict[str, str]:
    """organisation_aliases over the texts of a meeting's utterances."""
    acronyms: set[str] = set()
    longs: dict[str, list[str]] = {}
    for text in texts:
        acronyms.update(a for a in _ACRONYM.findall(text) if a not in _NOT_ACRONYMS)
        for words in _long_forms(text):
            longs.setdefault(" ".join(words), words)
    found: dict[str, set[str]] = {}
    for acronym in acronyms:
        for long_form, words in longs.items():
            if len(words) >= 2 and spells_initials(acronym, words):
                found.setdefault(acronym, set()).add(long_form)
    out: dict[str, str] = {}
    for acronym, forms in found.items():
        # "Crown Prosecution Service" and "Crown Prosecution Service Cymru" cannot both be the CPS:
        # keep the shortest only when every other form extends it.
        shortest = min(forms, key=len)
        if all(f.startswith(shortest) for f in forms):
            out[shortest] = acronym
    return out
