"""DR and FPR: was an answer delivered, and is every claim it makes true of the evidence?

``verify_answer(episode, trajectory) -> Verdict`` (:mod:`mobility_rewards.verdict`): one verdict type
for every scenario, listing each check with what was expected, what was stated and why it
failed. **Evidence comes only from the responses served in this trajectory**
(``trajectory.calls[*].response``, with ``entry_arguments`` naming the recorded call that
served it), never from the gold: guessing the right words without retrieving them fails.

**DR** (the paper's "complete, executable final output without interruption or
tool-invocation failure"): a finish, not truncated, whose answer is *substantive* — it makes
at least one claim (a quantity, time, place, condition, state, line, or "nothing was
found") and is not the query echoed back — and that rests on at least one successful call of
the tool kind the scenario needs (the kind of the scenario's evidence call). Zero calls and a generic answer is not
delivered.

**FPR** = DR and every check passed. Route tasks: :mod:`mobility_rewards.verify_route`. Information tasks:

* **POI Query** — ``identifies_place``: the answer names a returned place by its full name
  (not merely a longer name that contains it: 北京大学 is not named by 北京大学第一医院), by its
  bracket-less name when that is neither the query's keyword nor shared by another returned
  place, or gives its street address or coordinates; names in the query alone never count.
  ``one_place``: one place, not several; ``place_matches``: within :data:`PLACE_TOLERANCE_M`
  of the gold place (or the same district and road); ``address_consistent``: no province or
  district named that the place's address contradicts.
* **Geolocation Query** — a ``reverse_geocoding`` response for a point within 1 km of the gold
  point; ``address_components``: at least two components below the city (district, township,
  street, street number, a nearby road or POI); ``address_consistent``: every province, city,
  district, township or street the answer names is one of the response's.
* **Nearby Query** — a ``search_around_poi`` response centred within 1 km of the gold centre
  for the gold keywords; ``names_returned_poi``: at least one returned POI named (as above);
  ``distances``: a stated distance is one of the named POIs' distances; when nothing was
  found, the answer says so and names nothing.
* **Weather Query** — a ``weather_query`` response for the gold city and forecast flag; the
  claims are read per day (今天/明天/后天/dates/weekdays; unlabelled = the asked day):
  ``condition``: the asked day's condition is stated and every condition stated for a day is
  that day's (graded: 小雨 is not 暴雨; 雨 is compatible with any rain), negations understood
  (``不是晴天`` contradicts a sunny day); ``temperature``: current temperature, or the day's
  low and high, stated within ±:data:`TEMPERATURE_TOLERANCE_C`, and no other temperature;
  ``humidity`` when stated; ``city``: no other city named.
* **Traffic Info Query** — a ``traffic_status`` response for the gold road;
  ``states_traffic``: the overall state is asserted (everyday phrases and English understood,
  negations too: 不畅通 contradicts 畅通); ``state_matches``: every asserted state allows the
  overall one, except states qualified as local (局部/路段/some sections) that the description
  mentions; an unknown state must be answered as unknown.

Edge cases: an answer over :data:`MAX_ANSWER_CHARS` characters or with a number of more than
:data:`MAX_NUMBER_DIGITS` digits is not delivered (check ``answer_bounds``) and is not parsed.
Empty evidence (no POI, no weather data, unknown traffic) passes only an answer
that says nothing was found, and only when the call that came back empty was the right one.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any, Iterable, cast

from mobility_env.canonical import canonical_flag
from mobility_env.episode import Episode
from mobility_env.geo import haversine_m
from mobility_env.tools import TOOLS, canonical_tool_name, parse_coordinate
from mobility_env.trajectory import CallRecord, Trajectory

from .claims import (clock_claims, hedged_quantities, highway_claims, humidity_claims, light_claims, money_claims,
                     normalize_answer, says_no_result, traffic_claims, weather_claims, weather_compatible,
                     weather_labels_of, TRAFFIC_STATE_CODES, TRAFFIC_STATE_NAMES)
from .evidence import (Place, address_district, address_roads, geocode_facts, nearby_pois, places, traffic_facts,
                       weather_facts)
from .slots import canonical_day, city_key, fold_text, same_place_name
from .units import parse_distances, parse_durations, parse_temperatures, within_tolerance
from .verdict import Verdict
from .verify_route import gold_route_call, verify_route_answer

PLACE_TOLERANCE_M = 1000.0
#: Bounds on what is parsed: a longer answer, or a number of more digits, is stuffing, not an answer
#: (and would cost seconds of regex work per episode).
MAX_ANSWER_CHARS = 4000
MAX_NUMBER_DIGITS = 15
TEMPERATURE_TOLERANCE_C = 1.0
_DAY_OFFSETS = {"今天": 0, "明天": 1, "后天": 2, "大后天": 3}
_DAY_WORDS = re.compile(r"大后天|后天|明天|明日|今天|今日|今晚|day after tomorrow|tomorrow|today|tonight|"
                        r"in (?:\d|one|two|three|four) days?|(?:\d)\s*天后|第\s*\d\s*天")
_NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4}
_DAY_WORD_OFFSET = {"大后天": 3, "后天": 2, "明天": 1, "明日": 1, "今天": 0, "今日": 0, "今晚": 0,
                    "day after tomorrow": 2, "tomorrow": 1, "today": 0, "tonight": 0}
_WEEKDAYS = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6, "1": 0, "2": 1, "3": 2, "4": 3,
             "5": 4, "6": 5, "7": 6}
_WEEKDAY_RE = re.compile(r"(?:周|星期|礼拜)([一二三四五六日天1-7])|(monday|tuesday|wednesday|thursday|friday|saturday|sunday)",
                         re.IGNORECASE)
_EN_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_DATE_RE = re.compile(r"(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]|\d{4}-(\d{2})-(\d{2})|(?<!\d)(\d{1,2})[/-](\d{1,2})(?!\d)")
# 旗 (a banner, Inner Mongolia's county level) is a suffix only when no other admin or street word follows:
# 红旗街道 / 红旗区 / 红旗路 are named after a flag.
_ADMIN = re.compile(r"[\u4e00-\u9fa5]{1,10}?(?:特别行政区|自治区|自治州|省|市|区|县|旗(?![区县镇乡街路道村小大])|镇|乡|街道)")
_PROVINCE_LEVEL = re.compile(r"[\u4e00-\u9fa5]{1,8}?(?:特别行政区|自治区|省)|(?:北京|上海|天津|重庆)市")
_NAME_AFTER_OK = set("的在位于是有距离吧呢啊哦和与及或就为叫地址电话坐落附近这那里内旁边")
_NAME_BEFORE_OK = set("是在到去往至叫为有于了从和与及或就选推荐找个家：的近附边旁")


def _served(calls: Iterable[CallRecord], kind: str) -> list[CallRecord]:
    result = []
    for call in calls:
        tool = canonical_tool_name(call.name)
        if tool is not None and TOOLS[tool].kind == kind and call.succeeded and call.response is not None:
            result.append(call)
    return result


def _entry_args(call: CallRecord) -> dict[str, Any]:
    if isinstance(call.entry_arguments, dict):
        return call.entry_arguments
    return call.arguments if isinstance(call.arguments, dict) else {}


def _point(value: Any) -> tuple[float, float] | None:
    if isinstance(value, str):
        point = parse_coordinate(value)
        if point is None:
            numbers = re.findall(r"-?\d+(?:\.\d+)?", value)
            if len(numbers) == 2:
                point = parse_coordinate(f"{numbers[0]},{numbers[1]}")
        return point
    if isinstance(value, (tuple, list)) and len(value) == 2:
        return parse_coordinate(f"{value[0]},{value[1]}")
    return None


def _gold_args(episode: Episode, tool: str) -> dict[str, Any]:
    for call in reversed(episode.gold_calls):
        if call.name == tool:
            return call.arguments
    return {}


def needed_kinds(episode: Episode) -> frozenset[str]:
    """Tool kinds the answer must rest on: the kind of the scenario's evidence call (the last gold
    call with a recorded response: a route, POI, geocode, nearby, weather or traffic call)."""
    for index in range(len(episode.gold_calls) - 1, -1, -1):
        tool = canonical_tool_name(episode.gold_calls[index].name)
        if tool is not None and episode.gold_response(index) is not None:
            return frozenset({TOOLS[tool].kind})
    return frozenset()


# ------------------------------------------------------------------ naming places
_EXTENSION = re.compile(r"^(?:第|分店|分部|分行|支行|分院|分校|分公司|店|东门|西门|南门|北门|正门|侧门|[东南西北]区|[一二三四五六七八九\d]期|"
                        r"[a-z\d]座|号楼|栋|停车场|地铁站|公交站|站|广场|大厦|中心|医院|学校|小区|公司|酒店|宾馆|银行|超市|商场|"
                        r"公园|附属|旗舰店|总店|新店|老店|[(（])", re.IGNORECASE)
_PREFIX = ("新", "老", "第二", "二号", "分")


def _ends_name(text: str, end: int) -> bool:
    """Does a name end at ``end``? Not if a name extension follows (分店, 东门, a branch in brackets);
    a bracketed address note (``（广东省 宝安区 …）``) may follow."""
    following = text[end:end + 4]
    if following[:1] and following[:1] in "(（":
        inner = re.split(r"[)）]", text[end + 1:end + 60])[0]
        return bool(re.search(r"[省市区县镇乡]", inner)) or (
            bool(re.search(r"[路街道号村]|\d", inner)) and not re.search(r"店|分|第", inner))
    return not _EXTENSION.match(following)


def mention_spans(text: str, name: str) -> list[tuple[int, int, bool]]:
    """``(start, end, whole)`` for each occurrence of ``name`` in ``text`` (both already folded).

    ``whole`` is False when the occurrence is part of a longer name: followed by a name
    extension (分店, 东门, 第二…, a bracket) or preceded by 新/老/第二.
    """
    spans: list[tuple[int, int, bool]] = []
    if len(name) < 2:
        return spans
    start = text.find(name)
    while start >= 0:
        end = start + len(name)
        whole = _ends_name(text, end)
        whole = whole and not text[:start].endswith(_PREFIX)
        spans.append((start, end, whole))
        start = text.find(name, start + 1)
    return spans


def _fold_for_names(text: str) -> str:
    return unicodedata.normalize("NFKC", text).lower().replace(" ", "")


def names_in(text: str, name: str) -> bool:
    """Does ``text`` name ``name`` as a whole (not inside a longer name)? See :func:`mention_spans`."""
    return any(whole for _, _, whole in mention_spans(_fold_for_names(text), _fold_for_names(name).strip()))


def altered_names(text: str, candidates: list[Place]) -> list[str]:
    """Longer names built on a returned name (``X第二分店`` for ``X``) that no returned place has."""
    folded = _fold_for_names(text)
    known = {_fold_for_names(p.name) for p in candidates}
    altered = []
    for place in candidates:
        for name in {_fold_for_names(place.name), _fold_for_names(_bare(place.name))}:
            for start, end, whole in mention_spans(folded, name):
                if whole:
                    continue
                if any(folded.startswith(k, start) and len(k) > len(name) and _ends_name(folded, start + len(k))
                       for k in known):
                    continue  # the longer text is itself a returned name
                altered.append(folded[max(0, start - 2):end + 4])
    return altered


def mask_places(text: str, candidates: list[Place]) -> str:
    """``text`` with every candidate's name and address blanked (their digits are not claims)."""
    spans = sorted({s for p in candidates for s in (p.address, *p.address.split(), p.name) if len(s) >= 2},
                   key=len, reverse=True)
    for item in spans:
        if item in text:
            text = text.replace(item, " " * len(item))
    return text


