"""The text-mode action parser on replies recorded from a real model server.

``tests/data/smollm2_replies.jsonl``: every distinct assistant reply SmolLM2-135M-Instruct
(Q4_1, llama-cpp-python 0.3.36 on 127.0.0.1) wrote in the runs of
``benchmarks/real_model_smoke.py`` (2026-12-01), labelled by hand with the tool calls it
makes. None is a protocol action: the model writes prose, HTML-escaped JSON, numbered call
lists, and JSON whose nested objects have a ``"name"`` (a transit list, a planner's intent),
some cut off at ``max_tokens``. A nested ``{"name": …}`` is never a call, even when the
top-level object around it is cut off.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mobility_agents.llm.client import parse_text_actions

CORPUS = Path(__file__).resolve().parent / "data" / "smollm2_replies.jsonl"
ROWS = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_the_corpus_covers_both_modes_and_every_role():
    assert len(ROWS) >= 40
    assert {r["tool_mode"] for r in ROWS} == {"json", "native"}
    assert {r["role"] for r in ROWS} >= {"react", "planner", "worker", "reporter"}
    assert any(r["cut_off"] for r in ROWS) and any('"name"' in r["content"] for r in ROWS)


IDS = [f"{i}-{r['agent']}-{r['tool_mode']}-{r['role']}" for i, r in enumerate(ROWS)]


@pytest.mark.parametrize("row", ROWS, ids=IDS)
def test_recorded_replies_parse_to_their_labelled_calls(row):
    assert [call.name for call in parse_text_actions(row["content"])] == row["expected_calls"]


@pytest.mark.parametrize("cut", [40, 80, 160, 400])
def test_a_cut_off_object_with_a_named_inner_object_is_no_call(cut):
    text = json.dumps({"answer": "到了", "transits": [{"name": "地铁2号线", "id": 1}, {"name": "公交5路"}]},
                      ensure_ascii=False, indent=2)
    assert parse_text_actions("```json\n" + text[:cut]) == []
    whole = parse_text_actions('{"name": "weather_query", "arguments": {"city": "北京市"}}')
    assert [c.name for c in whole] == ["weather_query"]
