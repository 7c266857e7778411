"""News items read like speech: a signal (title and summary) becomes a `Transcript`
with no speaker and goes through the same stages as a meeting (the offline
extractor, its claim pass, the writer's resolution and trust), as its own source
with the trust reason `news`.

What the spoken-language rules do not cover is the grammar of the news register:
headlines drop the auxiliary and the article ("Kenji Sato appointed Chief Digital
Officer at Mirai Bank", "Acme hires Jane Doe as CFO", "Jane Doe joins Acme as head
of sales", "Jane Doe leaves Acme"). `headline_facts` reads that grammar, one clause
pattern per construction (who is appointed, who hires whom, who joins, who leaves),
with the same validated names, organisations and title lexicon as the offline rules
(mentions/names.py): it never guesses a name the lexicons reject.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from backchannel.extraction.formats.transcript import Transcript, Utterance
from backchannel.extraction.mentions.names import (
    NAME,
    ORG,
    ORG_HEADS,
    TITLE_HEADS,
    looks_like_org,
    org_name,
    parse_title,
    person_name,
    strong_title,
)
from backchannel.extraction.mentions.names_fr import ORG_FR, org_fr
from backchannel.extraction.result import ExtractedAssertion, Mention
from backchannel.extraction.rules.core import sentences
from backchannel.extraction.rules.fr.relations import FR_OF, FR_TITLE, FR_TITLES, looks_french

NEWS_FORMAT = "news"  # sources.format of a news item; source_trust gives it the `news` reason
_TITLE_TEXT = r"(?:(?:its|their|the|a|an|new|as)\s+)*(?P<title>[^,;:.!?]{2,60}?)"
_ORG_TEXT = rf"(?P<org>{ORG})"
_PERSON = rf"(?P<person>{NAME})"
_AUX = r"(?:(?:is|was|has\s+been|have\s+been|had\s+been|has|have|had|will\s+be|to\s+be|being|gets|got)\s+)?"
_END = r"(?=\s*(?:$|[,;:.!?]|\s(?:effective|from|after|following|in|on|with|amid|as\s+part)\b))"

_HEADS = "(?:" + "|".join(sorted((re.escape(h) for h in TITLE_HEADS if h.islower()), key=len, reverse=True)) + ")"
# "joins payments firm Tillpoint": up to two lowercase words that say what the organisation is.
_DESCRIPTOR = r"(?:(?:the\s+)?(?:[a-z][a-z-]+\s+){1,2}(?=[A-Z]))?"
# "names former Airbus engineer Henrik Dahl ...": who the person was, before the name.
_PREMOD = rf"(?:(?:former|ex-?)\s*(?:{ORG}\s+)?(?:[a-z][a-z-]+\s+){{1,2}}(?=[A-Z]))?"
# "Larkspur Bank chief executive Gordon Frye steps down", "Former Equifax CIO Tamsin Reid joins ...":
# the organisation and the title before the name.
_ORG_TITLE_PERSON = re.compile(
    rf"(?P<former>\b(?:[Ff]ormer|[Ee]x-?)\s*)?(?<![\w-]){_ORG_TEXT}\s+(?P<title>(?:[a-z][a-z-]+\s+){{0,3}}"
    rf"(?:[A-Z]{{2,5}}|{_HEADS}))\s+{_PERSON}(?P<rest>\s+(?:steps\s+down|stepped\s+down|departs|departed|resigns"
    rf"|resigned|leaves|left|quits|quit|exits|retires|is\s+leaving|will\s+(?:leave|depart|retire|step\s+down))\b)?"
)
# "Stratford Hotels says its chief people officer, Gemma Royce, has left the company"
_SAYS_ITS = re.compile(
    rf"{_ORG_TEXT}\s+(?:says|said|confirms|confirmed|announces|announced)\s+(?:that\s+)?its\s+(?P<title>[^,]{{2,50}}),\s+"
    rf"{_PERSON},\s+(?:has|had|will)\s+(?P<verb>left|resigned|stepped\s+down|departed|leave|resign|step\s+down|depart"
    rf"|retire|retired)"
)
# "Dr. Kwesi Mensah, formerly of IBM Research," : a past employer.
_FORMERLY = re.compile(rf"{_PERSON},\s+(?:formerly|previously|most\s+recently)\s+(?:of|at|with)\s+{_ORG_TEXT}")

# "Kenji Sato (has been) appointed/named/promoted (to) Chief Digital Officer at/of Mirai Bank"
_APPOINTED = re.compile(
    rf"{_PERSON},?\s+{_AUX}(?:appointed|named|promoted|elevated|tapped|hired|elected|confirmed)\s+"
    rf"(?:as\s+|to\s+(?:the\s+role\s+of\s+)?)?{_TITLE_TEXT}\s+(?:at|of|for|with)\s+{_ORG_TEXT}"
)
# "Mirai Bank appoints/names/hires/taps Kenji Sato as (its new) Chief Digital Officer"
_HIRES = re.compile(
    rf"{_ORG_TEXT}\s+{_AUX}(?:appoints|appointed|names|named|hires|hired|taps|tapped|promotes|promoted|picks|picked"
    rf"|welcomes|welcomed|recruits|recruited|poaches|poached|elects|elected)\s+{_PREMOD}{_PERSON},?\s+(?:(?:as|to)\s+)?"
    rf"{_TITLE_TEXT}{_END}"
)
# "Jane Doe joins/to join/has joined Acme (as head of sales)"
_JOINS = re.compile(
    rf"{_PERSON},?\s+(?:joins|joined|has\s+joined|to\s+join|will\s+join|is\s+joining|moves\s+to|moved\s+to"
    rf"|heads\s+to|jumps\s+to|signs\s+with|signed\s+with)\s+{_DESCRIPTOR}{_ORG_TEXT}(?:\s+as\s+{_TITLE_TEXT}{_END})?"
)
# "Jane Doe leaves/quits/exits/departs/steps down from Acme", "Jane Doe steps down as CEO of Acme"
_LEAVES = re.compile(
    rf"{_PERSON},?\s+(?:leaves|left|has\s+left|to\s+leave|will\s+leave|quits|quit|exits|exited|departs(?:\s+from)?"
    rf"|departed(?:\s+from)?|resigns\s+from|resigned\s+from|retires\s+from|retired\s+from|is\s+leaving"
    rf"|steps\s+down\s+from|stepped\s+down\s+from|(?:steps|stepped)\s+down\s+as\s+{_TITLE_TEXT}\s+(?:of|at))\s+"
    rf"{_ORG_TEXT}"
)
# The same constructions in French: "Marie Dupont nommée directrice financière d'Acme",
# "Acme recrute Paul Girard comme DSI", "Sophie Martin rejoint Globex en tant que DG",
# "Paul Girard quitte Globex"; titles from the French lexicon (rules/fr/relations.py).
_FR_TITLE = rf"(?:(?:le|la|l['’]|un|une|son|sa|leur|nouveau|nouvelle)\s*)*{FR_TITLE}"
_FR_APPOINTED = re.compile(
    rf"{_PERSON},?\s+(?:(?:a\s+été|est|vient\s+d['’]être)\s+)?(?:nommée?|promue?|désignée?|élue?|choisie?)\s+"
    rf"(?:au\s+poste\s+de\s+|comme\s+|en\s+tant\s+que\s+)?{_FR_TITLE}{FR_OF}(?P<org>{ORG_FR})"
)
_FR_HIRES = re.compile(
    rf"(?P<org>{ORG_FR})\s+(?:nomme|a\s+nommé|recrute|a\s+recruté|choisit|a\s+choisi|embauche|a\s+embauché"
    rf"|promeut|a\s+promu|accueille)\s+{_PERSON}\s+(?:au\s+poste\s+de\s+|comme\s+|en\s+tant\s+que\s+|à\s+la\s+tête"
    rf"\s+de\s+)?{_FR_TITLE}"
)
_FR_JOINS = re.compile(
    rf"{_PERSON},?\s+(?:rejoint|a\s+rejoint|va\s+rejoindre|intègre|a\s+intégré)\s+(?:la\s+|le\s+|l['’])?(?P<org>{ORG_FR})"
    rf"(?:\s+(?:en\s+tant\s+que|comme|au\s+poste\s+de)\s+{_FR_TITLE})?"
)
_FR_LEAVES = re.compile(
    rf"{_PERSON},?\s+(?:quitte|a\s+quitté|va\s+quitter|démissionne\s+de|part\s+de)\s+(?:la\s+|le\s+|l['’])?(?P<org>{ORG_FR})"
)
_FR_NOT_A_FACT = re.compile(
    r"(?<![\w'’])(?:ne|n['’]|pas|jamais|dément|démenti|rumeurs?|pourrait|pourraient|serait"
    r"|seraient|si|envisage|envisagerait)(?![\w'’])",
    re.I,
)

# Said of the organisation, a negation or a conditional: the headline is not the fact.
_NOT_A_FACT = re.compile(
    r"\b(?:not|never|denies|denied|rumou?r(?:s|ed)?|reportedly|could|may|might|would"
    r"|if|whether|considers|considering|eyes|eyeing|in\s+talks|set\s+to)\b",
    re.I,
)


def news_transcript(title: str, summary: str | None, *, published: datetime | None, path: str | None) -> Transcript:
    """The news item as a transcript: its title and its summary, each one utterance, no speaker."""
    texts = [t.strip() for t in (title, summary or "") if t and t.strip()]
    if len(texts) == 2 and texts[1].startswith(texts[0]):
        texts = texts[1:]  # a feed whose summary repeats its title
    utterances = [Utterance(i, None, t) for i, t in enumerate(texts)]
    return Transcript(
        utterances,
        NEWS_FORMAT,
        title=title.strip() or None,
        meeting_date=published,
        meeting_date_origin="given" if published else None,
        participants=[],
        path=path,
    )


def headline_facts(transcript: Transcript) -> list[ExtractedAssertion]:
    """works_at (with the title) and left, read from the news register's clause patterns."""
    anchor = transcript.meeting_date.date() if transcript.meeting_date else None
    out: list[ExtractedAssertion] = []
    for u in transcript.utterances:
        for s0, s1 in sentences(u.text):
            sent = u.text[s0:s1]
            french = looks_french(sent)  # None: too short to tell, both grammars are tried
            if (french is not False and _FR_NOT_A_FACT.search(sent)) or (not french and _NOT_A_FACT.search(sent)):
                continue
            out.extend(_facts_in(u.idx, u.text, s0, s1, anchor, french))
    return out


