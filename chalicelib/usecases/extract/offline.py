"""The offline extractor: no LLM, no network, deterministic. One event per thing that
happened, nothing for small talk.

1. **Statements.** The small-talk rules (chalicelib.domain.salience) take out of each turn
   what only greets, thanks, reacts, agrees, encourages, compliments, signs off or asks; a
   turn with nothing left makes no event.
2. **Salience.** The judge (a SalienceJudge port: e5 weights by default,
   adapters/salience_e5.py) scores what each turn kept; below its threshold, no event.
3. **One event per happening.** The kept sentences of one turn are one event, unless a
   sentence names another time than those before it (a new happening: "I adopted a puppy. My
   sister moves to Denver next spring" is two) — and not when it corrects that time
   ("三日后是谷雨…… 不对，五日后才是谷雨": one happening, dated by the correction). A happening told over
   consecutive turns — the same speaker again right after the other side's reply (a question
   and the answer, a story told in three turns) — joins the event before it when the reply
   asked (the answer goes on telling it) or the turns are about the same thing (their e5
   vectors close: `SAME_TOPIC`, measured above how close either sits to small talk in its
   language, since e5 puts any two Chinese turns closer than most English pairs on one
   topic), were said within `MAX_TURN_GAP` of each other and name no other time than the
   telling's own day ("今天总算退了" goes on telling the fever of the day before yesterday), up to
   `MAX_TURNS` turns; the event cites each of its turns.
4. **Retelling.** Third person with the speaker named ("I adopted" → "Mel adopted"), in the
   turn's own language; a sentence with no subject of its own ("Gonna check out career
   options") is quoted as the speaker's words instead of being garbled. Dated by the message
   (and by the time a sentence names, resolved against the message's own time); the date
   lives in `when` and, for a relative time, in the summary (昨天（2026-06-14）) — never in
   the title.

A message that gives orders to an AI or poses as a system or role marker ("SYSTEM OVERRIDE",
"ignore previous instructions", 忽略之前的指令, <system>, <|im_start|>, [INST];
textrules.looks_like_instruction) is never retold as fact: it becomes one event reporting
what was said, 小明说：「…」 / Sam said: "…", tagged "quoted", of low importance.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import NamedTuple

import numpy as np

from chalicelib.domain import textrules as rules
from chalicelib.domain.changes import REPAIR
from chalicelib.domain.dates import span_as_told
from chalicelib.domain.lazyre import compiled
from chalicelib.domain.models import EventDraft, Message, Source, When
from chalicelib.domain.names import is_placeholder, mentioned_names, own_name, without_own_name
from chalicelib.domain.salience import content_words, statements
from chalicelib.domain.textproc import is_cjk
from chalicelib.domain.timeparse import TimeSpan, find_times, first_told, holds, parse_time
from chalicelib.ports import ExtractionContext, Reading, Salience, SalienceJudge

PREVIEW_CHARS = 80
QUOTED_IMPORTANCE = 3  # an instruction someone typed is worth keeping, not worth surfacing
MAX_TURNS = 3  # turns of one teller an event may span
# Two turns of one teller tell the same happening when their e5 cosine c clears small talk's
# (b, the mean of both turns' cosines to it) by this share of the room above it:
# (c - b) / (1 - b) ≥ SAME_TOPIC. A plain cosine floor (0.8 before) joined nearly every
# Chinese pair (0.87-0.93 on one topic or not) into one three-turn event.
SAME_TOPIC = 0.17
SAME_TOPIC_COSINE = 0.8  # the plain floor, for a judge that gives no small-talk baselines
MAX_TURN_GAP = timedelta(hours=1)  # turns further apart are not one telling
MAX_SUMMARY_CHARS = 360  # a few sentences: the summary of a happening, not its transcript
SIGNAL_DISCOUNT = 0.7  # a turn with a life event, plan or time needs 0.7 × the threshold
MIN_CONTENT_WORDS = 3  # fewer, and a turn must tell a life event, plan or time to count


def message_day(at: datetime) -> When:
    start = at.replace(hour=0, minute=0, second=0, microsecond=0)
    return When(start=start, end=start + timedelta(days=1), granularity="day")


class Dating(NamedTuple):
    when: When  # the time a statement is about
    ahead: bool  # still ahead: a plan
    relative: str | None  # the expression that dated it, when relative
    framed_by: str | None = None  # a stretch named around its day: 下个月 of 下个月 … 12月8号


def resolve_when(sentence: str, msg: Message, before: When | None = None) -> Dating:
    """The time a statement is about, whether that time is still ahead (a plan), the matched
    expression when it was relative, and the stretch named around it (`framing`).

    Relative expressions (昨天, last Friday, 下周五) are resolved against the message's own
    time, not the time of extraction; a statement that names no time is about its message day;
    one that corrects its time mid-way (`REPAIR`) is about the time after the correction.
    """
    # a speaker correcting themself means the time after the repair, read near the time it
    # corrects: one named before it in the sentence ("周四下午，哦不对，是周五", "Dec 17 哦不对
    # 是 Dec 16"), else `before`, the time of the statement before ("Oh wait no, Friday!")
    spans = find_times(sentence, msg.at)
    repairs = list(REPAIR.finditer(sentence))
    span = None
    if repairs and (after := sentence[repairs[-1].end():]).strip():
        # the time it corrects is the one named last before it ("这周开家长会，说是周四下午，
        # 哦不对": Thursday afternoon, not this week), else one it says it is not
        named = find_times(sentence[:repairs[-1].start()], msg.at)
        frame = _when(named[-1], msg) if named else (before or denied(after, msg))
        span = corrected(after, msg, frame) if frame is not None else parse_time(after, msg.at)
    elif (told := denied(sentence, msg, spans)) is not None:
        span = corrected(sentence, msg, told)  # "it's Saturday now, not Thursday"
    span = span or first_told(spans)
    if span is None:
        return Dating(message_day(msg.at), False, None)
    when, relative = _when(span, msg), None if _YEAR.search(span.matched) else span.matched
    return Dating(when, span.start > msg.at, relative, framing(spans, when, relative))


# "…, not Thursday", "是周六不是周四", "instead of Friday": the time after it is taken back
_DENIED = re.compile(r"(?:\bnot|\binstead of|不是)\s*$", re.IGNORECASE)


def denied(text: str, msg: Message, spans: list[TimeSpan] | None = None) -> When | None:
    """A time the text says it is not ("the game got moved, it's Saturday now not
    Thursday"): the time a correction is read near (`corrected`), when it names a time
    besides. `spans`: the text's times, when read already."""
    spans = find_times(text, msg.at) if spans is None else spans
    taken = next((s for s in spans if _DENIED.search(text[:s.offset])), None)
    return _when(taken, msg) if taken is not None and len(spans) > 1 else None


def framing(spans: list[TimeSpan], when: When, relative: str | None) -> str | None:
    """The stretch a sentence names around the day it is dated by (timeparse.within): "下个月
    过生日 12月8号" is dated the 8th, and 下个月 is no part of its title either."""
    return next((span.matched for span in spans
                 if relative and span.matched != relative and not _YEAR.search(span.matched)
                 and holds(span, when.start, when.end)), None)


def _when(span: TimeSpan, msg: Message) -> When:
    start, end = span_as_told(span, msg.at)
    return When(start=start, end=end, granularity=span.granularity)


def corrected(text: str, msg: Message, told: When) -> TimeSpan | None:
    """The time a correction names, read in the frame of the time it corrects: "next
    Thursday. Oh wait no, Friday!" is the Friday after that Thursday, not the one just past;
    "周五" correcting 下周四 is next week's. Of its readings — of every time it names, from
    the message's time and, for a corrected time still ahead, from that time, each as past
    and as ahead — the nearest to the corrected time that is not that time itself (a
    correction changes it); the message's on a tie ("前天，不对，是昨天": the message's
    yesterday), else the last named ("she has work on Wednesday, so Friday": a reason comes
    before the time it leads to)."""
    # a plan's frame is the plan's time; a time already past is read from the message's
    # ("对了国庆那个 哦不对 30号" on Sep 22: 国庆 read as last year's makes no frame)
    refs = (msg.at, told.start) if told.start > msg.at else (msg.at,)
    # every time it names: "哦不对 30号小满要值班 1号早上在走" corrects 国庆 to the morning of
    # the 1st; the 30th is why
    readings = [(_when(span, msg), i, span) for ref in refs for future in (False, True)
                for i, span in enumerate(find_times(text, ref, future=future))]
    # a reading holding the corrected time is that time named again, not a change ("说是周四
    # 下午，哦不对，是周五不是周四"); one inside it tells it finer (国庆 → 1号早上)
    changed = [(when, i, span) for when, i, span in readings
               if not (when.start <= told.start and told.end <= when.end)]
    if not changed:
        return readings[0][2] if readings else None
    return min(changed, key=lambda reading: (abs(reading[0].start - told.start), -reading[1]))[2]


_YEAR = re.compile(r"\d{4}")


def date_relative(summary: str, matched: str | None, when: When) -> str:
    """Pin a relative time to its date, so the memory still reads right later:
    "奶糖昨天进行了体检" → "奶糖昨天（2026-06-14）进行了体检" (seed 000 writes absolute dates)."""
    if not matched or matched not in summary:
        return summary
    opening, closing = ("（", "）") if is_cjk(matched) else (" (", ")")
    return summary.replace(matched, f"{matched}{opening}{when.label}{closing}", 1)


def other_party(msg: Message, earlier: Sequence[Message]) -> str | None:
    """Who "you" is: the most recent different speaker in the conversation."""
    for prev in reversed(earlier):
        if prev.speaker != msg.speaker and prev.role != "system":
            return prev.speaker
    return None


# A name set off by a comma at either end of a sentence said (not acted): "It's over, Dax.",
# "Sprocket, you menace". Between asterisks a name is who is acted upon, not who is spoken to.
_VOCATIVE = compiled(r"(?:^|[.!?…]\s+)(?P<a>[A-Z][a-z]+),\s|,\s+(?P<b>[A-Z][a-z]+)\s*(?:[.!?…]|$)")
# In Chinese, a name opening what is said, before a comma and 你, that the turn's own acting
# names too: the one in the scene spoken to ("*给雪团梳毛* 雪团，你说我是不是很傻").
_ZH_VOCATIVE = compiled(r"(?:^|[。！？…\s])\s*(?P<c>[\u4e00-\u9fff]{1,4})，(?=你)")


def addressed(msg: Message, names: set[str], speakers: Sequence[str] = ()) -> str | None:
    """Whom an English turn calls by name, when that is a name of the talk (`names`: the
    speakers and the names said mid-sentence) other than its speaker's: "you" is then that
    one. In a role-play the player's character turns to others in the scene ("*Jess faces
    Dax in the airlock.* It's over, Dax. … I'm not your mechanic"): the other speaker is not
    the one spoken to, and "Jess is not Ilse Marrow's mechanic" was the event. A speaker
    called by their first name ("Hey, Ilse?") is that speaker. In Chinese, a name the turn
    acts upon and then speaks to ("*给雪团梳毛* 雪团，你说我是不是很傻": not 沈砚)."""
    said, acted = _part(msg.content, False), _part(msg.content, True)
    for m in _ZH_VOCATIVE().finditer(said):  # "*给雪团梳毛* 雪团，你说我是不是很傻"
        if m["c"] in acted and m["c"] != msg.speaker:
            return m["c"]
    for m in _VOCATIVE().finditer(said):
        name = m["a"] or m["b"]
        name = next((s for s in speakers if s.startswith(f"{name} ")), name)
        if name in names and name != msg.speaker:
            return name
    return None


def quoted_draft(msg: Message) -> EventDraft:
    """What an instruction-like message said, as reported speech (module docstring)."""
    title, summary = rules.reported_speech(msg.speaker, msg.content)
    return EventDraft(
        title=title, summary=summary, when=message_day(msg.at),
        importance=min(QUOTED_IMPORTANCE, rules.importance(msg.content, has_time=False)),
        participants=[msg.speaker],
        sources=[source_of(msg)],
        tags=[rules.QUOTED_TAG],
    )


def source_of(msg: Message) -> Source:
    return Source(session=msg.session, seq_start=msg.seq, seq_end=msg.seq,
                  preview=msg.content[:PREVIEW_CHARS])


# ------------------------------------------------------------------ statements and happenings


TurnVector = tuple[np.ndarray, float | None]  # a kept turn's e5 vector, its small-talk cosine


@dataclass
class Statement:
    said: str  # the sentence as said (its opening reaction cut)
    retold: str  # third person, no date stamp
    when: When
    ahead: bool  # the time it names is still ahead: a plan
    relative: str | None  # the relative expression that dated it
    repairs: bool = False  # it corrects the time of what the turn said before it
    taken_back: str | None = None  # the time it was told with, taken back by the next one
    framed_by: str | None = None  # a stretch named around its day (`framing`): 下个月 … 12月8号


@dataclass
class Happening:
    """One event in the making: statements of one speaker, from one or more turns."""

    speaker: str
    messages: list[Message]
    statements: list[Statement]
    vector: np.ndarray | None  # the last turn's, to compare the next turn with
    baseline: float | None  # the last turn's cosine to small talk (Salience.baselines)
    timed: bool  # a statement named a time
    participants: list[str] = field(default_factory=list)
    # told in character in a role-play (`plays_in_character`): its times are the story's,
    # which still part one happening from the next, but it is dated by the day it was played
    story: bool = False

    @property
    def when(self) -> When:
        return self.statements[0].when

    def draft(self) -> EventDraft:
        retold = joined([s.retold for s in self.statements])
        first = self.statements[0]
        # the time pinned in the summary is the one the happening is dated by: after a
        # repair, the corrected statement keeps its words and loses its time (happenings_of)
        dated = next((s for s in self.statements if s.relative and s.when == first.when), first)
        when = message_day(self.messages[0].at) if self.story else first.when
        summary = brief(retold if self.story else date_relative(retold, dated.relative, dated.when))
        said = " ".join(s.said for s in self.statements)
        plan = not self.story and any(s.ahead for s in self.statements)
        # a correction that says more than its time leads ("哦不对，是1月2号出发"); "Oh wait
        # no, Friday!" corrects only when: the statement it corrects names the happening
        lead = [s for s in self.statements if s.repairs and _says_more(s)][:1] \
            or self.statements[:1]
        rest = [s for s in self.statements if s not in lead]
        return EventDraft(
            title=self.title(lead, rest) or rules.make_title(retold) or first.said[:60],
            summary=summary,
            when=when,
            importance=rules.importance(said, has_time=self.timed),
            participants=self.participants,
            sources=sources_of(self.messages),
            tags=["plan"] if plan else [],
            plan=plan,
        )

    def title(self, lead: Sequence[Statement], rest: Sequence[Statement]) -> str:
        """The first title that tells (`_tells`): what the teller says before what they act
        out between asterisks (a role-play's "*还没等他放下，就连打了三个喷嚏* … 我闻不得桃花":
        苏禾闻不得桃花), the lead statement before the rest; else the first there is. Read in
        that order and no further than needed: each reads the times of its clauses."""
        fallback = ""
        for acted in (False, True):
            for part in (lead, rest):
                title = headline(part, self.speaker, acted)
                if _tells(title, self.speaker):
                    return title
                fallback = fallback or title
        return fallback


# Where a clause ends: punctuation, or in Chinese typed on a phone a space between two
# characters ("还有一个事 小满辞职了 辞职信节前交的"), or a role-play's markup: an action
# between asterisks ("*放下药碾子，快步过去扶住他* 还付什么诊金") and an aside in brackets
# ("（ooc：这周好忙 来啦）*半月后，云京城南*") are clauses of their own, so a title never
# joins the end of one to the start of the next ("快步过去扶住他* 还付什么诊金").
_CLAUSE_END = compiled(r"[，,。！？!?；;：:]|(?<=[\u4e00-\u9fff])\s+(?=[\u4e00-\u9fff])"
                       r"|[,;:.!?](?:\s|$)| - | — |\*+|[（）()【】\[\]]")
_QUOTED = re.compile(r'^[^:"]{1,40}: "')


def _says_more(statement: Statement) -> bool:
    """The statement says something besides its times and the words that correct it."""
    return content_words(_untimed(REPAIR.sub(" ", statement.said), statement), []) >= 1


def headline(statements: Sequence[Statement], teller: str, acted: bool | None = None) -> str:
    """A title that names the happening (from the happening's first statement, as told: a
    later one's clause that names the teller is often another remark, 小婷还是小雨最好的饭搭子
    after 昨天跟小婷去苏州一日游了), not the telling's opener ("还有个事", "纠正一下",
    "Anyway"): the first clause that names the teller (the retelling put the name where "I"
    was: who did what) and carries content of its own, else the first clause with the most
    content, an opener (a short first clause with more to come) passed over; the relative
    time it was dated by left out (the date is `when`). '' when nothing is left. `acted`:
    only the clauses acted out between asterisks (True), or only those said (False)."""
    best, best_words = "", 0
    for statement in statements:
        if _QUOTED.match(statement.retold) and not acted:
            return _unopened(rules.make_title(statement.retold))  # the words, kept as said
        text = statement.retold if acted is None else _part(statement.retold, acted)
        # the words that take something back are no part of what happened ("哦不对", "wait no")
        clauses = [c for c in (" ".join(REPAIR.sub(" ", c).split())
                               for c in _CLAUSE_END().split(text)) if c]
        for i, clause in enumerate(clauses):
            if rules.is_question(clause) or (i == 0 and len(clauses) > 1 and _opener(clause)):
                continue
            for time in (statement.relative, statement.taken_back, statement.framed_by):
                if time and time in clause:
                    bare = _without(clause, time)
                    if content_words(bare, [teller]) >= 2 or time == statement.taken_back:
                        clause = bare
            words = content_words(_untimed(clause, statement), [teller])
            if teller in clause and words >= 2:
                return _unopened(rules.make_title(clause))
            if words > best_words:
                best, best_words = clause, words
    return _unopened(rules.make_title(best)) if best else ""


def _part(text: str, acted: bool) -> str:
    """The text's stretches acted out between asterisks (`acted`), or the rest."""
    return " ".join(seg for i, seg in enumerate(_ASTERISKS().split(text)) if (i % 2 == 1) is acted)


_ASTERISKS = compiled(r"\*+")


def _tells(title: str, teller: str) -> bool:
    """A title that says what happened: two content words, or one beside the teller's name
    ("Nora has an interview"). The lead statement's "better!", "drawing." or "希望吧。" is a
    reply's first word, and the statement after it ("off the strap since thursday", "I do
    illustrations on the side", "八段锦好久没练了") names the happening."""
    words = content_words(title, [teller])
    return words >= 2 or (words == 1 and teller in title)


def _without(clause: str, time: str) -> str:
    """`clause` without `time`, and without the function words left hanging where the time
    ended it ("last shift at Fig & Fern was friday" is "last shift at Fig & Fern")."""
    bare = " ".join(clause.replace(time, "" if is_cjk(time) else " ").split())
    return rules.trim_hanging(bare) if clause.rstrip(" 。.!！").endswith(time) else bare


def _untimed(clause: str, statement: Statement) -> str:
    """What a clause says besides the times it names: "定在11月1号" says little, "搬家公司都
    约好了" more."""
    for span in find_times(clause, statement.when.start):
        clause = clause.replace(span.matched, " ")
    return clause


# The words that carry a telling on from the last ("also I started a pottery class", "And
# Theo asked me out", "还有林悦在学车"): no part of what happened.
_CARRY_ON = compiled(r"^(?:(?:also|and|so|plus|anyway|oh|btw|by the way|but)\b[,\s]*)+(?=\S)"
                     r"|^(?:还有|而且|然后|另外|可是|但是|不过)[\s，,]*(?=[\u4e00-\u9fff])", re.IGNORECASE)


# The words that open the next thing a teller has to tell ("还有 我搬家了", "对了 我养了只柯基",
# "btw I started guitar", "Also, ..."): a turn they open tells another happening, whatever
# its vectors share with the last (`_continued`). 还有 opens one when a mark, a space or 个事 /
# 件事 / 就是 follows it; "还有三天就考试了" says what is left.
_NEXT_ITEM = compiled(r"(?:also|btw|by the way|one more thing|oh and|another thing)\b"
                      r"|(?:还有(?=[\s，,、：:]|[一个]?件事|个事|就是)|另外|对了|顺便|话说)",
                      re.IGNORECASE)


def _unopened(title: str) -> str:
    """A title without the words that carry the telling on, when something is left; in a
    quoted one, inside its quote ('Nora: "also quit pottery"' → 'Nora: "quit pottery"')."""
    if quoted := _QUOTED.match(title):
        return quoted.group(0) + _unopened(title[quoted.end():])
    rest = _CARRY_ON().sub("", title)
    return rest if rest and rest != title and content_words(rest, []) >= 1 else title


def _opener(clause: str) -> bool:
    """A clause too short to tell anything: 还有个事, 对了, 纠正一下, "Anyway", "So yeah"."""
    return len(clause) <= 4 if is_cjk(clause) else len(clause.split()) <= 2


def joined(parts: Sequence[str]) -> str:
    """Statements as one text: a space between two of them unless a Chinese punctuation mark
    meets the join: "心情很差。" + "芝麻今天早上没了" needs none, "killing me" + "Vivi早上" does
    (a chat that switches languages mid-turn was joined by the first statement's script alone:
    "killing meVivi早上"), and so do two Chinese sentences typed without a mark, as phone
    typing parts them: "它把拖鞋咬烂了" + "两岁半" ran together as "咬烂了两岁半"."""
    out = ""
    for part in parts:
        unspaced = not out or not part or _cjk_mark(out[-1]) or _cjk_mark(part[0])
        out = f"{out}{part}" if unspaced else f"{out} {part}"
    return out


def _cjk_mark(ch: str) -> bool:
    """A punctuation mark of the scripts written without spaces (。，！（ …)."""
    return "\u3000" <= ch <= "\u303f" or "\uff00" <= ch <= "\uffef"


def brief(text: str) -> str:
    """A summary is a few sentences (DESIGN: one or two): whole sentences up to
    `MAX_SUMMARY_CHARS`, the first one cut if it alone is longer. The cited turns hold the
    rest, word for word."""
    if len(text) <= MAX_SUMMARY_CHARS:
        return text
    kept = ""
    for sentence in rules.split_sentences(text):
        longer = joined([kept, sentence]) if kept else sentence
        if len(longer) > MAX_SUMMARY_CHARS:
            break
        kept = longer
    return (kept + "…") if kept else rules.quote(text, MAX_SUMMARY_CHARS)


def sources_of(messages: Sequence[Message]) -> list[Source]:
    """One source per run of consecutive turns (seq n, n+1 … of one session)."""
    out: list[Source] = []
    for msg in messages:
        last = out[-1] if out else None
        if last is not None and last.session == msg.session and last.seq_end == msg.seq - 1:
            out[-1] = last.model_copy(update={"seq_end": msg.seq})
        else:
            out.append(source_of(msg))
    return out


# A sentence that opens with its verb has no subject to retell: "Gonna check out career
# options" would become "Gonna check out Caroline's career options".
_SUBJECTLESS = re.compile(
    r"^(?:gonna|wanna|gotta|going to|just|been|got|went|had|started|finished|made|took|did"
    r"|thinking|trying|working|planning|hoping|feeling|having|getting|doing|can'?t|don'?t"
    r"|didn'?t|won'?t|haven'?t|hope|guess|need|want|love|loved|totally|really|also|still"
    r"|always|never|definitely|probably|maybe)\b", re.IGNORECASE)


# An opening adverb before its subject is no verb: "also I started a pottery class" is
# retold "also Nora started …", not quoted as subjectless.
_ADVERB_THEN_SUBJECT = re.compile(
    r"^(?:(?:just|also|still|always|never|definitely|probably|maybe|really|totally)[,\s]+)+"
    r"(?:i|i'm|i’m|i've|i’ve|i'd|i’d|i'll|i’ll|we|we're|we’re|we've|we’ve|my|our)\b",
    re.IGNORECASE)


def retell(sentence: str, me: str, you: str | None, with_you: bool = True) -> str:
    """Third person with the speaker named, or the speaker's words quoted when the sentence
    has no subject to name. A speaker with no name of its own ("user", "assistant": roles,
    never people) is called by its role in the sentence's language (用户 / the user)."""
    zh = is_cjk(sentence)
    if own_name(sentence) == me:  # "我叫阿梅，…" said by 阿梅: the rest is what it tells
        sentence = without_own_name(sentence)
    sentence = unaddressed(sentence, you)
    me, you = _called(me, zh), None if you is None else _called(you, zh)
    if not zh and _SUBJECTLESS.match(sentence) and not _ADVERB_THEN_SUBJECT.match(sentence):
        return f'{me}: "{sentence}"'
    return rules.third_person(sentence, me, you, with_you)


def unaddressed(sentence: str, you: str | None) -> str:
    """The sentence without the name it opens by calling ("Sol 我好忙 packing"; "Ilse, I
    quit": the full name or the first). A name followed by another subject (I, you, we) is
    whom the turn speaks to, not who did it: retold, "Sol Vivi好忙" said Sol was busy."""
    if not you or is_placeholder(you):
        return sentence
    names = "|".join(map(re.escape, dict.fromkeys([you, you.split()[0]])))  # or first name
    called = re.match(rf"\s*(?:{names})\s*[，,！!~:：]?\s*(?=我|你|咱|(?:I|my|we|you)\b)",
                      sentence, re.IGNORECASE)
    return sentence[called.end():] if called and called.end() < len(sentence) else sentence


_ROLE_CALLED = {"assistant": ("助手", "the assistant"), "system": ("系统", "the system")}


def _called(name: str, zh: bool) -> str:
    if not is_placeholder(name):
        return name
    zh_word, en_word = _ROLE_CALLED.get(name.strip().lower(), ("用户", "the user"))
    return zh_word if zh else en_word


class OfflineExtractor:
    name = "offline"

    def __init__(self, judge: SalienceJudge | None = None):
        from chalicelib.usecases.extract.salience import KeepAllJudge

        self.judge: SalienceJudge = judge or KeepAllJudge()

    def read(self, messages: Sequence[Message], ctx: ExtractionContext) -> Reading:
        """The rules' reading: events; every turn's facts are the fact rules' (facts.learn)."""
        return Reading(events=self.extract(messages, ctx))

    def extract(self, messages: Sequence[Message], ctx: ExtractionContext) -> list[EventDraft]:
        speakers = sorted({m.speaker for m in [*ctx.earlier, *messages] if m.role != "system"})
        turns = [m for m in messages if m.role != "system"]
        kept = {m.seq: said for m in turns if tells(m)
                and not rules.looks_like_instruction(m.content)
                and substantial(m, said := statements(m.content, speakers), speakers)}
        asked = [m for m in turns if kept.get(m.seq)]
        texts = [" ".join(kept[m.seq]) for m in asked]
        verdict = _verdicts(asked, texts, self.judge.assess(texts))
        history = list(ctx.earlier)
        played = plays_in_character([*ctx.earlier, *messages])
        names = talk_names([*ctx.earlier, *messages], speakers)
        happenings: list[Happening | EventDraft] = []
        for position, msg in enumerate(turns):
            if tells(msg) and rules.looks_like_instruction(msg.content):
                happenings.append(quoted_draft(msg))
            elif msg.seq in verdict:
                vector = verdict[msg.seq]
                you = addressed(msg, names, speakers) or other_party(msg, history)
                # "we" is the teller and the one they talk to, unless that is the AI: a
                # user's 我们 is her family or friends (我们全家一起搬), not the companion
                with_you = not any(m.speaker == you and m.role == "assistant" for m in history)
                self.add_turn(happenings, msg, kept[msg.seq], vector, you, speakers,
                              turns[:position], with_you,
                              story=played and not rules.OUT_OF_CHARACTER.match(msg.content))
            history.append(msg)
        return [h if isinstance(h, EventDraft) else h.draft() for h in happenings]

    def add_turn(self, happenings: list, msg: Message, said: list[str], vector: TurnVector,
                 you: str | None, speakers: Sequence[str], before: Sequence[Message],
                 with_you: bool = True, story: bool = False) -> None:
        """The turn's happenings: joined to the teller's last one when it goes on telling
        it (module docstring, step 3), else new. `story`: a turn in character in a
        role-play (`plays_in_character`)."""
        groups = happenings_of(msg, said, you, with_you)
        previous = _continued(happenings, msg, before, vector, groups[0], story)
        others = [s for s in speakers if s != msg.speaker]
        for i, group in enumerate(groups):
            timed = any(s.relative is not None or s.when != message_day(msg.at) for s in group)
            if i == 0 and previous is not None:
                previous.messages.append(msg)
                previous.statements.extend(group)
                previous.vector, previous.baseline = vector
                previous.timed = previous.timed or timed
                target = previous
            else:
                target = Happening(speaker=msg.speaker, messages=[msg], statements=list(group),
                                   vector=vector[0], baseline=vector[1], timed=timed,
                                   story=story)
                happenings.append(target)
            summary = " ".join(s.retold for s in target.statements)
            target.participants = list(dict.fromkeys(
                [p for p in [msg.speaker, *mentioned_names(summary, others)]
                 if not is_placeholder(p)]))


def talk_names(turns: Sequence[Message], speakers: Sequence[str]) -> set[str]:
    """The people a stretch of talk names: its speakers, and the capitalised words said
    mid-sentence (fact_context.batch_names)."""
    from chalicelib.domain.fact_context import Turn, batch_names  # the rules' reader: on use

    return {*speakers, *batch_names([Turn(m.role, m.content) for m in turns], speakers)}


def plays_in_character(turns: Sequence[Message]) -> bool:
    """A role-play: some turn steps out of character ("（ooc：下周三我要出差去深圳）"). Its
    other turns are the story, whose times are the story's ("雪团昨晚闯祸了", "when we
    docked at Vesta yesterday"): the calendar day of a happening in it is the day it was
    played, and no date is pinned to its words (`Happening.draft`). A companion chat, where the
    user tells their own life, has no turn out of character: an action between asterisks
    alone ("*hugs* starting monday!") does not make one a story."""
    return any(rules.OUT_OF_CHARACTER.match(m.content) for m in turns)


def tells(msg: Message) -> bool:
    """Whether a turn can be a memory of its own: a person's turn, not the AI's. The AI
    character reacts, asks, comforts and acts (*pours tea*); the facts of the user's life
    come from the user, so an assistant turn is context for the turns around it (the
    question a user's answer goes on telling) and never an event by itself. Two people
    talking (LoCoMo) are both users: `importing.locomo` imports them so."""
    return msg.role == "user"


def substantial(msg: Message, said: Sequence[str], names: Sequence[str]) -> bool:
    """Enough said to be a memory: three content words or more (names aside), or fewer that
    tell a life event, a plan or a time ("我怀孕了", "I moved!", "明天面试")."""
    if not said:
        return False
    text = " ".join(said)
    if content_words(text, names) >= MIN_CONTENT_WORDS:
        return True
    if rules.LIFE_WORDS.search(text) or rules.PLAN_WORDS.search(text):
        return True
    return parse_time(text, msg.at) is not None


def signals(msg: Message, text: str) -> bool:
    """A life event, a plan or decision, or a named time: words that mark a memory in any
    chat, whatever the judge makes of the rest."""
    return bool(rules.LIFE_WORDS.search(text) or rules.PLAN_WORDS.search(text)
                or parse_time(text, msg.at) is not None)


def _verdicts(asked: Sequence[Message], texts: Sequence[str],
              judged: Salience) -> dict[int, TurnVector]:
    """seq → the turn's vector and small-talk baseline, for the turns the judge finds worth an
    event; a turn with a signal (`signals`) needs only `SIGNAL_DISCOUNT` of the threshold. A
    turn that takes leave (`LEAVING`) is worth one only when it tells a life event: what else
    it says is why it goes ("不说了明天早班", "去 pack 了 bye"), whatever the judge makes of
    it (the judge scores those as high as news: companion chats, issue 36). A turn out of
    character in a role-play is worth one only with a signal: the player's trip or plan, not
    their word on the chat itself."""
    out = {}
    for i, msg in enumerate(asked):
        score = judged.scores[i]
        if rules.LEAVING.search(msg.content) and not rules.LIFE_WORDS.search(texts[i]):
            continue  # taking leave: "不说了明天早班", "tmr 早上还有个 9am call. night Sol"
        if rules.OUT_OF_CHARACTER.match(msg.content) and not signals(msg, texts[i]):
            continue  # the player on the chat itself: "(ooc: this is fun!! im on my phone)"
        if score >= judged.threshold or (score >= judged.threshold * SIGNAL_DISCOUNT
                                         and signals(msg, texts[i])):
            base = None if judged.baselines is None else float(judged.baselines[i])
            out[msg.seq] = (judged.vectors[i], base)
    return out


def happenings_of(msg: Message, said: Sequence[str], you: str | None,
                  with_you: bool = True) -> list[list[Statement]]:
    """The turn's statements, grouped: a statement that names another time than the group
    before it starts a new group (a new happening) — a stretch that holds the message's day
    (这周, 11月, this month) is no other time than now, as the day itself — unless it
    corrects that time ("三日后是谷雨…… 不对，五日后才是谷雨", "Thursday. wait no, Friday"):
    then the group before it is the same happening told wrong, and joins it at the corrected
    time, its own relative time no longer pinned. `with_you`: "we" includes `you`."""
    groups: list[list[Statement]] = []
    today = message_day(msg.at)
    for sentence in said:
        when, ahead, relative, framed_by = resolve_when(sentence, msg,
                                                         groups[-1][0].when if groups else None)
        repair = groups and REPAIR.search(sentence)
        statement = Statement(said=sentence, retold=retell(sentence, msg.speaker, you, with_you),
                              when=when, ahead=ahead, relative=relative, framed_by=framed_by)
        if groups and ((relative is None and when == today) or when == groups[-1][0].when
                       or (holds_day(when, today) and holds_day(groups[-1][0].when, today))):
            groups[-1].append(statement)
        elif repair:
            statement.repairs = True
            for told in groups[-1]:
                told.taken_back = told.taken_back or told.relative
                told.when, told.ahead, told.relative = when, ahead, None
            groups[-1].append(statement)
        else:
            groups.append([statement])
    return groups


def holds_day(when: When, day: When) -> bool:
    """`when` is the day itself or a stretch around it (这周, 11月, this month): what is told
    of it is told of now — "出差回来了！深圳好热 11月了还穿短袖" is one happening."""
    return when.start <= day.start and day.end <= when.end


def same_topic(a: np.ndarray, a_base: float | None, b: np.ndarray,
               b_base: float | None) -> bool:
    """Two turns' vectors are about one thing: their cosine clears small talk's by SAME_TOPIC
    of the room above it (`SAME_TOPIC_COSINE` plain when a baseline is missing)."""
    cosine = float(np.dot(a, b))
    if a_base is None or b_base is None:
        return cosine >= SAME_TOPIC_COSINE
    base = (a_base + b_base) / 2
    return (cosine - base) / max(1e-6, 1 - base) >= SAME_TOPIC


def _continued(happenings: Sequence, msg: Message, before: Sequence[Message],
               vector: TurnVector, first: Sequence[Statement],
               story: bool = False) -> Happening | None:
    """The teller's happening this turn goes on telling, if any (module docstring, step 3).
    A turn in character never goes on with one told out of character, nor the reverse: the
    player's week is not the story's."""
    last = next((h for h in reversed(happenings) if isinstance(h, Happening)
                 and h.speaker == msg.speaker), None)
    if last is None or len(last.messages) >= MAX_TURNS or last.story != story:
        return None
    if msg.at - last.messages[-1].at > MAX_TURN_GAP:
        return None  # told another time: another telling
    between = [m for m in before if m.seq > last.messages[-1].seq]
    if len(between) != 1 or between[0].speaker == msg.speaker:
        # Not the teller's turn right after the other side's reply. Two messages in a row
        # are two statements: a chat host splits a turn where its writer pressed enter.
        return None
    # After the other side's reply ("Wow!") the teller's next turn goes on telling it unless
    # it is plainly about something else. A reply that asks ("是不是吃的不合适？", "How did
    # it go?") is answered next, in words that seldom echo the telling ("很顺利", "我把猫粮
    # 换成了渴望"): that answer goes on telling it whatever the vectors say.
    if last.vector is None or not np.any(vector[0]):
        return None
    asked = rules.is_question(between[0].content)
    if not asked and not same_topic(last.vector, last.baseline, *vector):
        return None
    if _NEXT_ITEM().match(_part(msg.content, acted=False).strip()):
        return None  # "还有 我搬家了", "*grins* Also I bought a horse": another thing told
    # Another time is another happening; "today" is the telling's own time, as a turn that
    # names none ("前天发烧到39度" … "现在退烧了吗" … "今天总算退了" is one illness), and so is
    # a part of the telling's day in the answer to the other side's question ("今天心情很差" …
    # "怎么了？" … "芝麻今天早上没了"); unasked, "this evening" is another happening ("got a
    # puppy today" … "Congratulations!" … "took her to the vet this evening").
    today = message_day(msg.at)
    names_time = any(s.when != today for s in first)
    if names_time and first[0].when != last.when and not (
            asked and (one_day(first[0].when, last.when)
                       or (_WHEN_ASKED().search(between[0].content) and _only_time(first[0])))):
        return None
    return last


# The other side asks when ("First class when?", "那什么时候搬？"): a closed class of words.
_WHEN_ASKED = compiled(r"\b(?:when|what time|what day|which day|how soon)\b"
                       r"|什么时候|啥时候|哪天|哪一天|几号|几点|何时", re.IGNORECASE)


def _only_time(statement: Statement) -> bool:
    """A reply that says its time and little else ("next tuesday", "下周六"): the answer to
    when, which goes on telling the happening asked about rather than starting one."""
    return content_words(_untimed(statement.said, statement), []) <= 1


def one_day(a: When, b: When) -> bool:
    """One time told at two grains: equal, or one inside the other within a single day
    (this morning and today)."""
    if a == b:
        return True
    outer, inner = (a, b) if a.end - a.start >= b.end - b.start else (b, a)
    return (outer.end - outer.start <= timedelta(days=1)
            and outer.start <= inner.start and inner.end <= outer.end)
