"""Offline rules for French: the relations the English rules find, said in French.

offline.extract sends a sentence here when `looks_french` says so (a count of
French and English function words; no model, no new dependency), and runs
only these rules on it. Same contract as the English rules: quotes are exact
clauses of the utterance, first person is the speaker, dates resolve against
the meeting date (dates/fr.py, with dates/en.py's conventions: "depuis mars" looks
backwards).

works_at: "Marc travaille chez Acme (depuis mars)", "je suis chez Acme",
  "Sophie a rejoint Globex en 2019"; left: "Sophie a quitté Acme l'an dernier";
  with a title: "Sophie est la DSI de Globex", "Claire est directrice financière
  chez Acme", "Sophie Martin, directrice générale d'Acme,", "la DSI d'Acme, c'est
  Sophie Martin"; a former title ("l'ancienne DSI de", "ex-PDG de") means left.
worked_with: "j'ai travaillé avec Marc chez Acme de 2016 à 2021", "Marc et moi
  avons travaillé ensemble", "Sophie a travaillé avec Paul", "Paul était mon
  ancien collègue", "mon ancienne collègue Sophie".
knows: "je connais bien Sophie", "Marc connaît Sophie", "j'ai rencontré Sophie",
  "Sophie est une amie", "mon ami Paul"; "Marc m'a présenté Sophie" (me knows
  Sophie, Marc knows Sophie, Marc introduced Sophie); "je vous présente Sophie"
  (the speaker knows and introduces Sophie).
Commitments are in rules/fr/commitments.py.
Negated, conditional or questioned sentences ("je ne connais pas", "si je
connaissais") yield nothing.
"""

from __future__ import annotations

import re
from dataclasses import replace

from backchannel.extraction.dates.fr import find_date_phrases_fr
from backchannel.extraction.mentions.names import NAME, NAME_RX
from backchannel.extraction.mentions.names_fr import ORG_FR, org_fr, person_fr
from backchannel.extraction.result import Mention
from backchannel.extraction.rules.claim_words import HEARSAY_FR
from backchannel.extraction.rules.core import Ctx
from backchannel.extraction.rules.fr.commitments import rule_commitment_fr
from backchannel.extraction.stance_effects import apply_stance
from backchannel.memory.text import norm_name

__all__ = ["FrCtx", "looks_french", "marker_counts", "run_french_rules"]

# Words that only French uses often; and their English counterparts. A sentence is
# French when it has at least two French markers and more of them than English ones,
# English when the reverse holds; in between, the utterance decides. Names are taken
# out first: "Élodie de la Fontaine left Acme" is English.
_FR_WORDS = frozenset(
    """
je tu il elle nous vous ils elles est suis sont était avons avez ont ai avec chez dans pour pas une des les du au aux
qui que mais et on très bien aussi connais connaît connait travaille merci bonjour oui non le la de ce cette mon ma
mes vais va depuis ici sur par ça ensemble envoie enverrai présente ancien ancienne dernier dernière prochain
prochaine en un à y rejoint devenu devenue envoyer nommé nommée dirige dirigeait fondé cofondé
aurait serait apparemment paraît
j' l' d' m' t' n' s' c' qu'
""".split()
)
_EN_WORDS = frozenset(
    """
the is are was were i you we with for and at of to in have has it that this will my our be been he she they from on
as by an a i' ll ve re
""".split()
)
# Words with the apostrophe kept on the elided part: "j'ai" -> "j'", "ai"; "I'll" -> "i'", "ll".
_TOKENS = re.compile(r"\w+'?")
# A French accent inside a lowercase word ("quitté", "réunion"), not a name's capital ("Élodie").
_ACCENT = re.compile(r"(?<=[a-z])[éèêàùçœâîô]")
_NAME_RUN = re.compile(
    r"[A-ZÀ-Ý][\w'’-]*(?:(?:\s+(?:de|la|le|du|des|van|von|da|di|del|della|der|den))+\s+[A-ZÀ-Ý][\w'’-]*)+"
)
_PARTICLES = re.compile(r" (?:de|la|le|du|des|van|von|da|di|del|der|den) ")


def marker_counts(text: str) -> tuple[int, int]:
    """(French markers, English markers) in a sentence: distinct marker words, and French
    accents inside lowercase words; names with particles taken out first."""
    if _PARTICLES.search(text):
        text = _NAME_RUN.sub("X", text)
    words = set(_TOKENS.findall(text.lower().replace("’", "'")))
    fr = len(_FR_WORDS & words)
    en = len(_EN_WORDS & words)
    if not text.isascii():
        fr += len(_ACCENT.findall(text))
    return fr, en


