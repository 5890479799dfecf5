"""Explicit format versions: observation (compact text), reward and verdict.

* the compact output of real responses (bundled set and the real sample) is pinned by a golden
  snapshot stored with the ``OBSERVATION_VERSION`` it belongs to: changing the output without a
  bump fails, naming the fix;
* built directories record the versions; one indexed by another observation version warns once
  (:class:`FormatVersionWarning`) and serves the same observations a fresh index would;
* runs record the versions in ``run.json`` and its identity: a resume by code of another version
  is refused unless forced; ``eval`` and ``report`` say which version scored what.

Regenerate the snapshot after a deliberate change (and a bump)::

    python tests/test_format_versions.py --regenerate
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
import warnings
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from mobility_env.mobilitybench import observation
from mobility_env.mobilitybench.build import MANIFEST_FILE, FormatVersionWarning, record_files
from mobility_env.mobilitybench.index_build import write_replay_index
from mobility_env.mobilitybench.index_format import INDEX_VERSION, META_FILE
from mobility_env.layout import INDEX_DIR
from mobility_env.mobilitybench.sandbox import Sandbox

ROOT = Path(__file__).resolve().parents[1]
BUNDLED = ROOT / "datasets" / "default"
GOLDEN_DIR = Path(__file__).resolve().parent / "data"
PER_TOOL = 2  # the first rows of each tool, plus its longest response, from each source


# ----------------------------------------------------------------------------- the golden snapshot
def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def bundled_responses() -> list[tuple[int, str, str]]:
    """(row, tool, response text) of every row of the bundled sandbox."""
    table = pq.read_table(BUNDLED / "sandbox.parquet", columns=["tool", "response"])
    return [(i, t, r) for i, (t, r) in enumerate(zip(table.column("tool").to_pylist(),
                                                     table.column("response").to_pylist()))]


def sample_responses(episodes: Any) -> list[tuple[tuple[str, int], str, str]]:
    """((episode_id, call index), tool, response text) of every recorded call of the real sample."""
    return [((e.episode_id, k), c.name, _dumps(c.response)) for e in episodes for k, c in enumerate(e.recorded)]


def _pick(rows: list[tuple[Any, str, str]]) -> list[tuple[Any, str, str]]:
    by_tool: dict[str, list[tuple[Any, str, str]]] = {}
    for row in rows:
        by_tool.setdefault(row[1], []).append(row)
    chosen = []
    for tool in sorted(by_tool):
        group = by_tool[tool]
        picks = group[:PER_TOOL] + [max(group, key=lambda r: len(r[2]))]
        chosen += [r for i, r in enumerate(picks) if r not in picks[:i]]
    return chosen


def generate_snapshot(sample_episodes: Any) -> dict[str, Any]:
    """The snapshot of this code's compact output: bundled cases keep their text, the real
    sample's only its hash (the sample is never copied into the repository)."""
    cases = []
    for row, tool, text in _pick(bundled_responses()):
        cases.append({"source": "bundled", "row": row, "tool": tool, "response_sha256": _sha(text),
                      "compact": observation.format_response(tool, json.loads(text), "compact")})
    for (episode_id, call), tool, text in _pick(sample_responses(sample_episodes)):
        cases.append({"source": "sample", "episode_id": episode_id, "call": call, "tool": tool,
                      "response_sha256": _sha(text),
                      "compact_sha256": _sha(observation.format_response(tool, json.loads(text), "compact"))})
    return {"observation_version": observation.OBSERVATION_VERSION,
            "regenerate": "python tests/test_format_versions.py --regenerate", "cases": cases}


def golden_snapshot() -> dict[str, Any]:
    """The committed snapshot of the current OBSERVATION_VERSION; fails when there is none."""
    version = observation.OBSERVATION_VERSION
    path = GOLDEN_DIR / f"compact_v{version}.json"
    if not path.is_file():
        pytest.fail(f"no golden snapshot {path.name} for OBSERVATION_VERSION {version}: after bumping it, run "
                    f"`python tests/test_format_versions.py --regenerate` and commit the file")
    golden = json.loads(path.read_text(encoding="utf-8"))
    assert golden["observation_version"] == version, f"{path.name} holds version {golden['observation_version']}"
    return golden


