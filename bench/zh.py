"""The Chinese bench and the cross-lingual bench (bench/data/zh_life.json, crosslingual.json).

Each space of the data is ingested the way bench/locomo.py ingests a LoCoMo conversation —
`put_messages` per session (every turn with its own time), then `run_extraction` — in one
fresh temporary data dir with the scheduler off. Every question is asked through `recall`
with its own `now` and 20 cards (the Annals recipe), through the two plain baselines of
bench/locomo.py (BM25 and dense e5 over the raw turns), and once more the way a chat hook
asks (the default request: the recipe's max_cards, gated). Scored with bench/metrics.py:
R@1/R@5/R@10 over the first k distinct source turns, session N seq s = "DN:s"; for time
questions temporal_hit@5 (a top-5 card cites evidence and its date, in the space's time zone,
starts inside the window); hook hit@2 = one of the first two cards cites evidence.

Cross-lingual: R@10 per direction — en→zh (English questions about the Chinese spaces) and
zh→en (Chinese questions about the English space) — beside the same-language question on
the identical evidence (the Chinese question of zh_life.json; the English form of the
English-space question), and the ratio cross / same.

The pure parts (loading, validation, scoring, tables) need no model: tests/unit/test_bench_zh.py.
"""

from __future__ import annotations

import json
import math
import os
import sys
import time
import traceback
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from . import metrics as M
from .runs import footer, read_built, run_dir, write_built, write_outputs

DATA = Path(__file__).resolve().parent / "data"
ZH_LIFE = DATA / "zh_life.json"
CROSSLINGUAL = DATA / "crosslingual.json"
KINDS = ("single", "time", "multi", "update", "noisy")
SYSTEMS = ("annals", "bm25", "dense")
BASELINES = ("bm25", "dense")
CARDS = 20
ONE_US = timedelta(microseconds=1)
# The cross-lingual groups: (direction, the group asked across languages, its same-language twin)
DIRECTIONS = {"en→zh": ("xl_en_zh", "xl_en_zh_same"), "zh→en": ("xl_zh_en", "xl_zh_en_same")}


# ------------------------------------------------------------------ loading


@dataclass
class Turn:
    seq: int
    speaker: str
    role: str
    text: str
    at: datetime


@dataclass
class Session:
    number: int
    turns: list[Turn]

    @property
    def at(self) -> datetime:
        return self.turns[0].at


@dataclass
class Space:
    """One chat space; shaped like bench.locomo.Conversation where PlainBaselines reads it."""

    id: str
    lang: str
    tz: str
    user: str
    assistant: str
    now: datetime
    sessions: list[Session]

    @property
    def space(self) -> str:
        return self.id

    @property
    def stem(self) -> str:
        return self.id

    @property
    def message_count(self) -> int:
        return sum(len(s.turns) for s in self.sessions)


@dataclass
class Question:
    id: str
    space: str
    group: str  # zh | xl_en_zh | xl_en_zh_same | xl_zh_en | xl_zh_en_same
    kind: str
    lang: str
    question: str
    now: datetime
    evidence: list[str]
    window: M.Window | None
    same_as: str | None = None
    results: dict[str, dict] = field(default_factory=dict)


def _space(raw: dict) -> Space:
    sessions = [Session(number=int(s["session"]), turns=[
        Turn(seq=int(t["seq"]), speaker=t["speaker"], role=t["role"], text=t["content"],
             at=datetime.fromisoformat(t["at"])) for t in s["turns"]])
        for s in raw["sessions"]]
    return Space(id=raw["id"], lang=raw["lang"], tz=raw.get("time_zone", "UTC"),
                 user=raw["user"], assistant=raw["assistant"],
                 now=datetime.fromisoformat(raw["now"]), sessions=sessions)


def _evidence_ids(evidence: Iterable[dict]) -> list[str]:
    out: list[str] = []
    for e in evidence:
        tid = M.turn_id(str(e["session"]), int(e["seq"]))
        if tid not in out:
            out.append(tid)
    return out


def _window(raw: dict) -> M.Window | None:
    w = raw.get("window")
    return None if not w else (date.fromisoformat(w[0]), date.fromisoformat(w[1]))


def _question(raw: dict, space: str, group: str) -> Question:
    return Question(id=raw["id"], space=space, group=group, kind=raw["kind"],
                    lang=raw["lang"], question=raw["question"],
                    now=datetime.fromisoformat(raw["now"]),
                    evidence=_evidence_ids(raw["evidence"]), window=_window(raw),
                    same_as=raw.get("same_as"))


