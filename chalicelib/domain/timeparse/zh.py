"""Chinese rules: 昨天, 三天前, 上周二, 上个月底, 去年, 10月3日, 十月三号, 下午3点半, 国庆节 ...

Guards in the patterns keep ordinary words out: 以前天天 (not 前天), 如今天气 (not 今天),
一周一次 (not 周一), 每周二 (a habit, not a date), 有一点 (not one o'clock), 3号线 (a
subway line, not the 3rd).
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import timedelta

from chalicelib.domain.timeparse import atoms as A
from chalicelib.domain.timeparse import resolve as R
from chalicelib.domain.timeparse.atoms import Atom
from chalicelib.domain.timeparse.holidays import lunar
from chalicelib.domain.timeparse.numerals import ZH_NUM, ZH_VAGUE, zh_to_int, zh_vague
from chalicelib.domain.timeparse.rules import RuleSet
from chalicelib.domain.timeparse.span import Ctx

RULES = RuleSet()

DAY_WORDS = {"大前天": -3, "前天": -2, "昨天": -1, "昨日": -1, "昨儿": -1, "今天": 0, "今日": 0,
             "今儿": 0, "明天": 1, "明日": 1, "明儿": 1, "后天": 2, "大后天": 3, "后儿": 2,
             "前儿": -2}
YEAR_WORDS = {"大前年": -3, "前年": -2, "去年": -1, "今年": 0, "本年": 0, "明年": 1, "后年": 2,
              "大后年": 3}
WEEK_PREFIX = {"上上": -2, "大上": -2, "上": -1, "这": 0, "本": 0, "下": 1, "下下": 2, "大下": 2}
WEEKDAYS = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}
# typed on a phone: 周3, 星期5, 礼拜6, 下周3 (7 is Sunday)
WEEKDAYS |= {str(n): n - 1 for n in range(1, 8)}
# Parts of the day: hours [h0, h1) on the day named (h1 past 24 runs into the next day).
PODS = {"凌晨": (0, 6), "清晨": (5, 8), "早上": (6, 10), "早晨": (6, 10), "一早": (6, 10),
        "上午": (8, 12), "中午": (11, 14), "午后": (13, 16), "下午": (12, 18), "傍晚": (17, 19),
        "黄昏": (17, 19), "晚上": (18, 24), "晚间": (18, 24), "夜里": (21, 29), "夜间": (21, 29),
        "半夜": (23, 27), "深夜": (23, 27), "午夜": (23, 27), "白天": (6, 18), "午间": (11, 14),
        "夜晚": (18, 24), "晨间": (6, 10)}
SHORT_PODS = {"今早": (0, "早上"), "今晨": (0, "早上"), "今晚": (0, "晚上"), "今夜": (0, "晚上"),
              "昨晚": (-1, "晚上"), "昨夜": (-1, "晚上"), "前晚": (-2, "晚上"), "明早": (1, "早上"),
              "明晚": (1, "晚上")}
PARTS = {"初": "begin", "中": "mid", "底": "end", "末": "end", "上旬": "early", "中旬": "mid",
         "下旬": "late", "上半年": "h1", "下半年": "h2", "年初": "begin", "年中": "mid",
         "年底": "end", "年末": "end", "月初": "begin", "月中": "mid", "月底": "end",
         "月末": "end", "最后一天": "day:-1", "第一天": "day:1"}
SEASONS = {"春": "spring", "夏": "summer", "秋": "autumn", "冬": "winter"}
HOLIDAYS = {
    "元旦": "new_year", "春节": "spring_festival", "大年初一": "spring_festival",
    "农历新年": "spring_festival", "除夕": "new_year_eve_lunar", "大年三十": "new_year_eve_lunar",
    "年三十": "new_year_eve_lunar", "元宵节": "lantern", "清明节": "qingming", "清明": "qingming",
    "立春": "lichun", "立夏": "lixia", "夏至": "xiazhi", "立秋": "liqiu", "立冬": "lidong",
    "冬至": "dongzhi",
    "劳动节": "labour_day", "五一劳动节": "labour_day", "五一": "labour_day",
    "端午节": "dragon_boat", "端午": "dragon_boat", "七夕节": "qixi", "七夕": "qixi",
    "中秋节": "mid_autumn", "中秋": "mid_autumn", "国庆节": "national_day",
    "国庆": "national_day", "十一": "national_day", "黄金周": "national_day",
    "重阳节": "double_ninth", "情人节": "valentine", "圣诞节": "christmas", "圣诞": "christmas",
    "平安夜": "christmas_eve", "万圣节": "halloween", "感恩节": "thanksgiving",
    "母亲节": "mothers_day", "父亲节": "fathers_day", "儿童节": "childrens_day",
    "六一儿童节": "childrens_day", "六一": "childrens_day", "妇女节": "womens_day",
    "三八妇女节": "womens_day", "教师节": "teachers_day", "跨年夜": "new_year_eve",
    "跨年": "new_year_eve", "复活节": "easter", "过年": "spring_festival",
    "腊八节": "laba", "腊八": "laba", "小年": "xiaonian", "龙抬头": "longtaitou",
    "中元节": "zhongyuan", "鬼节": "zhongyuan", "春晚": "new_year_eve_lunar",
    "年夜饭": "new_year_eve_lunar", "元旦节": "new_year", "大年夜": "new_year_eve_lunar",
    # lunar dates said as such: 八月十五 is 中秋, not 15 August
    "正月初一": "spring_festival", "正月十五": "lantern", "五月初五": "dragon_boat",
    "七月初七": "qixi", "八月十五": "mid_autumn", "九月初九": "double_ninth",
    "腊月三十": "new_year_eve_lunar",
    "双十一": "singles_day", "双11": "singles_day", "双十二": "double_twelve",
    "双12": "double_twelve",
}

WEEK_WORD_TAILS = set("围年期边岁刊报")  # 这周围, 上周年 ...: not a week
CLOCK_TAILS = set("见到前后左开出去来回起睡吃了的在集准整钟多")
NUMERAL_CHARS = "零〇一二两三四五六七八九十百几"
MONTH = r"(?P<m>1[0-2]|0?[1-9]|十[一二]?|[一二三四五六七八九]|(?<![美日欧港币块])元)"
DAY = r"(?P<d>[12]\d|3[01]|0?[1-9]|[一二]?十[一二三四五六七八九]?|三十一?|[一二三四五六七八九])"
YEAR = r"(?P<y>(?:19|20)\d\d|[一二][〇零○一二三四五六七八九]{3})"
PART_SUFFIX = r"(?P<part>上旬|中旬|下旬|初|底|末)?"
# a month's also its first and last day (11月最后一天, 这个月的第一天)
# 11月中 is mid-November when nothing follows it but a pause ("11月中的时候", "11月中左右"):
# 中 before a noun is another word (9月中秋, 6月中考, 11月中国队)
MONTH_PART_SUFFIX = (r"(?:的?(?P<part>上旬|中旬|下旬|初|底|末|最后一天|第一天"
                     r"|中(?=的时候|左右|前后|[，。！？、,.!?\s~～]|$)))?")
NO_DAY_AFTER = r"(?![楼线房床门车位机球台桌码字院厅馆口子游届期])"
HABIT = re.compile(r"(?:每|那天|那日|当天|当日|第二天|第二日|次日|隔天|翌日|头天)"
                   r"[^，。,.!?！？；;\s]{0,4}$")


def habitual(ctx: Ctx, start: int) -> bool:
    """每天早上6点 / 每周三下午 (a habit) or 那天晚上 / 当天下午 / 第二天一早 / 次日早上 (a
    day named elsewhere, or the day after it): the part of day or clock time names no day
    of its own here."""
    return HABIT.search(ctx.text, max(0, start - 5), start) is not None


def _pod(ctx: Ctx, name: str, day_offset: int | None = None, standalone: bool = True) -> Atom:
    day = None if day_offset is None else R.day_offset(ctx, day_offset).day
    return A.pod(ctx, *PODS[name], day=day, standalone=standalone)


def _with_part(ctx: Ctx, atom: Atom | None, part: str | None) -> Atom | None:
    if atom is None or not part:
        return atom
    return R.part_keeping_year(ctx, PARTS[part], atom)


# --- days --------------------------------------------------------------------------------------

@RULES.add(r"(?<![以之从提如至每当然最先])(?:大前天|前天|昨天|昨日|昨儿|今天|今日|今儿|明天|明日|明儿"
           r"|大后天|后天|后儿(?![子女童媳])|(?<![跟眼面门目])前儿(?=个))(?![天性])", needs="天日儿")
def day_word(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    return R.day_offset(ctx, DAY_WORDS[m[0]])


@RULES.add(r"今早|今晨|今晚|今夜|昨晚|昨夜|前晚|明早|明晚", needs="早晨晚夜")
def short_pod(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    offset, name = SHORT_PODS[m[0]]
    return _pod(ctx, name, offset)


@RULES.add(rf"(?<![\d{NUMERAL_CHARS}第])(?P<n>{ZH_VAGUE}|{ZH_NUM})\s?(?:天|日)(?:之|以)?(?P<dir>前|后)"
           r"(?![天面边])", needs="天日")
def days_ago(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    """三天前 / 十几天前 / 两天后."""
    back = m["dir"] == "前"
    vague = zh_vague(m["n"])
    if vague:
        lo, hi = vague
        return R.days_back(ctx, hi, lo) if back else R.days_ahead(ctx, lo, hi)
    n = zh_to_int(m["n"])
    if n is None or n > 400:
        return None
    return R.day_offset(ctx, -n if back else n)


@RULES.add(rf"(?<![\d{NUMERAL_CHARS}第])(?P<n>{ZH_VAGUE}|{ZH_NUM})\s?个?(?:星期|礼拜|周)(?:之|以)?"
           r"(?P<dir>前|后)(?![天面边])", needs="周期拜")
def weeks_ago(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    vague = zh_vague(m["n"])
    sign = -1 if m["dir"] == "前" else 1
    if vague:
        lo, hi = vague
        return R.weeks_back(ctx, hi, lo) if sign < 0 else R.days_ahead(ctx, 7 * lo, 7 * hi)
    n = zh_to_int(m["n"])
    return R.week_offset(ctx, sign * n) if n is not None and n < 200 else None


@RULES.add(rf"(?<![\d{NUMERAL_CHARS}第])(?P<big>大)?(?P<n>{ZH_VAGUE}|{ZH_NUM}|半)\s?个(?P<more>多)?"
           r"(?P<half>半)?月(?:之|以)?(?P<dir>前|后)(?![天面边])", needs="月")
def months_ago(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    """三个月前 = the calendar month three back; 半个月前, 一个半月前, 三个多月前, 几个月前 are
    vague."""
    sign = 1 if m["dir"] == "前" else -1
    if m["n"] == "半":  # 半个月前: 10-20 days ago; 大半个月前: 15-25
        near, far = (15, 25) if m["big"] else (10, 20)
        return R.days_back(ctx, far, near) if sign > 0 else R.days_ahead(ctx, near, far)
    vague = zh_vague(m["n"])
    n = zh_to_int(m["n"])
    if m["half"] and vague is None and n is not None:  # 一个半月前: about 45 days ago
        return R.about_days_ago(ctx, sign * (30 * n + 15), 31)
    if vague is None and n is not None and m["more"]:
        vague = (n, n + 1)
    if vague:
        lo, hi = vague
        return R.months_back(ctx, hi, lo) if sign > 0 else R.months_ahead(ctx, lo, hi)
    if n is None or n > 600:
        return None
    return R.month_offset(ctx, -sign * n)


@RULES.add(rf"(?<![\d{NUMERAL_CHARS}第])(?P<big>大)?(?P<n>{ZH_VAGUE}|{ZH_NUM}|半)\s?(?P<more>多)?年"
           r"(?P<more2>多)?(?P<half>半)?(?:之|以)?(?P<dir>前|后)(?![天面边])", needs="年")
def years_ago(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    """三年前 = the calendar year three back; 半年前 (months 5-7 back), 大半年前 (7-10), 一年半前
    (about 18 months), 几年前, 两年多前 are vague."""
    back = m["dir"] == "前"
    if m["n"] == "半":
        if m["big"]:
            return R.months_back(ctx, 10, 7) if back else R.months_ahead(ctx, 7, 10)
        return R.months_back(ctx, 7, 5) if back else R.months_ahead(ctx, 5, 7)
    vague = zh_vague(m["n"])
    n = zh_to_int(m["n"])
    if m["half"] and vague is None and n is not None:  # 一年半前: ±3 months round 18 months
        return R.about_days_ago(ctx, (1 if back else -1) * (365 * n + 182), 183)
    if vague is None and n is not None and (m["more"] or m["more2"]):
        vague = (n, n + 1)
    if vague:
        lo, hi = vague
        return R.years_back(ctx, hi, lo) if back else None
    if n is None or n > 150:
        return None
    return R.year_offset(ctx, -n if back else n)


@RULES.add(rf"(?<=自从)[^。！？.!?]{{1,24}}?(?:已经|已|都)?有?(?P<n>{ZH_NUM})\s?(?P<u>年|个月|个星期|个礼拜|周|天)多?了",
           needs="自")
def since_duration(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    """自从我搬过来，已经四年了 / 自从认识她都三个月了: what follows 自从 happened that long ago,
    dated like 四年前 (the English "for 4 years, since I moved")."""
    n = zh_to_int(m["n"])
    if n is None or n > 150:
        return None
    if m["u"] == "年":
        return R.year_offset(ctx, -n)
    if m["u"] == "个月":
        return R.month_offset(ctx, -n)
    if m["u"] == "天":
        return R.day_offset(ctx, -n)
    return R.week_offset(ctx, -n)


@RULES.add(rf"(?<![\d{NUMERAL_CHARS}第])(?P<n>{ZH_NUM}|半)\s?个?(?:小时|钟头)(?:之|以)?(?P<dir>前|后)",
           needs="时头")
def hours_ago(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    sign = -1 if m["dir"] == "前" else 1
    if m["n"] == "半":
        return R.minutes_ago(ctx, -30 * sign, exact=False)
    n = zh_to_int(m["n"])
    return R.hours_ago(ctx, -sign * n) if n is not None and n < 200 else None


@RULES.add(rf"(?<![\d{NUMERAL_CHARS}第])(?P<n>{ZH_NUM})\s?分钟(?:之|以)?(?P<dir>前|后)", needs="钟")
def minutes_ago(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    n = zh_to_int(m["n"])
    if n is None:
        return None
    return R.minutes_ago(ctx, n if m["dir"] == "前" else -n)


# 最近几天 / 这几年: a vague count of units, in days
VAGUE_UNITS = {"天": 5, "日": 5, "周": 21, "个星期": 21, "个礼拜": 21, "个月": 120, "年": 4 * 365}
UNIT_DAYS = {"天": 1, "日": 1, "周": 7, "个星期": 7, "个礼拜": 7, "个月": 30, "年": 365}


@RULES.add(r"(?:最近|(?<![将接])近|过去|这)的?(?P<n>[一二两三四五六七八九十几]|\d{1,2})"
           r"(?P<u>天|日|周|个星期|个礼拜|个月|年)(?P<le>了)?"
           r"(?:来|以来|里|内|中)?", needs="近去这")
def last_n(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    """最近三天 / 过去一周 / 近一个月: rolling windows ending today; 这几年 / 最近几个月 /
    这两年: vague ones."""
    if m[0].startswith("这") and m["u"] not in ("天", "日") and m["n"] not in "几两":
        return None  # 这一周 / 这个月 are calendar units, read by other rules
    if m["le"]:
        return None  # 过去三年了: three years have passed, a duration
    if m["n"] == "几":
        return R.last_days(ctx, VAGUE_UNITS[m["u"]], exact=False)
    n = zh_to_int(m["n"]) or 1
    return R.last_days(ctx, n * UNIT_DAYS[m["u"]], exact=not m[0].startswith("这"))


@RULES.add(r"(?:未来|接下来|今后|往后|之后|随后)的?(?P<n>[一二两三四五六七八九十几]|\d{1,2})"
           r"(?P<u>天|日|周|个星期|个礼拜|个月|年)(?:里|内|中)?", needs="未接今往之随")
def next_n(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    """未来三天 / 接下来的一周 / 今后几个月: the days from tomorrow on."""
    if m["n"] == "几":
        return R.next_days(ctx, VAGUE_UNITS[m["u"]], exact=False)
    n = zh_to_int(m["n"]) or 1
    return R.next_days(ctx, n * UNIT_DAYS[m["u"]])


# 春节前一周 / 国庆后两周 / 圣诞节前一个月: weeks or months before or after the date just
# named. Right after the name of a day only (its last character); before 前两周 alone ("the
# past two weeks", below) in the rule order, so that this reading wins right after a date.
@RULES.add(r"(?<=[节旦庆秋夕午明诞号日])(?P<dir>前|后)(?P<n>[一二两三四五六七八九十]|\d{1,2})"
           r"(?P<u>周|个星期|个礼拜|个月)", needs="前后")
def shift_weeks(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    n = zh_to_int(m["n"])
    if not n:
        return None
    return A.rel("shift_months" if m["u"] == "个月" else "shift_weeks",
                 (n, -1 if m["dir"] == "前" else 1))


@RULES.add(r"(?<![之的最第])前(?P<n>几|两|一两|些|两三)(?P<u>周|个星期|个礼拜|个月|年)(?![的里内中间])",
           needs="前")
def few_units_ago(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    """前几周 / 前两个月 / 前些年: a few weeks / months / years ago, like 几周前."""
    lo, hi = {"几": (2, 6), "些": (2, 6), "两": (1, 3), "一两": (1, 2), "两三": (2, 3)}[m["n"]]
    if m["u"] == "年":
        return R.years_back(ctx, hi, lo)
    if m["u"] == "个月":
        return R.months_back(ctx, hi, lo)
    return R.weeks_back(ctx, hi, lo)


@RULES.add(rf"(?<![不没难好经通超路跨走])(?:再)?过(?P<n>{ZH_VAGUE}|{ZH_NUM})\s?(?P<u>天|日|周|个星期|个礼拜|个月)"
           r"(?![了来去后以之])", needs="过")
def in_a_while(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    """过两天 / 再过一周 / 过几天: that long from now. Vague, as people say it: 过两天 is "in a
    couple of days", so the window spreads a day (a few days for weeks, months) either side."""
    days = UNIT_DAYS[m["u"]]
    vague = zh_vague(m["n"])
    n = zh_to_int(m["n"])
    lo, hi = vague if vague else (n or 0, n or 0)
    if not hi or hi * days > 400:
        return None
    if days == 1 and not vague and m["n"] not in ("两", "一两"):
        return R.day_offset(ctx, lo)  # 过三天: the third day from now
    spread = max(1, days // 4)
    return R.days_ahead(ctx, max(1, lo * days - spread), hi * days + spread)


@RULES.add(r"今明(?:两天)?|明后(?:两)?天|今明后(?:三天)?", needs="明")
def two_days(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    """今明两天 (today and tomorrow) / 明后天 (tomorrow and the day after)."""
    if m[0].startswith("今明后"):
        return R.days_ahead(ctx, 0, 2, exact=True)
    if m[0].startswith("今明"):
        return R.days_ahead(ctx, 0, 1, exact=True) if m[0] != "今明" else None
    return R.days_ahead(ctx, 1, 2, exact=True)


@RULES.add(r"(?P<off>大前年|前年|去年|今年|明年|后年|上上个月|上个月|下个月|上上周|上周|上个星期|上星期"
           r"|上个礼拜|上礼拜|下周|下个星期|(?P<n>[一二两三四五六七八九十]|\d{1,2})(?P<u>年|个月|周|个星期)(?:之|以)?前)"
           r"的?(?P<w>今天|今日|这一天|这天|同一天|这个时候|这时候|这个时间|这段时间|此时|这会儿|同期|同一时间)",
           needs="今天时期会")
def same_time(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    """去年的今天 (today's date last year) / 去年这个时候 / 去年同期 (round it, vague) / 上周的今天."""
    if m["n"]:
        n = zh_to_int(m["n"]) or 0
        years, months, weeks = {"年": (n, 0, 0), "个月": (0, n, 0)}.get(m["u"], (0, 0, n))
        years, months, weeks = -years, -months, -weeks
    else:
        off = m["off"]
        years = {"大前年": -3, "前年": -2, "去年": -1, "今年": 0, "明年": 1, "后年": 2}.get(off, 0)
        months = {"上上个月": -2, "上个月": -1, "下个月": 1}.get(off, 0)
        weeks = 0 if years or months or off == "今年" else (-2 if off.startswith("上上") else
                                                              1 if off.startswith("下") else -1)
    if m["w"] in ("今天", "今日", "这一天", "这天", "同一天"):
        return R.same_day(ctx, years, months, weeks)
    return R.same_time(ctx, years, months, weeks)


@RULES.add(rf"(?<![\d{NUMERAL_CHARS}第])(?P<n>{ZH_NUM})个(?:周|星期|礼拜)(?P<d>[一二三四五六日天])"
           r"(?:之|以)?(?P<dir>前|后)", needs="周期拜")
def weekdays_ago(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    """三个周五以前: the third Friday back (not counting today); 两个周一后 forward."""
    n = zh_to_int(m["n"])
    if not n or n > 60:
        return None
    return R.weekdays_ago(ctx, WEEKDAYS[m["d"]], n if m["dir"] == "前" else -n)


SEASON_PARTS = {"初": "begin", "早": "begin", "仲": "mid", "盛": "mid", "深": "end", "晚": "end",
                "暮": "end", "隆": "mid", "末": "end", "尾": "end"}


@RULES.add(r"(?P<p>初|早|仲|盛|深|晚|暮)(?P<s>[春夏秋])(?![装款天季节风雨景色])"
           r"|(?P<p3>初|隆|深)(?P<s3>冬)(?![装款天季节风雨景色瓜])"
           r"|(?<![立])(?P<s2>[春夏秋冬])(?:天|季)?(?P<p2>初|末|尾)(?![了])", needs="春夏秋冬")
def season_part(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    """初夏 / 深秋 / 夏末 / 隆冬: the first, middle or last month of the season; vague."""
    name = SEASONS[m["s"] or m["s2"] or m["s3"]]
    op = SEASON_PARTS[m["p"] or m["p2"] or m["p3"]]
    base = R.season(ctx, name)
    if base is None or base.in_year is None:
        return None
    build = base.in_year

    def in_year(y: int) -> Atom | None:
        atom = build(y)
        return R.season_part(ctx, op, atom) if atom else None

    atom = R.season_part(ctx, op, base)
    return replace(atom, in_year=in_year) if atom else None


@RULES.add(r"(?:(?P<pre>上上个|上个|上|这个|这|本|下个|下)(?:一个)?季度"
           r"|第(?P<q>[一二三四1-4])(?:个)?季度|(?<![\d一二三四五六七八九十])(?P<q2>[一二三四1-4])季度"
           r"|(?<![A-Za-z])Q(?P<q3>[1-4])(?![\d]|\s*[:.)：、]))", needs="季Q")
def quarter(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    """上个季度 / 本季度 / 第一季度 / 2023年Q3: three calendar months."""
    if m["pre"]:
        offsets = {"上上个": -2, "上个": -1, "上": -1, "这个": 0, "这": 0, "本": 0, "下个": 1, "下": 1}
        return R.quarter_offset(ctx, offsets[m["pre"]])
    q = zh_to_int(m["q"] or m["q2"] or m["q3"]) or 0
    return R.in_year_or_default(ctx, lambda y: R.quarter(ctx, y, q), None, started_only=False)


@RULES.add(r"一段时间(?:之|以)?前|很久(?:之|以)?前|好久(?:之|以)?前|不久(?:之|以)?前", needs="段久")
def some_time_ago(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    """一段时间前 (a while ago, 1-6 weeks); 不久前 (recently); 很久以前 names no window."""
    if m[0].startswith(("很久", "好久")):
        return None
    if m[0].startswith("不久"):
        return R.recently(ctx)
    return R.a_while_ago(ctx)


@RULES.add(r"最近(?![的一点处地])|近来|近期|近日|这阵子|这段时间|这些天|这些日子|不久前|前不久", needs="近段些久阵")
def recently(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    return R.recently(ctx)


@RULES.add(r"(?<!之)(?:前几天|前两天|前些天|前一两天)", needs="前")
def few_days_ago(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    """前几天 / 前两天: a few days ago (2-6 days back); after a date it shifts it instead."""
    return replace(R.days_back(ctx, 6, 2), op="shift", arg=(2, -1))


@RULES.add(r"这几天|这两天", needs="几两")
def these_days(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    return R.last_days(ctx, 5, exact=False)


@RULES.add(r"前阵子|前段时间|前些日子|前一阵子?|之前一段时间", needs="阵段些")
def while_ago(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    return R.a_while_ago(ctx)


@RULES.add(r"刚才|刚刚", needs="刚")
def just_now(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    return R.just_now(ctx)


@RULES.add(r"(?P<de>的)?(?P<dir>前|后)(?P<n>[一二两三四五六七八九十]|\d{1,2})天", needs="前后")
def shift(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    """国庆 + 前一天 / 春节 + 后三天: only meaningful right after a date."""
    n = zh_to_int(m["n"])
    return A.rel("shift", (n, -1 if m["dir"] == "前" else 1)) if n else None


# --- weeks and weekdays ------------------------------------------------------------------------

@RULES.add(rf"(?<![每{NUMERAL_CHARS}\d])(?:(?P<pre>上上|大上|上|这|本|下下|大下|下)(?:个|一)?)?"
           r"(?P<w>周|星期|礼拜)(?:(?P<d>[一二三四五六日天末]|[1-7](?![\d.:：点号月日天年周次个小分秒%]))"
           r"|(?P<wp>初))?", needs="周期拜")
def week_rule(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    """上周 / 上周二 / 这周五 / 周二 / 周末 / 上周末."""
    pre, wday = m["pre"], m["d"]
    if m["wp"]:  # 上周初 / 这周初: Monday-Tuesday
        return R.apply_part(ctx, "begin", R.week_offset(ctx, WEEK_PREFIX[pre])) if pre else None
    if wday is None:
        if pre is None or ctx.text[m.end():m.end() + 1] in WEEK_WORD_TAILS:
            return None
        return R.week_offset(ctx, WEEK_PREFIX[pre])
    if wday == "天" and m["w"] == "周" and pre is None:
        return None  # 周天 alone is rare for Sunday and often part of other words
    if wday == "末":
        return R.weekend_offset(ctx, WEEK_PREFIX[pre]) if pre else R.bare_weekend(ctx)
    if pre is None:
        return R.bare_weekday(ctx, WEEKDAYS[wday])
    return R.weekday_in_week(ctx, WEEKDAYS[wday], WEEK_PREFIX[pre])


@RULES.add(r"(?:(?P<pre>上上|大上|上|这|本|下下|大下|下)个?\s?|(?<![A-Za-z]))[Ww]eekend(?P<han>"
           r"(?=\s?[\u4e00-\u9fff]))?", needs="weekend")
def weekend_mixed(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    """上个 weekend / 这个 weekend / weekend 的时候: the English word in a Chinese sentence, as
    周末 (alone, only with Chinese right after it: "have a nice weekend" names no date)."""
    if m["pre"]:
        return R.weekend_offset(ctx, WEEK_PREFIX[m["pre"]])
    return R.bare_weekend(ctx) if m["han"] is not None else None


# --- months, days of the month, years ------------------------------------------------------------

@RULES.add(r"(?<!每)(?P<pre>上上个|大上个|上个|上|这个|这|本|下下个|大下个|下个|下)月(?![饼亮光球台])"
           + MONTH_PART_SUFFIX, needs="月")
def month_word(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    offsets = {"上上个": -2, "大上个": -2, "上个": -1, "上": -1, "这个": 0, "这": 0, "本": 0,
               "下下个": 2, "大下个": 2, "下个": 1, "下": 1}
    return _with_part(ctx, R.month_offset(ctx, offsets[m["pre"]]), m["part"])


@RULES.add(rf"(?<![\d{NUMERAL_CHARS}第.\-/])(?:{YEAR}\s?年\s?)?{MONTH}\s?月份?"
           rf"(?:\s?{DAY}\s?(?P<ds>日|号|號){NO_DAY_AFTER}|(?P<bd>[12]\d|3[01]|0?[1-9])"
           r"(?![\d个人次天年岁%.:点]))?" + MONTH_PART_SUFFIX, needs="月")
def month_date(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    """2026年10月20日 / 10月3号 / 8月15 / 十月三号 / 8月 / 8月份 / 8月底 / 2025年3月."""
    year = zh_to_int(m["y"]) if m["y"] else None
    month = 1 if m["m"] == "元" else zh_to_int(m["m"])
    if month is None or (year is not None and not 1900 <= year <= 2100):
        return None
    if m["d"] or m["bd"]:
        day = zh_to_int(m["d"] or m["bd"])
        return R.calendar_date(ctx, year, month, day) if day else None
    return _with_part(ctx, R.month_of_year(ctx, month, year), m["part"])


# 12.3 / 11/20 in Chinese text: month first, as Chinese writes dates, but only where a date
# word follows (号, 那天, 晚上, 之前 …) — bare, "3.5" is a score and "1/2" a half.
_NUMERIC_MD_AFTER = (r"(?=\s?(?:号|號|日(?![本元语文剧料记常子])|那天|那晚|那周|当天|当晚|晚上|早上|上午|中午"
                     r"|下午|傍晚|凌晨|夜里|的时候|之前|以前|之后|以后|前后|左右|[-~～至到]\s?"
                     r"(?:1[0-2]|0?[1-9])[./]))")


@RULES.add(r"(?<![\dA-Za-z.\-/:])(?P<m>1[0-2]|0?[1-9])[./](?P<d>3[01]|[12]\d|0?[1-9])"
           r"(?![\d%])" + _NUMERIC_MD_AFTER + r"(?:号|號|日(?![本元语文剧料记常子]))?", needs="#")
def numeric_month_day(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    """12.3号 / 11/20那天 / 12.3晚上: the 3rd of December, the 20th of November."""
    return R.calendar_date(ctx, None, int(m["m"]), int(m["d"]))


@RULES.add(rf"(?<![\d{NUMERAL_CHARS}第.\-/]){DAY}(?P<ds>号|號|日){NO_DAY_AFTER}", needs="号號日")
def day_of_month(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    """20号: this month's 20th. 20日 alone is too often not a date (七日游): it only counts
    next to a month or as a range end (10月1日至7日)."""
    day = zh_to_int(m["d"])
    atom = R.day_of_month(ctx, day) if day else None
    if atom is None:
        return None
    return replace(atom, kind=A.DOM, standalone=m["ds"] != "日")


@RULES.add(rf"(?<![\d第]){YEAR}\s?年(?!代|纪|级|前|后|多|来|内|里)(?P<part>初|底|末|上半年|下半年)?",
           needs="年")
def year_number(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    year = zh_to_int(m["y"])
    if year is None or not 1900 <= year <= 2100:
        return None
    return _with_part(ctx, A.year(ctx, year), m["part"])


@RULES.add(r"(?<![以之提然每])(?P<w>大前年|(?<!从)前年|去年|今年|本年|明年|大后年|后年)"
           r"(?P<part>初|底|末|上半年|下半年)?(?!纪|级|代)", needs="年")
def year_word(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    return _with_part(ctx, R.year_offset(ctx, YEAR_WORDS[m["w"]]), m["part"])


@RULES.add(rf"(?<![每个{NUMERAL_CHARS}\d])(?P<p>年初|年中|年底|年末|上半年|下半年)", needs="年")
def year_part(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    """年底 alone: this year's; after a year (2025年年底) it applies to that year."""
    return replace(R.this_year_part(ctx, PARTS[m["p"]]) or A.part(PARTS[m["p"]]),
                   kind=A.PART, op=PARTS[m["p"]])


@RULES.add(r"第(?P<k>[一二三四1-4])个(?P<w>周|星期|礼拜)(?P<d>[一二三四五六日天])"
           r"|第(?P<n>[一二三四1-4])个?(?P<u>周|星期|礼拜)(?P<we>末)?|最后一个?(?P<u2>周|星期|礼拜)(?P<we2>末)?",
           needs="第最")
def nth_in_month(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    """(6月的 / 上个月) 第一周 / 最后一个周末 / 第二个星期日: applied to the month before it."""
    if m["d"]:
        return A.part(f"weekday:{WEEKDAYS[m['d']]}:{zh_to_int(m['k'])}")
    n = zh_to_int(m["n"]) if m["n"] else -1
    return A.part(f"{'weekend' if m['we'] or m['we2'] else 'week'}:{n}")


@RULES.add(rf"(?<![每个{NUMERAL_CHARS}\d])(?P<p>月初|月中|月底|月末|上旬|中旬|下旬)", needs="月旬")
def month_part(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    return replace(R.this_month_part(ctx, PARTS[m["p"]]) or A.part(PARTS[m["p"]]),
                   kind=A.PART, op=PARTS[m["p"]])


@RULES.add(r"(?<!每年)(?<!每个)(?P<s>[春夏秋冬])(?:天|季)", needs="春夏秋冬")
def season(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    return R.season(ctx, SEASONS[m["s"]])


# --- holidays ---------------------------------------------------------------------------------

HOLIDAY_RE = "|".join(sorted((k for k in HOLIDAYS if k not in ("十一", "五一", "六一", "过年")),
                             key=len, reverse=True))
# After a holiday's name these make it the holiday period (国庆假期, 春节期间, 十一黄金周).
PERIOD_SUFFIX = ("小长假", "长假", "假期", "黄金周", "期间", "放假", "那几天", "那几日", "七天",
                 "假", "的时候", "时候", "时")
# These holidays name a period even alone (过年 is spending the New Year, 黄金周 a week).
PERIOD_NAMES = {"过年", "黄金周", "寒假", "暑假", "跨年"}
PERIOD_KEYS = {"寒假": "winter_holiday", "暑假": "summer_holiday"}


@RULES.add(rf"(?:{HOLIDAY_RE}|(?<![\d{NUMERAL_CHARS}])(?:十一|五一|六一)(?![\d{NUMERAL_CHARS}个号日月点次岁楼])"
           # a place named after the day is no day (五一广场, 五一大道, 六一公园)
           r"(?!广场|大道|公园|小区|中学|小学)"
           r"|过年(?!好))(?P<suffix>节)?(?P<period>小长假|长假|假期|黄金周|期间|放假期间|放假|那几天"
           r"|那几日|七天(?![前后内里])|假(?![装如设的])|的时候|时候|时(?![间候期代刻光]))?"
           r"(?:(?P<around>前后)|(?P<side>(?:之前|以前|前|之后|以后|后)(?![天年来一二两三四五六七八九十几\d])))?",
           needs="".join({k[-1] for k in HOLIDAYS}))
def holiday(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    """国庆节 / 春节 (the day) vs 国庆假期 / 十一黄金周 / 春节期间 / 过年 (the holiday period);
    国庆前后: a few days either side."""
    name = m[0]
    for tail in ("前后", m["side"] or "", m["period"] or "", m["suffix"] or ""):
        if tail and name.endswith(tail):
            name = name[: -len(tail)]
    key = HOLIDAYS.get(name)
    if key is None or (name == "十一" and not m["period"] and not _holiday_eleven(m)):
        return None  # 十一 alone is the number eleven; 十一假期 / 十一长假 is the holiday
    timely = m["period"] in ("的时候", "时候", "时")
    period = name in PERIOD_NAMES or bool(m["period"] and not timely)
    atom = R.holiday(ctx, key, period=period)
    if atom is not None and m["side"]:
        return R.keeping_year(atom, _before if "前" in m["side"] else _after)
    if atom is None or not m["around"]:
        return atom
    return R.keeping_year(atom, _around)


# 十一 without 假期 is the holiday only where a number could not stand: after a year word
# (去年十一, 今年的十一) or before a verb of going (十一去了杭州, 十一回老家).
_ELEVEN_BEFORE = re.compile(r"(?:大前年|前年|去年|今年|明年|后年|那年|这个|上个|下个)的?$")
_ELEVEN_AFTER = re.compile(r"(?:我们|咱们|我|你|他|她)?(?:去|回|出去|出门|出游|旅游|旅行|来|打算|准备|要去|在家|加班|放|没)")


def _holiday_eleven(m: re.Match[str]) -> bool:
    before, after = m.string[: m.start()], m.string[m.end():]
    return bool(_ELEVEN_BEFORE.search(before) or _ELEVEN_AFTER.match(after))


SIDE_DAYS = 14  # 春节前 / 国庆后: the two weeks before or after (vague)


def _before(atom: Atom) -> Atom | None:
    """春节前 / 国庆假期之前: the two weeks before it."""
    if atom.lo is None:
        return None
    return replace(atom, lo=atom.lo - timedelta(days=SIDE_DAYS), hi=atom.lo, exact=False,
                   day=None, in_year=None)


def _after(atom: Atom) -> Atom | None:
    """春节后 / 十一假期以后: the two weeks after it."""
    if atom.hi is None:
        return None
    return replace(atom, lo=atom.hi, hi=atom.hi + timedelta(days=SIDE_DAYS), exact=False,
                   day=None, in_year=None)


@RULES.add(rf"(?<![\d{NUMERAL_CHARS}几多去今明前后每当同往近历长跨新拜过这那半周百千万些整全当])年(?P<side>前|后)"
           r"(?![天年])", needs="年")
def around_new_year(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    """年前 / 年后: before or after the (lunar) New Year, as 春节前 / 春节后 — the coming one
    when it is at most two months away (in January 年前 is this winter's, not last)."""
    atom = R.holiday(ctx, "spring_festival")
    coming = R.holiday(ctx, "spring_festival", y=ctx.today.year)
    if coming is not None and coming.lo is not None and coming.lo.date() >= ctx.today \
            and (coming.lo.date() - ctx.today).days <= 60:
        atom = coming
    side = _before if m["side"] == "前" else _after
    if ctx.future and m["side"] == "后":  # 年后要开工 two days after: this one's weeks after
        last = R.holiday(replace(ctx, future=False), "spring_festival")
        after = side(last) if last is not None else None
        if after is not None and after.hi is not None and after.hi > ctx.now:
            atom = last
    if atom is None:
        return None
    return R.keeping_year(atom, side)


def _around(atom: Atom) -> Atom | None:
    """国庆前后: three days either side."""
    if atom.lo is None or atom.hi is None:
        return None
    return replace(atom, lo=atom.lo - timedelta(days=3), hi=atom.hi + timedelta(days=3),
                   exact=False, day=None, in_year=None)


@RULES.add(r"(?<![放])(?P<n>寒假|暑假)(?!作业|班|工|期间工)", needs="假")
def school_holiday(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    """寒假 (three weeks either side of 春节) / 暑假 (July-August); vague."""
    return R.holiday(ctx, PERIOD_KEYS[m["n"]], period=True)


LUNAR_MONTHS = {"正": 1, "冬": 11, "腊": 12} | {
    ch: i + 1 for i, ch in enumerate("一二三四五六七八九")} | {"十": 10, "十一": 11, "十二": 12}
LUNAR_TENS = {"初": 0, "十": 10, "廿": 20, "二十": 20, "三十": 30}


@RULES.add(r"(?P<lm>正|冬|腊|十[一二]?|[一二三四五六七八九])月(?P<t>初|廿|二十|三十|十)"
           r"(?P<u>[一二三四五六七八九十])?", needs="月")
def lunar_date(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    """腊月二十三 / 正月初五 / 八月十六: a day of the lunar calendar. Only where it cannot be a
    Gregorian date: a lunar month name (正 / 冬 / 腊) or a lunar day (初五, 廿三)."""
    if m["lm"] not in ("正", "冬", "腊") and m["t"] not in ("初", "廿"):
        return None
    units = zh_to_int(m["u"]) if m["u"] else 0
    if (m["t"] in ("初", "十", "廿") and not units) or (m["t"] == "三十" and units):
        return None  # 初 / 十 / 廿 need a unit (初五, 十六, 廿三); 三十 takes none
    day = LUNAR_TENS[m["t"]] + (units or 0)
    if not 1 <= day <= 30:
        return None
    month = LUNAR_MONTHS[m["lm"]]

    def build(year: int) -> Atom | None:
        try:  # 腊月 falls mostly in January-February of the next Gregorian year
            solar = lunar(year - 1 if month == 12 else year, month, day)
        except (ValueError, ImportError):
            return None
        return A.days(ctx, solar)

    return R.in_year_or_default(ctx, build, None, started_only=False)


# --- parts of the day and clock times ------------------------------------------------------------

@RULES.add(r"(?<![今昨明前每最提趁])(?P<p>早|晚)(?=\s?(?:\d{1,2}|[一二三四五六七八九十]{1,3})(?:点|[:：]\d))", needs="早晚")
def short_pod_before_clock(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    """早8点 / 晚8:00: the half of the day, only with the clock after it."""
    return _pod(ctx, "早上" if m["p"] == "早" else "晚上", standalone=False)


YY_BEFORE = set("了过近花用达约整共满第每这那几多有快经")


@RULES.add(r"(?<![\d\-/.])(?P<yy>\d\d|[零〇○一二三四五六七八九]{2})年(?![代前后多来内里了左间半级度届龄纪轻])",
           needs="年")
def two_digit_year(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    """98年 / 03年 / 零三年: 19xx or 20xx, whichever is not in the future."""
    if ctx.text[m.start() - 1:m.start()] in YY_BEFORE:
        return None  # 工作了12年 / 这12年: a count of years
    yy = zh_to_int(m["yy"])
    if yy is None:
        return None
    if yy <= ctx.today.year % 100:
        return A.year(ctx, 2000 + yy)
    return A.year(ctx, 1900 + yy) if yy >= 60 else None  # 30年 / 50年: more likely a count


@RULES.add(r"(?<!每天)(?<!每)(?P<p>凌晨|清晨|早上|早晨|一早(?!上)|上午|中午|午后|下午|傍晚|黄昏|晚上|晚间|夜里"
           r"|夜间|半夜|深夜|午夜|白天|午间|夜晚|晨间)(?!好)", needs="晨早午晚夜昏天间")
def part_of_day(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    return None if habitual(ctx, m.start()) else _pod(ctx, m["p"])


# A meal names the part of a day it is eaten in, and only beside a day (前天午饭的时候,
# 周六晚饭): alone ("午饭吃了面") it says what was eaten, not when.
MEALS = {"早饭": (6, 10), "早餐": (6, 10), "午饭": (11, 14), "午餐": (11, 14), "晚饭": (17, 21),
         "晚餐": (17, 21)}


@RULES.add(r"(?P<p>早饭|早餐|午饭|午餐|晚饭|晚餐)", needs="饭餐")
def meal(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    return None if habitual(ctx, m.start()) else A.pod(ctx, *MEALS[m["p"]], standalone=False)


@RULES.add(rf"(?<![\d.第{NUMERAL_CHARS}])(?P<h>\d{{1,2}}|[零一二两三四五六七八九十]{{1,3}})(?:点|點|时)"
           rf"(?:(?P<half>半)|(?P<q>一刻|三刻)|(?P<m>\d{{1,2}}|[零一二三四五六七八九十]{{1,3}})分?)?"
           r"(?P<z>钟|整|多|左右)?(?![点儿])", needs="点點时")
def clock(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    hour = zh_to_int(m["h"])
    minute = 30 if m["half"] else {"一刻": 15, "三刻": 45}.get(m["q"] or "")
    if m["m"]:
        minute = zh_to_int(m["m"])
    if hour is None or hour > 24 or (minute is not None and minute > 59):
        return None
    if habitual(ctx, m.start()):
        return None
    # 两点 / 三点 in words may be "two points"; alone they need a clock-like word next to them
    tail = ctx.text[m.end():m.end() + 1]
    standalone = m["h"].isdigit() or len(m["h"]) > 1 or m["h"] in "十零" \
        or bool(m["half"] or m["q"] or m["m"] or m["z"]) or tail in CLOCK_TAILS
    return A.clock(ctx, hour, minute, hour > 12 or hour == 0, standalone=standalone)


@RULES.add(r"(?P<y>(?:19|20)?\d0|[二三四五六七八九]十)年代", needs="代")
def decade(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    """90年代 / 八十年代 / 1990年代: the decade (two digits: the 1900s)."""
    value = zh_to_int(m["y"])
    if value is None:
        return None
    first = value if value >= 1900 else 1900 + value
    return Atom(A.SPAN, A.year(ctx, first).lo, A.year(ctx, first + 9).hi, "year")
