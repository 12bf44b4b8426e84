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

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from chalicelib.domain.kin import KIN_ZH, KIN_ZH_SHORT
from chalicelib.domain.lazyre import compiled
from chalicelib.domain.textproc import straight_quotes

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
    # told in passing ("Bristol traffic is murder", 我们广州这几天回南天): it stands when
    # nothing firmer is known of the attribute, and never closes a value told plainly
    weak: bool = False


# "I live here now": a place the turns around it name (domain.fact_context); never kept as is
HERE = "\0here"
# "Her name is Luna", 小名叫糖糖: a name for the pet or child just told of without one
# (chalicelib.usecases.facts gives it to the latest nameless one); not an attribute itself
NAMING = "named"


# a Han character: what makes a text (or a value) Chinese to these rules
HAN = re.compile(r"[\u4e00-\u9fff]")

# ------------------------------------------------------------------ rules


@dataclass(frozen=True)
class Rule:
    attribute: str
    ends: bool
    pattern: re.Pattern[str]
    # "": a plain statement; "weak": told in passing (Statement.weak); "given": a noun phrase
    # that takes the fact for granted ("my wife Hannah", 我老婆小梅), true under a hedge too
    # ("I don't want my wife Hannah to worry", 不想让我老婆小梅担心)
    mode: str = ""


def _table(flags: int, rows: tuple[tuple[str, ...], ...]) -> Callable[[], list[Rule]]:
    """The rules of `rows`, compiled on first use and then kept (functools.cache): both
    languages' tables take ~0.3 s to compile, which a process that never reads a fact (a cold
    start, a recall) must not pay."""

    @functools.cache
    def rules() -> list[Rule]:
        return [Rule(row[0], bool(row[1]), re.compile(row[2], flags), *(row[3:]))
                for row in rows]

    return rules


# ------------------------------------------------------------------ English

_WHO = r"(?:^|(?<=[.!?;,]\s)|(?<=^\s)|(?<=\b(?:and|so|but|now|finally|well|yes|yeah|oh)\s))"
_I = r"(?:I|I've|I'm|we|we've|we're)"
_CAP = r"(?-i:[A-Z])"  # a capital letter, whatever the pattern's flags
_V = rf"(?P<value>{_CAP}[\w'&.-]*(?:\s+(?:{_CAP}[\w'&.-]*|&(?=\s+{_CAP})|(?-i:of|de|la|le|du|am|upon)\b))*)"  # a name
_NAME = rf"{_CAP}[\w-]*"
_THING = r"(?P<value>(?:an?\s+|the\s+|some\s+)?[\w' -]{2,40}?)"
# "in May", "in 2019" say when, not what ("I graduated in May", "a degree in June")
_NOT_WHEN = (r"(?!(?:january|february|march|april|may|june|july|august|september|october|november"
             r"|december|spring|summer|autumn|fall|winter|\d{4})\b)")
_END = (r"(?=\s*(?:[.,;:!?)]|\band\b|\bbut\b|\bnow\b|\bnext\b|\blast\b|\bsince\b|\bfor\b|\bthis\b|"
        r"\btoday\b|\byesterday\b|\bagain\b|\bwith\b|\bbecause\b|\btwice\b|\bonce\b|\bevery\b|"
        r"\bat\b|\bon\b|\bthrough\b|\bis\b|\bwas\b|\bso\b|\bwhich\b|\bwho\b|\bbc\b|\blol\b|"
        r"\btho\b|\btbh\b|\bhaha\w*|\blmao\b|$))")
_PET = (r"(?:cat|kitten|kitty|dog|puppy|pup|rabbit|bunny|hamster|parrot|bird|fish|turtle|tortoise|"
        r"guinea pig|ferret|lizard|snake|collie|spaniel|labrador|retriever|terrier|poodle|corgi|"
        r"husky|beagle|dachshund|pug|greyhound|whippet|tabby|siamese|budgie|budgerigar|canary|"
        r"cockatiel|gecko|axolotl|tortoise|chinchilla|pony|horse|pit|pitbull|pit bull|pittie|staffy|"
        r"moggy|lab|mutt|pup)")
_KIN_PARTNER = r"(?:wife|husband|girlfriend|boyfriend|partner|fianc[ée]e?)"
_KIN_CHILD = r"(?:son|daughter|baby|kid|child)"
_JOB = (r"(?:designer|engineer|developer|teacher|nurse|doctor|writer|editor|manager|analyst|"
        r"chef|cook|baker|barista|accountant|lawyer|architect|programmer|researcher|consultant|"
        r"photographer|translator|tutor|intern|pharmacist|vet|artist|musician|marketer|"
        r"scientist|librarian|mechanic|electrician|plumber|carpenter|officer|ranger|driver|"
        r"paramedic|firefighter|student|waiter|waitress|cashier|illustrator|journalist|"
        r"physiotherapist|physio|therapist|counsellor|counselor|dentist|hygienist|optician|"
        r"surgeon|midwife|carer|caregiver|social worker|receptionist|cleaner|technician|tech|"
        r"surveyor|lecturer|professor|postdoc|coach|trainer|instructor|assistant|clerk|"
        r"secretary|banker|trader|broker|realtor|estate agent|builder|welder|farmer|pilot|"
        r"flight attendant|soldier|detective|solicitor|barrister|paralegal|data scientist|"
        r"copywriter|actor|actress|dancer|singer|bartender|server|hairdresser|barber|stylist|"
        r"florist|butcher|gardener|landscaper|courier|postman|shop assistant|sales rep|"
        r"salesperson|recruiter|planner|coordinator|administrator|admin|buyer|auditor|"
        r"economist|statistician|animator|filmmaker|producer|director|reporter|podcaster|"
        r"streamer|youtuber|freelancer|contractor|roofer|decorator|painter|security guard|"
        r"guard|bus driver|taxi driver|lorry driver|truck driver|warehouse worker|fisherman|"
        r"apprentice|journeyman|operator|radiographer|sonographer|midwife|porter|"
        r"line cook|sous chef|head chef|dishwasher|delivery driver|rider|miner|"
        # job titles said by their letters, in capitals only ("a PM", not "3 pm")
        r"(?-i:PM|SWE|SDE|QA|UX designer|UI designer|CEO|CTO|CFO|COO|HR))")
# what one starts or gives up by name ("I took up pottery", "I gave up the guitar")
_SKILL = (r"(?:guitar|piano|violin|cello|drums|ukulele|pottery|painting|yoga|swimming|boxing|"
          r"climbing|japanese|spanish|french|german|korean|chinese|italian|coding|python|"
          r"knitting|dancing|singing|fiddle|bass|harp|flute|saxophone|clarinet|trumpet|chess|"
          r"surfing|skating|tennis|golf)")
# …and what a class or course is of ("my Portuguese class")
_LEARNABLE = (rf"(?:{_SKILL}|portuguese|surfing|driving|cooking|baking|photography|arabic|russian|"
              r"dutch|mandarin|cantonese|hindi|turkish|greek|swedish|polish|irish|welsh|"
              r"sign language|watercolour|watercolor|chess|fiddle)")

