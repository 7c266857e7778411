"""Mentions in one English sentence, for the meaning stage: people, organisations, the speaker.

A capitalised run is an organisation when the meeting says so anywhere (after "at", "from",
"joined", "left", "over at", an organisation word such as "Bank" or "Council", an acronym),
a person when it is a speaker, a participant, the owner or a valid person name
(offline_names.person_name) that is not a sentence-opening word nobody else uses as a name.
Slots are what the embedding model reads instead of the names (slots.FILLERS).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from backchannel.extraction.mentions.acronyms import aliases_in_texts
from backchannel.extraction.mentions.evidence import (
    common_phrase,
    is_acronym,
    lone_head_word,
    lowercase_words,
    piece_of_longer_name,
)
from backchannel.extraction.mentions.labels import is_seat_name
from backchannel.extraction.mentions.names import (
    CANONICAL_TITLES,
    FAMILY,
    NAME_BODY,
    NAME_RX,
    ORG_HEADS,
    ORG_RX,
    STOP,
    TITLE_HEADS,
    WORK_TIE,
    looks_like_org,
    org_name,
    person_name,
    same_person,
)
from backchannel.extraction.mentions.places import hired_frame, is_place, no_employer
from backchannel.extraction.mentions.stage import gender_of
from backchannel.memory.text import norm_name

# Words before a capitalised run that make it a place of work.
_ORG_BEFORE = re.compile(
    r"(?:\b(?:at|(?:joined|joins|came|comes|moved|over|is|was|formerly)\s+from|joined|joining|join"
    r"|joins|left|leaving|leaves|quit|over\s+at|out\s+of|(?:brought|got|took)\s+(?:me|him|her|us|them)\s+into"
    r"|(?:retir|resign)(?:es|ed|ing)\s+from|(?:steps|stepped|stepping)\s+down\s+from|board\s+of"
    r"|(?:staff|employees|shareholders)\s+(?:of|at)"
    r"|(?:moved|gone|went|switched|shifted)\s+(?:over\s+)?to\s+the|quitté|rejoint|chez"
    r"|to\s+join|formerly\s+of|named\s+by|hired\s+by|poached\s+by|employed\s+by|works?\s+for|working\s+for"
    r"|worked\s+for|(?:firm|lender|insurer|bank|group|company|start-?up|retailer|maker|carmaker|consultancy))"
    r"(?:[\s,]+(?:uh|um|er|erm)\b,?)*\s+(?:the\s+)?|\bex-)$",
    re.I,
)
# A capitalised run as the mentions stage scans for it: NAME_RX's, and a name right after a lowercase
# "ex-" ("he is ex-Reliance"), which NAME_RX leaves (a name never starts inside a hyphenated word).
_MENTION_RX = re.compile(rf"(?:(?<![\w'’-])|(?<=\bex-)){NAME_BODY}")
# "in" for a place of work, as Indian English says it ("he is in EY only", "I was in Cognizant from 2011",
# "working under Padma Raghavan in Wipro", "the same cubicle in Infosys"): after a person's verb of being
# (its subject a pronoun of a person or a name) or a verb of working, a few words of time or company
# between. A place ("in Mysore") is no employer (places.py), nor a topic ("in Finance") or a month
# (names.NOT_ORGS, STOP); "the figure is in Appendix C", "it's in Jira" have no person as subject.
_IN_EMPLOYER = re.compile(
    r"(?:(?:\b(?:[Hh]e|[Ss]he|I|[Ww]e|[Tt]hey|[Yy]ou)|(?<![\w'’-])(?P<name>[A-Z][a-z][\w'’-]*))"
    r"(?:\s+(?:also|still|now|only|then|earlier|too|both))?\s+(?:is|was|are|were|am|(?:has|have|had)\s+been)"
    r"|\b(?:[Hh]e|[Ss]he)['’]s|\bI['’]m|\b(?:working|worked|works|employed)"
    r"|\b(?:same|one)\s+(?:team|cubicle|desk|office|batch|department))"
    r"(?:\s+(?:now|still|only|also|currently|earlier|then|already|itself|both|together|with\s+(?:us|me|him|her|them)"
    r"|(?:under|with|alongside)\s+[A-Z][\w'’-]*(?:\s+[A-Z][\w'’-]*){0,2}),?)*\s+in\s+$"
)
# Capitalised subjects of "is in" that are no person ("Everything is in Jira", "This is in Annex B").
_NO_PERSON_SUBJECT = STOP | {"everything", "everyone", "everybody", "something", "someone", "nothing", "anything"}


def _in_employer(text: str, start: int) -> bool:
    m = _IN_EMPLOYER.search(text, max(0, start - 64), start)
    return m is not None and not (m.group("name") and m.group("name").lower() in _NO_PERSON_SUBJECT)


# Words before a capitalised run that say no more than that it is a thing with a name ("from the",
# "with the", "for the", "of the"): evidence for a name that says it is an organisation, no other.
_WEAK_BEFORE = re.compile(r"\b(?:from|with|for|of)\s+the\s+$", re.I)
# Around a capitalised run, a place of work: "from the L&T side", "I know her from Airtel days".
_SIDE = re.compile(r"\b(?:from|on)\s+the\s+$", re.I)
_SIDE_AFTER = re.compile(r"^\s+side\b")
_DAYS_BEFORE = re.compile(r"\bfrom\s+(?:the\s+|my\s+|our\s+|her\s+|his\s+)?$", re.I)
_DAYS_AFTER = re.compile(r"^\s+days\b")
# Going to an employer in a role: "Swati is going to HCL as CHRO".
_GOING_TO = re.compile(r"\b(?:going|moving|headed|heading|off|move|go)\s+to\s+$", re.I)
_AS_TITLE = re.compile(r"^\s+as\s+(?:(?:the|a|an|their|its|our|new|interim|acting)\s+)*[A-Za-z]")
# A title before an organisation: "She is CFO in Dabur now", "head of data at Quillon".
_TITLE_IN = re.compile(r"\b(?:CEO|CFO|CIO|COO|CTO|CMO|MD|VP|head\s+of\s+\w+|director|manager)\s+in\s+$")
# A title of a whole organisation before it: "the new CIO of Acme", "co-founder of Lumen", "chief data
# officer at Kelso": the exact titles lexicon (names.CANONICAL_TITLES) less a vice president, whose "of"
# is a department's ("VP of Sales"), plus the founders and presidents it has no canonical form for.
_TITLE_OF_BEFORE = re.compile(r"([\w-]+(?:\s+[\w-]+){0,3})\s+(?:of|at)\s+(?:the\s+)?$")
_FOUNDING_TITLES = frozenset({"founder", "co-founder", "cofounder", "president"})


def _whole_organisation_title_before(text: str, start: int) -> bool:
    m = _TITLE_OF_BEFORE.search(text, max(0, start - 48), start)
    if m is None:
        return False
    words = m.group(1).lower().split()
    tails = (" ".join(words[i:]) for i in range(len(words)))
    return any(CANONICAL_TITLES.get(t, "VP") != "VP" or t in _FOUNDING_TITLES for t in tails)


# After a capitalised run: it hires or names someone ("Acme appoints", "Acme named Jo Bloggs", never "Jo
# Bloggs named acting CEO"), or it is the employer before a title and a name ("Former Equifax CIO Tamsin
# Reid", "Ex-HSBC executive Femi Adebayo", "Moonpath Studios co-founder Ilya Markov").
_ORG_AFTER = re.compile(
    r"^(?:(?:['’]s\s+(?:new|former|chief|head|board|CEO|CTO|CFO|COO"
    r"|(?:about|going|set)\s+to\s+(?:make|hire|name|appoint|bring\s+in))|\s+(?:has\s+hired|hires|hired|has\s+brought\s+in"
    r"|names|named(?=\s+[A-Z])|appoints|appointed|promotes|confirms|announces|taps|brought\s+in"
    r"|poached|poaches|lures|has\s+(?:poached|promoted|named|appointed|lured|tapped|recruited)"
    r"|is\s+(?:expected|set|poised|about|in\s+talks)\s+to\s+(?:appoint|name|hire|promote))"
    r"|\s+(?:says|said|confirms|confirmed|announces|announced)\s+(?:that\s+)?its)\b"
    r"|\s+(?:(?:chief|deputy|group)\s+[a-z]+(?:\s+officer)?|co-?founder|founder|CEO|CFO|CIO|COO|CTO|CMO"
    r"|CHRO|banker|executive|engineer|veteran|alum|alumna|alumnus)\s+(?=[A-Z][a-z])"
    # "BP finance chief Karen Whitlow", "Adidas e-commerce chief Sofia Brandt"
    r"|\s+[a-z][\w-]*\s+(?:chief|boss)\s+(?=[A-Z][a-z]))"
)
# The employer someone is hired or lured away from, or joins another from: "Revolut has poached Elena
# Marchetti from Monzo", "lured X away from Sanofi", "joins Diageo from Reckitt". _LEFT_FOR: the one someone
# leaves another for ("leaving Dropbox for Airbnb").
HIRED_FROM = re.compile(
    r"\b(?:poach(?:es|ed)?|lur(?:es|ed)|hir(?:es|ed)|recruit(?:s|ed)|join(?:s|ed|ing)?)\s+(?:[A-Z][\w'’&.-]*\s+){1,4}"
    r"(?:away\s+)?from\s+(?:the\s+)?$"
)
_LEFT_FOR = re.compile(r"\b(?:leaving|leaves|left|quit|quitting)\s+(?:[A-Z][\w'’&.-]*\s+){1,4}for\s+(?:the\s+)?$")
_FORMER_LEAD = re.compile(r"(?:[Ee]x-|[Ff]ormer(?:ly)?\s+)")
_PORTFOLIO_BEFORE = re.compile(
    r"\b(?:minister|secretary|department|ministry|director|head|chair|committee|office"
    r"|board|commissioner|council|school|university|college)\s+(?:of|for)\s+(?:the\s+)?$",
    re.I,
)
_PORTFOLIO_OF = re.compile(r"\b(?:minister|secretary)\s+(?:of|for)\s+(?:the\s+)?$", re.I)
FIRST_PERSON = re.compile(r"\b(?:I|I['’](?:m|ve|ll|d)|me|my|myself|mine)\b|\b(?:[Ww]e|[Uu]s|[Oo]ur|[Mm]yself)\b")
SINGULAR_FIRST = re.compile(r"\b(?:I|I['’](?:m|ve|ll|d)|me|my|myself|mine)\b")


@dataclass(frozen=True)
class Slot:
    start: int  # offsets in the utterance text
    end: int
    name: str
    kind: str  # person | organisation | PAIR (a "we" that is the speaker and the person `name`)


PAIR = "pair"


def _org_at(text: str, start: int, s1: int) -> str | None:
    m = ORG_RX.match(text[start:s1])  # the slice: "Ex-Siemens" is read from "Siemens" on
    if m is None or m.group(0).lower().strip(".,") in TITLE_HEADS:
        return None  # "CTO" is a title, not an organisation
    org = org_name(m.group(0))
    if org is None and is_place(m.group(0)) and hired_frame(text, start, start + len(m.group(0))):
        return m.group(0)  # "Oduya joins from Zurich": the insurer, not the town a topic list keeps out
    return _without_town(org) if org else None


# Words that open a name ending on a town and are no employer alone ("Royal London", "Greater Manchester").
_TOWN_LEADS = STOP | {"royal", "greater", "city", "visit", "transport", "central", "north", "south", "east", "west"}


def _without_town(org: str) -> str:
    """'Infosys Mysore', 'Deloitte London': an employer's office, the employer named before its town;
    a name with a head word keeps its town ("Trinity College Dublin", "Bank of Ireland")."""
    words = org.split()
    for n in range(1, min(3, len(words))):
        head, town = " ".join(words[:-n]), " ".join(words[-n:])
        if (
            is_place(town)
            and not any(w.lower().strip(".,") in ORG_HEADS for w in words)
            and head.split()[-1].lower() not in _TOWN_LEADS
        ):
            return head
    return org


def _frame(text: str, start: int, end: int) -> bool:
    """Whether the words around text[start:end] make it a place of work (see _ORG_BEFORE, _ORG_AFTER).
    "at the AoLE level", "at the COVID committee": the name says what kind of thing follows it,
    and the place is that thing."""
    after = text[end : end + 30]
    before = _ORG_BEFORE.search(text, max(0, start - 32), start)
    if before and before.group(0).lower().endswith("the "):
        noun = _NOUN_AFTER.match(after)
        if noun and noun.group(1) not in STOP and not noun.group(1).endswith("ly"):
            before = None
    return bool(
        before
        or _ORG_AFTER.match(after)
        or _SIDE.search(text, max(0, start - 12), start)
        and _SIDE_AFTER.match(after)
        or _DAYS_BEFORE.search(text, max(0, start - 12), start)
        and _DAYS_AFTER.match(after)
        or _TITLE_IN.search(text, max(0, start - 24), start)
        or _whole_organisation_title_before(text, start)
        or _in_employer(text, start)
        or HIRED_FROM.search(text, max(0, start - 64), start) is not None
        or _LEFT_FOR.search(text, max(0, start - 64), start) is not None
        or _GOING_TO.search(text, max(0, start - 16), start)
        and _AS_TITLE.match(after)
    )


def _amp_tail(text: str, raw: str, end: int) -> str:
    """'AT' of 'AT&T', 'L' of 'L&T': the acronym goes on past its ampersand. 'National Police Chiefs' of
    "the National Police Chiefs' Council": a name goes on past a plural possessive to the head word it
    ends on (a capitalised run never crosses the apostrophe)."""
    tail = _AMP_TAIL.match(text, end) if raw.isupper() else None
    if tail is None and raw.endswith("s") and " " in raw:
        tail = _POSSESSIVE_TAIL.match(text, end)
        if tail is not None and not looks_like_org(tail.group(0).split()[-1]):
            tail = None
    return raw + tail.group(0) if tail else raw


def _joined(raw: str) -> bool:
    """A name _amp_tail carried past an ampersand or a possessive: taken whole, not cut by org_name."""
    return "&" in raw or "' " in raw or "’ " in raw


_POSSESSIVE_TAIL = re.compile(r"['’](?:\s+[A-Z][\w-]*){1,3}(?![\w'’-])")


_NOUN_AFTER = re.compile(r"^\s+([a-z]+)\b(?!['’])")
_AMP_TAIL = re.compile(r"&[A-Z]+(?![\w-])")
_ONE_AND_HEAD = re.compile(r"^[A-Z][\w'’-]*\s+(?:and|&)\s+")


def _evidenced(
    text: str,
    start: int,
    org: str,
    organisations: set[str],
    frame: bool,
    *,
    cut: bool = False,
    lowercase: frozenset[str] = frozenset(),
) -> bool:
    """Whether `org`, said at text[start:], is an organisation by evidence (evidence.py), not a fragment."""
    end = start + len(org) if text.startswith(org, start) else start + len(org.split()[0])
    if lone_head_word(org) or piece_of_longer_name(text, start, end, lowercase):
        return False  # "the Council"; "Vale College" of "Cardiff and Vale College"
    if _PORTFOLIO_OF.search(text, max(0, start - 24), start):
        return False  # "the Deputy Minister for Health and Social Services": a portfolio
    if no_employer(org, text, start, end, organisations):
        return False  # "I know perhaps Swansea and Neath Port Talbot": places (places.py), not employers
    key = norm_name(org)
    if cut:  # "Former Unilever CFO Dana Whitt": the frame before governs the title, not the organisation
        return frame or key in organisations or looks_like_org(org) and not is_acronym(org)
    if is_acronym(org.replace(" ", "")):
        return frame or key in organisations  # "PPE", "FFT": a word of the trade, no employer
    return frame or key in organisations or looks_like_org(org)


def organisations_of(texts: list[str]) -> set[str]:
    """Normalised names the meeting uses as an organisation somewhere, with evidence (evidence.py): a
    name with a head word, a place of work ("joined X", "at X", "X has hired"), an acronym the
    meeting spells out ("the Crown Prosecution Service ... the CPS")."""
    # the meaning stage and the tie stances read the same meeting's texts, one after the other
    return set(_organisations_of(tuple(texts)))


@functools.lru_cache(maxsize=2)
def _organisations_of(said: tuple[str, ...]) -> frozenset[str]:
    texts = list(said)
    out: set[str] = set()
    lowercase = lowercase_words(texts)
    for long_form, acronym in aliases_in_texts(texts).items():
        out |= {norm_name(long_form), norm_name(acronym)}
    for text in texts:
        for m in _MENTION_RX.finditer(text):
            raw = _amp_tail(text, m.group(0), m.end())
            if raw.lower() in TITLE_HEADS:
                continue
            frame = _frame(text, m.start(), m.start() + len(raw))
            if frame or looks_like_org(raw):
                org = raw if _joined(raw) else _org_at(text, m.start(), len(text))
                if org and _evidenced(text, m.start(), org, out, frame, lowercase=lowercase):
                    out.add(norm_name(org))
    return frozenset(out)


def first_names(texts: list[str], organisations: set[str] | None = None) -> dict[str, str | None]:
    """{normalised first or last word of a full name the meeting says: that full name} ("Priya" and
    "Raman" after "Priya Raman"; None when two full names share it): the one-word names that surely
    are people (a lone "Seattle", "Wales" or "Matlab" is not), and whom they name."""
    out: dict[str, str | None] = {}
    lowercase = lowercase_words(texts)
    for text in texts:
        for m in NAME_RX.finditer(text):
            name = person_name(m.group(0))
            if (
                name
                and len(name.split()) > 1
                and not looks_like_org(name)
                and norm_name(name) not in (organisations or ())
                and not (common_phrase(name, lowercase) and gender_of(name) is None)
                and not piece_of_longer_name(text, m.end() - len(name), m.end())
                and not is_place(name)
            ):
                for word in {norm_name(name.split()[0]), norm_name(name.split()[-1])}:
                    had = out.get(word, name)
                    if had is not None and norm_name(had) != norm_name(name):
                        out[word] = None  # two people share it: it names neither for sure
                    elif word not in out:
                        out[word] = name
    return out


def find(
    text: str,
    s0: int,
    s1: int,
    *,
    known_people: frozenset[str],
    organisations: set[str],
    speaker: str | None,
    names: dict[str, str | None] | None = None,
    lowercase: frozenset[str] = frozenset(),
) -> list[Slot]:
    """The people and organisations named in text[s0:s1], in order (the speaker's own name left out).
    `lowercase` is every word the meeting writes in lower case (evidence.lowercase_words): a run of
    such words capitalised ("Young People") is no one's name."""
    slots: list[Slot] = []
    pos = s0
    while True:
        m = _MENTION_RX.search(text, pos, s1)
        if m is None:
            break
        pos = m.end()
        raw, start, stop = m.group(0), m.start(), s1
        lead = _FORMER_LEAD.match(raw)
        if lead and lead.end() < len(raw) - 1:  # "Ex-Goldman banker", "Former Unilever CFO": the name follows
            raw, start = raw[lead.end() :], start + lead.end()
        # "Former Unilever CFO Dana Whitt" is one capitalised run: an organisation, a title, a person
        cut = next((w for w in re.finditer(r"\S+", raw) if w.start() > 0 and w.group(0).lower() in TITLE_HEADS), None)
        if cut is not None:
            raw, pos = raw[: cut.start()].rstrip(), start + cut.end()
            stop = start + len(raw)
        raw = _amp_tail(text, raw, start + len(raw))
        pos = max(pos, start + len(raw))
        key = norm_name(raw)
        if raw.lower() in TITLE_HEADS or key in known_people and is_seat_name(raw):
            continue  # "Project Manager and User Interface agreed": seats of this meeting, no party to a tie
        frame = (
            not cut
            and _frame(text, start, start + len(raw))
            or (cut is not None and _ORG_AFTER.match(text[start + len(raw) : start + len(raw) + 30]) is not None)
        )
        whole = _org_at(text, start, stop) if not _joined(raw) else None
        if (
            whole
            and _ONE_AND_HEAD.match(whole)
            and looks_like_org(whole)
            and key not in known_people
            and key not in (names or {})
            and gender_of(raw) is None
        ):
            raw, key = whole, norm_name(whole)  # "Cardiff and Vale College": one name, its first word no one's
        if key not in known_people and (
            frame or key in organisations or looks_like_org(raw) or _WEAK_BEFORE.search(text, max(0, start - 12), start)
        ):
            org = raw if _joined(raw) else _org_at(text, start, stop)
            if (
                org
                and len(org) > 1
                and org.lower() not in STOP
                and _evidenced(text, start, org, organisations, frame, cut=cut is not None, lowercase=lowercase)
            ):
                end = start + len(org) if text.startswith(org, start) else start + len(raw)
                slots.append(Slot(start, end, org, "organisation"))
                pos = max(pos, end)
            continue
        name = person_name(raw)
        if name is None or _PORTFOLIO_BEFORE.search(text, max(0, start - 40), start):
            continue  # "the Minister of Crown-Indigenous Relations": a portfolio, not a person
        if speaker and norm_name(name) == norm_name(speaker):
            continue
        at = start + max(0, raw.find(name.split()[0]))
        if norm_name(name) not in known_people and (
            piece_of_longer_name(text, at, at + len(name), lowercase)
            or common_phrase(name, lowercase)
            and gender_of(name) is None
        ):
            continue  # "Young People" of "the Children, Young People and Education Committee"
        one_word = " " not in name
        if (
            one_word
            and norm_name(name) not in known_people
            and (names is None or norm_name(name) not in names)
            and not (_beside_me(text, start, start + len(raw)) and name.lower() not in lowercase)
            and not _party_to_speech(text, start, start + len(raw), name, lowercase)
            and not _tie_noun_before(text, start, start + len(raw), name, lowercase)
        ):
            continue  # a lone capitalised word ("Rumour", "Seattle", "Wales") is a person only when known as one
        if (
            is_place(name)
            and norm_name(name) not in known_people
            and not (one_word and norm_name(name) in (names or {}))
        ):
            continue  # "Neath Port Talbot", "Swansea": places (places.py); "Sydney" after "Sydney Carter" is her
        # "So Sophie Martin": person_name drops the opener; the slot covers the name only
        off = raw.find(name.split()[0])
        full = (names or {}).get(norm_name(name)) if one_word and norm_name(name) not in known_people else None
        slots.append(Slot(start + max(0, off), start + max(0, off) + len(name), full or name, "person"))
    return _one_name_per_person(slots)


# A lone name paired with the speaker ("Sudhir and me were ...", "me and Lina", "Selin and I met once"):
# only a person does things together with "I" as the other half of "X and I".
_ME_AND = re.compile(r"\b(?:[Mm]e|I|[Mm]yself)\s+and\s+$")
_AND_ME = re.compile(r"^\s+and\s+(?:me|I|myself)\b(?!['’])")


# Before the last word of an organisation's name ("The Bank of Valletta and I worked together").
_NAME_CONNECTOR_BEFORE = re.compile(r"\b(?:of|for|de|du|des|the|and|&)\s+$", re.I)


# A lone first name that says or is told something is someone ("Marc said he'd send it", "Marc promised
# Carol to draft it", "I told Priya"): only a person speaks, promises or is told. The first-name lexicon
# must know the word, so "Zoom said" or "Legal promised" stay no one.
_SPEECH_AFTER = re.compile(
    r"^\s+(?:said|says|promised|promises|told|tells|agreed|agrees|offered|offers|mentioned|confirmed|asked|replied)\b"
)
_SPEECH_BEFORE = re.compile(r"\b(?:promised|told|tells|asked|emailed|messaged|reminded|assured)\s+$")


# A name the lexicon does not know, that speaks of itself as "he" or "she" ("Rhodri mentioned he'd worked
# under ...", "Oisín says she can't make it"): the pronoun says a person, where "Zoom said it" or "Legal
# said they" does not.
_OF_ITSELF = re.compile(r"(?:\s+(?:me|us|him|her))?(?:\s+that)?\s+(?:he|she)\b")


def _party_to_speech(text: str, start: int, end: int, name: str, lowercase: frozenset[str]) -> bool:
    if name.lower() in lowercase:
        return False
    if gender_of(name) is None:
        verb = _SPEECH_AFTER.match(text[end : end + 40])
        return verb is not None and _OF_ITSELF.match(text, end + verb.end()) is not None
    return bool(_SPEECH_AFTER.match(text[end : end + 16]) or _SPEECH_BEFORE.search(text, max(0, start - 12), start))


# A lone name after the noun of a tie ("my sister Carla", "our mentor Ximena", "my cousin Arjun"), or before an
# honorific ("Pooja ma'am", "Ravi sir"): a person, whether or not the names lexicon knows the word.
_TIE_NOUN_BEFORE = re.compile(
    rf"\b(?:[Mm]y|[Oo]ur|[Hh]is|[Hh]er|[Tt]heir)\s+(?:(?:old|former|ex-|late|dear|best|good|close|elder|younger|little|big)\s+)?"
    rf"(?:{WORK_TIE}|friend|mate|{FAMILY})\s*,?\s+$"
)
_HONORIFIC_AFTER = re.compile(r"\s+(?:ma['’]am|madam|sir|ji)\b", re.I)


def _tie_noun_before(text: str, start: int, end: int, name: str, lowercase: frozenset[str]) -> bool:
    if name.lower() in lowercase:
        return False
    return bool(_TIE_NOUN_BEFORE.search(text, max(0, start - 48), start) or _HONORIFIC_AFTER.match(text, end))


def _beside_me(text: str, start: int, end: int) -> bool:
    if _ME_AND.search(text, max(0, start - 12), start):
        return True
    return bool(_AND_ME.match(text[end : end + 12])) and not _NAME_CONNECTOR_BEFORE.search(
        text, max(0, start - 8), start
    )


def _one_name_per_person(slots: list[Slot]) -> list[Slot]:
    """A first name beside the full name it starts ("Sunniva, uh, Sunniva Dahl", "Oskar Berg sat
    opposite me ..., Oskar, tall guy") is the same person: the slot takes the full name, so the head
    reads one person, not two."""
    full: dict[str, set[str]] = {}
    for sl in slots:
        words = sl.name.split()
        if sl.kind == "person" and len(words) > 1:
            full.setdefault(norm_name(words[0]), set()).add(sl.name)
    out = []
    for sl in slots:
        names = full.get(norm_name(sl.name)) if sl.kind == "person" and " " not in sl.name else None
        out.append(Slot(sl.start, sl.end, next(iter(names)), "person") if names and len(names) == 1 else sl)
    return out


_CONTRACTION_OF_PLURAL = re.compile(r"['’](ve|re|ll|d)\b")
_SPELT = {"ve": " have", "re": " are", "ll": " will", "d": " had"}


def _spelt_out(text: str, pos: int) -> tuple[str, int]:
    """The verb a plural pronoun's contraction at `pos` stands for ("they've": " have") and where it
    ends; ("", pos) when there is none."""
    m = _CONTRACTION_OF_PLURAL.match(text, pos)
    return (_SPELT[m.group(1)], m.end()) if m else ("", pos)


def masked(text: str, s0: int, s1: int, slots: list[Slot], pronouns: Sequence[Slot] = ()) -> str:
    """text[s0:s1] with each slot written as the head reads it: people {P}, {P2}, ...; organisations {O}.

    `pronouns` are resolved pronouns (their span, the name they stand for, its kind): a subject
    pronoun is written as the slot of its person ("She's head of data at {O}" reads "{P} is head of
    data at {O}"), "they" as {O} and "their"/"its" as "{O}'s", the way the bank writes them."""
    out: list[str] = []
    pos = s0
    people: dict[str, int] = {}
    spans = sorted(
        [
            *slots,
            *(
                p
                for p in pronouns
                if s0 <= p.start and p.end <= s1 and not any(x.start < p.end and p.start < x.end for x in slots)
            ),
        ],
        key=lambda x: x.start,
    )
    for sl in spans:
        if sl.start < pos:
            continue
        out.append(_without_asides(text[pos : sl.start]))
        said = text[sl.start : sl.end].lower()
        if sl.kind == PAIR:  # "we" / "us" standing for the speaker and one person: the pair, spelt out
            key = next((k for k in people if same_person(k, sl.name)), norm_name(sl.name))
            n = people.setdefault(key, len(people))
            person = "{P}" if n == 0 else "{P2}"
            pos = sl.end
            if said.startswith("us"):
                out.append(f"{person} and me")
                continue
            have, pos = _spelt_out(text, sl.end)
            out.append(f"{person} and I{have}")
            continue
        if sl.kind == "organisation":
            out.append("{O}'s" if said in ("their", "its") else "{O}")
            if said == "they" and (spelt := _spelt_out(text, sl.end))[0]:
                out.append(spelt[0])
                pos = spelt[1]
                continue
        else:
            key = next((k for k in people if same_person(k, sl.name)), norm_name(sl.name))
            n = people.setdefault(key, len(people))
            out.append("{P}" if n == 0 else "{P2}")
        pos = sl.end
        if sl in pronouns and sl.kind == "person":
            verb = _CONTRACTION.match(text, pos)
            if verb:  # "she's left": "{P} has left"; "he's head of": "{P} is head of"
                out.append(" has " if verb.group(1) else " is ")
                pos = verb.end()
    out.append(_without_asides(text[pos:s1]))
    return "".join(out)


# A place set off by commas, an aside ("at Ambev for six years, in, um, São Paulo, alongside X"): where it
# happened says nothing of the tie or the job, and the bank writes few places, so the head reads the
# sentence without it. A place inside the clause stays ("we were at school together in Bath, and ...").
_PLACE_ASIDE = re.compile(
    r",\s*(?:in|at|from|near|around|outside)[,\s]+(?:(?:uh|um|er|erm)\b[,\s]+)*"
    r"(?P<place>[A-Z][\w'’.-]*(?:\s+[A-Z][\w'’.-]*){0,3})(?=\s*[,;.!?])"
)


def _without_asides(piece: str) -> str:
    return _PLACE_ASIDE.sub(lambda m: "" if is_place(m.group("place")) else m.group(0), piece)


_CONTRACTION = re.compile(r"['’]s[\s,]+(?:(?=(been|got|left|joined|moved|gone|done|had|taken|worked|quit|started)\b))?")


# Hesitations, as transcripts write them; "em", "ehm" (Irish, Scottish) only in lower case, since
# "Em" is also a name ("Em said she'd call").
HESITATION_WORDS = r"(?:u+h+|u+m+|uhm|erm|er|(?-i:em|ehm))"
_FILLER = re.compile(rf"(?:[,\s]*)\b(?:{HESITATION_WORDS}|ah)\b(?:\s*,)?", re.I)
_REPEAT = re.compile(r"\b(\w+(?:['’]\w+)?)(?:(?:\s*,)?\s+\1\b)+", re.I)
_SPACES = re.compile(r"\s+(?=[,.!?])|(?<=,)\s*,|\s{2,}")


def fluent(text: str) -> str:
    """`text` as it would be written, for the embedding model: hesitations ("uh", "um") and a word
    said twice ("the, the", "we, we", "I, I") removed. Only what the head reads is cleaned; spans,
    quotes and slots stay on the words said."""
    text = _FILLER.sub("", text)
    text = _REPEAT.sub(r"\1", text)
    return _SPACES.sub(lambda m: " " if m.group(0).startswith("  ") else "", text).lstrip(" ,.;").rstrip(" ,")
