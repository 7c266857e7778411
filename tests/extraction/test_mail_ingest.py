"""Email as a source, offline: .eml, Maildir and mbox into a real store; quotes never
attributed to the replier; signatures, introductions and promises extracted; bad
messages fail one by one with a reason; attachments never stored."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from backchannel.config import load_settings, resolve_paths
from backchannel.extraction.ingest import expand_paths, ingest_file
from backchannel.extraction.mail.body import split_body
from backchannel.extraction.mail.message import MailError, parse_message
from tests.support import mail_fixtures as fx


def _settings(home: Path):
    (home / "config.toml").write_text(
        '[owner]\nname = "Alex Moreau"\nemail = "alex@example.com"\ntimezone = "Europe/Paris"\n'
    )
    return load_settings(resolve_paths())


def _facts(store, source_id: str) -> list[tuple]:
    return [
        tuple(r)
        for r in store.con.execute(
            """SELECT s.name, a.predicate, o.name, a.object_literal, a.qualifier, sp.name, a.quote, a.valid_to
           FROM assertions a JOIN entities s ON s.id = a.subject_id LEFT JOIN entities o ON o.id = a.object_id
           LEFT JOIN entities sp ON sp.id = a.speaker_id WHERE a.source_id = ? ORDER BY a.id""",
            [source_id],
        ).fetchall()
    ]


def test_eml_intro_and_reply_become_attributed_dated_facts(home, store, tmp_path):
    settings = _settings(home)
    (tmp_path / "intro.eml").write_bytes(fx.INTRO)
    (tmp_path / "reply.eml").write_bytes(fx.REPLY)
    intro = ingest_file(store, settings, tmp_path / "intro.eml")
    reply = ingest_file(store, settings, tmp_path / "reply.eml")
    assert intro.status == reply.status == "ingested"
    src = store.query("SELECT * FROM sources WHERE id = ?", [intro.source_id])[0]
    assert src["format"] == "email" and src["title"] == "Intro: Julie <> Sophie"
    assert str(src["meeting_date"]) == "2026-11-02 10:00:00"  # +0100 header, Europe/Paris wall time
    assert set(src["participants"]) >= {"Marc Dupont", "Julie Bernard", "Sophie Martin"}
    facts = _facts(store, intro.source_id)
    preds = {(f[0], f[1], f[2] or f[3]) for f in facts}
    assert ("Marc Dupont", "introduced", "Sophie Martin") in preds
    assert ("Marc Dupont", "knows", "Sophie Martin") in preds
    assert ("Marc Dupont", "introduced", "Paul Girard") in preds  # "Looping in Paul Girard"
    assert ("Marc Dupont", "works_at", "Initech") in preds  # from the signature
    promise = [f for f in facts if f[1] == "committed_to"]
    assert promise and promise[0][0] == "Marc Dupont" and str(promise[0][7]) == "2026-11-06"
    [sig] = [f for f in facts if f[1] == "works_at" and f[0] == "Marc Dupont"]  # the signature's, whatever else is read
    assert sig[4] == "Partner" and sig[6] == "Marc Dupont\nPartner | Initech"  # the block's lines, verbatim

    rfacts = _facts(store, reply.source_id)
    works = [f for f in rfacts if f[1] == "works_at"]
    assert [(f[0], f[2], f[4]) for f in works] == [("Sophie Martin", "Acme Corp", "CIO")]
    assert works[0][6] == "Sophie Martin\nChief Information Officer\nAcme Corp"
    # The quoted intro is Marc's, shown as his, and never re-read as Sophie's words.
    assert not any(f[0] == "Sophie Martin" and f[1] in ("introduced", "worked_with") for f in rfacts)
    assert not any("Globex" in (f[6] or "") for f in rfacts)
    quoted = store.query(
        "SELECT speaker, text FROM utterances WHERE source_id = ? AND text LIKE '%meet Sophie%'", [reply.source_id]
    )
    assert quoted and all(q["speaker"] == "Marc Dupont" for q in quoted)
    assert [f for f in rfacts if f[1] == "committed_to"][0][0] == "Sophie Martin"  # "Will send ... by next Tuesday"

    # Addresses became aliases of the people: a calendar attendee finds them.
    marc = store.scalar("SELECT entity_id FROM aliases WHERE norm = 'marc.dupont@initech.example'")
    assert store.scalar("SELECT name FROM entities WHERE id = ?", [marc]) == "Marc Dupont"
    row = store.query("SELECT * FROM mail_messages WHERE message_id = 'intro-1@initech.example'")[0]
    assert row["sender"] == "marc.dupont@initech.example" and row["source_id"] == intro.source_id

    # Idempotent: the same message again (same Message-ID, another file) is skipped.
    (tmp_path / "copy.eml").write_bytes(fx.INTRO)
    again = ingest_file(store, settings, tmp_path / "copy.eml")
    assert again.status == "skipped" and again.source_id == intro.source_id
    assert store.scalar("SELECT count(*) FROM sources") == 2


def test_quotes_signatures_and_outlook_blocks_are_split():
    blocks = split_body(fx.OUTLOOK_REPLY.decode().split("\n\n", 1)[1], "Tom Becker")
    kinds = [(b.kind, b.author) for b in blocks]
    assert kinds[0] == ("own", "Tom Becker")
    assert ("quote", "Alex Moreau") in kinds and all(a != "Tom Becker" for k, a in kinds if k == "quote")
    html = parse_message(fx.HTML_ONLY, "html")
    assert html.html_only and "security questionnaire" in html.body and "color: red" not in html.body
    hb = split_body(html.body, "Julie Bernard")
    assert [b.kind for b in hb][0] == "own"
    assert any(b.kind == "quote" and b.author == "Sophie Martin" and "Globex" in b.text for b in hb)


def test_maildir_and_mbox_through_the_cli_with_bad_messages(home, tmp_path):
    _settings(home)
    big = fx.with_attachment(3_000_000, "<big@example.org>")
    maildir = fx.write_maildir(tmp_path / "Maildir", [fx.INTRO, fx.HTML_ONLY, fx.UNKNOWN_CHARSET_UTF8, *fx.BAD])
    fx.write_maildir(tmp_path / "Maildir", [fx.REPLY, fx.with_attachment(2000)], subfolder="Sent")
    mbox = fx.write_mbox(tmp_path / "archive.mbox", [fx.INTRO, fx.OUTLOOK_REPLY, big, fx.BROKEN_MIME])
    files = list(expand_paths([maildir]))
    assert len(files) == 7 and not any("/tmp/" in str(f.relative_to(tmp_path)) for f in files)
    (home / "config.toml").write_text((home / "config.toml").read_text() + "[mail]\nmax_message_mb = 1\n")

    def bc(*args):
        return subprocess.run([sys.executable, "-m", "backchannel", *args], capture_output=True, text=True, timeout=120)

    r = bc("ingest", str(maildir), "--json")
    out = json.loads(r.stdout)
    assert r.returncode == 1 and out["ingested"] == 5 and out["skipped"] == 0
    errors = sorted(f["error"] for f in out["failed"])
    assert len(errors) == 2
    assert any("unknown charset 'x-klingon'" in e for e in errors)
    assert any("broken MIME" in e or "no text" in e for e in errors)
    r = bc("ingest", str(mbox), "--json")
    out = json.loads(r.stdout)
    assert r.returncode == 1 and len(out["failed"]) == 1
    err = out["failed"][0]["error"]
    assert "2 of 4 messages could not be read" in err and "too large" in err  # the 3 MB attachment
    r = bc("ingest", str(maildir), str(mbox), "--json")
    assert json.loads(r.stdout)["ingested"] == 0  # everything readable is known by now
    import duckdb

    con = duckdb.connect(str(home / "data" / "backchannel.duckdb"), read_only=True)
    try:
        assert con.execute("SELECT count(*) FROM mail_messages").fetchone()[0] == 6
        assert con.execute("SELECT count(*) FROM sources WHERE format = 'email'").fetchone()[0] == 6
        # Attachments are counted, never stored: no utterance holds their bytes.
        assert con.execute("SELECT attachments FROM mail_messages WHERE subject = 'the slides'").fetchone()[0] == 1
        assert con.execute("SELECT max(length(text)) FROM utterances").fetchone()[0] < 2000
        sources = con.execute("SELECT count(*) FROM sources").fetchone()[0]
    finally:
        con.close()
    assert sources == 6


def test_bad_messages_fail_with_a_reason_each():
    for data, want in [
        (fx.UNKNOWN_CHARSET_BINARY, "unknown charset"),
        (fx.BROKEN_MIME, "MIME"),
        (b"", "empty"),
        (b"just some words\n", "no headers"),
        (fx.with_attachment(2_000_000), "too large"),
    ]:
        try:
            parse_message(data, "x", max_bytes=1_000_000)
        except MailError as exc:
            assert want in exc.reason, (want, exc.reason)
        else:
            raise AssertionError(f"{want}: no error")
    ok = parse_message(fx.UNKNOWN_CHARSET_UTF8, "x")  # an unknown label over UTF-8 text still reads
    assert "Amitiés" in ok.body
    small = parse_message(fx.with_attachment(5000), "x")
    assert small.attachments == 1 and "PNG" not in small.body


def test_forget_takes_the_person_out_of_mail_rows_and_rereading_does_not_bring_them_back(home, store, tmp_path):
    from backchannel.memory import entities
    from backchannel.memory.erasure import forget

    settings = _settings(home)
    (tmp_path / "intro.eml").write_bytes(fx.INTRO)
    (tmp_path / "reply.eml").write_bytes(fx.REPLY)
    assert ingest_file(store, settings, tmp_path / "intro.eml").status == "ingested"
    assert ingest_file(store, settings, tmp_path / "reply.eml").status == "ingested"
    sophie = entities.find(store, "Sophie Martin", "person")[0].id
    forget(store, sophie)
    dump = json.dumps(store.query("SELECT * FROM mail_messages"), default=str)
    assert "sophie.martin@acme.example" not in dump and "marc.dupont@initech.example" in dump
    texts = " ".join(r[0] for r in store.con.execute("SELECT text FROM utterances").fetchall())
    assert "Sophie" not in texts and "Chief Information Officer" not in texts
    assert ingest_file(store, settings, tmp_path / "reply.eml").status == "skipped"
    assert not entities.find(store, "Sophie Martin", "person")
