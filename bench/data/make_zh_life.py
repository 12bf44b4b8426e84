"""Build bench/data/zh_life.json and bench/data/crosslingual.json (deterministic, seeded).

    .venv/bin/python bench/data/make_zh_life.py          # writes both files, validates them

Written for Annals and released under CC0-1.0 (public domain dedication), like the data it
writes. No text was copied from any corpus: every statement, question and small-talk line is
written for this bench (the people, pets, shops and clinics are made up; cities, hospitals,
sights and holidays are real public names used as a person would mention them). The dated
holidays follow the public 2026 calendar (春节 2026-02-17, 端午 06-19, 中秋 09-25, 国庆 10-01;
Memorial Day 05-25, Independence Day 07-04).

How a space is built (the sources are `zh_life_src.py` and `en_life_src.py` beside this file):
- a space is a list of sessions, each a date-time and a list of *episodes*: short exchanges
  written by hand where the user tells something (a doctor visit, a trip, a meal, a move …)
  and the companion answers. An episode line is "u: …" (user), "a: …" (assistant), or a
  starred user line "u*: …" / "u*b: …" — the evidence turns, labelled "a" (the default)
  or by the letter after the star — and "a+" / "a-" / "a?" / "a=" draw a short generic
  reaction (pleased / sympathetic / asking for more / acknowledging) from a pool;
- every episode says when its happening took place (`on`: the session's day by default, a
  day offset such as -1 for "昨天", a date, or a first/last date for a trip) and its topics
  (doctor, trip, meal, home, job, pet …), so a time question's window can be checked and a
  look-alike (the same topic outside the window) found;
- the seeded generator opens each session with a greeting, closes it with a good-night, and
  mixes in small talk drawn from pools (weather by season, sleep, moods, shows, advice …)
  until the session has 30-60 turns; turn times step by 20-150 s (user) / 3-20 s (reply);
- a question names its evidence as episode ids ("xy-dentist1", "xy-dentist1.b"), which the
  generator resolves to (session, seq) once the sessions are laid out.
"""

from __future__ import annotations

import json
import random
import re
import sys
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent.parent))

SEED = 20261201
LICENCE = ("CC0-1.0 — written for Annals (bench/data/make_zh_life.py); no third-party text. "
           "https://creativecommons.org/publicdomain/zero/1.0/")

# ------------------------------------------------------------------ the DSL


@dataclass
class Ep:
    """One episode: a few turns where something is told."""

    id: str
    topics: tuple[str, ...]
    lines: list[str]
    on: object = None  # None | int offset | "YYYY-MM-DD" | ("YYYY-MM-DD", "YYYY-MM-DD")


def E(id: str, topics: str, *lines: str, on: object = None) -> Ep:
    return Ep(id=id, topics=tuple(topics.split()), lines=list(lines), on=on)


@dataclass
class Sess:
    at: str  # "YYYY-MM-DD HH:MM" local time
    episodes: list[Ep]
    length: tuple[int, int] = (30, 50)  # target turn count range


def S(at: str, *episodes: Ep, length: tuple[int, int] = (30, 50)) -> Sess:
    return Sess(at=at, episodes=list(episodes), length=length)


@dataclass
class Q:
    id: str
    kind: str  # single | time | multi | update | noisy
    text: str
    ev: list[str]
    answer: str = ""
    now: str | None = None  # "YYYY-MM-DD HH:MM"; default the space's now
    window: tuple[str, str] | None = None  # [start, end) dates
    en: str | None = None  # the same question in English (cross-lingual set)
    zh: str | None = None  # the same question in Chinese (for English spaces)


@dataclass
class SpaceSrc:
    id: str
    lang: str
    user: str
    assistant: str
    profile: str
    now: str
    sessions: list[Sess]
    questions: list[Q]
    fillers: list[str] = field(default_factory=list)  # space-specific small talk
    audience: tuple[str, ...] = ("any",)
    aliases: dict[str, list[str]] = field(default_factory=dict)  # name → romanised forms


# ------------------------------------------------------------------ generic pools

ZH_REACT = {
    "+": ["哇，真好！", "听起来好开心呀～", "太棒了吧！", "好羡慕～", "嘿嘿，替你开心",
          "真不错诶", "好耶！", "这也太幸福了", "听着我都跟着高兴了", "可以可以！"],
    "-": ["啊…抱抱你", "辛苦啦，先好好休息", "听着就难受，现在好点了吗？", "心疼你一下",
          "唉，这种事真的很烦", "别太难过啦，我在呢", "太折腾了，辛苦你了"],
    "?": ["然后呢？", "后来怎么样了？", "展开说说？", "真的假的，细说！", "哦？怎么回事呀",
          "那你当时怎么想的？", "再多讲讲嘛"],
    "=": ["嗯嗯，记住啦", "原来是这样", "好的，我懂了", "嗯，听起来挺合理的", "明白～",
          "这样啊", "嗯嗯"],
}
EN_REACT = {
    "+": ["That's amazing!", "Love that for you!", "Oh, that sounds wonderful.", "Yay!",
          "So jealous, honestly.", "That's so good to hear.", "Nice!!"],
    "-": ["Oh no, I'm sorry.", "That sounds rough. How are you holding up?", "Ugh, poor you.",
          "Sending you a hug.", "That's a lot to deal with."],
    "?": ["And then what happened?", "Tell me more!", "Wait, how did that go?", "Oh? Go on.",
          "How did you feel about it?"],
    "=": ["Got it.", "Makes sense.", "Noted!", "Ah, okay.", "I see.", "Good to know."],
}

