"""Unit tests for chalicelib.domain.timeparse: reference checks, both languages, no-time sentences,
time zones and daylight-saving day boundaries. Expected windows are worked out by hand
from the calendar (2026-10-28 is a Wednesday; weeks start on Monday)."""

from __future__ import annotations

import time
from datetime import UTC, date, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest

from chalicelib.domain.timeparse import TimeSpan, find_times, parse_time, when_json

NOW = datetime.fromisoformat("2026-10-28T10:30:00+08:00")  # Wednesday
SHANGHAI = "Asia/Shanghai"
NOW_2023 = datetime.fromisoformat("2023-06-20T12:00:00+00:00")  # Tuesday


def window(text: str, now: datetime = NOW, tz: str | None = SHANGHAI) -> tuple[str, str, str]:
    """(start, end, granularity) with times shown as local 'YYYY-MM-DD' or 'YYYY-MM-DD HH:MM'."""
    span = parse_time(text, now, tz)
    assert span is not None, f"no time found in {text!r}"
    return show(span.start), show(span.end), span.granularity


def show(moment: datetime) -> str:
    if moment.hour == moment.minute == 0:
        return moment.strftime("%Y-%m-%d")
    return moment.strftime("%Y-%m-%d %H:%M")


# --- the reference checks from the brief -----------------------------------------------------

@pytest.mark.parametrize(("text", "expected"), [
    ("上周二", ("2026-10-20", "2026-10-21", "day")),
    ("昨天下午", ("2026-10-27 12:00", "2026-10-27 18:00", "part_of_day")),
    ("last weekend", ("2026-10-24", "2026-10-26", "day")),
    ("上个月", ("2026-09-01", "2026-10-01", "month")),
    ("三个月前", ("2026-07-01", "2026-08-01", "month")),
    ("去年", ("2025-01-01", "2026-01-01", "year")),
    ("十月三号", ("2026-10-03", "2026-10-04", "day")),
    ("国庆节", ("2026-10-01", "2026-10-02", "day")),  # the day; 国庆假期 is the week
    ("2026-10-01~2026-10-07", ("2026-10-01", "2026-10-08", "day")),
    ("你还记得上周二我们去海边吗", ("2026-10-20", "2026-10-21", "day")),
])
def test_reference_checks(text: str, expected: tuple[str, str, str]) -> None:
    assert window(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("The week before 9 June 2023", ("2023-06-02", "2023-06-09", "week")),
    ("the Sunday before 25 May 2023", ("2023-05-21", "2023-05-22", "day")),
    ("the weekend before 20 May 2023", ("2023-05-13", "2023-05-15", "day")),
    ("two days before 3 May 2023", ("2023-05-01", "2023-05-02", "day")),
    ("the day after 3 May 2023", ("2023-05-04", "2023-05-05", "day")),
    ("the week of 3 May 2023", ("2023-05-01", "2023-05-08", "week")),
])
def test_relative_to_a_date(text: str, expected: tuple[str, str, str]) -> None:
    assert window(text, NOW_2023, None) == expected


def test_reference_pet_checkup() -> None:
    now = datetime.fromisoformat("2026-06-15T10:00:00+08:00")
    span = parse_time("奶糖昨天进行了体检，结果正常", now)
    assert span is not None
    assert (span.start.isoformat(), span.end.isoformat(), span.granularity) == (
        "2026-06-14T00:00:00+08:00", "2026-06-15T00:00:00+08:00", "day")
    assert span.matched == "昨天" and span.offset == 2


