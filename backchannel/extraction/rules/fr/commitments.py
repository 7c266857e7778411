"""French commitments, with the English rule's contract (rules/en/commitments.py).

"je vous envoie le devis d'ici vendredi", "je t'envoie la présentation demain",
"je vais vous préparer une proposition", "je vous présenterai Sophie", "Marc va
vous envoyer le contrat", "Marc vous enverra le deck avant notre prochaine
réunion", "je m'engage à livrer le rapport lundi".

A deliverable verb with its object makes a promise (in the present tense too,
"je vous envoie X": in French the present promises, but only with a recipient
pronoun or a due date, so that "je prépare le budget" describing one's week is
not one); a social verb ("je vous rappelle", "je reviens vers vous", "je vous
tiens au courant") only with a due date; an everyday verb ("vérifier",
"regarder") only with a due date. Negated, conditional or questioned: never.
The recipient is "vous"/"te" (the addressee, resolved by addressee.py), "me"/
"nous" said of someone else (the speaker), "lui" (the one person named before),
or "à X" after the object.
"""

from __future__ import annotations

import re

from backchannel.extraction.dates.en import DateRange
from backchannel.extraction.mentions.names import NAME, looks_like_org
from backchannel.extraction.mentions.names_fr import person_fr
from backchannel.extraction.result import Mention
from backchannel.extraction.rules.core import Ctx
from backchannel.extraction.rules.en.commitments import ADDRESSEE

_A = r"['’]"


def _forms(*stems: str) -> str:
    return "|".join(stems)