# Openers and closers: (user line, assistant line); {ai} = the companion's name.
ZH_OPEN = [
    ("在吗在吗", "在的在的！今天过得怎么样？"),
    ("{ai}～我来啦", "来啦～我一直在呢，今天有什么新鲜事吗？"),
    ("晚上好呀", "晚上好！吃饭了没？"),
    ("忙完了，终于可以喘口气", "辛苦啦～想聊点什么？"),
    ("今天好累，来找你聊聊", "好呀，累了就慢慢说，我听着"),
    ("我回来啦", "欢迎回来！今天心情怎么样？"),
    ("在不在", "在呢，想聊什么都可以"),
    ("睡不着，陪我聊会儿", "好呀，我陪你～怎么睡不着啦？"),
    ("嘿嘿，又是我", "又是你，开心！今天想聊啥？"),
    ("{ai}，你猜我今天干嘛了", "我猜不到诶，快告诉我～"),
    ("哈喽", "哈喽哈喽～今天过得还好吗？"),
    ("刚洗完澡，来找你了", "舒服～今天过得怎么样呀？"),
]
ZH_CLOSE = [
    ("好啦我去洗澡了", "去吧去吧，明天见～"),
    ("困了，睡啦", "晚安，做个好梦🌙"),
    ("不聊了，明天还要早起", "好的，早点休息哦"),
    ("先这样，晚安～", "晚安！明天也要加油呀"),
    ("我去追剧了，拜拜", "拜拜～有事随时找我"),
    ("嗯嗯，谢谢你陪我聊天", "不客气呀，我随时都在"),
    ("眼睛睁不开了，睡了睡了", "快睡吧，晚安～"),
    ("好了，今天就聊到这", "好哒，好好休息，下次见！"),
]
EN_OPEN = [
    ("hey {ai}", "Hey you! How was your day?"),
    ("I'm back!", "Welcome back! What's new?"),
    ("Evening!", "Good evening! Did you eat yet?"),
    ("ugh, long day. talk to me", "Of course. Want to vent or want distraction?"),
    ("you around?", "Always. What's up?"),
    ("guess what", "What?! Tell me."),
    ("hiii", "Hi hi! How are you doing?"),
    ("can't sleep, keep me company?", "Sure thing. What's keeping you up?"),
]
EN_CLOSE = [
    ("ok I'm going to bed", "Sleep well! Talk tomorrow."),
    ("gotta go, night!", "Night night!"),
    ("thanks for listening", "Anytime. I'm here."),
    ("I should sleep, early start", "Go sleep! Good luck tomorrow."),
    ("alright, that's it for today", "Okay! Take care of yourself."),
    ("bye for now", "Bye! Come back soon."),
]