# retiring ends the job: the place and the line of work alike
_RETIRED_EN = r"\bI\s+(?:(?:just|finally|officially)\s+)?(?P<any>retired)\b"
_RETIRED_ZH = r"(?P<any>最后一天班|退休了|办了退休|光荣退休)"
_EN = _table(re.IGNORECASE | re.M, (
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
                        rf"(?:at|with)\s+(?:the\s+)?{_V}"),
    # "I'm working at": the contraction has no space before 'm (it never matched)
    ("works_at", False, rf"\b(?:I|I(?:\s+[\w']+){{1,4}}\s+and)(?:\s+(?:now\s+)?(?:work|am working)"
                        rf"|'m\s+(?:now\s+)?working)\s+(?:at|for)\s+{_V}"),
    ("works_at", False, rf"\bI\s+joined\s+{_V}"),
    ("works_at", False, rf"^\s*(?:(?:just|finally)\s+)?(?:started|joined)\s+(?:work\s+|working\s+)?at\s+"
                        rf"(?:the\s+)?{_V}"),
    ("works_at", False, rf"\b(?<!last )(?:shift|meeting|meetings|reports?|office|desk|team|colleagues?)\s+"
                        rf"(?:[\w-]+\s+){{0,2}}?at\s+(?:the\s+)?{_V}", "weak"),
    ("works_at", True, rf"\bI\s+(?:(?:just|finally)\s+)?(?:quit|left)\s+(?:my job at\s+|my job with\s+)?{_V}"),
    ("works_at", True, r"\bI\s+(?:(?:just|finally)\s+)?(?P<any>(?:handed|turned|put) in my notice|gave my "
                       r"notice|resigned|quit my job|"
                       r"left my job|got laid off|was laid off|lost my job|got let go|was let go|got fired|was fired|"
                       r"got made redundant|was made redundant)"),
    # no longer so (or never so: either way the value named does not hold now)
    ("lives_in", True, rf"\b{_I}\s*(?:(?:do\s+not|don't|no\s+longer)\s+live|(?:am|'m|are|'re)?\s*"
                       rf"(?:not|no\s+longer)\s+(?:living|based))\s+in\s+{_V}"),
    ("works_at", True, rf"\b(?:I|I'm)\s*(?:(?:do\s+not|don't|no\s+longer)\s+work|(?:am|'m)?\s*(?:not|no\s+"
                       rf"longer)\s+working)\s+(?:at|for)\s+{_V}"),
    ("works_as", False, rf"\bI\s+(?:now\s+)?work\s+as\s+an?\s+(?P<value>[\w -]{{2,40}}?){_END}"),
    ("works_as", False, rf"\b(?:I|I've|I'm)\s+(?:(?:just|finally|been|got|was|am|'m)\s+)*promoted\s+to\s+"
                        rf"(?:an?\s+|the\s+)?(?P<value>(?:[\w-]+\s+){{0,2}}?{_JOB}){_END}"),
    ("works_as", False, rf"\b(?:as|became)\s+an?\s+(?P<value>(?:[\w-]+\s+)?{_JOB})\b"),
    ("works_as", False, r"\bmy (?:new )?job is (?:being )?an?\s+(?P<value>[\w -]{2,30}?)(?=[.,;!?]|$)"),
    ("works_as", False, rf"\bI(?:'m| am|'ve been| have been)\s+(?:officially\s+|now\s+|still\s+|\w+ly\s+)?an?\s+"
                        rf"(?P<value>(?:[\w-]+\s+)?{_JOB})\b"),
    ("works_as", False, rf"\byears as an?\s+(?P<value>(?:[\w-]+\s+)?{_JOB})\b"),
    ("works_at", False, rf"\bI(?:'m| am|'ve been| have been)\s+(?:now\s+)?an?\s+(?:[\w-]+\s+)?{_JOB}\s+"
                        rf"(?:at|with|for)\s+{_V}"),
    ("works_at", False, rf"\b{_V}\s+(?:offered me|hired me|took me on)\b"),
    ("works_at", False, rf"\b(?<!last )(?:week|day|month|first day|first week)\s+\w*\s*at\s+{_V}"),
    # study and learning
    ("studies", False, rf"\bI\s*(?:am|'m)?\s*(?:now\s+)?(?:study|studying|majoring in|major in)"
                       rf"\s+(?P<value>[\w -]{{2,40}}?){_END}"),
    ("studies", True, r"\bI\s+(?:just\s+)?(?:graduated|finished my (?:degree|studies)|dropped out(?: of"
                      r" (?:college|uni|university|school|my course))?)"
                      # "in chemistry" is what was studied; "in May", "last year" say when
                      rf"(?:\s+in\s+{_NOT_WHEN}(?P<value>[\w -]{{2,40}}?))?"
                      r"(?=[.,;!?]|\s+(?:from|last|this|in|on|back|yesterday|today|recently)\b|$)"),
    ("learning", False, rf"\bI\s*(?:am|'m|have|'ve)?\s*(?:just\s+|finally\s+)?(?:started\s+)?"
                        rf"(?:learning|taking (?:up\s+)?lessons in|to learn)\s+"
                        rf"(?:(?:how\s+)?to\s+(?:play|speak|ride)\s+)?{_THING}{_END}"),
    ("learning", False, r"\bI\s+(?:just\s+|finally\s+)?(?:started|took up)\s+(?:learning\s+)?"
                        rf"(?P<value>(?:the\s+)?{_SKILL})"),
    ("learning", False, rf"\b(?:my|a|the|new|first)\s+(?P<value>{_LEARNABLE})\s+(?:class|classes|lessons?|course)\b"),
    ("learning", True, r"\bI(?:'m|\s+am)?\s+(?:gave up|quit|quitting|stopped|stopping|dropped|dropping|giving up)\s+"
                       r"(?:learning\s+|on\s+|my\s+)?"
                       rf"(?P<value>(?:the\s+)?{_SKILL})"),
    ("learning", True, r"\bI\s+(?:gave up|quit|stopped)\s+(?:learning|taking)\s+"
                       r"(?P<value>[\w -]{2,30}?)(?:\s+lessons)?(?=[.,;!?]|$)"),
    # pets, partner, children
    ("pet", False, rf"\b{_I}\s+(?:just\s+|finally\s+)?(?:adopted|got|have|rescued|brought home|came home with)\s+"
                   rf"(?:a|an|our|my|two|a little|a new)\s+(?:\w+\s+)?(?P<kind>{_PET})"
                   rf"(?:[, ]+(?:named|called)\s+(?P<name>{_NAME}))?"),
    ("pet", False, rf"\bmy (?:new\s+)?(?P<kind>{_PET})(?:'s name is|,?\s+(?:named|called))\s+"
                   rf"(?P<name>{_NAME})"),
    ("pet", False, rf"\b(?:my|our)\s+(?:old\s+|new\s+|little\s+)?(?P<kind>{_PET}),?\s+(?P<name>{_NAME})\b", "given"),
    ("pet", False, rf"\b(?P<name>{_NAME}),\s+(?:my|our)\s+(?:old\s+|new\s+|little\s+)?(?P<kind>{_PET})\b", "given"),
    ("pet", True, rf"\bmy (?:\w+\s+)?(?P<kind>{_PET})(?:,?\s+(?P<name>{_NAME}),?)?\s+"
                  r"(?:passed away|died|is gone|ran away)"),
    ("pet", True, rf"\b(?P<name>{_NAME}),?\s+(?:my|our) (?:\w+\s+)?(?P<kind>{_PET}),?\s+"
                  r"(?:passed away|died|is gone)"),
    ("pet", True, rf"\b(?P<name>{_NAME})\s+(?:passed away|died|was put to sleep)\b"),
    # taken in by others: a foster gone to its home ("Pip got adopted!", Pickle was rehomed)
    ("pet", True, rf"\b(?P<name>{_NAME})\s+(?:got|was|has been|'s been|is being)\s+(?:adopted|"
                  rf"rehomed|re-homed)\b"),
    ("partner", False, rf"\bmy (?:new\s+)?{_KIN_PARTNER}(?:'s name is|\s+is\s+|,?\s+)"
                       rf"(?P<value>{_NAME})\b", "given"),
    ("partner", False, rf"\bI(?:\s+(?:got married to|married|am dating|started dating|am going out with|"
                       rf"am in a relationship with|got engaged to|am engaged to)"
                       rf"|'m\s+(?:dating|going out with|in a relationship with|engaged to))"
                       rf"\s+(?P<value>{_NAME})\b"),
    ("partner", True, rf"\b(?P<value>{_NAME})\s+and I\s+(?:have\s+|'ve\s+)?(?:broke up|broken up|split up|divorced|separated)"),
    ("partner", True, rf"\bI\s+(?:broke up with|split up with|divorced)\s+(?P<value>{_NAME})"),
    # "my girlfriend and I broke up", "we split up": the partner, whoever it was, ends
    ("partner", True, rf"\b(?:my\s+{_KIN_PARTNER}\s+and\s+I|[Ww]e)\s+(?:have\s+|'ve\s+)?(?:just\s+|finally\s+)?"
                      r"(?P<any>broke up|broken up|split up|divorced|separated)"
                      # what follows ends the clause or says when ("we broke up the fight" is no
                      # breakup)
                      r"(?=\W*$|\s*[.,!?;~]|\s+(?:last|yesterday|today|recently|again|officially|"
                      r"for good|a\s+(?:few\s+)?(?:days?|weeks?|months?)|after|because|lol|haha))"),
    ("child", False, rf"\b(?:my|our) {_KIN_CHILD}(?:'s name is|\s+is\s+|,?\s+)(?P<value>{_NAME})\b", "given"),
    ("child", False, rf"\b(?:we|I)\s+(?:had|welcomed)\s+(?:a\s+)?(?:baby\s+)?(?:boy|girl|{_KIN_CHILD})"
                     rf"(?:[, ]+(?:named|called)\s+(?P<value>{_NAME}))?"),
    # allergies, likes, things owned
    ("allergic_to", False, r"\bI(?:'m| am)\s+(?:now\s+|also\s+|very\s+|severely\s+)?allergic to\s+"
                           rf"{_THING}{_END}"),
    ("allergic_to", True, r"\bI(?:'m| am)\s+(?:not|no longer)\s+allergic to\s+"
                          rf"{_THING}(?:\s+any\s?more)?{_END}"),
    ("allergic_to", True, r"\bI(?:'ve| have)?\s+outgrown my\s+(?P<value>[\w -]{2,30}?)\s+allergy"),
    ("likes", False, rf"\bI\s*(?:'ve|have)?\s*(?:do\s+|really\s+|absolutely\s+|totally\s+|still\s+)?(?:love|adore|enjoy|am into|'m into|gotten (?:really )?into|got really into)\s+"
                     rf"(?P<value>(?!you\b|it\b|that\b|this\b|him\b|her\b|them\b|my\b|your\b|our\b|the way\b)[\w' -]{{2,40}}?){_END}"),
    ("dislikes", False, rf"\bI\s+(?:really\s+)?(?:hate|can't stand|cannot stand|dislike|don't like)\s+"
                        rf"(?P<value>(?!you\b|it\b|that\b|this\b|him\b|her\b|them\b)[\w' -]{{2,40}}?){_END}"),
    ("owns", False, rf"(?:\b{_I}\s+|^\s*)(?:just\s+|finally\s+|went and\s+)?(?:bought|own|got myself)\s+"
                    r"(?P<value>(?:a|an|the|my first|a new|a used|an old)\s+[\w -]{2,30}?)"
                    rf"{_END}"),
    ("owns", True, rf"\b{_I}\s+(?:just\s+|finally\s+)?sold\s+(?:my|our|the)\s+(?P<value>[\w -]{{2,30}}?){_END}"),
    ("owns", True, rf"\b(?:stole|stolen|wrote off|crashed|lost)\s+(?:my|our)\s+(?P<value>(?:car|bike|van|"
                   rf"motorbike|scooter|camera|laptop|guitar|piano|phone)){_END}"),
    # told by the work itself ("nine years teaching", "I quit teaching", "done with accountancy")
    ("works_as", False, r"\b(?:\w+\s+)?years?\s+(?:of\s+)?(?P<field>teaching|nursing|accountancy|accounting)\b"),
    ("works_as", True, r"\bI\s+(?:(?:just|finally)\s+)?(?:quit|left|gave up|stopped)\s+"
                       r"(?P<field>teaching|nursing|accountancy|accounting)\b"),
    ("works_as", True, r"\bI(?:'m| am)\s+(?:so\s+)?done with\s+(?P<field>teaching|nursing|accountancy|accounting)\b"),
    ("works_at", False, rf"\b{_I}\s*(?:'ve|have)\s+been\s+(?:[\w-]+\s+){{0,4}}?(?:at|with|for)\s+"
                        rf"(?:the\s+)?{_V}\s+for\s+(?:(?:about|almost|nearly|over|the last)\s+)?"
                        r"(?:\w+\s+)?(?:years?|months?)\b"),
    ("works_at", True, rf"\bI\s+(?:(?:just|finally)\s+)?(?:(?:(?:handed|turned|put) in|gave) my (?:notice|resignation)|"
                       rf"resigned|quit)\s+(?:at|from)\s+"
                       rf"(?:the\s+)?{_V}"),
    # an allergy of one's childhood, gone ("I was allergic to cats as a kid")
    ("allergic_to", True, rf"\bI\s+was\s+(?:\w+\s+)?allergic to\s+{_THING}(?=,?\s+(?:as a (?:kid|child|"
                          r"baby|teenager)|when I was))"),
    # the name of the pet or child just told of ("Her name is Luna")
    (NAMING, False, rf"\b(?:her|his|its) name(?:'s|\s+is)\s+(?P<value>{_NAME})"),
    (NAMING, False, rf"\b(?:we|I)\s+(?:named|called)\s+(?:her|him|it)\s+(?P<value>{_NAME})"),
    (NAMING, False, rf"\b(?:she|he|it)(?:'s|\s+is)\s+called\s+(?P<value>{_NAME})"),
    # where they live, told in passing (weak: it never overrides a place told plainly)
    ("lives_in", False, rf"\bhere in {_V}", "weak"),
    ("lives_in", False, rf"\b{_V}\s+(?:traffic|rain|rents?|weather|winters?|summers?|drizzle|wind|"
                        r"sunshine|heat|cold|life)\b", "weak"),
    ("lives_in", False, rf"\b(?:snowing|raining|pouring|sunny|freezing|boiling)\s+(?:again\s+)?in\s+{_V}", "weak"),
    ("lives_in", False, rf"\b(?:not|never)\s+leaving\s+{_V}", "weak"),
    ("lives_in", False, rf"\b{_I}\s+(?:now\s+|still\s+)?live\s+(?:[\w']+\s+){{1,5}}?in\s+{_V}"),
    # the vehicle one drives ("sat in my van"): owned, in passing
    ("owns", False, r"\b(?:in|from|with|drive|drove|park|parked|wash|washed|fix|fixed)\s+(?:my|our)\s+"
                    r"(?:old\s+|new\s+|little\s+)?(?P<value>car|van|motorbike|scooter|truck)\b", "weak"),
    # "Hemi is my partner" (what a companion's "Is Hemi your partner?" becomes, confirmed)
    ("partner", False, rf"\b(?P<value>{_NAME})\s+is\s+my\s+(?:new\s+)?{_KIN_PARTNER}\b", "given"),
    ("child", False, rf"\b(?P<value>{_NAME})\s+is\s+my\s+{_KIN_CHILD}\b", "given"),
    ("pet", False, rf"\b(?P<name>{_NAME})\s+is\s+my\s+(?:\w+\s+)?(?P<kind>{_PET})\b", "given"),
    ("lives_in", False, rf"\b{_I}\s*(?:'ve|have)\s+been\s+in\s+{_V}\s+(?:for\s+)?(?:(?:about|almost|over)\s+)?"
                        r"(?:\w+\s+)?(?:years?|months?)\b"),
    ("lives_in", False, rf"\b(?:a|my|our)\s+(?:new\s+|little\s+|tiny\s+)?(?:flat|house|apartment|place|room)"
                        rf"\s+in\s+{_V}", "weak"),
    ("partner", False, rf"\b(?P<value>{_NAME}),\s+my\s+(?:new\s+)?{_KIN_PARTNER}\b", "given"),
    ("child", False, rf"\b(?P<value>{_NAME}),\s+my\s+(?:little\s+|eldest\s+|youngest\s+)?{_KIN_CHILD}\b", "given"),
    # studies by the degree ("a BSc in zoology", "I'm doing architecture at Sheffield")
    ("studies", False, r"(?:\b(?:my|a|an|the)\s+|^\s*)(?:[\w-]+\s+){0,2}?(?:MA|MSc|BA|BSc|PhD|MBA|MFA|degree|diploma|"
                       rf"master's|bachelor's|masters|bachelors)\s+in\s+{_NOT_WHEN}(?P<value>[\w -]{{2,40}}?){_END}"),
    ("studies", False, r"\bI(?:'m| am)\s+(?:doing|studying|reading)\s+(?P<value>[a-z][\w -]{2,30}?)\s+at\s+"
                       r"(?-i:[A-Z])"),
    ("partner", False, rf"\b(?P<value>{_NAME})\s+and\s+I\s+are\s+(?:now\s+)?(?:dating|courting|together|engaged|"
                       r"a couple|seeing each other|going out)\b"),
    ("owns", False, r"\bI\s+(?:still\s+)?drive\s+(?:the|my|an?)\s+(?:old\s+|new\s+|little\s+)?"
                    r"(?P<value>(?-i:[A-Z])[\w-]+)", "weak"),
    ("owns", True, r"\b(?:the|my|our)\s+(?:old\s+)?(?P<value>(?-i:[A-Z])[\w-]+)\s+(?:finally\s+)?"
                   r"(?:died|is dead|gave up|broke down for good|was written off)\b"),
    ("lives_in", False, rf"\b(?:born and raised|grew up and still live)\s+in\s+{_V}", "weak"),
    ("learning", False, r"\bI\s+(?:just\s+|finally\s+)?(?:started|signed up for|enrolled in|joined)\s+(?:an?\s+)?"
                        r"(?P<value>[\w' -]{2,30}?)\s+(?:night\s+|evening\s+|online\s+|weekly\s+)?"
                        r"(?:class|classes|course|lessons)\b"),
    ("works_at", True, _RETIRED_EN),
    ("works_as", True, _RETIRED_EN),
    ("learning", False, rf"\bI(?:'ve| have)\s+been\s+(?:doing|learning|practising|practicing)\s+(?:the\s+)?"
                        rf"(?P<value>{_LEARNABLE})\b"),
    ("learning", False, rf"(?<!\bher )(?<!\bhis )(?<!\btheir )(?<!'s )\b(?P<value>{_LEARNABLE})\s+"
                        r"(?:lessons?|classes|class|course)\b"),
    ("studies", False, r"\b(?:bachelor|master|diploma|doctorate)(?:'s)?\s+(?:of|in)\s+(?:science\s+in\s+|arts\s+in\s+)?"
                       rf"(?P<value>[\w -]{{2,40}}?){_END}"),
    ("allergic_to", False, r"\bI\s+(?:have|'ve got|have got)\s+(?:an?\s+|a\s+bad\s+|a\s+severe\s+)?"
                           r"(?P<value>[\w-]+(?:\s+[\w-]+)?)\s+allergy\b"),
    ("owns", True, r"\b(?:the|my|our)\s+(?P<value>(?:[\w-]+\s+)?[\w-]+?)(?:\s+is|'s)\s+(?:gone|sold|stolen|dead|"
                   r"written off)\b"),
    ("owns", True, r"\b(?:stole|nicked|pinched)\s+(?:my|our)\s+(?P<value>[\w-]+(?:\s+[\w-]+)?)(?=[.,!?;]|\s+"
                   r"(?:outside|from|last|this|yesterday|today|while|in|at)\b|$)"),
    ("works_at", True, rf"\blast\s+(?:shift|day)\s+at\s+(?:the\s+)?{_V}(?:\s+(?:was|is)\b|\s*[.!;]|$)"),
    ("likes", True, r"\bI(?:'m|\s+am)\s+(?:so\s+)?(?P<any>done with it|over it|not into it any\s?more|"
                    r"sick of it)\b"),
    ("child", False, rf"\b(?:a|my|our)\s+(?:son|daughter|boy|girl|eldest|youngest),\s+(?P<value>{_NAME})\b", "given"),
    ("allergic_to", False, r"^\s*(?P<value>[\w-]+(?:\s+[\w-]+)?)\s+allergy\b"),
    ("pet", True, rf"\bI\s+lost\s+(?P<name>{_NAME})\b(?!\s+(?:&|(?-i:[A-Z])))"),
    ("lives_in", False, rf"\b{_V},?\s+born and bred\b", "weak"),
    ("works_at", False, rf"\b(?:been\s+)?(?:driving|working|nursing|teaching|cooking|cleaning)\s+(?:for|at)\s+"
                        rf"{_V}\s+(?:going on\s+|for\s+)?(?:about\s+|nearly\s+|almost\s+|over\s+)?"
                        r"(?:\d+|\w+)\s+years?\b"),
    ("partner", False, rf"\b(?:me and|I and)\s+(?P<value>{_NAME})\s+(?:made it official|are official|got together|"
                       r"are together|are dating|are seeing each other|got engaged|got married)\b"),
    ("lives_in", False, rf"\bmoved in with\s+(?:her|him|them|{_NAME}),?\s+(?:(?:up|down|over|out)\s+)?in\s+{_V}"),
    ("owns", False, rf"\b{_I}\s+(?:just\s+|finally\s+)?got\s+(?:a|an)\s+(?:used\s+|new\s+|second-hand\s+|old\s+)?"
                    r"(?P<value>(?-i:[A-Z])[\w-]+)"),
    ("owns", False, r"\b{_I}\s+(?:just\s+|finally\s+)?got\s+the\s+(?P<value>car|van|bike|laptop|camera|phone|guitar|"
                    r"piano|keyboard|drone|motorbike|scooter)\b".replace("{_I}", _I)),
    ("learning", False, rf"\bI(?:'ve| have)\s+(?:just\s+|finally\s+)?taken up\s+(?P<value>[\w' -]{{2,30}}?){_END}"),
    ("lives_in", False, rf"\b{_I}\s*(?:'re|are|'m|am)\s+renting\s+(?:a|an)\s+(?:\w+\s+)?(?:flat|house|place|"
                        rf"apartment|room|unit)\s+in\s+{_V}"),
    ("child", False, rf"\bour\s+(?:little\s+|eldest\s+|youngest\s+)?(?:boy|girl|son|daughter)\s+(?P<value>{_NAME})\b", "given"),
    # a home of the past ("I grew up in Leicester"): kept closed, never closing a home told now
    ("lives_in", True, rf"\bI\s+grew up\s+in\s+{_V}(?!\s+and\s+(?:still|never left))", "weak"),
    ("lives_in", False, r"\bI\s+(?:now\s+)?live\s+(?P<value>here)\b(?:\s+now)?"),
    ("partner", True, rf"\bI\s+(?:ended (?:it|things)|called it off)\s+with\s+(?P<value>{_NAME})"),
    ("works_at", True, r"\b(?P<any>laid off)\b[^.!?]{0,40}\bme included\b"),
    ("lives_in", False, rf"^\s*{_V}!+\s+(?:we\s+|I\s+)?moved\b"),
    ("lives_in", False, rf"^\W*(?:hello|hi|greetings|morning|evening)?\W*(?:\w+\s+)?(?:writing|typing|texting)?\s*"
                        rf"(?:to you\s+)?from\s+{_V}\s*(?:[!.]|$)", "weak"),
    ("lives_in", False, rf"^\W*(?:hello|hi|greetings)\s+from\s+{_V}", "weak"),
))
# "I used to love coffee but now I can't stand it": a like that ended, and a dislike
_USED_TO = compiled(r"\bI used to (?P<verb>love|like|enjoy|hate|dislike|can't stand)\s+"
                    r"(?P<value>[\w' -]{2,30}?)(?=\s*(?:,|but|and|$))", re.IGNORECASE)
