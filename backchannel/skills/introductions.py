"""Who in my network can introduce me to a target person, organisation or role.

Finds paths me -> contact -> ... -> target over knows / worked_with / introduced
links, one candidate per introducer (its best path), with the evidence of every
link. With `incoming` ("who knows X?") it also lists everyone memory links to the
target directly, whether or not a path from me reaches them. Without a target it aims at the people of organisations named by recent
signals; with `via_ids` (a meeting's attendees) only those people introduce.
"""

NAME = "introductions"
KIND = "introduction"
WAKES = ("signal", "meeting_soon")
KEYWORDS = (
    "introduce",
    "introduction",
    "intro",
    "reach",
    "connect",
    "who knows",
    "path to",
    "get to",
    "in touch",
    "warm",
)
PARAMS = {
    "target": {"default": None, "doc": 'a person, an organisation or a role, e.g. "CIO of Acme"'},
    "org_ids": {
        "default": None,
        "list": True,
        "doc": "organisation ids to reach (their current people are the targets)",
    },
    "via_ids": {"default": None, "list": True, "doc": "only these people may introduce (e.g. a meeting's attendees)"},
    "max_hops": {"default": 3, "doc": "longest path from me to the target, in links"},
    "signal_days": {"default": 30, "doc": "without a target: organisations in signals of the last N days"},
    "incoming": {
        "default": False,
        "doc": "also everyone memory links to the target directly (knows, worked with, introduced), "
        "not only paths from me: 'who knows X?'",
    },
}

