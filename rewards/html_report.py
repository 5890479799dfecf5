"""``report.html``: one self-contained page per run — its description, scorecard, charts, findings and an episode
browser — built from plain data (:class:`ReportPage`); each suite's ``html`` module turns its results into it.

The page needs no server and no network: CSS and the filter script are inline, the charts inline SVG
(:func:`mobility_rewards.charts.chart_svg`), and a Content-Security-Policy allows nothing else (no fetch, no
image or script from elsewhere; of scripts only the page's own, by its hash). Everything is rendered here, in
Python: every text a model or a file wrote goes through :func:`text` (HTML-escaped, a lone surrogate made U+FFFD),
so an answer ``<script>…</script>`` shows as text. The script only filters: by each of ``filters`` (the episode's
``labels``, e.g. scenario, bucket), by verdict (pass / fail / none) and by a text in an episode's summary line
(id, labels, query);
the state lives in the address's fragment (``report.html#verdict=fail&scenario=Weather%20Query``), so a filtered
view is a link. Episodes are collapsed ``<details>``; long texts show :data:`PREVIEW` characters and expand to at
most :data:`FULL_LIMIT` (the rest is in ``trajectories.jsonl``).

:func:`trajectory_views` reads what the browser shows from a run's ``trajectories.jsonl`` (the runner's format,
shared by every suite: ``query``, ``steps`` of ``action``/``observation``/``error``/``match``, the suite's
``record``), one line at a time, keeping the last line of each (episode, sample).
"""

from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from mobility_env.runfiles import TRAJECTORIES_FILE, clean_text, iter_jsonl, write_text_atomic

from .charts import Chart, chart_svg

REPORT_HTML = "report.html"
PREVIEW = 240
FULL_LIMIT = 6000


@dataclass(frozen=True)
class Table:
    heading: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    note: str = ""


@dataclass(frozen=True)
class Call:
    """One action of an episode: the tool, its arguments (a JSON value, or the raw text of an unreadable action),
    what the agent read back, and how the call went (``status``: ``ok``, an error type, a sandbox match kind)."""

    step: int
    name: str
    arguments: Any
    observation: str
    status: str = ""
    failed: bool = False


@dataclass
class EpisodeView:
    episode_id: str
    sample_index: int
    labels: dict[str, str]  # the values the page filters by, e.g. {"scenario": "Weather Query"}
    passed: bool | None  # None: no verdict recorded
    query: str = ""
    facts: list[tuple[str, str]] = field(default_factory=list)  # shown under the query: metrics, failure …
    calls: list[Call] = field(default_factory=list)
    answer: str | None = None
    verdict: Mapping[str, Any] | None = None  # ``Verdict.to_dict()``: reason and checks
    tables: list[Table] = field(default_factory=list)  # suite-specific: MobilePA's state changes


@dataclass
class ReportPage:
    title: str
    run: list[tuple[str, str]]  # the run's description, in order
    scorecard: list[Table]
    charts: list[Chart]
    episodes: list[EpisodeView]
    filters: list[str]  # keys of EpisodeView.labels, in the order of their menus
    findings: list[Table] = field(default_factory=list)  # most frequent failing checks
    notes: list[str] = field(default_factory=list)


# ----------------------------------------------------------------------------------------------- reading a run
@dataclass(frozen=True)
class TrajectoryView:
    query: str
    calls: list[Call]
    answer: str | None
    finish: dict[str, Any]  # the finish action's arguments
    extra: Any = None  # what the suite's ``keep`` took from the line


def _action(action: Any) -> tuple[str, Any]:
    """(tool name, arguments) of a recorded action: a dict, the OpenAI tool-call shape, or raw text."""
    if isinstance(action, dict):
        if isinstance(action.get("function"), dict):
            action = action["function"]
        arguments = action.get("arguments", {})
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments)
            except ValueError:
                pass
        return str(action.get("name") or "(no name)"), arguments
    return "(unreadable action)", action if isinstance(action, str) else repr(action)


def _status(step: Mapping[str, Any]) -> tuple[str, bool]:
    error = step.get("error")
    if isinstance(error, dict):
        return str(error.get("type") or "error"), True
    return str(step.get("match") or "ok"), False


