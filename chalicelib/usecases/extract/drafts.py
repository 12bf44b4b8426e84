"""The checkpoint every extractor's drafts pass before they are saved (`check_drafts`).

An extractor — the offline rules or an LLM — proposes drafts; what it proposes is data made
from chat text, and chat text is anything: long assistant replies with bullet lists, code,
tables, emoji, a sentence split in the middle (", or the Disneyland Band performances.").
Saving turns a draft into an `Event`, whose fields have bounds (title 1..200 characters,
summary 1..4000, a `When` that ends after it starts, importance 1..10). A draft that would
break them is repaired here, or dropped when nothing worth keeping is left, so that no
message can make a batch fail (and no internal ValidationError can reach a client as its
own mistake).

Repairs, in order:
  text      control characters, lone surrogates, zero-width and bidi controls go; lists,
            headings, quotes, code fences, tables and emphasis become plain text lines;
  fragment  a text that starts with punctuation or a conjunction (", or …", "而且…") starts
            at its first word;
  content   a summary without a letter or digit (punctuation, emoji, markup) is nothing:
            the title stands in for it, else the draft is dropped;
  title     one line, without a date stamp (the date is `when`); empty, it is made from
            the summary — the first clause, no date stamp;
  length    over-long text is cut at a sentence, else a word boundary;
  sources   only ranges of the batch's own messages, narrowed to the messages they cover;
            a draft citing none of them is dropped (it would be invented);
  when      an invalid `when` becomes the day of the first message the draft cites;
  fields    importance an integer in 1..10, participants and tags short one-line strings,
            kind one of event | note | summary.

Finally the draft is built into an `Event` once; one that still fails is dropped (and logged
as a bug), never saved half-valid.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from pydantic import ValidationError

from chalicelib.domain.lazyre import compiled
from chalicelib.domain.models import (
    LABEL_CHARS,
    MAX_LABELS,
    Event,
    EventDraft,
    Message,
    Source,
    When,
)
from chalicelib.domain.textproc import is_cjk
from chalicelib.domain.textrules import trim_hanging

CJK_CHARS = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"

log = logging.getLogger("annals.extract.drafts")

TITLE_CHARS = 200
SUMMARY_CHARS = 4000
LOCATION_CHARS = 200
PREVIEW_CHARS = 80
# A title made from a summary is a heading, not a sentence (as the offline extractor's).
MADE_TITLE_WORDS = 10
MADE_TITLE_CJK = 24
EVENT_KINDS = ("event", "note", "summary")
_CHECK_TIME = datetime(2000, 1, 1, tzinfo=UTC)


@dataclass
class DraftCounts:
    """What the checkpoint did to one batch's drafts."""

    kept: int = 0  # saved as they came
    repaired: int = 0  # saved after a repair
    dropped: int = 0  # not saved: nothing worth keeping was left

    def add(self, other: DraftCounts) -> None:
        self.kept += other.kept
        self.repaired += other.repaired
        self.dropped += other.dropped

    def as_dict(self) -> dict[str, int]:
        return {"repaired": self.repaired, "dropped": self.dropped}


@dataclass
class CheckedDrafts:
    drafts: list[EventDraft] = field(default_factory=list)
    counts: DraftCounts = field(default_factory=DraftCounts)


# ------------------------------------------------------------------ plain text

_KEEP_FORMAT = {"\u200c", "\u200d"}  # ZWNJ / ZWJ: spelling in some scripts, emoji sequences
_LINE_BREAKS = {"\r", "\v", "\f", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"}


def strip_controls(text: str) -> str:
    """Text without control characters, lone surrogates or invisible format characters
    (zero-width spaces, bidi controls, BOM); line breaks of every kind become "\\n", tabs
    a space."""
    if text.isprintable() and "\n" not in text:
        return text
    out = []
    for ch in text:
        if ch == "\n" or ch in _LINE_BREAKS:
            out.append("\n")
        elif ch == "\t":
            out.append(" ")
        elif ch.isprintable() or ch == " ":
            out.append(ch)
        else:
            category = unicodedata.category(ch)
            if category in ("Zs", "Zl", "Zp"):
                out.append(" ")
            elif (category == "Cf" and ch in _KEEP_FORMAT) or category in ("Co", "Cn"):
                out.append(ch)
            # Cc, Cs and the other Cf characters go
    return "".join(out).replace("\r\n", "\n")


_FENCE = re.compile(r"^\s*(?:`{3,}|~{3,})\s*[\w+#.-]*\s*$")
_RULE = re.compile(r"^\s*([-*_=])(?:\s*\1){2,}\s*$")
_TABLE_SEPARATOR = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)*\|?\s*$")
_HEADING = re.compile(r"^\s{0,3}#{1,6}(?:\s+|$)|\s+#+\s*$")
_QUOTE = re.compile(r"^\s*(?:>\s?)+")
_BULLET = re.compile(
    r"^\s*(?:(?:[-*+]|\d{1,3}[.)])\s+|[•·▪◦‣⁃●○■□►▶➤→✓✔✗✘☐☑]\s*|\d{1,3}、\s*|[（(]\d{1,3}[)）]\s*"
    r"|[一二三四五六七八九十]{1,3}、\s*)(?:\[[ xX]\]\s+)?")
