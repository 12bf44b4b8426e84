"""The chronicle's bookkeeping (issue 36): a session summary is titled with the session's own
days (not a date an event names), in the chat's language; the Markdown export's headings are
in the chats' language too; a day's events are listed in conversation order, in the export
and in GET …/events (list_events), a page not ending inside a day it could hold whole."""

from __future__ import annotations

from datetime import datetime, timedelta

from chalicelib.domain.models import EventDraft, MessageIn, PutMessagesRequest, Source, When
from chalicelib.ports import Reading
from chalicelib.usecases import events as events_uc
from chalicelib.usecases import export, ingest
from chalicelib.usecases.extract import extract_session
from tests.unit.conftest import CST, SPACE

DAY = datetime(2026, 12, 1, 20, 0, tzinfo=CST)
CHAT = ["我叫阿梅，最近在学做饭，昨天第一次做了红烧肉。", "今天去超市买了一大堆菜和调料。",
        "晚上跟朋友视频聊了很久，说好明年年底一起去冰岛。", "周末打算把家里的书架重新整理一遍。",
        "猫咪今天把我的拖鞋藏到了沙发底下。"]


class EnglishRetelling:
    """Events as an LLM may write them: one per user turn, retold in English whatever the
    chat's language, dated by the turn, or by the year-end plan the turn names."""

    name = "english-retelling"

    def read(self, messages, ctx) -> Reading:
        return Reading(events=self.retell(messages))

    def retell(self, messages) -> list[EventDraft]:
        out = []
        for m in messages:
            if m.role != "user":
                continue
            day = m.at.replace(hour=0, minute=0, second=0, microsecond=0)
            when = When(start=day, end=day + timedelta(days=1), granularity="day")
            if "明年年底" in m.content:  # a plan: the events' span would reach into 2027
                when = When(start=datetime(2027, 12, 1, tzinfo=CST),
                            end=datetime(2028, 1, 1, tzinfo=CST), granularity="month")
            out.append(EventDraft(title=f"Amei, turn {m.seq}", summary=f"Amei told turn {m.seq}.",
                                  when=when, plan="明年" in m.content,
                                  sources=[Source(session=m.session, seq_start=m.seq,
                                                  seq_end=m.seq)]))
        return out


def chat(services, days: tuple[int, ...] = (0, 0, 1, 2, 2)) -> None:
    """阿梅's turns (each with 小艾's reply) on the days of the chat `days` gives, extracted."""
    services.extractor = EnglishRetelling()
    messages = []
    for turn, (text, day) in enumerate(zip(CHAT, days, strict=True)):
        at = DAY + timedelta(days=day, minutes=2 * turn)
        messages += [MessageIn(seq=2 * turn, role="user", speaker="阿梅", content=text, at=at),
                     MessageIn(seq=2 * turn + 1, role="assistant", speaker="小艾",
                               content="好呀，听起来不错！", at=at + timedelta(minutes=1))]
    ingest.put_messages(services, SPACE, "s1", PutMessagesRequest(messages=messages))
    extract_session(services, SPACE, "s1", DAY + timedelta(days=5))


def test_a_session_summary_is_titled_with_its_own_days_in_the_chats_language(services):
    chat(services)
    (summary,) = events_uc.list_events(services, SPACE, kinds=("summary",)).events
    assert summary.title == "会话摘要：2026-12-01~2026-12-03"
    assert (summary.when.start, summary.when.end) == (datetime(2026, 12, 1, tzinfo=CST),
                                                      datetime(2026, 12, 4, tzinfo=CST))


def test_the_export_speaks_the_chats_language(services):
    chat(services)
    md = export.export_markdown(services, SPACE)
    assert "## 概要" in md and "## 时间线" in md and "## 摘要" in md
    assert "## Timeline" not in md and "Session summary" not in md


def test_a_days_events_are_in_conversation_order(services):
    chat(services, days=(0, 0, 0, 0, 0))
    listed = events_uc.list_events(services, SPACE).events
    assert [e.sources[0].seq_start for e in listed if not e.plan] == [0, 2, 6, 8]
    md = export.export_markdown(services, SPACE)
    told = [line for line in md.splitlines() if line.startswith("├─ 2026-12-01")]
    assert [line.split("turn ")[1].rstrip(".") for line in told] == ["0", "2", "6", "8"]


def test_a_page_ends_with_a_whole_day(services):
    chat(services, days=(0, 0, 1, 1, 1))  # 12-01: turns 0, 2; 12-02: 6, 8; the plan: 4
    first = events_uc.list_events(services, SPACE, limit=3)
    assert [e.sources[0].seq_start for e in first.events] == [0, 2]  # not a part of 12-02
    rest = events_uc.list_events(services, SPACE, limit=3, cursor=first.next_cursor)
    assert [e.sources[0].seq_start for e in rest.events] == [6, 8, 4]
    assert rest.next_cursor is None