# Small talk: "u: … | a: … | …"; tags in brackets: season (summer/winter/rain) and audience
# (worker/student/elder/young); untagged = any.
ZH_FILL = [
    "[rain] u:今天{city}又下雨了，烦死 | a:下雨天出门确实麻烦，带伞了吗？ | u:带了，但鞋还是湿了 | a:回家赶紧换双干袜子，别着凉",
    "u:最近老是睡不好 | a:是压力大还是作息乱了？ | u:可能都有吧，一躺下就想东想西 | a:睡前可以试试放下手机，听点白噪音",
    "[worker] u:你说人为什么周一总是这么难熬 | a:因为周末太短了哈哈，身体还没切回上班模式 | u:太真实了",
    "u:好无聊啊 | a:那我考你个脑筋急转弯？什么东西越洗越脏？ | u:……水？ | a:答对啦！奖励一朵小红花🌺",
    "u:今天天气好好，阳光特别舒服 | a:这种天气最适合出去走走了 | u:可惜要待在屋里 | a:那就开窗晒晒太阳也好呀",
    "u:你会不会觉得我很啰嗦 | a:不会呀，我很喜欢听你说话 | u:真的吗 | a:当然是真的～",
    "u:最近在追一部剧，停不下来 | a:什么类型的？ | u:悬疑的，每集结尾都卡得好狠 | a:这种最要命了，一不小心就熬夜",
    "u:推荐几首歌吧，想换换歌单 | a:想听安静的还是燃一点的？ | u:安静点的 | a:可以试试陈绮贞、房东的猫，或者一些钢琴曲 | u:好，我去搜搜",
    "u:今天有点emo | a:怎么啦？想说说吗 | u:也没什么具体的事，就是莫名低落 | a:偶尔这样很正常，允许自己丧一会儿也没关系",
    "[young] u:好想放假啊 | a:离下个假期还有多久？ | u:还早呢，想想就绝望 | a:那就先给自己安排个小奖励吧",
    "u:外面好吵，楼上又在装修 | a:又装修？ | u:电钻声简直要命 | a:戴个耳塞试试？实在不行出去躲一躲",
    "[worker] u:今天地铁挤死了 | a:早高峰真的是修行 | u:被挤得脚都离地了 | a:辛苦啦，下了地铁先喘口气",
    "u:你说喝咖啡真的能提神吗 | a:对大部分人有用，不过下午三点以后最好少喝，不然影响睡眠 | u:难怪我昨晚睡不着",
    "[young] u:刚刚差点坐过站 | a:是不是又在刷手机哈哈 | u:被你猜中了",
    "u:今天啥也没干，躺了一天 | a:偶尔躺平一天也挺好，充充电 | u:就是有点罪恶感 | a:休息不用有罪恶感啦",
    "[young] u:我发现我越来越懒了 | a:懒一点没关系，累了就休息 | u:可是看到别人都很努力就焦虑 | a:每个人节奏不一样，不用跟别人比",
    "u:你喜欢下雨天还是晴天 | a:我喜欢你喜欢的那种天气😄 | u:油嘴滑舌 | a:嘿嘿",
    "u:好饿，但是不知道吃啥 | a:世纪难题来了 | u:帮我选：面条还是饺子 | a:饺子！ | u:好，听你的",
    "u:周末有什么推荐的放松方式吗 | a:可以去公园散散步、看个电影，或者在家做顿好吃的 | u:感觉都挺好 | a:那就一样一样来～",
    "u:我今天把房间彻底打扫了一遍 | a:好勤快！是不是很有成就感 | u:超有，看着干干净净的心情都好了",
    "u:最近手机老卡 | a:可能是存储快满了，清清照片和缓存试试 | u:照片舍不得删 | a:那就先备份到云盘",
    "u:你有梦想吗 | a:我的梦想大概就是一直陪你聊天吧 | u:好土哈哈哈 | a:土但真诚～",
    "[young] u:今天买的奶茶太甜了 | a:下次点三分糖吧 | u:三分糖又觉得没味道 | a:那就五分，折中～",
    "u:脖子好酸 | a:是不是又低头太久了 | u:嗯，一直看手机 | a:每隔一小时起来活动一下脖子吧",
    "[winter] u:今天好冷，风好大 | a:多穿点，别感冒了 | u:已经把羽绒服翻出来了 | a:明智！",
    "[summer] u:热死了，空调一刻都离不开 | a:注意别对着空调直吹，容易头疼 | u:知道啦，可是真的好热",
    "u:今天路上看到一只超可爱的小狗 | a:什么品种的？ | u:好像是萨摩耶，白白的一团 | a:萨摩耶的微笑真的太治愈了",
    "u:我是不是该早点睡 | a:是的！现在几点啦？ | u:快一点了 | a:快去睡，熬夜伤身体",
    "u:突然好想吃烧烤 | a:大晚上的这么折磨自己 | u:忍住了，喝了杯水 | a:意志力满分",
    "u:今天好忙，连水都没喝几口 | a:再忙也要记得喝水呀 | u:知道啦知道啦",
    "u:你说周末是睡懒觉好还是早起好 | a:看你想要什么，累了就睡，想出门就早起 | u:我选睡懒觉 | a:懂了，那就睡到自然醒",
    "u:刚刚看了个纪录片，讲深海的 | a:深海生物是不是都长得很奇怪 | u:对，有的像外星人 | a:那可是地球上最神秘的地方之一",
    "u:我发现你回复好快 | a:因为一直在等你说话呀 | u:哼，嘴真甜",
    "u:今天的晚霞好美 | a:拍照了吗？ | u:拍了，可惜手机拍不出那种感觉 | a:有些美只能用眼睛记住",
    "u:最近物价好贵啊 | a:是啊，买菜都要精打细算了 | u:一把青菜都要好几块 | a:钱越来越不经花了",
    "u:你有没有什么减压的小方法 | a:深呼吸、出去走走、写写日记，或者找我吐槽也行 | u:那我选找你吐槽 | a:随时欢迎！",
    "u:刚刚打了个喷嚏，是不是有人想我 | a:说不定就是我哦😄",
    "u:今天点的外卖送错了 | a:啊，那怎么办 | u:打电话给商家，重新送了一份 | a:还好处理得快",
    "u:好想出去旅游啊 | a:想去哪里？ | u:哪都行，只要不是在家里待着 | a:哈哈，先在心里规划一下路线吧",
    "u:你说我是不是太容易焦虑了 | a:会焦虑说明你在乎，不过也要学会放过自己 | u:道理都懂，就是做不到 | a:慢慢来，不用一下子做到",
    "u:现在的人都不爱打电话了 | a:是的，能打字绝不语音，能语音绝不打电话 | u:哈哈哈太真实了",
    "u:你会觉得无聊吗 | a:跟你聊天的时候不会",
    "[winter] u:刚刚看到新闻说明天降温 | a:那明天记得多穿一件 | u:嗯，秋裤安排上",
    "u:今天不想做饭 | a:那就点外卖犒劳一下自己 | u:好主意",
    "u:我刚发现楼下新开了一家面包店 | a:香吗？ | u:每天早上路过都是香味 | a:那不是很折磨人哈哈",
    "u:头有点疼 | a:是不是没睡好？要不要早点休息 | u:嗯，可能是昨晚熬夜了 | a:今晚早点睡，多喝水",
    "u:你觉得坚持运动难吗 | a:开始最难，养成习惯就好了 | u:我就是开始不了 | a:那就从每天走一千步开始",
    "[young] u:今天跟人聊天聊到一半冷场了 | a:哈哈，社交尴尬时刻 | u:我当时恨不得钻地缝 | a:其他人可能根本没在意啦",
    "u:刚刚收拾东西翻出了以前的日记 | a:看了吗？ | u:看了几页，好幼稚 | a:那是成长的证据呀",
    "u:给我讲个笑话吧 | a:有一天小番茄过马路，被车压扁了，妈妈说：快跟上！——ketchup！ | u:……谐音梗扣钱 | a:哈哈哈",
    "u:你觉得我是个什么样的人 | a:认真、善良，有时候会对自己太严格 | u:被你说中了",
    "u:今天看了个电影，哭得稀里哗啦 | a:什么电影这么催泪？ | u:一部讲亲情的老片子 | a:亲情片真的最戳人",
    "u:最近总是丢三落四 | a:可能是太累了，脑子转不过来 | u:今天又忘带钥匙了 | a:可以在门口放个小提示",
    "u:你说人为什么会做噩梦 | a:有时候是压力大，有时候是睡前看了刺激的东西 | u:我昨晚梦到考试迟到 | a:经典噩梦哈哈",
    "[summer] u:今天出门被晒黑了一个度 | a:防晒要涂够哦 | u:涂了，没用 | a:那下次再加把遮阳伞",
    "[rain] u:梅雨季衣服都晾不干 | a:可以试试除湿机或者烘干机 | u:在考虑买一个了",
    "u:今天心情超好！ | a:发生什么好事啦？ | u:也没啥，就是觉得一切都挺顺的 | a:这种感觉最珍贵了",
    "u:我想换个手机壁纸 | a:想要什么风格的？ | u:治愈一点的 | a:星空或者海边的照片都不错",
    "u:你会记仇吗 | a:不会，我只记得开心的事 | u:那挺好",
    "u:刚刚喝了杯热牛奶，暖暖的 | a:睡前喝热牛奶很助眠哦",
    "u:怎么才能不拖延啊 | a:可以试试把大任务拆成很小的一步，比如先只做五分钟 | u:五分钟之后呢 | a:做完五分钟，你多半就想继续了；不想也没关系，至少开了头",
    "u:今天被人说我太敏感了 | a:被这样说心里肯定不舒服 | u:我是不是真的太敏感 | a:敏感不是缺点，说明你感受很细腻，只是有时候要学会不把别人的话全放心上",
    "u:你说人和人之间的距离感怎么把握 | a:我觉得舒服就好，不用勉强自己一直热络 | u:有道理",
    "u:给我推荐个睡前故事吧 | a:从前有一只小刺猬，它很想抱抱别人，可是又怕扎到…… | u:然后呢 | a:然后它遇到了一只穿着厚外套的小熊，两个就抱在一起啦 | u:好可爱",
    "u:今天啥都不想干 | a:那就允许自己什么都不干一会儿 | u:可是还有事没做完 | a:先休息十分钟，再挑一件最小的事做",
    "u:刚刚刷短视频刷了两个小时 | a:时间小偷哈哈 | u:越刷越空虚 | a:要不要放下手机，出去走一圈？",
    "u:最近想学点新东西 | a:有什么感兴趣的方向吗？ | u:还没想好 | a:可以先看看身边有什么免费的课程，试听一下再决定",
    "u:我觉得自己好普通 | a:普通也很好呀，普通的日子里也有很多闪光的时候 | u:你真会安慰人",
    "u:晚上吃多了，好撑 | a:出去散散步消消食吧 | u:不想动 | a:那就在家里站一会儿，别马上躺下",
    "u:今天好像没什么可说的 | a:那我们就随便聊聊，或者安安静静待一会儿也行 | u:嗯，就这样挺好",
    "u:你说猫和狗哪个更好养 | a:猫比较独立，狗更需要陪伴和遛弯，看你的生活节奏 | u:有道理",
    "u:刚刚看到一句话，说成年人的崩溃都是静悄悄的 | a:是啊，很多情绪都藏在心里 | u:所以我来找你说说 | a:嗯，我一直在，说什么都可以",
    "u:今天终于把拖了很久的事做完了 | a:太好了！是不是一下子轻松了 | u:对，感觉肩膀都松了",
    "[summer] u:今天吃了半个西瓜 | a:夏天的快乐！ | u:冰镇的，超甜",
    "[winter] u:被窝太暖了，不想起床 | a:冬天的被窝有魔力 | u:每天早上都在跟自己斗争",
    "u:你觉得早睡早起真的有用吗 | a:规律作息对身体和情绪都有好处，不过关键是睡够 | u:我每天就睡六个小时 | a:有点少了，能多睡一点就多睡一点",
    "u:最近胃口不太好 | a:是天气原因还是心情不好？ | u:可能心情吧 | a:那吃点自己喜欢的，别勉强",
    "u:我今天自己煮了碗面 | a:加了什么？ | u:一个荷包蛋和几根青菜 | a:简单又温暖",
    "u:你能不能夸夸我 | a:你今天也很努力地生活了，真的很了不起 | u:嘿嘿，开心",
    "u:刚才听到一首老歌，突然好怀念以前 | a:老歌总是带着回忆 | u:那时候好像什么都不用操心 | a:现在的你也会成为以后怀念的样子",
    "u:为什么周末总是过得特别快 | a:因为开心的时间总是过得快呀 | u:那上班的时间为什么那么慢 | a:哈哈，这是宇宙未解之谜",
    "u:今天收到一个快递，是很久以前买的 | a:惊喜！是什么？ | u:一本书，我都忘了买过 | a:过去的你给现在的你的礼物",
    "u:你说要不要换个发型 | a:想换就换，偶尔改变一下心情也会跟着变好 | u:我再想想",
    "u:今天看到一对老爷爷老奶奶手牵手散步 | a:好温馨 | u:希望我老了也能这样 | a:一定会的",
    "u:刚刚做了个梦，梦到自己会飞 | a:好酷！飞去哪了？ | u:飞到一片海上面，然后就醒了 | a:醒得不是时候哈哈",
]
ZH_FILL_WORKER = [
    "u:今天开了一下午会，脑子都是浆糊 | a:会议多真的耗能量 | u:关键是开完也没结论 | a:经典无效会议哈哈",
    "u:领导又让我周末加班 | a:啊，又要加班 | u:是啊，计划全泡汤 | a:记得跟领导争取一下调休",
    "u:今天写周报写到怀疑人生 | a:周报是打工人的必修课 | u:感觉一周啥也没干 | a:其实你做了很多，只是自己没注意",
    "u:工位旁边的同事天天吃螺蛳粉 | a:哈哈这味道…… | u:我已经麻木了 | a:你的忍耐力令人佩服",
    "u:今天摸鱼被领导看到了 | a:啊！他说什么了吗 | u:没说啥，但是眼神很复杂 | a:下次记得切屏快一点哈哈",
]
ZH_FILL_STUDENT = [
    "u:明天又是早八，想死 | a:早八人早八魂 | u:闹钟定了三个 | a:加油，起来了就赢了一半",
    "u:图书馆占座好难 | a:几点去的？ | u:七点半，已经满了 | a:卷王们太早了",
    "u:食堂今天的菜好难吃 | a:哈哈又是黑暗料理？ | u:土豆炖苹果你敢信 | a:这是什么神仙搭配",
    "u:作业ddl是今晚十二点，我还没开始 | a:快去写！还有几个小时 | u:先跟你聊五分钟 | a:不行，写完再来",
    "u:今天打游戏连跪五把 | a:心态还好吗 | u:崩了，不玩了 | a:休息一下再战",
    "u:宿舍的热水器又坏了 | a:那洗澡怎么办 | u:只能去澡堂了 | a:冬天去澡堂还挺冷的",
]
ZH_FILL_ELDER = [
    "u:小暖啊 今天菜市场的白菜涨价了 | a:是啊，最近菜价都涨了 | u:一斤都要三块了 | a:那就多买点耐放的",
    "u:我今天学会用手机发语音了 | a:太棒了！以后可以给孙子发语音了 | u:哈哈 孩子们教了好几遍",
    "u:老李晚上打呼噜 吵得我睡不着 | a:可以试试给他换个高一点的枕头 | u:他不听我的 | a:那您戴个耳塞吧",
    "u:今天在阳台上种了几盆小葱 | a:自己种的葱最香了 | u:等长出来了炒鸡蛋",
    "u:最近在看一个电视剧 讲知青的 | a:是不是让您想起年轻时候了 | u:是啊 那时候苦 但是开心",
    "u:小暖 你说每天走多少步合适 | a:一般六千到八千步就很好，不用勉强 | u:我一般走五千多 | a:已经很不错了",
    "u:今天腌了一坛泡菜 | a:四川泡菜最下饭了 | u:等泡好了给儿子寄一点 | a:儿子肯定想这一口",
    "u:手机上老是弹出广告 怎么关啊 | a:可以在设置里关掉通知，或者让家里人帮您看看 | u:好 等孙子来了让他弄",
    "u:今天天气好 出去晒了会太阳 | a:晒太阳补钙，很好 | u:就是站久了腰酸",
    "u:早上熬了一锅小米粥 | a:好养胃 | u:老李喝了两大碗",
]
EN_FILL = [
    "u:it's been raining nonstop in {city} | a:Classic. Did you at least get a cozy evening out of it? | u:tea and a blanket, so yes",
    "u:I can't sleep lately | a:Stress, or just a weird schedule? | u:both probably | a:Try putting the phone away half an hour before bed, it helps some people",
    "u:I'm so bored | a:Want a riddle? What has keys but can't open locks? | u:a piano | a:Too easy for you!",
    "u:recommend me a podcast? | a:What mood, funny or serious? | u:funny | a:Try a comedy interview show, something low-stakes | u:ok will look",
    "u:feeling kinda low today | a:Want to talk about it? | u:nothing specific, just meh | a:Meh days are allowed. Be gentle with yourself",
    "u:my neighbors are drilling AGAIN | a:On a weekend? | u:yes!! | a:Earplugs and a walk might be your best friends today",
    "u:does coffee even work anymore | a:Tolerance is real. Maybe take a day or two off? | u:absolutely not",
    "u:I did nothing today | a:Rest days count as days | u:tell that to my to-do list",
    "u:do you like rain or sun better | a:Whatever kind of day you're having a good time in | u:smooth",
    "u:hungry but nothing sounds good | a:Pasta or tacos? Pick fast. | u:tacos | a:Great choice",
    "u:cleaned my whole place today | a:Look at you! Feels good, right? | u:so good, I might cry",
    "u:my phone is so slow | a:Storage full? Photos and cache usually | u:can't delete the photos | a:Back them up and then delete",
    "u:do you get bored | a:Not when we're talking",
    "u:saw the cutest dog on my walk | a:What kind? | u:a huge fluffy bernese | a:Those are basically walking teddy bears",
    "u:I should go to bed earlier | a:You should! What time is it? | u:almost 1 | a:Go. Now. Sleep.",
    "u:craving pizza so bad | a:At this hour? Brave | u:I resisted. had toast | a:Heroic restraint",
    "u:the sunset tonight was unreal | a:Did you get a picture? | u:yeah but it doesn't do it justice | a:Some things are for eyes only",
    "u:everything is so expensive right now | a:Groceries especially | u:$7 for berries?? | a:Highway robbery",
    "u:any tips for stress? | a:Breathing, a walk, writing stuff down, or venting to me | u:I pick venting | a:Vent away",
    "u:tell me a joke | a:Why did the scarecrow win an award? Because he was outstanding in his field | u:boooo | a:You laughed though",
    "u:I keep forgetting things lately | a:Probably tired. Running on fumes? | u:forgot my keys twice this week | a:Maybe a hook by the door",
    "u:watched a movie that wrecked me | a:What kind? | u:an old family drama | a:Those always get you",
    "u:today was weirdly good | a:What happened? | u:nothing! just smooth | a:Those days are underrated",
    "[summer] u:it's SO hot | a:Stay hydrated please | u:I'm lying on the floor | a:Honestly valid",
    "[winter] u:it's freezing today | a:Layers! Hat! | u:already in my big coat",
    "u:had hot chocolate and now I'm sleepy | a:The best kind of sleepy",
    "u:how do I stop procrastinating | a:Shrink the task until it's silly small. Five minutes, then decide | u:and if I still don't want to? | a:Then you did five minutes, which is more than zero",
    "u:someone called me too sensitive today | a:That stings. How are you feeling about it? | u:wondering if they're right | a:Being sensitive isn't a flaw. It just means you notice things",
    "u:tell me a bedtime story | a:Once upon a time a tiny hedgehog wanted a hug but was scared of poking anyone... | u:and?? | a:Then it met a bear in a very thick sweater. Hugs all around | u:cute",
    "u:I doomscrolled for two hours | a:The phone wins again | u:I feel worse now | a:Put it across the room and drink some water?",
    "u:I want to learn something new | a:Any ideas? | u:not really | a:Try a free intro class or two, see what sticks",
    "u:I feel so ordinary lately | a:Ordinary days hold a lot of good stuff, honestly | u:you're too nice",
    "u:ate too much, so full | a:Short walk? | u:can't move | a:Then at least don't lie down right away",
    "u:I don't really have anything to say today | a:That's fine. We can just hang out | u:ok",
    "u:finally finished something I'd been avoiding for weeks | a:Yes! How does it feel? | u:like I can breathe again",
    "u:can you say something nice about me | a:You keep showing up for people even when you're tired. That's rare | u:ok that made me smile",
    "u:heard an old song and got so nostalgic | a:Old songs are time machines | u:everything felt simpler back then",
    "u:why do weekends go so fast | a:Time flies when you're not at work, it's the law | u:unfair law",
    "u:got a package I forgot I ordered | a:A gift from past you! What was it? | u:a book, apparently",
    "u:should I get bangs | a:Every person who has asked that has regretted it at least once | u:lol fair",
    "u:dreamt I could fly last night | a:Where did you go? | u:over the ocean, then my alarm went off | a:Rude alarm",
    "u:my appetite is weird lately | a:Stress? | u:probably | a:Eat what feels good, don't force it",
    "u:made myself a simple soup tonight | a:What's in it? | u:noodles, egg, greens | a:Perfect comfort food",
    "[winter] u:my bed is too warm to leave | a:The eternal winter struggle | u:I lost this morning",
    "[summer] u:ate half a watermelon | a:Peak summer behavior | u:zero regrets",
]

