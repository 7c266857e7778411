"""What we know about the people of an upcoming meeting, or about an organisation.

One brief per attendee: their current roles, who they worked with or know
(and what those people do now), their commitments, with the evidence of each
fact, and when we last talked (the meetings of the last 90 days we both spoke in). The meeting comes from the wake (`event`), from `attendee_ids` or
`attendees` (names, roles such as "CIO of Acme", or organisations), or else the
next calendar event with attendees. An organisation named in `attendees` gets
one brief: its current people (works_at, not ended or superseded) and what was
said about it. When nothing is found the program prints "nothing found: why".
"""

NAME = "pre_meeting_brief"
KIND = "brief"
WAKES = ("meeting_soon",)
KEYWORDS = (
    "brief",
    "meeting",
    "prepare",
    "prep",
    "attendees",
    "who am i meeting",
    "know about",
    "background",
    "tell me about",
    "who is",
    "who's",
    "works at",
    "work at",
    "works for",
    "work for",
    "who works",
    "people at",
    "staff",
    "employ",
)
PARAMS = {
    "attendee_ids": {"default": None, "list": True, "doc": "entity ids of the people to brief on"},
    "attendees": {
        "default": None,
        "list": True,
        "doc": 'names of the people (or roles, e.g. "CIO of Acme", or organisations) to brief on',
    },
    "days": {"default": 7, "doc": "without attendees: the next calendar event within N days"},
    "max_facts": {"default": 6, "doc": "facts (evidence) per person"},
}

