"""Export a run's trajectories to Parquet for RL trainers (GRPO, rejection sampling, PPO).

One row per (episode_id, sample_index), schema :data:`TRAJECTORY_SCHEMA`:

==================  =====================================================================
column              meaning
==================  =====================================================================
episode_id          the episode (the GRPO *group*: all samples of one episode)
sample_index        0..K-1
task_scenario       scenario name; ``intent_family`` its family (MobilePA: the task's
                    behaviour category; no family)
prompt              JSON list of the chat messages the policy saw first (system + user)
turns               list of {role, content, tool_name, reward}: each assistant action and
                    each tool observation, in order; ``reward`` is the env reward of the
                    step an assistant action caused (0.0 on observation turns)
step_rewards        per env step rewards
total_reward        sum of step_rewards
advantage           GRPO group-normalized: (R - mean_group(R)) / (std_group(R) + 1e-6);
                    0.0 for a group of one
metrics             JSON object: ID IE DEC_P DEC_R TS_P TS_R SC PF DR FPR
fpr, dr             the two outcome metrics as floats (for filtering); for a MobilePA
                    run ``fpr`` holds ``success`` (the task's verification passed)
input_tokens, output_tokens  recorded token usage
failure             JSON of the recorded failure, or null
verdict             JSON of the verdict behind DR/FPR (``Verdict.to_dict()``: every check
                    with expected, stated, passed, reason), or null for a record without one
failed_checks       names of the verdict's failed checks (empty when it passed), or null
dimension, bucket   MobilePA: the task's capability dimension (basic, subagent, memory, skill) and
                    verification bucket; null for MobilityBench episodes
==================  =====================================================================

The file's schema metadata ``mobility_env.run`` holds the run's ``run.json`` (agent, model,
data path and fingerprint, seed, settings), so an exported file says where it came from.
Text is stored as valid UTF-8: a lone surrogate a model produced (a cut emoji) becomes
U+FFFD. The file is written atomically (a failed export leaves no half-written file).

Load with ``pyarrow.parquet.read_table(path)`` or ``datasets.load_dataset("parquet",
data_files=path)``.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from mobility_env.errors import ConfigError
from mobility_env.runfiles import (RESULTS_FILE, TRAJECTORIES_FILE, clean_strings, json_text, read_jsonl,
                                   read_results, read_run_info, record_key)

RUN_METADATA_KEY = b"mobility_env.run"

TURN_TYPE = pa.struct([("role", pa.string()), ("content", pa.string()), ("tool_name", pa.string()),
                       ("reward", pa.float64())])
TRAJECTORY_SCHEMA = pa.schema([
    ("episode_id", pa.string()), ("sample_index", pa.int32()), ("task_scenario", pa.string()),
    ("intent_family", pa.string()), ("prompt", pa.string()), ("turns", pa.list_(TURN_TYPE)),
    ("step_rewards", pa.list_(pa.float64())), ("total_reward", pa.float64()), ("advantage", pa.float64()),
    ("metrics", pa.string()), ("fpr", pa.float64()), ("dr", pa.float64()),
    ("input_tokens", pa.int64()), ("output_tokens", pa.int64()), ("failure", pa.string()),
    ("verdict", pa.string()), ("failed_checks", pa.list_(pa.string())),
    ("dimension", pa.string()), ("bucket", pa.string()),
])


def group_advantages(rewards_by_key: dict[tuple[str, int], float]) -> dict[tuple[str, int], float]:
    """GRPO advantages: rewards normalized within each episode's group of samples."""
    groups: dict[str, list[tuple[tuple[str, int], float]]] = {}
    for key, reward in rewards_by_key.items():
        groups.setdefault(key[0], []).append((key, reward))
    advantages = {}
    for members in groups.values():
        values = [r for _, r in members]
        mean = sum(values) / len(values)
        std = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
        for key, reward in members:
            advantages[key] = 0.0 if len(values) == 1 else (reward - mean) / (std + 1e-6)
    return advantages