# …and what the rest of the turn says holds now: the contrary ("now I can't stand it"), or the
# same feeling turned round ("now I drink it every day")
_NOW_CONTRARY = compiled(r"\bnow\b[^.!?]{0,30}?\b(?:(?P<neg>can't stand|cannot stand|hate|"
                         r"dislike|don't like|can't bear)|(?P<pos>love|like|enjoy|adore|drink|"
                         r"eat|have)\b)", re.IGNORECASE)
_NOT_ANYMORE = compiled(r"\bI\s+(?:don't|do not|no longer)\s+(?:even\s+|really\s+)?(?:like|love|enjoy|drink|eat)\s+"
                        r"(?P<value>[\w' -]{2,30}?)\s*(?:any\s?more)?(?=[.,;!?]|$)",
                        re.IGNORECASE)
# What makes a clause no statement of fact: a plan, a wish, a question, a condition.
_EN_HEDGE = compiled(r"\b(?:might|(?-i:may)|maybe|perhaps|would|could|should|want to|wanna|wants?|wanted|"
                     r"wish|hope to|thinking (?:of|about)|plan(?:ning)? to|going to|gonna|"
                     r"if|whether|someday|one day|will|not sure|unsure)\b|\?", re.IGNORECASE)
_CLAUSE = compiled(r"[^.!?;\n]+[.!?;]?")
# "Sold it on Gumtree": "it" is the last thing one owns the turn named before
_SOLD_IT = compiled(r"\b(?:sold|got rid of)\s+it\b", re.IGNORECASE)
_OWNABLE = compiled(r"\b(?:car|van|bike|motorbike|scooter|truck|camera|laptop|guitar|piano|"
                    r"keyboard|drum kit|violin|boat|flat|house)\b", re.IGNORECASE)


# Chat drops the "I" before a verb of what one did ("Sold the Chevy today.", "Handed in my
# resignation", "also quit pottery"): the clause reads as if it were there, before the verb
_DROPPED_I = compiled(r"^(\s*(?:(?:just|finally|officially|also)\s+)?)(?=(?:sold|bought|got|quit|left|moved|"
                      r"started|handed|gave|adopted|joined|finished|graduated|broke up|took up|gave up|lost|"
                      r"married|signed|resigned|enrolled|rescued|relocated)\b)", re.IGNORECASE)


def _en(text: str) -> list[Statement]:
    out: list[Statement] = []
    for told in _CLAUSE().findall(text):
        clause = _DROPPED_I().sub(r"\1I ", told, count=1)
        hedged = bool(_EN_HEDGE().search(clause))
        if not hedged:
            out += _en_contrasts(clause, text)
        for rule in _EN():
            if hedged and rule.mode != "given":
                continue
            for m in rule.pattern.finditer(clause):
                statement = _statement(rule, m)
                if statement:
                    out.append(statement)
        if not hedged and (m := _SOLD_IT().search(clause)):
            owned = _OWNABLE().findall(text[:text.find(told) + m.start()])
            if owned:
                out.append(Statement("owns", owned[-1].lower(), True))
    return out


def _en_contrasts(clause: str, text: str) -> list[Statement]:
    out = []
    if m := _USED_TO().search(clause):
        hated = m["verb"].lower() in ("hate", "dislike", "can't stand")
        value = _tidy(m["value"])
        out.append(Statement("dislikes" if hated else "likes", value, True))
        now = _NOW_CONTRARY().search(text, text.find(clause) + m.end())
        if now and value and (bool(now["neg"]) != hated):
            out.append(Statement("dislikes" if now["neg"] else "likes", value))
    if m := _NOT_ANYMORE().search(clause):
        out.append(Statement("likes", _tidy(m["value"]), True))
    return out


