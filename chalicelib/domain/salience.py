"""Which sentences of a chat turn could be worth remembering: language rules, zh and en.

A chronicle records what happened, was decided or changed (seed 000); a turn made only of
small talk makes no event. These rules take out what is small talk on its face, sentence by
sentence — greetings, thanks, reactions, agreement, encouragement, compliments to the other
side, sign-offs, filler words and questions that carry no fact — and leave the statements.
Whether the statements left say something about someone's life is judged after them
(`usecases/extract/salience.py`: strong signals here, else the e5 judge).

Hand-written because they are product rules, not NLP (no library lists chat small talk in
both languages); each pattern matches a whole sentence, so a fact that merely opens with
"Wow" or 哇 is kept once the opening is cut (`strip_opening`).
"""

from __future__ import annotations

import re

from chalicelib.domain.lazyre import compiled
from chalicelib.domain.textproc import _SPLIT_RE, _ZH_FUNCTION_CHARS, is_cjk, query_terms
from chalicelib.domain.textrules import is_question, split_sentences

# Chatter that is about nothing: what an unrelated memory looks like to a query (the recall
# gate) and how close two unrelated turns sit (the offline extractor's same-topic test). Written
# once (not tuned): greetings, thanks, agreement, goodbyes. The text's language picks the list.
SMALL_TALK: dict[str, tuple[str, ...]] = {
    "en": ("Hi!", "How's it going?", "That's awesome, congrats!", "Thanks so much.",
           "See you later!", "Haha, yeah.", "Good night!", "Okay, sounds good."),
    "zh": ("你好呀", "最近怎么样？", "太好了，恭喜！", "谢谢你", "回头见", "哈哈，是啊", "晚安！",
           "好的，没问题"),
}


def language(text: str) -> str:
    """"zh" for text that is noticeably CJK, else "en": the two small-talk lists."""
    return "zh" if is_cjk(text) else "en"


# The rules below are compiled on first use (domain.lazyre): a recall reads SMALL_TALK and
# language() only, extraction the rest.

# Names of the people in the chat are not content: "Thanks, Maria!" is thanks.
Names = frozenset[str] | set[str] | tuple[str, ...]

_EN_INTERJECTION = (
    r"(?:hey|hi|hello|yo|wow|whoa|woah|oh|ah|aw+|aww+|omg|ooh|yay|yeah|yep|yup|yes|no|nope|nah"
    r"|woo+hoo+|woo+|yippee|hurray|bravo|phew|oof|yikes|ooh+"
    r"|ok(?:ay)?|sure|haha+|lol|hmm+|um+|well|so|anyway(?:s)?|by the way|btw|thanks|thank you"
    r"|wow+|cool|nice|great|awesome|amazing|sweet|lovely|right|true|totally|definitely"
    r"|absolutely|exactly|indeed|for sure|of course|sounds good|sounds great|congrats"
    r"|congratulations|hooray|ugh|geez|damn|dang|man|dude|gosh|agreed|same|me too)"
)
# "Wow, John! …", "Yeah, for sure. …": the opening words that only react.
_EN_OPENING = compiled(rf"^(?:{_EN_INTERJECTION}\b[\s,!.~…-]*)+", re.IGNORECASE)
_ZH_OPENING = compiled(
    r"^(?:哇+|哇塞|天哪|天啊|我的天|哈+|嘿+|嗯+|哦+|噢+|喔+|啊+|呀|诶|欸|唉|哎+呀?|嗨|好的?|是的?|对|对的"
    r"|没错|确实|真的|其实|那个|话说|说起来|对了|顺便说一下)[\s，,。！!~～…、]+")

