"""Lasting facts a person tells about themself, purely (issue 24): where they live, where and
as what they work, what they study or learn, their pets, partner and children, allergies,
likes and dislikes, what they own — and when a later statement ends one ("I moved to Porto",
"my cat passed away", 我不喝咖啡了).

`statements(text)` reads one turn, said by its speaker, and returns what it states in the first
person: (attribute, value, ends). A statement about somebody else ("my sister moved to Rome"),
a plan or a wish ("I might move to Tokyo", 我想养只狗) and a question state nothing. Which
value is current, and when each held, is the use-case's (chalicelib.usecases.facts): a
single-valued attribute (lives_in, works_at, works_as, studies, partner) holds one value at a
time, a new one closes the one before; the others hold several until one is ended.

>>> statements("We finally moved to Lisbon last week!")
[Statement(attribute='lives_in', value='Lisbon', ends=False)]
>>> statements("我对花生过敏。")
[Statement(attribute='allergic_to', value='花生', ends=False)]
>>> statements("I might move to Tokyo next year.")
[]
"""

from __future__ import annotations

import re
from dataclasses import dataclass

ATTRIBUTES = ("lives_in", "works_at", "works_as", "studies", "pet", "partner", "child",
              "allergic_to", "likes", "dislikes", "owns", "learning")
SINGLE = frozenset({"lives_in", "works_at", "works_as", "studies", "partner"})
LABELS = {
    "en": {"lives_in": "lives in", "works_at": "works at", "works_as": "works as",
           "studies": "studies", "pet": "pet", "partner": "partner", "child": "child",
           "allergic_to": "allergic to", "likes": "likes", "dislikes": "dislikes",
           "owns": "owns", "learning": "learning"},
    "zh": {"lives_in": "住在", "works_at": "工作单位", "works_as": "职业", "studies": "在读",
           "pet": "宠物", "partner": "伴侣", "child": "孩子", "allergic_to": "过敏",
           "likes": "喜欢", "dislikes": "不喜欢", "owns": "拥有", "learning": "在学"},
}


@dataclass(frozen=True)
class Statement:
    attribute: str
    value: str  # "*": whatever the value was ("I handed in my notice", 我毕业了)
    ends: bool = False  # the value no longer holds ("I quit Acme", 我不喝咖啡了)
    kind: str = ""  # a pet's kind beside its name ("cat"): "my cat passed away" ends Miso


# ------------------------------------------------------------------ English

_WHO = r"(?:^|(?<=[.!?;,]\s)|(?<=^\s)|(?<=\b(?:and|so|but|now|finally|well|yes|yeah|oh)\s))"
_I = r"(?:I|I've|I'm|we|we've|we're)"
_CAP = r"(?-i:[A-Z])"  # a capital letter, whatever the pattern's flags
_V = rf"(?P<value>{_CAP}[\w'&.-]*(?:\s+(?:{_CAP}[\w'&.-]*|(?-i:of|de|la|le|du|am|upon)\b))*)"  # a name
_NAME = rf"{_CAP}[\w-]*"
_THING = r"(?P<value>(?:an?\s+|the\s+|some\s+)?[\w' -]{2,40}?)"
_END = r"(?=\s*(?:[.,;:!?)]|\band\b|\bbut\b|\bnow\b|\bnext\b|\blast\b|\bsince\b|\bfor\b|\bthis\b|\btoday\b|\byesterday\b|\bagain\b|\bwith\b|\bbecause\b|$))"
_PET = r"(?:cat|kitten|dog|puppy|rabbit|bunny|hamster|parrot|bird|fish|turtle|tortoise|guinea pig|ferret|lizard|snake)"
_KIN_PARTNER = r"(?:wife|husband|girlfriend|boyfriend|partner|fianc[ée]e?)"
_KIN_CHILD = r"(?:son|daughter|baby|kid|child)"
_JOB = (r"(?:designer|engineer|developer|teacher|nurse|doctor|writer|editor|manager|analyst|"
        r"chef|cook|baker|barista|accountant|lawyer|architect|programmer|researcher|consultant|"
        r"photographer|translator|tutor|intern|pharmacist|vet|artist|musician|marketer|"
        r"scientist|librarian|mechanic|electrician|plumber|carpenter|officer|ranger|driver|"
        r"paramedic|firefighter|student|waiter|waitress|cashier|illustrator|journalist)")
