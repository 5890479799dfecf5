"""Ray backend of the runner: rollout workers as Ray actors.

Each actor holds its own env (a built directory is opened memory-mapped, so workers share the
page cache instead of copying the sandbox) and plays ``concurrency`` episodes at once on
threads (Ray threaded actors), so an LLM-bound policy is limited by the model server, not by
the env. The driver hands out work in chunks (one remote call plays several episodes when they
are short: about :data:`CHUNK_TARGET_S` of work, measured on the run's finished chunks; an
LLM-bound episode goes alone), the actor encodes each record's lines itself, and the driver
writes each (episode_id, sample_index) exactly once as each chunk comes back. When an actor dies
(killed process, crashed node) it starts a replacement and re-runs every unfinished chunk of the
dead one, whole (nothing of a chunk is written before it returns): nothing is lost and nothing
is duplicated. Results are the same as the local backend's for deterministic agents, because
per-episode seeds do not depend on which worker ran the episode. Every guarantee of
:mod:`mobility_agents.runner` (lock, resume checks, preflight, fatal errors, signals) holds here
too.

**The local cluster** (no ``address``) is this run's own: every Ray server binds 127.0.0.1
only (the node address is the loopback; checked with ``ss -ltnp`` on Ray 2.60: GCS, raylet,
workers, agents), ``num_cpus`` is at most ``workers``, no dashboard, no usage reporting. It
is shut down when the run ends, however it ends: normally and on SIGTERM/SIGHUP/Ctrl-C by
``ray.shutdown()``; when the driver is killed (SIGKILL) Ray's own fate sharing takes the GCS
and raylet down and a watchdog process (:func:`watchdog_main`, Linux) kills what outlives them
(the dashboard and runtime-env agents). With ``address`` the driver only joins that cluster
and disconnects at the end. A Ray already initialized by the caller is used as it is.

**Joining a cluster** (``address``, one started with ``ray start``): Ray rewrites a loopback
address (``127.0.0.1:PORT``) to the host's outward address before dialing it, so a cluster that
listens on loopback only was never reached: every attempt waited ~35 s and Ray made 20 of them
(the "14 minutes without a result or an error"). A loopback address is therefore dialed as
given (the same switch as above), and :func:`join_cluster` first checks that something accepts
connections at the address Ray will dial, so an unreachable one fails in seconds. Workers are
spread over the nodes (``SPREAD``); work goes only to a worker that has started, and when none
has started within :data:`READY_TIMEOUT_S` (no free CPU, a node that cannot be reached, the
package not importable there) the run ends with one line saying what is missing. A worker that
dies, alone or with its node, is replaced (Ray places the replacement on a node that is alive)
and its unfinished episodes run again from their seeds; ``run.json`` records each loss
(``worker_failures``: node, error, episodes re-run) and where episodes ran (``ray``).
"""

from __future__ import annotations

import contextlib
import inspect
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import Counter, deque
from dataclasses import dataclass
from typing import Any, Callable, Iterator

from mobility_env.errors import ConfigError

from .adapters.openenv.config import is_loopback
from .targets import MOBILITYBENCH, make_env, open_store

from .runner import (RESULTS_FILE, STOP_GRACE_S, RunConfig, RunStopped, RunWriter, Terminated, WorkItem, _progress,
                     _scenario, abandon_run_dir, check_out_dir, describe_data, encoded_record, fatal_error_name,
                     fatal_failure, open_run_data, open_run_dir, pending_work, read_results, record_stop,
                     run_preflight, select_episodes, start_run, stopped_message, terminate_on_signals, update_session,
                     worker_failure_record)

MAX_REPLACEMENTS = 16
WAIT_S = 0.5  # ray.wait slice: the driver stays responsive to signals
#: With no worker started for this long (at the start, or after every worker was lost) the run ends saying why.
READY_TIMEOUT_S = 45.0
#: How long the address of a cluster to join may take to accept a TCP connection.
CONNECT_TIMEOUT_S = 5.0
#: Hand-outs queued on each actor beyond those it plays at once: it starts the next without waiting for the driver.
PREFETCH = 1
#: A hand-out (one remote call) holds as many episodes as the run's finished ones say take about this long. On Ray
#: 2.60 a call per episode cost the driver ~1.2 ms and the actor ~1.6 ms of CPU on top of the rule agent's ~3.3 ms
#: episode; a call of n episodes costs the driver ~1.2 ms + 0.08 ms x n (measured at 4 to 32), so ~30 a call (0.1 s of
#: the rule agent) leave it ~0.12 ms an episode. An LLM-bound episode (seconds) goes alone.
CHUNK_TARGET_S = 0.1
#: At most this many episodes per hand-out: what a lost worker's hand-out costs to run again stays small.
MAX_CHUNK = 64

