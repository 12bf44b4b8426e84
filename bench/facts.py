"""`annals bench facts`: facts that change over time, on the scripted story set
bench/data/fact_stories.json (20 stories, zh and en; bench/data/fact_stories.md).

Each story is told to its own space session by session, as a chat host would (PUT the
session, then POST …/extract through the use-cases), and then its user's profile
(chalicelib.usecases.facts.profile) is scored against the story's expectations:

- current right: of the values the story says hold at the end, the share the profile has as
  current facts of that attribute (values matched loosely: one names the other);
- closed right: of the values that held and ended, the share the profile has closed, with
  `valid_to` inside the session that told the change (at or after its start, before the next
  session's);
- extra current: current facts the story does not expect (a value the rules misread, or a
  fact of somebody else taken for the user's) — reported, as the price of the recall above;
- the core block: its size in tokens (≤ ANNALS_CORE_TOKENS) and what it adds to a hook call
  (p50/p95 ms with the core layer on and off, same spaces, same turns).
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

DATA = Path(__file__).parent / "data" / "fact_stories.json"
# The sets `annals bench facts` runs by default: the one the rules were developed on, and the
# held-out ones written later by other hands (bench/data/fact_stories*.md say how and when).
SETS = [DATA, *sorted(DATA.parent.glob("fact_stories_heldout*.json"))]


def _services(root: Path, embedder: str, llm=None):
    """Services for one run; with `llm` (the model reader) as ANNALS_LLM=local wires it: the
    model fills the user's profile form, the rules write events, merges and summaries."""
    from chalicelib.config import Settings
    from chalicelib.wiring import build_services

    model = {"llm": "local", "llm_model_path": llm.server.model_path} if llm else {}
    settings = Settings(data_dir=root, embedder=embedder, schedule="off", salience="rules",
                        extract_sync_max_messages=10_000, extract_sync_max_chars=10**9,
                        _env_file=None, **model)
    return build_services(settings, index="inline", llm=llm)


class ModelReader:
    """The local model (bench/models.py, chalicelib.adapters.llm.local) for one run, and
    what its reading cost."""

    def __init__(self, model: str, threads: int = 1, progress: bool = True,
                 answers: Path | None = None):
        from chalicelib.adapters.llm.local import LocalLLMClient, LocalModelServer

        from .answers import AnswerBook, ReplayingClient
        from .models import ensure_model

        self.model = model
        self.server = LocalModelServer(ensure_model(model, progress=progress), threads=threads)
        self.book = AnswerBook(answers) if answers else None
        self.client = (ReplayingClient(self.server, self.book) if self.book
                       else LocalLLMClient(self.server))
        self.seconds = 0.0

    def cost(self, user_messages: int) -> dict[str, Any]:
        """What the reading cost; answers replayed from the book count the seconds they took
        when they were asked, so a replayed run reports the model's cost, not the book's."""
        u = self.client.usage
        per = max(1, user_messages)
        replayed = getattr(self.client, "replayed", 0)
        seconds = self.seconds + getattr(self.client, "replayed_seconds", 0.0)
        return {"model": self.model, "calls": u.calls, "failures": u.failures,
                "replayed": replayed, "prompt_tokens": u.prompt_tokens,
                "completion_tokens": u.completion_tokens,
                "seconds": round(seconds, 1), "user_messages": user_messages,
                "seconds_per_user_message": round(seconds / per, 2),
                "prompt_tokens_per_user_message": round(u.prompt_tokens / per, 1),
                "completion_tokens_per_user_message": round(u.completion_tokens / per, 1)}

    def stop(self) -> None:
        self.server.stop()
        if self.book is not None:
            self.book.close()


