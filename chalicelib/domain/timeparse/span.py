"""The public result type (TimeSpan) and the resolution context (Ctx)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta, tzinfo
from typing import Any, Literal
from zoneinfo import ZoneInfo

from chalicelib.domain import english_forms

Granularity = Literal["minute", "hour", "part_of_day", "day", "week", "month", "year"]


@dataclass(frozen=True)
class TimeSpan:
    start: datetime  # tz-aware, in the reference zone
    end: datetime  # tz-aware, exclusive
    granularity: str  # one of Granularity; a range takes the coarser granularity of its ends
    matched: str  # the exact substring of the input that was matched
    offset: int  # char index of `matched` in the input
    exact: bool  # False for vague expressions (几天前, recently, early August)

    def to_json(self) -> dict[str, Any]:
        return {
            "start": self.start.isoformat(),
            "end": self.end.isoformat(),
            "granularity": self.granularity,
            "matched": self.matched,
            "offset": self.offset,
            "exact": self.exact,
        }


# Wording that says the sentence is about what is still to come. It only decides the
# direction of expressions that name no direction themselves (周五, 10月3日, Christmas):
# those otherwise point to the past, because most chat is about what already happened.
FUTURE_WORDS = re.compile(
    r"打算|准备|计划|将要|将会|即将|要去|要回|要来|会去|会来|预计|预定|约好|约了|下次|到时候|届时|想去"
    # an invitation names the time of what it invites to ("然后约我周六看电影 我还没回")
    r"|约(?=[我你他她咱])"
    # 要 before what one will do (周五要交报告, 我周三要出差, 周六要加班吗), not 重要 / 主要 / 只要
    # (important, main, as long as), 想要 (wanting), 要是 / 要不是 (if), 要求, nor 要死 / 要命
    # (累得要死: "so tired")
    r"|(?<![重主只想])要(?![求是死命]|不是)"
    r"|明天|后天|下周|下个|下星期|下礼拜|明年"
    # a time, then 再说: what is put off until then ("算了不想了，周一再说", "明天再说"); not
    # "先活下来再说" (first things first) nor 再说 opening a sentence ("再说，…": besides)
    r"|(?<=[一二三四五六七日天末周月号点后时])再说"
    r"|\b(?:will|shall|gonna|going to|plan(?:s|ning)? to|planning|upcoming|scheduled|see you"
    r"|looking forward|can't wait|hope to|intend to|tomorrow|next (?:week|month|year|weekend)"
    r"|plans? for|(?:am|are|is) (?:I|we|you|he|she|they) (?:doing|going|having|spending))\b"
    r"|['’]ll\b",
    re.IGNORECASE,
)

# Wording that says the sentence is about what already happened: 了 (not 为了, 除了, 了解, nor
# 对了 opening a clause: "by the way"),
# 过 after a verb (not 过年, 过节, 过来, 难过), 去年, 上次, did, was … A question without it
# (春节我哪天回宜昌, "when do I fly home for Christmas?") reads ahead: Ctx.reads_ahead.
PAST_WORDS = re.compile(
    r"(?<![为除算罢])(?<!^对)(?<![，,。！!\s]对)了(?!解)|(?<![难经不超通度越路])过(?![年节来去日])|去年|前年|上次|上回|那次"
    r"|那年|那时|当时|之前|以前|已经|刚才"
    r"|\b(?:did|didn't|was|wasn't|were|weren't|went|had|spent|ago|last|used to)\b",
    re.IGNORECASE)
QUESTION_WORDS = re.compile(
    r"[？?]|吗|哪|几[号点天时月日]|什么|啥|干嘛|谁|多少|多久|怎么|是不是|有没有"
    r"|^\s*(?:when|what|where|which|how|who|do|does|am|are|is|will|shall|should|can)\b",
    re.IGNORECASE | re.MULTILINE)

# "Thanksgiving at my parents' place this year": a day named without a year in a sentence
# that says "this year" is this year's, not the latest one that has started.
THIS_YEAR_WORDS = re.compile(r"今年|\bthis year\b", re.IGNORECASE)
_HAN = re.compile(r"[\u4e00-\u9fff]")

# Full-width digits, letters and punctuation -> ASCII, one char for one char so that
# offsets into the normalised text are offsets into the caller's text.
_FULL_WIDTH = {c: c - 0xFEE0 for c in range(0xFF01, 0xFF5F)}
_FULL_WIDTH[0x3000] = 0x20
_FULL_WIDTH |= {0x2019: 0x27, 0x2018: 0x27}  # ’ ‘ as ': "didn’t", "what’s on"
# Traditional characters of the time words -> simplified, also one for one (上個禮拜, 3週後,
# 國慶節, 聖誕節), so that the Chinese rules read both scripts.
_TRADITIONAL = ("後后 個个 週周 禮礼 點点 鐘钟 時时 號号 節节 慶庆 聖圣 誕诞 國国 兩两 幾几 這这 來来"
                " 裡里 當当 過过 間间 陣阵 剛刚 將将 會会 準准 計计 劃划 預预 約约 報报 歲岁 樓楼 線线"
                " 車车 門门 開开 見见 長长 黃黄 頭头 兒儿 萬万 親亲 婦妇 師师 復复 勞劳 動动 陽阳 從从"
                " 農农 曆历 舊旧 際际 誕诞 燈灯 賞赏 團团 圓圆 嗎吗 歡欢 於于 紀纪 級级 鐘钟 閒闲 週周")
_FULL_WIDTH.update({ord(pair[0]): ord(pair[1]) for pair in _TRADITIONAL.split()})


@dataclass(frozen=True)
class Ctx:
    """Everything a rule needs: the reference time in its zone and the (normalised) text."""

    now: datetime
    zone: tzinfo
    text: str
    future: bool = False
    this_year: bool = False  # the sentence says "this year" / 今年 apart from the day it names
    # not about the past, as far as words show: a question with no word of the past, or a
    # Chinese sentence with none (Chinese marks what is done with 了 / 过 / 已经, which
    # PAST_WORDS reads; English marks it by inflection, "we watched", which it does not)
    reads_ahead: bool = False
    # about the past, as far as words show (PAST_WORDS), or read as past by the caller
    # (`future=False`): a day named alone ("on the 5th", 5号) is then this month's
    past: bool = False
    # the text is one question (QUESTION_WORDS, no sentence before or after it: in "Is it
    # strapped up? You need that wrist for December." the month is not what is asked)
    question: bool = False

    def asks_about_the_past(self) -> bool:
        """A question about what already happened ("14号我干嘛了", "What happened on the
        20th?", "What did I tell you on Dec 20?"): a day it names that has not come yet is
        not the one it means. A word of the past (PAST_WORDS), or in English a verb in the
        past tense (`past_tense`: read only when such a day is named)."""
        if not self.question or self.future:
            return False
        return self.past or (_HAN.search(self.text) is None and past_tense(self.text))

    def reads_ahead_in_english(self) -> bool:
        """An English statement not about the past: no word of the past and no verb in the
        past tense ("that's thanksgiving lol", "I'm illustrating a christmas range"; not "we
        watched fireworks"). English marks what is done by inflection, which `past_tense`
        reads; asked only where a holiday is named, so its table is read only then."""
        return not self.past and _HAN.search(self.text) is None and not past_tense(self.text)

    @property
    def today(self) -> date:
        return self.now.date()

    def at(self, day: date, hour: int = 0, minute: int = 0) -> datetime:
        """Wall-clock time on `day` in the reference zone; hours past 24 roll into later days.

        Built from the wall clock (not by adding hours) so day bounds stay at midnight on
        days when daylight saving time changes."""
        extra, hour = divmod(hour, 24)
        day = day + timedelta(days=extra)
        return datetime(day.year, day.month, day.day, hour, minute, tzinfo=self.zone)


_WORD = re.compile(r"[A-Za-z]{3,}")


def past_tense(text: str) -> bool:
    """Some word of the text is a verb's past tense (chalicelib.domain.english_forms:
    watched, booked, took; a form that is also another word's base, left or found, counts —
    the past is the reading that was always taken)."""
    past = english_forms.past_forms()  # the table is read when a holiday is first named
    return any(word.lower() in past for word in _WORD.findall(text))


_SENTENCE_END = re.compile(r"[。！？!?；;\n]+|\.(?:\s|$)")


def one_sentence(text: str) -> bool:
    """No sentence ends before the text's last words."""
    return len([p for p in _SENTENCE_END.split(text) if p.strip()]) <= 1


def resolve_zone(now: datetime, tz: str | tzinfo | None) -> tzinfo:
    if not isinstance(now, datetime):
        raise TypeError("now must be a datetime")
    if now.tzinfo is None or now.utcoffset() is None:
        raise ValueError("now must be timezone-aware")
    if tz is None:
        return now.tzinfo
    return ZoneInfo(tz) if isinstance(tz, str) else tz


def make_ctx(now: datetime, tz: str | tzinfo | None, text: str,
             future: bool | None = None) -> Ctx:
    """`future`: whether the text speaks of what is ahead, when the caller knows it from
    around the text (a correction of a plan: "next Thursday. Oh wait no, Friday!"); None:
    read from the text's own words (FUTURE_WORDS)."""
    zone = resolve_zone(now, tz)
    norm = text.translate(_FULL_WIDTH)
    said_past = PAST_WORDS.search(norm) is not None
    return Ctx(now=now.astimezone(zone), zone=zone, text=norm,
               future=FUTURE_WORDS.search(norm) is not None if future is None else future,
               this_year=THIS_YEAR_WORDS.search(norm) is not None,
               reads_ahead=not said_past
               and (QUESTION_WORDS.search(norm) is not None or _HAN.search(norm) is not None),
               past=future is False or said_past,
               question=QUESTION_WORDS.search(norm) is not None and one_sentence(norm))
