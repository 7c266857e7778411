"""English and French in one sentence: which clause is in which language, and the English
clause read with its French function words glossed.

Bilingual speakers switch inside a sentence ("J'ai quitté AXA en 2022, and now I'm at Alan",
"Je m'en charge: I'll send Lucas the guide ce soir"). `language_runs` cuts a sentence at
commas, colons, semicolons, dashes and before a conjunction, gives each clause a language
(its subject pronoun first, "I'll" or "je", else the marker-word count of `looks_french`),
lets a clause too short to tell join its neighbour, and merges neighbours of one language:
offline.extract then runs the French rules on the French runs and the English rules on the
English ones. An English clause keeps French prepositions ("I worked with X chez Accenture",
"We worked together chez Safran"): `gloss` rewrites them, in English runs only, with an
English word of the same length or shorter, padded with spaces, so every offset still
points at the same character of the utterance and quotes are taken from the original text.
"""

from __future__ import annotations

import re

from backchannel.extraction.dates.en import find_date_phrases
from backchannel.extraction.dates.fr import find_date_phrases_fr
from backchannel.extraction.dates.ja import is_japanese
from backchannel.extraction.rules.core import Ctx
from backchannel.extraction.rules.fr.relations import FrCtx, looks_french, marker_counts

__all__ = ["EnglishClauseCtx", "FrenchClauseCtx", "english_frame", "gloss", "language_runs"]

# Where a clause ends: punctuation inside the sentence, or just before a conjunction.
_CUT = re.compile(r"\s*[,;:]\s+|\s+[—–]\s+|\s+(?=(?:and|but|so|because|mais|et|donc|car|parce)\s)", re.I)
# A subject pronoun (after a discourse word or a name) says the clause's frame.
_EN_SUBJECT = re.compile(
    r"\b(?:I|I['’](?:m|ll|ve|d)|we|we['’](?:re|ll|ve)|she|he|they|she['’]s|he['’]s|they['’](?:re|ll)"
    r"|it['’]s|you['’](?:ll|re))(?![\w'’])"
)
# A French subject opens its clause, after a discourse word at most ("Bon, je…", "Apparemment il…");
# "on" only before what follows it in French ("on a fait", "on était"), English "on" being a
# preposition ("we worked on a prototype").
_FR_SUBJECT = re.compile(
    r"^(?:(?:et|mais|donc|puis|alors|bon|oui|non|ah|ben|enfin|bref|franchement|apparemment|honnêtement"
    r"|sinon|après|ensuite|depuis)\s+)*"
    r"(?:je\b|j['’]|il\b|elle\b|nous\b|ils\b|elles\b|c['’]est\b|tu\b"
    r"|on\s+(?:a|avait|était|est|va|peut|fait|se|s['’]|en|y|ne|n['’]|l['’]|les|le|la)\b)",
    re.I,
)


def _clause_language(text: str) -> str | None:
    text = text.strip()
    en_subj = _EN_SUBJECT.search(text)
    fr_subj = _FR_SUBJECT.match(text)
    if en_subj and not (fr_subj and fr_subj.end() <= en_subj.start()):
        return "en"
    if fr_subj:
        return "fr"
    verdict = looks_french(text)
    return None if verdict is None else "fr" if verdict else "en"


def language_runs(text: str, s0: int, s1: int, default: str) -> list[tuple[int, int, str]]:
    """text[s0:s1] as (start, end, 'en' | 'fr') runs covering it, in order; one run when the
    sentence keeps to one language. A clause that does not tell (a name, "Écoute", "genre
    quatre ans") joins the run before it, else the one after, else takes `default`."""
    if marker_counts(text[s0:s1])[0] < 2:
        return [(s0, s1, default)]  # no French to speak of: one run ("we worked on a prototype")
    clauses: list[list] = []
    start = s0
    for m in _CUT.finditer(text, s0, s1):
        if m.start() > start:
            clauses.append([start, m.start(), _clause_language(text[start : m.start()])])
        start = m.start() if m.group(0).strip() == "" else m.end()
    if s1 > start:
        clauses.append([start, s1, _clause_language(text[start:s1])])
    if not clauses:
        return [(s0, s1, default)]
    told = [c[2] for c in clauses if c[2]]
    if not told:
        return [(s0, s1, default)]
    for i, c in enumerate(clauses):
        if c[2] is None:
            before = next((x[2] for x in reversed(clauses[:i]) if x[2]), None)
            c[2] = before or next(x[2] for x in clauses[i:] if x[2])
    runs: list[tuple[int, int, str]] = []
    for a, _b, lang in clauses:
        if runs and runs[-1][2] == lang:
            continue
        if runs:
            runs[-1] = (runs[-1][0], a, runs[-1][2])
        runs.append((a, s1, lang))
    runs[0] = (s0, runs[0][1], runs[0][2])
    return [(a, b, lang) for a, b, lang in runs]


