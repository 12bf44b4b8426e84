"""Who spoke (issue 36): a companion's own turns — reactions, comfort, echoes of what the
user said — go behind the user's in recall (recipe field `character_weight`), unless the
query names the character; a chat between two people (both speak as users) is untouched."""

from __future__ import annotations

from dataclasses import replace

import pytest

from chalicelib.domain.models import RecallRequest
from chalicelib.usecases.recall import recall, recipes
from chalicelib.usecases.recall.recipes import HYBRID
from tests.unit.conftest import SPACE, T0

pytestmark = pytest.mark.usefixtures("timeparse_or_stub")

# keyword search only, no links and no gate: the ranking itself is what is checked
ON = replace(HYBRID, name="test_speakers_on", min_relevance=0.0, min_relevance_wide=0.0,
             graph_seeds=0, graph_turns=0, vector_k=0, answers=0.0, character_weight=0.5)
OFF = replace(ON, name="test_speakers_off", character_weight=1.0)
CHAT = [(1, "user", "小林", "我十月换工作了，现在在安安宠物医院当助理"),
        (2, "assistant", "Mika", "宠物医院！你在宠物医院上班真好，宠物医院的小猫小狗一定很可爱"),
        (3, "user", "小林", "今天给一只柯基剪指甲"),
        (4, "user", "小林", "医院楼下新开了一家奶茶店"),
        (5, "user", "小林", "周末去宠物店买了猫砂")]


@pytest.fixture(autouse=True)
def test_recipes(monkeypatch):
    for recipe in (ON, OFF):
        monkeypatch.setitem(recipes.RECIPES, recipe.name, recipe)


def ranked(services, query: str, recipe) -> list[str]:
    out = recall(services, SPACE, RecallRequest(query=query, now=T0, recipe=recipe.name,
                                                max_cards=5))
    return [c.ref for c in out.cards]


def test_the_users_own_turn_comes_before_the_characters_echo(services, put):
    put("s", CHAT)
    assert ranked(services, "宠物医院", OFF)[0] == "message:s:2"  # more of the words
    on = ranked(services, "宠物医院", ON)
    assert on[0] == "message:s:1" and "message:s:2" in on  # behind, not gone


def test_a_query_naming_the_character_keeps_its_turns_where_they_rank(services, put):
    put("s", CHAT)
    assert ranked(services, "Mika 说宠物医院怎么样", ON)[0] == "message:s:2"


def test_two_people_both_speaking_as_users_are_untouched(services, put):
    put("s", [(s, "user", who, text) for s, _, who, text in CHAT])
    assert ranked(services, "宠物医院", ON) == ranked(services, "宠物医院", OFF)