# what one starts or gives up by name ("I took up pottery", "I gave up the guitar")
_SKILL = (r"(?:guitar|piano|violin|cello|drums|ukulele|pottery|painting|yoga|swimming|boxing|"
          r"climbing|japanese|spanish|french|german|korean|chinese|italian|coding|python|"
          r"knitting|dancing|singing)")
# …and what a class or course is of ("my Portuguese class")
_LEARNABLE = rf"(?:{_SKILL}|portuguese|surfing|driving|cooking|baking|photography)"

_EN: list[tuple[str, bool, re.Pattern[str]]] = [(a, e, re.compile(p, re.IGNORECASE | re.M))
                                                 for a, e, p in (
    # where they live
    ("lives_in", False, rf"\b{_I}\s+(?:(?:have|has|just|finally|now|recently|officially)\s+)*"
                        rf"(?:moved|relocated)\s+(?:\w+,?\s+)?(?:to|into)\s+{_V}"),
    ("lives_in", False, rf"\b{_I}\s+(?:now\s+|still\s+)?(?:live|am living|'m living|are living)"
                        rf"\s+in\s+{_V}"),
    ("lives_in", False, rf"\b{_I}\s*(?:am|'m|are|'re)\s+(?:now\s+)?(?:based|living|settled)\s+in\s+{_V}"),
    ("lives_in", False, rf"\b{_I}\s*(?:'ve|have)\s+(?:been\s+)?(?:lived|living)\s+(?:here\s+)?in\s+{_V}"),
    ("lives_in", False, rf"\b(?:my|our)\s+(?:\w+\s+)?(?:flat|house|home|apartment|place|kitchen|"
                        rf"garden|street|neighbourhood|neighborhood)\s+in\s+{_V}"),
    # work
    ("works_at", False, rf"\b{_I}\s+(?:(?:just|finally|now|recently|officially)\s+)*"
                        rf"(?:started|joined|got a (?:new )?job)\s+(?:(?:a new job|work|working)\s+)?"
                        rf"(?:at|with)\s+{_V}"),
    ("works_at", False, rf"\b(?:I|I(?:\s+[\w']+){{1,4}}\s+and)\s+(?:now\s+)?(?:work|am working|'m working)\s+"
                        rf"(?:at|for)\s+{_V}"),
    ("works_at", False, rf"\bI\s+joined\s+{_V}"),
    ("works_at", True, rf"\bI\s+(?:(?:just|finally)\s+)?(?:quit|left)\s+(?:my job at\s+|my job with\s+)?{_V}"),
    ("works_at", True, r"\bI\s+(?:(?:just|finally)\s+)?(?P<any>handed in my notice|resigned|quit my job|"
                       r"left my job|got laid off|was laid off|lost my job)"),
    ("works_as", False, rf"\bI\s+(?:now\s+)?work\s+as\s+an?\s+(?P<value>[\w -]{{2,40}}?){_END}"),
    ("works_as", False, r"\b(?:as|became)\s+an?\s+(?P<value>(?:[\w-]+\s+)?(?:designer|engineer|"
                        r"developer|teacher|nurse|doctor|writer|editor|manager|analyst|chef|cook|"
                        r"barista|accountant|lawyer|architect|programmer|researcher|consultant|"
                        r"photographer|translator|tutor|intern|pharmacist|vet|artist|musician|"
                        r"marketer|scientist|librarian|mechanic|baker|officer))\b"),
    ("works_as", False, r"\bmy (?:new )?job is (?:being )?an?\s+(?P<value>[\w -]{2,30}?)(?=[.,;!?]|$)"),
    ("works_as", False, rf"\bI(?:'m| am|'ve been| have been)\s+(?:officially\s+|now\s+|still\s+)?an?\s+"
                        rf"(?P<value>(?:[\w-]+\s+)?{_JOB})\b"),
    ("works_as", False, rf"\byears as an?\s+(?P<value>(?:[\w-]+\s+)?{_JOB})\b"),
    ("works_at", False, rf"\bI(?:'m| am|'ve been| have been)\s+(?:now\s+)?an?\s+(?:[\w-]+\s+)?{_JOB}\s+"
                        rf"(?:at|with|for)\s+{_V}"),
    ("works_at", False, rf"\b{_V}\s+(?:offered me|hired me|took me on)\b"),
    ("works_at", False, rf"\b(?:week|day|month|first day|first week)\s+\w*\s*at\s+{_V}"),
    # study and learning
    ("studies", False, rf"\bI\s*(?:am|'m)?\s*(?:now\s+)?(?:study|studying|majoring in|major in)"
                       rf"\s+(?P<value>[\w -]{{2,40}}?){_END}"),
    ("studies", True, r"\bI\s+(?:just\s+)?(?:graduated|finished my (?:degree|studies))"
                      r"(?:\s+in\s+(?P<value>[\w -]{2,40}?))?(?=[.,;!?]|\s+from|$)"),
    ("learning", False, rf"\bI\s*(?:am|'m|have|'ve)?\s*(?:just\s+|finally\s+)?(?:started\s+)?"
                        rf"(?:learning|taking (?:up\s+)?lessons in|to learn)\s+{_THING}{_END}"),
    ("learning", False, r"\bI\s+(?:just\s+|finally\s+)?(?:started|took up)\s+(?:learning\s+)?"
                        rf"(?P<value>(?:the\s+)?{_SKILL})"),
    ("learning", False, rf"\b(?:my|a|the|new|first)\s+(?P<value>{_LEARNABLE})\s+(?:class|classes|lessons?|course)\b"),
    ("learning", True, r"\bI\s+(?:gave up|quit|stopped)\s+(?:learning\s+|on\s+|my\s+)?"
                       rf"(?P<value>(?:the\s+)?{_SKILL})"),
    ("learning", True, r"\bI\s+(?:gave up|quit|stopped)\s+(?:learning|taking)\s+"
                       r"(?P<value>[\w -]{2,30}?)(?:\s+lessons)?(?=[.,;!?]|$)"),
    # pets, partner, children
    ("pet", False, rf"\b{_I}\s+(?:just\s+|finally\s+)?(?:adopted|got|have|rescued|brought home)\s+"
                   rf"(?:a|an|our|my|two|a little|a new)\s+(?:\w+\s+)?(?P<kind>{_PET})"
                   rf"(?:[, ]+(?:named|called)\s+(?P<name>{_NAME}))?"),
    ("pet", False, rf"\bmy (?:new\s+)?(?P<kind>{_PET})(?:'s name is|,?\s+(?:named|called))\s+"
                   rf"(?P<name>{_NAME})"),
    ("pet", False, rf"\b(?:my|our)\s+(?:old\s+|new\s+|little\s+)?(?P<kind>{_PET}),?\s+(?P<name>{_NAME})\b"),
    ("pet", False, rf"\b(?P<name>{_NAME}),\s+(?:my|our)\s+(?:old\s+|new\s+|little\s+)?(?P<kind>{_PET})\b"),
    ("pet", True, rf"\bmy (?:\w+\s+)?(?P<kind>{_PET})(?:,?\s+(?P<name>{_NAME}),?)?\s+"
                  r"(?:passed away|died|is gone|ran away)"),
    ("pet", True, rf"\b(?P<name>{_NAME}),?\s+(?:my|our) (?:\w+\s+)?(?P<kind>{_PET}),?\s+"
                  r"(?:passed away|died|is gone)"),
    ("pet", True, rf"\b(?P<name>{_NAME})\s+(?:passed away|died|was put to sleep)\b"),
    ("partner", False, rf"\bmy (?:new\s+)?{_KIN_PARTNER}(?:'s name is|\s+is\s+|,?\s+)"
                       rf"(?P<value>{_NAME})\b"),
    ("partner", False, rf"\bI\s+(?:got married to|married|am dating|'m dating|started dating)\s+"
                       rf"(?P<value>{_NAME})\b"),
    ("partner", True, rf"\b(?P<value>{_NAME})\s+and I\s+(?:have\s+|'ve\s+)?(?:broke up|broken up|split up|divorced|separated)"),
    ("partner", True, rf"\bI\s+(?:broke up with|split up with|divorced)\s+(?P<value>{_NAME})"),
    ("child", False, rf"\b(?:my|our) {_KIN_CHILD}(?:'s name is|\s+is\s+|,?\s+)(?P<value>{_NAME})\b"),
    ("child", False, rf"\b(?:we|I)\s+(?:had|welcomed)\s+(?:a\s+)?(?:baby\s+)?(?:boy|girl|{_KIN_CHILD})"
                     rf"(?:[, ]+(?:named|called)\s+(?P<value>{_NAME}))?"),
    # allergies, likes, things owned
    ("allergic_to", False, r"\bI(?:'m| am)\s+(?:now\s+|also\s+|very\s+|severely\s+)?allergic to\s+"
                           rf"{_THING}{_END}"),
    ("allergic_to", True, r"\bI(?:'m| am)\s+(?:not|no longer)\s+allergic to\s+"
                          rf"{_THING}(?:\s+any\s?more)?{_END}"),
    ("allergic_to", True, r"\bI(?:'ve| have)?\s+outgrown my\s+(?P<value>[\w -]{2,30}?)\s+allergy"),
    ("likes", False, rf"\bI\s*(?:'ve|have)?\s*(?:really\s+|absolutely\s+|totally\s+|still\s+)?(?:love|adore|enjoy|am into|'m into|gotten (?:really )?into|got (?:really )?into)\s+"
                     rf"(?P<value>(?!you\b|it\b|that\b|this\b|him\b|her\b|them\b|my\b|your\b|our\b|the way\b)[\w' -]{{2,40}}?){_END}"),
    ("dislikes", False, rf"\bI\s+(?:really\s+)?(?:hate|can't stand|cannot stand|dislike|don't like)\s+"
                        rf"(?P<value>(?!you\b|it\b|that\b|this\b|him\b|her\b|them\b)[\w' -]{{2,40}}?){_END}"),
    ("owns", False, rf"\b{_I}\s+(?:just\s+|finally\s+)?(?:bought|own|got myself)\s+"
                    r"(?P<value>(?:a|an|my first|a new|a used|an old)\s+[\w -]{2,30}?)"
                    rf"{_END}"),
    ("owns", True, rf"\b{_I}\s+(?:just\s+|finally\s+)?sold\s+(?:my|our|the)\s+(?P<value>[\w -]{{2,30}}?){_END}"),
    ("owns", True, rf"\b(?:stole|stolen|wrote off|crashed|lost)\s+(?:my|our)\s+(?P<value>(?:car|bike|van|"
                   rf"motorbike|scooter|camera|laptop|guitar|piano|phone)){_END}"),
)]
# "I used to love coffee but now I can't stand it": a like that ended, and a dislike
_USED_TO = re.compile(r"\bI used to (?P<verb>love|like|enjoy|hate|dislike|can't stand)\s+"
                      r"(?P<value>[\w' -]{2,30}?)(?=\s*(?:,|but|and|$))", re.IGNORECASE)
