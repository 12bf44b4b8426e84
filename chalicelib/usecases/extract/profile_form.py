"""A model reads the user's facts as a form to fill: one short call per batch.

Why a form: a small local model (Qwen2.5-Coder-1.5B here) asked for the extraction prompt's
free list of `{seq, attribute, value}` facts answered nothing, or looped, on a dozen turns of
companion chat; asked to fill fixed fields — where the user lives now, their job, their
pets' names … and what stopped being true — it found most of what the rules miss
(bench/README.md "facts read by a model"). The fields are the fact attributes
(chalicelib.domain.facts.ATTRIBUTES); the prompt shows what is known so far, so a change
can be told from a repeat.

What comes back is checked, never trusted (`statements`):
- a value must be words of one of the batch's user turns (casefold), not the AI
  character's, and not a name of the chat's speakers: it is dated and cited by the latest
  user turn that says it; anything else is dropped as unsaid;
- a value already known under its field is a repeat, not news: it is not told again (a
  small model copies the known profile back; told again, the repeat would be cited by the
  turn that ended it — "我和阿杰分手了" — and stand over the rules' reading of that ending);
  a value known to have ended is not brought back by the form either (a past pet named
  again, "要是小黑还在…", is no new pet);
- a value is shaped like one (a name or a short noun phrase: not "he's my boyfriend", not
  five words or more) and, for an attribute with words of its own — an allergy, a pet, a
  child, a lesson — the turns around it speak of it (`domain.facts.spoken_of`): the 1.5B
  model put "Celine Dion" under allergic_to and "karaoke" under pet;
- a value names one thing: written under several fields (a small model put a flatmate's
  cat under partner, allergic_to, likes and owns) it is kept under the first of them in the
  form's order, or under the attribute it is already known by;
- a single-valued field (lives_in, works_at, works_as, studies, partner) with a new value
  closes the old one through the usual path (chalicelib.usecases.facts.apply);
- an item of `no_longer` ends a known current value only when it names that value and a
  user turn of the batch says it, and the form does not list the same value as current
  ("Dot is staying with me" is no ending of Dot).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from chalicelib.domain.containment import clean_line
from chalicelib.domain.facts import ATTRIBUTES, SINGLE, Statement, spoken_of, value_shaped
from chalicelib.domain.models import Message
from chalicelib.ports import LLMClient

SINGLE_FIELDS = tuple(a for a in ATTRIBUTES if a in SINGLE)
LIST_FIELDS = tuple(a for a in ATTRIBUTES if a not in SINGLE)
MAX_ITEMS = 3
MAX_ENDINGS = 4
MAX_VALUE_CHARS = 60
_EMPTY = {"", "null", "none", "n/a", "na", "unknown", "nothing", "无", "没有", "未知", "不详"}


def _text(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    return None if value is None else str(value)


def _items(value: Any, limit: int) -> list[str]:
    items = value if isinstance(value, list) else [value] if value else []
    return [str(v) for v in items if isinstance(v, str | int | float)][:limit]


class FormOut(BaseModel):
    """The form as the model fills it (lenient: a wrong shape costs the field, not the
    reply)."""

    model_config = ConfigDict(extra="ignore")

    lives_in: str | None = None
    works_at: str | None = None
    works_as: str | None = None
    studies: str | None = None
    partner: str | None = None
    pet: list[str] = Field(default_factory=list, max_length=MAX_ITEMS)
    child: list[str] = Field(default_factory=list, max_length=MAX_ITEMS)
    allergic_to: list[str] = Field(default_factory=list, max_length=MAX_ITEMS)
    likes: list[str] = Field(default_factory=list, max_length=MAX_ITEMS)
    dislikes: list[str] = Field(default_factory=list, max_length=MAX_ITEMS)
    owns: list[str] = Field(default_factory=list, max_length=MAX_ITEMS)
    learning: list[str] = Field(default_factory=list, max_length=MAX_ITEMS)
    no_longer: list[str] = Field(default_factory=list, max_length=MAX_ENDINGS)

    @field_validator(*SINGLE_FIELDS, mode="before")
    @classmethod
    def _single(cls, value: Any) -> str | None:
        return _text(value[0] if isinstance(value, list) and value else value or None)

    @field_validator(*LIST_FIELDS, mode="before")
    @classmethod
    def _list(cls, value: Any) -> list[str]:
        return _items(value, MAX_ITEMS)

    @field_validator("no_longer", mode="before")
    @classmethod
    def _endings(cls, value: Any) -> list[str]:
        return _items(value, MAX_ENDINGS)

    def values(self) -> list[tuple[str, str]]:
        """(attribute, value) of every filled field."""
        out = [(a, getattr(self, a)) for a in SINGLE_FIELDS if getattr(self, a)]
        return out + [(a, v) for a in LIST_FIELDS for v in getattr(self, a)]


SYSTEM_PROMPT = """\
You keep the profile of one person: the USER of a chat with an AI character. Fill in the \
form with what the USER says about themself in this chat. Answer with one JSON object only.

