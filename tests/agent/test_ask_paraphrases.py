"""`ask` understands plain questions : a paraphrase set over the
QMSum meetings (../shared/corpora) and the demo corpus, each with the skill it must
reach and words its answer must hold. Facts are the ones the offline extractor finds
today (`backchannel assertions`); routing uses rules, skill keywords, then the real
local embedding model; no language model is configured."""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path

import pytest

from backchannel.config import Settings, resolve_paths
from backchannel.memory import Store
from backchannel.ops import OpEnv, invoke

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "backchannel" / "demo" / "corpus"
# One worker builds `asked` (QMSum and the demo ingested) once for every test here.
pytestmark = pytest.mark.xdist_group("ask_paraphrases")
BRIEF, COMMIT, INTRO, STALE = "pre_meeting_brief", "open_commitments", "introductions", "stale_relationships"

# (question, skill, words that must appear in the answers' titles and whys, or in why_nothing)
PARAPHRASES = [
    # where people work, and their roles
    ("where does Nick Williams work?", BRIEF, ["Swansea city and county council"]),
    ("Where is Nick Williams employed?", BRIEF, ["Swansea city and county council"]),
    ("who does Sarah Stone work for?", BRIEF, ["Samaritans"]),
    ("which organisation is Liz Williams with?", BRIEF, ["Samaritans"]),
    ("what is Kirsty Williams' role?", BRIEF, ["Minister for Education"]),
    ("What's Kirsty Williams's job?", BRIEF, ["Minister for Education"]),
    ("what does Barry Hughes do?", BRIEF, ["Chief Crown Prosecutor for Wales"]),
    ("what's Kay Martin's job?", BRIEF, ["Cardiff and Vale College"]),
    ("where is Iwan Jenkins working?", BRIEF, ["complex casework unit"]),
    ("what position does Rachel Bowen hold?", BRIEF, ["director of policy and development"]),
    ("what is Ed Evans's title?", BRIEF, ["director and secretary"]),
    ("which council is Sharon Davies from?", BRIEF, ["Torfaen County Borough Council"]),
    ("tell me about David Hopkins", BRIEF, ["Welsh Local Government Association"]),
    ("who is Ian Johnson?", BRIEF, ["Mind Cymru"]),
    ("what does Steve Davies do?", BRIEF, ["director of the education directorate"]),
    ("what is Claire Bennett's role?", BRIEF, ["curriculum and assessment"]),
    ("where does Dafydd Evans work?", BRIEF, ["ColegauCymru", "Llandrillo Menai"]),
    ("which company is Kwame Biney at?", BRIEF, ["senior policy advisor"]),
    ("what's the job of Dafydd Evans?", BRIEF, ["chair"]),
    ("where does Marc Dupont work?", BRIEF, ["Initech"]),
    ("who does Paul Girard work for?", BRIEF, ["Umbrella Corp"]),
    ("what's Karl Weber's position?", BRIEF, ["CTO", "Hooli"]),
    ("what does Laura Chen do?", BRIEF, ["CFO", "Initech"]),
    ("what is Nadia Haddad's role?", BRIEF, ["project manager for the rollout"]),
    ("who is Sophie Martin?", BRIEF, ["CIO", "Acme"]),
    ("what is Ada Longmund's job?", BRIEF, ["project manager"]),
    # who holds a role or title
    ("who is the Minister for Education?", BRIEF, ["Kirsty Williams"]),
    ("Who's the minister for education?", BRIEF, ["Kirsty Williams"]),
    ("who is the chief crown prosecutor for Wales?", BRIEF, ["Barry Hughes"]),
    ("who is the CIO of Acme?", BRIEF, ["Sophie Martin"]),
    ("who is the CFO of Initech?", BRIEF, ["Laura Chen"]),
    ("who's the CTO at Hooli?", BRIEF, ["Karl Weber"]),
    ("who is the principal of Cardiff and Vale College?", BRIEF, ["Kay Martin"]),
    ("who is the deputy principal of Gower College Swansea?", BRIEF, ["Nick Brazil"]),
    ("who is the director of education at Swansea city and county council?", BRIEF, ["Nick Williams"]),
    ("who is the head of learning at Torfaen?", BRIEF, ["Sharon Davies"]),
    ("who is the executive director for Wales at Samaritans?", BRIEF, ["Sarah Stone"]),
    ("who serves as chair of ColegauCymru?", BRIEF, ["Dafydd Evans"]),
    ("who is the project manager?", BRIEF, ["Ada Longmund"]),
    ("who is the senior policy advisor at CPS?", BRIEF, ["Kwame Biney"]),
    ("who is in charge of the complex casework unit?", BRIEF, ["Iwan Jenkins"]),
    ("who is the director of policy and development at ColegauCymru?", BRIEF, ["Rachel Bowen"]),
    # organisations
    ("who works at Samaritans?", BRIEF, ["Sarah Stone", "Liz Williams"]),
    ("who do we know at ColegauCymru?", BRIEF, ["Dafydd Evans"]),
    ("who is at Initech?", BRIEF, ["Laura Chen"]),
    ("tell me about Mind Cymru", BRIEF, ["Ian Johnson"]),
    ("who is from Gower College Swansea?", BRIEF, ["Nick Brazil"]),
    ("staff of Umbrella Corp", BRIEF, ["Paul Girard"]),
    # commitments, everyone's
    ("who promised to send something?", COMMIT, ["Lynne Neagle", "Priya Shah"]),
    ("what commitments are open?", COMMIT, ["Lynne Neagle"]),
    ("any open follow-ups?", COMMIT, ["Lynne Neagle"]),
    ("which promises are still pending?", COMMIT, ["Lynne Neagle"]),
    ("what did Lynne Neagle promise?", COMMIT, ["transcript"]),
    ("who said they would send a transcript?", COMMIT, ["Lynne Neagle"]),
    ("what did Priya Shah say she would send?", COMMIT, ["licence report"]),
    ("what does Priya Shah owe me?", COMMIT, ["none open"]),  # present tense: open ones only, and hers is late
    ("what did Marc promise?", COMMIT, ["Globex case study"]),
    ("what did Nadia commit to?", COMMIT, ["timeline"]),
    ("what have I promised?", COMMIT, ["pricing for the analytics tier"]),
    # introductions
    ("who can introduce me to Sophie Martin?", INTRO, ["Marc Dupont"]),
    ("who could put me in touch with the CIO of Acme?", INTRO, ["Marc Dupont"]),
    ("is there a warm path to Acme?", INTRO, ["Sophie Martin"]),
    ("who knows Sophie Martin?", INTRO, ["Julie Bernard"]),
    # relationships going quiet
    ("who have I lost touch with?", STALE, []),
    ("which contacts have gone quiet?", STALE, []),
    # nothing there, and saying why
    ("where does Boris Johnson work?", BRIEF, ["no one and no organisation named 'Boris Johnson'"]),
    ("who is the Minister of Transport?", BRIEF, ["no one and no organisation named 'Minister of Transport'"]),
    # read from the speaker label "Hon. Patty Hajdu (Minister of Health)" since the extractor reads speaker labels
    ("who is the Minister of Health?", BRIEF, ["Patty Hajdu"]),
]


