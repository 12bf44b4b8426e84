"""Numbers written as Chinese numerals or English words, exact and vague (几, 十几, a few)."""

from __future__ import annotations

ZH_DIGITS = {"零": 0, "〇": 0, "○": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4,
             "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
ZH_UNITS = {"十": 10, "百": 100, "千": 1000}

# Regex fragment: a count in Arabic digits or Chinese numerals (三, 两, 十五, 二十).
ZH_NUM = r"(?:\d{1,3}|[一二两三四五六七八九十百]{1,4})"
# Regex fragment: a vague count (几, 十几, 二十多, 几十, 两三).
ZH_VAGUE = (r"(?:[二三四五六七八九]?十(?:几|多|来)|几十|几|一两|两三|三四|四五|五六|六七|七八|八九"
            r"|\d{1,2}[多来])")

# 几 / a few / several: 2 to 6.
FEW = (2, 6)

EN_WORDS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
    "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17,
    "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50,
    "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90, "a hundred": 100,
    "one hundred": 100,
}
TENS = ("twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")
UNITS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
# Regex fragment: a count in digits or English words (three, twenty-one, twenty one).
EN_NUM = (r"(?:\d{1,3}|(?:" + "|".join(TENS) + r")(?:[\s-]+(?:" + "|".join(UNITS) + r"))?|"
          + "|".join(sorted((w for w in EN_WORDS if w not in TENS), key=len, reverse=True))
          .replace(" ", r"\s+") + ")")


def zh_to_int(text: str) -> int | None:
    """'十五' -> 15, '二十五' -> 25, '两' -> 2, '二〇二六' -> 2026, '12' -> 12; None if not a number."""
    if not text:
        return None
    if text.isdigit():
        return int(text)
    if all(ch in ZH_DIGITS for ch in text):  # digit by digit, as in years: 二〇二六
        value = 0
        for ch in text:
            value = value * 10 + ZH_DIGITS[ch]
        return value
    total, current = 0, 0
    for ch in text:
        if ch in ZH_DIGITS:
            current = ZH_DIGITS[ch]
        elif ch in ZH_UNITS:
            total += (current or 1) * ZH_UNITS[ch]
            current = 0
        else:
            return None
    return total + current


def zh_vague(text: str) -> tuple[int, int] | None:
    """'几' -> (2, 6), '十几' -> (11, 19), '二十多' -> (21, 29), '几十' -> (20, 90),
    '两三' -> (2, 3), '10多' -> (11, 19), '十来' -> (8, 12); the range of counts a vague
    number covers."""
    if text == "几":
        return FEW
    if text == "几十":
        return 20, 90
    if text.endswith("来"):  # 十来天: about ten, a little either side
        base = zh_to_int(text[:-1])
        if base is None or base % 10:
            return None
        return base - 2, base + 2
    if text.endswith(("几", "多")):
        base = zh_to_int(text[:-1])
        if base is None or base % 10:
            return None
        return base + 1, base + 9
    if len(text) == 2 and all(ch in ZH_DIGITS for ch in text):
        return ZH_DIGITS[text[0]], ZH_DIGITS[text[1]]
    return None


def en_to_int(text: str) -> int | None:
    """'3' -> 3, 'three' -> 3, 'a' -> 1; None if not a number."""
    word = " ".join(text.lower().replace("-", " ").split())
    if word.isdigit():
        return int(word)
    tens, _, unit = word.partition(" ")
    if tens in TENS and unit in UNITS:  # twenty one
        return EN_WORDS[tens] + EN_WORDS[unit]
    return EN_WORDS.get(word)
