"""ID: everyday labels in both languages pass for their scenario, however they are written;
another scenario's label never passes."""

from __future__ import annotations

from collections import defaultdict

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mobility_env.mobilitybench.episode import SCENARIOS, SCENARIOS_BY_FAMILY
from mobility_rewards.mobilitybench.intent import SCENARIO_ALIASES, fold_label, intent_score, label_core

RIGHT = [
    ("天气情况", "Weather Query"), ("天气查询", "Weather Query"), ("weather forecast", "Weather Query"),
    ("POI搜索", "POI Query"), ("地点查询", "POI Query"), ("find a place", "POI Query"), ("POI Query", "POI Query"),
    ("查找附近的地点", "Nearby Query"), ("附近搜索", "Nearby Query"), ("nearby search", "Nearby Query"),
    ("路况查询", "Traffic Info Query"), ("traffic info", "Traffic Info Query"),
    ("多途经点路线规划", "Multi-stop Planning"), ("Point-to-Point Planning", "Point-to-Point Planning"),
    ("preference-constrained route planning", "Option-Constrained Route Planning"),
    ("preference-constrained route planning", "Route-Constrained Planning"),
    ("偏好约束路线规划", "Route-Constrained Planning"), ("偏好约束路线规划", "Option-Constrained Route Planning"),
    # paraphrases "route planning" (decision in mobility_rewards.mobilitybench.intent)
    ("Basic Route Planning", "Point-to-Point Planning"),
]
WRONG = [
    ("天气查询", "POI Query"), ("Weather Query", "Traffic Info Query"), ("附近搜索", "POI Query"),
    ("POI搜索", "Nearby Query"), ("find a place", "Nearby Query"), ("查找附近的地点", "POI Query"),
    ("Point-to-Point Planning", "Multi-stop Planning"), ("Multi-stop Planning", "Point-to-Point Planning"),
    ("路况查询", "Weather Query"), ("导航", "Route Property Query"), ("Route Property Query", "Point-to-Point Planning"),
    ("preference-constrained route planning", "Point-to-Point Planning"),
    ("preference-constrained route planning", "Multi-stop Planning"),
    ("Option-Constrained Route Planning", "Route-Constrained Planning"),
    ("Route-Constrained Planning", "Option-Constrained Route Planning"),
    ("Basic Route Planning", "Multi-stop Planning"), ("Basic Route Planning", "Traffic Info Query"),
    ("Basic Information Retrieval", "Weather Query"), ("Basic Information Retrieval", "POI Query"),
    ("Route-Dependent Information Retrieval", "Route Property Query"),
    ("Route-Dependent Information Retrieval", "Arrival/Departure Time Query"),
    ("天气", "Arrival/Departure Time Query"), ("query", "POI Query"), ("查询", "Weather Query"), ("?", "POI Query"),
]
_OTHER_FAMILY = [(scenario, other) for family, group in SCENARIOS_BY_FAMILY.items() for scenario in group
                 for other in SCENARIOS if other not in group]


@st.composite
def written_as(draw, label: str) -> str:
    """``label`` with another case, spacing and punctuation (what an LLM might emit)."""
    words = label.split()
    case = draw(st.sampled_from([str, str.lower, str.upper, str.title, str.swapcase]))
    separator = draw(st.sampled_from([" ", "  ", "_", "-", " - ", "\u3000"]))
    text = separator.join(case(w) for w in words)
    if not label.isascii() and draw(st.booleans()):  # Chinese labels: spaces between characters as well
        text = " ".join(text)
    left, right = draw(st.sampled_from([("", ""), ('"', '"'), ("“", "”"), ("「", "」"), ("(", ")"), ("**", "**")]))
    end = draw(st.sampled_from(["", ".", "!", "?", "。", "！", "？", ":", "…"]))
    pad = draw(st.sampled_from(["", " ", "\n", "\t"]))
    return f"{pad}{left}{text}{right}{end}{pad}"


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_right_labels_pass_however_written(data):
    label, scenario = data.draw(st.sampled_from(RIGHT))
    variant = data.draw(written_as(label))
    assert intent_score(variant, scenario) == 1.0, (variant, scenario)


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_wrong_labels_fail_however_written(data):
    label, scenario = data.draw(st.sampled_from(WRONG))
    variant = data.draw(written_as(label))
    assert intent_score(variant, scenario) == 0.0, (variant, scenario)