# ------------------------------------------------------------------ Chinese

_ZV = r"(?P<value>[\u4e00-\u9fffA-Za-z0-9·]{1,12}?)"
_ZEND = r"(?=[了啦呢啊吧呀哦嘛，。！？、,.!?~～\s]|$)"
_ZPET = (r"(?P<kind>猫咪|小猫|狸花猫|布偶猫|橘猫|暹罗猫|猫|小狗|狗狗|土狗|狗|兔子|仓鼠|金丝熊|龙猫|刺猬|"
         r"鹦鹉|八哥|金鱼|乌龟|柯基|柴犬|英短|金毛|泰迪|哈士奇|萨摩耶|边牧|拉布拉多|比熊|博美|"
         r"雪纳瑞|田园犬)")
# Cities a Chinese speaker lives in, for the places told in passing (我们广州这几天回南天,
# 住在西安最大的好处): Chinese writes no space or capital to end a name, so a bare place is
# found by its name. Written by hand: the libraries that list China's divisions (cpca, jionlp)
# bring pandas and megabytes of data for what is a list of a few hundred words. The mainland's
# provincial capitals and larger prefecture cities, Hong Kong, Macau, Taiwan's, and the cities
# abroad Chinese users most often live in.
_ZH_CITIES = ["北京", "上海", "天津", "重庆", "广州", "深圳", "杭州", "成都", "武汉", "西安", "南京", "苏州", "长沙", "郑州", "青岛", "厦门", "大连", "沈阳", "哈尔滨", "长春", "昆明", "贵阳", "南宁", "福州", "合肥", "南昌", "济南", "太原", "石家庄", "兰州", "西宁", "银川", "呼和浩特", "乌鲁木齐", "拉萨", "海口", "三亚", "珠海", "佛山", "东莞", "中山", "惠州", "汕头", "江门", "湛江", "肇庆", "宁波", "温州", "绍兴", "嘉兴", "湖州", "金华", "台州", "义乌", "无锡", "常州", "南通", "扬州", "徐州", "镇江", "盐城", "泰州", "昆山", "烟台", "威海", "潍坊", "临沂", "淄博", "济宁", "洛阳", "开封", "宜昌", "襄阳", "株洲", "湘潭", "岳阳", "衡阳", "桂林", "柳州", "北海", "大理", "丽江", "泉州", "漳州", "莆田", "绵阳", "乐山", "宜宾", "南充", "遵义", "唐山", "保定", "廊坊", "秦皇岛", "邯郸", "大同", "包头", "鄂尔多斯", "吉林", "齐齐哈尔", "大庆", "鞍山", "丹东", "锦州", "芜湖", "安庆", "蚌埠", "赣州", "九江", "景德镇", "上饶", "黄山", "舟山", "香港", "澳门", "台北", "高雄", "台中", "台南", "新竹", "东京", "大阪", "京都", "横滨", "首尔", "釜山", "新加坡", "吉隆坡", "曼谷", "纽约", "波士顿", "洛杉矶", "旧金山", "西雅图", "芝加哥", "温哥华", "多伦多", "蒙特利尔", "伦敦", "曼彻斯特", "爱丁堡", "巴黎", "柏林", "慕尼黑", "阿姆斯特丹", "米兰", "罗马", "悉尼", "墨尔本", "布里斯班", "奥克兰", "迪拜"]
_ZCITY = "(?:" + "|".join(sorted(_ZH_CITIES, key=len, reverse=True)) + ")"
# jobs by their Chinese names (the value ends with one)
_ZJOB = ("(?:设计师|工程师|程序员|老师|教师|医生|护士|文案|律师|会计|厨师|作家|编辑|记者|翻译|"
         "摄影师|咖啡师|销售|客户经理|产品经理|经理|研究员|学生|研究生|博士生|实习生|司机|画师|主播|"
         "警察|药剂师|兽医|老板|店长|行长|主管|总监|主任|合伙人|公务员|快递员|外卖员|保安|导游|幼师|"
         "教练|业务员|运营|策划|前台|收银员|店员|服务员|美甲师|理发师|发型师|化妆师|出纳|人事|"
         "行政|客服|骑手|护工|保姆|月嫂|面点师|调酒师|插画师|演员|歌手|模特|主持人|导演|编剧|"
         "牙医|法官|检察官|消防员|军人|飞行员|空姐|乘务员|教授|讲师|辅导员|农民|工人|电工|木工|"
         "技术员|质检员|审计|分析师|顾问|规划师|建筑师|架构师|测试|开发|运维|保洁|园丁|村医|花艺师|"
         "美容师|营养师|新媒体运营)")
