"""Names, organisations and titles for the offline extractor.

Regex fragments (`NAME`, `ORG`) are embedded by the rules in rules/en/relations.py;
they over-match on purpose and the validators here (`person_name`, `org_name`,
`parse_title`) decide. Precision over recall: a person name is one to four
capitalised tokens (particles such as "de", "van", "von" allowed inside,
accents allowed), never a pronoun, a day, a month, a title alone or a common
sentence opener; an organisation is a capitalised sequence, an acronym or a
name with a company suffix.
"""

from __future__ import annotations

import re

from backchannel.memory.text import norm_name

# Every Latin uppercase letter, accented ones included (Python's re has no \p{Lu}).
_UPPER = "".join(
    c for c in map(chr, list(range(0x41, 0x250)) + list(range(0x1E00, 0x1F00))) if c.isupper() and c.isalpha()
)
U = f"[{re.escape(_UPPER)}]"
L = r"[^\W\d_]"  # any letter
# A capitalised token: "Sophie", "O'Brien", "Jean-Pierre", "McDonald", "ColegauCymru", "CPS";
# never a possessive ("Sophie's").
CAP = rf"{U}{L}*(?:['’](?![sS]\b){L}+)?(?:-{L}+)*"
PARTICLE = r"(?:de|del|della|der|den|di|da|das|do|dos|du|van|von|ter|ten|la|le|bin|al|el|y)"
HONORIFIC = r"(?:Dr|Mr|Mrs|Ms|Miss|Mx|Prof|Professor|Sir|Dame|Lord|Lady)\.?"
# Both end where a word ends: a regex that backtracks must not cut "Joey’s" to "Joe".
# The pronoun "I" never continues a name: "Before Sakura I worked at Globex" is not a
# person called "Before Sakura I" (which would swallow the subject of the fact); nor "I'm", "I've".
_NOT_I = r"(?!I\b)"
# The name itself, with no word before it: NAME and, after a lowercase "ex-" ("he is ex-Reliance"), the
# mentions stage's own scan (mentions/sentence.py).
NAME_BODY = rf"(?:{HONORIFIC}\s+)?{CAP}(?:\s+(?:{PARTICLE}\s+){{0,2}}{_NOT_I}{CAP}){{0,3}}(?![\w-])"
NAME = rf"(?<![\w'’-]){NAME_BODY}"
_ORG_SUFFIX_RX = r"(?:Inc|Ltd|LLC|LLP|plc|PLC|GmbH|SA|AG|SAS|SARL|NV|BV|Co|Corp|Corporation|Group|Holdings)"
ORG = (
    rf"(?<![\w'’-])(?:[Tt]he\s+)?{CAP}(?:\s+(?:(?:of|for|and|&|in|de|du|des|the)\s+){{0,2}}{_NOT_I}{CAP}){{0,7}}"
    rf"(?:,?\s+{_ORG_SUFFIX_RX}\b)?(?![\w-])"
)

NAME_RX = re.compile(NAME)
ORG_RX = re.compile(ORG)

POSTNOMINALS = {"AM", "MP", "MS", "MSP", "MLA", "MEP", "OBE", "MBE", "CBE", "QC", "KC", "PhD", "Jr", "Sr", "II", "III"}
_HONORIFICS = {"dr", "mr", "mrs", "ms", "miss", "mx", "prof", "professor", "sir", "dame", "lord", "lady"}

