"""Promises made by me or my contacts that are not done yet.

A commitment (committed_to) is open when its due date has not passed, or passed
less than `overdue_days` ago (no due date: said within `max_age_days`), and
nothing later by the same person mentions the same thing again (a follow-up), and no
later meeting says it was done or arrived (`api.kept`: "got the deck, thanks").
"""

NAME = "open_commitments"
KIND = "commitment"
WAKES = ("sweep",)
KEYWORDS = (
    "commitment",
    "committed",
    "promise",
    "promised",
    "owe",
    "follow up",
    "follow-up",
    "todo",
    "to do",
    "pending",
    "open",
)
PARAMS = {
    "person_ids": {"default": None, "list": True, "doc": "whose commitments (default: me and my contacts)"},
    "people": {"default": None, "list": True, "doc": 'whose commitments, by name ("me" is the owner)'},
    "everyone": {"default": False, "doc": "with no one named: everyone's commitments, not only mine and my contacts'"},
    "overdue_days": {"default": 14, "doc": "keep commitments overdue by at most N days"},
    "max_age_days": {"default": 90, "doc": "commitments with no due date: said within N days"},
    "limit": {"default": 20, "doc": "at most this many candidates"},
}

PROGRAM = r"""
import datetime
import re

me = api.me()["id"]
now = datetime.datetime.fromisoformat(api.now())
today = now.date()
people = list(context.get("person_ids") or [])
named = [str(n).strip() for n in (context.get("people") or []) if str(n).strip()]
unknown = []
searched = []  # (name asked, the people it named), for saying what was searched
for name in named:
    if name.lower() in ("me", "i", "myself", "you"):
        people.append(me)
        continue
    found = api.resolve(name, kind="person")
    exact = [f for f in found if f["name"].casefold() == name.casefold()]
    # A title or a seat label ("project manager", "Minister of Finance", "Professor E") names
    # everyone who holds it: the people with the title, and the seats "Project Manager (ES2004b)".
    holders = [f for f in found if f.get("match") == "role"
               or f["name"].casefold().startswith(name.casefold() + " (")]
    if exact:
        chosen = exact[:1]
    elif holders:
        chosen = holders
    else:
        chosen = found[:1]
    if chosen:
        people.extend(f["id"] for f in chosen)
        searched.append((name, [f["name"] for f in chosen], chosen is holders))
    else:
        unknown.append(name)
people = list(dict.fromkeys(people))
if not people and not named:
    if context.get("everyone"):  # "what commitments are open?": whoever made them
        people = list(dict.fromkeys([me] + api.subjects_of(["committed_to"])))
    else:
        people = [me] + [c["id"] for c in api.network()]
def arg(name, default):
    value = context.get(name)
    return default if value is None else value

overdue_days = int(arg("overdue_days", 14))
max_age = int(arg("max_age_days", 90))
STOP = {"the", "you", "your", "and", "for", "with", "next", "week", "send", "will", "about", "this", "that"}

# "you" in a promise is whoever heard it. Said to me (by a contact: someone I meet), it
# stays "you"; in my own promise, or in one I was not there to hear, it is "them".
THEM = {"you": "them", "your": "their", "yours": "theirs", "yourself": "themselves", "yourselves": "themselves",
        "you're": "they're", "you've": "they've", "you'll": "they'll", "you'd": "they'd"}


def point_of_view(text, heard_by_me):
    if heard_by_me:
        return text
    def swap(m):
        w = m.group(0)
        out = THEM.get(w.lower(), w)
        return out[:1].upper() + out[1:] if w[:1].isupper() else out
    return re.sub(r"\b[Yy]ou(?:rselves|rself|rs|r|'re|'ve|'ll|'d)?\b", swap, text or "")


contacts = {c["id"] for c in api.network()}


def words(text):
    return {w[:5] for w in re.findall(r"[a-z]{3,}", (text or "").lower()) if w not in STOP}

facts = api.assertions_about(people) if people else []
by_person = {}
for f in facts:
    by_person.setdefault(f["subject"], []).append(f)

# A later meeting may say it was done or arrived ("got the deck, thanks"): not open any more.
promised = [f["id"] for f in facts if f["predicate"] == "committed_to" and f["subject"] in people]
kept = {k["id"] for k in api.kept(promised)} if promised else set()

result = []
for f in facts:
    if f["predicate"] != "committed_to" or f["subject"] not in people:
        continue
    if f["said_at"] is None:  # meeting date unknown: no due date, no age, no overdue
        if context.get("wake") not in (None, "ask"):
            continue  # a reminder nobody asked for needs to know when it was promised; `ask` lists it
        due, late = None, None
    elif f["valid_to"]:
        due = datetime.date.fromisoformat(f["valid_to"])
        late = (today - due).days
        if late > overdue_days:
            continue
    else:
        due, late = None, None
        if (now - datetime.datetime.fromisoformat(f["said_at"])).days > max_age:
            continue
    topic = words(f["literal"])
    followed = any(
        g["id"] != f["id"] and f["said_at"] and g["said_at"] and g["said_at"] > f["said_at"]
        and topic and len(topic & words((g["literal"] or "") + " " + (g["qualifier"] or ""))) * 2 >= len(topic)
        for g in by_person.get(f["subject"], []))
    if followed or f["id"] in kept:
        continue
    who = "You" if f["subject"] == me else f["subject_name"]
    promise = point_of_view(f["literal"], f["subject"] != me and f["subject"] in contacts)
    if f["said_at"] is None:
        when, score = "meeting date unknown", 0.5
    elif due is None:
        when, score = "no due date", 0.5
    elif late > 0:
        when, score = f"overdue by {late} days (due {due})", 0.85
    elif late >= -7:
        when, score = f"due {due}", 0.75
    else:
        when, score = f"due {due}", 0.55
    if f["subject"] == me:
        score += 0.1
    result.append(Candidate(kind="commitment", entities=[f["subject"]], path=[f["subject"]], evidence=[f["id"]],
                            score=min(1.0, score),
                            why=f'{who} promised to "{promise}" on {f["said_at"][:10] if f["said_at"] else "an unknown date"}, {when}; no follow-up since.'))
result.sort(key=lambda c: -c.score)
result = result[: int(arg("limit", 20))]
if not result:
    said = [f for f in facts if f["predicate"] == "committed_to" and f["subject"] in people]
    if people == [me]:
        who = "you"
    elif searched and not context.get("person_ids"):
        parts = []
        for name, holders, by_title in searched:
            if not by_title:  # a name ("Nina" for Nina Roux): the person it named
                parts.extend(holders)
            else:
                listed = ", ".join(holders[:8]) + (", ..." if len(holders) > 8 else "")
                parts.append(f"{name!r} ({len(holders)} {'person' if len(holders) == 1 else 'people'}: {listed})")
        who = "; ".join(parts)
    elif named or context.get("person_ids"):
        who = ", ".join(("you" if e["id"] == me else e["name"]) for e in api.entity(people))
    elif context.get("everyone"):
        who = "anyone"
    else:
        who = "you or your contacts"
    if unknown and not people:
        print("nothing found: no one named " + ", ".join(repr(n) for n in unknown) + " in memory")
    elif not said:
        print(f"nothing found: no commitments recorded by {who}")
    else:
        print(f"nothing found: {len(said)} commitment(s) by {who}, none open: past due by more than "
              f"{overdue_days} days, older than {max_age} days without a due date, or followed up or kept since")
"""
