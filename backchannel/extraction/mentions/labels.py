"""What speaker labels say: titles, organisations and seats written into the label itself.

Parliamentary and committee transcripts put a person's office in the label:
"Hon. Patty Hajdu (Minister of Health)", "Right Hon. Justin Trudeau (Prime Minister)",
"The Chair (Hon. Anthony Rota (Nipissing, Lib.))", "Kirsty Williams AM, Cabinet Secretary
for Education", "Ms. Kathleen Morris (Vice-President, Health Branch, Public Health Agency of
Canada)", and post-nominals ("Lynne Neagle AM", "Jeremy Miles MS") that are offices too.
A riding and party ("Mr. Dan Albas (Central Okanagan, CPC)") is no title and yields nothing.

`label_person(label)` is the name a label carries ("Patty Hajdu"), or None for a seat
("Speaker 2", "The Chair"); `label_facts(transcript)` emits one has_title / works_at per
fact per distinct label, on the label's first utterance, quoting the label itself
(`ExtractedAssertion.quote_in_label`): the words that say it are the label's, not the speech's.
"""

from __future__ import annotations

import re

from backchannel.extraction.formats.transcript import Transcript
from backchannel.extraction.mentions.names import looks_like_org, org_name, parse_title, person_name
from backchannel.extraction.result import ExtractedAssertion, Mention

# Post-nominals that are an office, and the office.
OFFICE_POSTNOMINALS = {
    "AM": "Assembly Member",
    "MS": "Member of the Senedd",
    "MP": "Member of Parliament",
    "MSP": "Member of the Scottish Parliament",
    "MLA": "Member of the Legislative Assembly",
    "MEP": "Member of the European Parliament",
    "TD": "Teachta Dála",
}
_OTHER_POSTNOMINALS = {"OBE", "MBE", "CBE", "QC", "KC", "PhD", "FRS", "Jr", "Sr"}
_HONORIFIC = re.compile(
    r"^(?:(?:the\s+)?(?:right\s+|rt\.?\s+)?hon(?:ou?rable)?\.?|mr|mrs|ms|miss|mx|dr|prof"
    r"|professor|sir|dame|lord|lady|senator|sen|councillor|cllr)\.?\s+",
    re.I,
)
# "The Chair (Hon. X (...))", "The Acting Chair (Mr. X)", "The Speaker (Hon. X)", "Madam Chair (X)"
_SEAT_WITH_NAME = re.compile(
    r"^(?:the\s+|madam\s+|mister\s+|mr\.?\s+)?(?P<seat>(?:acting\s+|deputy\s+|vice[- ])?(?:chair(?:man|woman|person)?"
    r"|speaker|president|clerk|moderator|convener|convenor))\s*\((?P<inner>.+)\)\s*$",
    re.I,
)
# Words that name a seat, not a person: "Speaker 2", "Grad C", "Caller 1", "Intervenant 1", "Host".
SEAT_WORDS = frozenset(
    """
speaker participant spk person unknown guest caller interviewer interviewee moderator host attendee user voice
member chair witness agent customer client operator presenter narrator audience panelist panellist reporter
student grad phd postdoc professor prof doctor patient teacher judge clerk interpreter translator everyone all
intervenant intervenante locuteur locutrice orateur oratrice interlocuteur interlocutrice animateur animatrice
journaliste invité invitée participante client cliente agente conseiller conseillère marketing user interface
""".split()
)
_PAREN_TAIL = re.compile(r"\s*\((?P<note>[^()]*(?:\([^()]*\)[^()]*)*)\)\s*$")


def _strip_person(s: str) -> tuple[str, list[str]]:
    """('Lynne Neagle', ['AM']) for 'Lynne Neagle AM'; honorifics dropped."""
    s = s.strip()
    for _ in range(2):
        s = _HONORIFIC.sub("", s).strip()
    words = s.split()
    posts: list[str] = []
    while len(words) > 1 and (words[-1] in OFFICE_POSTNOMINALS or words[-1] in _OTHER_POSTNOMINALS):
        posts.insert(0, words.pop())
    return " ".join(words), posts


def _with_initials(s: str) -> str | None:
    """'Judy A. Sgro': a name with a middle initial (person_name refuses initials alone)."""
    words = s.split()
    rest = [w for w in words if not re.fullmatch(r"[A-Z]\.?", w)]
    if 2 <= len(words) <= 5 and len(rest) >= 2 and rest != words and person_name(" ".join(rest)):
        return s
    return None