PROGRAM = r'''
PREDS = ["knows", "worked_with", "introduced"]
PHRASE = {"knows": "knows", "worked_with": "worked with", "introduced": "was introduced to"}
me = api.me()["id"]
max_hops = int(context.get("max_hops") or 3)  # 0 hops cannot introduce anyone
org_ids = list(context.get("org_ids") or [])
via = [v for v in (context.get("via_ids") or []) if v != me]
event = context.get("event") or {}
if not via and event.get("attendee_ids"):
    via = [v for v in event["attendee_ids"] if v != me]
targets = {}  # person id -> why they are a target

target = context.get("target")
resolved = []
if target:
    resolved = api.resolve(str(target))
    if not resolved and " " in str(target).strip():  # "Colegau Cymru" is ColegauCymru
        resolved = api.resolve(str(target).replace(" ", ""))
    for t in resolved:
        if t["kind"] == "organisation":
            org_ids.append(t["id"])
        elif t["kind"] == "person" and t["id"] != me:
            if t.get("match") == "role":
                targets[t["id"]] = f'{t["name"]} is {t["title"]} at {t["org_name"]}'
            else:
                targets[t["id"]] = t["name"]
elif not org_ids:
    for s in api.recent_signals(days=int(30 if context.get("signal_days") is None else context["signal_days"])):
        org_ids.extend(s["org_ids"])

role_evidence = {}
if org_ids:
    staff = sorted({l["to"] for l in api.links(org_ids, ["works_at"]) if l["dir"] == "in"})
    for e in (api.entity(staff) if staff else []):
        for r in e["roles"]:
            if r["org"] in org_ids and e["id"] != me:
                title = f'as {r["title"]} at ' if r["title"] else "at "
                targets.setdefault(e["id"], f'{e["name"]} works {title}{r["org_name"]}')
                role_evidence[e["id"]] = r["assertion"]

if targets and not role_evidence:
    for e in api.entity(list(targets)):
        if e["roles"]:
            r = e["roles"][0]
            role_evidence[e["id"]] = r["assertion"]
            if targets[e["id"]] == e["name"]:  # asked by name: say what they do now
                targets[e["id"]] = (f'{e["name"]} is {r["title"]} at {r["org_name"]}' if r["title"]
                                    else f'{e["name"]} works at {r["org_name"]}')

def via_contacts(starts):
    """Paths from people I have met (no link assertion needed for the first hop)."""
    got = api.paths(starts, list(targets), max_hops=max(1, max_hops - 1), predicates=PREDS, limit=500)
    return [dict(p, nodes=[me] + p["nodes"], names=["me"] + p["names"], edges=[[]] + p["edges"],
                 predicates=["met"] + p["predicates"], qualifiers=[None] + p["qualifiers"], hops=p["hops"] + 1)
            for p in got]


asked = dict(targets)  # before those I already know are dropped
if via:
    # Someone among the people I am about to meet needs no introduction.
    targets = {t: why for t, why in targets.items() if t not in via}
    found = via_contacts(via) if targets else []
elif targets:
    contacts = {c["id"] for c in api.network(1)}
    # Someone I already know or have met needs no introduction.
    targets = {t: why for t, why in targets.items() if t not in contacts}
    found = [p for p in api.paths([me], list(targets), max_hops=max_hops, predicates=PREDS, limit=500)
             if p["hops"] >= 2] if targets else []
    # People I met in meetings count as contacts even when nobody said "I know X".
    linked = {p["nodes"][1] for p in found}
    met = sorted(c for c in contacts if c not in linked)
    if met and targets:
        found += via_contacts(met)
else:
    found = []

best = {}
for p in found:
    introducer = p["nodes"][1]
    key = (introducer, p["nodes"][-1])
    if key not in best:
        best[key] = p  # paths come shortest first, then most recent

last_hops = sorted({p["nodes"][-2] for p in best.values()})
worked = {(l["from"], l["to"]) for l in (api.links(last_hops, ["worked_with"]) if last_hops else [])}

result = []
for (introducer, tgt), p in best.items():
    steps = []
    for i in range(1, len(p["nodes"]) - 1):
        pred = p["predicates"][i]
        q = p["qualifiers"][i]
        where = f" at {q}" if q and pred == "worked_with" else ""
        steps.append(f'{p["names"][i]} {PHRASE.get(pred, pred)} {p["names"][i + 1]}{where}')
    # A bare name adds nothing after the path that ends with it ("...; Kay Martin.").
    tail = [] if targets[tgt] == p["names"][-1] else [targets[tgt]]
    why = "; ".join(steps + tail) + "."
    evidence = [ids[0] for ids in p["edges"] if ids]
    if tgt in role_evidence and role_evidence[tgt] not in evidence:
        evidence.append(role_evidence[tgt])
    score = 0.9 if p["hops"] <= 2 else 0.65 if p["hops"] == 3 else 0.45
    # Having worked with the target is a stronger tie than knowing them.
    if (p["nodes"][-2], tgt) not in worked:
        score -= 0.05
    if via:
        score = min(1.0, score + 0.05)
    result.append(Candidate(kind="introduction", entities=[introducer, tgt], path=p["nodes"],
                            evidence=evidence, score=score, why=why))
if context.get("incoming") and asked:
    # "who knows X?" asks about X's ties over the whole memory, not only the ones I can reach.
    introduced = {(c.entities[0], c.entities[1]) for c in result}
    ties = [l for l in api.links(list(asked), PREDS) if l["to"] != me and l["to"] not in asked]
    names = {e["id"]: e["name"] for e in api.entity(sorted({l["to"] for l in ties} | set(asked)))} if ties else {}
    tied = set()
    for l in ties:
        other, tgt = l["to"], l["from"]
        if (other, tgt) in introduced or (other, tgt) in tied:
            continue
        tied.add((other, tgt))
        a, b = (names.get(other), names.get(tgt)) if l["dir"] == "in" else (names.get(tgt), names.get(other))
        where = f' at {l["qualifier"]}' if l["qualifier"] and l["predicate"] == "worked_with" else ""
        result.append(Candidate(kind="link", entities=[other, tgt], path=[other, tgt], evidence=[l["id"]],
                                score=0.6 if l["predicate"] == "worked_with" else 0.55,
                                why=f'{a} {PHRASE.get(l["predicate"], l["predicate"])} {b}{where}.'))
result.sort(key=lambda c: -c.score)
if not result and target:
    if not resolved:
        print(f"nothing found: no one, no organisation and no role holder matching {str(target)!r} in memory")
    elif not asked:
        print(f"nothing found: nobody is recorded as working at {str(target)!r} now")
    elif not targets:
        names = ", ".join(e["name"] for e in api.entity(list(asked)))
        print(f"nothing found: you already know or have met {names}; no introduction needed")
    else:
        names = ", ".join(e["name"] for e in api.entity(list(targets)))
        tie = "; nobody in memory is linked to them either" if context.get("incoming") else ""
        print(f"nothing found: no path from you to {names} within {max_hops} links "
              f"(knows, worked with, introduced, or through people you met){tie}")
'''
