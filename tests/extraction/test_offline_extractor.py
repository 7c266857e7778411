"""The offline (rule-based, no model) extractor: sentence in, assertions out;
no junk from chatter; real meetings from ../shared/corpora."""

from __future__ import annotations

import json
import re
from datetime import date, datetime
from pathlib import Path

import pytest

from backchannel.core.vocabulary import MODALITIES, PREDICATES
from backchannel.extraction.formats.transcript import Transcript, Utterance
from backchannel.extraction.mentions.names import canonical_title, org_name, parse_title, person_name
from backchannel.extraction.offline import extract, self_introductions
from backchannel.extraction.result import ExtractedAssertion
from backchannel.extraction.rules.core import sentences
from backchannel.memory.text import norm_name

MEETING = datetime(2026, 3, 10, 14, 0)  # a Tuesday


def transcript(lines, when: datetime | None = MEETING) -> Transcript:
    return Transcript([Utterance(i, sp, text) for i, (sp, text) in enumerate(lines)], "text", meeting_date=when)


def check_invariants(t: Transcript, out: list[ExtractedAssertion]) -> None:
    """What every extraction must satisfy, whatever the input."""
    by_idx = {u.idx: u for u in t.utterances}
    for a in out:
        u = by_idx[a.utterance_idx]
        said = u.speaker if a.quote_in_label else u.text  # a label's own words ("Hon. X (Minister of Y)")
        assert said[a.span_start : a.span_end] == a.quote, a
        assert a.quote.strip() == a.quote and a.quote
        assert a.predicate in PREDICATES and a.modality in MODALITIES
        assert (a.object is None) != (a.object_literal is None), a
        if a.subject.is_speaker:
            assert u.speaker and a.subject.name == u.speaker
        else:
            assert not u.speaker or norm_name(a.subject.name) != norm_name(u.speaker)
            assert a.modality in ("reported", "commitment")
        if a.object is not None:
            assert norm_name(a.object.name) != norm_name(a.subject.name)
        if a.predicate == "committed_to":
            assert a.modality == "commitment"


def run(*texts: str, speaker: str | None = "Marc", when: datetime | None = MEETING) -> list[ExtractedAssertion]:
    t = transcript([(speaker, x) for x in texts], when)
    out = extract(t)
    check_invariants(t, out)
    return out


def facts(out):
    """Compact tuples: (predicate, subject, object or literal, qualifier)."""
    return {(a.predicate, a.subject.name, a.object.name if a.object else a.object_literal, a.qualifier) for a in out}


def one(out, predicate, **kw) -> ExtractedAssertion:
    hits = [
        a
        for a in out
        if a.predicate == predicate
        and all(
            (a.object.name if k == "obj" and a.object else getattr(a, k, None)) == v
            if k != "subject"
            else a.subject.name == v
            for k, v in kw.items()
        )
    ]
    assert len(hits) == 1, (predicate, kw, out)
    return hits[0]


# ---------------------------------------------------------------- roles and employment


@pytest.mark.parametrize(
    "text,person,org,title",
    [
        ("Sophie Martin is the CIO of Acme.", "Sophie Martin", "Acme", "CIO"),
        ("Sophie is now CIO at Acme Corp.", "Sophie", "Acme Corp", "CIO"),
        ("Sophie Martin, chief executive of Acme, said no.", "Sophie Martin", "Acme", "CEO"),
        ("We met Sophie Martin, the CTO at Acme, last week.", "Sophie Martin", "Acme", "CTO"),
        ("Sophie Martin is the Chief Information Officer at Acme.", "Sophie Martin", "Acme", "CIO"),
        ("The new CIO of Acme is Sophie Martin.", "Sophie Martin", "Acme", "CIO"),
        ("Élodie Durand is head of sales at the Bank of England.", "Élodie Durand", "Bank of England", "head of sales"),
        ("Sophie, who's now the CIO over at Acme, called.", "Sophie", "Acme", "CIO"),
        (
            "Jean-Pierre de la Fontaine is the managing director of Globex.",
            "Jean-Pierre de la Fontaine",
            "Globex",
            "managing director",
        ),
    ],
)
def test_title_at_organisation(text, person, org, title):
    out = run(text)
    a = one(out, "works_at", subject=person)
    assert (a.object.name, a.object.kind, a.qualifier) == (org, "organisation", title)
    assert a.modality == "reported" and not a.subject.is_speaker
    assert a.quote == text


