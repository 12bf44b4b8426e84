"""`annals bench companion`: the companion chats (bench/data/companion/, issue 36) run as a
user runs them, scored against their answer key (key.json; the README there says how it was
written and what each field means).

Per chat file:
- a fresh space named after the character (`space_id`), the file imported as `annals import
  FILE --space S --tz <key tz>` imports it locally (`importing.read_file(path, "auto", None,
  …)`: the session id is whatever rule importing.py holds for a file name), then
  `run_extraction`, then `facts.profiles`;
- every question of the key: a 20-card recall as bench/zh.py asks it (its `now`, else the
  key's `last_message` + 1 hour), the two plain baselines of bench/locomo.py (BM25 and dense
  over the raw turns), and the hook (`recall_hook_sized` + `facts.hook_core`, what POST
  …/hook/recall runs) with the default card limit, called twice in a window of its own;
- scores: found@10 (one of the first 10 cards cites an evidence turn), R@5 / R@10 over
  distinct turns (bench/metrics.py), hook hit@2 (one of the hook's first 2 cards cites
  evidence); for a never-said question, abstained = the hook gave no card;
- facts: the user's current facts in the profile, each `right` (matches a key `current`
  item), `stale` (matches a `closed` item and no current one) or `other`; precision = right /
  shown, completeness = current items matched / current items; stale in core = the facts
  of the hook's core block that are stale by the same rule;
- chronicle: active events of kind "event" per message, those citing only `no_event_turns`,
  and those citing only the character's turns.

A turn is "D<session>:<seq>" (bench/metrics.turn_id): the key's indices are the seqs the
import gives, in the file's one session. The pure parts (loading the key, scoring, fact
matching, the no-event rule, the tables) need no model: tests/unit/test_bench_companion.py.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
import traceback
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from . import metrics as M
from .facts import model_reader, reading_line
from .runs import footer, read_built, run_dir, write_built, write_outputs

DATA = Path(__file__).resolve().parent / "data" / "companion"
KEY = DATA / "key.json"
KINDS = ("current", "past", "plain", "time", "crosslingual", "never_said")
SYSTEMS = ("annals", "bm25", "dense")
CARDS = 20
FOUND_AT = 10
HOOK_HIT_AT = 2
HOOK_CALLS = 2
# A question without its own `now` is asked an hour after the chat's last message.
AFTER_LAST = timedelta(hours=1)


# ------------------------------------------------------------------ loading


@dataclass
class Question:
    id: str
    kind: str
    lang: str
    text: str
    now: datetime
    evidence: list[int]  # message seqs (user turns) that tell the answer
    superseded: list[int] = field(default_factory=list)
    abstain: bool = False
    answer: str = ""
    results: dict[str, Any] = field(default_factory=dict)

    @property
    def answerable(self) -> bool:
        return not self.abstain


def load_key(path: Path | str = KEY) -> dict[str, dict]:
    """key.json: {file name: entry}."""
    return json.loads(Path(path).read_text(encoding="utf-8"))


def chat_files(paths: Sequence[Path | str], key: dict[str, dict], only: str | None = None,
               default_dir: Path = DATA) -> list[Path]:
    """The chat files to run: the PATHs given, else every key entry's file in `default_dir`;
    with `only`, those whose file name holds it (case-insensitive)."""
    files = [Path(p) for p in paths] or [default_dir / name for name in key]
    if only:
        files = [f for f in files if only.casefold() in f.name.casefold()]
    return files


def entry_for(key: dict[str, dict], path: Path) -> dict:
    """A chat file's key entry, by file name."""
    if path.name not in key:
        raise KeyError(f"{path.name}: no entry in the key")
    return key[path.name]


def default_now(entry: dict) -> datetime:
    return datetime.fromisoformat(entry["last_message"]) + AFTER_LAST


def questions(entry: dict) -> list[Question]:
    """The entry's questions, each with the time it is asked at."""
    fallback = default_now(entry)
    return [Question(id=q["id"], kind=q["kind"], lang=q["lang"], text=q["q"],
                     now=datetime.fromisoformat(q["now"]) if q.get("now") else fallback,
                     evidence=[int(i) for i in q["evidence"]],
                     superseded=[int(i) for i in q.get("superseded", [])],
                     abstain=bool(q["abstain"]), answer=q.get("answer", ""))
            for q in entry["questions"]]