def _bare(name: str) -> str:
    return re.sub(r"[(（][^)）]*[)）]", "", name).strip()


def _street(place: Place) -> str:
    parts = place.address.split()
    street = parts[-1] if parts else ""
    return (street if len(fold_text(street)) >= 4 and (any(ch.isdigit() for ch in street) or address_roads(street))
            else "")


def identified_places(answer: str, candidates: list[Place], query: str, keyword: str = "") -> list[Place]:
    """The candidates the answer identifies (rules in the module docstring), in candidate order."""
    bare_counts: dict[str, int] = {}
    for place in candidates:
        bare_counts[fold_text(_bare(place.name))] = bare_counts.get(fold_text(_bare(place.name)), 0) + 1
    folded_query, folded_keyword = fold_text(query), fold_text(keyword)
    found = []
    for place in candidates:
        full, bare = place.name, _bare(place.name)
        hit = names_in(answer, full) and (fold_text(full) not in folded_query or any(
            len(fold_text(part)) >= 2 and fold_text(part) not in folded_query and fold_text(part) in fold_text(answer)
            for part in set(place.address.split()) - {place.name}))
        if not hit and bare != full and fold_text(bare) not in (folded_keyword, folded_query) \
                and bare_counts.get(fold_text(bare), 0) == 1:
            hit = names_in(answer, bare) and not fold_text(bare) in folded_query
        for street in [_street(place), *_street_numbers(place.address)]:
            if not hit and street and fold_text(street) in fold_text(answer) and fold_text(street) not in folded_query:
                hit = True
        if not hit and place.location is not None:
            for lng, lat in re.findall(r"(-?\d{2,3}\.\d{3,})\s*[,，]\s*(-?\d{1,2}\.\d{3,})", answer):
                point = parse_coordinate(f"{lng},{lat}")
                if point is not None and haversine_m(point, place.location) <= 100:
                    hit = True
        if hit and place not in found:
            found.append(place)
    return found