def test_quote_is_the_sentence_not_the_utterance():
    text = "Thanks for coming. Sophie Martin is the CIO of Acme. Anyway, the budget."
    a = one(run(text), "works_at")
    assert a.quote == "Sophie Martin is the CIO of Acme."
    assert text[a.span_start : a.span_end] == a.quote


@pytest.mark.parametrize(
    "text,pred,person,org,vfrom,vto",
    [
        ("Sophie works at Acme.", "works_at", "Sophie", "Acme", None, None),
        ("Marc Dupont joined Globex in 2019.", "works_at", "Marc Dupont", "Globex", date(2019, 1, 1), None),
        ("Paul left Initech last year.", "left", "Paul", "Initech", None, date(2025, 12, 31)),
        ("Paul quit Initech two years ago.", "left", "Paul", "Initech", None, date(2024, 3, 10)),
        ("Sophie used to work for Acme.", "left", "Sophie", "Acme", None, None),
        (
            "Sophie worked at Acme from 2016 to 2021.",
            "works_at",
            "Sophie",
            "Acme",
            date(2016, 1, 1),
            date(2021, 12, 31),
        ),
        ("Sophie, who works for Hooli, called.", "works_at", "Sophie", "Hooli", None, None),
    ],
)
def test_employment_verbs(text, pred, person, org, vfrom, vto):
    a = one(run(text, speaker="Anna"), pred, subject=person)
    assert a.object.name == org
    assert (a.valid_from, a.valid_to) == (vfrom, vto)


def test_dates_stay_with_their_own_verb():
    out = run("I used to work at Google before I joined Facebook in 2015.")
    g = one(out, "left", obj="Google")
    assert (g.valid_from, g.valid_to) == (None, None)
    assert one(out, "works_at", obj="Facebook").valid_from == date(2015, 1, 1)


@pytest.mark.parametrize(
    "text,vfrom,vto",
    [
        ("Sophie Martin was the CFO of Globex until 2020.", None, date(2020, 12, 31)),
        ("Sophie Martin was the CFO of Globex from 2015 to 2019.", date(2015, 1, 1), date(2019, 12, 31)),
        ("Sophie Martin is the CFO of Globex since 2019.", date(2019, 1, 1), None),
        ("We met Sophie Martin, the CFO at Globex, yesterday.", None, None),  # dates the meeting, not the job
    ],
)
def test_role_validity_from_tense_and_date(text, vfrom, vto):
    a = one(run(text, speaker="Anna"), "works_at")
    assert (a.valid_from, a.valid_to) == (vfrom, vto)


def test_speaker_first_name_is_the_speaker():
    assert not run("Marc Dupont is a friend of mine.", speaker="Marc")


def test_left_then_joined():
    out = run("Sophie left Acme in 2023 to join Globex.", speaker="Anna")
    assert one(out, "left", obj="Acme").valid_to == date(2023, 12, 31)
    assert one(out, "works_at", obj="Globex").valid_from == date(2023, 1, 1)


def test_first_person_employment_is_stated_by_the_speaker():
    out = run("I joined Acme in 2019. I'm the CTO at Acme. I left Initech in 2018.")
    joined = one(out, "works_at", obj="Acme", qualifier=None)
    assert joined.subject.is_speaker and joined.subject.name == "Marc" and joined.modality == "stated"
    assert joined.valid_from == date(2019, 1, 1)
    assert one(out, "works_at", qualifier="CTO").subject.name == "Marc"
    assert one(out, "left", obj="Initech").valid_to == date(2018, 12, 31)


@pytest.mark.parametrize(
    "text,title,vfrom",
    [
        ("Sophie Martin became CIO of Acme last year.", "CIO", date(2025, 1, 1)),
        ("Sophie Martin was appointed CIO of Acme in January.", "CIO", date(2026, 1, 1)),
        ("Sophie Martin has just been named chief information officer at Acme.", "CIO", None),
        ("Sophie Martin took over as CEO of Acme in 2024.", "CEO", date(2024, 1, 1)),
    ],
)
def test_role_starts(text, title, vfrom):
    a = one(run(text, speaker="Anna"), "works_at")
    assert (a.subject.name, a.object.name, a.qualifier, a.valid_from, a.valid_to) == (
        "Sophie Martin",
        "Acme",
        title,
        vfrom,
        None,
    )