_NOT_ID = re.compile(r"[^A-Za-z0-9_.:@\u0080-\U0010ffff-]+")


def space_id(name: str) -> str:
    """A character's name as a space id (chalicelib.domain.models.ID_PATTERN: ASCII letters,
    digits and _ . : @ -): other ASCII characters become '-'; a name in another script
    (阿澈) is written as IDNA punycode ("xn--ehxv93f"), so it stays unique and can be read
    back. "chat" when nothing is left."""
    from chalicelib.domain.models import ID_PATTERN

    plain = _NOT_ID.sub("-", name).strip("-.")
    if not plain.isascii():
        plain = "xn--" + plain.encode("punycode").decode("ascii")
    plain = plain[:128]
    return plain if re.fullmatch(ID_PATTERN, plain) and plain.strip(".") else "chat"


# ------------------------------------------------------------------ scoring questions


def turn_ids(session: str, seqs: Iterable[int]) -> list[str]:
    return [M.turn_id(session, s) for s in seqs]


def card_record(card: Any, tz: str) -> dict:
    """A recall Card → bench/zh.py's metrics record, with its ref, kind and score."""
    from .zh import card_record as dated

    return {"ref": card.ref, "kind": card.kind, **dated(card, tz),
            "score": round(float(card.score), 4)}


def cites(evidence: Sequence[str], card: dict) -> bool:
    return bool(set(evidence) & set(card.get("sources", [])))


def found_at(evidence: Sequence[str], cards: Sequence[dict], k: int = FOUND_AT) -> bool:
    """One of the first k cards cites an evidence turn (a card's range holds one, or the
    card is that message)."""
    return any(cites(evidence, c) for c in cards[:k])


def score_cards(evidence: Sequence[str], cards: Sequence[dict]) -> dict[str, Any]:
    """found@10, R@5 and R@10 (over the first k distinct turns) for an answerable question;
    whether no card came back for any question."""
    out: dict[str, Any] = {"cards": len(cards), "zero_cards": not cards}
    if evidence:
        out["found@10"] = found_at(evidence, cards)
        out["R@5"] = M.recall_at_k(evidence, cards, 5)
        out["R@10"] = M.recall_at_k(evidence, cards, 10)
    return out


def score_hook(evidence: Sequence[str], superseded: Sequence[str],
               cards: Sequence[dict]) -> dict[str, Any]:
    """hit@2 (an answerable question) and stale@2 (the cards cite a superseded turn and no
    evidence); abstained = no card at all (what a never-said question should get)."""
    out: dict[str, Any] = {"abstained": not cards}
    if evidence:
        out["hit@2"] = found_at(evidence, cards, HOOK_HIT_AT)
    if superseded:
        shown = cards[:HOOK_HIT_AT]
        out["stale@2"] = (any(cites(superseded, c) for c in shown)
                          and not any(cites(evidence, c) for c in shown))
    return out


# ------------------------------------------------------------------ facts


def value_matches(value: str, strings: Iterable[str]) -> bool:
    """A key item's value matches: one of its strings is in the value or the value in it,
    ignoring case."""
    v = value.casefold().strip()
    return bool(v) and any((s := w.casefold().strip()) and (s in v or v in s) for w in strings)


def matches(attribute: str, value: str, item: dict) -> bool:
    return attribute == item["attribute"] and value_matches(value, item["any"])


def judge_fact(attribute: str, value: str, entry: dict) -> str:
    """A fact shown as current: `right` (a key current item), `stale` (a closed item and no
    current one) or `other`."""
    if any(matches(attribute, value, item) for item in entry["current"]):
        return "right"
    if any(matches(attribute, value, item) for item in entry["closed"]):
        return "stale"
    return "other"


def fact_scores(current: Sequence[tuple[str, str]], entry: dict) -> dict[str, Any]:
    """The user's current facts, (attribute, value) each, against the key."""
    judged = [(a, v, judge_fact(a, v, entry)) for a, v in current]
    matched = [item for item in entry["current"]
               if any(matches(a, v, item) for a, v in current)]
    shown = len(judged)
    right = sum(j == "right" for _, _, j in judged)
    return {"shown": shown, "right": right,
            "stale": sum(j == "stale" for _, _, j in judged),
            "other": shown - right - sum(j == "stale" for _, _, j in judged),
            "precision": right / shown if shown else None,
            "current_items": len(entry["current"]), "current_matched": len(matched),
            "completeness": (len(matched) / len(entry["current"])
                             if entry["current"] else None),
            "facts": [{"attribute": a, "value": v, "judged": j} for a, v, j in judged],
            "missed": [f"{i['attribute']}={i['any'][0]}" for i in entry["current"]
                       if i not in matched]}