# French words an English clause borrows, and the English word of no greater length the English
# rules know; "en" only before a year, "au" only before a capitalised name.
_GLOSS = {
    "chez": "at",
    "avec": "with",
    "comme": "as",
    "pour": "for",
    "ensemble": "together",
    "depuis": "since",
    "là-bas": "there",
}
_GLOSS_RX = re.compile(
    r"(?<![\w-])(?:chez|avec|comme|pour|ensemble|depuis|là-bas)(?![\w-])|\ben(?= (?:19|20)\d\d)|\bau(?= [A-Z])"
)


_AMBIGUOUS = re.compile(r"(?<![\w-])(?:pour|ensemble|au|Au)(?![\w-])")


def gloss(text: str, runs: list[tuple[int, int, str]]) -> str:
    """`text` with the borrowed French words of the English runs rewritten in English, each
    padded to its own length (same offsets); `text` itself when there is nothing to gloss."""
    pieces: list[str] = []
    last = 0
    # "pour", "ensemble" and "au" are English words or names too ("pour the wine", "the ensemble",
    # "Au Bon Pain"): glossed only in a sentence with French in it
    sentence = text[runs[0][0] : runs[-1][1]] if runs else ""
    french = marker_counts(_AMBIGUOUS.sub(" ", sentence))[0] >= 2
    for a, b, lang in runs:
        if lang != "en":
            continue
        for m in _GLOSS_RX.finditer(text, a, b):
            word = m.group(0)
            if not french and word in ("pour", "ensemble", "au"):
                continue
            english = _GLOSS.get(word, "in" if word == "en" else "at")
            pieces += [text[last : m.start()], english.ljust(len(word))]
            last = m.end()
    if not pieces:
        return text
    return "".join(pieces) + text[last:]


def english_frame(sentence: str) -> bool:
    """Whether the English-only meaning head should read `sentence`: English, too short to
    tell, or French with an English clause in it ("Écoute, I worked with X chez Accenture")."""
    if is_japanese(sentence):
        return False
    if not looks_french(sentence):
        return True
    fr, en = marker_counts(sentence)
    return en > 0 and any(lang == "en" for _a, _b, lang in language_runs(sentence, 0, len(sentence), "fr"))


def _both(sent: str, first: list[tuple[int, int, str]], second: list[tuple[int, int, str]]) -> list:
    """Date phrases of one language, then those of the other that overlap none of them, in order."""
    kept = list(first)
    kept += [d for d in second if not any(d[0] < b and a < d[1] for a, b, _p in first)]
    return sorted(kept)


class EnglishClauseCtx(Ctx):
    """An English run of a mixed sentence: French date phrases count too ("I'll get back to you
    jeudi", "I'll send it ce soir"); dates.resolve_phrase reads both."""

    def dates(self) -> list[tuple[int, int, str]]:
        if self._dates is None:
            sent = self.sent
            found = _both(sent, find_date_phrases(sent), find_date_phrases_fr(sent))
            self._dates = [(self.s0 + a, self.s0 + b, p) for a, b, p in found]
        return self._dates


class FrenchClauseCtx(FrCtx):
    """A French run of a mixed sentence: English date phrases count too ("je t'envoie le
    planning by Wednesday")."""

    def dates(self) -> list[tuple[int, int, str]]:
        if self._dates is None:
            sent = self.sent
            found = _both(sent, find_date_phrases_fr(sent), find_date_phrases(sent))
            self._dates = [(self.s0 + a, self.s0 + b, p) for a, b, p in found]
        return self._dates