_NOT_ANYMORE = re.compile(r"\bI\s+(?:don't|do not|no longer)\s+(?:like|love|enjoy|drink|eat)\s+"
                          r"(?P<value>[\w' -]{2,30}?)\s*(?:any\s?more)?(?=[.,;!?]|$)",
                          re.IGNORECASE)
# What makes a clause no statement of fact: a plan, a wish, a question, a condition.
_EN_HEDGE = re.compile(r"\b(?:might|(?-i:may)|maybe|perhaps|would|could|should|want to|wanna|"
                       r"wish|hope to|thinking (?:of|about)|plan(?:ning)? to|going to|gonna|"
                       r"if|whether|someday|one day|will)\b|\?", re.IGNORECASE)
_CLAUSE = re.compile(r"[^.!?;\n]+[.!?;]?")


def _en(text: str) -> list[Statement]:
    out: list[Statement] = []
    for clause in _CLAUSE.findall(text):
        if _EN_HEDGE.search(clause):
            continue
        if m := _USED_TO.search(clause):
            hated = m["verb"].lower() in ("hate", "dislike", "can't stand")
            out.append(Statement("dislikes" if hated else "likes", _tidy(m["value"]), True))
        if m := _NOT_ANYMORE.search(clause):
            out.append(Statement("likes", _tidy(m["value"]), True))
        for attribute, ends, pattern in _EN:
            for m in pattern.finditer(clause):
                statement = _statement(attribute, ends, m)
                if statement:
                    out.append(statement)
    return out


