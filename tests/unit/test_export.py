"""chalicelib.usecases.export: the Markdown chronicle (seed 000) and the raw JSON export."""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta

import pytest

from chalicelib.domain.models import Event, SaveEventRequest, When
from chalicelib.usecases import events, export
from tests.unit.conftest import CST, SPACE, T0

MONTH_HEADING = re.compile(r"^#{2,3} (\d{4}-\d{2})$")


def save(services, summary, month, day, importance=5, **kw):
    return events.save_event(services, SPACE, SaveEventRequest(
        summary=summary, happened_at=datetime(2026, month, day, 12, tzinfo=CST),
        importance=importance, **kw))


def section(md: str, heading_start: str) -> list[str]:
    """The non-blank lines after the first heading that starts with `heading_start`, up to the
    next heading of the same level."""
    lines = md.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(heading_start))
    level = len(heading_start) - len(heading_start.lstrip("#"))
    out = []
    for line in lines[start + 1:]:
        if line.startswith("#" * level + " "):
            break
        if line.strip():
            out.append(line)
    return out


@pytest.fixture
def chronicle(services, clock):
    return [
        save(services, "Mel adopted a puppy named Luna", 5, 3, importance=8),
        save(services, "Mel painted a sunrise over the lake", 5, 20, importance=4),
        save(services, "Luna was diagnosed with an ear infection", 6, 14, importance=7),
        save(services, "Mel and Caroline had coffee", 6, 2, importance=6),
    ]


class TestMarkdown:
    def test_month_headings_in_order_with_tree_lines(self, services, chronicle):
        md = export.export_markdown(services, SPACE)
        assert md.startswith(f"# Annals — {SPACE}\n")
        lines = md.splitlines()
        months = [m.group(1) for line in lines if (m := MONTH_HEADING.match(line))]
        assert months == ["2026-05", "2026-06"]
        timeline = section(md, "## Timeline")
        assert timeline == [
            "### 2026-05",
            "├─ 2026-05-03 ★ Mel adopted a puppy named Luna",
            "├─ 2026-05-20 Mel painted a sunrise over the lake",
            "### 2026-06",
            "├─ 2026-06-02 Mel and Caroline had coffee",
            "├─ 2026-06-14 ★ Luna was diagnosed with an ear infection",
        ]

    def test_key_events_hold_only_items_at_or_above_the_threshold(self, services, chronicle):
        md = export.export_markdown(services, SPACE, highlight_threshold=7)
        assert section(md, "## Key events") == [
            "- 2026-05-03 Mel adopted a puppy named Luna",
            "- 2026-06-14 Luna was diagnosed with an ear infection",
        ]
        assert "## Key events (importance ≥ 7)" in md

    def test_threshold_is_a_parameter(self, services, chronicle):
        md = export.export_markdown(services, SPACE, highlight_threshold=8)
        assert section(md, "## Key events") == ["- 2026-05-03 Mel adopted a puppy named Luna"]
        assert md.count("★") == 1

    def test_no_key_events_section_when_nothing_reaches_the_threshold(self, services, chronicle):
        md = export.export_markdown(services, SPACE, highlight_threshold=9)
        assert "Key events" not in md
        assert "★" not in md

    def test_summary_line(self, services, chronicle):
        assert section(export.export_markdown(services, SPACE), "## Summary") == [
            "4 events · importance range 4–8"]

    def test_chinese_chronicle_uses_chinese_headings(self, services, clock):
        save(services, "奶糖去医院做了体检，结果一切正常", 6, 14, importance=7)
        save(services, "小明开始养一只三个月大的橘猫，取名奶糖", 6, 1, importance=8)
        save(services, "Had coffee", 6, 2)
        md = export.export_markdown(services, SPACE)
        assert "## 概要" in md and "## 时间线" in md
        assert "## 关键事件（重要度 ≥ 7）" in md
        assert section(md, "## 时间线") == [
            "### 2026-06",
            "├─ 2026-06-01 ★ 小明开始养一只三个月大的橘猫，取名奶糖",
            "├─ 2026-06-02 Had coffee",
            "├─ 2026-06-14 ★ 奶糖去医院做了体检，结果一切正常",
        ]

    def test_empty_space(self, services):
        md = export.export_markdown(services, "empty")
        assert "No memories yet." in md
        assert "├─" not in md

    def test_archived_events_are_left_out(self, services, chronicle):
        events.archive_event(services, SPACE, chronicle[0].id)
        md = export.export_markdown(services, SPACE)
        assert "puppy" not in md
        assert [m.group(1) for line in md.splitlines() if (m := MONTH_HEADING.match(line))] == [
            "2026-05", "2026-06"]

    def test_plans_are_marked(self, services, clock):
        start = datetime(2026, 7, 1, tzinfo=CST)
        services.store.create_event(Event(
            id="ev_plan", space=SPACE, title="Trip", summary="Mel will fly to Denver",
            when=When(start=start, end=start + timedelta(days=1)), plan=True,
            created_at=T0, updated_at=T0))
        assert "├─ 2026-07-01 (plan) Mel will fly to Denver" in export.export_markdown(
            services, SPACE)

    def test_every_event_is_one_tree_line(self, services, clock):
        save(services, "Luna was diagnosed with an ear infection", 6, 14, importance=8,
             details="Drops twice a day for a week")
        timeline = section(export.export_markdown(services, SPACE), "## Timeline")
        assert all(line.startswith(("├─", "#", "│")) for line in timeline)
        assert next(line for line in timeline if line.startswith("├─")).startswith("├─ 2026-06-14 ★ ")


class TestJson:
    def test_round_trip(self, services, chronicle):
        dumped = export.export_json(services, SPACE)
        reloaded = json.loads(json.dumps(dumped, ensure_ascii=False))
        assert [Event.model_validate(d) for d in reloaded] == [
            services.store.get_event(SPACE, d["id"]) for d in reloaded]
        assert [d["summary"] for d in reloaded] == [
            "Mel adopted a puppy named Luna", "Mel painted a sunrise over the lake",
            "Mel and Caroline had coffee", "Luna was diagnosed with an ear infection"]
        assert reloaded[0]["when"] == {"start": "2026-05-03T00:00:00+08:00",
                                       "end": "2026-05-04T00:00:00+08:00", "granularity": "day"}

    def test_only_active_events(self, services, chronicle):
        events.archive_event(services, SPACE, chronicle[1].id)
        assert chronicle[1].id not in [d["id"] for d in export.export_json(services, SPACE)]

    def test_pages_through_more_than_one_store_page(self, services):
        start = datetime(2026, 1, 1, tzinfo=CST)
        for i in range(503):
            day = start + timedelta(hours=i)
            services.store.create_event(Event(
                id=f"ev_{i:04d}", space=SPACE, title="n", summary=f"note {i}",
                when=When(start=day, end=day + timedelta(hours=1), granularity="hour"),
                created_at=T0, updated_at=T0))
        dumped = export.export_json(services, SPACE)
        assert [d["id"] for d in dumped] == [f"ev_{i:04d}" for i in range(503)]
