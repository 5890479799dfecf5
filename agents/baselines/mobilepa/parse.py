"""The request parser of :class:`~mobility_agents.baselines.mobilepa.rule.PhoneRuleAgent`: words → frames.

:func:`build_plan` turns a MobilePA request (and the dialogue before it) into a :class:`Plan` of
:class:`Frame` s — ``(concept, op, slots)`` with conditions and corrections resolved — from a small zh/en
lexicon: values (quoted texts, days, clock times, place and road names, durations, numbers) are lifted out
first (:func:`extract`), the rest is cut into clauses. It reads text only (what an LLM agent reads); the
agent grounds the frames on the offered tools and acts (:mod:`mobility_agents.baselines.mobilepa.rule`).
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from typing import Any, Callable

SWITCHES = {"do_not_disturb": r"勿扰|免打扰|do[- ]?not[- ]?disturb|\bdnd\b", "airplane_mode": r"飞行模式|airplane|flight mode",
            "wifi": r"wi-?fi|无线网|wlan", "bluetooth": r"蓝牙|bluetooth", "mobile_data": r"移动数据|流量|mobile data|cellular",
            "location": r"定位|位置服务|location|gps", "battery_saver": r"省电|battery saver|power sav",
            "always_on_display": r"息屏显示|always[- ]on display|\baod\b"}
#: switches checked before the other concepts ("always-on display off" is no brightness)
_FIRST_SWITCHES = ("always_on_display", "battery_saver")
#: app names as people say them → the id a phone lists (``list_apps`` decides in the end)
APP_NAMES = {"微信": "WeChat", "支付宝": "Alipay", "高德地图": "Amap", "高德": "Amap", "抖音": "Douyin", "淘宝": "Taobao",
             "相机": "Camera", "音乐": "Music", "备忘录": "Notes", "日历": "Calendar", "天气": "Weather", "相册": "Gallery",
             "哔哩哔哩": "Bilibili", "B站": "Bilibili", "设置": "Settings", "时钟": "Clock", "计算器": "Calculator",
             "QQ音乐": "QQMusic", "网易云音乐": "NetEaseMusic", "网易云": "NetEaseMusic"}
_APP_VERBS = r"打开|开一下|启动|关掉|关了|关闭|退出|开着|运行|\b(?:open|launch|start|close|quit|exit|running)\b"
#: maps & travel: (concept, op, pattern), tried after a contact's number and the volume, before messages and calls
_MAPS_RULES = (("route", "facts", r"多久|多远|多长时间|how long|how far"),
               ("eta", "share", r"几点到|到达时间|\bETA\b|when I'll get there|arrival time"),
               ("departure", "remind", r"该出发|什么时候出发|when to leave"),
               ("ride", "book", r"叫个|叫辆|打车|\b(?:book|hail|get|call)\s+me\s+an?\s+(?:\w+\s+)?ride\b"),
               ("place", "save", r"存成|地址|\baddress\b|\bsave\b.+\bas\b|\bmoved to\b"),
               ("weather", "check", r"天气|下雨|冷不冷|热不热|气温|weather|\brains?\b|\bcold\b|temperature"),
               ("traffic", "check", r"堵不堵|路况|\btraffic on\b|jammed"),
               ("nav", "start", r"导航|开车去|驾车去|走路去|步行去|坐公交去|坐公共交通去|骑车去|navigat|directions|"
                                r"\btake me\b|\bdrive to\b|\bwalk to\b|transport to"))
_TRAVEL = (("transit", r"公交|公共交通|地铁|transit|public transport|\bbus\b|\bmetro\b|\bsubway\b"),
           ("walking", r"走路|步行|\bwalk|on foot"),
           ("bicycling", r"骑车|自行车|\bbik|cycling"), ("driving", r"开车|驾车|\bdriv|\bby car\b|\bcar\b"))
#: route preferences as people say them → the maps tools' strategy names (the negative ones first)
_PREFERENCES = (("不走高速", r"不走高速|避开高速|no highways?|avoiding highways?"),
                ("躲避拥堵", r"避开拥堵|躲避拥堵|绕开堵车|traffic jams|congestion"),
                ("高速优先", r"走高速|高速优先|taking the highway|preferring highways"),
                ("少收费", r"少收费|过路费|fewer tolls|tolls low"), ("速度最快", r"最快|fastest"),
                ("大路优先", r"走大路|大路优先|main roads"))
_RIDES = (("comfort", r"舒适|专车|comfort"), ("xl", r"六座|商务车|\bxl\b"), ("economy", r"快车|standard|economy"))
LABEL_WORDS = {"home": "家", "work": "公司", "school": "学校", "gym": "健身房"}
_LABELS = {"home": r"家|\bhome\b", "work": r"公司|\bwork\b|office", "school": r"学校|\bschool\b",
           "gym": r"健身房|\bgym\b"}
_PLACE_END = r"(?=要多久|有多远|多远|多长时间|现在|的路况|堵不堵|$|[，,。；;：:？?！!]|⟦[DTQ])"
_PLACE_EN_END = (r"(?=\s+(?:as|takes|by|on foot|and|for me|please|instead|at|today|tomorrow|going|right now|jammed)\b"
                 r"|\s*[,;?!]|\.(?:\s|$)|\s*⟦[DTQ]|$)")
_PLACE_NAME = r"(?P<p>(?!⟦)(?:[^，,。；;：:？?！!⟦]|⟦N\d+⟧)+?)"
#: where a place, road or saved label is named (lifted out like a quoted text, so its words are never keywords)
_PLACES = (re.compile(r"(?:的是|改去|要去|前往|(?:开车|驾车|走路|步行导航|步行|坐公交|坐公共交通|骑车|导航|叫个\w{0,6}?|叫辆\w{0,6}?)去|"
                      r"^去|，去|要到|导航回)" + _PLACE_NAME + _PLACE_END),
           re.compile(r"把" + _PLACE_NAME + r"(?=存成)"),
           re.compile(r"地址(?:设为|设成|改成|是)" + _PLACE_NAME + _PLACE_END),
           re.compile(r"(?:帮我)?(?:看看|看一下|查查)?" + _PLACE_NAME + r"(?=现在堵不堵|堵不堵|的路况)"),
           re.compile(r"(?i:\b(?:drive|navigate|walk|directions|transport|ride|take me|go|head|address|moved|is it)"
                      r"\s+to|\bbe at|\bmeant|\bhow far is(?!\s+it\b)|traffic on)\s+" + _PLACE_NAME + _PLACE_EN_END),
           re.compile(r"(?i:\bsave)\s+" + _PLACE_NAME + r"(?=\s+as\b)"),
           re.compile(r"(?i:\bis)\s+" + _PLACE_NAME + r"(?=\s+jammed)"),
           re.compile(r"(?i:\btake me\s+)(?P<p>home)\b"), re.compile(r"(?i:^to)\s+" + _PLACE_NAME + _PLACE_EN_END))


def _place_name(m: re.Match[str]) -> str | None:
    """A lifted place name; None for what is no name (a bare number: "I meant 45")."""
    name = m.group("p").strip()
    return None if re.fullmatch(r"[\d\s%.,]*(?:percent)?|现在|现|在|那里|这里|it|there", name) else name


_CONTACT_RULES = (("read", r"刚发的|刚才发|最后给我发|刚给我发|说了什么|发了什么|last text|latest message|just texted|texted me"),
                  ("number", r"手机号|电话号码|号码|的电话(?:是多少)?$|phone number|'s number|number for"),
                  ("text", r"短信|消息|发条|说一声|告诉|回复|回个|\btext\b|\bmessage\b|\blet\b.+\bknow\b|\banswer\b|"
                           r"\btell\b(?!\s+(?:me|us)\b)|"
                           r"\breply\b|\bsend\b.*⟦Q"),
                  ("call", r"打电话|打个电话|呼叫|打给|\bcall\b(?!\s+(?:the|it|this)\b)|(?<!my )(?<!the )\bphone\b"))
_CONCEPTS = (("brightness", r"亮度|屏幕太暗|屏幕太亮|调亮|调暗|brightness|brighten|\bdim\b|display"),
             ("ringer", r"铃声|响铃|静音|震动|振动|ringer|\bsilent\b|vibrat|\bmute\b"),
             ("alarm", r"闹钟|叫我|叫醒|提醒我|alarm|wake me|remind me"),
             ("event", r"日历|日程|安排|calendar|appointment|agenda|\banything\b|first item"),
             ("refresh", r"刷新率|refresh rate"), ("timer", r"计时器|倒计时|\btimer\b"))
_STREAMS = (("ring", r"铃声|来电|\bring"), ("alarm", r"闹钟|alarm"), ("call", r"通话|\bcall\b|in-call"),
            ("media", r"媒体|音乐|media|music"))
_MODES = (("normal", r"正常|响铃|\bnormal\b"), ("vibrate", r"震动|振动|vibrat"), ("silent", r"静音|silent|mute"))
_REPEATS = (("daily", r"每天|daily|every day"), ("weekdays", r"工作日|weekdays"), ("weekends", r"周末|weekends"))
_NEGATION = {"zh": r"^(?:算了|不是|取消|不去)|别|不要(?!了)|不用",
             "en": r"^(?:not|no|don't|do not(?!\s+disturb)|never mind|no need|forget)\b"}
_THEN = r"^(?:然后|再|接着|之后|then\b|and\b|after that\b)\s*"
_ELSE = r"^(?:否则|不然|otherwise\b|else\b)\s*"
_CORRECTION = r"不对|改一下|改成|不是这个|错了|搞错|说错|\bwrong\b|not that|change it|hold on|\binstead\b|\bactually\b|i meant"
_SET_VERBS = r"调|设|改|\b(?:set|make|put|change|turn)\b"

_ZH_DIGITS = {"零": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_EN_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
              "november", "december")
_EN_DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_PERIOD = "凌晨|半夜|早上|早晨|上午|中午|下午|傍晚|晚上"
_QUOTE = re.compile(r"“([^”]*)”|\"([^\"]*)\"|「([^」]*)」")
_ZH_DATE = re.compile(r"(\d{1,2})月(\d{1,2})[日号](?:\s*[（(](?:周|星期)[一二三四五六日天][）)])?")
_EN_DATE = re.compile(r"(?:\bon\s+)?(?:\b(?:mon|tues|wednes|thurs|fri|satur|sun)day,?\s+)?\b(" + "|".join(_EN_MONTHS)
                      + r")\s+(\d{1,2})(?:st|nd|rd|th)?\b", re.I)
_REL_DAY = re.compile(r"大后天|后天|明天|今天|\bthe day after tomorrow\b|\btomorrow\b|\btoday\b", re.I)
_WEEKDAY = re.compile(r"(?:\b(?:on|this|next)\s+)?\b(" + "|".join(_EN_DAYS) + r")\b|(?:下)?(?:周|星期)([一二三四五六日天])", re.I)
_MERIDIEM = r"\s*([ap])(?:\.\s?m\.|m)(?![a-z])"  # "pm", "p.m." (a sentence's full stop after "PM." is kept)
_CLOCK = re.compile(rf"(?:({_PERIOD})\s*)?(?<!\d)(\d{{1,2}}):(\d{{2}})(?!\d)(?:{_MERIDIEM})?", re.I)
_EN_HOUR = re.compile(rf"(?<![\d:])(\d{{1,2}}){_MERIDIEM}", re.I)
_OCLOCK = re.compile(rf"(?<![\d:])(\d{{1,2}})\s*o'?clock(?:{_MERIDIEM})?", re.I)
_ZH_CLOCK = re.compile(rf"({_PERIOD})?(\d{{1,2}}|[零一二两三四五六七八九十]{{1,3}})点(?:(半)|(\d{{1,2}}|[零一二三四五六七八九十]{{1,3}})分?)?")
_ZH_SPAN = re.compile(r"(\d+|[一二两三四五六七八九十]+)个?(半)?(?:小时|钟头)|(半)个?(?:小时|钟头)|(\d+|[一二两三四五六七八九十]+)分钟")
_EN_SPAN = re.compile(r"\b(half) an hour\b|\b(an?|one|two|three|four|\d+)\s+hours?(\s+and\s+a\s+half)?\b|"
                      r"\b(\d+)(?:\s*|-)min(?:ute)?s?\b", re.I)
#: hours and minutes said together ("一个小时15分钟", "an hour and 15 minutes")
_HOURS_MINUTES = re.compile(r"(\d+|[一二两三四五]+)个?(?:小时|钟头)(?:零|又)?(\d+)分钟?|"
                            r"\b(an?|one|two|three|four|\d+)\s+hours?,?\s+(?:and\s+)?(\d+)\s*min(?:ute)?s?\b", re.I)
_NUMBER = re.compile(r"百分之(\d+|[一二两三四五六七八九十百]+)|(\d+)\s*(?:%|％|percent\b)|(?<![\d.:A-Za-z])(\d+)(?![\d:A-Za-z])|"
                     r"(?<=[到为成])([一二两三四五六七八九十百]{1,4})(?![点个分小钟天号月日半])")  # 调到六十
_PLACEHOLDER = re.compile(r"⟦([QDTMNP])(\d+)⟧")
_RELATIONS = r"mom|mum|mother|dad|father|wife|husband|brother|sister|boss|landlord|grandma|grandpa|son|daughter"
_NAME = rf"(?:[Mm]y\s+[a-z][a-z-]*|(?:{_RELATIONS})\b|[A-Z][\w'-]*(?:\s+(?!I\b)[A-Z][\w'-]*)*|[\u4e00-\u9fff]+)"
_NOT_ZH = "，。！？；：⟦"
_WHO = {"zh": (rf"(?P<w>[^{_NOT_ZH}]+?)(?:最后给我|刚才|刚发|刚给我)", rf"(?P<w>[^{_NOT_ZH}]+?)(?:的手机号|的电话|的号码)",
               rf"给(?P<w>[^{_NOT_ZH}]+?)(?:发|打|回)", rf"(?:呼叫|打给|告诉|致电)(?P<w>[^{_NOT_ZH}]+)",
               rf"跟(?P<w>[^{_NOT_ZH}]+?)说", rf"发给(?P<w>[^{_NOT_ZH}]+)", rf"给(?P<w>[^{_NOT_ZH}]+)$",
               rf"(?:换成|改成|改为)(?P<w>[^{_NOT_ZH}]+)"),
        "en": (rf"(?i:\bsend\s+)(?P<w>{_NAME})(?i:\s+an?\s+(?:text|message))",
               rf"(?i:\bgive\s+)(?P<w>{_NAME})(?i:\s+a\s+call)",
               rf"(?i:\blet\s+)(?P<w>{_NAME})(?i:\s+know)", rf"(?i:\bwhat\s+did\s+)(?P<w>{_NAME})(?i:\s+say)",
               rf"(?i:\b(?:what's|what\s+is|look\s+up|read\s+me|check|find)\s+)(?P<w>{_NAME})'s",
               rf"^(?P<w>{_NAME})(?i:\s+just\s+(?:texted|messaged|wrote))",
               rf"(?i:\b(?:call|phone|text|message|tell|ring)\s+)(?P<w>{_NAME})",
               rf"(?i:\b(?:message|text|send)\b[^⟦]*?\bto\s+)(?P<w>{_NAME})", rf"(?i:\bto\s+)(?P<w>{_NAME})\s*$")}


def _zh_int(text: str) -> int | None:
    """Arabic or Chinese numerals up to 100 (十五, 二十, 两, 一百)."""
    if text.isdigit():
        return int(text)
    if text.endswith("百"):
        return 100 * (_ZH_DIGITS.get(text[:-1], 1) if text[:-1] else 1)
    if "十" in text:
        tens, _, ones = text.partition("十")
        if (tens and tens not in _ZH_DIGITS) or (ones and ones not in _ZH_DIGITS):
            return None
        return (_ZH_DIGITS[tens] if tens else 1) * 10 + (_ZH_DIGITS[ones] if ones else 0)
    if text and all(ch in _ZH_DIGITS for ch in text):
        return int("".join(str(_ZH_DIGITS[ch]) for ch in text))
    return None


def _hhmm(hour: int | None, minute: int | None, period: str | None = None, meridiem: str | None = None) -> str | None:
    if hour is None or minute is None:
        return None
    if period in ("下午", "傍晚", "晚上") and hour < 12 or period == "中午" and hour < 11:
        hour += 12
    elif period in ("凌晨", "半夜") and hour == 12 or (meridiem or "").lower() == "a" and hour == 12:
        hour = 0
    elif (meridiem or "").lower() == "p" and hour < 12:
        hour += 12
    return f"{hour:02d}:{minute:02d}" if hour < 24 and minute < 60 else None


def _zh_clock(m: re.Match[str]) -> str | None:
    period, hour, half, minute = m.groups()
    if period is None and not hour.isdigit() and half is None and minute is None:
        return None  # 调亮一点: "a bit", not one o'clock
    return _hhmm(_zh_int(hour), 30 if half else (_zh_int(minute) if minute else 0), period)


def _zh_span(m: re.Match[str]) -> int | None:
    hours, half, only_half, minutes = m.groups()
    if only_half:
        return 30
    if minutes:
        return _zh_int(minutes)
    whole = _zh_int(hours)
    return None if whole is None else whole * 60 + (30 if half else 0)


def _en_span(m: re.Match[str]) -> int | None:
    half, hours, and_half, minutes = m.groups()
    if half:
        return 30
    if minutes:
        return int(minutes)
    whole = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4}.get(hours.lower()) or int(hours)
    return whole * 60 + (30 if and_half else 0)


def _hours_minutes(m: re.Match[str]) -> int | None:
    hours = m.group(1) or m.group(3)
    whole = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4}.get(hours.lower()) or _zh_int(hours)
    return None if whole is None else whole * 60 + int(m.group(2) or m.group(4))


def _number(m: re.Match[str]) -> int | None:
    return _zh_int(next(g for g in m.groups() if g is not None))


#: (kind, pattern, value of a match) in the order values are lifted out of a text
_EXTRACTORS: tuple[tuple[str, re.Pattern[str], Callable[[re.Match[str]], Any]], ...] = (
    ("Q", _QUOTE, lambda m: next(g for g in m.groups() if g is not None)),
    ("D", _ZH_DATE, lambda m: ("md", int(m.group(1)), int(m.group(2)))),
    ("D", _EN_DATE, lambda m: ("md", _EN_MONTHS.index(m.group(1).lower()) + 1, int(m.group(2)))),
    ("D", _REL_DAY, lambda m: ("rel", {"今天": 0, "today": 0, "明天": 1, "tomorrow": 1, "后天": 2, "大后天": 3}.get(
        m.group(0).lower(), 2))),
    ("D", _WEEKDAY, lambda m: ("wd", _EN_DAYS.index(m.group(1).lower()) if m.group(1) else
                               min("一二三四五六日天".index(m.group(2)), 6))),
    ("T", _CLOCK, lambda m: _hhmm(int(m.group(2)), int(m.group(3)), m.group(1), m.group(4))),
    ("T", _EN_HOUR, lambda m: _hhmm(int(m.group(1)), 0, None, m.group(2))),
    ("T", _OCLOCK, lambda m: _hhmm(int(m.group(1)), 0, None, m.group(2))),
    ("T", _ZH_CLOCK, _zh_clock),
    *(("P", pattern, _place_name) for pattern in _PLACES),
    ("M", _HOURS_MINUTES, _hours_minutes),
    ("M", _ZH_SPAN, _zh_span),
    ("M", _EN_SPAN, _en_span),
    ("N", _NUMBER, _number),
)


def extract(text: str) -> tuple[str, list[tuple[str, Any, str]]]:
    """``text`` with its values replaced by ``⟦<kind><index>⟧`` placeholders, and the values
    ``(kind, value, original text)``: Q quoted text, D day, T ``HH:MM``, P place or road name, M minutes,
    N number (lifted in that order, so that a name keeps its digits and a quoted text its keywords)."""
    values: list[tuple[str, Any, str]] = []
    for kind, pattern, convert in _EXTRACTORS:
        def lift(m: re.Match[str], kind: str = kind, convert: Callable[[re.Match[str]], Any] = convert) -> str:
            value = convert(m)
            if value is None or value == "":
                return m.group(0)
            if kind == "P":  # only the name is lifted; the words around it stay ("开车去⟦P0⟧")
                name = _PLACEHOLDER.sub(lambda p: values[int(p.group(2))][2], value)
                values.append((kind, re.sub(r"^的是", "", name), name))
                whole, start, end = m.group(0), m.start("p") - m.start(), m.end("p") - m.start()
                return whole[:start] + f"⟦P{len(values) - 1}⟧" + whole[end:]
            values.append((kind, value, m.group(0)))
            return f"⟦{kind}{len(values) - 1}⟧"
        text = pattern.sub(lift, text)
    return text, values


def resolve_day(value: Any, today: dt.date) -> dt.date:
    """A parsed day (``("rel", n)``, ``("md", month, day)``, ``("wd", weekday)``) as a date from ``today`` on."""
    if not isinstance(value, tuple):
        return today
    if value[0] == "rel":
        return today + dt.timedelta(days=value[1])
    if value[0] == "wd":
        return today + dt.timedelta(days=(value[1] - today.weekday() - 1) % 7 + 1)
    try:
        day = dt.date(today.year, value[1], value[2])
        return day if day >= today else dt.date(today.year + 1, value[1], value[2])
    except ValueError:
        return today


@dataclass
class Frame:
    """One thing the request asks: ``concept`` (``brightness``, ``wifi``, ``alarm``, ``contact``...), ``op``
    (``set``, ``on``, ``create``, ``text``...), ``slots`` (values by kind, in the order said) and the ``guard``
    it runs under (a condition: the subject frame and whether it must hold)."""

    concept: str | None = None
    op: str | None = None
    slots: dict[str, list[Any]] = field(default_factory=dict)
    guard: "Guard | None" = None

    def value(self, key: str, first: bool = False) -> Any:
        """The slot's last value (a correction's "no, make it 7:30" wins), or its first; None when absent."""
        values = self.slots.get(key) or [None]
        return values[0] if first else values[-1]

    def merge(self, slots: dict[str, list[Any]], only_missing: bool = False) -> None:
        for key, values in slots.items():
            if not only_missing or not self.slots.get(key):
                self.slots.setdefault(key, []).extend(values)


Guard = tuple[Frame, bool]


@dataclass
class Plan:
    """The frames to play in order; ``ask_for_value``: a correction that does not say the new value."""

    frames: list[Frame] = field(default_factory=list)
    ask_for_value: bool = False

    def apply(self, values: Frame) -> None:
        """Put each value (the last one said) into the first frame that takes that kind of value."""
        takes = {"brightness": ("number",), "volume": ("number", "stream"), "ringer": ("mode",),
                 "alarm": ("time", "quote", "repeat"), "event": ("time", "day", "quote", "minutes", "location"),
                 "contact": ("who", "quote"), "nav": ("place", "travel", "preferences", "label"),
                 "ride": ("place", "ride"), "departure": ("place", "travel", "time", "day")}
        for key, said in values.slots.items():
            frame = next((f for f in self.frames if key in takes.get(f.concept or "", ())), None)
            if frame is not None and said:
                frame.slots[key] = [said[-1]]


def _clean_who(who: str) -> str | None:
    who = re.sub(r"^(?:帮我|请|麻烦你?|你)?(?:查一下|查查|看看|看一下|查)?", "", who.strip())
    who = re.sub(r"(?:吧|就行|一下|了|的|呢|吗)+$|(?<=.)我.*$", "", who).strip()
    return None if not who or who.lower() in ("我", "你", "me", "you", "it", "them") else who


def _app(text: str) -> tuple[str, str] | None:
    """``(said, id)`` of the app a clause names, when it also opens, closes or asks about one."""
    if not re.search(_APP_VERBS, text, re.I):
        return None
    for said in sorted(APP_NAMES, key=len, reverse=True):
        if said in text:
            return said, APP_NAMES[said]
    for app in sorted(set(APP_NAMES.values())):
        m = re.search(rf"\b{app}\b", text, re.I)
        if m:
            return m.group(0), app
    m = re.search(r"(?i:\b(?:open|launch|close|quit)\s+(?:the\s+)?)([A-Z][\w-]+)|(?i:\bif\s+)([A-Z][\w-]+)\s+is\b",
                  text)
    if m is None:
        return None
    said = m.group(1) or m.group(2)
    return said, said


def _detect(text: str) -> tuple[str | None, str | None]:
    """The clause's concept by the lexicon, in priority order, and the op its own words say (None: not said)."""
    for op, pattern in _CONTACT_RULES[:2]:
        if re.search(pattern, text, re.I):
            return "contact", op
    if re.search(r"音量|声音|volume", text, re.I):
        return "volume", "set"
    for concept in _FIRST_SWITCHES:
        if re.search(SWITCHES[concept], text, re.I):
            return concept, _op(concept, text, True)
    if _app(text) is not None:  # "天气要是还开着": the Weather app, not the weather
        return "app", _op("app", text, True)
    for concept, op, pattern in _MAPS_RULES:
        if re.search(pattern, text, re.I):
            return concept, op
    for op, pattern in _CONTACT_RULES[2:]:
        if re.search(pattern, text, re.I):
            return "contact", op
    for concept, pattern in _CONCEPTS:
        if re.search(pattern, text, re.I):
            return concept, _op(concept, text, True)
    found = [(m.start(), key) for key, pattern in SWITCHES.items() for m in [re.search(pattern, text, re.I)] if m]
    if found:
        concept = min(found)[1]
        return concept, _op(concept, text, True)
    return None, None