def looks_french(text: str) -> bool | None:
    """Whether a sentence (as written, not lowercased) is French: True, False, or None
    when it is too short to tell (the caller then asks about the whole utterance).
    Counts distinct marker words with set operations (C speed: ~1 ms per 8k words)."""
    fr, en = marker_counts(text)
    if fr >= 2 and fr > en:
        return True
    if en >= 2 and en >= fr:
        return False
    return None


# A capitalised name right after one of these is an organisation ("a quitté Globex", "chez Acme").
_ORG_BEFORE_FR = re.compile(r"(?:\b(?:chez|pour|de|du|des|quitté|rejoint|intégré|à|au|sur)\s+|\bd['’])$", re.I)


_SENTENCE_START = re.compile(r"(?:^|[.!?]\s*)$")
_ELIDED_LEAD = re.compile(r"^(?:[CcLlDdJjSs]|[Qq]u)['’]\w*\s+")
_BUT_FR = re.compile(r"\s*,?\s+mais\b", re.I)
# Across turns only a full name counts, and not one in an organisation's slot ("chez Acme").
_ORG_SLOT_FR = re.compile(r"\b(?:chez|pour|quitté|rejoint|intégré|sur)\s+$", re.I)


class FrCtx(Ctx):
    """A French sentence: its date phrases are French ones (resolved by dates.resolve_phrase),
    and 'il'/'elle'/'le'/'la' point at the one person named before, organisations left out."""

    def dates(self) -> list[tuple[int, int, str]]:
        if self._dates is None:
            self._dates = [(self.s0 + a, self.s0 + b, p) for a, b, p in find_date_phrases_fr(self.sent)]
        return self._dates

    def quote_span(self, start: int, end: int) -> tuple[int, int]:
        """The clause around the match, ended by 'mais' too: what follows it is another claim ("je le
        connais de nom, mais je ne l'ai jamais rencontré" quotes no negation)."""
        a, b = super().quote_span(start, end)
        but = _BUT_FR.search(self.text, end, b)
        return (a, but.start()) if but else (a, b)

    def antecedent(self, pos: int) -> Mention | None:
        found: dict[str, Mention] = {}
        for m in NAME_RX.finditer(self.text, max(0, pos - 500), pos):
            if _ORG_BEFORE_FR.search(self.text, max(0, m.start() - 12), m.start()):
                continue
            if " " not in m.group(0) and _SENTENCE_START.search(self.text, max(0, m.start() - 3), m.start()):
                continue  # "Apparemment il rejoint…": a capital opening the sentence, no name
            p = person_fr(self, m.group(0))
            if p is not None and not p.is_speaker:
                found[norm_name(p.name)] = p
        if not found and self.context_before:  # "Guillaume Texier ?" / "Apparemment il rejoint Michelin"
            for m in NAME_RX.finditer(self.context_before):
                if _ORG_SLOT_FR.search(self.context_before, max(0, m.start() - 12), m.start()):
                    continue
                p = person_fr(self, _ELIDED_LEAD.sub("", m.group(0)))  # "C'est Julien Moreau qui…"
                if p is not None and not p.is_speaker and len(p.name.split()) > 1:
                    found[norm_name(p.name)] = p
        return next(iter(found.values())) if len(found) == 1 else None


def _subject(ctx: Ctx, m: re.Match) -> Mention | None:
    """First person ('je', "j'", 'moi'), 'il'/'elle' (the one person named before), or a name."""
    raw = m.group("subj")
    low = raw.lower().replace("’", "'")
    if low in ("je", "j'", "moi"):
        return ctx.me()
    if low in ("il", "elle"):
        return ctx.antecedent(m.start())
    return person_fr(ctx, raw)


# No fact from a negated, conditional or doubtful clause.
_NEG = re.compile(
    r"(?<![\w'’])(?:ne|n['’]|jamais|si|s['’]il|peut-être|pourrais|pourrait|aurais|aurait|serais"
    r"|serait|sais\s+pas|crois\s+pas|pense\s+pas)(?![\w])",
    re.I,
)


_REPORTED_COND = re.compile(r"^(?:serait|aurait)$", re.I)


