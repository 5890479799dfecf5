"""Runs that are never lost, never mixed, never misleading: text a model wrote, the run lock,
repair on resume, the run's own data for eval/report/export, resume checks, the load report,
preflight and fatal endpoint errors, and kill-and-resume of real `mobility-env run`
processes on both backends (Ray: loopback-only listeners, no processes left behind).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from mobility_agents.export import RUN_METADATA_KEY, export_run
from mobility_agents.baselines.mobilitybench.oracle import OracleAgent
from mobility_agents.runner import ResumeMismatch, RunConfig, RunStopped, run_local
from mobility_env.errors import ConfigError, DataFileError
from mobility_env.runfiles import RunLock, RunLockedError, read_jsonl, read_results

ROOT = Path(__file__).resolve().parents[1]
CUT_EMOJI = "\ud83d"  # the first half of 😀: what a model cut at a token limit leaves

try:  # the LLM client's class; the runner matches it by name, so a stand-in proves the same
    from mobility_agents.llm.client import EndpointDown
except ImportError:  # pragma: no cover
    from mobility_env.errors import MobilityEnvError

    class EndpointDown(MobilityEnvError):  # type: ignore[no-redef]
        pass


# ----------------------------------------------------------------------------- helpers
def cli(*args: str, cwd: Path, check: bool = True, **kwargs) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "mobility_env.cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300, **kwargs)
    if check:
        assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


def main_cli(capsys, *args: str, code: int = 0) -> tuple[str, str]:
    """``mobility-env ARGS`` in this process (no interpreter start-up); its stdout and stderr."""
    from mobility_env.cli import main

    capsys.readouterr()
    assert main(list(args)) == code
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return captured.out, captured.err


def keys_of(path: Path) -> list[tuple[str, int]]:
    return [(r["episode_id"], r["sample_index"]) for r in read_jsonl(path)]


def _resume_to_the_end(capsys, sample_csv, out, reference):
    """Resume the run; then every (episode, sample) is there exactly once, equal to the uninterrupted run."""
    main_cli(capsys, "run", "--agent", "oracle", "--data", str(sample_csv), "--samples-per-episode", SAMPLES,
             "--out", str(out), "--no-progress", "--resume")
    keys = keys_of(out / "results.jsonl")
    assert len(keys) == len(set(keys)) == len(reference)
    assert scores(read_results(out / "results.jsonl")) == reference
    assert keys_of(out / "trajectories.jsonl") == keys


def scores(records) -> dict[tuple[str, int], tuple]:
    return {(r["episode_id"], r["sample_index"]): (r["metrics"], r["total_reward"], r["failure"]) for r in records}


class CutEmojiOracle(OracleAgent):
    """The oracle, but every answer ends in half an emoji."""

    name = "cut-emoji"

    def play(self, session):
        finish = session.finish
        session.finish = lambda answer, **kw: finish(answer + CUT_EMOJI, **kw)
        super().play(session)


class DownAfterTwo(OracleAgent):
    """Plays two episodes per instance, then finds the endpoint down."""

    name = "flaky-endpoint"
    preflights: list[int] = []

    def __init__(self):
        self.played = 0

    def preflight(self):
        DownAfterTwo.preflights.append(os.getpid())

    def play(self, session):
        self.played += 1
        if self.played > 2:
            raise EndpointDown("http://127.0.0.1:9/v1: cannot connect (connection refused)")
        super().play(session)


class SelfKillingOracle(OracleAgent):
    """Kills its own (Ray worker) process with SIGKILL on its third episode, once per run."""

    marker = ""

    def __init__(self):
        self.played = 0

    def play(self, session):
        self.played += 1
        if self.played == 3 and not os.path.exists(self.marker):
            Path(self.marker).write_text(str(os.getpid()))
            os.kill(os.getpid(), signal.SIGKILL)
        super().play(session)


class DownAtPreflight(OracleAgent):
    def preflight(self):
        raise EndpointDown("http://127.0.0.1:9/v1: cannot connect (connection refused)")


# ----------------------------------------------------------------------------- 1. text a model wrote
def test_a_cut_emoji_answer_is_written_read_back_and_exported(tmp_path, sample_csv, capsys):
    config = RunConfig(out_dir=tmp_path / "run", data=str(sample_csv), limit=3, progress=False)
    records = run_local(CutEmojiOracle, config)
    assert len(records) == 3 and all(r["failure"] is None for r in records)
    trajectories = read_jsonl(tmp_path / "run" / "trajectories.jsonl")
    answers = [t["steps"][-1]["action"]["arguments"]["answer"] for t in trajectories]
    assert all(a.endswith(CUT_EMOJI) for a in answers)  # stored exactly, as a \uXXXX escape
    # every reader copes: eval rewrites eval_results.jsonl, report and export write valid UTF-8
    main_cli(capsys, "eval", str(config.out_dir))
    assert len(read_results(config.out_dir / "eval_results.jsonl")) == 3
    main_cli(capsys, "report", str(config.out_dir))
    (config.out_dir / "report.md").read_text(encoding="utf-8")
    rows = pq.read_table(export_run(config.out_dir, tmp_path / "rl.parquet")).to_pylist()
    finals = [json.loads(row["messages"][-2]["tool_calls"][0]["function"]["arguments"])["answer"] for row in rows]
    assert all(f.endswith("\ufffd") for f in finals)


class OddRecordOracle(OracleAgent):
    """Adds what JSON cannot hold (a set, a tuple key, an object) and a huge answer to episode 3."""

    def __init__(self):
        self.count = 0

    def run_episode(self, env, episode_id, **kwargs):
        self.count += 1
        record = super().run_episode(env, episode_id, **kwargs)
        record["result"]["extra"] = {"tags": {"a"}, (1, 2): object(), "cut": CUT_EMOJI}
        if self.count == 3:
            record["trajectory"]["padding"] = "x" * 400_000
        return record


WRITE_LIMITED_RUN = """
import resource, signal, sys
sys.path.insert(0, sys.argv[3])
from test_run_hardening import OddRecordOracle
from mobility_agents.runner import RunConfig, run_local
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)       # a write past the limit fails with EFBIG
resource.setrlimit(resource.RLIMIT_FSIZE, (300_000, 300_000))
notes = []
records = run_local(OddRecordOracle, RunConfig(out_dir=sys.argv[2], data=sys.argv[1], limit=5, progress=False,
                                               log=notes.append))
