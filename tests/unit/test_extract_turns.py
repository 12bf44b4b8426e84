"""Which turns of one teller make one event: the offline extractor with the bundled e5 judge.

The same-topic test measures two turns' cosine above how close each sits to small talk in its
language (offline.same_topic): e5 puts any two Chinese turns at 0.87-0.93, so a plain cosine
floor joined unrelated Chinese turns into one event that spent three citations on one card."""

from __future__ import annotations

import numpy as np
import pytest

from chalicelib.adapters.salience_e5 import E5SalienceJudge
from chalicelib.ports import ExtractionContext
from chalicelib.usecases.extract.offline import SAME_TOPIC_COSINE, OfflineExtractor, same_topic
from tests.unit.conftest import message


def cited(draft) -> set[int]:
    return {q for s in draft.sources for q in range(s.seq_start, s.seq_end + 1)}


def unit(*xs: float) -> np.ndarray:
    v = np.asarray(xs, np.float32)
    return v / np.linalg.norm(v)


class TestSameTopic:
    def test_measured_above_small_talk(self):
        a, b = unit(1, 0.5), unit(1, 0.62)
        cosine = float(a @ b)
        assert cosine > 0.99
        assert same_topic(a, 0.5, b, 0.5)  # far above small talk's 0.5
        assert not same_topic(a, cosine, b, cosine)  # no closer than either is to chatter

    def test_plain_cosine_without_baselines(self):
        a, b = unit(1, 0), unit(1, 0.8)
        assert (float(a @ b) >= SAME_TOPIC_COSINE) == same_topic(a, None, b, None)
        assert not same_topic(unit(1, 0), None, unit(0, 1), None)


@pytest.fixture(scope="module")
def extractor() -> OfflineExtractor:
    return OfflineExtractor(E5SalienceJudge())


@pytest.mark.e5
class TestTellings:
    def extract(self, extractor, turns):
        msgs = [message(i, role, {"user": "小雨", "assistant": "阿狸"}[role], text)
                for i, (role, text) in enumerate(turns, start=1)]
        return extractor.extract(msgs, ExtractionContext(space="sp", session="c1"))

    def test_chinese_turns_about_other_things_are_other_events(self, extractor):
        drafts = self.extract(extractor, [("user", "我的车今天早上在高速上抛锚了"),
                                          ("assistant", "天哪"),
                                          ("user", "我在读一本讲宋朝的诗集")])
        assert [cited(d) for d in drafts] == [{1}, {3}]

    @pytest.mark.parametrize("first, then", [
        ("周末我们开车去湖边露营了", "湖水特别凉，但是孩子们还是下水游了"),
        ("We adopted a rescue dog last week, his name is Max",
         "Max already knows how to sit and he loves the park"),
    ])
    def test_one_thing_told_over_turns_is_one_event(self, extractor, first, then):
        drafts = self.extract(extractor, [("user", first), ("assistant", "哇"), ("user", then)])
        assert [cited(d) for d in drafts] == [{1, 3}]

    @pytest.mark.parametrize("first, asked, answer", [
        ("上周六把智齿拔了", "疼不疼呀？", "还好，打了麻药没感觉"),
        ("I had my wisdom tooth pulled out on Saturday", "Did it hurt?",
         "a lot, my cheek is still swollen and I can only eat soup"),
    ])
    def test_the_answer_to_a_question_goes_on_telling(self, extractor, first, asked, answer):
        drafts = self.extract(extractor, [("user", first), ("assistant", asked),
                                          ("user", answer)])
        assert [cited(d) for d in drafts] == [{1, 3}]

    def test_today_is_the_tellings_own_time(self, extractor):
        """An answer saying how it stands today goes on telling the story; one naming another
        day is another happening."""
        story = [("user", "朵朵前天晚上发烧到39度，半夜抱去医院挂急诊"), ("assistant", "天啊，现在退烧了吗")]
        drafts = self.extract(extractor, [*story, ("user", "查了说是甲流，开了奥司他韦，今天总算退了")])
        assert [cited(d) for d in drafts] == [{1, 3}]
        drafts = self.extract(extractor, [*story, ("user", "昨天还带她去公园放了风筝")])
        assert [cited(d) for d in drafts] == [{1}, {3}]

    @pytest.mark.parametrize("mood, asked, told", [
        ("今天心情很差。", "怎么了？发生什么事了吗？", "芝麻今天早上没了。朵朵发现的，哭了一早上"),
        ("Rough day today.", "Oh no, what happened?",
         "this morning our old dog Biscuit died in his sleep, the kids found him"),
    ])
    def test_a_part_of_the_tellings_day_is_its_own_time(self, extractor, mood, asked, told):
        """"This morning" after "today" is the same time told finer (offline.one_day): the
        answer goes on telling it; before, a mood turn was an event of its own (companion
        chats, issue 36)."""
        drafts = self.extract(extractor, [("user", mood), ("assistant", asked), ("user", told)])
        assert [cited(d) for d in drafts] == [{1, 3}]

