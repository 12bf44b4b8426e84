"""Facts with the time they held, a profile per person, and the small core layer the doors add
to a turn (issue 24).

Learning (`learn`, after each extraction batch): every user turn of the batch is read by the
rules of chalicelib.domain.facts; each statement about the speaker becomes a `Fact` record or
adds its message to the one it repeats. A new value of a single-valued attribute (lives_in,
works_at, works_as, studies, partner) closes the open one (`valid_to` = the new statement's
time, `closed_by` = its message); an ending ("I quit Acme", 我家猫咪走了) closes the value it
names, or all of the attribute's ("*"). A dislike closes the same like, and the other way
round. Nothing is deleted. Only the user's turns are read: a companion's "I love jazz" is the
character talking, and its suggestions ("you could move to Paris") are no facts of anyone's.

The core layer (`core_for`): the current facts of the people in a chat — the window's user
and anyone the turn names — as one short block, within ANNALS_CORE_TOKENS (120), contained like
every rendering of stored text. A window gets it when it has not had it for
`CORE_EVERY_RECALLS` recalls, or when a fact in it changed; never to fill space.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from chalicelib.domain.containment import clean_line
from chalicelib.domain.errors import BadRequest, Conflict, NotFound
from chalicelib.domain.fact_context import Turn, read_turns
from chalicelib.domain.fact_plans import arrived, places_planned
from chalicelib.domain.fact_roles import ended_job, outlived
from chalicelib.domain.facts import (
    ATTRIBUTES,
    HERE,
    LABELS,
    NAMING,
    SINGLE,
    Statement,
    said_as_plan,
    same_value,
)
from chalicelib.domain.models import Message, RecallRequest
from chalicelib.domain.names import is_placeholder
from chalicelib.domain.records import CoreDelivery, Entity, Fact, Person, Plan
from chalicelib.domain.refs import message_ref
from chalicelib.domain.textproc import is_cjk
from chalicelib.ports import Services
from chalicelib.usecases.events import hidden_turns
from chalicelib.usecases.people import called, named_users

_SAME_TALK = timedelta(hours=6)  # an unnamed ending does not end what was just told
PLAN_RIPENS = timedelta(hours=12)  # a move comes true in a later talk than the one planning it
CORE_EVERY_RECALLS = 20  # a window is sent its core block again after this many recalls
_CONTRARY = {"likes": "dislikes", "dislikes": "likes"}


# ------------------------------------------------------------------ learning


def person_of(msg: Message) -> str | None:
    """Whom a turn's "I" is: its speaker, or "user" for an unnamed user."""
    if msg.role != "user":
        return None
    return msg.speaker if msg.speaker and not is_placeholder(msg.speaker) else "user"


def learn(services: Services, space: str, messages: Sequence[Message],
          now: datetime | None = None, told: dict[int, list[Statement]] | None = None
          ) -> list[Fact]:
    """Read the user turns of `messages` (in time order) into the space's facts; the facts
    written. `told`: what the batch's reader (a model, a host) read per seq, with the rules'
    floor beneath it (`under_model`); the turns it did not read go through the offline rules.
    Idempotent: a turn read again adds nothing."""
    told = told or {}
    now = now or services.clock()
    facts = {f.key: f for f in services.store.list_records(Fact, space)}
    plans = {p.key: p for p in services.store.list_records(Plan, space)}
    was_planned = dict(plans)
    changed: dict[str, Fact] = {}
    ordered = sorted(messages, key=lambda m: (m.at, m.session, m.seq))
    speakers = [m.speaker for m in ordered if m.speaker]
    texts = [services.clean(m.content) for m in ordered]
    # what the space holds, and what the batch's reader told of it: "I sold Rusty. My
    # hoverbike." ends the Rusty a model read in that very turn
    known = [(f.attribute, f.value) for f in facts.values() if f.valid_to is None] + [
        (s.attribute, s.value) for said in told.values() for s in said if not s.ends]
    read = read_turns([Turn(m.role, text) for m, text in zip(ordered, texts, strict=True)],
                      speakers, list(dict.fromkeys(known)))
    for msg, text, by_rules in zip(ordered, texts, read, strict=True):
        person = person_of(msg)
        if person is None:
            continue
        ref = message_ref(msg.session, msg.seq)
        by_rules = [*by_rules, *_moved_as_planned(plans, person, msg.at, text),
                    *_at_home(facts.values(), person, text)]
        said = under_model(as_held(told[msg.seq], text), by_rules) if msg.seq in told \
            else by_rules
        for statement in said:
            for fact in apply(facts, space, person, statement, msg.at, ref, now):
                facts[fact.key] = changed[fact.key] = fact
        _note_plans(plans, space, person, msg.at, ref, text, said, facts.values())
    for fact in changed.values():
        services.store.put_record(fact)
    _save_plans(services, space, was_planned, plans)
    link_changes(services, space, [f for f in changed.values()
                                   if f.closed_by and f.attribute in SINGLE
                                   and f.closed_by not in f.sources])
    return list(changed.values())


