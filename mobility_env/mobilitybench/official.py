"""Mapping between one official MobilityBench row and an :class:`Episode`.

Official rows carry the gold tool calls in ``tool_list`` and the recorded responses in
scenario-specific columns. Which column answers which gold call:

==========================  ==================================================
gold call                   response column
==========================  ==================================================
query_poi                   std_start / std_transit / std_end (matched by the
                            keywords against query_start/transit/end_poi), else
                            poi_result
driving/walking/bicycling/  route_ans
bus_route
reverse_geocoding           location_ans
search_around_poi           near_poi_ans
weather_query               weather
traffic_status(_road_api)   ans
==========================  ==================================================

Synthetic sets add one column, ``sandbox_extra``: a list of ``{"name", "arguments",
"response"}`` alternatives recorded beside the gold calls.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from .episode import FAMILY_OF, SCENARIOS, Episode, RecordedCall, Repair, ToolCall, stable_episode_id
from ..errors import RowError
from ..literal import (DEFAULT_LIMITS, CellLimits, CellParseError, at_excel_limit, json_value_problem, parse_cell,
                       text_problem, utf8_size)
from ..tools import TOOLS, canonical_tool_name

OFFICIAL_COLUMNS: tuple[str, ...] = (
    "query", "context", "task_scenario", "intent_family", "strategy_list", "query_start_poi",
    "query_transit_poi", "query_end_poi", "std_start", "std_transit", "std_end", "city", "tool_list",
    "route_ans", "user_loc", "road", "ans", "key_info", "location_ans", "formatted_address",
    "llm_ner_ans", "bus_lines_list", "matched_transit_index", "query_poi", "near_poi_info",
    "poi_result", "centre_loc", "near_poi_ans", "time", "weather", "weather_description",
    "ans_loc", "duration",
)
EXTRA_CALLS_COLUMN = "sandbox_extra"
CORE_COLUMNS = ("query", "context", "task_scenario", "intent_family", "tool_list")
# declared with each tool (ToolSpec.official_column); query_poi's responses live in the POI columns below
RESPONSE_COLUMN_BY_TOOL = {name: spec.official_column for name, spec in TOOLS.items() if spec.official_column}
POI_COLUMNS = (("query_start_poi", "std_start"), ("query_transit_poi", "std_transit"), ("query_end_poi", "std_end"))
RESPONSE_COLUMNS = frozenset(RESPONSE_COLUMN_BY_TOOL.values()) | {"poi_result", "std_start", "std_transit", "std_end"}
MODE_OF_TOOL = {name: spec.mode for name, spec in TOOLS.items() if spec.mode}
_MODE_WORDS = {"驾车": "driving", "公交": "transit", "地铁": "transit", "步行": "walking", "骑行": "bicycling"}


#: columns that hold Python literals, and the container types each may hold; every other column is text
LITERAL_COLUMN_TYPES: dict[str, tuple[type, ...]] = {
    "context": (dict,), "tool_list": (list,), "strategy_list": (list, tuple), "bus_lines_list": (list, tuple),
    "key_info": (dict, list), EXTRA_CALLS_COLUMN: (list,),
    **{column: (dict, list) for column in sorted(RESPONSE_COLUMNS)},
}
_KIND_NAMES: dict[type, str] = {dict: "dict", list: "list", tuple: "tuple"}


def _parse(value: Any, column: str, repairs: list[Repair], fail: Callable[[str, str], RowError],
           limits: CellLimits) -> Any:
    """The value of one cell: text columns stay text, literal columns are parsed and type-checked.

    A literal cell that is not a literal, is over ``limits`` or holds the wrong type raises
    RowError (via ``fail``): malformed cells are rejected, never turned into other gold. The
    one repair: a *response* cell cut at exactly Excel's limit whose text is a valid literal up
    to the cut keeps its complete list elements (recorded as a ``truncated`` repair); a cut
    that leaves no complete element is rejected.
    """
    if _is_missing(value):
        return None
    expected = LITERAL_COLUMN_TYPES.get(column)
    if expected is None:
        if isinstance(value, str):
            return value.strip()
        problem = json_value_problem(value, max_depth=limits.max_depth)
        if problem is not None:
            raise fail(column, problem)
        return value
    if isinstance(value, str):
        cut = column in RESPONSE_COLUMNS and at_excel_limit(value)
        try:
            parsed = parse_cell(value, limits=limits, repair=cut)
        except CellParseError as exc:
            if exc.incomplete:
                hint = "cut at the Excel limit and not repairable" if cut else \
                    "cut short (not at the Excel limit of 32,767 characters, so not an Excel cut)"
                raise fail(column, f"{hint}: {exc}") from exc
            raise fail(column, f"malformed cell: {exc}") from exc
        if parsed.repaired:
            if not parsed.kept:
                raise fail(column, f"cut at the Excel limit with no complete element left ({parsed.detail})")
            repairs.append(Repair(column=column, kind="truncated", detail=parsed.detail))
        value = parsed.value
    if not isinstance(value, expected):
        kinds = " or ".join(_KIND_NAMES[t] for t in expected)
        got = f"text {value!r:.60}" if isinstance(value, str) else type(value).__name__
        raise fail(column, f"expected a {kinds} literal, got {got}")
    problem = json_value_problem(value, max_depth=limits.max_depth)
    if problem is not None:
        raise fail(column, problem)
    return value


def _is_missing(value: Any) -> bool:
    return (value is None or (isinstance(value, float) and value != value)
            or (isinstance(value, str) and not value.strip()))


# ---------------------------------------------------------------- excluded transit lines
# ``llm_ner_ans`` holds the lines a route query excludes, written by an LLM in many forms.
# The parser below reads it as a sequence of tokens; see :func:`parse_excluded_lines`.

#: characters that never occur inside a line name's prefix (function words, riding verbs)
_STOP = "的了么怎去到从在是坐乘搭走要想不别和与及或还也就请输我你您他她这那哪什吗呢吧啊给把被让换用号线路轨达往向经过"
_NAME_CHAR = rf"(?:(?![{_STOP}])[A-Za-z\u4e00-\u9fff])"
_WORD = re.compile(rf"{_NAME_CHAR}+")
_CN_DIGITS = "〇零一二两三四五六七八九十百"
_NUMBERED = re.compile(rf"(?:轨道交通|轨交|城轨)?{_NAME_CHAR}{{0,6}}?(?:\d+|[{_CN_DIGITS}]+)"
                       r"(?P<suffix>号线|快线|支线|路线|线|路)")
_NAMED = re.compile(rf"{_NAME_CHAR}{{1,8}}?(?:快轨|磁悬浮|线)")
_EN_NUMBERED = re.compile(r"(?P<kind>(?:(?:metro|subway|underground)\s*)?lines?|bus(?:es)?|routes?)"
                          r"\s*(?:no\.?\s*|#\s*)?"
                          r"(?P<number>\d+)\b", re.IGNORECASE)
_EN_NAMED = re.compile(r"[A-Z][a-z]+\s+[Ll]ine\b")
_EN_KIND = re.compile(r"(?:(?:metro|subway|underground)\s*)?lines?\b|bus(?:es)?\b|routes?\b|metro\b|subway\b",
                      re.IGNORECASE)
_BARE_NUMBER = re.compile(r"\d+(?![\d号线路])")
_GENERIC_NAMES = frozenset({"公交线", "地铁线", "专线", "环线", "支线", "干线", "快线", "轨道线", "公交专线", "城轨线",
                            "轨交线", "地铁快线", "直达线", "夜线"})


def _words(*words: str) -> str:
    return "|".join(sorted(map(re.escape, words), key=len, reverse=True))


_SKIP = re.compile(r"[\s,;、/|。.!?\"'“”‘’「」『』【】\[\]<>《》·~&+-]+|"
                   + _words("以及", "或者", "还有", "和", "与", "及", "或", "跟")
                   + r"|(?:and|or|nor|also|please)\b", re.IGNORECASE)
_NEGATION = re.compile(
    _words("不要", "不想要", "不想坐", "不想乘坐", "不想", "不愿意", "不愿", "不坐", "不乘坐", "不乘", "不搭乘", "不搭",
           "不走", "不用", "不经过", "不经", "不换乘", "也不要", "都不要", "也不坐", "都不坐", "也别", "都别", "避开",
           "避免", "绕开", "绕过", "别坐", "别乘", "别搭", "别走", "别", "除了", "排除", "去掉", "不包括", "不含", "禁止", "禁")
    + r"|(?:don't|do\s+not|never|avoid(?:ing)?|exclud(?:e|ing)|except|without|not|no)\b", re.IGNORECASE)
_VERB = re.compile(_words("乘坐", "搭乘", "换乘", "坐", "乘", "搭", "走", "经过", "使用", "用")
                   + r"|(?:take|taking|ride|riding|use|using|the|any)\b", re.IGNORECASE)
_DECORATION = re.compile(r"\s*(?:\([^()]{0,40}\)|外环|内环|上行|下行)")
_ANSWER_MARKER = re.compile(r"(?:输出|答案|output|answer)\s*:", re.IGNORECASE)


@dataclass(frozen=True)
class ExcludedLines:
    """What :func:`parse_excluded_lines` read: the line names, and what it could not read.

    ``unparsed`` holds the fragments that are neither line names nor connecting words
    (an echoed prompt without an ``输出:`` marker, a mode such as ``地铁``); ``ignored`` the
    line names that were dropped because they stood outside a negation in such a row.
    """

    lines: list[str]
    unparsed: list[str] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not self.unparsed


def _line_at(text: str, pos: int) -> tuple[str, int, str | None] | None:
    """The line name starting at ``pos``: (name, end, English kind for bare numbers that follow)."""
    match = _EN_NUMBERED.match(text, pos)
    if match:
        kind = "路" if match.group("kind").lower().startswith(("bus", "route")) else "号线"
        return f"{int(match.group('number'))}{kind}", match.end(), kind
    match = _NUMBERED.match(text, pos)
    if match:
        name = match.group(0)
        if match.group("suffix") == "路线":  # "206路线" is the route of bus 206
            name = name[:-1]
        return name, match.end(), None
    match = _NAMED.match(text, pos)
    if match and match.group(0) not in _GENERIC_NAMES:  # "公交线" would match every line
        return match.group(0), match.end(), None
    match = _EN_NAMED.match(text, pos)
    if match:
        return re.sub(r"\s+", " ", match.group(0)), match.end(), None
    return None


def is_line_name(text: Any) -> bool:
    """Is ``text`` one transit line name (``1号线``, ``八通线``, ``凉都29路``, ``line 1``), not a phrase?"""
    if not isinstance(text, str):
        return False
    folded = unicodedata.normalize("NFKC", text).strip()
    found = _line_at(folded, 0) if folded else None
    if found is None:
        return False
    end = found[1]
    decoration = _DECORATION.match(folded, end)
    return (decoration.end() if decoration else end) == len(folded)


def parse_excluded_lines(value: Any) -> ExcludedLines:
    """Read the excluded transit lines out of an official ``llm_ner_ans`` cell.

    Accepted forms, full-width or ASCII punctuation alike (the text is NFKC-folded first):
    ``不要1号线,不要八通线``, ``不要1号线不要八通线`` (no separator), ``不要1号线和八通线``,
    ``不要坐1号线、2号线``, ``不乘坐地铁1号线``, an echoed prompt followed by ``输出:不要206路``
    (only the text after the last ``输出:`` / ``答案:`` / ``output:`` / ``answer:`` marker
    is read; each row of it on its own), English ``avoid line 1`` / ``no bus 206`` (written back as
    ``1号线`` / ``206路``), and a list of such strings.

    The text is read left to right as tokens: separators and conjunctions (``,、和与或 and
    or``), negations (``不要 不想 不乘坐 避开 别 avoid no``), riding verbs (``坐 乘 take``)
    and **line names**: a numbered line with an optional prefix (``1号线``, ``地铁1号线``,
    ``凉都29路``, ``呼兰104路``, ``S1线``, ``一号线``), a named line (``八通线``,
    ``首都机场线``, ``机场快轨``) or an English one (``line 1``, ``Batong Line``); a
    parenthesised direction or ``外环``/``内环`` after a line is dropped. Every result item
    is one line name, never a sentence. Anything else is *unparsed*: it is recorded in
    :attr:`ExcludedLines.unparsed` and, in a row that did not parse cleanly, only the line
    names that follow a negation are kept (``从双井坐地铁10号线…`` is a line the user
    takes, not one they exclude). Duplicates are dropped, order is kept.

        >>> parse_excluded_lines("不要1号线不要八通线").lines
        ['1号线', '八通线']
        >>> parse_excluded_lines("坐公交去南京站，不乘坐地铁1号线的路线怎么走？\\n输出: 不要1号线").lines
        ['1号线']
    """
    if isinstance(value, (list, tuple)):
        value = "\n".join(str(v) for v in value if isinstance(v, str))
    if not isinstance(value, str):
        return ExcludedLines([])
    text = _ANSWER_MARKER.split(unicodedata.normalize("NFKC", value))[-1]
    kept: list[str] = []
    unparsed: list[str] = []
    ignored: list[str] = []
    for row in text.splitlines():  # each row is read on its own: a negation never runs on to the next
        found, junk = _read_row(row)
        kept += [name for name, in_negation in found if in_negation or not junk]
        ignored += [name for name, in_negation in found if junk and not in_negation]
        unparsed += junk
    return ExcludedLines(list(dict.fromkeys(kept)), unparsed, list(dict.fromkeys(ignored)))


def _read_row(text: str) -> tuple[list[tuple[str, bool]], list[str]]:
    """Tokens of one row: ([(line name, follows a negation)], unreadable fragments)."""
    found: list[tuple[str, bool]] = []
    unparsed: list[str] = []
    negated, kind, pos, junk_start = False, None, 0, None

    def flush_junk(end: int) -> None:
        nonlocal junk_start
        if junk_start is not None:
            unparsed.append(text[junk_start:end])
            junk_start = None

    while pos < len(text):
        for pattern in (_SKIP, _NEGATION, _VERB):
            match = pattern.match(text, pos)
            if match and match.end() > pos:
                break
        else:
            match = None
        if match is not None:
            flush_junk(pos)
            negated = negated or pattern is _NEGATION
            pos = match.end()
            continue
        line = _line_at(text, pos)
        if line is not None:
            flush_junk(pos)
            name, pos, new_kind = line
            kind = new_kind or kind
            found.append((name, negated))
            decoration = _DECORATION.match(text, pos)
            pos = decoration.end() if decoration else pos
            continue
        number = _BARE_NUMBER.match(text, pos) if kind else None
        if number is not None:
            flush_junk(pos)
            found.append((f"{int(number.group(0))}{kind}", negated))
            pos = number.end()
            continue
        english_kind = _EN_KIND.match(text, pos)
        if english_kind is not None:
            flush_junk(pos)
            kind = "路" if english_kind.group(0).lower().startswith(("bus", "route")) else "号线"
            pos = english_kind.end()
            continue
        if junk_start is None:
            junk_start = pos
        negated, kind = False, None
        word = _WORD.match(text, pos)  # a line never starts inside an unreadable word
        pos = word.end() if word else pos + 1
    flush_junk(len(text))
    return found, unparsed


def _excluded_lines(ner: Any, repairs: list[Repair] | None = None) -> list[str]:
    """The excluded line names of ``llm_ner_ans``; text it cannot read becomes a ``Repair``."""
    parsed = parse_excluded_lines(ner)
    if parsed.unparsed and repairs is not None:
        detail = f"could not read {parsed.unparsed!r:.160} as line names; kept {parsed.lines}"
        if parsed.ignored:
            detail += f", ignored {parsed.ignored} (not negated)"
        repairs.append(Repair(column="llm_ner_ans", kind="unparsed_excluded_lines", detail=detail))
    return parsed.lines


def _travel_mode(gold_calls: list[ToolCall], context: dict[str, Any]) -> str | None:
    for call in gold_calls:
        if call.name in MODE_OF_TOOL:
            return MODE_OF_TOOL[call.name]
    return _MODE_WORDS.get(str(context.get("travel_tool", "")))


def derive_gold_slots(scenario: str, fields: dict[str, Any], gold_calls: list[ToolCall], context: dict[str, Any],
                      repairs: list[Repair] | None = None) -> dict[str, Any]:
    """The normalized constraint set that IE compares the agent's ``slots`` with.

    ``excluded_lines`` comes from :func:`parse_excluded_lines`; text of ``llm_ner_ans`` it
    cannot read is appended to ``repairs`` (kind ``unparsed_excluded_lines``) when given.
    """
    slots: dict[str, Any] = {}
    city = fields.get("city") or context.get("city")
    calls_by_name = {c.name: c for c in gold_calls}
    if scenario == "POI Query" and "query_poi" in calls_by_name:
        slots["keyword"] = calls_by_name["query_poi"].arguments.get("keywords")
    elif scenario == "Geolocation Query":
        slots["location"] = context.get("user_current_location")
    elif scenario == "Nearby Query":
        slots["center"] = fields.get("query_poi")
        slots["keyword"] = fields.get("near_poi_info")
    elif scenario == "Weather Query":
        call = calls_by_name.get("weather_query")
        if call is not None:
            city = call.arguments.get("city") or city
            slots["forecast"] = bool(call.arguments.get("need_forecast", False))
        if fields.get("time"):
            slots["time"] = fields["time"]
    elif scenario == "Traffic Info Query":
        slots["road"] = (fields.get("road")
                         or (calls_by_name.get("traffic_status") or ToolCall(name="")).arguments.get("name"))
    else:  # route scenarios
        slots["origin"] = fields.get("query_start_poi") or "current_location"
        if fields.get("query_end_poi"):
            slots["destination"] = fields["query_end_poi"]
        if fields.get("query_transit_poi"):
            slots["waypoints"] = [fields["query_transit_poi"]]
        mode = _travel_mode(gold_calls, context)
        if mode:
            slots["travel_mode"] = mode
        if fields.get("strategy_list"):
            slots["strategy"] = list(fields["strategy_list"])
        excluded = _excluded_lines(fields.get("llm_ner_ans"), repairs)
        if excluded:
            slots["excluded_lines"] = excluded
        if fields.get("time"):
            slots["time"] = fields["time"]
    if city:
        slots["city"] = city
    return {k: v for k, v in slots.items() if v not in (None, "", [])}


def _match_poi_response(keywords: str, fields: dict[str, Any], used: set[str]) -> str | None:
    for query_col, std_col in POI_COLUMNS:
        if std_col not in used and fields.get(query_col) == keywords and fields.get(std_col) is not None:
            return std_col
    if fields.get("poi_result") is not None and "poi_result" not in used:
        return "poi_result"
    return None


def episode_from_row(row: Mapping[str, Any], *, source: str = "", row_number: int | None = None,
                     id_prefix: str = "mb", limits: CellLimits = DEFAULT_LIMITS) -> Episode:
    """Build an Episode from one official row (cells as literal strings or parsed values).

    Raises RowError (with file, row and column) when the row cannot be used at all: a
    required cell empty, a text cell of another type, a literal cell malformed, over
    ``limits`` or of the wrong type (see :data:`LITERAL_COLUMN_TYPES`). Repairs and unmatched
    responses are recorded in ``Episode.repairs``.
    """
    def fail(column: str, message: str) -> RowError:
        return RowError(source or "<rows>", message, row=row_number, column=column)

    for column, value in row.items():
        if isinstance(value, str):
            size = utf8_size(value, limits.max_cell_bytes)
            problem = text_problem(value) if size is None else \
                f"cell is {size:,} bytes, over the limit of {limits.max_cell_bytes:,} (max_cell_bytes)"
            if problem is not None:
                raise fail(column, problem)
    for column in ("query", "task_scenario", "tool_list"):
        if _is_missing(row.get(column)):
            raise fail(column, "required cell is empty")
    for column in ("query", "task_scenario", "intent_family"):
        if not _is_missing(row.get(column)) and not isinstance(row[column], str):
            raise fail(column, f"expected text, got {type(row[column]).__name__}")
    repairs: list[Repair] = []
    scenario = str(row["task_scenario"]).strip()
    if scenario not in FAMILY_OF:
        raise fail("task_scenario", f"unknown task scenario {scenario!r:.80}; expected one of {', '.join(SCENARIOS)}")
    context = _parse(row.get("context"), "context", repairs, fail, limits) or {}
    raw_tool_list = _parse(row["tool_list"], "tool_list", repairs, fail, limits)
    gold_calls = []
    for i, item in enumerate(raw_tool_list):
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            raise fail("tool_list", f"item {i} is not a {{'name', 'arguments'}} dict: {item!r:.80}")
        name = canonical_tool_name(item["name"])
        if name is None or name == "finish":
            raise fail("tool_list", f"item {i} names unknown tool {item['name']!r:.80}")
        arguments = item.get("arguments") or {}
        if not isinstance(arguments, dict):
            raise fail("tool_list", f"item {i} arguments are not a dict")
        gold_calls.append(ToolCall(name=name, arguments=arguments))

    fields: dict[str, Any] = {}
    for column, value in row.items():
        if column in CORE_COLUMNS or column == EXTRA_CALLS_COLUMN or _is_missing(value):
            continue
        fields[column] = _parse(value, column, repairs, fail, limits)
    fields["intent_family"] = row.get("intent_family")
    truncated_columns = {r.column for r in repairs if r.kind == "truncated"}

    recorded: list[RecordedCall] = []
    used: set[str] = set()
    for index, call in enumerate(gold_calls):
        if call.name == "query_poi":
            response_column = _match_poi_response(str(call.arguments.get("keywords", "")), fields, used)
        else:
            response_column = RESPONSE_COLUMN_BY_TOOL.get(call.name)
            response_column = response_column if response_column in fields and response_column not in used else None
        if response_column is None:
            repairs.append(Repair(column=RESPONSE_COLUMN_BY_TOOL.get(call.name, "poi_result"), kind="missing_response",
                                  detail=f"gold call {index} ({call.name}) has no recorded response"))
            continue
        used.add(response_column)
        recorded.append(RecordedCall(name=call.name, arguments=call.arguments, response=fields.pop(response_column),
                                     source_column=response_column, gold_index=index,
                                     truncated=response_column in truncated_columns))
    for column in RESPONSE_COLUMNS & fields.keys():
        repairs.append(Repair(column=column, kind="unmatched_response",
                              detail="no gold call uses this response; kept in fields"))

    extra = _parse(row.get(EXTRA_CALLS_COLUMN), EXTRA_CALLS_COLUMN, repairs, fail, limits)
    for i, item in enumerate(extra or []):
        name = canonical_tool_name(item.get("name")) if isinstance(item, dict) else None
        if name is None or not isinstance(item.get("arguments"), dict):
            raise fail(EXTRA_CALLS_COLUMN, f"item {i} is not a {{'name', 'arguments', 'response'}} dict")
        recorded.append(RecordedCall(name=name, arguments=item["arguments"], response=item.get("response"),
                                     source_column=EXTRA_CALLS_COLUMN))

    intent_family = str(row.get("intent_family") or FAMILY_OF[scenario]).strip()
    fields.pop("intent_family", None)
    gold_slots = derive_gold_slots(scenario, fields, gold_calls, context, repairs)
    return Episode(
        episode_id=stable_episode_id(str(row["query"]), context, scenario,
                                     [c.model_dump() for c in gold_calls], id_prefix),
        query=str(row["query"]),
        context=context,
        task_scenario=scenario,
        intent_family=intent_family,
        gold_calls=gold_calls,
        recorded=recorded,
        gold_slots=gold_slots,
        fields=fields,
        repairs=repairs,
        source=source,
        row=row_number,
    )


def episode_to_row(episode: Episode) -> dict[str, Any]:
    """The official row of an episode (parsed values, not literal strings)."""
    row: dict[str, Any] = {col: None for col in OFFICIAL_COLUMNS}
    row.update(query=episode.query, context=episode.context, task_scenario=episode.task_scenario,
               intent_family=episode.intent_family,
               tool_list=[{"name": c.name, "arguments": c.arguments} for c in episode.gold_calls])
    row.update(episode.fields)
    extra = []
    for call in episode.recorded:
        if call.gold_index is None:
            extra.append({"name": call.name, "arguments": call.arguments, "response": call.response})
        else:
            row[call.source_column] = call.response
    if extra:
        row[EXTRA_CALLS_COLUMN] = extra
    return row
