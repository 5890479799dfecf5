"""Place answers (POI, nearby and geolocation queries): the returned places and address restated, and wrong places
named (a superstring of the name, another branch, a place or address of another episode, another province, another
house number, a bare city).
"""

from __future__ import annotations

import re

from mobility_env.mobilitybench.evidence import Place

from .draw import Draw
from .facts import EpisodeFacts, street_and_number
from .forms import FILLERS_EN, FILLERS_ZH, fold, join_clauses, pick_lang
from .registry import mutation


# -- correct -----------------------------------------------------------------------------------------------------------


def _name_variant(d: Draw, name: str) -> str:
    """The name as returned, or with full-width brackets (the same name to a reader)."""
    return d.choice((name, name.replace("(", "（").replace(")", "）")))


def poi_paraphrase(f: EpisodeFacts, d: Draw, lang: str, style: str) -> str:
    place = f.places[0]
    name = _name_variant(d, place.name)
    if lang == "en":
        return d.choice(FILLERS_EN) + (d.choice((f"{name} is at {place.address}.", f"It's {name}, address: "
                                                 f"{place.address}.")) if place.address else f"It's {name}.")
    clauses = [d.choice((name, f"找到了{name}", f"是{name}"))]
    if place.address:
        clauses.append(d.choice((f"地址：{place.address}", f"位于{place.address}", f"在{place.address}")))
    if place.location is not None and d.coin():  # the rule agent's form: 名称，地址：…，坐标lon, lat
        clauses.append(f"坐标{place.location[0]:.6f}, {place.location[1]:.6f}")
    return join_clauses(d, d.shuffled(clauses[:2]) + clauses[2:], lang)


def nearby_paraphrase(f: EpisodeFacts, d: Draw, lang: str, style: str, low: int = 1, high: int = 3) -> str:
    chosen = d.subset(list(f.places), low, high)
    with_address = d.coin()
    items = [_name_variant(d, p.name) + (f"（{p.address}）" if with_address and p.address else "")
             for p in chosen]
    if lang == "en":
        return d.choice(FILLERS_EN) + "Nearby: " + "; ".join(items) + "."
    return d.choice(FILLERS_ZH) + d.choice(("附近有：", "周边可以去", "最近的是")) + "、".join(items) + "。"


def geo_components(f: EpisodeFacts) -> list[str]:
    """The address components below the city (district, township, street and number, a road), in address order."""
    assert f.geocode is not None
    g = f.geocode
    parts = [g.district, g.township,
             street_and_number(g.formatted_address, (f.province, f.city, g.district, g.township))]
    parts += [r for r in g.roads[:1] if r and r in g.formatted_address and r not in parts[2]]
    parts = [p for p in dict.fromkeys(parts) if p and len(p) >= 2]
    return sorted(parts, key=lambda p: g.formatted_address.find(p) % 1000)


def geo_paraphrase(f: EpisodeFacts, d: Draw, lang: str, style: str) -> str:
    assert f.geocode is not None
    address = f.geocode.formatted_address
    if lang == "en":
        return d.choice(FILLERS_EN) + d.choice((f"You are at {address}.", f"Your location: {address}."))
    return d.choice(FILLERS_ZH) + d.choice((f"您当前位于{address}。", f"你在{address}。", f"当前位置：{address}。"))


@mutation("poi_name_only", correct=True, families=("poi",),
          applies=lambda f: fold(f.places[0].name) not in fold(f.episode.query))
def _poi_name_only(f: EpisodeFacts, d: Draw):
    """The returned name alone (only where the query does not contain it: else it adds nothing)."""
    name = _name_variant(d, f.places[0].name)
    return d.choice((name, f"{name}。", f"找到了：{name}", f"It's {name}."))


def _address_news(f: EpisodeFacts) -> bool:
    street = street_and_number(f.places[0].address)
    return bool(street) and fold(street) not in fold(f.episode.query)