def _moved_as_planned(plans: dict[str, Plan], person: str, at: datetime, text: str
                      ) -> list[Statement]:
    """The home a user turn shows they moved to as they said they would: a plan told in an
    earlier talk, its place named now as where they are (domain.fact_plans)."""
    return [Statement("lives_in", p.place) for p in plans.values()
            if p.person == person and at - p.said_at >= PLAN_RIPENS and arrived(text, p.place)
            ][:1]


def _at_home(facts: Iterable[Fact], person: str, text: str) -> list[Statement]:
    """The current home told again from there by the user ("我们已经在苏州安顿下来啦", "我在深圳
    一周了", after "找好了，在苏州园区" or "base 深圳" told it ahead of the move): in passing, so it
    only adds the turn to the fact's sources — the latest of which recall shows first for
    "where do I live now?" (recall.told_first) — and changes nothing else."""
    return [Statement("lives_in", f.value, weak=True) for f in facts
            if f.person == person and f.attribute == "lives_in" and f.valid_to is None
            and f.value != HERE and arrived(text, f.value, said_by_me=True)][:1]


def _note_plans(plans: dict[str, Plan], space: str, person: str, at: datetime, ref: str,
                text: str, said: Sequence[Statement], facts: Iterable[Fact]) -> None:
    """Keep what a turn plans, and settle what a home told plainly settles: the plans told
    before it (a move that came true, or went elsewhere)."""
    if any(s.attribute == "lives_in" and not s.ends and not s.weak for s in said):
        for key in [k for k, p in plans.items() if p.person == person and p.said_at < at]:
            del plans[key]
    planned = places_planned(text)
    if not planned:
        return  # most turns: no need to look up the person's home
    homes = [f.value for f in facts if f.person == person and f.attribute == "lives_in"
             and f.valid_to is None]
    for place in planned:
        if not any(same_value(place, home) for home in homes):
            key = f"{person}|{place.casefold()}"
            plans[key] = Plan(scope=space, key=key, person=person, place=place, said_at=at,
                              source=ref)


def _save_plans(services: Services, space: str, before: dict[str, Plan],
                after: dict[str, Plan]) -> None:
    gone = [k for k in before if k not in after]
    if gone:
        services.store.delete_records(Plan, space, gone)
    for key, plan in after.items():
        if before.get(key) != plan:
            services.store.put_record(plan)


def as_held(model: Sequence[Statement], text: str) -> list[Statement]:
    """A reader's statements of a turn less the values the turn tells only as a plan, a wish
    or a question (domain.facts.said_as_plan: the rules' hedges, a precise floor under a
    small model that reads "我想给他做个蛋糕" as liking cake). Endings stand."""
    return [s for s in model if s.ends or not said_as_plan(text, s.value)]


