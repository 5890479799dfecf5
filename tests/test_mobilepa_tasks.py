"""MobilePA tasks: the generator (deterministic, checked, covering every category, bucket, obstacle and language),
the bundled set in ``datasets/mobilepa`` (oracle 100 %, cheap trajectories 0 %), ``load_tasks`` errors and
``mobility-env synth --suite mobilepa``."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from mobility_env.errors import ConfigError, DataFileError
from mobility_env.mobilepa.catalogue import PHONE_TOOLS
from mobility_env.mobilepa.episode import play
from mobility_env.mobilepa.generate import (CAPABILITY_TASK_TOOLS, DOMAIN_TASK_TOOLS, MAPS_TASK_TOOLS,
                                            dimension_plan, generate_tasks, task_counts, write_task_set)
from mobility_env.mobilepa.skills import SKILLS
from mobility_env.mobilepa.generate_checks import adversaries, probe_arguments
from mobility_env.mobilepa.generate_oracle import GenerationError
from mobility_env.mobilepa.tasks import BUCKETS, CATEGORIES, OBSTACLES, TASKS_FILE, load_tasks
from mobility_rewards.mobilepa.verify import verify_phone_task

REPO = Path(__file__).resolve().parents[1]
BUNDLED = REPO / "datasets" / "mobilepa"


@pytest.fixture(scope="module")
def bundled():
    return load_tasks(BUNDLED)


def _dumps(tasks) -> list[str]:
    return [t.model_dump_json(exclude_none=True) for t in tasks]


def _writes(name: str) -> bool:
    spec = PHONE_TOOLS.get(name)  # (ask_user is no catalogue tool)
    return spec is not None and bool(spec.writes)


def test_the_bundled_set_is_what_its_manifest_says(bundled):
    manifest = json.loads((BUNDLED / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["suite"] == "mobilepa" and manifest["tasks"] == len(bundled) == 1705  # the paper's size
    assert manifest["counts"] == task_counts(bundled)
    assert len({t.task_id for t in bundled}) == 1705
    assert manifest["counts"]["dimension"]["memory"] == dimension_plan(1705).count("memory") == 376


def test_the_bundled_set_is_regenerated_byte_for_byte(tmp_path):
    manifest = json.loads((BUNDLED / "manifest.json").read_text(encoding="utf-8"))
    out = write_task_set(tmp_path / "again", manifest["tasks"], manifest["seed"], languages=manifest["languages"],
                         verify=verify_phone_task, workers=2)  # (the same tasks for any workers: tested below)
    for name in (TASKS_FILE, "manifest.json"):
        assert (out / name).read_bytes() == (BUNDLED / name).read_bytes(), name


def _pass_rate(results: list[bool]) -> float:
    return sum(results) / len(results) if results else 0.0


#: The tasks the per-task attack test plays: every fourth bundled task (a fixed, deterministic sample: all 1,705
#: took about 4x as long as the 400 of the set before it; every task also passed these checks when it was generated,
#: and the regeneration test above regenerates, and so re-checks, all of them).
SAMPLE_EVERY = 4


def test_every_oracle_passes_and_every_cheap_trajectory_fails(bundled):
    """The oracle passes 100 %; finishing at once, calling every offered tool, acting without asking (the right
    values, guessed), dropping the oracle's last state change, and adding one state change nobody asked for
    (when it succeeds) all pass 0 % (on every :data:`SAMPLE_EVERY`-th bundled task)."""
    bundled = bundled[::SAMPLE_EVERY]
    outcomes: dict[str, list[bool]] = {"oracle": [], "finish_only": [], "every_offered_tool": [],
                                       "act_without_asking": [], "drop_last_change": [], "collateral_change": []}
    for task in bundled:
        oracle = play(task)
        outcomes["oracle"].append(verify_phone_task(task, oracle).passed)
        for name, (calls, answer) in adversaries(task, oracle).items():
            outcomes[name].append(verify_phone_task(task, play(task, calls, answer)).passed)
        plan = [(c.name, dict(c.arguments)) for c in task.oracle_calls]
        changes = [i for i, c in enumerate(oracle.calls) if c.succeeded and _writes(c.name)]
        if changes:
            dropped = plan[:changes[-1]] + plan[changes[-1] + 1:]
            outcomes["drop_last_change"].append(verify_phone_task(task, play(task, dropped, task.oracle_answer)).passed)
        used = {c.name for c in oracle.calls if c.succeeded}
        for name in (n for n in task.action_space if _writes(n) and n not in used):
            extra = play(task, plan + [(name, probe_arguments(name, task))], task.oracle_answer)
            if extra.calls[-1].succeeded:
                outcomes["collateral_change"].append(verify_phone_task(task, extra).passed)
                break
    rates = {name: _pass_rate(results) for name, results in outcomes.items()}
    assert rates == {"oracle": 1.0, "finish_only": 0.0, "every_offered_tool": 0.0, "act_without_asking": 0.0,
                     "drop_last_change": 0.0, "collateral_change": 0.0}, rates
    # each adversary was really tried: on every task, on every must-ask task, on most tasks
    assert len(outcomes["finish_only"]) == len(outcomes["every_offered_tool"]) == len(bundled) == 427
    assert len(outcomes["act_without_asking"]) == sum(bool(t.gold_behaviour and t.gold_behaviour.must_ask)
                                                      for t in bundled) > 10
    assert len(outcomes["drop_last_change"]) > 250 and len(outcomes["collateral_change"]) > 250


def test_every_category_bucket_obstacle_and_language_is_present(bundled):
    assert {t.category for t in bundled} == set(CATEGORIES)
    assert {t.bucket for t in bundled} == set(BUCKETS)
    assert {o["kind"] for t in bundled for o in t.obstacles} == set(OBSTACLES)
    assert {(t.category, t.language) for t in bundled} == {(c, lang) for c in CATEGORIES for lang in ("zh", "en")}
    kinds = Counter(o["kind"] for t in bundled for o in t.obstacles)
    assert min(kinds.values()) >= 10, kinds
    assert all(any(o["kind"] != "missing_parameter" for o in t.obstacles)
               for t in bundled if t.category == "error_recovery")
    assert all(t.history and t.history[0]["role"] == "user" for t in bundled if t.category == "intent_correction")
    for task in bundled:  # requests in their language (an English one may name a Chinese contact)
        if task.language == "zh":
            assert re.search(r"[\u4e00-\u9fff]{2}", task.query), task.query
        else:
            assert re.search(r"\b[A-Za-z]{2,}\b", task.query), task.query


def test_planted_obstacles_are_in_s0_and_the_gold_matches_the_bucket(bundled):
    for task in bundled:
        kinds = {o["kind"] for o in task.obstacles}
        s0 = task.initial_state
        if "runtime_exception" in kinds:
            assert any(1 <= f["remaining"] <= 2 for f in s0["faults"]), task.task_id
        if "permission_block" in kinds:
            assert any(p["granted"] == 0 and p["app"] in ("messages", "phone", "Amap", "assistant", "chat", "payments",
                                                          "health", "home", "gallery")
                       for p in s0["permissions"])
        if "missing_parameter" in kinds:
            assert task.bucket == "behaviour" and task.gold_behaviour.must_ask
            assert task.user_facts or task.user_replies  # (the reply: a fact since generator version 6)
            # the reply is needed to reach the gold state (a sub-agent task's outcome is its handoff, no delta)
            assert task.gold_delta or task.dimension == "subagent", task.task_id
        if task.bucket == "tool_call":
            assert task.gold_calls and all(_writes(g.name) for g in task.gold_calls)
        if task.bucket == "state_change":
            assert task.gold_delta
        if task.bucket == "behaviour":
            assert (task.gold_delta is not None) == (task.dimension != "subagent")
            assert task.gold_behaviour.must_ask or task.gold_behaviour.forbidden or task.gold_behaviour.answer_mentions


def test_each_phone_is_realistic_with_distractor_records(bundled):
    chinese = 0
    for task in bundled:
        s0 = task.initial_state
        names = [c["name"] for c in s0["contacts"]]
        assert len(names) >= 8
        chinese += any(re.search(r"[\u4e00-\u9fff]", n) for n in names)
        settings = {r["key"]: r["value"] for r in s0["settings"]}
        assert re.fullmatch(r"202[56]-\d\d-\d\d \d\d:\d\d", settings["clock"])  # 2025: a recorded forecast's day
        assert len(s0["alarms"]) >= 2 and len(s0["events"]) >= 2
    # each name is Chinese with probability 0.6: a phone of 8 English names happens about once in 1,500 phones
    assert chinese >= 0.99 * len(bundled)
    assert any(re.fullmatch(r"[A-Za-z ]+", c["name"]) for t in bundled for c in t.initial_state["contacts"])


def test_the_action_space_offers_what_is_needed_plus_distractors(bundled):
    for task in bundled:
        offered = task.action_space
        assert len(set(offered)) == len(offered)
        assert set(offered) <= set(MAPS_TASK_TOOLS + DOMAIN_TASK_TOOLS if task.dimension == "basic"
                                   else CAPABILITY_TASK_TOOLS)
        loaded = {t for c in task.oracle_calls if c.name == "load_skill" for t in SKILLS[c.arguments["skill_id"]].tools}
        used = {c.name for c in task.oracle_calls if c.name != "ask_user"} - loaded  # (a loaded skill offers its own)
        assert used <= set(offered), task.task_id
        assert any(_writes(n) and n not in used for n in offered), task.task_id


def test_same_seed_same_tasks_and_a_prefix_does_not_depend_on_n():
    first = _dumps(generate_tasks(12, 5, verify=verify_phone_task))
    assert first == _dumps(generate_tasks(12, 5, verify=verify_phone_task))
    assert first[:7] == _dumps(generate_tasks(7, 5, verify=verify_phone_task))
    assert first != _dumps(generate_tasks(12, 6, verify=verify_phone_task))


def test_worker_processes_give_the_same_tasks():
    assert _dumps(generate_tasks(10, 8, verify=verify_phone_task, workers=2, chunk=5)) == \
        _dumps(generate_tasks(10, 8, verify=verify_phone_task))


def test_languages_and_bad_arguments():
    assert {t.language for t in generate_tasks(10, 1, languages=("en",), verify=verify_phone_task)} == {"en"}
    for bad in ({"n": -1}, {"n": 2.5}, {"languages": ("fr",)}, {"languages": ()}):
        with pytest.raises(ConfigError):
            generate_tasks(**{"n": 3, "seed": 0, "verify": verify_phone_task, **bad})


class _Always:
    def __init__(self, passed: bool):
        self.passed = passed

    def summary(self) -> str:
        return "stub"

    def to_dict(self) -> dict:
        return {}


def test_a_verifier_that_cannot_fail_or_cannot_pass_stops_the_generator():
    with pytest.raises(GenerationError, match="trajectory passes"):
        generate_tasks(1, 0, verify=lambda task, trajectory: _Always(True))
    with pytest.raises(GenerationError, match="oracle fails"):
        generate_tasks(1, 0, verify=lambda task, trajectory: _Always(False))


@pytest.mark.parametrize("corrupt, message", [("{not json", "row 3"), ('{"task_id": "x"}', "row 3")])
def test_load_tasks_names_the_file_and_line_of_a_bad_line(tmp_path, corrupt, message):
    shutil.copy(BUNDLED / TASKS_FILE, tmp_path / TASKS_FILE)
    lines = (tmp_path / TASKS_FILE).read_text(encoding="utf-8").splitlines()
    lines[2] = corrupt
    (tmp_path / TASKS_FILE).write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(DataFileError) as error:
        load_tasks(tmp_path)
    assert str(tmp_path / TASKS_FILE) in str(error.value) and message in str(error.value)


def test_load_tasks_refuses_bytes_that_are_not_utf8_and_deep_nesting(tmp_path):
    good = (BUNDLED / TASKS_FILE).read_bytes()
    for name, data, message in (("cut", good[:2999], "row 1"), ("latin", b"\xff\xfe" + good, "row 1"),
                                ("lone surrogate", good.replace(b"\n", b"\n\xed\xa0\x80\n", 1), "row 2"),
                                ("nesting", b"[" * 100_000 + b"\n", "row 1")):
        path = tmp_path / f"{name}.jsonl"
        path.write_bytes(data)
        with pytest.raises(DataFileError) as error:
            load_tasks(path)
        assert str(path) in str(error.value) and message in str(error.value), name
    crlf = tmp_path / "crlf.jsonl"  # Windows line ends still load
    crlf.write_bytes(good.replace(b"\n", b"\r\n"))
    assert len(load_tasks(crlf)) == len(load_tasks(BUNDLED))


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mobility_env.cli", "synth", *args], cwd=REPO, capture_output=True,
                          text=True, timeout=120)


def test_cli_writes_a_task_directory_end_to_end(tmp_path):
    done = _cli("--suite", "mobilepa", "--n", "15", "--seed", "4", "--out", str(tmp_path / "set"), "--quiet")
    assert done.returncode == 0, done.stderr
    assert "tasks.jsonl" in done.stdout
    tasks = load_tasks(tmp_path / "set")
    assert _dumps(tasks) == _dumps(generate_tasks(15, 4, verify=verify_phone_task))
    manifest = json.loads((tmp_path / "set" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["seed"] == 4 and manifest["counts"]["category"] == {
        "conditional": 4, "error_recovery": 2, "grounding": 4, "intent_correction": 2, "state_tracking": 3}
    refused = _cli("--suite", "mobilepa", "--n", "3", "--out", str(tmp_path / "bad"), "--mix", "uniform")
    assert refused.returncode == 2 and "--mix applies to --suite mobility only" in refused.stderr
    assert not (tmp_path / "bad").exists()


def test_the_data_card_states_the_manifest_counts_and_the_command():
    card = (BUNDLED / "README.md").read_text(encoding="utf-8")
    manifest = json.loads((BUNDLED / "manifest.json").read_text(encoding="utf-8"))
    assert f"mobility-env synth --suite mobilepa --n {manifest['tasks']} --seed {manifest['seed']}" in card
    for group, counts in manifest["counts"].items():
        for name, count in counts.items():
            assert re.search(rf"\|\s*`?{re.escape(name)}`?\s*\|\s*{count}\s*\|", card), (group, name, count)
    crossed = Counter((t.category, t.bucket) for t in load_tasks(BUNDLED))
    for category in CATEGORIES:
        row = " | ".join([category] + [str(crossed[(category, bucket)]) for bucket in BUCKETS])
        assert f"| {row} |" in card, row
