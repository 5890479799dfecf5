"""Run an agent over many episodes and write ``results.jsonl`` / ``trajectories.jsonl``.

Both registered envs run the same way (``RunConfig.env_id``; :mod:`mobility_agents.targets`).
Guarantees (both backends; the Ray one is :mod:`mobility_agents.ray_runner`):

* **incremental**: one JSON line per finished (episode, sample), flushed as it finishes, the
  trajectory line before its result line;
* **never lost to text**: lines are written by :func:`mobility_env.runfiles.json_line`, so a
  model's cut emoji (a lone surrogate) or any other text is stored, not a crash; a record
  that still cannot be written is reported and re-run on ``--resume``, the run goes on;
* **one writer**: the run directory is locked (``run.lock``, ``fcntl.flock``) for the whole
  run; a second run on it fails fast, naming the holder's pid;
* **resumable**: ``resume=True`` skips every (episode_id, sample_index) already in
  ``results.jsonl``; a line cut by a crash is removed from every append-only file (and a
  trajectory whose result never landed) and that episode re-run; nothing is overwritten, and
  without ``resume`` an existing non-empty run directory is refused; ``retry_failed=True``
  also re-runs episodes whose latest result is a recorded failure (a model server that was
  down), appending the new line: readers keep the last line per key;
* **never mixed**: ``run.json`` records what the run is (agent, model, data fingerprint,
  seed, env and LLM settings, and the observation, reward and verdict format versions of the
  code, :func:`mobility_rewards.mobilitybench.shaping.format_versions`); resuming with something else
  (code of another format version included) raises :class:`ResumeMismatch`
  unless ``force_resume`` says otherwise (the session is then recorded in ``run.json``);
* **isolated failures**: an agent error is that episode's recorded failure, not the run's;
  except :data:`FATAL_ERRORS` (``FatalAgentError``, e.g. ``EndpointDown``: the model server
  is unreachable), which stop the run with :class:`RunStopped` (exit status 3 on the command
  line) and keep everything written; the episode it hit is not written and runs on ``--resume``;
* **preflight**: ``agent.preflight()`` runs once before any episode;
* **deterministic seeds**: the seed of (episode_id, sample_index) depends only on the run
  seed, never on order or backend;
* **signals**: SIGTERM and SIGHUP end the run like Ctrl-C (:class:`Terminated`, a
  ``KeyboardInterrupt``): files closed, lock released, Ray shut down; a line is never cut by
  them (they are held while a record is written).
"""

from __future__ import annotations

import contextlib
import difflib
import hashlib
import json
import os
import queue
import signal
import socket
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, cast

from mobility_env.errors import ConfigError, MobilityEnvError
from mobility_env.runfiles import (APPEND_ONLY_FILES, LOCK_FILE, RESULTS_FILE, RUN_FILE, TRAJECTORIES_FILE, RunLock,
                                   count_lines, data_fingerprint, drop_last_line, json_line, json_text,
                                   read_results, read_run_info, record_key, repair_tail, write_text_atomic)
from mobility_rewards.mobilitybench.shaping import FORMAT_VERSION_KEYS, format_versions

from mobility_env.suites import env_ids, suite_of, suite_of_run

from .targets import MOBILITYBENCH, check_env_id, data_path, make_env

__all__ = ["RESULTS_FILE", "TRAJECTORIES_FILE", "ResumeMismatch", "RunConfig", "RunStopped", "Terminated",
           "episode_seed", "make_env", "open_run_data", "read_results", "run_local"]

AgentFactory = Callable[[], Any]
WorkItem = tuple[str, int, int]  # (episode_id, sample_index, seed)

#: Exception classes (by name, anywhere in the class's MRO) that stop a whole run:
#: ``mobility_agents.base.FatalAgentError`` and its subclasses such as ``llm.EndpointDown``.
FATAL_ERRORS = frozenset({"FatalAgentError", "EndpointDown"})
#: After a fatal error, how long to wait for episodes already in flight before stopping.
STOP_GRACE_S = 30.0
#: Consecutive records that could not be written before the run gives up (a full disk).
MAX_WRITE_FAILURES = 3
#: Rejections of the load report kept in run.json (the count is always complete).
MAX_STORED_REJECTIONS = 100


class RunStopped(MobilityEnvError):
    """A fatal error (the model endpoint is down) stopped the run; what was written is kept."""

    exit_code = 3