# --- Chinese ---------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "expected"), [
    ("今天", ("2026-10-28", "2026-10-29", "day")),
    ("前天", ("2026-10-26", "2026-10-27", "day")),
    ("大前天", ("2026-10-25", "2026-10-26", "day")),
    ("两天前", ("2026-10-26", "2026-10-27", "day")),
    ("三天前", ("2026-10-25", "2026-10-26", "day")),
    ("明天", ("2026-10-29", "2026-10-30", "day")),
    ("3天后", ("2026-10-31", "2026-11-01", "day")),
    ("星期二", ("2026-10-27", "2026-10-28", "day")),
    ("礼拜五", ("2026-10-23", "2026-10-24", "day")),
    ("周三", ("2026-10-28", "2026-10-29", "day")),  # bare weekday: today counts
    ("上星期二", ("2026-10-20", "2026-10-21", "day")),
    ("上上周三", ("2026-10-14", "2026-10-15", "day")),
    ("这周五", ("2026-10-30", "2026-10-31", "day")),
    ("本周日", ("2026-11-01", "2026-11-02", "day")),
    ("下周五", ("2026-11-06", "2026-11-07", "day")),
    ("上周", ("2026-10-19", "2026-10-26", "week")),
    ("这周", ("2026-10-26", "2026-11-02", "week")),
    ("下周", ("2026-11-02", "2026-11-09", "week")),
    ("周末", ("2026-10-24", "2026-10-26", "day")),
    ("上周末", ("2026-10-24", "2026-10-26", "day")),
    ("这周末", ("2026-10-31", "2026-11-02", "day")),
    ("8月", ("2026-08-01", "2026-09-01", "month")),
    ("八月", ("2026-08-01", "2026-09-01", "month")),
    ("这个月", ("2026-10-01", "2026-11-01", "month")),
    ("下个月", ("2026-11-01", "2026-12-01", "month")),
    ("前年", ("2024-01-01", "2025-01-01", "year")),
    ("今年", ("2026-01-01", "2027-01-01", "year")),
    ("明年", ("2027-01-01", "2028-01-01", "year")),
    ("2025年", ("2025-01-01", "2026-01-01", "year")),
    ("2025年3月", ("2025-03-01", "2025-04-01", "month")),
    ("去年8月", ("2025-08-01", "2025-09-01", "month")),
    ("上周二晚上", ("2026-10-20 18:00", "2026-10-21", "part_of_day")),
    ("凌晨", ("2026-10-28", "2026-10-28 06:00", "part_of_day")),
    ("中午", ("2026-10-28 11:00", "2026-10-28 14:00", "part_of_day")),
    ("今晚", ("2026-10-28 18:00", "2026-10-29", "part_of_day")),
    ("下午3点", ("2026-10-28 15:00", "2026-10-28 16:00", "hour")),
    ("3点半", ("2026-10-28 15:30", "2026-10-28 15:31", "minute")),
    ("晚上8点20分", ("2026-10-28 20:20", "2026-10-28 20:21", "minute")),
    ("夜里2点", ("2026-10-29 02:00", "2026-10-29 03:00", "hour")),
    ("10月3日下午3点", ("2026-10-03 15:00", "2026-10-03 16:00", "hour")),
    ("2026年10月20日", ("2026-10-20", "2026-10-21", "day")),
    ("二〇二五年十月三日", ("2025-10-03", "2025-10-04", "day")),
    ("10月3日", ("2026-10-03", "2026-10-04", "day")),
    ("10月3号", ("2026-10-03", "2026-10-04", "day")),
    ("上个月3号", ("2026-09-03", "2026-09-04", "day")),
    ("10月3日（周六）", ("2026-10-03", "2026-10-04", "day")),
])
def test_chinese_exact(text: str, expected: tuple[str, str, str]) -> None:
    assert window(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("从10月1日到10月7日", ("2026-10-01", "2026-10-08", "day")),
    ("10月1日至7日", ("2026-10-01", "2026-10-08", "day")),
    ("2026-10-01 到 2026-10-07", ("2026-10-01", "2026-10-08", "day")),
    ("3月到5月", ("2026-03-01", "2026-06-01", "month")),
    ("昨天下午3点到5点", ("2026-10-27 15:00", "2026-10-27 17:00", "hour")),
    ("周一到周三", ("2026-10-26", "2026-10-29", "day")),
    ("12月30日到1月2日", ("2025-12-30", "2026-01-03", "day")),
])
def test_chinese_ranges_are_hulls(text: str, expected: tuple[str, str, str]) -> None:
    assert window(text) == expected


@pytest.mark.parametrize(("text", "start", "end"), [
    ("元旦", "2026-01-01", "2026-01-02"),
    ("春节", "2026-02-17", "2026-02-18"),  # lunar 1/1
    ("除夕", "2026-02-16", "2026-02-17"),
    ("元宵节", "2026-03-03", "2026-03-04"),
    ("清明节", "2026-04-05", "2026-04-06"),
    ("劳动节", "2026-05-01", "2026-05-02"),
    ("五一", "2026-05-01", "2026-05-02"),
    ("端午节", "2026-06-19", "2026-06-20"),
    ("中秋节", "2026-09-25", "2026-09-26"),
    ("八月十五", "2026-09-25", "2026-09-26"),
    ("十一假期", "2026-10-01", "2026-10-08"),
    ("情人节", "2026-02-14", "2026-02-15"),
    # 58 days ahead, named with no word of the past: the coming one (resolve.holiday)
    ("圣诞节", "2026-12-25", "2026-12-26"),
    ("平安夜", "2026-12-24", "2026-12-25"),
    ("圣诞节过得怎么样", "2025-12-25", "2025-12-26"),  # 过: the last one
    ("去年春节", "2025-01-29", "2025-01-30"),
    ("明年春节", "2027-02-06", "2027-02-07"),
    ("国庆前一天", "2026-09-30", "2026-10-01"),
])
def test_chinese_holidays(text: str, start: str, end: str) -> None:
    assert window(text)[:2] == (start, end)