# Words that start a capitalised run but are not names. The last lines are prepositions and
# imperative verbs that open a sentence: "Ask Sophie Martin about it" is about Sophie Martin, and
# taken as part of the name they would swallow the capitalised word into it.
STOP = set(
    """
i i'm i've i'll i'd me my mine we we're we've we'll us our ours you you're your yours he he's him his she she's her
hers it it's its they they're them their theirs this that these those there here what who whom whose which when
where why how so and but or if then than also just yes yeah yep no nope not okay ok well oh um uh hmm right sure
thanks thank please hi hello hey dear good great fine sorry maybe perhaps actually anyway because since although
though however therefore the a an all any some every each both either neither one two three first second third
last next new old chair chairman chairwoman minister member members mister madam sir deputy secretary president
director manager officer head chief executive principal professor doctor minister's committee government
god jesus christ lord gosh wow gonna wanna let let's can could would should will shall may might must do does did
is are was were be been being have has had get got go going come came see say said tell told think thought know
knew mean means like love as at by for from in into of on onto to with without about after before during until
today tomorrow yesterday tonight morning afternoon evening week month year monday tuesday wednesday thursday
friday saturday sunday january february march april may june july august september october november december
mm mm-hmm uh-huh ah eh er erm huh hm ha aha ooh ow oops yay nah umm uhh uhm hmm mmm ahh ohh whoa
listen look see wait hey come
honestly basically obviously personally frankly seriously unfortunately fortunately clearly apparently hopefully
interestingly importantly again now meanwhile instead otherwise anyways besides finally firstly secondly lastly
additionally similarly likewise certainly definitely absolutely exactly indeed really alright cool awesome perfect
brilliant excellent wonderful literally essentially generally normally usually typically ideally luckily sadly
surely naturally admittedly thankfully currently recently originally initially eventually ultimately
unlike through via per including except despite regarding around between among against behind beyond under over
within across toward towards upon near outside inside throughout alongside beside below above along amid
ask call email e-mail text message ping phone ring contact invite remind introduce thank welcome congratulate
cc loop reach send tell meet
""".split()
)
NATIONALITIES = set(
    """
english british welsh scottish irish french german spanish italian american canadian dutch swiss belgian european
chinese japanese indian australian portuguese polish russian greek swedish danish norwegian finnish
""".split()
)
STOP |= NATIONALITIES
_ORG_LEAD_OK = NATIONALITIES | {"new", "first", "national", "general", "old", "united", "royal", "the"}

# Capitalised words that head an organisation's name or end it.
ORG_HEADS = set(
    """
university bank ministry department association council institute institution society federation union
commission committee office board agency service services chamber college school centre center foundation trust
authority museum hospital church academy court government parliament assembly bureau division network alliance
coalition confederation organisation organization corporation company group partnership fund laboratory lab
library police force party club league secretariat unit cabinet senate tribunal consortium consultancy labs
systems solutions technologies technology partners capital ventures industries holdings inc ltd llc llp plc gmbh
sa ag sas sarl nv bv co corp agency executive directorate inspectorate regulator trust cymru
logistics pharma pharmaceuticals biotech robotics dynamics motors airlines airways analytics software
electronics telecom telecoms insurance brewery studios
times journal herald tribune gazette chronicle telegraph magazine
""".split()
)
# Single capitalised words that are topics or departments, not employers ("director of Education").
NOT_ORGS = STOP | set(
    """
education sales marketing engineering finance operations product products research development policy
communications learning hr it technology strategy design legal procurement wales england scotland ireland
britain europe london paris curriculum assessment health welsh english bill act the
berlin madrid rome tokyo dublin edinburgh cardiff swansea manchester birmingham glasgow bristol leeds brussels
amsterdam geneva zurich munich lyon boston chicago toronto montreal sydney france germany spain italy canada
america usa uk us eu india china japan australia ottawa quebec wales
""".split()
)