def _op(concept: str, text: str, explicit: bool) -> str | None:
    """What the clause does to ``concept`` (``explicit``: the clause names it)."""
    def has(pattern: str) -> bool:
        return re.search(pattern, text, re.I) is not None
    if concept in SWITCHES:
        return "off" if has(r"关|\boff\b|disable") else "on" if has(r"开|\bon\b|enable") else None
    if concept == "app":
        return "close" if has(r"关|退出|\b(?:close|quit|exit)\b") else "open" if has(r"开|启动|\b(?:open|launch|start)\b") \
            else None
    if concept in ("brightness", "volume", "ringer", "refresh"):
        return "set" if explicit or has(_SET_VERBS) else None
    if concept == "alarm":
        if has(r"提前|提早|推迟|延后|\b(?:earlier|later)\b") and has(r"⟦[QT]") and not has(r"定|建|叫我|\b(?:new|create|wake)\b"):
            return "shift"  # "把“起床”闹钟提前半小时": an alarm that exists, moved
        for op, pattern in (("delete", r"删|不要了|\b(?:delete|remove)\b|don't need|no longer need"),
                            ("disable", r"关|\b(?:turn|switch)\b.*\boff\b|disable"),
                            ("create", r"定|设|建|叫我|叫醒|提醒|\b(?:set|create|new|wake|add|remind)\b"),
                            ("enable", r"开|\b(?:turn|switch)\b.*\bon\b|back on|enable")):
            if has(pattern):
                return op
        return None
    if concept == "timer":
        return "start"
    if concept == "event":
        return "create" if has(r"加|添|记到|记在|\b(?:add|put|create|schedule|book)\b") else \
            "list" if has(r"看|查|有什么|有没有|几点|\b(?:what|what's|when|anything|check|list|show)\b") else None
    if concept == "contact":
        return next((op for op, pattern in _CONTACT_RULES if has(pattern)), None)
    return next((op for name, op, pattern in _MAPS_RULES if name == concept and has(pattern)), None)


