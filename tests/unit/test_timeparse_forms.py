"""Compositional and vague forms of chalicelib.domain.timeparse, one family per test, both
languages. Windows worked out by hand (2026-10-28 is a Wednesday, 2023-07-15 a Saturday;
weeks start on Monday); conventions in docs/time-expressions.md."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from chalicelib.domain.timeparse import find_times, parse_time

NOW = datetime.fromisoformat("2026-10-28T10:30:00+08:00")  # Wednesday
SHANGHAI = "Asia/Shanghai"
SAT = datetime.fromisoformat("2023-07-15T14:00:00+00:00")  # Saturday


def window(text: str, now: datetime = NOW) -> tuple[str, str, str, bool]:
    span = parse_time(text, now, SHANGHAI if now is NOW else None)
    assert span is not None, f"no time found in {text!r}"
    return show(span.start), show(span.end), span.granularity, span.exact


def show(moment: datetime) -> str:
    if moment.hour == moment.minute == 0:
        return moment.strftime("%Y-%m-%d")
    return moment.strftime("%Y-%m-%d %H:%M")


def check(text: str, expected: tuple[str, ...], now: datetime = NOW) -> None:
    assert window(text, now)[:len(expected)] == expected, text


# --- an offset and a part of that period -------------------------------------------------------

@pytest.mark.parametrize(("text", "expected"), [
    ("上周末", ("2026-10-24", "2026-10-26", "day", True)),
    ("上上周末", ("2026-10-17", "2026-10-19", "day", True)),
    ("去年年底", ("2025-11-01", "2026-01-01", "month", False)),
    ("前年年初", ("2024-01-01", "2024-03-01", "month", False)),
    ("上个月底", ("2026-09-21", "2026-10-01", "day", False)),
    ("下个月初", ("2026-11-01", "2026-11-11", "day", False)),
    ("年中", ("2026-05-01", "2026-09-01", "month", False)),
    ("上半年", ("2026-01-01", "2026-07-01", "month", True)),
    ("上周初", ("2026-10-19", "2026-10-21", "day", False)),
    ("去年11月底", ("2025-11-21", "2025-12-01", "day", False)),
    ("去年这个时候", ("2025-10-18", "2025-11-08", "day", False)),  # ±10 days round the date
    ("去年同期", ("2025-10-18", "2025-11-08", "day", False)),
    ("前年的今天", ("2024-10-28", "2024-10-29", "day", True)),
    ("一年前的今天", ("2025-10-28", "2025-10-29", "day", True)),
    ("上个月的今天", ("2026-09-28", "2026-09-29", "day", True)),
    ("去年夏天", ("2025-06-01", "2025-09-01", "month", False)),
    ("上个月最后一周", ("2026-09-24", "2026-10-01", "week", True)),
    ("5月的最后一个周末", ("2026-05-30", "2026-06-01", "day", True)),
    ("上个季度", ("2026-07-01", "2026-10-01", "month", True)),
    ("2023年第三季度", ("2023-07-01", "2023-10-01", "month", True)),
])
def test_chinese_offset_and_part(text: str, expected: tuple[str, ...]) -> None:
    check(text, expected)


@pytest.mark.parametrize(("text", "expected"), [
    # an offset in weeks, then that week's weekend (Saturday and Sunday), not the whole week
    ("两周前的周末", ("2026-10-17", "2026-10-19", "day", True)),
    ("三周前的周末", ("2026-10-10", "2026-10-12", "day", True)),
    ("上上周的周末", ("2026-10-17", "2026-10-19", "day", True)),
    ("上周的周末", ("2026-10-24", "2026-10-26", "day", True)),
    ("下周的周末", ("2026-11-07", "2026-11-09", "day", True)),
    ("我们两周前的周末去爬了山", ("2026-10-17", "2026-10-19", "day", True)),
    ("the weekend two weeks ago", ("2026-10-17", "2026-10-19", "day", True)),
    ("the weekend three weeks ago", ("2026-10-10", "2026-10-12", "day", True)),
    ("the weekend of last week", ("2026-10-24", "2026-10-26", "day", True)),
    ("We went hiking the weekend two weeks ago.", ("2026-10-17", "2026-10-19", "day", True)),
])
def test_a_week_offset_then_its_weekend(text: str, expected: tuple[str, ...]) -> None:
    check(text, expected)


@pytest.mark.parametrize(("text", "expected"), [
    ("last weekend", ("2023-07-08", "2023-07-10", "day", True)),
    ("the weekend before last", ("2023-07-01", "2023-07-03", "day", True)),
    ("the weekend after next", ("2023-07-29", "2023-07-31", "day", True)),
    ("the end of last year", ("2022-11-01", "2023-01-01", "month", False)),
    ("early next month", ("2023-08-01", "2023-08-11", "day", False)),
    ("late last month", ("2023-06-21", "2023-07-01", "day", False)),
    ("mid-2023", ("2023-05-01", "2023-09-01", "month", False)),
    ("this time last year", ("2022-07-05", "2022-07-26", "day", False)),
    ("this day last year", ("2022-07-15", "2022-07-16", "day", True)),
    ("a year ago today", ("2022-07-15", "2022-07-16", "day", True)),
    ("this week last year", ("2022-07-11", "2022-07-18", "week", True)),
    ("the first half of next year", ("2024-01-01", "2024-07-01", "month", True)),
    ("last summer", ("2022-06-01", "2022-09-01", "month", False)),  # this one is not over
    ("the first week of June", ("2023-06-01", "2023-06-08", "week", True)),
    ("the last weekend of May", ("2023-05-27", "2023-05-29", "day", True)),
    ("the second Sunday in May", ("2023-05-14", "2023-05-15", "day", True)),
    ("last quarter", ("2023-04-01", "2023-07-01", "month", True)),
    ("Q3 2022", ("2022-07-01", "2022-10-01", "month", True)),
    ("the third quarter of 2022", ("2022-07-01", "2022-10-01", "month", True)),
    ("last year's Christmas", ("2022-12-25", "2022-12-26", "day", True)),
])
def test_english_offset_and_part(text: str, expected: tuple[str, ...]) -> None:
    check(text, expected, SAT)


# --- counted weekdays and "before" with no date after it -------------------------------------

@pytest.mark.parametrize(("text", "expected", "now"), [
    ("三个周五以前", ("2026-10-09", "2026-10-10"), NOW),
    ("两个星期一后", ("2026-11-09", "2026-11-10"), NOW),
    ("3 Fridays ago", ("2023-06-30", "2023-07-01"), SAT),
    ("two Mondays from now", ("2023-07-24", "2023-07-25"), SAT),
    ("the Friday before last", ("2023-07-07", "2023-07-08"), SAT),
    ("the Friday after next", ("2023-07-28", "2023-07-29"), SAT),
    ("I saw her the Friday before.", ("2023-07-14", "2023-07-15"), SAT),
    ("We met the week before and it was fun", ("2023-07-08", "2023-07-15"), SAT),
    ("the weekend before", ("2023-07-08", "2023-07-10"), SAT),
    ("two days before", ("2023-07-13", "2023-07-14"), SAT),
    # "last <weekday>" is the latest one strictly before today (as LoCoMo reads it)
    ("Last Fri I took my kids to a pottery workshop", ("2023-07-14", "2023-07-15"), SAT),
    ("last Tues", ("2023-07-11", "2023-07-12"), SAT),
    ("next Fri", ("2023-07-21", "2023-07-22"), SAT),
    ("Friday next week", ("2023-07-21", "2023-07-22"), SAT),
    # British "Thursday week", "a week on Friday" (American "a week from Thursday"): a week
    # after the coming one — not the Thursday gone, which the weekday alone read
    ("Thursday week", ("2023-07-27", "2023-07-28"), SAT),
    ("see you a week on tuesday!", ("2023-07-25", "2023-07-26"), SAT),
    ("a week from Thursday", ("2023-07-27", "2023-07-28"), SAT),
    ("two weeks on Saturday", ("2023-07-29", "2023-07-30"), SAT),  # said on a Saturday
    ("a week today", ("2023-07-22", "2023-07-23"), SAT),
    ("a fortnight tomorrow", ("2023-07-30", "2023-07-31"), SAT),
])
def test_counted_and_relative_weekdays(text: str, expected: tuple[str, str],
                                       now: datetime) -> None:
    check(text, expected, now)


def test_before_an_event_is_not_a_time() -> None:
    assert find_times("the day before the party", SAT) == []
    assert parse_time("the day before yesterday", SAT).matched == "the day before yesterday"


# --- old-fashioned and vague units ------------------------------------------------------------

@pytest.mark.parametrize(("text", "expected", "now"), [
    ("a fortnight ago", ("2023-06-26", "2023-07-03", "week", True), SAT),  # = two weeks ago
    ("two fortnights ago", ("2023-06-12", "2023-06-19", "week", True), SAT),
    ("in a fortnight", ("2023-07-29", "2023-07-30", "day", True), SAT),
    ("over the past fortnight", ("2023-07-02", "2023-07-16", "day", True), SAT),
    ("a decade ago", ("2013-01-01", "2014-01-01", "year", True), SAT),
    ("a year and a half ago", ("2021-10-14", "2022-04-15", "day", False), SAT),
    ("one and a half months ago", ("2023-05-16", "2023-06-16", "day", False), SAT),
    ("a couple of weeks ago", ("2023-06-19", "2023-07-03", "week", False), SAT),
    ("a few days ago", ("2023-07-09", "2023-07-14", "day", False), SAT),
    ("not so long ago", ("2023-07-02", "2023-07-16", "day", False), SAT),
    ("over the next few days", ("2023-07-16", "2023-07-20", "day", False), SAT),
    ("twenty one days ago", ("2023-06-24", "2023-06-25", "day", True), SAT),
    ("半个月前", ("2026-10-08", "2026-10-19", "day", False), NOW),
    ("大半个月前", ("2026-10-03", "2026-10-14", "day", False), NOW),
    ("半年前", ("2026-03-01", "2026-06-01", "month", False), NOW),
    ("大半年前", ("2025-12-01", "2026-04-01", "month", False), NOW),
    ("一个半月前", ("2026-08-29", "2026-09-29", "day", False), NOW),
    ("一年半前", ("2025-01-28", "2025-07-30", "day", False), NOW),
    ("前些天", ("2026-10-22", "2026-10-27", "day", False), NOW),
    ("这几天", ("2026-10-24", "2026-10-29", "day", False), NOW),
    ("最近", ("2026-10-15", "2026-10-29", "day", False), NOW),
    ("最近几个月", ("2026-07-01", "2026-10-29", "day", False), NOW),
    ("前几周", ("2026-09-14", "2026-10-19", "week", False), NOW),
    ("前两年", ("2023-01-01", "2026-01-01", "year", False), NOW),
    ("未来三天", ("2026-10-29", "2026-11-01", "day", True), NOW),
    ("今明两天", ("2026-10-28", "2026-10-30", "day", True), NOW),
    ("明后天", ("2026-10-29", "2026-10-31", "day", True), NOW),
])
def test_old_and_vague_units(text: str, expected: tuple[str, ...], now: datetime) -> None:
    check(text, expected, now)


@pytest.mark.parametrize("text", [
    "我学了一个半月的吉他", "大半年没见了", "我在这工作了12年", "He scored 3 goals in 5 minutes",
    "I have been painting for a fortnight", "很久以前", "后天性免疫缺陷综合征", "新年快乐",
    "We may day-trip to Paris", "we may day trip to the coast",
    "every Thursday week after week",
])
def test_durations_are_not_times(text: str) -> None:
    assert find_times(text, NOW) == []


# --- seasons and ranges across years ------------------------------------------------------------

@pytest.mark.parametrize(("text", "expected", "now"), [
    ("春天", ("2026-03-01", "2026-06-01"), NOW),
    ("今年冬天", ("2026-12-01", "2027-03-01"), NOW),
    ("去年秋天", ("2025-09-01", "2025-12-01"), NOW),
    ("明年夏天", ("2027-06-01", "2027-09-01"), NOW),
    ("初夏", ("2026-06-01", "2026-07-01"), NOW),
    ("去年夏末", ("2025-08-01", "2025-09-01"), NOW),
    ("this spring", ("2023-03-01", "2023-06-01"), SAT),
    ("this summer", ("2023-06-01", "2023-09-01"), SAT),  # under way
    ("last fall", ("2022-09-01", "2022-12-01"), SAT),
    ("next winter", ("2023-12-01", "2024-03-01"), SAT),
    ("early summer", ("2023-06-01", "2023-07-01"), SAT),
    ("late summer 2022", ("2022-08-01", "2022-09-01"), SAT),
    ("two summers ago", ("2021-06-01", "2021-09-01"), SAT),
    ("last year's summer", ("2022-06-01", "2022-09-01"), SAT),
])
def test_seasons(text: str, expected: tuple[str, str], now: datetime) -> None:
    start, end, gran, exact = window(text, now)
    assert (start, end, gran, exact) == (*expected, "month", False), text


def test_this_winter_in_january_is_the_one_under_way() -> None:
    january = datetime(2026, 1, 10, 12, tzinfo=UTC)
    check("this winter", ("2025-12-01", "2026-03-01"), january)


@pytest.mark.parametrize(("text", "expected", "now"), [
    ("去年12月到今年2月", ("2025-12-01", "2026-03-01", "month"), NOW),
    ("从去年12月到今年2月我在国外", ("2025-12-01", "2026-03-01", "month"), NOW),
    ("2023年底到2024年初", ("2023-11-01", "2024-03-01", "month"), NOW),
    ("去年冬天到今年春天", ("2025-12-01", "2026-06-01", "month"), NOW),
    ("from December 2023 to February 2024", ("2023-12-01", "2024-03-01", "month"), SAT),
    ("from last December to this February", ("2022-12-01", "2023-03-01", "month"), SAT),
    ("from late 2021 to early 2022", ("2021-09-01", "2022-05-01", "month"), SAT),
])
def test_ranges_across_years(text: str, expected: tuple[str, ...], now: datetime) -> None:
    check(text, expected, now)


# --- a holiday's day versus its holiday period ---------------------------------------------------

@pytest.mark.parametrize(("text", "expected", "now"), [
    ("国庆节", ("2026-10-01", "2026-10-02", "day", True), NOW),
    ("国庆", ("2026-10-01", "2026-10-02", "day", True), NOW),
    ("国庆假期", ("2026-10-01", "2026-10-08", "day", True), NOW),
    ("国庆长假", ("2026-10-01", "2026-10-08", "day", True), NOW),
    ("十一黄金周", ("2026-10-01", "2026-10-08", "day", True), NOW),
    ("国庆期间", ("2026-10-01", "2026-10-08", "day", True), NOW),
    ("春节", ("2026-02-17", "2026-02-18", "day", True), NOW),
    ("春节假期", ("2026-02-16", "2026-02-23", "day", False), NOW),  # 除夕 to 初六
    ("过年的时候", ("2026-02-16", "2026-02-23", "day", False), NOW),
    ("去年过年的时候", ("2025-01-28", "2025-02-04", "day", False), NOW),
    ("五一假期", ("2026-05-01", "2026-05-06", "day", True), NOW),
    ("去年国庆假期", ("2025-10-01", "2025-10-08", "day", True), NOW),
    ("明年国庆", ("2027-10-01", "2027-10-02", "day", True), NOW),
    ("國慶假期", ("2026-10-01", "2026-10-08", "day", True), NOW),  # traditional characters
    ("暑假", ("2026-07-01", "2026-09-01", "day", False), NOW),
    ("Christmas", ("2022-12-25", "2022-12-26", "day", True), SAT),
    ("the Christmas holidays", ("2022-12-24", "2023-01-02", "day", False), SAT),
    ("over the Christmas break", ("2022-12-24", "2023-01-02", "day", False), SAT),
    ("last Christmas holidays", ("2022-12-24", "2023-01-02", "day", False), SAT),
    ("Thanksgiving weekend", ("2022-11-24", "2022-11-28", "day", True), SAT),
    ("Easter weekend", ("2023-04-07", "2023-04-11", "day", True), SAT),
    ("Golden Week", ("2022-10-01", "2022-10-08", "day", True), SAT),
    ("next year's National Day holiday", ("2024-10-01", "2024-10-08", "day", True), SAT),
    ("Black Friday", ("2022-11-25", "2022-11-26", "day", True), SAT),
    ("May Day", ("2026-05-01", "2026-05-02", "day", True), NOW),  # 五一, as in Chinese
    ("over the May Day holiday", ("2026-05-01", "2026-05-06", "day", True), NOW),
    ("over the may day holiday", ("2026-05-01", "2026-05-06", "day", True), NOW),
])
def test_holiday_day_versus_period(text: str, expected: tuple[str, ...], now: datetime) -> None:
    check(text, expected, now)


# --- whole sentences, chat style ---------------------------------------------------------------------

@pytest.mark.parametrize(("text", "matched"), [
    ("I went camping last weekend with the kids", "last weekend"),
    ("We visited the beach the week before, it was great", "the week before"),
    ("I started my store not so long ago - pretty cool, huh?", "not so long ago"),
    ("Wanna see my moves next Fri? Can't wait!", "next Fri"),
    ("A few weeks ago I went to a pride parade", "A few weeks ago"),
    ("我们是三年前的春天认识的", "三年前的春天"),
    ("去年国庆假期我们去了西安，今年还想去", "去年国庆假期"),
])
def test_forms_inside_sentences(text: str, matched: str) -> None:
    span = parse_time(text, SAT)
    assert span is not None and span.matched == matched


def test_spans_end_after_they_start() -> None:
    texts = ["上上周末", "去年这个时候", "三个周五以前", "大半年前", "去年12月到今年2月",
             "春节假期", "the Friday before", "a year and a half ago", "two summers ago",
             "the Christmas holidays", "Q1 2199", "1899年", "this time last year"]
    for now in (NOW, SAT, datetime(2199, 12, 30, tzinfo=UTC), datetime(1900, 1, 2, tzinfo=UTC)):
        for text in texts:
            for span in find_times(text, now):
                assert span.end.astimezone(UTC) > span.start.astimezone(UTC), (text, now)


# --- a duration up to now, then what started it: dated like "… ago" ----------------------------

@pytest.mark.parametrize(("text", "expected"), [
    ("I've known these friends for 4 years, since I moved from my home country",
     ("2019-01-01", "2020-01-01", "year")),
    ("it's been two weeks since we met", ("2023-06-26", "2023-07-03", "week")),
    ("three months now since the wedding", ("2023-04-01", "2023-05-01", "month")),
    ("for a few years, ever since college", ("2017-01-01", "2022-01-01", "year")),
    ("自从我搬过来，已经四年了", ("2019-01-01", "2020-01-01", "year")),
    ("自从认识她都三个月了", ("2023-04-01", "2023-05-01", "month")),
    ("自从开了这家店已经有十天了", ("2023-07-05", "2023-07-06", "day")),
])
def test_a_duration_before_since_dates_what_follows_it(text, expected):
    check(text, expected, SAT)


@pytest.mark.parametrize("text", [
    "I have been painting for 7 years now",  # how long, not when anything happened
    "we stayed for two weeks",
    "我学画画三年了",
    "三年了",
])
def test_a_duration_alone_names_no_time(text):
    assert parse_time(text, SAT) is None


# --- month and day in figures, Chinese text ("12.3那天", "11/20晚上") ----------------------------

@pytest.mark.parametrize(("text", "expected"), [
    ("10.3那天我们去了西湖", ("2026-10-03", "2026-10-04", "day", True)),
    ("9/20晚上吃了火锅", ("2026-09-20 18:00", "2026-09-21")),
    ("10.12号入职", ("2026-10-12", "2026-10-13", "day", True)),
    ("8.15之前交的", ("2026-08-15", "2026-08-16", "day", True)),
    # 要 (must, will) looks ahead: said in October, the coming 8.15
    ("8.15之前要交", ("2027-08-15", "2027-08-16", "day", True)),
])
def test_month_and_day_in_figures_before_a_date_word(text, expected):
    check(text, expected)


@pytest.mark.parametrize("text", ["我考了3.5分", "1/2的人没来", "评分4.5", "打7.5折",
                                  "v2.1那天发布的", "11/20 我在干嘛"])
def test_figures_with_a_dot_or_slash_and_no_date_word_are_no_date(text):
    assert find_times(text, NOW, SHANGHAI) == []


@pytest.mark.parametrize(("text", "expected"), [
    ("昨儿个我去了医院", ("2026-10-27", "2026-10-28", "day", True)),
    ("前儿个我见了老王", ("2026-10-26", "2026-10-27", "day", True)),
    ("明儿个见", ("2026-10-29", "2026-10-30", "day", True)),
])
def test_spoken_northern_day_words(text, expected):
    check(text, expected)


def test_in_front_of_is_no_day():
    assert find_times("到我跟前儿来，跟前儿个人说", NOW, SHANGHAI) == []


@pytest.mark.parametrize(("text", "expected"), [
    ("春节前一周我回了老家", ("2026-02-10", "2026-02-17")),
    ("国庆后两周", ("2026-10-12", "2026-10-19")),
    ("中秋前一个月", ("2026-08-01", "2026-09-01")),
    ("国庆前一天", ("2026-09-30", "2026-10-01")),
])
def test_weeks_and_months_before_or_after_a_named_day(text, expected):
    check(text, expected)


def test_the_past_two_weeks_alone_are_still_the_past_two_weeks():
    assert window("前两周我去了杭州")[:2] == ("2026-10-05", "2026-10-26")  # 1-3 weeks back


@pytest.mark.parametrize(("text", "expected"), [
    ("周一早上开会", ("2026-10-26 06:00", "2026-10-26 10:00")),
    ("星期一早上", ("2026-10-26 06:00", "2026-10-26 10:00")),
    ("上周末晚上我们去看了电影", ("2026-10-24", "2026-10-26")),  # the days, not tonight
    ("双十一买了好多东西", ("2025-11-11", "2025-11-12")),  # told on 10-28: the last one
    ("去年双11", ("2025-11-11", "2025-11-12")),
])
def test_a_morning_after_a_weekday_a_weekends_evenings_and_singles_day(text, expected):
    check(text, expected)
    assert len(find_times(text, NOW, SHANGHAI)) == 1


@pytest.mark.parametrize(("text", "expected"), [
    ("I spent last weekend in York", ("2026-10-24", "2026-10-26")),
    ("last week in class we did fractions", ("2026-10-19", "2026-10-26")),
    ("the last weekend of May", ("2026-05-30", "2026-06-01")),
    ("the second Sunday in May", ("2026-05-10", "2026-05-11")),
])
def test_last_weekend_in_a_place_is_last_weekend(text, expected):
    """"the last weekend of May" is a part of a month; "last weekend in York" is no part of
    anything (it read as one, found no month after it, and the text had no time at all)."""
    check(text, expected)


def test_a_final_week_of_something_is_no_date():
    assert find_times("it's your last week of packing, Nora", NOW, SHANGHAI) == []


@pytest.mark.parametrize("text", ["第二天一早我就出发了", "次日早上到的杭州", "隔天下午又去了一趟",
                                  "头天晚上没睡好"])
def test_a_morning_of_the_day_after_a_day_told_elsewhere_is_no_date(text):
    """第二天一早 is the morning after a day the story named, not this morning."""
    assert find_times(text, NOW, SHANGHAI) == []


def test_a_named_days_eve_keeps_its_evening():
    check("国庆前一天晚上", ("2026-09-30 18:00", "2026-10-01"))


@pytest.mark.parametrize(("text", "second"), [
    ("上周四还是周五来着", ("2026-10-23", "2026-10-24")),
    ("下周三或者周四出发", ("2026-11-05", "2026-11-06")),
])
def test_the_other_choice_of_a_dated_weekday_is_in_its_week(text, second):
    """上周四还是周五: last week's Friday, not this week's."""
    spans = find_times(text, NOW, SHANGHAI)
    assert len(spans) == 2 and (show(spans[1].start), show(spans[1].end)) == second
