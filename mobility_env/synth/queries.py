"""Natural Chinese voice-style queries: templates per scenario plus spoken-language noise.

Templates are plain ``str.format`` patterns. :func:`voice` adds what real voice transcripts
have: a wake word ('小德小德'), fillers ('呃', '嗯', '那个') at phrase boundaries, a repeated
phrase, and varied end punctuation. Fillers never go *inside* a place name, so the keywords
of the gold ``query_poi`` calls stay substrings of the query.
"""

from __future__ import annotations

import random

from .names import FILLERS, WAKE_WORDS, pick

POI = ("{kw}", "{kw}", "{kw}在哪", "帮我找一下{kw}", "搜一下{kw}", "{kw}在什么位置", "查一下{kw}的地址", "我要找{kw}", "{kw}在哪里啊")
GEO = ("现在的位置", "在哪", "我们现在的位置是哪里", "在哪里", "现在这是哪里", "我的位置", "当前位置在哪里", "我现在在哪儿",
       "这是什么地方", "帮我看看我现在在哪条路上", "我现在在什么位置")
NEARBY = ("{center}附近有{kw}吗", "帮我找一下{center}附近的{kw}", "帮我查一下{center}附近的{kw}", "{center}周边的{kw}",
          "{center}旁边有没有{kw}", "离{center}最近的{kw}在哪", "{center}附近的{kw}")
WEATHER_NOW = (("查一下天气", ""), ("现在是什么天气", ""), ("今天天气怎么样", "今天"), ("播报天气情况", ""), ("今天什么天气", "今天"),
               ("现在天气如何", ""), ("外面冷不冷", ""), ("今天要带伞吗", "今天"), ("{city}今天天气怎么样", "今天"),
               ("{city}现在天气如何", ""))
WEATHER_FORECAST = (("明天天气怎么样", "明天"), ("明天会下雨吗", "明天"), ("后天天气如何", "后天"), ("这几天天气怎么样", "这几天"),
                    ("未来几天的天气", "未来几天"), ("{city}明天天气怎么样", "明天"), ("{city}后天下雨吗", "后天"))
TRAFFIC = ("现在{road}会堵车吗", "{road}堵不堵", "{road}上的堵车情况怎么样了", "帮我查一下现在{road}为啥这么堵", "{road}现在路况怎么样",
           "{road}有没有堵车", "现在{road}那块堵不堵啊")
ROUTE_PROPERTY = ("到{dest}有多远", "{dest}多少公里", "离{dest}有多远", "知道离{dest}有多远", "到{dest}要开多久",
                  "去{dest}要多少过路费", "去{dest}路上有几个红绿灯")
ROUTE_PROPERTY_FROM = ("{start}到{dest}多远", "{start}距离{dest}有多远", "从{start}开车到{dest}要多久", "{start}到{dest}要多少公里")
ARRIVAL = ("我{time}要到{dest}，应该几点出发？", "明天我要去{dest}，你看看我几点出发，是最快。", "我要从现在的位置去{dest}，我应该几点出发？",
           "我{time}前要到{dest}。那我几点出发呢？", "几点出发能{time}到{dest}", "{time}要到{dest}的话，我几点走合适")
ARRIVAL_TIMES = ("12点", "明天上午九点", "下午三点", "晚上7点半", "11点15", "明天早上8点", "两点")
P2P = {
    "driving": ("驾车导航去{dest}", "开车去{dest}", "导航去{dest}", "自驾导航去{dest}", "带我去{dest}", "去{dest}怎么走"),
    "walking": ("步行导航{dest}", "走路去{dest}", "步行去{dest}怎么走", "我想走着去{dest}"),
    "bicycling": ("骑行到{dest}", "骑车去{dest}", "骑自行车去{dest}要多久"),
    "transit": ("去{dest}坐公交", "去{dest}坐公交怎么走", "坐地铁去{dest}", "坐公交去{dest}"),
}
P2P_FROM = {
    "driving": ("从{start}开车到{dest}", "从{start}导航去{dest}"),
    "walking": ("从{start}步行到{dest}",),
    "bicycling": ("从{start}骑行到{dest}",),
    "transit": ("从{start}坐公交到{dest}", "从{start}坐地铁去{dest}怎么走"),
}
MULTI = ("从{start}经过{via}到{dest}", "{start}到{via}再到{dest}", "从{start}出发途经{via}去{dest}")
MULTI_HERE = ("途经{via}去{dest}", "去{dest}，中途经过{via}", "先去{via}然后去{dest}", "导航去{dest}，顺路去一下{via}")
PREFERENCE_WORDS = {
    "不走高速": ("不走高速", "别走高速", "走低速", "少走高速", "不要走高速"),
    "高速优先": ("走高速", "高速优先", "高速路优先", "优先走高速"),
    "少收费": ("少收费", "不要收费的路", "省点过路费", "走不收费的路"),
    "躲避拥堵": ("避开拥堵", "躲避拥堵", "别走堵的路", "走不堵的路"),
    "大路优先": ("走大路", "大路优先"),
    "速度最快": ("走最快的路线", "怎么走最快", "速度最快"),
}
OPTION = ("去{dest}{pref}", "{dest}{pref}", "规划去{dest}的路线{pref}", "导航到{dest}，{pref}", "我要去{dest}{pref}",
          "{pref}，去{dest}")
EXCLUDE = ("坐公交去{dest}，不想坐{line}怎么走？", "去{dest}坐公交或地铁，但不要坐{line}怎么走？", "坐公交去{dest}，不乘坐{line}的路线怎么走？",
           "坐公交去{dest}，不要坐{line}", "去{dest}别坐{line}，坐公交怎么走")
EXCLUDE_FROM = ("从{start}到{dest}不要坐{line}怎么走", "从{start}坐公交到{dest}，不坐{line}")


def voice(rng: random.Random, text: str) -> str:
    """Add voice-transcript noise to a clean query."""
    if rng.random() < 0.15:
        filler = pick(rng, FILLERS)
        if "，" in text and rng.random() < 0.5:
            head, tail = text.split("，", 1)
            text = f"{head}，{filler}{tail}"
        else:
            text = filler + text
    if rng.random() < 0.08:
        text = pick(rng, WAKE_WORDS) + text
    if rng.random() < 0.03:
        text = f"{text.rstrip('？?。')}？现在是。{text}"
    end = rng.random()
    if end < 0.15 and not text.endswith(("？", "。")):
        text += "？" if text.endswith(("吗", "吧", "呢", "多远", "怎么走")) else "。"
    return text
