"""Import chat history from files: OpenAI-style messages JSON, SillyTavern .jsonl chats and
LoCoMo conversations. Each becomes sessions of messages put through the normal ingest path,
so an import is idempotent (re-running it reports everything unchanged).

Times: a message's own time is used when the file has one; otherwise messages get
`start + i seconds` in file order (so seq order and time order agree). SillyTavern writes
`send_date` in several human formats ("June 1, 2024 8:30pm"); dateparser reads those.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from pathlib import Path
from typing import Any

from chalicelib.domain.models import MessageIn

BATCH = 500  # messages per put_messages call (the API allows 1000)


@dataclass
class ImportedSession:
    session: str
    messages: list[MessageIn]


class ImportFormatError(ValueError):
    """The file is not in a format we can read (with a message that says why)."""


def parse_time(value: Any, zone: tzinfo) -> datetime | None:
    """ISO-8601, epoch seconds or milliseconds, or free text ("June 1, 2024 8:30pm")."""
    if value is None or value == "":
        return None
    if isinstance(value, int | float):
        seconds = value / 1000 if value > 1e11 else value
        return datetime.fromtimestamp(seconds, tz=UTC)
    text = str(value).strip()
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        import dateparser  # slow to import; only free-text dates need it

        parsed = dateparser.parse(text, settings={"RETURN_AS_TIMEZONE_AWARE": False})
        if parsed is None:
            return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=zone)


def _fill_times(rows: list[dict], start: datetime) -> list[MessageIn]:
    out = []
    for seq, row in enumerate(rows):
        at = row.get("at") or start + timedelta(seconds=seq)
        out.append(MessageIn(seq=seq, role=row["role"], speaker=row.get("speaker"),
                             content=row["content"], at=at))
    return out


def openai_messages(data: Any, session: str, start: datetime, zone: tzinfo) -> list[
        ImportedSession]:
    """[{"role", "content", "name"?, "timestamp"|"created_at"|"at"?}] or {"messages": [...]}."""
    items = data.get("messages") if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise ImportFormatError("expected a list of messages or {\"messages\": [...]}")
    rows = []
    for item in items:
        if not isinstance(item, dict) or "role" not in item:
            raise ImportFormatError(f"not an OpenAI-style message: {str(item)[:80]}")
        content = item.get("content")
        if isinstance(content, list):  # content parts: keep the text ones
            content = " ".join(p.get("text", "") for p in content if isinstance(p, dict))
        if not content or item["role"] not in ("user", "assistant", "system"):
            continue  # tool calls and empty turns carry no evidence
        when = next((item[k] for k in ("at", "timestamp", "created_at") if item.get(k)), None)
        rows.append({"role": item["role"], "speaker": item.get("name"), "content": content,
                     "at": parse_time(when, zone)})
    return [ImportedSession(session, _fill_times(rows, start))]


def sillytavern(lines: list[str], session: str, start: datetime, zone: tzinfo) -> list[
        ImportedSession]:
    """SillyTavern chat .jsonl: a header line (user_name, character_name), then one line per
    message ({"name", "is_user", "is_system", "send_date", "mes"})."""
    rows = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except ValueError as exc:
            raise ImportFormatError(f"line {number}: not JSON ({exc})") from None
        if "mes" not in item:
            continue  # the header line (chat metadata)
        if not str(item["mes"]).strip() or item.get("is_system"):
            continue
        rows.append({"role": "user" if item.get("is_user") else "assistant",
                     "speaker": item.get("name"), "content": str(item["mes"]),
                     "at": parse_time(item.get("send_date"), zone)})
    return [ImportedSession(session, _fill_times(rows, start))]


def locomo(data: dict, zone: tzinfo) -> list[ImportedSession]:
    """LoCoMo: session_N lists of {speaker, dia_id "DN:T", text, blip_caption?} with
    session_N_date_time; session N → session "N", seq = T (as `annals bench` maps it)."""
    speaker_a = data.get("speaker_a")
    out = []
    for key, turns in data.items():
        m = re.fullmatch(r"session_(\d+)", key)
        if not m or not isinstance(turns, list):
            continue
        at = parse_time(data.get(f"{key}_date_time"), zone)
        if at is None:
            raise ImportFormatError(f"{key}: no readable {key}_date_time")
        msgs = []
        for i, turn in enumerate(turns, 1):
            dm = re.fullmatch(r"D\d+:(\d+)", str(turn.get("dia_id", "")))
            text = str(turn.get("text") or "").strip()
            if turn.get("blip_caption"):
                text = f"{text} [shares a photo: {turn['blip_caption']}]".strip()
            if text:
                msgs.append(MessageIn(seq=int(dm.group(1)) if dm else i,
                                      role="user" if turn.get("speaker") == speaker_a
                                      else "assistant",
                                      speaker=turn.get("speaker"), content=text, at=at))
        out.append(ImportedSession(m.group(1), msgs))
    if not out:
        raise ImportFormatError("no session_N lists found")
    return sorted(out, key=lambda s: int(s.session))


def read_file(path: Path, fmt: str, session: str | None, start: datetime,
              zone: tzinfo) -> list[ImportedSession]:
    """Parse `path` as `fmt` (auto: by extension and shape)."""
    text = path.read_text(encoding="utf-8")
    session = session or path.stem
    if fmt == "auto":
        fmt = detect(path, text)
    if fmt == "sillytavern":
        return sillytavern(text.splitlines(), session, start, zone)
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ImportFormatError(f"not JSON: {exc}") from None
    if fmt == "locomo":
        return locomo(data, zone)
    return openai_messages(data, session, start, zone)


def detect(path: Path, text: str) -> str:
    if path.suffix == ".jsonl":
        return "sillytavern"
    head = text.lstrip()[:2000]
    if '"speaker_a"' in head or re.search(r'"session_\d+"', text[:200_000]):
        return "locomo"
    return "openai"


def batches(messages: list[MessageIn]) -> Iterable[list[MessageIn]]:
    for i in range(0, len(messages), BATCH):
        yield messages[i : i + BATCH]