def _slots(text: str, values: list[tuple[str, Any, str]], concept: str | None, lang: str) -> dict[str, list[Any]]:
    """The values a clause (skeleton ``text``) gives, by kind."""
    slots: dict[str, list[Any]] = {}
    names = {"Q": "quote", "D": "day", "T": "time", "M": "minutes", "N": "number", "P": "place"}
    for kind, index in _PLACEHOLDER.findall(text):
        slots.setdefault(names[kind], []).append(values[int(index)][1])
    if slots.get("minutes"):
        amount = slots["minutes"][-1]
        if re.search(r"超过|多于|大于|\b(?:over|more than|longer than)\b", text, re.I):
            slots["over"] = [amount]
        elif re.search(r"不到|少于|\b(?:under|less than)\b", text, re.I):
            slots["under"] = [amount]
        elif re.search(r"推迟|延后|\blater\b", text, re.I):
            slots["shift"] = [amount]
        elif re.search(r"提前|提早|前|\b(?:before|earlier|ahead)\b", text, re.I):
            slots["lead"], slots["shift"] = [amount], [-amount]
    travel = sorted((m.start(), mode) for mode, pattern in _TRAVEL for m in [re.search(pattern, text, re.I)] if m)
    if travel:
        slots["travel"] = [travel[0][1]]
    preferences = [name for name, pattern in _PREFERENCES if re.search(pattern, text, re.I)]
    if preferences:
        slots["preferences"] = [preferences[:1]]
    if concept in ("ride", None):
        ride = next((kind for kind, pattern in _RIDES if re.search(pattern, text, re.I)), None)
        if ride:
            slots["ride"] = [ride]
    if concept in ("nav", "place", None):
        for place in slots.get("place", []):  # a saved place's label said as the destination ("导航回家")
            label = next((k for k, pattern in _LABELS.items() if re.fullmatch(pattern, place, re.I)), None)
            if label:
                slots["label"] = [label]
        named = re.search(r"(家|公司|学校|健身房)(?:的)?(?:地址|搬了)|存成(家|公司|学校|健身房)|"
                          r"(?i:\bas\s+(?:my\s+)?|\bmy\s+)(home|work|school|gym)\b", text)
        if named:
            word = next(g for g in named.groups() if g)
            slots["label"] = [next(k for k, pattern in _LABELS.items() if re.fullmatch(pattern, word, re.I))]
    for key, options in (("repeat", _REPEATS), ("mode", _MODES if concept in ("ringer", None) else ()),
                         ("stream", _STREAMS if re.search(r"音量|声音|volume", text, re.I) else ())):
        said = next((value for value, pattern in options if re.search(pattern, text, re.I)), None)
        if said is not None:
            slots[key] = [said]
    if concept in ("contact", "eta", None):
        for pattern in _WHO[lang] if concept in ("contact", "eta") else _WHO[lang][-1:]:
            who = next((w for m in re.finditer(pattern, text) for w in [_clean_who(m.group("w"))] if w), None)
            if who:
                slots["who"] = [who]
                break
        told = None if concept != "contact" or slots.get("quote") or not slots.get("who") else re.search(
            rf"(?:说|(?i:\b(?:text|message|tell)\s+{re.escape(slots['who'][0])}\s+(?:that\s+)?))[:：]?\s*"
            r"(?P<t>.{2,}?)[.。!！]?$", text)
        if told and not re.match(r"(?:一声|一下)?$", told.group("t")):  # "text my boss I'm late": the message unquoted
            slots["plain"] = [_PLACEHOLDER.sub(lambda p: values[int(p.group(2))][2], told.group("t"))]
    app = _app(text)
    if app is not None and concept in ("app", None):
        slots["app"], slots["app_said"] = [app[1]], [app[0]]
    if concept in ("event", None) or re.match(r"^(?:地点|地址|location\b)", text, re.I):
        m = re.search(r"^(?:地点|地址|在)[:：]?(?P<l>.+)$|^location[:\s]+(?P<e>.+)$|\bat\s+(?P<a>(?!⟦[QDTM])[^,;]+?)\s*$",
                      text, re.I)
        if m:
            place = _PLACEHOLDER.sub(lambda p: values[int(p.group(2))][2], m.group("l") or m.group("e") or m.group("a"))
            slots["location"] = [re.sub(r"[吧。.]+$", "", place).strip()]
    return slots


