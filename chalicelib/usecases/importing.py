"""Import chat history from files: OpenAI-style messages JSON, SillyTavern .jsonl chats and
LoCoMo conversations. Each becomes sessions of messages put through the normal ingest path,
so an import is idempotent (re-running it reports everything unchanged).

Times: a message's own time is used when the file has one. Otherwise its time must be
stable, or every re-import would re-date the message, report it `changed` and re-extract it:
- a message already stored at the same session and seq with the same role, speaker and words
  keeps the time it was stored with;
- a new one gets `start + i seconds` in file order (so seq order and time order agree), where
  `start` is `--start` if given, else the file's own modification time. `annals import` says
  so (`undated_warning`: on stderr, and `undated` / `warning` in its answer).
SillyTavern writes `send_date` in several human formats ("June 1, 2024 8:30pm"); dateparser
reads those.

Speakers: a message's own name when the file gives one that is a name (`name` of an OpenAI
message or a SillyTavern line); else the file's own name for its role (a SillyTavern
header's `user_name` / `character_name`); else the name passed for the role (`RoleNames`:
`annals import --user-name / --assistant-name`); else the file's placeholder ("User",
"{{char}}") or none, which ingest stores as the role ("user", "assistant"): a speaker, never
a person (chalicelib.domain.names.is_placeholder).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, tzinfo
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from chalicelib.domain.models import (
    SESSION_RULE,
    MessageIn,
    default_speaker,
    session_id_from_file_name,
    session_ok,
)
from chalicelib.domain.names import is_placeholder
from chalicelib.ports import Services

BATCH = 500  # messages per put_messages call (the API allows 1000)


@dataclass(frozen=True)
class Skipped:
    """A message left out of an import, and why in plain words. `line`: its line in a
    SillyTavern file, its place (from 1) in the list of a JSON file."""

    session: str
    line: int
    reason: str

    def as_dict(self) -> dict:
        return {"session": self.session, "line": self.line, "reason": self.reason}


@dataclass
class ImportedSession:
    session: str
    messages: list[MessageIn]
    untimed: frozenset[int] = frozenset()  # seqs whose time the file did not give
    skipped: list[Skipped] = field(default_factory=list)  # messages the API would refuse


class ImportFormatError(ValueError):
    """The file is not in a format we can read (with a message that says why)."""


ACCEPTED_FORMATS = ("annals import reads a SillyTavern chat (.jsonl), OpenAI-style messages "
                    'JSON (a list of {"role", "content"}, or {"messages": [...]}) or a LoCoMo '
                    "conversation (JSON with session_N lists)")


@dataclass(frozen=True)
class RoleNames:
    """Who speaks for a role when a message names no one (or only a placeholder)."""

    user: str | None = None
    assistant: str | None = None

    def under(self, fallback: RoleNames) -> RoleNames:
        """These names, and `fallback`'s for the roles these leave open."""
        return RoleNames(user=_name(self.user) or _name(fallback.user),
                         assistant=_name(self.assistant) or _name(fallback.assistant))

    def speaker(self, role: str, name: Any) -> str | None:
        """The message's own name if it is one, else the role's name, else what the file
        said (a placeholder, or None: ingest then stores the role)."""
        own = _name(name)
        if own:
            return own
        mapped = _name({"user": self.user, "assistant": self.assistant}.get(role))
        if mapped:
            return mapped
        return (" ".join(str(name).split()) or None) if name else None


def _name(value: Any) -> str | None:
    """A person's name as given (one line), or None for nothing or a placeholder."""
    if not isinstance(value, str):
        return None
    text = " ".join(value.split())
    return text if text and not is_placeholder(text) else None


# SillyTavern's "humanized" times (its `humanizedDateTime`, local time): chat files are named
# with them, and its older versions wrote them as each message's send_date —
# "2024-07-12@01h31m37s123ms", "2024-7-12@01h31m37s", "2024-6-5 @14h 56m 50s 682ms". Hand
# -written: dateparser reads none of them (the first two as *today* at some hour), and
# SillyTavern's own reader (utils.js timestampToMoment) is three regular expressions too.
_ST_HUMANIZED = re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2}) ?@(\d{1,2})h ?(\d{1,2})m ?(\d{1,2})s"
                           r"(?: ?(\d{1,3})ms)?")


def parse_time(value: Any, zone: tzinfo) -> datetime | None:
    """ISO-8601, epoch seconds or milliseconds (a number or its digits), SillyTavern's
    humanized times, or free text with a whole date ("June 1, 2024 8:30pm"); None for
    anything else — never a guess of today's date for what it could not read."""
    if value is None or value == "":
        return None
    text = str(value).strip()
    if isinstance(value, int | float) or text.isdigit():
        number = float(text)
        return datetime.fromtimestamp(number / 1000 if number > 1e11 else number, tz=UTC)
    if m := _ST_HUMANIZED.fullmatch(text):
        year, month, day, hour, minute, second, ms = (int(g or 0) for g in m.groups())
        try:
            return datetime(year, month, day, hour, minute, second, ms * 1000, tzinfo=zone)
        except ValueError:
            return None
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        import dateparser  # slow to import; only free-text dates need it

        # a whole date as written: no "yesterday", no bare hour read as today's
        parsed = dateparser.parse(text, settings={
            "RETURN_AS_TIMEZONE_AWARE": False, "REQUIRE_PARTS": ["day", "month", "year"],
            "PARSERS": ["custom-formats", "absolute-time"]})
        if parsed is None:
            return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=zone)