def load(zh_life: dict, crosslingual: dict | None = None,
         parts: Sequence[str] = ("zh",)) -> tuple[list[Space], list[Question]]:
    """The spaces to build and the questions to ask for `parts` ("zh", "crosslingual")."""
    spaces = [_space(s) for s in zh_life["spaces"]]
    zh_by_id = {q["id"]: (s["id"], q) for s in zh_life["spaces"] for q in s["questions"]}
    questions: list[Question] = []
    if "zh" in parts:
        questions += [_question(q, sid, "zh") for sid, q in zh_by_id.values()]
    if "crosslingual" in parts:
        if crosslingual is None:
            raise ValueError("the cross-lingual part needs crosslingual.json")
        spaces += [_space(s) for s in crosslingual["spaces"]]
        for raw in crosslingual["en_questions_about_zh"]:
            questions.append(_question(raw, raw["space"], "xl_en_zh"))
            sid, twin = zh_by_id[raw["same_as"]]
            questions.append(_question(twin, sid, "xl_en_zh_same"))
        for raw in crosslingual["questions_about_en"]:
            group = "xl_zh_en" if raw["direction"] == "zh→en" else "xl_zh_en_same"
            questions.append(_question(raw, raw["space"], group))
    return spaces, questions


def load_files(parts: Sequence[str], zh_path: Path | str = ZH_LIFE,
               xl_path: Path | str = CROSSLINGUAL) -> tuple[dict, dict | None]:
    zh = json.loads(Path(zh_path).read_text(encoding="utf-8"))
    xl = (json.loads(Path(xl_path).read_text(encoding="utf-8"))
          if "crosslingual" in parts else None)
    return zh, xl


# ------------------------------------------------------------------ validation


def _check_space(raw: dict, problems: list[str]) -> dict[tuple[int, int], dict]:
    """Turns by (session, seq); appends what is wrong with the space itself."""
    sid = raw.get("id", "?")
    turns: dict[tuple[int, int], dict] = {}
    numbers = [s["session"] for s in raw["sessions"]]
    if len(set(numbers)) != len(numbers):
        problems.append(f"{sid}: session numbers repeat")
    last: datetime | None = None
    for s in raw["sessions"]:
        seqs = [t["seq"] for t in s["turns"]]
        if seqs != list(range(1, len(seqs) + 1)):
            problems.append(f"{sid} session {s['session']}: seqs are not 1..n")
        for t in s["turns"]:
            at = datetime.fromisoformat(t["at"])
            if at.tzinfo is None:
                problems.append(f"{sid} {s['session']}:{t['seq']}: time without a zone")
            elif last is not None and at < last:
                problems.append(f"{sid} {s['session']}:{t['seq']}: time goes backwards")
            last = at if at.tzinfo is not None else last
            if t["role"] not in ("user", "assistant") or not str(t["content"]).strip():
                problems.append(f"{sid} {s['session']}:{t['seq']}: bad role or empty content")
            turns[(s["session"], t["seq"])] = t
    return turns


def _in_window(day: str, window: Sequence[str]) -> bool:
    return window[0] <= day < window[1]