@pytest.mark.parametrize(("text", "start"), [
    # solar terms move by a day with the leap-year cycle (the almanac's dates)
    ("冬至", "2026-12-22"), ("去年冬至", "2025-12-21"), ("前年冬至", "2024-12-21"),
    ("夏至", "2026-06-21"), ("立春", "2026-02-04"), ("去年立春", "2025-02-03"),
    ("立秋那天", "2026-08-07"), ("立冬", "2026-11-07"), ("立夏", "2026-05-05"),
    ("2023年立秋", "2023-08-08"), ("2021年冬至", "2021-12-21"), ("2022年清明", "2022-04-05"),
    ("Dongzhi festival", "2026-12-22"),
])
def test_solar_terms(text: str, start: str) -> None:
    first, end = window(text)[:2]
    assert first == start and date.fromisoformat(end) - date.fromisoformat(first) == timedelta(1)


def test_holiday_in_a_plan_is_the_next_one() -> None:
    assert window("圣诞节我们打算去滑雪")[:2] == ("2026-12-25", "2026-12-26")


@pytest.mark.parametrize(("text", "start", "end"), [
    ("十几天前", "2026-10-09", "2026-10-18"),
    ("几天前", "2026-10-22", "2026-10-27"),
    ("前几天", "2026-10-22", "2026-10-27"),
    ("最近", "2026-10-15", "2026-10-29"),
    ("前阵子", "2026-09-16", "2026-10-22"),
    ("月初", "2026-10-01", "2026-10-11"),
    ("月底", "2026-10-21", "2026-11-01"),
    ("上个月底", "2026-09-21", "2026-10-01"),
    ("8月上旬", "2026-08-01", "2026-08-11"),
    # 8月中 when only a pause follows it (not 9月中秋, 6月中考)
    ("8月中的时候", "2026-08-11", "2026-08-21"), ("上个月中，我们搬家了", "2026-09-11", "2026-09-21"),
    ("8月中左右", "2026-08-11", "2026-08-21"),
    ("下旬", "2026-10-21", "2026-11-01"),
    ("年初", "2026-01-01", "2026-03-01"),
    ("去年年底", "2025-11-01", "2026-01-01"),
    ("去年夏天", "2025-06-01", "2025-09-01"),
    ("半年前", "2026-03-01", "2026-06-01"),
])
def test_chinese_vague(text: str, start: str, end: str) -> None:
    span = parse_time(text, NOW, SHANGHAI)
    assert span is not None and not span.exact
    assert (show(span.start), show(span.end)) == (start, end)


@pytest.mark.parametrize("text", ["6月中考", "11月中国队赢了"])
def test_a_word_starting_with_zhong_after_a_month_is_no_mid_month(text: str) -> None:
    span = parse_time(text, NOW, SHANGHAI)
    assert span is not None and (show(span.end) > show(span.start)) and span.start.day == 1
    assert (span.end - span.start).days >= 28  # the whole month