def core_facts(core: str | None) -> list[tuple[str, str]]:
    """The (attribute, value) pairs a core block says: its lines "- name: label value; …"
    (chalicelib.usecases.facts.core_block), read by the labels it writes in either language."""
    from chalicelib.domain.facts import LABELS

    labels = sorted(((label, attr) for table in LABELS.values() for attr, label in table.items()),
                    key=lambda pair: -len(pair[0]))
    out: list[tuple[str, str]] = []
    for line in (core or "").splitlines():
        if not line.startswith("- ") or ": " not in line:
            continue
        for part in line.split(": ", 1)[1].split("; "):
            found = next(((attr, part[len(label):].strip()) for label, attr in labels
                          if part.startswith(label + " ")), None)
            if found:
                out.append(found)
    return out


def stale_in_core(core: str | None, entry: dict) -> list[str]:
    """The facts the core block says that are stale by the key (`judge_fact`): a closed
    value under its own attribute — not any mention of the word ("dislikes 上海的冬天" does not
    say she lives in 上海)."""
    return [f"{attr}={value}" for attr, value in core_facts(core)
            if judge_fact(attr, value, entry) == "stale"]


# ------------------------------------------------------------------ the chronicle


@dataclass(frozen=True)
class EventView:
    title: str
    turns: tuple[str, ...]  # "D<session>:<seq>", every turn its sources cite


def event_view(title: str, sources: Iterable[tuple[str, int, int]]) -> EventView:
    return EventView(title=title, turns=tuple(M.source_turns(sources)))


def only_within(event: EventView, turns: set[str]) -> bool:
    """Every turn the event cites lies in `turns` (an event citing nothing does not)."""
    return bool(event.turns) and set(event.turns) <= turns


def chronicle(events: Sequence[EventView], messages: int, no_event: set[str],
              character: set[str]) -> dict[str, Any]:
    """Events per message; those from no-event turns only; those from the character's turns
    only (each with their titles)."""
    filler = [e.title for e in events if only_within(e, no_event)]
    theirs = [e.title for e in events if only_within(e, character)]
    return {"messages": messages, "events": len(events),
            "events_per_message": len(events) / messages if messages else None,
            "no_event_only": len(filler), "no_event_only_titles": filler,
            "character_only": len(theirs), "character_only_titles": theirs}


# ------------------------------------------------------------------ running one chat


@dataclass
class Chat:
    """A chat as built: where it lives and what the import gave."""

    path: Path
    entry: dict
    space: str
    session: str = ""
    roles: dict[int, str] = field(default_factory=dict)  # seq → role

    @property
    def name(self) -> str:
        return self.entry["character"]

    @property
    def tz(self) -> str:
        return self.entry["tz"]

    def turn(self, seq: int) -> str:
        return M.turn_id(self.session, seq)


@dataclass
class BaselineSession:
    number: str


@dataclass
class BaselineSpace:
    """What bench.locomo.PlainBaselines reads of a conversation."""

    space: str
    sessions: list[BaselineSession]


def build(services: Any, chat: Chat) -> dict[str, Any]:
    """Import the file as `annals import FILE --space S --tz TZ` does locally, then extract.
    Returns the build figures (and the session ids the import gave)."""
    from chalicelib.usecases import importing
    from chalicelib.usecases.extract import run_extraction

    t0 = time.perf_counter()
    sessions = importing.read_file(chat.path, "auto", None, None, ZoneInfo(chat.tz))
    imported = importing.import_sessions(services, chat.space, sessions)
    import_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    events = run_extraction(services, chat.space)
    return {"space": chat.space, "file": chat.path.name,
            "sessions": [s.session for s in sessions],
            "messages": sum(len(s.messages) for s in sessions),
            "user_messages": sum(m.role == "user" for s in sessions for m in s.messages),
            "accepted": sum(r["accepted"] for r in imported),
            "events_extracted": len(events), "import_s": import_s,
            "extract_s": time.perf_counter() - t0}


