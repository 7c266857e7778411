"""The word lists and grammar patterns of rules/claims.py, English and French.

Each pattern is vocabulary or grammar, never a sentence of a test: hedges, negation,
hypotheticals, retractions, sarcasm and quote frames ("X said: ...", "X m'a dit : ...").
French sentences reach these through the same pass (offline.extract runs it on every
rule's output, the French rules included).
"""

from __future__ import annotations

import re

from backchannel.extraction.mentions.names import NAME

# Hedges: the claim stands, with less weight. Masked before the negation test, so that
# "if I remember correctly" is not a hypothetical and "I'm not sure" not a negation.
_HEDGE_EN = (
    r"I\s+(?:think|believe|guess|suppose|reckon|assume|gather|hear|heard|understand)|I['’]m\s+(?:not\s+)?"
    r"(?:sure|certain|positive)|I\s+am\s+not\s+(?:sure|certain)|not\s+(?:100\s*%\s+|entirely\s+|totally\s+"
    r"|completely\s+)?sure|if\s+I\s+(?:remember|recall)(?:\s+(?:correctly|rightly|right|well))?|if\s+memory\s+serves"
    r"(?:\s+me)?|if\s+I['’]m\s+not\s+mistaken|as\s+far\s+as\s+I\s+(?:know|can\s+tell|remember)|maybe|perhaps|probably"
    r"|possibly|apparently|supposedly|reportedly|allegedly|presumably|seemingly|likely|kind\s+of|sort\s+of|more\s+or\s+less"
    r"|rumou?r\s+(?:has\s+it|is)|word\s+is|I\s+could\s+be\s+wrong|don['’]t\s+quote\s+me|barely|hardly|vaguely"
    r"|(?:I['’]d|I\s+would)\s+say|oh\s+sure|sure,\s+sure"
)
_HEDGE_FR = (
    r"je\s+(?:crois|pense|suppose|dirais)|il\s+me\s+semble|peut-être|probablement|apparemment|sans\s+doute"
    r"|il\s+paraît|à\s+ce\s+qu['’]il\s+paraît|si\s+je\s+me\s+souviens\s+bien|si\s+je\s+ne\s+me\s+trompe\s+pas"
    r"|je\s+ne\s+suis\s+pas\s+(?:sûr|sûre|certain|certaine)|pas\s+(?:sûr|sûre)|j['’]ai\s+entendu\s+dire"
)
HEDGE = re.compile(rf"\b(?:{_HEDGE_EN}|{_HEDGE_FR})\b", re.I)