_IMAGE_OR_LINK = re.compile(r"!?\[([^\]\n]*)\]\((?:[^()\s]|\([^()\s]*\))*\)")
_STRONG = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
_EMPHASIS = re.compile(r"(?<![\w*])\*(?=\S)([^*\n]+?)(?<=\S)\*(?![\w*])")
_STRIKE = re.compile(r"~~(?=\S)(.+?)(?<=\S)~~")
_CODE = re.compile(r"`+([^`\n]*)`+")
_BR = re.compile(r"<br\s*/?>", re.IGNORECASE)
_SPACES = re.compile(r"[ \u00a0\u3000]{2,}| ?\u3000 ?")


def _table_row(line: str) -> str | None:
    """A markdown table row as its cells, "a · b · c"; None when the line is not one."""
    s = line.strip()
    if s.count("|") < 2 or not (s.startswith("|") or s.endswith("|")):
        return None
    cells = [c.strip() for c in s.strip("|").split("|")]
    return " · ".join(c for c in cells if c)


def plain_lines(text: str) -> str:
    """Markdown and chat markup reduced to plain text lines: code fences, rules and table
    separators go, headings, quote marks and list markers are taken off their lines, table
    rows become their cells, links their words, emphasis and inline code their text."""
    text = strip_controls(text)
    lines = []
    for raw in _BR.sub(" ", text).split("\n"):
        if _FENCE.match(raw) or _RULE.match(raw) or _TABLE_SEPARATOR.match(raw):
            continue
        line = _QUOTE.sub("", raw)
        line = _HEADING.sub("", line)
        for _ in range(3):  # "- 1. [x] item"
            cut = _BULLET.sub("", line, count=1)
            if cut == line:
                break
            line = cut
        row = _table_row(line)
        line = row if row is not None else line
        line = _IMAGE_OR_LINK.sub(r"\1", line)
        line = _STRONG.sub(r"\2", line)
        line = _STRIKE.sub(r"\1", line)
        line = _EMPHASIS.sub(r"\1", line)
        line = _CODE.sub(r"\1", line)
        line = _SPACES.sub(" ", line).strip()
        if line:
            lines.append(line)
    return "\n".join(lines)


def one_line(text: str) -> str:
    return " ".join(plain_lines(text).split())


# ------------------------------------------------------------------ fragments

# Leading characters a statement never starts with: closing or separating punctuation,
# list and arrow symbols, stray combining marks. Opening brackets and quotes stay, and so do
# the few marks that begin a word ("#1", "@Sam", "¿Qué", "$500", "<system>").
_KEEP_LEADING = set("\"'¿¡#@&$€£¥<+~")
# A conjunction opens a fragment when punctuation came before it (", or the …"), a comma
# follows it ("而且，…", "But, …") or, in English, it is not capitalised ("or the …"):
# "But Sam stayed home." and 另外小明… are whole sentences and stay as they are.
_EN_CONJUNCTION = re.compile(r"^(and then|or else|as well as|and|or|but|nor|yet)\b\s*(,?)\s*",
                             re.IGNORECASE)
_ZH_CONJUNCTION = re.compile(r"^(或者|或是|而且|并且|但是|然后|以及|可是|不过|还有|另外)\s*([，,、]?)\s*")


def _junk_leading(ch: str) -> bool:
    if ch.isspace():
        return True
    if ch in _KEEP_LEADING:
        return False
    category = unicodedata.category(ch)
    return category in ("Po", "Pd", "Pc", "Pe", "Pf", "So", "Sk", "Sm", "Mn", "Me", "Mc")