class ResumeMismatch(ConfigError):
    """``--resume`` with another agent, data, model or config than the run recorded."""


class RunWriteError(MobilityEnvError):
    """Records of the run could not be written several times in a row (disk full, permissions)."""


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP arrived; raised in the main thread so every ``finally`` runs."""

    def __init__(self, signum: int):
        self.signum = signum
        super().__init__(f"terminated by {signal.Signals(signum).name}")


def episode_seed(run_seed: int, episode_id: str, sample_index: int) -> int:
    digest = hashlib.sha256(f"{run_seed}:{episode_id}:{sample_index}".encode()).digest()
    return int.from_bytes(digest[:4], "little")


@dataclass
class RunConfig:
    """What to run; see ``mobility-env run --help`` for the meaning of each field.

    ``env_id`` is the registered env the run plays (``MobilityBench-v0`` or ``MobilePA-v0``; what
    differs between them is in :mod:`mobility_agents.targets`), ``env_kwargs`` its options.

    ``identity`` holds what else makes two sessions the same run (the CLI puts the agent and
    its LLM settings there); the runner adds the data fingerprint, seed and env options.
    ``log`` receives the runner's notes (data and load report); None keeps it quiet.
    """

    out_dir: Path
    data: str | None = None
    env_id: str = MOBILITYBENCH
    episode_ids: list[str] | None = None
    scenarios: list[str] | None = None
    limit: int | None = None
    samples_per_episode: int = 1
    seed: int = 0
    resume: bool = False
    retry_failed: bool = False
    force_resume: bool = False
    workers: int = 1
    progress: bool = True
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)
    identity: dict[str, Any] = field(default_factory=dict)
    log: Callable[[str], None] | None = None

    def __post_init__(self) -> None:
        self.out_dir = Path(self.out_dir)
        check_env_id(self.env_id)


# --------------------------------------------------------------------------- data
@dataclass
class RunData:
    """The episodes of a run and what ``run.json`` says about where they came from."""

    store: Any
    info: dict[str, Any]

    @property
    def path(self) -> str:
        return self.info["data_path"]


def open_run_data(data: str | os.PathLike | None, lookup_config: Any = None,
                  env_id: str = MOBILITYBENCH) -> RunData:
    """Open ``data`` (None = the env's bundled set) and describe it: path, kind, fingerprint, load report (a URI
    recorded without its credentials)."""
    from mobility_env.datasource import redact

    path, kind = data_path(check_env_id(env_id), data)
    store, report = suite_of(env_id).part("runtime").open_run(path, lookup_config)
    store.env_id = env_id
    if report is not None and len(report.get("rejected") or []) > MAX_STORED_REJECTIONS:
        report = {**report, "rejected_count": len(report["rejected"]),
                  "rejected": report["rejected"][:MAX_STORED_REJECTIONS]}
    info = {"data": None if data is None else redact(str(data)), "data_path": str(path), "data_kind": kind,
            "data_fingerprint": data_fingerprint(path), "episodes_in_data": len(store.ids), "load_report": report}
    if env_id != env_ids()[0]:  # run.json names the suite (runs from before --env existed are the first suite's)
        info = {"env_id": env_id, **info}
    return RunData(store=store, info=info)


def describe_data(info: dict[str, Any]) -> list[str]:
    """Lines telling the user what was loaded: path (a URI's, and where this node's copy is), counts, repairs, the
    first rejections."""
    from mobility_env.datasource import is_uri, redact

    unit = suite_of_run(info).unit
    where = info["data_path"]
    if is_uri(info.get("data")) and not str(info["data"]).startswith("file:"):
        where = f"{redact(str(info['data']))} (copy on this node: {info['data_path']})"
    lines = [f"data: {where} ({info['data_kind']}, {info['episodes_in_data']} {unit})"]
    report = info.get("load_report") or {}
    if "loaded" not in report:
        if report:  # a generated set's description (generator, seed, mix...): its scalars, the size of the rest
            parts = [f"{key}: {len(value)} entries" if isinstance(value, (dict, list)) else f"{key} {str(value)[:80]}"
                     for key, value in list(report.items())[:8]]
            lines.append("data description: " + ", ".join(parts) + " (all of it in run.json)")
        return lines
    rejected = report.get("rejected") or []
    n_rejected = report.get("rejected_count", len(rejected))
    notes = report.get("repairs_by_kind") or {}
    line = (f"load report: {report.get('loaded', 0)} loaded ({report.get('repaired', 0)} repaired), "
            f"{n_rejected} rejected")
    if notes:
        line += "; notes: " + ", ".join(f"{k}={v}" for k, v in sorted(notes.items()))
    lines.append(line)
    for rejection in rejected[:5]:
        where = f"{Path(str(rejection.get('file', ''))).name}, row {rejection.get('row')}"
        if rejection.get("column"):
            where += f", column {rejection['column']!r}"
        lines.append(f"  rejected: {where}: {rejection.get('reason')}")
    if n_rejected > 5:
        lines.append(f"  ... and {n_rejected - 5} more rejected row(s) (listed in run.json)")
    if notes.get("missing_response"):
        lines.append(f"warning: {notes['missing_response']} gold call(s) have no recorded response (a missing or "
                     "empty response column?); replaying them misses, which lowers every agent's scores on this data")
    return lines


def select_episodes(all_ids: list[str], scenario_of: Callable[[str], str], config: RunConfig) -> list[str]:
    if config.limit is not None and config.limit < 1:
        raise ConfigError(f"--limit must be at least 1, got {config.limit}")
    ids = list(config.episode_ids) if config.episode_ids else list(all_ids)
    unknown = sorted(set(ids) - set(all_ids))
    if unknown:
        close = difflib.get_close_matches(unknown[0], all_ids, n=1, cutoff=0.85)
        raise ConfigError(f"unknown episode id(s): {', '.join(unknown[:5])}"
                          + (f" and {len(unknown) - 5} more" if len(unknown) > 5 else "")
                          + (f"; did you mean {close[0]!r}?" if close else "")
                          + f" ({len(all_ids):,} in this data, e.g. {', '.join(all_ids[:3])})")
    if config.scenarios:
        counts: dict[str, int] = {}
        for episode_id in all_ids:
            scenario = scenario_of(episode_id)
            counts[scenario] = counts.get(scenario, 0) + 1
        known = {s.lower() for s in counts}
        bad = [s for s in config.scenarios if s.lower() not in known]
        if bad:
            valid = "; ".join(f"{name!r} ({n})" for name, n in sorted(counts.items()))
            close = difflib.get_close_matches(bad[0], list(counts), n=1, cutoff=0.6)
            raise ConfigError(f"no episode has scenario {', '.join(repr(s) for s in bad)}"
                              + (f"; did you mean {close[0]!r}?" if close else "")
                              + f"; scenarios in this data (episodes): {valid}")
        wanted = {s.lower() for s in config.scenarios}
        ids = [e for e in ids if scenario_of(e).lower() in wanted]
        if not ids:
            raise ConfigError(f"no selected episode has scenario {', '.join(config.scenarios)}")
    if config.limit is not None:
        ids = ids[: config.limit]
    return ids


# --------------------------------------------------------------------------- writing
def worker_failure_record(item: WorkItem, exc: BaseException, scenario: str | None) -> dict[str, Any]:
    """The result and trajectory of an episode that failed outside the agent's own guard."""
    from mobility_env.mobilitybench.episode import FAMILY_OF

    episode_id, sample_index, seed = item
    failure = {"type": "worker_error", "error": type(exc).__name__, "message": str(exc)[:500]}
    return {"result": {"episode_id": episode_id, "sample_index": sample_index, "metrics": {}, "verdict": None,
                       "failure": failure, "seed": seed, "input_tokens": 0, "output_tokens": 0,
                       "task_scenario": scenario, "intent_family": FAMILY_OF.get(scenario or ""),
                       "total_reward": 0.0, "steps": 0,
                       "model_calls": {"requests": 0, "retries": 0, "timeouts": 0, "cutoffs": 0, "wall_s": 0.0,
                                       "tools_offered": 0, "tool_calls": 0}},
            "trajectory": {"episode_id": episode_id, "sample_index": sample_index, "steps": [], "failure": failure}}


