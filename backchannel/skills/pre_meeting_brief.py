"""What we know about the people of an upcoming meeting.

One brief per attendee: their current roles, who they worked with or know
(and what those people do now), their commitments, with the evidence of each
fact. The meeting comes from the wake (`event`), from `attendee_ids` or
`attendees` (names), or else the next calendar event with attendees.
"""

NAME = "pre_meeting_brief"
KIND = "brief"
WAKES = ("meeting_soon",)
KEYWORDS = ("brief", "meeting", "prepare", "prep", "attendees", "who am i meeting", "know about", "background")
PARAMS = {
    "attendee_ids": {"default": None, "list": True, "doc": "entity ids of the people to brief on"},
    "attendees": {"default": None, "list": True, "doc": "names of the people to brief on (resolved)"},
    "days": {"default": 7, "doc": "without attendees: the next calendar event within N days"},
    "max_facts": {"default": 6, "doc": "facts (evidence) per person"},
}

PROGRAM = r'''
me = api.me()["id"]
event = context.get("event") or {}
ids = list(context.get("attendee_ids") or event.get("attendee_ids") or [])
for name in (context.get("attendees") or []):
    found = api.resolve(name, kind="person")
    if found:
        ids.append(found[0]["id"])
if not ids and not context.get("attendees"):  # names that resolve to nobody: no brief, not the next meeting's
    for ev in api.upcoming_events(days=int(7 if context.get("days") is None else context["days"])):
        if ev["attendee_ids"]:
            event = ev
            ids = list(ev["attendee_ids"])
            break
ids = [i for i in dict.fromkeys(ids) if i != me]
max_facts = int(context.get("max_facts") or 6)
RANK = {"works_at": 0, "worked_with": 1, "committed_to": 2, "knows": 3, "introduced": 3, "has_title": 4,
        "left": 4, "mentioned_with": 6}

result = []
if ids:
    people = {e["id"]: e for e in api.entity(ids)}
    facts = api.assertions_about(ids)
    others = sorted({f["object"] if f["subject"] in people else f["subject"] for f in facts
                     if f["object"] is not None} - set(people) - {me})
    roles = {e["id"]: e["roles"] for e in (api.entity(others) if others else [])}

    def now_role(eid):
        r = roles.get(eid) or []
        if r and r[0]["title"]:
            return f' ({r[0]["title"]} at {r[0]["org_name"]})'
        return f' (at {r[0]["org_name"]})' if r else ""

    for pid, person in people.items():
        mine = [f for f in facts if pid in (f["subject"], f["object"])]
        # First-hand and dated facts first: "I worked with her at Globex 2016-2021" beats hearsay.
        mine.sort(key=lambda f: (RANK.get(f["predicate"], 5), f["speaker"] != pid,
                                 not (f["valid_from"] or f["valid_to"]), -(f["confidence"] or 0)))
        lines, evidence = [], []
        for r in person["roles"]:
            title = f'{r["title"]} at ' if r["title"] else "works at "
            lines.append(f'{title}{r["org_name"]}')
            evidence.append(r["assertion"])
        for f in mine:
            if len(evidence) >= max_facts:
                break
            if f["id"] in evidence or f["predicate"] in ("works_at",):
                continue
            other = f["object"] if f["subject"] == pid else f["subject"]
            if other == me:
                continue
            other_name = f["object_name"] if f["subject"] == pid else f["subject_name"]
            if f["predicate"] == "worked_with":
                where = f' at {f["qualifier"]}' if f["qualifier"] else ""
                span = ""
                if f["valid_from"] or f["valid_to"]:
                    span = f' ({(f["valid_from"] or "?")[:4]}-{(f["valid_to"] or "?")[:4]})'
                lines.append(f'worked with {other_name}{now_role(other)}{where}{span}')
            elif f["predicate"] == "committed_to" and f["subject"] == pid:
                due = f' by {f["valid_to"]}' if f["valid_to"] else ""
                lines.append(f'promised to {f["literal"]}{due}')
            elif f["predicate"] in ("knows", "introduced") and other is not None:
                lines.append(f'knows {other_name}{now_role(other)}')
            elif f["predicate"] == "has_title":
                lines.append(f'is {f["literal"]}')
            elif f["predicate"] == "left":
                lines.append(f'left {other_name}')
            else:
                continue
            evidence.append(f["id"])
        if not evidence:
            continue
        result.append(Candidate(kind="brief", entities=[pid], path=[me, pid], evidence=evidence,
                                score=min(1.0, 0.45 + 0.08 * len(evidence)),
                                why=f'{person["name"]}: ' + "; ".join(lines) + "."))
result.sort(key=lambda c: -c.score)
'''