def _negated(ctx: Ctx, start: int, end: int) -> bool:
    # hearsay ("il paraît que", "apparemment", "selon X"): the conditional there reports a rumour
    # ("Fabrice serait parti de chez Airbus"), it does not make the clause hypothetical
    hearsay = HEARSAY_FR.search(ctx.text, ctx.s0, end) is not None
    return any(
        not (hearsay and _REPORTED_COND.match(m.group(0)))
        for m in _NEG.finditer(ctx.text, ctx.clause_start_at(start), end)
    )


_A = r"['’]"
_SUBJ = rf"(?:(?P<subj>{NAME}|\b[Jj]e|\b[Ii]l|\b[Ee]lle)\s+|(?P<subj_j>\b[Jj]{_A}))"


# ---------------------------------------------------------------- titles and employment

# French titles and the canonical (English) qualifier they store; longest first when matched.
_TITLES_FR = {
    "directeur des systèmes d'information": "CIO",
    "directrice des systèmes d'information": "CIO",
    "directeur général": "managing director",
    "directrice générale": "managing director",
    "directeur financier": "CFO",
    "directrice financière": "CFO",
    "directeur technique": "CTO",
    "directrice technique": "CTO",
    "directeur commercial": "sales director",
    "directrice commerciale": "sales director",
    "directeur marketing": "marketing director",
    "directrice marketing": "marketing director",
    "directeur des ressources humaines": "HR director",
    "directrice des ressources humaines": "HR director",
    "directeur informatique": "CIO",
    "directrice informatique": "CIO",
    "directeur juridique": "general counsel",
    "directrice juridique": "general counsel",
    "directeur des achats": "purchasing director",
    "directrice des achats": "purchasing director",
    "directeur": "director",
    "directrice": "director",
    "président-directeur général": "CEO",
    "présidente-directrice générale": "CEO",
    "président": "president",
    "présidente": "president",
    "fondateur": "founder",
    "fondatrice": "founder",
    "cofondateur": "co-founder",
    "cofondatrice": "co-founder",
    "co-fondateur": "co-founder",
    "co-fondatrice": "co-founder",
    "chef de projet": "project manager",
    "cheffe de projet": "project manager",
    "associé": "partner",
    "associée": "partner",
    "responsable des achats": "head of purchasing",
    "responsable commercial": "head of sales",
    "responsable commerciale": "head of sales",
    "responsable marketing": "head of marketing",
    "responsable informatique": "head of IT",
    "responsable grands comptes": "key account manager",
    "DSI": "CIO",
    "PDG": "CEO",
    "P-DG": "CEO",
    "DG": "managing director",
    "DAF": "CFO",
    "DRH": "HR director",
    "CEO": "CEO",
    "CTO": "CTO",
    "CIO": "CIO",
    "CFO": "CFO",
    "COO": "COO",
    "CMO": "CMO",
}
_TITLE_RX = "|".join(
    re.escape(t).replace("\\ ", r"\s+").replace("'", "['’]") for t in sorted(_TITLES_FR, key=len, reverse=True)
)
_TITLE = rf"(?P<title>(?:{_TITLE_RX}))"
_ART = rf"(?:(?:le|la|l{_A}|un|une|notre|leur)\s*)?"
_FORMER = r"(?P<former>ancien(?:ne)?\s+|ex-?\s*)?"
_NEW = r"(?:nouveau\s+|nouvelle\s+|actuel(?:le)?\s+)?"
_OF = rf"(?:\s+(?:de|du|des|chez|pour|à|au)\s+(?:la\s+|l{_A})?|\s+d{_A}\s*)"
_COPULA = (
    r"(?P<cop>est|suis|était|étais|est\s+devenue?|suis\s+devenue?|est\s+maintenant|est\s+désormais"
    r"|est\s+actuellement|est\s+toujours|a\s+été\s+nommée?|vient\s+d['’]être\s+nommée?)"
)
_IS_TITLE = re.compile(rf"{_SUBJ}{_COPULA}\s+{_ART}{_FORMER}{_NEW}{_TITLE}{_OF}(?P<org>{ORG_FR})")
_APPOS_TITLE = re.compile(rf"(?P<x>{NAME})\s*,\s*{_ART}{_FORMER}{_NEW}{_TITLE}{_OF}(?P<org>{ORG_FR})")
_TITLE_IS = re.compile(
    rf"\b(?:[Ll]e|[Ll]a|[Ll]{_A})\s*{_FORMER}{_NEW}{_TITLE}{_OF}(?P<org>{ORG_FR})\s*,?\s+"
    rf"(?:c{_A}est|est|s{_A}appelle)\s+(?P<x>{NAME})"
)
_EMPLOY = re.compile(
    rf"{_SUBJ}(?:(?P<verb>travaille|bosse|est|suis|travaillait|bossait|était|étais|ai\s+travaillé|a\s+travaillé"
    rf"|a\s+rejoint|ai\s+rejoint|a\s+intégré|ai\s+intégré|est\s+entrée?|suis\s+entrée?|a\s+quitté|ai\s+quitté"
    rf"|est\s+partie?|suis\s+partie?|dirige|dirigeait|ai\s+dirigé|a\s+dirigé|a\s+fondé|ai\s+fondé|a\s+cofondé"
    rf"|ai\s+cofondé|a\s+créé|ai\s+créé|rejoint|rejoins|rejoindra|rejoindrai|va\s+rejoindre|vais\s+rejoindre"
    rf"|serait\s+partie?|aurait\s+quitté|aurait\s+rejoint|ai\s+fait\s+(?:un|mon|une|mon)\s+(?:stage|alternance)"
    rf"|a\s+fait\s+(?:un|son|une)\s+(?:stage|alternance))\s+(?:maintenant\s+|actuellement\s+|toujours\s+"
    rf"|désormais\s+|aussi\s+|longtemps\s+)*(?P<prep>chez|pour|de\s+chez)?\s*(?:(?:la|le|l{_A})\s*)?(?P<org>{ORG_FR})"
    rf"(?:\s+(?:comme|en\s+tant\s+que)\s+{_ART}{_TITLE})?)"
)