def test_has_title_without_organisation():
    out = run("Sophie is the new CIO.", "Paul is a software engineer.", speaker="Anna")
    assert ("has_title", "Sophie", "CIO", None) in facts(out)
    assert ("has_title", "Paul", "software engineer", None) in facts(out)


def test_former_title_means_left():
    a = one(run("Sophie Martin, the former CEO of Acme, joined us.", speaker="Anna"), "left")
    assert (a.subject.name, a.object.name, a.qualifier) == ("Sophie Martin", "Acme", "CEO")


def test_pronoun_follows_the_one_person_named_before():
    out = run("Actually, I worked with Sophie Martin at Acme from 2016 to 2021. She's now the CIO at Globex.")
    a = one(out, "works_at", obj="Globex")
    assert a.subject.name == "Sophie Martin" and a.qualifier == "CIO" and a.confidence < 0.6
    assert not run("Sophie Martin and Claire Dubois came. She is the CEO of Acme.")  # ambiguous: nothing
    s = one(run("Funny story, Sophie Martin and I worked together at Globex; she's now the CIO of Acme."), "works_at")
    assert s.subject.name == "Sophie Martin"  # "Funny" opens the sentence: no rival name


# ---------------------------------------------------------------- worked_with


def test_we_worked_together_resolves_the_other_person_and_the_dates():
    out = run("I know Sophie Martin well, we worked together at Acme from 2016 to 2021.")
    w = one(out, "worked_with")
    assert (w.subject.name, w.subject.is_speaker, w.object.name, w.qualifier) == ("Marc", True, "Sophie Martin", "Acme")
    assert (w.valid_from, w.valid_to, w.date_phrase) == (date(2016, 1, 1), date(2021, 12, 31), "from 2016 to 2021")
    k = one(out, "knows")
    assert k.object.name == "Sophie Martin" and k.valid_from is None  # the range belongs to the work


def test_we_worked_together_uses_the_previous_sentence():
    w = one(run("Sophie Martin? We worked together at Acme between 2016 and 2021."), "worked_with")
    assert w.object.name == "Sophie Martin" and w.quote == "We worked together at Acme between 2016 and 2021."


def test_we_worked_together_with_nobody_named_says_nothing():
    assert not [a for a in run("We worked together at Acme for years.") if a.predicate == "worked_with"]


@pytest.mark.parametrize(
    "text,other,org",
    [
        ("I worked with Sophie Martin at Acme.", "Sophie Martin", "Acme"),
        ("Sophie and I worked together at Globex.", "Sophie", "Globex"),
        ("Me and Sophie used to work together at Initech.", "Sophie", "Initech"),
        ("I've worked closely with Paul Durand.", "Paul Durand", None),
        ("Sophie was my former colleague at Acme.", "Sophie", "Acme"),
    ],
)
def test_worked_with_first_person(text, other, org):
    w = one(run(text), "worked_with")
    assert (w.subject.name, w.object.name, w.qualifier) == ("Marc", other, org)


def test_boss_at_with_an_apposition_between():
    out = run("Sophie Martin, who is now CIO of Acme, was my boss at Globex.")
    assert ("works_at", "Sophie Martin", "Acme", "CIO") in facts(out)
    assert ("worked_with", "Marc", "Sophie Martin", "Globex") in facts(out)


@pytest.mark.parametrize(
    "text,pred,other,org",
    [
        ("My old colleague Sophie Martin is joining us.", "worked_with", "Sophie Martin", None),
        ("Sophie Martin, my former boss at Globex, called.", "worked_with", "Sophie Martin", "Globex"),
        ("John is my old colleague from Deloitte.", "worked_with", "John", "Deloitte"),
        ("I had lunch with my friend Paul Durand yesterday.", "knows", "Paul Durand", None),
    ],
)
def test_my_ties(text, pred, other, org):
    a = one(run(text), pred)
    assert (a.subject.name, a.object.name, a.qualifier) == ("Marc", other, org)


