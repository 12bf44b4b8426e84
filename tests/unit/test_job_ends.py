"""A job is a workplace and a role: when the workplace ends and the turn tells no new role,
the role ends with it (issue 36: 我辞职了 left 前台 current, "last shift at Fig & Fern" left
barista current, and the core layer injected the stale role on every turn)."""

from __future__ import annotations

from datetime import timedelta

from chalicelib.usecases import facts
from tests.unit.test_facts import T0, msg


def current(services, attribute: str) -> list[str]:
    return [f.value for f in facts.profile(services, "s", "Mia").facts
            if f.attribute == attribute and f.current]


def test_quitting_ends_the_role_too(services):
    facts.learn(services, "s", [msg(1, "我在皓齿口腔当前台，快两年了。", 0)])
    assert current(services, "works_as") == ["前台"]
    facts.learn(services, "s", [msg(2, "还有一个事，我辞职了，辞职信节前交的。", 20)])
    assert current(services, "works_at") == [] and current(services, "works_as") == []
    role = next(f for f in facts.profile(services, "s", "Mia").facts if f.value == "前台")
    assert role.valid_to == T0 + timedelta(days=20) and role.closed_by == "message:s20:2"
    assert "前台" not in facts.core_block(services, "s", ["Mia"], 200)


def test_a_role_told_with_the_new_workplace_stays(services):
    facts.learn(services, "s", [msg(1, "I work at Acme as a nurse.", 0)])
    facts.learn(services, "s", [msg(2, "I quit Acme and now I work at Globex as a nurse.", 9)])
    assert "nurse" in current(services, "works_as")


def test_a_role_alone_is_untouched_by_other_news(services):
    facts.learn(services, "s", [msg(1, "I'm a barista.", 0)])
    facts.learn(services, "s", [msg(2, "I adopted a cat named Miso!", 3)])
    assert current(services, "works_as") == ["barista"]