# Title vocabulary: a title phrase must contain one of these heads.
TITLE_HEADS = set(
    """
officer executive director manager head chief president vice-president vp chair chairman chairwoman chairperson
principal minister secretary advisor adviser engineer developer designer consultant analyst partner founder
co-founder cofounder owner lead leader architect scientist researcher professor lecturer teacher headteacher
counsel lawyer solicitor barrister attorney accountant controller treasurer editor producer coordinator
co-ordinator administrator specialist associate intern assistant representative commissioner ambassador governor
mayor prosecutor inspector superintendent dean provost chancellor registrar nurse physician surgeon clerk trustee
economist strategist planner buyer recruiter ceo cto cio cfo coo cmo ciso cdo cpo cro md gm svp evp
""".split()
) | {"journalist", "reporter", "auditor", "correspondent", "pharmacist", "paralegal"}  # job words real meetings use
# Adjectives that make "X is a great engineer" an opinion, not a title.
_EVALUATIVE = set(
    "good great nice best better bad terrible brilliant amazing real true fantastic excellent "
    "awful lovely kind sort bit lot wonderful fine decent fair".split()
)
_TITLE_OK = TITLE_HEADS | {"of", "for", "and", "the", "in", "deputy", "vice", "first", "second", "third", "members"}
_TITLE_PARTICIPLES = {
    "managing",
    "acting",
    "consulting",
    "leading",
    "founding",
    "visiting",
    "supervising",
    "presiding",
    "reporting",
    "retired",
    "elected",
    "appointed",
    "marketing",
    "engineering",
    "operating",
    "accounting",
    "nursing",
    "teaching",
    "training",
    "learning",
    "programming",
    "publishing",
    "recruiting",
    "purchasing",
    "planning",
    "licensed",
    "chartered",
    "certified",
}
_TITLE_DROP_TAIL = {
    "now",
    "here",
    "there",
    "too",
    "again",
    "then",
    "today",
    "so",
    "though",
    "anyway",
    "already",
    "yet",
    "actually",
    "really",
    "instead",
    "also",
    "over",
    "out",
    "down",
    "up",
}
# Heads that, alone and with no organisation, are too often not a job ("the lead in the play").
WEAK_HEADS = {
    "lead",
    "leader",
    "partner",
    "owner",
    "associate",
    "assistant",
    "specialist",
    "representative",
    "producer",
    "buyer",
    "planner",
    "head",
    "chief",
    "executive",
    "member",
    "governor",
}
_TITLE_DROP_LEAD = {"the", "a", "an", "our", "their", "its", "his", "her", "my", "your", "new", "current", "now"}
# adverbs said before a title, never part of it ("I'm only the interim treasurer")
_TITLE_DROP_LEAD |= {
    "only",
    "just",
    "merely",
    "technically",
    "officially",
    "basically",
    "actually",
    "currently",
    "still",
}

_CANON = {
    "chief executive": "CEO",
    "chief executive officer": "CEO",
    "ceo": "CEO",
    "chief information officer": "CIO",
    "cio": "CIO",
    "chief technology officer": "CTO",
    "chief technical officer": "CTO",
    "cto": "CTO",
    "chief financial officer": "CFO",
    "chief finance officer": "CFO",
    "cfo": "CFO",
    "chief operating officer": "COO",
    "coo": "COO",
    "chief marketing officer": "CMO",
    "cmo": "CMO",
    "chief information security officer": "CISO",
    "ciso": "CISO",
    "chief data officer": "CDO",
    "chief digital officer": "CDO",
    "cdo": "CDO",
    "chief product officer": "CPO",
    "chief revenue officer": "CRO",
    "vice president": "VP",
    "vice-president": "VP",
    "vp": "VP",
    "chair": "chair",
    "chairman": "chair",
    "chairwoman": "chair",
    "chairperson": "chair",
    "managing director": "managing director",
    "md": "managing director",
}

CANONICAL_TITLES = _CANON  # surface title (lowercased) -> canonical title: the exact titles lexicon


def _tokens(s: str) -> list[str]:
    return s.split()


_CAMEL_OK = ("Mc", "Mac", "De", "Di", "Da", "Du", "Le", "La", "Van", "Von", "Fitz", "O'", "O’", "D'", "D’")


