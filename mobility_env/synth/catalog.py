"""POI categories: how places of each kind are named, typed and searched for.

A :class:`Category` names a place from a *place word* (a nearby road or stem) so that
branches read like the real data: '中国建设银行(解放路支行)', '星巴克(万达广场店)'.
``keywords`` are what a user says when looking for one nearby ('银行', '建设银行').
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from .names import STEMS, pick


@dataclass(frozen=True)
class Category:
    key: str
    type_code: str                 # Amap-style 'big;middle;small' type
    brands: tuple[str, ...]        # empty for unbranded kinds
    branch_suffix: str             # '支行', '店', '站' ('' = unbranded pattern)
    keywords: tuple[str, ...]      # generic search words
    nearby: bool = True            # searchable with search_around_poi

    def make_name(self, rng: random.Random, place: str, city_short: str, district: str) -> tuple[str, str]:
        """(name, brand) of a new place of this category near ``place``."""
        if self.brands:
            brand = pick(rng, self.brands)
            return f"{brand}({place}{self.branch_suffix})", brand
        return _UNBRANDED[self.key](rng, place, city_short, district), ""

    def search_words(self, brand: str) -> tuple[str, ...]:
        """Every keyword that finds a place of this category (and brand)."""
        short = _BRAND_SHORT.get(brand, brand)
        return self.keywords + ((brand, short) if brand else ())


_BRAND_SHORT = {"中国建设银行": "建设银行", "中国工商银行": "工商银行", "中国农业银行": "农业银行",
                "中国石化加油站": "中石化", "中国石油加油站": "中石油", "海底捞火锅": "海底捞"}


def _hospital(rng: random.Random, place: str, short: str, district: str) -> str:
    return pick(rng, (f"{short}市第{pick(rng, '一二三四五六七')}人民医院", f"{district}人民医院", f"{short}市中医院",
                      f"{short}市妇幼保健院", f"{place}社区卫生服务中心"))


def _school(rng: random.Random, place: str, short: str, district: str) -> str:
    return pick(rng, (f"{short}市第{rng.randint(1, 40)}中学", f"{place}小学", f"{pick(rng, STEMS)}实验学校",
                      f"{district}{pick(rng, STEMS)}幼儿园"))


def _residential(rng: random.Random, place: str, short: str, district: str) -> str:
    stem = pick(rng, STEMS)
    developer = pick(rng, ("", "", "万科", "保利", "龙湖", "绿地", "碧桂园", "融创"))
    return developer + stem + pick(rng, ("花园", "小区", "家园", "苑", "新村", "公寓", "名都", "华府", "雅居"))


def _government(rng: random.Random, place: str, short: str, district: str) -> str:
    bureau = pick(rng, ("自然资源局", "税务局", "市场监督管理局", "人力资源和社会保障局", "交通运输局"))
    return pick(rng, (f"{district}人民政府", f"{place}街道办事处", f"{short}市公安局{district}分局", f"{short}市{bureau}",
                      f"{district}政务服务中心"))


def _mall(rng: random.Random, place: str, short: str, district: str) -> str:
    return pick(rng, (f"万达广场({place}店)", f"{pick(rng, STEMS)}购物中心", f"吾悦广场({district}店)", f"银泰城({place}店)",
                      f"{short}{pick(rng, STEMS)}天街"))


def _park(rng: random.Random, place: str, short: str, district: str) -> str:
    return pick(rng, (f"{pick(rng, STEMS)}公园", f"{pick(rng, STEMS)}湖公园", f"{place}体育公园", f"{pick(rng, STEMS)}湿地公园"))


def _scenic(rng: random.Random, place: str, short: str, district: str) -> str:
    return pick(rng, (f"{pick(rng, STEMS)}山风景区", f"{short}博物馆", f"{short}{pick(rng, STEMS)}古镇", f"{short}奥林匹克体育中心",
                      f"{short}国际会展中心", f"{pick(rng, STEMS)}寺"))


def _company(rng: random.Random, place: str, short: str, district: str) -> str:
    industry = pick(rng, ("电气", "包装印刷", "智能科技", "物流", "建材", "食品", "纺织", "医疗器械", "网络科技"))
    return f"{short}市{pick(rng, STEMS)}{industry}有限公司"


def _parking(rng: random.Random, place: str, short: str, district: str) -> str:
    return pick(rng, (f"{place}停车场", f"{place}地下停车场", f"{pick(rng, STEMS)}公共停车场"))


_UNBRANDED = {"hospital": _hospital, "school": _school, "residential": _residential, "government": _government,
              "mall": _mall, "park": _park, "scenic": _scenic, "company": _company, "parking": _parking}

CATEGORIES: dict[str, Category] = {c.key: c for c in (
    Category("bank", "金融保险服务;银行;银行", ("中国建设银行", "中国工商银行", "中国农业银行", "中国银行", "招商银行", "交通银行"),
             "支行", ("银行",)),
    Category("coffee", "餐饮服务;咖啡厅;咖啡厅", ("星巴克", "瑞幸咖啡", "库迪咖啡", "Manner Coffee"), "店", ("咖啡店", "咖啡")),
    Category("hotel", "住宿服务;宾馆酒店;经济型连锁酒店", ("如家酒店", "汉庭酒店", "维也纳酒店", "全季酒店", "锦江之星", "亚朵酒店"),
             "店", ("酒店", "宾馆")),
    Category("restaurant", "餐饮服务;中餐厅;中餐厅", ("海底捞火锅", "西贝莜面村", "外婆家", "老乡鸡", "沙县小吃", "东北饺子馆"),
             "店", ("饭店", "餐厅")),
    Category("fastfood", "餐饮服务;快餐厅;快餐厅", ("肯德基", "麦当劳", "汉堡王", "华莱士"), "店", ("快餐", "快餐店")),
    Category("supermarket", "购物服务;超级市场;超市", ("永辉超市", "沃尔玛", "华润万家", "物美超市", "盒马鲜生"), "店", ("超市",)),
    Category("gas", "汽车服务;加油站;加油站", ("中国石化加油站", "中国石油加油站"), "站", ("加油站",)),
    Category("pharmacy", "医疗保健服务;医药保健销售店;药房", ("老百姓大药房", "益丰大药房", "国大药房", "大参林"), "店", ("药店", "药房")),
    Category("parking", "交通设施服务;停车场;停车场", (), "", ("停车场",)),
    Category("hospital", "医疗保健服务;综合医院;综合医院", (), "", ("医院",)),
    Category("school", "科教文化服务;学校;学校", (), "", ("学校",), nearby=False),
    Category("residential", "商务住宅;住宅区;住宅小区", (), "", ("小区",), nearby=False),
    Category("government", "政府机构及社会团体;政府机关;政府机关", (), "", ("政府",), nearby=False),
    Category("mall", "购物服务;商场;购物中心", (), "", ("商场", "购物中心")),
    Category("park", "风景名胜;公园广场;公园", (), "", ("公园",)),
    Category("scenic", "风景名胜;风景名胜;风景名胜", (), "", ("景点", "景区"), nearby=False),
    Category("company", "公司企业;公司;公司", (), "", ("公司",), nearby=False),
)}
NEARBY_CATEGORIES: tuple[str, ...] = tuple(k for k, c in CATEGORIES.items() if c.nearby)
# Kinds of landmark a city gets, with weights (transport hubs and stations are added apart).
LANDMARK_MIX: tuple[tuple[str, int], ...] = (
    ("residential", 30), ("mall", 8), ("hospital", 8), ("school", 8), ("government", 8), ("park", 6), ("scenic", 5),
    ("company", 8), ("hotel", 6), ("bank", 5), ("restaurant", 4), ("supermarket", 4),
)