def check_question(q: dict, turns: dict[tuple[int, int], dict], facts: dict[str, dict],
                   where: str) -> list[str]:
    """What is wrong with one question: evidence that does not exist or is not the user's,
    said after `now`, or not among its facts' turns; a time question without a window, a
    fact starting outside it, or no look-alike (a fact on the same topic outside it)."""
    out: list[str] = []
    qid = f"{where}/{q.get('id')}"
    if q.get("kind") not in KINDS:
        out.append(f"{qid}: unknown kind {q.get('kind')!r}")
    now = datetime.fromisoformat(q["now"])
    if now.tzinfo is None:
        out.append(f"{qid}: now has no zone")
    if not q.get("evidence"):
        out.append(f"{qid}: no evidence")
    fact_turns = {(facts[f]["session"], s) for f in q.get("facts", []) if f in facts
                  for seqs in facts[f]["seqs"].values() for s in seqs}
    for f in q.get("facts", []):
        if f not in facts:
            out.append(f"{qid}: unknown fact {f!r}")
    for e in q.get("evidence", []):
        key = (e["session"], e["seq"])
        turn = turns.get(key)
        if turn is None:
            out.append(f"{qid}: evidence {key} does not exist")
            continue
        if turn["role"] != "user":
            out.append(f"{qid}: evidence {key} is not a user turn")
        if now.tzinfo is not None and datetime.fromisoformat(turn["at"]) > now:
            out.append(f"{qid}: evidence {key} is said after now")
        if facts and key not in fact_turns:
            out.append(f"{qid}: evidence {key} is not a turn of its facts")
    window = q.get("window")
    if q.get("kind") == "time" and not window:
        out.append(f"{qid}: a time question needs a window")
    if window:
        if not window[0] < window[1]:
            out.append(f"{qid}: empty window {window}")
        mine = [facts[f] for f in q.get("facts", []) if f in facts]
        for f in q.get("facts", []):
            if f in facts and not _in_window(facts[f]["on"][0], window):
                out.append(f"{qid}: fact {f} ({facts[f]['on'][0]}) is outside {window}")
        topics = {t for fact in mine for t in fact["topics"]}
        lookalikes = [k for k, fact in facts.items() if k not in q.get("facts", [])
                      and topics & set(fact["topics"]) and not _in_window(fact["on"][0],
                                                                            window)]
        if not lookalikes:
            out.append(f"{qid}: no look-alike outside the window {window}")
    return out


def validate_space(raw: dict, questions: Iterable[dict]) -> list[str]:
    problems: list[str] = []
    turns = _check_space(raw, problems)
    facts = {f["id"]: f for f in raw.get("facts", [])}
    for f in facts.values():
        for seqs in f["seqs"].values():
            for s in seqs:
                if (f["session"], s) not in turns:
                    problems.append(f"{raw['id']}: fact {f['id']} turn {s} does not exist")
    for q in questions:
        problems += check_question(q, turns, facts, raw["id"])
    return problems


def validate_zh_life(data: dict) -> list[str]:
    problems: list[str] = []
    if "CC0" not in data.get("licence", "") and "MIT" not in data.get("licence", ""):
        problems.append("zh_life: no CC0/MIT licence stated")
    ids: set[str] = set()
    for s in data["spaces"]:
        problems += validate_space(s, s["questions"])
        for q in s["questions"]:
            if q["id"] in ids:
                problems.append(f"question id {q['id']} repeats")
            ids.add(q["id"])
    return problems


def validate_crosslingual(data: dict, zh_life: dict) -> list[str]:
    problems: list[str] = []
    if "CC0" not in data.get("licence", "") and "MIT" not in data.get("licence", ""):
        problems.append("crosslingual: no CC0/MIT licence stated")
    zh_spaces = {s["id"]: s for s in zh_life["spaces"]}
    zh_questions = {q["id"]: q for s in zh_life["spaces"] for q in s["questions"]}
    about_zh = data["en_questions_about_zh"]
    by_space: dict[str, list[dict]] = {}
    for q in about_zh:
        if q["space"] not in zh_spaces:
            problems.append(f"{q['id']}: unknown space {q['space']}")
            continue
        twin = zh_questions.get(q.get("same_as", ""))
        if twin is None:
            problems.append(f"{q['id']}: same_as {q.get('same_as')!r} is no zh_life question")
        elif twin["evidence"] != q["evidence"]:
            problems.append(f"{q['id']}: evidence differs from {twin['id']}")
        by_space.setdefault(q["space"], []).append(q)
    for sid, qs in by_space.items():  # the space itself is checked with zh_life
        raw = zh_spaces[sid]
        turns = _check_space(raw, [])
        facts = {f["id"]: f for f in raw.get("facts", [])}
        for q in qs:
            problems += check_question(q, turns, facts, sid)
    if len(about_zh) < 60:
        problems.append(f"only {len(about_zh)} English questions about the Chinese spaces")
    en_spaces = {s["id"]: s for s in data["spaces"]}
    pairs = data["questions_about_en"]
    by_id = {q["id"]: q for q in pairs}
    for s in en_spaces.values():
        problems += validate_space(s, [q for q in pairs if q["space"] == s["id"]])
    for q in pairs:
        twin = by_id.get(q.get("same_as", ""))
        if twin is None or twin.get("same_as") != q["id"]:
            problems.append(f"{q['id']}: no twin question")
        elif twin["evidence"] != q["evidence"] or twin["lang"] == q["lang"]:
            problems.append(f"{q['id']}: its twin differs in evidence or has the same language")
    for direction in ("zh→en", "en→en"):
        n = sum(q["direction"] == direction for q in pairs)
        if n < 60:
            problems.append(f"only {n} {direction} questions about the English space")
    return problems