def read_import(services: Any, chat: Chat, sessions: Sequence[str]) -> None:
    """The session and each seq's role as stored (the key's indices are those seqs)."""
    if len(sessions) != 1:
        raise ValueError(f"{chat.path.name}: the import gave {len(sessions)} sessions, "
                         "the key numbers one")
    chat.session = sessions[0]
    chat.roles = {m.seq: m.role for m in services.store.get_messages(chat.space, chat.session)}


def hook_call(services: Any, space: str, request: Any) -> tuple[Any, str | None]:
    """What POST …/hook/recall runs for a key that may write the space (app.hook_recall)."""
    from chalicelib.usecases import facts
    from chalicelib.usecases.recall import recall_hook_sized

    result = recall_hook_sized(services, space, request, may_write=True)
    return result, facts.hook_core(services, space, request, may_write=True)


def ask(services: Any, chat: Chat, q: Question, baselines: Any, recipe: str, nonce: str,
        errors: list[dict]) -> list[dict]:
    """One question through Annals (20 cards), both baselines and the hook (twice, in a window
    of its own). Fills q.results; returns the Annals cards."""
    from chalicelib.domain.models import RecallRequest
    from chalicelib.usecases.recall import recall

    evidence, superseded = turn_ids(chat.session, q.evidence), turn_ids(chat.session,
                                                                        q.superseded)
    target = BaselineSpace(chat.space, [BaselineSession(chat.session)])
    annals: list[dict] = []
    for key in SYSTEMS:
        t0 = time.perf_counter()
        try:
            if key == "annals":
                response = recall(services, chat.space, RecallRequest(
                    query=q.text, now=q.now, limit=CARDS, max_cards=CARDS, recipe=recipe))
                got, verdict = response.cards, response.verdict
            else:
                got, verdict = baselines.search(services, target, key, q.text), None
        except Exception as exc:  # report, keep measuring the rest
            _failed(errors, q, key, exc)
            continue
        cards = [card_record(c, chat.tz) for c in got]
        q.results[key] = {**score_cards(evidence, cards), "verdict": verdict,
                          "ms": (time.perf_counter() - t0) * 1000, "ranked": cards}
        if key == "annals":
            annals = cards
    window = f"bench-{q.id}-{nonce}"
    calls: list[dict] = []
    for n in range(HOOK_CALLS):
        try:
            request = RecallRequest(query=q.text, now=q.now, window=window, recipe=recipe)
            response, core = hook_call(services, chat.space, request)
        except Exception as exc:
            _failed(errors, q, f"hook call {n + 1}", exc)
            break
        cards = [card_record(c, chat.tz) for c in response.cards]
        calls.append({"verdict": response.verdict, "cards": cards, "core": core,
                      "trace": response.trace})
    if calls:
        first = calls[0]
        q.results["hook"] = {**score_hook(evidence, superseded, first["cards"]),
                             "window": window, "verdict": first["verdict"],
                             "cards": first["cards"], "trace": first["trace"],
                             "core_sent": first["core"] is not None}
        if len(calls) > 1:
            q.results["hook"]["second"] = {"verdict": calls[1]["verdict"],
                                           "cards": len(calls[1]["cards"]),
                                           "core_sent": calls[1]["core"] is not None}
    return annals


def _failed(errors: list[dict], q: Question, system: str, exc: Exception) -> None:
    errors.append({"question": q.id, "system": system, "error": repr(exc),
                   "traceback": traceback.format_exc(limit=6)})
    q.results[system] = {"error": repr(exc)}


def user_facts(services: Any, space: str, user: str) -> tuple[str | None, list[tuple[str, str]]]:
    """The profile of the space's user: the key's `user` among the Person records marked
    `user` (who spoke as the user), else the one so marked, else the key's name. Returns its
    name and current facts."""
    from chalicelib.domain.records import Person
    from chalicelib.usecases import facts

    marked = [p.key for p in services.store.list_records(Person, space) if p.user]
    name = next((m for m in marked if m.casefold() == user.casefold()),
                marked[0] if len(marked) == 1 else user)
    for found in facts.profiles(services, space).profiles:
        if found.name.casefold() == name.casefold():
            return found.name, [(f.attribute, f.value) for f in found.facts if f.current]
    return None, []


