"""Names and organisations in French sentences, for rules/fr/relations.py and rules/fr/commitments.py.

The English validators (mentions/names.py) decide; on top of them, a French
function word ("Je", "Elle", "Bonjour") is never a name, and an organisation
that opens with a French head word ("Banque de France", "Société Générale")
keeps its "de ..." tail.
"""

from __future__ import annotations

from backchannel.extraction.mentions.names import NAME, NAME_RX, ORG, looks_like_org, org_name, person_name
from backchannel.extraction.result import Mention
from backchannel.extraction.rules.core import Ctx
from backchannel.memory.text import norm_name

_A = r"['’]"
# Capitalised French words that open a sentence but are no names.
FR_STOP = set(
    """
je j tu il elle on nous vous ils elles ce c ça cela ceci le la les l un une des du de d mon ma mes ton ta tes son sa
ses notre votre leur leurs et mais ou donc alors bon bien oui non merci bonjour bonsoir salut voilà voila enfin ah oh
euh bref puis ensuite aussi très tres quand comme si avec chez pour dans sur par après avant depuis pendant
madame monsieur mademoiselle cher chère chers toute tout tous toutes franchement honnêtement sinon ok d'accord
au aux en est suis sont était qui que quoi où hier demain aujourd'hui lundi mardi mercredi jeudi vendredi samedi
dimanche janvier février mars avril mai juin juillet août septembre octobre novembre décembre parfait super génial
apparemment visiblement évidemment justement heureusement malheureusement sûrement probablement vraisemblablement
selon d'après paraît-il finalement récemment actuellement
""".split()
) | {"d'accord", "bien sûr", "entendu", "volontiers", "exactement", "voici", "allez", "écoute", "écoutez"}
_FR_ORG_HEADS = set(
    """
banque société societe ministère ministere université universite caisse crédit credit groupe agence fondation
institut conseil mairie région region ville chambre compagnie association fédération federation syndicat office
direction centre hôpital hopital école ecole lycée lycee cabinet laboratoire assurances mutuelle
""".split()
)
# An organisation in French text: 'Banque de France', 'Société Générale', 'Caisse d’Épargne'.
# It may follow an elision ("d'Acme"), so it starts after an apostrophe too.
_NOT_AFTER = r"(?<![\w'’-])"
assert ORG.startswith(_NOT_AFTER)
ORG_FR = rf"(?<![\w-]){ORG[len(_NOT_AFTER) :]}(?:\s+(?:de|du|des|d{_A}|de\s+la|de\s+l{_A})\s*{NAME})*"


def person_fr(ctx: Ctx, raw: str | None) -> Mention | None:
    """A person named in a French sentence; never a French function word."""
    if not raw:
        return None
    words = raw.split()
    while words and words[0].lower().replace("’", "'").rstrip("'") in FR_STOP:
        words = words[1:]  # "Apparemment Odile Brun aurait rejoint ...": the opener is no part of the name
    if not words:
        return None
    if len(words) < len(raw.split()) and len(words) < 2:
        # "Bonjour Marc": a one-word rest is a greeting's object, a name only as the one said before in full
        full = _full_name(ctx, words[0])
        return Mention(full, "person") if full else None
    raw = " ".join(words)
    p = ctx.person(raw)
    if p is None or not p.is_speaker and looks_like_org(p.name):
        return None
    if not p.is_speaker and " " not in p.name:
        return Mention(_full_name(ctx, p.name) or p.name, "person")
    return p


def _full_name(ctx: Ctx, first: str) -> str | None:
    """The one full name said before in this turn or the turns just before that `first` opens ("Fabrice"
    after "je n'ai jamais travaillé avec Fabrice Henry"); None when none, or two ("Fabrice Henry" and
    "Fabrice Roux": it names neither for sure)."""
    said = f"{ctx.context_before}\n{ctx.text[: ctx.s0]}"
    found = {
        norm_name(name): name
        for name in (person_name(m.group(0)) for m in NAME_RX.finditer(said))
        if name and len(name.split()) > 1 and norm_name(name.split()[0]) == norm_name(first)
    }
    return next(iter(found.values())) if len(found) == 1 else None


def org_fr(ctx: Ctx, raw: str | None) -> str | None:
    """An organisation: 'Banque de France', 'Société Générale', 'Acme'; never a known person."""
    if not raw:
        return None
    raw = raw.strip(" ,;:.")
    words = raw.split()
    org = raw if len(words) > 1 and words[0].lower() in _FR_ORG_HEADS else org_name(raw)
    if org is None or org.split()[0].lower().replace("’", "'").rstrip("'") in FR_STOP:
        return None
    if norm_name(org) in ctx.known_people:
        return None
    return org
