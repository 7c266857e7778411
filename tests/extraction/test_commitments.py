"""Commitments: a deliverable or a due date makes a promise, small talk does not;
the recipient and the due date are recorded; other people's promises are theirs.
Each story goes through the real parser, offline extractor and writer into a temp DuckDB."""

from __future__ import annotations

from datetime import date, datetime
from pathlib import Path

import pytest

from backchannel.extraction.formats.transcript import Transcript, Utterance
from backchannel.extraction.offline import extract

MEETING = datetime(2026, 3, 10, 14, 0)  # a Tuesday


def commitments(lines, participants=(), owner=("Alex Moreau", "Alex")):
    t = Transcript(
        [Utterance(i, sp, text) for i, (sp, text) in enumerate(lines)],
        "text",
        meeting_date=MEETING,
        participants=list(participants),
    )
    out = [a for a in extract(t, owner_names=owner) if a.predicate == "committed_to"]
    for a in out:
        assert t.utterances[a.utterance_idx].text[a.span_start : a.span_end] == a.quote
    return out


def ingest(home: Path, store, text: str, name: str = "meeting.md") -> list[dict]:
    """Ingest one transcript file the way `backchannel ingest` does; the stored commitments."""
    from backchannel.config import load_settings, resolve_paths
    from backchannel.extraction.ingest import ingest_file

    paths = resolve_paths().ensure()
    paths.config_file.write_text('[owner]\nname = "Alex Moreau"\naliases = ["Alex"]\n')
    f = home / name
    f.write_text(text, encoding="utf-8")
    assert ingest_file(store, load_settings(paths), f).status == "ingested"
    return store.query(
        """SELECT s.name AS subject, a.object_literal AS promise, r.name AS recipient, a.valid_to, a.date_phrase,
                  a.modality, a.trust, a.trust_reasons, a.quote
           FROM assertions a JOIN entities s ON s.id = a.subject_id LEFT JOIN entities r ON r.id = a.recipient_id
           WHERE a.predicate = 'committed_to' ORDER BY a.utterance_idx, a.span_start"""
    )


# ---------------------------------------------------------------- small talk is no promise


@pytest.mark.parametrize(
    "text",
    [
        "I'll call you later.",
        "Let me get back to you.",
        "I'll get back to you on that.",
        "I'll see you.",
        "I'll think about it.",
        "I'll be there.",
        "I'll let you know.",
        "I'll reach out to you soon.",
        "I'll follow up.",
        "We'll call you sometime.",
        "I'll send her my love.",
        "Let me get back to you at some point.",
        "Let me introduce you to Sophie Martin.",  # the introduction happens now
    ],
)
def test_small_talk_is_not_a_commitment(text):
    assert commitments([("Alex", "Hello."), ("Fatima", text)]) == []


@pytest.mark.parametrize(
    "text,promise",
    [
        ("I'll call you on Friday.", "call you"),  # a social verb with a due date
        ("I'll get back to you on the pricing.", "get back to you on the pricing"),  # with a real topic
        ("Let me get back to you by Thursday.", "get back to you"),
        ("I'll send you the quote.", "send you the quote"),  # a deliverable needs no date
        ("I'll draft the memo.", "draft the memo"),
        ("I'll make the introduction to Sophie Martin next week.", "make the introduction to Sophie Martin"),
    ],
)
def test_deliverables_and_due_dates_make_promises(text, promise):
    assert [a.object_literal for a in commitments([("Alex", "Hello."), ("Fatima", text)])] == [promise]


# ---------------------------------------------------------------- recipients