# ------------------------------------------------------------------ Chinese

_ZV = r"(?P<value>[\u4e00-\u9fffA-Za-z0-9·]{1,12}?)"
_ZEND = r"(?=[了啦呢啊吧呀哦嘛，。！？、,.!?~～\s]|$)"
_ZPET = r"(?P<kind>猫咪|小猫|猫|小狗|狗狗|狗|兔子|仓鼠|鹦鹉|金鱼|乌龟|柯基|柴犬|布偶猫|橘猫|英短|金毛|泰迪)"
# when it happened, between the subject and the verb (今天领养了, 上个月入职了)
_ZT = r"(?:今天|昨天|前天|上个?月|上周|上星期|最近|刚刚|刚|终于|已经|也|还|新|前几天|这周|这个月|去年|今年)*"
_ZH: list[tuple[str, bool, re.Pattern[str]]] = [(a, e, re.compile(p)) for a, e, p in (
    ("lives_in", False, rf"{_ZT}(?:现在|又)?{_ZT}(?:搬|搬家)(?:到|去)了?{_ZV}{_ZEND}"),
    ("lives_in", False, rf"(?:现在|目前|如今)?(?:住在|定居在){_ZV}(?:了|啦|这边|那边)?{_ZEND}"),
    ("lives_in", False, rf"(?:现在|目前|如今|还)?在{_ZV}(?:住|生活|定居)(?:了)?"),
    ("lives_in", False, rf"搬(?:了|家了|走了)[，,]\s*(?:现在|如今)(?:住)?在{_ZV}{_ZEND}"),
    ("lives_in", False, rf"来{_ZV}(?:[一二三四五六七八九十两几\d]+年|好几年|很多年|多年)了"),
    ("lives_in", False, rf"在{_ZV}(?:土生土长|长大的?，?(?:一直)?住)"),
    ("lives_in", False, rf"我(?:现在)?在{_ZV}(?:读|上)(?:大[一二三四]|研[一二三]|研究生|高中|大学|博士)"),
    ("works_at", False, rf"(?:现在|目前)?在{_ZV}(?:上班|工作|实习|做|当)"),
    ("works_at", False, rf"{_ZT}(?:入职了?|加入了?|进了){_ZV}{_ZEND}"),
    ("works_at", False, rf"{_ZV}(?:录用|录取|聘用)了?我"),
    ("works_at", True, rf"{_ZT}(?:就)?(?:从{_ZV})?(?:辞职|离职)了"),
    ("works_at", True, r"(?:已经|刚)?(?P<any>换(?:了(?:个|份)?)?工作|辞职|离职|被裁)"),
    ("works_as", False, r"(?:我|还是|开始|九月开始|现在)(?:现在|目前)?(?:是|当上了|当了|当|成了|做)(?:一名|一个|个|名)?"
                        r"(?P<value>[\u4e00-\u9fff]{0,10}?(?:设计师|工程师|程序员|老师|教师|医生|护士|文案|"
                        r"律师|会计|厨师|作家|编辑|记者|翻译|摄影师|咖啡师|销售|产品经理|经理|"
                        r"研究员|学生|研究生|博士生|实习生|司机|画师|主播|警察|药剂师|兽医))"),
    ("studies", False, rf"(?:读|学|念|攻读)(?:的是)?{_ZV}(?:专业|系|研究生|博士|本科|硕士)"),
    ("studies", False, rf"(?:读大[一二三四]|读研[一二三]?|上大学)[，,]\s*学{_ZV}的"),
    ("studies", True, r"(?:我)?(?:已经|终于|可以|顺利)?毕业了"),
    ("learning", False, rf"(?:我)?{_ZT}(?:现在)?(?:开始|在|正在)学(?:习)?(?:起了|起)?"
                        r"(?P<value>吉他|钢琴|小提琴|大提琴|架子鼓|尤克里里|日语|韩语|英语|法语|"
                        r"德语|西班牙语|编程|游泳|瑜伽|画画|绘画|油画|素描|水彩|书法|陶艺|滑板|滑雪|冲浪|攀岩|拳击|街舞|"
                        r"舞蹈|唱歌|做饭|烘焙|开车|驾驶|摄影|围棋|象棋|古筝|二胡|长笛|萨克斯)"),
    ("learning", True, r"(?P<value>吉他|钢琴|小提琴|大提琴|架子鼓|尤克里里|日语|韩语|英语|法语|"
                       r"德语|西班牙语|编程|游泳|瑜伽|画画|绘画|书法|陶艺|滑板|舞蹈|唱歌|做饭|烘焙)"
                       r"(?:我)?(?:已经)?(?:不学了|放弃了|没再学|学不下去)"),
    ("learning", True, r"我(?:已经)?(?:不学|放弃(?:了)?(?:学)?)(?P<value>吉他|钢琴|小提琴|日语|韩语|英语|"
                       r"法语|编程|游泳|瑜伽|画画|书法|舞蹈)"),
    ("pet", False, rf"我(?:家|们)?{_ZT}(?:养了|领养了|收养了|捡了|有了|买了|养着|有)"
                   rf"(?:一|两|只|条|一只|一条|个)*(?:[\u4e00-\u9fff]{{0,4}}?){_ZPET}"
                   r"(?:[，,]?(?:叫|名叫|取名(?:叫)?|名字叫)(?P<name>[\u4e00-\u9fffA-Za-z]{1,6}))?"),
    ("pet", False, rf"我(?:家|们家)?(?:的)?{_ZPET}(?:叫|名叫|名字叫)(?P<name>[\u4e00-\u9fffA-Za-z]{{1,6}}?){_ZEND}"),
    ("pet", True, r"我(?:家|们家)(?:的)?(?P<name>[\u4e00-\u9fffA-Za-z]{1,4}?)(?:去世了|走了|死了|没了|去喵星了|去汪星了)"),
    ("pet", True, rf"我(?:家|们家)?(?:的)?{_ZPET}(?P<name>[\u4e00-\u9fffA-Za-z]{{0,6}}?)"
                  r"(?:去世了|走了|死了|没了|去喵星了|去汪星了|丢了)"),
    ("partner", False, r"我(?:的)?(?:老公|老婆|男朋友|女朋友|男友|女友|对象|未婚夫|未婚妻)"
                       r"(?:叫|是)?(?P<value>[\u4e00-\u9fffA-Za-z]{1,6}?)"
                       r"(?=[，。！？,.!?\s]|在|说|也|都|还|就|很|今天|昨天|已经|$)"),
    ("partner", False, r"我(?:的)?(?:老公|老婆|男朋友|女朋友|男友|女友|对象|未婚夫|未婚妻)"
                       r"(?P<value>[\u4e00-\u9fff]{2})(?=[\u4e00-\u9fff])"),
    ("partner", True, r"我(?:和|跟)(?P<value>[\u4e00-\u9fffA-Za-z]{1,6}?)(?:分手了|离婚了)"),
    ("child", False, r"我(?:的)?(?:儿子|女儿|宝宝)(?P<value>[\u4e00-\u9fff]{2})(?=[\u4e00-\u9fff，。！？,.!?]|$)"),
    ("child", False, r"我(?:的)?(?:儿子|女儿|孩子|宝宝)(?:叫|名叫|名字叫)(?P<value>[\u4e00-\u9fffA-Za-z]{1,6}?)"
                     r"(?=[，。！？,.!?\s了]|$)"),
    ("allergic_to", False, rf"我对{_ZV}(?:严重|有点|有些)?过敏"),
    ("allergic_to", True, rf"我(?:现在|已经)?对{_ZV}(?:已经)?不(?:再)?过敏了"),
    ("likes", False, rf"我(?:超|很|特别|最|真的|非常|也)?(?:喜欢|爱)(?:吃|喝|玩|看|听)?(?!你|他|她|它|这|那|上){_ZV}{_ZEND}"),
    ("dislikes", False, rf"我(?:很|特别|真的|最|也)?(?:讨厌|不喜欢|受不了|不爱)(?:吃|喝|玩|看|听)?(?!你|他|她|它|这|那){_ZV}{_ZEND}"),
    ("likes", True, rf"我(?:已经)?(?:不再喜欢|不喜欢)?{_ZV}?(?:不喝|不吃|不玩)(?:了)"),
    ("likes", True, rf"我(?:已经)?不(?:再)?(?:喝|吃|玩){_ZV}了"),
    ("likes", True, rf"(?:我)?以前(?:很|特别|最|超)?(?:喜欢|爱)(?:吃|喝|玩|看|听)?{_ZV}{_ZEND}"),
    ("dislikes", True, rf"(?:我)?以前(?:很|特别|最|超)?(?:讨厌|不喜欢|受不了)(?:吃|喝)?{_ZV}{_ZEND}"),
    ("owns", False, rf"我{_ZT}(?:买了|入手了|提了)(?:一|辆|台|个|套|部)*"
                    r"(?P<value>[\u4e00-\u9fffA-Za-z0-9]{0,10}?(?:车|房|电脑|相机|吉他|钢琴|自行车|摩托|手机|平板|房子))"),
    ("owns", True, r"我(?:已经|刚)?(?:把)?(?:我的)?(?P<value>[\u4e00-\u9fffA-Za-z0-9]{1,10}?(?:车|房|电脑|相机|吉他|钢琴|自行车|摩托|房子))"
                   r"(?:卖了|卖掉了|转手了)"),
)]
_ZH_HEDGE = re.compile(r"想|打算|准备|可能|也许|如果|要是|希望|会不会|能不能|计划|考虑|梦想|以后|将来|[吗？?]")
_ZH_CLAUSE = re.compile(r"[^。！？；\n]+[。！？；]?")
# Somebody else as the subject of what follows ("我姐姐搬到上海了", "你住在哪", "他养了只猫")
_ZH_OTHERS = re.compile(r"(?:姐姐|妹妹|哥哥|弟弟|妈妈|爸爸|父母|爸妈|朋友|同事|室友|闺蜜|同学|老板|邻居|"
                        r"你们?|他们?|她们?|它|大家|别人)")


