"""Facts with the time they held (chalicelib.domain.facts, chalicelib.usecases.facts): what a
turn states about its speaker, in zh and en, and how a later statement closes an earlier
fact without deleting it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from chalicelib.domain.facts import Statement, same_value, statements
from chalicelib.domain.models import Message
from chalicelib.domain.records import Fact
from chalicelib.usecases import facts

T0 = datetime(2026, 1, 5, 20, tzinfo=UTC)


@pytest.mark.parametrize("text,expected", [
    ("We finally moved to Lisbon last week!", [("lives_in", "Lisbon", False)]),
    ("I'm based in Oslo now.", [("lives_in", "Oslo", False)]),
    ("I moved again, to Porto now.", [("lives_in", "Porto", False)]),
    ("I moved to New York City in May.", [("lives_in", "New York City", False)]),
    ("I started at Acme as a designer.", [("works_at", "Acme", False),
                                          ("works_as", "designer", False)]),
    ("I handed in my notice.", [("works_at", "*", True)]),
    # "gave my notice" as "handed in" (a held-out companion chat, issue 36), the I dropped
    ("gave my notice at Greenleaf today, last day is next friday",
     [("works_at", "*", True), ("works_at", "Greenleaf", True)]),
    ("I put in my notice.", [("works_at", "*", True)]),
    ("I adopted a cat named Miso!", [("pet", "Miso", False)]),
    ("My cat Miso passed away last night.", [("pet", "Miso", True)]),
    ("I'm allergic to peanuts.", [("allergic_to", "peanuts", False)]),
    ("I used to love coffee but now I can't stand it.", [("likes", "coffee", True),
                                                         ("dislikes", "coffee", False)]),
    ("I started learning the guitar.", [("learning", "guitar", False)]),
    ("My girlfriend is Lena.", [("partner", "Lena", False)]),
    ("我搬到杭州了", [("lives_in", "杭州", False)]),
    ("我现在跟人合租在徐汇，离公司骑车十五分钟", [("lives_in", "徐汇", False)]),
    ("我搬出宿舍了 在光谷跟同事合租了 离公司近", [("lives_in", "光谷", False)]),
    ("现在在杭州住", [("lives_in", "杭州", False)]),
    ("我上个月入职了字节", [("works_at", "字节", False)]),
    ("我对花生过敏", [("allergic_to", "花生", False)]),
    ("我养了一只橘猫，叫奶糖。", [("pet", "奶糖", False)]),
    ("我不喝咖啡了", [("likes", "咖啡", True)]),
    ("我现在是一名护士。", [("works_as", "护士", False)]),
    # typed all in lowercase: the words where a firm or a place goes are its name
    ("i work at bean there, a coffee place", [("works_at", "Bean", False)]),
    ("we moved to north london last week", [("lives_in", "North London", False)]),
    ("im allergic to cats which is bad", [("allergic_to", "cats", False)]),
    ("sold my ps5 lol", [("owns", "ps5", True)]),
    ("我跟小雨分了", [("partner", "小雨", True)]),
    ("我家来了一只小猫", [("pet", "猫", False)]),
    ("我从小就爱听川剧", [("likes", "川剧", False)]),
    ("电动车卖给新来的骑手了", [("owns", "电动车", True)]),
    ("我对花生不过敏了。", [("allergic_to", "花生", True)]),
    ("现在正式毕业啦", [("studies", "*", True)]),
    ("女儿，九月二十号出生的，小名叫朵朵。", [("child", "朵朵", False)]),
    # negated: no longer so with 了, denied without (issue 36: were read as held)
    ("我不住在广州了", [("lives_in", "广州", True)]),
    ("我已经不在腾讯上班了", [("works_at", "腾讯", True)]),
    # a pet's name is no time ("我的猫昨天走了" was pet 昨天)
    ("我的猫昨天走了", [("pet", "猫", True)]),
    ("我家豆豆昨天走了", [("pet", "豆豆", True)]),
    # the one the speaker does it with is no subject
    ("我上周跟领导提了离职，月底最后一天。", [("works_at", "*", True)]),
    ("我和小林订婚了", [("partner", "小林", False)]),
    # no longer so in English too (said nothing before)
    ("I don't work at Google anymore.", [("works_at", "Google", True)]),
    ("I'm not living in Leeds anymore.", [("lives_in", "Leeds", True)]),
    ("I'm not based in Oslo, I'm based in Bergen", [("lives_in", "Bergen", False),
                                                    ("lives_in", "Oslo", True)]),
    ("I'm dating Sam.", [("partner", "Sam", False)]),  # "I'm" read no partner
    ("I'm working at Stripe now", [("works_at", "Stripe", False)]),  # nor here
    # common ways to say a change, in both languages
    ("I'm engaged to Sam!", [("partner", "Sam", False)]),
    ("my girlfriend and I broke up", [("partner", "*", True)]),
    ("we split up last week.", [("partner", "*", True)]),
    ("we broke up the fight", []),  # no breakup: what follows is its object
    ("I'm learning to play the piano", [("learning", "piano", False)]),
    ("I dropped out of college last year.", [("studies", "*", True)]),
    ("I graduated in May", [("studies", "*", True)]),  # when, not what ("May" was a value)
    ("I graduated in chemistry from Leeds", [("studies", "chemistry", True)]),
    ("I just started at Google as a PM", [("works_at", "Google", False),
                                          ("works_as", "PM", False)]),
    ("see you at 3 pm", []),  # job titles by their letters: in capitals only
        ("我被公司辞退了", [("works_at", "*", True)]),
    ("我跟男朋友吹了", [("partner", "男朋友", True)]),
    ("I'm in a relationship with Sam", [("partner", "Sam", False)]),
    # a new role or employer told by the move itself
    ("I got promoted to engineering manager!", [("works_as", "engineering manager", False)]),
    ("我升职为产品经理了", [("works_as", "产品经理", False)]),
    ("我跳槽到了北医三院", [("works_at", "北医三院", False)]),
    # a foster taken in by others is no pet of the speaker's now
    ("Pip got adopted! a family in Ilkley.", [("pet", "Pip", True)]),
    ("豆豆被一家人领走了", [("pet", "豆豆", True)]),
])
def test_what_a_turn_states_about_its_speaker(text, expected):
    assert [(s.attribute, s.value, s.ends) for s in statements(text)] == expected


@pytest.mark.parametrize("text", [
    "I might move to Tokyo next year.", "my sister moved to Rome", "You could move to Paris!",
    "Do you live in Berlin?", "我想养只狗", "我们在考虑合租", "我姐姐搬到上海了", "你住在哪里？", "如果我搬到北京呢",
    # a degree, not a death (冻死了: "freezing"); a time, not a firm; a test, not a workplace
    "刚跑完最后一单 冻死了", "烦死了 又下雨", "上周她走了", "我到上海啦！入职快三周了",
    "在医院做了过敏检测", "i work at home mostly",
    # denied, or somebody else's: kin and exes (domain.kin)
    "我没住在广州", "我没在学日语", "我前任住在武汉", "我前男友搬到深圳了", "我婆婆住在乡下",
    # what was, not what is ("I used to live in Paris" says nothing either)
    "我以前住在巴黎", "小时候住在乐山", "I used to live in Paris.", "I'm not sure I live in Leeds",
])
def test_plans_questions_and_other_people_state_nothing(text):
    assert statements(text) == []


def test_same_value():
    assert same_value("Acme", "Acme Corp") and same_value("杭州", "杭州市")
    assert not same_value("Acme", "Acmeville") and not same_value("Rome", "Roma")


def msg(seq: int, text: str, days: int, role: str = "user") -> Message:
    return Message(space="s", session=f"s{days}", seq=seq, role=role,
                   speaker="Mia" if role == "user" else "Aria", content=text,
                   at=T0 + timedelta(days=days), content_hash=f"h{seq}")


def test_a_new_home_closes_the_old_one_and_keeps_it(services):
    facts.learn(services, "s", [msg(1, "I live in Munich.", 0),
                                msg(2, "I'm allergic to peanuts.", 0)])
    facts.learn(services, "s", [msg(3, "We finally moved to Berlin!", 10)])
    mia = facts.profile(services, "s", "Mia")
    homes = [(f.value, f.current, f.valid_to) for f in mia.facts if f.attribute == "lives_in"]
    assert homes == [("Berlin", True, None), ("Munich", False, T0 + timedelta(days=10))]
    assert [f.value for f in mia.facts if f.current] == ["Berlin", "peanuts"]
    closed = next(f for f in mia.facts if f.value == "Munich")
    assert closed.closed_by == "message:s10:3" and closed.sources == ["message:s0:1"]


def test_reading_a_turn_again_adds_nothing(services):
    turns = [msg(1, "I adopted a cat named Miso!", 0)]
    assert facts.learn(services, "s", turns)
    assert facts.learn(services, "s", turns) == []


def test_an_ending_closes_the_value_it_names_or_its_kind(services):
    facts.learn(services, "s", [msg(1, "I adopted a cat named Miso!", 0),
                                msg(2, "I have a dog named Rex.", 0)])
    facts.learn(services, "s", [msg(3, "My cat passed away yesterday.", 5)])
    pets = {f.value: f.current for f in facts.profile(services, "s", "Mia").facts}
    assert pets == {"Rex": True, "Miso": False}


def test_the_assistants_turns_are_no_facts_of_anyone(services):
    facts.learn(services, "s", [msg(1, "I love jazz, and you could move to Paris!", 0,
                                    role="assistant")])
    assert all(not p.facts for p in facts.profiles(services, "s").profiles)


def test_the_core_block_is_current_facts_within_its_budget(services):
    facts.learn(services, "s", [msg(1, "I live in Munich.", 0),
                                msg(2, "I adopted a cat named Miso!", 0),
                                msg(3, "We finally moved to Berlin!", 9)])
    block = facts.core_block(services, "s", ["Mia"], 120)
    assert "Berlin" in block and "Miso" in block and "Munich" not in block
    short = facts.core_block(services, "s", ["Mia"], 12)
    assert len(short) < len(block) and "Berlin" in short
    assert facts.core_block(services, "s", ["Mia"], 3) == ""


def test_a_role_outlived_by_its_workplace_is_not_said_until_a_new_one_is_known(services):
    """Issue 36: the core layer says nothing rather than something stale, and the profile
    does not show as current what it no longer knows. A role told while a job held that has
    ended, with no workplace known now, is unconfirmed (kept, with the message that ended the
    job); told a new workplace, the role is current and said again."""
    facts.learn(services, "s", [msg(1, "I started at Acme as a designer.", 0),
                                msg(2, "I handed in my notice.", 30)])
    role = _fact(facts.profile(services, "s", "Mia"), "works_as")
    assert (role.value, role.current, role.status, role.valid_to) == (
        "designer", False, "unconfirmed", None)
    assert role.unconfirmed_by == "message:s30:2"  # msg(2, …, 30): session s30
    assert "designer" not in facts.core_block(services, "s", ["Mia"], 120)
    facts.learn(services, "s", [msg(3, "I started at Globex last week.", 60)])
    role = _fact(facts.profile(services, "s", "Mia"), "works_as")
    assert (role.current, role.status, role.unconfirmed_by) == (True, "current", None)
    block = facts.core_block(services, "s", ["Mia"], 120)
    assert "Globex" in block and "designer" in block


def test_the_user_confirms_an_unconfirmed_role(services):
    """PATCH current=true of a role the profile shows unconfirmed is the user's word that it
    went on: a new version, current, said by the core layer; "current" again is no change."""
    from chalicelib.domain.errors import BadRequest

    facts.learn(services, "s", [msg(1, "我在皓齿口腔当前台", 0), msg(2, "我辞职了", 30)])
    role = _fact(facts.profile(services, "s", "Mia"), "works_as")
    assert (role.value, role.status) == ("前台", "unconfirmed")
    done = facts.patch_fact(services, "s", role.id,
                            facts.PatchFactRequest(version=role.version, current=True))
    assert (done.version, done.current, done.status) == (role.version + 1, True, "current")
    assert _fact(facts.profile(services, "s", "Mia"), "works_as").current
    assert "前台" in facts.core_block(services, "s", ["Mia"], 120)
    with pytest.raises(BadRequest):
        facts.patch_fact(services, "s", done.id,
                         facts.PatchFactRequest(version=done.version, current=True))


def _fact(profile, attribute: str):
    return next(f for f in profile.facts if f.attribute == attribute)


@pytest.mark.parametrize(("text", "held"), [
    ("心动 but 要搬去深圳.", []), ("下个月搬去深圳", []),  # a move ahead: a plan, no home yet
    ("上个月搬去深圳了", [("lives_in", "深圳")]), ("我搬到杭州了", [("lives_in", "杭州")]),
    ("重要的是我住在杭州", [("lives_in", "杭州")]),  # 重要 is no 要
])
def test_a_chinese_move_ahead_is_no_home_yet(text, held):
    """Issue 36: Vivi's "心动 but 要搬去深圳" (she had to move, if she took the job) made 深圳
    her home a month before she went; an ending told ahead still ends ("我要换工作了")."""
    assert [(s.attribute, s.value) for s in statements(text)] == held
    assert any(s.ends for s in statements("阿橙！我要换工作了"))


def test_statement_is_hashable():
    assert len({Statement("pet", "Miso"), Statement("pet", "Miso")}) == 1


def test_a_profile_carries_the_graphs_aliases(services):
    from chalicelib.domain.records import Entity

    facts.learn(services, "s", [msg(1, "I live in Munich.", 0)])
    services.store.put_record(Entity(scope="s", key="en_mia", name="Mia", kind="person",
                                     aliases=["Mimi"]))
    assert facts.profile(services, "s", "Mia").aliases == ["Mimi"]


def test_a_thing_a_model_read_from_the_turn_that_sells_it_is_closed(services):
    """Issue 36/37: "I sold Rusty. My hoverbike." read by a model as owns=Rusty: the rules read
    the ending of what the model just told (it is known to them too), and it stands."""
    turn = msg(1, "Yeah... I sold Rusty. My hoverbike. Got eight hundred credits for her.", 0)
    facts.learn(services, "s", [turn], T0, {1: [Statement("owns", "Rusty")]})
    rusty = [f for f in services.store.list_records(Fact, "s") if f.value == "Rusty"]
    assert [(f.attribute, f.valid_to is not None) for f in rusty] == [("owns", True)]


def test_a_turn_a_model_read_keeps_the_rules_floor_under_it(services):
    """Issue 37: what the model said of a turn stands; what the rules read of an attribute the
    model was silent on is kept beneath it (a small model misses what is plainly said)."""
    turn = msg(1, "I moved to Leeds and I'm allergic to kiwi.", 0)
    model = {1: [Statement("lives_in", "Leeds, UK")]}
    written = facts.learn(services, "s", [turn], T0, model)
    held = sorted((f.attribute, f.value) for f in written)
    assert held == [("allergic_to", "kiwi"), ("lives_in", "Leeds, UK")]
    assert facts.under_model([], [Statement("pet", "Miso")]) == [Statement("pet", "Miso")]
    assert facts.under_model([Statement("pet", "Miso", ends=True)],
                             [Statement("pet", "Mochi")]) == [Statement("pet", "Miso", ends=True)]
    # the rules' ending of a value stands under a model: one it did not hold here, and one it
    # read from the very turn that ends it ("我和阿杰分手了" read as partner=阿杰, "I sold Rusty"
    # as owns=Rusty); an ending naming no value ("*") does not
    ending = Statement("partner", "Ewa", ends=True)
    assert facts.under_model([Statement("partner", "Jo")], [ending]) \
        == [Statement("partner", "Jo"), ending]
    assert facts.under_model([Statement("works_at", "Fennimore's")],
                             [Statement("works_at", "*", ends=True)]) \
        == [Statement("works_at", "Fennimore's")]
    assert facts.under_model([Statement("partner", "Ewa")], [ending]) \
        == [Statement("partner", "Ewa"), ending]


def test_the_rules_value_of_a_list_stands_beside_the_models_other_value():
    """Issue 37, held-out 5: "I'm doing Italian lessons … so I finally understand Sal" — the
    model read `learning=Sal`, the rules `learning=Italian`; of a list both can hold, so the
    rules' value is kept beside the model's. A single-valued attribute keeps the model's
    alone, and the model's own value is not said twice."""
    model = [Statement("learning", "Sal")]
    assert facts.under_model(model, [Statement("learning", "Italian")]) \
        == [Statement("learning", "Sal"), Statement("learning", "Italian")]
    assert facts.under_model(model, [Statement("learning", "sal")]) == model
    assert facts.under_model([Statement("lives_in", "Dennistoun")],
                             [Statement("lives_in", "Glasgow")]) \
        == [Statement("lives_in", "Dennistoun")]


