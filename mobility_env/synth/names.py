"""Vocabularies and name builders of the synthetic world.

The city table uses real prefecture-level cities with their approximate centres so that
coordinates fall in plausible places; everything *inside* a city (districts, roads, lines,
shops, compounds) is invented from the word pools below, drawn with a caller's generator.
Builders take a :class:`random.Random` and never touch global state.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Sequence, TypeVar


@dataclass(frozen=True)
class CitySeed:
    """A real city: official name, short name, province, centre and size class."""

    name: str
    short: str
    province: str
    lng: float
    lat: float
    radius_km: float
    metro_lines: int          # 0 = no metro
    metro_prefix: str = "地铁"  # '地铁1号线' or '轨道交通1号线'


CITY_SEEDS: tuple[CitySeed, ...] = (
    CitySeed("北京市", "北京", "北京市", 116.4074, 39.9042, 24, 8),
    CitySeed("上海市", "上海", "上海市", 121.4737, 31.2304, 24, 8),
    CitySeed("广州市", "广州", "广东省", 113.2644, 23.1291, 22, 7),
    CitySeed("深圳市", "深圳", "广东省", 114.0579, 22.5431, 20, 7),
    CitySeed("杭州市", "杭州", "浙江省", 120.1551, 30.2741, 20, 6),
    CitySeed("南京市", "南京", "江苏省", 118.7969, 32.0603, 20, 6),
    CitySeed("武汉市", "武汉", "湖北省", 114.3054, 30.5931, 20, 6, "轨道交通"),
    CitySeed("成都市", "成都", "四川省", 104.0665, 30.5723, 20, 6),
    CitySeed("西安市", "西安", "陕西省", 108.9402, 34.3416, 18, 5),
    CitySeed("重庆市", "重庆", "重庆市", 106.5516, 29.5630, 20, 5, "轨道交通"),
    CitySeed("天津市", "天津", "天津市", 117.2000, 39.0842, 18, 5),
    CitySeed("郑州市", "郑州", "河南省", 113.6254, 34.7466, 16, 5),
    CitySeed("长沙市", "长沙", "湖南省", 112.9388, 28.2282, 16, 4),
    CitySeed("沈阳市", "沈阳", "辽宁省", 123.4315, 41.8057, 16, 4),
    CitySeed("哈尔滨市", "哈尔滨", "黑龙江省", 126.5350, 45.8038, 16, 3),
    CitySeed("济南市", "济南", "山东省", 117.1205, 36.6510, 15, 3, "轨道交通"),
    CitySeed("昆明市", "昆明", "云南省", 102.8329, 24.8801, 15, 4),
    CitySeed("合肥市", "合肥", "安徽省", 117.2272, 31.8206, 15, 4, "轨道交通"),
    CitySeed("厦门市", "厦门", "福建省", 118.0894, 24.4798, 13, 3),
    CitySeed("南宁市", "南宁", "广西壮族自治区", 108.3661, 22.8170, 14, 4, "轨道交通"),
    CitySeed("淮安市", "淮安", "江苏省", 119.1130, 33.5510, 11, 0),
    CitySeed("宜昌市", "宜昌", "湖北省", 111.2865, 30.6919, 10, 0),
    CitySeed("邢台市", "邢台", "河北省", 114.5048, 37.0706, 10, 0),
    CitySeed("绵阳市", "绵阳", "四川省", 104.6796, 31.4675, 10, 0),
)

# Two-character name stems used for roads, stations, compounds and districts.
STEMS = (
    "人民", "解放", "中山", "建设", "和平", "长江", "黄河", "文化", "胜利", "新华", "光明", "幸福",
    "青年", "朝阳", "迎宾", "滨河", "世纪", "科技", "学府", "金融", "东风", "红旗", "友谊", "团结",
    "民主", "振兴", "育才", "花园", "翠微", "锦绣", "长安", "泰山", "华山", "嵩山", "龙华", "凤凰",
    "金桥", "银河", "星火", "紫荆", "桂林", "丹桂", "玉兰", "海棠", "芙蓉", "白鹭", "天鹅", "柳林",
    "松江", "梅林", "枫林", "竹园", "石桥", "杨柳", "沙河", "清河", "西湖", "东湖", "南湖", "北湖",
    "望京", "安定", "永安", "太平", "万寿", "广安", "兴隆", "富民", "康乐", "怡和", "瑞丰", "宏达",
    "汇通", "联合", "创业", "创新", "高新", "经开", "临港", "滨江", "江北", "河西", "城南", "城北",
    "水磨", "铁塔", "钟楼", "鼓楼", "北门", "南门", "东门", "西关", "十里", "五里", "三里", "八里",
)
ROAD_SUFFIXES = ("路", "路", "路", "大道", "街", "大街")
STREET_SUFFIXES = ("巷", "街", "里", "胡同", "支路", "一路", "二路")
DIRECTION_AFFIXES = ("东", "西", "南", "北", "中")
DISTRICT_SUFFIXES = ("区",)
TOWNSHIP_SUFFIXES = ("街道", "街道", "镇")
COUNTY_SUFFIXES = ("县", "县", "市", "镇")
STATION_SUFFIXES = ("", "", "", "东", "西", "南", "北", "桥", "路口", "广场", "公园", "门")
BUS_TERMINAL_SUFFIXES = ("公交场站", "枢纽站", "总站", "小区", "村", "路口")

NATIONAL_HIGHWAYS = (
    "G1京哈高速", "G2京沪高速", "G3京台高速", "G4京港澳高速", "G5京昆高速", "G15沈海高速",
    "G20青银高速", "G25长深高速", "G30连霍高速", "G35济广高速", "G40沪陕高速", "G42沪蓉高速",
    "G45大广高速", "G50沪渝高速", "G55二广高速", "G56杭瑞高速", "G60沪昆高速", "G65包茂高速",
    "G70福银高速", "G72泉南高速", "G75兰海高速", "G85银昆高速",
)
NATIONAL_ROAD_NUMBERS = ("102", "104", "105", "106", "107", "108", "205", "206", "207", "209", "210", "308", "310",
                         "312", "318", "320", "324")

WEATHER_CONDITIONS = ("晴", "晴", "多云", "多云", "阴", "小雨", "中雨", "阵雨", "小雪", "雾", "霾")
WIND_DIRECTIONS = ("东", "南", "西", "北", "东北", "东南", "西北", "西南")

WAKE_WORDS = ("小德小德", "小德，", "小布小布", "你好小德，", "嘿小德", "小德同学，")
FILLERS = ("呃", "嗯", "那个", "呃那个", "嗯，")


_T = TypeVar("_T")


def pick(rng: random.Random, options: Sequence[_T]) -> _T:
    return options[rng.randrange(len(options))]


def road_name(rng: random.Random) -> str:
    """An arterial name: '解放路', '长江东路', '世纪大道'."""
    stem = pick(rng, STEMS)
    suffix = pick(rng, ROAD_SUFFIXES)
    if suffix == "路" and rng.random() < 0.35:
        return f"{stem}{pick(rng, DIRECTION_AFFIXES)}路"
    return stem + suffix


def street_name(rng: random.Random) -> str:
    """A small street: '翠微巷', '杨柳二路'."""
    return pick(rng, STEMS) + pick(rng, STREET_SUFFIXES)


def station_name(rng: random.Random) -> str:
    """A stop or station name: '永安里', '十里河桥', '西关'."""
    stem = pick(rng, STEMS)
    if rng.random() < 0.2:
        stem += pick(rng, ("里", "庄", "营", "坊", "屯", "村"))
    return stem + pick(rng, STATION_SUFFIXES)


def district_name(rng: random.Random) -> str:
    return pick(rng, STEMS) + "区"


def township_name(rng: random.Random) -> str:
    return pick(rng, STEMS) + pick(rng, TOWNSHIP_SUFFIXES)


def county_name(rng: random.Random) -> str:
    return pick(rng, STEMS) + pick(rng, COUNTY_SUFFIXES)