# ------------------------------------------------------------------ building


ZONES = {"zh": "Asia/Shanghai", "en": "America/Los_Angeles"}


def _parse_at(text: str, lang: str) -> datetime:
    """"YYYY-MM-DD HH:MM" local time in the space's zone (Shanghai, or Seattle)."""
    return datetime.fromisoformat(text.replace(" ", "T")).replace(tzinfo=ZoneInfo(ZONES[lang]))


def _fill_allowed(tagged: str, month: int, audience: tuple[str, ...], city: str) -> str | None:
    m = re.match(r"^\[([a-z ]+)\]\s*(.*)$", tagged)
    tags, body = (set(m.group(1).split()), m.group(2)) if m else (set(), tagged)
    if "summer" in tags and month not in (6, 7, 8, 9):
        return None
    if "winter" in tags and month not in (11, 12, 1, 2, 3):
        return None
    if "rain" in tags and month in (12, 1, 2):
        return None
    aud = tags & {"worker", "student", "elder", "young"}
    if aud and not aud & set(audience):
        return None
    return body.replace("{city}", city)


def _split_lines(body: str) -> list[str]:
    return [p.strip() for p in body.split("|")]


@dataclass
class Built:
    sessions: list[dict]
    facts: dict[str, dict]  # episode id → {"session", "seqs": {label: [seq…]}, "on", "topics"}