@pytest.fixture(scope="module")
def asked(tmp_path_factory):
    """Every question asked once against one memory: QMSum (dated today with `--date`, so
    that their commitments are recent) and the demo corpus (dated by its file names)."""
    corpora = Path(os.environ.get("BACKCHANNEL_CORPORA", ROOT.parent / "shared" / "corpora"))
    if not corpora.is_dir():  # the same rule as conftest's `corpora` fixture, at module scope
        pytest.skip(f"third-party corpora not found at {corpora} (they live in ../shared/corpora)")
    home = tmp_path_factory.mktemp("home")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("BACKCHANNEL_HOME", str(home))
        paths = resolve_paths().ensure()
        with Store.open(paths.db_file) as store:
            env = OpEnv(store=store, settings=Settings(owner={"name": "Alex Moreau", "aliases": ["Alex"]}), paths=paths)
            qmsum = sorted(str(f) for f in (corpora / "meetings" / "qmsum").glob("*.json") if f.name != "INDEX.json")
            today = datetime.now().date().isoformat()
            assert invoke(env, "ingest", {"paths": qmsum, "meeting_date": today})["ingested"] == len(qmsum)
            assert invoke(env, "ingest", {"paths": sorted(str(f) for f in DEMO.iterdir())})["ingested"] == 4
            yield {q: invoke(env, "ask", {"question": q, "show_code": True}) for q, _, _ in PARAPHRASES}


def test_the_paraphrase_set_is_large_enough():
    assert len(PARAPHRASES) >= 60 and len({q for q, _, _ in PARAPHRASES}) == len(PARAPHRASES)


@pytest.mark.parametrize("question,skill,words", PARAPHRASES, ids=[q for q, _, _ in PARAPHRASES])
def test_paraphrase_answers(asked, question, skill, words):
    out = asked[question]
    assert out["skill"] == skill, (question, out["route"])
    assert out["status"] == "done" and not out["errors"], out["errors"]
    said = " ".join(f"{c['title']} {c.get('why') or ''}" for c in out["candidates"]) + " " + (out["why_nothing"] or "")
    for w in words:
        assert w in said, (question, w, said[:600])
    if skill == STALE:
        assert out["candidates"] or out["why_nothing"]
    # --show-code: the program that ran, with the arguments the question gave it
    assert out["code"].startswith(f"# skill: {skill}\n# arguments: ")


def test_routing_methods_are_recorded(asked):
    methods = {out["route"]["method"] for out in asked.values()}
    assert {"rule", "keywords", "embedding"} <= methods, methods
    embedded = [q for q, out in asked.items() if out["route"]["method"] == "embedding"]
    assert all(asked[q]["route"]["score"] >= 0.55 for q in embedded)


def test_everyones_commitments_not_only_mine(asked):
    people = {c["entities"][0] for c in asked["who promised to send something?"]["candidates"]}
    assert len(people) >= 3  # me, Priya Shah, Lynne Neagle, ...


def test_a_title_several_hold_is_answered_for_all_and_said(asked):
    [note] = asked["who is the project manager?"]["notes"]
    assert note.startswith("project manager: ") and "Ada Longmund" in note and "answering for all" in note
    assert "(ES2004b)" not in note  # seat labels with nothing recorded are not listed