def _session(session: str, rows: list[dict], start: datetime) -> ImportedSession:
    """The rows as messages, seq = place in the file. A row the API would refuse (words over
    its limit, a time outside its range) is skipped, its seq left free, so fixing it in the
    file and importing again adds it and changes nothing else."""
    out, skipped = [], []
    for seq, row in enumerate(rows):
        at = row.get("at") or start + timedelta(seconds=seq)
        try:
            out.append(MessageIn(seq=seq, role=row["role"], speaker=row.get("speaker"),
                                 content=row["content"], at=at))
        except ValidationError as exc:
            skipped.append(Skipped(session, row.get("line", seq + 1), refused(exc)))
    kept = {m.seq for m in out}
    untimed = frozenset(seq for seq, row in enumerate(rows) if not row.get("at") and seq in kept)
    return ImportedSession(session, out, untimed, skipped)


FIELD_NAMES = {"content": "the message", "speaker": "the speaker's name", "at": "its time"}


def refused(exc: ValidationError) -> str:
    """Why MessageIn refused a row, in plain words: "the message is 25,013 characters, over
    the limit of 20,000" (pydantic's own text names types and links to its docs)."""
    reasons = []
    for error in exc.errors(include_url=False):
        name = FIELD_NAMES.get(str(error["loc"][0]) if error["loc"] else "", "a field")
        limit = (error.get("ctx") or {}).get("max_length")
        if error["type"] == "string_too_long" and limit is not None:
            size = len(error.get("input") or "")
            reasons.append(f"{name} is {size:,} characters, over the limit of {limit:,}")
        else:
            reasons.append(f"{name}: {str(error['msg']).removeprefix('Value error, ')}")
    return "; ".join(reasons)


def openai_messages(data: Any, session: str, start: datetime, zone: tzinfo,
                    names: RoleNames = RoleNames()) -> list[ImportedSession]:
    """[{"role", "content", "name"?, "timestamp"|"created_at"|"at"?}] or {"messages": [...]};
    a message without a `name` speaks as `names` say for its role."""
    items = data.get("messages") if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise ImportFormatError("expected a list of messages or {\"messages\": [...]}")
    rows = []
    for number, item in enumerate(items, 1):
        if not isinstance(item, dict) or "role" not in item:
            raise ImportFormatError(f"not an OpenAI-style message: {str(item)[:80]}")
        content = item.get("content")
        if isinstance(content, list):  # content parts: keep the text ones
            content = " ".join(p.get("text", "") for p in content if isinstance(p, dict))
        if not content or item["role"] not in ("user", "assistant", "system"):
            continue  # tool calls and empty turns carry no evidence
        when = next((item[k] for k in ("at", "timestamp", "created_at") if item.get(k)), None)
        rows.append({"role": item["role"], "speaker": names.speaker(item["role"], item.get("name")),
                     "content": content, "at": parse_time(when, zone), "line": number})
    return [_session(session, rows, start)]


def sillytavern(lines: list[str], session: str, start: datetime, zone: tzinfo,
                names: RoleNames = RoleNames()) -> list[ImportedSession]:
    """SillyTavern chat .jsonl: a header line (user_name, character_name), then one line per
    message ({"name", "is_user", "is_system", "send_date", "mes"}). A message whose `name` is
    missing or a placeholder speaks as the header names its role, else as `names` do."""
    rows = []
    own = names
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except ValueError as exc:
            raise ImportFormatError(f"line {number}: not JSON ({exc})") from None
        if not isinstance(item, dict):
            raise ImportFormatError(f"line {number}: not a SillyTavern message")
        if "mes" not in item:  # the header line (chat metadata): the file's own names
            own = RoleNames(user=item.get("user_name"),
                            assistant=item.get("character_name")).under(names)
            continue
        if not str(item["mes"]).strip() or item.get("is_system"):
            continue
        role = "user" if item.get("is_user") else "assistant"
        rows.append({"role": role, "speaker": own.speaker(role, item.get("name")),
                     "content": str(item["mes"]), "at": parse_time(item.get("send_date"), zone),
                     "line": number})
    return [_session(session, rows, start)]