_LEADING_ARTICLE = re.compile(r"^(?:(?:[Ll]a|[Ll]e|[Ll]es|[Tt]he)\s+|[Ll]['’]\s*)")


@dataclass(frozen=True)
class _NoPeople:
    known_people: frozenset[str] = frozenset()


_NO_PEOPLE: Any = _NoPeople()


def rx_is_french(m: re.Match) -> bool:
    return any(m.re is rx for rx, _ in _FRENCH)


_ENGLISH = ((_APPOINTED, "works_at"), (_HIRES, "works_at"), (_JOINS, "works_at"), (_LEAVES, "left"))
_FRENCH = ((_FR_APPOINTED, "works_at"), (_FR_HIRES, "works_at"), (_FR_JOINS, "works_at"), (_FR_LEAVES, "left"))


def _facts_in(
    idx: int, text: str, s0: int, s1: int, anchor: date | None, french: bool | None = False
) -> list[ExtractedAssertion]:
    out: list[ExtractedAssertion] = []
    taken: list[tuple[int, int]] = []
    grammars = _FRENCH if french else _ENGLISH if french is False else _FRENCH + _ENGLISH
    if french is not True:
        out.extend(_premodified(idx, text, s0, s1, anchor))
    for rx, predicate in grammars:
        for m in rx.finditer(text, s0, s1):
            if any(a < m.end() and m.start() < b for a, b in taken):
                continue
            fact = _fact(m, predicate, idx, text, anchor)
            if fact is not None:
                taken.append((m.start(), m.end()))
                out.append(fact)
    return out


