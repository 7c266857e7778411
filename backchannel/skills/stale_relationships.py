"""Important contacts I have not heard from in N weeks.

Contacts come from my network (knows / worked_with / introduced links, shared
meetings); importance grows with the links and meetings we share and with a
current title. One "reconnect" candidate per contact silent for `weeks` or more.
"""

NAME = "stale_relationships"
KIND = "reconnect"
WAKES = ("sweep",)
KEYWORDS = (
    "stale",
    "silent",
    "lost touch",
    "reconnect",
    "haven't talked",
    "not talked",
    "haven't spoken",
    "not spoken",
    "not heard",
    "gone quiet",
    "catch up",
    "neglect",
    "relationship",
)
PARAMS = {
    "weeks": {"default": 8, "doc": "silent for at least this many weeks"},
    "min_strength": {"default": 1, "doc": "ignore contacts with fewer shared links/meetings"},
    "limit": {"default": 10, "doc": "at most this many candidates"},
}

PROGRAM = r"""
import datetime

me = api.me()["id"]
now = datetime.datetime.fromisoformat(api.now())
def arg(name, default):
    value = context.get(name)
    return default if value is None else value

weeks = float(arg("weeks", 8))
min_strength = int(arg("min_strength", 1))
contacts = [c for c in api.network() if c["strength"] >= min_strength]
stale = []
for c in contacts:
    if c["last_seen"] is None:
        continue
    silent = (now - datetime.datetime.fromisoformat(c["last_seen"])).days
    if silent >= weeks * 7:
        stale.append((c, silent))

result = []
if stale:
    ids = [c["id"] for c, _ in stale]
    info = {e["id"]: e for e in api.entity(ids)}
    latest = {}
    for l in api.between([me], ids):
        if l["to"] not in latest or (l["said_at"] or "") > (latest[l["to"]]["said_at"] or ""):
            latest[l["to"]] = l
    for c, silent in stale:
        e = info.get(c["id"], {})
        roles = e.get("roles") or []
        role = ""
        if roles:
            role = f' ({roles[0]["title"] + " at " if roles[0]["title"] else ""}{roles[0]["org_name"]})'
        score = 0.3 + 0.1 * min(c["strength"], 4) + min(silent / 365.0, 1.0) * 0.2 + (0.1 if roles else 0.0)
        evidence = [latest[c["id"]]["id"]] if c["id"] in latest else []
        if roles:
            evidence.append(roles[0]["assertion"])
        weeks_silent = silent // 7
        result.append(Candidate(kind="reconnect", entities=[c["id"]], path=[me, c["id"]], evidence=evidence,
                                score=min(1.0, score),
                                why=f'No word from {c["name"]}{role} for {weeks_silent} weeks '
                                    f'(last seen {c["last_seen"][:10]}).'))
result.sort(key=lambda c: -c.score)
result = result[: int(arg("limit", 10))]
if not result:
    if not contacts:
        print("nothing found: no contacts in memory yet (nobody linked to you by knows, worked with or "
              "introduced, or who spoke in a meeting you spoke in)")
    else:
        print(f"nothing found: none of your {len(contacts)} contacts has been silent for {weeks:g} weeks or more")
"""
