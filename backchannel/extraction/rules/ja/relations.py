"""Offline rules for Japanese: a first slice of the English relations, said in Japanese.

offline.extract sends a sentence here when it holds kana or kanji (dates_ja.is_japanese).
Japanese has no spaces and drops the subject, so the rules are anchored on particles
and verb endings, and a person is only a name followed by an honorific (田中さん,
佐藤様, 鈴木氏) or a speaker label; a dropped subject is the speaker. Same contract
as the other rules: quotes are exact slices (one 。-sentence), dates resolve against
the meeting date (dates/ja.py, dates/en.py's conventions: 3月から looks backwards).

works_at: 田中さんはアクメで働いています / 田中さんはアクメのCTOです / 今はHooliにいます /
  2019年にアクメに入社しました; left: 去年アクメを辞めました.
worked_with: 田中さんとは2016年から2021年までアクメで一緒に働いていました.
knows: 田中さんをよく知っています / 田中さんとは昔からの知り合いです;
  佐藤さんが田中さんを紹介してくれました (me knows 田中, 佐藤 knows 田中, 佐藤 introduced 田中).
committed_to: 見積もりを金曜日までに送ります / 資料をお送りします / 田中さんをご紹介します
  (a deliverable object with を; 連絡します only with a due date).
Negative (ません, ない), conditional (もし, たら, れば) and questioned (か。, ？) sentences yield nothing.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from backchannel.extraction.dates.ja import find_date_phrases_ja, is_japanese
from backchannel.extraction.mentions.names import NAME
from backchannel.extraction.mentions.names_ja import is_japanese_name, strip_honorific
from backchannel.extraction.result import Mention
from backchannel.extraction.rules.core import Ctx
from backchannel.extraction.stance_effects import apply_stance
from backchannel.memory.text import norm_name

__all__ = ["JaCtx", "is_japanese", "run_japanese_rules"]

_KANJI_KANA = r"[\u4e00-\u9fff\u30a0-\u30ffー]"
_HONORIFIC = r"(?:さん|様|さま|氏|くん|君|ちゃん|先生)"
# Words that glue onto a name before it starts (昨日田中さん): dropped from the front.
_LEADING_TIME = re.compile(r"^(?:昨日|今日|明日|先週|今週|来週|去年|今年|来年|先月|今月|来月|今|実は|実際)")
_ORG = (
    r"(?P<org>株式会社[\u4e00-\u9fff\u30a0-\u30ffーA-Za-z0-9]+|[\u4e00-\u9fff\u30a0-\u30ffーA-Za-z0-9]+"
    r"(?:株式会社|社|銀行|大学|省|庁|研究所|グループ|製作所|電機|商事|物産|自動車|工業|製薬|証券|生命|電力|重工)"
    r"|[A-Z][\w&.-]*(?:\s[A-Z][\w&.-]*)*|[\u30a0-\u30ffー]{2,}|[\u4e00-\u9fff]{2,6})"
)
# A kanji run in an organisation's slot that is a common noun or a time (会社を辞めた, 去年会社を…): no name.
_NOT_ORG = frozenset("会社 仕事 職場 前職 今の会社 学校 大学 チーム 部署 本社 現場 業界 社内 社外 家業".split())
_ME = r"(?:私|僕|わたし|ぼく|俺|わたくし)"
_TITLES_JA = {
    "代表取締役社長": "CEO",
    "代表取締役": "CEO",
    "最高経営責任者": "CEO",
    "社長": "CEO",
    "最高技術責任者": "CTO",
    "最高情報責任者": "CIO",
    "情報システム部長": "CIO",
    "最高財務責任者": "CFO",
    "副社長": "vice president",
    "会長": "chairman",
    "取締役": "director",
    "部長": "department head",
    "課長": "section manager",
    "創業者": "founder",
    "共同創業者": "co-founder",
    "プロジェクトマネージャー": "project manager",
    "CEO": "CEO",
    "CTO": "CTO",
    "CIO": "CIO",
    "CFO": "CFO",
    "COO": "COO",
    "CMO": "CMO",
}
_TITLE = "(?P<title>" + "|".join(sorted(_TITLES_JA, key=len, reverse=True)) + ")"


def _p(group: str) -> str:
    """A person: kanji/katakana (or a Latin name) before an honorific, in named group `group`; a full
    name may be written with a space between family and given name (山田 花子さん), as labels are."""
    return rf"(?P<{group}>{_KANJI_KANA}{{1,4}}[ \u3000]{_KANJI_KANA}{{1,4}}|{_KANJI_KANA}{{1,6}}|{NAME}){_HONORIFIC}"


_SUBJ = rf"(?:{_p('x')}|(?P<me>{_ME}))?(?:は|が|も)?、?\s*"
_GAP = r"[^。！？!?]{0,30}?"  # dates and adverbs between the parts: 今, 現在, 3月から
_WORKS = re.compile(rf"{_SUBJ}{_GAP}{_ORG}\s*(?:で|に)\s*(?:働いて|勤めて|勤務して)(?:います|いる|おります)")
_AT = re.compile(rf"{_SUBJ}{_GAP}(?:今は|現在は|いまは){_ORG}\s*にいます")
_TITLE_OF = re.compile(rf"{_SUBJ}{_GAP}{_ORG}\s*の{_GAP}{_TITLE}(?:です|だ|をしています|を務めています)")
# A verb ends its clause in the past (した), the non-past (する: a move said ahead, often hearsay), or
# the te-form that chains it to the next clause (退職して、今は…).
_JOINED = re.compile(rf"{_SUBJ}{_GAP}{_ORG}\s*に(?:入社|転職|就職|移籍)(?:しました|した|します|する|して)")
_LEFT = re.compile(
    rf"{_SUBJ}{_GAP}{_ORG}\s*を(?:辞めました|退職しました|辞めた|退職した|去りました|辞めて|退職して|離れて|離れました)"
)
# A title by its head noun when the lexicon lacks it (営業部長, 開発マネージャー), held at an
# organisation: パナソニックで営業部長をされています / アクメで開発責任者を務めています.
_TITLE_HEAD = (
    r"(?P<title>[\u4e00-\u9fff\u30a0-\u30ffー]{0,6}(?:部長|課長|社長|室長|所長|店長|局長|"
    r"マネージャー|マネジャー|責任者|リーダー|ディレクター)|CEO|CTO|CIO|CFO|COO|CMO)"
)
_TITLE_AT = re.compile(
    rf"{_SUBJ}{_GAP}{_ORG}\s*で{_GAP}{_TITLE_HEAD}を(?:されています|しています|務めています|やっています|されてます|してます)"
)
_PAST_WORK = r"(?:働いて|仕事をして|仕事して|研究をして|研究して)(?:いました|いた|きました|ました|た)|働いたことが(?:あります|ある)"
_WORKED_WITH = re.compile(
    rf"{_p('x')}と(?:は)?(?P<gap>{_GAP})(?:一緒に|いっしょに)?(?:{_PAST_WORK})"
    rf"|{_p('y')}と(?:は)?{_GAP}(?:一緒に)?働いたことがあります"
)
# "一緒に働いてた" with the partner left out: whom the context names (see _partner).
_TOGETHER = re.compile(rf"(?P<gap>{_GAP})(?:一緒に|いっしょに)(?:{_PAST_WORK})")
_NAMED = re.compile(rf"{_p('x')}")
# Whom one knows, by a noun for the tie (同級生, 幼なじみ) as well as by the verb.
_KNOW = re.compile(
    rf"{_p('x')}(?:のこと)?(?:を|は){_GAP}(?:知っています|知っている|存じております|存じています"
    rf"|存じ上げております|存じ上げています)"
    rf"|{_p('y')}と(?:は)?、?{_GAP}(?:知り合い|友達|友人|同級生|同期|幼なじみ|幼馴染|親友|先輩|後輩)"
    rf"(?:です|だ|で|でした|だった|なんです)"
)
# Knowing only the name (お名前だけ, 名前は知っている): a knows_of, not a tie.
_BY_NAME_ONLY = re.compile(r"(?:お名前|名前)(?:だけ|のみ|は)")
# A past tie of work by a noun: 田中さんとは以前同じチームでした / 元同僚です.
_SAME_TEAM = re.compile(
    rf"{_p('x')}と(?:は)?、?{_GAP}(?:同じ(?:チーム|部署|会社|職場|プロジェクト|部)|元同僚|同僚)(?:でした|だった|で)"
)
_INTRODUCED = re.compile(rf"{_p('s')}が(?:私に)?{_p('x')}を紹介して(?:くれました|くれた|もらいました)")
_DELIVER = (
    r"送り|お送りし|送付し|共有し|ご共有し|紹介し|ご紹介し|準備し|ご準備し|用意し|ご用意し|作成し|手配し|転送し"
    r"|提出し|お届けし|届け|お渡しし|渡し|まとめ"
)
_COMMIT = re.compile(
    rf"(?:{_p('to')}に)?(?P<obj>[^。！？!?、をはがにで]{{1,30}})を(?P<gap>{_GAP})"
    rf"(?P<verb>{_DELIVER})(?:ます|いたします|します)"
)
# The deliverable said as the topic (見積書は水曜日までにお送りします): a thing, not a person or "I".
_COMMIT_TOPIC = re.compile(
    rf"(?P<obj>[^。！？!?、をはがにで\s]{{1,30}})は(?P<gap>[^。！？!?を]{{0,30}}?)(?P<verb>{_DELIVER})(?:ます|いたします|します)"
)
_NOT_A_THING = re.compile(
    rf"^(?:{_ME}|.*{_HONORIFIC}|昨日|今日|明日|先週|今週|来週|去年|今年|来年|先月|今月|来月|今|こちら|私ども|弊社|当社)$"
)
_CALL = re.compile(rf"(?P<gap>{_GAP})(?:ご|お)?(?:連絡|電話)(?:します|いたします|を差し上げます)")
# Appointments as news (and speech) put them: 田中太郎氏がアクメのCTOに就任, アクメ、田中太郎氏をCTOに起用,
# 田中太郎氏がアクメを退任. The person must be named (an honorific): no dropped subject here.
_TOOK_OFFICE = re.compile(rf"{_p('x')}(?:が|は|、)\s*{_ORG}\s*の?{_GAP}{_TITLE}に就任")
_APPOINTS = re.compile(rf"{_ORG}\s*(?:は|が|、)\s*{_p('x')}を{_GAP}{_TITLE}に(?:任命|起用|選任|迎え)")
_STEPPED_DOWN = re.compile(rf"{_p('x')}(?:が|は|、)\s*{_ORG}\s*(?:の{_GAP}{_TITLE})?を(?:退任|辞任|退社|退職)")
# Negation holds in its own clause (…ませんが、… / …して、…ていません): cut at 、.
_NEGATIVE = re.compile(r"ません|ない|なかった")
# A condition or a guess holds over the whole sentence.
_UNSURE = re.compile(r"もし|たら|れば|かもしれ|でしょう|かな")
# Hearsay: the fact is a rumour (…するらしいです, …するそうです, 聞いた話ですが, 噂では).
_HEARSAY = re.compile(r"らしい|(?<=[るたいだ])そうです|と聞いた|と聞きました|聞いた話|噂では|噂によると|みたいです")
_CLAUSE = re.compile(r"[^、]+、?")
_SPLIT = re.compile(r"[^。！？!?]+[。！？!?]?")


class JaCtx(Ctx):
    """A Japanese sentence: Japanese date phrases; names are honorific-marked. A fact whose
    words end in a negative clause of the sentence (`negative`) is not emitted."""

    negative: tuple[tuple[int, int], ...] = ()

    def emit(self, predicate: str, subject: Mention, start: int, end: int, **kw: Any) -> None:
        if any(a < end <= b for a, b in self.negative):
            return
        super().emit(predicate, subject, start, end, **kw)

    def dates(self) -> list[tuple[int, int, str]]:
        if self._dates is None:
            self._dates = [(self.s0 + a, self.s0 + b, p) for a, b, p in find_date_phrases_ja(self.sent)]
        return self._dates

    def person_ja(self, raw: str | None) -> Mention | None:
        if not raw:
            return None
        name = _LEADING_TIME.sub("", raw).strip()
        if not name:
            return None
        if self.speaker and (
            norm_name(name) == norm_name(self.speaker) or norm_name(self.speaker).startswith(norm_name(name))
        ):
            return Mention(name=self.speaker, kind="person", is_speaker=True)
        return Mention(name=name, kind="person")


# A topic or subject particle after something other than "I": someone else is talking about.
# "今は", "現在は", "去年は", "前は": a time as topic, not a person.
_OTHER_TOPIC = re.compile(
    r"(?<!私)(?<!僕)(?<!俺)(?<!わたし)(?<!ぼく)(?<!わたくし)(?<!こんにち)"
    r"(?<!今)(?<!在)(?<!いま)(?<!近)(?<!昔)(?<!前)(?<!年)(?<!月)(?<!日)(?:は(?!い)|が)"
)


_TOPIC_NAMED = re.compile(rf"{_p('x')}(?:は|が|も)")


def _subject(ctx: JaCtx, m: re.Match) -> Mention | None:
    """The named topic (田中さんは), else the speaker (Japanese drops 'I'); None when
    someone not honorific-marked is the topic (田中はアクメで…): unknown, so nothing."""
    if m.group("x"):
        return ctx.person_ja(m.group("x"))
    if m.group("me"):
        return ctx.me()
    # 噂によると、村上さんが楽天に転職する: the one named topic or subject before the organisation
    named = {strip_honorific(t.group("x")) for t in _TOPIC_NAMED.finditer(ctx.text, ctx.s0, m.start("org"))}
    if len(named) == 1:
        return ctx.person_ja(named.pop())
    return None if named or _OTHER_TOPIC.search(ctx.text, ctx.s0, m.start("org")) else ctx.me()


def _org(m: re.Match) -> Mention | None:
    org = _LEADING_TIME.sub("", (m.groupdict().get("org") or "").strip())
    return Mention(org, "organisation") if len(org) >= 2 and org not in _NOT_ORG else None


def _rule_employment(ctx: JaCtx) -> None:
    for rx, kind in (
        (_TITLE_OF, "title"),
        (_TITLE_AT, "title"),
        (_WORKS, "works"),
        (_AT, "works"),
        (_JOINED, "joined"),
        (_LEFT, "left"),
    ):
        for m in rx.finditer(ctx.text, ctx.s0, ctx.s1):
            subj, org = _subject(ctx, m), _org(m)
            if subj is None or org is None:
                continue
            dr = ctx.date_for(m.start(), m.end(), past=True)
            conf = 0.7 if subj.is_speaker else 0.65
            if kind == "left":
                ctx.emit(
                    "left", subj, m.start(), m.end(), obj=org, dr=dr, valid_to=dr.point if dr else None, confidence=conf
                )
                continue
            qualifier = _TITLES_JA.get(m.group("title"), m.group("title")) if kind == "title" else None
            starts = kind == "joined" or (dr is not None and dr.end is None)
            ctx.emit(
                "works_at",
                subj,
                m.start(),
                m.end(),
                obj=org,
                qualifier=qualifier,
                dr=dr,
                valid_from=dr.start if dr and starts else None,
                confidence=conf,
            )


def _rule_appointments(ctx: JaCtx) -> None:
    for rx, predicate in ((_TOOK_OFFICE, "works_at"), (_APPOINTS, "works_at"), (_STEPPED_DOWN, "left")):
        for m in rx.finditer(ctx.text, ctx.s0, ctx.s1):
            subj, org = ctx.person_ja(m.group("x")), _org(m)
            if subj is None or org is None:
                continue
            dr = ctx.date_for(m.start(), m.end(), past=True)
            if predicate == "left":
                ctx.emit(
                    "left",
                    subj,
                    m.start(),
                    m.end(),
                    obj=org,
                    dr=dr,
                    valid_to=dr.point if dr else ctx.anchor,
                    confidence=0.65,
                )
            else:
                ctx.emit(
                    "works_at",
                    subj,
                    m.start(),
                    m.end(),
                    obj=org,
                    qualifier=_TITLES_JA.get(m.group("title")),
                    dr=dr,
                    valid_from=dr.start if dr else ctx.anchor,
                    confidence=0.65,
                )


def _rule_people(ctx: JaCtx) -> None:
    me = ctx.me()
    for m in _WORKED_WITH.finditer(ctx.text, ctx.s0, ctx.s1):
        other = ctx.person_ja(m.group("x") or m.group("y"))
        if me is None or other is None:
            continue
        gap = m.group("gap") or ""
        where = _where(gap)
        dr = ctx.date_for(m.start(), m.end(), past=True)
        ctx.emit(
            "worked_with",
            me,
            m.start(),
            m.end(),
            obj=other,
            qualifier=where,
            dr=dr,
            valid_from=dr.start if dr else None,
            valid_to=dr.end if dr else None,
            confidence=0.7,
        )
    for m in _TOGETHER.finditer(ctx.text, ctx.s0, ctx.s1):
        if me is None or any(
            w.start() <= m.end() and m.start() <= w.end() for w in _WORKED_WITH.finditer(ctx.text, ctx.s0, ctx.s1)
        ):
            continue  # the partner is said (田中さんと一緒に…): the rule above has it
        if _OTHER_TOPIC.search(ctx.text, ctx.s0, m.end("gap")) or _NAMED.search(ctx.text, ctx.s0, m.end("gap")):
            continue  # 鈴木さんは一緒に働いてた: whose tie, or with whom, the words do not say
        other = _partner(ctx, m.start())
        if other is None:
            continue
        where = _where(m.group("gap") or "")
        dr = ctx.date_for(m.start(), m.end(), past=True)
        ctx.emit(
            "worked_with",
            me,
            m.start(),
            m.end(),
            obj=other,
            qualifier=where,
            dr=dr,
            valid_from=dr.start if dr else None,
            valid_to=dr.end if dr else None,
            confidence=0.6,
        )
    for m in _KNOW.finditer(ctx.text, ctx.s0, ctx.s1):
        other = ctx.person_ja(m.group("x") or m.group("y"))
        if me is not None and other is not None:
            before = len(ctx.out)
            ctx.emit("knows", me, m.start(), m.end(), obj=other, confidence=0.65)
            if len(ctx.out) > before and _BY_NAME_ONLY.search(ctx.text, m.start(), m.end()):
                ctx.out[-1] = replace(ctx.out[-1], stance="knows_of")
    for m in _SAME_TEAM.finditer(ctx.text, ctx.s0, ctx.s1):
        other = ctx.person_ja(m.group("x"))
        if me is not None and other is not None:
            dr = ctx.date_for(m.start(), m.end(), past=True)
            ctx.emit(
                "worked_with",
                me,
                m.start(),
                m.end(),
                obj=other,
                dr=dr,
                valid_from=dr.start if dr else None,
                valid_to=dr.end if dr else None,
                confidence=0.6,
            )
    for m in _INTRODUCED.finditer(ctx.text, ctx.s0, ctx.s1):
        intro, other = ctx.person_ja(m.group("s")), ctx.person_ja(m.group("x"))
        if me is None or intro is None or other is None:
            continue
        ctx.emit("knows", me, m.start(), m.end(), obj=other, confidence=0.65)
        ctx.emit("knows", intro, m.start(), m.end(), obj=other, confidence=0.6)
        ctx.emit("introduced", intro, m.start(), m.end(), obj=other, confidence=0.65)


_BARE_KANJI = re.compile(r"[\u4e00-\u9fff]{2,6}")


def _where(gap: str) -> str | None:
    """The organisation where two people worked (アクメで); a bare kanji word there is as often a
    place or a room (東京で, 研究室で) as a company, so it needs a company's suffix."""
    m = re.search(rf"{_ORG}で", gap)
    if m is None or _BARE_KANJI.fullmatch(m.group("org")) or m.group("org") in _NOT_ORG:
        return None
    return m.group("org")