# Openings that only greet, thank, react, agree, encourage, compliment or sign off. A
# sentence is small talk when one of them (or several) opens it and at most one content word
# follows: "Thanks for the advice!" is thanks, "Thanks, I got the job at the bakery" is not.
_EN_OPENINGS = [
    # greetings and catching up
    r"(?:hey|hi|hello|yo|howdy|greetings)",
    # "morning…", "Good evening!" — the time of day as a greeting, not "morning shift"
    r"(?:good )?(?:morning|afternoon|evening)(?=\s*(?:[,!.?~…:;-]|$))",
    r"(?:it'?s )?(?:good|great|nice|so good|lovely|awesome) (?:to )?(?:see|hear from|hear"
    r"|talk to|talk with|chat with|catch up with|catch up|reconnect with) (?:you|ya)(?: again)?",
    r"(?:long time no (?:see|talk)|how(?:'s| is| are| have)? (?:it going|you doing|you"
    r"|things|life|everything|been|are things)|what'?s (?:up|new)|anything new|how have you"
    r" been|how are you)",
    # thanks and welcome
    r"(?:thanks(?: so much| a lot| a ton)?|thank you(?: so much)?|thx|ty|many thanks"
    r"|much appreciated|(?:i )?(?:really )?appreciate (?:it|that|you|your \w+|the \w+)"
    r"|you'?re (?:welcome|so kind|too kind|the best)|no prob(?:lem)?s?|anytime|my pleasure"
    r"|glad (?:i|to) (?:could )?help|sure thing)",
    r"(?:your|those|these|that|the) (?:kind )?(?:words|support|encouragement|advice|message)"
    r" (?:really )?(?:mean|means|meant) (?:a lot|so much)(?: to me)?",
    # sign-offs
    r"(?:bye|goodbye|see (?:you|ya)(?: later| soon| around)?|talk (?:to you )?(?:soon|later)"
    r"|catch you later|take care(?: of yourself)?|have (?:a )?(?:good|great|nice|lovely|fun)"
    r" (?:one|day|night|time|weekend|evening)|good ?night|sleep well|until next time|ttyl"
    r"|cheers|later)",
    r"(?:let me know|keep me (?:posted|updated|in the loop)|(?:i'?ll |will )?keep you"
    r" (?:posted|updated))",
    # encouragement, wishes and compliments to the other side
    r"(?:you(?:'ve)? got this|keep (?:it )?up(?: the \w+ work)?|keep (?:going|pushing"
    r"|rocking|shining|at it)|good luck|best of luck|you can do (?:it|this)|don'?t give up"
    r"|hang in there|way to go|go for it|fingers crossed|(?:i'?m )?rooting for you"
    r"|(?:i'?m )?(?:so |really )?proud of you|you rock|you'?re (?:the best|a star|amazing"
    r"|awesome|incredible|inspiring|so \w+|really \w+|doing (?:great|amazing|awesome"
    r"|(?:a |such a )?(?:great|good|amazing) job)))",
    r"(?:you|your \w+) (?:look|looks|sound|sounds|seem|seems|are|is) (?:so |really |very"
    r" |super )?(?:happy|great|amazing|awesome|cute|beautiful|talented|strong|brave"
    r"|inspiring|cheerful|loving|lovely|fun|nice|good)",
    # reactions and agreement
    r"(?:that|this|it|which|what|they|those|these)(?:'s| is| was| were| are| sounds| look"
    r"| looks| seems| must (?:have )?(?:be|been)| must'?ve been)? (?:so |really |very |such"
    r" |pretty |super |totally |absolutely |just |quite )*(?:an? )?(?:cool|great|awesome"
    r"|amazing|nice|wonderful|lovely|fun|exciting|fantastic|incredible|impressive|beautiful"
    r"|cute|sweet|adorable|inspiring|tough|hard|rough|sad|scary|crazy|wild|insane|epic"
    r"|brilliant|perfect|interesting|special|touching|powerful|moving|heartwarming"
    r"|terrible|awful|unbelievable|relief|bummer|shame|blast|good idea|great idea|plan"
    r"|true|right|so true)",
    r"(?:i'?m|i am|so|really) (?:so |really |very )?(?:glad|happy|sorry|excited|thrilled)"
    r" (?:for you|to hear(?: that)?|you|that you|about that)",
    r"(?:i )?(?:totally |completely )?(?:agree|feel (?:you|the same)|know what you mean"
    r"|hear you|get (?:it|you|that))",
    r"(?:sounds|looks|seems) (?:like )?(?:so |really |very )?(?:a )?(?:fun|great|good|cool"
    r"|amazing|awesome|lovely|nice|wonderful|interesting|exciting|plan|blast)",
    r"(?:how|what an?|such an?) (?:\w+ ){0,2}(?:cool|great|awesome|amazing|nice|wonderful"
    r"|lovely|fun|exciting|cute|sweet|sad|tough|beautiful|inspiring)",
    r"(?:love|loving|adore) (?:that|it|this|those|these|the (?:pic|photo|picture|idea))",
    r"(?:that|this|the|your|those|these|their|his|her)(?: \w+){1,2} (?:is|was|are|were|look"
    r"|looks|sound|sounds|seem|seems)(?: so| really| very| super| just| totally)? (?:cool|great"
    r"|awesome|amazing|nice|wonderful|lovely|fun|exciting|fantastic|incredible|impressive"
    r"|beautiful|cute|sweet|adorable|inspiring|gorgeous|stunning|delicious|perfect|peaceful"
    r"|relaxing|calming|serene|cozy|colorful|vibrant|happy|special|unique|touching|powerful"
    r"|magical|breathtaking|impressive|incredible|unreal|epic|wild|crazy|rewarding|fulfilling"
    r"|meaningful|intense|tough|hard|scary|sad|heartbreaking|hilarious|funny|tasty|yummy)",
    r"(?:i'?m |so |really |very )*glad (?:you|to|that|for)",
    r"(?:i )?(?:hope|wish|hoping) (?:you|your \w+|things|everything|it|all)(?:'re| are| is"
    r"| were| have| had)? (?:been )?(?:doing |going |feeling |having )?(?:well|good|great|ok"
    r"|okay|fine|better|awesome|amazing|fun|a (?:good|great|nice) \w+)",
    r"(?:it'?s|it has|things|life|everything|work|the week|this week)(?:'ve| have| has| had"
    r"| is| are)? (?:been )?(?:going )?(?:so |really |pretty |super |quite )?(?:good|great"
    r"|well|busy|crazy|wild|hectic|nuts|a (?:wild )?ride|a while|a lot|ok|okay|fine|alright)",
    r"(?:i'?m|i am|we'?re|we are|all) (?:doing )?(?:so |really |pretty )?(?:good|great|well"
    r"|fine|ok|okay|alright|awesome)",
    r"(?:guess what|you know what|you won'?t believe (?:it|this|what)|something (?:cool|big"
    r"|exciting|amazing|crazy) happened|i have (?:some )?news)",
    r"(?:me too|same here|ditto|you too|likewise|no way|for real|seriously|fair enough"
    r"|good point|good call|nice one|my bad|oops|i see|i bet|no doubt|wow+|yay|hooray)",
    rf"{_EN_INTERJECTION}",
]
_EN_OPENING_RE = compiled(r"^(?:and |& |but )?(?:" + "|".join(_EN_OPENINGS) + r")\b[\s,!.?~…:;-]*",
                          re.IGNORECASE)

