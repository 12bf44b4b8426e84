"""Containment: stored text made safe to hand to a model (what someone typed, or what an
extractor wrote from it, is hostile). The rules — invisible characters dropped, line breaks
normalised, square brackets and their look-alikes as ( ), tag-like < as ‹, fences broken —
are set out in chalicelib.usecases.recall.context's docstring, whose structure depends on
them; they live here, in the domain, because every rendering of stored text uses them: the
recall context, the Markdown export, MCP's tools and resources, and the prompts of the LLM
extractor and merger."""

from __future__ import annotations

import re

# Format characters (Unicode Cf, as of Unicode 15) and control characters but tab and breaks.
_INVISIBLE = re.compile(
    "[\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890-\u0891\u08e2\u180e\u200b-\u200f"
    "\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd"
    "\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001"
    "\U000e0020-\U000e007f\x00-\x08\x0e-\x1b\x1f\x7f-\x84\x86-\x9f]")
_SURROGATE = re.compile("[\ud800-\udfff]")
_BREAK = re.compile(r"\r\n|[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
_OPENING = "[［【〔〖〘〚⟦⟬⁅⦋⦍⦏⦗❲⎡⎢⎣⸢⸤⹕⹗⌈⌊⏠︗︹︻﹇﹝"
_CLOSING = "]］】〕〗〙〛⟧⟭⁆⦌⦎⦐⦘❳⎤⎥⎦⸣⸥⹖⹘⌉⌋⏡︘︺︼﹈﹞"
BRACKETS = _OPENING + _CLOSING
_BRACKET_MAP = str.maketrans({**dict.fromkeys(_OPENING, "("), **dict.fromkeys(_CLOSING, ")")})
_TAG_OPEN = re.compile(r"[<＜﹤](?=[<＜﹤]*(?:[/|!?｜]|[^\W\d_]))")
_FENCE = re.compile(r"`{3,}|~{3,}")
_REF_BAD = re.compile(r"[^A-Za-z0-9_.:@#~-]")


def _fence(match: re.Match[str]) -> str:
    return ("ˋ" if match.group(0)[0] == "`" else "˜") * len(match.group(0))


def clean_text(text: str) -> str:
    """Stored text made safe to show inside a block; line breaks become newlines."""
    if not text.isprintable():
        text = _SURROGATE.sub("\ufffd", _INVISIBLE.sub("", text))
    text = _BREAK.sub("\n", text).rstrip("\n")
    text = _TAG_OPEN.sub("‹", text.translate(_BRACKET_MAP))
    return _FENCE.sub(_fence, text)


def clean_line(text: str) -> str:
    """clean_text on one line: the non-blank lines, stripped, joined with one space."""
    return " ".join(part.strip() for part in clean_text(text).split("\n") if part.strip())


def clean_tag(tag: str) -> str:
    return clean_line(tag).replace(",", "，")


def clean_ref(ref: str) -> str:
    return _REF_BAD.sub("_", ref) or "_"
