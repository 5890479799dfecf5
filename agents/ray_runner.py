"""Ray backend of the runner: rollout workers as Ray actors.

Each actor holds its own env (a built directory is opened memory-mapped, so workers share the
page cache instead of copying the sandbox) and plays ``concurrency`` episodes at once on
threads (Ray threaded actors), so an LLM-bound policy is limited by the model server, not by
the env. The driver hands out work, writes each (episode_id, sample_index) exactly once, and
when an actor dies mid-episode (killed process, crashed node) it starts a replacement and
re-runs the unfinished episodes: nothing is lost and nothing is duplicated. Results are the
same as the local backend's for deterministic agents, because per-episode seeds do not depend
on which worker ran the episode. Every guarantee of :mod:`mobility_agents.runner` (lock,
resume checks, preflight, fatal errors, signals) holds here too.

**The local cluster** (no ``address``) is this run's own: every Ray server binds 127.0.0.1
only (the node address is the loopback; checked with ``ss -ltnp`` on Ray 2.60: GCS, raylet,
workers, agents), ``num_cpus`` is at most ``workers``, no dashboard, no usage reporting. It
is shut down when the run ends, however it ends: normally and on SIGTERM/SIGHUP/Ctrl-C by
``ray.shutdown()``; when the driver is killed (SIGKILL) Ray's own fate sharing takes the GCS
and raylet down and a watchdog process (:func:`watchdog_main`, Linux) kills what outlives them
(the dashboard and runtime-env agents). With ``address`` the driver only joins that cluster
and disconnects at the end. A Ray already initialized by the caller is used as it is.
"""

from __future__ import annotations

import contextlib
import inspect
import os
import subprocess
import sys
import threading
import time
from collections import deque
from typing import Any, Callable, Iterator

from mobility_env.errors import ConfigError

from .targets import MOBILITYBENCH, make_env, open_store

from .runner import (RESULTS_FILE, STOP_GRACE_S, RunConfig, RunStopped, RunWriter, WorkItem, _progress, _scenario,
                     abandon_run_dir, check_out_dir, describe_data, fatal_error_name, fatal_failure, open_run_data,
                     open_run_dir, pending_work, read_results, record_stop, run_preflight, select_episodes, start_run,
                     stopped_message, terminate_on_signals, worker_failure_record)

MAX_REPLACEMENTS = 16
WAIT_S = 0.5  # ray.wait slice: the driver stays responsive to signals


class RolloutWorker:
    """The body of a Ray actor: one env and one agent per thread."""

    def __init__(self, agent_factory: Callable[[], Any], data: str | None, env_kwargs: dict[str, Any],
                 env_id: str = MOBILITYBENCH):
        self.agent_factory = agent_factory
        self.env_kwargs = {k: v for k, v in env_kwargs.items() if k != "lookup_config"}
        self.store = open_store(env_id, data, env_kwargs.get("lookup_config"))
        self.local = threading.local()

    def pid(self) -> int:
        return os.getpid()

    def play(self, episode_id: str, sample_index: int, seed: int) -> dict[str, Any]:
        if not hasattr(self.local, "env"):
            self.local.env = make_env(self.store, self.env_kwargs)
            self.local.agent = self.agent_factory()
        return self.local.agent.run_episode(self.local.env, episode_id, seed=seed, sample_index=sample_index)


# --------------------------------------------------------------------------- the cluster
@contextlib.contextmanager
def _loopback_node() -> Iterator[None]:
    """Make Ray pick 127.0.0.1 as this node's address while ``ray.init`` starts a cluster.

    ``ray.init(_node_ip_address="127.0.0.1")`` is rewritten to the host's address by Ray; the
    switch Ray uses for its local-only clusters (macOS, Windows) is ``ENABLE_RAY_CLUSTER``: with
    it off the node address is the loopback and every server binds there.
    """
    try:
        from ray._private import ray_constants
    except ImportError:  # another Ray layout: fall back to Ray's defaults
        yield
        return
    previous = getattr(ray_constants, "ENABLE_RAY_CLUSTER", None)
    ray_constants.ENABLE_RAY_CLUSTER = False
    try:
        yield
    finally:
        ray_constants.ENABLE_RAY_CLUSTER = previous


def require_ray() -> None:
    """Ray is the ``ray`` extra, not a core dependency: without it, one line naming the extra."""
    import importlib.util

    if importlib.util.find_spec("ray") is None:
        raise ConfigError("--backend ray needs Ray, which is not installed: pip install 'mobility-env[ray]' "
                          "(or run without --backend ray: episodes then run in this process)")


