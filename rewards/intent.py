"""ID: does the agent's intent label name the gold task scenario?

``ID = 1`` when ``similarity(label, gold scenario) >= 0.7`` **and** no other scenario is more
similar to the label; else 0. The similarity of a label to a scenario is the best, over the
scenario's aliases (its English name and Chinese paraphrases in :data:`SCENARIO_ALIASES`),
of the cosine between character 1-3-gram TF-IDF vectors (scikit-learn, fitted on the
aliases; offline, no model download) and of a rapidfuzz ratio; an alias equal to the label
after folding scores 1.

Edge cases: no label (None or blank) -> 0. Unknown gold scenario -> 0. The vectorizer is
fitted lazily on first use and label similarities are cached, so scoring stays fast.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

from rapidfuzz import fuzz

from mobility_env.episode import SCENARIOS

from .slots import fold_text

if TYPE_CHECKING:
    from sklearn.feature_extraction.text import TfidfVectorizer

INTENT_THRESHOLD = 0.7

SCENARIO_ALIASES: dict[str, tuple[str, ...]] = {
    "POI Query": ("POI Query", "poi search", "place lookup", "POI查询", "地点查询", "兴趣点查询", "查找地点", "地点搜索",
                  "找地方", "地址查询"),
    "Geolocation Query": ("Geolocation Query", "where am I", "current location query", "reverse geocoding",
                          "地理位置查询", "定位查询", "当前位置查询", "我在哪", "位置查询"),
    "Nearby Query": ("Nearby Query", "nearby search", "search around", "周边查询", "附近查询", "周边搜索", "附近搜索",
                     "附近有什么"),
    "Weather Query": ("Weather Query", "weather", "weather forecast", "天气查询", "天气预报", "查天气", "天气"),
    "Route Property Query": ("Route Property Query", "route distance query", "distance query", "how far",
                             "路线属性查询", "距离查询", "路程查询", "路线距离查询", "多远"),
    "Arrival/Departure Time Query": ("Arrival/Departure Time Query", "departure time query", "arrival time query",
                                     "when to leave", "到达时间查询", "出发时间查询", "到达/出发时间查询", "几点出发",
                                     "出发到达时间查询"),
    "Point-to-Point Planning": ("Point-to-Point Planning", "route planning", "navigation", "point to point route",
                                "点到点规划", "点对点路线规划", "路线规划", "导航", "两点路线规划"),
    "Multi-stop Planning": ("Multi-stop Planning", "multi stop route", "waypoint planning", "route with waypoints",
                            "多点规划", "多途经点规划", "途经点路线规划", "多站点规划", "途经点规划"),
    "Traffic Info Query": ("Traffic Info Query", "traffic status", "traffic query", "road traffic", "路况查询",
                           "交通信息查询", "交通状况查询", "堵车查询", "路况"),
    "Option-Constrained Route Planning": ("Option-Constrained Route Planning", "route preference planning",
                                          "strategy constrained route", "avoid highways route", "选项约束路线规划",
                                          "偏好路线规划", "策略约束路线规划", "偏好约束路线规划", "路线偏好规划"),
    "Route-Constrained Planning": ("Route-Constrained Planning", "avoid transit line planning",
                                   "line constrained route", "路线约束规划", "避开线路规划", "线路约束规划",
                                   "约束线路规划", "避开某线路的公交规划"),
}


def _alias_table() -> tuple[list[str], list[str]]:
    texts, owners = [], []
    for scenario in SCENARIOS:
        for alias in SCENARIO_ALIASES.get(scenario, (scenario,)):
            texts.append(alias.lower())
            owners.append(scenario)
    return texts, owners


@lru_cache(maxsize=1)
def _fitted() -> tuple[TfidfVectorizer, object, list[str], list[str]]:
    from sklearn.feature_extraction.text import TfidfVectorizer

    texts, owners = _alias_table()
    vectorizer = TfidfVectorizer(analyzer="char_wb", ngram_range=(1, 3), sublinear_tf=True)
    matrix = vectorizer.fit_transform(texts)
    return vectorizer, matrix, texts, owners


@lru_cache(maxsize=4096)
def scenario_similarities(label: str) -> dict[str, float]:
    """Best similarity of ``label`` to each scenario, in [0, 1]."""
    folded = fold_text(label)
    best = dict.fromkeys(SCENARIOS, 0.0)
    if not folded:
        return best
    texts, owners = _alias_table()
    for alias, owner in zip(texts, owners):
        if fold_text(alias) == folded:
            best[owner] = 1.0
    if max(best.values()) == 1.0:
        return best
    vectorizer, matrix, texts, owners = _fitted()
    vector = vectorizer.transform([label.lower()])
    cosines = (matrix @ vector.T).toarray().ravel()
    for cosine, alias, owner in zip(cosines, texts, owners):
        score = max(float(cosine), fuzz.ratio(fold_text(alias), folded) / 100.0)
        best[owner] = max(best[owner], min(score, 1.0))
    return best


def intent_score(label: str | None, gold_scenario: str) -> float:
    """ID in {0, 1}; see the module docstring."""
    if not isinstance(label, str) or not label.strip() or gold_scenario not in SCENARIOS:
        return 0.0
    similarities = scenario_similarities(label.strip())
    gold = similarities[gold_scenario]
    return 1.0 if gold >= INTENT_THRESHOLD and gold >= max(similarities.values()) else 0.0