def _premodified(idx: int, text: str, s0: int, s1: int, anchor: date | None) -> list[ExtractedAssertion]:
    """The organisation and the title said before the name, "its TITLE, X, has left", "X, formerly of Y".
    A former title or a departure is one `left` (with the title), never a current works_at."""
    out: list[ExtractedAssertion] = []
    for m in _ORG_TITLE_PERSON.finditer(text, s0, s1):
        parsed = parse_title(m.group("title"))
        if parsed is None or not strong_title(parsed[0]):
            continue  # "Acme shares Jane Doe": no title, no fact
        rest = m.group("rest") or ""
        if "will" in rest:
            continue  # a departure announced, not yet a fact
        gone = bool(m.group("former") or rest)
        fact = _fact(m, "left" if gone else "works_at", idx, text, anchor)
        if fact is None:
            continue
        if gone:
            fact.qualifier = parsed[1]
            fact.valid_to = anchor if rest else None
            _extend_quote(fact, text, m.end())
        else:
            fact.valid_from = None  # a title said in passing dates nothing
        out.append(fact)
    for m in _SAYS_ITS.finditer(text, s0, s1):
        if m.group("verb") in ("leave", "resign", "step down", "depart", "retire"):
            continue  # "will leave": announced
        fact = _fact(m, "left", idx, text, anchor)
        if fact is not None:
            parsed = parse_title(m.group("title"))
            fact.qualifier = parsed[1] if parsed else None
            _extend_quote(fact, text, m.end())
            out.append(fact)
    for m in _FORMERLY.finditer(text, s0, s1):
        fact = _fact(m, "left", idx, text, anchor)
        if fact is not None:
            fact.valid_to = None  # when is not said
            out.append(fact)
    return out