_ZH_FILLER = [
    # 问候、寒暄
    r"你好|您好|嗨|哈喽|早上好|早安|午安|下午好|晚上好|好久不见|最近(?:怎么样|还好吗?|好吗)|在吗|在不在"
    r"|干嘛呢|忙什么呢|你呢|怎么了|然后呢|真的吗|是吗|对吧|是不是|好不好|行不行|怎么样",
    # 谢谢、不客气
    r"谢谢|多谢|感谢|谢啦|谢了|辛苦了?|麻烦你了|不客气|不用谢|没事|没关系|小事",
    # 告别
    r"晚安|好梦|拜拜|再见|回头见|明天见|下次聊|先这样|先睡了|去睡吧|早点(?:睡|休息)|注意(?:安全|身体|休息)",
    # 反应、附和
    r"哇+|哇塞|天哪|天啊|我的天|哈+|嘿+|嘻+|嗯+|哦+|噢+|喔+|啊+|呀|诶|欸|唉|哎|呜+|666|对的?|对啊"
    r"|是的|是啊|是呀|没错|确实|的确|真的|好的|好吧|好呀|好啊|好滴|好|行|可以|收到|明白|了解|知道了"
    r"|懂了|我也是|我也|同感|同意|有道理|说得对|那倒是|也是|还好|还行|一般般?|可不是嘛?|不错|挺好"
    r"|真好|真棒|太棒了|太好了|好棒|厉害|好厉害|真厉害|牛|绝了|好可爱|好可怜|好惨|可怜|心疼|抱抱"
    r"|摸摸|么么哒?|亲亲|好羡慕|羡慕|好吃|好看|好酷|好美|好帅|恭喜|那挺好|那就好|那太好了",
    # 鼓励、安慰、祝愿
    r"加油|别紧张|别担心|别怕|别难过|别哭|放心|放轻松|没事的|会好的|一切都会好的|你可以的|相信你"
    r"|支持你|你真棒|你真好|你太好了|你好厉害|真为你高兴|为你骄傲|继续保持|继续加油|你最棒了?"
    r"|你超棒的?|相信自己|冲鸭|冲|别想太多|别多想|想开点|慢慢来|一切都会好起来的?|会好起来的?"
    r"|抱抱你|摸摸头|乖|想你了?|我也想你|爱你|好开心|太开心了|好难过|好累啊?",
    # 笑、惊讶、附和的口头语
    r"哈哈+|嘿嘿|嘻嘻|呜呜+|h{3,}|2333+|笑死(?:我了)?|太搞笑了|好好笑|真的假的|不会吧|这样啊"
    r"|原来如此|原来是这样|难怪|怪不得|好的好的|嗯嗯好|行吧|那好吧|好嘞|得嘞|ok|嗯呢|对呀|可不是"
    r"|就是说|确实如此|我懂|我明白|理解理解|太可爱了|萌死了|好漂亮|绝绝子|yyds|不客气|应该的|小意思",
    # 告辞、随口一说
    r"开玩笑的|随便说说|我就随便说说|说着玩的|没什么|没啥|就这样吧|算了|先下了|我先去忙了|回聊"
    r"|待会聊|一会儿见|我去睡了|睡了吗|吃饭了吗|吃了吗|你在干嘛|今天怎么样|累不累|辛苦啦",
]