#: Episodes offered tools, in a row from the start of a session, without one tool call before the run warns.
NO_TOOL_CALL_EPISODES = 3


class RunWriter:
    """Appends result and trajectory lines, thread-safe, flushed per line.

    ``write`` never raises for what a record contains; an I/O error undoes the partial pair
    (so no line is cut) and is counted; :data:`MAX_WRITE_FAILURES` in a row raise
    :class:`RunWriteError`.
    """

    def __init__(self, out_dir: Path, log: Callable[[str], None] | None = None):
        self._lock = threading.Lock()
        self._log = log
        self._results_path = out_dir / RESULTS_FILE
        # unbuffered: a failed write leaves nothing in a buffer to surface with the next record
        self._trajectories = (out_dir / TRAJECTORIES_FILE).open("ab", buffering=0)
        self._results = self._results_path.open("ab", buffering=0)
        self.written = 0
        self.unwritten: list[tuple[str, int]] = []
        self._failures_in_a_row = 0
        self._episodes_without_tool_calls = 0
        self._tool_use_verdict: str | None = None

    def write(self, item: WorkItem, record: Any) -> bool:
        """Write ``record`` (an agent's ``{"result", "trajectory"}``) for ``item``; True when on disk."""
        return self.write_encoded(item, *encoded_record(item, record))

    def write_encoded(self, item: WorkItem, result: dict[str, Any], lines: tuple[bytes, bytes]) -> bool:
        """Write what :func:`encoded_record` made of a record (where the episode ran: a Ray worker); see ``write``."""
        handles = (self._trajectories, self._results)
        with self._lock, _signals_held():
            sizes = [os.fstat(handle.fileno()).st_size for handle in handles]
            try:
                # Trajectory first: a result line only exists once its trajectory is on disk.
                for handle, line in zip(handles, lines):
                    view = memoryview(line)
                    while view:
                        view = view[handle.write(view):]
            except OSError as exc:
                for handle, size in zip(handles, sizes):  # no cut line, no half pair
                    with contextlib.suppress(OSError):
                        os.ftruncate(handle.fileno(), size)
                self.unwritten.append(item[:2])
                self._failures_in_a_row += 1
                if self._log:
                    self._log(f"warning: could not write the result of {item[0]} sample {item[1]} ({exc}); "
                              "it will be re-run on --resume")
                if self._failures_in_a_row >= MAX_WRITE_FAILURES:
                    raise RunWriteError(f"{self._failures_in_a_row} results in a row could not be written to "
                                        f"{self._results_path.parent} ({exc}); stopping") from exc
                return False
            self._failures_in_a_row = 0
            self.written += 1
        self._watch_tool_use(result)
        return True

    def _watch_tool_use(self, result: dict[str, Any]) -> None:
        """Warn once (console and ``run.json`` ``warnings``) when the first :data:`NO_TOOL_CALL_EPISODES`
        episodes that were offered tools made no tool call at all: a server that drops ``tools``
        (no function-calling chat template) or a model that ignores them."""
        calls = result.get("model_calls")
        if self._tool_use_verdict is not None or not isinstance(calls, dict) or not calls.get("tools_offered"):
            return
        if calls.get("tool_calls"):
            self._tool_use_verdict = "ok"
            return
        self._episodes_without_tool_calls += 1
        if self._episodes_without_tool_calls < NO_TOOL_CALL_EPISODES:
            return
        self._tool_use_verdict = "none"
        message = (f"the first {NO_TOOL_CALL_EPISODES} episodes offered tools made no tool call: the server may drop "
                   "`tools` (llama.cpp without a function-calling chat format, vLLM without --enable-auto-tool-choice) "
                   "or the model ignores them (in json mode: it does not write the JSON action protocol); check "
                   "with `mobility-env models check`")
        if self._log:
            self._log(f"warning: {message}")
        run_file = self._results_path.parent / RUN_FILE
        with contextlib.suppress(OSError, ValueError):
            info = json.loads(run_file.read_text(encoding="utf-8"))
            if isinstance(info, dict):
                info.setdefault("warnings", []).append({"kind": "no_tool_calls", "message": message})
                write_text_atomic(run_file, json_text(info, indent=2) + "\n")

    def close(self) -> None:
        for handle in (self._results, self._trajectories):
            with contextlib.suppress(OSError):
                handle.close()