def trim_fragment(text: str) -> str:
    """The text from its first word: leading punctuation, symbols and the conjunction of a
    fragment go (", or the Disneyland Band performances." → "The Disneyland Band
    performances.")."""
    s = text.strip()
    for _ in range(8):
        start = 0
        while start < len(s) and _junk_leading(s[start]):
            start += 1
        cut = s[start:]
        cjk = bool(cut[:1]) and is_cjk(cut[:1])
        m = (_ZH_CONJUNCTION if cjk else _EN_CONJUNCTION).match(cut)
        fragment = m is not None and (start > 0 or bool(m.group(2))
                                      or not (cjk or m.group(1)[0].isupper()))
        if fragment and m.end() < len(cut):
            cut = cut[m.end():]
        if cut == s:
            break
        s = cut
    first = s.split(" ", 1)[0]
    if s != text.strip() and first.isascii() and first.isalpha() and first.islower():
        s = s[0].upper() + s[1:]
    return s


def has_content(text: str) -> bool:
    """A letter or a digit: something besides punctuation, emoji, symbols and markup."""
    return any(unicodedata.category(ch)[0] in "LN" for ch in text)


# ------------------------------------------------------------------ dates in titles

_YEAR = r"(?:19|20|21)\d{2}"
_MONTH = r"(?:0?[1-9]|1[0-2])"
_DAY = r"(?:0?[1-9]|[12]\d|3[01])"
_MONTH_NAME = (r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?"
               r"|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\.?")
_ORDINAL = r"(?:st|nd|rd|th)?"
_CLOCK = r"(?:[ T]\d{1,2}:\d{2}(?::\d{2})?)?"
_DATE = (
    rf"(?<!\d){_YEAR}[-/.]{_MONTH}(?:[-/.]{_DAY})?(?!\d){_CLOCK}"
    rf"|(?<!\d){_YEAR}\s*年\s*{_MONTH}\s*月(?:\s*{_DAY}\s*[日号])?"
    rf"|(?<![\d年]){_MONTH}\s*月\s*{_DAY}\s*[日号]"
    rf"|\b{_MONTH_NAME}\s+{_DAY}{_ORDINAL}(?:,?\s+{_YEAR})?\b"
    rf"|\b{_DAY}{_ORDINAL}\s+(?:of\s+)?{_MONTH_NAME}(?:,?\s+{_YEAR})?\b"
    rf"|\b{_MONTH_NAME}\s+{_YEAR}\b"
)
_DATE_RANGE = rf"(?:{_DATE})(?:\s*(?:~|–|—|-|to|至|到)\s*(?:{_DATE}|{_DAY}[日号]?))?"
# compiled on first use (domain.lazyre), as _BETWEEN_CJK: ~0.05 s a recall never needs
_DATE_STAMP = compiled(
    rf"[（(\[【〔]\s*(?:{_DATE_RANGE})\s*[)）\]】〕]"
    # 在 goes with the date, unless a verb took it ("定在12月3日": 定在 is left to trim_hanging)
    rf"|(?:\b(?:on|in)\s+|于|(?<![定约订改])在)?(?:{_DATE_RANGE})",
    re.IGNORECASE)
_SEPARATORS = " \t:：-–—|·,，/;；"
_EMPTY_BRACKETS = re.compile(r"[（(\[【〔]\s*[)）\]】〕]")
_OPEN_TAIL = re.compile(r"\s*[（(\[【〔][\s\d:：/.\-–—~…]*$")  # "体检（…" once cut
_BETWEEN_CJK = compiled(rf"(?<=[{CJK_CHARS}]) (?=[{CJK_CHARS}])")


def strip_date_stamps(title: str) -> str:
    """The title without the dates stamped on it ("2026-06-14: Vet visit", "体检（6月14日）",
    "Biscuit adopted on June 14, 2026"): the date is `when`."""
    if not any(ch.isdigit() for ch in title):
        return title
    out = _DATE_STAMP().sub(" ", title)
    if out == title:
        return title
    out = _OPEN_TAIL.sub("", _EMPTY_BRACKETS.sub(" ", out))
    out = _BETWEEN_CJK().sub("", " ".join(out.split()))
    out = trim_hanging(out.strip(_SEPARATORS)).strip(_SEPARATORS)
    return re.sub(r"\s+([,，.。!！?？:：;；)）])", r"\1", out)


# ------------------------------------------------------------------ cutting

_SENTENCE_END = re.compile(r"[。！？!?…]|[.;；](?=\s)|\n")