def _alternatives(fragments: list[str]) -> list[str]:
    """The top-level alternatives of regex fragments, longest first: a regex alternation
    takes the first that matches, and 好可爱 must win over 好."""
    out: list[str] = []
    for fragment in fragments:
        depth, start = 0, 0
        for i, ch in enumerate(fragment):
            depth += ch == "(" and (i == 0 or fragment[i - 1] != "\\")
            depth -= ch == ")" and (i == 0 or fragment[i - 1] != "\\")
            if ch == "|" and depth == 0:
                out.append(fragment[start:i])
                start = i + 1
        out.append(fragment[start:])
    return sorted(out, key=len, reverse=True)


_ZH_FILLER_UNIT = compiled(
    r"(?:那(?:就|我就?)?)?(?:" + "|".join(_alternatives(_ZH_FILLER)) + r")(?:你|您|你们|大家|宝贝|亲)?"
    r"[\s，,。！!？?~～…、呀啊呢吧哦啦哈嘛喔呗哟耶了]*", re.IGNORECASE)
_ZH_WISH = compiled(r"^(?:祝你|祝您|希望你|愿你)")

# A question that tells something on the way ("Did I tell you I adopted a cat?", "Guess what
# I did last weekend?") is kept; other questions ask or offer ("Can I do anything to help?"),
# and the answer is what gets remembered.
_EN_SELF = compiled(r"\b(?:tell|told|show|showed|mention|mentioned|guess)\b.{0,30}"
                    r"\b(?:I|I'm|I've|I'd|I'll|my|we|we're|we've|our)\b"
                    r"|\b(?:I|we)\b.{0,40}\b(?:last|yesterday|ago|this morning|today)\b"
                    r"|\b(?:I|we)\s+(?:\w+\s+)?\w{3,}ed\b",
                    re.IGNORECASE)
