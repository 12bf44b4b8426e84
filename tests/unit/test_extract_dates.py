"""The extractor dates an event by the time its message means, resolved against the message's
own send time (issue 3), and marks statements about the future as plans."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone

from chalicelib.domain.models import Message, MessageIn
from chalicelib.ports import ExtractionContext
from chalicelib.usecases.extract.offline import OfflineExtractor

CST = timezone(timedelta(hours=8))


def extract(text: str, at: datetime, speaker: str = "小明"):
    msg = Message.from_input("sp", "s1", MessageIn(seq=1, role="user", speaker=speaker,
                                                   content=text, at=at))
    return OfflineExtractor().extract([msg], ExtractionContext(space="sp", session="s1"))


def test_yesterday_is_the_day_before_the_message_not_today():
    [draft] = extract("奶糖昨天进行了体检，结果正常", datetime(2026, 6, 15, 10, 0, tzinfo=CST))
    assert draft.when.start == datetime(2026, 6, 14, tzinfo=CST)
    assert draft.when.end == datetime(2026, 6, 15, tzinfo=CST)
    assert draft.when.granularity == "day" and not draft.plan


def test_english_relative_day():
    [draft] = extract("I ran a charity race last Saturday",
                      datetime(2023, 5, 25, 13, 56, tzinfo=UTC), speaker="Mel")
    assert draft.when.start.date() == date(2023, 5, 20)
    assert draft.summary.startswith("Mel ran")


def test_future_statements_are_plans_dated_ahead():
    at = datetime(2026, 10, 28, 10, 30, tzinfo=CST)  # a Wednesday
    [zh] = extract("下周五我们去海边看日出", at)
    assert zh.plan and zh.when.start == datetime(2026, 11, 6, tzinfo=CST)
    [en] = extract("Next Friday we will go hiking with Jon", at, speaker="Sam")
    assert en.plan and en.when.start.date() == date(2026, 11, 6)
    assert "plan" in en.tags


def test_no_time_named_means_the_message_day():
    [draft] = extract("奶糖把花瓶打碎了", datetime(2026, 6, 15, 23, 30, tzinfo=CST))
    assert draft.when.start == datetime(2026, 6, 15, tzinfo=CST) and not draft.plan


def test_month_granularity_is_kept():
    [draft] = extract("我们上个月搬家到了杭州", datetime(2026, 6, 15, 10, 0, tzinfo=CST))
    assert (draft.when.start.date(), draft.when.end.date(), draft.when.granularity) == (
        date(2026, 5, 1), date(2026, 6, 1), "month")


def test_relative_times_are_pinned_to_their_date_in_the_text():
    [zh] = extract("奶糖昨天进行了体检，结果正常", datetime(2026, 6, 15, 10, 0, tzinfo=CST))
    assert zh.summary == "奶糖昨天（2026-06-14）进行了体检，结果正常"
    [en] = extract("I ran a charity race last Saturday",
                   datetime(2023, 5, 25, 13, 56, tzinfo=UTC), speaker="Mel")
    assert en.summary == "Mel ran a charity race last Saturday (2023-05-20)"
    [absolute] = extract("我们2026年10月3日去了杭州", datetime(2026, 10, 5, tzinfo=CST))
    assert "（" not in absolute.summary  # already a date: nothing to pin