def _zh(text: str) -> list[Statement]:
    """A clause's statements, subject dropped or not (Chinese often drops 我); a match whose
    part of the clause (since the last comma) names somebody else first is not the speaker's."""
    out: list[Statement] = []
    for clause in _ZH_CLAUSE.findall(text):
        for attribute, ends, pattern in _ZH:
            for m in pattern.finditer(clause):
                begin = max(clause.rfind("，", 0, m.start()), clause.rfind(",", 0, m.start()), 0)
                stops = [i for i in (clause.find("，", m.end()), clause.find(",", m.end()))
                         if i >= 0]
                if _ZH_HEDGE.search(clause[begin:min(stops) if stops else len(clause)]):
                    continue  # a plan, a wish, a question: in the statement's own part
                part = clause[begin:m.start() + 1]
                if _ZH_OTHERS.search(part) and "我" not in part[-2:]:
                    continue
                statement = _statement(attribute, ends, m)
                if statement:
                    out.append(statement)
    return _dedupe(out)


# ------------------------------------------------------------------ values

_LEAD = re.compile(r"^(?:(?:the|a|an|some|my|our|(?-i:used|new|old|second-hand))\s+)+", re.IGNORECASE)
_TRAIL = re.compile(r"\s+(?:now|here|there|too|as well|a lot|so much|lately|recently|again|"
                    r"anymore|any more|at all|for good)$", re.IGNORECASE)