def _split_condition(clause: str, lang: str) -> tuple[str, str]:
    """``(condition, action)`` of a clause; an empty condition when it has none."""
    if lang == "en" or re.search(r"\bif\b", clause, re.I):
        if re.match(r"(?:it'?s\s+)?(?:over|more than|longer than|under|less than)\s+⟦M", clause, re.I):
            return clause, ""  # "over 15 minutes, …"
        m = re.search(r"\bif\b", clause, re.I)
        if m is None:
            return "", clause
        return (clause, "") if m.start() == 0 else (clause[m.start():], clause[:m.start()])
    if not (re.search(r"如果|要是|假如|若是|的话|超过|多于|不到|少于", clause)
            or re.match(r"^[^就]*?(?:开着|开了|关着|没开)就", clause)):
        return "", clause
    if "就" in clause:
        cond, _, action = clause.partition("就")
        return cond, action
    if "的话" in clause:
        end = clause.index("的话") + 2
        return clause[:end], clause[end:]
    return clause, ""


def _polarity(cond: str) -> bool | None:
    """Whether a condition asks for its subject on (or present); None for "if not" (the other branch)."""
    if re.match(r"^if\s+not\b", cond, re.I):
        return None
    for pattern, wanted in ((r"没开|没有开|关着|关了|未开|没打开|不在运行|没在运行|\boff\b|isn't on|is not on|not running|"
                             r"isn't running|\bi don't\b|\bnothing\b", False),
                            (r"开着|开了|在运行|运行|已开|\bon\b|running|\bi do\b|\bany", True),
                            (r"没有|没", False), (r"有", True)):
        if re.search(pattern, cond, re.I):
            return wanted
    return True  # "下雨的话", "if it rains tomorrow", "超过⟦M⟧": the condition as said


