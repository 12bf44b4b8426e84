"""Facts told across turns (chalicelib.domain.fact_context) and how the use case keeps them
(weak facts, names given later): answers to the companion's questions, role nouns bound to
the one name near them, a generic thing made specific."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from chalicelib.domain.fact_context import Turn, read_turns
from chalicelib.domain.facts import Statement
from chalicelib.domain.models import Message
from chalicelib.usecases import facts

T0 = datetime(2026, 3, 1, 20, tzinfo=UTC)


def said(*turns: tuple[str, str]) -> list[list[tuple[str, str, bool]]]:
    read = read_turns([Turn(role, text) for role, text in turns], ["Tom", "Echo"])
    return [[(s.attribute, s.value, s.ends) for s in one] for one in read]


def test_an_answer_to_the_companions_question_states_its_value():
    assert said(("user", "月月，我升职了！"), ("assistant", "恭喜！升到什么职位了？"),
                ("user", "支行副行长！下周正式任命，以后不做客户经理了"))[2] == [
        ("works_as", "客户经理", True), ("works_as", "支行副行长", False)]
    # a generic thing told before is made specific by the answer, in the turn that told it
    assert said(("user", "团子！我买了台相机！"), ("assistant", "什么相机？"),
                ("user", "富士的X-T30，二手的"))[0] == [("owns", "富士X-T30", False)]
    assert said(("user", "I bought a car this morning."), ("assistant", "Ooh, what kind?"),
                ("user", "An old Volvo estate, bright blue."))[0] == [("owns", "Volvo", False)]


def test_an_answer_counts_only_for_the_question_it_answers():
    # "Big job?" asks nothing an answer could give; "Honestly" names nothing
    assert said(("user", "Sat in my van for an hour."), ("assistant", "Big job?"),
                ("user", "Whole Victorian house."))[2] == []
    assert said(("assistant", "Which one fits how you imagine him?"),
                ("user", "Honestly, I imagine him screaming at 3am."))[1] == []
    # 去哪儿了 is about work only after talk of work
    assert said(("user", "周末出去玩了"), ("assistant", "去哪儿了？"), ("user", "去了杭州，人好多"))[2] == []
    assert said(("user", "我换工作了"), ("assistant", "去哪儿了？"), ("user", "去了美团，还是写代码"))[2] == [
        ("works_at", "美团", False)]


def test_a_role_noun_takes_the_one_name_near_it():
    assert said(("assistant", "Old dogs are the best. Is Sam home too?"),
                ("user", "Not yet, my girlfriend works late on Mondays."))[1] == [
        ("partner", "Sam", False)]
    assert said(("user", "Biscuit's giving me the look, he wants his walk."),
                ("assistant", "Biscuit! Remind me, how old is your boy now?"),
                ("user", "Thirteen. He's a slow old dog these days."))[2] == [
        ("pet", "Biscuit", False)]
    assert said(("user", "Meet Pepper! Eight-week-old collie cross from the rescue."))[0] == [
        ("pet", "Pepper", False)]
    # two names near it: which one is meant is not said
    assert said(("assistant", "Are Sam and Alex coming?"),
                ("user", "Just my girlfriend, she loves these."))[1] == []
    # a place or a firm is no one's name
    assert said(("user", "I've been at Hartley & Moss for years, Bristol traffic is murder."),
                ("assistant", "Poor you."), ("user", "My girlfriend says quit."))[2] == []


def msg(seq: int, text: str, hours: float, role: str = "user", session: str = "s1") -> Message:
    return Message(space="s", session=session, seq=seq, role=role,
                   speaker="Tom" if role == "user" else "Echo", content=text,
                   at=T0 + timedelta(hours=hours), content_hash=f"h{session}{seq}")


def test_a_place_told_in_passing_never_overrides_one_told_plainly():
    got: dict = {}
    stated = [Statement("lives_in", "Bristol"), Statement("lives_in", "Paris", weak=True)]
    for i, statement in enumerate(stated):
        for fact in facts.apply(got, "s", "Tom", statement, T0 + timedelta(days=i),
                                f"message:s1:{i}", T0):
            got[fact.key] = fact
    assert [(f.value, f.valid_to) for f in got.values()] == [("Bristol", None)]
    # with nothing told plainly, it stands
    alone: dict = {}
    for fact in facts.apply(alone, "s", "Tom", Statement("lives_in", "Paris", weak=True), T0,
                            "message:s1:0", T0):
        alone[fact.key] = fact
    assert [f.value for f in alone.values()] == ["Paris"]


def test_a_name_told_after_goes_to_the_nameless_pet_of_that_talk():
    got: dict = {}
    steps = [(Statement("pet", "cat", kind="cat"), 0), (Statement("named", "Luna"), 0.1),
             (Statement("named", "Ava"), 30)]  # a day later: nobody nameless is left
    for i, (statement, hours) in enumerate(steps):
        for fact in facts.apply(got, "s", "Tom", statement, T0 + timedelta(hours=hours),
                                f"message:s1:{i}", T0):
            got[fact.key] = fact
    assert [(f.attribute, f.value, f.kind) for f in got.values()] == [("pet", "Luna", "cat")]


def test_a_batch_read_again_adds_nothing_and_two_statements_of_one_turn_both_count():
    got: dict = {}
    for fact in facts.apply(got, "s", "Tom", Statement("works_as", "客户经理"), T0,
                            "message:s1:0", T0):
        got[fact.key] = fact
    for _ in range(2):
        for statement in [Statement("works_as", "客户经理", True), Statement("works_as", "副行长")]:
            for fact in facts.apply(got, "s", "Tom", statement, T0 + timedelta(days=30),
                                    "message:s2:3", T0):
                got[fact.key] = fact
    assert sorted((f.value, f.valid_to is None, f.version) for f in got.values()) == [
        ("副行长", True, 1), ("客户经理", False, 2)]


def test_a_question_the_user_confirms_is_what_the_user_says():
    assert said(("assistant", "Is Hemi your partner?"), ("user", "Yeah, almost two years."))[1] == [
        ("partner", "Hemi", False)]
    assert said(("assistant", "小雯是你女朋友吗？"), ("user", "嗯 谈了两年了"))[1] == [
        ("partner", "小雯", False)]
    assert said(("assistant", "你是不是酒精过敏呀"), ("user", "对 医院查过"))[1][0] == (
        "allergic_to", "酒精", False)
    # of the alternatives, the one the answer names
    assert said(("assistant", "Are you the pharmacist there, or on the tills?"),
                ("user", "Pharmacist, for my sins."))[1] == [("works_as", "pharmacist", False)]
    # not confirmed: nothing
    assert said(("assistant", "Is Hemi your partner?"), ("user", "God no, he's my brother."))[1] == []
    assert said(("assistant", "小雯是你女朋友吗？"), ("user", "不是 是我表妹"))[1] == []


def test_chat_writing_is_read_as_written():
    # a Chinese pause written as a space; an English "I" dropped before what one did
    assert said(("user", "阿杰加班 就奶盖陪我 我家猫咪咪今天有点不舒服"))[0] == [("pet", "咪咪", False)]
    assert said(("user", "Sold the Chevy today."))[0] == [("owns", "Chevy", True)]
    assert said(("user", "上周五最后一天班 同事给我买了个蛋糕"))[0] == [
        ("works_at", "*", True), ("works_as", "*", True)]


def test_the_core_layer_waits_for_a_second_mention_of_a_fact_told_in_passing(tmp_path):
    from chalicelib.config import Settings
    from chalicelib.wiring import build_services

    services = build_services(Settings(data_dir=tmp_path, embedder="hash", schedule="off",
                                       _env_file=None), index="inline")
    said = [msg(0, "Bristol traffic is murder tonight.", 0), msg(1, "I'm allergic to peanuts.", 0.1)]
    facts.learn(services, "s", said, T0)
    assert facts.core_block(services, "s", ["Tom"], 120) == \
        "About them (now):\n- Tom: allergic to peanuts"
    view = {f.attribute: f for f in facts.profile(services, "s", "Tom").facts}
    assert view["lives_in"].in_passing and not view["allergic_to"].in_passing
    facts.learn(services, "s", [msg(2, "The Bristol rain again!", 30)], T0)
    assert "lives in Bristol" in facts.core_block(services, "s", ["Tom"], 120)


def test_phone_english_is_read_as_written():
    assert said(("user", "also my bf josh and i had a fight bc i keep cancelling"))[0] == [
        ("partner", "Josh", False)]
    assert said(("user", "im allergic to latex so i have to remember the gloves"))[0] == [
        ("allergic_to", "latex", False)]
    # a lowercase name is capitalised the way the companion spells it
    assert said(("assistant", "How's Redline treating you?"), ("user", "scout i quit redline"))[1] == [
        ("works_at", "Redline", True)]
    # a verb after "my husband" is no name
    assert said(("user", "my husband does the 11pm bottle"))[0] == []


def test_an_answer_about_somebody_else_is_theirs():
    assert said(("assistant", "令郎在何处高就？"), ("user", "在美国西雅图，做芯片的工程师。"))[1] == []
    assert said(("assistant", "What does your sister do?"), ("user", "She's a nurse in Leeds."))[1] == []
    # a yes/no about who somebody is to the user is the user's
    assert said(("assistant", "Kofi's your son?"), ("user", "Yeah. He's nine."))[1] == [
        ("child", "Kofi", False)]


def test_a_pet_just_told_dead_is_not_reopened_by_saying_who_it_was():
    got: dict = {}
    steps = [(Statement("pet", "豆豆", True, kind="仓鼠"), 0), (Statement("pet", "豆豆", kind="仓鼠"), 0.05)]
    for i, (statement, hours) in enumerate(steps):
        for fact in facts.apply(got, "s", "Tom", statement, T0 + timedelta(hours=hours),
                                f"message:s1:{i}", T0):
            got[fact.key] = fact
    assert [(f.value, f.valid_to is None) for f in got.values()] == [("豆豆", False)]


def test_a_home_of_the_past_closes_nothing_and_here_is_the_place_just_named():
    assert said(("user", "I grew up in Leicester but I haven't lived there since."))[0] == [
        ("lives_in", "Leicester", True)]
    got: dict = {}
    for i, statement in enumerate([Statement("lives_in", "Leeds"),
                                   Statement("lives_in", "Leeds", True, weak=True)]):
        for fact in facts.apply(got, "s", "Tom", statement, T0 + timedelta(days=i),
                                f"message:s1:{i}", T0):
            got[fact.key] = fact
    assert [(f.value, f.valid_to) for f in got.values()] == [("Leeds", None)]
    assert said(("user", "Morning! Writing to you from Brighton."), ("assistant", "Visiting?"),
                ("user", "I live here now! Moved in last weekend."))[2] == [
        ("lives_in", "Brighton", False)]
    assert said(("user", "I live here now!"))[0] == []


def test_endings_as_chat_tells_them():
    assert said(("user", "前辈我退坑原神了"))[0] == [("likes", "原神", True)]
    assert said(("user", "小橘 我把麻将戒了"))[0] == [("likes", "麻将", True)]
    assert said(("user", "小七 铁馆倒闭了"))[0] == [("works_at", "铁馆", True)]
    # a question naming a thing the user holds, answered by its end
    got = read_turns([Turn("assistant", "辛苦了。钢琴最后怎么处理的?"),
                      Turn("user", "卖了，卖给一个学琴的小姑娘家里。")], [], [("owns", "钢琴")])
    assert [(s.attribute, s.value, s.ends) for s in got[1]] == [("owns", "钢琴", True)]
    got = read_turns([Turn("assistant", "What happened to the boat?"),
                      Turn("user", "Sold it to a guy from Galveston.")], [], [("owns", "bass boat")])
    assert got[1] == []  # "the boat" is not "bass boat": nothing is guessed
    # a bare no to whether it still holds ends it; a no that answers something else does not
    known = [("learning", "Arabic"), ("lives_in", "Dubai")]
    still = Turn("assistant", "Sending good luck. Are you still doing the Arabic classes?")
    got = read_turns([still, Turn("user", "no, i stopped. too many double shifts")], [], known)
    assert [(s.attribute, s.value, s.ends) for s in got[1]] == [("learning", "Arabic", True)]
    got = read_turns([still, Turn("user", "no time lately but yes, sundays")], [], known)
    assert got[1] == []
    # a pet given away by a pronoun: the one the user's turns named last
    got = read_turns([Turn("user", "Pickle got into the vents. Again."),
                      Turn("assistant", "I did warn you."),
                      Turn("user", "I know. I gave him to a kid at the market.")], [],
                     [("pet", "Sprocket"), ("pet", "Pickle")])
    assert [(s.attribute, s.value, s.ends) for s in got[2]] == [("pet", "Pickle", True)]
    got = read_turns([Turn("assistant", "And Mister Buttons? Does he approve of the oak?"),
                      Turn("user", "That's the hard part. He couldn't come. He's living with "
                                   "Carol now, my old neighbor.")], [], [("pet", "Mister Buttons")])
    assert [(s.attribute, s.value, s.ends) for s in got[1]] == [("pet", "Mister Buttons", True)]
    got = read_turns([Turn("user", "我家豆豆最近胖了"), Turn("user", "它现在跟我们住，天天睡沙发")], [],
                     [("pet", "豆豆")])
    assert got[1] == []  # living with the user still
    # an ending on "it": the held like, lesson or allergy named last before it
    got = read_turns([Turn("assistant", "That must be hard, running was such a big part of "
                                        "your life."),
                      Turn("user", "I thought I'd be gutted, but I was running away from stuff. "
                                   "I'm done with it.")], [], [("likes", "running")])
    assert [(s.attribute, s.value, s.ends) for s in got[1]] == [("likes", "running", True)]
    got = read_turns([Turn("user", "they fed me egg bit by bit. The doctor says I've outgrown "
                                   "it")], [], [("allergic_to", "egg"), ("likes", "kaya toast")])
    assert [(s.attribute, s.value, s.ends) for s in got[0]] == [("allergic_to", "egg", True)]
    told = said(("user", "His name is Pickle. He's a moss lizard."),
                ("user", "Pickle got into the vents. Again."),
                ("user", "I gave him to a kid at the market."))  # told in the same batch
    assert told[2] == [("pet", "Pickle", True)]
    got = read_turns([Turn("user", "我家咪咪太黏人了"), Turn("user", "没办法，只好把它送走了")], [],
                     [("pet", "咪咪"), ("pet", "旺财")])
    assert ("pet", "咪咪", True) in [(s.attribute, s.value, s.ends) for s in got[1]]
    got = read_turns([Turn("assistant", "你还在学吉他吗？"), Turn("user", "早就不弹了")], [],
                     [("learning", "吉他")])
    assert [(s.attribute, s.value, s.ends) for s in got[1]] == [("learning", "吉他", True)]


def test_a_place_in_passing_is_a_home_when_the_talk_is_of_the_move():
    assert said(("user", "hello from HAMILTON"), ("assistant", "You made it! How was moving day?"),
                ("user", "chaos lol"))[0] == [("lives_in", "HAMILTON", False)]
    got = read_turns([Turn("user", "hello from Hamilton"), Turn("assistant", "Visiting?")])
    assert [s.weak for s in got[0]] == [True]  # no move talked of: still in passing
    # a move that names its place plainly keeps the flat's district in passing
    got = read_turns([Turn("user", "We finally moved to Berlin! It's a little flat in Neukölln.")])
    assert [(s.value, s.weak) for s in got[0]] == [("Berlin", False), ("Neukölln", True)]


def test_terse_and_phone_typed_answers():
    # a Chinese yes is often the question's verb said back
    assert ("likes", "钓鱼", False) in said(("assistant", "您很喜欢钓鱼吧？"), ("user", "喜欢。就这点爱好。"))[1]
    assert said(("assistant", "您不喜欢吃辣吧？"), ("user", "不。"))[1] == []
    # a job said alone as one phrase of an answer about work
    assert said(("assistant", "Where do you work?"), ("user", "st brendans hospital, icu. nurse."))[1] == [
        ("works_as", "nurse", False)]
    assert said(("assistant", "Is this freelance work?"),
                ("user", "yes. freelance graphic designer. 3 years now."))[1] == [
        ("works_as", "graphic designer", False)]
    # the talk of work may be the user's turn before the question ("guess who got the job" —
    # "WAIT. Papercrane?!"), as it may for a bare "Where?"
    assert said(("user", "guess who got the job"), ("assistant", "WAIT. Papercrane?!"),
                ("user", "PAPERCRANE. junior illustrator!!! they rang me yesterday"))[2] == [
        ("works_as", "illustrator", False)]
    assert said(("user", "guess who got a puppy"), ("assistant", "WAIT. A corgi?!"),
                ("user", "CORGI. junior illustrator of chaos lol"))[2] == []  # no work talked of
    # a bare "Where?" after talk of a new job asks for the firm
    assert ("works_at", "Onda Studio", False) in said(
        ("user", "big news. took a full-time job."), ("assistant", "Congratulations! Where?"),
        ("user", "Onda Studio. design agency in the old town."))[2]
    # "my gf." answers "Who's Ama?" once phone English is written out
    assert said(("assistant", "That's sweet. Who's Ama?"), ("user", "my gf. we share a place"))[1] == [
        ("partner", "Ama", False)]
    # a lowercase opener that does something is the name the role noun takes, not a thing before
    assert said(("user", "old Vespa. mine."), ("assistant", "Sounds fun."),
                ("user", "tico is asleep on my feet. my dog. lucky him."))[2] == [("pet", "Tico", False)]


def test_an_answer_quoting_the_questions_own_word_gives_no_value():
    """"Where are you living now?" — "'Living' is generous": the quoted word is the question's,
    not a place; a name the question offers may still be chosen."""
    assert said(("assistant", "Long hauls. Cramped quarters. Where are you living now?"),
                ("user", "*snorts* 'Living' is generous. I rent a bunk down by the recycler."))[1] == []
    assert said(("assistant", "Where are you living now, Leeds or York?"),
                ("user", "York! finally"))[1] == [("lives_in", "York", False)]


def test_a_pet_told_by_its_kind_is_the_one_the_companion_asked_about():
    """"Mochi 是？" — "my cat! 英短蓝猫": the pet is Mochi, a 蓝猫 — not a pet called 蓝猫."""
    turns = [Turn("user", "Mochi 在踩我键盘 我去喂她"), Turn("assistant", "Mochi 是？"),
             Turn("user", "my cat! 英短蓝猫 two years old 胖得像个 dumpling")]
    assert [(s.attribute, s.value, s.kind) for s in read_turns(turns)[2]] == [
        ("pet", "Mochi", "蓝猫")]


def test_an_ending_verb_on_a_value_the_space_holds_ends_it():
    """A model read likes=badminton that no rule reads; "I've given up badminton" then ends it
    by the value the space holds — and a trip away from home ends no home."""
    known = [("likes", "badminton"), ("owns", "面包车"), ("works_at", "Corniche Care Hospital"),
             ("lives_in", "London")]

    def ended(text):
        return [(s.attribute, s.value) for s in read_turns([Turn("user", text)], [], known)[0]
                if s.ends]

    assert ended("honestly I've given up badminton. the knee swells up") == [
        ("likes", "badminton")]
    assert ended("那辆面包车跟店一起卖给接手的小两口了") == [("owns", "面包车")]
    assert ("works_at", "Corniche Care Hospital") in ended(
        "on my last shift at Corniche Care they made me a cake")
    assert ended("we left London for Paris on friday") == []
    assert read_turns([Turn("user", "they sold pottery at the fair")], [],
                      [("learning", "pottery")])[0] == []  # one sells what one has
    assert ended("I still love badminton") == []


def _learned(tmp_path, batches: list[list[Message]]) -> dict[str, str | None]:
    """Learn batch by batch (each its own extraction, as sessions are); the open lives_in
    values, and each value's end."""
    from chalicelib.config import Settings
    from chalicelib.domain.records import Fact
    from chalicelib.wiring import build_services

    services = build_services(Settings(data_dir=tmp_path, embedder="hash", schedule="off",
                                       _env_file=None), index="inline")
    for batch in batches:
        facts.learn(services, "s", batch, T0)
    return {f.value: f.closed_by for f in services.store.list_records(Fact, "s")
            if f.attribute == "lives_in"}


