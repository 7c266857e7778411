"""Names and organisations in French sentences, for rules/fr/relations.py and rules/fr/commitments.py.

The English validators (mentions/names.py) decide; on top of them, a French
function word ("Je", "Elle", "Bonjour") is never a name, and an organisation
that opens with a French head word ("Banque de France", "Société Générale")
keeps its "de ..." tail.
"""

from __future__ import annotations

from backchannel.extraction.mentions.names import NAME, ORG, looks_like_org, org_name
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
    first = raw.split()[0].lower().replace("’", "'").rstrip("'")
    if first in FR_STOP:
        return None
    p = ctx.person(raw)
    if p is None or not p.is_speaker and looks_like_org(p.name):
        return None
    return p


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