@contextmanager
def model_reader(reader: str, model: str | None, progress: bool, answers: str | None = None
                 ) -> Iterator[ModelReader | None]:
    """The local model for a run whose `reader` is "llm" (None: the rules read), one server
    for the whole run, stopped when the run ends, however it ends. `answers`: the file of
    the model's answers to replay and add to (bench/answers.py)."""
    if reader != "llm":
        yield None
        return
    from .models import DEFAULT_MODEL

    llm = ModelReader(model or DEFAULT_MODEL, progress=progress,
                      answers=Path(answers) if answers else None)
    try:
        yield llm
    finally:
        llm.stop()


def reading_line(cost: dict[str, Any]) -> str:
    """What the model's reading cost (ModelReader.cost), as the benches print it."""
    replayed = (f" ({cost['replayed']} answers replayed from --answers, counted at the "
                "seconds they took)" if cost.get("replayed") else "")
    return (f"reading with {cost['model']}: {cost['calls']} calls{replayed}, "
            f"{cost['failures']} failed "
            f"(the rules read those batches); {cost['prompt_tokens_per_user_message']} prompt "
            f"+ {cost['completion_tokens_per_user_message']} output tokens and "
            f"{cost['seconds_per_user_message']} s per user message")


def tell(services, space: str, story: dict[str, Any]) -> None:
    from chalicelib.domain.models import MessageIn, PutMessagesRequest
    from chalicelib.usecases.extract import run_extraction
    from chalicelib.usecases.ingest import put_messages

    for session in story["sessions"]:
        start = datetime.fromisoformat(session["at"])
        messages = [MessageIn(seq=i, role=m["role"], speaker=m["speaker"], content=m["content"],
                              at=start.replace(minute=min(59, start.minute + i)))
                    for i, m in enumerate(session["messages"])]
        put_messages(services, space, session["session"], PutMessagesRequest(messages=messages))
        run_extraction(services, space, session["session"])


def _matches(expected: str, value: str) -> bool:
    from chalicelib.domain.facts import same_value

    a, b = expected.casefold(), value.casefold()
    return same_value(a, b) or a in b or b in a


def score(services, space: str, story: dict[str, Any]) -> dict[str, Any]:
    from chalicelib.domain.errors import NotFound
    from chalicelib.usecases.facts import profile

    try:
        facts = profile(services, space, story["person"]).facts
    except NotFound:
        facts = []
    starts = {s["session"]: datetime.fromisoformat(s["at"]) for s in story["sessions"]}
    order = [s["session"] for s in story["sessions"]]
    current = [f for f in facts if f.current]
    cur_hits = [e for e in story["expect"]["current"]
                if any(f.attribute == e["attribute"] and _matches(e["value"], f.value)
                       for f in current)]
    closed_hits = []
    for e in story["expect"]["closed"]:
        lo = starts[e["closed_in"]]
        nxt = order.index(e["closed_in"]) + 1
        hi = starts[order[nxt]] if nxt < len(order) else None
        if any(f.attribute == e["attribute"] and _matches(e["value"], f.value)
               and f.valid_to is not None and f.valid_to >= lo and (hi is None or f.valid_to < hi)
               for f in facts if not f.current):
            closed_hits.append(e)
    extra = [f"{f.attribute}={f.value}" for f in current
             if not any(f.attribute == e["attribute"] and _matches(e["value"], f.value)
                        for e in story["expect"]["current"])]
    # stale: a value the story says ended, still shown as current; invented: a current value
    # no user turn of the story says (casefold, as the readers' own check)
    stale = [f"{f.attribute}={f.value}" for f in current
             if any(f.attribute == e["attribute"] and _matches(e["value"], f.value)
                    for e in story["expect"]["closed"])
             and not any(f.attribute == e["attribute"] and _matches(e["value"], f.value)
                         for e in story["expect"]["current"])]
    told = " ".join(m["content"].casefold() for s in story["sessions"] for m in s["messages"]
                    if m["role"] == "user")
    invented = [f"{f.attribute}={f.value}" for f in current if f.value != "*"
                and f.value.casefold() not in told]
    return {"id": story["id"], "lang": story["lang"],
            "current": len(story["expect"]["current"]), "current_right": len(cur_hits),
            "closed": len(story["expect"]["closed"]), "closed_right": len(closed_hits),
            "extra_current": extra, "stale_current": stale, "invented": invented,
            "missed_current": [f"{e['attribute']}={e['value']}"
                               for e in story["expect"]["current"] if e not in cur_hits],
            "missed_closed": [f"{e['attribute']}={e['value']}@{e['closed_in']}"
                              for e in story["expect"]["closed"] if e not in closed_hits]}