def cut_text(text: str, limit: int) -> str:
    """At most `limit` characters, cut at the last sentence end in the second half, else the
    last space, else hard; a cut inside a sentence ends with "…"."""
    if len(text) <= limit:
        return text
    head = text[:limit]
    ends = [m.end() for m in _SENTENCE_END.finditer(head) if m.end() > limit // 2]
    if ends:
        return head[:ends[-1]].rstrip()
    head = text[:limit - 1]
    space = head.rfind(" ")
    if space > limit // 2:
        head = head[:space]
    return head.rstrip(_SEPARATORS + ".") + "…"


def made_title(summary: str) -> str:
    """A heading from the summary: its first clause with content, no date stamp, short."""
    for line in summary.split("\n"):
        line = strip_date_stamps(line)
        if is_cjk(line):
            clauses = re.split(r"[，,。！？!?；;：:\n]", line)
        else:
            clauses = re.split(r"[,;:.!?](?:\s|$)| - | — |[。！？]", line)
        for clause in clauses:
            # a stamp cut from inside the line leaves its clause's function word hanging
            clause = trim_hanging(trim_fragment(clause.strip()).strip(_SEPARATORS))
            if not has_content(clause):
                continue
            if is_cjk(clause):
                return clause if len(clause) <= MADE_TITLE_CJK else \
                    clause[:MADE_TITLE_CJK - 1] + "…"
            words = clause.split()
            title = " ".join(words) if len(words) <= MADE_TITLE_WORDS else \
                " ".join(words[:MADE_TITLE_WORDS - 1]) + "…"
            return cut_text(title, TITLE_CHARS)
    return ""


# ------------------------------------------------------------------ the fields


def _settled(clean: Callable[[str], str], text: str, rounds: int = 4) -> str:
    """`clean` applied until the text stops changing: what one step uncovers ("``` 1. Book
    the hotel" loses its backticks, then its list marker) is cleaned too, so a repaired
    draft passes the checkpoint again untouched."""
    for _ in range(rounds):
        cleaned = clean(text)
        if cleaned == text:
            break
        text = cleaned
    return text


def _summary_lines(text: str) -> str:
    lines = [trim_fragment(line) for line in plain_lines(text).split("\n")]
    return "\n".join(line for line in lines if has_content(line))


def clean_summary(summary: Any) -> str:
    text = summary if isinstance(summary, str) else ""
    return cut_text(_settled(_summary_lines, text), SUMMARY_CHARS)


def clean_title(title: Any, summary: str) -> str:
    text = _settled(lambda t: trim_fragment(one_line(t)), title) \
        if isinstance(title, str) else ""
    undated = strip_date_stamps(text)
    if undated != text and _heads(text, summary):
        # A heading cut from a dated summary ("奶糖昨天（2026-06-1…") is made again from the
        # summary, whose stamp goes before the cut.
        return made_title(summary)
    text = trim_fragment(undated)
    if not has_content(text):
        return made_title(summary)
    return cut_text(text, TITLE_CHARS)


def _heads(title: str, summary: str) -> bool:
    """The title is the start of the summary, perhaps cut with "…"."""
    head = title.removesuffix("…").rstrip()
    return bool(head) and " ".join(summary.split()).startswith(head)


def clean_labels(values: Any, limit: int = MAX_LABELS) -> list[str]:
    if not isinstance(values, list | tuple):
        return []
    out: dict[str, str] = {}
    for value in values:
        if not isinstance(value, str):
            continue
        label = one_line(value)[:LABEL_CHARS].strip()
        if has_content(label):
            out.setdefault(label.casefold(), label)
    return list(out.values())[:limit]


def clean_sources(sources: Any, messages: Sequence[Message]) -> list[Source]:
    """The draft's ranges narrowed to the batch messages they cover; the others go."""
    by_session: dict[str, list[Message]] = {}
    for msg in messages:
        by_session.setdefault(msg.session, []).append(msg)
    out: list[Source] = []
    for source in sources if isinstance(sources, list | tuple) else []:
        if not isinstance(source, Source) or not isinstance(source.session, str):
            continue
        try:
            lo, hi = sorted((int(source.seq_start), int(source.seq_end)))
        except (TypeError, ValueError):
            continue
        covered = sorted((m for m in by_session.get(source.session, []) if lo <= m.seq <= hi),
                         key=lambda m: m.seq)
        if not covered:
            continue
        preview = source.preview if isinstance(source.preview, str) else \
            covered[0].content[:PREVIEW_CHARS]
        fixed = Source(session=source.session, seq_start=covered[0].seq,
                       seq_end=covered[-1].seq, preview=preview)
        if all((s.session, s.seq_start, s.seq_end) != (fixed.session, fixed.seq_start,
                                                       fixed.seq_end) for s in out):
            out.append(fixed)
    return out


def cited_day(sources: Sequence[Source], messages: Sequence[Message]) -> When:
    """The day of the first message the sources cite, in that message's own offset."""
    cited = [m for m in messages for s in sources if s.covers(m.session, m.seq)]
    first = min(cited, key=lambda m: m.at) if cited else min(messages, key=lambda m: m.at)
    start = first.at.replace(hour=0, minute=0, second=0, microsecond=0)
    return When(start=start, end=start + timedelta(days=1), granularity="day")


def clean_when(when: Any, sources: Sequence[Source], messages: Sequence[Message]) -> When:
    if isinstance(when, When):
        try:
            return When.model_validate(when.model_dump())
        except (ValidationError, ValueError, TypeError, AttributeError):
            pass
    return cited_day(sources, messages)


def clean_importance(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 5
    if value != value:  # NaN
        return 5
    return max(1, min(10, round(value)))


def clean_mentions(values: Any) -> list[tuple[str, str]]:
    out = []
    for item in values if isinstance(values, list | tuple) else []:
        if isinstance(item, tuple | list) and len(item) == 2 and \
                all(isinstance(v, str) for v in item):
            name = one_line(item[0])[:LABEL_CHARS]
            if has_content(name):
                out.append((name, one_line(item[1])[:LABEL_CHARS] or "thing"))
    return out


# ------------------------------------------------------------------ the checkpoint


def check_draft(draft: EventDraft, messages: Sequence[Message]) -> tuple[EventDraft | None, str]:
    """The draft as it may be saved (itself when nothing was wrong), or None; and what was
    done: "kept", "repaired: …" or "dropped: …"."""
    if not isinstance(draft, EventDraft):
        return None, f"dropped: not a draft ({type(draft).__name__})"
    get = draft.__dict__.get  # fields as they are, even on a draft built without validation
    sources = clean_sources(get("sources"), messages)
    if not sources:
        return None, "dropped: it cites no message of the batch"
    summary = clean_summary(get("summary"))
    title = clean_title(get("title"), summary)
    if not summary and title:
        summary = title
    if not summary or not title:
        return None, "dropped: no words left (only punctuation, emoji or markup)"
    location = one_line(get("location")) if isinstance(get("location"), str) else ""
    kind = get("kind") if get("kind") in EVENT_KINDS else "event"
    fields = {
        "title": title, "summary": summary, "when": clean_when(get("when"), sources, messages),
        "importance": clean_importance(get("importance")),
        "participants": clean_labels(get("participants")),
        "location": cut_text(location, LOCATION_CHARS) if has_content(location) else None,
        "tags": clean_labels(get("tags")), "sources": sources, "kind": kind,
        "plan": get("plan") is True,
    }
    mentions = clean_mentions(get("mentions"))
    changed = sorted(name for name, value in fields.items() if get(name) != value)
    if mentions != get("mentions"):
        changed.append("mentions")
    try:
        checked = EventDraft(**fields, mentions=mentions)
        Event(id="ev_check", space="check", created_at=_CHECK_TIME, updated_at=_CHECK_TIME,
              **checked.model_dump())
    except ValidationError as exc:  # a rule above is missing: a bug, but not the batch's end
        log.error("dropped a draft the checkpoint could not repair: %s", exc)
        return None, f"dropped: still invalid ({exc.error_count()} errors)"
    if not changed:
        return draft, "kept"
    return checked, "repaired: " + ", ".join(changed)


def check_drafts(drafts: Sequence[EventDraft], messages: Sequence[Message]) -> CheckedDrafts:
    """Every draft of a batch through `check_draft`: those that may be saved, and the
    counts. `messages` are the batch's own (the only ones a draft may cite)."""
    result = CheckedDrafts()
    if not messages:
        result.counts.dropped = len(drafts)
        return result
    for draft in drafts:
        try:
            checked, outcome = check_draft(draft, messages)
        except Exception:  # a draft is never worth the batch
            log.exception("dropped a draft the checkpoint failed on")
            checked, outcome = None, "dropped: the check failed"
        if checked is None:
            result.counts.dropped += 1
            log.info("%s: %r", outcome, _preview(draft))
            continue
        result.drafts.append(checked)
        if outcome == "kept":
            result.counts.kept += 1
        else:
            result.counts.repaired += 1
            log.info("%s: %r → %r", outcome, _preview(draft), checked.title)
    return result


def _preview(draft: EventDraft) -> str:
    summary = getattr(draft, "__dict__", {}).get("summary")
    return summary[:80] if isinstance(summary, str) else repr(summary)[:80]
