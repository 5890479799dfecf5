"""The answer reader's cost: p50 per answer of reading an answer, and of the scored ``finish`` around it.

Answers are the generators' (``mobility_rewards.probes``: correct and wrong kinds, Traditional script, step-by-step
directions, markdown …) over the real sample and the bundled set, written once to a JSON file so that two checkouts
time the *same* answers. Each timing clears the readers' caches first (a first read, as in RL where every answer is
new; the caches of names and evidence words, which recur, stay warm in both checkouts), then:

* ``read``: the reading an answer gets before any evidence is looked at — the kernel's normalisation
  (:func:`mobility_env.reading.read_answer` where it exists) and every claim reader of
  ``mobility_rewards.mobilitybench.claims`` and
  ``mobility_rewards.units``;
* ``finish``: :func:`mobility_rewards.score_episode` of the episode's gold trajectory ending in the answer (the
  verdict and every metric: what the env's scored ``finish`` computes).

Side by side with another checkout (``--baseline DIR``, e.g. a ``git worktree`` of the commit before), alternating
processes in one run, ratios reported (absolute times drift on this shared machine)::

    python benchmarks/bench_reader.py --answers runs/answers.json --out runs/reader.json
    git worktree add ../before ff9285f      # beside shared/, like this checkout: the same episodes
    python benchmarks/bench_reader.py --answers runs/answers.json --baseline ../before --rounds 3

Not a test: prints JSON and exits 0 whatever the figures are.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent


def _data(repo: Path) -> list[Path]:
    """The episodes of a checkout: the real sample beside it and its bundled set."""
    return [repo.parent / "shared" / "mobilitybench" / "sample_dev.csv", repo / "datasets" / "default"]


def _write_answers(path: Path, per_episode: int, seed: int) -> int:
    import random

    from mobility_rewards import probes as am

    facts, _ = am.load_usable(_data(REPO))
    rows = []
    for f in facts:
        kinds = {True: am.applicable(am.CORRECT, f), False: am.applicable(am.WRONG, f)}
        for i in range(per_episode):
            pool = kinds[i % 2 == 0]
            mutation = pool[(i // 2 + sum(map(ord, f.episode_id))) % len(pool)]
            answer = mutation.make(f, am.RandomDraw(random.Random(f"{seed}:{f.episode_id}:{i}")))
            rows.append({"episode_id": f.episode_id, "kind": answer.kind, "text": answer.text,
                         "route_index": answer.route_index})
    path.write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")
    return len(rows)


def _clear_caches(modules: list[Any]) -> None:
    """Clear every ``lru_cache`` of ``modules`` but the cache of names (``_simplified_name``: names recur, and the
    checkout before kept its name folds warm too)."""
    for module in modules:
        for name, value in vars(module).items():
            clear = getattr(value, "cache_clear", None)
            if callable(clear) and name != "_simplified_name":
                clear()


def _import_from(repo: Path) -> None:
    """Import the packages from ``repo`` (not from the installed checkout): their folders under their import names."""
    import importlib.util
    import types

    sys.path[:0] = [str(repo), str(repo / "tests")]  # tests/: the generators of a checkout from before the package
    for name, folder in (("mobility_env", "mobility_env"), ("mobility_rewards", "rewards"),
                         ("mobility_agents", "agents"), ("mobility_env._bundled", "datasets")):
        init = repo / folder / "__init__.py"
        if not init.exists():  # a data folder: a namespace of files
            namespace = types.ModuleType(name)
            namespace.__path__ = [str(repo / folder)]
            sys.modules[name] = namespace
            continue
        spec = importlib.util.spec_from_file_location(name, init, submodule_search_locations=[str(repo / folder)])
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)


def _time(answers_path: Path, repo: Path, limit: int) -> dict[str, Any]:
    """Run in a subprocess whose ``sys.path`` starts with ``repo``: the p50/p90 of both timings over the answers."""
    _import_from(repo)
    from mobility_rewards import units
    try:
        from mobility_rewards.mobilitybench import claims
    except ImportError:  # a baseline from before the suite folders
        from mobility_rewards import claims  # type: ignore[no-redef]
    try:
        from mobility_rewards import probes as am
    except ImportError:  # a checkout from before the package: the generators were tests/answer_mutators.py
        import answer_mutators as am  # type: ignore[no-redef]

    modules: list[Any] = [claims, units]
    try:
        from mobility_env.reading import numerals, script, text  # the kernel reader (absent before it existed)
        read_answer = text.read_answer
        modules += [numerals, text, script]  # script's cache of names stays warm, like name folds (_clear_caches)
    except ImportError:
        from mobility_env.answer_text import plain_answer as read_answer  # type: ignore[no-redef]
    facts, _ = am.load_usable(_data(repo))
    by_id = {f.episode_id: f for f in facts}
    rows = [r for r in json.loads(answers_path.read_text(encoding="utf-8")) if r["episode_id"] in by_id][:limit]
    readers = [claims.clock_claims, claims.money_claims, claims.light_claims, claims.humidity_claims,
               claims.weather_claims, claims.traffic_claims, claims.hedged_quantities, claims.stated_modes,
               claims.highway_claims]
    if hasattr(claims, "road_claims"):
        readers.append(claims.road_claims)
    read_ns, finish_ns = [], []
    gc.disable()
    for row in rows:  # the scored finish first: an answer short enough for the cache of names is read cold there
        _clear_caches(modules)
        answer = am.Answer(row["kind"], True, row["text"], row["route_index"])
        start = time.perf_counter_ns()
        am.score(by_id[row["episode_id"]], answer)
        finish_ns.append(time.perf_counter_ns() - start)
        _clear_caches(modules)
        start = time.perf_counter_ns()
        normalized = claims.normalize_answer(read_answer(row["text"]))
        units.parse_distances(normalized), units.parse_durations(normalized), units.parse_temperatures(normalized)
        for reader in readers:
            reader(normalized)
        read_ns.append(time.perf_counter_ns() - start)
    gc.enable()

    def stats(samples: list[int]) -> dict[str, float]:
        ordered = sorted(samples)
        return {"p50_us": round(ordered[len(ordered) // 2] / 1000, 1),
                "p90_us": round(ordered[int(len(ordered) * 0.9)] / 1000, 1),
                "mean_us": round(statistics.fmean(ordered) / 1000, 1)}
    return {"repo": str(repo), "answers": len(rows), "read": stats(read_ns), "finish": stats(finish_ns)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--answers", type=Path, default=Path("/tmp/mobility-reader-answers.json"),
                        help="the answers file (written first if missing)")
    parser.add_argument("--per-episode", type=int, default=8, help="answers per episode when writing the file")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--limit", type=int, default=100_000, help="answers timed per round")
    parser.add_argument("--baseline", type=Path, help="another checkout timed on the same answers, alternating")
    parser.add_argument("--rounds", type=int, default=1, help="rounds (each times every checkout once)")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child is not None:
        print(json.dumps(_time(args.answers, args.child, args.limit)))
        return 0
    if not args.answers.exists():
        print(f"writing {_write_answers(args.answers, args.per_episode, args.seed)} answers to {args.answers}",
              file=sys.stderr)
    repos = [REPO] + ([args.baseline.resolve()] if args.baseline else [])
    runs: dict[str, list[dict[str, Any]]] = {str(r): [] for r in repos}
    for _ in range(args.rounds):
        for repo in repos:
            out = subprocess.run([sys.executable, __file__, "--answers", str(args.answers), "--limit", str(args.limit),
                                  "--child", str(repo)], capture_output=True, text=True, cwd=repo)
            if out.returncode:
                raise SystemExit(f"timing {repo} failed:\n{out.stderr[-3000:]}")
            runs[str(repo)].append(json.loads(out.stdout.strip().splitlines()[-1]))
    report: dict[str, Any] = {}
    for repo, results in runs.items():
        report[repo] = {what: {"p50_us": statistics.median(r[what]["p50_us"] for r in results),
                               "p90_us": statistics.median(r[what]["p90_us"] for r in results)}
                        for what in ("read", "finish")} | {"answers": results[0]["answers"]}
    if args.baseline:
        base, this = report[str(repos[1])], report[str(REPO)]
        report["ratio_this_over_baseline"] = {what: round(this[what]["p50_us"] / base[what]["p50_us"], 2)
                                              for what in ("read", "finish")}
    text = json.dumps(report, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