# For the news register (news.py): the same lexicon and "of".
FR_TITLES, FR_TITLE, FR_OF = _TITLES_FR, _TITLE, _OF


def _emit_title(ctx: FrCtx, subj: Mention, m: re.Match) -> None:
    org = org_fr(ctx, m.group("org"))
    if org is None:
        return
    surface = " ".join(m.group("title").replace("’", "'").split())
    canon = _TITLES_FR.get(surface) or _TITLES_FR.get(surface.lower()) or surface.lower()
    cop = (m.groupdict().get("cop") or "").lower()
    started = "devenu" in cop or "nommé" in cop
    past = cop.startswith("étai")
    dr = ctx.date_for(m.start(), m.end(), past=True)
    o = Mention(org, "organisation")
    conf = 0.7 if subj.is_speaker else 0.65
    if m.group("former") or past and not (dr and dr.end):
        ctx.emit(
            "left",
            subj,
            m.start(),
            m.end(),
            obj=o,
            qualifier=canon,
            dr=dr,
            valid_to=dr.end if dr else None,
            confidence=conf - 0.1,
        )
        return
    valid_from = dr.start if dr else None
    valid_to = dr.end if dr and past else None
    if dr and not past and not started and dr.end is not None:
        valid_from = None  # "est DSI d'Acme depuis mars" opens a range; a point dates the saying
    ctx.emit(
        "works_at",
        subj,
        m.start(),
        m.end(),
        obj=o,
        qualifier=canon,
        dr=dr,
        valid_from=valid_from,
        valid_to=valid_to,
        confidence=conf,
    )


_SELF_INTRO = re.compile(rf"(?:\b[Jj]e\s+suis|\b[Jj]e\s+m{_A}appelle|\b[Mm]oi\s*,?\s+c{_A}est)\s+$")


# A title with no organisation: "je suis cheffe de projet", "Je suis Claire Martin, directrice commerciale"
# (the speaker's), "notre directrice générale, Amélie Roussel" (a colleague's). With an organisation
# after it the employment rules above own the title.
_NO_ORG_AFTER = rf"(?!{_OF}(?:{ORG_FR}))(?![\w-])"
_NOW_ADV = r"(?:(?:juste|simplement|seulement|actuellement|maintenant|désormais|aujourd['’]hui|toujours)\s+)?"
_I_AM_TITLE = re.compile(rf"\b[Jj]e\s+suis\s+{_NOW_ADV}(?:(?P<x>{NAME})\s*,\s*)?{_ART}{_TITLE}{_NO_ORG_AFTER}")
_POSS_TITLE_X = re.compile(rf"\b(?:[Nn]otre|[Ll]eur|[Mm]on|[Mm]a)\s+{_NEW}{_TITLE}\s*,\s*(?P<x>{NAME})")


def _title_literal(m: re.Match) -> str:
    surface = " ".join(m.group("title").replace("’", "'").split())
    return surface if surface.isupper() else surface.lower()