def parse(text: str, lang: str, context: list[Frame] | None = None) -> tuple[list[Frame], Frame]:
    """The frames a request asks for, and the bare values it gives outside any frame (a correction's new value).

    ``context``: the frames of the turn it may correct; a clause that names no concept but says what to do
    (``把⟦T⟧那个删掉``) takes the guard's subject, the previous frame's, the topic's or the context's concept."""
    skeleton, values = extract(text)
    skeleton = re.sub(r"\s+and\s+", "; then ", skeleton)
    clauses = [c.strip() for c in re.split(r"[，,；;：:。！!？?]|\.(?=\s|$)|(?=然后|否则)", skeleton) if c and c.strip()]
    frames: list[Frame] = []
    loose = Frame()  # values outside any frame
    topic: Frame | None = None
    guard: Guard | None = None
    last_cond: Guard | None = None
    for clause in clauses:
        then, other = re.match(_THEN, clause, re.I), re.match(_ELSE, clause, re.I)
        marker = then or other
        clause = clause[marker.end():] if marker is not None else clause
        if then:
            guard = None
        if other and last_cond is not None:
            guard = (last_cond[0], not last_cond[1])
        cond, action = _split_condition(clause, lang)
        if not cond and re.search(_NEGATION[lang], clause, re.I):
            continue
        concept, op = (None, None) if re.match(r"^(?:地点|地址|location\b)", action, re.I) else _detect(action)
        if cond:
            wanted = _polarity(cond)
            named, _ = _detect(cond)
            action_first = not clause.startswith(cond)  # "turn it off if it's on": the action names the subject
            subject = Frame(named, None, _slots(cond, values, named, lang)) \
                if named in (*SWITCHES, "app", "event", "weather") \
                else Frame(concept, None, _slots(action, values, concept, lang)) \
                if action_first and concept in (*SWITCHES, "app") else last_cond[0] if last_cond else topic
            if wanted is None and last_cond is not None:
                guard = (last_cond[0], not last_cond[1])
            elif subject is not None and wanted is not None:
                limits = {k: v for k, v in _slots(cond, values, None, lang).items() if k in ("over", "under")}
                subject = Frame(subject.concept, None, {**subject.slots, **limits})
                if not subject.slots.get("day") and topic is not None:
                    subject.merge({"day": topic.slots.get("day", [])})
                guard = last_cond = (subject, wanted)
                topic = subject
        slots = _slots(action, values, concept, lang)
        source: Frame | None = None
        if concept is None:
            for candidate in (guard[0] if guard else None, frames[-1] if frames else None, topic,
                              context[0] if context else None):
                if candidate is not None and candidate.concept and _op(candidate.concept, action, False):
                    concept, op, source = candidate.concept, _op(candidate.concept, action, False), candidate
                    break
            slots = _slots(action, values, concept, lang) if concept else slots
        if concept is None or op is None:
            if concept is not None:
                topic = Frame(concept, None, slots)
            (frames[-1] if frames else loose).merge(slots)
            continue
        frame = Frame(concept, op, slots, guard)
        for key, kinds in (("who", ("contact", "eta")), ("place", ("nav", "route", "ride", "departure"))):
            if concept in kinds and not slots.get(key):  # "然后回复…", "不然就开车导航": what was named before
                earlier = next((f for f in [*reversed(frames), topic] if f is not None and f.slots.get(key)), None)
                if earlier is not None:
                    frame.merge({key: earlier.slots[key][-1:]})
        last = frames[-1] if frames else None
        if last is not None and concept in ("route", "weather", "traffic") and (last.concept, last.op) == (concept, op):
            last.merge(slots, True)  # "how far is it…, and how long does the drive take": one question
            continue
        if source is not None:
            frame.merge({k: v for k, v in source.slots.items() if k in ("app", "app_said", "day", "who")}, True)
            last = frames[-1] if frames else None
            if last is not None and (last.concept, last.op, last.guard) == (concept, op, guard):
                last.merge(slots)  # "remove it": the same thing again
                continue
        if frame.slots.get("lead") and not frame.slots.get("day") and topic is not None:
            frame.merge({"day": topic.slots.get("day", [])})
        if not context and not frames:
            frame.merge(loose.slots, True)
            loose = Frame()
        frames.append(frame)
        topic = frame
    return frames, loose


