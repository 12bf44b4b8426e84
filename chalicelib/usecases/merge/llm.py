"""The LLM merger: the model tidies a window of events with add / update / delete / keep
instructions (Event Chronicle's merge prompt). Its handles (E1…) are mapped back to ids and
its dates checked: a merge cannot move an event in time."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from chalicelib.domain.containment import clean_line
from chalicelib.domain.dates import prompt_label
from chalicelib.domain.merge import Action, EventChanges, MergeInstruction, hull
from chalicelib.domain.models import Event
from chalicelib.ports import LLMClient
from chalicelib.usecases.extract.llm import parse_date

log = logging.getLogger("annals.merge")


MERGE_SYSTEM_PROMPT = """\
You maintain a chronicle of events extracted from a conversation. Tidy the window of events \
below; events marked [new] were just added.
Instructions you may give, one per event you change:
- "update": rewrite an event (title, summary, date, importance, participants, tags) when \
events repeat or complete each other. Put the ids of the events it absorbs in "merge" (their \
sources join it) and delete those.
- "delete": remove an event that duplicates another or that a later event corrects — always \
together with an "update" of the event that replaces it, naming the deleted one in its \
"merge" (its sources join it). A delete whose messages no remaining event cites is ignored.
- "add": a new event combining others (give "merge" with their ids); rarely needed.
- "keep": leave an event as it is (you may omit keeps).
Rules: nothing invented; combine only what the events say. Keep the events' language. Keep \
dates unless events about the same thing give different precision. Distinct facts stay \
separate events. A plan and what later happened are two events.
Reply with one JSON object and nothing else:
{"instructions": [{"action": "update", "id": "E1", "title": "...", "summary": "...", \
"date": "YYYY-MM-DD", "importance": 7, "merge": ["E4"], "reason": "..."}, \
{"action": "delete", "id": "E4", "reason": "..."}]}
Reply {"instructions": []} when nothing needs to change."""

_ACTIONS = {"add": "add", "create": "add", "new": "add", "update": "update", "edit": "update",
            "merge": "update", "modify": "update", "delete": "delete", "remove": "delete",
            "drop": "delete", "keep": "keep", "none": "keep", "noop": "keep"}


class MergeOpOut(BaseModel):
    model_config = ConfigDict(extra="ignore")

    action: Action
    id: str | None = None
    title: str | None = None
    summary: str | None = None
    date: str | None = None
    date_end: str | None = None
    importance: float | None = None
    participants: list[str] | None = None
    tags: list[str] | None = None
    merge: list[str] = Field(default_factory=list)
    reason: str = ""

    @field_validator("action", mode="before")
    @classmethod
    def _synonyms(cls, value):
        return _ACTIONS.get(str(value).strip().lower(), value)

    @field_validator("merge", mode="before")
    @classmethod
    def _list(cls, value):
        if value is None:
            return []
        return [value] if isinstance(value, str) else value


class MergeOut(BaseModel):
    model_config = ConfigDict(extra="ignore")

    instructions: list[MergeOpOut]


def format_window(window: Sequence[Event], new_ids: set[str] | frozenset[str]) -> str:
    lines = []
    for n, e in enumerate(window, 1):
        mark = " [new]" if e.id in new_ids else ""
        # stored text contained as recall's context is: no forged "E9 [new]" line
        people = ", ".join(clean_line(p) for p in e.participants) or "-"
        plan = " | plan" if e.plan else ""
        lines.append(f"E{n}{mark} | {prompt_label(e.when)} | {clean_line(e.title)} | "
                     f"{clean_line(e.summary)} | "
                     f"participants: {people} | importance {e.importance}{plan}")
    return "Events (oldest first):\n" + "\n".join(lines)


def _text(value: str | None, limit: int) -> str | None:
    value = (value or "").strip()
    return value[:limit] or None


class LLMMerger:
    name = "llm"

    def __init__(self, llm: LLMClient, max_tokens: int = 3000):
        self.llm = llm
        self.max_tokens = max_tokens

    def instructions(self, window: Sequence[Event],
                     new_ids: set[str] | frozenset[str] = frozenset()) -> list[MergeInstruction]:
        """Raises LLMError when the model fails (the caller falls back to OfflineMerger)."""
        if len(window) < 2:
            return []
        result = self.llm.complete_json(MERGE_SYSTEM_PROMPT, format_window(window, new_ids),
                                        MergeOut, max_tokens=self.max_tokens)
        return self.convert(result, window)

    @staticmethod
    def convert(result: MergeOut, window: Sequence[Event]) -> list[MergeInstruction]:
        """Handles (E1…) → ids; dates checked: a new date must overlap the span of the events
        it is built from, else the old date stays (a merge cannot move an event in time)."""
        handles = {f"E{n}": e for n, e in enumerate(window, 1)}

        def lookup(handle: str | None) -> Event | None:
            key = (handle or "").strip().upper().lstrip("#")
            return handles.get(key if key.startswith("E") else f"E{key}")

        out: list[MergeInstruction] = []
        for op in result.instructions:
            target = lookup(op.id)
            donors = [d for d in (lookup(h) for h in op.merge) if d is not None]
            if op.action in ("update", "delete", "keep") and target is None:
                log.info("merge: %s of unknown event %r skipped", op.action, op.id)
                continue
            base = [e for e in (target, *donors) if e is not None]
            fields: dict = {"title": _text(op.title, 200), "summary": _text(op.summary, 4000),
                            "participants": op.participants, "tags": op.tags}
            if op.importance is not None:
                fields["importance"] = max(1, min(10, round(op.importance)))
            if op.date and base:
                when = parse_date(op.date, op.date_end, base[0].when.start.tzinfo)
                span = hull([e.when for e in base])
                if when is not None and when.overlaps(span.start, span.end):
                    fields["when"] = when
                elif op.action == "add":
                    fields["when"] = span
            try:
                ef = EventChanges(**{k: v for k, v in fields.items() if v is not None})
            except ValidationError as exc:
                log.info("merge: unusable fields for %s %r: %s", op.action, op.id, exc)
                continue
            out.append(MergeInstruction(
                action=op.action, id=target.id if target else None, fields=ef,
                merge_from=[d.id for d in donors], reason=op.reason[:500]))
        return out