def rule_title_only_fr(ctx: FrCtx) -> None:
    """'je suis cheffe de projet' -> the speaker has_title; 'notre directrice générale, Amélie Roussel'."""
    me = ctx.me()
    for m in _I_AM_TITLE.finditer(ctx.text, ctx.s0, ctx.s1):
        if me is not None and not _negated(ctx, m.start(), m.end()):
            ctx.emit("has_title", me, m.start(), m.end(), literal=_title_literal(m), confidence=0.6)
    for m in _POSS_TITLE_X.finditer(ctx.text, ctx.s0, ctx.s1):
        who = person_fr(ctx, m.group("x"))
        if who is not None and not who.is_speaker and not _negated(ctx, m.start(), m.end()):
            ctx.emit("has_title", who, m.start(), m.end(), literal=_title_literal(m), confidence=0.55)


_TITLE_THERE = re.compile(rf"{_SUBJ}{_COPULA}\s+{_ART}{_FORMER}{_NEW}{_TITLE}\s+(?:là-bas|là)\b")
_ORG_SAID_FR = re.compile(rf"\b(?:chez|pour|à)\s+(?:(?:la|le|l{_A})\s*)?(?P<org>{ORG_FR})")


def _org_there(ctx: FrCtx) -> str | None:
    """Where 'là-bas' points: the one organisation said after chez/pour/à in the turns just before."""
    orgs = {o for o in (org_fr(ctx, m.group("org")) for m in _ORG_SAID_FR.finditer(ctx.context_before)) if o}
    return orgs.pop() if len(orgs) == 1 else None


def rule_titles_fr(ctx: FrCtx) -> None:
    for m in _TITLE_THERE.finditer(ctx.text, ctx.s0, ctx.s1):
        subj = _subject(ctx, m) if m.group("subj") else ctx.me()
        org = _org_there(ctx)
        if subj is None or org is None or _negated(ctx, m.start(), m.end()):
            continue
        surface = " ".join(m.group("title").replace("’", "'").split())
        canon = _TITLES_FR.get(surface) or _TITLES_FR.get(surface.lower()) or surface.lower()
        left = bool(m.group("former")) or m.group("cop").lower().startswith("étai")
        ctx.emit(
            "left" if left else "works_at",
            subj,
            m.start(),
            m.end(),
            obj=Mention(org, "organisation"),
            qualifier=canon,
            confidence=0.55,
        )
    rule_title_only_fr(ctx)
    for m in _IS_TITLE.finditer(ctx.text, ctx.s0, ctx.s1):
        subj = _subject(ctx, m) if m.group("subj") else ctx.me()
        if subj is not None and not _negated(ctx, m.start(), m.end()):
            _emit_title(ctx, subj, m)
    for rx in (_APPOS_TITLE, _TITLE_IS):
        for m in rx.finditer(ctx.text, ctx.s0, ctx.s1):
            subj = person_fr(ctx, m.group("x"))
            said_by_self = rx is _APPOS_TITLE and _SELF_INTRO.search(ctx.text, max(0, m.start() - 20), m.start())
            if subj is not None and said_by_self:
                subj = ctx.me()  # "je suis Léa, directrice financière d'Orano": the speaker
            if subj is not None and not _negated(ctx, m.start(), m.end()):
                _emit_title(ctx, subj, m)


