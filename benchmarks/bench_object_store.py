"""Reading a built directory from object storage (``s3://``) against reading it from a local disk.

An S3-compatible server (moto's ``moto_server``, its own process, bound to 127.0.0.1) serves a copy of a synthetic
built directory; every measurement runs in a fresh interpreter, so nothing is cached in Python:

* ``first_episode_s`` — open the data (an ``s3://`` URI: list it, copy it into this node's cache, then open the
  copy; a path: open it in place), build the env, ``reset`` and take the first step;
* the same split into ``localize_s`` (the copy, or the check of an existing copy), ``open_s``, ``reset_step_s``;
* ``steady_episodes_per_s`` — oracle episodes per second after that (the copy is memory-mapped from local disk, so
  this should equal the local figure).

Four kinds per repeat: ``local`` (the directory on disk), ``s3_cold`` (an empty cache: the whole directory is
downloaded), ``s3_warm`` (the copy is there; the objects were just uploaded, so besides the listing each gets a HEAD
for its ETag), ``s3_warm_settled`` (the same, objects as if uploaded long before the copy: one listing, nothing
else; :data:`mobility_env.datasource.SETTLED_S` is lowered in that process to simulate it). The OS page cache is
left as it is: the local directory and a fresh copy are both in it, so the figures compare the object store's
overhead, not disk speed. The load average is printed with the figures; compare ratios within one run.

    python benchmarks/bench_object_store.py [--n 3000] [--repeat 3] [--episodes 200] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import REPO, emit, ensure_dataset, machine  # noqa: E402

BUCKET = "bench"
KEY, SECRET = "bench-key", "bench-secret"


def probe(data: str, episodes: int, settled: bool) -> dict[str, float]:
    """Runs inside the fresh subprocess: first episode, then the steady state."""
    clock = time.perf_counter
    t0 = clock()
    from mobility_agents.baselines.mobilitybench.oracle import OracleAgent
    from mobility_agents.targets import MOBILITYBENCH, make_env, open_store
    from mobility_env import datasource
    from mobility_env.datasource import localize

    if settled:  # as if the objects were uploaded long before the copy: the listing alone checks it
        datasource.SETTLED_S = -3600

    t1 = clock()
    local = localize(data)
    t2 = clock()
    store = open_store(MOBILITYBENCH, str(local))
    env = make_env(store, {})
    t3 = clock()
    first_id = store.ids[0]
    env.reset(seed=0, options={"episode_id": first_id})
    call = env.unwrapped.episode.gold_calls[0]
    env.step({"name": call.name, "arguments": dict(call.arguments)})
    t4 = clock()
    agent = OracleAgent()
    ids = [store.ids[(i * 7919) % len(store.ids)] for i in range(episodes)]
    started = clock()
    for episode_id in ids:
        agent.run_episode(env, episode_id)
    elapsed = clock() - started
    return {"import_s": t1 - t0, "localize_s": t2 - t1, "open_s": t3 - t2, "reset_step_s": t4 - t3,
            "first_episode_s": t4 - t1, "steady_episodes_per_s": episodes / elapsed}


def _free_port() -> int:
    with socket.socket() as probe_socket:
        probe_socket.bind(("127.0.0.1", 0))
        return int(probe_socket.getsockname()[1])


def start_server(workdir: Path) -> tuple[subprocess.Popen, str]:
    moto = shutil.which("moto_server", path=str(Path(sys.executable).parent)) or shutil.which("moto_server")
    if moto is None:
        raise SystemExit("moto_server not found: pip install 'moto[server]' (the dev extra has it)")
    port = _free_port()
    server = subprocess.Popen([moto, "-H", "127.0.0.1", "-p", str(port)], stdout=subprocess.DEVNULL,
                              stderr=(workdir / "moto.log").open("wb"))
    endpoint = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while True:
        try:
            with urllib.request.urlopen(f"{endpoint}/moto-api/", timeout=2):
                return server, endpoint
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                server.kill()
                raise SystemExit(f"moto_server did not start (see {workdir / 'moto.log'})")
            time.sleep(0.2)


def upload(directory: Path, endpoint: str) -> str:
    from pyarrow import fs

    s3 = fs.S3FileSystem(access_key=KEY, secret_key=SECRET, region="us-east-1", endpoint_override=endpoint,
                         allow_bucket_creation=True)
    s3.create_dir(BUCKET)
    fs.copy_files(str(directory), f"{BUCKET}/{directory.name}", source_filesystem=fs.LocalFileSystem(),
                  destination_filesystem=s3)
    return f"s3://{BUCKET}/{directory.name}"


def run_probe(data: str, episodes: int, env: dict[str, str], settled: bool = False) -> dict[str, float]:
    done = subprocess.run([sys.executable, __file__, "--probe", "--data", data, "--episodes", str(episodes)]
                          + (["--settled"] if settled else []), capture_output=True, text=True, cwd=str(REPO), env=env)
    if done.returncode != 0:
        raise SystemExit(f"probe on {data} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=3000, help="synthetic episodes in the built directory")
    parser.add_argument("--data", help="a built directory to use instead of a synthetic one")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--episodes", type=int, default=200, help="oracle episodes timed for the steady state")
    parser.add_argument("--out")
    parser.add_argument("--probe", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--settled", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.probe:
        print(json.dumps(probe(args.data, args.episodes, args.settled)))
        return {}
    directory = Path(args.data) if args.data else ensure_dataset(args.n)[0]
    workdir = Path(tempfile.mkdtemp(prefix="bench-object-store-"))
    server, endpoint = start_server(workdir)
    try:
        uri = upload(directory, endpoint)
        env = {**os.environ, "AWS_ACCESS_KEY_ID": KEY, "AWS_SECRET_ACCESS_KEY": SECRET,
               "AWS_DEFAULT_REGION": "us-east-1", "AWS_ENDPOINT_URL": endpoint, "AWS_EC2_METADATA_DISABLED": "true",
               "NO_PROXY": "127.0.0.1", "no_proxy": "127.0.0.1"}
        env["MOBILITY_ENV_CACHE_DIR"] = str(workdir / "cache")  # the node's cache: checksums, and data/
        run_probe(str(directory), 1, env)  # untimed: the local files' checksums are remembered, as on a used node
        load_before = list(os.getloadavg())
        runs: dict[str, list[dict[str, float]]] = {"local": [], "s3_cold": [], "s3_warm": [], "s3_warm_settled": []}
        for _ in range(args.repeat):
            shutil.rmtree(workdir / "cache" / "data", ignore_errors=True)  # cold: no copy (its checksums are new)
            runs["local"].append(run_probe(str(directory), args.episodes, env))
            runs["s3_cold"].append(run_probe(uri, args.episodes, env))
            runs["s3_warm"].append(run_probe(uri, args.episodes, env))
            runs["s3_warm_settled"].append(run_probe(uri, args.episodes, env, settled=True))
    finally:
        server.terminate()
        server.wait(timeout=30)
        shutil.rmtree(workdir, ignore_errors=True)
    median = {kind: {key: round(statistics.median(r[key] for r in rows), 4) for key in rows[0]}
              for kind, rows in runs.items()}
    files = [p for p in directory.rglob("*") if p.is_file()]
    size = sum(p.stat().st_size for p in files)
    first = {kind: median[kind]["first_episode_s"] for kind in median}
    steady = {kind: median[kind]["steady_episodes_per_s"] for kind in median}
    result = {"data": str(directory), "bytes": size, "files": len(files),
              "repeats": args.repeat, "steady_episodes": args.episodes, "median": median,
              "ratios": {"first_episode_s3_cold_over_local": round(first["s3_cold"] / first["local"], 2),
                         "first_episode_s3_warm_over_local": round(first["s3_warm"] / first["local"], 2),
                         "first_episode_s3_warm_settled_over_local": round(first["s3_warm_settled"] / first["local"],
                                                                           2),
                         "steady_s3_cold_over_local": round(steady["s3_cold"] / steady["local"], 3),
                         "steady_s3_warm_over_local": round(steady["s3_warm"] / steady["local"], 3)},
              "fetch_MB_per_s": round(size / 1e6 / median["s3_cold"]["localize_s"], 1),
              "loadavg_before": load_before, "machine": machine()}
    emit(result, args.out)
    return result


if __name__ == "__main__":
    main()