# a first character no Chinese given name starts with, in "我老公X…" (我老公今天…)
_ZNOT_NAME = "(?![今昨明最已在又也还就都很说是去来要会想不没把被跟和给让做出回上下到从对一这那刚非真太好的骂嫌催念吵天学走叫])"
# the kinds of pet and the jobs, for the turns around a statement (domain.fact_context)
PET_KINDS_EN, PET_KINDS_ZH = _PET, _ZPET
ZH_CITIES = tuple(_ZH_CITIES)
JOBS_EN, JOBS_ZH = _JOB, _ZJOB
# when it happened, between the subject and the verb (今天领养了, 上个月入职了)
_ZT = r"(?:今天|昨天|前天|上个?月|上周|上星期|最近|刚刚|刚|终于|已经|也|还|新|前几天|这周|这个月|去年|今年)*"
_ZH = _table(0, (
    ("lives_in", False, rf"{_ZT}(?:现在|又)?{_ZT}(?:搬|搬家)(?:到|去)了?{_ZV}{_ZEND}"),
    ("lives_in", False, rf"(?:现在|目前|如今)?(?:住在|定居在){_ZV}(?:了|啦|这边|那边)?{_ZEND}"),
    ("lives_in", False, rf"(?:现在|目前|如今|还)?(?<![现实存正所好])在{_ZV}(?:住|生活|定居)(?:了)?"
                        r"(?![一两三四五六七八九十几\d]+(?:晚|天|夜|个晚上|个星期|周))"),
    ("lives_in", False, rf"搬(?:了|家了|走了)[，,]\s*(?:现在|如今)(?:住)?在{_ZV}{_ZEND}"),
    # sharing a flat names where one lives: 跟人合租在徐汇, 在光谷跟同事合租了
    ("lives_in", False, rf"合租在{_ZV}{_ZEND}"),
    ("lives_in", False, rf"(?<![现实存正所好])在{_ZV}(?:跟|和|与)[\u4e00-\u9fff]{{1,6}}?合租"),
    ("lives_in", False, rf"来{_ZV}(?:[一二三四五六七八九十两几\d]+年|好几年|很多年|多年)了"),
    ("lives_in", False, rf"在{_ZV}(?:土生土长|长大的?，?(?:一直)?住)"),
    ("lives_in", False, rf"我(?:现在)?在{_ZV}(?:读|上)(?:大[一二三四]|研[一二三]|研究生|高中|大学|博士)"),
    ("works_at", False, rf"(?:现在|目前)?(?<![现实存正所好])在(?!线|家|面|找|准备|考虑|想|学|读|看|等|忙|写|打|搞)(?!一家|一个|某)"
                        rf"{_ZV}(?:上班|工作|实习|做(?!了?[\u4e00-\u9fff]{{0,4}}?(?:检查|检测|手术|体检|治疗|B超|CT|理疗|按摩|美甲|头发)|了?(?:个|一次))|当|干了)"),
    ("works_at", False, rf"{_ZT}(?:入职了?|加入了?|进了|跳槽(?:到|去)了?){_ZV}{_ZEND}"),
    ("works_as", False, rf"升(?:职)?(?:为|成|到)了?(?:一名|一个|个|名)?(?P<value>[\u4e00-\u9fff]{{0,6}}?{_ZJOB})"),
    ("works_at", False, rf"{_ZV}(?:录用|录取|聘用)了?我"),
    ("works_at", True, rf"{_ZT}(?:就)?(?:从{_ZV})?(?:辞职|离职)了"),
    ("works_at", True, r"(?:已经|刚)?(?P<any>换(?:了(?:个|份)?)?工作|辞职|离职|被裁|被(?:公司)?(?:辞退|开除|炒(?:了|鱿鱼)))"),
    ("works_as", False, rf"(?:我|还是|开始|九月开始|现在)(?:现在|目前)?(?:是|当上了|当了|当|成了|做)(?:一名|一个|个|名)?"
                        r"(?P<value>[\u4e00-\u9fff]{0,10}?"
                        rf"{_ZJOB})"),
    ("studies", False, rf"(?:读|学|念|攻读)(?:的是)?{_ZV}(?:专业|系|研究生|博士|本科|硕士)"),
    ("studies", False, rf"(?:读大[一二三四]|读研[一二三]?|上大学)[，,]\s*学{_ZV}的"),
    ("studies", True, r"(?:我)?(?:已经|终于|可以|顺利|正式)?毕业(?:了|啦)|不(?:再)?是学生了"),
    ("learning", False, rf"(?:我)?{_ZT}(?:现在)?(?:开始|在|正在)学(?:习)?(?:起了|起)?"
                        r"(?P<value>吉他|钢琴|小提琴|大提琴|架子鼓|尤克里里|日语|韩语|英语|法语|"
                        r"德语|西班牙语|编程|游泳|瑜伽|画画|绘画|油画|素描|水彩|书法|陶艺|滑板|滑雪|冲浪|攀岩|拳击|街舞|"
                        r"舞蹈|唱歌|做饭|烘焙|开车|驾驶|摄影|围棋|象棋|古筝|二胡|长笛|萨克斯)"),
    ("learning", True, r"(?P<value>吉他|钢琴|小提琴|大提琴|架子鼓|尤克里里|日语|韩语|英语|法语|"
                       r"德语|西班牙语|编程|游泳|瑜伽|画画|绘画|书法|陶艺|滑板|舞蹈|唱歌|做饭|烘焙)"
                       r"(?:我)?(?:已经)?(?:不学了|放弃了|没再学|学不下去)"),
    ("learning", True, r"我(?:已经)?(?:不学|放弃(?:了)?(?:学)?)(?P<value>吉他|钢琴|小提琴|日语|韩语|英语|"
                       r"法语|编程|游泳|瑜伽|画画|书法|舞蹈)"),
    ("pet", False, rf"我(?:家|们家){_ZT}(?:来了|多了|添了)(?:一只|一条|只|条)(?:小)?{_ZPET}"),
    ("pet", False, rf"我(?:家|们)?{_ZT}(?:养了|领养了|收养了|捡了|有了|买了|养着|有)"
                   rf"(?:一|两|只|条|一只|一条|个)*(?:[\u4e00-\u9fff]{{0,4}}?){_ZPET}"
                   r"(?:[，,]?(?:叫|名叫|取名(?:叫)?|名字叫)(?P<name>[\u4e00-\u9fffA-Za-z]{1,6}))?"),
    ("pet", False, rf"我(?:家|们家)?(?:的)?{_ZPET}(?:叫|名叫|名字叫)(?P<name>[\u4e00-\u9fffA-Za-z]{{1,6}}?){_ZEND}"),
    ("pet", True, r"我(?:家|们家)(?:的)?(?P<name>[\u4e00-\u9fffA-Za-z]{1,4}?)(?:去世了|走了|死了|没了|去喵星了|去汪星了)"),
    ("pet", True, rf"我(?:家|们家)?(?:的)?{_ZPET}(?P<name>[\u4e00-\u9fffA-Za-z]{{0,6}}?)"
                  r"(?:去世了|走了|死了|没了|去喵星了|去汪星了|丢了)"),
    ("partner", False, r"我(?:的)?(?:老公|老婆|男朋友|女朋友|男友|女友|对象|未婚夫|未婚妻|老伴|爱人|媳妇|老头子|老婆子)"
                       rf"(?:叫|是)(?P<value>{_ZNOT_NAME}[\u4e00-\u9fffA-Za-z]{{1,6}}?)"
                       r"(?=[，。！？,.!?\s]|在|说|也|都|还|就|很|今天|昨天|已经|$)"),
    ("partner", False, r"我(?:的)?(?:老公|老婆|男朋友|女朋友|男友|女友|对象|未婚夫|未婚妻|老伴|爱人|媳妇|老头子|老婆子)"
                       rf"(?P<value>{_ZNOT_NAME}[\u4e00-\u9fffA-Za-z]{{1,6}}?)"
                       r"(?=在|说|也|都|还|就|很|今天|昨天|已经|又|总|天天|一直|[，,\s](?![\u4e00-\u9fff]{0,2}[。！？]))"),
    ("partner", False, r"我(?:的)?(?:老公|老婆|男朋友|女朋友|男友|女友|对象|未婚夫|未婚妻)"
                       rf"(?P<value>{_ZNOT_NAME}[\u4e00-\u9fff]{{2}})(?=[\u4e00-\u9fff])", "given"),
    ("partner", True, r"我(?:和|跟)(?P<value>[\u4e00-\u9fffA-Za-z]{1,6}?)(?:分手了|离婚了)"),
    ("child", False, rf"我(?:的)?(?:儿子|女儿|宝宝|闺女)(?P<value>{_ZNOT_NAME}[\u4e00-\u9fff]{{2}})(?=[\u4e00-\u9fff，。！？,.!?]|$)"),
    ("child", False, r"我(?:的)?(?:儿子|女儿|孩子|宝宝)(?:叫|名叫|名字叫)(?P<value>[\u4e00-\u9fffA-Za-z]{1,6}?)"
                     r"(?=[，。！？,.!?\s了]|$)"),
    ("allergic_to", False, rf"我对{_ZV}(?:严重|有点|有些)?过敏"),
    ("allergic_to", True, rf"我(?:现在|已经)?对{_ZV}(?:已经)?(?:不(?:再)?过敏了|没(?:有)?(?:过敏反应|过敏)了)"),
    ("likes", False, rf"我(?:从小|打小|一直|向来|本来)?(?:就)?(?:超|很|特别|最|真的|非常|也|太|好|还是){{0,2}}(?:喜欢|爱)(?:吃|喝|玩|看|听)?(?!你|他|她|它|这|那|上){_ZV}{_ZEND}"),
    ("dislikes", False, rf"我(?:很|特别|真的|最|也)?(?:讨厌|不喜欢|受不了|不爱)(?:吃|喝|玩|看|听)?(?!你|他|她|它|这|那){_ZV}{_ZEND}"),
    ("likes", True, rf"我(?:已经)?(?:不再喜欢|不喜欢)?{_ZV}?(?:不喝|不吃|不玩)(?:了)"),
    ("likes", True, rf"我(?:已经)?不(?:再)?(?:喝|吃|玩){_ZV}了"),
    ("likes", True, rf"(?:我)?以前(?:很|特别|最|超)?(?:喜欢|爱)(?:吃|喝|玩|看|听)?{_ZV}{_ZEND}"),
    ("dislikes", True, rf"(?:我)?以前(?:很|特别|最|超)?(?:讨厌|不喜欢|受不了)(?:吃|喝)?{_ZV}{_ZEND}"),
    ("owns", False, rf"我{_ZT}(?:买了|入手了|提了)(?:一|辆|台|个|套|部)*"
                    r"(?P<value>[\u4e00-\u9fffA-Za-z0-9]{0,10}?(?:车|房|电脑|相机|吉他|钢琴|自行车|摩托|手机|平板|房子))"),
    ("owns", True, r"我(?:已经|刚)?(?:把)?(?:我的)?(?P<value>[\u4e00-\u9fffA-Za-z0-9]{1,10}?(?:车|房|电脑|相机|吉他|钢琴|自行车|摩托|房子))"
                   r"(?:卖了|卖掉了|转手了)"),
    # the places and things told in passing (weak) and by the noun that takes them for granted
    ("lives_in", False, rf"住在(?P<value>{_ZCITY})"),
    ("lives_in", False, rf"(?:留在|定居|扎根)(?P<value>{_ZCITY})", "weak"),
    ("lives_in", False, rf"我们(?P<value>{_ZCITY})", "weak"),
    ("lives_in", False, rf"(?:^|[，,。！!\s])(?P<value>{_ZCITY})(?:这边|这里|这点|这几天|最近|热死了|冷死了|"
                        r"又下雨|天天下雨|的冬天|的夏天|的交通|的房租|房租|堵)", "weak"),
    ("pet", False, rf"我家(?:的)?{_ZPET}(?P<name>{_ZNOT_NAME}(?!走|死|丢|病|生|睡|吃|跑|咬|抓|每天|天天)"
                   r"(?:(?!了|走|死|的)[\u4e00-\u9fffA-Za-z]){2,3}?)(?=今天|昨天|最近|已经|一直|就|又|也|还|在|总|"
                   r"老是|每天|天天|都|[，,。！!？?~～]|$)", "given"),
    ("pet", False, rf"(?:^|[，,\s]|是|来了|领养了|捡了|接回)(?:一)?只[\u4e00-\u9fff]{{0,4}}?{_ZPET}[，,]\s*"
                   r"(?:叫|名叫|名字叫)(?P<name>[\u4e00-\u9fffA-Za-z]{1,4}?)(?=[，。！？,.!?~～]|$)"),
    ("pet", False, rf"我家(?:的)?(?P<name>{_ZNOT_NAME}[\u4e00-\u9fff]{{2}})(?=已经|又|在|今天|昨天|最近|一直|"
                   rf"天天|每天|总|老是|就)(?=[^。！？]*?(?:这只|那只|这条|那条){_ZPET})", "given"),
    (NAMING, False, r"(?:^|[，,])(?:小名|大名|名字|取名)?(?:叫|取名)(?!了)"
                    r"(?P<value>[\u4e00-\u9fffA-Za-z]{1,4}?)(?=[，。！？,.!?~～]|$)"),
    ("child", False, r"(?P<kind>女儿|儿子|闺女)[^。！!？?]{0,16}?出生的?[^。！!？?]{0,4}?(?:小名|大名|名字|取名)"
                     r"(?:叫|是)(?P<name>[\u4e00-\u9fff]{1,3}?)(?=[，。！？,.!?~～]|$)", "given"),
    ("child", False, r"(?:^|[，,！!])(?:是)?(?:个|一个)(?P<kind>女儿|儿子|闺女|男孩|女孩|小公主|小王子)"
                     r"(?=[，。！？,.!?~～]|$)"),
    ("partner", False, r"(?:^|[，,])(?:我的?)?(?:老公|老婆|男朋友|女朋友|男友|女友|对象|未婚夫|未婚妻)"
                       rf"(?P<value>{_ZNOT_NAME}[\u4e00-\u9fff]{{2}})(?=[\u4e00-\u9fff])", "given"),
    ("works_as", False, rf"在[\u4e00-\u9fffA-Za-z0-9]{{1,12}}?(?:做|当)(?:一名|一个|个|名)?"
                        rf"(?P<value>[\u4e00-\u9fff]{{0,6}}?{_ZJOB})"),
    ("works_as", True, rf"(?:以后|已经|再也)?不(?:再)?(?:做|当|干)(?P<value>[\u4e00-\u9fff]{{0,6}}?{_ZJOB})了",
     "given"),
    ("works_as", True, rf"(?P<value>{_ZJOB})(?:我)?(?:是)?(?:干不下去了|不干了|不做了)"),
    ("works_at", True, r"(?:交了|交的|递了|递交了|提了)(?P<any>辞职信|辞呈|离职申请)"),
    ("owns", False, r"我(?:的)?(?:那|这)(?:辆|台|部)(?P<value>[\u4e00-\u9fffA-Za-z0-9-]{1,10}?)"
                    r"(?=开了|用了|骑了|跑|[，,。！!]|$)", "given"),
    ("owns", False, r"(?<![不没])(?:提|买)(?P<value>车)了"),
    ("owns", False, r"换(?:了)?(?:新)?(?P<value>电脑|手机|车|相机)了"),
    ("owns", True, r"把(?:我的)?(?:那|这)?(?:台|辆|个|部)?(?P<value>[\u4e00-\u9fffA-Za-z0-9]{1,8}?)"
                   r"(?:在[\u4e00-\u9fff]{1,6}?)?(?:卖了|卖掉了|转手了)"),
    ("owns", False, r"(?:我们|我)的?(?P<value>[\u4e00-\u9fff]{1,6}?(?:店|餐厅|工作室|咖啡馆))开业了"),
    ("likes", False, r"以前(?:很|最|特别|超)?(?:讨厌|不喜欢|受不了|不爱)(?:吃|喝)?(?P<value>[\u4e00-\u9fff]{1,6}?)"
                     r"[，,][^。]*?现在[^，。]{0,4}?(?:爱|喜欢)"),
    ("dislikes", False, r"我(?:从小)?(?:就)?(?:很|特别|真的|最|也)?怕(?P<value>辣|冷|热|甜|酸|苦|麻|虫子|"
                        r"狗|猫|蛇|老鼠|黑|高|水)(?![\u4e00-\u9fff])"),
    ("allergic_to", False, r"^(?P<value>[^\s\W我你他她它对]{1,5})过敏[！!。]?$"),
    ("allergic_to", True, rf"我小时候(?:也|还)?对{_ZV}过敏"),
    ("partner", False, r"(?P<value>[\u4e00-\u9fffA-Za-z]{1,4}?)是(?:我|我的)?(?:老公|老婆|男朋友|女朋友|男友|女友|"
                       r"对象|未婚夫|未婚妻|爱人|老伴)", "given"),
    ("allergic_to", False, r"我(?:有)?(?P<value>(?!有点|也|又|还|是|不|没|妹|姐|哥|弟|妈|爸|老|儿|女|朋|同)[^\W对]{1,5}?)过敏"),
    ("allergic_to", False, r"(?:^|[，,])(?P<value>[\u4e00-\u9fff]{1,5}?)过敏又(?:犯|发作)了"),
    ("dislikes", False, rf"我(?:最|真的|超|特别)?(?:恨|烦)(?:死)?(?P<value>[\u4e00-\u9fff]{{1,6}}?){_ZEND}"),
    ("likes", False, rf"(?:还是|我)?最爱(?:吃|喝|玩|看|听)?(?!你|他|她|它)(?P<value>[\u4e00-\u9fff]{{1,6}}?){_ZEND}"),
    ("likes", False, rf"(?:我)?喜欢上(?:了)?(?P<value>[\u4e00-\u9fff]{{1,6}}?)(?:了)?{_ZEND}"),
    ("lives_in", False, rf"(?:^|[，,]|就|一直|还|都|现在|目前)住(?P<value>{_ZCITY})"),
    ("lives_in", False, rf"我(?:现在|已经|终于)?(?:人)?在(?P<value>{_ZCITY})了"),
    ("lives_in", False, rf"(?:^|[，,\s])(?P<value>{_ZCITY})(?:的)?(?:太阳|天气|天|冬天|夏天|晚上|早上|交通|"
                        r"房租|房价|满城)", "weak"),
    # two characters at least, none a pronoun or a time: 冻死了 / 累死了 are "so cold", "so tired"
    ("pet", True, r"(?:^|[，,\s])(?P<name>(?!上周|上个|昨天|今天|前天|那天|后来|最后)(?:(?![我你他她它])"
                  r"[\u4e00-\u9fffA-Za-z]){2,4}?)(?:去世了|走了|死了|没了|"
                  r"去喵星了|去汪星了)"),
    ("owns", True, r"(?:我的?)?(?P<value>[\u4e00-\u9fffA-Za-z0-9]{1,6}?)被偷了"),
    ("owns", False, r"骑(?:着)?(?:我的)?(?P<value>摩托车?|电动车|小电驴|自行车|单车)", "weak"),
    ("learning", False, r"(?:去|报了?|报名了?)[^，。]{0,8}?学(?P<value>冲浪|滑雪|游泳|拳击|攀岩|吉他|钢琴|画画|"
                        r"日语|韩语|英语|法语|德语|舞蹈|街舞|瑜伽|书法|陶艺|烘焙|做饭|开车|驾驶)"),
    ("partner", True, r"(?:^|[，,\s]|我)(?:和|跟)(?P<value>[\u4e00-\u9fffA-Za-z]{1,4}?)(?:分手了|离婚了|分了|掰了|吹了)"
                      r"(?=[，,。！!~～\s]|$)"),
    ("lives_in", False, rf"在(?P<value>{_ZCITY})(?:上班|工作)", "weak"),
    ("studies", False, r"(?:读研|读博|读本科|读大[一二三四]|研[一二三]|大[一二三四])[，,\s]+"
                       r"(?P<value>[\u4e00-\u9fff]{2,6}?(?:工程|科学|学|管理|设计|技术|医学|文学|艺术))(?=[，,\s]|$)"),
    ("partner", False, r"(?:^|[，,\s])(?:老伴|爱人|媳妇|老头子|老婆子)"
                       rf"(?P<value>{_ZNOT_NAME}[\u4e00-\u9fff]{{2}})(?=[\u4e00-\u9fff])", "given"),
    ("child", False, rf"(?:^|[，,\s])(?:闺女|女儿|儿子)(?P<value>{_ZNOT_NAME}[\u4e00-\u9fff]{{2}})(?=[\u4e00-\u9fff，,\s]|$)",
     "given"),
    ("pet", False, rf"(?P<name>[\u4e00-\u9fffA-Za-z]{{1,4}}?)是(?:我的?|我家的?)?(?:一只)?{_ZPET}(?:吗)?$", "given"),
    ("likes", False, r"(?P<value>[\u4e00-\u9fff]{1,6}?)是我(?:唯一的|最大的|最喜欢的)?(?:爱好|最爱)"),
    ("lives_in", False, rf"(?P<value>{_ZCITY})(?:今天|这几天|最近|又|也|一直)?(?:刮|下了|下雨|下雪|降温|升温|"
                        r"热|冷|晒|闷)", "weak"),
    ("lives_in", False, rf"(?:还在|就在|人在)(?P<value>{_ZCITY})", "weak"),
    ("works_as", False, rf"(?:^|[，,\s]|去|就是|是)(?:做|当|干)(?P<value>[\u4e00-\u9fff]{{0,6}}?{_ZJOB})(?![\u4e00-\u9fff]{{0,3}}吗)"),
    ("learning", False, r"(?:报了?|报名了?)[^，。\s]{0,10}?的?(?P<value>(?:(?![了个一门节年月天周的])[\u4e00-\u9fff]){2,4}?)(?:班|课)"),
    ("learning", False, r"(?:^|[，,\s]|我)(?:现在|最近)?(?:在|正在|开始)学(?:习)?(?P<value>[\u4e00-\u9fffA-Za-z]{2,10}?)"
                        r"(?=[，,。！!？?\s]|$|了|考)", "weak"),
    ("owns", False, rf"(?:^|[，,\s]){_ZT}(?:咬咬牙)?(?:买了|入手了|提了)(?:一|辆|台|个|套|部)*"
                    r"(?P<value>[\u4e00-\u9fffA-Za-z0-9]{0,10}?(?:车|房|电脑|相机|吉他|钢琴|自行车|摩托|手机|平板|"
                    r"房子|无人机|电动车))"),
    ("studies", False, r"我是(?:学|读)(?P<value>[\u4e00-\u9fff]{1,6}?)的"),
    ("works_at", True, _RETIRED_ZH),
    ("works_as", True, _RETIRED_ZH),
    ("pet", False, r"带(?P<name>[\u4e00-\u9fff]{2})去[^，。\s]{0,6}?(?:溜|遛)"),
    ("allergic_to", True, r"(?:^|[，,\s！!])(?P<value>[\u4e00-\u9fff]{1,5}?)不(?:再)?过敏了"),
    ("lives_in", False, r"我们(?P<value>(?!学校|公司|家|村|小区|单位|这|那|班|宿舍)[\u4e00-\u9fff]{2})"
                        r"(?=夏天|冬天|这边|这里|那边|这几天|今天|天气)", "weak"),
    ("lives_in", False, rf"(?P<value>{_ZCITY})(?:今天|这几天)?\d{{1,2}}度", "weak"),
    ("lives_in", False, rf"我(?:已经|终于)?(?:到|来到|搬到)(?P<value>{_ZCITY})了", "weak"),
    ("pet", False, rf"(?:^|[，,\s]|还有|和|跟)(?:我的|我家的?)?{_ZPET}(?P<name>(?:阿|小)[\u4e00-\u9fff]|"
                   r"(?!粮|砂|窝|笼|咪|走|死|丢|病|了|的|叫|在|是|也|都|很|又|就|还|跑|生|没|一|不)[\u4e00-\u9fff]{2})"
                   r"(?=[，,。！!？?~～\s]|$)", "given"),
    ("partner", True, r"(?:^|[，,\s]|我|我们|我俩)(?P<any>离婚了|离了婚|分手了|分了)(?=[，,。！!~～\s]|$)"),
    ("learning", True, r"(?:^|[，,\s])(?P<value>(?!我|你|他|她|就|也|都)[\u4e00-\u9fffA-Za-z]{2,5}?)(?:我)?"
                       r"(?:肯定|已经|也|就|是)?(?:不学了|放弃了|没再学|学不下去了)"),
    ("likes", True, r"(?P<any>(?:现在|已经|是|真)?(?:真的?)?不(?:再)?喜欢了|(?:一点)?兴趣都没(?:有)?了)"),
    ("pet", True, r"(?:^|[，,\s])(?P<name>(?![我你他她它])[\u4e00-\u9fffA-Za-z]{1,4}?)被(?:人|一家人)?"
                  r"(?:领养|收养|领走|接走)了"),
    ("pet", True, r"(?:^|[，,\s])(?:把)?(?P<name>(?![我你他她它])[\u4e00-\u9fffA-Za-z]{1,4}?)(?:送给|送人|送走|给了)"
                  r"[^，。！!]{0,8}?了"),
    ("owns", True, r"(?:^|[，,\s])(?P<value>(?:二手|旧|老)?(?:电动车|小电驴|摩托车?|自行车|单车|车|电脑|相机|吉他|钢琴|"
                   r"房子|平板|手机))(?:卖给|卖掉|转给|送给)"),
    ("owns", True, r"把(?:我的|那台|那辆|那架)?(?P<value>[\u4e00-\u9fffA-Za-z0-9]{1,8}?)(?:送给|送人|转给)"),
    ("partner", True, r"(?:老伴|爱人|老公|老婆|先生|太太)(?:已经)?(?P<any>走了|去世了|过世了|不在了)"),
    ("lives_in", False, rf"(?:^|[，,\s])(?P<value>{_ZCITY})(?:的)?(?:今天|这几天|这两天|最近|又|也|一直|突然|这天气|这天|"
                        r"天气|开始)+\s*(?:刮|下|降温|升温|热|冷|晒|闷)", "weak"),
    ("allergic_to", False, r"(?:^|[，,])(?P<value>[^\W我你他她它对]{1,4})过敏(?=[，,。！!\s]|$)"),
    ("likes", False, r"(?:我)?(?:就)?好一口(?P<value>[\u4e00-\u9fff]{1,6}?)(?=[，,。！!\s]|$)"),
    ("owns", False, r"我(?:的)?(?:那|这)(?P<value>[\u4e00-\u9fffA-Za-z0-9-]{2,6}?)(?=开了|用了|骑了|老了|跑了|坏了)", "given"),
    (NAMING, False, r"(?:取名|起名|名字)(?:叫)?(?P<value>[\u4e00-\u9fffA-Za-z]{1,4}?)(?=[，,。！!\s]|$)"),
    ("learning", True, r"放弃(?:了)?(?:学)?(?P<value>(?!了)[\u4e00-\u9fffA-Za-z]{2,4}?)了"),
    ("dislikes", False, r"最讨厌的(?:东西|事|就)?(?:就)?是(?P<value>[\u4e00-\u9fff]{1,6}?)(?=[，,。！!\s]|$)"),
    ("likes", False, r"最喜欢的(?:东西|事|就)?(?:就)?是(?P<value>[\u4e00-\u9fff]{1,6}?)(?=[，,。！!\s]|$)"),
    ("partner", False, r"(?:^|[，,\s]|我)(?:跟|和)(?P<value>(?![我你他她])[\u4e00-\u9fffA-Za-z]{2,3}?)"
                       r"(?:在一起|订婚|结婚|领证)了"),
    ("likes", True, r"退坑(?:了)?(?P<value>[\u4e00-\u9fffA-Za-z0-9]{1,6}?)(?:了|$|[，,。！!\s])"),
    ("likes", True, r"(?:^|[，,\s])(?P<value>(?![我你他她])[\u4e00-\u9fff]{1,4}?)(?:我)?(?:是)?(?:正式|已经|彻底|再也)?"
                    r"(?:不打了|不玩了|不去了|戒了)"),
    ("likes", True, r"把(?P<value>[\u4e00-\u9fff]{1,4}?)戒了"),
    ("works_at", True, r"(?:就|已经|早就|刚)(?P<any>辞了|辞掉了)"),
    ("works_at", True, r"(?P<any>这活(?:算是)?干不了了|干不下去了)"),
    ("works_at", True, r"(?:^|[，,\s])(?P<value>(?![我你他她])[\u4e00-\u9fffA-Za-z]{2,6}?)(?:倒闭了|关门了|黄了)"),
))
_ZH_HEDGE = compiled(r"想|打算|准备|可能|也许|如果|要是|希望|会不会|能不能|计划|考虑|梦想|以后|将来|[吗？?]")
# Ahead: "要搬去深圳" (must / will move: 要 before what it does, not 需要, 重要, 主要, 要求) and a
# time to come (下个月搬去深圳) tell a value not held yet (a plan: domain.fact_plans). An ending
# told so is still the ending ("我要换工作了": the job is over in that sitting).
_ZH_AHEAD = compiled(r"(?<![需重主只不])要(?![求是])|下个?月|下周|下星期|明年|明天|后天|月底|年底")
_ZH_CLAUSE = compiled(r"[^。！？；\n]+[。！？；]?")
# Somebody else as the subject of what follows ("我姐姐搬到上海了", "你住在哪", "他养了只猫")
# — as the subject, not as the one the speaker does it with or to (跟领导提了离职, 带女儿搬到杭州)
_ZH_OTHERS = compiled(rf"(?<![跟和与同给向对找陪带替帮被])(?:我(?:{KIN_ZH_SHORT})|{KIN_ZH}|你们?|他们?|"
                      r"她们?|它|大家|别人)")