def _partner(ctx: JaCtx, pos: int) -> Mention | None:
    """Whom a partnerless "一緒に働いてた" means: the one person named (an honorific name or a
    speaker of the meeting, not the speaker) earlier in this turn, else in the turns just
    before; else, in a meeting of two, the other one. None when two people fit."""

    def named(text: str) -> set[str]:
        found = {strip_honorific(m.group("x")) for m in _NAMED.finditer(text)}
        found |= {lab for lab in ctx.speakers if is_japanese_name(lab) and strip_honorific(lab) in text}
        me = norm_name(ctx.speaker or "")
        return {
            n
            for n in (_LEADING_TIME.sub("", x) for x in found)
            if n and norm_name(n) != me and not me.startswith(norm_name(n))
        }

    for text in (ctx.text[max(0, pos - 300) : pos], ctx.context_before):
        people = named(text)
        # 田中 and 田中太郎 in one context are one person: keep the longer form.
        people = {p for p in people if not any(q != p and q.startswith(p) for q in people)}
        if len(people) == 1:
            return ctx.person_ja(people.pop())
        if people:
            return None
    others = [lab for lab in ctx.speakers if lab != ctx.speaker]
    return Mention(others[0], "person") if len(ctx.speakers) == 2 and len(others) == 1 else None