def locomo(data: dict, zone: tzinfo) -> list[ImportedSession]:
    """LoCoMo: session_N lists of {speaker, dia_id "DN:T", text, blip_caption?} with
    session_N_date_time; session N → session "N", seq = T (as `annals bench` maps it).
    Both speakers are people, so both speak as users."""
    out = []
    for key, turns in data.items():
        m = re.fullmatch(r"session_(\d+)", key)
        if not m or not isinstance(turns, list):
            continue
        at = parse_time(data.get(f"{key}_date_time"), zone)
        if at is None:
            raise ImportFormatError(f"{key}: no readable {key}_date_time")
        msgs, skipped = [], []
        for i, turn in enumerate(turns, 1):
            dm = re.fullmatch(r"D\d+:(\d+)", str(turn.get("dia_id", "")))
            text = str(turn.get("text") or "").strip()
            if turn.get("blip_caption"):
                text = f"{text} [shares a photo: {turn['blip_caption']}]".strip()
            if not text:
                continue
            try:
                msgs.append(MessageIn(seq=int(dm.group(1)) if dm else i,
                                      role="user",  # two people: neither is an AI
                                      speaker=turn.get("speaker"), content=text, at=at))
            except ValidationError as exc:
                skipped.append(Skipped(m.group(1), i, refused(exc)))
        out.append(ImportedSession(m.group(1), msgs, skipped=skipped))
    if not out:
        raise ImportFormatError("no session_N lists found")
    return sorted(out, key=lambda s: int(s.session))


def read_file(path: Path, fmt: str, session: str | None, start: datetime | None,
              zone: tzinfo, names: RoleNames = RoleNames()) -> list[ImportedSession]:
    """Parse `path` as `fmt` (auto: by extension and shape). `start`: the time of the first
    message without one (default: the file's modification time); `names`: who speaks for
    each role where the file names no one (LoCoMo files always do)."""
    text = path.read_text(encoding="utf-8")
    if start is None:
        start = file_start(path, zone)
    if session is not None and not session_ok(session):
        raise ValueError(f"{SESSION_RULE} (not {session!r})")
    session = session or session_id_from_file_name(path.name)  # one rule with the web's
    if fmt == "auto":
        fmt = detect(path, text)
    try:
        return _parse(text, fmt, session, start, zone, names)
    except ImportFormatError as exc:  # say what would have been read
        raise ImportFormatError(f"{exc}. {ACCEPTED_FORMATS}") from None


def _parse(text: str, fmt: str, session: str, start: datetime, zone: tzinfo,
           names: RoleNames) -> list[ImportedSession]:
    if fmt == "sillytavern":
        return sillytavern(text.splitlines(), session, start, zone, names)
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ImportFormatError(f"not JSON: {exc}") from None
    if fmt == "locomo":
        if not isinstance(data, dict):
            raise ImportFormatError("a LoCoMo conversation is a JSON object")
        return locomo(data, zone)
    return openai_messages(data, session, start, zone, names)


def file_start(path: Path, zone: tzinfo) -> datetime:
    """The time of a file's first message without one when no --start is given: the file's
    modification time (stable, so a re-import gives the same times)."""
    return datetime.fromtimestamp(int(path.stat().st_mtime), zone)


def skipped(sessions: Iterable[ImportedSession]) -> list[Skipped]:
    """The messages of the file left out, in file order per session."""
    return [item for s in sessions for item in s.skipped]


def undated(sessions: Iterable[ImportedSession]) -> int:
    """How many messages the file gave no time (they are dated from the start)."""
    return sum(len(s.untimed) for s in sessions)


def undated_warning(count: int, start: datetime, given: bool) -> str | None:
    """What to tell the user about `count` messages dated by `start`, not by the file."""
    if not count:
        return None
    said = f"{count} message{'s' if count != 1 else ''} had no time in the file"
    spaced = "one second apart in file order"
    if given:
        return f"{said}: dated from --start {start.isoformat()}, {spaced}"
    return (f"{said}: dated from the file's modification time {start.isoformat()}, {spaced}; "
            "give --start ISO-8601 (when the first message was said) to date them")


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


def keep_stored_times(services: Services, space: str, imported: ImportedSession) -> list[
        MessageIn]:
    """Messages the file gave no time keep the one they were stored with, when they are the
    same message (role, speaker, words) at the same seq: a re-import changes nothing."""
    if not imported.untimed:
        return imported.messages
    stored = {m.seq: m for m in services.store.get_messages(space, imported.session)}
    out = []
    for msg in imported.messages:
        old = stored.get(msg.seq)
        if (msg.seq in imported.untimed and old is not None and old.role == msg.role
                and old.content == msg.content
                and old.speaker == (msg.speaker or default_speaker(msg.role))):
            msg = msg.model_copy(update={"at": old.at})
        out.append(msg)
    return out


def import_sessions(services: Services, space: str, sessions: list[ImportedSession],
                    progress: Callable[[ImportedSession], None] | None = None) -> list[dict]:
    """Put every session through the normal ingest path, in batches. Returns per session how
    many messages were accepted, unchanged and changed."""
    from chalicelib.domain.models import PutMessagesRequest
    from chalicelib.usecases.ingest import put_messages

    report = []
    for imported in sessions:
        totals = {"session": imported.session, "accepted": 0, "unchanged": 0, "changed": 0}
        for batch in batches(keep_stored_times(services, space, imported)):
            out = put_messages(services, space, imported.session,
                               PutMessagesRequest(messages=batch))
            for key in ("accepted", "unchanged", "changed"):
                totals[key] += getattr(out, key)
        report.append(totals)
        if progress:
            progress(imported)
    return report