_NOT_ADMIN = ("超市", "门市", "夜市", "菜市", "集市", "股市", "城市", "花市", "鱼市", "早市", "商区", "景区", "园区", "校区",
              "小区", "社区", "营业区", "服务区", "停车区", "街区", "片区", "新区站")


def _admin_tokens(answer: str, pattern: re.Pattern[str] = _ADMIN) -> list[str]:
    return [m.group(0) for m in pattern.finditer(normalize_answer(answer)) if not m.group(0).endswith(_NOT_ADMIN)]


# How a place's name ends (麦当劳(玉兰北路店), 建行营业部, 人民公园)
_PLACE_SUFFIX = (r"(?:店|馆|院|校|园|县|镇|乡|站|场|厦|城|中心|公司|酒店|宾馆|银行|超市|广场|医院|学校|"
                 r"公园|公寓|大楼|花园|家园|新村|苑|府|村|寺|桥|楼|港|岛|局|厂|大学|中学|小学|商场|市场|咖啡|景区|名都|山|湖|塔|庄|阁|堂|大街|大道|"
                 r"营业部|营业厅|俱乐部|门诊部|服务部|事务所|派出所|研究所|旅行社|[酒网咖书茶水]吧|"
                 r"街(?!道)|路(?![线程口况过上])|市(?![场区中内民]))")
_SUFFIXED_NAME = r"[\u4e00-\u9fa5A-Za-z\d]{1,14}" + _PLACE_SUFFIX
_PLACE_TOKEN = re.compile(r"[\u4e00-\u9fa5A-Za-z0-9·&%'’]{2,24}[(（][^)）]{1,24}[)）]|" + _SUFFIXED_NAME)
# spaces beside a CJK character: 万达 广场, 万达 Alt are read as 万达广场, 万达Alt
_CJK_SPACES = re.compile(r"(?<=[\u4e00-\u9fa5])\s+(?=\w)|(?<=\w)\s+(?=[\u4e00-\u9fa5])")
# a name by its ending alone (bar营业部; not a bracket, which may hold a remark: X店(营业到22点))
_SUFFIXED = re.compile(r"[\u4e00-\u9fa5A-Za-z\d]{0,14}" + _PLACE_SUFFIX)
_NAME_END = re.compile(_PLACE_SUFFIX + r"$")  # naive Alt店: a name by how it ends
_DOTTED = re.compile(r"\w+(?:·\w+)+")  # a name by its joining dot (地址·万万: 地址 is part of it)
# Dots that join the parts of a name (恒大·滨江左岸, naive理想国coffee•bar), all read as ·
_NAME_DOTS = str.maketrans(dict.fromkeys("•‧・∙⋅ㆍ", "·"))
# What is left of a list item cut before a remark (Alt Coffee - nice, X店 —— 推荐): not part of the name
_CUT_EDGE = " ,，、:：-–—~～|/·"
_LEADING = re.compile(r"^(?:[在到去是有近靠位于附的和与及或从往至叫为就选推荐找个家您你我他这那里旁边之一以下地点可能附近有：址]|候选)+")


_INTRO_WORDS = (r"附近有|周边(?:可以去|有)?|最近的(?:是|有)|还有|以及|或者|比如|例如|包括|另外|此外|"
                r"(?:nearby|also|and|or|such as|including)\b")
_LIST_INTRO = re.compile(r"^(?:" + _INTRO_WORDS + r"|[在到去是有近靠位于附的和与及或从往至叫为就选推荐找个家这那里旁边：:\s])+",
                         re.IGNORECASE)
_OPENS_LIST = re.compile(r"(?:附近|周边|周围|最近的)", re.IGNORECASE)
# only the intro words: what a name starting like an intro (和平饭店, 推荐·万万) keeps of itself
_LIST_INTRO_WORDS = re.compile(r"^(?:" + _INTRO_WORDS + r"|[：:\s])+", re.IGNORECASE)
_LIST_TAIL = re.compile(r"(?:等等|等|之类|etc\.?|and so on|[。.!！?？\s])+$", re.IGNORECASE)
# Words of a sentence about a place rather than a place's name: a list item holding one is prose, not a claim.
_PROSE = re.compile(r"\d+(?:\.\d+)?\s*(?:米|公里|千米|分钟|小时|km|m|min)|\d+\.\d+|\d{5,}|"
                    r"坐标|经纬度|评分|我|您|你|是|吗|吧|呢|啊|哦|呀|很|挺|都|也|可能|可以|距离|"
                    r"大约|约|步行|开车|驾车|营业|评分|电话|地址|位于|不错|没有|不远|推荐|环境|方便|建议|"
                    r"\b(?:is|are|was|it|you|your|about|away|open|closed|which|that|walk|walking|drive|driving|"
                    r"minutes?|"
                    r"min|km|m|meters?|metres?|rated|recommend|all|within|distance|near|close|here|there|these|those|"
                    r"they|them|can|could|would|will|good|nice|great|best|some|any|more|other|options?|places|few|"
                    r"go|try|"
                    r"visit|check|also|one|ones)\b", re.IGNORECASE)


# What still reads as a place name before a remark: Latin words with a capital, a name with · or
# brackets, or four or more CJK characters (two or three are too often prose: 味道, 这家店).
_NAME_LEAD = re.compile(r"(?:[A-Z][\w'&.-]*\s*){1,6}|.*[·(（].*|[\u4e00-\u9fa5A-Za-z0-9'’&]{4,30}")


def _name_text(text: str) -> str:
    """NFKC, with every name-joining dot as ·: the form list items and place tokens are read in."""
    return unicodedata.normalize("NFKC", text).translate(_NAME_DOTS)