def travel_words(text: str) -> dict[str, str]:
    """The way of travelling a text names: ``mode`` (the first said), ``preference`` (a maps strategy name) and
    ``ride`` (a car class), each when said."""
    slots = _slots(text, [], None, "zh")
    said = {"mode": slots.get("travel"), "preference": (slots.get("preferences") or [[None]])[0],
            "ride": slots.get("ride")}
    return {key: values[0] for key, values in said.items() if values and values[0]}


def parse_reply(reply: str, lang: str) -> Frame:
    """The values in the user's reply to a question; ``plain``: the whole reply, trimmed (a message's text when
    nothing is quoted)."""
    skeleton, values = extract(reply)
    frame = Frame(None, None, _slots(skeleton, values, None, lang))
    frame.slots.update({k: v for k, v in _slots(skeleton, values, "contact", lang).items() if k == "who"})
    for key, options in (("stream", _STREAMS), ("mode", _MODES)):
        said = next((value for value, pattern in options if re.search(pattern, skeleton, re.I)), None)
        if said is not None and key not in frame.slots:
            frame.slots[key] = [said]
    plain = re.sub(r"^(?:就说|内容是|说|say|just)\s*|[吧。.!！]+$", "", reply.strip(), flags=re.I).strip()
    frame.slots["plain"] = [plain] if plain else []
    return frame


def build_plan(query: str, history: list[dict[str, Any]], lang: str) -> Plan:
    """The request's frames; a request that only corrects the previous user turn is that turn's frames with the
    new values (or, when it says none, a plan that asks for the value first)."""
    previous = [str(turn.get("content", "")) for turn in history if turn.get("role") == "user"]
    context = parse(previous[-1], lang)[0] if previous else []
    frames, loose = parse(query, lang, context)
    if frames:
        for frame in frames:  # what the earlier turn said and this one leaves out (the label, the stream, who)
            for earlier in context:
                if earlier.concept == frame.concept and (earlier.op == frame.op or frame.concept == "contact"):
                    frame.merge({k: v for k, v in earlier.slots.items() if frame.concept != "contact" or k == "who"
                                 or frame.op == earlier.op}, True)
        return Plan(frames)
    plan = Plan(context)
    if any(loose.slots.values()):
        plan.apply(loose)
    elif context and re.search(_CORRECTION, query, re.I):
        plan.ask_for_value = True
    return plan
