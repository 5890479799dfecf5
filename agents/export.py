"""Export a run's trajectories to Parquet for RL and SFT trainers (GRPO, rejection sampling, PPO, SFT).

One row per (episode_id, sample_index), schema :data:`TRAJECTORY_SCHEMA`, every column a native
Arrow type that ``datasets.load_dataset("parquet", data_files=...)`` reads as such:

=====================  ==========================================================================
column                 meaning
=====================  ==========================================================================
episode_id             the episode (the GRPO *group*: all samples of one episode)
sample_index           0..K-1
task_scenario          scenario name; ``intent_family`` its family (MobilePA: the task's
                       behaviour category; no family)
messages               the whole episode as OpenAI chat messages, in order:
                       ``{role, content, tool_calls: [{id, type, function: {name, arguments}}],
                       tool_call_id, name}`` with ``arguments`` the JSON *text* of the call.
                       LLM agents' recorded messages as the model saw them; for agents without a
                       model, the ReAct agent's prompts and ids ``call_<step>``
                       (:mod:`mobility_agents.llm.messages`). Null when the run holds no
                       trajectory for the result (see ``messages_source``)
prompt                 ``messages`` before the first assistant message (system + user): TRL's
                       conversational prompt-only format, the GRPO prompt
message_rewards        parallel to ``messages``: on an assistant message the env reward of the
                       steps it caused, null on every other message; sums to ``total_reward``
message_agent_roles    parallel to ``messages``: the agent role that recorded each message
                       (Plan-and-Execute: planner, worker, reporter, each its own conversation
                       starting with its own system message); null for a one-conversation agent
messages_source        ``recorded`` (the model's own messages), ``synthesized`` (an agent
                       without a model), or null (no trajectory line, or one that played nothing)
tools                  JSON text of the OpenAI tool list the policy was offered at reset (the
                       ``tools`` argument of ``apply_chat_template``): the trajectory's own when it
                       records one, else for MobilityBench-v0 ``mobility_env.tools.openai_tools()``
                       (the list every episode offers); null for a MobilePA trajectory that does not
                       record its list (runs before format 2; its tools depend on the task); null
                       with ``messages``. MobilePA: the tools at reset (a loaded skill adds more)
step_rewards           per env step rewards (null without a trajectory)
total_reward           sum of step_rewards
advantage              GRPO group-normalized: (R - mean_group(R)) / (std_group(R) + 1e-6);
                       0.0 for a group of one
metrics                struct of doubles: ID IE DEC_P DEC_R TS_P TS_R SC PF DR FPR and CALL_NR
                       (MobilityBench-v0), success progress calls invalid_calls refused_calls gate
                       (MobilePA-v0); a field the record does not have, or a value that is not a
                       finite number (NaN, infinity), is null
extra_metrics          list<{name, value}> of any other metric the record holds (a map type
                       would not load in ``datasets``); empty when there are none
fpr, dr                the two outcome metrics as doubles (for filtering); for a MobilePA run
                       ``fpr`` holds ``success``; 0.0 when absent, null when not finite
input_tokens,          recorded token usage
output_tokens
failure                struct {type, message, error, traceback, details} of the recorded failure
                       (``details``: JSON of any other key), or null
verdict                struct {version, delivered, passed, reason, checks: list<{name, passed,
                       expected, stated, reason}>} behind DR/FPR (``Verdict.to_dict()``; free-form
                       values as text), or null for a record without one
failed_checks          names of the verdict's failed checks (empty when it passed), or null
dimension, bucket      MobilePA: the task's capability dimension (basic, subagent, memory, skill)
                       and verification bucket; null for MobilityBench episodes
=====================  ==========================================================================

Render a row with a chat template::

    from datasets import load_dataset
    from mobility_agents.llm.messages import chat_template_messages
    row = load_dataset("parquet", data_files="rl.parquet", split="train")[0]
    text = tokenizer.apply_chat_template(chat_template_messages(row["messages"]),
                                         tools=json.loads(row["tools"]) if row["tools"] else None)

The file's schema metadata ``mobility_env.run`` holds the run's ``run.json`` (agent, model, data
path and fingerprint, seed, settings) and ``mobility_env.export`` the export format
(:data:`EXPORT_FORMAT_VERSION`). Text is stored as valid UTF-8: a lone surrogate a model produced (a
cut emoji) becomes U+FFFD. The file is written atomically (a failed export leaves no half-written
file), in row groups of :data:`ROWS_PER_BATCH`.

**Bad records.** A corrupt line in ``results.jsonl`` or ``trajectories.jsonl``, a trajectory whose
steps or messages are malformed, a metric or token count that is not a number, a reward that is
not finite, a count outside its column's integer range, or step rewards that do not add up to the
result's ``total_reward`` raise :class:`~mobility_env.errors.DataFileError` naming the file and the
episode; nothing is written. A result without a trajectory line is exported with null ``messages``.
"""

