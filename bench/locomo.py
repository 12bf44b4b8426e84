"""LoCoMo retrieval bench: ingest each conversation as a space, extract it the way users get
it, ask every scored question with the Annals recipe and two baselines, and score the
evidence turns the returned cards cite.

Mapping (documented in bench/README.md):
- conversation file `26.json` → space `locomo-26`, in a fresh temporary data dir;
- LoCoMo `session_N` → Annals session "N", so a card source (session "N", seq a..b) cites
  dia_ids DN:a..DN:b;
- seq = the turn number of the dia_id; speaker = the turn's speaker; role = user for both
  (two people talk; an assistant turn is an AI's and makes no event of its own);
- message time = the session's date time ("1:56 pm on 8 May, 2023"), read as UTC (LoCoMo
  names no zone); every turn of a session carries that same time;
- an image turn's BLIP caption is appended as "[shares a photo: <caption>]".
The observation / summary / event fields of the files are never read.

Baselines are plain retrieval over the raw turns, as a chat host would build it without
Annals: one document per turn ("Speaker: text"), BM25 (the same FTS5 + tokenizer) or dense
(the same e5 model, plain passage embedding), top 20 turns. They live in their own index
file, so nothing Annals adds (events, reply context, names, dates) helps them.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from tqdm import tqdm

from . import chronicle as CH
from . import metrics as M
from .graph_checks import entity_check
from .runs import footer, read_built, run_dir, write_built, write_outputs

BASELINES = ("bm25", "dense")
# The graph step (chalicelib/usecases/recall/graph.py) measured against the same recall
# without it, in the same run: this recipe is the default with graph_seeds = 0.
NO_GRAPH = "annals_no_graph"
NO_GRAPH_RECIPE = "hybrid_no_graph"
CARDS = 20  # cards asked for (and dumped) per question
ONE_US = timedelta(microseconds=1)


# ------------------------------------------------------------------ loading


@dataclass
class Turn:
    seq: int
    speaker: str
    role: str
    text: str


@dataclass
class Session:
    number: int
    at: datetime
    turns: list[Turn]


@dataclass
class Conversation:
    stem: str
    speaker_a: str
    speaker_b: str
    sessions: list[Session]
    qa: list[dict]

    @property
    def space(self) -> str:
        return f"locomo-{self.stem}"

    @property
    def last_time(self) -> datetime:
        return max(s.at for s in self.sessions)

    @property
    def message_count(self) -> int:
        return sum(len(s.turns) for s in self.sessions)

    def session_day(self, number: int) -> date | None:
        for s in self.sessions:
            if s.number == number:
                return s.at.date()
        return None


def parse_session_time(text: str) -> datetime:
    """"1:56 pm on 8 May, 2023" → an aware datetime in UTC."""
    clean = re.sub(r"\s+", " ", text.strip())
    for fmt in ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y", "%I:%M %p on %B %d, %Y"):
        try:
            return datetime.strptime(clean, fmt).replace(tzinfo=UTC)
        except ValueError:
            continue
    import dateparser

    parsed = dateparser.parse(clean, languages=["en"],
                              settings={"TIMEZONE": "UTC", "RETURN_AS_TIMEZONE_AWARE": True})
    if parsed is None:
        raise ValueError(f"cannot read session time {text!r}")
    return parsed.astimezone(UTC)


def turn_text(turn: dict) -> str:
    text = str(turn.get("text") or "").strip()
    caption = str(turn.get("blip_caption") or "").strip()
    if caption:
        text = f"{text} [shares a photo: {caption}]".strip()
    return text


def load_conversation(path: Path | str) -> Conversation:
    path = Path(path)
    data = json.loads(path.read_text(encoding="utf-8"))
    speaker_a, speaker_b = data["speaker_a"], data["speaker_b"]
    sessions: list[Session] = []
    for key, turns in data.items():
        m = re.fullmatch(r"session_(\d+)", key)
        if not m or not isinstance(turns, list) or not turns:
            continue
        number = int(m.group(1))
        at = parse_session_time(data[f"{key}_date_time"])
        out: list[Turn] = []
        for i, turn in enumerate(turns, start=1):
            dm = re.fullmatch(r"D(\d+):(\d+)", str(turn.get("dia_id", "")).strip())
            seq = int(dm.group(2)) if dm else i
            text = turn_text(turn)
            if not text:
                continue
            speaker = str(turn.get("speaker") or "")
            # Two people talk: both are users (an assistant turn is the AI's, which makes
            # no event of its own: extract.offline.tells).
            out.append(Turn(seq=seq, speaker=speaker, role="user", text=text))
        sessions.append(Session(number=number, at=at, turns=out))
    sessions.sort(key=lambda s: s.number)
    return Conversation(stem=path.stem, speaker_a=speaker_a, speaker_b=speaker_b,
                        sessions=sessions, qa=list(data.get("qa", [])))


def swap_names(question: str, asking: Conversation, answering: Conversation) -> str:
    """A question of `asking` as put to `answering`'s space: its speaker_a / speaker_b (as
    whole words, possessives included) become the answering conversation's speaker_a /
    speaker_b, in one pass, so a name alone cannot refuse a foreign question."""
    names = {asking.speaker_a: answering.speaker_a, asking.speaker_b: answering.speaker_b}
    pattern = re.compile(r"(?<![^\W\d_])(" + "|".join(
        re.escape(n) for n in sorted(names, key=len, reverse=True) if n) + r")(?![^\W\d_])")
    return pattern.sub(lambda m: names[m.group(1)], question)


# ------------------------------------------------------------------ cards


def card_record(card: Any) -> dict:
    """A recall Card → the dump/metrics record: cited dia_ids, its dates, its text."""
    sources = M.source_turns((s.session, s.seq_start, s.seq_end) for s in card.sources)
    start = end = None
    if card.when is not None:
        start = card.when.start.date().isoformat()
        end = ((card.when.end - ONE_US).date() + timedelta(days=1)).isoformat()
    return {"sources": sources, "date_start": start, "date_end": end, "text": card.text}


# ------------------------------------------------------------------ running


@dataclass
class Question:
    conversation: str
    index: int
    category: int
    question: str
    answer: str
    evidence: list[str]
    window: M.Window | None
    results: dict[str, dict] = field(default_factory=dict)  # recipe key → scores + latency
    embed_ms: float | None = None


def scored_questions(conv: Conversation, limit: int | None = None) -> list[Question]:
    out: list[Question] = []
    for index, qa in enumerate(conv.qa):
        category = int(qa.get("category", 0))
        if category == 5:
            continue
        evidence = M.split_evidence(qa.get("evidence", []))
        answer = qa.get("answer", "")
        ref = None
        if evidence:  # a date without a year is read in the year of the evidence session
            ref = conv.session_day(int(evidence[0][1:].split(":")[0]))
        ref = ref or conv.last_time.date()
        out.append(Question(conversation=conv.stem, index=index, category=category,
                            question=str(qa["question"]), answer=str(answer),
                            evidence=evidence, window=M.answer_window(answer, ref)))
        if limit is not None and len(out) >= limit:
            break
    return out


def make_services(data_dir: Path, embedder: str):
    from chalicelib.config import Settings
    from chalicelib.wiring import build_services

    settings = Settings(data_dir=data_dir, embedder=embedder, schedule="off", backend="local")
    return build_services(settings, index="inline")  # ingest time includes the embedding


def ingest_conversation(services, conv: Conversation, progress: bool) -> float:
    """put_messages per session, exactly as the HTTP route does, indexing inline so the
    time includes embedding every message. Returns wall seconds."""
    from chalicelib.domain.models import MessageIn, PutMessagesRequest
    from chalicelib.usecases.ingest import put_messages

    spent = 0.0
    for sess in tqdm(conv.sessions, desc=f"ingest {conv.stem}", unit="session",
                     file=sys.stderr, disable=not progress):
        request = PutMessagesRequest(messages=[
            MessageIn(seq=t.seq, role=t.role, speaker=t.speaker, content=t.text, at=sess.at)
            for t in sess.turns
        ])
        t0 = time.perf_counter()
        put_messages(services, conv.space, str(sess.number), request)
        spent += time.perf_counter() - t0
    return spent


class PlainBaselines:
    """BM25-only and dense-only search over one plain document per turn."""

    def __init__(self, data_dir: Path, embedder: Any):
        from chalicelib.adapters.sqlite.db import SQLiteDB
        from chalicelib.adapters.sqlite.index import FtsKeywordIndex, NumpyVectorIndex

        db = SQLiteDB(data_dir / "baselines.db")
        self.embedder = embedder
        self.keywords = FtsKeywordIndex(db)
        self.vectors = NumpyVectorIndex(db, embedder.dim)

    def index(self, services: Any, conv: Conversation) -> None:
        from chalicelib.usecases.indexing import message_doc

        for sess in conv.sessions:
            docs = [message_doc(m) for m in services.store.get_messages(conv.space,
                                                                        str(sess.number))]
            vectors = self.embedder.embed_passages([d.text for d in docs])
            docs = [d.model_copy(update={"vector": v.tolist()}) for d, v in zip(docs, vectors,
                                                                                 strict=True)]
            self.keywords.upsert(docs)
            self.vectors.upsert(docs)

    def search(self, services: Any, conv: Conversation, kind: str, query: str,
               k: int = CARDS) -> list[Any]:
        from chalicelib.usecases.recall.cards import load_cards
        from chalicelib.usecases.recall.fusion import Candidate

        if kind == "bm25":
            hits = self.keywords.keyword_search(conv.space, query, k)
        else:
            hits = self.vectors.vector_search(conv.space, self.embedder.embed_query(query), k)
        pairs = load_cards(services.store, conv.space, [Candidate(h.id, h.score) for h in hits])
        return [card for card, _ in pairs]


def ask(services, conv: Conversation, q: Question, recipes: dict[str, str],
        errors: list[dict], baselines: PlainBaselines | None = None) -> dict[str, list[dict]]:
    """One question through recall for each recipe; fills q.results. Returns the records."""
    from chalicelib.domain.models import RecallRequest
    from chalicelib.usecases.recall import recall

    t0 = time.perf_counter()
    services.embedder.embed_query(q.question)
    q.embed_ms = (time.perf_counter() - t0) * 1000
    records: dict[str, list[dict]] = {}
    for key, recipe in recipes.items():
        req = RecallRequest(query=q.question, now=conv.last_time, limit=CARDS,
                            max_cards=CARDS, recipe=recipe)
        t0 = time.perf_counter()
        try:
            if baselines is not None and key in BASELINES:
                result_cards = baselines.search(services, conv, key, q.question)
            else:
                result_cards = recall(services, conv.space, req).cards
        except Exception as exc:  # report, keep measuring the rest
            errors.append({"conversation": conv.stem, "question_index": q.index,
                           "recipe": recipe, "error": repr(exc),
                           "traceback": traceback.format_exc(limit=6)})
            q.results[key] = {"error": repr(exc)}
            records[key] = []
            continue
        ms = (time.perf_counter() - t0) * 1000
        cards = [card_record(c) for c in result_cards]
        records[key] = cards
        q.results[key] = {**M.question_scores(q.evidence, cards, q.window), "ms": ms}
    return records


# Hook-sized recalls: the request a chat hook sends (no max_cards, so the recipe's default),
# once with the admission gate as the recipe sets it and once with it switched off.
HOOK_PASSES: dict[str, float | None] = {"gated": None, "ungated": 0.0}


def hook_recall(services, space: str, question: str, now: datetime, recipe: str,
                min_relevance: float | None) -> tuple[list[dict], list[float | None]]:
    """One default-sized recall → (card records, each card's gate relevance or None)."""
    from chalicelib.domain.models import RecallRequest
    from chalicelib.usecases.recall import recall

    req = RecallRequest(query=question, now=now, recipe=recipe, min_relevance=min_relevance)
    cards = recall(services, space, req).cards
    return ([card_record(c) for c in cards],
            [c.score_parts.get("relevance") for c in cards])


def ask_hook(services, conv: Conversation, q: Question, recipe: str, errors: list[dict],
             answering: Conversation | None = None) -> None:
    """The hook passes for one question: asked in its own space (own-question hit@1/hit@2),
    or, with `answering`, in that conversation's space with the names swapped (foreign:
    should come back empty). Fills q.results["hook_<pass>"] / ["foreign_<pass>"]."""
    space_conv = answering or conv
    text = q.question if answering is None else swap_names(q.question, conv, answering)
    for name, min_relevance in HOOK_PASSES.items():
        key = f"{'foreign' if answering else 'hook'}_{name}"
        try:
            cards, relevance = hook_recall(services, space_conv.space, text,
                                           space_conv.last_time, recipe, min_relevance)
        except Exception as exc:  # report, keep measuring the rest
            errors.append({"conversation": conv.stem, "question_index": q.index,
                           "recipe": recipe, "pass": key, "error": repr(exc),
                           "traceback": traceback.format_exc(limit=6)})
            q.results[key] = {"error": repr(exc)}
            continue
        result: dict[str, Any] = {"cards": len(cards), "abstained": M.abstained(cards),
                                  "relevance": relevance}
        if answering is None:
            result.update({f"hit@{n}": M.card_hit(q.evidence, cards, n) for n in (1, 2)})
        else:
            result["asked_in"] = answering.stem
        q.results[key] = result


FOLLOW_UP = "Can you tell me more about that?"
PLAIN_QUERY_RECIPE = "hybrid_plain_query"


def context_pass(services, conversations: Sequence[Conversation],
                 questions: Sequence[Question], recipe: str, errors: list[dict],
                 progress: bool) -> dict:
    """The query-context steps (chalicelib/usecases/recall/query.py), each beside the same
    recall with them off (recipe hybrid_plain_query), in the same spaces:
    - compound: two consecutive questions asked as one message ("Q1 Also, Q2") with 4 cards:
      the share whose cards cite evidence of both (intents searched apart, or not);
    - follow-up: "Can you tell me more about that?" with the question as the previous user
      turn (`recent`), at the default max_cards: hit@2 with the recent turn read, or not;
    - distracted: the question itself with an unrelated earlier question as the recent turn:
      hit@2, to check the recent turns do not pull a clear question off its answer."""
    from chalicelib.domain.models import RecallRequest, RecentTurn
    from chalicelib.usecases.recall import recall

    def cards(conv, query, recent=(), recipe_name=recipe, max_cards=None):
        req = RecallRequest(query=query, now=conv.last_time, recipe=recipe_name,
                            max_cards=max_cards,
                            recent=[RecentTurn(role="user", content=t) for t in recent])
        return [card_record(c) for c in recall(services, conv.space, req).cards]

    out = {name: {"with": [], "without": []} for name in ("compound", "follow_up",
                                                           "distracted")}
    by_conv = {c.stem: c for c in conversations}
    for stem, conv in by_conv.items():
        mine = [q for q in questions if q.conversation == stem and q.evidence]
        for q, other in tqdm(list(zip(mine, mine[1:] + mine[:1], strict=True)),
                             desc=f"context {stem}", unit="q", file=sys.stderr,
                             disable=not progress):
            try:
                joint = f"{q.question} Also, {other.question}"
                for key, name in (("with", recipe), ("without", PLAIN_QUERY_RECIPE)):
                    got = cards(conv, joint, recipe_name=name, max_cards=4)
                    out["compound"][key].append(M.card_hit(q.evidence, got, 4)
                                                and M.card_hit(other.evidence, got, 4))
                    got = cards(conv, FOLLOW_UP, recent=[q.question], recipe_name=name)
                    out["follow_up"][key].append(M.card_hit(q.evidence, got, 2))
                    got = cards(conv, q.question, recent=[other.question], recipe_name=name)
                    out["distracted"][key].append(M.card_hit(q.evidence, got, 2))
            except Exception as exc:  # report, keep measuring the rest
                errors.append({"conversation": stem, "question_index": q.index,
                               "pass": "context", "error": repr(exc)})
    return {name: {key: M.mean([float(v) for v in values]) for key, values in parts.items()}
            | {"questions": len(parts["with"])} for name, parts in out.items()}


def foreign_pairs(conversations: Sequence[Conversation]) -> list[tuple[Conversation,
                                                                      Conversation]]:
    """Each conversation's questions go to the next conversation's space (the last one's to
    the first): with two, both ways. None with a single conversation."""
    n = len(conversations)
    return [(conv, conversations[(i + 1) % n]) for i, conv in enumerate(conversations)] \
        if n >= 2 else []


def hook_summary(questions: Sequence[Question], key: str) -> dict:
    rows = [q.results[key] for q in questions if "error" not in q.results.get(key, {"error": 1})]
    out: dict[str, Any] = {"questions": len(rows),
                           "cards_returned": M.mean(r["cards"] for r in rows),
                           "zero_cards": M.mean(r["abstained"] for r in rows)}
    if key.startswith("hook_"):
        out.update({f"hit@{n}": M.mean(r[f"hit@{n}"] for r in rows) for n in (1, 2)})
    else:
        out["abstention"] = out["zero_cards"]
    return out


def hook_report(questions: Sequence[Question], conversations: Sequence[Conversation],
                recipe: Any) -> dict:
    """Own-question hit@1/hit@2 and foreign abstention at the default max_cards, gated and
    ungated, overall and per space (the store the gate runs in: its own conversation's
    questions, and the foreign questions asked in it)."""
    pairs = foreign_pairs(conversations)
    report: dict[str, Any] = {
        "max_cards": recipe.max_cards, "min_relevance": recipe.min_relevance,
        "min_relevance_wide": min(recipe.min_relevance_wide, recipe.min_relevance),
        "term_weight": recipe.term_weight,
        "foreign_pairs": [[a.stem, b.stem] for a, b in pairs],  # asking → answering space
        "own": {p: hook_summary(questions, f"hook_{p}") for p in HOOK_PASSES},
        "foreign": ({p: hook_summary(questions, f"foreign_{p}") for p in HOOK_PASSES}
                    if pairs else None),
        "per_space": {},
    }
    for conv in conversations:
        own = [q for q in questions if q.conversation == conv.stem]
        foreign = [q for q in questions
                   if q.results.get("foreign_gated", {}).get("asked_in") == conv.stem]
        report["per_space"][conv.stem] = {
            "own": {p: hook_summary(own, f"hook_{p}") for p in HOOK_PASSES},
            "foreign_from": sorted({q.conversation for q in foreign}),
            "foreign": ({p: hook_summary(foreign, f"foreign_{p}") for p in HOOK_PASSES}
                        if pairs else None)}
    own = report["own"]
    report["own_hit@2_drop"] = _minus(own["ungated"]["hit@2"], own["gated"]["hit@2"])
    report["own_hit@1_drop"] = _minus(own["ungated"]["hit@1"], own["gated"]["hit@1"])
    return report


def _minus(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a - b


def warm_up(services, conv: Conversation, recipes: dict[str, str]) -> None:
    from chalicelib.domain.models import RecallRequest
    from chalicelib.usecases.recall import recall

    for recipe in recipes.values():
        for query in ("warm up", "what happened last week"):
            try:
                recall(services, conv.space, RecallRequest(query=query, now=conv.last_time,
                                                           max_cards=CARDS, recipe=recipe))
            except Exception:  # the timed calls will record it
                return


def summarize(questions: Sequence[Question], key: str) -> dict:
    rows = [q.results[key] for q in questions if "error" not in q.results.get(key, {"error": 1})]
    out: dict[str, Any] = {"questions": len(rows)}
    for name in [f"R@{k}" for k in M.KS] + [f"hit@{k}" for k in M.KS]:
        out[name] = M.mean(r[name] for r in rows)
    timed = [r for r in rows if r["temporal_hit@5"] is not None]
    out["temporal_hit@5"] = M.mean(float(r["temporal_hit@5"]) for r in timed)
    out["temporal_overlap@5"] = M.mean(float(r["temporal_overlap@5"]) for r in timed)
    out["temporal_questions"] = len(timed)
    out["chars@10"] = M.mean(r["chars@10"] for r in rows)
    out["chars_per_card"] = (sum(r["chars@10"] for r in rows)
                             / max(1, sum(min(10, r["cards"]) for r in rows)))
    out["cards_returned"] = M.mean(r["cards"] for r in rows)
    ms = [r["ms"] for r in rows]
    out["latency_ms"] = {"p50": M.percentile(ms, 50), "p95": M.percentile(ms, 95),
                         "mean": M.mean(ms)}
    by_cat: dict[str, dict] = {}
    for cat in (1, 2, 3, 4):
        sub = [q.results[key] for q in questions
               if q.category == cat and "error" not in q.results.get(key, {"error": 1})]
        by_cat[str(cat)] = {"questions": len(sub), "R@10": M.mean(r["R@10"] for r in sub),
                            "hit@10": M.mean(r["hit@10"] for r in sub)}
    out["by_category"] = by_cat
    return out


HIGHER_IS_BETTER = [f"R@{k}" for k in M.KS] + [f"hit@{k}" for k in M.KS] + [
    "temporal_hit@5", "temporal_overlap@5"]


def deltas(summary: dict[str, dict]) -> dict[str, float | None]:
    """Annals minus the best baseline, per metric (for latency and size: minus the lowest)."""
    out: dict[str, float | None] = {}
    base = [summary[b] for b in BASELINES if b in summary]
    ann = summary["annals"]

    def pick(get: Callable[[dict], float | None], best: Callable) -> float | None:
        vals = [v for v in (get(b) for b in base) if v is not None]
        mine = get(ann)
        return None if mine is None or not vals else mine - best(vals)

    for name in HIGHER_IS_BETTER:
        out[name] = pick(lambda s, n=name: s[n], max)
    for cat in ("1", "2", "3", "4"):
        out[f"R@10 cat{cat}"] = pick(lambda s, c=cat: s["by_category"][c]["R@10"], max)
    out["chars@10"] = pick(lambda s: s["chars@10"], min)
    out["p50_ms"] = pick(lambda s: s["latency_ms"]["p50"], min)
    out["p95_ms"] = pick(lambda s: s["latency_ms"]["p95"], min)
    return out


def run_locomo(paths: Sequence[Path | str], *, recipe: str | None = None,
               limit_questions: int | None = None, embedder: str = "e5-local",
               json_path: Path | str | None = None, dump_path: Path | str | None = None,
               progress: bool = True, data_dir: Path | str | None = None) -> dict:
    """The whole bench in a fresh temporary data dir; with `data_dir`, in that one, and a
    conversation already built there (ingested, extracted and indexed by an earlier run of
    the same tree: `built.json`) is not built again — for trying recall settings without
    paying for ingest and extraction each time. Delete the dir when extraction changes."""
    with run_dir(data_dir, "annals-bench-") as tmp:
        return _run_locomo(paths, tmp, recipe=recipe, limit_questions=limit_questions,
                           embedder=embedder, json_path=json_path, dump_path=dump_path,
                           progress=progress)


def _run_locomo(paths: Sequence[Path | str], tmp: Path, *, recipe: str | None,
                limit_questions: int | None, embedder: str,
                json_path: Path | str | None, dump_path: Path | str | None,
                progress: bool) -> dict:
    started = time.perf_counter()
    load_before = os.getloadavg()
    conversations = [load_conversation(p) for p in paths]
    path_of = {Path(p).stem: Path(p) for p in paths}
    all_questions: list[Question] = []
    errors: list[dict] = []
    conv_reports: list[dict] = []
    dump_lines: list[str] = []
    built = read_built(tmp)
    t0 = time.perf_counter()
    services = make_services(tmp, embedder)
    services.embedder.embed_query("warm up")  # model load is not ingest time
    services.embedder.embed_passages(["warm up"])
    baselines = PlainBaselines(tmp, services.embedder)
    setup_s = time.perf_counter() - t0
    annals_recipe = recipe or services.settings.recipe
    recipes = {"annals": annals_recipe, NO_GRAPH: NO_GRAPH_RECIPE,
               **{b: b for b in BASELINES}}
    from chalicelib.ports import iter_events
    from chalicelib.usecases.extract import run_extraction

    warmed = False
    for conv in conversations:
        if conv.stem in built:  # built by an earlier run into this data dir
            ingest_s, extract_s = built[conv.stem]["ingest_s"], built[conv.stem]["extract_s"]
            events = [e for e in iter_events(services.store, conv.space)
                      if e.status == "active" and e.kind == "event"]
        else:
            ingest_s = ingest_conversation(services, conv, progress)
            t0 = time.perf_counter()
            events = run_extraction(services, conv.space)
            extract_s = time.perf_counter() - t0
            baselines.index(services, conv)
            built[conv.stem] = {"ingest_s": ingest_s, "extract_s": extract_s}
            write_built(tmp, built)
        chronicle = chronicle_figures(services, conv, path_of[conv.stem])
        questions = scored_questions(conv, limit_questions)
        if not warmed:  # first-call imports and caches are not per-question latency
            warm_up(services, conv, recipes)
            warmed = True
        for q in tqdm(questions, desc=f"ask {conv.stem}", unit="q", file=sys.stderr,
                      disable=not progress):
            records = ask(services, conv, q, recipes, errors, baselines)
            dump_lines.append(json.dumps({"conversation": conv.stem,
                                          "question_index": q.index,
                                          "cards": records["annals"][:CARDS]},
                                         ensure_ascii=False))
            ask_hook(services, conv, q, annals_recipe, errors)
        all_questions.extend(questions)
        conv_reports.append({
            "conversation": conv.stem, "space": conv.space,
            "sessions": len(conv.sessions), "messages": conv.message_count,
            "events": len(events), "questions": len(questions),
            "ingest_s": ingest_s, "ingest_msg_per_s": conv.message_count / ingest_s,
            "extract_s": extract_s,
            "extract_ms_per_message": 1000 * extract_s / max(1, conv.message_count),
            "chronicle": chronicle.as_dict(),
            "R@10": {k: M.mean(q.results[k].get("R@10", float("nan")) for q in questions)
                     for k in recipes},
            "graph": entity_check(services, conv.space),
        })
    # Foreign questions: every space is built now; each conversation's questions are
    # asked in the next one's space, names swapped, at the default max_cards.
    for asking, answering in foreign_pairs(conversations):
        mine = [q for q in all_questions if q.conversation == asking.stem]
        for q in tqdm(mine, desc=f"foreign {asking.stem}→{answering.stem}", unit="q",
                      file=sys.stderr, disable=not progress):
            ask_hook(services, asking, q, annals_recipe, errors, answering=answering)
    from chalicelib.usecases.recall.recipes import resolve

    hook = hook_report(all_questions, conversations,
                       resolve(annals_recipe, services.settings))
    query_context = context_pass(services, conversations, all_questions, annals_recipe,
                                 errors, progress)
    summary = {key: summarize(all_questions, key) for key in recipes}
    messages = sum(c["messages"] for c in conv_reports)
    ingest_s = sum(c["ingest_s"] for c in conv_reports)
    embed_ms = [q.embed_ms for q in all_questions if q.embed_ms is not None]
    cat2 = [q for q in all_questions if q.category == 2]
    report = {
        "benchmark": "locomo",
        "conversations": conv_reports,
        "graph": graph_report(summary),
        "config": {"embedder": embedder, "annals_recipe": annals_recipe,
                   "no_graph_recipe": NO_GRAPH_RECIPE,
                   "baselines": list(BASELINES), "cards": CARDS,
                   "limit_questions": limit_questions, "time_zone": "UTC",
                   "paths": [str(p) for p in paths]},
        "questions": len(all_questions),
        "recipes": summary,
        "delta_vs_best_baseline": deltas(summary),
        "hook": hook,
        "query_context": query_context,
        "query_embed_ms": {"p50": M.percentile(embed_ms, 50), "p95": M.percentile(embed_ms, 95)},
        "ingest": {"messages": messages, "seconds": ingest_s,
                   "msg_per_s": messages / ingest_s if ingest_s else None},
        "extraction": {"seconds": sum(c["extract_s"] for c in conv_reports),
                       "events": sum(c["events"] for c in conv_reports),
                       "ms_per_message": 1000 * sum(c["extract_s"] for c in conv_reports)
                       / max(1, messages)},
        "chronicle": chronicle_report(conv_reports),
        "per_conversation": {c.stem: per_conversation(all_questions, c.stem)
                             for c in conversations},
        "temporal": {
            "windowed_answers": sum(q.window is not None for q in all_questions),
            "category2": len(cat2),
            "category2_windowed": sum(q.window is not None for q in cat2),
            "unresolved_temporal_answers": [
                {"conversation": q.conversation, "question_index": q.index,
                 "answer": q.answer}
                for q in all_questions
                if q.window is None and q.category == 2
            ],
            "windowed_by_category": {
                str(c): sum(q.window is not None for q in all_questions if q.category == c)
                for c in (1, 2, 3, 4)},
            "other_unresolved_temporal_looking": sum(
                q.window is None and q.category != 2 and M.looks_temporal(q.answer)
                for q in all_questions),
        },
        "errors": errors,
        "setup_s": setup_s,
        "load_average": {"before": load_before, "after": os.getloadavg(),
                         "cpus": os.cpu_count()},
        "runtime_s": time.perf_counter() - started,
        "per_question": [
            {"conversation": q.conversation, "question_index": q.index,
             "category": q.category, "evidence": q.evidence,
             "window": None if q.window is None else [d.isoformat() for d in q.window],
             "embed_ms": q.embed_ms, "results": q.results}
            for q in all_questions
        ],
    }
    write_outputs(report, json_path, dump_path, dump_lines, indent=2, default=_json_default)
    return report


def chronicle_figures(services: Any, conv: Conversation, path: Path) -> CH.Figures:
    """The chronicle figures (bench/chronicle.py) of the events extraction wrote for one
    conversation: active events of kind "event" (no summaries, no hand notes)."""
    from chalicelib.ports import iter_events

    data = json.loads(path.read_text(encoding="utf-8"))
    entries = [CH.entry(e.summary, e.participants,
                        [(s.session, s.seq_start, s.seq_end) for s in e.sources])
               for e in iter_events(services.store, conv.space)
               if e.status == "active" and e.kind == "event"]
    return CH.score(entries, CH.annotated_facts(data), conv.message_count)


def chronicle_report(conv_reports: Sequence[dict]) -> dict:
    figures = {c["conversation"]: CH.Figures(**{k: c["chronicle"][k] for k in (
        "messages", "events", "filler", "facts", "covered", "noise")}) for c in conv_reports}
    return {"per_conversation": {k: f.as_dict() for k, f in figures.items()},
            "pooled": CH.pooled(figures.values()).as_dict()}


def per_conversation(questions: Sequence[Question], stem: str) -> dict:
    """The Annals recipe's figures on one conversation's questions."""
    mine = [q for q in questions if q.conversation == stem]
    s = summarize(mine, "annals")
    return {"questions": s["questions"], "R@10": s["R@10"], "R@5": s["R@5"],
            "R@10 cat1": s["by_category"]["1"]["R@10"],
            "temporal_hit@5": s["temporal_hit@5"],
            "temporal_questions": s["temporal_questions"]}


def format_chronicle(report: dict) -> list[str]:
    c = report.get("chronicle")
    if not c:
        return []
    rows = [(stem, CH.Figures(**{k: f[k] for k in ("messages", "events", "filler", "facts",
                                                   "covered", "noise")}))
            for stem, f in [*c["per_conversation"].items(), ("pooled", c["pooled"])]]
    ms = {x["conversation"]: x["extract_ms_per_message"] for x in report["conversations"]}
    lines = ["chronicle (active extracted events vs the annotated facts; bench/chronicle.py):",
             *CH.format_rows(rows)]
    lines.append("extraction ms per message: " + ", ".join(
        f"{k} {v:.1f}" for k, v in ms.items())
        + f"; all {report['extraction']['ms_per_message']:.1f}")
    return lines


def format_per_conversation(report: dict) -> list[str]:
    per = report.get("per_conversation")
    if not per:
        return []
    lines = ["per conversation (Annals recipe, 20 cards):",
             "| conversation | questions | R@5 | R@10 | R@10 cat 1 | temporal_hit@5 (n) |",
             "|---|---|---|---|---|---|"]
    for stem, r in per.items():
        lines.append(f"| {stem} | {r['questions']} | {_fmt(r['R@5'])} | {_fmt(r['R@10'])} | "
                     f"{_fmt(r['R@10 cat1'])} | {_fmt(r['temporal_hit@5'])} "
                     f"({r['temporal_questions']}) |")
    return lines


def graph_report(summary: dict[str, dict]) -> dict:
    """The graph step: the Annals recipe beside the same recall without it, same questions."""
    out: dict[str, Any] = {}
    for name, key in (("with", "annals"), ("without", NO_GRAPH)):
        s = summary.get(key)
        if s is None:
            return {}
        out[name] = {"R@10": s["R@10"], "R@10 cat1": s["by_category"]["1"]["R@10"],
                     **{f"R@10 cat{c}": s["by_category"][c]["R@10"] for c in "234"},
                     "chars@10": s["chars@10"], "p50_ms": s["latency_ms"]["p50"],
                     "p95_ms": s["latency_ms"]["p95"]}
    out["delta"] = {k: _minus(out["with"][k], out["without"][k]) for k in out["with"]}
    return out


def format_graph(report: dict) -> list[str]:
    g = report.get("graph")
    if not g:
        return []
    w0, w = 24, 10
    lines = [f"graph step (recall/graph.py): {report['config']['annals_recipe']} with it / "
             f"{report['config'].get('no_graph_recipe')} without it, same questions",
             "metric".ljust(w0) + "with".rjust(w) + "without".rjust(w) + "Δ".rjust(w)]
    lines.append("-" * len(lines[-1]))
    for key in ("R@10", "R@10 cat1", "R@10 cat2", "R@10 cat3", "R@10 cat4"):
        lines.append(key.ljust(w0) + _fmt(g["with"][key]).rjust(w)
                     + _fmt(g["without"][key]).rjust(w) + _signed(g["delta"][key]).rjust(w))
    for key, name in (("chars@10", "chars in top-10 cards"), ("p50_ms", "recall p50 ms"),
                      ("p95_ms", "recall p95 ms")):
        lines.append(name.ljust(w0) + _fmt(g["with"][key], False).rjust(w)
                     + _fmt(g["without"][key], False).rjust(w)
                     + _signed(g["delta"][key], False).rjust(w))
    return lines


def _json_default(value: object) -> object:
    if isinstance(value, date | datetime):
        return value.isoformat()
    return str(value)


# ------------------------------------------------------------------ table


def _fmt(value: float | None, pct: bool = True, digits: int = 3) -> str:
    if value is None:
        return "—"
    return f"{value:.{digits}f}" if pct else f"{value:.1f}"


def _signed(value: float | None, pct: bool = True) -> str:
    if value is None:
        return "—"
    return f"{value:+.3f}" if pct else f"{value:+.1f}"


def format_context(report: dict) -> list[str]:
    c = report.get("query_context")
    if not c:
        return []
    return ["query context (with the step / without it, same spaces):",
            f"  compound \"Q1 Also, Q2\", both cited in 4 cards: "
            f"{_fmt(c['compound']['with'])} / {_fmt(c['compound']['without'])} "
            f"(n={c['compound']['questions']})",
            f"  follow-up \"{FOLLOW_UP}\" after the question, hit@2: "
            f"{_fmt(c['follow_up']['with'])} / {_fmt(c['follow_up']['without'])}",
            f"  the question after an unrelated one, hit@2: "
            f"{_fmt(c['distracted']['with'])} / {_fmt(c['distracted']['without'])}"]


def format_hook(report: dict) -> list[str]:
    """The hook-sized block: own hit@1/hit@2 and foreign abstention, gated vs ungated."""
    h = report.get("hook")
    if not h:
        return []
    own, foreign = h["own"], h["foreign"]
    w0, w = 34, 10
    lines = [f"hook recall (default max_cards = {h['max_cards']}; gate: relevance ≥ "
             f"{h['min_relevance']:g}, term weight {h['term_weight']:g})",
             "metric".ljust(w0) + "gated".rjust(w) + "ungated".rjust(w) + "Δ".rjust(w)]
    lines.append("-" * len(lines[-1]))

    def row(name: str, gated: float | None, ungated: float | None) -> None:
        lines.append(name.ljust(w0) + _fmt(gated).rjust(w) + _fmt(ungated).rjust(w)
                     + _signed(_minus(gated, ungated)).rjust(w))

    n = own["gated"]["questions"]
    row(f"own hit@1 (n={n})", own["gated"]["hit@1"], own["ungated"]["hit@1"])
    row("own hit@2", own["gated"]["hit@2"], own["ungated"]["hit@2"])
    row("own cards returned", own["gated"]["cards_returned"], own["ungated"]["cards_returned"])
    if foreign:
        row(f"foreign abstention (n={foreign['gated']['questions']})",
            foreign["gated"]["abstention"], foreign["ungated"]["abstention"])
        for stem, per in h["per_space"].items():
            own_g, own_u = per["own"]["gated"], per["own"]["ungated"]
            fg, fu = per["foreign"]["gated"], per["foreign"]["ungated"]
            lines.append(
                f"  space {stem}: own hit@2 {_fmt(own_g['hit@2'])} / {_fmt(own_u['hit@2'])} "
                f"(n={own_g['questions']}); {'+'.join(per['foreign_from']) or '—'}'s "
                f"questions asked here: abstention {_fmt(fg['abstention'])} / "
                f"{_fmt(fu['abstention'])} (n={fg['questions']})   [gated / ungated]")
    else:
        lines.append("foreign abstention: needs two or more conversations")
    s = report["recipes"]["annals"]
    wide = h.get("min_relevance_wide") or 0
    floor = f"the gate's lower floor, relevance ≥ {wide:g}" if wide else "gate off"
    lines.append(f"at {report['config']['cards']} cards ({floor} above max_cards): R@10 "
                 f"{_fmt(s['R@10'])}, temporal_hit@5 {_fmt(s['temporal_hit@5'])}")
    return lines


def format_table(report: dict) -> str:
    s = report["recipes"]
    d = report["delta_vs_best_baseline"]
    cfg = report["config"]
    cols = ["annals", *BASELINES]
    head = f"annals ({cfg['annals_recipe']})"
    rows: list[tuple[str, list[str], str]] = []
    for name in [f"R@{k}" for k in M.KS] + [f"hit@{k}" for k in M.KS] + [
            "temporal_hit@5", "temporal_overlap@5"]:
        rows.append((name, [_fmt(s[c][name]) for c in cols], _signed(d.get(name))))
    for cat in ("1", "2", "3", "4"):
        n = s["annals"]["by_category"][cat]["questions"]
        rows.append((f"R@10 cat{cat} (n={n})",
                     [_fmt(s[c]["by_category"][cat]["R@10"]) for c in cols],
                     _signed(d.get(f"R@10 cat{cat}"))))
    rows.append(("chars in top-10 cards", [_fmt(s[c]["chars@10"], False) for c in cols],
                 _signed(d.get("chars@10"), False)))
    rows.append(("recall p50 ms", [_fmt(s[c]["latency_ms"]["p50"], False) for c in cols],
                 _signed(d.get("p50_ms"), False)))
    rows.append(("recall p95 ms", [_fmt(s[c]["latency_ms"]["p95"], False) for c in cols],
                 _signed(d.get("p95_ms"), False)))
    w0 = max(len(r[0]) for r in rows) + 2
    w = max(len(head), 9) + 2
    lines = [f"LoCoMo: {len(report['conversations'])} conversation(s), "
             f"{report['questions']} questions (category 5 excluded), embedder "
             f"{cfg['embedder']}, {cfg['cards']} cards per recall",
             "metric".ljust(w0) + head.rjust(w) + "bm25".rjust(w) + "dense".rjust(w)
             + "Δ vs best base".rjust(16)]
    lines.append("-" * len(lines[-1]))
    for name, vals, delta in rows:
        lines.append(name.ljust(w0) + "".join(v.rjust(w) for v in vals) + delta.rjust(16))
    lines += ["", *format_per_conversation(report), "", *format_chronicle(report), "",
              *format_graph(report), "", *format_hook(report), "", *format_context(report)]
    t = report["temporal"]
    e = report["query_embed_ms"]
    lines += [
        "",
        f"temporal: {t['windowed_answers']} answers parsed to a date window "
        f"(category 2: {t['category2_windowed']}/{t['category2']}); temporal_hit@5 = a top-5 "
        "card cites evidence and its date starts inside the window",
        f"query embedding (part of every recall above): p50 {_fmt(e['p50'], False)} ms, "
        f"p95 {_fmt(e['p95'], False)} ms",
        f"ingest: {report['ingest']['messages']} messages in {report['ingest']['seconds']:.1f} s"
        f" = {_fmt(report['ingest']['msg_per_s'], False)} msg/s (put_messages, embedding "
        "included)",
        f"extraction: {report['extraction']['events']} events in "
        f"{report['extraction']['seconds']:.1f} s",
    ]
    for c in report["conversations"]:
        lines.append(f"  {c['conversation']}: {c['sessions']} sessions, {c['messages']} msgs, "
                     f"{c['events']} events, {c['questions']} questions, ingest "
                     f"{c['ingest_s']:.1f} s, extract {c['extract_s']:.1f} s")
        g = c.get("graph")
        if g:
            lines.append(f"    graph: {g['entities']} entities ({g['names']} names, "
                         f"{g['not_verbatim']} not verbatim in their sources), {g['threads']} "
                         f"threads holding {g['threaded_events']} events, {g['relations']} "
                         "relations")
    lines += footer(report, "recall calls failed", f"runtime {report['runtime_s']:.1f} s")
    return "\n".join(lines)