def person_name(raw: str) -> str | None:
    """The cleaned person name in `raw`, or None when it is not one."""
    toks = _tokens(raw.strip())
    if not toks:
        return None
    while toks and toks[0].lower() in STOP and toks[0].rstrip(".").lower() not in _HONORIFICS:
        toks = toks[1:]  # "So Sophie Martin" -> "Sophie Martin"
    core = [t for t in toks if t.rstrip(".").lower() not in _HONORIFICS]
    while core and core[-1] in POSTNOMINALS and len(core) > 1:
        core = core[:-1]
    if not core:
        return None
    caps = [t for t in core if t[:1].isupper()]
    if not caps:
        return None
    for t in caps:
        low = t.lower()
        if low in STOP or low in ORG_HEADS or low in TITLE_HEADS:
            return None
        letters = [c for c in t if c.isalpha()]
        if len(letters) < 2 or t.isupper():  # initials and acronyms are not person names
            return None
        if any(c.isupper() for c in t[2:].split("-")[0]) and not t.startswith(_CAMEL_OK):
            return None  # "ColegauCymru" is an organisation; "McDonald", "DeVito" are people
    return " ".join(toks)


def strip_stutter(words: list[str]) -> list[str]:
    """Drop a false start that the next word completes: 'the pr project manager'."""
    out = []
    for i, w in enumerate(words):
        nxt = words[i + 1] if i + 1 < len(words) else ""
        if nxt and len(w) < len(nxt) and nxt.lower().startswith(w.lower()) and w.lower() not in ("a", "an"):
            continue
        out.append(w)
    return out


def parse_title(raw: str) -> tuple[str, str, bool] | None:
    """(surface title, canonical title, former?) for a title phrase, or None.

    'the new CIO' -> ('CIO', 'CIO', False); 'former chief executive' ->
    ('chief executive', 'CEO', True); 'great guy' -> None.
    """
    words = strip_stutter([w.strip(".!?") for w in _tokens(raw.strip(" ,;:.!?")) if w.strip(".!?")])
    former = False
    while words and (words[0].lower() in _TITLE_DROP_LEAD or words[0].lower() in ("former", "ex", "previous")):
        if words[0].lower() in ("former", "ex", "previous"):
            former = True
        words = words[1:]
    if words and words[0].lower().startswith("ex-") and len(words[0]) > 3:
        former = True
        words[0] = words[0][3:]
    while words and words[-1].lower() in _TITLE_DROP_TAIL:
        words = words[:-1]
    if not words or len(words) > 12:
        return None
    lows = [w.lower().strip(",.") for w in words]
    # The head comes before any complement: "head of learning", "director and secretary of ...".
    first_prep = next((i for i, w in enumerate(lows) if w in ("of", "for", "at", "in", "with")), len(lows))
    if not any(w in TITLE_HEADS for w in lows[:first_prep]):
        return None
    head_i = next(i for i, w in enumerate(lows) if w in TITLE_HEADS)
    for i in range(head_i + 1, len(words)):
        if lows[i] in ("of", "for", "in", "and", "at", "with"):
            break
        if words[i][:1].isupper() and not words[head_i][:1].isupper():
            return None  # "professor Wealer": a name follows the title
    lead = lows[0]
    if (lead.endswith(("ing", "ed")) and lead not in TITLE_HEADS and lead not in _TITLE_PARTICIPLES) or any(
        w.endswith(("'s", "’s")) for w in lows[:first_prep]
    ):
        return None  # "asking the Prime Minister", "Canada's biggest producer"
    if any(w in _EVALUATIVE for w in lows):
        return None
    if any(w.islower() and w in STOP and w not in _TITLE_OK for w in (x.strip(",.") for x in words)):
        return None
    surface = " ".join(words)
    return surface, canonical_title(surface), former


def strong_title(surface: str) -> bool:
    """A title that stands alone as a job: an acronym or a head outside WEAK_HEADS."""
    if canonical_title(surface) != surface or surface.isupper():
        return True
    lows = [w.lower() for w in surface.split()]
    stop = next((i for i, w in enumerate(lows) if w in ("of", "for", "at", "in")), len(lows))
    if stop < len(lows) and any(w in ("head", "chief", "director") for w in lows[:stop]):
        return True  # "head of sales", "director of policy"
    return any(w in TITLE_HEADS and w not in WEAK_HEADS for w in lows[:stop])


def canonical_title(surface: str) -> str:
    """'Chief Information Officer' -> 'CIO'; unknown titles keep their surface."""
    key = " ".join(surface.lower().replace("-", " - ").replace(" - ", "-").split())
    key2 = key.replace("-", " ")
    return _CANON.get(key) or _CANON.get(key2) or surface