# --- English ---------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "expected"), [
    ("today", ("2023-06-20", "2023-06-21", "day")),
    ("yesterday", ("2023-06-19", "2023-06-20", "day")),
    ("the day before yesterday", ("2023-06-18", "2023-06-19", "day")),
    ("3 days ago", ("2023-06-17", "2023-06-18", "day")),
    ("tomorrow", ("2023-06-21", "2023-06-22", "day")),
    ("in 3 days", ("2023-06-23", "2023-06-24", "day")),
    ("last Tuesday", ("2023-06-13", "2023-06-14", "day")),  # the previous week's Tuesday
    ("this Friday", ("2023-06-23", "2023-06-24", "day")),
    ("next Friday", ("2023-06-30", "2023-07-01", "day")),
    ("on Friday", ("2023-06-16", "2023-06-17", "day")),
    ("Tuesday", ("2023-06-20", "2023-06-21", "day")),
    ("this past Friday", ("2023-06-16", "2023-06-17", "day")),
    ("this coming Monday", ("2023-06-26", "2023-06-27", "day")),
    ("last week", ("2023-06-12", "2023-06-19", "week")),
    ("this week", ("2023-06-19", "2023-06-26", "week")),
    ("next week", ("2023-06-26", "2023-07-03", "week")),
    ("this weekend", ("2023-06-24", "2023-06-26", "day")),
    ("last month", ("2023-05-01", "2023-06-01", "month")),
    ("2 months ago", ("2023-04-01", "2023-05-01", "month")),
    ("in August", ("2023-08-01", "2023-09-01", "month")),
    ("last year", ("2022-01-01", "2023-01-01", "year")),
    ("this year", ("2023-01-01", "2024-01-01", "year")),
    ("in 2022", ("2022-01-01", "2023-01-01", "year")),
    ("5 years ago", ("2018-01-01", "2019-01-01", "year")),
    ("this morning", ("2023-06-20 06:00", "2023-06-20 12:00", "part_of_day")),
    ("this afternoon", ("2023-06-20 12:00", "2023-06-20 18:00", "part_of_day")),
    ("tonight", ("2023-06-20 18:00", "2023-06-21 06:00", "part_of_day")),
    ("last night", ("2023-06-19 18:00", "2023-06-20 06:00", "part_of_day")),
    ("yesterday morning", ("2023-06-19 06:00", "2023-06-19 12:00", "part_of_day")),
    ("last Friday evening", ("2023-06-16 18:00", "2023-06-17", "part_of_day")),
    ("3pm", ("2023-06-20 15:00", "2023-06-20 16:00", "hour")),
    ("at 3:30 pm", ("2023-06-20 15:30", "2023-06-20 15:31", "minute")),
    ("14:30", ("2023-06-20 14:30", "2023-06-20 14:31", "minute")),
    ("yesterday at 3", ("2023-06-19 15:00", "2023-06-19 16:00", "hour")),
    ("2026-10-20 14:30", ("2026-10-20 14:30", "2026-10-20 14:31", "minute")),
    ("2026/10/20", ("2026-10-20", "2026-10-21", "day")),
    # this year's October 3 is 105 days ahead (more than 60): last year's is meant
    ("October 3rd", ("2022-10-03", "2022-10-04", "day")),
    ("Oct 3", ("2022-10-03", "2022-10-04", "day")),
    ("3 May 2023", ("2023-05-03", "2023-05-04", "day")),
    ("May 3, 2023", ("2023-05-03", "2023-05-04", "day")),
    ("8 May, 2023", ("2023-05-08", "2023-05-09", "day")),
    ("May 2023", ("2023-05-01", "2023-06-01", "month")),
    ("Saturday, May 13, 2023", ("2023-05-13", "2023-05-14", "day")),
])
def test_english_exact(text: str, expected: tuple[str, str, str]) -> None:
    assert window(text, NOW_2023, None) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("from May 1 to May 7", ("2023-05-01", "2023-05-08", "day")),
    ("between May 1 and May 7 2023", ("2023-05-01", "2023-05-08", "day")),
    ("May 1-7, 2023", ("2023-05-01", "2023-05-08", "day")),
    ("1-7 May 2023", ("2023-05-01", "2023-05-08", "day")),
    ("from 2019 to 2021", ("2019-01-01", "2022-01-01", "year")),
    ("3pm to 5pm", ("2023-06-20 15:00", "2023-06-20 17:00", "hour")),
])
def test_english_ranges_are_hulls(text: str, expected: tuple[str, str, str]) -> None:
    assert window(text, NOW_2023, None) == expected


@pytest.mark.parametrize(("text", "start", "end"), [
    ("Christmas", "2022-12-25", "2022-12-26"),
    ("Christmas Eve", "2022-12-24", "2022-12-25"),
    ("Christmas 2021", "2021-12-25", "2021-12-26"),
    ("New Year's Day", "2023-01-01", "2023-01-02"),
    ("New Year's Eve", "2022-12-31", "2023-01-01"),
    ("Valentine's Day", "2023-02-14", "2023-02-15"),
    ("Halloween", "2022-10-31", "2022-11-01"),
    ("Thanksgiving", "2022-11-24", "2022-11-25"),  # 4th Thursday of November
    # named alone two weeks before it: the coming one (no word or tense of the past)
    ("Independence Day", "2023-07-04", "2023-07-05"),
    ("July 4th", "2023-07-04", "2023-07-05"),
    ("We watched the fireworks on Independence Day", "2022-07-04", "2022-07-05"),
    ("next Christmas", "2023-12-25", "2023-12-26"),
    ("Chinese New Year", "2023-01-22", "2023-01-23"),
])
def test_english_holidays(text: str, start: str, end: str) -> None:
    assert window(text, NOW_2023, None)[:2] == (start, end)


@pytest.mark.parametrize(("text", "start", "end"), [
    ("a few days ago", "2023-06-14", "2023-06-19"),
    ("recently", "2023-06-07", "2023-06-21"),
    ("early August", "2023-08-01", "2023-08-11"),
    ("mid-August", "2023-08-11", "2023-08-21"),
    ("late May", "2023-05-21", "2023-06-01"),
    ("the beginning of 2023", "2023-01-01", "2023-03-01"),
    ("the end of last year", "2022-11-01", "2023-01-01"),
    ("last summer", "2022-06-01", "2022-09-01"),
    ("a while ago", "2023-05-09", "2023-06-14"),
])
def test_english_vague(text: str, start: str, end: str) -> None:
    span = parse_time(text, NOW_2023)
    assert span is not None and not span.exact
    assert (show(span.start), show(span.end)) == (start, end)