def encoded_record(item: WorkItem, record: Any) -> tuple[dict[str, Any], tuple[bytes, bytes]]:
    """The normalized result of ``record`` and its two lines (trajectory, result) as :class:`RunWriter` writes them."""
    record = normalized_record(item, record)
    lines = (json_line(record["trajectory"]).encode("utf-8"), json_line(record["result"]).encode("utf-8"))
    return record["result"], lines


def normalized_record(item: WorkItem, record: Any) -> dict[str, Any]:
    """``record`` with its key set from ``item``; anything that is not a record becomes a worker failure."""
    if not (isinstance(record, dict) and isinstance(record.get("result"), dict)):
        return worker_failure_record(item, TypeError(f"the agent returned {type(record).__name__}, not a record"), None)
    result = record["result"]
    trajectory = cast(dict, record.get("trajectory") if isinstance(record.get("trajectory"), dict) else {})
    for part in (result, trajectory):
        part.setdefault("episode_id", item[0])
        part.setdefault("sample_index", item[1])
    if (result["episode_id"], result["sample_index"]) != item[:2]:
        exc = ValueError(f"the agent's record names {result['episode_id']!r} sample {result['sample_index']}")
        return worker_failure_record(item, exc, result.get("task_scenario"))
    return {**record, "trajectory": trajectory}