def rule_employ_fr(ctx: FrCtx) -> None:
    for m in _EMPLOY.finditer(ctx.text, ctx.s0, ctx.s1):
        subj = _subject(ctx, m) if m.group("subj") else ctx.me()
        verb = " ".join(m.group("verb").split())
        if subj is None or _negated(ctx, m.start(), m.end()):
            continue
        if verb in ("est", "suis", "était", "étais") and m.group("prep") != "chez":
            continue  # "Sophie est Acme" is no employment; "est chez Acme" is
        if not m.group("prep") and not any(
            v in verb for v in ("rejoin", "intégré", "quitté", "dirig", "fondé", "créé")
        ):
            continue
        org = org_fr(ctx, m.group("org"))
        if org is None:
            continue
        o = Mention(org, "organisation")
        dr = ctx.date_for(m.start(), m.end(), past=True)
        conf = 0.7 if subj.is_speaker else 0.65
        said_title = m.group("title")
        if said_title:  # "je suis chez Lydia comme directeur juridique", "il rejoint Michelin comme CTO"
            surface = " ".join(said_title.replace("’", "'").split())
            said_title = _TITLES_FR.get(surface) or _TITLES_FR.get(surface.lower()) or surface.lower()
        if "stage" in verb or "alternance" in verb:  # "j'ai fait un stage chez Ubisoft en 2014": a past post
            ctx.emit(
                "works_at",
                subj,
                m.start(),
                m.end(),
                obj=o,
                qualifier="intern",
                dr=dr,
                valid_from=dr.start if dr else None,
                valid_to=(dr.end if dr else None) or ctx.anchor,
                confidence=conf - 0.05,
            )
            continue
        if any(v in verb for v in ("dirig", "fondé", "créé")):  # "Marc dirige Acme", "Sophie a fondé Hooli"
            title = "head" if "dirig" in verb else "co-founder" if "cofondé" in verb else "founder"
            ended = verb in ("dirigeait",) or "dirigé" in verb
            ctx.emit(
                "left" if ended else "works_at",
                subj,
                m.start(),
                m.end(),
                obj=o,
                qualifier=title,
                dr=dr,
                valid_from=None if ended else (dr.start if dr else None),
                valid_to=(dr.end if dr else None) if ended else None,
                confidence=conf - 0.05,
            )
            continue
        if "quitté" in verb or "parti" in verb:
            ctx.emit("left", subj, m.start(), m.end(), obj=o, dr=dr, valid_to=dr.point if dr else None, confidence=conf)
        elif "travaillé" in verb or verb in ("travaillait", "bossait", "était", "étais"):
            if dr and dr.end:
                ctx.emit(
                    "works_at",
                    subj,
                    m.start(),
                    m.end(),
                    obj=o,
                    dr=dr,
                    valid_from=dr.start,
                    valid_to=dr.end,
                    confidence=conf,
                )
            else:
                ctx.emit("left", subj, m.start(), m.end(), obj=o, dr=dr, valid_to=None, confidence=conf - 0.1)
        else:
            started = any(v in verb for v in ("rejoin", "intégré", "entré"))
            valid_from = dr.start if dr and (started or dr.end is None) else None
            ctx.emit(
                "works_at",
                subj,
                m.start(),
                m.end(),
                obj=o,
                qualifier=said_title,
                dr=dr,
                valid_from=valid_from,
                confidence=conf,
            )


# ---------------------------------------------------------------- people