_ZH_SELF_TELLING = compiled(r"(?:我|我们).{0,6}(?:了|过|在|要|想|打算|准备|决定)")
MIN_CONTENT_TERMS = 1


def strip_opening(sentence: str, names: Names = ()) -> str:
    """The sentence without the interjections it opens with, or the name it addresses:
    "Wow, I got the job" → "I got the job"; "Hey Caroline, I got a new job!" → "I got a new
    job!"."""
    s = sentence.strip()
    while True:
        cut = (_ZH_OPENING if is_cjk(s) else _EN_OPENING)().sub("", s).strip()
        for name in names:
            if name and cut.startswith(name) and re.match(r"[\s]*[,，!！:：]", cut[len(name):]):
                cut = cut[len(name):].lstrip(" ,，!！:：")
        if cut == s:
            return s
        s = cut


def _without_names(sentence: str, names: Names) -> str:
    for name in sorted((n for n in names if n), key=len, reverse=True):
        sentence = re.sub(rf"(?<![^\W\d_]){re.escape(name)}(?:['’]s)?(?![^\W\d_])", " ",
                          sentence)
    return re.sub(r"\s+([,!.?，。！？])", r"\1", sentence).strip(" ,，")


def is_filler(sentence: str, names: Names = ()) -> bool:
    """Small talk on its face: names aside, the sentence is greetings, thanks, reactions,
    agreement, encouragement, compliments, sign-offs or filler words, and at most one content
    word besides (Chinese: nothing besides, or a wish 祝你…)."""
    s = _without_names(sentence, names).strip()
    if not s or not query_terms(s):
        return True
    if is_cjk(s):
        return _zh_filler(s)
    rest, opened = s, False
    while (m := _EN_OPENING_RE().match(rest)) and m.end() > 0:
        rest, opened = rest[m.end():], True
    return opened and len(query_terms(rest)) <= 1


def _zh_filler(s: str) -> bool:
    if _ZH_WISH().match(s) and len(s) <= 16:
        return True
    rest = s
    while (m := _ZH_FILLER_UNIT().match(rest)) and m.end() > 0:
        rest = rest[m.end():]
    left = query_terms(rest)
    # 好可爱的猫咪 reacts to what was shown: one thing after 的 is what the reaction is about.
    return not left or (rest != s and rest.startswith("的") and len(left) <= 1)


# Praise or encouragement of the one spoken to: "You're doing something amazing!", "You'll be
# an awesome mom!", "Your family is gonna be so lucky to have you!" — it tells nothing new.
_EN_PRAISE = compiled(
    r"^(?:and |but |so )?(?:you(?:'re| are|'ll| will|'ve| have|'d| would| must| should| both"
    r"| all| guys)?|your (?:\w+ ){0,3}(?:is|are|was|were|will|'ll|must|gonna|going to|looks?"
    r"|sounds?|seems?))\b.{0,80}?\b(?:amazing|awesome|great|inspiring|incredible|kind|lucky"
    r"|proud|strong|brave|talented|lovely|wonderful|caring|best|beautiful|gorgeous|cute"
    r"|impressive|fantastic|doing (?:a |such a )?(?:great|good|amazing|awesome) job"
    r"|(?:real|big|huge) difference|rock|rocks|killing it|crushing it|nailed it|go far"
    r"|got this|deserve (?:it|this))\b", re.IGNORECASE)