# --------------------------------------------------------------------------- fatal errors and signals
def fatal_error_name(exc: BaseException | None) -> str | None:
    """The :data:`FATAL_ERRORS` class name behind ``exc`` (its Ray ``cause`` and chain included)."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        for cls in type(exc).__mro__:
            if cls.__name__ in FATAL_ERRORS:
                return cls.__name__
        exc = getattr(exc, "cause", None) or exc.__cause__ or exc.__context__
    return None


def fatal_failure(record: Any) -> dict[str, Any] | None:
    """A recorded failure of a fatal kind (an agent that caught ``EndpointDown`` itself)."""
    if isinstance(record, dict) and isinstance(record.get("result"), dict):
        failure = record["result"].get("failure")
        if isinstance(failure, dict) and failure.get("type") in FATAL_ERRORS:
            return failure
    return None


def _in_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """Hold SIGINT/SIGTERM/SIGHUP while a record is written (main thread, POSIX), so no line is cut."""
    if not (_in_main_thread() and hasattr(signal, "pthread_sigmask")):
        yield
        return
    held = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


@contextlib.contextmanager
def terminate_on_signals() -> Iterator[None]:
    """Turn SIGTERM and SIGHUP into :class:`Terminated` in the main thread while the run lasts."""
    if not _in_main_thread():
        yield
        return

    def handler(signum: int, frame: Any) -> None:
        raise Terminated(signum)

    names = [s for s in ("SIGTERM", "SIGHUP") if hasattr(signal, s)]
    previous = {name: signal.signal(getattr(signal, name), handler) for name in names}
    try:
        yield
    finally:
        for name, old in previous.items():
            signal.signal(getattr(signal, name), old)


def stopped_message(name: str, message: str, out_dir: Path, written: int, pending: int) -> str:
    return (f"run stopped: {name}: {message} — {written} result(s) written this session are kept in "
            f"{out_dir / RESULTS_FILE}; {pending} episode(s) not run. Fix the cause and continue with "
            f"`mobility-env run --resume --out {out_dir}` (same options).")


# --------------------------------------------------------------------------- the run directory
@dataclass
class RunSession:
    """One process writing to a run directory: its lock and what was already done."""

    lock: RunLock
    done: set[tuple[str, int]]
    created_dir: bool

    def release(self) -> None:
        self.lock.release()


def run_identity(config: RunConfig, data: RunData) -> dict[str, Any]:
    """What must be equal for two sessions to belong to one run (compared on ``--resume``): the
    agent and its settings, the data, seed, env options and the code's format versions (results
    of two observation, reward or verdict versions are not comparable)."""
    identity = {"agent": config.meta.get("agent"), "model": config.meta.get("model"), **config.identity,
                "data": data.info["data_fingerprint"], "seed": config.seed,
                "env": {k: v for k, v in config.env_kwargs.items()}, **format_versions()}
    if config.env_id != env_ids()[0]:  # runs from before --env existed are the first suite's
        identity.update({"env_id": config.env_id, **suite_of(config.env_id).part("scoring").format_versions()})
    return json.loads(json_text(identity))  # the form it has in run.json


def identity_differences(recorded: dict[str, Any], current: dict[str, Any],
                         paths: tuple[str | None, str | None] = (None, None)) -> list[str]:
    """What differs between two identities, readably (data named by path and short fingerprint)."""
    def shown(key: str, value: Any, path: str | None) -> str:
        if key == "data" and isinstance(value, str):
            return f"{path or 'data'} ({value[:19]}…)"
        if key in FORMAT_VERSION_KEYS and value is None:
            return "none recorded (a run from before format versions were recorded)"
        return repr(value)

    keys = list(recorded) + [k for k in current if k not in recorded]
    return [f"{key}: the run has {shown(key, recorded.get(key), paths[0])}, this command "
            f"{shown(key, current.get(key), paths[1])}" for key in keys if recorded.get(key) != current.get(key)]


def check_out_dir(config: RunConfig) -> None:
    """What can be refused about ``--out`` before any data is loaded: a file, or a run's results without
    ``--resume`` (:func:`open_run_dir` checks them again under the lock, with the rest)."""
    out = config.out_dir
    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out {out} is a file, not a run directory")
    if (out / LOCK_FILE).exists():  # a run writing there now: say so (its pid), whatever else holds
        RunLock(out).acquire().release()
    results = out / RESULTS_FILE
    if results.exists() and results.stat().st_size > 0 and not config.resume:
        raise ConfigError(f"{out} already holds results; pass --resume to continue it or choose another --out")


def open_run_dir(config: RunConfig, data: RunData) -> tuple[RunSession, dict[str, Any] | None]:
    """Lock ``config.out_dir``, refuse a mixed or unintended resume; return the session and old run.json."""
    out = config.out_dir
    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out {out} is a file, not a run directory")
    created = not out.exists()
    lock = RunLock(out).acquire()
    try:
        results = out / RESULTS_FILE
        if results.exists() and results.stat().st_size > 0 and not config.resume:
            raise ConfigError(f"{out} already holds results; pass --resume to continue it or choose another --out")
        previous = read_run_info(out) if config.resume else None
        if previous is not None and isinstance(previous.get("identity"), dict):
            differences = identity_differences(previous["identity"], run_identity(config, data),
                                               (previous.get("data_path"), data.path))
            if differences and not config.force_resume:
                raise ResumeMismatch(f"--resume would mix two different runs in {out}: " + "; ".join(differences)
                                     + ". Use another --out, or pass --force-resume to continue anyway "
                                       "(the session is recorded in run.json)")
    except BaseException:
        lock.release()
        raise
    return RunSession(lock=lock, done=set(), created_dir=created), previous


def abandon_run_dir(session: RunSession, out: Path) -> None:
    """Release the lock; remove the directory again when this session created it and wrote nothing."""
    session.release()  # removes run.lock too
    if session.created_dir:
        with contextlib.suppress(OSError):
            out.rmdir()


def repair_run_files(out: Path) -> list[str]:
    """Remove cut last lines of every append-only file, and a trajectory whose result never landed."""
    notes = []
    for name in APPEND_ONLY_FILES:
        removed = repair_tail(out / name)
        if removed:
            notes.append(f"repaired {name}: removed a line cut by a crash ({removed} bytes)")
    # Records are written in (trajectory, result) pairs: one trajectory more than results means
    # the process died between the two writes; that episode is re-run.
    if count_lines(out / TRAJECTORIES_FILE) == count_lines(out / RESULTS_FILE) + 1:
        drop_last_line(out / TRAJECTORIES_FILE)
        notes.append(f"repaired {TRAJECTORIES_FILE}: removed a trajectory whose result was never written")
    return notes


def start_run(config: RunConfig, data: RunData, session: RunSession, previous: dict[str, Any] | None,
              backend: str) -> None:
    """Repair the run files, read what is done, and write ``run.json`` with this session."""
    out = config.out_dir
    for note in repair_run_files(out):
        if config.log:
            config.log(note)
    session.done = {record_key(r) for r in read_results(out / RESULTS_FILE)
                    if not (config.retry_failed and r.get("failure"))}
    identity = run_identity(config, data)
    now = time.strftime("%Y-%m-%dT%H:%M:%S")
    this_session = {"started": now, "pid": os.getpid(), "host": socket.gethostname(), "backend": backend,
                    "workers": config.workers, "resume": config.resume, "retry_failed": config.retry_failed,
                    "data_path": data.path, "argv": sys.argv[1:]}
    previous = previous or {}
    recorded = previous.get("identity") if isinstance(previous.get("identity"), dict) else None
    if recorded is None:  # a new run (or one written before run.json recorded its identity)
        run_info = {"format_version": 2, **config.meta, **data.info, "seed": config.seed,
                    **{key: identity[key] for key in FORMAT_VERSION_KEYS},
                    "samples_per_episode": config.samples_per_episode, "env": identity["env"],
                    "identity": identity, "started": previous.get("started", now),
                    "sessions": list(previous.get("sessions") or [])}
    elif recorded == identity:  # the same run; the data may have moved
        run_info = {**previous, **data.info}
    else:  # --force-resume: the run stays what it was, this session says what it used
        run_info = dict(previous)
        this_session.update({"forced": True, "identity": identity, "data": data.info})
    run_info["sessions"] = list(run_info.get("sessions") or []) + [this_session]
    write_text_atomic(out / RUN_FILE, json_text(run_info, indent=2) + "\n")


def record_stop(out: Path, stop: MobilityEnvError) -> None:
    """Say in ``run.json`` (this session's entry, ``stopped``) why the run stopped: the endpoint down, busy
    timeouts included in the message, or refusing the run; on Ray also a cluster that could not be joined."""
    update_session(out, stopped=str(stop))


def update_session(out: Path, **fields: Any) -> None:
    """Set ``fields`` in this session's entry of ``run.json`` (the last one); the Ray backend records the
    cluster it ran on and each lost worker or node there (``ray``, ``worker_failures``)."""
    info = read_run_info(out)
    if not isinstance(info, dict) or not isinstance(info.get("sessions"), list) or not info["sessions"]:
        return
    last = info["sessions"][-1]
    if isinstance(last, dict):
        last.update(fields)
        write_text_atomic(out / RUN_FILE, json_text(info, indent=2) + "\n")


def pending_work(ids: Iterable[str], config: RunConfig, done: set[tuple[str, int]]) -> list[WorkItem]:
    return [(eid, k, episode_seed(config.seed, eid, k)) for eid in ids for k in range(config.samples_per_episode)
            if (eid, k) not in done]


def run_preflight(agent: Any, config: RunConfig | None = None) -> None:
    """``agent.preflight()`` once, before any episode; a fatal error becomes :class:`RunStopped`.

    When the run names no model and the endpoint reported the one it serves (an LLM agent's preflight returns
    ``{"models": {role: model}}``), that model is what ``run.json`` records as ``model`` (with
    ``model_source: "server"``); the run's identity keeps ``None`` (the server's only model), so a resume
    against the same server compares as before."""
    check = getattr(agent, "preflight", None)
    if not callable(check):
        return
    try:
        found = check()
    except Exception as exc:
        name = fatal_error_name(exc)
        if name is None:
            raise
        raise RunStopped(f"{name}: {exc} — checked before the first episode; nothing was run") from exc
    models = found.get("models") if isinstance(found, dict) else None
    if config is not None and config.meta.get("model") is None and isinstance(models, dict) and models:
        served = {str(role): str(model) for role, model in models.items()}
        config.meta["model"] = (next(iter(served.values())) if len(set(served.values())) == 1
                                else ",".join(f"{role}={model}" for role, model in served.items()))
        config.meta["model_source"] = "server"


class _Progress:
    """The run's progress bar (tqdm, on stderr) with the running pass rate: episodes whose verdict passed (FPR in
    MobilityBench-v0, success in MobilePA-v0) and recorded failures so far."""

    def __init__(self, total: int, desc: str):
        from tqdm import tqdm

        self.bar = tqdm(total=total, desc=desc, unit="ep", file=sys.stderr, dynamic_ncols=True)
        self.done = self.passed = self.failures = 0

    def update(self, record: Any = None) -> None:
        self.done += 1
        result = record.get("result", record) if isinstance(record, dict) else None  # a record or its result line
        verdict = result.get("verdict") if isinstance(result, dict) else None
        self.passed += bool(isinstance(verdict, dict) and verdict.get("passed"))
        self.failures += bool(isinstance(result, dict) and result.get("failure"))
        postfix = f"passed {self.passed}/{self.done} ({100 * self.passed / self.done:.0f}%)"
        self.bar.set_postfix_str(postfix + (f", {self.failures} failed to run" if self.failures else ""),
                                 refresh=False)
        self.bar.update()

    def close(self) -> None:
        self.bar.close()


def _progress(total: int, enabled: bool, desc: str) -> _Progress | None:
    return _Progress(total, desc) if enabled else None


# --------------------------------------------------------------------------- local backend
def run_local(agent_factory: AgentFactory, config: RunConfig) -> list[dict[str, Any]]:
    """Run in this process (``workers`` threads, one env and one agent each); see module docstring."""
    if config.workers < 1:
        raise ConfigError("--workers must be at least 1")
    check_out_dir(config)  # before loading data: a refused --out costs nothing
    data = open_run_data(config.data, config.env_kwargs.get("lookup_config"), config.env_id)
    store = data.store
    env_kwargs = {k: v for k, v in config.env_kwargs.items() if k != "lookup_config"}
    ids = select_episodes(store.ids, store.task_scenario, config)
    if config.log:
        for line in describe_data(data.info):
            config.log(line)
    first_env = make_env(store, env_kwargs)
    session, previous = open_run_dir(config, data)
    try:
        probe = agent_factory()
        run_preflight(probe, config)
    except BaseException:
        abandon_run_dir(session, config.out_dir)
        raise
    try:
        start_run(config, data, session, previous, backend="local")
        work = pending_work(ids, config, session.done)
        _play_on_threads(agent_factory, probe, first_env, store, env_kwargs, work, config)
    except RunStopped as exc:
        record_stop(config.out_dir, exc)
        raise
    finally:
        session.release()
    return read_results(config.out_dir / RESULTS_FILE)


def _play_on_threads(agent_factory: AgentFactory, probe: Any, first_env: Any, store: Any, env_kwargs: dict[str, Any],
                     work: list[WorkItem], config: RunConfig) -> None:
    """Play ``work`` on daemon threads; the main thread writes, handles signals and stops."""
    todo: queue.Queue = queue.Queue()
    for item in work:
        todo.put(item)
    outcomes: queue.Queue = queue.Queue()
    stop = threading.Event()
    spare = [(probe, first_env)]
    spare_lock = threading.Lock()

    def worker() -> None:
        agent = env = None
        while not stop.is_set():
            try:
                item = todo.get_nowait()
            except queue.Empty:
                return
            try:
                if agent is None:
                    with spare_lock:
                        agent, env = spare.pop() if spare else (None, None)
                    if agent is None:
                        agent, env = agent_factory(), make_env(store, env_kwargs)
                record = agent.run_episode(env, item[0], seed=item[2], sample_index=item[1])
                outcomes.put((item, record, None))
            except Exception as exc:  # outside the agent's own guard: recorded, unless fatal
                outcomes.put((item, None, exc))

    threads = [threading.Thread(target=worker, name=f"episode-worker-{i}", daemon=True)
               for i in range(min(config.workers, max(1, len(work))))]
    writer = RunWriter(config.out_dir, config.log)
    bar = _progress(len(work), config.progress, "episodes")
    received, fatal, deadline = 0, None, None
    try:
        with terminate_on_signals():
            for thread in threads:
                thread.start()
            while received < len(work) and (deadline is None or time.monotonic() < deadline):
                try:
                    item, record, exc = outcomes.get(timeout=0.2)
                except queue.Empty:
                    if not any(t.is_alive() for t in threads) and outcomes.empty():
                        break  # stopped: every worker finished its last episode
                    continue
                received += 1
                name = fatal_error_name(exc) if exc is not None else None
                failure = fatal_failure(record) if exc is None else None
                if name or failure:  # not written: the episode is re-run on --resume
                    if fatal is None:
                        # failure is a dict whenever name is empty (the condition above)
                        fatal = (name or failure["type"],  # type: ignore[index]
                                 str(exc) if exc is not None
                                 else failure.get("message", ""))  # type: ignore[union-attr]
                        stop.set()  # workers finish the episode they hold and quit
                        deadline = time.monotonic() + STOP_GRACE_S
                    continue
                if exc is not None:
                    record = worker_failure_record(item, exc, _scenario(store, item[0]))
                writer.write(item, record)
                if bar:
                    bar.update(record)
    finally:
        stop.set()
        writer.close()
        if bar:
            bar.close()
    if fatal is not None:
        raise RunStopped(stopped_message(*fatal, config.out_dir, writer.written, len(work) - writer.written))


def _scenario(store: Any, episode_id: str) -> str | None:
    try:
        return store.task_scenario(episode_id)
    except (KeyError, IndexError):
        return None


def default_out_dir(agent: str, data: str | None) -> Path:
    name = Path(data).stem if data else "default"
    return Path("runs") / f"{agent}-{name}-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"