def _rule_commitment(ctx: JaCtx) -> None:
    me = ctx.me()
    if me is None:
        return
    found = [(m, True) for m in _COMMIT.finditer(ctx.text, ctx.s0, ctx.s1)]
    if not found:
        found = [
            (m, True)
            for m in _COMMIT_TOPIC.finditer(ctx.text, ctx.s0, ctx.s1)
            if not _NOT_A_THING.match(_LEADING_TIME.sub("", m.group("obj")) or "今")
        ]
    found += [(m, False) for m in _CALL.finditer(ctx.text, ctx.s0, ctx.s1)]
    for m, deliverable in found:
        if _OTHER_TOPIC.search(ctx.text, ctx.s0, m.start()):
            continue  # 田中さんが資料を送ります: someone else's promise, not attributed here
        dr = ctx.date_for(ctx.s0, m.end())
        if not deliverable and dr is None:
            continue  # "また連絡します": keeping in touch, no promise
        dates = [(a, b) for a, b, _p in ctx.dates()]
        promise = "".join(
            ch for i, ch in enumerate(ctx.text[m.start() : m.end()], m.start()) if not any(a <= i < b for a, b in dates)
        )
        promise = re.sub(
            r"^(?:に|で|、)+|(?:まで|までに|に)(?=送|お送|共有|紹介|準備|用意|作成|手配|連絡|電話)", "", promise
        )
        if len(promise) < 3:
            continue
        before = len(ctx.out)
        ctx.emit(
            "committed_to",
            me,
            m.start(),
            m.end(),
            literal=promise,
            dr=dr,
            valid_to=(dr.end or dr.start) if dr else None,
            modality="commitment",
            confidence=0.6 if dr else 0.5,
        )
        if len(ctx.out) > before and deliverable and m.groupdict().get("to"):
            ctx.out[-1].recipient = ctx.person_ja(m.group("to"))