#: One played episode as an actor returns it: its item, its normalized result, its two encoded lines.
Played = tuple[WorkItem, dict[str, Any], tuple[bytes, bytes]]


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

    def where(self) -> dict[str, Any]:
        """Where this worker runs (node id and address, pid); answered once the env is open."""
        import ray

        return {"node_id": ray.get_runtime_context().get_node_id(), "node_ip": ray.util.get_node_ip_address(),
                "pid": os.getpid()}

    def play(self, episode_id: str, sample_index: int, seed: int) -> dict[str, Any]:
        if not hasattr(self.local, "env"):
            self.local.env = make_env(self.store, self.env_kwargs)
            self.local.agent = self.agent_factory()
        return self.local.agent.run_episode(self.local.env, episode_id, seed=seed, sample_index=sample_index)

    def play_chunk(self, items: list[WorkItem]) -> dict[str, Any]:
        """Play ``items`` in order; each comes back encoded as the driver writes it (the JSON work is done here, in
        parallel, not in the one driver). An error outside the agent's own guard is that episode's recorded
        failure, as in the local runner; a fatal one (:data:`~mobility_agents.runner.FATAL_ERRORS`, raised or
        recorded) ends the chunk there. Returns ``{"played": [Played...], "fatal": (name, message) | None,
        "seconds": wall time}``."""
        started = time.monotonic()
        played: list[Played] = []
        fatal = None
        for item in items:
            try:
                record = self.play(*item)
            except Exception as exc:  # outside the agent's own guard: the episode's record, or the run's stop
                name = fatal_error_name(exc)
                if name is not None:
                    fatal = (name, str(exc))  # as the local runner says it
                    break
                record = worker_failure_record(item, exc, _scenario(self.store, item[0]))
            result, lines = encoded_record(item, record)
            played.append((item, result, lines))
            if fatal_failure({"result": result}) is not None:
                break
        return {"played": played, "fatal": fatal, "seconds": time.monotonic() - started}


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
        join_cluster(ray, address)
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


def join_cluster(ray: Any, address: str) -> None:
    """``ray.init(address=...)`` that fails in seconds, with one line, where Ray would wait many minutes.

    A loopback host is dialed as given (Ray would rewrite it to the host's outward address, where a
    cluster started on loopback does not listen); first a plain TCP connection to the address Ray
    will dial must succeed. ``auto`` and ``ray://`` (Ray Client) addresses go to Ray unchecked.
    """
    from ray._private import services

    host_port = None if address == "auto" or "://" in address else _split_host_port(address)
    loopback = host_port is not None and is_loopback(host_port[0])
    switch = _loopback_node() if loopback else contextlib.nullcontext()
    with switch:
        if host_port is not None:
            try:
                dialed = services.canonicalize_bootstrap_address(address) or address
            except (ValueError, OSError) as exc:
                raise ConfigError(f"--address {address}: not a Ray address ({_one_line(exc)}); "
                                  "pass HOST:PORT of the cluster's head (`ray status` there prints it)") from exc
            _check_reachable(address, dialed)
        if loopback:
            _token_auth_as_for_a_local_cluster()
        try:
            ray.init(address=address, log_to_driver=False)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            if _auth_refused(exc):
                raise ConfigError(f"--address {address}: the cluster refused this driver's Ray token (token "
                                  "authentication): export RAY_AUTH_MODE=token and the cluster's token "
                                  "(RAY_AUTH_TOKEN, or ~/.ray/auth_token) before the run") from exc
            raise ConfigError(f"--address {address}: cannot join that Ray cluster ({_one_line(exc)})") from exc


def _token_auth_as_for_a_local_cluster() -> None:
    """Use this user's Ray token (``~/.ray/auth_token``) when there is one, as ``ray start --head`` on this
    machine does and as ``ray.init()`` does for a cluster it finds on this machine; for an explicit address
    Ray does not, so a loopback join would be refused by the local head. Remote clusters: RAY_AUTH_MODE."""
    try:
        from ray._private.authentication.authentication_token_setup import \
            maybe_enable_token_auth_if_token_available
    except ImportError:  # a Ray without token authentication
        return
    maybe_enable_token_auth_if_token_available(warn_if_disabled=False)


def _auth_refused(exc: BaseException) -> bool:
    seen: BaseException | None = exc
    while seen is not None:
        if "InvalidAuthToken" in str(seen) or type(seen).__name__ == "AuthenticationError":
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _split_host_port(address: str) -> tuple[str, int]:
    host, sep, port = address.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise ConfigError(f"--address {address}: not HOST:PORT; pass the address of the cluster's head "
                          "(`ray start --head` prints it; `ray status` there shows it too)")
    return host.strip("[]"), int(port)