def under_model(model: Sequence[Statement], rules: Sequence[Statement]) -> list[Statement]:
    """A turn a model read: its statements, and beneath them the rules' floor — what the rules
    read of an attribute the model said nothing of in this turn (a small model misses half of
    what is plainly said: issue 37's held-out stories). Where both speak of a single-valued
    attribute (lives_in, works_at …), the model's reading stands, with one exception: the
    rules' ending of a named value stands (a model silent on an ending has not contradicted
    it, and a small one rarely reports endings: 小黑飞走了, 我和阿杰分手了) — even of the value
    the model read from this very turn: "I sold Rusty" read as owns=Rusty is Rusty ended. Of
    a list (pet, likes, learning …) the rules' value stands beside the model's: "I'm doing
    Italian lessons … so I understand Sal" read as `learning=Sal` by the model is no reading
    *against* the rules' `learning=Italian`.

    Where the two read a pet of the turn differently, the rules' reading of what the word *is*
    stands (`agreed`): a model's pet that the rules read as that pet's kind (奶盖 the 橘猫: the
    model says 橘猫) is the rules' named pet (issue 37, held-out 1)."""
    model = agreed(model, rules)
    spoken = {s.attribute for s in model}
    valued = {s.attribute for s in model if not s.ends and s.attribute not in SINGLE}
    held = {(s.attribute, s.value.casefold()) for s in model if not s.ends}

    def beneath(s: Statement) -> bool:
        if s.attribute not in spoken:
            return True
        if (s.attribute, s.value.casefold()) in held and not s.ends:
            return False  # the model's own
        # an ending the model did not contradict; or one more value of a list the model
        # gave values of (pets, likes, what is learnt): another value there contradicts none
        return s.value != "*" if s.ends else s.attribute in valued

    return [*model, *(s for s in rules if beneath(s))]


def agreed(model: Sequence[Statement], rules: Sequence[Statement]) -> list[Statement]:
    """The model's statements of a turn, squared with what the rules read of the same turn:
    a value the rules read as the kind of their value of that attribute becomes the rules'
    statement. (Dropping a model's value the rules read under another attribute was tried:
    right locally — 沈砚's 苦瓜 a dislike, not an allergy — but the changed profile changed the
    model's later forms, and held-out 5 zh lost a value and kept a stale one: bench/README.)"""
    kinds = {(s.attribute, s.kind.casefold()): s for s in rules if s.kind and not s.ends}
    out = [kinds.get((s.attribute, s.value.casefold()), s) if not s.ends else s for s in model]
    return list(dict.fromkeys(out))


def link_changes(services: Services, space: str, closed: Sequence[Fact]) -> None:
    """A value replaced by a new one (Munich → Berlin) is an `updates` relation between the
    events that tell them, with the two values as its evidence: recall then shows the new
    event and the old one only for a question about the past (usecases.recall.updates).
    An ending with no new value ("my cat died") links nothing: the old event is still what
    happened."""
    if not closed:
        return
    from chalicelib.ports import iter_events
    from chalicelib.usecases.graph.relations import relation, save_relations

    citing: dict[str, str] = {}
    for event in iter_events(services.store, space):
        if event.kind == "summary":
            continue
        for source in event.sources:
            for seq in range(source.seq_start, source.seq_end + 1):
                citing.setdefault(message_ref(source.session, seq), event.id)
    facts = services.store.list_records(Fact, space)
    links = []
    for old in closed:
        new = next((f for f in facts if f.person == old.person and f.attribute == old.attribute
                    and old.closed_by in f.sources), None)
        src, dst = citing.get(old.closed_by or ""), citing.get(old.sources[0])
        if new is None or not src or not dst or src == dst:
            continue
        note = f"{old.attribute}: {old.value} → {new.value}"
        links.append(relation(space, src, "updates", dst, note, services.clock()))
    save_relations(services, space, links)