# --- sentences that name no time -------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "我很开心", "我有三个猫", "第一次", "他一直很好", "我以前天天跑步", "如今天气变冷了",
    "一周一次", "每周二都有例会", "我有一点累", "我住在3号楼", "坐1号线", "有两点建议",
    "这个月饼很好吃", "我们在周围散步", "晚上好", "三个人一起去", "我每天早上6点起床",
    "I may go", "March forward", "Can you second that?", "one of them", "May I ask",
    "the sun was out", "I have 2022 reasons", "Wait a second", "I'll be back in a minute",
    "Those 2 may be wrong", "Summer is hot", "Don't fall down", "We need to march on",
    "Every Friday we play football", "Mondays are hard", "What a night!", "At last",
    "Rome wasn't built in a day", "I ate 5 apples", "", "   ",
])
def test_no_time(text: str) -> None:
    assert find_times(text, NOW) == []
    assert parse_time(text, NOW) is None
    assert when_json(text, NOW) == {"start": None, "end": None, "granularity": None,
                                    "matched": None}


# --- API shape -------------------------------------------------------------------------------

def test_find_times_returns_every_expression_in_order() -> None:
    text = "昨天下午我们开会，讨论了下个月的计划，然后last Friday evening又聊了一次"
    spans = find_times(text, NOW, SHANGHAI)
    assert [s.matched for s in spans] == ["昨天下午", "下个月", "last Friday evening"]
    assert all(text[s.offset:s.offset + len(s.matched)] == s.matched for s in spans)
    assert [s.offset for s in spans] == sorted(s.offset for s in spans)


def test_parse_time_takes_the_first_expression() -> None:
    span = parse_time("I met her yesterday and will see her next week", NOW_2023)
    assert span is not None and span.matched == "yesterday"


def test_when_json_shape() -> None:
    assert when_json("上周二", NOW) == {
        "start": "2026-10-20T00:00:00+08:00", "end": "2026-10-21T00:00:00+08:00",
        "granularity": "day", "matched": "上周二"}


def test_timespan_is_frozen_and_serialises() -> None:
    span = parse_time("几天前", NOW)
    assert isinstance(span, TimeSpan)
    with pytest.raises(AttributeError):
        span.start = NOW  # type: ignore[misc]
    data = span.to_json()
    assert data["exact"] is False and data["granularity"] == "day"
    assert datetime.fromisoformat(data["end"]) == span.end


def test_naive_now_is_rejected() -> None:
    with pytest.raises(ValueError):
        find_times("昨天", datetime(2026, 10, 28, 10, 30))


def test_future_expressions_start_after_now() -> None:
    for text in ["明天", "后天", "下周五", "next Friday", "tomorrow", "in 3 days", "3天后"]:
        span = parse_time(text, NOW)
        assert span is not None and span.start > NOW, text


def test_bare_weekday_in_a_plan_looks_ahead() -> None:
    assert window("我们打算周五去爬山")[:2] == ("2026-10-30", "2026-10-31")
    assert window("I'll see you on Friday")[:2] == ("2026-10-30", "2026-10-31")


# --- time zones ------------------------------------------------------------------------------

def test_tz_defaults_to_the_offset_of_now() -> None:
    span = parse_time("昨天", NOW)
    assert span is not None
    assert span.start.utcoffset() == timedelta(hours=8)
    assert span.start == datetime(2026, 10, 27, tzinfo=timezone(timedelta(hours=8)))


def test_tz_moves_the_calendar_day() -> None:
    # 2026-10-28 01:00 in Shanghai is still 2026-10-27 in New York
    now = datetime.fromisoformat("2026-10-28T01:00:00+08:00")
    assert when_json("昨天", now)["start"] == "2026-10-27T00:00:00+08:00"
    assert when_json("昨天", now, "America/New_York")["start"] == "2026-10-26T00:00:00-04:00"
    assert when_json("yesterday", now, ZoneInfo("America/New_York"))["end"] == \
        "2026-10-27T00:00:00-04:00"


def test_day_bounds_stay_at_midnight_across_dst() -> None:
    # US daylight saving time began on Sunday 2026-03-08: that day is 23 hours long
    now = datetime(2026, 3, 9, 10, 0, tzinfo=ZoneInfo("America/New_York"))
    span = parse_time("yesterday", now)
    assert span is not None
    assert (span.start.isoformat(), span.end.isoformat()) == (
        "2026-03-08T00:00:00-05:00", "2026-03-09T00:00:00-04:00")
    assert span.end.astimezone(UTC) - span.start.astimezone(UTC) == timedelta(hours=23)
    weekend = parse_time("last weekend", now)
    assert weekend is not None
    assert (weekend.start.date(), weekend.end.date()) == (date(2026, 3, 7), date(2026, 3, 9))
    assert weekend.end.hour == 0