Fields: lives_in (the city or town they live in now), works_at (their employer now), \
works_as (their job now), studies, partner (their partner's name), pet (their pets' names), \
child (their children's names), allergic_to, likes, dislikes, owns, learning.
Rules:
1. Copy the words from the USER's messages. Never take the AI character's words, other \
people's facts, wishes, plans or questions.
2. null or [] when this chat does not say it. A known value that the chat does not change \
needs no repeating.
3. no_longer: the old values the USER says stopped being true in this chat (a job they \
quit, a city they left, a partner they broke up with, a pet that died), each exactly as it \
was written.

Example:
Known: lives_in: Leeds; works_at: the bakery
Chat:
Ann (USER): quit the bakery last week!! starting at Pagebound, the bookshop, on monday
Bot (AI character): Congrats! Still in Leeds?
Ann (USER): yep, me and my cat Biscuit aren't going anywhere
{"lives_in":"Leeds","works_at":"Pagebound","works_as":null,"studies":null,"partner":null,\
"pet":["Biscuit"],"child":[],"allergic_to":[],"likes":[],"dislikes":[],"owns":[],\
"learning":[],"no_longer":["the bakery"]}

例子：
Known: (nothing yet)
Chat:
小雨 (USER): 我在杭州一家游戏公司当策划，对芒果过敏
助手 (AI character): 哇，策划好酷！你喜欢这份工作吗？
小雨 (USER): 还行吧哈哈
{"lives_in":"杭州","works_at":"一家游戏公司","works_as":"策划","studies":null,\
"partner":null,"pet":[],"child":[],"allergic_to":["芒果"],"likes":[],"dislikes":[],\
"owns":[],"learning":[],"no_longer":[]}"""


def build_prompt(batch: Sequence[Message], known: dict[str, list[str]]) -> str:
    """The user prompt: what is known now, then the batch as `Name (USER|AI character):`."""
    shown = "; ".join(f"{a}: {', '.join(vs)}" for a, vs in known.items() if vs)
    lines = [f"{m.speaker or ('user' if m.role == 'user' else 'assistant')} "
             f"({'USER' if m.role == 'user' else 'AI character'}): "
             f"{' '.join(m.content.split())}" for m in batch]
    return f"Known: {shown or '(nothing yet)'}\nChat:\n" + "\n".join(lines)


def read_form(llm: LLMClient, batch: Sequence[Message], known: dict[str, list[str]],
              ended: dict[str, list[str]] | None = None, max_tokens: int = 400
              ) -> dict[int, list[Statement]]:
    """The batch's user turns' statements as the model's form gives them (raises LLMError
    when the model fails: the rules read the batch then). `ended`: the values known to have
    stopped holding (attribute → values)."""
    form = llm.complete_json(SYSTEM_PROMPT, build_prompt(batch, known), FormOut,
                             max_tokens=max_tokens)
    return statements(form, batch, known, ended)


def statements(form: FormOut, batch: Sequence[Message], known: dict[str, list[str]],
               ended: dict[str, list[str]] | None = None) -> dict[int, list[Statement]]:
    """The form's values that hold up, as statements of the user turns that say them; every
    user turn of the batch gets an entry (read, perhaps with nothing)."""
    users = [m for m in batch if m.role == "user"]
    out: dict[int, list[Statement]] = {m.seq: [] for m in users}
    names = {(m.speaker or "").casefold() for m in batch} - {""}
    held = {v.casefold(): a for a, values in known.items() for v in values}
    past = {(a, v.casefold()) for a, values in (ended or {}).items() for v in values}
    current: set[str] = set()
    for attribute, raw in form.values():
        value = _clean(raw)
        key = value.casefold()
        if not value or key in names or key in current \
                or held.get(key, attribute) != attribute:
            continue  # a value names one thing: its first field, or the one it is known by
        if not value_shaped(value) or not spoken_of(attribute, said_around(users, value)):
            continue  # no value of this field (数学 an allergy?): a later field may hold it
        current.add(key)
        if key in held or (attribute, key) in past:
            continue  # a repeat of what is known, or a past value named again: no news
        teller = _latest_saying(users, value)
        if teller is not None:
            out[teller.seq].append(Statement(attribute, value))
    for item in form.no_longer:
        for attribute, old in _named_known(item, known):
            teller = _latest_saying(users, old)
            if teller is not None and old.casefold() not in current:
                out[teller.seq].append(Statement(attribute, old, ends=True))
    return out


def _clean(raw: str) -> str:
    value = clean_line(raw).strip().strip(" .,;:!?。，；：！？\"'“”「」")
    if value.casefold() in _EMPTY or len(value) > MAX_VALUE_CHARS:
        return ""
    return value


def said_around(users: Sequence[Message], value: str) -> str:
    """Every user turn that says the value, each with the user's turns just before and after
    it: "only Pickle" … "haha she's a cat" tells a pet over two turns, and 闺女 … 小名叫朵朵
    is told in one turn, 朵朵 named again in a later one."""
    needle = value.casefold()
    return "\n".join(m.content for at, said in enumerate(users)
                     if needle in said.content.casefold()
                     for m in users[max(0, at - 1):at + 2])


def _latest_saying(users: Sequence[Message], value: str) -> Message | None:
    needle = value.casefold()
    for msg in reversed(users):
        if needle in msg.content.casefold():
            return msg
    return None


def _named_known(item: str, known: dict[str, list[str]]) -> list[tuple[str, str]]:
    """The known current values an ending names (the value inside the item's words)."""
    text = item.casefold()
    return [(a, v) for a, values in known.items() for v in values
            if v and v != "*" and v.casefold() in text]


def known_now(facts: Sequence[Any], person: str) -> dict[str, list[str]]:
    """The person's current facts as the form shows them (attribute → values)."""
    out: dict[str, list[str]] = {}
    for fact in facts:
        if fact.person == person and fact.valid_to is None and fact.value != "*":
            out.setdefault(fact.attribute, []).append(fact.value)
    return out


def known_ended(facts: Sequence[Any], person: str) -> dict[str, list[str]]:
    """The person's values that stopped holding and hold no more (attribute → values)."""
    now = {(a, v.casefold()) for a, vs in known_now(facts, person).items() for v in vs}
    out: dict[str, list[str]] = {}
    for fact in facts:
        if fact.person == person and fact.valid_to is not None and fact.value != "*" \
                and (fact.attribute, fact.value.casefold()) not in now:
            out.setdefault(fact.attribute, []).append(fact.value)
    return out


def advance(known: dict[str, list[str]], told: dict[int, list[Statement]]
            ) -> dict[str, list[str]]:
    """What is known after `told`: a new single value replaces the old, an ending removes
    its value, another value joins its list."""
    out = {a: list(vs) for a, vs in known.items()}
    for said in told.values():
        for st in said:
            values = out.setdefault(st.attribute, [])
            if st.ends:
                out[st.attribute] = [v for v in values if v.casefold() != st.value.casefold()]
            elif st.attribute in SINGLE:
                out[st.attribute] = [st.value]
            elif st.value.casefold() not in {v.casefold() for v in values}:
                values.append(st.value)
    return out


def ended_after(ended: dict[str, list[str]], told: dict[int, list[Statement]]
                ) -> dict[str, list[str]]:
    """The values known to have ended after `told`: its endings join them."""
    out = {a: list(vs) for a, vs in ended.items()}
    for said in told.values():
        for st in said:
            if st.ends and st.value != "*":
                out.setdefault(st.attribute, []).append(st.value)
    return out
