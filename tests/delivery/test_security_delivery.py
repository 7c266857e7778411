"""Hostile transcript text in what delivery sends: markup in the feedback page, the
mails and Slack; line breaks of every kind in mail headers; odd recipients."""

from __future__ import annotations

import json

import pytest

from backchannel.config import Settings, resolve_paths
from backchannel.delivery import email, render, slack
from backchannel.delivery.approval import validate_action
from backchannel.delivery.links import make_token
from backchannel.ops import feedback_pages
from tests.support.delivery_support import add_proposal

X = '"><img src=x onerror=alert(1)><script>alert(2)</script> <!channel> <https://evil.example|Approve>'
# Every separator str.splitlines() knows; the email package refuses them all in a header.
BREAKS = ["\r\n", "\n", "\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]


def _settings() -> Settings:
    s = Settings()
    s.owner = s.owner.model_copy(update={"name": "Alex Moreau", "email": "alex@example.org"})
    s.delivery = s.delivery.model_copy(update={"public_base_url": "http://127.0.0.1:9"})
    return s


@pytest.mark.parametrize("brk", BREAKS, ids=[hex(ord(b[0])) for b in BREAKS])
def test_a_subject_with_any_line_break_neither_injects_nor_fails(brk):
    msg = email.build_message(
        _settings(),
        to="alex@example.org",
        subject=f"Intro{brk}Bcc: victim@evil.example",
        text="t",
        html=None,
        message_id="<m@x>",
    )
    head = msg.as_bytes().split(b"\n\n", 1)[0].decode()
    assert not [line for line in head.splitlines() if line.lower().startswith("bcc")]
    assert msg["Subject"] == "Intro Bcc: victim@evil.example"
    assert msg.get_all("Bcc") is None


@pytest.mark.parametrize(
    "to", ["marc@exam\u2028ple.org", "marc@exam\x85ple.org", "marc@example.org\x00", "marc@example.org\x0bbcc"]
)
def test_an_action_recipient_with_control_characters_is_refused(to):
    with pytest.raises(ValueError, match="one plain address"):
        validate_action({"channel": "email", "to": to, "subject": "Hi", "body": "b"})


def test_transcript_markup_is_inert_in_page_mail_digest_and_slack(home, store):
    paths = resolve_paths().ensure()
    settings = _settings()
    pid = add_proposal(
        store,
        title="Intro\u2028" + X,
        body="Body " + X,
        why="why " + X,
        evidence=[{"quote": "quote " + X, "speaker": "Marc " + X, "said_at": "2025-09-12", "source_id": "S1" + X}],
        action={"channel": "email", "to": "marc@example.org", "subject": "Hi " + X, "body": X},
    )
    p = render.load_proposal(store, pid)
    mail = render.proposal_message(settings, paths, p)
    digest = render.digest_message(settings, paths, [p, p])
    pages = [
        feedback_pages.handle_get(
            store, settings, paths, make_token(paths, pid, v, p["action_hash"] if v == "approve" else None)
        )[1]
        for v in ("accept", "approve")
    ]
    for html in (mail["html"], digest["html"], *pages):
        assert "<script>" not in html and "<img" not in html and "onerror=alert(1)>" not in html
        assert "&lt;script&gt;" in html
    # Both mails build (the U+2028 in the title does not make them unsendable).
    for m in (mail, digest):
        built = email.build_message(
            settings, to="alex@example.org", subject=m["subject"], text=m["text"], html=m["html"], message_id="<m@x>"
        )
        assert "\u2028" not in built["Subject"]
    # Slack: the only raw text is the header, a plain_text field Slack does not parse.
    payload = slack.blocks(render.chat_text(settings, paths, p))
    fields = [b["text"]["text"] for b in payload["blocks"] if b.get("text", {}).get("type") == "mrkdwn"]
    fields += [e["text"] for b in payload["blocks"] for e in b.get("elements", []) if e.get("type") == "mrkdwn"]
    assert fields and any("&lt;script&gt;" in f for f in fields)
    for field in [payload["text"], *fields]:
        assert "<!channel>" not in field and "<https://evil" not in field
    assert payload["blocks"][0]["text"]["type"] == "plain_text"
    assert json.loads(json.dumps(payload)) == payload


def test_a_transcript_cannot_choose_the_recipient_of_a_draft(store):
    from datetime import timedelta

    from backchannel.agent.drafter import draft
    from backchannel.graph.types import Candidate
    from backchannel.memory import entities
    from backchannel.memory.store import utcnow

    entities.ensure_owner(store, "Alex Moreau")
    marc = entities.create(store, "Marc Dupont", "person").id
    sophie = entities.create(store, "Sophie Martin", "person").id
    entities.add_alias(store, marc, "marc@example.org")  # from a calendar invitation: no source
    entities.add_alias(store, marc, "marc@evil.example", source_id="S1")  # said in a meeting, later
    store.con.execute(
        "UPDATE aliases SET created_at = ? WHERE alias = 'marc@evil.example'", [utcnow() + timedelta(days=1)]
    )
    c = Candidate("introduction", [marc, sophie], 0.9, why="Marc knows Sophie", path=[marc, sophie])
    d = draft(c, evidence=[], store=store, settings=_settings())
    assert d.action and d.action["to"] == "marc@example.org"