# Infinitive | present (1st/3rd person) | future (1st/3rd person), longest forms first.
_DELIVER = _forms(
    r"envoyer|envoie|envoies|envoyons|enverrai|enverra|enverrons",
    r"transmettre|transmets|transmet|transmettrai|transmettra|transférer|transfère|transférerai|transférera",
    r"faire\s+suivre|fais\s+suivre|fait\s+suivre|ferai\s+suivre|fera\s+suivre",
    r"faire\s+parvenir|fais\s+parvenir|fait\s+parvenir|ferai\s+parvenir|fera\s+parvenir",
    r"partager|partage|partagerai|partagera|préparer|prépare|préparerai|préparera",
    r"rédiger|rédige|rédigerai|rédigera|présenter|présente|présenterai|présentera",
    r"mettre\s+en\s+(?:contact|relation)|mets\s+en\s+(?:contact|relation)|met\s+en\s+(?:contact|relation)"
    r"|mettrai\s+en\s+(?:contact|relation)|mettra\s+en\s+(?:contact|relation)",
    r"organiser|organise|organiserai|organisera|planifier|planifie|planifierai|planifiera",
    r"fournir|fournis|fournit|fournirai|fournira|livrer|livre|livrerai|livrera",
    r"soumettre|soumets|soumet|soumettrai|soumettra|confirmer|confirme|confirmerai|confirmera",
)
_SOCIAL = _forms(
    r"rappeler|rappelle|rappellerai|rappellera|recontacter|recontacte|recontacterai|recontactera",
    r"revenir\s+vers|reviens\s+vers|revient\s+vers|reviendrai\s+vers|reviendra\s+vers",
    r"tenir\s+au\s+courant|tiens\s+au\s+courant|tient\s+au\s+courant|tiendrai\s+au\s+courant"
    r"|tiendra\s+au\s+courant",
    r"écrire|écris|écrit|écrirai|écrira",
)
_WEAK = _forms(
    r"vérifier|vérifie|vérifierai|vérifiera|regarder|regarde|regarderai|regardera|relire|relis|relirai|relira",
    r"finir|finis|finit|finirai|finira|terminer|termine|terminerai|terminera|corriger|corrige|corrigerai|corrigera",
    r"mettre\s+à\s+jour|mets\s+à\s+jour|met\s+à\s+jour|mettrai\s+à\s+jour|mettra\s+à\s+jour",
)
_PRESENT = re.compile(
    r"^(?:envoie|envoies|envoyons|transmets|transmet|transfère|fais|fait|partage|prépare|rédige"
    r"|présente|mets|met|organise|planifie|fournis|fournit|livre|soumets|soumet|confirme)\b"
)
# Who promises, and how: "je", "j'", "on", "nous", a name, "il"/"elle"; then an optional
# modal ("vais", "va", "m'engage à", "me charge de") and an optional recipient pronoun.
_COMMIT_FR = re.compile(
    rf"(?:(?P<subj>{NAME}|\b[Jj]e|\b[Oo]n|\b[Nn]ous|\b[Ii]l|\b[Ee]lle)\s+|(?P<subj_j>\b[Jj]{_A})"
    # the plan announced as a cleft: "ce que je vais faire, c'est vous envoyer la note"
    rf"|(?P<subj_plan>\b[Cc]e\s+que\s+(?:je|j{_A}|on)\s*(?:vais|veux|peux|propose\s+de)\s+faire\s*,?\s*c{_A}est"
    rf"(?:\s+de)?)\s+)"
    rf"(?P<modal>(?:vais|va|allons|m{_A}engage\s+à|s{_A}engage\s+à|me\s+charge\s+de|se\s+charge\s+de"
    rf"|m{_A}occupe\s+de|s{_A}occupe\s+de)\s+)?"
    rf"(?:(?P<pron>vous|te|t{_A}|lui|leur|me|m{_A}|nous)\s*)?"
    rf"(?P<verb>(?P<deliver>{_DELIVER})|(?P<social>{_SOCIAL})|(?P<weak>{_WEAK}))\b(?P<rest>[^.;!?]*)"
)
# Someone else's promise, told by the speaker: "Marc m'a dit qu'il enverrait le contrat",
# "Marc a promis de m'envoyer le contrat" (the conditional here reports a promise).
_DELIVER_COND = _forms(
    r"enverrait|enverra|transmettrait|transmettra|ferait\s+suivre|fera\s+suivre|ferait\s+parvenir|partagerait",
    r"préparerait|rédigerait|présenterait|présentera|mettrait\s+en\s+(?:contact|relation)|organiserait",
    r"fournirait|livrerait",
)
_TOLD = rf"(?P<rep>{NAME})\s+(?:(?:m|t|nous|vous){_A}?\s*)?a\s+(?:dit|promis|assuré|confirmé)\s+"
_PRON = rf"(?:(?P<pron>vous|te|t{_A}|lui|leur|me|m{_A}|nous)\s*)?"
_REPORTED_FR = (
    re.compile(rf"{_TOLD}qu{_A}(?:il|elle)\s+{_PRON}(?P<verb>(?P<deliver>{_DELIVER_COND}))\b(?P<rest>[^.;!?]*)"),
    re.compile(rf"{_TOLD}de\s+{_PRON}(?P<verb>(?P<deliver>{_DELIVER}))\b(?P<rest>[^.;!?]*)"),
)
_REPORT_HINT_FR = re.compile(r"\b(?:dit|promis|assuré|confirmé)\b")
_HEDGE_FR = re.compile(
    r"(?<![\w'’])(?:si|peut-être|pourrais|pourrait|pourrions|devrais|devrait|aimerais|voudrais"
    r"|ne|n['’]|jamais|pas|probablement|sans\s+doute|essayer|essaie|essaierai)(?![\w])",
    re.I,
)
_OBJECT_FR = re.compile(
    rf"\s+(?:le|la|les|l{_A}|un|une|des|du|ce|cet|cette|ces|mon|ma|mes|ton|ta|tes|son|sa|ses"
    rf"|notre|nos|votre|vos|leur|leurs|ça"
    rf"|cela|tout|à|{NAME})"
)
_CUT_FR = re.compile(  # a quote mark ends the promise, not the apostrophe of "l'équipe"
    r"(?<![^\W\d_])'|'(?![^\W\d_])|[\"“”«»]|\s+(?:ou|mais|parce\s+que|car|puis)\b"
    r"|,\s*(?:et|mais|donc|puis|ok|d['’]accord)\b"
    r"|\s+(?:d['’]accord|ok|voilà)\s*$"
)
_FILLER_FR = re.compile(
    r"(?:\s+(?:aussi|alors|bientôt|plus\s+tard|tout\s+à\s+l['’]heure|dès\s+que\s+possible"
    r"|rapidement|volontiers))+\s*$"
)
_SMALL_TALK_FR = re.compile(r"\b(?:bisous?|amitiés|salutations|bises|pensées|câlins?|bonjour)\b", re.I)
NEXT_MEETING_FR = re.compile(
    r"\b(?:avant|d['’]ici|pour)\s+(?:notre|la|votre)\s+prochaine?\s+(?:réunion|rendez-vous|point|appel|rencontre"
    r"|séance)\b|\bavant\s+qu['’]on\s+se\s+(?:revoie|reparle)\b|\b(?:pour|avant)\s+la\s+prochaine\s+fois\b",
    re.I,
)
_TO_X = re.compile(rf"\s(?:à|au)\s+(?P<r>{NAME})")


