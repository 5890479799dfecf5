"""A report's charts as plain data, drawn two ways: PNG files with matplotlib (the optional ``plot`` extra) and
inline SVG for ``report.html`` (no dependency). Knows no suite: each suite's report says what to chart.

* :class:`BarChart`: grouped bars, ``categories`` along the x axis (the metrics), one bar per :class:`Series` in
  each (a scenario, a family, ``overall``); every bar is labelled with its value, a value of 0 included, and a
  value nobody measured (``None``) is labelled ``n/a`` with no bar;
* :class:`RadarChart`: one polygon per series over ``axes`` (the MobilityBench paper's summary picture); an axis
  with a ``None`` in any series is left out, and fewer than three axes draw nothing (nor does a bar chart with no
  category).

Values are percentages in [0, 100]. The legend sits outside the data area (right of it), so it hides no bar. The
``caption`` says what was measured (agent, model, n; :func:`run_caption`) and goes under the title.
:func:`write_pngs` returns the files written and a note: without matplotlib, no file and
:data:`MISSING_MATPLOTLIB`; :func:`chart_svg` always works.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from html import escape
from pathlib import Path
from typing import Any, Mapping, Sequence, Union

PLOT_HINT = "pip install 'mobility-env[plot]'"
MISSING_MATPLOTLIB = f"charts skipped: matplotlib is not installed ({PLOT_HINT})"
#: matplotlib's tab10, so the PNG and the SVG of a chart use the same colours.
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
           "#17becf")


@dataclass(frozen=True)
class Series:
    name: str
    values: tuple[float | None, ...]  # percent, one per category (axis); None: not measured


@dataclass(frozen=True)
class BarChart:
    stem: str  # the PNG's file name without ".png"
    title: str
    caption: str
    categories: tuple[str, ...]
    series: tuple[Series, ...]


@dataclass(frozen=True)
class RadarChart:
    stem: str
    title: str
    caption: str
    axes: tuple[str, ...]
    series: tuple[Series, ...]

    def drawn(self) -> tuple[tuple[str, ...], tuple[Series, ...]]:
        """The axes every series measured, and the series over them (empty when fewer than three)."""
        keep = [i for i in range(len(self.axes)) if all(s.values[i] is not None for s in self.series)]
        if len(keep) < 3 or not self.series:
            return (), ()
        return (tuple(self.axes[i] for i in keep),
                tuple(Series(s.name, tuple(s.values[i] for i in keep)) for s in self.series))


Chart = Union[BarChart, RadarChart]


def percent(value: Any) -> float | None:
    """A score fraction as a percentage (None stays None: not measured)."""
    return None if value is None else 100.0 * float(value)


def run_caption(run: Mapping[str, Any] | None, n: int, unit: str = "episodes") -> str:
    """``agent rule · model – · n = 30 episodes``: who was measured on how much, from ``run.json``."""
    run = run or {}
    parts = [f"agent {run.get('agent') or '?'}", f"model {run.get('model') or '–'}", f"n = {n} {unit}"]
    return " · ".join(parts)


def value_label(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0f}" if value in (0.0, 100.0) else f"{value:.1f}"


# ----------------------------------------------------------------------------------------------- PNG (matplotlib)
def write_pngs(run_dir: Path, charts: Sequence[Chart]) -> tuple[list[Path], str]:
    """Each chart as ``run_dir/<stem>.png``; without matplotlib none, and :data:`MISSING_MATPLOTLIB`."""
    try:
        import matplotlib
    except ImportError:
        return [], MISSING_MATPLOTLIB
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    paths = []
    for chart in charts:
        figure = _bar_figure(plt, chart) if isinstance(chart, BarChart) else _radar_figure(plt, chart)
        if figure is None:
            continue
        path = Path(run_dir) / f"{chart.stem}.png"
        figure.savefig(path, dpi=100, bbox_inches="tight")
        plt.close(figure)
        paths.append(path)
    return paths, ""


def _bar_figure(plt: Any, chart: BarChart) -> Any:
    if not chart.categories or not chart.series:
        return None
    n_series, n_groups = max(1, len(chart.series)), max(1, len(chart.categories))
    bars = n_series * n_groups
    figure, axes = plt.subplots(figsize=(min(20.0, max(7.0, 2.0 + 0.28 * bars)), 4.6))
    width = 0.8 / n_series
    rotate = bars > 14
    for i, series in enumerate(chart.series):
        xs = [x - 0.4 + (i + 0.5) * width for x in range(n_groups)]
        heights = [v or 0.0 for v in series.values]
        drawn = axes.bar(xs, heights, width, label=series.name, color=PALETTE[i % len(PALETTE)])
        for bar, value in zip(drawn, series.values):
            axes.annotate(value_label(value), (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                          xytext=(0, 2), textcoords="offset points", ha="center", va="bottom",
                          fontsize=6.5 if rotate else 8, rotation=90 if rotate else 0)
    long_names = max(map(len, chart.categories)) > 8  # scenario names, not metric names: slanted, or they overlap
    axes.set_xticks(range(n_groups), chart.categories, rotation=35 if long_names else 0,
                    ha="right" if long_names else "center", fontsize=8 if long_names else None)
    axes.set_ylim(0, 118 if rotate else 110)
    axes.set_yticks(range(0, 101, 20))
    axes.set_ylabel("%")
    axes.set_title(f"{chart.title}\n{chart.caption}", fontsize=10)
    axes.spines[["top", "right"]].set_visible(False)
    axes.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0, frameon=False)
    return figure


def _radar_figure(plt: Any, chart: RadarChart) -> Any:
    names, series = chart.drawn()
    if not names:
        return None
    angles = [2 * math.pi * i / len(names) for i in range(len(names))]
    figure, axes = plt.subplots(figsize=(7.5, 5.5), subplot_kw={"projection": "polar"})
    axes.set_theta_offset(math.pi / 2)
    axes.set_theta_direction(-1)
    for i, item in enumerate(series):
        values = [v or 0.0 for v in item.values]
        colour = PALETTE[i % len(PALETTE)]
        axes.plot(angles + angles[:1], values + values[:1], color=colour, linewidth=1.6, label=item.name)
        axes.fill(angles + angles[:1], values + values[:1], color=colour, alpha=0.08)
    axes.set_xticks(angles, names, fontsize=8)
    axes.set_ylim(0, 100)
    axes.set_yticks([25, 50, 75, 100], ["25", "50", "75", "100"], fontsize=7)
    axes.set_title(f"{chart.title}\n{chart.caption}", fontsize=10, pad=18)
    axes.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.12, 1.0), borderaxespad=0, frameon=False)
    return figure


# ----------------------------------------------------------------------------------------------- SVG (inline)
def chart_svg(chart: Chart) -> str:
    """The chart as an ``<svg>`` element (every text escaped); ``""`` for a chart with nothing to draw (no category,
    or a radar with fewer than three axes)."""
    return _bar_svg(chart) if isinstance(chart, BarChart) else _radar_svg(chart)


def _text(x: float, y: float, text: str, *, size: int = 11, anchor: str = "middle", extra: str = "") -> str:
    return (f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}"{extra}>'
            f'{escape(text)}</text>')


def _legend(series: Sequence[Series], x: float, y: float) -> list[str]:
    out = []
    for i, item in enumerate(series):
        top = y + 18 * i
        out.append(f'<rect x="{x:.1f}" y="{top:.1f}" width="11" height="11" fill="{PALETTE[i % len(PALETTE)]}"/>')
        out.append(_text(x + 16, top + 10, item.name, anchor="start"))
    return out


def _frame(width: float, height: float, chart: Chart, body: list[str]) -> str:
    head = [f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" viewBox="0 0 {width:.0f} {height:.0f}"'
            f' width="{width:.0f}" height="{height:.0f}" font-family="sans-serif">',
            f"<title>{escape(chart.title)} ({escape(chart.caption)})</title>",
            _text(width / 2, 18, chart.title, size=14, extra=' font-weight="bold"'),
            _text(width / 2, 35, chart.caption, size=11, extra=' fill="#555"')]
    return "".join(head + body + ["</svg>"])


def _legend_width(series: Sequence[Series]) -> float:
    return 30 + 6.5 * max((len(s.name) for s in series), default=0)


def _bar_svg(chart: BarChart) -> str:
    if not chart.categories or not chart.series:
        return ""
    n_series, n_groups = max(1, len(chart.series)), max(1, len(chart.categories))
    bar = max(9.0, min(26.0, 620 / (n_series * n_groups)))
    left, top, plot_h = 40.0, 60.0, 220.0
    plot_w = bar * n_series * n_groups / 0.8
    width = left + plot_w + 20 + _legend_width(chart.series)
    height = top + plot_h + 40
    rotate = bar < 22
    body = []
    for tick in range(0, 101, 20):
        y = top + plot_h * (1 - tick / 100)
        body.append(f'<line x1="{left:.1f}" x2="{left + plot_w:.1f}" y1="{y:.1f}" y2="{y:.1f}" stroke="#ddd"/>')
        body.append(_text(left - 5, y + 4, str(tick), size=10, anchor="end"))
    group_w = plot_w / n_groups
    for g, category in enumerate(chart.categories):
        body.append(_text(left + group_w * (g + 0.5), top + plot_h + 16, category, size=11))
        for i, item in enumerate(chart.series):
            value = item.values[g]
            x = left + group_w * g + group_w * 0.1 + bar * i
            h = plot_h * min(100.0, max(0.0, value or 0.0)) / 100
            y = top + plot_h - h
            label = value_label(value)
            body.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{bar - 1:.1f}" height="{h:.1f}" '
                        f'fill="{PALETTE[i % len(PALETTE)]}"><title>{escape(item.name)}, {escape(category)}: '
                        f'{label}</title></rect>')
            cx = x + (bar - 1) / 2
            if rotate:
                body.append(_text(cx + 3, y - 3, label, size=9, anchor="start",
                                  extra=f' transform="rotate(-90 {cx + 3:.1f} {y - 3:.1f})"'))
            else:
                body.append(_text(cx, y - 3, label, size=9))
    body.append(f'<line x1="{left:.1f}" x2="{left + plot_w:.1f}" y1="{top + plot_h:.1f}" y2="{top + plot_h:.1f}" '
                f'stroke="#333"/>')
    body += _legend(chart.series, left + plot_w + 20, top)
    return _frame(width, height, chart, body)


def _radar_svg(chart: RadarChart) -> str:
    names, series = chart.drawn()
    if not names:
        return ""
    radius, cx, cy = 130.0, 250.0, 215.0
    width, height = 2 * cx + 10 + _legend_width(series), 2 * cy - 10

    def point(i: int, value: float) -> tuple[float, float]:
        angle = 2 * math.pi * i / len(names) - math.pi / 2
        return cx + radius * value / 100 * math.cos(angle), cy + radius * value / 100 * math.sin(angle)

    body = []
    for ring in (25, 50, 75, 100):
        ring_points = " ".join(f"{x:.1f},{y:.1f}" for x, y in (point(i, ring) for i in range(len(names))))
        body.append(f'<polygon points="{ring_points}" fill="none" stroke="#ddd"/>')
        body.append(_text(cx + 3, cy - radius * ring / 100 - 2, str(ring), size=9, anchor="start",
                          extra=' fill="#888"'))
    for i, name in enumerate(names):
        x, y = point(i, 100)
        body.append(f'<line x1="{cx:.1f}" y1="{cy:.1f}" x2="{x:.1f}" y2="{y:.1f}" stroke="#ddd"/>')
        lx, ly = point(i, 116)
        anchor = "middle" if abs(lx - cx) < 10 else "start" if lx > cx else "end"
        body.append(_text(lx, ly + 4, name, size=11, anchor=anchor))
    for s, item in enumerate(series):
        colour = PALETTE[s % len(PALETTE)]
        corners = [point(i, value or 0.0) for i, value in enumerate(item.values)]
        body.append(f'<polygon points="{" ".join(f"{x:.1f},{y:.1f}" for x, y in corners)}" fill="{colour}" '
                    f'fill-opacity="0.05" stroke="{colour}" stroke-width="1.8"/>')
        body += [f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{colour}"><title>{escape(item.name)}, '
                 f'{escape(names[i])}: {value_label(item.values[i])}</title></circle>'
                 for i, (x, y) in enumerate(corners)]
    body += _legend(series, 2 * cx + 10, 60)
    return _frame(width, height, chart, body)