def apply(facts: dict[str, Fact], space: str, person: str, statement: Statement, at: datetime,
          ref: str, now: datetime) -> list[Fact]:
    """The facts one statement creates or changes (pure over `facts`)."""
    mine = [f for f in facts.values() if f.person == person]
    statement = _placed(mine, statement)
    if _read_before(mine, statement, ref):
        return []
    if statement.attribute == NAMING:
        return _name(mine, statement, at, ref)
    if statement.ends:
        return _end(mine, space, person, statement, at, ref, now)
    out: list[Fact] = []
    same = [f for f in mine if f.attribute == statement.attribute and f.valid_to is None
            and (same_value(f.value, statement.value)
                 or (statement.attribute == "works_as" and _head(f.value) == _head(statement.value)))]
    if statement.weak and not same and statement.attribute in SINGLE and any(
            f.attribute == statement.attribute and f.valid_to is None for f in mine):
        return []  # told in passing: no match for the value told plainly
    just_ended = [f for f in mine if f.attribute in ("pet", "partner", "child")
                  and f.attribute == statement.attribute and f.valid_to is not None
                  and timedelta(0) <= at - f.valid_to <= _SAME_TALK
                  and same_value(f.value, statement.value)]
    if just_ended and not same:  # "豆豆走了" … "我的仓鼠": who it was, not a new one
        fact = just_ended[0]
        return [fact.model_copy(update={"sources": [*fact.sources, ref],
                                        "kind": fact.kind or statement.kind,
                                        "version": fact.version + 1})]
    if same:
        fact = same[0]
        out.append(fact.model_copy(update={"sources": [*fact.sources, ref],
                                           "in_passing": fact.in_passing and statement.weak,
                                           "version": fact.version + 1}))
    else:
        out.append(Fact(scope=space, key=fact_key(person, statement.attribute, statement.value,
                                                   at),
                        person=person, attribute=statement.attribute, value=statement.value,
                        kind=statement.kind, in_passing=statement.weak, valid_from=at,
                        learned_at=now, sources=[ref]))
    closes = [f for f in mine if f.valid_to is None and f.key != out[0].key and (
        (statement.attribute in SINGLE and f.attribute == statement.attribute)
        or (f.attribute == _CONTRARY.get(statement.attribute)
            and same_value(f.value, statement.value)))
        and (f.valid_from is None or f.valid_from <= at)]
    if statement.weak:
        closes = []  # told in passing: it changes nothing told before
    out += [_closed(f, at, ref) for f in closes]
    return out


# what a pet or child is called before its name is told ("I adopted a cat!", 是个女儿)
_NAMELESS = frozenset({"baby", "girl", "boy", "son", "daughter", "kid", "child", "女儿", "儿子",
                       "闺女", "宝宝", "男孩", "女孩", "小公主", "小王子", "孩子"})


def _name(mine: list[Fact], statement: Statement, at: datetime, ref: str) -> list[Fact]:
    """"Her name is Luna": the pet or child just told of without a name (the latest, told
    the same day) takes it; nothing else does."""
    nameless = [f for f in mine if f.attribute in ("pet", "child") and f.valid_to is None
                and (f.value.casefold() == f.kind.casefold() or f.value.casefold() in _NAMELESS)
                and f.valid_from is not None and timedelta(0) <= at - f.valid_from <= _SAME_TALK]
    if not nameless:
        return []
    fact = max(nameless, key=lambda f: f.valid_from or at)
    return [fact.model_copy(update={"value": statement.value, "kind": fact.kind or fact.value,
                                    "sources": [*fact.sources, ref],
                                    "version": fact.version + 1})]


def _placed(mine: list[Fact], statement: Statement) -> Statement:
    """A workplace named by the head word of the job the person holds ("head chef" while a
    sous chef) is a job, not an employer: a model filling a form put "I am now a head chef"
    under works_at (issue 37, held-out 5), and the profile showed an employer called "head
    chef". Read as works_as, it goes the way of any job told again (`_head`)."""
    if statement.attribute != "works_at" or statement.ends or statement.value == "*":
        return statement
    head = _head(statement.value).casefold()
    if any(f.attribute == "works_as" and f.valid_to is None
           and _head(f.value).casefold() == head for f in mine):
        return replace(statement, attribute="works_as")
    return statement


def _head(job: str) -> str:
    """A job's head word ("freelance photographer" → photographer, 测试工程师 → 工程师): the
    same job told with another qualifier is not a change of job."""
    if is_cjk(job):
        return job[-3:] if len(job) > 3 else job
    return job.casefold().split()[-1] if job.split() else job


def _read_before(mine: list[Fact], statement: Statement, ref: str) -> bool:
    """This statement of this turn is in the facts already (a batch read again)."""
    if statement.attribute == NAMING:
        return any(ref in f.sources and f.value == statement.value for f in mine)
    same = [f for f in mine if f.attribute == statement.attribute]
    if statement.ends:
        return any(f.closed_by == ref and (statement.value == "*"
                                           or same_value(f.value, statement.value)
                                           or same_value(f.kind or "\0", statement.value))
                   for f in same)
    return any(ref in f.sources and same_value(f.value, statement.value) for f in same)