def changed_cases(golden: dict[str, Any], sample_episodes: Any) -> list[str]:
    """The cases whose compact text this code no longer writes (their inputs must be unchanged)."""
    bundled = {row: (tool, text) for row, tool, text in bundled_responses()}
    sample = {key: (tool, text) for key, tool, text in sample_responses(sample_episodes)}
    changed = []
    for case in golden["cases"]:
        where = f"bundled row {case['row']}" if case["source"] == "bundled" else \
            f"sample {case['episode_id']} call {case['call']}"
        tool, text = bundled[case["row"]] if case["source"] == "bundled" else sample[(case["episode_id"], case["call"])]
        assert (tool, _sha(text)) == (case["tool"], case["response_sha256"]), \
            f"{where}: the snapshot's input changed (bundled set or loader), not the format; regenerate the snapshot"
        compact = observation.format_response(tool, json.loads(text), "compact")
        if ("compact" in case and compact != case["compact"]) or \
                ("compact_sha256" in case and _sha(compact) != case["compact_sha256"]):
            changed.append(f"{where} ({tool})")
    return changed


def test_compact_output_is_pinned_to_its_observation_version(sample_episodes):
    golden = golden_snapshot()
    assert {c["tool"] for c in golden["cases"]} == set(observation.COMPACTORS)  # every compactor is pinned
    assert {c["source"] for c in golden["cases"]} == {"bundled", "sample"}
    changed = changed_cases(golden, sample_episodes)
    if changed:
        pytest.fail(f"compact format changed: bump OBSERVATION_VERSION and regenerate "
                    f"(`python tests/test_format_versions.py --regenerate`); {len(changed)} case(s) differ, e.g. "
                    f"{', '.join(changed[:3])}")


@pytest.mark.parametrize("name, value", [("MAIN_ROADS", 2), ("MAX_LIST_ITEMS", 3)])
def test_a_compactor_change_without_a_bump_is_caught(monkeypatch, sample_episodes, name, value):
    golden = golden_snapshot()
    monkeypatch.setattr(observation, name, value)
    assert changed_cases(golden, sample_episodes)


def test_a_bump_without_a_snapshot_fails_naming_the_fix(monkeypatch):
    monkeypatch.setattr(observation, "OBSERVATION_VERSION", observation.OBSERVATION_VERSION + 1)
    with pytest.raises(pytest.fail.Exception, match="--regenerate"):
        golden_snapshot()


# ----------------------------------------------------------------------------- built directories
def test_the_bundled_set_records_the_current_versions():
    meta = json.loads((BUNDLED / INDEX_DIR / META_FILE).read_text(encoding="utf-8"))
    manifest = json.loads((BUNDLED / MANIFEST_FILE).read_text(encoding="utf-8"))
    fix = "run `mobility-env index datasets/default` and commit it"
    for record in (meta, manifest):
        assert record.get("observation_version") == observation.OBSERVATION_VERSION, fix
        assert record.get("index_version") == INDEX_VERSION, fix
    with warnings.catch_warnings():
        warnings.simplefilter("error", FormatVersionWarning)
        box = Sandbox.open(BUNDLED)
        assert box.index.compact_ok
    assert all(box.observation_text(entry, "compact") is not None for entry in range(0, len(box), 50))


@pytest.fixture
def bundled_copy(tmp_path) -> Path:
    copy = tmp_path / "indexed"
    shutil.copytree(BUNDLED, copy)
    return copy


def _episode_ids() -> list[str]:
    return pq.read_table(BUNDLED / "episodes.parquet", columns=["episode_id"]).column(0).to_pylist()


def _observations(data: Path, episode_ids: list[str]) -> list[str]:
    """Every observation of the gold calls of ``episode_ids``, played through the env (compact format)."""
    from mobility_env.mobilitybench.env import MobilityEnv

    env = MobilityEnv(data)
    seen = []
    for episode_id in episode_ids:
        seen.append(env.reset(seed=0, options={"episode_id": episode_id})[0])
        for call in env.unwrapped.episode.gold_calls:
            seen.append(env.step({"name": call.name, "arguments": dict(call.arguments)})[0])
    return seen