from __future__ import annotations

import math
import os
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any, Iterator

import pyarrow as pa
import pyarrow.parquet as pq

from mobility_env.errors import ConfigError, DataFileError
from mobility_env.runfiles import (RESULTS_FILE, TRAJECTORIES_FILE, clean_strings, iter_jsonl, json_text,
                                   read_jsonl_line, read_results, read_run_info, record_key)
from mobility_rewards.mobilitybench.metrics import EXTRA_METRIC_KEYS, METRIC_KEYS

from .llm.messages import BadTrajectory, SynthesisSettings, conversation_of, step_rewards
from mobility_env.suites import SUITES, env_ids, suite_of

RUN_METADATA_KEY = b"mobility_env.run"
EXPORT_METADATA_KEY = b"mobility_env.export"
#: 1: prompt as JSON text, turns, metrics/verdict/failure as JSON text. 2: messages, native types.
EXPORT_FORMAT_VERSION = 2
ROWS_PER_BATCH = 512
#: MobilePA-v0's metrics (``mobility_rewards.mobilepa.verify.PhoneScorer.finish``).
PHONE_METRIC_KEYS = ("success", "progress", "calls", "invalid_calls", "refused_calls", "gate")
METRIC_FIELDS = (*METRIC_KEYS, *EXTRA_METRIC_KEYS, *PHONE_METRIC_KEYS)

TOOL_CALL_TYPE = pa.struct([("id", pa.string()), ("type", pa.string()),
                            ("function", pa.struct([("name", pa.string()), ("arguments", pa.string())]))])
MESSAGE_TYPE = pa.struct([("role", pa.string()), ("content", pa.string()), ("tool_calls", pa.list_(TOOL_CALL_TYPE)),
                          ("tool_call_id", pa.string()), ("name", pa.string())])
METRICS_TYPE = pa.struct([(key, pa.float64()) for key in METRIC_FIELDS])
NAMED_VALUE_TYPE = pa.struct([("name", pa.string()), ("value", pa.float64())])
CHECK_TYPE = pa.struct([("name", pa.string()), ("passed", pa.bool_()), ("expected", pa.string()),
                        ("stated", pa.string()), ("reason", pa.string())])
VERDICT_TYPE = pa.struct([("version", pa.int32()), ("delivered", pa.bool_()), ("passed", pa.bool_()),
                          ("reason", pa.string()), ("checks", pa.list_(CHECK_TYPE))])
FAILURE_TYPE = pa.struct([("type", pa.string()), ("message", pa.string()), ("error", pa.string()),
                          ("traceback", pa.string()), ("details", pa.string())])
TRAJECTORY_SCHEMA = pa.schema([
    ("episode_id", pa.string()), ("sample_index", pa.int32()), ("task_scenario", pa.string()),
    ("intent_family", pa.string()), ("messages", pa.list_(MESSAGE_TYPE)), ("prompt", pa.list_(MESSAGE_TYPE)),
    ("message_rewards", pa.list_(pa.float64())), ("message_agent_roles", pa.list_(pa.string())),
    ("messages_source", pa.string()), ("tools", pa.string()),
    ("step_rewards", pa.list_(pa.float64())), ("total_reward", pa.float64()), ("advantage", pa.float64()),
    ("metrics", METRICS_TYPE), ("extra_metrics", pa.list_(NAMED_VALUE_TYPE)), ("fpr", pa.float64()),
    ("dr", pa.float64()), ("input_tokens", pa.int64()), ("output_tokens", pa.int64()), ("failure", FAILURE_TYPE),
    ("verdict", VERDICT_TYPE), ("failed_checks", pa.list_(pa.string())),
    ("dimension", pa.string()), ("bucket", pa.string()),
])
_INT_RANGE = {32: (-2 ** 31, 2 ** 31 - 1), 64: (-2 ** 63, 2 ** 63 - 1)}