# A statement denied (我没在学日语) or no longer so (我不在腾讯上班了, 我已经不住在广州了): the
# negation just before what the rule read
_ZH_NEGATED = compiled(r"(?:不|没有?|别)再?$")
# …or told as what was (我以前住在巴黎, 原来在恒远上班): no fact now, as "I used to live in Paris"
_ZH_FORMERLY = compiled(r"以前|之前|原来|曾经|从前|小时候|那时候|那会儿|当年")


# Chinese chat often marks its pauses with a space, not a comma ("阿杰加班 就奶盖陪我"); an
# emoji ends a sentence as often as "！" does
_ZH_SPACE = compiled(r"(?<=[\u4e00-\u9fff\w])\s+(?=[\u4e00-\u9fff])|(?<=[\u4e00-\u9fff])\s+(?=\w)|"
                     r"[\U0001F300-\U0001FAFF\u2600-\u27BF]+")


# "以后就住武汉了": from now on, settled (a plan says 以后想/以后要, not 以后就…了)
_SETTLED = compiled(r"以后就(?=[^，。]*了)")


def _without_value(clause: str, m: re.Match[str], begin: int, end: int) -> str:
    """The statement's own part of the clause, less the value it names (联想 is a brand, not
    a wish: 想)."""
    group = next((g for g in ("value", "name") if m.groupdict().get(g)), None)
    if group is None or _ZH_HEDGE().match(m[group]):
        return clause[begin:end]  # 想…: the value opens with the hedge, which is one
    return clause[begin:m.start(group)] + "·" + clause[m.end(group):end]