@pytest.mark.parametrize("scenario,other", _OTHER_FAMILY)
def test_another_familys_scenario_never_passes(scenario, other):
    for alias in SCENARIO_ALIASES[other]:
        assert intent_score(alias, scenario) == 0.0, (alias, scenario)


def test_every_alias_passes_for_its_scenario_and_aliases_are_unambiguous():
    owners = defaultdict(set)
    for scenario, aliases in SCENARIO_ALIASES.items():
        for alias in aliases:
            assert intent_score(alias, scenario) == 1.0, (alias, scenario)
            owners[fold_label(alias)].add(scenario)
            owners[label_core(alias)].add(scenario)
    shared = {key: owner for key, owner in owners.items() if len(owner) > 1}
    family = set(SCENARIOS_BY_FAMILY["Preference-Constrained Route Planning"])
    assert all(owner == family for owner in shared.values()), shared  # only the family name is shared, on purpose


def test_label_core_drops_generic_request_words():
    assert label_core("天气情况") == label_core("查天气") == "天气" and label_core("Weather Query!") == "weather"
    assert label_core("查找附近的地点") == label_core("附近地点") == "附近地点"
    assert label_core("POI搜索") == "poi" and label_core("find a place") == "place"
    assert label_core("查询") == label_core("the query") == ""
    assert intent_score(None, "POI Query") == intent_score("   ", "POI Query") == intent_score("x", "No Such") == 0.0


@settings(deadline=None, derandomize=True, max_examples=200)
@given(label=st.text(alphabet=st.sampled_from(list("abcxyz 路线规划查询天气附近POIpo-_/")), max_size=24))
def test_own_tfidf_equals_scikit_learn(label):
    """The intent similarity's TF-IDF (written in rewards/mobilitybench/intent.py so scoring never imports scikit-learn)
    gives scikit-learn's TfidfVectorizer(analyzer="char_wb", ngram_range=(1, 3), sublinear_tf=True) cosines."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    from mobility_rewards.mobilitybench import intent

    texts, _ = intent._alias_table()
    documents = [" ".join(intent._words(t)) for t in texts]
    vectorizer = TfidfVectorizer(analyzer="char_wb", ngram_range=(1, 3), sublinear_tf=True)
    matrix = vectorizer.fit_transform(documents)
    query = " ".join(intent._words(label))
    expected = (matrix @ vectorizer.transform([query]).T).toarray().ravel()
    assert intent._fitted()[0].cosines(query) == pytest.approx(list(expected), abs=1e-12)


def test_scoring_an_episode_imports_no_scikit_learn():
    """A process's first finish used to wait ~1 s on importing scikit-learn for the intent TF-IDF."""
    import subprocess
    import sys

    script = ("import sys\n"
              "from mobility_env import MobilityEnv\n"
              "from mobility_rewards.mobilitybench.reference import gold_trajectory\n"
              "env = MobilityEnv()\n"
              "env.reset(options={'episode_index': 0})\n"
              "gold = gold_trajectory(env.state.episode)\n"
              "for call in gold.calls:\n"
              "    env.step({'name': call.name, 'arguments': call.arguments})\n"
              "obs, r, done, _, info = env.step({'name': 'finish', 'arguments': {'answer': gold.finish.answer,\n"
              "                                  'intent': 'plan my drive route'}})\n"
              "assert done and 'ID' in info['metrics']\n"
              "print('sklearn' in sys.modules)\n")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"