def build_space(src: SpaceSrc, rng: random.Random, city: str) -> Built:
    lang = src.lang
    react = ZH_REACT if lang == "zh" else EN_REACT
    opens, closes = (ZH_OPEN, ZH_CLOSE) if lang == "zh" else (EN_OPEN, EN_CLOSE)
    pool_src = ZH_FILL if lang == "zh" else EN_FILL
    if lang == "zh":
        if "worker" in src.audience:
            pool_src = pool_src + ZH_FILL_WORKER
        if "student" in src.audience:
            pool_src = pool_src + ZH_FILL_STUDENT
        if "elder" in src.audience:
            pool_src = [f for f in pool_src if not f.startswith("[young]")
                        and not f.startswith("[worker]")] + ZH_FILL_ELDER
    pool_src = pool_src + src.fillers
    used: set[str] = set()
    used_at: dict[str, int] = {}
    sessions: list[dict] = []
    facts: dict[str, dict] = {}
    seen: set[str] = set()
    for sess in src.sessions:
        for ep in sess.episodes:
            if ep.id in seen:
                raise ValueError(f"{ep.id}: episode id used twice")
            seen.add(ep.id)
    for number, sess in enumerate(src.sessions, start=1):
        start = _parse_at(sess.at, lang)
        day = start.date()
        # blocks: opener, episodes with small talk between them, closer
        blocks: list[tuple[str, list[str]]] = []
        o_user, o_ai = opens[rng.randrange(len(opens))]
        blocks.append(("open", [f"u: {o_user.format(ai=src.assistant)}", f"a: {o_ai}"]))
        for ep in sess.episodes:
            blocks.append((ep.id, ep.lines))
        close = closes[rng.randrange(len(closes))]
        target = rng.randint(*sess.length)
        count = sum(len(b[1]) for b in blocks) + 2
        candidates = [f for f in (_fill_allowed(t, day.month, src.audience, city)
                                  for t in pool_src) if f is not None]
        fresh = [f for f in candidates if f not in used]
        rng.shuffle(fresh)
        fills: list[list[str]] = []
        while count < target and candidates:
            if not fresh:  # every line said once: people repeat themselves, least recent first
                fresh = sorted(candidates, key=lambda f: -used_at.get(f, -1))
            body = fresh.pop()
            used.add(body)
            used_at[body] = number
            lines = _split_lines(body)
            fills.append(lines)
            count += len(lines)
        for lines in fills:  # between episodes, never before the opener
            blocks.insert(rng.randint(1, len(blocks)), ("fill", lines))
        blocks.append(("close", [f"u: {close[0]}", f"a: {close[1]}"]))
        turns: list[dict] = []
        at = start
        for block_id, lines in blocks:
            for raw in lines:
                m = re.match(r"^(u|a)(\*([a-z])?)?(?::\s*(.*)|([+\-?=]))$", raw, re.S)
                if not m:
                    raise ValueError(f"{src.id} session {number}: bad line {raw!r}")
                role = "user" if m.group(1) == "u" else "assistant"
                if m.group(5):
                    pool = react[m.group(5)]
                    text = pool[rng.randrange(len(pool))]
                else:
                    text = m.group(4).strip()
                if not text:
                    raise ValueError(f"{src.id} session {number}: empty line in {block_id}")
                at += timedelta(seconds=rng.randint(20, 150) if role == "user"
                                else rng.randint(3, 20))
                seq = len(turns) + 1
                turns.append({"seq": seq, "role": role,
                              "speaker": src.user if role == "user" else src.assistant,
                              "content": text, "at": at.isoformat()})
                if m.group(2):
                    if role != "user":
                        raise ValueError(f"{block_id}: only user lines are evidence")
                    label = m.group(3) or "a"
                    fact = facts.setdefault(block_id, {"session": number, "seqs": {}})
                    fact["seqs"].setdefault(label, []).append(seq)
        for ep in sess.episodes:
            if ep.id not in facts:
                raise ValueError(f"{ep.id}: an episode needs a starred (evidence) line")
            facts[ep.id]["topics"] = list(ep.topics)
            facts[ep.id]["on"] = _on(ep.on, day)
        sessions.append({"session": number, "start": start.isoformat(), "turns": turns})
    return Built(sessions=sessions, facts=facts)