def test_worked_with_third_parties_is_reported():
    w = one(run("Paul worked with Sophie at Acme in 2018.", speaker="Anna"), "worked_with")
    assert (w.subject.name, w.object.name, w.qualifier, w.modality) == ("Paul", "Sophie", "Acme", "reported")
    assert (w.valid_from, w.valid_to) == (date(2018, 1, 1), date(2018, 12, 31))


def test_worked_with_an_organisation_is_not_a_person():
    out = run(
        "We have worked with the National Academy for Educational Leadership.",
        "I've worked with children who struggle.",
        "We worked with the big banks.",
    )
    assert not [a for a in out if a.predicate == "worked_with"]


# ---------------------------------------------------------------- knows and introductions


def test_i_know_x_well():
    k = one(run("I know Sophie Martin well."), "knows")
    assert (k.subject.name, k.subject.is_speaker, k.object.name, k.modality) == (
        "Marc",
        True,
        "Sophie Martin",
        "stated",
    )


def test_known_for_years_with_dates():
    k = one(run("I've known Sophie for 10 years."), "knows")
    assert k.object.name == "Sophie" and k.valid_from == date(2016, 3, 10)
    assert one(run("I have known Paul since 2012."), "knows").valid_from == date(2012, 1, 1)


def test_known_lists_both_people():
    out = run("I've known Monica and Chandler for a long time.")
    assert {a.object.name for a in out if a.predicate == "knows"} == {"Monica", "Chandler"}


def test_introduced_me_to():
    out = run("Paul introduced me to Sophie Martin.")
    assert facts(out) == {
        ("knows", "Marc", "Sophie Martin", None),
        ("knows", "Paul", "Sophie Martin", None),
        ("introduced", "Paul", "Sophie Martin", None),
    }
    assert len({a.quote for a in out}) == 1


def test_past_facts_resolve_weekdays_backwards():
    assert one(run("I met Sophie on Monday."), "knows").valid_from == date(2026, 3, 9)
    assert one(run("Paul left Initech in May.", speaker="Anna"), "left").valid_to == date(2025, 5, 31)
    assert one(run("I'll send you the pricing on Monday."), "committed_to").valid_to == date(2026, 3, 16)


def test_third_party_knows_and_met():
    assert ("knows", "Paul", "Sophie", None) in facts(run("Paul knows Sophie from Acme.", speaker="Anna"))
    k = one(run("I met Sophie in 2019 at a conference."), "knows")
    assert k.object.name == "Sophie" and k.valid_from == date(2019, 1, 1)


@pytest.mark.parametrize(
    "text",
    [
        "I know Sophie is right about the budget.",
        "I know what you mean.",
        "I know Monday works for everyone.",
        "I know, right?",
    ],
)
def test_knowing_a_fact_is_not_knowing_a_person(text):
    assert not [a for a in run(text) if a.predicate == "knows"]


# ---------------------------------------------------------------- commitments


@pytest.mark.parametrize(
    "text,promise,due",
    [
        ("I'll send you the pricing by Friday.", "send you the pricing", date(2026, 3, 13)),
        ("I will follow up with Sophie next week.", "follow up with Sophie", date(2026, 3, 22)),
        ("We'll get back to you by the 15th.", "get back to you", date(2026, 3, 15)),
        ("I'm going to circulate the minutes tomorrow.", "circulate the minutes", date(2026, 3, 11)),
        ("I'll email you the deck.", "email you the deck", None),
        ("Let me send you the link tomorrow.", "send you the link", date(2026, 3, 11)),
        ("I'll introduce you to Sophie Martin next week.", "introduce you to Sophie Martin", date(2026, 3, 22)),
        ("I'll check the numbers by Thursday, okay?", None, None),  # a question: no promise
    ],
)
def test_commitments(text, promise, due):
    out = [a for a in run(text) if a.predicate == "committed_to"]
    if promise is None:
        assert out == []
        return
    assert len(out) == 1
    a = out[0]
    assert (a.object_literal, a.valid_to, a.modality) == (promise, due, "commitment")
    assert a.subject.is_speaker and a.subject.name == "Marc"


def test_third_party_commitment():
    a = one(run("Paul will send the contract on Thursday.", speaker="Anna"), "committed_to")
    assert (a.subject.name, a.object_literal, a.valid_to) == ("Paul", "send the contract", date(2026, 3, 12))


