"""Episode generation: scenario mix, per-episode seeds, rows, and the built directory.

Determinism contract:

* episode ``i`` of seed ``s`` is drawn from ``rng_for(s, "episode", i, attempt)`` only, so it
  does not depend on ``n`` or on the episodes before it;
* its scenario is picked by a golden-ratio (low-discrepancy) sequence over the cumulative
  mix, so scenario counts track the mix closely at every ``n`` (no sampling noise), and
  the scenario of episode ``i`` is again a function of ``(s, i)`` only;
* ``synthesize(n, s, ...)`` writes byte-identical files for the same arguments.
"""

from __future__ import annotations

import datetime as dt
from collections import deque
from itertools import islice
import math
import os
import sys
import time
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping

from ..mobilitybench.episode import FAMILY_OF, SCENARIOS, SCENARIOS_BY_FAMILY
from ..errors import ConfigError
from ..mobilitybench.official import episode_from_row
from .draft import Draft
from .scenarios_info import (build_geolocation_query, build_nearby_query, build_poi_query, build_traffic_query,
                             build_weather_query)
from .scenarios_route import (build_arrival_departure, build_multi_stop, build_option_constrained, build_point_to_point,
                              build_route_constrained, build_route_property)
from .seeding import rng_for, unit_interval
from .world import World

# The paper's intent-family distribution (MobilityBench, arXiv 2602.22638).
PAPER_FAMILY_MIX: dict[str, float] = {
    "Basic Information Retrieval": 36.6,
    "Route-Dependent Information Retrieval": 9.6,
    "Basic Route Planning": 42.5,
    "Preference-Constrained Route Planning": 11.3,
}
BUILDERS: dict[str, Callable[[Draft], dict[str, Any] | None]] = {
    "POI Query": build_poi_query,
    "Geolocation Query": build_geolocation_query,
    "Nearby Query": build_nearby_query,
    "Weather Query": build_weather_query,
    "Route Property Query": build_route_property,
    "Arrival/Departure Time Query": build_arrival_departure,
    "Point-to-Point Planning": build_point_to_point,
    "Multi-stop Planning": build_multi_stop,
    "Traffic Info Query": build_traffic_query,
    "Option-Constrained Route Planning": build_option_constrained,
    "Route-Constrained Planning": build_route_constrained,
}
BASE_DATE = dt.datetime(2025, 11, 3)
MAX_ATTEMPTS = 40
_GOLDEN = (math.sqrt(5) - 1) / 2


def resolve_mix(mix: Mapping[str, float] | str | None = None) -> dict[str, float]:
    """Scenario -> probability. ``mix`` may name scenarios and/or families (a family's weight
    is split evenly over its scenarios), ``"uniform"`` or ``"paper"``; None means the paper's."""
    if mix is None or mix == "paper":
        mix = PAPER_FAMILY_MIX
    elif mix == "uniform":
        mix = {s: 1.0 for s in SCENARIOS}
    if not isinstance(mix, Mapping):
        raise ConfigError(f"mix must be a dict of scenario/family -> weight, 'paper' or 'uniform'; got {mix!r}")
    weights = {s: 0.0 for s in SCENARIOS}
    for name, weight in mix.items():
        if not isinstance(weight, (int, float)) or weight < 0 or not math.isfinite(weight):
            raise ConfigError(f"mix weight for {name!r} must be a finite number >= 0, got {weight!r}")
        if name in SCENARIOS_BY_FAMILY:
            for scenario in SCENARIOS_BY_FAMILY[name]:
                weights[scenario] += weight / len(SCENARIOS_BY_FAMILY[name])
        elif name in FAMILY_OF:
            weights[name] += weight
        else:
            raise ConfigError(f"unknown scenario or family {name!r} in mix; scenarios: {', '.join(SCENARIOS)}; "
                              f"families: {', '.join(SCENARIOS_BY_FAMILY)}")
    total = sum(weights.values())
    if total <= 0:
        raise ConfigError("mix weights sum to 0; give at least one positive weight")
    return {s: w / total for s, w in weights.items() if w > 0}


def scenario_for(index: int, seed: int, mix: dict[str, float]) -> str:
    """The scenario of episode ``index``: golden-ratio sequence through the cumulative mix."""
    u = (unit_interval(seed, "phase") + index * _GOLDEN) % 1.0
    cumulative = 0.0
    for scenario, p in mix.items():
        cumulative += p
        if u < cumulative:
            return scenario
    return next(reversed(mix))


