"""Render ``results.json`` (from ``run_all.py``) as the Markdown tables of docs/results.md.

    python benchmarks/table.py benchmarks/results.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def _get(data: dict[str, Any], *path: str, default: Any = None) -> Any:
    for key in path:
        if not isinstance(data, dict) or key not in data:
            return default
        data = data[key]
    return data


def _us(stats: dict[str, Any] | None) -> str:
    return "—" if not stats else f"{stats['p50_us']:.0f} / {stats['p99_us']:.0f}"


def rows(result: dict[str, Any]) -> list[tuple[str, list[str]]]:
    sizes = list(result["sizes"])
    per = [result["sizes"][s] for s in sizes]

    def line(label: str, fn) -> tuple[str, list[str]]:
        values = []
        for r in per:
            try:
                values.append(fn(r))
            except (KeyError, TypeError, ZeroDivisionError):
                values.append("—")
        return label, values

    out = [
        line("sandbox entries", lambda r: f"{_get(r, 'build', 'sandbox_entries', default='—'):,}"
             if _get(r, "build") else "—"),
        line("generate + build (s)", lambda r: f"{r['build']['generate_and_build_s']:.1f}"),
        line("… of which replay index (s)", lambda r: f"{r['build']['replay_index_s']:.1f}"),
        line("on disk: Parquet / all files (MiB)",
             lambda r: f"{r['build']['parquet_mib']:.0f} / {r['build']['total_mib']:.0f}"),
        line("cold open: `Sandbox.open` + first lookups (ms)",
             lambda r: f"{r['open']['sandbox_open_total_s'] * 1000:.0f}"),
        line("fresh process: `MobilityEnv(dir)` + reset + step (ms)",
             lambda r: f"{r['open']['env_open_reset_step_s'] * 1000:.0f}"),
        line("`reset` p50 / p99 (µs)", lambda r: _us(r["step"]["reset"]["compact"])),
    ]
    for fmt in ("compact", "raw"):
        for match in ("exact", "fuzzy", "nearest", "miss"):
            out.append(line(f"`step` {match}, {fmt}: p50 / p99 (µs)",
                            lambda r, f=fmt, m=match: _us(r["step"]["step"][f][m])))
        out.append(line(f"… floor (exact), {fmt}: p50 / p99 (µs)",
                        lambda r, f=fmt: _us(r["step"]["floor"][f]["exact"])))
        out.append(line(f"… exact overhead over the floor, {fmt}: p50 (µs)",
                        lambda r, f=fmt: f"{r['step']['overhead_us'][f]['exact']['p50']:.0f}"))
    out += [
        line("route call as the agent sees it (exact, compact) p50 / p99 (µs)",
             lambda r: _us(r["step"]["step"]["compact"]["exact_route"])),
        line("global `lookup` exact p50 / p99 (µs)", lambda r: _us(r["step"]["lookup_global"]["exact"])),
        line("global `lookup` fuzzy name p50 / p99 (µs)", lambda r: _us(r["step"]["lookup_global"]["fuzzy"])),
        line("global `lookup` nearest coordinate p50 / p99 (µs)", lambda r: _us(r["step"]["lookup_global"]["nearest"])),
        line("global `lookup` miss p50 / p99 (µs)", lambda r: _us(r["step"]["lookup_global"]["miss"])),
        line("oracle episodes/s (one core)", lambda r: f"{r['episodes']['oracle']['episodes_per_s']:.0f}"),
        line("scoring episodes/s (`compute_metrics`, gold trajectories)",
             lambda r: f"{r['episodes']['scoring']['episodes_per_s']:.0f}"),
        line("one process after open + 1,000 lookups: RSS / USS (MiB)",
             lambda r: f"{r['memory']['processes']['summary']['one_process_rss_mib']:.0f} / "
                       f"{r['memory']['processes']['summary']['one_process_uss_mib']:.0f}"),
        line("… of which Python + imports, USS (MiB)",
             lambda r: f"{r['memory']['processes']['summary']['import_uss_mib']:.0f}"),
        line("each additional process: private heap (anon) (MiB)",
             lambda r: " / ".join(f"{x:.0f}" for x in r["memory"]["processes"]["summary"]["extra_process_anon_mib"])),
        line("… of which data (anon after − anon after import) (MiB)",
             lambda r: " / ".join(f"{x:.0f}"
                                  for x in r["memory"]["processes"]["summary"]["extra_process_anon_data_mib"])),
        line("each Ray actor (`RolloutWorker`): anon, bare actor → after 300 episodes (MiB)",
             lambda r: f"{r['memory']['ray']['summary']['bare_actor_anon_mib'][0]:.0f} → "
                       + " / ".join(f"{x:.0f}" for x in r["memory"]["ray"]["summary"]["worker_anon_mib"])),
    ]
    return out


def issue_13_rows(result: dict[str, Any]) -> list[str]:
    """The reference-comparison targets table (``run_all.py``'s ``targets_issue_13``), when the run has it."""
    targets = result.get("targets_issue_13")
    if not targets:
        return []

    def verdict(entry: dict[str, Any]) -> str:
        return "**met**" if entry.get("met") else "**missed**"

    lines = ["", "| issue 13 target | this run | verdict |", "|---|---|---|"]
    step = targets["exact_step_overhead_p50_us"]
    lines.append(f"| exact step overhead over the floor ≤ 40 µs p50 ({int(step['episodes']):,} episodes, compact) "
                 f"| {step['value']:.0f} µs | {verdict(step)} |")
    if "first_global_lookup_fresh_process_ms" in targets:
        cold = targets["first_global_lookup_fresh_process_ms"]
        lines.append(f"| first global miss/nearest lookup in a fresh process ≤ 50 ms | {cold['value']:.0f} ms "
                     f"(scikit-learn imported: {'yes' if cold['sklearn_imported'] else 'no'}) | {verdict(cold)} |")
        fuzzy = targets["global_fuzzy_lookup_growth"]
        lines.append(f"| global fuzzy lookup p50 within 1.2× from {int(fuzzy['sizes'][0]):,} to "
                     f"{int(fuzzy['sizes'][1]):,} episodes | {fuzzy['value']:.2f}× | {verdict(fuzzy)} |")
    if "exact_route_call_speedup" in targets:
        route = targets["exact_route_call_speedup"]
        shown = ", ".join(f"{tool.split('_')[0]} {value:.1f}×" for tool, value in route["value"].items())
        lines.append(f"| exact route calls as the agent sees them ≥ 3× the reference, every route tool | {shown} "
                     f"| {verdict(route)} |")
        whole = targets["whole_episode_speedup"]
        without = whole["without_the_scored_finish"]
        lines.append(f"| whole episode loop ≥ 2× the reference's call sequence | first visit "
                     f"{whole['value']['first_visit']:.2f}×, revisit {whole['value']['revisit']:.2f}× "
                     f"(without our scored `finish`: {without['first_visit']:.2f}×, {without['revisit']:.2f}×) "
                     f"| {verdict(whole)} |")
    return lines


def render(result: dict[str, Any]) -> str:
    sizes = list(result["sizes"])
    head = "| episodes | " + " | ".join(f"{int(s):,}" for s in sizes) + " |"
    sep = "|---|" + "---:|" * len(sizes)
    body = [f"| {label} | " + " | ".join(values) + " |" for label, values in rows(result)]
    return "\n".join([head, sep, *body, *issue_13_rows(result)])


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    result = json.loads(Path(argv[0] if argv else Path(__file__).with_name("results.json")).read_text(encoding="utf-8"))
    print(render(result))


if __name__ == "__main__":
    main()
