"""Export the chronicle: a Markdown timeline for prompts (seed 000) or raw JSON.

The Markdown is text for a model (pasted into a prompt, or read as the MCP resource
annals://{space}/timeline.md), so stored text in it is contained like recall's context
(chalicelib.usecases.recall.context, "Containment"): every title and summary goes through
`clean_line` — on one line after its `├─ `/`- ` and date, without invisible or bidi
characters, square brackets (no `[/typed_memory]`), tag openers (`</system>`, `<|im_start|>`)
or fences. The JSON export is data: verbatim.
"""

from __future__ import annotations

from collections.abc import Iterator

from chalicelib.domain.containment import clean_line
from chalicelib.domain.dates import when_label
from chalicelib.domain.models import Event
from chalicelib.domain.salience import language
from chalicelib.ports import Services, iter_events
from chalicelib.usecases.events import said_order


def all_events(services: Services, space: str,
               statuses: tuple[str, ...] = ("active",)) -> Iterator[Event]:
    return iter_events(services.store, space, statuses)


def export_json(services: Services, space: str, status: str = "active") -> list[dict]:
    return [e.model_dump(mode="json")
            for e in all_events(services, space, EXPORT_STATUSES[status])]


EXPORT_STATUSES = {"active": ("active",), "archived": ("archived",),
                   "all": ("active", "archived")}


def export_markdown(services: Services, space: str, highlight_threshold: int = 7,
                    status: str = "active") -> str:
    """# Annals — space · summary line · key events · the timeline grouped by month, each
    day in conversation order (events.said_order); headings in the chats' language
    (`chat_language`). `status` all / archived brings in archived (faded) events, marked
    as such."""
    listed = sorted(all_events(services, space, EXPORT_STATUSES[status]), key=said_order)
    # Summaries retell events: they get their own section, never timeline entries or counts.
    summaries = [e for e in listed if e.kind == "summary"]
    events = [e for e in listed if e.kind != "summary"]
    if not events:
        return nothing_yet(services, space)
    zh = chat_language(services, space, events) == "zh"
    lines = [f"# Annals — {space}", "", "## Summary" if not zh else "## 概要"]
    lo, hi = min(e.importance for e in events), max(e.importance for e in events)
    lines.append(f"{len(events)} 条事件 · 重要度 {lo}–{hi}" if zh
                 else f"{len(events)} events · importance range {lo}–{hi}")
    key = [e for e in events if e.importance >= highlight_threshold]
    if key:
        lines += ["", f"## 关键事件（重要度 ≥ {highlight_threshold}）" if zh
                  else f"## Key events (importance ≥ {highlight_threshold})"]
        lines += [f"- {when_label(e.when)} {clean_line(e.summary)}" for e in key]
    lines += ["", "## 时间线" if zh else "## Timeline"]
    month = None
    for event in events:
        label = event.when.start.strftime("%Y-%m")
        if label != month:
            month = label
            lines += ["", f"### {label}"]
        # The marks go before the text, as in recall's timeline: after it, a summary ending
        # in " ★" or " (plan)" would pass for a key or a planned event.
        star = " ★" if event.importance >= highlight_threshold else ""
        plan = (" （计划）" if zh else " (plan)") if event.plan else ""
        faded = (" （已归档）" if zh else " (archived)") if event.status == "archived" else ""
        lines.append(f"├─ {when_label(event.when)}{star}{plan}{faded} "
                     f"{clean_line(event.summary)}")
    lines += summary_section(summaries, zh)
    return "\n".join(lines) + "\n"


def nothing_yet(services: Services, space: str) -> str:
    """The export of a chronicle with no event yet: and, when messages wait to be read (an
    import without --extract, a chat inside its quiet window), how many and what reads them,
    in the language of those messages."""
    sessions = services.store.list_sessions(space)
    waiting = [m for s in sessions if s.has_unread
               for m in services.store.get_messages(space, s.session, seq_from=s.unread_from)]
    # the language of what waits, else of the last turns read (all small talk, no event)
    sample = waiting or [m for s in sessions[:3] for m in services.store.get_messages(
        space, s.session, seq_from=s.extracted_upto - LANGUAGE_SAMPLE)]
    zh = _mostly_zh([m.content for m in sample[:LANGUAGE_SAMPLE]])
    lines = [f"# Annals — {space}", "", "## 概要" if zh else "## Summary"]
    if not waiting:
        lines.append("还没有记忆。" if zh else "No memories yet.")
    elif zh:
        lines.append(f"还没有记忆：{len(waiting)} 条消息等待读取（运行中的 `annals serve` 在安静一段时间后"
                     f"读取；现在就读：annals extract --space {space}）。")
    else:
        lines.append(f"No memories yet: {len(waiting)} messages wait to be read (a running "
                     f"`annals serve` reads them after its quiet window; to read them now: "
                     f"annals extract --space {space}).")
    return "\n".join(lines) + "\n"


def _mostly_zh(texts: list[str]) -> bool:
    return sum(language(t) == "zh" for t in texts) * 2 > len(texts)


LANGUAGE_SAMPLE = 40  # messages read to tell a space's language


def chat_language(services: Services, space: str, events: list[Event]) -> str:
    """The language the space's chats are in (domain.salience.language, the majority of a
    sample of the messages its events cite): a Chinese chat gets Chinese headings though an
    LLM retold some events in English. Events that cite nothing (notes): their own text."""
    keys = list(dict.fromkeys((s.session, s.seq_start) for e in events for s in e.sources))
    sample = keys[:: max(1, -(-len(keys) // LANGUAGE_SAMPLE))]  # spread over the chronicle
    texts = [m.content for m in services.store.load_messages(space, sample)] if sample else []
    texts = texts or [e.summary for e in events]
    return "zh" if _mostly_zh(texts) else "en"


def summary_section(summaries: list[Event], zh: bool) -> list[str]:
    """Session summaries and their folds, highest level first, apart from the timeline."""
    if not summaries:
        return []
    lines = ["", "## 摘要" if zh else "## Summaries"]
    for event in sorted(summaries, key=lambda e: (-_level(e), e.when.start, e.id)):
        lines.append(f"- {clean_line(event.title)} — {clean_line(event.summary)}")
    return lines


def _level(event: Event) -> int:
    return next((int(t[6:]) for t in event.tags if t.startswith("level:") and t[6:].isdigit()),
                1)
