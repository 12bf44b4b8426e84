"""chalicelib.domain.textrules: sentence splitting, small talk, pronouns, titles, importance."""

from __future__ import annotations

import pytest

from chalicelib.domain import textrules as rules


class TestSplitSentences:
    def test_chinese_punctuation_and_newlines(self):
        assert rules.split_sentences("我今天很开心！你呢？我们去吃饭吧。\n好的") == [
            "我今天很开心！", "你呢？", "我们去吃饭吧。", "好的"]

    def test_english_periods_before_capitals_only(self):
        assert rules.split_sentences("I went to Paris. It was great! Did you go?") == [
            "I went to Paris.", "It was great!", "Did you go?"]
        # a decimal point and a lower-case continuation do not end a sentence
        assert rules.split_sentences("The price is 3.5 dollars. next time") == [
            "The price is 3.5 dollars. next time"]

    def test_blank_pieces_dropped(self):
        assert rules.split_sentences("  \n\n 好的。 \n") == ["好的。"]


class TestSmallTalk:
    @pytest.mark.parametrize("text", [
        "谢谢", "谢谢！", "谢谢你", "你好呀", "你好呀～", "好的", "好的呢", "哈哈哈哈", "嗯嗯", "晚安",
        "ok thanks", "Ok thanks!", "Thanks so much!", "Sounds good", "Good morning Caroline!",
        "Hi!", "lol", "That's awesome!", "That’s great news!",
    ])
    def test_small_talk_is_not_meaningful(self, text):
        assert rules.is_small_talk(text)
        assert not rules.is_meaningful(text)

    @pytest.mark.parametrize("text", ["谢谢您！", "晚安啦"])
    def test_chinese_thanks_with_pronoun_is_small_talk(self, text):
        assert not rules.is_meaningful(text)

    @pytest.mark.parametrize("text", [
        "Hi Mel, I adopted a puppy!",
        "That is a nice painting of a sunset over the lake",
        "奶糖今天去医院体检了",
        "我家的猫奶糖被确诊了肾病。",
    ])
    def test_statements_with_content_are_meaningful(self, text):
        assert not rules.is_small_talk(text)
        assert rules.is_meaningful(text)


class TestQuestions:
    @pytest.mark.parametrize("text", ["What do you think?", "你觉得呢？", "你在干嘛呢？",
                                      "真的吗", "How are you?"])
    def test_content_free_questions_are_skipped(self, text):
        assert rules.is_question(text)
        assert not rules.is_meaningful(text)

    def test_a_question_full_of_content_is_kept(self):
        text = "Do you remember the name of the vet clinic we visited in Boston with Luna?"
        assert rules.is_question(text)
        assert rules.is_meaningful(text)

    @pytest.mark.parametrize(("text", "expected"), [
        ("Are you ok?", True), ("你去吗", True), ("你去吗。", True), ("真的？ ", True),
        ("I went home.", False), ("我回家了", False),
    ])
    def test_is_question(self, text, expected):
        assert rules.is_question(text) is expected


