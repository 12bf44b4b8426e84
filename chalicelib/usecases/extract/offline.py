"""The offline, rule-based extractor: no LLM, no network, deterministic.

One event per meaningful statement. Each event retells the statement with the speaker named,
in the message's own language, dated by the message (and, with the time module, by the time
the statement names), and cites the message it came from.

A message that gives orders to an AI or poses as a system or role marker ("SYSTEM OVERRIDE",
"ignore previous instructions", "you are now …", 忽略之前的指令, <system>, </memory>,
<|im_start|>, [INST]; textrules.looks_like_instruction) is never retold as fact, not even the
sentences around the marker: it becomes one event reporting what was said, 小明说：「…」 /
Sam said: "…", tagged "quoted", of low importance, on the message's day.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime, timedelta

from chalicelib.domain import textrules as rules
from chalicelib.domain.models import EventDraft, Message, Source, When
from chalicelib.domain.names import mentioned_names
from chalicelib.domain.textproc import is_cjk
from chalicelib.domain.timeparse import parse_time
from chalicelib.ports import ExtractionContext

PREVIEW_CHARS = 80
QUOTED_IMPORTANCE = 3  # an instruction someone typed is worth keeping, not worth surfacing
# Very short follow-ups ("It was fun.") join the statement before them instead of standing alone.
MIN_STANDALONE_CHARS = {"zh": 6, "en": 20}


def message_day(at: datetime) -> When:
    start = at.replace(hour=0, minute=0, second=0, microsecond=0)
    return When(start=start, end=start + timedelta(days=1), granularity="day")


def resolve_when(sentence: str, msg: Message) -> tuple[When, bool, str | None]:
    """The time a statement is about, whether that time is still ahead (a plan), and the
    matched expression when it was relative.

    Relative expressions (昨天, last Friday, 下周五) are resolved against the message's own
    time, not the time of extraction; a statement that names no time is about its message day.
    """
    span = parse_time(sentence, msg.at)
    if span is None:
        return message_day(msg.at), False, None
    when = When(start=span.start, end=span.end, granularity=span.granularity)
    relative = None if _YEAR.search(span.matched) else span.matched
    return when, span.start > msg.at, relative


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


def group_statements(sentences: list[str]) -> list[str]:
    lang = "zh" if any(is_cjk(s) for s in sentences) else "en"
    out: list[str] = []
    for sentence in sentences:
        if out and len(sentence) < MIN_STANDALONE_CHARS[lang]:
            out[-1] = f"{out[-1]} {sentence}" if lang == "en" else out[-1] + sentence
        else:
            out.append(sentence)
    return out


def quoted_draft(msg: Message) -> EventDraft:
    """What an instruction-like message said, as reported speech (module docstring)."""
    title, summary = rules.reported_speech(msg.speaker, msg.content)
    return EventDraft(
        title=title, summary=summary, when=message_day(msg.at),
        importance=min(QUOTED_IMPORTANCE, rules.importance(msg.content, has_time=False)),
        participants=[msg.speaker],
        sources=[Source(session=msg.session, seq_start=msg.seq, seq_end=msg.seq,
                        preview=msg.content[:PREVIEW_CHARS])],
        tags=[rules.QUOTED_TAG],
    )


class OfflineExtractor:
    name = "offline"

    def extract(self, messages: Sequence[Message], ctx: ExtractionContext) -> list[EventDraft]:
        history = list(ctx.earlier)
        speakers = {m.speaker for m in [*ctx.earlier, *messages] if m.role != "system"}
        drafts: list[EventDraft] = []
        for msg in messages:
            if msg.role != "system":
                drafts.extend(self.extract_message(msg, history, sorted(speakers)))
            history.append(msg)
        return drafts

    def extract_message(self, msg: Message, earlier: Sequence[Message],
                        speakers: Sequence[str]) -> list[EventDraft]:
        if rules.looks_like_instruction(msg.content):
            return [quoted_draft(msg)]
        statements = group_statements(
            [s for s in rules.split_sentences(msg.content) if rules.is_meaningful(s)]
        )
        you = other_party(msg, earlier)
        drafts = []
        for statement in statements:
            when, ahead, relative = resolve_when(statement, msg)
            summary = date_relative(rules.third_person(statement, msg.speaker, you), relative,
                                    when)
            # Anything said about a time still ahead is an intention or arrangement (下周五我们去…,
            # next Friday we will…): dated in the future and marked as a plan.
            plan = ahead
            participants = list(dict.fromkeys(
                [msg.speaker, *mentioned_names(summary, [s for s in speakers if s != msg.speaker])]
            ))
            drafts.append(EventDraft(
                title=rules.make_title(summary),
                summary=summary,
                when=when,
                importance=rules.importance(statement, has_time=when != message_day(msg.at)),
                participants=participants,
                sources=[Source(session=msg.session, seq_start=msg.seq, seq_end=msg.seq,
                                preview=msg.content[:PREVIEW_CHARS])],
                tags=["plan"] if plan else [],
                plan=plan,
            ))
        return drafts