def space_figures(services: Any, chat: Chat, first_question: str) -> dict[str, Any]:
    """Facts, the core block and the chronicle of a built chat."""
    from chalicelib.domain.models import RecallRequest
    from chalicelib.ports import iter_events
    from chalicelib.usecases import facts

    person, current = user_facts(services, chat.space, chat.entry["user"])
    scored = fact_scores(current, chat.entry)
    # the block the hook injects for the chat's first question, in no window (so it is said)
    core = facts.hook_core(services, chat.space, RecallRequest(query=first_question),
                           may_write=False)
    events = [event_view(e.title, [(s.session, s.seq_start, s.seq_end) for s in e.sources])
              for e in iter_events(services.store, chat.space) if e.kind == "event"]
    no_event = {chat.turn(i) for i in chat.entry["no_event_turns"]}
    character = {chat.turn(s) for s, role in chat.roles.items() if role == "assistant"}
    stale = stale_in_core(core, chat.entry)
    return {"person": person, "facts": scored, "core": core, "stale_in_core": len(stale),
            "stale_in_core_values": stale,
            "chronicle": chronicle(events, len(chat.roles), no_event, character)}


# ------------------------------------------------------------------ the run


def run(paths: Sequence[Path | str] = (), *, key_path: Path | str = KEY,
        only: str | None = None, embedder: str = "e5-local", recipe: str | None = None,
        json_path: Path | str | None = None, dump_path: Path | str | None = None,
        data_dir: Path | str | None = None, progress: bool = True,
        settings: dict[str, Any] | None = None, reader: str = "rules",
        model: str | None = None, answers: str | None = None) -> dict[str, Any]:
    """Every chat built (or reused from `data_dir`) and asked; the report. `settings`:
    Settings overrides (tests); `reader` "llm": the local `model` reads the user's facts
    (ANNALS_LLM=local, as bench facts runs it), the rules the rest; `answers`: the model's
    answers kept and replayed (bench/answers.py)."""
    from tqdm import tqdm

    started = time.perf_counter()
    load_before = os.getloadavg()
    key = load_key(key_path)
    files = chat_files(paths, key, only, Path(key_path).parent)
    if not files:
        raise ValueError(f"no chat file matches {only!r}")
    chats = _chats(files, key)
    nonce = f"{time.time_ns():x}"  # hook windows unique to this run, on reused spaces too
    errors: list[dict] = []
    reports: list[dict] = []
    per_question: list[dict] = []
    dump_lines: list[str] = []
    with run_dir(data_dir, "annals-bench-companion-") as tmp, \
            model_reader(reader, model, progress, answers) as llm:
        services, baselines = _services(tmp, embedder, settings, llm)
        annals_recipe = recipe or services.settings.recipe
        built = {space: made for space, made in read_built(tmp).items()
                 if made.get("reader", "rules") == reader}  # built by another reader: again
        todo = sum(len(c.entry["questions"]) for c in chats)
        bar = tqdm(total=todo, desc="companion", unit="q", file=sys.stderr,
                   disable=not progress)
        for chat in chats:
            bar.set_postfix_str(chat.name)
            t0 = time.perf_counter()
            mine = questions(chat.entry)
            try:
                made = _built(services, baselines, chat, built, tmp, reader)
                figures = space_figures(services, chat, mine[0].text if mine else "")
            except Exception as exc:  # one chat's failure leaves the others measured
                errors.append({"chat": chat.path.name, "error": repr(exc),
                               "traceback": traceback.format_exc(limit=8)})
                bar.update(len(mine))
                continue
            for q in mine:
                cards = ask(services, chat, q, baselines, annals_recipe, nonce, errors)
                per_question.append(question_record(chat, q))
                dump_lines.append(json.dumps(
                    {"id": q.id, "chat": chat.name, "kind": q.kind, "question": q.text,
                     "evidence": turn_ids(chat.session, q.evidence), "cards": cards,
                     "hook_cards": q.results.get("hook", {}).get("cards", [])},
                    ensure_ascii=False, default=str))
                bar.update(1)
            reports.append({"chat": chat.name, "file": chat.path.name, "space": chat.space,
                            "session": chat.session, "user": chat.entry["user"],
                            "build": made, **figures,
                            "questions": summarize(mine),
                            "runtime_s": time.perf_counter() - t0})
        bar.close()
    if llm is not None:  # the model's time: the extraction of the chats built this run
        llm.seconds = sum(r["build"]["extract_s"] for r in reports if not r["build"]["reused"])
    report: dict[str, Any] = {
        "benchmark": "companion",
        "config": {"embedder": embedder, "reader": reader,
                   "reading": llm.cost(user_turns(reports)) if llm else None,
                   "annals_recipe": annals_recipe, "cards": CARDS,
                   "found_at": FOUND_AT, "hook_hit_at": HOOK_HIT_AT, "key": str(key_path),
                   "data_dir": None if data_dir is None else str(data_dir)},
        "chats": reports,
        "pooled": pooled(reports, per_question),
        "by_kind": by_kind(per_question),
        "errors": errors,
        "runtime_s": time.perf_counter() - started,
        "load_average": {"before": load_before, "after": os.getloadavg(),
                         "cpus": os.cpu_count()},
        "per_question": per_question,
    }
    write_outputs(report, json_path, dump_path, dump_lines, indent=1, default=str)
    return report