def _check_reachable(address: str, dialed: str) -> None:
    """One line, in seconds, when nothing accepts connections at the address Ray will dial."""
    host, port = _split_host_port(dialed)
    try:
        socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_S).close()
    except OSError as exc:
        rewritten = f" (Ray rewrites {address} to {dialed})" if dialed != address else ""
        raise ConfigError(f"--address {address}: nothing accepts connections at {dialed}{rewritten}: "
                          f"{exc.strerror or exc}; is the cluster up, and is this its head's address? "
                          "(`ray status` on the head prints it)") from exc


def _one_line(exc: BaseException) -> str:
    """The telling line of a Ray error: the last line of a traceback, else the first line; at most 300 chars."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    if not lines:
        return type(exc).__name__
    traceback_at = next((i for i, line in enumerate(lines) if line.startswith("Traceback")), None)
    return (lines[-1] if traceback_at is not None else lines[0])[:300]


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
                with ray_cluster(address, config.workers) as ray, terminate_on_signals(), _signals_noted() as seen:
                    try:
                        _drive(ray, agent_factory, config, data, work, concurrency, on_submit, address)
                    except KeyboardInterrupt as exc:
                        if seen and not isinstance(exc, Terminated):  # Ray's stand-in for our Terminated
                            raise Terminated(seen[-1]) from exc
                        raise
    except (RunStopped, ConfigError) as exc:  # ConfigError here: a cluster that could not be joined or used
        record_stop(config.out_dir, exc)
        raise
    finally:
        session.release()
    return read_results(config.out_dir / RESULTS_FILE)


@contextlib.contextmanager
def _signals_noted() -> Iterator[list[int]]:
    """The terminating signals that arrive, noted before the installed handler runs.

    ``ray.wait`` and ``ray.get`` check for signals themselves and replace whatever the handler raises
    (:class:`~mobility_agents.runner.Terminated`) with a bare ``KeyboardInterrupt`` (Ray 2.60), and the driver
    spends most of a run in them: without this note a SIGTERM would end the run as a Ctrl-C (exit 130, not 143).
    """
    seen: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield seen
        return
    previous: dict[signal.Signals, Any] = {}
    for signum in [getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name)]:
        handler = signal.getsignal(signum)
        if callable(handler):
            def noting(number: int, frame: Any, handler: Callable[[int, Any], Any] = handler) -> None:
                seen.append(number)
                handler(number, frame)
            previous[signum] = signal.signal(signum, noting)
    try:
        yield seen
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


@dataclass(eq=False)
class _Worker:
    """One rollout actor as the driver sees it: its handle, and where it runs once it has started."""

    handle: Any
    index: int
    where: dict[str, Any] | None = None  # None while starting
    dead: bool = False


class NoWorkers(ConfigError):
    """No rollout worker could be started on the cluster within :data:`READY_TIMEOUT_S`."""


def _actor_data(config: RunConfig, data: Any) -> str:
    """What an actor opens: a URI as given (each node fetches its own copy), else the absolute path
    (a worker's working directory need not be the driver's)."""
    from mobility_env.datasource import is_uri

    return str(config.data) if is_uri(config.data) else data.path


def _drive(ray: Any, agent_factory: Callable[[], Any], config: RunConfig, data: Any, work: list[WorkItem],
           concurrency: int, on_submit: Callable[[Any, WorkItem], None] | None, address: str | None = None) -> None:
    from ray.exceptions import RayActorError, RayError, RayTaskError

    queue = deque(work)
    cpus = 0.5 if concurrency == 1 else 0.25
    # SPREAD: on a cluster the workers go to different nodes (a lost node costs fewer of them)
    actor_class = ray.remote(num_cpus=cpus, max_concurrency=concurrency, scheduling_strategy="SPREAD")(RolloutWorker)
    workers: list[_Worker] = []
    starting: dict[Any, _Worker] = {}  # where() ref -> worker: answered once the worker's env is open
    in_flight: dict[Any, tuple[_Worker, list[WorkItem]]] = {}  # play_chunk ref -> its worker and items
    written: set[tuple[str, int]] = set()
    failures: list[dict[str, Any]] = []
    by_node: Counter[str] = Counter()
    chunk_sizes: Counter[int] = Counter()  # hand-outs by episodes per hand-out
    writer = RunWriter(config.out_dir, config.log)
    bar = _progress(len(queue), config.progress, "episodes (ray)")
    replacements, fatal, deadline = 0, None, None
    no_worker_since: float | None = time.monotonic()
    last_start_error: str | None = None
    episode_s: float | None = None  # seconds per episode, smoothed over finished chunks; None before the first

    def chunk_size() -> int:
        """Episodes for the next hand-out: about CHUNK_TARGET_S of work, and no more than half an even
        share of what is left, so results keep coming back as the run goes and the workers finish together."""
        if episode_s is None:
            return 1
        slots = max(1, len(alive())) * (concurrency + PREFETCH)
        return max(1, min(int(CHUNK_TARGET_S / max(episode_s, 1e-6)), MAX_CHUNK, len(queue) // (2 * slots)))

    def start_worker() -> None:
        worker = _Worker(actor_class.remote(agent_factory, _actor_data(config, data), config.env_kwargs,
                                            config.env_id), len(workers))
        workers.append(worker)
        starting[worker.handle.where.remote()] = worker

    def fill(worker: _Worker) -> None:
        busy = sum(1 for w, _ in in_flight.values() if w is worker)
        while busy < concurrency + PREFETCH and queue and fatal is None:
            items = [queue.popleft() for _ in range(min(chunk_size(), len(queue)))]
            in_flight[worker.handle.play_chunk.remote(items)] = (worker, items)
            chunk_sizes[len(items)] += 1
            busy += 1
            if on_submit is not None:
                for item in items:
                    on_submit(worker.handle, item)

    def alive() -> list[_Worker]:
        return [w for w in workers if w.where is not None and not w.dead]

    def lose(worker: _Worker, exc: BaseException, first: list[WorkItem]) -> None:
        """The worker died (its process, or its node): re-run its episodes, replace it, say so in run.json.
        Nothing of a chunk is written before the whole chunk comes back, so all of its episodes run again."""
        nonlocal replacements, no_worker_since
        worker.dead = True
        with contextlib.suppress(RayError, ValueError):  # unavailable need not mean gone: make sure it is
            ray.kill(worker.handle, no_restart=True)
        lost = first + [it for w, items in in_flight.values() if w is worker for it in items]
        for ref in [r for r, (w, _) in in_flight.items() if w is worker]:
            in_flight.pop(ref)
        if fatal is not None:  # stopping anyway: those episodes run on --resume
            return
        queue.extendleft(reversed(lost))
        failures.append(_failure_record(ray, worker, exc, lost))
        with contextlib.suppress(OSError):
            update_session(config.out_dir, worker_failures=failures)
        if config.log:
            config.log(f"warning: Ray worker {worker.index} lost ({failures[-1]['error']}); "
                       f"{len(lost)} episode(s) run again")
        for other in alive():
            fill(other)
        if not alive() and no_worker_since is None:
            no_worker_since = time.monotonic()
        replacements += 1
        if replacements > MAX_REPLACEMENTS:
            raise ConfigError(f"{replacements} Ray workers died; giving up (last: {failures[-1]['error']}; "
                              "see the Ray logs)")
        if queue:
            start_worker()

    nodes_at_start = _alive_nodes(ray)
    for _ in range(min(config.workers, len(queue))):
        start_worker()
    try:
        while (in_flight or (queue and fatal is None)) and (deadline is None or time.monotonic() < deadline):
            if no_worker_since is not None and queue and time.monotonic() - no_worker_since > READY_TIMEOUT_S:
                reason = _why_no_worker(ray, cpus, last_start_error)
                if not written:
                    raise NoWorkers(f"--backend ray{f' --address {address}' if address else ''}: no Ray worker "
                                    f"started within {READY_TIMEOUT_S:.0f} s: {reason}")
                raise RunStopped(stopped_message("no Ray worker", reason, config.out_dir, writer.written,
                                                 len(queue) + len(in_flight)))
            ready, _ = ray.wait(list(in_flight) + list(starting), num_returns=1, timeout=WAIT_S)
            if not ready:
                continue
            ref = ready[0]
            if ref in starting:
                worker = starting.pop(ref)
                try:
                    worker.where = ray.get(ref)
                except RayError as exc:  # it could not start: the package missing there, its node lost...
                    last_start_error = _one_line(exc)
                    lose(worker, exc, [])
                    continue
                no_worker_since = None
                fill(worker)
                continue
            worker, items = in_flight.pop(ref)
            try:
                chunk = ray.get(ref)
            except RayActorError as exc:
                lose(worker, exc, items)
                continue
            except RayTaskError as exc:  # Ray failed around the chunk (the episodes' own errors are records)
                name = fatal_error_name(exc)
                if name is not None:
                    fatal = fatal or (name, str(getattr(exc, "cause", None) or exc).strip().splitlines()[-1])
                    deadline = deadline or time.monotonic() + STOP_GRACE_S
                    continue
                cause = getattr(exc, "cause", None) or exc
                chunk = {"played": [(item, *encoded_record(item, worker_failure_record(
                    item, cause, _scenario(data.store, item[0])))) for item in items], "fatal": None, "seconds": 0.0}
            for item, result, lines in chunk["played"]:
                failure = fatal_failure({"result": result})
                if failure is not None:  # not written: the episode runs again on --resume
                    fatal = fatal or (failure["type"], failure.get("message", ""))
                    deadline = deadline or time.monotonic() + STOP_GRACE_S
                    break
                if item[:2] not in written:
                    writer.write_encoded(item, result, lines)
                    written.add(item[:2])
                    by_node[(worker.where or {}).get("node_id", "?")] += 1
                    if bar:
                        bar.update(result)
            if chunk["fatal"] is not None:
                fatal = fatal or tuple(chunk["fatal"])
                deadline = deadline or time.monotonic() + STOP_GRACE_S
            if chunk["played"] and chunk["seconds"] > 0:
                measured = chunk["seconds"] / len(chunk["played"])
                episode_s = measured if episode_s is None else 0.5 * episode_s + 0.5 * measured
            fill(worker)
    finally:
        writer.close()
        if bar:
            bar.close()
        for worker in workers:  # on a cluster that outlives the run, its workers must not
            with contextlib.suppress(RayError, ValueError):
                ray.kill(worker.handle)
        alive_now = _alive_nodes(ray)
        for failure in failures:  # Ray declares a node dead some seconds after its workers become unreachable
            if failure["node_id"] and alive_now is not None:
                failure["node_alive"] = failure["node_id"] in alive_now
        summary = {"address": address or "local", "nodes_at_start": len(nodes_at_start or ()),
                   "nodes_lost": sorted(set(nodes_at_start or ()) - set(alive_now or nodes_at_start or ())),
                   "workers_started": len(workers), "episodes_by_node": dict(by_node),
                   "hand_outs": sum(chunk_sizes.values()), "largest_hand_out": max(chunk_sizes, default=0)}
        with contextlib.suppress(OSError):
            update_session(config.out_dir, ray=summary, **({"worker_failures": failures} if failures else {}))
    if fatal is not None:
        raise RunStopped(stopped_message(*fatal, config.out_dir, writer.written, len(work) - writer.written))


def _alive_nodes(ray: Any) -> set[str] | None:
    """Ids of the cluster's alive nodes (None when the cluster does not answer)."""
    from ray.exceptions import RayError

    try:
        return {n["NodeID"] for n in ray.nodes() if n.get("Alive")}
    except (RayError, OSError, KeyError):
        return None