def test_day_bounds_across_dst_end() -> None:
    # ...and ended on Sunday 2026-11-01: 25 hours
    now = datetime(2026, 11, 2, 9, 0, tzinfo=ZoneInfo("America/New_York"))
    span = parse_time("yesterday", now)
    assert span is not None
    assert span.end.astimezone(UTC) - span.start.astimezone(UTC) == timedelta(hours=25)
    assert span.start.hour == span.end.hour == 0


# --- speed -----------------------------------------------------------------------------------

def test_no_time_sentence_is_fast() -> None:
    text = ("I think the most important thing about this project is that we keep the code "
            "simple and readable for everyone, 我觉得这个项目最重要的是保持代码简单易读")
    find_times(text, NOW)
    started = time.perf_counter()
    for _ in range(200):
        find_times(text, NOW)
    per_call = (time.perf_counter() - started) / 200
    assert per_call < 0.005  # typically ~0.1 ms; generous for slow CI machines


def test_earlier_and_later_this_year_stay_in_this_year():
    from datetime import date, datetime

    from chalicelib.domain.timeparse import parse_time

    now = datetime(2023, 6, 9, 13, 0, tzinfo=UTC)
    early = parse_time("I moved earlier this year", now)
    assert (early.start.date(), early.end.date()) == (date(2023, 1, 1), date(2023, 6, 9))
    late = parse_time("we will travel later this year", now)
    assert (late.start.date(), late.end.date()) == (date(2023, 6, 10), date(2024, 1, 1))


@pytest.mark.parametrize("text,expected", [
    # "this year" apart from the day it names: this year's, even before it comes
    ("Thanksgiving at my parents' place in Spokane this year", ("2026-11-26", "2026-11-27", "day")),
    # eleven days before it, no word or tense of the past: the coming one
    ("Thanksgiving at my parents' place", ("2026-11-26", "2026-11-27", "day")),
    ("Thanksgiving at my parents' place was lovely", ("2025-11-27", "2025-11-28", "day")),
    ("We spent Thanksgiving at my parents' place", ("2025-11-27", "2025-11-28", "day")),
    ("We celebrated Thanksgiving at my parents' place", ("2025-11-27", "2025-11-28", "day")),
    # plans: the future, though no "will" says so
    ("What are my plans for Thanksgiving?", ("2026-11-26", "2026-11-27", "day")),
    ("What am I doing for Thanksgiving?", ("2026-11-26", "2026-11-27", "day")),
    ("What did I do for Thanksgiving?", ("2025-11-27", "2025-11-28", "day")),
])
def test_this_year_and_plans_pick_the_occurrence(text, expected):
    assert window(text, datetime.fromisoformat("2026-11-15T20:00:00-08:00"), None) == expected


@pytest.mark.parametrize("text, window", [
    ("前天午饭的时候我跟你说签了哪家？", ("2026-12-09T11:00", "2026-12-09T14:00")),
    ("上周五晚饭的时候", ("2026-12-04T17:00", "2026-12-04T21:00")),
    ("What did I tell you yesterday at lunch?", ("2026-12-10T11:00", "2026-12-10T14:00")),
    ("over dinner last Friday", ("2026-12-04T17:00", "2026-12-04T21:00")),
    ("午饭吃了面", None),  # a meal alone names what was eaten, not when
    ("I had lunch with Tom", None),
    ("每天午饭后散步", None),  # a habit
])
def test_a_meal_beside_a_day_is_that_part_of_the_day(text, window):
    now = datetime.fromisoformat("2026-12-11T20:00:00+08:00")  # a Friday
    span = parse_time(text, now)
    got = None if span is None else (span.start.isoformat()[:16], span.end.isoformat()[:16])
    assert got == window


@pytest.mark.parametrize(("text", "now", "day"), [
    # no word of the past or the future: this month's day or next month's, whichever is nearer
    ("found a little flat in York. moving on the 5th", "2026-11-24T20:00:00+00:00", "2026-12-05"),
    ("5号搬家", "2026-11-24T20:00:00+08:00", "2026-12-05"),
    ("我30号走", "2026-11-05T20:00:00+08:00", "2026-11-30"),
    ("on the 10th", "2026-11-24T20:00:00+00:00", "2026-11-10"),
    # a word of the past keeps this month's; one of the future, the first not before today
    ("I went there on the 5th", "2026-11-24T20:00:00+00:00", "2026-11-05"),
    ("我辞职了 干到10号", "2026-10-04T20:00:00+08:00", "2026-10-10"),
    ("I'm going to Leeds on the 3rd", "2026-11-24T20:00:00+00:00", "2026-12-03"),
])
def test_a_day_named_alone_is_the_nearer_of_this_month_and_the_next(text, now, day):
    span = parse_time(text, datetime.fromisoformat(now))
    assert span is not None and span.start.date().isoformat() == day