@contextlib.contextmanager
def ray_cluster(address: str | None, workers: int) -> Iterator[Any]:
    """``ray`` connected for one run; a cluster started here is stopped here (see module docstring)."""
    require_ray()
    import ray

    if ray.is_initialized():
        yield ray
        return
    watchdog = None
    if address:
        try:
            ray.init(address=address, log_to_driver=False)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise ConfigError(f"--address {address}: cannot join that Ray cluster ({str(exc).strip()[:300]})") from exc
    else:
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        with _loopback_node():
            ray.init(num_cpus=max(1, min(workers, os.cpu_count() or 1)), include_dashboard=False,
                     log_to_driver=False)
        watchdog = start_watchdog(ray)
    try:
        yield ray
    finally:
        ray.shutdown()
        if watchdog is not None:
            stop_watchdog(watchdog)


def _ray_children(ray_dir: str) -> list[int]:
    """Pids of this process's children that run Ray's programs (GCS, raylet, agents...)."""
    own = str(os.getpid())
    children = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                ppid = handle.read().rsplit(b")", 1)[1].split()[1].decode()
            if ppid != own:
                continue
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                if ray_dir.encode() in handle.read():
                    children.append(int(entry))
        except (OSError, IndexError):
            continue
    return children


def start_watchdog(ray: Any) -> subprocess.Popen | None:
    """A process that kills this run's Ray processes once the driver is gone (Linux only)."""
    if not os.path.isdir("/proc"):
        return None
    roots = _ray_children(os.path.dirname(ray.__file__))
    if not roots:
        return None
    try:
        source = inspect.getsource(watchdog_main) + f"\nwatchdog_main({roots!r})\n"
    except (OSError, TypeError):  # installed without sources: Ray's own fate sharing only
        return None
    return subprocess.Popen([sys.executable, "-c", source], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True)


def stop_watchdog(watchdog: subprocess.Popen) -> None:
    """Close the driver's end of the pipe (the watchdog cleans up and exits) and wait a little for it."""
    assert watchdog.stdin is not None  # started with stdin=PIPE
    with contextlib.suppress(OSError):
        watchdog.stdin.close()
    with contextlib.suppress(subprocess.TimeoutExpired):
        watchdog.wait(timeout=15)


def watchdog_main(roots: list[int], poll_s: float = 0.5, grace_s: float = 1.0) -> None:
    """Track the Ray processes under ``roots``; when stdin closes (the driver exited or was
    killed), SIGTERM every one still alive, then SIGKILL what remains after ``grace_s``.

    Runs as ``python -c`` with this function's own source: it imports nothing of the project.
    A process is identified by (pid, start time), so a reused pid is never killed.
    """
    import os
    import select
    import signal
    import sys
    import time

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)

    def table() -> dict[int, tuple[int, str]]:
        processes = {}
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    with open(f"/proc/{entry}/stat", "rb") as handle:
                        fields = handle.read().rsplit(b")", 1)[1].split()
                    processes[int(entry)] = (int(fields[1]), fields[19].decode())
                except (OSError, IndexError, ValueError):
                    continue
        return processes

    tracked: dict[int, str] = {}

    def refresh() -> dict[int, tuple[int, str]]:
        processes = table()
        for pid in roots:
            if pid in processes:
                tracked.setdefault(pid, processes[pid][1])
        changed = True
        while changed:
            changed = False
            for pid, (ppid, start) in processes.items():
                if ppid in tracked and pid not in tracked and pid != os.getpid():
                    tracked[pid] = start
                    changed = True
        return processes

    while True:
        refresh()
        readable, _, _ = select.select([sys.stdin], [], [], poll_s)
        if readable and not os.read(sys.stdin.fileno(), 4096):
            break
    for sig, wait in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 0.0)):
        processes = refresh()
        alive = [pid for pid, start in tracked.items() if processes.get(pid, (0, None))[1] == start]
        for pid in alive:
            try:
                os.kill(pid, sig)
            except OSError:
                pass
        deadline = time.monotonic() + wait
        while alive and time.monotonic() < deadline:
            time.sleep(0.1)
            processes = table()
            alive = [pid for pid in alive if processes.get(pid, (0, None))[1] == tracked[pid]]