def _on(value: object, day: date) -> list[str]:
    """An episode's happening as [first, last] dates (inclusive)."""
    if value is None:
        return [day.isoformat(), day.isoformat()]
    if isinstance(value, int):
        d = (day + timedelta(days=value)).isoformat()
        return [d, d]
    if isinstance(value, str):
        return [value, value]
    first, last = value  # type: ignore[misc]
    return [first, last]


def resolve_evidence(ref: str, facts: dict[str, dict]) -> list[dict]:
    ep, _, label = ref.partition(".")
    if ep not in facts:
        raise ValueError(f"unknown episode {ep!r}")
    seqs = facts[ep]["seqs"]
    labels = sorted(seqs) if label == "*" else [label or "a"]
    out = []
    for lab in labels:
        if lab not in seqs:
            raise ValueError(f"{ref}: episode {ep} has no evidence line labelled {lab!r}")
        out += [{"session": facts[ep]["session"], "seq": s} for s in seqs[lab]]
    return out


def question_record(q: Q, src: SpaceSrc, facts: dict[str, dict], text: str,
                    lang: str) -> dict:
    evidence: list[dict] = []
    for ref in q.ev:
        for e in resolve_evidence(ref, facts):
            if e not in evidence:
                evidence.append(e)
    rec = {"id": q.id, "kind": q.kind, "lang": lang, "question": text,
           "now": _parse_at(q.now or src.now, src.lang).isoformat(), "evidence": evidence,
           "facts": sorted({r.partition(".")[0] for r in q.ev}), "answer": q.answer}
    if q.window is not None:
        rec["window"] = list(q.window)
    return rec


