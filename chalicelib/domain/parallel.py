"""The same everyday questions and statements in English and Chinese: where each language sits
in the embedding space.

multilingual-e5 puts a sentence and its translation near each other, but not on top of each
other: every vector carries a language part shared by all sentences of that language. An
English question about tutoring is nearer every English sentence than the Chinese one that
answers it (家教), so among Chinese memories it ranks them by little more than noise. The mean
of these pairs in each language estimates that part; recall moves a query's vector from its
language's mean to the other's (usecases/recall/languages.py) and searches with both.

Written for this purpose, about ordinary life and not about any story of the benches: what is
measured is the language part, not a topic. Each pair says the same thing.
"""

from __future__ import annotations

LANGUAGES = ("en", "zh")  # the columns of PARALLEL

PARALLEL: tuple[tuple[str, str], ...] = (
    ("Where do you live now?", "你现在住在哪里？"),
    ("What do you do for work?", "你是做什么工作的？"),
    ("Did you go to the doctor last week?", "你上周去看医生了吗？"),
    ("How is your mother doing?", "你妈妈最近怎么样？"),
    ("What did you eat for dinner yesterday?", "你昨天晚饭吃了什么？"),
    ("When is your brother's birthday?", "你哥哥的生日是哪天？"),
    ("Are you still learning to play the piano?", "你还在学钢琴吗？"),
    ("Which city did you travel to in the summer?", "你夏天去哪个城市旅行了？"),
    ("Why did you quit your job?", "你为什么辞职了？"),
    ("What is your dog's name?", "你的狗叫什么名字？"),
    ("How long have you been married?", "你结婚多久了？"),
    ("Did you finish reading that book?", "那本书你读完了吗？"),
    ("What time does your train leave tomorrow?", "你明天的火车几点开？"),
    ("Who did you meet at the party?", "你在聚会上见到了谁？"),
    ("How much did the new phone cost?", "新手机花了多少钱？"),
    ("Is your daughter going to a new school?", "你女儿要去新学校了吗？"),
    ("What happened at the meeting this morning?", "今天早上的会上发生了什么？"),
    ("Have you moved into the new apartment yet?", "你搬进新公寓了吗？"),
    ("What are you cooking tonight?", "你今晚做什么菜？"),
    ("Did your cat get better after the surgery?", "你的猫做完手术好些了吗？"),
    ("Where did you go on your first date?", "你们第一次约会去了哪里？"),
    ("What sport do you play on weekends?", "你周末玩什么运动？"),
    ("How did the exam go?", "考试考得怎么样？"),
    ("Are you allergic to anything?", "你对什么过敏吗？"),
    ("Which hotel did you book for the trip?", "这次旅行你订了哪家酒店？"),
    ("What did your boss say about the project?", "老板对这个项目说了什么？"),
    ("When did you start working out?", "你什么时候开始健身的？"),
    ("Do you still talk to your old friends from college?", "你还和大学的老朋友联系吗？"),
    ("What gift did you buy for your father?", "你给爸爸买了什么礼物？"),
    ("How is the garden doing this year?", "今年花园长得怎么样？"),
    ("Did you fix the car?", "车修好了吗？"),
    ("Why were you so tired yesterday?", "你昨天为什么那么累？"),
    ("What movie did you watch last night?", "你昨晚看了什么电影？"),
    ("Where are you spending the holidays?", "假期你在哪里过？"),
    ("Has your son learned to swim?", "你儿子学会游泳了吗？"),
    ("What did the landlord say about the rent?", "房东对房租怎么说的？"),
    ("Are you going back to your hometown this year?", "你今年回老家吗？"),
    ("What language are you studying?", "你在学什么语言？"),
    ("How many people came to the wedding?", "婚礼来了多少人？"),
    ("Did you get the job offer?", "你拿到那份工作了吗？"),
    ("I moved to a new city last month.", "我上个月搬到了一个新城市。"),
    ("My sister had a baby girl in spring.", "我姐姐春天生了个女儿。"),
    ("We booked the flights for our honeymoon.", "我们订好了蜜月的机票。"),
    ("I started a new job at a bank.", "我在一家银行开始了新工作。"),
    ("The doctor told me to rest for a week.", "医生让我休息一个星期。"),
    ("My grandfather passed away in the winter.", "我爷爷冬天去世了。"),
    ("I finally passed my driving test.", "我终于通过了驾照考试。"),
    ("We adopted a puppy from the shelter.", "我们从收容所领养了一只小狗。"),
    ("I stopped eating meat this year.", "我今年开始不吃肉了。"),
    ("My friend and I opened a small cafe.", "我和朋友开了一家小咖啡馆。"),
    ("I lost my wallet on the bus.", "我在公交车上把钱包丢了。"),
    ("Our team won the game on Saturday.", "我们队周六赢了比赛。"),
    ("I have been teaching kids math after school.", "我一直在课后教孩子们数学。"),
    ("We painted the living room blue.", "我们把客厅刷成了蓝色。"),
    ("I broke my arm skiing.", "我滑雪时摔断了胳膊。"),
    ("My parents are visiting next weekend.", "我爸妈下周末要来看我。"),
    ("I signed up for a cooking class.", "我报名了一个烹饪班。"),
    ("She broke up with her boyfriend.", "她和男朋友分手了。"),
    ("I am saving money to buy a house.", "我在存钱买房子。"),
    ("We planted tomatoes in the backyard.", "我们在后院种了西红柿。"),
    ("I was promoted to manager.", "我升职当了经理。"),
    ("The concert was cancelled because of the rain.", "音乐会因为下雨取消了。"),
    ("I have a bad cold and cannot sleep.", "我感冒很严重，睡不着觉。"),
    ("My brother is getting married in June.", "我哥哥六月要结婚了。"),
)