def _kind_counts(questions: Iterable[dict]) -> dict[str, int]:
    out = dict.fromkeys(KINDS, 0)
    for q in questions:
        out[q["kind"]] = out.get(q["kind"], 0) + 1
    return out


def sizes(zh_life: dict, crosslingual: dict | None = None) -> dict:
    """Spaces, sessions, turns and questions per kind, per space and in total."""
    def space_size(s: dict, questions: list[dict]) -> dict:
        turns = [len(x["turns"]) for x in s["sessions"]]
        return {"sessions": len(turns), "turns": sum(turns),
                "turns_per_session": [min(turns), max(turns)],
                "first": s["sessions"][0]["turns"][0]["at"][:10],
                "last": s["sessions"][-1]["turns"][-1]["at"][:10],
                "questions": len(questions), "kinds": _kind_counts(questions)}

    out: dict[str, Any] = {"zh_life": {s["id"]: space_size(s, s["questions"])
                                       for s in zh_life["spaces"]}}
    allq = [q for s in zh_life["spaces"] for q in s["questions"]]
    out["zh_life_total"] = {
        "spaces": len(zh_life["spaces"]),
        "sessions": sum(v["sessions"] for v in out["zh_life"].values()),
        "turns": sum(v["turns"] for v in out["zh_life"].values()),
        "questions": len(allq), "kinds": _kind_counts(allq)}
    if crosslingual is not None:
        pairs = crosslingual["questions_about_en"]
        out["crosslingual"] = {
            "en_questions_about_zh": len(crosslingual["en_questions_about_zh"]),
            "en_questions_about_zh_kinds": _kind_counts(crosslingual["en_questions_about_zh"]),
            "en_spaces": {s["id"]: space_size(s, [q for q in pairs if q["space"] == s["id"]
                                                  and q["lang"] == "zh"])
                          for s in crosslingual["spaces"]},
            "zh_questions_about_en": sum(q["lang"] == "zh" for q in pairs),
            "en_questions_about_en": sum(q["lang"] == "en" for q in pairs)}
    return out


def describe(zh_life: dict, crosslingual: dict | None = None) -> str:
    s = sizes(zh_life, crosslingual)
    t = s["zh_life_total"]
    lines = [f"zh_life: {t['spaces']} spaces, {t['sessions']} sessions, {t['turns']} turns, "
             f"{t['questions']} questions " + _kinds_text(t["kinds"])]
    for sid, v in s["zh_life"].items():
        lines.append(f"  {sid}: {v['sessions']} sessions ({v['first']}..{v['last']}), "
                     f"{v['turns']} turns ({v['turns_per_session'][0]}-"
                     f"{v['turns_per_session'][1]} a session), {v['questions']} questions "
                     + _kinds_text(v["kinds"]))
    if "crosslingual" in s:
        x = s["crosslingual"]
        lines.append(f"crosslingual: {x['en_questions_about_zh']} English questions about the "
                     "Chinese spaces " + _kinds_text(x["en_questions_about_zh_kinds"]))
        for sid, v in x["en_spaces"].items():
            lines.append(f"  {sid}: {v['sessions']} sessions ({v['first']}..{v['last']}), "
                         f"{v['turns']} turns, {v['questions']} questions in Chinese and the "
                         "same in English " + _kinds_text(v["kinds"]))
    return "\n".join(lines)


def _kinds_text(kinds: dict[str, int]) -> str:
    return "(" + ", ".join(f"{k} {n}" for k, n in kinds.items()) + ")"


# ------------------------------------------------------------------ cards and scores


def card_record(card: Any, tz: str) -> dict:
    """A recall Card → the metrics record, its dates read in the space's time zone."""
    sources = M.source_turns((s.session, s.seq_start, s.seq_end) for s in card.sources)
    start = end = None
    if card.when is not None:
        zone = ZoneInfo(tz)
        start = card.when.start.astimezone(zone).date().isoformat()
        try:
            last = (card.when.end - ONE_US).astimezone(zone).date()
            end = (last + timedelta(days=1)).isoformat()
        except OverflowError:  # an open end
            end = None
    return {"sources": sources, "date_start": start, "date_end": end, "text": card.text}