print(len(records), [n for n in notes if n.startswith("warning: could not write")])
"""


def test_a_record_that_cannot_be_written_does_not_stop_the_run(tmp_path, sample_csv):
    out = tmp_path / "run"
    proc = subprocess.run([sys.executable, "-c", WRITE_LIMITED_RUN, str(sample_csv), str(out), str(ROOT / "tests")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.startswith("4 ") and "could not write" in proc.stdout  # episode 3 hit the file size limit
    lines = read_jsonl(out / "results.jsonl")
    assert len(lines) == len(read_jsonl(out / "trajectories.jsonl")) == 4  # no cut or half-written pair
    extra = lines[0]["extra"]
    assert extra["tags"] == ["a"] and extra["cut"] == CUT_EMOJI and "(1, 2)" in extra
    resumed = run_local(OracleAgent, RunConfig(out_dir=out, data=str(sample_csv), limit=5, progress=False,
                                               resume=True))
    assert len(resumed) == 5  # the unwritten episode ran again


# ----------------------------------------------------------------------------- 2. lock and repair
SLOW_RUN = """
import sys, time
from mobility_agents.baselines.mobilitybench.oracle import OracleAgent
from mobility_agents.runner import RunConfig, run_local

class SlowOracle(OracleAgent):
    def play(self, session):
        time.sleep(0.25)  # long enough that the holder outlives both attempts below
        super().play(session)