def _failure_record(ray: Any, worker: _Worker, exc: BaseException, lost: list[WorkItem]) -> dict[str, Any]:
    """What ``run.json`` says about a lost worker: where it ran, the error, the episodes that run again, and
    whether its node is alive (as Ray sees it at the loss; updated when the session ends)."""
    where = worker.where or {}
    alive = _alive_nodes(ray) if where.get("node_id") else None
    return {"at": time.strftime("%Y-%m-%dT%H:%M:%S"), "worker": worker.index, "node_id": where.get("node_id"),
            "node_ip": where.get("node_ip"), "pid": where.get("pid"),
            "node_alive": None if alive is None else where["node_id"] in alive,
            "error": f"{type(exc).__name__}: {_one_line(exc)}", "episodes_rerun": [list(item[:2]) for item in lost]}


def _why_no_worker(ray: Any, cpus: float, start_error: str | None) -> str:
    """One clause naming what keeps workers from starting."""
    from ray.exceptions import RayError

    if start_error:
        return f"a worker failed to start: {start_error}"
    try:
        nodes = [n for n in ray.nodes() if n.get("Alive")]
        total, free = ray.cluster_resources().get("CPU", 0.0), ray.available_resources().get("CPU", 0.0)
    except (RayError, OSError) as exc:
        return f"the cluster does not answer ({_one_line(exc)})"
    if free < cpus:
        return (f"no free CPU for a worker (each needs {cpus:g} CPU; the cluster's {len(nodes)} alive node(s) have "
                f"{total:g} CPU, {free:g} free): add a node or free some")
    return (f"workers were placed but none answered ({len(nodes)} alive node(s), {free:g} CPU free): can every node "
            "import mobility-env (installed in the same Python), and reach this machine? See the nodes' Ray logs")