def _chats(files: Sequence[Path], key: dict[str, dict]) -> list[Chat]:
    chats: list[Chat] = []
    taken: set[str] = set()
    for path in files:
        entry = entry_for(key, path)
        space, n = space_id(entry["character"]), 2
        while space in taken:  # two chats with one character: a space each
            space, n = f"{space_id(entry['character'])}-{n}", n + 1
        taken.add(space)
        chats.append(Chat(path=path, entry=entry, space=space))
    return chats


def user_turns(reports: Sequence[dict]) -> int:
    return sum(r["build"].get("user_messages", 0) for r in reports if not r["build"]["reused"])


def _services(tmp: Path, embedder: str, settings: dict[str, Any] | None,
              llm: Any = None) -> tuple[Any, Any]:
    from .locomo import PlainBaselines, make_services

    if llm is not None:
        from chalicelib.config import Settings
        from chalicelib.wiring import build_services

        services = build_services(Settings(
            data_dir=tmp, embedder=embedder, schedule="off", backend="local", llm="local",
            llm_model_path=llm.server.model_path, _env_file=None, **(settings or {})),
            index="inline", llm=llm.client)
    elif settings:
        from chalicelib.config import Settings
        from chalicelib.wiring import build_services

        services = build_services(Settings(data_dir=tmp, embedder=embedder, schedule="off",
                                           backend="local", **settings), index="inline")
    else:
        services = make_services(tmp, embedder)
    services.embedder.embed_query("warm up")  # the model's load is not a chat's runtime
    return services, PlainBaselines(tmp, services.embedder)


def _built(services: Any, baselines: Any, chat: Chat, built: dict, tmp: Path,
           reader: str = "rules") -> dict:
    """The chat's space: built here (import, extraction, the baselines' index), or what an
    earlier run built in this data dir with the same reader."""
    made = built.get(chat.space)
    if made is None or made.get("file") != chat.path.name:
        made = {**build(services, chat), "reader": reader}
        read_import(services, chat, made["sessions"])
        t0 = time.perf_counter()
        baselines.index(services, BaselineSpace(chat.space, [BaselineSession(chat.session)]))
        made["baseline_index_s"] = time.perf_counter() - t0
        built[chat.space] = made
        write_built(tmp, built)
        made = {**made, "reused": False}
    else:
        read_import(services, chat, made["sessions"])
        made = {**made, "reused": True}
    return made


def question_record(chat: Chat, q: Question) -> dict[str, Any]:
    return {"id": q.id, "chat": chat.name, "kind": q.kind, "lang": q.lang,
            "question": q.text, "now": q.now.isoformat(),
            "evidence": turn_ids(chat.session, q.evidence),
            "superseded": turn_ids(chat.session, q.superseded), "abstain": q.abstain,
            "answer": q.answer, "results": q.results}


# ------------------------------------------------------------------ summaries


def _share(values: Iterable[Any]) -> dict[str, Any]:
    """k of n (None values left out), and k / n."""
    vals = [bool(v) for v in values if v is not None]
    return {"k": sum(vals), "n": len(vals), "share": sum(vals) / len(vals) if vals else None}


def _mean_of(rows: Iterable[dict], system: str, name: str) -> float | None:
    return M.mean(float(r["results"][system][name]) for r in rows
                  if name in r["results"].get(system, {}))