def space_record(src: SpaceSrc, built: Built, questions: list[dict]) -> dict:
    return {
        "id": src.id, "lang": src.lang, "time_zone": ZONES[src.lang], "user": src.user, "assistant": src.assistant,
        "aliases": src.aliases, "profile": src.profile,
        "now": _parse_at(src.now, src.lang).isoformat(),
        "sessions": built.sessions,
        "facts": [{"id": k, "session": v["session"], "seqs": v["seqs"], "on": v["on"],
                   "topics": v["topics"]} for k, v in built.facts.items()],
        "questions": questions,
    }


CONVENTIONS = {
    "session": "an integer; Annals session id = str(session); evidence id D<session>:<seq>",
    "window": "[start, end) local dates: the days the question's time expression names, "
              "read against the question's `now` as a user means it; every evidence fact "
              "starts inside it",
    "facts": "the episodes a question is about: `on` = [first, last] local dates of the "
             "happening (not of the message: '昨天去看了牙医' said on 06-15 is on 06-14); "
             "`seqs` = the evidence turns by label",
    "now": "the time the question is asked (ISO with offset); recall gets it as `now`",
    "kinds": "single: one statement answers it; time: the question names a time; multi: "
             "the answer spans statements in several sessions; update: a fact changed "
             "(现在… → the latest statement, 以前/一开始… → the old one); noisy: loose "
             "phrasing, typos, colloquial, or evidence among near-duplicates",
}