def _extend_quote(a: ExtractedAssertion, text: str, end: int) -> None:
    a.span_end = max(a.span_end, end)
    a.quote = text[a.span_start : a.span_end]


def _trailing_person(raw: str) -> str | None:
    """The person at the end of a run of capitalised words: "Equifax CIO Tamsin Reid" -> "Tamsin Reid"."""
    words = raw.split()
    for k in range(len(words)):
        name = person_name(" ".join(words[k:]))
        if name is not None and (k == 0 or len(words) - k >= 2):
            return name
    return None


def _fact(m: re.Match, predicate: str, idx: int, text: str, anchor: date | None) -> ExtractedAssertion | None:
    person = _trailing_person(m.group("person"))
    raw_org = _LEADING_ARTICLE.sub("", m.group("org"))
    org = org_fr(_NO_PEOPLE, raw_org) if rx_is_french(m) else org_name(raw_org)
    if person is None or org is None:
        return None
    title = None
    if m.groupdict().get("title"):
        surface = " ".join(m.group("title").replace("’", "'").split())
        parsed = parse_title(m.group("title"))
        if surface in FR_TITLES or surface.lower() in FR_TITLES:
            title = FR_TITLES.get(surface) or FR_TITLES[surface.lower()]
        elif parsed is None:
            return None  # "named in a lawsuit at Acme": no title, no fact
        else:
            title = parsed[1]
    # The quote runs from the person to the end of the organisation's name (or of the title after it).
    found = m.group("org").find(org)
    org_end = m.start("org") + (found + len(org) if found >= 0 else len(m.group("org")))
    end = max(org_end, m.end("title") if title else org_end, m.end("person"))
    left = predicate == "left"
    return ExtractedAssertion(
        subject=Mention(person, "person"),
        predicate=predicate,
        utterance_idx=idx,
        span_start=m.start(),
        span_end=end,
        quote=text[m.start() : end],
        object=Mention(org, "organisation"),
        qualifier=None if left else title,
        valid_from=None if left else anchor,
        valid_to=anchor if left else None,
        modality="reported",
        confidence=0.7,
    )


def extract_news(transcript: Transcript, *, owner_names: Sequence[str] = ()) -> list[ExtractedAssertion]:
    """The offline extractor's reading of the item, then the news register's, each fact once."""
    from backchannel.extraction import offline
    from backchannel.extraction.rules.claims import qualify_claims

    # The meaning stage's heads were trained on speech, not headlines: on an item it read
    # "Acme names Jane Doe in lawsuit" as employment. Headlines get the exact register below.
    spoken = offline.extract(transcript, owner_names=owner_names, meaning=False)
    headlines = qualify_claims(transcript, headline_facts(transcript), frozenset())
    seen = {
        (a.utterance_idx, a.subject.name.casefold(), a.predicate, a.object.name.casefold() if a.object else None)
        for a in spoken
    }
    out = list(spoken)
    for a in headlines:
        key = (a.utterance_idx, a.subject.name.casefold(), a.predicate, a.object.name.casefold() if a.object else None)
        if key not in seen:
            seen.add(key)
            out.append(a)
    return out


_ORG_RX = re.compile(ORG)


def organisation_names(text: str) -> list[list[str]]:
    """The capitalised names in `text` that may be organisations, each as its forms longest
    first ("Pinecrest Bank Tenders Its" in a title-case headline: that, then "Pinecrest Bank
    Tenders", ...): the caller keeps the longest form that other sources say. Titles ("Chief
    Digital Officer") and two-word person names ("Ines Alvarez") are left out."""
    out: list[list[str]] = []
    for m in _ORG_RX.finditer(text):
        name = org_name(m.group(0))
        if name is None:
            continue
        words = name.split()
        forms = []
        for k in range(min(len(words), 6), 0, -1):
            form = " ".join(words[:k]).rstrip("’'")
            if form.endswith(("'s", "’s")):
                form = form[:-2]
            if not form or org_name(form) != form or parse_title(form) is not None:
                continue
            if k >= 2 and person_name(form) == form and not looks_like_org(form):
                continue  # "Ines Alvarez": a person
            if k == 1 and form.lower() in ORG_HEADS:
                continue  # "Bank" alone names no organisation
            if form not in forms:
                forms.append(form)
        if forms:
            out.append(forms)
    return out