def generate_row(world: World, index: int, scenario: str) -> dict[str, Any]:
    """The official row (parsed values + ``sandbox_extra``) of episode ``index``."""
    for attempt in range(MAX_ATTEMPTS):
        rng = rng_for(world.seed, "episode", index, attempt)
        city = world.city(world.city_names[rng.randrange(len(world.city_names))])
        when = BASE_DATE + dt.timedelta(days=rng.randrange(28), hours=rng.randrange(6, 23), minutes=rng.randrange(60),
                                        seconds=rng.randrange(60))
        draft = Draft(world, rng, scenario, city, city.random_point(rng, 0.7), when)
        row = BUILDERS[scenario](draft)
        if row is not None:
            return row
    raise RuntimeError(f"could not build a {scenario!r} episode for index {index} in {MAX_ATTEMPTS} attempts")


_WORKER_STATE: dict[str, Any] = {}   # per worker process: the World and mix, set by _init_worker


def _init_worker(seed: int, weights: dict[str, float]) -> None:
    _WORKER_STATE.update(world=World(seed), weights=weights, seed=seed)


def _generate_chunk(bounds: tuple[int, int]) -> list[dict[str, Any]]:
    world, weights, seed = _WORKER_STATE["world"], _WORKER_STATE["weights"], _WORKER_STATE["seed"]
    return [generate_row(world, i, scenario_for(i, seed, weights)) for i in range(*bounds)]


def generate_rows(n: int, seed: int, mix: Mapping[str, float] | str | None = None, *,
                  workers: int = 1, chunk: int = 500) -> Iterator[dict[str, Any]]:
    """``n`` official rows (cells as parsed Python values, plus ``sandbox_extra``), in order.

    ``workers > 1`` generates chunks in worker processes; the rows are identical either way
    because each depends only on ``(seed, index)``.

    >>> rows = list(generate_rows(3, seed=0))
    >>> sorted(rows[0])[:3]
    ['ans', 'ans_loc', 'bus_lines_list']
    """
    if n < 0:
        raise ConfigError(f"n must be >= 0, got {n}")
    weights = resolve_mix(mix)
    if workers <= 1 or n <= chunk:
        world = World(seed)
        for index in range(n):
            yield generate_row(world, index, scenario_for(index, seed, weights))
        return
    import multiprocessing

    bounds = iter([(start, min(n, start + chunk)) for start in range(0, n, chunk)])
    with multiprocessing.get_context("spawn").Pool(workers, _init_worker, (seed, weights)) as pool:
        # A sliding window of chunks in flight keeps memory flat when the consumer is slower.
        pending = deque(pool.apply_async(_generate_chunk, (b,)) for b in islice(bounds, 2 * workers))
        while pending:
            rows = pending.popleft().get()
            following = next(bounds, None)
            if following is not None:
                pending.append(pool.apply_async(_generate_chunk, (following,)))
            yield from rows


def synthesize(n: int, seed: int, out_dir: str | os.PathLike, *, mix: Mapping[str, float] | str | None = None,
               progress: bool = True, workers: int | None = None) -> Path:
    """Generate ``n`` episodes of seed ``seed`` and build them into ``out_dir`` (usable as ``data=``).

    Example: ``synthesize(220, 0, "datasets/default")`` — the bundled default set.
    ``workers`` defaults to the CPU count for n >= 5000 (output is identical for any value).
    """
    from ..mobilitybench.build import build_directory

    source = f"synth:seed={seed}"
    started = time.monotonic()

    def episodes():
        count = workers if workers is not None else ((os.cpu_count() or 1) if n >= 5000 else 1)
        for index, row in enumerate(generate_rows(n, seed, mix, workers=count)):
            yield episode_from_row(row, source=source, row_number=index, id_prefix=f"syn{seed}")
            if progress and (index + 1) % 10_000 == 0:
                print(f"synth: {index + 1}/{n} episodes ({time.monotonic() - started:.0f}s)", file=sys.stderr)

    report = {"generator": "mobility_env.synth", "seed": seed, "n": n, "mix": resolve_mix(mix)}
    out = build_directory(episodes(), out_dir, source=source, report=report)
    if progress:
        print(f"synth: wrote {n} episodes to {out} in {time.monotonic() - started:.1f}s", file=sys.stderr)
    return out
