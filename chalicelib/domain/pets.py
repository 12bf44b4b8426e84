"""A pet's species, from the kind the fact rules keep beside its name (Fact.kind: 柯基, 橘猫,
"tabby"): a question that names a species ("我的狗叫什么？", "What's Jess's cat's name?")
asks about the pets of that species only (domain.fact_questions, usecases.recall.profile).

Written by hand: the kinds are the fact rules' own short list (domain.facts `_PET`, `_ZPET`),
and which of them are cats or dogs is common knowledge no library packages for both languages.
"""

from __future__ import annotations

import re

# per species: the English words (whole words) and the Chinese ones (held anywhere in the kind:
# 橘猫, 田园犬, 小狗狗)
_SPECIES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "cat": (("cat", "cats", "kitten", "kitty", "tabby", "siamese", "moggy"),
            ("猫", "英短", "美短", "布偶", "暹罗")),
    "dog": (("dog", "dogs", "puppy", "pup", "collie", "spaniel", "labrador", "lab", "retriever",
             "terrier", "poodle", "corgi", "husky", "beagle", "dachshund", "pug", "greyhound",
             "whippet", "pit", "pitbull", "pittie", "staffy", "mutt", "shepherd"),
            ("狗", "犬", "柯基", "柴犬", "金毛", "泰迪", "哈士奇", "萨摩耶", "边牧", "拉布拉多",
             "比熊", "博美", "雪纳瑞")),
}
SPECIES_WORDS_EN = "|".join(w for en, _ in _SPECIES.values() for w in en)
SPECIES_WORDS_ZH = "|".join(w for _, zh in _SPECIES.values() for w in zh)


def species(kind: str) -> str | None:
    """The species of a pet kind ("柯基" → dog, "tabby cat" → cat), or None: unknown."""
    words = set(re.findall(r"[a-z]+", kind.lower()))
    for name, (english, chinese) in _SPECIES.items():
        if words & set(english) or any(w in kind for w in chinese):
            return name
    return None