@pytest.mark.parametrize(("text", "day"), [
    # a question about what already happened means the latest that has come
    ("What did I do on the 14th?", "2026-11-14"),
    ("What happened on the 20th?", "2026-11-20"),  # the past in the verb
    ("14号我干嘛了", "2026-11-14"),
    ("你20号那天干嘛了？", "2026-11-20"),
    ("What did I tell you on Dec 20?", "2025-12-20"),
    ("1月5号我说了什么", "2026-01-05"),
    ("What did I do in January?", "2026-01-01"),
    ("一月份我去哪了", "2026-01-01"),
    ("What did I do on the 3rd?", "2026-12-03"),  # come already: this month's
    # not about the past, or not one question: as before
    ("14号要干嘛", "2026-12-14"),
    ("What am I doing on the 14th?", "2026-12-14"),
    ("20号那天你干嘛？", "2026-12-20"),
    ("1月5号是什么日子", "2027-01-05"),
    ("一月份我要去哪", "2027-01-01"),
    ("Did you sleep? I'm flying out on the 20th.", "2026-12-20"),
    ("Is it strapped up? You need that wrist for December.", "2026-12-01"),
    ("我辞职了 干到10号", "2026-12-10"),  # a statement: this month's
])
def test_a_question_about_the_past_means_a_day_that_has_come(text, day):
    now = datetime.fromisoformat("2026-12-07T15:00:00+08:00")  # a Monday
    span = parse_time(text, now)
    assert span is not None and span.start.date().isoformat() == day


@pytest.mark.parametrize(("text", "window"), [
    ("大上周", ("2026-11-23", "2026-11-30")),  # 大上 = 上上, the week before last
    ("大上周三", ("2026-11-25", "2026-11-26")),
    ("大上个月", ("2026-10-01", "2026-11-01")),
    ("大下周", ("2026-12-21", "2026-12-28")),
    ("the last day of November", ("2026-11-30", "2026-12-01")),
    ("the first day of December", ("2026-12-01", "2026-12-02")),
    ("the last day of the month", ("2026-12-31", "2027-01-01")),
    ("11月最后一天", ("2026-11-30", "2026-12-01")),
    ("上个月的第一天", ("2026-11-01", "2026-11-02")),
    ("11月的时候", ("2026-11-01", "2026-12-01")),
    # code-switching chat: an English time word in a Chinese sentence, chat shorthand
    ("上个 weekend 我去了哪", ("2026-12-05", "2026-12-07")),
    ("这个 weekend", ("2026-12-12", "2026-12-14")),
    ("weekend 的时候去爬山了", ("2026-12-05", "2026-12-07")),
    ("tmr 早上还有个 call", ("2026-12-08", "2026-12-08")),
    ("今夜不回家了", ("2026-12-07", "2026-12-08")),
    # weekdays typed in figures (周3, 星期5, 礼拜6; 7 is Sunday)
    ("下周3开会", ("2026-12-16", "2026-12-17")),
    ("上周5晚上喝多了", ("2026-12-04", "2026-12-05")),
    ("这周6去爬山", ("2026-12-12", "2026-12-13")),
    ("星期3那天", ("2026-12-02", "2026-12-03")),
    ("周7", ("2026-12-06", "2026-12-07")),
    ("gotta look at it tmrw", ("2026-12-08", "2026-12-09")),
    ("2027 年初", ("2027-01-01", "2027-03-01")),
    ("2027 年", ("2027-01-01", "2028-01-01")),
])
def test_more_of_the_calendar_and_of_chat(text, window):
    """大上周, a month's first and last day; code-switching and chat shorthand."""
    now = datetime.fromisoformat("2026-12-07T15:00:00+08:00")
    span = parse_time(text, now)
    assert span is not None and (span.start.date().isoformat(), span.end.date().isoformat()) == window


MONDAY_DEC_7 = datetime.fromisoformat("2026-12-07T15:00:00+08:00")