def trajectory_view(line: Mapping[str, Any], keep: Callable[[Mapping[str, Any]], Any] | None = None) -> TrajectoryView:
    """What the browser shows of one ``trajectories.jsonl`` line."""
    calls, answer, finish = [], None, {}
    for number, step in enumerate(line.get("steps") or [], 1):
        if not isinstance(step, dict):
            continue
        name, arguments = _action(step.get("action"))
        if name == "finish" and isinstance(arguments, dict):
            finish = {k: v for k, v in arguments.items() if k != "answer"}
            answer = arguments.get("answer")
            answer = answer if answer is None or isinstance(answer, str) else json.dumps(answer, ensure_ascii=False)
            continue
        status, failed = _status(step)
        observation = step.get("observation")
        calls.append(Call(number, name, arguments, observation if isinstance(observation, str) else
                          json.dumps(observation, ensure_ascii=False), status, failed))
    return TrajectoryView(str(line.get("query") or ""), calls, answer, finish, keep(line) if keep else None)


def trajectory_views(run_dir: Path, keep: Callable[[Mapping[str, Any]], Any] | None = None
                     ) -> dict[tuple[str, int], TrajectoryView]:
    """``{(episode_id, sample_index): view}`` of ``run_dir/trajectories.jsonl`` (empty when there is none);
    ``keep(line)`` picks what else a suite shows (kept as ``extra``)."""
    views = {}
    for _, line in iter_jsonl(Path(run_dir) / TRAJECTORIES_FILE):
        if line.get("episode_id") is None:
            continue
        try:
            key = (str(line["episode_id"]), int(line.get("sample_index") or 0))
        except (TypeError, ValueError):
            continue  # eval refuses such a line; the report shows the result without its trajectory
        views[key] = trajectory_view(line, keep)
    return views


def verdict_passed(record: Mapping[str, Any]) -> bool | None:
    verdict = record.get("verdict")
    return bool(verdict.get("passed")) if isinstance(verdict, Mapping) else None


def metric_text(metrics: Any) -> str:
    if not isinstance(metrics, Mapping) or not metrics:
        return ""
    return " · ".join(f"{k} {v:.2f}" if isinstance(v, float) else f"{k} {v}" for k, v in metrics.items())


def outcome_facts(record: Mapping[str, Any], excluded_why: str | None) -> list[tuple[str, str]]:
    """The facts every suite shows of an episode's outcome: reward and steps, tokens, a recorded failure, and why it
    was left out of the scorecard (``excluded_why``, None when it was not)."""
    facts = [("reward", f"{record.get('total_reward', 0.0) or 0.0:.3f} over {record.get('steps', 0)} steps"
              + (" (truncated)" if record.get("truncated") else ""))]
    if record.get("input_tokens") or record.get("output_tokens"):
        facts.append(("tokens", f"{record.get('input_tokens') or 0} in, {record.get('output_tokens') or 0} out"))
    failure = record.get("failure")
    if isinstance(failure, Mapping):
        facts.append(("failure", f"{failure.get('type')}: {failure.get('message') or ''}"))
    if excluded_why:
        facts.append(("excluded", f"left out of the scorecard ({excluded_why})"))
    return facts


def run_description(run: Mapping[str, Any] | None, episodes: int, samples: int, unit: str = "episodes"
                    ) -> list[tuple[str, str]]:
    """The page's "Run" facts (what ``run.json`` says, and n)."""
    run = run or {}
    fields = [("suite", run.get("env_id")), ("agent", run.get("agent")), ("model", run.get("model") or "–"),
              ("data", run.get("data_path") or run.get("data") or "bundled set"),
              ("data fingerprint", run.get("data_fingerprint")),
              ("n", f"{episodes} {unit}" + (f", {samples} samples" if samples != episodes else "")),
              ("seed", run.get("seed")), ("samples per episode", run.get("samples_per_episode")),
              ("started", run.get("started")), ("sessions", len(run.get("sessions") or []) or None)]
    return [(name, str(value)) for name, value in fields if value is not None]


# ----------------------------------------------------------------------------------------------- rendering
def text(value: Any) -> str:
    """``value`` as HTML text: escaped (quotes too, so it is safe in attributes), lone surrogates as U+FFFD."""
    return escape(clean_text(value if isinstance(value, str) else str(value)), quote=True)