@pytest.mark.parametrize(
    "lines,recipient",
    [
        # a 1:1: "you" is the other person
        ([("Alex", "Thanks for coming."), ("Fatima", "I'll send you the quote by Friday.")], "Alex"),
        # several people, nobody addressed: no recipient is guessed
        ([("Alex", "Hi all."), ("Bob", "Hello."), ("Fatima", "I'll send you the quote by Friday.")], None),
        # in reply to a request
        (
            [
                ("Alex", "Hi all."),
                ("Bob", "Could you send me the quote?"),
                ("Fatima", "Sure, I'll send it to you by Friday."),
            ],
            "Bob",
        ),
        # a vocative, before or after
        ([("Alex", "Hi all."), ("Bob", "Hello."), ("Fatima", "Bob, I'll send you the quote by Friday.")], "Bob"),
        ([("Alex", "Hi all."), ("Bob", "Hello."), ("Fatima", "I'll send you the quote by Friday, Bob.")], "Bob"),
        # named as the one the deliverable goes to
        ([("Alex", "Hi all."), ("Bob", "Hello."), ("Fatima", "I'll share the deck with Carol tomorrow.")], "Carol"),
        ([("Alex", "Hi all."), ("Bob", "Hello."), ("Fatima", "I'll send Carol the deck tomorrow.")], "Carol"),
        # a one-speaker recording (a voicemail) is left for the owner
        ([("Caller 1", "Hi, it's Dan. I'll send you the invoice by Monday.")], "Alex Moreau"),
    ],
)
def test_recipient(lines, recipient):
    (a,) = commitments(lines)
    assert (a.recipient.name if a.recipient else None) == recipient


def test_a_vocative_resolves_to_the_meetings_own_label():
    (a,) = commitments([("Alex", "Hi."), ("Fatima Zahra", "Hello."), ("Bob", "Fatima, I'll send you the quote.")])
    assert a.recipient.name == "Fatima Zahra"


@pytest.mark.parametrize(
    "text,subject,recipient",
    [
        ("Marc will send you the deck by Friday.", "Marc", "Bob"),  # Bob asked: the addressee
        ("Marc will send me the deck by Friday.", "Marc", "Fatima"),  # the speaker
        ("Marc said he'd send us the contract by Friday.", "Marc", "Fatima"),
        ("Marc promised Carol to draft the memo by Friday.", "Marc", "Carol"),
    ],
)
def test_other_peoples_commitments(text, subject, recipient):
    (a,) = commitments([("Alex", "Hi all."), ("Bob", "Can we get the deck?"), ("Fatima", text)])
    assert (a.subject.name, a.subject.is_speaker) == (subject, False)
    assert a.recipient.name == recipient
    assert "second_hand" in a.trust_reasons  # the speaker's word for someone else's promise
    assert a.valid_to == date(2026, 3, 13)


def test_own_commitment_is_first_hand():
    (a,) = commitments([("Alex", "Hi."), ("Fatima", "I'll send you the deck by Friday.")])
    assert "second_hand" not in a.trust_reasons


def test_pronoun_subject_follows_the_one_person_named_before():
    (a,) = commitments([("Alex", "Hi."), ("Bob", "Sophie Martin called. She'll share the report with Paul by Friday.")])
    assert (a.subject.name, a.recipient.name, a.valid_to) == ("Sophie Martin", "Paul", date(2026, 3, 13))


# ---------------------------------------------------------------- due dates


def test_before_our_next_meeting_takes_the_next_meeting_named_in_the_transcript():
    (a,) = commitments(
        [
            ("Alex", "Hi."),
            ("Bob", "I'll send you the slides before our next meeting."),
            ("Alex", "Great, see you next Tuesday then."),
        ]
    )
    assert (a.object_literal, a.valid_to, a.date_phrase) == (
        "send you the slides",
        date(2026, 3, 17),
        "before our next meeting",
    )


def test_before_our_next_meeting_without_a_date_stays_open_but_is_a_promise():
    (a,) = commitments([("Alex", "Hi."), ("Bob", "I'll check the figures before we meet again.")])
    assert (a.object_literal, a.valid_to, a.date_phrase) == ("check the figures", None, "before we meet again")


# ---------------------------------------------------------------- real ingests


def test_ingested_commitments_carry_recipient_and_due_date(home, store):
    rows = ingest(
        home,
        store,
        """---
title: Quote follow-up
date: 2026-03-10
participants: [Alex Moreau, Fatima Haddad]
---
Alex: Thanks for the walkthrough. Could you send me the quote?
Fatima: Of course. I'll send you the quote by Friday.
Alex: Great. I'll call you later.
Fatima: And Marc will send you the deck before our next meeting.
Alex: Perfect, see you on Thursday then.
""",
    )
    assert [(r["subject"], r["promise"], r["recipient"], r["valid_to"], r["modality"]) for r in rows] == [
        ("Fatima Haddad", "send you the quote", "Alex Moreau", date(2026, 3, 13), "commitment"),
        ("Marc", "send you the deck", "Alex Moreau", date(2026, 3, 12), "commitment"),
    ]
    assert rows[0]["quote"] == "I'll send you the quote by Friday."
    assert "second_hand" not in rows[0]["trust_reasons"] and "second_hand" in rows[1]["trust_reasons"]
    assert rows[1]["trust"] < rows[0]["trust"]