def score(q: Question, cards: Sequence[dict]) -> dict:
    out = M.question_scores(q.evidence, cards, q.window)
    return {k: out[k] for k in ("R@1", "R@5", "R@10", "hit@1", "hit@5", "hit@10",
                                "temporal_hit@5", "cards")}


def _mean(values: Iterable[float | bool | None]) -> float | None:
    return M.mean(float(v) for v in values if v is not None
                  and not (isinstance(v, float) and math.isnan(v)))


def summarize(questions: Sequence[Question], key: str) -> dict:
    """R@1/5/10 and hit@10 of one system over these questions; temporal_hit@5 over those
    with a window; hook hit@2 when the hook pass ran."""
    rows = [q.results[key] for q in questions if "error" not in q.results.get(key, {"error": 1})]
    out: dict[str, Any] = {"questions": len(rows)}
    for name in ("R@1", "R@5", "R@10", "hit@10"):
        out[name] = _mean(r[name] for r in rows)
    timed = [r for r in rows if r.get("temporal_hit@5") is not None]
    out["temporal_hit@5"] = _mean(r["temporal_hit@5"] for r in timed)
    out["temporal_questions"] = len(timed)
    ms = [r["ms"] for r in rows if "ms" in r]
    out["p50_ms"] = M.percentile(ms, 50)
    out["zero_cards"] = _mean(r["cards"] == 0 for r in rows if "cards" in r)
    verdicts: dict[str, int] = {}
    for r in rows:
        if "verdict" in r:
            verdicts[r["verdict"]] = verdicts.get(r["verdict"], 0) + 1
    if verdicts:
        out["verdicts"] = dict(sorted(verdicts.items()))
    return out


def hook_summary(questions: Sequence[Question]) -> dict:
    rows = [q.results["hook"] for q in questions if "hit@2" in q.results.get("hook", {})]
    return {"questions": len(rows), "hit@2": _mean(r["hit@2"] for r in rows),
            "hit@1": _mean(r["hit@1"] for r in rows),
            "cards_returned": _mean(r["cards"] for r in rows)}