def _zh(text: str) -> list[Statement]:
    """A clause's statements, subject dropped or not (Chinese often drops 我); a match whose
    part of the clause (since the last comma) names somebody else first is not the speaker's."""
    out: list[Statement] = []
    for clause in _zh_clauses(text):
        for rule in _ZH():
            plain = not rule.ends and rule.mode != "given"  # a value said, not its ending
            for m in rule.pattern.finditer(clause):
                begin = max(clause.rfind("，", 0, m.start()), clause.rfind(",", 0, m.start()), 0)
                stops = [i for i in (clause.find("，", m.end()), clause.find(",", m.end()))
                         if i >= 0]
                own = _without_value(clause, m, begin, min(stops) if stops else len(clause))
                own = _SETTLED().sub("", own)
                if rule.mode != "given" and (_ZH_HEDGE().search(own)
                                             or (not rule.ends and _ZH_AHEAD().search(own))):
                    continue  # a plan, a wish, a question: in the statement's own part
                part = clause[begin:m.start() + 1]
                if _ZH_OTHERS().search(part) and "我" not in part[-2:]:
                    continue
                if "我" not in part and _ZH_OTHERS().search(clause[:begin]) and not re.search(
                        r"我(?!(?:的)?(?:大学|高中)?(?:室友|同事|朋友|同学|闺蜜|姐|妹|哥|弟|爸|妈))",
                        clause[:begin]):
                    continue  # 我大学室友，现在在陆家嘴做审计: the roommate's, still
                if plain and _ZH_FORMERLY().search(clause, begin, m.start()):
                    continue
                statement = _statement(rule, m)
                if statement and plain and _ZH_NEGATED().search(
                        clause, max(0, m.start() - 3), m.start()):
                    if "了" not in clause[m.end() - 1:]:
                        continue  # 我没在学日语: denied
                    statement = replace(statement, ends=True)  # 我不住在广州了: no longer
                if statement:
                    out.append(statement)
    return _dedupe(out)


def _zh_clauses(text: str) -> list[str]:
    """A Chinese text's sentences, the pauses typed as spaces or emoji made commas."""
    return _ZH_CLAUSE().findall(_ZH_SPACE().sub("，", text))


# ------------------------------------------------------------------ values

_LEAD = compiled(r"^(?:(?:the|a|an|some|my|our|(?-i:used|new|old|second-hand))\s+)+", re.IGNORECASE)
_TRAIL = compiled(r"\s+(?:now|here|there|too|as well|a lot|so much|lately|recently|again|"
                  r"anymore|any more|at all|for good)$", re.IGNORECASE)
# A thing's name ends where a verb of going or doing with it starts (那辆老捷达去的, 那台电动车
# 到现在还没修好): from the third character on, so 来福 and 小黑 keep theirs.
_ZH_GOES_ON = compiled(r"(?<=[\u4e00-\u9fffA-Za-z0-9]{2})(?:去|来|回|到|给|被|把|在|还|又|也|都|就|已经)")
_ZH_TRAIL = compiled(r"(?:了|啦|呢|啊|吧|呀|哦|嘛|这边|那边|工作|上班|的|一起)+$")
# Values that name nothing: a pronoun, a bare verb of feeling after "learning to", an age,
# a word about a name, a clause that goes on with somebody else
_JUNK = compiled(r"^(?:it|that|this|them|him|her|you|like|love|live|be|accept|deal|cope|"
                 r"play|relax|trust)\b|^(?:it|that|this)\s|^(?:小|大)?名$|"
                 r"^(?:his|her|their|your)\b|^[它他她]们?$|^的|^(?:给|帮|替|跟|和)|^(?:快|已经|都|才|差不多)?[\d一二三四五六七八九十两几半]+(?:岁|个月|个?星期|周|天|年)|跟着|和我|给我|帮我|的家$|哪|什么|都能|^(?:现在|这里|那里|这边|那边)", re.IGNORECASE)
_STOP = frozenset({"it", "that", "this", "you", "them", "him", "her", "there", "here", "they",
                   "stuff", "things", "it all", "everything", "evening", "night", "morning",
                   "online", "weekly", "beginner", "free", "new", "first",
                   "she", "he", "we", "i", "me",
                   "home", "work", "here now", "so", "too", "much", "a lot", "and"})


# a line of work named by the work ("years teaching", "done with accountancy")
_FIELD_JOB = {"teaching": "teacher", "nursing": "nurse", "accountancy": "accountant",
              "accounting": "accountant"}


# capitalised words that open a sentence and name no one ("Yeah, my dog.")
NOT_A_NAME = frozenset({
    "I", "Yeah", "Yes", "Yep", "No", "Nope", "Oh", "Ah", "Well", "Okay", "OK", "Ok", "Hey",
    "Hi", "Hello", "Sorry", "Thanks", "Anyway", "Honestly", "Actually", "So", "And", "But",
    "Also", "Then", "Now", "Today", "Tonight", "Morning", "Evening", "Night", "Haha", "Ha",
    "Lol", "Wow", "Sure", "Just", "Not", "Maybe", "Please", "Right", "Aw", "Ugh", "Hmm", "Um",
    "Uh", "Mm", "He", "She", "It", "They", "We", "You", "What", "Where", "When", "Who", "Why",
    "How", "That", "There", "Here", "This", "Let", "Every", "Each", "Last", "Next", "All",
    "Some", "Most", "Half", "Whole", "Our", "My", "Your", "Their", "His", "Her", "The", "A", "An"})


# a count or an ordinal is no name ("入职第三天" → 第三天, "been here 3 weeks")
_COUNT = compiled(r"^(?:第|前|头)?[\d一二两三四五六七八九十百几半]+\s*(?:个)?(?:天|周|星期|礼拜|月|年|次|号|"
                  r"小时|分钟)$|^\d+\s*(?:days?|weeks?|months?|years?|times?|hours?)$", re.IGNORECASE)


def _statement(rule: Rule, m: re.Match[str]) -> Statement | None:
    attribute, ends = rule.attribute, rule.ends
    groups = m.groupdict()
    kind = _tidy(groups.get("kind") or "")
    if attribute in ("pet", "child"):
        value = _tidy(groups.get("name") or groups.get("value") or "")
        value = _before_a_time(value) or kind  # 我的猫昨天走了: the cat; 我家豆豆昨天走了: 豆豆
    elif groups.get("field"):
        value = _FIELD_JOB[groups["field"].lower()]
    else:
        value = _tidy(groups.get("value") or "")
    if not value and (groups.get("any") or (ends and attribute in ("studies", "works_at", "works_as",
                                                                   "partner"))):
        value = "*"  # ended, whatever it was
    if attribute == "works_as" and HAN.search(value):
        value = value.rsplit("的", 1)[-1] or value  # 自由职业的平面设计师 → 平面设计师
    if attribute in ("owns", "pet") and HAN.search(value):
        value = _ZH_GOES_ON().split(value, 1)[0]  # 我那台摩托车去医院送东西 → 摩托车
    if attribute == "learning" and value.casefold().startswith("to "):
        value = value[3:]  # "learning to code"
    if attribute == "lives_in" and value.casefold() == "here":
        return Statement(attribute, HERE, ends)  # which place: the talk around it says
    if not value or value.casefold() in _STOP or _JUNK().search(value) or _COUNT().match(value):
        return None
    if attribute == "owns" and ends:
        value = re.split(r"\s+(?:to|for|from|off|on)\s+", value)[0]  # "sold the ps4 to a guy"
    if attribute == "owns" and (len(value.split()) > 3 or re.search(r"\b(?:of|off|for|from)\b", value)):
        return None  # "a little set of paints", "a foamie off bec": a purchase, not a thing one has
    if value.split()[0] in NOT_A_NAME and (attribute in ("pet", "partner", "child")
                                           or value[:1].isupper()):
        return None  # "Yeah, my daughter's six", "Every summer to Nairn"
    if attribute == "works_at" and (value in _ZH_CITIES or re.search(r"[里下上边中]$|^家", value)):
        return None  # 在杭州工作, 在厂里做: where one works, not for whom
    if attribute == "lives_in" and re.search(r"(?:酒店|宾馆|民宿|旅馆|青旅|客栈|全季|汉庭|如家|家|房)$|"
                                             r"\b(?:hotel|hostel|airbnb|motel|resort)\b", value,
                                             re.IGNORECASE):
        return None  # a stay (a hotel on a trip, a brother's place), not a home town
    if attribute == "learning" and "我" in value:
        return None
    if attribute == "allergic_to":  # 我说我青霉素过敏 → 青霉素: what follows the one allergic
        value = re.sub(r"^我?对", "", value).rsplit("我", 1)[-1] or value
    if attribute == "allergic_to" and not ends and re.search(r"[不没]|已经", value):
        return None  # 我对花生不过敏了: the ending's rule reads it
    return Statement(attribute, value, ends, kind, weak=rule.mode == "weak")


# any moment will do: whether a word names a time does not depend on when it is said
_SOME_DAY = datetime(2026, 1, 1, tzinfo=UTC)


def said_as_plan(text: str, value: str) -> bool:
    """Every clause of `text` that names `value` is a plan, a wish or a question (the hedges
    the rules read: 想, 打算, "want to", "?"…): a reader's value from it is not held yet
    ("我想给他做个蛋糕" is no liking of cake, "打算去游泳试试" no swimming). False when the text
    does not name the value as written: nothing to judge by."""
    if not value or value == "*":
        return False
    folded = value.casefold()
    if HAN.search(text):
        clauses = [c for c in _zh_clauses(text)
                   for c in re.split(r"[，,]", c) if folded in c.casefold()]
        hedge = [_ZH_HEDGE(), _ZH_AHEAD()]
    else:
        clauses = [c for c in _CLAUSE().findall(text) if folded in c.casefold()]
        hedge = [_EN_HEDGE()]
    return bool(clauses) and all(any(h.search(c) for h in hedge) for c in clauses)