def test_ingested_group_meeting_records_no_guessed_recipient(home, store):
    rows = ingest(
        home,
        store,
        """---
title: Weekly
date: 2026-03-10
---
Alex: Let's start.
Bob: Numbers are in.
Carol: I'll send you the board pack by Friday.
Bob: Carol, Dan will email you the minutes tomorrow.
""",
    )
    assert [(r["subject"], r["recipient"], r["valid_to"]) for r in rows] == [
        ("Carol", None, date(2026, 3, 13)),
        ("Dan", "Carol", date(2026, 3, 11)),
    ]


def test_ingested_since_march_looks_backwards(home, store):
    ingest(
        home,
        store,
        """---
title: Catch-up
date: 2026-10-02
---
Alex: How is Acme?
Bob: Sophie Martin has been CTO of Acme since March.
""",
    )
    row = store.query("SELECT valid_from, date_phrase FROM assertions WHERE predicate = 'works_at'")[0]
    assert (row["valid_from"], row["date_phrase"]) == (date(2026, 3, 1), "since March")


def test_an_organisation_is_never_a_recipient(home, store):
    ingest(
        home,
        store,
        """---
title: One
date: 2026-03-09
---
Alex: Hi.
Bob: Sophie Martin works at Acme.
Carol: Right.
""",
        name="one.md",
    )
    rows = ingest(
        home,
        store,
        """---
title: Two
date: 2026-03-10
---
Alex: Hi.
Bob: I'll send the proposal to Acme by Friday.
Carol: Good.
""",
        name="two.md",
    )
    assert [(r["subject"], r["promise"], r["recipient"]) for r in rows] == [("Bob", "send the proposal to Acme", None)]
    assert store.scalar("SELECT count(*) FROM entities WHERE name = 'Acme' AND kind = 'person'") == 0


@pytest.mark.parametrize("text", ["And I will send you the deck by Friday.", "But I will share the slides tomorrow."])
def test_an_opener_before_i_is_not_a_name(text):
    (a,) = commitments([("Alex", "Hi."), ("Bob", text)])
    assert a.subject.is_speaker and a.subject.name == "Bob"


def test_a_french_condition_in_a_code_switched_promise_makes_it_no_promise():
    """ "si" before a subject or a determiner is "if": the promise holds only if the board agrees."""
    conditional = commitments(
        [
            ("Chloé Martin", "Et les devis, Alex ?"),
            ("Alex Moreau", "Bon, si la direction signe jeudi, I'll send you the three quotes by Monday."),
        ]
    )
    assert conditional == []
    firm = commitments(
        [
            ("Chloé Martin", "Et les devis, Alex ?"),
            ("Alex Moreau", "Oui, c'est noté, I'll send you the three quotes by Monday."),
        ]
    )
    assert [a.object_literal for a in firm] == ["send you the three quotes"]


@pytest.mark.parametrize(
    "said",
    [
        "I'll level with you: the budget is gone.",
        "I'll grant you, the numbers look odd.",
        "I'll bet you the contract slips again.",
        "I'll warn you now, the deck is long.",
    ],
)
def test_an_ill_that_only_frames_what_is_said_is_no_promise(said):
    """Saying verbs ("level with", "grant", "bet", "warn") under "I'll" frame the sentence; nothing is
    promised (rules/en/pledges.py _NOT_ACTIONS)."""
    assert commitments([("Marta Silva", "How do the figures look?"), ("Alex Moreau", said)]) == []


def test_a_french_courtesy_before_a_promise_is_no_condition():
    """ "si tu veux" / "si vous voulez" is "if you like": an offer made, not a condition (FRENCH_IF)."""
    offered = commitments(
        [
            ("Chloé Martin", "Tu as encore les devis ?"),
            ("Alex Moreau", "Oui. Si tu veux, I'll send you the three quotes by Monday."),
        ]
    )
    assert [a.object_literal for a in offered] == ["send you the three quotes"]