NEGATION = re.compile(
    r"\b(?:not|never|no\s+one|nobody|neither|nor|cannot|no\s+way)\b|n['’]t\b"
    r"|\b(?:ne|jamais|aucun|aucune|rien|nullement|ni)\b|\bn['’]",
    re.I,
)
HYPOTHETICAL = re.compile(
    r"\b(?:if|unless|suppose|supposing|imagine|imagining|pretend|pretending|hypothetically|in\s+theory|wish|wished"
    r"|(?:would|could|should|might|must)\s+(?:have|['’]ve)|what\s+if|as\s+if|even\s+if|whether)\b|['’]d\s+have\b"
    r"|\b(?:si|s['’]ils?|imaginons|supposons|admettons|au\s+cas\s+où|aurais|aurait|aurions|auriez|auraient"
    r"|serais|serait)\b",
    re.I,
)
# French hearsay, and the conditional it takes: "Il paraît que Fabrice serait parti de chez Airbus" reports
# a rumour (the hedge marks it), it states no condition; without the hearsay "serait parti" is one.
HEARSAY_FR = re.compile(
    r"\b(?:il\s+paraît|paraît-il|apparemment|selon|d['’]après|j['’]ai\s+entendu\s+dire|on\s+m['’]a\s+dit"
    r"|il\s+semblerait|(?:la\s+)?rumeur)\b",
    re.I,
)
REPORTIVE_CONDITIONAL_FR = re.compile(r"\b(?:serait|seraient|aurait|auraient)\b", re.I)
# Hearsay: the speaker passes on what others say of someone, which is a rumour, not a claim of their own
# ("word is she's off to Glanbia", "the word in Dublin is ...", "rumour has it", "I hear he's leaving",
# "apparently she's joined Monzo"); "I heard from her last week" is a tie, not hearsay.
HEARSAY = re.compile(
    r"\b(?:rumou?rs?\s+(?:has\s+it|is|are|goes)|(?:the\s+)?word\s+(?:(?:on|in|around|at)\s+(?:the\s+)?\w+\s+)?is"
    r"|I(?:['’]ve)?\s+heard\s+(?:that\s+|it\s+said\s+)?(?!from\b|of\b|about\b|back\b|nothing\b|you\s*[,.!?])"
    r"|I\s+hear\s+(?:that\s+)?(?!from\b|of\b|about\b|back\b|you\s*[,.!?])|apparently|supposedly|reportedly|allegedly"
    r"|so\s+I['’]m\s+told|I['’]m\s+told|people\s+(?:are\s+)?say(?:ing)?|they\s+say)\b"
    rf"|{HEARSAY_FR.pattern}",
    re.I,
)
# Where a comma-clause starts: hypotheticals and negation reach no further back.
CLAUSE_CUT = re.compile(
    r"[,;:—–()]|\s-\s|\.\.\.|…|\b(?:but|and\s+then|so|because|although|though|whereas"
    r"|mais|parce\s+que|car|donc|alors\s+que|bien\s+que|quoique)\b",
    re.I,
)