PROGRAM = r'''
me = api.me()["id"]
event = context.get("event") or {}
ids = list(context.get("attendee_ids") or event.get("attendee_ids") or [])
org_ids = []
missing_role = {}  # org id -> the role asked for that nobody holds there
addressed = {}  # person id -> how the meetings of a body address them by the title asked for
not_found = []
# A body that holds meetings, whose chair its meetings address ("Thank you, Chair"); a company
# or a charity named in a meeting's opening ("Samaritans, who appear before us") is not one.
BODIES = {"committee", "subcommittee", "board", "council", "panel", "group", "network", "assembly", "commission",
          "forum", "cabinet", "caucus", "senate", "parliament", "house", "taskforce", "inquiry", "tribunal"}
TITLES = {"chief executive officer": "CEO", "chief executive": "CEO", "chief information officer": "CIO",
          "chief financial officer": "CFO", "chief technology officer": "CTO", "chief operating officer": "COO",
          "managing director": "MD"}


def lookup(text):
    """Entities for a name, a role ("CIO of Acme") or an organisation; spaces are
    tried away too ("Colegau Cymru" is ColegauCymru)."""
    found = api.resolve(text)
    if not found and " " in text.strip():
        found = api.resolve(text.replace(" ", ""))
    return found


names = []
for name in (context.get("attendees") or []):
    name = str(name).strip()
    parts = [x.strip() for x in name.replace(" and ", ",").replace(" & ", ",").split(",") if x.strip()]
    # "Marc and Sophie Martin" is two people, "Cardiff and Vale College" one, and so is the
    # "Children, Young People and Education Committee": memory tells. Split only where every
    # part is someone's or something's name (a word inside a title, "Children", is not).
    if len(parts) > 1 and not lookup(name) and all(
            any(f.get("match") == "name" for f in lookup(x)) for x in parts):
        names.extend(parts)
    elif name:
        names.append(name)

for name in names:
    found = lookup(name)
    low = name.lower()
    role, org_part = None, None
    for sep in (" of ", " at "):
        if not found and sep in low:
            i = low.index(sep)
            role, org_part = name[:i].strip(), name[i + len(sep):].strip()
            if org_part.lower().startswith("the "):  # "director and secretary of the Civil Engineering ..."
                org_part = org_part[4:].strip()
            title = TITLES.get(role.lower()) or role
            found = api.resolve(title, org=org_part) or api.resolve(title, org=org_part.replace(" ", ""))
            body_words = set(org_part.lower().replace(",", " ").split())
            if not found and len(role.split()) <= 3 and body_words & BODIES \
                    and not [o for o in lookup(org_part) if o["kind"] == "organisation"]:
                # No assertion says who holds it: who the meetings of that body address by the title
                # ("Thank you, Chair") is who chairs them.
                heard = api.addressed_as(role, naming=org_part)
                top = heard[0]["times"] if heard else 0
                for h in heard:
                    if h["times"] < max(2, top / 3):
                        continue
                    found.append({"id": h["id"], "name": h["name"], "kind": "person", "match": "addressed"})
                    where = ", ".join(h["sources"][:4]) + (", ..." if len(h["sources"]) > 4 else "")
                    line = (f'addressed as "{role}" {h["times"]} time(s) in {len(h["sources"])} meeting(s) of the '
                            f'{org_part} ({where}), e.g. "{h["quote"][:90]}" ({h["quote_speaker"]}, {h["quote_source"]})')
                    if h.get("named_quote"):
                        line += f'; "{h["named_quote"]}" ({h["named_speaker"]})'
                    addressed[h["id"]] = line + "; no assertion records the title"
            if not found:  # nobody holds the role: brief on the organisation, saying so
                orgs = [o for o in lookup(org_part) if o["kind"] == "organisation"]
                if orgs:
                    missing_role[orgs[0]["id"]] = role
                    found = orgs[:1]
    if not found:
        not_found.append(name)
        continue
    top = found[0]
    if top["kind"] == "organisation":
        org_ids.append(top["id"])
    elif top["kind"] == "person":
        ids.append(top["id"])
    # A title ("Minister for Education", "project manager"): every current holder, not only the first.
    ids.extend(f["id"] for f in found if f["kind"] == "person" and f.get("match") in ("role", "addressed"))
if not ids and not context.get("attendees"):  # names that resolve to nobody: no brief, not the next meeting's
    for ev in api.upcoming_events(days=int(7 if context.get("days") is None else context["days"])):
        if ev["attendee_ids"]:
            event = ev
            ids = list(ev["attendee_ids"])
            break
ids = [i for i in dict.fromkeys(ids) if i != me]
org_ids = list(dict.fromkeys(org_ids))
max_facts = int(context.get("max_facts") or 6)
# Who the person is (their titles) comes before what they promised: a minister who made a dozen
# promises in one hearing is still first of all the minister.
RANK = {"works_at": 0, "worked_with": 1, "has_title": 1, "committed_to": 2, "knows": 3, "introduced": 3,
        "left": 4, "knows_of": 5, "mentioned_with": 6}

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

    # What we said to each other lately is what a brief is for, before any fact about them.
    talks = {}
    for t in api.conversations(list(people), days=90, limit=3):
        talks.setdefault(t["person"], []).append(t)

    for pid, person in people.items():
        mine = [f for f in facts if pid in (f["subject"], f["object"])]
        # First-hand and dated facts first: "I worked with her at Globex 2016-2021" beats hearsay.
        mine.sort(key=lambda f: (RANK.get(f["predicate"], 5), f["speaker"] != pid,
                                 not (f["valid_from"] or f["valid_to"]), -(f["confidence"] or 0)))
        lines, evidence = ([addressed[pid]] if pid in addressed else []), []
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
            elif f["predicate"] == "knows_of" and other is not None:  # the name, not the person: no tie
                lines.append(f'knows of {other_name}' if f["subject"] == pid else f'{other_name} knows of them')
            elif f["predicate"] == "has_title":
                lines.append(f'is {f["literal"]}')
            elif f["predicate"] == "left":
                lines.append(f'left {other_name}')
            else:
                continue
            evidence.append(f["id"])
        if talks.get(pid):
            last = talks[pid][0]
            more = f" and {len(talks[pid]) - 1} more lately" if len(talks[pid]) > 1 else ""
            lines.append(f'you last talked on {(last["date"] or "?")[:10]} ({last["title"]}){more}; '
                         f'their last words there: "{last["last_words"]}"')
        if not evidence and pid not in addressed and not talks.get(pid):
            continue
        # "Before you meet" only when a meeting is planned (the wake's or the next calendar event).
        planned = {"meeting": event.get("summary") or "a meeting", "starts_at": event.get("starts_at")} \
            if event.get("attendee_ids") or event.get("starts_at") else {}
        result.append(Candidate(kind="brief", entities=[pid], path=[me, pid], evidence=evidence,
                                score=min(1.0, 0.45 + 0.08 * len(evidence)),
                                why=f'{person["name"]}: ' + "; ".join(lines) + ".", extra=planned))

quiet = []  # people in memory with nothing recorded beyond their name
if ids:
    briefed = {c.entities[0] for c in result}
    quiet = [people[i]["name"] for i in ids if i in people and i not in briefed]

for oid in org_ids:
    org = api.entity([oid])[0]
    staff = sorted({l["to"] for l in api.links([oid], ["works_at"]) if l["dir"] == "in"})
    lines, evidence = [], []
    if oid in missing_role:
        lines.append(f'nobody is recorded as {missing_role[oid]} there')
    names = []
    for e in (api.entity(staff) if staff else []):
        for r in e["roles"]:  # current roles only: ended, left or superseded ones are not listed
            if r["org"] == oid and e["id"] != me:
                names.append(f'{e["name"]} ({r["title"]})' if r["title"] else e["name"])
                evidence.append(r["assertion"])
    if names:
        lines.append("people: " + ", ".join(names))
    for f in api.assertions_about([oid]):
        if f["predicate"] == "works_at" or f["id"] in evidence or len(evidence) >= max_facts + len(names):
            continue
        other = f["subject_name"] if f["object"] == oid else f["object_name"]
        if f["predicate"] == "left":
            lines.append(f'{other} left')
        elif f["predicate"] == "mentioned_with":
            lines.append(f'{other} mentioned with it' + (f' ({f["qualifier"]})' if f["qualifier"] else ""))
        elif f["predicate"] in ("knows", "worked_with", "introduced", "knows_of"):
            lines.append(f'{f["subject_name"]} {f["predicate"].replace("_", " ")} {f["object_name"]}')
        elif f["subject"] == oid and (f["literal"] or other):
            lines.append(f'{f["predicate"].replace("_", " ")} {f["literal"] or other}')
        else:
            continue
        evidence.append(f["id"])
    for s in api.recent_signals(days=90, org_ids=[oid])[:3]:
        lines.append(f'signal {s["published_at"][:10]}: {s["title"]}')
    if not evidence:
        quiet.append(org["name"])
        continue
    result.append(Candidate(kind="brief", entities=[oid], path=[me, oid], evidence=evidence,
                            score=min(1.0, 0.45 + 0.05 * len(evidence)), why=f'{org["name"]}: ' + "; ".join(lines) + ".",
                            extra={"about": "organisation"}))
result.sort(key=lambda c: -c.score)
if not result:
    if not_found:
        print("nothing found: no one and no organisation named " + ", ".join(repr(n) for n in not_found) + " in memory")
    elif quiet:
        print("nothing found: " + ", ".join(quiet) + " in memory, but nothing is recorded beyond the name")
    elif not ids and not org_ids:
        print("nothing found: nobody named, and no upcoming calendar meeting with attendees; "
              "ask e.g. 'brief me on Marc'")
'''