def _end(mine: list[Fact], space: str, person: str, statement: Statement, at: datetime,
         ref: str, now: datetime) -> list[Fact]:
    open_ = [f for f in mine if f.attribute == statement.attribute and f.valid_to is None
             and (f.valid_from is None or f.valid_from <= at)]
    if statement.weak:  # a past told in passing ("I grew up in Leicester") closes nothing
        if any(same_value(f.value, statement.value) for f in open_):
            return []
        open_ = []
    if statement.value == "*":  # "I handed in my notice": the job held before this talk
        open_ = [f for f in open_ if f.valid_from is None or at - f.valid_from > _SAME_TALK]
    else:
        open_ = [f for f in open_ if same_value(f.value, statement.value)
                 or (f.kind and (same_value(f.kind, statement.value)
                                 or same_value(f.kind, statement.kind or "\0")))]
    if open_:
        return [_closed(f, at, ref) for f in open_]
    if (statement.value == "*" or any(f.closed_by == ref for f in mine)
            or statement.attribute in ("partner", "child")
            or (statement.attribute == "pet" and not statement.kind)):
        return []  # a name that "died" or "left" is nobody's pet we knew of: nothing to keep
    # an ending of something never told ("I used to love coffee"): kept, closed
    return [Fact(scope=space, key=fact_key(person, statement.attribute, statement.value, None),
                 person=person, attribute=statement.attribute, value=statement.value,
                 kind=statement.kind, valid_from=None, valid_to=at, learned_at=now,
                 sources=[ref], closed_by=ref)]


def _closed(fact: Fact, at: datetime, ref: str) -> Fact:
    return fact.model_copy(update={"valid_to": at, "closed_by": ref,
                                   "version": fact.version + 1})


def fact_key(person: str, attribute: str, value: str, since: datetime | None) -> str:
    stamp = since.strftime("%Y%m%dT%H%M%S") if since else "before"
    digest = hashlib.blake2b(value.casefold().encode(), digest_size=6).hexdigest()
    return f"{person[:100]}|{attribute}|{digest}|{stamp}"


# ------------------------------------------------------------------ profiles


def fact_id(fact: Fact) -> str:
    """A fact's id in the API: its record key, hashed into a path-safe token."""
    return "fa_" + hashlib.blake2b(fact.key.encode(), digest_size=8).hexdigest()


class FactView(BaseModel):
    id: str = Field(description="fa_…: for PATCH …/facts/{fact_id}")
    version: int = Field(description="send it with an edit; 409 if it changed since")
    attribute: str = Field(description=f"one of {', '.join(ATTRIBUTES)}")
    value: str
    kind: str = Field(default="", description="a pet's kind beside its name")
    valid_from: datetime | None = Field(description="when it was first told (null: before "
                                                    "anything said)")
    valid_to: datetime | None = Field(description="when a later statement changed or ended "
                                                  "it; null while current")
    current: bool = Field(description="it holds as far as the memory knows (status current)")
    status: Literal["current", "unconfirmed", "ended"] = Field(
        default="current", description="ended: a later statement changed or ended it; "
        "unconfirmed: a role told at a job that has ended since, with no job known now — it "
        "may have ended with the job (PATCH current=true confirms it)")
    unconfirmed_by: str | None = Field(default=None, description="unconfirmed: the message "
                                       "that ended the job it was told at")
    sources: list[str] = Field(description="the messages that state it")
    in_passing: bool = Field(default=False, description="told only in passing so far (\"Bristol "
                             "traffic is murder\"): the core layer waits for a second mention")
    closed_by: str | None = Field(default=None, description="the message that ended it")


class Profile(BaseModel):
    name: str
    aliases: list[str] = Field(default_factory=list, description="other names the memory "
                                                               "graph knows them by")
    facts: list[FactView] = Field(description="current facts first (in attribute order), "
                                              "then the unconfirmed ones, then the closed "
                                              "ones, latest first")


class ProfileList(BaseModel):
    profiles: list[Profile]


def profiles(services: Services, space: str) -> ProfileList:
    facts = named_facts(services, space)
    persons = [p for p in services.store.list_records(Person, space)
               if not is_placeholder(p.key)]
    names = list(dict.fromkeys([*(p.key for p in persons), *(f.person for f in facts)]))
    aliases = {e.name: e.aliases for e in services.store.list_records(Entity, space)
               if e.kind == "person"}
    for person in persons:  # the role a user spoke as before telling the name
        if person.aliases:
            aliases[person.key] = list(dict.fromkeys([*aliases.get(person.key, []),
                                                      *person.aliases]))
    return ProfileList(profiles=[_profile(name, [f for f in facts if f.person == name],
                                          aliases.get(name, []))
                                 for name in names])