class _BadRecord(ValueError):
    """A results line that cannot be exported; ``export_run`` names the file and the episode."""


def group_advantages(rewards_by_key: dict[tuple[str, int], float]) -> dict[tuple[str, int], float]:
    """GRPO advantages: rewards normalized within each episode's group of samples.

    Rewards too large to square in floating point (beyond 1e150) are scaled first, so the result
    is the same normalization, never an overflow to infinity or NaN.
    """
    groups: dict[str, list[tuple[tuple[str, int], float]]] = {}
    for key, reward in rewards_by_key.items():
        groups.setdefault(key[0], []).append((key, reward))
    advantages = {}
    for members in groups.values():
        values = [r for _, r in members]
        scale = max(abs(v) for v in values)
        scale = scale if scale > 1e150 else 1.0
        scaled = [v / scale for v in values]
        mean = sum(scaled) / len(scaled)
        std = math.sqrt(sum((v - mean) ** 2 for v in scaled) / len(scaled))
        for (key, _), value in zip(members, scaled):
            advantages[key] = 0.0 if len(values) == 1 else (value - mean) / (std + 1e-6 / scale)
    return advantages


# --------------------------------------------------------------------------- typed fields
def _integer(value: Any, what: str, bits: int) -> int:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise _BadRecord(f"{what} is not an integer ({value!r:.60})")
    low, high = _INT_RANGE[bits]
    if not low <= value <= high:
        raise _BadRecord(f"{what} {value} is outside the {bits}-bit integer range")
    return value