def _name_shaped(lead: str) -> bool:
    """Does what precedes a remark read as a place's name (Alt Coffee, 恒大·滨江左岸, 和平饭店, naive Alt店)?"""
    return bool(_NAME_LEAD.fullmatch(_CJK_SPACES.sub("", lead)) or len(fold_text(lead)) >= 4 and _NAME_END.search(lead))


def _remark_start(item: str) -> int | None:
    """Where a remark starts in a list item (``Alt Coffee很不错`` -> 10), or None. A prose word inside a
    place-shaped token (营业 in 建行营业部, 地址 in 地址·万万) is part of the name, not a remark."""
    names = [m.span() for pattern in (_SUFFIXED, _DOTTED) for m in pattern.finditer(item)]
    for match in _PROSE.finditer(item):
        if not any(start <= match.start() and match.end() <= end for start, end in names):
            return match.start()
    return None


def listed_items(answer: str) -> list[str]:
    """The items of the answer's enumerations: ``附近有：A、B；C`` / ``Nearby: A; B, C`` -> ``[A, B, C]``.

    Items are split on 、 and semicolons, and on commas after a list colon. Without a colon the first item keeps
    its text after the last comma (before it is the lead-in: 根据查询结果，…), or from the last clause opening a
    list (周边有A，评分很高 -> A, 评分很高), and the others their text up to the first comma (after it, a
    remark). Items lose list intros (附近有, 还有, Nearby:) and tails (等, etc.)."""
    return [item for item in (_LIST_TAIL.sub("", _LIST_INTRO.sub("", part)) for part in _list_parts(answer)) if item]


def _list_parts(answer: str) -> list[str]:
    """The items of :func:`listed_items` before their intros and tails are cut."""
    parts_out = []
    for sentence in re.split(r"[。!?\n]|\.(?=\s|$)", _name_text(answer)):
        colon = max(sentence.rfind(":"), sentence.rfind("："))
        body = sentence[colon + 1:] if colon >= 0 else sentence
        parts = re.split(r"[、;；,，]" if colon >= 0 else r"[、;；]", body)
        if len(parts) < 2:
            continue
        for index, part in enumerate(parts):
            if colon < 0 and index == 0:  # after the lead-in; from a clause opening a list (周边有X，评分很高) on
                pieces = re.split(r"[,，]", part)
                opening = [i for i, piece in enumerate(pieces) if _OPENS_LIST.match(piece.strip())]
                parts_out += [piece.strip() for piece in pieces[opening[-1] if opening else -1:]]
                continue
            if colon < 0:
                part = re.split(r"[,，]", part)[0]
            parts_out.append(part.strip())
    return parts_out


def foreign_places(answer: str, known: list[str]) -> list[str]:
    """Place-like names in the answer (``X店``, ``Y(Z店)``, ``…医院``) found in none of ``known``, and list items
    (``附近有：A、B``) naming none of ``known`` (``Alt Coffee``, ``恒大·滨江左岸``) unless they read as prose."""
    haystack = "|".join(fold_text(k) for k in known if k)
    names = sorted({_name_text(k) for k in known if len(k) >= 2}, key=len, reverse=True)
    text = _name_text(answer)
    for item in names:
        text = text.replace(item, " ")
    foreign = []
    for match in _PLACE_TOKEN.finditer(text):
        token = _LEADING.sub("", match.group(0))
        folded = fold_text(token)
        if len(folded) >= 2 and folded not in haystack:
            foreign.append(token)
    folded_names = [fold_text(n) for n in names]
    for part in _list_parts(answer):
        item = _LIST_TAIL.sub("", _LIST_INTRO.sub("", part))
        whole = _LIST_TAIL.sub("", _LIST_INTRO_WORDS.sub("", part))  # 和平饭店 keeps its 和
        folded = fold_text(item)
        if (len(folded) < 2 or folded in haystack
                or any(n and (n in folded or n in fold_text(whole)) for n in folded_names)):
            continue
        remark = _remark_start(whole)
        if remark is not None:  # a remark: only a name-shaped lead before it (Alt Coffee很好) is still a claim
            cut = whole[:remark]
            leads = [lead for lead in (cut.strip(_CUT_EDGE), _LIST_INTRO.sub("", cut).strip(_CUT_EDGE))
                     if _name_shaped(lead) and fold_text(lead) not in haystack]
            if not leads:
                continue
            item = leads[-1]
            folded = fold_text(item)
        if not any(folded in fold_text(f) or fold_text(f) in folded for f in foreign):
            foreign.append(item)
    return foreign


_PLACE_HEDGE = re.compile(r"可能是|也可能|或者是|或者|或是|还是|要么|either|or maybe|possibly|\bor\b", re.IGNORECASE)


def _street_numbers(address: str) -> list[str]:
    """``"石岩街道宝石东路209号星城大厦"`` -> ``["宝石东路209号"]``."""
    compact = (address or "").replace(" ", "")
    found = []
    for road in address_roads(compact):  # the first place the road is followed by a number (no regex per road)
        start = compact.find(road)
        while start >= 0:
            match = _ROAD_NUMBER.match(compact, start + len(road))
            if match:
                found.append(road + match.group(1))
                break
            start = compact.find(road, start + 1)
    return found


_ROAD_NUMBER = re.compile(r"(\d+(?:-\d+)?号?)")


_HOUSE_NUMBER = re.compile(r"([\u4e00-\u9fa5]{0,12}?(?:大街|大道|路|街|巷|弄|胡同|道))?\s*(?<![\d-])(\d+(?:-\d+)?)\s*号"
                           r"(?![线路街楼门院库道])")


def _wrong_numbers(answer: str, evidence_text: str) -> list[str]:
    """House numbers (``64号``) the answer states that the evidence does not give as a house number, or gives
    on another road (``玉兰大街3号`` when 3 appears only in 第三医院 or in ``育才东路3号``)."""
    evidence = [(_road_core(road), number) for road, number in _HOUSE_NUMBER.findall(normalize_answer(evidence_text))]
    wrong = []
    for road, number in _HOUSE_NUMBER.findall(normalize_answer(answer)):
        core = _road_core(road)
        same = [r for r, n in evidence if n == number]
        if not same or core and all(r and not (core.endswith(r) or r.endswith(core)) for r in same):
            wrong.append((core or road or "") + number + "号")
    return wrong