_AT_ORG = rf"(?:\s+(?:chez|à|pour)\s+(?P<org>{ORG_FR}))?"
_ADV_FR = r"(?:(?:déjà|longtemps|beaucoup|souvent|aussi|autrefois|ensemble)\s+)*"
_I_WORKED_WITH = re.compile(
    rf"\b[Jj]{_A}(?:ai|avais)\s+{_ADV_FR}travaillé\s+{_ADV_FR}(?:avec|aux\s+côtés\s+de)\s+(?P<x>{NAME}){_AT_ORG}"
)
_X_AND_ME = re.compile(
    rf"(?P<x>{NAME})\s+et\s+moi\s*,?\s+(?:nous\s+)?(?:avons|avions|on\s+a|on\s+avait)\s+{_ADV_FR}travaillé"
    rf"\s+{_ADV_FR}ensemble{_AT_ORG}"
)
_WE_TOGETHER = re.compile(
    rf"\b(?:[Nn]ous\s+avons|[Nn]ous\s+avions|[Oo]n\s+a|[Oo]n\s+avait)\s+{_ADV_FR}travaillé\s+ensemble{_AT_ORG}"
)
# "Sophie a travaillé avec Paul", "(Julien m'a raconté) qu'il avait travaillé avec Rachida Dati": "il"/"elle"
# is the one person named before (FrCtx.antecedent).
_X_WITH_Y = re.compile(
    rf"(?P<x>{NAME}|\b[Ii]l|\b[Ee]lle)\s+(?:a|avait)\s+{_ADV_FR}travaillé\s+{_ADV_FR}avec\s+(?P<y>{NAME}){_AT_ORG}"
)
_TIE_M = r"(?:collègue|patron|chef|manager|associé|boss|mentor)"
_TIE_F = r"(?:collègue|patronne|cheffe|manager|associée|boss|mentor)"
_X_MY_TIE = re.compile(
    rf"(?P<x>{NAME})\s+(?:était|est|a\s+été)\s+(?:mon\s+(?:ancien\s+)?{_TIE_M}"
    rf"|ma\s+(?:ancienne\s+)?{_TIE_F}|mon\s+ancienne\s+{_TIE_F}){_AT_ORG}"
)
_MY_TIE_X = re.compile(
    rf"\b(?:[Mm]on\s+(?:ancien\s+|ancienne\s+)?{_TIE_M}|[Mm]a\s+(?:ancienne\s+)?{_TIE_F})\s*,?\s+"
    rf"(?P<x>{NAME}){_AT_ORG}"
)
_FRIEND_X = re.compile(
    rf"\b(?:[Mm]on\s+(?:vieil\s+|vieux\s+|grand\s+|meilleur\s+)?ami|[Mm]on\s+amie|[Mm]a\s+"
    rf"(?:vieille\s+|grande\s+|meilleure\s+)?amie|[Mm]on\s+pote"
    rf"|[Mm]a\s+(?:petite\s+|grande\s+)?(?:sœur|soeur|cousine|femme|compagne|voisine|belle-sœur|tante|nièce|fille|mère)"
    rf"|[Mm]on\s+(?:petit\s+|grand\s+)?(?:frère|cousin|mari|compagnon|voisin|beau-frère|oncle|neveu|fils|père))"
    rf"\s*,?\s+(?P<x>{NAME})"
)
# Having studied or lived together ("on a fait HEC ensemble", "on était en prépa ensemble", "on s'est
# connus à la fac"): the speaker knows the one person named (here, or said by il/elle, or just before).
_TOGETHER_FR = re.compile(
    r"\b(?:[Oo]n\s+(?:a\s+fait|avait\s+fait|était|a\s+étudié|a\s+grandi|a\s+vécu)|[Nn]ous\s+(?:avons\s+fait"
    r"|étions|avons\s+étudié|avons\s+grandi))\s+(?:[^.;!?]{0,40}?\s)?ensemble\b"
    r"|\b(?:[Oo]n\s+s['’]est|[Nn]ous\s+nous\s+sommes)\s+(?:connue?s?|rencontrée?s?)\b"
)
# Knowing only the name: "je le connais de nom", "je connais son nom", "je connais Xavier Niel de nom".
_BY_NAME_FR = re.compile(r"\bde\s+nom\b|\bconna(?:is|issais)\s+(?:son|leur)\s+nom\b|\bde\s+réputation\b")
_I_KNOW_THE_NAME = re.compile(r"\b[Jj]e\s+conna(?:is|issais)\s+(?:son|leur)\s+nom\b")
_X_FRIEND = re.compile(
    rf"(?P<x>{NAME})\s+(?:est|était)\s+(?:un|une)\s+(?:bon(?:ne)?\s+|vieil(?:le)?\s+|vieux\s+"
    rf"|grand(?:e)?\s+|très\s+bon(?:ne)?\s+)?ami(?:e)?\b"
)
_I_KNOW = re.compile(
    rf"\b[Jj]e\s+conna(?:is|issais)\s+(?:bien\s+|très\s+bien\s+|personnellement\s+"
    rf"|un\s+peu\s+|depuis\s+longtemps\s+)?(?P<x>{NAME})"
)
# "Je le connais (bien)": the one person named just before.
_I_KNOW_HIM = re.compile(r"\b[Jj]e\s+(?:le|la|l['’])\s*conna(?:is|issais)\b")
_X_KNOWS = re.compile(rf"(?P<s>{NAME})\s+conna[iî]t\s+(?:bien\s+|très\s+bien\s+|personnellement\s+)?(?P<x>{NAME})")
_I_MET = re.compile(rf"\b[Jj]{_A}ai\s+(?:déjà\s+|d['’]ailleurs\s+)?rencontré\s+(?P<x>{NAME})")
_INTRODUCED_ME = re.compile(rf"(?P<s>{NAME})\s+m{_A}a\s+présentée?\s+(?:à\s+)?(?P<x>{NAME})")
_I_PRESENT = re.compile(rf"\b[Jj]e\s+(?:vous|te)\s+présente\s+(?P<x>{NAME})")


def _worked(ctx: FrCtx, a: Mention, b: Mention, m: re.Match, conf: float) -> None:
    if _negated(ctx, m.start(), m.end()):
        return
    org = org_fr(ctx, m.groupdict().get("org"))
    dr = ctx.date_for(m.start(), m.end(), past=True)
    ctx.emit(
        "worked_with",
        a,
        m.start(),
        m.end(),
        obj=b,
        qualifier=org,
        dr=dr,
        valid_from=dr.start if dr else None,
        valid_to=dr.end if dr else None,
        confidence=conf,
    )


