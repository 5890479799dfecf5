"""Places named in an answer: whole-name mentions, places the evidence never returned, list items, admin words and
house numbers (the place checks of :mod:`mobility_rewards.mobilitybench.verify`).

* :func:`identified_places` / :func:`names_in`: a returned place named by its full name (not inside a longer
  name: 北京大学 is not named by 北京大学第一医院), by its bracket-less name when that is unambiguous, or by its
  street address or coordinates; :func:`altered_names`: a longer name built on a returned one (X第二分店).
* :func:`foreign_places`: place-shaped tokens (``X店``, ``Y(Z店)``, ``…医院``) and list items (``附近有：A、B``)
  naming no returned place. A remark after a list item (``Alt Coffee很不错``) hides nothing: what precedes it
  is still a claim when it is name-shaped (capitalized Latin words, a name joined by a dot of any kind, four or
  more CJK characters, a place ending), and a remark word inside a place-shaped token (营业 in 建行营业部) is
  part of the name.
* :func:`_admin_tokens` / :func:`_consistent`: provinces, cities, districts, townships the answer names and
  whether the evidence has them; :func:`_wrong_numbers`: house numbers that are not the road's own.

Known limits: before a remark, two CJK characters read as prose (``味道很好``), and three read as a name
(``肯德基很不错``, ``江南区也可以``) unless they point or judge (``这家店很好``, ``性价比很高``): a remark led by
another three-character noun (``牛肉面很好吃``) is read as naming a place, so it fails as a place the evidence
never returned. A name ending in a remark word (``万达营业 is nice``) reads as prose.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Iterable

from mobility_env.geo import haversine_m
from mobility_env.tools import bounded_text_cache, parse_coordinate

from mobility_env.reading.script import simplified

from .claims import normalize_answer
from mobility_env.mobilitybench.evidence import Place, address_roads
from .slots import fold_text

# 旗 (a banner, Inner Mongolia's county level) is a suffix only when no other admin or street word follows:
# 红旗街道 / 红旗区 / 红旗路 are named after a flag.
_ADMIN = re.compile(r"[\u4e00-\u9fa5]{1,10}?(?:特别行政区|自治区|自治州|省|市|区|县|旗(?![区县镇乡街路道村小大])|镇|乡|街道)")
_PROVINCE_LEVEL = re.compile(r"[\u4e00-\u9fa5]{1,8}?(?:特别行政区|自治区|省)|(?:北京|上海|天津|重庆)市")


_EXTENSION = re.compile(r"^(?:第|分店|分部|分行|支行|分院|分校|分公司|店|东门|西门|南门|北门|正门|侧门|[东南西北]区|[一二三四五六七八九\d]期|"
                        r"[a-z\d]座|号楼|栋|停车场|地铁站|公交站|站|广场|大厦|中心|医院|学校|小区|公司|酒店|宾馆|银行|超市|商场|"
                        r"公园|附属|旗舰店|总店|新店|老店|[(（])", re.IGNORECASE)
_PREFIX = ("新", "老", "第二", "二号", "分")
_CLOSE_BRACKET = re.compile(r"[)）]")
_ADMIN_CHAR = re.compile(r"[省市区县镇乡]")
_STREET_CHAR = re.compile(r"[路街道号村]|\d")
_BRANCH_CHAR = re.compile(r"店|分|第")
_BRACKETED = re.compile(r"[(（][^)）]*[)）]")


def _ends_name(text: str, end: int) -> bool:
    """Does a name end at ``end``? Not if a name extension follows (分店, 东门, a branch in brackets);
    a bracketed address note (``（广东省 宝安区 …）``) may follow."""
    following = text[end:end + 4]
    if following[:1] and following[:1] in "(（":
        inner = _CLOSE_BRACKET.split(text[end + 1:end + 60])[0]
        return bool(_ADMIN_CHAR.search(inner)) or (bool(_STREET_CHAR.search(inner)) and not _BRANCH_CHAR.search(inner))
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


@bounded_text_cache(1024, 64, long_maxsize=16, long_max_chars=4096)  # names; the answer being scored
def _fold_for_names(text: str) -> str:
    return unicodedata.normalize("NFKC", simplified(text)).lower().replace(" ", "")  # both sides in one script


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


@bounded_text_cache(1024, 64)
def _bare(name: str) -> str:
    return _BRACKETED.sub("", name).strip()


def _street(place: Place) -> str:
    return _street_of(place.address)


@bounded_text_cache(1024, 128)
def _street_of(address: str) -> str:
    parts = address.split()
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
                 r"街(?!道)|路(?![线程口况过上顺平畅好])|市(?![场区中内民]))")
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
_CJK3 = re.compile(r"[\u4e00-\u9fa5]{3}")
_NAME_LEAD = re.compile(r"(?:[A-Z][\w'&.-]*\s*){1,6}|.*[·(（].*|[\u4e00-\u9fa5A-Za-z0-9'’&]{4,30}")


@bounded_text_cache(1024, 64, long_maxsize=16, long_max_chars=4096)  # names; the answer being scored
def _name_text(text: str) -> str:
    """NFKC, with every name-joining dot as ·: the form list items and place tokens are read in."""
    return unicodedata.normalize("NFKC", simplified(text)).translate(_NAME_DOTS)


# Three characters before a remark that are prose, not a name: a pointer or a quality of the place (这家店很好,
# 性价比很高, 服务员很热情); any other three (肯德基很不错, 江南区也可以) name a place.
_PROSE_LEAD3 = re.compile(r"[这那它此其都也还很最比总整每各该本]|性价|服务|价格|环境|口味|味道|交通|位置|距离|人气|装修|"
                          r"菜品|质量|态度|卫生|整体|总体|感觉|评价|排队|停车|营业|消费|人均")


def _name_shaped(lead: str) -> bool:
    """Does what precedes a remark read as a place's name (Alt Coffee, 恒大·滨江左岸, 和平饭店, naive Alt店,
    肯德基)?"""
    squeezed = _CJK_SPACES.sub("", lead)
    return bool(_NAME_LEAD.fullmatch(squeezed) or len(fold_text(lead)) >= 4 and _NAME_END.search(lead)
                or _CJK3.fullmatch(squeezed) and not _PROSE_LEAD3.search(squeezed))


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


@bounded_text_cache(1024, 128)
def _street_numbers(address: str) -> tuple[str, ...]:
    """``"石岩街道宝石东路209号星城大厦"`` -> ``("宝石东路209号",)``."""
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
    return tuple(found)


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