def _long(value: str, cls: str = "") -> str:
    """A preformatted text; over :data:`PREVIEW` characters, a preview that expands to the text (cut at
    :data:`FULL_LIMIT`)."""
    klass = f' class="{cls}"' if cls else ""
    if len(value) <= PREVIEW:
        return f"<pre{klass}>{text(value)}</pre>"
    full = value if len(value) <= FULL_LIMIT else \
        value[:FULL_LIMIT] + f"\n… {len(value) - FULL_LIMIT:,} more characters in {TRAJECTORIES_FILE}"
    return (f'<details class="long"><summary><pre{klass}>{text(value[:PREVIEW])}…</pre><span class="more">'
            f'<span class="all">show all {len(value):,} characters</span><span class="less">show less</span></span>'
            f"</summary><pre{klass}>{text(full)}</pre></details>")


def _json(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _table(table: Table, cls: str = "") -> str:
    head = "".join(f"<th>{text(c)}</th>" for c in table.columns)
    rows = "".join("<tr>" + "".join(f"<td>{text(c)}</td>" for c in row) + "</tr>" for row in table.rows)
    note = f'<p class="note">{text(table.note)}</p>' if table.note else ""
    klass = f' class="{cls}"' if cls else ""
    return f"<section><h3>{text(table.heading)}</h3><table{klass}><thead><tr>{head}</tr></thead><tbody>{rows}" \
           f"</tbody></table>{note}</section>"


def _badge(passed: bool | None) -> str:
    word, cls = ("PASS", "pass") if passed else ("—", "none") if passed is None else ("FAIL", "fail")
    return f'<span class="badge {cls}">{word}</span>'


def _checks(verdict: Mapping[str, Any]) -> str:
    rows = []
    for check in verdict.get("checks") or []:
        if not isinstance(check, Mapping):
            continue
        passed = bool(check.get("passed"))
        rows.append(f'<tr class="{"pass" if passed else "fail"}"><td>{_badge(passed)}</td>'
                    f'<td>{text(check.get("name") or "?")}</td><td>{text(check.get("expected") or "")}</td>'
                    f'<td>{text(check.get("stated") or "")}</td><td class="{"muted" if passed else ""}">'
                    f'{text(check.get("reason") or "")}</td></tr>')
    if not rows:
        return '<p class="note">no checks ran</p>'
    return ('<table class="checks"><thead><tr><th></th><th>check</th><th>expected</th><th>stated</th>'
            f'<th>reason</th></tr></thead><tbody>{"".join(rows)}</tbody></table>')


def _calls(calls: Sequence[Call]) -> str:
    if not calls:
        return '<p class="note">no tool calls</p>'
    items = []
    for call in calls:
        status = f'<span class="status{" bad" if call.failed else ""}">{text(call.status)}</span>' if call.status \
            else ""
        items.append(f'<li><div class="call-head"><span class="step">{call.step}</span> <b>{text(call.name)}</b> '
                     f'{status}</div><div class="kv"><span>arguments</span>{_long(_json(call.arguments), "args")}'
                     f'</div><div class="kv"><span>observation</span>{_long(call.observation)}</div></li>')
    return f'<ol class="calls">{"".join(items)}</ol>'


def _episode(view: EpisodeView, filters: Sequence[str]) -> str:
    verdict = "none" if view.passed is None else "pass" if view.passed else "fail"
    attributes = "".join(f' data-f{i}="{text(view.labels.get(key, ""))}"' for i, key in enumerate(filters))
    sample = f" #{view.sample_index}" if view.sample_index else ""
    labels = "".join(f'<span class="label">{text(view.labels[key])}</span>' for key in filters if key in view.labels)
    query = view.query if len(view.query) <= 120 else view.query[:119] + "…"
    parts = [f'<details class="episode" data-verdict="{verdict}"{attributes}><summary>{_badge(view.passed)} '
             f'<code>{text(view.episode_id)}{sample}</code> {labels} <span class="query">{text(query)}</span>'
             "</summary><div class=\"body\">",
             f'<h4>Query</h4><pre class="query">{text(view.query)}</pre>']
    if view.facts:
        parts.append("<dl>" + "".join(f"<dt>{text(k)}</dt><dd>{text(v)}</dd>" for k, v in view.facts) + "</dl>")
    parts += [f"<h4>Tool calls ({len(view.calls)})</h4>", _calls(view.calls), "<h4>Final answer</h4>",
              _long(view.answer, "answer") if view.answer is not None else '<p class="note">no answer</p>']
    parts += [_table(table) for table in view.tables]
    if isinstance(view.verdict, Mapping):
        parts += [f'<h4>Verdict {_badge(view.passed)} <span class="reason">{text(view.verdict.get("reason") or "")}'
                  "</span></h4>", _checks(view.verdict)]
    else:
        parts.append('<h4>Verdict</h4><p class="note">no verdict recorded (a run from before verdicts, or a worker '
                     "error): <code>mobility-env eval</code> recomputes it</p>")
    return "".join(parts) + "</div></details>"


def _menus(page: ReportPage) -> str:
    menus = []
    for i, key in enumerate(page.filters):
        counts: dict[str, int] = {}
        for view in page.episodes:
            value = view.labels.get(key, "")
            counts[value] = counts.get(value, 0) + 1
        options = "".join(f'<option value="{text(v)}">{text(v or "(none)")} ({n})</option>'
                          for v, n in sorted(counts.items()))
        menus.append(f'<label>{text(key)} <select data-filter="f{i}" data-key="{text(key)}">'
                     f'<option value="">all</option>{options}</select></label>')
    verdicts = {v: sum(1 for e in page.episodes if ("none" if e.passed is None else "pass" if e.passed else "fail")
                       == v) for v in ("pass", "fail", "none")}
    menus.append('<label>verdict <select data-filter="verdict" data-key="verdict"><option value="">all</option>'
                 + "".join(f'<option value="{v}">{v} ({n})</option>' for v, n in verdicts.items())
                 + "</select></label>")
    menus.append('<label>search <input type="search" data-filter="text" data-key="q" placeholder="id or query"></label>'
                 '<button type="button" data-toggle="open">expand shown</button>'
                 '<button type="button" data-toggle="close">collapse all</button>')
    return '<div class="filters">' + "".join(menus) + '<span id="shown"></span></div>'


_SCRIPT = """
(function () {
  var episodes = Array.prototype.slice.call(document.querySelectorAll('details.episode'));
  var controls = Array.prototype.slice.call(document.querySelectorAll('[data-filter]'));
  var shown = document.getElementById('shown');
  function apply(remember) {
    var state = new URLSearchParams(), count = 0;
    controls.forEach(function (c) { if (c.value) state.set(c.dataset.key, c.value); });
    episodes.forEach(function (e) {
      var ok = controls.every(function (c) {
        if (!c.value) return true;
        if (c.dataset.filter === 'text') return e.querySelector('summary').textContent.toLowerCase()
          .indexOf(c.value.toLowerCase()) >= 0;
        return (c.dataset.filter === 'verdict' ? e.dataset.verdict : e.dataset[c.dataset.filter]) === c.value;
      });
      e.hidden = !ok;
      if (ok) count += 1;
    });
    shown.textContent = count + ' of ' + episodes.length + ' shown';
    var hash = state.toString();
    if (remember && location.hash.slice(1) !== hash) history.replaceState(null, '', '#' + hash);
  }
  var initial = new URLSearchParams(location.hash.slice(1));
  controls.forEach(function (c) {
    if (initial.has(c.dataset.key)) c.value = initial.get(c.dataset.key);
    c.addEventListener('input', function () { apply(true); });
  });
  document.querySelectorAll('[data-toggle]').forEach(function (b) {
    b.addEventListener('click', function () {
      episodes.forEach(function (e) { e.open = b.dataset.toggle === 'open' && !e.hidden; });
    });
  });
  apply(false);
  document.body.dataset.ready = 'true';
})();
"""

_CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1240px;padding:0 16px 40px;color:#222}
h1{font-size:22px;margin:18px 0 4px}h2{font-size:18px;margin:26px 0 8px;border-bottom:1px solid #ddd}
h3{font-size:15px;margin:16px 0 6px}h4{font-size:13px;margin:12px 0 4px;color:#444}
table{border-collapse:collapse;font-size:12.5px;margin-bottom:6px}
th,td{border:1px solid #ddd;padding:3px 7px;text-align:left;vertical-align:top}
th{background:#f4f4f4}td{max-width:520px;overflow-wrap:anywhere}
table.num td:not(:first-child){text-align:right;font-variant-numeric:tabular-nums}
dl{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;margin:6px 0}dt{color:#666}dd{margin:0}
.run dd{font-family:ui-monospace,monospace;overflow-wrap:anywhere}
.note{color:#666;font-size:12.5px}.charts,.tables{display:flex;flex-wrap:wrap;gap:4px 22px;align-items:flex-start}
.tables section{max-width:100%;overflow-x:auto}nav a{margin-right:14px}
.charts svg{max-width:100%;height:auto;border:1px solid #eee}
pre{white-space:pre-wrap;overflow-wrap:anywhere;margin:2px 0;font:12px/1.4 ui-monospace,monospace;
background:#f7f7f7;padding:4px 6px;border-radius:3px}
.filters{position:sticky;top:0;background:#fff;padding:8px 0;border-bottom:1px solid #ddd;display:flex;
flex-wrap:wrap;gap:8px 14px;align-items:center;z-index:1}
.filters select,.filters input{font:inherit;max-width:260px}#shown{color:#555}
details.episode{border:1px solid #ddd;border-radius:4px;margin:4px 0}
details.episode>summary{cursor:pointer;padding:5px 8px;list-style-position:inside}
details.episode[open]>summary{background:#f4f6fa}.body{padding:4px 14px 12px}
.label{background:#eef;border-radius:3px;padding:0 5px;margin-right:4px;font-size:12px}
.query{color:#333}summary .query{color:#555}
.badge{display:inline-block;min-width:38px;text-align:center;border-radius:3px;font-size:11px;font-weight:bold;
padding:0 4px;color:#fff;background:#999}.badge.pass{background:#2e7d32}.badge.fail{background:#c62828}
tr.fail td{background:#fff3f3}td.muted{color:#999}ol.calls{padding-left:0;list-style:none;margin:0}
ol.calls li{border-left:3px solid #ccd;margin:6px 0;padding-left:8px}.step{color:#888}
.status{font-size:11.5px;color:#2e7d32}.status.bad{color:#c62828;font-weight:bold}
.kv{display:grid;grid-template-columns:90px 1fr;gap:6px}.kv>span{color:#777;font-size:12px}
details.long>summary{list-style:none;cursor:pointer}.more{color:#1565c0;font-size:12px}
details.long[open]>summary>pre,.more .less,details.long[open] .more .all{display:none}
details.long[open] .more .less{display:inline}pre.answer{background:#f1f8e9}.reason{font-weight:normal;color:#555}
"""


def _policy() -> str:
    digest = base64.b64encode(hashlib.sha256(_SCRIPT.encode("utf-8")).digest()).decode("ascii")
    return f"default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'sha256-{digest}'"


def render_page(page: ReportPage) -> str:
    """The whole page, as one HTML document."""
    svgs = [svg for svg in (chart_svg(chart) for chart in page.charts) if svg]
    facts = "".join(f"<dt>{text(k)}</dt><dd>{text(v)}</dd>" for k, v in page.run)
    sections = [("run", "Run", [f'<dl class="run">{facts}</dl>']
                 + [f'<p class="note">{text(note)}</p>' for note in page.notes]),
                ("scorecard", "Scorecard",
                 ['<div class="tables">' + "".join(_table(table, "num") for table in page.scorecard) + "</div>"]),
                ("charts", "Charts", ['<div class="charts">' + "".join(svgs) + "</div>"] if svgs else []),
                ("failing", "Most frequent failing checks", [_table(table) for table in page.findings]),
                ("episodes", f"Episodes ({len(page.episodes)})",
                 [_menus(page), '<div id="episode-list">' + "".join(_episode(view, page.filters)
                                                                    for view in page.episodes) + "</div>"])]
    sections = [section for section in sections if section[2]]
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             f'<meta http-equiv="Content-Security-Policy" content="{_policy()}">',
             '<meta name="viewport" content="width=device-width, initial-scale=1">',
             f"<title>{text(page.title)}</title><style>{_CSS}</style></head><body>",
             f"<h1>{text(page.title)}</h1>",
             "<nav>" + "".join(f'<a href="#{anchor}">{text(name)}</a>' for anchor, name, _ in sections) + "</nav>"]
    for anchor, name, body in sections:
        parts += [f'<h2 id="{anchor}">{text(name)}</h2>', *body]
    parts.append(f"<script>{_SCRIPT}</script></body></html>")
    return "\n".join(parts) + "\n"


def write_html(run_dir: Path, page: ReportPage) -> Path:
    """Write ``run_dir/report.html`` (atomically) and return its path."""
    path = Path(run_dir) / REPORT_HTML
    write_text_atomic(path, render_page(page))
    return path


def failures_first(records: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Records in the browser's order: the failed ones first, each part in the run's order."""
    return sorted(records, key=lambda r: verdict_passed(r) is not False)