def test_another_observation_version_warns_once_and_serves_fresh_text(bundled_copy, tmp_path, monkeypatch):
    ids = _episode_ids()[::4]
    before = _observations(BUNDLED, ids)
    current = observation.OBSERVATION_VERSION
    monkeypatch.setattr(observation, "OBSERVATION_VERSION", current + 1)  # this code bumped; the copy was not
    stale = Sandbox.open(bundled_copy)
    with pytest.warns(FormatVersionWarning) as caught:
        assert not stale.index.compact_ok  # the index is mapped at first use
    message = str(caught[0].message)
    assert str(bundled_copy) in message and f"observation version {current}," in message
    assert f"writes observation version {current + 1}" in message
    assert f"mobility-env index {bundled_copy}" in message
    assert stale.observation_text(0, "compact") is None
    with warnings.catch_warnings():
        warnings.simplefilter("error", FormatVersionWarning)  # once per directory and process
        assert not Sandbox.open(bundled_copy).index.compact_ok

    fresh_dir = tmp_path / "fresh"
    shutil.copytree(BUNDLED, fresh_dir)
    write_replay_index(fresh_dir)  # `mobility-env index DIR` under the bumped version
    fresh = Sandbox.open(fresh_dir)
    assert fresh.index.compact_ok and fresh.index.meta["observation_version"] == current + 1
    assert json.loads((fresh_dir / MANIFEST_FILE).read_text(encoding="utf-8"))["observation_version"] == current + 1
    served = _observations(bundled_copy, ids)
    assert len(served) > 150
    assert served == _observations(fresh_dir, ids) == before


def test_a_hash_versioned_directory_is_named_as_such(bundled_copy):
    meta_path = bundled_copy / INDEX_DIR / META_FILE
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    meta["observation_version"] = "340d4650a709c222"  # what versions before numbered ones recorded
    meta_path.write_text(json.dumps(meta), encoding="utf-8")
    record_files(bundled_copy)  # the checksums vouch for the edited meta.json: only the version differs
    box = Sandbox.open(bundled_copy)
    with pytest.warns(FormatVersionWarning, match="a source hash"):
        assert not box.index.compact_ok
    assert box.index.episodes is not None and box.index.source is not None  # the rest of the index is used


def test_another_index_version_warns_and_builds_the_index_in_memory(bundled_copy, monkeypatch):
    from mobility_env.mobilitybench import replay_index

    ids = _episode_ids()[:12]
    expected = _observations(BUNDLED, ids)
    monkeypatch.setattr(replay_index, "INDEX_VERSION", INDEX_VERSION + 1)
    box = Sandbox.open(bundled_copy)
    with pytest.warns(FormatVersionWarning, match=f"index version {INDEX_VERSION}, this mobility-env reads "
                                                  f"version {INDEX_VERSION + 1}.*mobility-env index"):
        assert box.index.source is None  # not mapped: built in memory from the Parquet files
    assert _observations(bundled_copy, ids) == expected


# ----------------------------------------------------------------------------- runs
def _run(out: Path, limit: int = 2, **kwargs: Any) -> list[dict[str, Any]]:
    from mobility_agents.baselines.mobilitybench.oracle import OracleAgent
    from mobility_agents.runner import RunConfig, run_local

    return run_local(OracleAgent, RunConfig(out_dir=out, limit=limit, progress=False, meta={"agent": "oracle"},
                                            **kwargs))


def _cli(capsys, *args: str) -> str:
    from mobility_env.cli import main

    capsys.readouterr()
    assert main([str(a) for a in args]) == 0
    return capsys.readouterr().err