# A saying about life in general, no one in it: "Taking care of ourselves is vital.", "It's
# important to help family during hard times.", "Little things can make a big difference."
_EN_MAXIM = compiled(
    r"^(?:\w+ing\b[\w\s&,'-]{0,60}?|it'?s (?:so |really |super |truly |very )?(?:important"
    r"|vital|key|crucial|essential|good|great|nice|amazing|awesome|cool|inspiring|wonderful"
    r"|hard|tough|healthy|helpful) (?:to|that|when|how)\b.*?|(?:little|small) (?:things"
    r"|acts|steps|gestures)\b.*?|[\w\s]{0,40}?\bcan (?:really |truly )?(?:make|have) an? "
    r"(?:big |real |huge |lasting |positive )?(?:difference|impact|effect)\b.*?)"
    r"(?:\b(?:is|are|can be|makes?)\s+(?:so |really |super |truly |very |just |such )?(?:an? )?"
    r"(?:important|vital|key|crucial|essential|rewarding|everything|worth it|the best"
    r"|(?:great|good|nice|fun|perfect) (?:way|thing)|amazing|awesome|powerful|healing"
    r"|therapeutic|special|a must)\b.*|$)", re.IGNORECASE)
# Advice and cheering on, addressed to the other side: "Stay motivated and keep going.",
# "Make sure yours stands out.", "Let's keep spreading awareness!" — kept only when it names a
# time (a plan: "Let's meet on Friday") or speaks of the speaker.
_EN_ADVICE = compiled(
    r"^(?:and |but |so |just |also )?(?:stay|keep|make sure|be sure|don'?t forget|remember (?:to"
    r"|that)|try to|take care|let'?s (?:keep|continue|do|make|stay|go for|rock|never|always"
    r"|cherish|hope|spread|get|be|chase|support|work together)|go for|enjoy|have fun|never"
    r" (?:stop|give up|forget)|always (?:remember|believe)|believe in|trust (?:yourself|the)"
    r"|focus on|stick with|give it|hang in|don'?t (?:let|stop|give|worry|be)|be (?:proud"
    r"|kind|yourself|patient|gentle)|treat yourself|cherish|embrace|follow your"
    r"|reach out|count on|feel free)\b", re.IGNORECASE)
_FIRST_OR_NAMED = compiled(r"\b(?:I|I'm|I've|I'd|I'll|me|my|mine|we|our|us)\b|\bI['’]"
                           r"|\d|\b[A-Z][a-z]+\b(?<!\bIt)", re.UNICODE)


_EN_SPEAKER = compiled(r"\b(?:I|I'm|I've|I'd|I'll|me|my|mine)\b|\bI['’]|\d"
                       r"|\b(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday"
                       r"|tomorrow|tonight|weekend|next week|next month)\b", re.IGNORECASE)


# Chinese advice and comfort addressed to the other side: "多穿点，别感冒了", "先在心里规划一下
# 路线吧", "出去散散步消消食吧", "允许自己丧一会儿"; and sayings with no one in them: "偶尔这样
# 很正常", "每个人节奏不一样". Kept when the speaker is in it (我/我们/咱) or a time or number is
# named (a plan: "明天记得带伞" is one, "记得带伞" is not).
_ZH_ADVICE = compiled(
    r"^(?:那|你|那你|所以)?(?:就|也|还是|最好)?(?:可以(?:先|试试|去|多|少)?|不如|要不(?:要|然)?"
    r"|试试|试着|记得|别(?![人的处墅])|不要|不用|不必|千万别|多(?!亏)|少|早点|先|好好|慢慢|注意|赶紧"
    r"|快去|出去"
    r"|允许自己|给自己|放下|休息一下|喝点|吃点)")
_ZH_MAXIM = compiled(
    r"^(?:偶尔|有时候?|每个人|人(?:都|总)|谁都|很多人|大家都|其实)[^我]{0,20}?(?:很正常|正常的|难免"
    r"|常有的|都会|没关系|不一样|一样的|最重要|挺好的)")
