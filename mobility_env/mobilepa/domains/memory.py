"""The assistant's long-term memory of the user: the ``memories`` table and the tools that read and write it.

A memory is one dated record (``memory_id``, ``content``: one sentence, ``category``, ``created_at``,
``updated_at``, and ``key``: what it is about, for the task generator; agents never see the key).
User profiles (:mod:`mobility_env.mobilepa.profile`) plant records whose ids are random
(``mem-`` and 8 hex digits), so an id cannot be guessed: it has to be read from a tool's answer.

**Retrieval.** :func:`search_memory` ranks the records against a query and returns the ``top_k``
best (default 5, at most 10) with their ids, content and dates:

* terms: Chinese is split into character bigrams (and single characters, weighted low, stop
  characters such as 我/的 left out); English into words, lower-cased, stop words left out, lightly
  stemmed (``lives``/``living``/``lived`` → ``liv``), a run of letters and digits kept whole; numbers as
  numbers (``07`` is ``7``);
* concepts: a small bilingual synonym table (:data:`CONCEPTS`) maps words about the same thing
  (家/住/home/live, 地铁/metro/subway, 老板/boss…) to one term, so a paraphrase or a query in the other
  language still meets the record; each record also carries its category's concept
  (:data:`CATEGORY_CONCEPTS`: a "where" question leans to places, a "when" one to routines);
* score: the share of the query's term weight (inverse document frequency over this user's records)
  that the record covers, plus a fuzzy bonus (``rapidfuzz`` ``partial_ratio`` of query and text, which
  forgives typos) and a small recency bonus (of two records that match alike, the newer ranks first;
  it does not outweigh a better match, so an outdated record may rank above the current one: the dates
  in the payload tell them apart);
* a record enters the results when it covers ``MIN_COVERAGE`` of the query or is a close fuzzy match
  (``partial_ratio`` ≥ ``FUZZY_ALONE``), and scores at least ``RELATIVE_CUTOFF`` of the best hit;
* each result is marked ``match: "strong"`` when the query singles it out — it covers at least
  ``STRONG_COVERAGE`` of the query, and the records covering about as much (within ``RIVAL_MARGIN``) are of
  at most ``MAX_RIVALS`` topics (a topic is a profile record's key: the dated versions of one fact are one topic)
  — and ``"partial"`` otherwise: a general query (``usually``, ``时间``, ``我 喜欢 习惯 平时``) usually matches
  records of many topics about alike, and one about several things at once (``home work place 家 公司``) covers
  only part of it with each. The memory gate counts only strong matches as retrieved
  (:mod:`mobility_rewards.mobilepa.memory_gate`).

A query with no searchable term (only stop words, single letters, punctuation or numbers) is a
``schema_error``: it cannot say what to look for. The terms of a text are analysed once per process
(an LRU cache: profiles and episodes repeat their texts), the rest per search.

:func:`list_memories` shows the ``LIST_LIMIT`` most recently changed records of one category (the
category is required; ``more`` says whether there are others): a glance at what changed lately, not a
dump of the profile. :func:`get_memory` reads one record by id; :func:`update_memory` changes a
record's content and sets its ``updated_at`` to the phone's clock (``created_at`` stays).
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from typing import Any, Sequence

from rapidfuzz import fuzz, process

from ...tools import ArgumentError, ParamSpec
from ...trajectory import ErrorKind
from ..catalogue import Feedback, failure, success, tool
from ..params import choice, integer, passage, text
from ..state import PhoneState

DOMAIN = "ai_assistant"
MEMORY_CATEGORIES = ("preference", "person", "place", "schedule", "fact")
DEFAULT_TOP_K, MAX_TOP_K = 5, 10
LIST_LIMIT = 5
MAX_QUERY = 200
MIN_COVERAGE = 0.2  # share of the query's weight a record must cover to be a hit
FUZZY_ALONE = 85  # partial_ratio that makes a hit on its own (a typo'd query)
RELATIVE_CUTOFF = 0.25  # hits below this share of the best score are left out
STRONG_COVERAGE, MAX_RIVALS, RIVAL_MARGIN = 0.3, 3, 0.1  # a strong match (see hits)
FUZZY_WEIGHT, RECENCY_WEIGHT = 0.3, 0.1
UNIGRAM, WORD, CONCEPT = 0.3, 1.0, 1.5  # term weights
WEAK_CONCEPTS = {"@habit": 0.5}  # concepts too general to say much (习惯/prefer/usually...)
UNSEEN = 3.0  # a query word no record has weighs as one in a third of them

#: Words about one thing, in both languages: each maps to the concept term ``@name``. Chinese forms match as
#: substrings, English forms as (stemmed) words.
CONCEPTS: dict[str, tuple[str, ...]] = {
    "home": ("家", "住", "搬", "小区", "公寓", "home", "house", "live", "apartment", "flat", "moved"),
    "travel": ("出行", "出门", "交通", "路上", "travel", "trip", "get around", "getting around", "transport",
               "transportation"),
    "name": ("名字", "叫", "姓名", "称呼", "name", "called"),
    # what a record's category answers (each record carries its category's concept, see CATEGORY_CONCEPTS)
    "where": ("哪里", "哪儿", "在哪", "去哪", "地址", "位置", "地方", "where", "address", "location", "place"),
    "when": ("几点", "时间", "什么时候", "哪天", "作息", "安排", "when", "time", "schedule", "routine", "days"),
    "who": ("谁", "who", "whom", "person"),
    "work": ("上班", "公司", "单位", "工作", "办公", "通勤", "work", "office", "job", "company", "workplace",
             "commute", "employer"),
    "school": ("学校", "上学", "孩子", "幼儿园", "小学", "中学", "接送", "school", "kid", "kids", "child", "children",
               "son", "daughter"),
    "gym": ("健身", "锻炼", "运动", "撸铁", "gym", "workout", "exercise", "fitness", "training"),  # 'work out' too
    "wake": ("起床", "醒", "闹钟", "早起", "wake", "alarm", "get up", "rise"),
    "sleep": ("睡", "就寝", "上床", "sleep", "bed", "bedtime", "asleep"),
    "music": ("音乐", "听歌", "歌", "曲", "music", "song", "songs", "listen", "playlist", "tunes"),
    "screen": ("亮度", "屏幕", "显示", "刺眼", "brightness", "screen", "display", "dim", "bright"),
    "quiet": ("免打扰", "勿扰", "静音", "打扰", "disturb", "dnd", "silent", "quiet", "mute", "notifications"),
    "car": ("开车", "驾车", "自驾", "驾驶", "车", "drive", "driving", "car", "motor"),
    "transit": ("地铁", "公交", "公共交通", "轨道交通", "metro", "subway", "bus", "transit", "underground"),
    "foot": ("走路", "步行", "走着", "walk", "walking", "foot"),
    "ride": ("打车", "网约车", "出租", "叫车", "专车", "快车", "taxi", "ride", "cab", "hail", "didi", "uber"),
    "highway": ("高速", "highway", "highways", "motorway", "freeway", "expressway"),
    "toll": ("收费", "过路费", "toll", "tolls", "fee", "fees"),
    "jam": ("拥堵", "堵车", "堵", "traffic", "congestion", "jam", "jams"),
    "mother": ("妈妈", "母亲", "老妈", "妈", "mom", "mother", "mum", "mama"),
    "father": ("爸爸", "父亲", "老爸", "爸", "dad", "father", "papa"),
    "spouse": ("老婆", "妻子", "爱人", "太太", "媳妇", "wife", "spouse"),
    "sibling": ("哥哥", "姐姐", "妹妹", "弟弟", "brother", "sister", "sibling"),
    "boss": ("老板", "领导", "上司", "经理", "boss", "manager", "supervisor"),
    "landlord": ("房东", "landlord"),
    "grandma": ("外婆", "奶奶", "姥姥", "grandma", "grandmother", "granny", "nana"),
    "birthday": ("生日", "出生", "birthday", "born"),
    "allergy": ("过敏", "allergy", "allergic", "allergies"),
    "plate": ("车牌", "牌照", "plate", "license", "registration"),
    "habit": ("习惯", "偏好", "喜欢", "平时", "一般", "通常", "常", "prefer", "preference", "like", "usually", "habit",
              "favorite", "favourite", "always"),
}
#: The concept each record carries for its category: a 'where' question leans to places, a 'when' one to routines.
CATEGORY_CONCEPTS = {"place": "@where", "schedule": "@when", "person": "@who", "preference": "@habit"}
# Chinese runs, and runs of ASCII letters and digits (an id like 'mem-3fa2b1c0' stays whole: it matches nothing)
_TOKEN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]+|[a-z0-9]+")
_STOP_CHARS = frozenset("我的了是在和也就都把被吗呢吧啊呀有个这那一么什要请帮给你他她它们几哪怎啥谁多少")
_JOINED = re.compile(r"\bwork(?:ing|s|ed)? out\b")  # 'work out' is one word: the gym, not the job
_STOP_WORDS = frozenset(("a", "an", "the", "i", "me", "my", "mine", "you", "your", "is", "are", "am", "was", "were",
                         "be", "been", "do", "does", "did", "to", "of", "in", "on", "at", "for", "and", "or", "what",
                         "which", "who", "whom", "where", "when", "how", "it", "its", "this", "that", "with", "about",
                         "please", "can", "could", "tell", "us", "we", "our", "any", "some", "there", "s"))


def _stem(word: str) -> str:
    """A light English stemmer: plural, -ing, -ed and a final -e go (``drives``, ``driving``, ``drove`` aside)."""
    if len(word) > 4 and word.endswith("ies"):
        word = word[:-3] + "y"
    elif len(word) > 5 and word.endswith("ing"):
        word = word[:-3]
    elif len(word) > 4 and word.endswith("ed"):
        word = word[:-2]
    elif len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        word = word[:-1]
    if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "aeiouls":  # preferr -> prefer, runn -> run
        word = word[:-1]
    if len(word) > 3 and word.endswith("e"):
        word = word[:-1]
    return word


_CONCEPT_WORDS: dict[str, str] = {}  # stemmed English form -> concept term
_CONCEPT_PHRASES: dict[str, list[tuple[str, str]]] = {}  # Chinese and multi-word forms by first character
for _name, _forms in CONCEPTS.items():
    for _form in _forms:
        if _form.isascii() and " " not in _form:
            _CONCEPT_WORDS[_stem(_form)] = "@" + _name
        else:
            _CONCEPT_PHRASES.setdefault(_form[0], []).append((_form, "@" + _name))


@functools.lru_cache(maxsize=65536)
def analyze(text_value: str, grams: bool = True) -> dict[str, float]:
    """A text's terms and their weights (see the module docstring); cached, as profiles repeat their texts.

    Kinds of term never share a key (a character, a bigram, a word, a number, an ``@concept``), so each is
    simply set: a term repeated in the text weighs what it weighs once. ``grams=False`` leaves the Chinese
    characters and bigrams out (a record's are looked up in its text instead, see :func:`rank`)."""
    lowered = _JOINED.sub("workout", text_value.casefold())
    terms: dict[str, float] = {}
    for run in _TOKEN.findall(lowered):
        if run.isdigit():
            terms[str(int(run))] = WORD
        elif run.isascii():
            if len(run) > 1 and run not in _STOP_WORDS:
                stem = _stem(run)
                terms[stem] = WORD
                concept = _CONCEPT_WORDS.get(stem)
                if concept is not None:
                    terms[concept] = WEAK_CONCEPTS.get(concept, CONCEPT)
        elif grams:
            terms.update(dict.fromkeys(set(run) - _STOP_CHARS, UNIGRAM))
            terms.update(dict.fromkeys([pair for pair in map(str.__add__, run, run[1:])
                                        if pair[0] not in _STOP_CHARS or pair[1] not in _STOP_CHARS], WORD))
    for char in set(lowered).intersection(_CONCEPT_PHRASES):  # only forms that start with a character of the text
        for form, concept in _CONCEPT_PHRASES[char]:
            if form in lowered:
                terms[concept] = WEAK_CONCEPTS.get(concept, CONCEPT)
    return terms


def searchable(query: str) -> bool:
    """Whether a query has a term to look for: stop words, single letters, punctuation and numbers alone have
    none (a number says nothing about what the memory is about)."""
    return any(not term.isdigit() for term in analyze(query))


def check_query(name: str, value: Any) -> ArgumentError | None:
    if not isinstance(value, str) or not value.strip():
        return ArgumentError(name, "type", f"expected a non-empty string, got {value!r:.40}")
    if len(value) > MAX_QUERY:
        return ArgumentError(name, "max_length", f"at most {MAX_QUERY} characters, got {len(value)}")
    if not searchable(value):
        return ArgumentError(name, "no_terms", f"{value!r:.40} has nothing to search for: name what the memory is "
                             "about, e.g. 'home address' or '妈妈 生日'")
    return None


@functools.lru_cache(maxsize=65536)
def record_terms(content: str, category: str | None) -> tuple[dict[str, float], str]:
    """A record's words, numbers and concepts (its category's too, :data:`CATEGORY_CONCEPTS`), and its lower-cased
    text, in which a query's Chinese characters and bigrams are looked up."""
    terms = analyze(content, grams=False)
    concept = CATEGORY_CONCEPTS.get(category or "")
    if concept is not None and concept not in terms:
        terms = {**terms, concept: WEAK_CONCEPTS.get(concept, CONCEPT)}
    return terms, content.casefold()


def rank(rows: Sequence[Sequence[Any]], query: str, top_k: int = DEFAULT_TOP_K) -> list[int]:
    """Positions of ``rows`` (``(memory_id, content, category, created_at, updated_at)``) that answer ``query``,
    best first (see the module docstring)."""
    return [position for position, _ in hits(rows, query, top_k)]


def hits(rows: Sequence[Sequence[Any]], query: str, top_k: int = DEFAULT_TOP_K) -> list[tuple[int, bool]]:
    """:func:`rank`'s positions, each with whether it is a **strong** match: the record covers at least
    ``STRONG_COVERAGE`` of the query's weight and the query singles it out (the records that cover within
    ``RIVAL_MARGIN`` of what it covers, itself included, are of at most ``MAX_RIVALS`` topics). A row's topic is
    its sixth element (the record's ``key``) when it has one and is set, else its id."""
    terms = analyze(query)
    if not terms or not rows:
        return []
    docs = [record_terms(row[1] or "", row[2]) for row in rows]
    shared = [list(terms.keys() & keyed.keys()) for keyed, _ in docs]
    for gram in [term for term in terms if not term.isascii()]:  # Chinese characters and bigrams: in the text
        for common, (_, text_value) in zip(shared, docs):
            if gram in text_value:
                common.append(gram)
    found = Counter(term for common in shared for term in common)
    count = len(docs)
    # term weight x inverse document frequency over these records; a query word no record has (UNSEEN) still
    # weighs: a query mostly about something else should not be answered by the one record that shares a word
    weights = {term: weight * math.log(1.0 + count / found[term] if term in found else UNSEEN)
               for term, weight in terms.items()}
    total = sum(weights.values())
    lowered = query.casefold()
    ratios = [0.0] * count
    if len(lowered) >= 4 or found:
        for _, ratio, position in process.extract(lowered, [text_value for _, text_value in docs],
                                                  scorer=fuzz.partial_ratio, limit=None):
            ratios[position] = ratio
    dates = [row[4] or row[3] or "" for row in rows]
    newest_first = sorted(range(count), key=lambda i: (dates[i], rows[i][0]))
    recency = [0.0] * count
    for order, position in enumerate(newest_first):
        recency[position] = order / max(count - 1, 1)
    scored = []
    for position, common in enumerate(shared):
        keyed = docs[position][0]
        coverage = sum(weights[t] * min(1.0, keyed.get(t, terms[t]) / terms[t]) for t in common) / total \
            if common else 0.0
        ratio = ratios[position]
        if coverage < MIN_COVERAGE and ratio < FUZZY_ALONE:
            continue
        score = coverage + FUZZY_WEIGHT * max(0.0, ratio - 50.0) / 50.0 + RECENCY_WEIGHT * recency[position]
        scored.append((score, position, coverage))
    if not scored:
        return []
    best = max(hit[0] for hit in scored)
    scored.sort(key=lambda hit: (-hit[0], rows[hit[1]][0]))
    topics = [(rows[position][5] if len(rows[position]) > 5 else None) or rows[position][0]
              for _, position, _ in scored]

    def singled_out(coverage: float) -> bool:
        rivals = {topic for (_, _, other), topic in zip(scored, topics) if other >= coverage - RIVAL_MARGIN}
        return coverage >= STRONG_COVERAGE and len(rivals) <= MAX_RIVALS

    return [(position, singled_out(coverage)) for score, position, coverage in scored[:top_k]
            if score >= RELATIVE_CUTOFF * best]


_COLUMNS = ("memory_id", "content", "category", "created_at", "updated_at")
_SELECT = f"SELECT {', '.join(_COLUMNS)} FROM memories"


def _record(row: Sequence[Any]) -> dict[str, Any]:
    return dict(zip(_COLUMNS, row))


@tool("search_memory", DOMAIN, "Search what the assistant remembers about the user (places, people, routines, "
      "preferences); the best matches first, with their ids and dates, each marked 'strong' (the query singles it "
      "out) or 'partial' (it matches only some of the query, or the query is too general to single it out).",
      ParamSpec("query", "string", "what to look for, e.g. 'home address', 'how I get to work' or '妈妈 生日'", True,
                "text", check=check_query),
      integer("top_k", f"how many matches to return (default {DEFAULT_TOP_K})", 1, MAX_TOP_K, required=False))
def search_memory(state: PhoneState, args: dict[str, Any]) -> Feedback:
    # (rank's ties go by memory_id, not by the table's order; the key tells a record's topic, see hits)
    rows = state.conn.execute(f"SELECT {', '.join(_COLUMNS)}, key FROM memories").fetchall()
    found = hits(rows, args["query"], args.get("top_k") or DEFAULT_TOP_K)
    return success(memories=[{**_record(rows[i]), "match": "strong" if strong else "partial"} for i, strong in found])


@tool("get_memory", DOMAIN, "Read one memory by its id.", text("memory_id", "the memory (search_memory)"))
def get_memory(state: PhoneState, args: dict[str, Any]) -> Feedback:
    row = state.conn.execute(_SELECT + " WHERE memory_id = ?", (args["memory_id"],)).fetchone()
    if row is None:
        return failure(ErrorKind.NOT_FOUND, f"no memory {args['memory_id']!r}; search_memory finds them")
    return success(memory=_record(row))


@tool("list_memories", DOMAIN, f"The {LIST_LIMIT} most recently changed memories of one category (search_memory "
      "finds the others).", choice("category", "which kind of memory", MEMORY_CATEGORIES))
def list_memories(state: PhoneState, args: dict[str, Any]) -> Feedback:
    rows = state.conn.execute(_SELECT + " WHERE category = ? ORDER BY coalesce(updated_at, created_at) DESC, "
                              f"memory_id LIMIT {LIST_LIMIT + 1}", (args["category"],)).fetchall()
    return success(memories=[_record(row) for row in rows[:LIST_LIMIT]], more=len(rows) > LIST_LIMIT)


MEMORY_OFF = "the assistant's memory is off: turn it on first (set_memory_enabled)"


@tool("save_memory", DOMAIN, "Remember something about the user for later.",
      passage("content", "the fact, in one sentence", max_length=500), choice("category", "kind", MEMORY_CATEGORIES),
      writes=("memories", "counters"))
def save_memory(state: PhoneState, args: dict[str, Any]) -> Feedback:
    if state.setting("assistant_memory", "on") != "on":
        return failure(ErrorKind.STATE_CONFLICT, MEMORY_OFF, setting="assistant_memory", value="off")
    content = args["content"].strip()
    clash = state.one("SELECT memory_id FROM memories WHERE content = ?", (content,))
    if clash is not None:
        return failure(ErrorKind.STATE_CONFLICT, f"already remembered ({clash['memory_id']})",
                       memory_id=clash["memory_id"])
    memory_id = state.next_id("memory")
    now = state.setting("clock", "")
    state.execute("INSERT INTO memories (memory_id, content, category, created_at, updated_at) VALUES (?, ?, ?, ?, ?)",
                  (memory_id, content, args["category"], now, now))
    return success(memory_id=memory_id)


@tool("update_memory", DOMAIN, "Correct a memory's content (its update time becomes now).",
      text("memory_id", "the memory (search_memory)"), passage("content", "the corrected fact", max_length=500),
      writes=("memories",))
def update_memory(state: PhoneState, args: dict[str, Any]) -> Feedback:
    row = state.one("SELECT content FROM memories WHERE memory_id = ?", (args["memory_id"],))
    if row is None:
        return failure(ErrorKind.NOT_FOUND, f"no memory {args['memory_id']!r}; search_memory finds them")
    content = args["content"].strip()
    if row["content"] == content:
        return failure(ErrorKind.STATE_CONFLICT, f"memory {args['memory_id']} already says that")
    now = state.setting("clock", "")
    state.execute("UPDATE memories SET content = ?, updated_at = ? WHERE memory_id = ?",
                  (content, now, args["memory_id"]))
    return success(memory_id=args["memory_id"], content=content, updated_at=now)


@tool("delete_memory", DOMAIN, "Forget a memory.", text("memory_id", "the memory (search_memory)"),
      writes=("memories",))
def delete_memory(state: PhoneState, args: dict[str, Any]) -> Feedback:
    if state.execute("DELETE FROM memories WHERE memory_id = ?", (args["memory_id"],)) == 0:
        return failure(ErrorKind.NOT_FOUND, f"no memory {args['memory_id']!r}; search_memory finds them")
    return success(memory_id=args["memory_id"], deleted=True)