def named_facts(services: Services, space: str) -> list[Fact]:
    """The space's facts, those of a user who spoke as a placeholder under the name they
    told later ("user" → 阿梅: people.named_users)."""
    names = named_users(services, space)
    facts = services.store.list_records(Fact, space)
    if not names:
        return facts
    return [f.model_copy(update={"person": called(names, f.person)})
            if is_placeholder(f.person) else f for f in facts]


def profile(services: Services, space: str, name: str) -> Profile:
    wanted = name.casefold()
    for found in profiles(services, space).profiles:
        if found.name.casefold() == wanted:
            return found
    raise NotFound(f"no profile {name!r} in space {space!r}")


def _profile(name: str, facts: list[Fact], aliases: list[str] | None = None) -> Profile:
    """`facts`: all of the person's (a role is read against their workplaces: fact_roles)."""
    order = {a: i for i, a in enumerate(ATTRIBUTES)}
    ended = {f.key: job for f in facts if (job := ended_job(f, facts)) is not None}
    open_ = sorted((f for f in facts if f.valid_to is None),
                   key=lambda f: (f.key in ended, order.get(f.attribute, 99),
                                  f.valid_from or f.learned_at))
    closed = sorted((f for f in facts if f.valid_to is not None),
                    key=lambda f: f.valid_to, reverse=True)
    return Profile(name=name, aliases=list(aliases or []),
                   facts=[fact_view(f, ended.get(f.key)) for f in [*open_, *closed]])


def fact_view(fact: Fact, ended: Fact | None = None) -> FactView:
    """A fact as the API shows it; `ended`: the job a role outlived (fact_roles.ended_job)."""
    status = "ended" if fact.valid_to is not None else "unconfirmed" if ended else "current"
    return FactView(
        id=fact_id(fact), version=fact.version, attribute=fact.attribute, value=fact.value,
        kind=fact.kind, valid_from=fact.valid_from, valid_to=fact.valid_to,
        current=status == "current", status=status,
        unconfirmed_by=ended.closed_by if ended else None, sources=fact.sources,
        in_passing=fact.in_passing, closed_by=fact.closed_by)


# ------------------------------------------------------------------ the core layer


def core_block(services: Services, space: str, people: Iterable[str], budget_tokens: int,
               zh: bool = False) -> str:
    """The current facts of `people`, one line each, most telling attributes first, cut to
    `budget_tokens` (whole facts only); a fact told once in passing waits for a second
    mention, and one told only in turns an archived event cites is not said (read here, not
    closed: restoring the event brings it back). Empty: nothing to say."""
    from chalicelib.usecases.recall.context import estimate_tokens

    wanted = {p.casefold() for p in people}
    hidden = hidden_turns(services.store, space)
    known = named_facts(services, space)
    facts = [f for f in known if f.valid_to is None and f.person.casefold() in wanted
             and _sayable(f, hidden) and not outlived(f, known)]
    if not facts or budget_tokens <= 0:
        return ""
    labels = LABELS["zh" if zh else "en"]
    order = {a: i for i, a in enumerate(ATTRIBUTES)}
    head = "关于对方（当前）：" if zh else "About them (now):"
    lines = [head]
    for person in dict.fromkeys(f.person for f in facts):
        parts = []
        for fact in sorted((f for f in facts if f.person == person),
                           key=lambda f: (order.get(f.attribute, 99), f.valid_from or f.learned_at)):
            value = clean_line(fact.value) + (f" ({clean_line(fact.kind)})" if fact.kind else "")
            candidate = [*parts, f"{labels[fact.attribute]} {value}"]
            text = "\n".join([*lines, f"- {clean_line(person)}: " + "; ".join(candidate)])
            if estimate_tokens(text) > budget_tokens:
                break
            parts = candidate
        if parts:
            lines.append(f"- {clean_line(person)}: " + "; ".join(parts))
    return "\n".join(lines) if len(lines) > 1 else ""