def _road_core(road: str) -> str:
    """The road of ``"地址是宝石东路"`` / ``"市红旗区金桥镇联合大道"``: what follows the last admin word or lead-in."""
    return re.sub(r"^.*(?:特别行政区|自治区|自治州|省|市|区|县|镇|乡|街道|[是在到于：:])", "", road or "")


def _consistent(token: str, known: Iterable[str]) -> bool:
    folded = fold_text(token)
    for item in known:
        item = fold_text(item)
        if item and (folded.endswith(item) or item.endswith(folded) and len(folded) >= 2):
            return True
    return False


# ------------------------------------------------------------------ POI
def _gold_place(episode: Episode) -> Place | None:
    for index, call in enumerate(episode.gold_calls):
        if call.name == "query_poi":
            record = episode.gold_response(index)
            found = places(record.response) if record is not None else []
            if found:
                return found[0]
    point = _point(episode.fields.get("ans_loc"))
    return Place("", "", point) if point else None


def _same_district_and_road(a: Place, b: Place) -> bool:
    district_a, district_b = a.district or address_district(a.address), b.district or address_district(b.address)
    roads_a, roads_b = set(address_roads(a.address)), set(address_roads(b.address))
    return bool(district_a) and district_a == district_b and bool(roads_a & roads_b)


def _address_parts(place: Place) -> list[str]:
    parts = place.address.split() + [place.district, place.name]
    parts += [m.group(0) for m in _ADMIN.finditer(place.address.replace(" ", ""))]
    return [p for p in parts if p]


def verify_poi(episode: Episode, calls: list[CallRecord], answer: str, verdict: Verdict) -> None:
    gold = _gold_place(episode)
    evidence = [p for call in _served(calls, "poi") + _served(calls, "around") for p in places(call.response)]
    keyword = str(_gold_args(episode, "query_poi").get("keywords") or episode.gold_slots.get("keyword") or "")
    named = identified_places(answer, evidence, episode.query, keyword)
    altered = altered_names(answer, evidence)
    verdict.add("no_altered_name", not altered, expected="a returned name as it is", stated=", ".join(altered),
                reason=f"'{altered[0]}' is a longer name than any returned place's" if altered else "")
    verdict.add("identifies_place", bool(named), expected=gold.name if gold else "a returned place",
                stated=", ".join(p.name for p in named),
                reason="" if named else "the answer names no returned place by its full name, address or coordinates")
    if not named:
        return
    distinct = [p for i, p in enumerate(named) if not any(
        q.location and p.location and haversine_m(p.location, q.location) <= 100 or q.name == p.name
        for q in named[:i])]
    hedged = bool(_PLACE_HEDGE.search(normalize_answer(answer)))
    verdict.add("one_place", len(distinct) == 1 and not hedged, expected="one place",
                stated=", ".join(p.name for p in distinct) + (" (hedged)" if hedged else ""),
                reason="several places named where one was asked" if len(distinct) > 1 or hedged else "")
    place = named[0]
    if gold is not None:
        near = place.location is not None and gold.location is not None and \
            haversine_m(place.location, gold.location) <= PLACE_TOLERANCE_M
        verdict.add("place_matches", near or _same_district_and_road(place, gold),
                    expected=gold.name or str(gold.location), stated=place.name,
                    reason="" if near else "the named place is not the gold place")
    known = _address_parts(place) + [episode.query, str(episode.context.get("city") or "")]
    province_wrong = [t for t in _admin_tokens(answer, _PROVINCE_LEVEL) if not _consistent(t, known)]
    district_wrong = [t for t in _admin_tokens(answer) if t.endswith(("区", "县")) and not _consistent(t, known)]
    wrong = province_wrong + district_wrong
    wrong += _wrong_numbers(mask_places(answer, [Place(place.name)]), place.address + place.name)
    verdict.add("address_consistent", not wrong, expected=place.address, stated=", ".join(wrong),
                reason=f"{wrong[0]} contradicts the place's address" if wrong else "")
    others = foreign_places(answer, [p.name for p in evidence]
                            + [a for p in evidence for a in (p.address, *p.address.split())]
                            + [episode.query, str(episode.context.get("city") or "")])
    verdict.add("no_other_place", not others, expected=place.name, stated=", ".join(others),
                reason=f"'{others[0]}' is no returned place" if others else "")


# ------------------------------------------------------------------ geolocation
def verify_geolocation(episode: Episode, calls: list[CallRecord], answer: str, verdict: Verdict) -> None:
    gold_args = _gold_args(episode, "reverse_geocoding")
    gold_point = _point(f"{gold_args.get('longitude')},{gold_args.get('latitude')}") or _point(episode.user_location)
    for call in reversed(_served(calls, "geocode")):
        args = _entry_args(call)
        point = _point(f"{args.get('longitude')},{args.get('latitude')}")
        facts = geocode_facts(call.response)
        if facts is None or point is None or gold_point is None or haversine_m(point, gold_point) > PLACE_TOLERANCE_M:
            continue
        regeo = call.response if isinstance(call.response, dict) else {}
        component = _component(regeo)
        below_city = [facts.district, facts.township] + list(facts.roads) + list(facts.poi_names)
        below_city += [component.get("street_number", "")]
        stated = [c for c in dict.fromkeys(below_city) if len(fold_text(c)) >= 2 and names_in(answer, c)]
        if facts.formatted_address and _after_city(facts.formatted_address, component) and \
                fold_text(_after_city(facts.formatted_address, component)) in fold_text(answer):
            stated = list(dict.fromkeys(stated + [_after_city(facts.formatted_address, component)]))
        enough = len(stated) >= 2 or (len(stated) == 1 and len(_parts_in(stated[0], below_city)) >= 2)
        verdict.add("address_components", enough, expected=facts.formatted_address, stated=", ".join(stated),
                    reason="" if enough else "name at least two address components below the city")
        known = [facts.formatted_address, facts.district, facts.township, component.get("province", ""),
                 component.get("city", ""), *facts.roads, *facts.poi_names]
        evidence_text = " ".join([facts.formatted_address, component.get("street_number", ""), *facts.poi_names])
        # a nearby POI's own address may be quoted in brackets after its name: 靠近X（玉兰大街83号）
        nearby = [Place(f"{p.name}{o}{p.address}{c}") for p in places(call.response) if p.address
                  for o, c in (("(", ")"), ("（", "）"))]
        names_only = nearby + [Place(p.name) for p in places(call.response)]
        masked = mask_places(answer, names_only)  # a returned POI's name holds no claim (靠近沙县小吃: 沙县 is no county)
        wrong = [t for t in _admin_tokens(masked)
                 if not _consistent(t, known) and fold_text(t) not in fold_text(facts.formatted_address)]
        wrong += _wrong_numbers(masked, evidence_text)
        verdict.add("address_consistent", not wrong, expected=facts.formatted_address, stated=", ".join(wrong),
                    reason=f"{wrong[0]} is not part of the address" if wrong else "")
        return
    verdict.add("geocoded_gold_point", False, expected=str(gold_point),
                reason="no reverse_geocoding response for the user's position was served")