class TestThirdPerson:
    def test_english_first_and_second_person(self):
        out = rules.third_person(
            "I'm happy that I finished my painting and you liked it. I've got yours too.",
            "Mel", "Caroline")
        assert out == ("Mel is happy that Mel finished Mel's painting and Caroline liked it. "
                       "Mel has got Caroline's too.")

    def test_english_contractions(self):
        assert rules.third_person("I'll call you, I'd say I was right", "Mel", "Jo") == (
            "Mel will call Jo, Mel would say Mel was right")

    @pytest.mark.parametrize(("said", "retold"), [
        # any verb in its present form takes the -s, not only the rules' list ("Jess rent a
        # bunk", "Mara ride to Elin": issue 36's role-play chats)
        ("I rent a bunk on Ring 4", "Jess rents a bunk on Ring 4"),
        ("I ride to Elin on Sunday", "Jess rides to Elin on Sunday"),
        ("I sort letters and I fly home", "Jess sorts letters and Jess flies home"),
        ("I catch the bus", "Jess catches the bus"), ("I need a break", "Jess needs a break"),
        # a past tense, a modal, an adverb or a verb whose past keeps its form stays as said
        ("I bought a horse", "Jess bought a horse"), ("I quit the Guild", "Jess quit the Guild"),
        ("I should go", "Jess should go"), ("I started pottery", "Jess started pottery"),
        ("I probably left", "Jess probably left"), ("I do", "Jess does"),
        # after an auxiliary the verb keeps its form
        ("did I tell you about it", "did Jess tell you about it"),
        ("Do I look ok", "Do Jess look ok"), ("can I want more", "can Jess want more"),
    ])
    def test_english_verbs_agree_with_the_name(self, said, retold):
        assert rules.third_person(said, "Jess", None) == retold

    def test_english_without_other_party_keeps_you(self):
        assert rules.third_person("I told you about me", "Mel", None) == "Mel told you about Mel"

    def test_english_does_not_touch_words_containing_i_or_me(self):
        assert rules.third_person("Italy is home to Mel", "Jo", None) == "Italy is home to Mel"

    def test_chinese_pronouns(self):
        assert rules.third_person("我告诉你，我们明天去看我妈妈，您也来吧。你们呢", "小明", "Aki") == (
            "小明告诉Aki，小明和Aki明天去看小明妈妈，Aki也来吧。Aki他们呢")

    def test_chinese_without_other_party(self):
        assert rules.third_person("我们明天去看你", "小明", None) == "小明他们明天去看你"
        assert rules.third_person("咱们走吧", "小明", None) == "小明他们走吧"

    def test_nishuo_asks_the_one_spoken_to(self):
        """Issue 36: "你说我是不是很傻" (do you think I'm silly?) was retold "雪团说苏禾是不是
        很傻", a thing 雪团 never said; "你说得对" says the other was right."""
        assert rules.third_person("你说我是不是很傻。", "苏禾", "雪团") == "苏禾问雪团苏禾是不是很傻。"
        assert rules.third_person("你说每天走多少步合适 我一般走五千多", "刘芳", "小暖") == (
            "刘芳问小暖每天走多少步合适 刘芳一般走五千多")
        assert rules.third_person("你说得对，我明天就去", "刘芳", "小暖") == "小暖说得对，刘芳明天就去"

    def test_a_code_switched_sentence_is_retold_in_both_languages(self):
        """Issue 36: Vivi's "跟 my boss Richard 说了" kept "my"; "I hate 上海的冬天" kept "I"."""
        assert rules.third_person("今天早上跟 my boss Richard 说了, 我脸都绿了", "Vivi", "Sol",
                                  False) == "今天早上跟 Vivi's boss Richard 说了, Vivi脸都绿了"
        assert rules.third_person("I hate 上海的冬天 sooo much", "Vivi", "Sol") == (
            "Vivi hates 上海的冬天 sooo much")
        assert rules.third_person("吃了个 KFC 全家桶 很 sad", "Vivi", "Sol") == "吃了个 KFC 全家桶 很 sad"

    @pytest.mark.parametrize(("text", "me", "you", "retold"), [
        # issue 36: 阿凯's "我喜欢你" became "小满喜欢阿澈" — the companion on the confession
        ("他紧张的结巴了 说了三遍我喜欢你hhhhh 我就答应了", "小满", "阿澈",
         "他紧张的结巴了 说了三遍「我喜欢你」hhhhh 小满就答应了"),
        ("他说“我喜欢你”，我说“我也是”", "小满", "阿澈", "他说“我喜欢你”，小满说“我也是”"),
        ("he said I love you three times lol", "Nora", "Juniper",
         'he said "I love you three times lol"'),
        ('she told me "you are enough"', "Nora", "Juniper", 'she told Nora "you are enough"'),
        # reported speech keeps the teller's view: retold as before
        ("他说我深蹲姿势不对想教我", "小满", "阿澈", "他说小满深蹲姿势不对想教小满"),
        ("he said you were right", "Nora", "Juniper", "he said Juniper was right"),
        ("我跟你说我好累", "小满", "阿澈", "小满跟阿澈说小满好累"),
        ("听说你要搬家了，我也想搬", "小满", "阿澈", "听说阿澈要搬家了，小满也想搬"),
    ])
    def test_what_somebody_said_in_their_words_is_kept(self, text, me, you, retold):
        assert rules.third_person(text, me, you) == retold


class TestMakeTitle:
    def test_english_first_clause(self):
        assert rules.make_title("Mel adopted a puppy, and named her Luna.") == "Mel adopted a puppy"

    def test_english_long_clause_is_cut_to_nine_words(self):
        title = rules.make_title(
            "Mel went to the big old museum in the center of the city with her kids")
        assert title == "Mel went to the big old museum in the…"

    def test_chinese_first_clause(self):
        assert rules.make_title("小明家的猫奶糖被确诊了肾病，医生说要每天吃药。") == "小明家的猫奶糖被确诊了肾病"

    def test_chinese_long_clause_is_cut(self):
        title = rules.make_title("小明今天去了位于上海市浦东新区的一家非常有名的宠物医院给猫咪做全面体检")
        assert len(title) == 24
        assert title.endswith("…")
        assert title.startswith("小明今天去了位于上海市")


class TestImportance:
    def test_base_score_for_chit_chat(self):
        assert rules.importance("The coffee was good.", has_time=False) == 3

    def test_life_event_scores_higher(self):
        assert rules.importance("奶糖被确诊了肾病", has_time=False) == 5
        assert rules.importance("Mel adopted a puppy", has_time=False) == 5

    def test_every_signal_adds_up_and_is_capped(self):
        text = ("I decided to move to Berlin in 2027 for a new job at a startup company "
                "with my wife and kids")
        # life word +2, plan word +1, time +1, ≥10 content terms +1, digit +1
        assert rules.importance(text, has_time=True) == 9
        assert rules.importance(text, has_time=False) == 8

    def test_question_scores_lower_and_floor_is_one(self):
        assert rules.importance("What time is it?", has_time=False) == 1
        assert rules.importance("Were you at the hospital?", has_time=False) == 3

    @pytest.mark.parametrize("text", ["", "好", "!!!", "x" * 5000, "生日 结婚 毕业 2026 " * 50])
    def test_always_within_1_to_10(self, text):
        for has_time in (False, True):
            assert 1 <= rules.importance(text, has_time) <= 10


@pytest.mark.parametrize("said,retold", [
    ("I’ve come a long way since my transition",
     "Caroline has come a long way since Caroline's transition"),
    ("Now I want to help people", "Now Caroline wants to help people"),
    ("I really love painting", "Caroline really loves painting"),
    ("I go hiking and I miss it", "Caroline goes hiking and Caroline misses it"),
    ("I’m so glad", "Caroline is so glad"),
])
def test_retelling_handles_curly_apostrophes_and_third_person_verbs(said, retold):
    # LoCoMo writes I’ve with a curly apostrophe: titles read "Caroline've come a long way"
    assert rules.third_person(said, "Caroline", "Melanie") == retold