def _sayable(fact: Fact, hidden: frozenset[str]) -> bool:
    """Told plainly, or twice in passing, counting only the turns not hidden by an archive."""
    told = [ref for ref in fact.sources if ref not in hidden]
    if fact.sources and not told:
        return False
    return not fact.in_passing or len(told) > 1


def core_for(services: Services, space: str, window: str | None, people: Iterable[str],
             query: str, *, may_write: bool = True) -> str | None:
    """The core block for this turn of `window`, or None: nothing to say, or the window had
    this very block within CORE_EVERY_RECALLS recalls. Sending is recorded (a read key's
    recall records nothing: it sees the block as a write key's would)."""
    budget = services.settings.core_tokens
    block = core_block(services, space, people, budget, zh=is_cjk(query))
    if not block:
        return None
    if not window:
        return block
    fingerprint = hashlib.blake2b(block.encode(), digest_size=8).hexdigest()
    count = services.store.recall_count(space, window)
    last = services.store.get_record(CoreDelivery, space, window)
    if (last is not None and last.fingerprint == fingerprint
            and count - last.recall_count < CORE_EVERY_RECALLS):
        return None
    if may_write:
        services.store.put_record(CoreDelivery(scope=space, key=window,
                                               fingerprint=fingerprint, recall_count=count,
                                               at=services.clock()))
    return block


def chat_people(services: Services, space: str, texts: Iterable[str]) -> list[str]:
    """Who a turn is about: the space's user, and every known person the texts name."""
    people = [p for p in services.store.list_records(Person, space) if not is_placeholder(p.key)]
    joined = "\n".join(texts).casefold()
    named = [p.key for p in people if p.key.casefold() in joined]
    users = [p.key for p in people if p.user]
    return list(dict.fromkeys([*users, *named, "user"]))


def hook_core(services: Services, space: str, request: RecallRequest, *,
              may_write: bool = True) -> str | None:
    """POST …/hook/recall's core_context: `core_for` the request's query, recent turns and
    window."""
    texts = [request.query, *(t.content for t in request.recent)]
    return core_for(services, space, request.window, chat_people(services, space, texts),
                    request.query, may_write=may_write)


# ------------------------------------------------------------------ hand edits


class PatchFactRequest(BaseModel):
    """PATCH …/facts/{fact_id}: correct a value, or say it no longer holds (or holds again)."""

    model_config = ConfigDict(extra="forbid")

    version: int = Field(ge=1, description="the version you read; 409 if it changed since")
    value: str | None = Field(default=None, min_length=1, max_length=100)
    current: bool | None = Field(default=None, description="false: it ended now (valid_to = "
                                 "now); true: it holds again (valid_to cleared)")


def patch_fact(services: Services, space: str, fid: str, request: PatchFactRequest) -> FactView:
    """A hand edit, versioned like an event's: the version before is kept in `history`."""
    fact = next((f for f in services.store.list_records(Fact, space) if fact_id(f) == fid),
                None)
    if fact is None:
        raise NotFound(f"no fact {fid!r} in space {space!r}")
    if fact.version != request.version:
        raise Conflict(f"fact {fid} is at version {fact.version}, not {request.version}",
                       details={"current_version": fact.version})
    value = clean_line(request.value) if request.value is not None else fact.value
    if not value:
        raise BadRequest("value: a fact needs a value", code="validation_error")
    valid_to = fact.valid_to
    if request.current is not None:
        valid_to = None if request.current else (fact.valid_to or services.clock())
    # "it holds" of a role the profile shows unconfirmed (fact_roles) is a change: the edit
    # is the user's word that it went on
    confirms = request.current is True and outlived(fact, services.store.list_records(Fact, space))
    if value == fact.value and valid_to == fact.valid_to and not confirms:
        raise BadRequest("nothing to change: give value or current", code="empty_patch")
    now = services.clock()
    before = {"version": fact.version, "value": fact.value,
              "valid_to": fact.valid_to.isoformat() if fact.valid_to else None,
              "edited_at": now.isoformat()}
    edited = fact.model_copy(update={
        "value": value, "valid_to": valid_to, "version": fact.version + 1,
        "closed_by": fact.closed_by if valid_to is not None else None,
        "history": [*fact.history, before]})
    services.store.put_record(edited)
    return fact_view(edited)