def summarize(rows: Sequence[Any]) -> dict[str, Any]:
    """The question figures of a set of questions (Question objects or their records)."""
    recs = [r if isinstance(r, dict) else {"kind": r.kind, "abstain": r.abstain,
                                          "results": r.results} for r in rows]
    answerable = [r for r in recs if not r["abstain"]]
    never = [r for r in recs if r["abstain"]]

    def hook(r: dict) -> dict:
        return r["results"].get("hook", {})

    return {
        "questions": len(recs), "answerable": len(answerable), "never_said": len(never),
        "found@10": _share(r["results"].get("annals", {}).get("found@10") for r in answerable),
        "hook_hit@2": _share(hook(r).get("hit@2") for r in answerable),
        "abstention": _share(hook(r).get("abstained") for r in never),
        "abstention_20": _share(r["results"].get("annals", {}).get("zero_cards")
                                for r in never),
        "false_abstain": _share(hook(r).get("abstained") for r in answerable),
        "hook_stale@2": _share(hook(r).get("stale@2") for r in answerable),
        "crosslingual_found@10": _share(r["results"].get("annals", {}).get("found@10")
                                        for r in answerable if r["kind"] == "crosslingual"),
        "core_sent": _share(hook(r).get("core_sent") for r in recs),
        "second_call": {"cards": M.mean(float(hook(r)["second"]["cards"]) for r in recs
                                        if "second" in hook(r)),
                        "core_sent": _share(hook(r)["second"]["core_sent"] for r in recs
                                            if "second" in hook(r)),
                        "verdicts": _count(hook(r)["second"]["verdict"] for r in recs
                                           if "second" in hook(r))},
        "verdicts": _count(hook(r)["verdict"] for r in recs if "verdict" in hook(r)),
        "hook_cards": M.mean(float(len(hook(r)["cards"])) for r in recs if "cards" in hook(r)),
        **{f"R@{k} {s}": _mean_of(answerable, s, f"R@{k}") for s in SYSTEMS for k in (5, 10)},
    }