_ZH_TRAIL = re.compile(r"(?:了|啦|呢|啊|吧|呀|哦|嘛|这边|那边|工作|上班|的)+$")
# Values that name nothing: a pronoun, a bare verb of feeling after "learning to", an age,
# a word about a name, a clause that goes on with somebody else
_JUNK = re.compile(r"^(?:it|that|this|them|him|her|you|like|love|live|be|accept|deal|cope|"
                   r"play|relax|trust)\b|^(?:it|that|this)\s|^(?:小|大)?名$|"
                   r"^[\d一二三四五六七八九十两几]+(?:岁|个月|年)|跟着|和我|给我|帮我", re.IGNORECASE)
_STOP = frozenset({"it", "that", "this", "you", "them", "him", "her", "there", "here",
                   "home", "work", "here now", "so", "too", "much", "a lot", "and"})


def _statement(attribute: str, ends: bool, m: re.Match[str]) -> Statement | None:
    groups = m.groupdict()
    kind = _tidy(groups.get("kind") or "")
    if attribute == "pet":
        value = _tidy(groups.get("name") or "") or kind
    else:
        value = _tidy(groups.get("value") or "")
    if not value and (groups.get("any") or (ends and attribute in ("studies", "works_at"))):
        value = "*"  # ended, whatever it was
    if attribute == "works_as" and re.search(r"[\u4e00-\u9fff]", value):
        value = value.rsplit("的", 1)[-1] or value  # 自由职业的平面设计师 → 平面设计师
    if attribute == "learning" and value.casefold().startswith("to "):
        value = value[3:]  # "learning to code"
    if not value or value.casefold() in _STOP or _JUNK.search(value):
        return None
    return Statement(attribute, value, ends, kind)


