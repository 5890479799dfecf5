"""``report.html`` and the report's charts: escaped model text, every value on the charts, and the page of a real
run of each suite loaded in headless Chromium (file:// only, no network): every episode listed, the filters
working, an injected ``<script>`` answer shown as text and never run, no console message, a screenshot."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from mobility_env.cli import main
from mobility_env.runfiles import read_results
from mobility_rewards.charts import MISSING_MATPLOTLIB, BarChart, RadarChart, Series, chart_svg, write_pngs
from mobility_rewards.html_report import FULL_LIMIT, PREVIEW, Call, EpisodeView, ReportPage, Table, render_page

INJECTED = "<script>document.title='pwned';document.body.setAttribute('data-pwned','1')</script> cut \ud83d"
CHROMIUM = next(filter(None, map(shutil.which, ("chromium", "chromium-browser", "google-chrome"))), None)


# ----------------------------------------------------------------------------------------------- charts
def test_every_bar_is_labelled_and_the_legend_is_outside_the_bars():
    chart = BarChart("c", "T <1>", "agent a · model – · n = 3 episodes", ("ID", "IE", "PF"),
                     (Series("one", (100.0, 0.0, None)), Series("two", (50.0, 12.345, 75.0))))
    svg = chart_svg(chart)
    labels = re.findall(r'font-size="9"[^>]*>([^<>]+)</text>', svg)  # the bars' labels (axis ticks are 10)
    assert labels == ["100", "50.0", "0", "12.3", "n/a", "75.0"]  # per category, per series; 0 labelled
    assert "T &lt;1&gt;" in svg and "n = 3 episodes" in svg
    bar = r'<rect x="([\d.]+)" y="[\d.]+" width="([\d.]+)" height="[\d.]+" fill="#[0-9a-f]+"><title>'
    bars = [float(x) + float(w) for x, w in re.findall(bar, svg)]
    legend = [float(x) for x in re.findall(r'<rect x="([\d.]+)" y="[\d.]+" width="11"', svg)]
    assert len(bars) == 6 and len(legend) == 2 and min(legend) > max(bars)


def test_radar_draws_the_axes_every_series_measured():
    chart = RadarChart("r", "R", "n = 2", ("A", "B", "C", "D"), (Series("x", (10.0, None, 30.0, 40.0)),
                                                                 Series("y", (50.0, 60.0, 70.0, 80.0))))
    axes, series = chart.drawn()
    assert axes == ("A", "C", "D") and series[0].values == (10.0, 30.0, 40.0)
    svg = chart_svg(chart)
    assert svg.count("<polygon") == 4 + 2 and ">B</text>" not in svg  # 4 grid rings, 2 series
    assert chart_svg(RadarChart("r", "R", "", ("A", "B"), (Series("x", (1.0, 2.0)),))) == ""


def test_png_charts_or_the_wheel_install_hint(tmp_path):
    chart = BarChart("chart_t", "T", "n = 1", ("ID",), (Series("s", (0.0,)),))
    paths, note = write_pngs(tmp_path, [chart])
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert (paths, note) == ([], MISSING_MATPLOTLIB)
        assert "pip install 'mobility-env[plot]'" in note
    else:
        assert paths == [tmp_path / "chart_t.png"] and paths[0].read_bytes()[:4] == b"\x89PNG" and note == ""


# ----------------------------------------------------------------------------------------------- the page
def _page(answer: str, observation: str = "ok") -> ReportPage:
    episode = EpisodeView("ep<1>", 0, {"scenario": "S\"1"}, False, query="q <b>bold</b>",
                          calls=[Call(1, "tool<x>", {"k": "<v>"}, observation, "no_cached_result", True)],
                          answer=answer, verdict={"reason": "r<", "checks": [
                              {"name": "c", "expected": "<e>", "stated": answer, "passed": False, "reason": "<why>"}]},
                          tables=[Table("State <changes>", ("a",), (("<row>",),))])
    return ReportPage("T", [("agent", "<a>")], [Table("Overall", ("name",), (("x",),))], [], [episode], ["scenario"])


def test_model_text_is_escaped_and_surrogates_replaced():
    html = render_page(_page(INJECTED))
    html.encode("utf-8")  # a lone surrogate would raise here
    body = html.split("<body>", 1)[1].rsplit("<script>", 1)[0]  # the page less its own script
    assert "<script" not in body and "<b>bold" not in body and "<row>" not in body and "<why>" not in body
    assert body.count("&lt;script&gt;document.title=&#x27;pwned&#x27;") == 2  # the answer and the check's "stated"
    assert "cut \ufffd" in body and 'data-f0="S&quot;1"' in body and "ep&lt;1&gt;" in body


def test_long_texts_preview_and_expand_up_to_the_limit():
    html = render_page(_page("a" * (PREVIEW + 1), observation="o" * (FULL_LIMIT + 50)))
    assert f"show all {PREVIEW + 1:,} characters" in html and f"show all {FULL_LIMIT + 50:,} characters" in html
    assert "o" * FULL_LIMIT + "\n… 50 more characters in trajectories.jsonl" in html
    assert "o" * (FULL_LIMIT + 1) not in html


# ----------------------------------------------------------------------------------------------- real runs
def _inject(run_dir: Path, episode_id: str, answer: str) -> None:
    """Give ``episode_id``'s recorded finish (the step the browser shows and the record eval rescores) ``answer``."""
    lines = [json.loads(line) for line in (run_dir / "trajectories.jsonl").read_text().splitlines()]
    for line in lines:
        if line["episode_id"] != episode_id:
            continue
        finish = line["steps"][-1]["action"]
        assert finish["name"] == "finish"
        finish["arguments"]["answer"] = answer
        record = line["record"]
        (record["finish"] if "finish" in record else record)["answer"] = answer
    (run_dir / "trajectories.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """A MobilityBench rule run (passing and failing episodes) and a MobilePA rule run with one task's changes
    taken back (it fails), each with an injected ``<script>`` answer, rescored and reported."""
    root = tmp_path_factory.mktemp("html")
    mb, pa = root / "mb", root / "pa"
    assert main(["run", "--agent", "rule", "--out", str(mb), "--limit", "22", "--no-progress"]) == 0
    assert main(["run", "--env", "MobilePA-v0", "--agent", "rule", "--out", str(pa), "--limit", "10",
                 "--no-progress"]) == 0
    _inject(mb, read_results(mb / "results.jsonl")[0]["episode_id"], INJECTED)
    pa_results = read_results(pa / "results.jsonl")
    _inject(pa, pa_results[0]["episode_id"], INJECTED)
    lines = [json.loads(line) for line in (pa / "trajectories.jsonl").read_text().splitlines()]
    victim = next(line for line, result in zip(lines, pa_results)
                  if result["bucket"] == "state_change" and line["record"]["delta"])
    victim["record"]["delta"] = {}
    (pa / "trajectories.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    for run_dir in (mb, pa):
        assert main(["eval", str(run_dir)]) == 0 and main(["report", str(run_dir)]) == 0
    return {"mb": mb, "pa": pa}


def test_report_writes_the_page_of_each_suite(runs, capsys):
    for name, run_dir in runs.items():
        html = (run_dir / "report.html").read_text(encoding="utf-8")
        results = read_results(run_dir / "eval_results.jsonl")
        assert html.count('<details class="episode"') == len(results)
        assert all(f"<code>{r['episode_id']}</code>" in html for r in results)
        failed = [r for r in results if not r["verdict"]["passed"]]
        assert failed and len(failed) < len(results)
        assert f'<option value="fail">fail ({len(failed)})</option>' in html
        assert "&lt;script&gt;document.title" in html and "<script>document.title" not in html
        assert "recomputed by `mobility-env eval`" in html and "<svg" in html
    pa_html = (runs["pa"] / "report.html").read_text(encoding="utf-8")
    assert "State changes (D_T − D_0)" in pa_html and "bucket result" in pa_html and "Overall score" in pa_html
    mb_html = (runs["mb"] / "report.html").read_text(encoding="utf-8")
    assert "finish fields" in mb_html and "MobilityBench: intent families over the score metrics" in mb_html


def _chromium(*args: str, profile: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu", f"--user-data-dir={profile}", "--no-first-run",
         "--disable-extensions", "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--host-resolver-rules=MAP * ~NOTFOUND", "--enable-logging=stderr", "--v=0", *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, errors="replace")


def _console(stderr: str) -> list[str]:
    """What the page wrote to the console (errors, CSP violations, uncaught exceptions)."""
    return [line for line in stderr.splitlines() if ":CONSOLE" in line or "Uncaught" in line]


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium on PATH: the page is not loaded in a browser")
def test_the_pages_in_headless_chromium(runs, tmp_path):
    jobs = {name: _chromium("--dump-dom", (run_dir / "report.html").as_uri() + "#verdict=fail",
                            profile=tmp_path / f"profile-{name}") for name, run_dir in runs.items()}
    screenshot = Path(os.environ.get("HTML_REPORT_SCREENSHOT") or tmp_path / "report.png")
    jobs["shot"] = _chromium(f"--screenshot={screenshot}", "--window-size=1280,2000",
                             (runs["mb"] / "report.html").as_uri(), profile=tmp_path / "profile-shot")
    out = {name: job.communicate(timeout=60) for name, job in jobs.items()}
    for name, run_dir in runs.items():
        dom, stderr = out[name]
        assert _console(stderr) == [], name
        body = re.search(r"<body[^>]*>", dom).group(0)  # our script ran (ready), the injected one did not (pwned)
        assert 'data-ready="true"' in body and "data-pwned" not in body and "<title>pwned" not in dom
        assert "&lt;script&gt;document.title='pwned'" in dom and "cut \ufffd" in dom
        results = read_results(run_dir / "eval_results.jsonl")
        episodes = re.findall(r'<details class="episode" data-verdict="(\w+)"[^>]*?( hidden(?:="")?)?>', dom)
        assert len(episodes) == len(results) and {v for v, _ in episodes} == {"pass", "fail"}
        assert all(bool(hidden) == (verdict != "fail") for verdict, hidden in episodes)  # #verdict=fail applied
        failed = sum(1 for r in results if not r["verdict"]["passed"])
        assert f'<span id="shown">{failed} of {len(results)} shown</span>' in dom
        assert re.search(r'<select data-filter="f0" data-key="(scenario|category)">', dom)
        assert '<select data-filter="verdict"' in dom and 'data-filter="text"' in dom
    assert _console(out["shot"][1]) == []
    assert screenshot.read_bytes()[:4] == b"\x89PNG" and screenshot.stat().st_size > 20_000