def _turns_and_prompt(trajectory: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    messages = trajectory.get("messages") or []
    prompt = [m for m in messages if m.get("role") in ("system", "user")][:2]
    if not prompt:
        prompt = [{"role": "user",
                   "content": json.dumps({"query": trajectory.get("query"), "context": trajectory.get("context")},
                                         ensure_ascii=False)}]
    turns = []
    for step in trajectory.get("steps") or []:
        action = step.get("action")
        text = action if isinstance(action, str) else json.dumps(action, ensure_ascii=False, default=str)
        name = None
        if isinstance(action, dict):
            name = action.get("name") or (action.get("function") or {}).get("name")
        turns.append({"role": "assistant", "content": text, "tool_name": name,
                      "reward": float(step.get("reward", 0.0))})
        turns.append({"role": "tool", "content": step.get("observation", ""), "tool_name": name, "reward": 0.0})
    return prompt, turns


def export_run(run_dir: str | Path, out_path: str | Path) -> Path:
    """Write ``out_path`` (Parquet) from ``run_dir``'s results and trajectories."""
    run_dir, out_path = Path(run_dir), Path(out_path)
    if out_path.is_dir():
        raise ConfigError(f"--out {out_path} is a directory; give the .parquet file to write")
    results = read_results(run_dir / RESULTS_FILE)
    if not results:
        raise ConfigError(f"{run_dir / RESULTS_FILE}: no results to export")
    run_info = read_run_info(run_dir) or {}
    trajectories = {record_key(item): item for item in read_jsonl(run_dir / TRAJECTORIES_FILE) if "episode_id" in item}
    latest = {record_key(r): r for r in results}
    advantages = group_advantages({k: float(r.get("total_reward", 0.0)) for k, r in latest.items()})
    rows = []
    for key, result in latest.items():
        prompt, turns = _turns_and_prompt(trajectories.get(key, {}))
        metrics = result.get("metrics") or {}
        verdict = result.get("verdict") if isinstance(result.get("verdict"), dict) else None
        rows.append({
            "episode_id": key[0], "sample_index": key[1], "task_scenario": result.get("task_scenario"),
            "intent_family": result.get("intent_family"), "prompt": json.dumps(prompt, ensure_ascii=False),
            "turns": turns, "step_rewards": [t["reward"] for t in turns if t["role"] == "assistant"],
            "total_reward": float(result.get("total_reward", 0.0)), "advantage": advantages[key],
            "metrics": json.dumps(metrics, ensure_ascii=False),
            "fpr": float(metrics.get("FPR", metrics.get("success", 0.0))),
            "dr": float(metrics.get("DR", 0.0)), "input_tokens": int(result.get("input_tokens", 0)),
            "output_tokens": int(result.get("output_tokens", 0)),
            "failure": json.dumps(result["failure"], ensure_ascii=False) if result.get("failure") else None,
            "verdict": json.dumps(verdict, ensure_ascii=False) if verdict is not None else None,
            "failed_checks": None if verdict is None else
            [str(c.get("name")) for c in verdict.get("checks") or [] if not c.get("passed")],
            "dimension": result.get("dimension") or ("basic" if result.get("bucket") else None),  # older runs
            "bucket": result.get("bucket"),
        })
    out_path.parent.mkdir(parents=True, exist_ok=True)
    table = pa.Table.from_pylist(clean_strings(rows), schema=TRAJECTORY_SCHEMA)
    table = table.replace_schema_metadata({RUN_METADATA_KEY: json_text(clean_strings(run_info)).encode("utf-8")})
    partial = out_path.with_name(f".{out_path.name}.{os.getpid()}.tmp")
    try:
        pq.write_table(table, partial, compression="zstd")
        os.replace(partial, out_path)
    finally:
        partial.unlink(missing_ok=True)
    return out_path