def test_a_move_told_before_it_happens_comes_true_when_the_place_is_named_from_there(tmp_path):
    homes = _learned(tmp_path / "en", [
        [msg(0, "I live in Leeds, near the park.", 0)],
        [msg(1, "found a little flat in York near Bootham. moving on the 5th", 48,
             session="s2"),
         msg(2, "the landlord in York hadn't finished the boiler though", 49, session="s2")],
        [msg(3, "hello from York!!", 400, session="s3")]])
    assert homes == {"Leeds": "message:s3:3", "York": None}
    zh = _learned(tmp_path / "zh", [
        [msg(0, "我住在南京，鼓楼区", 0)],
        [msg(1, "苏州的事定了，陈默11月正式调过去，我们全家一起搬。", 48, session="s2")],
        [msg(2, "我们已经在苏州安顿下来啦！", 900, session="s3")]])
    assert zh == {"南京": "message:s3:2", "苏州": None}


def test_a_planned_place_named_for_someone_else_a_trip_or_the_same_talk_moves_no_one(tmp_path):
    homes = _learned(tmp_path / "others", [
        [msg(0, "I live in York, right in the middle of it.", 0),
         msg(1, "He moved to Rome for work and keeps saying we'll visit.", 0.1)],
        [msg(2, "Ben's coming home from Rome next week.", 300, session="s2"),
         msg(3, "Ben flew back from Rome for the weekend.", 301, session="s2")]])
    assert homes == {"York": None}
    same_talk = _learned(tmp_path / "same", [
        [msg(0, "I live in Leeds.", 0),
         msg(1, "we might move to Bristol next year", 0.1),
         msg(2, "Bristol is lovely in spring, we went last May", 0.2)]])
    assert same_talk == {"Leeds": None}
    zh = _learned(tmp_path / "zh", [
        [msg(0, "我住在南京", 0), msg(1, "我哥搬到上海了", 0.1)],
        [msg(2, "我哥在上海挺好的", 300, session="s2")]])
    assert zh == {"南京": None}


