"""ID: does the agent's intent label name the gold task scenario?

``ID = 1`` when ``similarity(label, gold scenario) >= 0.7`` **and** no other scenario is more
similar to the label (ties pass); else 0. The similarity of a label to a scenario is the
best, over the scenario's aliases (its English name and everyday English and Chinese
paraphrases in :data:`SCENARIO_ALIASES`), of:

* 1 when the label and the alias are equal after folding (NFKC, lower case, every space,
  underscore and punctuation mark removed: ``"Weather_Query!"`` = ``"weather query"``);
* 1 when their *cores* are equal: the words that name the task, without generic request
  words (English ``query``, ``search``, ``lookup``, ``find``, ``info``, ``a``, ``the``...;
  Chinese ``查询``/``搜索``/``查找``/``情况``/``信息`` as prefix or suffix, ``的`` anywhere), so
  ``天气情况`` = ``天气``, ``POI搜索`` = ``POI Query``, ``查找附近的地点`` = ``附近地点``;
* else the cosine between character 1-3-gram TF-IDF vectors (:func:`char_ngrams`, fitted
  on the aliases; offline, no model download; the values scikit-learn's ``TfidfVectorizer(
  analyzer="char_wb", ngram_range=(1, 3), sublinear_tf=True)`` gives, as the tests check) or
  the rapidfuzz ratio of the folded texts, whichever is higher.

A label made only of generic request words (``"query"``, ``"查询"``) names no task: its
similarity is 0 to every scenario.

**Family names** (decided here, tested in ``tests/test_metrics_intent.py``): the paper's ID
compares the label with the *scenario*, so a family name passes only where it paraphrases
the scenario name. "Preference-Constrained Route Planning" (偏好约束路线规划) differs from
"Option-Constrained Route Planning" by one word and contains "Route-Constrained Planning",
so it is an alias of both and passes for both. "Basic Route Planning" is scored like any
label: it is close to Point-to-Point Planning's "route planning" (passes there) and to no
other scenario of its family (fails for Multi-stop Planning and Traffic Info Query). "Basic
Information Retrieval" and "Route-Dependent Information Retrieval" name no scenario and pass
for none. Another family's scenario never passes: its own name is more similar.

Edge cases: no label (None or blank) -> 0. Unknown gold scenario -> 0. The vectorizer is
fitted lazily on first use and label similarities are cached, so scoring stays fast.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from functools import lru_cache

from rapidfuzz import fuzz

from mobility_env.mobilitybench.episode import SCENARIOS
from mobility_env.tools import bounded_text_cache

INTENT_THRESHOLD = 0.7

_PREFERENCE_FAMILY = ("Preference-Constrained Route Planning", "preference constrained planning",
                      "偏好约束路线规划", "偏好约束规划")
SCENARIO_ALIASES: dict[str, tuple[str, ...]] = {
    "POI Query": ("POI Query", "poi search", "place lookup", "find a place", "place search", "search for a place",
                  "POI查询", "POI搜索", "地点查询", "兴趣点查询", "查找地点", "地点搜索", "找地方", "地址查询"),
    "Geolocation Query": ("Geolocation Query", "where am I", "current location query", "reverse geocoding",
                          "地理位置查询", "定位查询", "当前位置查询", "我在哪", "位置查询"),
    "Nearby Query": ("Nearby Query", "nearby search", "search around", "nearby places", "places nearby",
                     "周边查询", "附近查询", "周边搜索", "附近搜索", "附近有什么", "附近地点", "周边地点",
                     "查找附近的地点"),
    "Weather Query": ("Weather Query", "weather", "weather forecast", "天气查询", "天气预报", "查天气", "天气",
                      "天气情况", "气温查询"),
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
                                          "偏好路线规划", "策略约束路线规划", "路线偏好规划", *_PREFERENCE_FAMILY),
    "Route-Constrained Planning": ("Route-Constrained Planning", "avoid transit line planning",
                                   "line constrained route", "路线约束规划", "避开线路规划", "线路约束规划",
                                   "约束线路规划", "避开某线路的公交规划", *_PREFERENCE_FAMILY),
}

_SEPARATORS = re.compile(r"[\W_]+")
_GENERIC_WORDS = frozenset({"query", "queries", "search", "searching", "lookup", "look", "up", "find", "finding",
                            "get", "check", "info", "information", "a", "an", "the", "of", "for", "to", "please"})
_GENERIC_PREFIXES = ("查一下", "帮我", "查找", "查看", "查询", "搜索", "寻找", "请", "查", "找", "搜")  # longest first
_GENERIC_SUFFIXES = ("查询", "搜索", "查找", "情况", "信息", "一下")
_GENERIC_CHINESE = frozenset(_GENERIC_PREFIXES + _GENERIC_SUFFIXES)


def _words(text: str) -> list[str]:
    return [w for w in _SEPARATORS.split(unicodedata.normalize("NFKC", text).lower()) if w]


def fold_label(text: str) -> str:
    """NFKC, lower case, spaces, underscores and punctuation removed."""
    return "".join(_words(text))


def _core_word(word: str) -> str:
    word = word.replace("的", "")
    previous = None
    while word and word != previous and word not in _GENERIC_WORDS and word not in _GENERIC_CHINESE:
        previous = word
        prefix = next((p for p in _GENERIC_PREFIXES if word.startswith(p)), "")
        word = word[len(prefix):]
        suffix = next((s for s in _GENERIC_SUFFIXES if word.endswith(s)), "")
        word = word[: len(word) - len(suffix)]
    return "" if word in _GENERIC_WORDS or word in _GENERIC_CHINESE else word


def label_core(text: str) -> str:
    """The words of a label that name the task (see the module docstring)."""
    return "".join(_core_word(w) for w in _words(text))


def _alias_table() -> tuple[list[str], list[str]]:
    texts, owners = [], []
    for scenario in SCENARIOS:
        for alias in SCENARIO_ALIASES.get(scenario, (scenario,)):
            texts.append(alias)
            owners.append(scenario)
    return texts, owners


def char_ngrams(text: str) -> list[str]:
    """Character 1-3-grams of each whitespace-separated word, padded with one space on each side
    (a word shorter than n gives its padded self once): ``"ab"`` -> ``" ", "a", "b", " ", " a", "ab",
    "b ", " ab", "ab "``. The same n-grams as scikit-learn's ``analyzer="char_wb"``, which the tests
    check; written here so that scoring never imports scikit-learn (about a second per process)."""
    grams: list[str] = []
    for word in text.lower().split():
        padded = f" {word} "
        for n in (1, 2, 3):
            if len(padded) <= n:
                grams.append(padded)
                break
            grams.extend(padded[i:i + n] for i in range(len(padded) - n + 1))
    return grams


class _TfidfIndex:
    """Sublinear-tf, smoothed-idf, L2-normalised TF-IDF over :func:`char_ngrams`, fitted on the aliases.

    ``idf(t) = ln((1 + n) / (1 + df(t))) + 1``, ``tf = 1 + ln(count)``; n-grams never seen in the
    aliases are ignored. ``cosines(text)`` is every alias's cosine with ``text``.
    """

    def __init__(self, documents: list[str]):
        counts = [Counter(char_ngrams(doc)) for doc in documents]
        df = Counter(gram for doc in counts for gram in doc)
        size = len(documents)
        self.idf = {gram: math.log((1 + size) / (1 + freq)) + 1.0 for gram, freq in df.items()}
        self.vectors = [self._vector(doc) for doc in counts]

    def _vector(self, counts: Counter) -> dict[str, float]:
        weights = {g: (1.0 + math.log(c)) * self.idf[g] for g, c in counts.items() if g in self.idf}
        norm = math.sqrt(sum(w * w for w in weights.values()))
        return {g: w / norm for g, w in weights.items()} if norm else {}

    def cosines(self, text: str) -> list[float]:
        query = self._vector(Counter(char_ngrams(text)))
        return [sum(w * vector.get(g, 0.0) for g, w in query.items()) for vector in self.vectors]


@lru_cache(maxsize=1)
def _fitted() -> tuple[_TfidfIndex, list[str], list[str], list[str]]:
    """(alias TF-IDF index, alias owners, folded aliases, alias cores)."""
    texts, owners = _alias_table()
    index = _TfidfIndex([" ".join(_words(t)) for t in texts])
    return index, owners, [fold_label(t) for t in texts], [label_core(t) for t in texts]


@bounded_text_cache(4096, 256)  # agents choose labels: long ones are not kept
def scenario_similarities(label: str) -> dict[str, float]:
    """Best similarity of ``label`` to each scenario, in [0, 1]."""
    folded, core = fold_label(label), label_core(label)
    best = dict.fromkeys(SCENARIOS, 0.0)
    if not core:  # blank, or only generic request words ("query", "查询"): names no task
        return best
    index, owners, folds, cores = _fitted()
    for owner, alias_fold, alias_core in zip(owners, folds, cores):
        if folded == alias_fold or (core and core == alias_core):
            best[owner] = 1.0
    if max(best.values()) == 1.0:
        return best
    cosines = index.cosines(" ".join(_words(label)))
    for cosine, owner, alias_fold in zip(cosines, owners, folds):
        score = max(float(cosine), fuzz.ratio(alias_fold, folded) / 100.0)
        best[owner] = max(best[owner], min(score, 1.0))
    return best


def intent_score(label: str | None, gold_scenario: str) -> float:
    """ID in {0, 1}; see the module docstring."""
    if not isinstance(label, str) or not label.strip() or gold_scenario not in SCENARIOS:
        return 0.0
    similarities = scenario_similarities(label.strip())
    gold = similarities[gold_scenario]
    return 1.0 if gold >= INTENT_THRESHOLD and gold >= max(similarities.values()) else 0.0
