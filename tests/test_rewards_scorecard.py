"""Scorecard aggregation, pass@k / pass^k, report files and the eval/report/audit commands."""

import argparse
import json

import pytest

from mobility_rewards.commands import register
from mobility_rewards.mobilitybench.scorecard import build_scorecard, format_scorecard
from mobility_rewards.runs import pass_at_k, pass_hat_k

from conftest import NO_SAMPLE, SAMPLE_CSV as SAMPLE  # noqa: E402  (MOBILITY_ENV_SAMPLE_DIR, default ../shared)


def record(eid, scenario, family, fpr, sample=0, tokens=(100, 10), **metrics):
    base = {k: 1.0 for k in ("ID", "IE", "DEC_P", "DEC_R", "TS_P", "TS_R", "SC", "PF", "DR")}
    return {"episode_id": eid, "task_scenario": scenario, "intent_family": family, "sample_index": sample,
            "metrics": {**base, **metrics, "FPR": fpr}, "input_tokens": tokens[0], "output_tokens": tokens[1]}


def test_unbiased_estimators_by_hand():
    assert pass_at_k(4, 2, 1) == pytest.approx(0.5)
    assert pass_at_k(4, 2, 2) == pytest.approx(1 - 1 / 6)  # C(2,2)/C(4,2)
    assert pass_hat_k(4, 2, 2) == pytest.approx(1 / 6)
    assert pass_hat_k(4, 4, 3) == 1.0 and pass_at_k(4, 0, 3) == 0.0
    with pytest.raises(ValueError):
        pass_at_k(2, 1, 3)


def test_aggregation_per_scenario_family_overall_with_samples_and_exclusion():
    family = "Basic Information Retrieval"
    records = [
        record("a", "Weather Query", family, 1.0, 0, (100, 10)),
        record("a", "Weather Query", family, 0.0, 1, (300, 30)),
        record("b", "POI Query", family, 1.0, 0, ID=0.0), record("b", "POI Query", family, 1.0, 1, ID=0.0),
        record("c", "POI Query", family, 0.0, 0), record("c", "POI Query", family, 0.0, 1),
    ]
    card = build_scorecard(records, exclude=["c", "not-there"])
    rows = {(r["group"], r["name"]): r for r in card["rows"]}
    assert card["excluded"] == ["c"]
    assert list(rows) == [("scenario", "POI Query"), ("scenario", "Weather Query"), ("family", family),
                          ("overall", "overall")]
    weather, overall = rows[("scenario", "Weather Query")], rows[("overall", "overall")]
    assert weather["FPR"] == 0.5 and weather["IT"] == 200 and weather["OT"] == 20
    assert overall["episodes"] == 2 and overall["samples"] == 4
    assert overall["FPR"] == pytest.approx((0.5 + 1.0) / 2) and overall["ID"] == pytest.approx(0.5)
    assert overall["pass@1"] == pytest.approx(0.75) and overall["pass@2"] == pytest.approx(1.0)
    assert overall["pass^2"] == pytest.approx(0.5)
    text = format_scorecard(card)
    assert text.splitlines()[0].split()[:4] == ["group", "n", "ID", "IE"]
    assert "pass^2" in text and "75.0" in text and "excluded 1 audited episode(s): c" in text


def test_extra_metrics_come_after_the_papers_columns():
    from mobility_rewards.mobilitybench.metrics import EXTRA_METRIC_KEYS
    from mobility_rewards.mobilitybench.scorecard import COLUMNS

    assert COLUMNS[:11] == ("ID", "IE", "DEC-P", "DEC-R", "TS-P", "TS-R", "SC", "DR", "FPR", "IT", "OT")
    assert COLUMNS[11:] == ("PF", "CALL-NR") and EXTRA_METRIC_KEYS == ("CALL_NR",)
    family = "Basic Information Retrieval"
    new = [record("a", "POI Query", family, 1.0, CALL_NR=0.5), record("b", "POI Query", family, 0.0, CALL_NR=1.0)]
    overall = build_scorecard(new)["rows"][-1]
    assert overall["CALL-NR"] == pytest.approx(0.75) and overall["TS-R"] == 1.0
    header, *_, last = format_scorecard(new).splitlines()
    assert header.split()[-2:] == ["PF", "CALL-NR"] and last.split()[-1] == "75.0"
    old = [record("a", "POI Query", family, 1.0)]  # results written before CALL_NR existed
    assert build_scorecard(old)["rows"][-1]["CALL-NR"] is None
    assert format_scorecard(old).splitlines()[-1].split()[-1] == "-"


def _cli(argv):
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    args = parser.parse_args(argv)
    return args.func(args)


@pytest.mark.skipif(not SAMPLE.exists(), reason=NO_SAMPLE)
def test_eval_report_audit_commands_on_a_run_dir(tmp_path, capsys):
    from mobility_env.mobilitybench.loaders import load_episodes
    from mobility_rewards import gold_trajectory

    episodes = list(load_episodes(SAMPLE))[:12]
    results, transcripts = [], []
    for episode in episodes:
        trajectory = gold_trajectory(episode).model_dump()
        results.append({"episode_id": episode.episode_id, "task_scenario": episode.task_scenario,
                        "intent_family": episode.intent_family, "metrics": {}, "input_tokens": 50, "output_tokens": 5})
        transcripts.append({"episode_id": episode.episode_id, "sample_index": 0, "record": trajectory})
    (tmp_path / "results.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in results))
    (tmp_path / "trajectories.jsonl").write_text("".join(json.dumps(t, ensure_ascii=False) + "\n" for t in transcripts))

    assert _cli(["eval", str(tmp_path), "--data", str(SAMPLE), "--exclude-audited"]) == 0
    card = json.loads((tmp_path / "scorecard.json").read_text())
    overall = next(r for r in card["rows"] if r["group"] == "overall")
    assert card["recomputed"] == 12 and overall["FPR"] == 1.0 and overall["DR"] == 1.0 and overall["IT"] == 50
    assert "overall" in capsys.readouterr().out

    assert _cli(["report", str(tmp_path)]) == 0
    markdown = (tmp_path / "report.md").read_text()
    assert "## By task scenario" in markdown and "| overall |" in markdown
    report = json.loads((tmp_path / "report.json").read_text())
    try:
        import matplotlib  # noqa: F401
        assert report["charts"] and all((tmp_path / name).exists() for name in report["charts"])
    except ImportError:
        assert "matplotlib is not installed" in report["chart_note"]

    capsys.readouterr()
    assert _cli(["audit", str(SAMPLE), "--json"]) == 0
    findings = json.loads(capsys.readouterr().out)
    assert any(f["kind"] == "excluded_line_requested" and f["blocking"] for f in findings)