def parse_label(label: str) -> tuple[str | None, str | None, list[str], str | None]:
    """(person name, seat, office post-nominals, note) a speaker label holds.

    'Hon. Bill Blair (Minister of Public Safety)' -> ('Bill Blair', None, [], 'Minister of Public Safety');
    'The Chair (Hon. Anthony Rota (Nipissing, Lib.))' -> ('Anthony Rota', 'Chair', [], 'Nipissing, Lib.');
    'Kirsty Williams AM, Cabinet Secretary for Education' -> ('Kirsty Williams', None, ['AM'], 'Cabinet ...')."""
    s = " ".join(label.split())
    seat = None
    m = _SEAT_WITH_NAME.match(s)
    if m:
        seat, s = m.group("seat"), m.group("inner").strip()
    note = None
    p = _PAREN_TAIL.search(s)
    if p and p.start() > 0:
        note, s = p.group("note").strip(), s[: p.start()]
    elif "," in s:
        head, _, tail = s.partition(",")
        if tail.strip() and person_name(_strip_person(head)[0]):
            note, s = tail.strip(), head
    bare, posts = _strip_person(s)
    name = (person_name(bare) or _with_initials(bare)) if bare else None
    if name and len(name.split()) < 2 and not posts and note is None and seat is None:
        return name, None, [], None
    return name, seat, [p for p in posts if p in OFFICE_POSTNOMINALS], note


def is_seat_label(label: str) -> bool:
    """A label that names a seat in one meeting, not a person: 'Speaker 2', 'SPEAKER_01', 'Grad C',
    'PhD A', 'Caller 1', 'Host', 'The Chair', 'Project Manager', 'CFO', 'Intervenant 1'."""
    s = " ".join(label.replace("_", " ").split())
    words = s.split()
    if not words or any(ch.isdigit() for ch in s):
        return True
    low = [w.lower().strip(".:") for w in words]
    if low[0] == "the" or all(w in SEAT_WORDS for w in low):
        return True
    if len(words) == 2 and low[0] in SEAT_WORDS and len(words[1]) == 1:
        return True  # "Grad C", "Professor E"
    return parse_title(s) is not None  # "Project Manager", "CFO", "Industrial Designer"


def label_person(label: str | None) -> str | None:
    """The person a speaker label names, honorifics, post-nominals and notes removed; None for a seat."""
    if not label:
        return None
    name, seat, _posts, _note = parse_label(label)
    if name is None or (seat is None and is_seat_label(name)):
        return None
    return name


def is_seat_name(name: str) -> bool:
    """A seat's label said as a name ("User Interface", "Project Manager", "Speaker 2"): the label holds no
    person's name (label_person), so the words are the seat, and a seat is no party to a tie or a job."""
    return is_seat_label(name) and label_person(name) is None


def _note_role(note: str) -> tuple[str | None, str | None]:
    """(title, organisation) in a label's note: 'Minister of Health' -> ('Minister of Health', None);
    'Vice-President, Health Branch, Public Health Agency of Canada' -> ('Vice-President', 'Public Health
    Agency of Canada'); 'Edmonton Strathcona, NDP' (a riding and a party) -> (None, None)."""
    parts = [x.strip() for x in note.split(",") if x.strip()]
    if not parts or parse_title(parts[0]) is None:
        return None, None
    if len(parts) > 1 and looks_like_org(parts[-1]) and org_name(parts[-1], lenient=True):
        title = parse_title(parts[0])
        return (title[1] if title else parts[0]), org_name(parts[-1], lenient=True)
    whole = parse_title(note.replace(",", " ,").replace(" ,", ","))
    if whole is None:
        return None, None
    return note, None  # "Minister of Families, Children and Social Development": the commas are the title's


def label_facts(transcript: Transcript) -> list[ExtractedAssertion]:
    out: list[ExtractedAssertion] = []
    seen: set[str] = set()
    for u in transcript.utterances:
        if not u.speaker or u.speaker in seen:
            continue
        label: str = u.speaker
        seen.add(label)
        name, seat, posts, note = parse_label(label)
        if name is None:
            continue
        me = Mention(name=label, kind="person", is_speaker=True)

        def emit(
            predicate: str,
            *,
            literal: str | None = None,
            org: str | None = None,
            qualifier: str | None = None,
            me: Mention = me,
            idx: int = u.idx,
            label: str = label,
        ) -> None:
            out.append(
                ExtractedAssertion(
                    subject=me,
                    predicate=predicate,
                    utterance_idx=idx,
                    span_start=0,
                    span_end=len(label),
                    quote=label,
                    object=Mention(org, "organisation") if org else None,
                    object_literal=literal,
                    qualifier=qualifier,
                    modality="stated",
                    confidence=0.8,
                    quote_in_label=True,
                )
            )

        if seat:
            emit("has_title", literal=" ".join(seat.lower().split()))
        for p in posts:
            emit("has_title", literal=OFFICE_POSTNOMINALS[p])
        if note:
            title, org = _note_role(note)
            if org:
                emit("works_at", org=org, qualifier=title)
            elif title:
                emit("has_title", literal=title)
    return out