run_local(SlowOracle, RunConfig(out_dir=sys.argv[2], data=sys.argv[1], limit=20, progress=False))
"""


def test_a_second_run_on_the_same_out_fails_fast_naming_the_holder(tmp_path, sample_csv, capsys):
    from mobility_env.cli import main

    out = tmp_path / "run"
    first = subprocess.Popen([sys.executable, "-c", SLOW_RUN, str(sample_csv), str(out)])
    try:
        deadline = time.time() + 60
        while time.time() < deadline and len(read_jsonl(out / "results.jsonl")) < 2:
            time.sleep(0.02)
        for extra in ([], ["--resume"]):
            code = main(["run", "--agent", "oracle", "--data", str(sample_csv), "--out", str(out), "--no-progress",
                         *extra])
            assert code == 2
            assert f"in use by another run (pid {first.pid}" in capsys.readouterr().err
        with pytest.raises(RunLockedError):
            RunLock(out).acquire()
    finally:
        assert first.wait(timeout=120) == 0
    keys = keys_of(out / "results.jsonl")
    assert len(keys) == len(set(keys)) == 20  # nothing written twice
    assert not (out / "run.lock").exists()  # the finished run left no lock file behind
    RunLock(out).acquire().release()  # free again once the holder is gone
    assert not (out / "run.lock").exists()


def test_resume_repairs_cut_lines_in_every_run_file(tmp_path, sample_csv):
    out = tmp_path / "run"
    first = run_local(OracleAgent, RunConfig(out_dir=out, data=str(sample_csv), limit=6, progress=False))
    # a crash between the trajectory and the result of episode 7, then another mid-line in both files
    orphan = read_jsonl(out / "trajectories.jsonl")[0] | {"episode_id": "orphan"}
    with (out / "trajectories.jsonl").open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(orphan) + "\n" + '{"episode_id": "cut", "steps": [{"act')
    with (out / "results.jsonl").open("a", encoding="utf-8") as handle:
        handle.write('{"episode_id": "cut", "metr')
    resumed = run_local(OracleAgent, RunConfig(out_dir=out, data=str(sample_csv), limit=9, progress=False,
                                               resume=True))
    assert resumed[:6] == first and len(resumed) == 9
    results, trajectories = keys_of(out / "results.jsonl"), keys_of(out / "trajectories.jsonl")
    assert results == trajectories and len(set(results)) == 9  # every line parses, pairs aligned


# ----------------------------------------------------------------------------- 4. never mixed, never misleading
def test_resume_with_another_agent_data_or_config_is_refused_unless_forced(tmp_path, sample_csv, built_dir):
    out = tmp_path / "run"
    base = dict(out_dir=out, progress=False, limit=2, meta={"agent": "oracle"})
    run_local(OracleAgent, RunConfig(data=str(sample_csv), **base))
    mixes = {"data": dict(data=str(built_dir)), "agent": dict(meta={"agent": "rule"}),
             "seed": dict(seed=1), "env": dict(env_kwargs={"max_steps": 3}),
             "model": dict(identity={"model": "other-model"})}
    for key, change in mixes.items():
        config = RunConfig(**{**base, "data": str(sample_csv), "resume": True, **change})
        with pytest.raises(ResumeMismatch, match=f"{key}: the run has"):
            run_local(OracleAgent, config)
    # the same run, from another path to the same bytes, resumes; a larger --limit extends it
    copy = tmp_path / "copy.csv"
    copy.write_bytes(sample_csv.read_bytes())
    assert len(run_local(OracleAgent, RunConfig(**{**base, "data": str(copy), "limit": 3, "resume": True}))) == 3
    forced = RunConfig(**{**base, "limit": 4, "data": str(sample_csv), "resume": True, "force_resume": True,
                          "seed": 5})
    assert len(run_local(OracleAgent, forced)) == 4
    run = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert run["seed"] == 0 and run["data_path"] == str(copy.resolve())
    assert [s.get("forced", False) for s in run["sessions"]] == [False, False, True]
    assert run["sessions"][-1]["identity"]["seed"] == 5


def test_eval_report_and_export_use_the_runs_own_data(tmp_path, sample_csv, capsys, monkeypatch):
    data = tmp_path / "mine.csv"
    data.write_bytes(sample_csv.read_bytes())
    run = tmp_path / "run"
    cli("run", "--agent", "oracle", "--data", str(data), "--limit", "4", "--out", str(run), "--no-progress",
        cwd=tmp_path)
    monkeypatch.chdir(tmp_path.parent)
    out, _ = main_cli(capsys, "eval", str(run))  # no --data: the run's own, not the bundled set
    assert "recomputed 4/4" in out
    scorecard = (run / "scorecard.json").read_bytes()
    assert json.loads(scorecard)["source"]["data"] == str(data.resolve())
    main_cli(capsys, "report", str(run))
    assert str(data.resolve()) in (run / "report.md").read_text(encoding="utf-8")
    table = pq.read_table(export_run(run, tmp_path / "rl.parquet"))
    assert json.loads(table.schema.metadata[RUN_METADATA_KEY])["data_path"] == str(data.resolve())

    _, err = main_cli(capsys, "eval", str(run), "--data", str(ROOT / "datasets" / "default"), code=2)
    assert "not the run's data" in err
    data.rename(tmp_path / "moved.csv")
    _, err = main_cli(capsys, "eval", str(run), code=2)
    assert "is gone" in err and "--data" in err
    assert (run / "scorecard.json").read_bytes() == scorecard  # never overwritten by a refused eval
    out, _ = main_cli(capsys, "eval", str(run), "--data", str(tmp_path / "moved.csv"))
    assert "recomputed 4/4" in out


def test_run_prints_and_stores_the_load_report(tmp_path, sample_table, write_csv):
    header, rows = sample_table
    data = write_csv(tmp_path / "no_routes.csv", [h for h in header if h != "route_ans"], rows)
    proc = cli("run", "--agent", "oracle", "--data", str(data), "--limit", "2", "--out", "run", "--no-progress",
               cwd=tmp_path)
    report = json.loads((tmp_path / "run" / "run.json").read_text(encoding="utf-8"))["load_report"]
    missing = report["repairs_by_kind"]["missing_response"]
    assert report["loaded"] + len(report["rejected"]) == len(rows) and missing > 20
    assert f"load report: {report['loaded']} loaded" in proc.stdout and f"missing_response={missing}" in proc.stdout
    assert f"warning: {missing} gold call(s) have no recorded response" in proc.stdout


def test_an_unknown_scenario_lists_the_valid_names(tmp_path, sample_csv):
    config = RunConfig(out_dir=tmp_path / "r", data=str(sample_csv), scenarios=["Weather Query", "Flying"],
                       progress=False)
    with pytest.raises(ConfigError, match="no episode has scenario 'Flying'") as caught:
        run_local(OracleAgent, config)
    assert "'Weather Query' (" in str(caught.value) and "'POI Query' (" in str(caught.value)
    assert not (tmp_path / "r").exists()


# ----------------------------------------------------------------------------- 6. preflight and fatal errors
def test_preflight_runs_once_and_a_down_endpoint_stops_the_run_keeping_results(tmp_path, sample_csv):
    DownAfterTwo.preflights.clear()
    out = tmp_path / "run"
    with pytest.raises(RunStopped, match="EndpointDown: .*cannot connect") as caught:
        run_local(DownAfterTwo, RunConfig(out_dir=out, data=str(sample_csv), limit=8, workers=2, progress=False))
    assert DownAfterTwo.preflights == [os.getpid()]
    assert "--resume" in str(caught.value)
    stopped = json.loads((out / "run.json").read_text(encoding="utf-8"))["sessions"][-1]["stopped"]
    assert "EndpointDown" in stopped and "cannot connect" in stopped  # run.json says why the run stopped
    kept = read_results(out / "results.jsonl")
    # each worker's agent played two; the episode that met the down endpoint is not recorded
    assert 2 <= len(kept) <= 4 and all(r["failure"] is None for r in kept)
    assert keys_of(out / "trajectories.jsonl") == keys_of(out / "results.jsonl")
    resumed = run_local(OracleAgent, RunConfig(out_dir=out, data=str(sample_csv), limit=8, resume=True,
                                               progress=False))
    assert len(resumed) == 8 and resumed[:len(kept)] == kept

    with pytest.raises(RunStopped, match="before the first episode"):
        run_local(DownAtPreflight, RunConfig(out_dir=tmp_path / "never", data=str(sample_csv), progress=False))
    assert not (tmp_path / "never").exists()


def test_cli_exit_status_of_a_stopped_run(tmp_path, sample_csv, monkeypatch, capsys):
    from mobility_agents import commands
    from mobility_env.cli import main

    monkeypatch.setattr(commands, "agent_factory", lambda args, llm_config=None: DownAtPreflight)
    code = main(["run", "--agent", "oracle", "--data", str(sample_csv), "--out", str(tmp_path / "r"),
                 "--no-progress"])
    assert code == 3 and "EndpointDown" in capsys.readouterr().err


# ----------------------------------------------------------------------------- 3 + 5. killed processes
SAMPLES = "2"  # 162 (episode, sample) pairs of the real sample: long enough to be killed mid-run


def _proc_table() -> dict[int, tuple[int, str]]:
    table = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = Path(f"/proc/{entry}/stat").read_bytes().rsplit(b")", 1)[1].split()
                table[int(entry)] = (int(fields[1]), fields[19].decode())
            except (OSError, IndexError):
                continue
    return table


def _track_descendants(root: int, tracked: dict[int, str]) -> dict[int, str]:
    table = _proc_table()
    if root in table:
        tracked.setdefault(root, table[root][1])
    changed = True
    while changed:
        changed = False
        for pid, (ppid, start) in table.items():
            if ppid in tracked and pid not in tracked:
                tracked[pid] = start
                changed = True
    return tracked


def _alive(tracked: dict[int, str]) -> list[int]:
    table = _proc_table()
    return [pid for pid, start in tracked.items() if pid in table and table[pid][1] == start]


def _wait_all_gone(tracked: dict[int, str], timeout: float = 60) -> list[int]:
    deadline = time.time() + timeout
    while _alive(tracked) and time.time() < deadline:
        time.sleep(0.2)
    return [f"{pid}: {Path(f'/proc/{pid}/cmdline').read_bytes()[:80]!r}" for pid in _alive(tracked)]


def _listening_addresses(pids) -> list[str]:
    """Local addresses of the TCP sockets these processes listen on."""
    inodes = set()
    for pid in pids:
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
                if target.startswith("socket:["):
                    inodes.add(target[8:-1])
        except OSError:
            continue
    addresses = []
    for name, family in (("tcp", socket.AF_INET), ("tcp6", socket.AF_INET6)):
        for line in Path(f"/proc/net/{name}").read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in inodes:  # 0A = LISTEN
                raw = bytes.fromhex(fields[1].split(":")[0])
                raw = b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))  # host-order words
                addresses.append(socket.inet_ntop(family, raw))
    return addresses


def _start_run(out: Path, data: Path, *extra: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "mobility_env.cli", "run", "--agent", "oracle", "--data", str(data),
                             "--samples-per-episode", SAMPLES, "--out", str(out), "--no-progress", *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait_lines(path: Path, n: int, proc: subprocess.Popen, tracked: dict[int, str] | None = None) -> int:
    deadline = time.time() + 120
    count = 0
    while time.time() < deadline and proc.poll() is None:
        if tracked is not None:
            _track_descendants(proc.pid, tracked)
        count = len(read_jsonl(path)) if path.exists() else 0
        if count >= n:
            return count
        time.sleep(0.01)
    raise AssertionError(f"the run ended or stalled with {count} lines: {proc.communicate()[1][-2000:]}")


@pytest.fixture(scope="module")
def reference(sample_csv, tmp_path_factory):
    """An uninterrupted run of the same work: what every interrupted one must equal."""
    out = tmp_path_factory.mktemp("reference") / "run"
    return scores(run_local(OracleAgent, RunConfig(out_dir=out, data=str(sample_csv), samples_per_episode=int(SAMPLES),
                                                   progress=False)))


def test_local_run_killed_and_resumed_loses_and_duplicates_nothing(tmp_path, sample_csv, reference, capsys):
    out = tmp_path / "run"
    proc = _start_run(out, sample_csv)
    killed_at = _wait_lines(out / "results.jsonl", 30, proc)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    with (out / "trajectories.jsonl").open("ab") as handle:  # as if the kill had cut a write in half
        handle.write(b'{"episode_id": "mb-')
    assert killed_at < len(reference)
    _resume_to_the_end(capsys, sample_csv, out, reference)


@pytest.mark.ray
def test_ray_run_killed_or_terminated_loses_nothing_and_leaves_no_process(tmp_path, sample_csv, reference, capsys):
    pytest.importorskip("ray")
    out = tmp_path / "run"

    # 1. SIGKILL the driver mid-run: Ray listened on loopback only, and nothing of it survives
    tracked: dict[int, str] = {}
    driver = _start_run(out, sample_csv, "--backend", "ray", "--workers", "2")
    _wait_lines(out / "results.jsonl", 10, driver, tracked)
    addresses = _listening_addresses(_alive(_track_descendants(driver.pid, tracked)))
    assert addresses and all(a in ("127.0.0.1", "::ffff:127.0.0.1", "::1") for a in addresses), addresses
    assert any(Path(f"/proc/{pid}/cmdline").read_bytes().startswith(b"ray::RolloutWorker") for pid in _alive(tracked))
    driver.send_signal(signal.SIGKILL)
    driver.wait(timeout=30)
    assert _wait_all_gone(tracked) == []
    assert len(read_results(out / "results.jsonl")) < len(reference)

    # 2. resume on Ray, then SIGTERM: a clean stop (exit 143, lock free) that leaves no process either
    tracked = {}
    driver = _start_run(out, sample_csv, "--backend", "ray", "--workers", "2", "--resume")
    # the first hand-outs hold one episode each (later ones ~0.1 s of work): two lines say the workers play, and leave
    # most of the run to stop
    _wait_lines(out / "results.jsonl", len(read_jsonl(out / "results.jsonl")) + 2, driver, tracked)
    driver.send_signal(signal.SIGTERM)
    stdout, stderr = driver.communicate(timeout=120)
    assert driver.returncode == 143 and "SIGTERM" in stderr and "Traceback" not in stderr
    assert _wait_all_gone(tracked) == []
    RunLock(out).acquire().release()
    assert len(read_results(out / "results.jsonl")) < len(reference)

    # 3. resume to the end: every (episode, sample) exactly once, equal to the uninterrupted run
    _resume_to_the_end(capsys, sample_csv, out, reference)


# ----------------------------------------------------------------------------- Ray, in process
@pytest.fixture(scope="module")
def ray_session():
    ray = pytest.importorskip("ray")
    from mobility_agents.ray_runner import ray_cluster

    with ray_cluster(None, 2) as started:
        ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
        yield started


@pytest.mark.ray
def test_ray_backend_cut_emoji_preflight_and_endpoint_down(tmp_path, built_dir, ray_session):
    from mobility_agents.ray_runner import run_ray

    records = run_ray(CutEmojiOracle, RunConfig(out_dir=tmp_path / "emoji", data=str(built_dir), limit=3,
                                                workers=2, progress=False))
    assert len(records) == 3 and all(r["failure"] is None for r in records)
    trajectories = read_jsonl(tmp_path / "emoji" / "trajectories.jsonl")
    answers = [t["steps"][-1]["action"]["arguments"]["answer"] for t in trajectories]
    assert all(a.endswith(CUT_EMOJI) for a in answers)

    DownAfterTwo.preflights.clear()
    out = tmp_path / "down"
    with pytest.raises(RunStopped, match="EndpointDown"):
        run_ray(DownAfterTwo, RunConfig(out_dir=out, data=str(built_dir), limit=12, workers=2, progress=False))
    assert DownAfterTwo.preflights == [os.getpid()]  # once, in the driver, before any episode
    kept = read_results(out / "results.jsonl")
    assert 2 <= len(kept) <= 4 and all(r["failure"] is None for r in kept)
    assert keys_of(out / "trajectories.jsonl") == keys_of(out / "results.jsonl")
    with pytest.raises(DataFileError):
        run_ray(OracleAgent, RunConfig(out_dir=tmp_path / "x", data=str(tmp_path / "missing.csv"), progress=False))


@pytest.mark.ray
def test_ray_worker_process_killed_mid_run_the_run_completes_with_every_episode_once(tmp_path, built_dir,
                                                                                     ray_session):
    from mobility_agents.ray_runner import run_ray

    SelfKillingOracle.marker = str(tmp_path / "killed.pid")
    records = run_ray(SelfKillingOracle, RunConfig(out_dir=tmp_path / "run", data=str(built_dir), limit=10,
                                                   workers=2, progress=False))
    killed = int(Path(SelfKillingOracle.marker).read_text())
    assert killed != os.getpid() and not Path(f"/proc/{killed}").exists()
    keys = keys_of(tmp_path / "run" / "results.jsonl")
    assert len(keys) == len(set(keys)) == len(records) == 10
    assert all(r["failure"] is None and r["metrics"]["DR"] == 1.0 for r in records)


def test_run_files_nested_deeper_than_the_parser_are_typed_errors(tmp_path):
    """A results line, a run.json or a line read back by offset nested ~5,000 deep: DataFileError naming the
    file (and line), not a RecursionError."""
    from mobility_env.runfiles import iter_jsonl, read_json_file, read_jsonl_line

    deep = '{"a": ' + "[" * 5_000 + "]" * 5_000 + "}"
    lines = tmp_path / "results.jsonl"
    lines.write_text('{"episode_id": "e"}\n' + deep + "\n", encoding="utf-8")
    with pytest.raises(DataFileError, match="row 2: not JSON \\(nested too deeply\\)"):
        read_jsonl(lines)
    with pytest.raises(DataFileError, match="nested too deeply"):
        list(iter_jsonl(lines))
    with pytest.raises(DataFileError, match="no longer a complete JSON object"):
        read_jsonl_line(lines, len('{"episode_id": "e"}\n'))
    whole = tmp_path / "run.json"
    whole.write_text(deep, encoding="utf-8")
    with pytest.raises(DataFileError, match="run.json: not valid JSON \\(nested too deeply\\)"):
        read_json_file(whole)