@pytest.mark.parametrize(
    "text",
    [
        "I'll start, if that's okay.",
        "I'll be honest with you.",
        "I'll share my screen.",
        "I'll get back on it.",
        "We'll come back to that in a moment.",
        "Maybe I'll send it later, if I can.",
        "We'll go straight into questions.",
        "I'll call it a day.",
        "Let me think about it.",
        "Let me check.",
    ],
)
def test_chatter_is_not_a_commitment(text):
    assert not [a for a in run(text) if a.predicate == "committed_to"]


def test_weak_verbs_need_a_date():
    assert not run("I'll check the figures.")
    a = one(run("I'll check the figures by Monday."), "committed_to")
    assert a.object_literal == "check the figures" and a.valid_to == date(2026, 3, 16)


# ---------------------------------------------------------------- self-introductions


def test_self_introduction_with_title_and_name():
    t = transcript(
        [
            ("Speaker 2", "Hi everyone. I'm Sarah, the project manager."),
            ("Speaker 3", "My name is Tom Baker and I'm the CTO at Hooli."),
            ("Speaker 4", "Hi, I'm Anna from Globex."),
        ]
    )
    out = extract(t)
    check_invariants(t, out)
    assert ("has_title", "Speaker 2", "project manager", None) in facts(out)
    assert ("works_at", "Speaker 3", "Hooli", "CTO") in facts(out)
    assert ("works_at", "Speaker 4", "Globex", None) in facts(out)
    assert self_introductions(t) == {"Speaker 2": "Sarah", "Speaker 3": "Tom Baker", "Speaker 4": "Anna"}


def test_self_introduction_from_a_place_is_no_employer():
    t = transcript([("Speaker 1", "Hi, I'm Marc from London.")])
    assert extract(t) == [] and self_introductions(t) == {"Speaker 1": "Marc"}


def test_self_introduction_matching_the_label_is_no_alias():
    t = transcript([("Nadia Haddad", "Hi Paul, I'm Nadia, the project manager for the rollout.")])
    assert self_introductions(t) == {}
    assert ("has_title", "Nadia Haddad", "project manager for the rollout", None) in facts(extract(t))


def test_self_introductions_skip_non_names():
    t = transcript(
        [
            ("A", "I'm Welsh, actually."),
            ("B", "I'm OK thanks."),
            ("C", "This is Acme's plan."),
            ("D", "This is Marc speaking."),
        ]
    )
    assert self_introductions(t) == {"D": "Marc"}


# ---------------------------------------------------------------- first person needs a speaker


def test_no_speaker_label_no_first_person_facts():
    out = run(
        "I know Sophie Martin well.",
        "I'll send you the pricing by Friday.",
        "I joined Acme in 2019.",
        "Sophie Martin is the CIO of Acme.",
        speaker=None,
    )
    assert facts(out) == {("works_at", "Sophie Martin", "Acme", "CIO")}


def test_subject_named_as_the_speaker_is_the_speaker():
    a = one(run("Marc is the CTO at Acme.", speaker="Marc"), "works_at")
    assert a.subject.is_speaker and a.modality == "stated"


def test_no_meeting_date_keeps_relative_dates_unknown():
    a = one(run("Paul left Initech last year.", when=None), "left")
    assert a.valid_to is None and a.date_phrase == "last year"


# ---------------------------------------------------------------- precision: ordinary chatter

CHATTER = [
    "Okay, good morning, everyone.",
    "I think the price is too high, honestly.",
    "Thank you, Chair.",
    "Paris is the capital of France.",
    "Google is the leader in search.",
    "Quebec is Canada's biggest producer of hydroelectricity.",
    "The meeting is at the Acme office on Friday.",
    "Marc is at the airport.",
    "I'm happy to take that one.",
    "I'm asking the Prime Minister to show some accountability.",
    "When Ross left Mark came over.",
    "I joined Zoom a bit late, sorry.",
    "This is the head of the snake.",
    "So, yeah, Monday is the deadline.",
    "Sophie's team is great.",
    "I left the meeting early.",
    "We're going to talk about the remote control.",
    "Um I think that's it , yeah .",
    "It's the Children's Commissioner who decides.",
    "He's a teacher, he does volunteer work.",
    "Project Manager, can you go back to the first slide?",
    "Honestly, the CEO of Acme is a nightmare.",
    "And it doesn't really say we 'll send it to you , or it 'll be online .",
    "I don't think I'll send the report.",
    "Marc, the project manager, Sophie and I met for lunch.",
    "Thanks, Paul, the numbers look right.",
    "My manager said no.",
    "My colleague, the CFO, agreed.",
]