def org_name(raw: str, *, lenient: bool = False) -> str | None:
    """The cleaned organisation name at the start of `raw`, or None.

    Connectors ('of', 'for', 'in', 'the') stay inside only after a head word
    ('Bank of England', 'Association of Directors of Education in Wales');
    'and' only when the name ends with a head word ('Cardiff and Vale College').
    With `lenient` (a witness list, where the clause is bounded), a capitalised
    start and a head word at the end accept lowercase words between
    ('Swansea city and county council')."""
    s = raw.strip(" ,;:")
    if lenient:
        words = s.split()
        if (
            len(words) >= 2
            and words[0][:1].isupper()
            and words[-1].lower().strip(".") in ORG_HEADS
            and words[0].lower() not in STOP
            and len(words) <= 8
        ):
            return s.rstrip(".")
    toks = s.split()
    if toks and toks[0] in ("the", "The"):
        toks = toks[1:]
    if not toks:
        return None
    out: list[str] = []
    seen_head = False
    ends_with_head = toks[-1].lower().strip(".,") in ORG_HEADS
    i = 0
    while i < len(toks):
        t = toks[i]
        low = t.lower()
        if low in ("of", "for", "in", "de", "du", "des", "the"):
            if not seen_head:
                break
        elif low == "and":
            if not ends_with_head:
                break
        elif t == "&":
            pass
        else:
            if low in ORG_HEADS:
                seen_head = True
        out.append(t)
        i += 1
    while out and out[-1].lower() in ("of", "for", "in", "and", "&", "de", "du", "des", "the"):
        out.pop()
    if not out:
        return None
    if out[0].lower() in STOP and (len(out) == 1 or out[0].lower() not in _ORG_LEAD_OK):
        return None
    if len(out) == 1 and out[0].lower() in NOT_ORGS:
        return None
    if all(w.lower() in NOT_ORGS for w in out) and not (len(out) > 1 and out[-1].lower() in ORG_HEADS):
        return None  # ("the Welsh Government" is one: a nationality and a head word)
    return " ".join(out)


# A name of two or more words ending in a nation's name is a public body ("Health Canada",
# "Education Scotland", "Sport England"), not a person: surnames of that shape are rare.
NATION_TAILS = frozenset(
    "canada wales england scotland ireland britain france germany spain italy australia india japan europe".split()
)


def looks_like_org(name: str) -> bool:
    """An organisation beyond doubt: a head/suffix word, a nation as the last of several
    words, or an acronym of 2-6 capitals."""
    words = name.split()
    return (
        any(w.lower().strip(".,") in ORG_HEADS for w in words)
        or (len(words) > 1 and words[-1].lower().strip(".,") in NATION_TAILS)
        or (len(words) == 1 and 2 <= len(name) <= 6 and name.isupper() and name.isalpha())
    )


def same_person(a: str, b: str) -> bool:
    """'Marc' and 'Marc Dupont' (one is the other's first tokens) may be one person."""
    ta, tb = norm_name(a).split(), norm_name(b).split()
    if not ta or not tb:
        return False
    n = min(len(ta), len(tb))
    return ta[:n] == tb[:n]


# The nouns of a tie said before a name ("my old colleague Sophie Martin", "my cousin Arjun"): the rules'
# ties (rules/en/relations.py) and the mentions stage's evidence that a lone word is a person.
WORK_TIE = (
    r"(?:colleague|boss|manager|co-?founder|business\s+partner|mentor|deputy|line\s+manager|editor|supervisor"
    r"|co-?author)"
)
FAMILY = (
    r"(?:cousin|sister|brother|mother|father|mum|mom|dad|wife|husband|son|daughter|uncle|aunt|nephew|niece"
    r"|grandmother|grandfather|grandma|grandpa|(?:sister|brother|mother|father|son|daughter)-in-law"
    r"|fianc[ée]e?|girlfriend|boyfriend|neighbou?r|flatmate|roommate|housemate)"
)