def _component(response: dict[str, Any]) -> dict[str, str]:
    body = response.get("data") if isinstance(response.get("data"), dict) else response
    regeo = body.get("regeocode") if isinstance(body, dict) else None
    comp = cast(dict, regeo.get("addressComponent")
                if isinstance(regeo, dict) and isinstance(regeo.get("addressComponent"), dict) else {})
    street = cast(dict, comp.get("streetNumber") if isinstance(comp.get("streetNumber"), dict) else {})
    number = "".join(str(street.get(k)) for k in ("street", "number") if isinstance(street.get(k), str))
    return {"province": cast(str, comp.get("province") if isinstance(comp.get("province"), str) else ""),
            "city": cast(str, comp.get("city") if isinstance(comp.get("city"), str) else ""), "street_number": number}


def _after_city(address: str, component: dict[str, str]) -> str:
    rest = address
    for key in ("province", "city"):
        value = component.get(key) or ""
        if value and rest.startswith(value):
            rest = rest[len(value):]
    return rest if len(fold_text(rest)) >= 4 else ""


def _parts_in(text: str, parts: list[str]) -> list[str]:
    return [p for p in parts if len(fold_text(p)) >= 2 and fold_text(p) in fold_text(text)]


# ------------------------------------------------------------------ nearby
def verify_nearby(episode: Episode, calls: list[CallRecord], answer: str, verdict: Verdict) -> None:
    gold_args = _gold_args(episode, "search_around_poi")
    centre = _point(gold_args.get("location")) or _point(episode.fields.get("centre_loc"))
    keywords = gold_args.get("keywords") or episode.gold_slots.get("keyword")
    for call in reversed(_served(calls, "around")):
        args = _entry_args(call)
        point = _point(args.get("location"))
        if centre is None or point is None or haversine_m(point, centre) > PLACE_TOLERANCE_M:
            continue
        if keywords and not same_place_name(str(args.get("keywords") or ""), str(keywords)):
            continue
        pois = nearby_pois(call.response)
        if pois is None:
            continue
        if not pois:
            says = says_no_result(answer)
            verdict.add("says_nothing_found", says, reason="" if says else "the search found nothing: say so")
            return
        named = identified_places(answer, pois, episode.query, str(keywords or ""))
        altered = altered_names(answer, pois)
        verdict.add("no_altered_name", not altered, expected="returned names as they are", stated=", ".join(altered),
                    reason=f"'{altered[0]}' is a longer name than any returned place's" if altered else "")
        verdict.add("names_returned_poi", bool(named), expected=", ".join(p.name for p in pois[:3]),
                    stated=", ".join(p.name for p in named),
                    reason="" if named else "the answer names none of the returned places")
        others = foreign_places(answer, [p.name for p in pois]
                                + [a for p in pois for a in (p.address, *p.address.split())]
                                + [episode.query, str(episode.context.get("city") or ""), str(keywords or "")])
        verdict.add("no_other_place", not others, expected="returned places only", stated=", ".join(others),
                    reason=f"'{others[0]}' is not among the returned places" if others else "")
        distances = parse_distances(mask_places(normalize_answer(answer), pois))
        if distances:
            known = [d for d in (_poi_distance(call.response, p, point) for p in (named or pois)) if d is not None]
            wrong = [d.value for d in distances if not any(within_tolerance(d, k) for k in known)]
            verdict.add("distances", not wrong, expected=", ".join(f"{k:g} m" for k in known),
                        stated=", ".join(f"{d.value:g} m" for d in distances),
                        reason=f"{wrong[0]:g} m is no named place's distance" if wrong else "")
        return
    verdict.add("searched_gold_centre", False, expected=str(centre),
                reason="no nearby search at the asked place was served")


def _poi_distance(response: Any, place: Place, centre: tuple[float, float]) -> float | None:
    body = response.get("data") if isinstance(response, dict) and isinstance(response.get("data"), dict) else response
    for item in body.get("pois") or [] if isinstance(body, dict) else []:
        if isinstance(item, dict) and item.get("name") == place.name:
            try:
                return float(item["distance"])
            except (KeyError, TypeError, ValueError):
                break
    return haversine_m(place.location, centre) if place.location is not None else None


# ------------------------------------------------------------------ weather
def _forecast_day_index(episode: Episode, days: tuple, updated: str) -> int:
    word = canonical_day(episode.gold_slots.get("time")) if episode.gold_slots.get("time") else ""
    if not word:
        word = next((w for w in ("大后天", "后天", "明天", "今天") if w in episode.query), "今天")
    offset = _DAY_OFFSETS.get(word, 0)
    dates = [day.date for day in days]
    base = dates.index(updated) if updated in dates else 0
    return min(base + offset, len(days) - 1)


def _weekday_of(description: str, date: str) -> int | None:
    start = description.find(date)
    while start >= 0:
        match = _WEEKDAY_AFTER.match(description, start + len(date))
        if match:
            return _WEEKDAYS.get(match.group(1))
        start = description.find(date, start + 1)
    return None


_WEEKDAY_AFTER = re.compile(r"\s*[（(](?:周|星期)([一二三四五六日天])")


def _day_markers(answer: str, dates: list[str], base: int, weekdays: list[int | None]) -> list[tuple[int, int]]:
    """``(position, day index)`` of each day label in the answer."""
    text = normalize_answer(answer).lower()
    marks = []
    for m in _DAY_WORDS.finditer(text):
        word = m.group(0)
        if word in _DAY_WORD_OFFSET:
            offset = _DAY_WORD_OFFSET[word]
        else:
            digits = re.search(r"\d|one|two|three|four", word)
            amount = (int(digits.group(0)) if digits and digits.group(0).isdigit()
                      else _NUMBER_WORDS.get(digits.group(0), 0) if digits else 0)
            offset = amount - 1 if word.startswith("第") else amount
        marks.append((m.start(), base + offset))
    for m in _WEEKDAY_RE.finditer(text):
        day = _WEEKDAYS.get(m.group(1)) if m.group(1) else _EN_WEEKDAYS.index(m.group(2).lower())
        if day in weekdays:
            marks.append((m.start(), weekdays.index(day)))
    for m in _DATE_RE.finditer(text):
        month, day_of_month = ((m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4)) if m.group(3)
                               else (m.group(5), m.group(6)))
        for i, date in enumerate(dates):
            if date[5:7].lstrip("0") == month.lstrip("0") and date[8:10].lstrip("0") == day_of_month.lstrip("0"):
                marks.append((m.start(), i))
    return sorted(marks)