def _subject(ctx: Ctx, m: re.Match) -> Mention | None:
    g = m.groupdict()
    if g.get("rep"):
        return person_fr(ctx, g["rep"])
    if g.get("subj_j") or g.get("subj_plan"):
        return ctx.me()
    raw = g["subj"]
    low = raw.lower()
    if low in ("je", "on", "nous"):
        return ctx.me()
    if low in ("il", "elle"):
        return ctx.antecedent(m.start())
    return person_fr(ctx, raw)


def _recipient(ctx: Ctx, subj: Mention, m: re.Match, promise_end: int) -> Mention | None:
    pron = (m.group("pron") or "").lower().replace("’", "'")
    if pron in ("vous", "te", "t'"):
        return Mention(name="you", kind=ADDRESSEE)
    if pron in ("me", "m'", "nous"):
        return None if subj.is_speaker else ctx.me()
    if pron == "lui":
        return ctx.antecedent(m.start())
    hit = _TO_X.search(ctx.text, m.end("verb"), promise_end)
    if hit:
        person = person_fr(ctx, hit.group("r"))
        if person is not None and not looks_like_org(person.name) and person.name != subj.name:
            return person
    return None


def rule_commitment_fr(ctx: Ctx) -> None:
    matches = list(_COMMIT_FR.finditer(ctx.text, ctx.s0, ctx.s1))
    if _REPORT_HINT_FR.search(ctx.text, ctx.s0, ctx.s1):
        for rx in _REPORTED_FR:
            matches += rx.finditer(ctx.text, ctx.s0, ctx.s1)
    for m in matches:
        g = m.groupdict()
        subj = _subject(ctx, m)
        if subj is None:
            continue
        if _HEDGE_FR.search(ctx.text, ctx.clause_start_at(m.start()), m.start("verb")):
            continue
        verb = " ".join(m.group("verb").split()).lower()
        rest_start = m.end("verb")
        has_object = _OBJECT_FR.match(ctx.text, rest_start) is not None
        if g.get("deliver") and not has_object and not (g.get("pron") and verb.startswith("présent")):
            continue
        dr = ctx.date_for(m.start("verb"), m.end())
        promise_end = m.end()
        if dr is not None:
            for a, _b, _p in ctx.dates():
                if m.start("verb") < a < promise_end:
                    promise_end = a
                    break
        else:
            nxt = NEXT_MEETING_FR.search(ctx.text, m.start("verb"), m.end())
            if nxt:
                dr = DateRange(None, None, nxt.group(0))
                promise_end = nxt.start()
        if (g.get("weak") or g.get("social")) and dr is None:
            continue  # "je vous rappelle", "je regarde ça": no date, no promise
        # The present tense promises only to someone or by a date ("je prépare le budget" is a description).
        if not g.get("modal") and not g.get("rep") and _PRESENT.match(verb) and not g.get("pron") and dr is None:
            continue
        if not g.get("modal") and not g.get("rep") and verb == "présente":
            continue  # "je vous présente Sophie" introduces her now: no promise (offline_fr records it)
        cut = _CUT_FR.search(ctx.text, rest_start, promise_end)
        if cut:
            promise_end = cut.start()
        start = m.start("pron") if g.get("pron") else m.start("verb")
        promise = _FILLER_FR.sub("", ctx.text[start:promise_end]).strip(" ,—–-")
        words = promise.split()
        if len(words) < 2 or len(words) > 16 or _SMALL_TALK_FR.search(promise):
            continue
        due = dr.end or dr.start if dr else None
        before = len(ctx.out)
        ctx.emit(
            "committed_to",
            subj,
            m.start(),
            m.end(),
            literal=" ".join(words),
            dr=dr,
            valid_to=due,
            modality="commitment",
            confidence=0.6 if dr else 0.5,
        )
        if len(ctx.out) > before:
            made = ctx.out[-1]
            made.recipient = _recipient(ctx, subj, m, promise_end)
            if not subj.is_speaker:  # "Marc va vous envoyer le contrat": the speaker's word for Marc's
                made.trust_reasons = (*made.trust_reasons, "second_hand")