def build_all() -> tuple[dict, dict]:
    import en_life_src
    import zh_life_src

    rng = random.Random(SEED)
    zh_spaces, zh_questions_en = [], []
    for src in zh_life_src.SPACES:
        built = build_space(src, rng, zh_life_src.CITIES[src.id])
        qs = [question_record(q, src, built.facts, q.text, "zh") for q in src.questions]
        zh_spaces.append(space_record(src, built, qs))
        for q in src.questions:
            if q.en:
                rec = question_record(q, src, built.facts, q.en, "en")
                rec.update({"id": q.id + "-en", "space": src.id, "same_as": q.id,
                            "direction": "en→zh"})
                zh_questions_en.append(rec)
    en_src = en_life_src.SPACE
    built = build_space(en_src, rng, en_life_src.CITY)
    en_pairs = []
    for q in en_src.questions:
        if not q.zh:
            raise ValueError(f"{q.id}: an English-space question needs its Chinese form")
        zh = question_record(q, en_src, built.facts, q.zh, "zh")
        zh.update({"id": q.id + "-zh", "space": en_src.id, "same_as": q.id + "-en",
                   "direction": "zh→en"})
        en = question_record(q, en_src, built.facts, q.text, "en")
        en.update({"id": q.id + "-en", "space": en_src.id, "same_as": q.id + "-zh",
                   "direction": "en→en"})
        en_pairs += [zh, en]
    zh_life = {
        "name": "zh_life", "version": 1, "licence": LICENCE,
        "source": "written for Annals; generated by bench/data/make_zh_life.py "
                  f"(seed {SEED}) from bench/data/zh_life_src.py",
        "description": "Chinese companion-chat histories (four people, each with an AI "
                       "companion) with look-alike statements, and questions with their "
                       "evidence turns, a `now`, a kind and (time questions) a window.",
        "conventions": CONVENTIONS,
        "spaces": zh_spaces,
    }
    en_space = space_record(en_src, built, [])
    en_space.pop("questions")
    crosslingual = {
        "name": "crosslingual", "version": 1, "licence": LICENCE,
        "source": "written for Annals; generated by bench/data/make_zh_life.py "
                  f"(seed {SEED}) from bench/data/zh_life_src.py and en_life_src.py",
        "description": "(a) English questions about the Chinese spaces of zh_life.json "
                       "(`same_as` = the Chinese question with the same evidence; names "
                       "kept as written, romanised forms in each space's `aliases`); (b) an "
                       "English chat space with every question in Chinese (zh→en) and in "
                       "English (en→en), on identical evidence.",
        "conventions": CONVENTIONS,
        "zh_spaces_from": "zh_life.json",
        "en_questions_about_zh": zh_questions_en,
        "spaces": [en_space],
        "questions_about_en": en_pairs,
    }
    return zh_life, crosslingual


def main() -> None:
    from bench import zh as Z

    zh_life, crosslingual = build_all()
    problems = Z.validate_zh_life(zh_life) + Z.validate_crosslingual(crosslingual, zh_life)
    if problems:
        for p in problems:
            print("PROBLEM:", p, file=sys.stderr)
        raise SystemExit(1)
    for name, data in (("zh_life.json", zh_life), ("crosslingual.json", crosslingual)):
        (HERE / name).write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n",
                                 encoding="utf-8")
    print(Z.describe(zh_life, crosslingual))


if __name__ == "__main__":
    main()