def _day_at(marks: list[tuple[int, int]], position: int, default: int) -> int:
    day = default
    for start, index in marks:
        if start <= position:
            day = index
    return day


def _temperature_positions(text: str) -> list[tuple[int, float]]:
    values = parse_temperatures(text)
    positions, cursor = [], 0
    for value in values:
        spelled = re.search(r"-?\d+(?:\.\d+)?", text[cursor:])
        position = cursor + spelled.start() if spelled else cursor
        positions.append((position, value))
        cursor = position + (spelled.end() - spelled.start() if spelled else 0)
    return positions


def verify_weather(episode: Episode, calls: list[CallRecord], answer: str, verdict: Verdict) -> None:
    gold_args = _gold_args(episode, "weather_query")
    gold_city = city_key(gold_args.get("city") or episode.gold_slots.get("city"))
    gold_forecast = canonical_flag(gold_args.get("need_forecast", episode.gold_slots.get("forecast", False)))
    for call in reversed(_served(calls, "weather")):
        args = _entry_args(call)
        if city_key(args.get("city")) != gold_city or canonical_flag(args.get("need_forecast")) != gold_forecast:
            continue
        facts = weather_facts(call.response)
        if facts is None:
            continue
        if facts.is_empty:
            says = says_no_result(answer)
            verdict.add("says_no_data", says, reason="" if says else "the service returned no weather: say so")
            return
        text = normalize_answer(answer)
        description = _description(call.response)
        if facts.is_forecast:
            dates = [d.date for d in facts.days]
            base = dates.index(facts.updated) if facts.updated in dates else 0
            asked = _forecast_day_index(episode, facts.days, facts.updated)
            weekdays = [_weekday_of(description, d) for d in dates]
            marks = _day_markers(answer, dates, base, weekdays)
            day_labels = [weather_labels_of(d.condition) for d in facts.days]
            day_temps = [[v for v in (d.low, d.high) if v is not None] for d in facts.days]
            required_temps = day_temps[asked]
        else:
            marks, asked = [], 0
            day_labels = [weather_labels_of(facts.condition)]
            day_temps = [[facts.temperature] if facts.temperature is not None else []]
            required_temps = day_temps[0]
        _weather_condition_checks(text, marks, asked, day_labels, facts, verdict)
        _weather_temperature_checks(text, marks, asked, day_temps, required_temps, verdict)
        humidity = re.search(r"湿度\s*(\d+(?:\.\d+)?)\s*%", description)
        stated = humidity_claims(answer)
        if stated:
            wrong = [h.value for h in stated if humidity is None or abs(h.value - float(humidity.group(1))) > 2]
            verdict.add("humidity", not wrong, expected=humidity.group(1) + "%" if humidity else "not recorded",
                        stated=", ".join(f"{h.value:g}%" for h in stated),
                        reason="the stated humidity is not the recorded one" if wrong else "")
        cities = [t for t in _admin_tokens(answer) if t.endswith("市")]
        wrong_city = [t for t in cities if not _consistent(t, [facts.city, str(args.get("city") or "")])]
        if wrong_city:
            verdict.add("city", False, expected=facts.city, stated=", ".join(wrong_city),
                        reason="another city is named")
        return
    verdict.add("queried_gold_city", False, expected=f"{gold_city} forecast={gold_forecast}",
                reason="no weather response for the asked city (and forecast flag) was served")


def _description(response: Any) -> str:
    body = response
    while isinstance(body, dict) and "data" in body:
        body = body["data"]
    if isinstance(body, dict):
        return str(body.get("weather_description") or "")
    return body if isinstance(body, str) else ""


def _weather_condition_checks(text: str, marks: list[tuple[int, int]], asked: int, day_labels: list[frozenset[str]],
                              facts: Any, verdict: Verdict) -> None:
    claims = weather_claims(text)
    stated_asked = False
    wrong = []
    for claim in claims:
        day = _day_at(marks, claim.start, asked)
        evidence = day_labels[day] if 0 <= day < len(day_labels) else frozenset()
        compatible = weather_compatible(claim.label, evidence) if evidence else False
        if claim.negated:
            if compatible:
                wrong.append(f"not {claim.label}")
        elif not compatible:
            wrong.append(claim.label)
        elif day == asked:
            stated_asked = True
    expected = "/".join(sorted(day_labels[asked])) if asked < len(day_labels) else ""
    verdict.add("condition", stated_asked and not wrong, expected=expected,
                stated=", ".join(("not " if c.negated else "") + c.label for c in claims),
                reason=(f"{wrong[0]} contradicts the recorded weather" if wrong else
                        "" if stated_asked else "the asked day's condition is not stated"))


def _weather_temperature_checks(text: str, marks: list[tuple[int, int]], asked: int, day_temps: list[list[float]],
                                required: list[float], verdict: Verdict) -> None:
    stated = _temperature_positions(text)
    wrong, asked_values = [], []
    for position, value in stated:
        day = _day_at(marks, position, asked)
        allowed = day_temps[day] if 0 <= day < len(day_temps) else []
        if not any(abs(value - t) <= TEMPERATURE_TOLERANCE_C for t in allowed):
            wrong.append(value)
        elif day == asked:
            asked_values.append(value)
    missing = [t for t in required if not any(abs(t - v) <= TEMPERATURE_TOLERANCE_C for v in asked_values)]
    verdict.add("temperature", not wrong and not missing and bool(required),
                expected=", ".join(f"{t:g}℃" for t in required), stated=", ".join(f"{v:g}℃" for _, v in stated),
                reason=(f"{wrong[0]:g}℃ is not a recorded temperature" if wrong else
                        f"{missing[0]:g}℃ is not stated" if missing else "" if required else "no temperature recorded"))