def rule_people_fr(ctx: FrCtx) -> None:
    me = ctx.me()
    t0, t1 = ctx.s0, ctx.s1
    if me is not None:
        for rx, conf in ((_I_WORKED_WITH, 0.7), (_X_AND_ME, 0.7), (_X_MY_TIE, 0.65), (_MY_TIE_X, 0.65)):
            for m in rx.finditer(ctx.text, t0, t1):
                other = person_fr(ctx, m.group("x"))
                if other is not None:
                    _worked(ctx, me, other, m, conf)
        for m in _WE_TOGETHER.finditer(ctx.text, t0, t1):
            other = ctx.the_one_person(max(0, t0 - 500), m.start()) or ctx.the_one_person(m.end(), t1)
            if other is not None and person_fr(ctx, other.name):
                _worked(ctx, me, other, m, 0.65)
        for rx, conf in ((_I_KNOW, 0.65), (_I_MET, 0.6), (_FRIEND_X, 0.65), (_X_FRIEND, 0.65), (_I_PRESENT, 0.65)):
            for m in rx.finditer(ctx.text, t0, t1):
                other = person_fr(ctx, m.group("x"))
                if other is None or _negated(ctx, m.start(), m.end()):
                    continue
                dr = ctx.date_for(m.start(), m.end(), near=30, past=True)
                ctx.emit(
                    "knows",
                    me,
                    m.start(),
                    m.end(),
                    obj=other,
                    dr=dr,
                    valid_from=dr.start if dr else None,
                    confidence=conf,
                )
                if rx is _I_PRESENT:
                    ctx.emit("introduced", me, m.start(), m.end(), obj=other, confidence=0.65)
        for m in (*_I_KNOW_HIM.finditer(ctx.text, t0, t1), *_I_KNOW_THE_NAME.finditer(ctx.text, t0, t1)):
            other = ctx.antecedent(m.start())
            if other is not None and not _negated(ctx, m.start(), m.end()):
                ctx.emit("knows", me, m.start(), m.end(), obj=other, confidence=0.55)
        for m in _TOGETHER_FR.finditer(ctx.text, t0, t1):
            if _negated(ctx, m.start(), m.end()) or re.search(r"travaill|boss", m.group(0)):
                continue
            # named before the words ("à Lyon" after them is a place), else the one person just before
            other = ctx.the_one_person(t0, m.start())
            other = other if other is not None and person_fr(ctx, other.name) else ctx.antecedent(m.start())
            if other is not None:
                ctx.emit("knows", me, m.start(), m.end(), obj=other, confidence=0.55)
    for m in _X_WITH_Y.finditer(ctx.text, t0, t1):
        x = m.group("x")
        a = ctx.antecedent(m.start()) if x.lower() in ("il", "elle") else person_fr(ctx, x)
        b = person_fr(ctx, m.group("y"))
        if a and b:
            _worked(ctx, a, b, m, 0.6)
    for m in _X_KNOWS.finditer(ctx.text, t0, t1):
        a, b = person_fr(ctx, m.group("s")), person_fr(ctx, m.group("x"))
        if a and b and not _negated(ctx, m.start(), m.end()):
            ctx.emit("knows", a, m.start(), m.end(), obj=b, confidence=0.65)
    for m in _INTRODUCED_ME.finditer(ctx.text, t0, t1):
        intro, other = person_fr(ctx, m.group("s")), person_fr(ctx, m.group("x"))
        if not (intro and other and me) or _negated(ctx, m.start(), m.end()):
            continue
        span = (m.start(), m.end())
        ctx.emit("knows", me, *span, obj=other, confidence=0.65)
        ctx.emit("knows", intro, *span, obj=other, confidence=0.6)
        ctx.emit("introduced", intro, *span, obj=other, confidence=0.65)


def run_french_rules(ctx: FrCtx) -> None:
    """Every French rule on one sentence (each is a handful of regex scans)."""
    if ctx.sent.rstrip().endswith("?"):
        return
    before = len(ctx.out)
    rule_titles_fr(ctx)
    rule_employ_fr(ctx)
    rule_people_fr(ctx)
    rule_commitment_fr(ctx)
    if HEARSAY_FR.search(ctx.sent):
        ctx.out[before:] = [replace(a, stance="rumour") for a in ctx.out[before:]]
    if _BY_NAME_FR.search(ctx.sent):
        ctx.out[before:] = [replace(a, stance="knows_of") if a.predicate == "knows" else a for a in ctx.out[before:]]
    # what each stance does, as for every extractor: a rumour is hedged, knowing of someone is no tie
    ctx.out[before:] = [a for a in map(apply_stance, ctx.out[before:]) if a is not None]