def hook_costs(services, spaces: list[str], calls: int = 30) -> dict[str, Any]:
    """A small-talk hook call in each space, with the core layer on and off (each call in a
    window of its own, so the core block is built and sent every time: its whole cost)."""
    from chalicelib.domain.models import RecallRequest
    from chalicelib.usecases.facts import hook_core
    from chalicelib.usecases.recall import recall_hook_sized
    from chalicelib.usecases.recall.context import estimate_tokens

    out: dict[str, list[float]] = {"on": [], "off": []}
    sizes: list[int] = []
    budget = services.settings.core_tokens
    for mode in ("off", "on", "off", "on"):
        services.settings.core_tokens = budget if mode == "on" else 0
        for i in range(calls):
            space = spaces[i % len(spaces)]
            request = RecallRequest(query="哈哈好的，晚安～" if "zh" in space else "haha ok, night!",
                                    window=f"bench-{mode}-{i}-{time.monotonic_ns()}")
            t0 = time.perf_counter()
            recall_hook_sized(services, space, request)
            core = hook_core(services, space, request)
            out[mode].append(time.perf_counter() - t0)
            if mode == "on" and core:
                sizes.append(estimate_tokens(core))
    services.settings.core_tokens = budget

    def ms(values: list[float], q: float) -> float:
        ordered = sorted(values)
        return round(ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))] * 1000, 2)

    return {"on_p50_ms": ms(out["on"], 50), "on_p95_ms": ms(out["on"], 95),
            "off_p50_ms": ms(out["off"], 50), "off_p95_ms": ms(out["off"], 95),
            "added_p95_ms": round(ms(out["on"], 95) - ms(out["off"], 95), 2),
            "core_tokens_max": max(sizes, default=0),
            "core_tokens_median": statistics.median(sizes) if sizes else 0,
            "budget": budget, "calls": len(out["on"])}


def run_sets(paths: list[Path], embedder: str = "hash", progress: bool = True,
             json_path: str | None = None, reader: str = "rules", model: str | None = None,
             lang: str | None = None, limit: int | None = None, answers: str | None = None
             ) -> dict[str, Any]:
    """Each story set on its own (its own figures and targets), in one run. `reader` "llm":
    the local `model` reads (one server for the whole run; `answers`: its answers kept and
    replayed); `lang` / `limit`: a subset (the stories of one language, the first `limit` of
    each language)."""
    with model_reader(reader, model, progress, answers) as llm:
        report = {"reader": reader, "sets": {
            Path(p).name: run_facts(p, embedder, progress, llm=llm, lang=lang, limit=limit)
            for p in paths}}
    if json_path:
        Path(json_path).write_text(json.dumps(report, ensure_ascii=False, indent=2))
    return report


def format_sets(report: dict[str, Any]) -> str:
    return "\n\n".join(f"### {name}\n{format_report(one)}" for name, one in report["sets"].items())


def pick(stories: list[dict[str, Any]], lang: str | None, limit: int | None
         ) -> list[dict[str, Any]]:
    """The stories of `lang` (all languages when None), the first `limit` of each language."""
    out, seen = [], {}
    for story in stories:
        if lang and story["lang"] != lang:
            continue
        seen[story["lang"]] = seen.get(story["lang"], 0) + 1
        if limit is None or seen[story["lang"]] <= limit:
            out.append(story)
    return out