# Sentences that take back the one before them.
_RETRACT_EN = (
    r"just\s+kidding|(?:I['’]m\s+|I\s+am\s+|only\s+|just\s+)?(?:kidding|joking)|j/?k|not\s+really|obviously\s+not"
    r"|of\s+course\s+not|definitely\s+not|absolutely\s+not|certainly\s+not|not\s+at\s+all|I\s+wish|as\s+if"
    r"|yeah,?\s+right|scratch\s+that|I\s+take\s+(?:that|it)\s+back|forget\s+(?:I|what\s+I)\s+said(?:\s+that)?"
    r"|that['’]s\s+not\s+true|that\s+was\s+a\s+joke|I\s+made\s+that\s+up|not\s+true"
    r"|I\s+(?:don['’]t|didn['’]t|never\s+did|haven['’]t)(?:\s+actually)?\W*$"
)
_RETRACT_FR = (
    r"je\s+(?:plaisante|rigole|blague)|c['’]est\s+(?:une\s+blague|pour\s+rire|faux)|pas\s+vraiment"
    r"|bien\s+sûr\s+que\s+non|évidemment\s+(?:pas|que\s+non)|mais\s+non|pas\s+du\s+tout|tu\s+parles|mon\s+œil"
    r"|je\s+retire\s+ce\s+que\s+j['’]ai\s+dit"
)
_RETRACT_LEAD = r"(?:(?:no|nah|nope|ha|haha|lol|okay|ok|well|oh|hmm|non|nan|bon|bah|ben)\W+)*"
RETRACT = re.compile(rf"^\W*{_RETRACT_LEAD}(?:{_RETRACT_EN}|{_RETRACT_FR})(?!\w)", re.I)
# Substrings one of which every retraction above contains (a cheap test on the lowercased turn).
RETRACT_HINT = re.compile(
    r"kidding|joking|j/?k\b|not really|not\b|of course|not at all|i wish|as if|right|scratch that|take (?:that|it) back"
    r"|forget|not true|a joke|made that up|i don|i didn|never did|i haven|plaisante|rigole|blague|pour rire|faux"
    r"|pas vraiment|que non|évidemment|mais non|pas du tout|tu parles|mon œil|je retire"
)
# The same, closing the claim's own sentence: "I know X, just kidding."
RETRACT_TAIL = re.compile(
    r"(?:[,;—–-]|\.\.\.|…)\s*(?:(?:no|nah|ha|haha|lol|non|nan)\W+)*(?:just\s+kidding|(?:I['’]m\s+|only\s+|just\s+)?"
    r"(?:kidding|joking)|j/?k|obviously\s+not|of\s+course\s+not|not\s+really|yeah,?\s+right"
    r"|je\s+(?:plaisante|rigole)|pas\s+vraiment|évidemment\s+pas|bien\s+sûr\s+que\s+non|c['’]est\s+une\s+blague)\W*$",
    re.I,
)
# A role-play frame before the claim in its sentence: "for the purposes of this drill I'm the chief exec
# of X", "in this mock call I'm the VP of IT at Y", "let's pretend I'm their CFO". A bare "role-play"
# is no frame ("we ran a role-play with Sophie from Acme" says who Sophie is).
EXERCISE_FRAME = re.compile(
    r"\b(?:for\s+the\s+purposes?\s+of\s+(?:this|the|our|today['’]s)\s+(?:\w+\s+)?(?:drill|exercise|role[\s-]?play"
    r"|simulation|scenario|game)|in\s+(?:this|the|our|today['’]s)\s+(?:\w+\s+)?(?:mock|pretend|simulated|role[\s-]?play"
    r"|tabletop)\b|(?:let['’]s|we['’]ll)\s+(?:say|pretend|imagine|role[\s-]?play)\s+(?:that\s+)?(?:I['’]m|I\s+am|you['’]re"
    r"|you\s+are)|pour\s+(?:les\s+besoins\s+de\s+)?l['’]exercice|dans\s+ce\s+jeu\s+de\s+rôle)",
    re.I,
)
# An earlier statement quoted to be corrected: "I said I had worked with X" in a turn that corrects
# it, "A previous version of this story said X had joined Y" under a "Correction:".
EARLIER_SAID = re.compile(
    r"^\W*(?:(?:earlier|before|previously|last\s+time|in\s+my\s+(?:earlier|last)\s+answer),?\s+)?I\s+(?:said|stated"
    r"|told\s+(?:you|the\s+committee|the\s+panel))\b|\b(?:previous|earlier|original)\s+version\s+of\s+this"
    r"\s+(?:story|article|report|piece)\s+(?:said|stated|reported|misstated|wrongly\s+said)\b",
    re.I,
)
CORRECTING = re.compile(
    r"\bcorrection\b|\b(?:to|let\s+me|may\s+I|I\s+must|I\s+need\s+to|I\s+should|I['’]d\s+like\s+to)\s+correct\b"
    r"|\bmisspoke\b|\bI\s+was\s+(?:wrong|mistaken)\b|\bje\s+(?:me\s+suis\s+trompée?|rectifie)\b|\brectificatif\b",
    re.I,
)
# Sarcasm that opens the claim's sentence: the claim is not meant.
SARCASM_OPEN = re.compile(
    r"^\W*(?:yeah,?\s+right|as\s+if|in\s+my\s+dreams|tu\s+parles|c['’]est\s+ça,?\s+oui|mon\s+œil"
    r"|dans\s+mes\s+rêves)\b",
    re.I,
)

# ---------------------------------------------------------------- quote frames

