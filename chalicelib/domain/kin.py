"""The people around one, named by how they are related: kin, partners and exes, friends,
the people one works or lives beside. A closed class of words, in zh and en, read by the fact
rules (domain.facts: "我前任住在武汉" tells the ex's home, not the speaker's) and by the fact
questions (domain.fact_questions: "Nora 的哥哥住在哪里？" asks the brother's).

Written by hand: a closed class of nouns, which no library lists for both languages.
"""

from __future__ import annotations

# two characters or more, longest first where one holds another (哥哥 before 哥)
KIN_ZH = ("前男友|前女友|前任|前夫|前妻|男朋友|女朋友|男友|女友|未婚夫|未婚妻|老公|老婆|对象|"
          "哥哥|姐姐|弟弟|妹妹|爸爸|妈妈|父亲|母亲|父母|爸妈|爷爷|奶奶|外公|外婆|姥姥|姥爷|"
          "儿子|女儿|孩子|表姐|表哥|表妹|表弟|堂哥|堂姐|堂妹|堂弟|舅舅|姑姑|阿姨|叔叔|婆婆|公公|"
          "岳母|岳父|朋友|闺蜜|同事|同学|室友|老板|领导|邻居")
# one character, a kin word only right after 我 / 的 (我妈, 她的哥)
KIN_ZH_SHORT = "哥|姐|弟|妹|爸|妈|舅|叔|姨"
KIN_EN = (r"brother|sister|mom|mum|mother|dad|father|parents?|grand(?:ma|pa|mother|father)|"
          r"sons?|daughters?|kids?|child(?:ren)?|friends?|best friend|colleagues?|"
          r"co-?workers?|boss|roommates?|flatmates?|neighbou?rs?|cousins?|aunt|uncle|"
          r"niece|nephew|ex|boyfriend|girlfriend|husband|wife|partner|fianc[ée]e?")