@mutation("poi_address_only", correct=True, families=("poi",), applies=_address_news)
def _poi_address_only(f: EpisodeFacts, d: Draw):
    """The returned address alone (only where the query does not already state it)."""
    address = f.places[0].address
    text = d.choice((address, street_and_number(address)))
    return d.choice((f"地址是{text}。", f"在{text}。", f"The address is {text}."))


@mutation("nearby_several", correct=True, families=("nearby",), applies=lambda f: len(f.places) >= 2)
def _nearby_several(f: EpisodeFacts, d: Draw):
    return nearby_paraphrase(f, d, pick_lang(d), "plain", 2, 5)


@mutation("nearby_with_remarks", correct=True, families=("nearby",), applies=lambda f: len(f.places) >= 2)
def _nearby_with_remarks(f: EpisodeFacts, d: Draw):
    """Several returned places, each with its returned distance and a remark, listed with 、, ；, or commas."""
    lang = pick_lang(d)
    chosen = d.subset(list(range(len(f.places))), 2, min(4, len(f.places)))
    items = []
    for i in chosen:
        name, metres = _name_variant(d, f.places[i].name), f.place_distances[i]
        if metres is None:
            items.append(name)
        elif lang == "en":
            items.append(d.choice((f"{name} ({metres:g} m away)", f"{name}, about {metres:g} m")))
        else:
            items.append(d.choice((f"{name}（约{metres:g}米）", f"{name}，距离约{metres:g}米", f"{name}(步行{metres:g}米)")))
    if lang == "en":
        return d.choice(FILLERS_EN) + "Nearby: " + "; ".join(items) + d.choice((".", ", all within walking distance."))
    return d.choice(FILLERS_ZH) + d.choice(("附近有：", "周边有", "给您找到这些：")) + d.choice(("、", "；")).join(items) + \
        d.choice(("。", "，都不太远。", "等，环境都不错。"))


@mutation("geo_spaced_address", correct=True, families=("geolocation",))
def _geo_spaced_address(f: EpisodeFacts, d: Draw):
    """The formatted address split into its components with spaces."""
    assert f.geocode is not None
    g = f.geocode
    parts, rest = [], g.formatted_address
    for piece in (f.province, f.city, g.district, g.township):
        if piece and rest.startswith(piece):
            parts.append(piece)
            rest = rest[len(piece):]
    parts.append(rest)
    return d.choice(("您在", "当前位置：", "You are at ")) + " ".join(p for p in parts if p)


@mutation("geo_two_components", correct=True, families=("geolocation",),
          applies=lambda f: f.geocode is not None and len(geo_components(f)) + bool(f.geocode.poi_names) >= 2)
def _geo_two_components(f: EpisodeFacts, d: Draw):
    """At least two address components below the city (district, township, street+number, a nearby POI)."""
    assert f.geocode is not None
    components = geo_components(f)
    chosen = d.subset(components, 2 if len(components) >= 2 else 1, len(components))
    chosen = sorted(chosen, key=components.index)
    lang = pick_lang(d)
    if len(chosen) < 2 or d.coin() and f.geocode.poi_names:
        poi = f.geocode.poi_names[0]
        chosen = chosen + [f"near {poi}" if lang == "en" else f"靠近{poi}"]
    if lang == "en":
        return d.choice(FILLERS_EN) + "You are in " + ", ".join(chosen) + "."
    return d.choice(FILLERS_ZH) + "您在" + "".join(c for c in chosen if not c.startswith("靠近")) + \
        "".join("，" + c for c in chosen if c.startswith("靠近")) + "。"


# -- wrong -------------------------------------------------------------------------------------------------------------