def run_japanese_rules(ctx_args: dict) -> None:
    """Every Japanese rule on each 。-sentence of one offline sentence."""
    text, s0, s1 = ctx_args["text"], ctx_args["s0"], ctx_args["s1"]
    for piece in _SPLIT.finditer(text, s0, s1):
        a, b = piece.start(), piece.end()
        while a < b and text[a].isspace():
            a += 1
        while b > a and text[b - 1].isspace():
            b -= 1
        sent = text[a:b]
        if not sent or sent.endswith(("？", "?", "か。", "か")) or _UNSURE.search(sent):
            continue
        ctx = JaCtx(**{**ctx_args, "s0": a, "s1": b})
        ctx.negative = tuple(
            (a + c.start(), a + c.end()) for c in _CLAUSE.finditer(sent) if _NEGATIVE.search(c.group(0))
        )
        if ctx.negative and len(ctx.negative) == len(_CLAUSE.findall(sent)):
            continue
        out = ctx_args["out"]
        before = len(out)
        _rule_employment(ctx)
        _rule_appointments(ctx)
        _rule_people(ctx)
        _rule_commitment(ctx)
        if _HEARSAY.search(sent):
            out[before:] = [replace(x, stance="rumour") for x in out[before:]]
        # what each stance does, as for every extractor: a rumour is hedged, knowing of someone is no tie
        out[before:] = [x for x in map(apply_stance, out[before:]) if x is not None]