def run_facts(path: Path = DATA, embedder: str = "hash", progress: bool = True,
              json_path: str | None = None, llm: ModelReader | None = None,
              lang: str | None = None, limit: int | None = None) -> dict[str, Any]:
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    stories = pick(data["stories"], lang, limit)
    with tempfile.TemporaryDirectory(prefix="annals-facts-") as tmp:
        services = _services(Path(tmp), embedder, llm.client if llm else None)
        rows, spaces = [], []
        for n, story in enumerate(stories, 1):
            space = f"story-{story['id']}"
            if progress:
                print(f"telling {story['id']} ({n}/{len(stories)})", file=sys.stderr,
                      flush=True)
            started = time.perf_counter()
            tell(services, space, story)
            if llm is not None:
                llm.seconds += time.perf_counter() - started
            rows.append(score(services, space, story))
            spaces.append(space)
        costs = hook_costs(services, spaces)
    users = sum(m["role"] == "user" for s in stories for ses in s["sessions"]
                for m in ses["messages"])
    report = {"stories": rows, "by_lang": _by_lang(rows), "hook": costs,
              "reading": llm.cost(users) if llm else None, "targets": {}}
    for lang, agg in report["by_lang"].items():
        report["targets"][f"{lang}: current values right >= 0.90"] = agg["current_share"] >= 0.9
        report["targets"][f"{lang}: changed facts closed at the right session >= 0.85"] = \
            agg["closed_share"] >= 0.85
    report["targets"]["core layer adds <= 5 ms p95 to a hook call"] = costs["added_p95_ms"] <= 5
    report["targets"]["core block within its budget"] = costs["core_tokens_max"] <= costs["budget"]
    if json_path:
        Path(json_path).write_text(json.dumps(report, ensure_ascii=False, indent=2))
    return report


def _by_lang(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    out = {}
    for lang in sorted({r["lang"] for r in rows}):
        mine = [r for r in rows if r["lang"] == lang]
        cur, cur_ok = sum(r["current"] for r in mine), sum(r["current_right"] for r in mine)
        clo, clo_ok = sum(r["closed"] for r in mine), sum(r["closed_right"] for r in mine)
        out[lang] = {"stories": len(mine), "current": cur, "current_right": cur_ok,
                     "current_share": round(cur_ok / cur, 3) if cur else 0.0,
                     "closed": clo, "closed_right": clo_ok,
                     "closed_share": round(clo_ok / clo, 3) if clo else 0.0,
                     "extra_current": sum(len(r["extra_current"]) for r in mine),
                     "stale_current": sum(len(r["stale_current"]) for r in mine),
                     "invented": sum(len(r["invented"]) for r in mine)}
    return out


def format_report(report: dict[str, Any]) -> str:
    lines = ["| lang | stories | current right | closed at the right session | extra current "
             "| stale shown as current | invented |", "|---|---|---|---|---|---|---|"]
    for lang, a in report["by_lang"].items():
        lines.append(f"| {lang} | {a['stories']} | {a['current_right']}/{a['current']} = "
                     f"{a['current_share']:.3f} | {a['closed_right']}/{a['closed']} = "
                     f"{a['closed_share']:.3f} | {a['extra_current']} | {a['stale_current']} "
                     f"| {a['invented']} |")
    if report.get("reading"):
        lines.append(reading_line(report["reading"]))
    h = report["hook"]
    lines.append(f"hook call (small talk, {h['calls']} calls each): core on p50/p95 "
                 f"{h['on_p50_ms']}/{h['on_p95_ms']} ms, off {h['off_p50_ms']}/{h['off_p95_ms']}"
                 f" ms → adds {h['added_p95_ms']} ms p95; core block {h['core_tokens_median']} "
                 f"tokens median, {h['core_tokens_max']} max (budget {h['budget']})")
    for row in report["stories"]:
        if row["missed_current"] or row["missed_closed"] or row["extra_current"]:
            lines.append(f"{row['id']}: missed {row['missed_current'] + row['missed_closed']}"
                         f"; extra {row['extra_current']}")
    for target, ok in report["targets"].items():
        lines.append(f"{'PASS' if ok else 'FAIL'}  {target}")
    return "\n".join(lines)