# --------------------------------------------------------------------------- the run
def run_ray(agent_factory: Callable[[], Any], config: RunConfig, *, address: str | None = None,
            concurrency: int = 1, on_submit: Callable[[Any, WorkItem], None] | None = None) -> list[dict[str, Any]]:
    """Run ``config`` on Ray actors; see module docstring. ``on_submit`` is a test hook."""
    if config.workers < 1:
        raise ConfigError("--workers must be at least 1")
    if concurrency < 1:
        raise ConfigError("--concurrency must be at least 1")
    require_ray()
    check_out_dir(config)  # before loading data or starting a cluster
    data = open_run_data(config.data, config.env_kwargs.get("lookup_config"), config.env_id)
    ids = select_episodes(data.store.ids, data.store.task_scenario, config)
    if config.log:
        for line in describe_data(data.info):
            config.log(line)
    session, previous = open_run_dir(config, data)
    try:
        run_preflight(agent_factory(), config)
    except BaseException:
        abandon_run_dir(session, config.out_dir)
        raise
    try:
        with terminate_on_signals():
            start_run(config, data, session, previous, backend="ray")
            work = pending_work(ids, config, session.done)
            if work:
                # again inside: ray.init installs its own SIGTERM handler (sys.exit)
                with ray_cluster(address, config.workers) as ray, terminate_on_signals():
                    _drive(ray, agent_factory, config, data, work, concurrency, on_submit)
    except RunStopped as exc:
        record_stop(config.out_dir, exc)
        raise
    finally:
        session.release()
    return read_results(config.out_dir / RESULTS_FILE)


def _drive(ray: Any, agent_factory: Callable[[], Any], config: RunConfig, data: Any, work: list[WorkItem],
           concurrency: int, on_submit: Callable[[Any, WorkItem], None] | None) -> None:
    from ray.exceptions import RayActorError, RayError, RayTaskError

    queue = deque(work)
    actor_class = ray.remote(num_cpus=0.5 if concurrency == 1 else 0.25, max_concurrency=concurrency)(RolloutWorker)

    actors: list[Any] = []

    def new_actor():
        # the absolute path: a worker's working directory need not be the driver's
        actors.append(actor_class.remote(agent_factory, data.path, config.env_kwargs, config.env_id))
        return actors[-1]

    for _ in range(min(config.workers, len(queue))):
        new_actor()
    in_flight: dict[Any, tuple[Any, WorkItem]] = {}
    written: set[tuple[str, int]] = set()
    writer = RunWriter(config.out_dir, config.log)
    bar = _progress(len(queue), config.progress, "episodes (ray)")
    replacements, fatal, deadline = 0, None, None

    def submit(actor) -> None:
        if queue and fatal is None:
            item = queue.popleft()
            in_flight[actor.play.remote(*item)] = (actor, item)
            if on_submit is not None:
                on_submit(actor, item)

    try:
        for actor in list(actors):
            for _ in range(concurrency):
                submit(actor)
        while in_flight and (deadline is None or time.monotonic() < deadline):
            ready, _ = ray.wait(list(in_flight), num_returns=1, timeout=WAIT_S)
            if not ready:
                continue
            ref = ready[0]
            actor, item = in_flight.pop(ref)
            try:
                record = ray.get(ref)
            except RayActorError as exc:
                # The actor died: requeue its unfinished work and replace it once.
                lost = [item] + [it for a, it in in_flight.values() if a == actor]
                for r in [r for r, (a, _) in in_flight.items() if a == actor]:
                    in_flight.pop(r)
                if fatal is not None:  # stopping anyway: those episodes run on --resume
                    continue
                replacements += 1
                if replacements > MAX_REPLACEMENTS:
                    last = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else type(exc).__name__
                    raise ConfigError(f"{replacements} Ray workers died; giving up (last: {last}; see the Ray logs)")
                queue.extendleft(reversed(lost))
                replacement = new_actor()
                for _ in range(concurrency):
                    submit(replacement)
                continue
            except RayTaskError as exc:  # an error outside the agent's own guard
                name = fatal_error_name(exc)
                if name is not None:
                    fatal = fatal or (name, str(getattr(exc, "cause", None) or exc).strip().splitlines()[-1])
                    deadline = deadline or time.monotonic() + STOP_GRACE_S
                    continue
                record = worker_failure_record(item, getattr(exc, "cause", None) or exc, _scenario(data.store, item[0]))
            failure = fatal_failure(record)
            if failure is not None:
                fatal = fatal or (failure["type"], failure.get("message", ""))
                deadline = deadline or time.monotonic() + STOP_GRACE_S
                continue
            if item[:2] not in written:
                writer.write(item, record)
                written.add(item[:2])
                if bar:
                    bar.update(record)
            submit(actor)
    finally:
        writer.close()
        if bar:
            bar.close()
        for actor in actors:  # on a cluster that outlives the run, its workers must not
            with contextlib.suppress(RayError, ValueError):
                ray.kill(actor)
    if fatal is not None:
        raise RunStopped(stopped_message(*fatal, config.out_dir, writer.written, len(work) - writer.written))