_ZH_SPEAKER_OR_TIME = compiled(
    r"[我咱]|\d|[一二两三四五六七八九十几]+[天周月年点号次个顿回趟遍]|[今明昨前后]天|今晚|明晚|周[一二三四五六日末]"
    r"|星期|下周|下个月|上周|月底|月初")


# Advice sounds like advice: a suggesting word or a softening particle at the end. Without one
# "先去医院复查了" is a report with its subject dropped, as Chinese chat often does.
_ZH_SUGGESTING = compiled(r"(?:不用|不必|要不|试着|允许|[吧呀哦啦哈嘛～~!！])[\s。！!～~…]*$"
                          r"|别(?![人的处墅])|不要|记得|可以|不如|试试")


def _zh_preaches(s: str) -> bool:
    if _ZH_SPEAKER_OR_TIME().search(s):
        return False
    return bool(_ZH_MAXIM().match(s)) or bool(_ZH_ADVICE().match(s) and _ZH_SUGGESTING().search(s))


def praises_or_preaches(sentence: str) -> bool:
    """Praise of the one spoken to, advice or comfort addressed to them, or a saying about
    life with no one in it (in Chinese the filler units hold the praise, 你真棒 / 为你骄傲)."""
    s = sentence.strip()
    if is_cjk(s):
        return _zh_preaches(s)
    if _EN_PRAISE().match(s):
        return True
    if _EN_ADVICE().match(s) and not _EN_SPEAKER().search(s):
        return True
    first_word_dropped = s.split(" ", 1)[1] if " " in s else ""
    return bool(_EN_MAXIM().match(s)) and not _FIRST_OR_NAMED().search(first_word_dropped)


def content_words(text: str, names: Names = ()) -> int:
    """Words that carry content, names left out: English words that are not stop words, and
    for Chinese (no spaces to count words by) distinct characters that are not grammar, two
    to a word. "Good to see you!" has 1, 小明领养了一只橘猫 (小明 aside) 3."""
    words, cjk = 0, set()
    for run, word in _SPLIT_RE.findall(_without_names(text, names)):
        if run:
            cjk.update(ch for ch in run if ch not in _ZH_FUNCTION_CHARS)
        elif query_terms(word):
            words += 1
    return words + len(cjk) // 2


def asks_only(sentence: str) -> bool:
    """A question that tells nothing about the one asking."""
    if not is_question(sentence):
        return False
    self_telling = _ZH_SELF_TELLING if is_cjk(sentence) else _EN_SELF
    return not self_telling().search(sentence)


# A gesture acted between asterisks: a word or two ("*grins*", "*sits heavily*") or a few
# characters ("*扶额*", "*小声嘀咕*"): how the teller says it, not what happened. A longer
# action ("*hangs up her cloak*", "*Jess drags a duffel bag up the ramp*") is the story's.
_ACTED = compiled(r"\*([^*\n]{1,40})\*")


def _gesture(acted: str) -> bool:
    acted = acted.strip()
    if is_cjk(acted):
        return len(acted) <= 4
    return 0 < len(acted.split()) <= 2


def without_gestures(text: str) -> str:
    """The text without the gestures acted in it (`_gesture`)."""
    return " ".join(_ACTED().sub(lambda m: " " if _gesture(m.group(1)) else m.group(0),
                                 text).split())


def statements(text: str, names: Names = ()) -> list[str]:
    """The sentences of a turn that are not small talk, in order, with the reacting words
    they open with cut off ("Wow, I got the job!" → "I got the job!") and the gestures acted
    in it left out ("*grins* Also I bought a horse" → "Also I bought a horse")."""
    out: list[str] = []
    for sentence in split_sentences(without_gestures(text)):
        if is_filler(sentence, names) or asks_only(sentence):
            continue
        kept = strip_opening(sentence, names)
        if praises_or_preaches(_without_names(kept, names)):
            continue
        if kept != sentence.strip() and kept[:1].islower():
            kept = kept[0].upper() + kept[1:]
        if len(query_terms(_without_names(kept, names))) >= MIN_CONTENT_TERMS:
            out.append(kept)
    return out