def _minus(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a - b


def table(questions: Sequence[Question]) -> dict:
    """Per kind and overall: each system's summary, Δ vs the best baseline, hook hit@2."""
    out: dict[str, Any] = {}
    for kind in (*KINDS, "all"):
        mine = [q for q in questions if kind == "all" or q.kind == kind]
        if not mine:
            continue
        row = {key: summarize(mine, key) for key in SYSTEMS}
        delta = {}
        for name in ("R@1", "R@5", "R@10", "temporal_hit@5"):
            base = [row[b][name] for b in BASELINES if row[b][name] is not None]
            delta[name] = _minus(row["annals"][name], max(base)) if base else None
        row["delta_vs_best_baseline"] = delta
        row["hook"] = hook_summary(mine)
        row["questions"] = len(mine)
        out[kind] = row
    return out


def crosslingual_table(questions: Sequence[Question]) -> dict:
    """R@10 per direction and system, the same-language R@10 on the identical evidence, and
    the ratio cross / same (per kind too)."""
    out: dict[str, Any] = {}
    for direction, (cross_group, same_group) in DIRECTIONS.items():
        cross = [q for q in questions if q.group == cross_group]
        same = [q for q in questions if q.group == same_group]
        if not cross:
            continue
        row: dict[str, Any] = {"questions": len(cross)}
        for key in SYSTEMS:
            c, s = summarize(cross, key), summarize(same, key)
            row[key] = {"cross": {n: c[n] for n in ("R@1", "R@5", "R@10")},
                        "same": {n: s[n] for n in ("R@1", "R@5", "R@10")},
                        "ratio@10": (None if not s["R@10"] or c["R@10"] is None
                                     else c["R@10"] / s["R@10"])}
        row["hook"] = {"cross": hook_summary(cross), "same": hook_summary(same)}
        row["by_kind"] = {}
        for kind in KINDS:
            ck = [q for q in cross if q.kind == kind]
            sk = [q for q in same if q.kind == kind]
            if ck:
                row["by_kind"][kind] = {
                    "questions": len(ck),
                    **{key: {"cross": summarize(ck, key)["R@10"],
                             "same": summarize(sk, key)["R@10"]} for key in SYSTEMS}}
        out[direction] = row
    return out


# ------------------------------------------------------------------ running


def ingest(services: Any, space: Space) -> float:
    """put_messages per session, each turn with its own time; returns wall seconds."""
    from chalicelib.domain.models import MessageIn, PutMessagesRequest
    from chalicelib.usecases.ingest import put_messages

    spent = 0.0
    for sess in space.sessions:
        request = PutMessagesRequest(messages=[
            MessageIn(seq=t.seq, role=t.role, speaker=t.speaker, content=t.text, at=t.at)
            for t in sess.turns])
        t0 = time.perf_counter()
        put_messages(services, space.space, str(sess.number), request)
        spent += time.perf_counter() - t0
    return spent


def ask(services: Any, space: Space, q: Question, recipe: str, baselines: Any,
        errors: list[dict], hook: bool = True) -> list[dict]:
    """One question through Annals (20 cards), both baselines and the hook-sized request.
    Fills q.results; returns the Annals cards."""
    from chalicelib.domain.models import RecallRequest
    from chalicelib.usecases.recall import recall

    annals_cards: list[dict] = []
    for key in SYSTEMS:
        t0 = time.perf_counter()
        try:
            if key == "annals":
                req = RecallRequest(query=q.question, now=q.now, limit=CARDS, max_cards=CARDS,
                                    recipe=recipe)
                response = recall(services, space.space, req)
                got, verdict = response.cards, response.verdict
            else:
                got = baselines.search(services, space, key, q.question)
        except Exception as exc:  # report, keep measuring the rest
            errors.append({"question": q.id, "system": key, "error": repr(exc),
                           "traceback": traceback.format_exc(limit=6)})
            q.results[key] = {"error": repr(exc)}
            continue
        ms = (time.perf_counter() - t0) * 1000
        cards = [card_record(c, space.tz) for c in got]
        q.results[key] = {**score(q, cards), "ms": ms}
        if key == "annals":
            annals_cards = cards
            q.results[key]["verdict"] = verdict
    if hook:
        try:
            req = RecallRequest(query=q.question, now=q.now, recipe=recipe)
            got = [card_record(c, space.tz) for c in recall(services, space.space, req).cards]
            q.results["hook"] = {"cards": len(got), "hit@1": M.card_hit(q.evidence, got, 1),
                                 "hit@2": M.card_hit(q.evidence, got, 2)}
        except Exception as exc:
            errors.append({"question": q.id, "system": "hook", "error": repr(exc)})
            q.results["hook"] = {"error": repr(exc)}
    return annals_cards


def run(parts: Sequence[str] = ("zh",), *, recipe: str | None = None,
        embedder: str = "e5-local", limit_questions: int | None = None,
        json_path: Path | str | None = None, dump_path: Path | str | None = None,
        progress: bool = True, zh_path: Path | str = ZH_LIFE,
        xl_path: Path | str = CROSSLINGUAL, data_dir: Path | str | None = None) -> dict:
    """With `data_dir`, the spaces are built there and reused by the next run that names it
    (as `bench locomo --data-dir`: try recall settings without building again)."""
    from tqdm import tqdm

    from .locomo import PlainBaselines, make_services

    started = time.perf_counter()
    load_before = os.getloadavg()
    zh_data, xl_data = load_files(parts, zh_path, xl_path)
    problems = validate_zh_life(zh_data)
    if xl_data is not None:
        problems += validate_crosslingual(xl_data, zh_data)
    if problems:
        raise ValueError("the bench data does not validate: " + "; ".join(problems[:5]))
    spaces, questions = load(zh_data, xl_data, parts)
    if limit_questions is not None:
        kept: dict[tuple[str, str], int] = {}
        trimmed = []
        for q in questions:
            n = kept.get((q.space, q.group), 0)
            if n < limit_questions:
                trimmed.append(q)
                kept[(q.space, q.group)] = n + 1
        questions = trimmed
    needed = {q.space for q in questions}
    spaces = [s for s in spaces if s.id in needed]
    errors: list[dict] = []
    space_reports: list[dict] = []
    dump_lines: list[str] = []
    with run_dir(data_dir, "annals-bench-zh-") as tmp:
        built = read_built(tmp)
        t0 = time.perf_counter()
        services = make_services(tmp, embedder)
        services.embedder.embed_query("warm up")
        services.embedder.embed_passages(["warm up"])
        baselines = PlainBaselines(tmp, services.embedder)
        setup_s = time.perf_counter() - t0
        annals_recipe = recipe or services.settings.recipe
        from chalicelib.usecases.extract import run_extraction

        by_id = {s.id: s for s in spaces}
        for space in tqdm(spaces, desc="build spaces", unit="space", file=sys.stderr,
                          disable=not progress):
            if space.id in built:
                space_reports.append(built[space.id])
                continue
            ingest_s = ingest(services, space)
            t0 = time.perf_counter()
            events = run_extraction(services, space.space)
            extract_s = time.perf_counter() - t0
            t0 = time.perf_counter()
            baselines.index(services, space)
            space_reports.append({"space": space.id, "lang": space.lang,
                                  "sessions": len(space.sessions),
                                  "messages": space.message_count, "events": len(events),
                                  "ingest_s": ingest_s, "extract_s": extract_s,
                                  "baseline_index_s": time.perf_counter() - t0})
            built[space.id] = space_reports[-1]
            write_built(tmp, built)
        from chalicelib.domain.models import RecallRequest
        from chalicelib.usecases.recall import recall

        for query in ("warm up", "上周二我去哪了"):  # first-call imports are not latency
            recall(services, spaces[0].space, RecallRequest(query=query, now=spaces[0].now,
                                                           max_cards=CARDS))
        t_ask = time.perf_counter()
        asked: dict[tuple[str, str, datetime], tuple[dict, list[dict]]] = {}
        for q in tqdm(questions, desc="ask", unit="q", file=sys.stderr, disable=not progress):
            key = (q.space, q.question, q.now)  # a zh question and its cross-lingual twin
            if key in asked:
                q.results = dict(asked[key][0])
                cards = asked[key][1]
            else:
                cards = ask(services, by_id[q.space], q, annals_recipe, baselines, errors)
                asked[key] = (q.results, cards)
            dump_lines.append(json.dumps({"id": q.id, "group": q.group, "question": q.question,
                                          "evidence": q.evidence, "cards": cards},
                                         ensure_ascii=False))
        ask_s = time.perf_counter() - t_ask
    report: dict[str, Any] = {
        "benchmark": "zh+crosslingual" if "crosslingual" in parts else "zh",
        "parts": list(parts),
        "config": {"embedder": embedder, "annals_recipe": annals_recipe,
                   "baselines": list(BASELINES), "cards": CARDS,
                   "limit_questions": limit_questions},
        "sizes": sizes(zh_data, xl_data),
        "spaces": space_reports,
        "errors": errors,
        "setup_s": setup_s, "ask_s": ask_s,
        "load_average": {"before": load_before, "after": os.getloadavg(),
                         "cpus": os.cpu_count()},
    }
    if "zh" in parts:
        report["zh"] = table([q for q in questions if q.group == "zh"])
        report["zh_per_space"] = {
            s.id: {"questions": sum(q.space == s.id for q in questions if q.group == "zh"),
                   **{key: summarize([q for q in questions if q.group == "zh"
                                      and q.space == s.id], key)["R@10"] for key in SYSTEMS}}
            for s in spaces if s.lang == "zh"}
    if "crosslingual" in parts:
        report["crosslingual"] = crosslingual_table(questions)
    report["runtime_s"] = time.perf_counter() - started
    report["per_question"] = [
        {"id": q.id, "space": q.space, "group": q.group, "kind": q.kind, "lang": q.lang,
         "question": q.question, "now": q.now.isoformat(), "evidence": q.evidence,
         "window": None if q.window is None else [d.isoformat() for d in q.window],
         "same_as": q.same_as, "results": q.results} for q in questions]
    write_outputs(report, json_path, dump_path, dump_lines, indent=1, default=str)
    return report


# ------------------------------------------------------------------ tables


def _f(value: float | None) -> str:
    return "  —  " if value is None else f"{value:.3f}"


def _s(value: float | None) -> str:
    return "  —   " if value is None else f"{value:+.3f}"


def format_zh(t: dict) -> list[str]:
    head = (f"{'kind':<8}{'n':>4} | {'Annals R@1  R@5  R@10':>22} | {'BM25 R@1  R@5  R@10':>20}"
            f" | {'dense R@1  R@5  R@10':>20} | {'Δ R@10':>7} | {'t_hit@5 A/B/D':>17}"
            f" | {'hook hit@2':>10}")
    lines = [head, "-" * len(head)]
    for kind, row in t.items():
        def triple(key: str, row: dict = row) -> str:
            r = row[key]
            return f"{_f(r['R@1'])} {_f(r['R@5'])} {_f(r['R@10'])}"

        th = ("/".join(_f(row[k]["temporal_hit@5"]) for k in SYSTEMS)
              if row["annals"]["temporal_questions"] else "")
        lines.append(f"{kind:<8}{row['questions']:>4} | {triple('annals'):>22} | "
                     f"{triple('bm25'):>20} | {triple('dense'):>20} | "
                     f"{_s(row['delta_vs_best_baseline']['R@10']):>7} | {th:>17} | "
                     f"{_f(row['hook']['hit@2']):>10}")
    return lines


def format_crosslingual(x: dict) -> list[str]:
    lines = [f"{'direction':<34}{'n':>4} | {'Annals R@10':>11} | {'BM25 R@10':>9} | "
             f"{'dense R@10':>10} | {'hook hit@2':>10}"]
    lines.append("-" * len(lines[0]))
    names = {"en→zh": ("en→zh: English q, Chinese chats", "  same evidence, Chinese q"),
             "zh→en": ("zh→en: Chinese q, English chat", "  same evidence, English q")}
    for direction, row in x.items():
        cross_name, same_name = names[direction]
        for part, name in (("cross", cross_name), ("same", same_name)):
            lines.append(f"{name:<34}{row['questions']:>4} | "
                         + " | ".join(f"{_f(row[k][part]['R@10']):>{w}}" for k, w in
                                      (("annals", 11), ("bm25", 9), ("dense", 10)))
                         + f" | {_f(row['hook'][part]['hit@2']):>10}")
        lines.append(f"{'  ratio cross / same':<34}{'':>4} | "
                     + " | ".join(f"{_f(row[k]['ratio@10']):>{w}}" for k, w in
                                  (("annals", 11), ("bm25", 9), ("dense", 10))) + " |")
        kinds = ", ".join(f"{kind} {_f(v['annals']['cross'])}/{_f(v['annals']['same'])}"
                          for kind, v in row["by_kind"].items())
        lines.append(f"  Annals R@10 by kind, cross/same: {kinds}")
    return lines


def format_report(report: dict) -> str:
    cfg = report["config"]
    sz = report["sizes"]["zh_life_total"]
    lines = []
    if "zh" in report:
        lines += [f"Chinese bench (bench/data/zh_life.json): {sz['spaces']} spaces, "
                  f"{sz['sessions']} sessions, {sz['turns']} turns, "
                  f"{report['zh']['all']['questions']} questions; embedder {cfg['embedder']}, "
                  f"{cfg['cards']} cards, recipe {cfg['annals_recipe']}; Δ = Annals − best "
                  "baseline; hook = the default request (gated)",
                  *format_zh(report["zh"]), ""]
        lines.append("Annals recalls with no card at all (of 20 asked), per kind: " + ", ".join(
            f"{kind} {_f(row['annals']['zero_cards'])}" for kind, row in report["zh"].items())
            + "; verdicts (all): " + ", ".join(
                f"{v} {n}" for v, n in report["zh"]["all"]["annals"].get("verdicts",
                                                                         {}).items()))
        lines.append("R@10 per space (Annals / BM25 / dense): " + "; ".join(
            f"{sid} {_f(v['annals'])}/{_f(v['bm25'])}/{_f(v['dense'])} (n={v['questions']})"
            for sid, v in report["zh_per_space"].items()))
        lines.append("")
    if "crosslingual" in report:
        lines += ["Cross-lingual bench (bench/data/crosslingual.json): R@10 asked across "
                  "languages vs in the chat's language, on identical evidence",
                  *format_crosslingual(report["crosslingual"]), ""]
    for s in report["spaces"]:
        lines.append(f"  {s['space']}: {s['sessions']} sessions, {s['messages']} msgs, "
                     f"{s['events']} events; ingest {s['ingest_s']:.1f} s, extract "
                     f"{s['extract_s']:.1f} s, baselines {s['baseline_index_s']:.1f} s")
    lines += footer(report, "calls failed",
                    f"runtime {report['runtime_s']:.0f} s (asking {report['ask_s']:.0f} s)")
    return "\n".join(lines)