def _before_a_time(value: str) -> str:
    """A Chinese name less the time expression that ends it (豆豆昨天 → 豆豆, 昨天 → "")."""
    if not HAN.search(value):
        return value
    from chalicelib.domain.timeparse import find_times  # lazily: read only for a name

    ends = [s.offset for s in find_times(value, _SOME_DAY) if s.offset + len(s.matched) == len(value)]
    return value[:ends[0]].strip() if ends else value


def _tidy(value: str) -> str:
    value = value.strip(" ,.;:!?'\"“”‘’，。！？")
    value = _LEAD().sub("", value)
    while (trimmed := _TRAIL().sub("", value)) != value:
        value = trimmed
    if HAN.search(value):
        value = _ZH_TRAIL().sub("", value)
    return value.strip()


def _dedupe(items: list[Statement]) -> list[Statement]:
    """One statement per (attribute, value, ends), the first (which names the kind, if any)."""
    seen: dict[tuple[str, str, bool], Statement] = {}
    for item in items:
        seen.setdefault((item.attribute, item.value.casefold(), item.ends), item)
    return list(seen.values())


# Phone English: apostrophes and capitals left out ("im allergic to latex", "my bf josh"),
# short forms. The rules read the turn as if written out; `proper` gives the capitals a name
# has elsewhere in the talk ("Josh" where the companion wrote it).
_CASUAL_SOURCES = (
    (r"\bi\b", "I"), (r"\bim\b", "I'm"), (r"\bive\b", "I've"), (r"\bid\b(?=\s+(?:love|like|"
     r"rather|never|been))", "I'd"), (r"\bcant\b", "can't"), (r"\bdont\b", "don't"),
    (r"\bdidnt\b", "didn't"), (r"\bisnt\b", "isn't"), (r"\bwont\b", "won't"),
    (r"\bdoesnt\b", "doesn't"), (r"\bhavent\b", "haven't"), (r"\bwasnt\b", "wasn't"),
    (r"\bbf\b", "boyfriend"), (r"\bgf\b", "girlfriend"), (r"\bhubby\b", "husband"),
    (r"\bwifey\b", "wife"), (r"\bu\b", "you"), (r"\bur\b", "your"), (r"\bgonna\b", "going to"),
)


@functools.cache
def _casual() -> list[tuple[re.Pattern[str], str]]:
    return [(re.compile(p, re.IGNORECASE), r) for p, r in _CASUAL_SOURCES]


_LOWER_WORD = compiled(r"(?<![\w'])[a-z][a-z'-]+\b")


def written_out(text: str, proper: dict[str, str] | None = None) -> str:
    """The turn with phone English written out (and its lowercased names capitalised as the
    talk spells them elsewhere; ’ as '); Chinese and tidy English come back as they are."""
    text = straight_quotes(text)
    if re.search(r"[A-Z]{2}", text) and not re.search(r"[a-z]", text):
        text = text.lower()  # shouting: the words, not the capitals
    if HAN.search(text) or not re.search(r"\b(?:i|im|ive|cant|dont|bf|gf|u)\b|"
                                                        r"^[^A-Z]*$", text):
        return text
    for pattern, repl in _casual():
        text = pattern.sub(repl, text)
    if proper:
        text = _LOWER_WORD().sub(lambda m: proper.get(m.group(0), m.group(0)), text)
    text = _NAMED_LOWER().sub(lambda m: m.group(1) + m.group(2).capitalize()
                              if m.group(2) not in _FOLLOWERS else m.group(0), text)
    if not re.search(r"[A-Z](?<!\bI)(?!'[a-z])", text.replace("I'", "i'")):
        text = _PLACE_LOWER().sub(_capitalised_place, text)  # typed all in lowercase
    return text


# "i work at bean there", "moved to north london": in a turn typed all in lowercase, the words
# where a firm or a place goes are its name, up to a word that is no part of one
_PLACE_LOWER = compiled(r"(\b(?:work(?:s|ing)?\s+(?:at|for)|started\s+(?:work(?:ing)?\s+)?at|"
                        r"live[sd]?\s+in|living\s+in|moved\s+(?:back\s+)?to|based\s+in)\s+)"
                        r"([a-z][\w&'-]*(?:\s+(?:&\s+)?[a-z][\w'-]*){0,2})")
_NOT_PLACE_WORDS = frozenset({"home", "myself", "night", "nights", "weekends", "school", "work",
                              "uni", "college", "my", "our", "their", "his", "her", "this", "that",
                              "it", "some", "least", "the", "a", "an", "what", "where", "which",
                              "town", "city", "place", "shop", "store", "office", "same", "new"})


def _capitalised_place(m: re.Match[str]) -> str:
    words = []
    for word in m.group(2).split():
        if word in _FOLLOWERS or word in _NOT_PLACE_WORDS or word.endswith(("ing", "ly")):
            break
        words.append(word)
    if not words:
        return m.group(0)
    name = " ".join(w if w == "&" else w.capitalize() for w in words)
    return m.group(1) + name + m.group(2)[len(" ".join(words)):]


# what comes after a name as the subject: "my husband marcus does", "my bf josh and i"
_AFTER_NAME = (r"(?=\s*(?:[.,!?;:)]|$|\s(?:is|was|has|had|does|did|says|said|and|who|will|would|"
               r"can|could|just|always|never|texted|called|thinks|wants|loves|hates|got|gets|made|"
               r"makes|took|works|lives|passed|died|came|went|left|moved|keeps|brought|bought|sent|"
               r"told|asked|gave|knows|needs|likes|drives|cooks|sleeps|isn't|wasn't|doesn't|"
               r"didn't|won't|can't|cried|laughed|started|finished)\b))")
# "my bf josh", "her name is luna": a lowercase word where a name goes is one, unless it is
# a word that follows a subject (a verb, an adverb, a conjunction: "my husband does the 11pm")
_NAMED_LOWER = compiled(r"(\b(?:my|our)\s+(?:(?:little|new|old|baby|eldest|youngest|older|younger)\s+)?"
                        rf"(?:husband|wife|boyfriend|girlfriend|partner|fianc[ée]e?|son|daughter|kid|"
                        rf"{_PET})\s+|\b(?:name is|name's|named|called)\s+)([a-z][a-z-]{{2,}})\b{_AFTER_NAME}")
_FOLLOWERS = frozenset({
    "is", "was", "are", "were", "has", "had", "have", "does", "did", "do", "says", "said", "thinks",
    "thought", "works", "worked", "got", "gets", "get", "will", "would", "can", "could", "should",
    "might", "may", "must", "and", "but", "then", "too", "also", "just", "always", "never",
    "still", "really", "finally", "already", "actually", "basically", "literally", "totally",
    "kinda", "who", "that", "which", "loves", "loved", "hates", "hated", "wants", "wanted",
    "made", "makes", "took", "takes", "came", "comes", "went", "goes", "left", "leaves", "keeps",
    "kept", "lives", "lived", "moved", "started", "starts", "stopped", "stops", "brought",
    "brings", "bought", "buys", "called", "calls", "texted", "texts", "sent", "sends", "told",
    "tells", "asked", "asks", "gave", "gives", "found", "finds", "knows", "knew", "needs",
    "needed", "likes", "liked", "cooks", "cooked", "drives", "drove", "sleeps", "slept", "eats",
    "ate", "drinks", "drank", "plays", "played", "watches", "watched", "reads", "runs", "ran",
    "walks", "walked", "helps", "helped", "tried", "tries", "picked", "picks", "dropped", "drops",
    "for", "with", "from", "the", "when", "because", "cos", "coz", "bc", "lol",
    "haha", "tho", "though", "again", "now", "today", "yesterday", "tonight", "here", "there",
    "isn't", "wasn't", "doesn't", "didn't", "won't", "can't", "don't", "hasn't", "reckons", "passed", "died", "broke", "cried", "laughed", "sat", "stood", "woke",
    "jumped", "barked", "meowed", "chewed", "threw", "puked", "peed", "pooped",
    "sleeping", "eating", "crying", "being", "getting", "doing", "going", "coming", "home",
    "away", "out", "in", "on", "at", "to", "up", "down", "over", "off", "about", "back", "first",
    "last", "every", "all", "both", "one", "two", "so", "or", "if", "as", "an", "a", "of", "by",
    "than", "like", "its", "it's", "is's", "gonna", "gotta", "wanna"})


def statements(text: str, proper: dict[str, str] | None = None) -> list[Statement]:
    """What one turn states about its speaker, in the order said (zh and en)."""
    found = _zh(text) if HAN.search(text) else []
    found += _en(written_out(text, proper))
    # "my cat Miso passed away" names Miso too: the ending is what the turn says
    named = {f.value.casefold() for f in found if f.attribute in ("pet", "child")}
    found = [f for f in found if f.attribute != NAMING or f.value.casefold() not in named]
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
    if HAN.search(short):
        return short in long
    if " " not in long and _stem(short) == _stem(long):
        return True  # code / coding, cat / cats
    return re.search(rf"(?<!\w){re.escape(short)}(?!\w)", long) is not None


def _stem(word: str) -> str:
    return re.sub(r"(?:ing|es|s|e)$", "", word)


# ------------------------------------------------------------------ a value read by a model

# What the turns must speak of for a model's value of these attributes to stand (the
# words of the attribute itself: an allergy, an animal, a child, a lesson). A small model
# filling a profile form put "Celine Dion" under allergic_to and "karaoke" under pet
# (issue 37, held-out 5); the other attributes have no such closed vocabulary.
_CUES = {
    "allergic_to": compiled(r"allerg|anaphyla|epi-?pen|hives|过敏", re.IGNORECASE),
    "pet": compiled(rf"\b(?:pets?|{_PET}s?|animals?|fox|owl|dragon|goat|pig|hen|duck|frog|mouse|"
                    r"mice|rat|hedgehog|vet|adopt\w*|foster\w*|walkies)\b|" + _ZPET +
                    r"|宠物|领养|收养|铲屎|喵|汪|兽医|猫粮|狗粮|狐|鸟|鼠|兔|龟|蛇|蜥|鸡|鸭|猪|羊|蛙",
                    re.IGNORECASE),
    "child": compiled(rf"\b(?:{_KIN_CHILD}s?|kids|children|toddler|school run|nursery)\b"
                      r"|儿子|女儿|孩子|宝宝|闺女|娃|幼儿园", re.IGNORECASE),
    "learning": compiled(r"\b(?:learn\w*|lessons?|class(?:es)?|courses?|tutor\w*|teacher|"
                         r"practi[cs]\w*|stud(?:y|ying|ies)|duolingo|beginner|grade|exam|"
                         r"train(?:ing|ee)?|apprentic\w*|instructor|coach)\b"
                         r"|学|课|练|老师|教练|考试|培训", re.IGNORECASE),
}
# A value names a thing: a pronoun, a verb of being or more than four words make it a
# clause the model copied ("he's my boyfriend", "Rohan is doing mock interviews with me").
_CLAUSE_WORDS = compiled(r"\b(?:i|i'm|i've|me|my|you|your|he|he's|she|she's|we|we're|they|"
                         r"they're|is|are|was|were|am|been|being)\b|[我你他她]", re.IGNORECASE)
MAX_VALUE_WORDS = 4


def spoken_of(attribute: str, text: str) -> bool:
    """The text speaks of the attribute, where it has a vocabulary of its own (True where it
    has none)."""
    cue = _CUES.get(attribute)
    return cue is None or cue().search(text) is not None


def value_shaped(value: str) -> bool:
    """A value the rules could have read: a name or a short noun phrase, not a clause, not a
    word the rules never take as a value (it, that, home …)."""
    text = value.strip()
    return bool(text) and text.casefold() not in _STOP and not _JUNK().search(text) \
        and len(text.split()) <= MAX_VALUE_WORDS and not _CLAUSE_WORDS().search(text)