def test_chatter_yields_nothing():
    out = run(*CHATTER)
    assert out == [], [(a.predicate, a.quote) for a in out]


# ---------------------------------------------------------------- names and titles


def test_names_and_titles():
    assert person_name("Jean-Pierre de la Fontaine") == "Jean-Pierre de la Fontaine"
    assert person_name("So Sophie Martin") == "Sophie Martin"
    assert person_name("Kirsty Williams AM") == "Kirsty Williams AM"
    for bad in ("Monday", "Okay", "CPS", "Project Manager", "ColegauCymru", "Chair"):
        assert person_name(bad) is None, bad
    assert org_name("the Welsh Local Government Association") == "Welsh Local Government Association"
    assert org_name("Acme and Bob") == "Acme"
    assert org_name("Cardiff and Vale College") == "Cardiff and Vale College"
    assert (
        org_name("Association of Directors of Education in Wales") == "Association of Directors of Education in Wales"
    )
    assert org_name("Education") is None
    assert canonical_title("Chief Information Officer") == "CIO"
    assert canonical_title("chief executive") == "CEO"
    assert parse_title("the pr project manager")[0] == "project manager"  # a false start dropped
    assert parse_title("great guy") is None


def test_sentences_respect_abbreviations():
    text = "Dr. Smith joined Acme Inc. in 2019. She left. Really?"
    assert [text[a:b] for a, b in sentences(text)] == ["Dr. Smith joined Acme Inc. in 2019.", "She left.", "Really?"]


# ---------------------------------------------------------------- real meetings (QMSum)


def _load_qmsum(path: Path) -> Transcript:
    raw = json.loads(path.read_text(encoding="utf-8"))
    utts = []
    for i, u in enumerate(raw["meeting_transcripts"]):
        text = re.sub(r"\s+", " ", re.sub(r"\{[^}]*\}", "", u["content"])).strip()
        utts.append(Utterance(i, u["speaker"], text))
    return Transcript(utts, "json", title=path.stem)


def _qmsum(corpora: Path) -> dict[str, Transcript]:
    folder = corpora / "meetings" / "qmsum"
    files = sorted(p for p in folder.glob("*.json") if p.name != "INDEX.json")
    if not files:
        pytest.skip(f"no QMSum meetings under {folder}")
    return {p.stem: _load_qmsum(p) for p in files}


WITNESSES = {  # (meeting, person, organisation, title) as the chair introduces them
    ("education_4", "Sharon Davies", "Torfaen County Borough Council", "head of learning"),
    ("education_4", "Nick Williams", "Swansea city and county council", "director of education"),
    ("education_4", "David Hopkins", "Welsh Local Government Association", "interim head of education"),
    ("education_4", "Sarah Stone", "Samaritans", "executive director for Wales"),
    ("education_4", "Liz Williams", "Samaritans", "policy and communications officer"),
    ("education_4", "Dr Ian Johnson", "Mind Cymru", "manager of children and young people's mental health"),
    ("education_13", "Kwame Biney", "CPS", "senior policy advisor"),
    ("education_13", "Iwan Jenkins", "Crown Prosecution Service Cymru Wales", "head of the complex casework unit"),
    ("education_17", "Dafydd Evans", "ColegauCymru", "chair"),
    ("education_17", "Dafydd Evans", "Grŵp Llandrillo Menai", "CEO"),
    ("education_17", "Kay Martin", "Cardiff and Vale College", "principal"),
    ("education_17", "Nick Brazil", "Gower College Swansea", "deputy principal"),
    ("education_17", "Dr Rachel Bowen", "ColegauCymru", "director of policy and development"),
    ("education_17", "Ed Evans", "Civil Engineering Contractors Association", "director and secretary"),
}