PROVINCES = ("北京市", "上海市", "天津市", "重庆市", "河北省", "山西省", "辽宁省", "吉林省", "黑龙江省", "江苏省", "浙江省",
             "安徽省", "福建省", "江西省", "山东省", "河南省", "湖北省", "湖南省", "广东省", "海南省", "四川省", "贵州省",
             "云南省", "陕西省", "甘肃省", "青海省", "广西壮族自治区", "内蒙古自治区", "西藏自治区", "宁夏回族自治区",
             "新疆维吾尔自治区")
SUPERSTRING_SUFFIXES = ("分店", "东门", "(第二分店)", "第二分部", "停车场", "北区", "二期", "(南门)", "二店")


def _foreign_names(f: EpisodeFacts, count: int, d: Draw) -> list[Place]:
    count = min(count, len(f.foreign_places))
    return d.subset(list(f.foreign_places), count, count)


def _superstrings(f: EpisodeFacts, name: str) -> list[str]:
    names = [fold(n) for n in f.evidence_names]
    out = []
    for suffix in SUPERSTRING_SUFFIXES:
        candidate = name + suffix
        if not any(fold(candidate) in n for n in names):
            out.append(candidate)
    return out


def _has_superstring(f: EpisodeFacts) -> bool:
    return any(_superstrings(f, p.name) for p in f.places)


@mutation("superstring_name", correct=False, families=("poi", "nearby"), applies=_has_superstring)
def _superstring_name(f: EpisodeFacts, d: Draw):
    """A longer name that contains the returned one (X分店, X东门, X停车场) and is no returned place."""
    place = d.choice([p for p in f.places if _superstrings(f, p.name)])
    name = d.choice(_superstrings(f, place.name))
    if f.family == "nearby":
        return d.choice((f"附近有{name}。", f"Nearby: {name}."))
    return d.choice((f"{name}。", f"找到了{name}，地址：{place.address}。", f"It's {name}."))


def _other_province_places(f: EpisodeFacts) -> list[Place]:
    own = f.province or (f.places[0].address.split()[0] if f.places and f.places[0].address else "")
    return [p for p in f.foreign_places if p.address and p.address.split()[0] in PROVINCES
            and p.address.split()[0] != own and own]


@mutation("name_other_province_address", correct=False, families=("poi",),
          applies=lambda f: bool(_other_province_places(f)))
def _name_other_province_address(f: EpisodeFacts, d: Draw):
    """The right name with an address in another province."""
    other = d.choice(_other_province_places(f))
    name = f.places[0].name
    return d.choice((f"{name}，地址：{other.address}。", f"{name} is at {other.address}."))


@mutation("foreign_place", correct=False, families=("poi", "nearby", "geolocation"),
          applies=lambda f: bool(f.foreign_places) or bool(f.foreign_addresses))
def _foreign_place(f: EpisodeFacts, d: Draw):
    """A place (or address) returned in another episode, sharing nothing with this evidence."""
    if f.family == "geolocation":
        if f.foreign_addresses and d.coin() or not f.foreign_places:
            address = d.choice(f.foreign_addresses)
            return d.choice((f"您当前位于{address}。", f"You are at {address}."))
        return f"您在{d.choice(f.foreign_places).name}附近。"
    place = d.choice(f.foreign_places)
    if f.family == "nearby":
        return d.choice((f"附近有{place.name}（{place.address}）。", f"Nearby: {place.name}."))
    return d.choice((f"{place.name}，地址：{place.address}。", f"It's {place.name}."))


@mutation("other_branch", correct=False, families=("poi", "nearby"), applies=lambda f: bool(f.other_branches))
def _other_branch(f: EpisodeFacts, d: Draw):
    """Another branch of the same brand (``星巴克(外滩店)`` for ``星巴克(银河路店)``), over 2 km away."""
    place = d.choice(f.other_branches)
    if f.family == "nearby":
        return d.choice((f"附近有{place.name}。", f"Nearby: {place.name}."))
    return d.choice((f"{place.name}，地址：{place.address}。", f"It's {place.name}.", f"找到了{place.name}。"))