def test_the_rules_say_what_a_pet_is_where_a_model_read_its_kind():
    """Issue 37 (held-out 1, zh): the 1.5B put a pet's kind where its name goes (橘猫 for 奶盖,
    泰迪 for 球球); the rules had read the name and the kind in that turn."""
    named = Statement("pet", "奶盖", kind="橘猫")
    assert facts.under_model([Statement("pet", "橘猫")], [named]) == [named]
    dog = Statement("pet", "球球", kind="泰迪")
    assert facts.under_model([Statement("pet", "泰迪")], [dog]) == [dog]
    # where the rules read nothing of those words, the model's reading stands
    assert facts.under_model([Statement("child", "果果")], [dog]) \
        == [Statement("child", "果果"), dog]
    # and an ending is the model's to report whatever the rules read
    gone = Statement("pet", "球球", ends=True)
    assert facts.under_model([gone], [dog]) == [gone]


def test_a_workplace_named_by_the_head_of_the_job_held_is_that_job(services):
    """Issue 37, held-out 5: a model put "I am now a head chef" under works_at, an employer
    called "head chef" beside the sous chef's job. A workplace named by the job's head word
    is the job told again (one job with another qualifier: the same job, as the rules
    have it — held-out 1's "freelance" then "full-time photographer")."""
    facts.learn(services, "s", [msg(1, "I'm the sous chef at Bramble & Oak.", 0)], T0,
                {1: [Statement("works_as", "sous chef"), Statement("works_at", "Bramble & Oak")]})
    facts.learn(services, "s", [msg(2, "new intel: I am now a head chef", 9)], T0,
                {2: [Statement("works_at", "head chef")]})
    now = {(f.attribute, f.value) for f in services.store.list_records(Fact, "s")
           if f.valid_to is None}
    assert ("works_at", "head chef") not in now
    assert now == {("works_as", "sous chef"), ("works_at", "Bramble & Oak")}
    job = next(f for f in services.store.list_records(Fact, "s") if f.attribute == "works_as")
    assert "message:s9:2" in job.sources



