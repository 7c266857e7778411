"""Promises told of someone else: does the meaning stage read them without the phrase rule?
Prints one JSON object: for the tree as it is and with `rule_reported_commitment` switched off
(BACKCHANNEL_RULES_OFF), how many of the promises below are stored for the named person (tp/fn)
and how many of the non-promises are (fp). The day the stage alone matches the rule here, the rule
can go (the issue: phrase rules the model replaces are deleted).

    python bench/told_promises.py

The sentences were written for this script only (2026-12-03), in no bank file, test or split.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SENTENCES = """
+ Ravi said he'd send over the revised budget by Wednesday.
+ Helen promised to get the signed contract back to us by Friday.
+ Omar agreed to draft the press release before the launch.
+ Julia told me she'd circulate the agenda tomorrow morning.
+ Kenji said he will book the meeting room for Thursday.
+ Anna has agreed to share the survey results with the board next week.
+ Diego offered to set up a call with their procurement team.
+ Fiona promised Mark to write up the findings by the end of the month.
+ Sam told us he'd forward the invoice on Monday.
+ Leila said she would prepare the slides for the offsite.
+ Tomas agreed to send the minutes round by Monday.
+ Grace promised to circulate the updated timeline tonight.
+ Nadia said that she'll introduce us to their head of legal.
+ Paul has promised to deliver the prototype by the 20th.
+ Chloe offered to organise the team dinner next Friday.
+ So Ben said he'd, um, send the quote over later today.
+ Yeah, Maria promised she'd get us the numbers by Tuesday.
+ Victor told me he would arrange the site visit for next week.
+ Ingrid agreed to publish the guidance before the summer recess.
+ Aisha said she'd put me in touch with their CFO.
+ Lucas promised Priya to send the draft terms by Thursday.
+ Rosa has offered to submit the application on our behalf.
+ Ethan said he'll schedule a follow-up for early next month.
+ Mei agreed to prepare a costed proposal by the 15th.
+ Hugo told us that he'd confirm the venue by Wednesday.
- Ravi said he'd be a bit late to the call.
- Helen agreed to the revised terms.
- Omar said he would never sign off on that.
- Julia promised she'd think about it.
- Kenji agreed to be the chair for the session.
- Anna said she'd love to work with them again.
- Diego offered to help if we ever need it.
- Fiona said she'd already sent the report last week.
- Sam told me he'd been to their office before.
- Leila agreed that the budget was too tight.
- Tomas said he might send something, but no promises.
- Grace promised to keep it confidential.
- Nadia said she'll be on holiday next week.
- Chloe said she would have sent it if she'd known.
"""


def score() -> dict:
    from backchannel.extraction.formats.transcript import Transcript, Utterance
    from backchannel.extraction.offline import extract

    out: dict = {"tp": 0, "fn": 0, "fp": 0, "tn": 0, "missed": [], "false": []}
    for line in SENTENCES.strip().splitlines():
        label, text = line[0], line[2:].strip()
        words = [w.strip(",.") for w in text.split()]
        who = next(w for w in words if w[:1].isupper() and w not in ("So", "Yeah"))
        t = Transcript(
            [
                Utterance(0, "Zoe", "Any news from the others?"),
                Utterance(1, "Yann", "Not much."),
                Utterance(2, "Zoe", text),
            ],
            "text",
            meeting_date=datetime(2026, 3, 10, 14),
        )
        got = [a for a in extract(t) if a.predicate == "committed_to" and a.subject.name.split()[0] == who]
        if label == "+":
            out["tp" if got else "fn"] += 1
            if not got:
                out["missed"].append(text)
        else:
            out["fp" if got else "tn"] += 1
            if got:
                out["false"].append(text)
    return out


def main() -> None:
    if "--score" in sys.argv:
        print(json.dumps(score()))
        return
    result = {}
    for name, off in (("with_rule", ""), ("stage_only", "rule_reported_commitment")):
        env = {**os.environ, "BACKCHANNEL_RULES_OFF": off, "PYTHONPATH": str(ROOT)}
        p = subprocess.run([sys.executable, __file__, "--score"], env=env, capture_output=True, text=True, check=True)
        result[name] = json.loads(p.stdout)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
