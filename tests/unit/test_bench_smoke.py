"""The LoCoMo bench end to end on a tiny made-up conversation (hash embedder, no data files)."""

from __future__ import annotations

import json
import time

from click.testing import CliRunner

from bench.cli import bench
from bench.locomo import load_conversation, run_locomo

CONVERSATION = {
    "speaker_a": "Ana",
    "speaker_b": "Ben",
    "session_1_date_time": "10:00 am on 6 March, 2023",
    "session_1": [
        {"speaker": "Ana", "dia_id": "D1:1", "text": "Hi Ben! I adopted a puppy yesterday."},
        {"speaker": "Ben", "dia_id": "D1:2", "text": "Congrats! What is the puppy called?"},
        {"speaker": "Ana", "dia_id": "D1:3", "text": "Her name is Biscuit, she loves carrots.",
         "blip_caption": "a photo of a small brown dog on a rug"},
    ],
    "session_2_date_time": "4:30 pm on 20 March, 2023",
    "session_2": [
        {"speaker": "Ben", "dia_id": "D2:1", "text": "I ran my first half marathon in Lisbon."},
        {"speaker": "Ana", "dia_id": "D2:2", "text": "Amazing! How long did it take you?"},
        {"speaker": "Ben", "dia_id": "D2:3", "text": "Two hours and five minutes, I'm proud."},
    ],
    "session_3_date_time": "9:15 am on 2 April, 2023",
    "session_3": [
        {"speaker": "Ana", "dia_id": "D3:1", "text": "Biscuit learned to sit last week!"},
        {"speaker": "Ben", "dia_id": "D3:2", "text": "Clever dog. I started learning guitar."},
    ],
    "qa": [
        {"question": "When did Ana adopt a puppy?", "answer": "5 March 2023",
         "evidence": ["D1:1"], "category": 2},
        {"question": "What is the name of Ana's puppy?", "answer": "Biscuit",
         "evidence": ["D1:3"], "category": 1},
        {"question": "Where did Ben run a half marathon?", "answer": "Lisbon",
         "evidence": ["D2:1"], "category": 4},
        {"question": "What did Ben's cat eat?", "adversarial_answer": "carrots",
         "evidence": ["D1:3"], "category": 5},
        {"question": "When did Biscuit learn to sit?", "answer": "The week before 2 April 2023",
         "evidence": ["D3:1"], "category": 2},
        {"question": "What instrument and sport does Ben do?", "answer": "guitar, running",
         "evidence": ["D3:2; D2:1"], "category": 3},
    ],
}

SUMMARY_KEYS = {"R@1", "R@5", "R@10", "hit@1", "hit@5", "hit@10", "temporal_hit@5",
                "temporal_overlap@5", "temporal_questions", "chars@10", "chars_per_card",
                "latency_ms", "by_category", "questions"}


def write_conversation(tmp_path):
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(CONVERSATION), encoding="utf-8")
    return path


def test_loading_maps_sessions_turns_roles_and_captions(tmp_path):
    conv = load_conversation(write_conversation(tmp_path))
    assert conv.space == "locomo-tiny"
    assert [s.number for s in conv.sessions] == [1, 2, 3]
    first = conv.sessions[0]
    assert first.at.isoformat() == "2023-03-06T10:00:00+00:00"
    # two people talk: both are users (an assistant turn would be an AI's, never an event)
    assert [(t.seq, t.role) for t in first.turns] == [(1, "user"), (2, "user"), (3, "user")]
    assert first.turns[2].text.endswith("[shares a photo: a photo of a small brown dog on a rug]")
    assert conv.last_time.isoformat() == "2023-04-02T09:15:00+00:00"


def test_locomo_bench_runs_end_to_end(tmp_path):
    path = write_conversation(tmp_path)
    out_json, out_dump = tmp_path / "report.json", tmp_path / "dump.jsonl"
    started = time.perf_counter()
    report = run_locomo([path], embedder="hash", json_path=out_json, dump_path=out_dump,
                        progress=False)
    assert time.perf_counter() - started < 20
    assert report["errors"] == [], report["errors"][:1]
    assert set(report["recipes"]) == {"annals", "annals_no_graph", "bm25", "dense"}
    assert set(report["graph"]) == {"with", "without", "delta"}  # the graph step, both ways
    assert {"R@10 cat1", "p50_ms", "p95_ms", "chars@10"} <= set(report["graph"]["delta"])
    for summary in report["recipes"].values():
        assert set(summary) >= SUMMARY_KEYS
        assert summary["questions"] == 5
        assert set(summary["by_category"]) == {"1", "2", "3", "4"}
        assert {"p50", "p95"} <= set(summary["latency_ms"])
    assert report["questions"] == 5
    assert report["temporal"]["windowed_answers"] == 2
    assert report["ingest"]["messages"] == 8 and report["ingest"]["msg_per_s"] > 0
    assert report["extraction"]["seconds"] >= 0
    graph = report["conversations"][0]["graph"]  # every entity name verbatim in its sources
    assert graph["entities"] >= 1 and graph["not_verbatim"] == 0, graph
    assert {"p50", "p95"} <= set(report["query_embed_ms"])
    assert set(report["delta_vs_best_baseline"]) >= {"R@10", "temporal_hit@5", "p95_ms"}
    assert json.loads(out_json.read_text())["questions"] == 5

    lines = [json.loads(line) for line in out_dump.read_text().splitlines()]
    assert [row["question_index"] for row in lines] == [0, 1, 2, 4, 5]  # category 5 skipped
    for row in lines:
        assert set(row) == {"conversation", "question_index", "cards"}
        assert row["conversation"] == "tiny"
        assert 0 < len(row["cards"]) <= 20
        for c in row["cards"]:
            assert set(c) == {"sources", "date_start", "date_end", "text"}
            assert all(s.startswith("D") and ":" in s for s in c["sources"])
            if c["date_start"] is not None:
                assert c["date_start"] < c["date_end"]
    # the puppy's name is in D1:3; the hash embedder and BM25 share that word
    puppy = report["per_question"][1]
    assert puppy["evidence"] == ["D1:3"]
    assert report["per_question"][4]["evidence"] == ["D3:2", "D2:1"]


def test_cli_prints_the_table(tmp_path):
    path = write_conversation(tmp_path)
    result = CliRunner().invoke(bench, ["locomo", str(path), "--embedder", "hash", "--quiet",
                                        "--limit-questions", "2"])
    assert result.exit_code == 0, result.output
    assert "R@10" in result.output and "bm25" in result.output and "dense" in result.output
    assert "2 questions" in result.output
    assert "graph step" in result.output and "R@10 cat1" in result.output