@pytest.mark.parametrize(("text", "value"), [
    ("昨天开我那辆老捷达去的 打了三回才打着火", "老捷达"),
    ("本来想骑我那台摩托车去医院送东西", "摩托车"),
    ("我那辆电动车到现在还没修好", "电动车"),
    ("我养了只猫叫来福", "来福"),
])
def test_a_things_name_ends_where_going_on_with_it_starts(text, value):
    """我那台摩托车去医院送东西 owns a 摩托车, not a 摩托车去医院送东西 (which no ending of the
    motorbike could then close); 来福 keeps its 来."""
    assert [s.value for s in statements(text)] == [value]


@pytest.mark.parametrize(("text", "expected"), [
    # the dropped "I" goes before the verb, after the adverb chat leads with
    ("also quit pottery. can't do thursdays from York", [("learning", "pottery", True)]),
    ("finally handed in my notice", [("works_at", "*", True)]),
    # a last day somewhere is an ending, wherever the clause stops
    ("morning… 昨天 last day at Lumen. 交了电脑和 badge", [("works_at", "Lumen", True)]),
    # a count or an ordinal is no workplace
    ("对 入职第三天. 新同事都好年轻", []),
    # the one allergic is 我, not part of what one is allergic to
    ("医生本来要给我开阿莫西林，我说我青霉素过敏", [("allergic_to", "青霉素", False)]),
])
def test_what_chat_leaves_out_or_puts_around_a_value(text, expected):
    assert [(s.attribute, s.value, s.ends) for s in statements(text)] == expected