def test_runs_record_versions_and_refuse_resume_across_them(tmp_path, monkeypatch):
    from mobility_agents.runner import ResumeMismatch
    from mobility_rewards.mobilitybench import shaping
    from mobility_rewards.mobilitybench.shaping import format_versions

    out = tmp_path / "run"
    _run(out)
    run = json.loads((out / "run.json").read_text(encoding="utf-8"))
    versions = format_versions()
    assert set(versions) == {"observation_version", "reward_version", "verdict_version"}
    assert {k: run[k] for k in versions} == {k: run["identity"][k] for k in versions} == versions

    for module, name, key in ((shaping, "REWARD_VERSION", "reward_version"),
                              (observation, "OBSERVATION_VERSION", "observation_version")):
        with monkeypatch.context() as patch:
            patch.setattr(module, name, getattr(module, name) + 1)
            with pytest.raises(ResumeMismatch, match=f"{key}: the run has {versions[key]}, this command "
                                                     f"{versions[key] + 1}"):
                _run(out, limit=3, resume=True)
    assert len(_run(out, limit=3, resume=True)) == 3  # same code: resumes

    with monkeypatch.context() as patch:
        patch.setattr(shaping, "REWARD_VERSION", versions["reward_version"] + 1)
        assert len(_run(out, limit=4, resume=True, force_resume=True)) == 4
    run = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert run["reward_version"] == versions["reward_version"]  # the run stays what it was
    assert run["sessions"][-1]["forced"] and \
        run["sessions"][-1]["identity"]["reward_version"] == versions["reward_version"] + 1

    for key in versions:  # a run from before versions were recorded
        del run[key], run["identity"][key]
    (out / "run.json").write_text(json.dumps(run), encoding="utf-8")
    with pytest.raises(ResumeMismatch, match="reward_version: the run has none recorded"):
        _run(out, limit=5, resume=True)


def test_eval_and_report_say_which_versions_scored_what(tmp_path, monkeypatch, capsys):
    from mobility_rewards.mobilitybench import shaping

    reward, verdict = shaping.REWARD_VERSION, shaping.VERDICT_VERSION
    other_reward, other_verdict = reward + 100, verdict + 100  # patched in below: differ from this code's

    out = tmp_path / "run"
    _run(out, limit=3)
    assert "version" not in _cli(capsys, "eval", out)  # same versions: nothing to say
    assert "version" not in _cli(capsys, "report", out)

    with monkeypatch.context() as patch:
        patch.setattr(shaping, "REWARD_VERSION", other_reward)
        err = _cli(capsys, "report", out)  # eval's scorecard is current, but was computed with the old version
        assert f"scorecard.json was computed with reward_version {reward}, verdict_version {verdict}" in err
        assert f"this code has reward_version {other_reward}" in err
        err = _cli(capsys, "eval", out)
        assert f"this run was scored with reward_version {reward}, verdict_version {verdict}; it is rescored " \
               f"with reward_version {other_reward}, verdict_version {verdict}" in err
        scorecard = json.loads((out / "scorecard.json").read_text(encoding="utf-8"))
        assert scorecard["source"]["format_versions"]["reward_version"] == other_reward
        assert scorecard["source"]["run_format_versions"]["reward_version"] == reward
    assert f"scorecard.json was computed with reward_version {other_reward}" in _cli(capsys, "report", out)

    (out / "scorecard.json").unlink()  # the report reads the stored metrics
    with monkeypatch.context() as patch:
        patch.setattr(shaping, "VERDICT_VERSION", other_verdict)  # what format_versions reports
        err = _cli(capsys, "report", out)
    assert (f"reporting the stored metrics of results.jsonl, scored with reward_version {reward}, "
            f"verdict_version {verdict}") in err
    assert f"this code has reward_version {reward}, verdict_version {other_verdict}" in err


def _regenerate() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from conftest import SAMPLE_CSV

    from mobility_env.mobilitybench.loaders import load_episodes

    snapshot = generate_snapshot(load_episodes(SAMPLE_CSV))
    path = GOLDEN_DIR / f"compact_v{snapshot['observation_version']}.json"
    GOLDEN_DIR.mkdir(exist_ok=True)
    path.write_text(json.dumps(snapshot, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {path} ({len(snapshot['cases'])} cases)")


if __name__ == "__main__":
    if sys.argv[1:] != ["--regenerate"]:
        sys.exit(__doc__)
    _regenerate()