def _count(values: Iterable[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for v in values:
        out[v] = out.get(v, 0) + 1
    return dict(sorted(out.items()))


def pooled(chats: Sequence[dict], rows: Sequence[dict]) -> dict[str, Any]:
    """Every chat together: the question figures over all questions, the fact and chronicle
    counts summed."""
    def total(get: Any) -> int:
        return sum(get(c) for c in chats)

    shown, right = total(lambda c: c["facts"]["shown"]), total(lambda c: c["facts"]["right"])
    items = total(lambda c: c["facts"]["current_items"])
    messages = total(lambda c: c["chronicle"]["messages"])
    events = total(lambda c: c["chronicle"]["events"])
    return {"questions": summarize(rows),
            "facts": {"shown": shown, "right": right,
                      "stale": total(lambda c: c["facts"]["stale"]),
                      "precision": right / shown if shown else None,
                      "current_items": items,
                      "current_matched": total(lambda c: c["facts"]["current_matched"]),
                      "completeness": (total(lambda c: c["facts"]["current_matched"]) / items
                                       if items else None)},
            "stale_in_core": total(lambda c: c["stale_in_core"]),
            "chronicle": {"messages": messages, "events": events,
                          "events_per_message": events / messages if messages else None,
                          "no_event_only": total(lambda c: c["chronicle"]["no_event_only"]),
                          "character_only": total(lambda c: c["chronicle"]["character_only"])},
            "runtime_s": sum(c["runtime_s"] for c in chats)}


def by_kind(rows: Sequence[dict]) -> dict[str, dict]:
    return {kind: summarize([r for r in rows if r["kind"] == kind]) for kind in KINDS
            if any(r["kind"] == kind for r in rows)}


# ------------------------------------------------------------------ tables


def _frac(s: dict, pooled_cell: bool = False) -> str:
    if not s["n"]:
        return "—"
    return f"{s['k']}/{s['n']}" + (f" = {s['share']:.3f}" if pooled_cell else "")


def _num(value: float | None, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def rows_of(chat: dict, pooled_cell: bool) -> list[str]:
    """One column of the main table: a chat's figures, or (pooled_cell) the pooled ones."""
    q, f, ch = chat["questions"], chat["facts"], chat["chronicle"]
    return [_frac(q["found@10"], pooled_cell), _frac(q["hook_hit@2"], pooled_cell),
            _frac(q["abstention"], pooled_cell), _frac(q["crosslingual_found@10"], pooled_cell),
            " / ".join(_num(q[f"R@5 {s}"]) for s in SYSTEMS),
            str(f["shown"]), str(f["right"]), str(f["stale"]), _num(f["precision"]),
            _num(f["completeness"]), str(chat["stale_in_core"]),
            f"{_num(ch['events_per_message'], 2)} ({ch['events']})",
            str(ch["no_event_only"]), f"{chat['runtime_s']:.0f} s"]


ROW_NAMES = ("found@10 (answerable)", "hook hit@2 (answerable)", "abstention (never said)",
             "cross-lingual found@10", "R@5 Annals / BM25 / dense", "facts shown",
             "facts right", "facts stale", "facts precision", "facts completeness",
             "stale in core", "events / message (events)", "events from no-event turns only",
             "runtime")


def format_table(report: dict) -> list[str]:
    chats = report["chats"]
    columns = [rows_of(c, False) for c in chats]
    p = report["pooled"]
    columns.append(rows_of({"questions": p["questions"], "facts": p["facts"],
                            "chronicle": p["chronicle"], "stale_in_core": p["stale_in_core"],
                            "runtime_s": p["runtime_s"]}, True))
    head = ["", *(c["chat"] for c in chats), "pooled"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for i, name in enumerate(ROW_NAMES):
        lines.append("| " + " | ".join([name, *(col[i] for col in columns)]) + " |")
    return lines


def format_kinds(report: dict) -> list[str]:
    lines = ["| kind | n | found@10 | hook hit@2 | R@5 Annals / BM25 / dense | "
             "R@10 Annals / BM25 / dense |", "|---|---|---|---|---|---|"]
    for kind, s in report["by_kind"].items():
        if kind == "never_said":
            continue
        lines.append(f"| {kind} | {s['questions']} | {_frac(s['found@10'], True)} | "
                     f"{_frac(s['hook_hit@2'], True)} | "
                     + " / ".join(_num(s[f"R@5 {x}"]) for x in SYSTEMS) + " | "
                     + " / ".join(_num(s[f"R@10 {x}"]) for x in SYSTEMS) + " |")
    never = report["by_kind"].get("never_said")
    if never:
        lines.append(f"| never_said | {never['questions']} | abstained: hook "
                     f"{_frac(never['abstention'], True)}, 20-card recall "
                     f"{_frac(never['abstention_20'], True)} | | | |")
    return lines


def format_report(report: dict) -> str:
    cfg = report["config"]
    p = report["pooled"]["questions"]
    lines = [f"Companion chats (bench/data/companion, issue 36): {len(report['chats'])} chats, "
             f"{p['questions']} questions; facts read by "
             f"{'the local model ' + cfg['reading']['model'] if cfg.get('reading') else 'the rules'}"
             f"; embedder {cfg['embedder']}, recipe "
             f"{cfg['annals_recipe']}; found@10 of {cfg['cards']} cards; hook = the default "
             "request (gated), its first call of two in the window", "",
             *format_table(report), "", "Per question kind (pooled):", "",
             *format_kinds(report), ""]
    second = p["second_call"]
    if cfg.get("reading"):
        lines.append(reading_line(cfg["reading"]))
    lines.append(f"hook, first call: {_num(p['hook_cards'], 2)} cards on average, core block "
                 f"sent {_frac(p['core_sent'])}; second call in the same window: "
                 f"{_num(second['cards'], 2)} cards, core sent {_frac(second['core_sent'])}, "
                 "verdicts " + ", ".join(f"{v} {n}" for v, n in second["verdicts"].items())
                 + f"; false abstain (answerable, no card): {_frac(p['false_abstain'], True)}"
                 + f"; hook stale@2: {_frac(p['hook_stale@2'], True)}")
    for c in report["chats"]:
        b = c["build"]
        lines.append(f"  {c['chat']} (space {c['space']}): {b['messages']} msgs, "
                     f"{c['chronicle']['events']} events ({c['chronicle']['character_only']} "
                     "from the character's turns only), "
                     + ("reused" if b.get("reused") else
                        f"import {b['import_s']:.1f} s, extract {b['extract_s']:.1f} s")
                     + f"; missed facts {c['facts']['missed']}; stale in core "
                     f"{c['stale_in_core_values']}")
    lines += footer(report, "failed", f"runtime {report['runtime_s']:.0f} s")
    return "\n".join(lines)