PRONOUNS = {"she", "he", "they", "elle", "il", "ils", "elles"}
_PRONOUN = r"\b(?:[Ss]he|[Hh]e|[Tt]hey|[Ee]lle|[Ii]l)\b"
_AUDIENCE = (
    r"(?:me|us|him|her|them|you|everyone|everybody|the\s+(?:whole\s+)?(?:room|team|group|table|panel|board"
    r"|audience|meeting|class|company|committee)|" + NAME + ")"
)
_AUDIENCE_FR = r"(?:toute\s+la\s+salle|tout\s+le\s+monde|tous|toute\s+l['’]équipe|l['’]équipe|" + NAME + ")"
_SAY_EN = (
    rf"said|says|say|told\s+{_AUDIENCE}|tells\s+{_AUDIENCE}|(?:was|were)\s+telling(?:\s+{_AUDIENCE})?|was\s+like|were\s+like|is\s+like|goes|went|wrote"
    r"|writes|mentioned|mentions|claimed|claims|announced|explained|insisted|bragged|boasted|swore|admitted"
    r"|added|replied|answered|shouted|whispered|texted|emailed"
)
_SAY_FR = (
    r"(?:m['’]|t['’]|nous\s+|vous\s+|lui\s+|leur\s+)?a\s+(?:dit|raconté|expliqué|lancé|affirmé|écrit|annoncé"
    r"|déclaré|répondu|avoué|assuré|juré)|(?:m['’]|nous\s+|lui\s+)?(?:disait|racontait)|(?:m['’]|nous\s+)?dit"
    r"|était\s+genre"
)
SAY = rf"(?:{_SAY_EN}|{_SAY_FR})"
_TO = rf"(?:\s+to\s+{_AUDIENCE}|\s+à\s+{_AUDIENCE_FR})?"
# "Marc told us: ...", "she was like, ...", "Paul said that ...", "Marc nous a dit : ...".
# Group sep tells direct from indirect speech.
FRAME = re.compile(
    rf"(?P<who>{NAME}|{_PRONOUN}|\bI\b)\s+(?:(?:once|also|always|just|even|literally|then|actually|proudly)\s+)?"
    rf"(?P<verb>{SAY}){_TO}(?P<sep>\s*[:,]\s*[\"“‘'«]?\s*|\s*[\"“‘'«]\s*|\s+that\b|\s+que\b|\s+qu['’]|\s+)"
)
# A quote with its frame after it: '"I worked with Y," Marc said.', '« J'ai travaillé avec Y », a dit Marc.'
POST_FRAME = re.compile(
    rf"[\"“«]\s*(?P<body>[^\"”»]{{3,400}}?)[,.!?]?\s*[\"”»]\s*,?\s*(?:(?P<who>{NAME}|{_PRONOUN})\s+(?:{SAY})\b"
    rf"|(?:a\s+)?(?:dit|lancé|raconté|expliqué|ajouté|répondu)\s+(?P<who_after>{NAME}))"
)
# Substrings one of which every say-verb above contains: a C-speed test on the lowercased
# text before the costlier frame patterns run.
SAY_HINT = re.compile(
    r"said|says|say\b|told|tells|telling|was like|were like|is like|goes|went|wrote|writes|mention|claim|announc|explain"
    r"|insist|brag|boast|swore|admit|added|replied|answer|shout|whisper|texted|emailed|dit|racont|lancé|affirm"
    r"|écrit|annonc|déclar|répondu|avou|assur|juré|genre"
)
# A direct quote after a say-verb, whoever the sayer: "someone at the bar said: I ...".
ANY_DIRECT = re.compile(rf"\b(?:{SAY}){_TO}\s*(?::|,?\s*[\"“«])")
# ... unless the speaker is the sayer: "I told them:", "j'ai dit :", "je leur ai dit :".
SELF_BEFORE = re.compile(
    r"(?:\bI\s+(?:(?:once|also|always|just|even|literally|then|actually)\s+)?"
    r"|\bj['’]ai\s+|\bje\s+(?:lui|leur|vous|te|les)\s+ai\s+|\bje\s+t['’]ai\s+|\bje\s+(?:leur\s+|lui\s+)?disais\s+)$",
    re.I,
)
LIKE_VERBS = ("was like", "were like", "is like", "goes", "went", "était genre")
FIRST_PERSON_NEXT = re.compile(r"\s*(?:I|I['’]m|I['’]ve|we|my|me|je|j['’]|moi|mon|ma|mes)\b", re.I)
# Sayers that name nobody in particular.
NOBODY_IN_PARTICULAR = {
    "everyone",
    "everybody",
    "someone",
    "somebody",
    "nobody",
    "people",
    "anyone",
    "they",
    "quelqu'un",
    "quelqu un",
    "quelqu’un",
    "on",
    "tout le monde",
    "personne",
}
QUOTE_CLOSE = re.compile(r"[\"”’'»]")