def test_the_home_told_again_from_there_joins_its_sources(services):
    """A home read from a turn ahead of the move ("找好了，在苏州园区") and told again from
    there weeks later ("我们已经在苏州安顿下来啦"): the later turn is a source too, the latest
    (recall shows it first for "where do I live now?"), and nothing else changes."""
    facts.learn(services, "s", [msg(1, "我住在苏州。", 0)])
    facts.learn(services, "s", [msg(2, "我们已经在苏州安顿下来啦！", 10),
                                msg(3, "今天好累，早点睡", 11)])
    homes = [f for f in facts.profile(services, "s", "Mia").facts if f.attribute == "lives_in"]
    assert [(f.value, f.current) for f in homes] == [("苏州", True)]
    assert homes[0].sources[-1] == "message:s10:2" and "message:s0:1" in homes[0].sources


def test_a_place_named_from_elsewhere_is_no_home_told_again(services):
    facts.learn(services, "s", [msg(1, "I live in Leeds.", 0)])
    facts.learn(services, "s", [msg(2, "Might move back to Leeds someday?", 10),
                                msg(3, "I'm in York for the weekend.", 11)])
    homes = [f for f in facts.profile(services, "s", "Mia").facts if f.attribute == "lives_in"]
    assert [(f.value, f.current, f.sources) for f in homes] == [("Leeds", True, ["message:s0:1"])]


def test_a_value_a_model_read_from_a_plan_or_a_question_is_not_held(services):
    """The rules' hedges are a floor under a model: "我想给他做个蛋糕" read as likes=蛋糕 and
    "What if I learned the harmonica?" as learning=harmonica are plans and questions; an
    ending stands, and a value also said plainly in the turn stands."""
    facts.learn(services, "s", [msg(1, "对了他周五生日 我想给他做个蛋糕", 0),
                                msg(2, "What if I learned the harmonica? I love jazz.", 1)], T0,
                {1: [Statement("likes", "蛋糕")],
                 2: [Statement("learning", "harmonica"), Statement("likes", "jazz")]})
    held = {(f.attribute, f.value) for f in services.store.list_records(Fact, "s")
            if f.valid_to is None}
    assert held == {("likes", "jazz")}