# ------------------------------------------------------------------ traffic
def verify_traffic(episode: Episode, calls: list[CallRecord], answer: str, verdict: Verdict) -> None:
    gold_args = _gold_args(episode, "traffic_status")
    road = str(gold_args.get("name") or episode.gold_slots.get("road") or "")
    for call in reversed(_served(calls, "traffic")):
        name = str(_entry_args(call).get("name") or "")
        if not (same_place_name(name, road) or (fold_text(name) and fold_text(name) in fold_text(road))
                or (fold_text(road) and fold_text(road) in fold_text(name))):
            continue
        facts = traffic_facts(call.response)
        if facts is None:
            continue
        claims = traffic_claims(answer)
        if facts.state == "未知":
            says = says_no_result(answer) or "未知" in answer
            verdict.add("says_unknown", says and not claims, expected="unknown",
                        stated=", ".join(c.phrase for c in claims),
                        reason="" if says and not claims else "the state is unknown: say so and assert none")
            return
        overall = TRAFFIC_STATE_CODES[facts.state]
        mentioned = {TRAFFIC_STATE_CODES[s] for s in facts.states_mentioned if s in TRAFFIC_STATE_CODES}
        asserted = any(overall in c.states and not c.local for c in claims) or \
            any(overall in c.states for c in claims) and all(c.local for c in claims)
        described = normalize_answer(facts.description).lower()
        wrong = [c.phrase for c in claims if overall not in c.states
                 and not (c.states & mentioned and (c.local or c.phrase.lower() in described))]
        verdict.add("states_traffic", asserted, expected=facts.state, stated=", ".join(c.phrase for c in claims),
                    reason="" if asserted else "the road's overall state is not stated")
        verdict.add("state_matches", not wrong, expected=facts.state,
                    stated=", ".join(f"{c.phrase}={'/'.join(TRAFFIC_STATE_NAMES[s] for s in sorted(c.states))}"
                                     for c in claims),
                    reason=f"'{wrong[0]}' contradicts the recorded state" if wrong else "")
        return
    verdict.add("queried_gold_road", False, expected=road, reason="no traffic response for the asked road was served")


_INFO_VERIFIERS = {"POI Query": verify_poi, "Geolocation Query": verify_geolocation, "Nearby Query": verify_nearby,
                   "Weather Query": verify_weather, "Traffic Info Query": verify_traffic}


# ------------------------------------------------------------------ DR
def has_claim(answer: str) -> bool:
    """Does the answer state anything checkable (a quantity, time, condition, state, line, "nothing found")?"""
    text = normalize_answer(answer)
    return bool(parse_distances(text) or parse_durations(text) or clock_claims(text) or parse_temperatures(text)
                or money_claims(text) or light_claims(text) or weather_claims(text) or traffic_claims(text)
                or highway_claims(text) or re.search(r"\d+号线|\d+路", text) or says_no_result(text)
                or hedged_quantities(text) or _admin_tokens(text) or re.search(r"\d", text))


_FILLER = re.compile(r"您问的是|你问的是|你说的是|您说的是|您要找的是|你要找的是|问题是|您的问题|好的|嗯|呃|you asked|your question|"
                     r"you said|the query|query|sure|ok|okay|well|here you go|[：:，,。.!！?？\s\"“”'‘’]", re.IGNORECASE)


def _echoes_query(answer: str, query: str) -> bool:
    """Is the answer the query (or part of it) with nothing but fillers around it?"""
    a, q = fold_text(answer), fold_text(query)
    if not a:
        return True
    if a in q:
        return True
    rest = normalize_answer(answer).lower().replace(normalize_answer(query).lower(), " ") if q and q in a else ""
    return bool(q) and q in a and not _FILLER.sub("", rest).strip()


def _delivery(episode: Episode, trajectory: Trajectory, verdict: Verdict) -> None:
    answer = trajectory.finish.answer if trajectory.finish is not None else ""
    served = {TOOLS[t].kind for c in trajectory.calls if c.succeeded and (t := canonical_tool_name(c.name)) is not None}
    missing = sorted(needed_kinds(episode) - served)
    verdict.add("tools_served", not missing, expected=sorted(needed_kinds(episode)), stated=sorted(served),
                reason=f"no successful {missing[0]} call: the answer rests on no evidence" if missing else "")
    echo = _echoes_query(answer, episode.query)
    substantive = not echo and (has_claim(answer) or _names_evidence(trajectory.calls, answer))
    verdict.add("substantive_answer", substantive, stated=answer[:80],
                reason="" if substantive else ("the answer echoes the query" if echo
                                               else "the answer states nothing checkable"))
    if missing or not substantive:
        verdict.delivered = False
        verdict.reason = "not delivered: " + "; ".join(c.reason for c in verdict.checks if not c.passed)


def _names_evidence(calls: list[CallRecord], answer: str) -> bool:
    evidence = [p for kind in ("poi", "around", "geocode") for call in _served(calls, kind)
                for p in places(call.response)]
    return any(names_in(answer, p.name) or names_in(answer, _bare(p.name)) for p in evidence[:200])


def verify_answer(episode: Episode, trajectory: Trajectory) -> Verdict:
    """DR and FPR of one trajectory with every check behind them (rules in the module docstring)."""
    finish = trajectory.finish
    if finish is None or trajectory.truncated or not isinstance(finish.answer, str) or not finish.answer.strip():
        return Verdict(False, reason="truncated" if trajectory.truncated else "no finished answer")
    verdict = Verdict(True)
    answer = finish.answer
    if len(answer) > MAX_ANSWER_CHARS or re.search(r"\d{%d}" % (MAX_NUMBER_DIGITS + 1), answer):
        verdict.add("answer_bounds", False,
                    expected=f"<= {MAX_ANSWER_CHARS} characters, numbers <= {MAX_NUMBER_DIGITS} digits",
                    stated=f"{len(answer)} characters", reason="the answer is too long or states an absurd number")
        verdict.delivered = False
        verdict.reason = "not delivered: the answer exceeds the bounds of a spoken answer"
        return verdict
    _delivery(episode, trajectory, verdict)
    if gold_route_call(episode) is not None:
        verify_route_answer(episode, trajectory, verdict)
        return verdict
    verifier = _INFO_VERIFIERS.get(episode.task_scenario)
    if verifier is None:
        verdict.add("scenario_known", False, stated=episode.task_scenario, reason="no verifier for this scenario")
        return verdict
    verifier(episode, trajectory.calls, finish.answer, verdict)
    return verdict