def test_qmsum_witness_introductions(corpora):
    meetings = _qmsum(corpora)
    got = set()
    for name, t in meetings.items():
        if name.startswith("education_"):
            for a in extract(t):
                if a.predicate == "works_at":
                    assert a.modality == "reported" and a.subject.name != t.utterances[a.utterance_idx].speaker
                    got.add((name, a.subject.name, a.object.name, a.qualifier))
    assert WITNESSES <= got, WITNESSES - got
    titles = {
        (a.subject.name, a.object_literal) for a in extract(meetings["education_9"]) if a.predicate == "has_title"
    }
    assert ("Kirsty Williams AM", "Minister for Education") in titles
    assert ("Claire Bennett", "deputy director for curriculum and assessment") in titles


def test_qmsum_every_quote_is_its_span_and_chatter_stays_quiet(corpora):
    meetings = _qmsum(corpora)
    assert len(meetings) == 20
    total = 0
    for name, t in meetings.items():
        out = extract(t)
        check_invariants(t, out)
        total += len(out)
        for a in out:
            assert len(a.quote) <= 400, (name, a.quote)
        if name.startswith(("Bed", "Bro", "Bmr")):  # research group chatter: nothing to learn
            assert not [a for a in out if a.predicate in ("works_at", "left", "worked_with", "knows")], name
    # precision over recall: a few dozen facts in 170k words. The rules for real meetings (more recall) found
    # more true ones; test_offline_real_speech checks them against the labelled segments (precision >= 0.95).
    # The bound follows the recall work: the chair thanked by the members of four committees, offers said
    # with "I can" (each new one checked against bench/devset's labels: 124 facts, all labelled true)
    assert 20 <= total <= 130


def test_ami_speakers_name_themselves(corpora):
    meetings = _qmsum(corpora)
    assert self_introductions(meetings["ES2004a"]) == {"Project Manager": "Sarah"}
    assert self_introductions(meetings["IS1003a"]) == {"Project Manager": "Ada Longmund"}
    # "And what's your name?" - "Paul Wiezer . Paul Wiezer .": a seat answering with a full name
    assert self_introductions(meetings["TS3004b"]) == {"Marketing": "Jens Damman", "User Interface": "Paul Wiezer"}
    titles = facts(extract(meetings["IS1003a"]))
    assert ("has_title", "Project Manager", "project manager", None) in titles


# ---------------------------------------------------------------- dates in promises and spans of time

WEDNESDAY = datetime(2026, 9, 16, 11, 0)  # Fridays: the 18th, the 25th, 2 October


def _promises(text: str) -> list[ExtractedAssertion]:
    t = transcript([("Rhea Kapoor", text), ("Lior Ben-David", "Great, thanks.")], when=WEDNESDAY)
    out = extract(t)
    check_invariants(t, out)
    return [a for a in out if a.predicate == "committed_to"]


def test_a_promise_by_friday_the_2nd_is_due_on_the_friday_that_is_the_2nd():
    (p,) = _promises("I'll get the costings across to you by Friday the 2nd.")
    assert p.valid_to == date(2026, 10, 2)


def test_a_year_said_in_passing_is_no_due_date():
    (p,) = _promises("I'll dig out the photos from 2013 for you.")
    assert p.valid_to is None


def test_a_year_in_passing_leaves_the_real_deadline():
    (p,) = _promises("I'll send you the minutes from 2018 by Monday.")
    assert p.valid_to == date(2026, 9, 21)


def test_a_start_is_no_deadline():
    (p,) = _promises("I'll forward you every invoice since June.")
    assert p.valid_to is None


def test_a_span_of_years_dates_the_tie_not_the_years_up_to_now():
    t = transcript(
        [("Rhea Kapoor", "I worked with Lior Ben-David at Pemberton for six years, 2008 to 2014.")], when=WEDNESDAY
    )
    (w,) = [a for a in extract(t) if a.predicate == "worked_with"]
    assert (w.valid_from, w.valid_to) == (date(2008, 1, 1), date(2014, 12, 31))


def test_a_word_inside_an_organisations_name_is_no_person():
    t = transcript(
        [
            ("Rhea Kapoor", "The Bank of Valletta and I worked together on the bond issue."),
            ("Lior Ben-David", "I know the Ministry of Transport well."),
        ],
        when=WEDNESDAY,
    )
    out = extract(t)
    assert not [a for a in out if a.object is not None and a.object.name in ("Valletta", "Transport")], out
