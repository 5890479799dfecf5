"""Excluded transit lines: the ``llm_ner_ans`` parser (property tests) and the audit built on it."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mobility_env.mobilitybench.official import episode_from_row, is_line_name, parse_excluded_lines
from mobility_rewards.mobilitybench.audit import audit_episode, audit_episodes, blocking_episode_ids

# ----------------------------------------------------------------------------- the official forms

OFFICIAL_FORMS = [
    ("不要1号线,不要八通线", ["1号线", "八通线"]),
    ("不要1号线不要八通线", ["1号线", "八通线"]),
    ("不要1号线和八通线", ["1号线", "八通线"]),
    ("不要坐1号线、2号线", ["1号线", "2号线"]),
    ("不乘坐地铁1号线", ["地铁1号线"]),
    ("不要凉都29路", ["凉都29路"]),
    ("坐公交去龙湖中德开·春江悦茗，不要坐206路\n输出:不要206路", ["206路"]),
    ("坐公交去南京站，不乘坐地铁1号线的路线怎么走？  \n输出: 不要1号线", ["1号线"]),
    ("从哈尔滨市公安交警支队松北大队到哈尔滨市呼兰区困难职工帮扶中心坐公交，不要坐呼兰104路怎么走？  \n输出:不要呼兰104路",
     ["呼兰104路"]),
    ("不要１号线，不要八通线", ["1号线", "八通线"]),        # full-width digit and comma
    ("输出：不要1号线；不要2号线", ["1号线", "2号线"]),      # full-width colon and semicolon
    ("avoid line 1", ["1号线"]),
    ("Avoid lines 1 and 2", ["1号线", "2号线"]),
    ("no bus 206", ["206路"]),
    ("不要1号线(苹果园--四惠东)", ["1号线"]),
    ("不要1号线，八通线也不要", ["1号线", "八通线"]),
    ("输出:\n不要1号线\n不要八通线", ["1号线", "八通线"]),  # one line per row
    (["不要1号线", "不要八通线"], ["1号线", "八通线"]),     # an already-parsed list cell
]


@pytest.mark.parametrize("text, expected", OFFICIAL_FORMS)
def test_every_official_form_splits_into_line_names(text, expected):
    parsed = parse_excluded_lines(text)
    assert parsed.lines == expected
    assert parsed.clean
    assert all(is_line_name(line) for line in parsed.lines)


@pytest.mark.parametrize("text, lines, ignored", [
    # an echoed prompt without an 输出: marker: only the negated line is kept
    ("坐公交去南京站，不乘坐地铁1号线的路线怎么走？", ["地铁1号线"], []),
    # a query the user takes a line in, with no answer at all: nothing is excluded
    ("从双井坐地铁10号线外环到中关村怎么走？", [], ["地铁10号线"]),
    ("不要地铁", [], []),            # a mode, not a line
    ("不要公交线", [], []),          # generic, would match every line
    ("不要二环路", [], []),          # a road
    # rows are read on their own: the negation of the first does not reach the second
    ("不要1号线\n坐2号线去国贸", ["1号线"], ["2号线"]),
])
def test_unreadable_text_keeps_what_parses_and_reports_the_rest(text, lines, ignored):
    parsed = parse_excluded_lines(text)
    assert parsed.lines == lines
    assert parsed.ignored == ignored
    assert parsed.unparsed and not parsed.clean


@pytest.mark.parametrize("value", [None, "", "   ", 3.0, {"a": 1}])
def test_empty_or_foreign_values_exclude_nothing(value):
    assert parse_excluded_lines(value).lines == []


def test_is_line_name():
    for name in ("1号线", "八通线", "凉都29路", "呼兰104路", "206路", "地铁1号线", "S1线", "十三号线", "首都机场线",
                 "轨道交通2号线",
                 "机场快轨", "Batong Line", "line 1"):
        assert is_line_name(name), name
    for text in ("1号线不要八通线", "坐公交去南京站", "地铁1号线的路线怎么走？", "不要1号线", "地铁", "公交线", "", None):
        assert not is_line_name(text), text


# ----------------------------------------------------------------------------- property tests

_SAFE = "东西南北中通庄平山昌房燕京津滨海港湾新城大兴亦望顺义云岗金融科园蓝红黄绿泉溪桥林"  # no stop/negation/verb chars
_NEGATIONS = ["", "不要", "不要坐", "不想坐", "不乘坐", "不坐", "别坐", "避开", "不想", "也不要"]
_SEPARATORS = [",", "，", "、", ";", "；", "/", " ", "", "和", "与", "及", "或", "或者", " and ", ", "]


@st.composite
def line_names(draw) -> str:
    kind = draw(st.sampled_from(["numbered", "cn_numbered", "lettered", "named", "fixed"]))
    number = draw(st.integers(min_value=1, max_value=999))
    prefix = draw(st.text(alphabet=_SAFE, min_size=0, max_size=3))
    if kind == "numbered":
        return f"{draw(st.sampled_from(['', '地铁', '凉都', '呼兰', '公交', '夜', prefix]))}{number}" \
               f"{draw(st.sampled_from(['号线', '路']))}"
    if kind == "cn_numbered":
        return f"{draw(st.sampled_from(['', '地铁']))}{draw(st.sampled_from(['一', '二', '八', '十', '十三', '二十']))}号线"
    if kind == "lettered":
        return f"{draw(st.sampled_from(['S', 'M', 'K', 'Y']))}{number}{draw(st.sampled_from(['线', '路']))}"
    if kind == "named":
        return draw(st.text(alphabet=_SAFE, min_size=1, max_size=4)) + "线"
    return draw(st.sampled_from(["八通线", "亦庄线", "首都机场线", "大兴机场线", "房山线", "机场快轨", "西郊线",
                                 "轨道交通2号线"]))


def _full_width(text: str) -> str:
    """ASCII digits, letters and punctuation to their full-width forms (NFKC maps them back)."""
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


@st.composite
def excluded_texts(draw) -> tuple[str, list[str]]:
    names = draw(st.lists(line_names(), min_size=1, max_size=4, unique=True))
    parts = [draw(st.sampled_from(_NEGATIONS[1:]))]   # the first line is always negated
    for i, name in enumerate(names):
        if i:
            separator = draw(st.sampled_from(_SEPARATORS))
            negation = draw(st.sampled_from(_NEGATIONS))
            parts.append(separator + negation)
        parts.append(name)
    if draw(st.booleans()):
        parts.append(draw(st.sampled_from(["也不要", "都不要", "。", ""])))
    text = "".join(parts)
    echo = draw(st.sampled_from([None, "{q}\n输出:{a}", "{q}  \n输出: {a}", "{q}输出：{a}", "{q}\n\n输出 : {a}"]))
    if echo is not None:
        query = draw(st.sampled_from(["坐公交去南京站，不乘坐地铁1号线的路线怎么走？", "从双井坐地铁10号线外环到中关村怎么走？",
                                      "去汉口站坐公交或地铁，但不要坐{n}怎么走？"])).format(n=names[0])
        text = echo.format(q=query, a=text)
    if draw(st.booleans()):
        text = _full_width(text)
    return text, names


@settings(max_examples=400, deadline=None)
@given(excluded_texts())
def test_random_compositions_return_exactly_the_lines(case):
    text, names = case
    parsed = parse_excluded_lines(text)
    assert parsed.lines == names, (text, parsed)
    assert parsed.clean, (text, parsed)


@st.composite
def english_texts(draw) -> tuple[str, list[str]]:
    numbers = draw(st.lists(st.integers(min_value=1, max_value=99), min_size=1, max_size=3, unique=True))
    kind, suffix = draw(st.sampled_from([("line", "号线"), ("metro line", "号线"), ("bus", "路")]))
    verb = draw(st.sampled_from(["avoid", "Avoid", "no", "do not take", "don't take", "avoid taking"]))
    plural = "es" if kind == "bus" else "s"
    if len(numbers) == 1:
        text = f"{verb} {kind} {numbers[0]}"
    else:
        text = f"{verb} {kind}{plural} " + ", ".join(map(str, numbers[:-1])) + f" and {numbers[-1]}"
    return text, [f"{n}{suffix}" for n in numbers]


@settings(max_examples=150, deadline=None)
@given(english_texts())
def test_english_forms(case):
    text, names = case
    assert parse_excluded_lines(text).lines == names, text


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(max_size=80), st.text(alphabet="不要坐和1号线八通路、,输出:别地铁 \n凉都去站", max_size=40)))
def test_any_text_yields_only_short_line_names(text):
    parsed = parse_excluded_lines(text)
    for line in parsed.lines:
        assert is_line_name(line), (text, line)
        assert len(line) <= 16 and unicodedata.normalize("NFKC", line) == line
        assert not any(word in line for word in ("不要", "不想", "怎么", "输出", ",", "、"))


# ----------------------------------------------------------------------------- loader and audit

DAWANGLU = "从大望路到五棵松不要坐1号线和八通线怎么走"


@pytest.fixture(scope="module")
def dawanglu_row(sample_rows):
    return next(row for row in sample_rows if row["query"] == DAWANGLU)


def _episode(row, **changes):
    return episode_from_row({**row, **changes}, source="test.csv", row_number=1)


@pytest.mark.parametrize("ner", ["不要1号线,不要八通线", "不要1号线不要八通线", "不要1号线和八通线", "不要坐1号线、八通线",
                                 "不要1号线八通线", "从大望路到五棵松不要坐1号线和八通线怎么走\n输出:不要1号线不要八通线",
                                 "不要１号线，不要八通线", "avoid line 1 and Batong Line"])
def test_loaded_forms_give_line_slots_and_no_spurious_blocking(dawanglu_row, ner):
    episode = _episode(dawanglu_row, llm_ner_ans=ner)
    assert len(episode.gold_slots["excluded_lines"]) == 2
    assert all(is_line_name(line) for line in episode.gold_slots["excluded_lines"])
    assert not [r for r in episode.repairs if r.kind == "unparsed_excluded_lines"]
    assert [f for f in audit_episode(episode) if f.blocking] == []


def test_unreadable_ner_is_a_recorded_repair_and_a_note_not_a_block(dawanglu_row):
    episode = _episode(dawanglu_row, llm_ner_ans="从大望路到五棵松不要坐1号线和八通线怎么走")  # an echo, no answer
    assert episode.gold_slots["excluded_lines"] == ["1号线", "八通线"]  # both follow the negation
    repairs = [r for r in episode.repairs if r.kind == "unparsed_excluded_lines"]
    assert len(repairs) == 1 and repairs[0].column == "llm_ner_ans" and "从大望路到五棵松" in repairs[0].detail
    findings = audit_episode(episode)
    assert [f.kind for f in findings] == ["excluded_lines_unreadable"]
    assert not findings[0].blocking


def test_sentence_long_gold_line_from_an_old_build_does_not_block(sample_episodes):
    nanjing = next(e for e in sample_episodes if e.query.startswith("坐公交去南京站"))
    # what the old parser made of an echoed prompt without its 输出: marker
    stale = nanjing.model_copy(update={"gold_slots": {**nanjing.gold_slots,
                                                      "excluded_lines": ["坐公交去南京站", "地铁1号线的路线怎么走？"]}})
    kinds = {f.kind: f.blocking for f in audit_episode(stale)}
    assert kinds.get("excluded_lines_unreadable") is False
    assert "excluded_line_requested" not in kinds


@pytest.mark.parametrize("query, ner", [
    ("从大望路坐地铁八通线到五棵松，不要坐1号线", "不要1号线不要八通线"),   # asks to ride an excluded line
    ("从大望路到五棵松，换乘1号线，不要八通线", "不要1号线和八通线"),
])
def test_a_real_contradiction_still_blocks(dawanglu_row, query, ner):
    findings = audit_episode(_episode(dawanglu_row, query=query, llm_ner_ans=ner))
    assert [f.kind for f in findings if f.blocking] == ["excluded_line_requested"]


def test_matched_transit_on_an_excluded_line_blocks(dawanglu_row):
    # matched transit 1 rides 1路: excluding it contradicts the gold choice
    findings = audit_episode(_episode(dawanglu_row, llm_ner_ans="不要1路"))
    assert [f.kind for f in findings if f.blocking] == ["matched_transit_excluded"]


@pytest.mark.parametrize("query", [
    "坐11号线去五棵松，不要坐1号线",          # 1号线 is not in 11号线
    "去1号线五棵松站，不要坐1号线",           # a station named after the line, not a ride on it
    "从大望路到五棵松，1号线也不要坐",        # negation after the line
    "除了1号线，从大望路坐地铁去五棵松",      # negation before it
])
def test_mentions_that_are_not_requests_do_not_block(dawanglu_row, query):
    findings = audit_episode(_episode(dawanglu_row, query=query, llm_ner_ans="不要1号线"))
    assert not [f for f in findings if f.kind == "excluded_line_requested"], findings


def test_real_sample_has_exactly_the_four_known_blocking_findings(sample_episodes):
    findings = audit_episodes(sample_episodes)
    blocking = sorted(((f.kind, next(e.query for e in sample_episodes if e.episode_id == f.episode_id))
                       for f in findings if f.blocking))
    assert len(blocking_episode_ids(findings)) == 4
    kinds = [kind for kind, _ in blocking]
    assert kinds == ["excluded_line_requested", "missing_evidence", "missing_evidence", "truncated_evidence"]
    queries = dict((kind, query) for kind, query in blocking if kind != "missing_evidence")
    assert queries["excluded_line_requested"] == "从双井坐地铁10号线外环到中关村怎么走？"
    assert queries["truncated_evidence"].startswith("坐公交去南京站")  # matched transit 4 of 5 cut at the cell limit
    by_kind = {(f.kind, f.detail) for f in findings if f.blocking}
    assert any("bus_route response has no routes" in d for k, d in by_kind if k == "missing_evidence")
    assert any("weather" in d for k, d in by_kind if k == "missing_evidence")
    weather = [e for e in sample_episodes for f in findings if f.blocking and f.episode_id == e.episode_id
               and "weather" in f.detail]
    assert weather and "台湾" in str(weather[0].gold_calls[-1].arguments)
    assert not [f for f in findings if f.kind == "excluded_lines_unreadable"]
