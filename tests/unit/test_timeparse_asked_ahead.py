"""A holiday named without a year in a question not about the past, asked in the weeks
before it comes, is the coming one (issue 36): 春节我哪天回宜昌 on 2026-01-25 is 2026-02-17,
not 2025-01-29. Told as a statement or asked about the past, it stays the latest one."""

from __future__ import annotations

from datetime import date, datetime

import pytest

from chalicelib.domain.timeparse import parse_time

JAN_25 = datetime.fromisoformat("2026-01-25T10:00:00+08:00")
DEC_10 = datetime.fromisoformat("2026-12-10T09:00:00-05:00")
MAY_10 = datetime.fromisoformat("2026-05-10T09:00:00-05:00")


def day(text: str, now: datetime) -> date:
    span = parse_time(text, now)
    assert span is not None, text
    return span.start.date()


@pytest.mark.parametrize(("text", "now", "expected"), [
    ("春节我哪天回宜昌", JAN_25, date(2026, 2, 17)),
    ("春节你回家吗？", JAN_25, date(2026, 2, 17)),
    ("过年我哪天回家", JAN_25, date(2026, 2, 16)),  # the holiday period, 除夕 on
    ("春节期间干嘛", JAN_25, date(2026, 2, 16)),
    ("when do I fly home for Christmas?", DEC_10, date(2026, 12, 25)),
    ("what am I cooking for Christmas", DEC_10, date(2026, 12, 25)),
    # about the past: the latest one
    ("春节你去哪了？", JAN_25, date(2025, 1, 29)),
    ("去年春节我在哪", JAN_25, date(2025, 1, 29)),
    ("What did I get for Christmas?", DEC_10, date(2025, 12, 25)),
    # told in Chinese with no word of the past (了 / 过 / 已经 …): the coming one, as asked
    ("春节回宜昌", JAN_25, date(2026, 2, 17)),
    ("春节回宜昌了", JAN_25, date(2025, 1, 29)),
    ("对了国庆那个 哦不对", datetime.fromisoformat("2026-09-22T12:00:00+08:00"), date(2026, 10, 1)),
    # told in English: its past is in the verb ("we watched"), which no word shows — the
    # latest one, as before
    ("Christmas was great", DEC_10, date(2025, 12, 25)),
    ("On Christmas we watched the fireworks", DEC_10, date(2025, 12, 25)),
    # asked months before it comes: still the latest one
    ("when do I fly home for Christmas?", MAY_10, date(2025, 12, 25)),
])
def test_a_holiday_asked_about_before_it_comes(text: str, now: datetime, expected: date):
    assert day(text, now) == expected


@pytest.mark.parametrize("text", [
    "amazing. I'm illustrating a christmas range already. the wrist held up fine",
    "we did an easter egg hunt with the kids", "a thanksgiving potluck and a movie night",
])
def test_a_holiday_after_a_or_an_names_a_kind_of_thing_not_a_day(text: str):
    """Issue 36: Nora's "a christmas range" (a range of cards) dated her first week at the
    studio to last Christmas; a or an before a holiday's name makes it a kind of thing."""
    from chalicelib.domain.timeparse import parse_time

    assert parse_time(text, DEC_10) is None
    assert day("see you at christmas", DEC_10) == date(2026, 12, 25)
    assert day("last christmas I gave you my heart", DEC_10) == date(2025, 12, 25)


@pytest.mark.parametrize(("text", "expected"), [
    ("算了不想了，周一再说。", date(2026, 10, 12)), ("周五再说吧", date(2026, 10, 16)),
    # no time before 再说: the words say nothing of ahead ("first things first"; "besides")
    ("先活下来再说，周一去医院了", date(2026, 10, 5)), ("再说，周一我也不在", date(2026, 10, 5)),
])
def test_a_time_then_zaishuo_puts_off_until_then(text: str, expected: date):
    """Issue 36: 林悦's "算了不想了，周一再说" on Sunday night dated the thought to the Monday
    just past; a time followed by 再说 is when it is put off to."""
    sunday = datetime.fromisoformat("2026-10-11T21:50:00+08:00")
    assert day(text, sunday) == expected


def test_a_weekday_after_a_date_and_a_comma_is_another_day_unless_it_is_the_dates():
    """Issue 36: "是 Dec 16 周三, 周四 Richard 要飞北京" read Thursday into Wednesday's date, and
    "周三，周四我都在" named only one of its days; a date's own weekday still adds nothing."""
    from chalicelib.domain.timeparse import find_times

    now = datetime.fromisoformat("2026-12-12T21:00:00+08:00")

    def read(text: str) -> list[tuple[str, date]]:
        return [(s.matched, s.start.date()) for s in find_times(text, now)]

    assert read("是 Dec 16 周三, 周四 Richard 要飞北京") == [
        ("Dec 16 周三", date(2026, 12, 16)), ("周四", date(2026, 12, 17))]
    assert read("周三，周四我都在") == [("周三", date(2026, 12, 9)), ("周四", date(2026, 12, 10))]
    assert read("12月16日，周三") == [("12月16日，周三", date(2026, 12, 16))]
    assert read("10月3日（周六）") == [("10月3日（周六）", date(2026, 10, 3))]


@pytest.mark.parametrize(("text", "expected"), [
    ("他说我深蹲姿势不对想教我 然后约我周六看电影 我还没回", date(2026, 9, 19)),
    ("他约我周六看电影了", date(2026, 9, 19)),
    # no invitation: 约会 (a date), 大约 (about)
    ("上周六的约会", date(2026, 9, 12)), ("大约周六到的", date(2026, 9, 12)),
])
def test_an_invitation_names_the_time_it_invites_to(text: str, expected: date):
    """Issue 36: 阿凯 "约我周六看电影" on a Tuesday (and she has not answered yet) was dated to
    the Saturday before the chat began."""
    tuesday = datetime.fromisoformat("2026-09-15T22:18:00+08:00")
    assert day(text, tuesday) == expected