def _finite(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _BadRecord(f"{what} is not a number ({value!r:.60})")
    try:
        number = float(value)
    except OverflowError:  # an integer beyond the range of a double
        raise _BadRecord(f"{what} ({len(str(value))} digits) is beyond the range of a double") from None
    if not math.isfinite(number):
        raise _BadRecord(f"{what} is {number}, not a finite number")
    return number


def _metric(value: Any, name: str) -> float | None:
    """A metric as a double; None when absent or not finite (documented null, never NaN)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _BadRecord(f"metric {name!r} is not a number ({value!r:.60})")
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def _metrics(raw: Any) -> tuple[dict[str, float | None], list[dict[str, Any]]]:
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise _BadRecord(f"'metrics' must be an object, got {type(raw).__name__}")
    values = {str(name): _metric(value, str(name)) for name, value in raw.items()}
    known = {key: values.get(key) for key in METRIC_FIELDS}
    extra = [{"name": name, "value": value} for name, value in values.items() if name not in known]
    return known, extra


def _text(value: Any) -> str | None:
    return value if value is None or isinstance(value, str) else json_text(clean_strings(value))


def _flag(value: Any) -> bool | None:
    return value if isinstance(value, bool) else None


def _verdict(raw: Any) -> dict[str, Any] | None:
    if not isinstance(raw, dict):
        return None
    checks = raw.get("checks") or []
    if not isinstance(checks, list) or not all(isinstance(c, dict) for c in checks):
        raise _BadRecord("verdict 'checks' must be a list of objects")
    version = raw.get("version")
    return {"version": version if isinstance(version, int) and not isinstance(version, bool)
            and abs(version) < 2 ** 31 else None,
            "delivered": _flag(raw.get("delivered")), "passed": _flag(raw.get("passed")),
            "reason": _text(raw.get("reason")),
            "checks": [{"name": _text(c.get("name")), "passed": _flag(c.get("passed")),
                        "expected": _text(c.get("expected")), "stated": _text(c.get("stated")),
                        "reason": _text(c.get("reason"))} for c in checks]}


def _failure(raw: Any) -> dict[str, Any] | None:
    if not raw:
        return None
    if not isinstance(raw, dict):
        return {"type": None, "message": _text(raw), "error": None, "traceback": None, "details": None}
    known = ("type", "message", "error", "traceback")
    rest = {k: v for k, v in raw.items() if k not in known}
    return {**{key: _text(raw.get(key)) for key in known}, "details": _text(rest) if rest else None}


# --------------------------------------------------------------------------- rows
class _RunContext:
    """What every row of one run shares: the env, prompt settings and the MobilityBench tool list."""

    def __init__(self, run_info: dict[str, Any]):
        self.run_info = run_info
        env_options = run_info.get("env")
        max_steps = env_options.get("max_steps") if isinstance(env_options, dict) else None
        self.max_steps = max_steps if isinstance(max_steps, int) and not isinstance(max_steps, bool) else None
        self._tools: dict[str, str | None] = {}

    def env_id(self, result: dict[str, Any]) -> str:
        env_id = self.run_info.get("env_id")
        if env_id in SUITES:
            return str(env_id)
        # a run from before run.json named its env: the suite whose results carry a key only its results have
        marked = [s.env_id for s in SUITES.values() if any(key in result for key in s.result_marks)]
        return marked[0] if marked else env_ids()[0]

    def settings(self, result: dict[str, Any], env_id: str) -> SynthesisSettings:
        from .llm.client import LANGUAGES, LLMConfig

        suite = suite_of(env_id)
        language = result.get("language") if result.get("language") in LANGUAGES else LLMConfig.language
        max_steps = self.max_steps or suite.max_steps
        return SynthesisSettings(language=str(language), suite=suite.name, max_steps=int(max_steps))

    def tools(self, trajectory: dict[str, Any], env_id: str) -> str | None:
        if isinstance(trajectory.get("tools"), list):
            return _text(trajectory["tools"])
        if env_id not in self._tools:  # a trajectory that did not record its tools: the suite's fixed ones, if any
            fixed = suite_of(env_id).part("runtime").fixed_tools()
            self._tools[env_id] = None if fixed is None else json_text(fixed)
        return self._tools[env_id]


def _total_reward(result: dict[str, Any], trajectory: dict[str, Any] | None) -> float:
    """The result's ``total_reward``; a record without one: its trajectory's step rewards, else 0."""
    if result.get("total_reward") is not None:
        return _finite(result["total_reward"], "total_reward")
    return sum(step_rewards(trajectory)) if trajectory is not None else 0.0


def _row(key: tuple[str, int], result: dict[str, Any], trajectory: dict[str, Any] | None, total_reward: float,
         advantage: float, run: _RunContext) -> dict[str, Any]:
    if key[0] is None:
        raise _BadRecord("episode_id is null")
    env_id = run.env_id(result)
    conversation = None
    rewards: list[float] | None = None
    if trajectory is not None:
        conversation = conversation_of(trajectory, run.settings(result, env_id))
        rewards = step_rewards(trajectory)
        if not all(math.isfinite(r) for r in rewards):
            raise BadTrajectory(f"a step reward is not finite ({rewards!r:.200})")
        if not math.isclose(math.fsum(rewards), total_reward, rel_tol=1e-9, abs_tol=1e-9):
            raise BadTrajectory(f"the step rewards sum to {math.fsum(rewards)!r} but results.jsonl says "
                                f"total_reward {total_reward!r}: the two files disagree")
    metrics, extra = _metrics(result.get("metrics"))
    raw_metrics = result.get("metrics") or {}
    outcome = "FPR" if "FPR" in raw_metrics or "success" not in raw_metrics else "success"
    verdict = _verdict(result.get("verdict"))
    messages = conversation.messages if conversation else None
    first_assistant = next((i for i, m in enumerate(messages or []) if m["role"] == "assistant"), None)
    return {
        "episode_id": str(key[0]), "sample_index": _integer(key[1], "sample_index", 32),
        "task_scenario": _text(result.get("task_scenario")), "intent_family": _text(result.get("intent_family")),
        "messages": messages, "prompt": None if messages is None else messages[:first_assistant],
        "message_rewards": conversation.rewards if conversation else None,
        "message_agent_roles": conversation.agent_roles if conversation else None,
        "messages_source": conversation.source if conversation else None,
        "tools": run.tools(trajectory or {}, env_id) if conversation else None,
        "step_rewards": rewards, "total_reward": total_reward, "advantage": advantage,
        "metrics": metrics, "extra_metrics": extra,
        "fpr": metrics.get(outcome) if outcome in raw_metrics else 0.0,
        "dr": metrics.get("DR") if "DR" in raw_metrics else 0.0,
        "input_tokens": _integer(result.get("input_tokens") or 0, "input_tokens", 64),
        "output_tokens": _integer(result.get("output_tokens") or 0, "output_tokens", 64),
        "failure": _failure(result.get("failure")), "verdict": verdict,
        "failed_checks": None if verdict is None else
        [str(c["name"]) for c in verdict["checks"] if c["passed"] is not True],
        "dimension": _text(result.get("dimension") or ("basic" if result.get("bucket") else None)),  # older runs
        "bucket": _text(result.get("bucket")),
    }


@contextmanager
def _named(run_dir: Path, key: tuple[str, int]) -> Iterator[None]:
    """Turn a bad record of ``key`` into a DataFileError naming its file and episode."""
    where = f"episode {key[0]!r} sample {key[1]}"
    try:
        yield
    except BadTrajectory as exc:
        raise DataFileError(run_dir / TRAJECTORIES_FILE, f"{where}: {exc}; fix or remove the line, "
                                                         "or re-run the episode") from None
    except _BadRecord as exc:
        raise DataFileError(run_dir / RESULTS_FILE, f"{where}: {exc}") from None


def _rows(run_dir: Path, results: list[dict[str, Any]], run: _RunContext) -> Iterator[dict[str, Any]]:
    """The rows in results order. Trajectories are read twice, one line at a time: first where each key's last
    line starts, then each line when its row is written (a run's trajectories need not fit in memory)."""
    path = run_dir / TRAJECTORIES_FILE
    where = {record_key(item): offset for offset, item in iter_jsonl(path) if "episode_id" in item}
    with ExitStack() as stack:
        try:
            handle = stack.enter_context(path.open("rb")) if where else None
        except OSError:  # gone since: read_jsonl_line says so, naming the file
            handle = None

        def trajectory(key: tuple[str, int]) -> dict[str, Any] | None:
            return read_jsonl_line(path, where[key], handle) if key in where else None

        latest = {record_key(r): r for r in results}
        totals = {}
        for key, result in latest.items():
            with _named(run_dir, key):
                totals[key] = _total_reward(result, None if result.get("total_reward") is not None
                                            else trajectory(key))
        advantages = group_advantages(totals)
        for key, result in latest.items():
            with _named(run_dir, key):
                row = _row(key, result, trajectory(key), totals[key], advantages[key], run)
            yield clean_strings(row)


def _batches(rows: Iterator[dict[str, Any]]) -> Iterator[list[dict[str, Any]]]:
    batch: list[dict[str, Any]] = []
    for row in rows:
        batch.append(row)
        if len(batch) >= ROWS_PER_BATCH:
            yield batch
            batch = []
    if batch:
        yield batch


def export_run(run_dir: str | Path, out_path: str | Path) -> Path:
    """Write ``out_path`` (Parquet, :data:`TRAJECTORY_SCHEMA`) from ``run_dir``'s results and trajectories.

    Raises ``ConfigError`` for a run without results or an ``out_path`` that is a directory, and
    ``DataFileError`` for a bad record (see module docstring), leaving no file behind.
    """
    run_dir, out_path = Path(run_dir), Path(out_path)
    if out_path.is_dir():
        raise ConfigError(f"--out {out_path} is a directory; give the .parquet file to write")
    results = read_results(run_dir / RESULTS_FILE)
    if not results:
        raise ConfigError(f"{run_dir / RESULTS_FILE}: no results to export")
    run_info = read_run_info(run_dir) or {}
    metadata = {RUN_METADATA_KEY: json_text(clean_strings(run_info)).encode("utf-8"),
                EXPORT_METADATA_KEY: json_text({"format_version": EXPORT_FORMAT_VERSION}).encode("utf-8")}
    schema = TRAJECTORY_SCHEMA.with_metadata(metadata)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    partial = out_path.with_name(f".{out_path.name}.{os.getpid()}.tmp")
    try:
        with pq.ParquetWriter(partial, schema, compression="zstd") as writer:
            for batch in _batches(_rows(run_dir, results, _RunContext(run_info))):
                writer.write_table(pa.Table.from_pylist(batch, schema=schema))
        os.replace(partial, out_path)
    finally:
        partial.unlink(missing_ok=True)
    return out_path