def _tidy(value: str) -> str:
    value = value.strip(" ,.;:!?'\"“”‘’，。！？")
    value = _LEAD.sub("", value)
    while (trimmed := _TRAIL.sub("", value)) != value:
        value = trimmed
    if re.search(r"[\u4e00-\u9fff]", value):
        value = _ZH_TRAIL.sub("", value)
    return value.strip()


def _dedupe(items: list[Statement]) -> list[Statement]:
    """One statement per (attribute, value, ends), the first (which names the kind, if any)."""
    seen: dict[tuple[str, str, bool], Statement] = {}
    for item in items:
        seen.setdefault((item.attribute, item.value.casefold(), item.ends), item)
    return list(seen.values())


def statements(text: str) -> list[Statement]:
    """What one turn states about its speaker, in the order said (zh and en)."""
    found = _zh(text) if re.search(r"[\u4e00-\u9fff]", text) else []
    found += _en(text)
    # "my cat Miso passed away" names Miso too: the ending is what the turn says
    ended = {(f.attribute, f.value.casefold()) for f in found if f.ends}
    return _dedupe([f for f in found
                    if f.ends or (f.attribute, f.value.casefold()) not in ended])


def same_value(a: str, b: str) -> bool:
    """Two values name the same thing: equal ignoring case, or one a whole-word part of the
    other ("Acme" / "Acme Corp", 杭州 / 杭州市)."""
    a, b = a.casefold().strip(), b.casefold().strip()
    if a == b:
        return True
    short, long = sorted((a, b), key=len)
    if not short:
        return False
    if re.search(r"[\u4e00-\u9fff]", short):
        return short in long
    return re.search(rf"(?<!\w){re.escape(short)}(?!\w)", long) is not None
