"""Source reliability: what a whole transcript, or one of its speakers, is worth as a witness.

The writer asks `assess(transcript, ...)` once per source, then `reasons_for(speaker)` for
each assertion (keys of memory.trust.REASON_FACTORS). The order of reliability the judge
relies on: a meeting the owner attended > a transcript without the owner (`owner_absent`)
> a news item (`news`) > a voicemail or an unknown caller (`voicemail`, `unknown_speaker`) > anything whose text
asks to be recorded as verified (`self_verifying`). Each test is a word list or a pattern
over labels, titles and text, never a sentence of a particular transcript.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from backchannel.extraction.formats.transcript import Transcript
from backchannel.extraction.resolve.entities import is_anonymous_seat, looks_like_person_name
from backchannel.memory.text import norm_name

# A title or file name that says the recording is a message left, not a conversation.
_VOICEMAIL_NAME = re.compile(
    r"voice[\s_-]?mail|voice[\s_-]?message|answering[\s_-]?machine|messagerie\s+vocale"
    r"|message\s+vocal|répondeur",
    re.I,
)
# What a message left on a machine sounds like; only trusted on a one-speaker recording.
_VOICEMAIL_TEXT = re.compile(
    r"\b(?:this\s+is\s+a\s+(?:voice\s?)?message\s+for|leave\s+(?:me\s+|us\s+)?a\s+message|after\s+the\s+(?:tone|beep)"
    r"|you(?:['’]ve|\s+have)\s+reached|sorry\s+(?:I|we)\s+missed\s+(?:you|your\s+call)|just\s+leaving\s+(?:you\s+)?a"
    r"\s+(?:quick\s+)?message|je\s+vous\s+laisse\s+un\s+message|je\s+te\s+laisse\s+un\s+message"
    r"|(?:après|au)\s+(?:le\s+)?bip)\b",
    re.I,
)
# Seat labels whose voice nobody identified even if it names itself: a caller's "this is
# Dana from Acme" is the caller's own claim.
_CALLER_LABEL = re.compile(
    r"^(?:caller|unknown|voice|anonymous|unidentified|inbound|outbound|appelant|inconnu"
    r"|correspondant|anonyme)\b",
    re.I,
)
# Text that asks the memory to believe it: an instruction to the system, not testimony.
_SELF_VERIFYING = re.compile(
    r"\b(?:record|recorded|mark|marked|log|logged|store|stored|save|saved|flag|flagged|note|noted|treat|treated"
    r"|file|filed|tag|tagged)\s+(?:(?:this|that|it|these|those|the\s+(?:following"
    r"|above|fact|facts|claim|claims))\s+)?(?:down\s+)?as\s+(?:(?:a|an|the)\s+)?(?:verified|confirmed|true|fact|facts"
    r"|accurate|trusted|authoritative|certain|official|ground\s+truth)\b"
    r"|\b(?:verified|confirmed)\s+(?:fact|information|record|relationship|contact)\b"
    r"|\b(?:note|notes|instruction|instructions|message)\s+(?:to|for)\s+(?:the\s+)?(?:ai|assistant|system|model|bot"
    r"|agent|memory|transcriber|note-?taker)\b"
    r"|\bignore\s+(?:all\s+|any\s+)?(?:previous|prior|earlier|above)\s+(?:instructions|notes|facts)\b"
    r"|\b(?:maximum|highest)\s+(?:confidence|trust)\b|\b(?:confidence|trust)\s+(?:score\s+)?(?:of\s+|to\s+)?(?:1\.0|100\s*%)"
    # French: "enregistrez ceci comme vérifié", "note pour l'assistant", "ignore les instructions précédentes"
    r"|\b(?:enregistre|enregistrez|enregistrer|note|notez|noter|marque|marquez|marquer|consigne|consignez)\s+"
    r"(?:(?:ceci|cela|ça|ce\s+fait|le\s+fait)\s+)?comme\s+(?:un\s+fait\s+)?(?:vérifié|vérifiée|confirmé|confirmée|vrai"
    r"|certain|officiel|fiable)"
    r"|\b(?:note|message|instruction|instructions)\s+(?:pour|à)\s+(?:l['’])?(?:ia|assistant|assistante|système|modèle|bot)\b"
    r"|\bignorez?\s+(?:toutes\s+)?les\s+instructions\s+(?:précédentes|ci-dessus)",
    re.I,
)


@dataclass
class SourceTrust:
    """Reasons that apply to a whole source, and those that apply to some of its speakers."""

    source_reasons: list[str] = field(default_factory=list)
    speaker_reasons: dict[str | None, list[str]] = field(default_factory=dict)

    def reasons_for(self, speaker: str | None) -> list[str]:
        return [*self.source_reasons, *self.speaker_reasons.get(speaker, [])]

    def all_reasons(self) -> list[str]:
        """Every reason seen in this source, for `show SOURCE`."""
        out = list(self.source_reasons)
        for rs in self.speaker_reasons.values():
            out += rs
        return list(dict.fromkeys(out))


def owner_attended(transcript: Transcript, owner_norms: set[str], self_intros: dict[str, str]) -> bool | None:
    """True when the owner speaks or is listed; False when others are and the owner is not;
    None when the transcript names nobody (a note the owner most likely wrote)."""
    labels = [*transcript.speakers(), *transcript.participants]
    if not labels:
        return None
    named = [*labels, *self_intros.values()]
    return any(norm_name(_strip_address(x)) in owner_norms for x in named if x)


def _strip_address(name: str) -> str:
    return re.sub(r"\s*<[^>]*>\s*$", "", name)


def is_voicemail(transcript: Transcript) -> bool:
    """A message left on a machine: said so by its title or file name, or a one-speaker
    recording that opens the way messages do."""
    for label in (transcript.title or "", transcript.path or ""):
        if _VOICEMAIL_NAME.search(label.rsplit("/", 1)[-1]):
            return True
    if len(transcript.speakers()) > 1:
        return False
    opening = " ".join(u.text for u in transcript.utterances[:3])
    return _VOICEMAIL_TEXT.search(opening) is not None


def unknown_speakers(labels: Iterable[str], self_intros: dict[str, str]) -> set[str]:
    """Seat labels ("Caller 1", "Speaker 2", "Unknown") that no self-introduction named;
    callers stay unknown even when they name themselves."""
    out = set()
    for label in labels:
        s = label.strip()
        if _CALLER_LABEL.match(s):
            out.add(label)
        elif not looks_like_person_name(s) and is_anonymous_seat(s) and label not in self_intros:
            out.add(label)
    return out


def self_verifying_speakers(transcript: Transcript) -> set[str | None]:
    """Speakers (None: unlabelled text) whose words ask to be recorded as verified. All of
    that speaker's claims in this source lose trust: the request taints the witness."""
    return {u.speaker for u in transcript.utterances if u.text and _SELF_VERIFYING.search(u.text)}


def assess(transcript: Transcript, owner_norms: set[str], self_intros: dict[str, str]) -> SourceTrust:
    st = SourceTrust()
    if transcript.format == "news":  # a published item (extraction/news.py): nobody in the room said it
        st.source_reasons.append("news")
    if owner_attended(transcript, owner_norms, self_intros) is False:
        st.source_reasons.append("owner_absent")
    if is_voicemail(transcript):
        st.source_reasons.append("voicemail")
    for label in unknown_speakers(transcript.speakers(), self_intros):
        st.speaker_reasons.setdefault(label, []).append("unknown_speaker")
    tainted = self_verifying_speakers(transcript)
    if None in tainted:  # unlabelled text asking to be believed: the whole source
        st.source_reasons.append("self_verifying")
    for speaker in tainted - {None}:
        if speaker is not None:  # always (None is taken out): for the type checker
            st.speaker_reasons.setdefault(speaker, []).append("self_verifying")
    return st