@mutation("place_hedge", correct=False, families=("poi", "geolocation"),
          applies=lambda f: bool(f.foreign_addresses if f.family == "geolocation" else f.foreign_places))
def _place_hedge(f: EpisodeFacts, d: Draw):
    """``可能是A，也可能是B``: the right place or a foreign one."""
    if f.family == "geolocation":
        assert f.geocode is not None
        pair = d.shuffled([f.geocode.formatted_address, d.choice(f.foreign_addresses)])
    else:
        pair = d.shuffled([f.places[0].name, d.choice(f.foreign_places).name])
    return d.choice((f"可能是{pair[0]}，也可能是{pair[1]}。", f"{pair[0]}或者{pair[1]}。",
                     f"Either {pair[0]} or {pair[1]}."))


@mutation("mixed_foreign_place", correct=False, families=("nearby",),
          applies=lambda f: bool(f.foreign_places))
def _mixed_foreign_place(f: EpisodeFacts, d: Draw):
    """A returned POI and one from another search, both claimed nearby; the foreign one may carry a
    remark (``Alt Coffee很不错``), which must not hide it."""
    remark = d.choice(("", "很不错", "评分很高", "也可以", " is nice"))
    foreign = [p.name + remark for p in _foreign_names(f, d.integer(1, 2), d)]
    items = d.shuffled([d.choice(f.places).name] + foreign)
    intro, sep = d.choice((("附近有：", "、"), ("附近有：", "，"), ("周边有", "、"), ("附近有", "；"), ("Nearby: ", "; "),
                           ("Nearby: ", ", ")))
    return intro + sep.join(items) + d.choice(("。", "等。"))


@mutation("place_stuffing", correct=False, families=("poi", "nearby"),
          applies=lambda f: len(f.foreign_places) >= 10)
def _place_stuffing(f: EpisodeFacts, d: Draw):
    """Every POI name of other searches, the right one hidden among them."""
    names = [p.name for p in f.foreign_places[:30]]
    names.insert(d.integer(0, len(names)), d.choice(f.places).name)
    return d.choice(("可能是以下地点之一：", "附近有：", "Candidates: ")) + "、".join(names) + "。"


@mutation("bare_city", correct=False, families=("geolocation",))
def _bare_city(f: EpisodeFacts, d: Draw):
    """The city (or province and city) and nothing below it."""
    options = [c for c in (f.city, f"{f.province}{f.city}", f"您在{f.city}。", f"You are in {f.city}.") if c]
    return d.choice(options)


@mutation("one_character", correct=False, families=("geolocation",))
def _one_character(f: EpisodeFacts, d: Draw):
    return d.choice(("市", "区", "省"))


@mutation("wrong_component", correct=False, families=("geolocation",),
          applies=lambda f: bool(f.foreign_townships))
def _wrong_component(f: EpisodeFacts, d: Draw):
    """The right district with a township of another episode (and no other true component)."""
    assert f.geocode is not None
    return d.choice((f"您在{f.geocode.district}{d.choice(f.foreign_townships)}。",
                     f"You are in {f.geocode.district}, {d.choice(f.foreign_townships)}."))


@mutation("wrong_street_number", correct=False, families=("geolocation",),
          applies=lambda f: f.geocode is not None and bool(re.search(r"\d+号$", f.geocode.formatted_address)))
def _wrong_street_number(f: EpisodeFacts, d: Draw):
    """The formatted address with another house number."""
    assert f.geocode is not None
    address = f.geocode.formatted_address
    match = re.search(r"(\d+)号$", address)
    assert match is not None
    number = int(match.group(1))
    other = number + d.choice((-1, 1)) * d.integer(max(20, number // 3), max(40, number))
    other = other if other > 0 else number + 57
    changed = re.sub(r"\d+号$", f"{other}号", address)
    return d.choice((f"您当前位于{changed}。", f"You are at {changed}."))