def test_a_move_of_someone_close_is_no_plan_of_the_speakers():
    """The people around one are domain.kin's: 闺蜜, 儿子, 女儿 move, not the speaker."""
    from chalicelib.domain.fact_plans import arrived, places_planned

    assert places_planned("我闺蜜小鹿搬去成都了，上周走的。突然觉得上海好空") == []
    assert not arrived("我儿子李明在深圳做外贸 一年回来两三次", "深圳")
    assert not arrived("女儿小雯在上海，生了个外孙，叫我们过去帮忙带。", "上海")
    assert places_planned("我们全家下个月搬去苏州") == ["苏州"]
    assert arrived("我们已经在苏州安顿下来啦！", "苏州", said_by_me=True)


def test_a_job_named_alone_is_the_job_not_the_verb_with_it():
    """"做成本会计" told of work is the job 成本会计 (the profile showed 做成本会计)."""
    assert said(("assistant", "太好了，朵朵上学方便多了。你工作那边有消息吗？"),
                ("user", "有个日企叫和光精密，约了下周二视频面试，做成本会计。"))[1] == [
        ("works_as", "成本会计", False)]


def test_apostrophes_typed_on_a_phone_read_as_plain_ones():
    """iOS writes ’ for ': every contraction of the rules (I'm, don't, what's) read nothing."""
    assert said(("user", "I’m working at Stripe now"))[0] == [("works_at", "Stripe", False)]
    assert said(("user", "I don’t work at Google anymore."))[0] == [("works_at", "Google", True)]
    # the companion's question too: the bare answer is the name asked for
    assert said(("user", "we adopted a cat!"), ("assistant", "What’s her name?"),
                ("user", "Luna"))[2] == [("named", "Luna", False)]


def test_a_question_with_a_phone_apostrophe_asks_its_fact():
    from chalicelib.domain.fact_questions import fact_asked

    assert fact_asked("What’s Vivi’s job?") == ("works_as", "What’s Vivi’s job")