@pytest.mark.parametrize(("text", "matched", "window"), [
    # English as typed on a phone: shorthand and misspellings of the time words (chat_en)
    ("omg last nite was wild", "last nite", ("2026-12-06", "2026-12-07")),
    ("2day was long", "2day", ("2026-12-07", "2026-12-08")),
    ("see u tommorow!", "tommorow", ("2026-12-08", "2026-12-09")),
    ("i told u yday", "yday", ("2026-12-06", "2026-12-07")),
    ("dinner tonite?", "tonite", ("2026-12-07", "2026-12-08")),
    ("going for a swim this arvo", "this arvo", ("2026-12-07", "2026-12-07")),
    ("passed it last wk actually", "last wk", ("2026-11-30", "2026-12-07")),
    ("road test is in 3 wks", "in 3 wks", ("2026-12-28", "2026-12-29")),
    ("came here 6 yrs ago", "6 yrs ago", ("2020-01-01", "2021-01-01")),
    ("moved out 3 mos ago", "3 mos ago", ("2026-09-01", "2026-10-01")),
    ("we went on sat", "sat", ("2026-12-05", "2026-12-06")),
    ("NYE plans?", "NYE", ("2026-12-31", "2027-01-01")),
    ("coupla days ago", "coupla days ago", ("2026-12-04", "2026-12-06")),
    ("saw her the other night", "the other night", ("2026-12-01", "2026-12-06")),
    ("starts mid-jan", "mid-jan", ("2027-01-11", "2027-01-21")),
    ("the first week of jan", "the first week of jan", ("2027-01-01", "2027-01-08")),
    ("我 2day 好累", "2day", ("2026-12-07", "2026-12-08")),
])
def test_phone_english(text, matched, window):
    """The span is what the person typed, its window the word's."""
    span = parse_time(text, MONDAY_DEC_7)
    assert span is not None and span.matched == matched
    assert text[span.offset:span.offset + len(span.matched)] == matched
    assert (span.start.date().isoformat(), span.end.date().isoformat()) == window


@pytest.mark.parametrize("text", ["I sat down and cried", "a friend of Jan's", "since Jan left",
                                  "I sat on the sun lounger", "the eve of the wedding"])
def test_words_that_look_like_shorthand_are_no_time(text):
    assert parse_time(text, MONDAY_DEC_7) is None


def test_offsets_after_a_written_out_word_are_the_typed_ones():
    spans = find_times("tonite and then on December 11th", MONDAY_DEC_7)
    assert [s.matched for s in spans] == ["tonite", "December 11th"]
    assert spans[1].offset == len("tonite and then on ")


@pytest.mark.parametrize("text", ["一周3次", "每周3次", "周3次课", "两周3天", "周2.5"])
def test_a_count_after_a_week_is_no_weekday(text):
    assert parse_time(text, MONDAY_DEC_7) is None


@pytest.mark.parametrize("text", ["my last day of school", "have a nice weekend"])
def test_a_last_day_of_no_month_or_a_weekend_wished_names_no_time(text):
    assert parse_time(text, datetime.fromisoformat("2026-12-07T15:00:00+08:00")) is None


@pytest.mark.parametrize(("text", "day"), [
    # 要 before what one will do looks ahead (said on Monday 2026-12-07)
    ("周五要交报告", "2026-12-11"), ("我周三要出差", "2026-12-09"), ("周六要加班吗", "2026-12-12"),
    ("周五不要忘了", "2026-12-11"),
    # not 重要, 想要, 要是, 要死
    ("周五重要的会", "2026-12-04"), ("周五她想要一个答案", "2026-12-04"),
    ("周五累得要死", "2026-12-04"),
    # 年后 said in the weeks after the New Year is this one's (2026-02-17); 五一广场 is a place
    ("年后要开工", "2026-02-18"),
])
def test_a_word_of_will_looks_ahead(text, day):
    now = datetime.fromisoformat("2026-12-07T15:00:00+08:00") if text != "年后要开工" \
        else datetime.fromisoformat("2026-02-19T22:00:00+08:00")
    span = parse_time(text, now)
    assert span is not None and span.start.date().isoformat() == day


def test_a_place_named_after_a_holiday_is_no_day():
    assert parse_time("在五一广场附近的一个巷子里", datetime.fromisoformat("2026-06-12T22:00:00+08:00")) is None


@pytest.mark.parametrize(("text", "expected"), [
    # a stretch named, then a day of it: the day (a held-out companion chat, issue 36)
    ("我女朋友下个月过生日 11月8号", ("2026-11-08", "2026-11-09", "day")),
    ("she's coming next month, on November 8", ("2026-11-08", "2026-11-09", "day")),
    ("这个月真让人丧，今天又是重度污染", ("2026-10-28", "2026-10-29", "day")),
    # a day outside the stretch, or a stretch inside another, leaves the first named
    ("下个月过生日，上周订的蛋糕", ("2026-11-01", "2026-12-01", "month")),
    ("今年打算考研 12月考", ("2026-01-01", "2027-01-01", "year")),
])
def test_a_stretch_then_a_day_of_it_is_that_day(text: str, expected: tuple[str, str, str]) -> None:
    assert window(text) == expected
