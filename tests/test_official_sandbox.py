"""``mobility-env build CSV --sandbox-dir DIR``: the official per-tool replay cache, imported streaming.

The fixture files are written here, into ``tmp_path``, in the official shapes (key levels as the
reference tools look them up: AMAP-ML/MobilityBench ``src/mobility_bench/tools/sandbox/*.py``,
see :mod:`mobility_env.mobilitybench.official_sandbox`), their entries derived from the calls recorded in the
real sample ``../shared/mobilitybench/sample_dev.csv``.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mobility_env.mobilitybench.build import GLOBAL_EPISODE_ID, build_directory
from mobility_env.canonical import canonical_request
from mobility_env.mobilitybench.env import MobilityEnv
from mobility_env.errors import DataFileError
from mobility_env.layout import CHECKSUM
from mobility_env.mobilitybench.observation import format_response
from mobility_env.json_stream import _Window
from mobility_env.mobilitybench.official_sandbox import (OFFICIAL_FILES, SOURCE_COLUMN_PREFIX, OfficialSandboxFileError,
                                                         OfficialSandboxImport, read_official_entries)
from mobility_env.mobilitybench.sandbox import Sandbox

REPO = Path(__file__).resolve().parents[1]
STYLES = ("compact", "default", "indent", "ascii")
FUZZ = settings(deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


# --------------------------------------------------------------------------- fixtures in the official shapes
def c6(coordinate: str) -> str:
    """A coordinate as the reference tools key it (utils.format_decimal_places: 6 decimals)."""
    lng, lat = coordinate.split(",")
    return f"{float(lng):.6f},{float(lat):.6f}"


def _payload(response: Any) -> Any:
    """The body of a recorded response (the CSV wraps some in ``{"status", "data", "error"}``)."""
    if isinstance(response, dict) and isinstance(response.get("data"), dict) and "status" in response:
        return response["data"]
    return response


def official_entry(tool: str, arguments: dict[str, Any], response: Any) -> tuple[str, list[str], Any, Any] | None:
    """(file, key path, value in the file, the response the import stores) for one recorded call,
    or None when the recorded response does not carry what the official file keeps."""
    if not isinstance(response, dict):
        return None
    a = arguments
    if tool == "driving_route":  # driving_route.py: [destination][origin][strategy key][waypoints key]
        if "route" not in response:
            return None
        keys = [c6(a["destination"]), c6(a["origin"]), "+".join(sorted(a.get("strategy") or [])) or "default",
                ";".join(a.get("waypoints") or []) or "default"]
        return "driving_route_handle.json", keys, response, response
    if tool == "walking_route":  # walking_route.py: [destination][origin] = the Amap answer
        if "route" not in response:
            return None
        return "walking_route_handle.json", [c6(a["destination"]), c6(a["origin"])], response, response
    if tool == "bicycling_route":  # bicycling_route.py: [destination][origin] = the summary text
        text = response.get("data")
        if not isinstance(text, str):
            return None
        return ("bicycling_route_handle.json", [c6(a["destination"]), c6(a["origin"])], text,
                {"status": "SUCCESS", "data": text, "error": None})
    if tool == "bus_route":  # bus_route.py: [destination][origin] = {"status": "SUCCESS", "data": {...}}
        if a.get("strategy", "0") != "0" or not isinstance(response.get("data"), dict):
            return None
        return "bus_route_mock.json", [c6(a["destination"]), c6(a["origin"])], response, response
    if tool == "query_poi":  # query_poi.py: [keyword][city] = the POI object
        poi = _payload(response)
        if not isinstance(poi, dict) or "name" not in poi:
            return None
        return "nested_poi_data.json", [a["keywords"], a.get("city") or ""], poi, poi
    if tool == "reverse_geocoding":  # reverse_geocoding.py: [f"{latitude},{longitude}"] = the address text
        address = (_payload(response).get("regeocode") or {}).get("formatted_address")
        if not isinstance(address, str) or not address:
            return None
        return ("reverse_geocoding_sandbox.json", [f"{a['latitude']},{a['longitude']}"], address,
                {"regeocode": {"formatted_address": address}})
    if tool == "search_around_poi":  # search_around_poi.py: [location][keyword] = [poi, ...]
        pois = _payload(response).get("pois")
        if not isinstance(pois, list):
            return None
        return "search_around_poi_sandbox.json", [a["location"], a.get("keywords") or ""], pois, {"pois": pois}
    if tool == "traffic_status":  # traffic_info.py: [name][city] = the Amap answer
        if "trafficinfo" not in response:
            return None
        return "traffic_info_mock.json", [a["name"], a["city"]], response, response
    if tool == "weather_query":  # weather_query.py: [city][str(need_forecast)] = {"weather_description": text}
        text = _payload(response).get("weather_description")
        if not isinstance(text, str):
            return None
        value = {"weather_description": text}
        return "weather_sandbox.json", [a["city"], str(bool(a.get("need_forecast", False)))], value, value
    return None


def derive(episodes) -> tuple[dict[str, dict], list[dict[str, Any]]]:
    """The nested file contents and, per entry written, the call and the response it should serve.

    A key path met twice keeps its first value (a dict cannot hold both); so does a canonical
    key met twice (the import keeps the first and reports the other).
    """
    files: dict[str, dict] = {}
    calls: list[dict[str, Any]] = []
    canonical: set[tuple[str, str]] = set()
    for episode in episodes:
        for call in episode.recorded:
            if call.truncated or call.response is None:
                continue
            made = official_entry(call.name, call.arguments, call.response)
            if made is None:
                continue
            name, keys, value, stored = made
            level = files.setdefault(name, {})
            for key in keys[:-1]:
                level = level.setdefault(key, {})
            if keys[-1] in level:
                continue
            level[keys[-1]] = value
            request = (call.name, canonical_request(call.name, call.arguments).key)
            calls.append({"file": name, "keys": keys, "tool": call.name, "arguments": call.arguments,
                          "stored": stored, "duplicate": request in canonical, "episode_id": episode.episode_id})
            canonical.add(request)
    return files, calls


def dump(value: Any, style: str) -> str:
    if style == "compact":
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    if style == "default":  # json.dump(obj, f, ensure_ascii=False)
        return json.dumps(value, ensure_ascii=False)
    if style == "indent":
        return json.dumps(value, ensure_ascii=False, indent=2)
    return json.dumps(value)  # json.dump's default: every non-ASCII character as \uXXXX


def write_files(folder: Path, files: dict[str, dict], style: str = "default") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, content in files.items():
        (folder / name).write_text(dump(content, style), encoding="utf-8")
    return folder


def compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


@pytest.fixture(scope="module")
def derived(sample_episodes):
    files, calls = derive(sample_episodes)
    return files, calls


def imported_rows(folder: Path, **kwargs) -> tuple[list[dict[str, Any]], OfficialSandboxImport]:
    imported = OfficialSandboxImport(folder, **kwargs)
    return list(imported), imported


def problems(imported: OfficialSandboxImport) -> list[tuple[str, str, list[str]]]:
    return [(p.file, p.kind, p.key) for p in imported.report.problems]


# --------------------------------------------------------------------------- the real sample, all nine files
def test_fixtures_cover_the_nine_files(derived):
    files, calls = derived
    assert sorted(files) == sorted(OFFICIAL_FILES)
    for name, fmt in OFFICIAL_FILES.items():
        assert any(c["file"] == name for c in calls), name
        assert len(fmt.levels) == len(next(c["keys"] for c in calls if c["file"] == name))


@pytest.mark.parametrize("style", STYLES)
def test_every_entry_is_served_from_the_global_scope(derived, style, tmp_path):
    files, calls = derived
    folder = write_files(tmp_path / "official", files, style)
    imported = OfficialSandboxImport(folder)
    out = build_directory([], tmp_path / "built", global_rows=imported)
    duplicates = [c for c in calls if c["duplicate"]]
    assert [(p.kind, p.key) for p in imported.report.problems] == [("duplicate", c["keys"]) for c in duplicates]
    assert imported.report.imported == len(calls) - len(duplicates)
    box = Sandbox.open(out)
    for call in calls:
        if call["duplicate"]:
            continue
        result = box.lookup(call["tool"], call["arguments"])
        assert (result.match, result.scope) == ("exact", "global"), call
        assert result.response == call["stored"], call["keys"]
        assert result.entry_episode_id in (None, GLOBAL_EPISODE_ID)
    # stored as the CSV build stores responses: json.dumps, compact, whatever the file's own formatting
    table = box.table.to_pylist()
    assert len(table) == imported.report.imported
    kept = [c for c in calls if not c["duplicate"]]
    by_key = {(c["tool"], canonical_request(c["tool"], c["arguments"]).key): c for c in kept}
    for row in table:
        call = by_key[(row["tool"], row["key"])]
        assert row["response"] == compact(call["stored"])
        assert row["episode_id"] == GLOBAL_EPISODE_ID and row["valid"]
        assert row["source_column"] == SOURCE_COLUMN_PREFIX + call["file"]
        assert json.loads(row["arguments"]) == OFFICIAL_FILES[call["file"]].arguments(tuple(call["keys"]))


def test_streamed_entries_equal_the_json_module(derived, tmp_path):
    """The incremental reader yields exactly what json.load sees, at any chunk size."""
    files, _ = derived
    folder = write_files(tmp_path / "official", files, "indent")
    for name, content in files.items():
        depth = len(OFFICIAL_FILES[name].levels)
        expected = []

        def walk(node: Any, keys: tuple[str, ...]) -> None:
            if len(keys) == depth:
                expected.append((keys, node))
                return
            for key, child in node.items():
                walk(child, keys + (key,))
        walk(json.loads((folder / name).read_text(encoding="utf-8")), ())
        for chunk in (1, 7, 4096, 1 << 20):
            got = [(keys, value) for keys, value, _ in read_official_entries(folder / name, depth, chunk_bytes=chunk)]
            assert got == expected, (name, chunk)
        data = (folder / name).read_bytes()
        for keys, _, offset in read_official_entries(folder / name, depth, chunk_bytes=5):
            assert data[offset:].startswith(json.dumps(keys[-1], ensure_ascii=False).encode("utf-8"))


def test_an_agent_gets_a_response_that_only_the_imported_files_hold(sample_table, sample_episodes, write_csv,
                                                                    tmp_path):
    """End to end through the CLI and the env: a call none of the built episodes recorded is
    served from the imported files (exact match, global scope), and is not served without them."""
    header, rows = sample_table
    kept_rows, held_rows = rows[:40], rows[40:]
    kept_ids = {e.episode_id for e in sample_episodes[:40]}
    held = [e for e in sample_episodes if e.episode_id not in kept_ids]
    kept_keys = {(c.name, canonical_request(c.name, c.arguments).key) for e in sample_episodes[:40]
                 for c in e.recorded}
    files, calls = derive(held)
    calls = [c for c in calls if not c["duplicate"]
             and (c["tool"], canonical_request(c["tool"], c["arguments"]).key) not in kept_keys]
    assert len(held_rows) == len(held) and {c["tool"] for c in calls} >= {"driving_route", "query_poi"}
    csv_path = write_csv(tmp_path / "kept.csv", header, kept_rows)
    folder = write_files(tmp_path / "official", files)
    with_import, without = tmp_path / "with", tmp_path / "without"
    proc = subprocess.run([sys.executable, "-m", "mobility_env.cli", "build", str(csv_path), "--out", str(with_import),
                           "--sandbox-dir", str(folder)], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    manifest = json.loads((with_import / "manifest.json").read_text(encoding="utf-8"))
    summary = proc.stdout.splitlines()[1]
    imported = manifest["sandbox_import"]["imported"]
    assert summary.startswith(f"{imported} sandbox entries imported from {len(files)} official file(s) in official")
    assert manifest["global_rows"] == imported == manifest["sandbox_entries"] - sum(
        len(e.recorded) for e in sample_episodes[:40])
    for entry in manifest["sandbox_import"]["files"]:
        data = (folder / entry["name"]).read_bytes()
        assert entry[CHECKSUM] == hashlib.blake2b(data, digest_size=16).hexdigest()
        assert entry["bytes"] == len(data)
    build_directory(sample_episodes[:40], without)

    env, plain = MobilityEnv(with_import), MobilityEnv(without)
    episode_id = sorted(kept_ids)[0]
    for start in range(0, len(calls), 8):  # each episode allows 10 steps
        env.reset(options={"episode_id": episode_id})
        plain.reset(options={"episode_id": episode_id})
        for call in calls[start:start + 8]:
            action = {"name": call["tool"], "arguments": call["arguments"]}
            obs, _, terminated, truncated, info = env.step(action)
            assert (info["match"], info["scope"], info.get("error")) == ("exact", "global", None), call["keys"]
            assert obs == format_response(call["tool"], call["stored"], "compact")
            assert not terminated and not truncated
            _, _, _, _, plain_info = plain.step(action)
            assert plain_info["match"] != "exact" or plain_info["scope"] == "episode"
    env.close()
    plain.close()


def test_episode_calls_are_served_before_imported_ones(derived, sample_episodes, tmp_path):
    """An imported entry with the same key as an episode's recorded call never shadows it."""
    files, calls = derive(sample_episodes[:5])
    changed = json.loads(json.dumps(files))
    call = next(c for c in calls if c["tool"] == "query_poi")
    imported_poi = {"name": "IMPORTED", "location": "1,1", "address": "x"}
    changed["nested_poi_data.json"][call["keys"][0]][call["keys"][1]] = imported_poi
    folder = write_files(tmp_path / "official", changed)
    out = build_directory(sample_episodes[:5], tmp_path / "built", global_rows=OfficialSandboxImport(folder))
    box = Sandbox.open(out)
    own = box.lookup("query_poi", call["arguments"], call["episode_id"])
    assert own.scope == "episode" and own.response["name"] != "IMPORTED"
    other = next(e.episode_id for e in sample_episodes[:5] if e.episode_id != call["episode_id"])
    assert box.lookup("query_poi", call["arguments"], other).response["name"] != "IMPORTED"  # lowest row wins


def test_cli_build_without_official_files_or_with_a_cut_file_fails_with_one_line(derived, sample_csv, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "notes.txt").write_text("x")
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "mobility_env.cli", "build", str(sample_csv), "--out", str(out),
                           "--sandbox-dir", str(empty)], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "holds none of the official sandbox files" in proc.stderr
    assert "Traceback" not in proc.stderr and not out.exists()

    files, _ = derived
    folder = write_files(tmp_path / "official", {"walking_route_handle.json": files["walking_route_handle.json"],
                                                 "traffic_info_mock.json": files["traffic_info_mock.json"]})
    data = (folder / "traffic_info_mock.json").read_bytes()
    (folder / "traffic_info_mock.json").write_bytes(data[:len(data) * 2 // 3])
    proc = subprocess.run([sys.executable, "-m", "mobility_env.cli", "build", str(sample_csv), "--out", str(out),
                           "--sandbox-dir", str(folder)], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    error = proc.stderr.strip().splitlines()[-1]
    assert error.startswith("mobility-env: error: ") and "traffic_info_mock.json" in error and "byte " in error
    assert "cut short" in error and "Traceback" not in proc.stderr
    assert not out.exists()  # nothing half-written is left


def test_rebuilding_from_a_built_directory_says_imported_entries_are_not_carried(derived, sample_episodes, tmp_path):
    files, _ = derived
    folder = write_files(tmp_path / "official", {"weather_sandbox.json": files["weather_sandbox.json"]})
    built = build_directory(sample_episodes[:3], tmp_path / "built", global_rows=OfficialSandboxImport(folder))
    proc = subprocess.run([sys.executable, "-m", "mobility_env.cli", "build", str(built), "--out",
                           str(tmp_path / "again")], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "not carried over: pass --sandbox-dir again" in proc.stderr


# --------------------------------------------------------------------------- keys -> arguments
@pytest.mark.parametrize("name, keys, arguments", [
    ("driving_route_handle.json", ("116.1,39.9", "116.2,39.8", "default", "default"),
     {"origin": "116.2,39.8", "destination": "116.1,39.9"}),
    ("driving_route_handle.json", ("116.1,39.9", "116.2,39.8", "躲避拥堵+高速优先", "116.3,39.7;116.4,39.6"),
     {"origin": "116.2,39.8", "destination": "116.1,39.9", "strategy": ["躲避拥堵", "高速优先"],
      "waypoints": ["116.3,39.7", "116.4,39.6"]}),
    ("bus_route_mock.json", ("116.1,39.9", "116.2,39.8"), {"origin": "116.2,39.8", "destination": "116.1,39.9"}),
    ("nested_poi_data.json", ("天安门", ""), {"keywords": "天安门"}),
    ("nested_poi_data.json", ("天安门", "北京市"), {"keywords": "天安门", "city": "北京市"}),
    ("reverse_geocoding_sandbox.json", ("39.9,116.4",), {"longitude": "116.4", "latitude": "39.9"}),
    ("search_around_poi_sandbox.json", ("116.4,39.9", "银行"), {"location": "116.4,39.9", "keywords": "银行"}),
    ("traffic_info_mock.json", ("外环", "上海市"), {"name": "外环", "city": "上海市"}),
    ("weather_sandbox.json", ("北京", "True"), {"city": "北京", "need_forecast": True}),
    ("weather_sandbox.json", ("北京", "False"), {"city": "北京", "need_forecast": False}),
])
def test_keys_become_the_reference_tools_arguments(name, keys, arguments):
    assert OFFICIAL_FILES[name].arguments(keys) == arguments


def test_a_bus_entry_serves_calls_with_and_without_the_default_strategy(derived, tmp_path):
    files, calls = derived
    folder = write_files(tmp_path / "official", {"bus_route_mock.json": files["bus_route_mock.json"]})
    box = Sandbox.open(build_directory([], tmp_path / "built", global_rows=OfficialSandboxImport(folder)))
    call = next(c for c in calls if c["tool"] == "bus_route")
    for arguments in (call["arguments"], {**call["arguments"], "strategy": "0"}):
        assert box.lookup("bus_route", arguments).match == "exact"
    assert box.lookup("bus_route", {**call["arguments"], "strategy": "2"}).match != "exact"


@pytest.mark.parametrize("name", sorted(OFFICIAL_FILES))
def test_the_wrapped_text_is_what_json_dumps_writes(derived, name):
    """The stored text, made by wrapping the file's text, equals json.dumps of the stored value."""
    files, calls = derived
    fmt = OFFICIAL_FILES[name]
    for call in (c for c in calls if c["file"] == name):
        node: Any = files[name]
        for key in call["keys"]:
            node = node[key]
        assert fmt.wrap[0] + compact(node) + fmt.wrap[1] == compact(fmt.response(node))


# --------------------------------------------------------------------------- bad input, entry by entry
def run_import(tmp_path: Path, name: str, text: str | bytes, **kwargs) -> tuple[list[dict], OfficialSandboxImport]:
    folder = tmp_path / "official"
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    return imported_rows(folder, **kwargs)


WALK = '{"status":"1","route":{"paths":[]}}'


@pytest.mark.parametrize("text, kind, key", [
    # level 1 holds something other than an object
    ('{"116.1,39.9": [1, 2], "116.3,39.9": {"116.2,39.8": %s}}' % WALK, "not_an_object", ["116.1,39.9"]),
    ('{"116.1,39.9": "text", "116.3,39.9": {"116.2,39.8": %s}}' % WALK, "not_an_object", ["116.1,39.9"]),
    # the innermost value is not what the tool returns
    ('{"116.1,39.9": {"116.2,39.8": [1]}, "116.3,39.9": {"116.2,39.8": %s}}' % WALK, "bad_response",
     ["116.1,39.9", "116.2,39.8"]),
    ('{"116.1,39.9": {"116.2,39.8": {"no": "status"}}, "116.3,39.9": {"116.2,39.8": %s}}' % WALK, "bad_response",
     ["116.1,39.9", "116.2,39.8"]),
    # keys that are no coordinates
    ('{"not a place": {"116.2,39.8": %s}, "116.3,39.9": {"116.2,39.8": %s}}' % (WALK, WALK), "bad_key",
     ["not a place", "116.2,39.8"]),
    ('{"116.1,999": {"116.2,39.8": %s}, "116.3,39.9": {"116.2,39.8": %s}}' % (WALK, WALK), "bad_key",
     ["116.1,999", "116.2,39.8"]),
    # not JSON: NaN, a bare word, huge numbers
    ('{"116.1,39.9": {"116.2,39.8": {"status": NaN}}, "116.3,39.9": {"116.2,39.8": %s}}' % WALK, "bad_json",
     ["116.1,39.9", "116.2,39.8"]),
    ('{"116.1,39.9": {"116.2,39.8": nope}, "116.3,39.9": {"116.2,39.8": %s}}' % WALK, "bad_json",
     ["116.1,39.9", "116.2,39.8"]),
    ('{"116.1,39.9": {"116.2,39.8": {"status": "1", "route": 1e999}}, "116.3,39.9": {"116.2,39.8": %s}}' % WALK,
     "bad_json", ["116.1,39.9", "116.2,39.8"]),
    ('{"116.1,39.9": {"116.2,39.8": {"status": "1", "route": %s}}, "116.3,39.9": {"116.2,39.8": %s}}'
     % ("9" * 5000, WALK), "bad_json", ["116.1,39.9", "116.2,39.8"]),
    ('{"116.1,39.9": {"116.2,39.8": {"status": "1", "route": -%s.5}}, "116.3,39.9": {"116.2,39.8": %s}}'
     % ("9" * 400, WALK), "bad_json", ["116.1,39.9", "116.2,39.8"]),
    # deep nesting: deeper than max_depth, and deeper than the decoder can go
    ('{"116.1,39.9": {"116.2,39.8": {"status": "1", "route": %s}}, "116.3,39.9": {"116.2,39.8": %s}}'
     % ("[" * 80 + "]" * 80, WALK), "bad_json", ["116.1,39.9", "116.2,39.8"]),
    ('{"116.1,39.9": {"116.2,39.8": {"status": "1", "route": %s}}, "116.3,39.9": {"116.2,39.8": %s}}'
     % ("[" * 100_000 + "]" * 100_000, WALK), "bad_json", ["116.1,39.9", "116.2,39.8"]),
    ('{"116.1,39.9": %s, "116.3,39.9": {"116.2,39.8": %s}}' % ("[" * 100_000 + "]" * 100_000, WALK), "bad_json",
     ["116.1,39.9"]),
    # lone surrogate escapes, in a key and in a value
    ('{"116.1,39.9": {"\\ud800": %s}, "116.3,39.9": {"116.2,39.8": %s}}' % (WALK, WALK), "bad_text",
     ["116.1,39.9", "\\ud800"]),
    ('{"116.3,39.9": {"116.2,39.8": %s}, "\\udc00\\ud800": {"116.2,39.8": %s}}' % (WALK, WALK), "bad_text",
     ["\\udc00\\ud800", "116.2,39.8"]),
    ('{"116.1,39.9": {"116.2,39.8": {"status": "1", "route": "\\udfff"}}, "116.3,39.9": {"116.2,39.8": %s}}'
     % WALK, "bad_text", ["116.1,39.9", "116.2,39.8"]),
    # the same request twice (a repeated key, or two spellings of one coordinate): the first is kept
    ('{"116.3,39.9": {"116.2,39.8": %s, "116.200000,39.800000": {"status": "1", "route": {"x": 1}}}}' % WALK,
     "duplicate", ["116.3,39.9", "116.200000,39.800000"]),
    # text between members
    ('{"116.3,39.9": {"116.2,39.8": %s} garbage, "116.5,39.9": {"116.2,39.8": %s}}' % (WALK, WALK), "garbage", []),
])
def test_a_bad_entry_is_skipped_and_reported_with_its_file_and_key(tmp_path, text, kind, key):
    rows, imported = run_import(tmp_path, "walking_route_handle.json", text)
    found = [p for p in imported.report.problems if p.kind == kind]
    assert found, problems(imported)
    assert found[0].file == "walking_route_handle.json" and found[0].key == key
    assert found[0].offset >= 0 and found[0].detail
    assert str(found[0]).startswith("walking_route_handle.json [" if key else "walking_route_handle.json (file)")
    assert imported.report.problem_count == len(imported.report.problems) >= 1
    # every good entry around it is still imported, and stored as plain JSON text
    assert rows and all(r["tool"] == "walking_route" for r in rows)
    assert {r["key"].split("|")[1] for r in rows} >= {"116.300000,39.900000"}
    for row in rows:
        assert json.loads(row["response"])["status"] == "1"
        row["response"].encode("utf-8")


def test_undecodable_bytes_in_a_key_and_a_value_are_reported(tmp_path):
    good = f'"116.3,39.9": {{"116.2,39.8": {WALK}}}'.encode()
    text = (b'{"116.1,39.9": {"116.2,39.8": {"status": "1", "route": "\xff\xfe"}}, ' + good
            + b', "116.4,39.9": {"116.\xc3(,39.8": ' + WALK.encode() + b'}}')
    rows, imported = run_import(tmp_path, "walking_route_handle.json", text)
    assert [json.loads(r["arguments"]) for r in rows] == [{"origin": "116.2,39.8", "destination": "116.3,39.9"}]
    assert problems(imported) == [("walking_route_handle.json", "bad_text", ["116.1,39.9", "116.2,39.8"]),
                                  ("walking_route_handle.json", "bad_text", ["116.4,39.9", "116.\\udcc3(,39.8"])]
    assert "undecodable byte 0xFF" in imported.report.problems[0].detail
    # a key that makes valid arguments but is not UTF-8 text
    traffic = '{"status": "1", "trafficinfo": {"description": "ok"}}'
    text = b'{"\xe5\xa4\x96\xe7\x8e": {"\xe4\xb8\x8a\xe6\xb5\xb7": ' + traffic.encode() + b'}, "' \
        + "外环".encode() + b'": {"' + "上海".encode() + b'": ' + traffic.encode() + b'}}'
    (tmp_path / "official" / "walking_route_handle.json").unlink()
    rows, imported = run_import(tmp_path, "traffic_info_mock.json", text)
    assert [json.loads(r["arguments"]) for r in rows] == [{"name": "外环", "city": "上海"}]
    (problem,) = imported.report.problems
    assert (problem.kind, problem.key) == ("bad_text", ["外\\udce7\\udc8e", "上海"])
    for problem in imported.report.problems:
        json.dumps(problem.__dict__, ensure_ascii=False).encode("utf-8")  # the manifest can hold it


def test_a_megabyte_key_is_reported_cut_to_a_readable_length(tmp_path):
    big = "京" * (1 << 20)
    text = '{"%s": {"116.2,39.8": %s}, "116.3,39.9": {"116.2,39.8": %s}}' % (big, WALK, WALK)
    rows, imported = run_import(tmp_path, "walking_route_handle.json", text)
    assert len(rows) == 1
    (problem,) = imported.report.problems
    assert problem.kind == "bad_key" and problem.key[0].endswith("… (1,048,576 characters)")
    assert len(str(problem)) < 1000


def test_a_megabyte_value_over_the_entry_limit_is_skipped_without_holding_it(tmp_path):
    big = '{"status": "1", "route": {"paths": ["%s"]}}' % ("x" * (3 << 20))
    text = '{"116.1,39.9": {"116.2,39.8": %s}, "116.3,39.9": {"116.2,39.8": %s}}' % (big, WALK)
    rows, imported = run_import(tmp_path, "walking_route_handle.json", text, chunk_bytes=1 << 16,
                                max_entry_bytes=1 << 20)
    assert len(rows) == 1
    assert problems(imported) == [("walking_route_handle.json", "too_large", ["116.1,39.9", "116.2,39.8"])]
    rows, imported = run_import(tmp_path, "walking_route_handle.json", text)  # under the default limit: imported
    assert len(rows) == 2 and not imported.report.problems


@pytest.mark.parametrize("text, message", [
    ("", "empty file"),
    ("   \n", "empty file"),
    ('[{"a": 1}]', "the top level is not a JSON object"),
    ('"text"', "the top level is not a JSON object"),
    ('{"116.1,39.9": {"116.2,39.8": {"status": "1"', "never ends"),
    ('{"116.1,39.9": {"116.2,39.8": {"status": "1"}}', "cut short"),
    ('{"116.1,39.9": {"116.2,39.8": "unterminated', "never ends"),
])
def test_a_file_that_cannot_be_read_raises_naming_file_and_offset(tmp_path, text, message):
    with pytest.raises(OfficialSandboxFileError) as caught:
        run_import(tmp_path, "walking_route_handle.json", text)
    assert isinstance(caught.value, DataFileError)
    assert "walking_route_handle.json" in str(caught.value) and message in str(caught.value)
    assert 0 <= caught.value.offset <= len(text.encode())
    assert f"byte {caught.value.offset:,}" in str(caught.value)


def test_a_file_cut_at_any_byte_is_an_error_or_a_partial_report(derived, tmp_path):
    """Truncation fuzz: every cut of a real file either raises OfficialSandboxFileError (naming
    the offset) or is read whole; nothing else escapes, and nothing imported is damaged."""
    files, _ = derived
    data = dump(files["weather_sandbox.json"], "default").encode("utf-8")
    folder = tmp_path / "official"
    folder.mkdir()
    for cut in range(0, len(data) + 1, 3):
        (folder / "weather_sandbox.json").write_bytes(data[:cut])
        try:
            rows, imported = imported_rows(folder, chunk_bytes=64)
        except OfficialSandboxFileError as exc:
            assert exc.offset <= cut
            continue
        assert cut >= len(data) - 1  # only the full file (or one missing its last byte, a newline) reads
        assert len(rows) == sum(len(v) for v in files["weather_sandbox.json"].values())


def test_other_files_and_folders_are_listed_not_read(derived, tmp_path):
    files, _ = derived
    folder = write_files(tmp_path / "official", {"weather_sandbox.json": files["weather_sandbox.json"]})
    (folder / "README.md").write_text("notes")
    (folder / "sub").mkdir()
    rows, imported = imported_rows(folder)
    assert rows
    assert sorted((p.file, p.kind) for p in imported.report.problems) == [("README.md", "unknown_file"),
                                                                          ("sub", "unknown_file")]
    with pytest.raises(DataFileError, match="not a directory"):
        OfficialSandboxImport(folder / "README.md")
    with pytest.raises(RuntimeError, match="read once"):
        list(imported)


def test_a_byte_order_mark_and_trailing_text_are_tolerated(tmp_path):
    text = '\ufeff{"116.3,39.9": {"116.2,39.8": %s}} trailing' % WALK
    rows, imported = run_import(tmp_path, "walking_route_handle.json", text)
    assert len(rows) == 1 and problems(imported) == [("walking_route_handle.json", "garbage", [])]


def test_the_window_stays_bounded_on_a_long_file(tmp_path):
    """Memory: the reader never holds more than a chunk or two plus the entry being read."""
    chunk = 1 << 14
    entry = {"status": "1", "route": {"paths": [{"distance": str(i)} for i in range(40)]}}
    content = {f"{100 + i * 0.001:.6f},30.000000": {"101.000000,31.000000": entry} for i in range(3000)}
    folder = write_files(tmp_path / "official", {"walking_route_handle.json": content}, "indent")
    size = (folder / "walking_route_handle.json").stat().st_size
    assert size > 40 * chunk
    held: list[int] = []
    original = _Window.more

    def more(self: _Window) -> bool:
        grew = original(self)
        held.append(len(self.text))
        return grew
    _Window.more = more  # type: ignore[method-assign]
    try:
        rows, imported = imported_rows(folder, chunk_bytes=chunk)
    finally:
        _Window.more = original  # type: ignore[method-assign]
    assert len(rows) == 3000 and not imported.report.problems
    entry_chars = len(dump({"101.000000,31.000000": entry}, "indent"))
    assert max(held) <= 2 * chunk + entry_chars


# --------------------------------------------------------------------------- stored text = json.dumps
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10**30, 10**30) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.characters(blacklist_categories=["Cs"]), max_size=12)
    | st.sampled_from(["a, b", "k: v", '"q":', "\\u0041", "/", "\n", "{ [", "-0"]),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4),
    max_leaves=20)


@FUZZ
@given(route=json_values, style=st.sampled_from(STYLES), raw_numbers=st.booleans())
def test_the_stored_response_is_always_json_dumps_of_the_value(tmp_path, route, style, raw_numbers):
    """Whether the file's own text is kept (already in json.dumps' form) or re-encoded, the
    stored text is json.dumps(value) exactly: the contract of the raw observation format."""
    value = {"status": "1", "route": route}
    text = dump(value, style)
    if raw_numbers:  # numbers json.dumps would write otherwise, and a repeated key
        text = text.replace('"status"', '"n": 1.50, "m": -0, "n": 1E2, "status"', 1)
    document = '{"116.3,39.9": {"116.2,39.8": %s}}' % text
    rows, imported = run_import(tmp_path, "walking_route_handle.json", document)
    assert not imported.report.problems
    (row,) = rows
    decoded = json.loads(text)
    assert json.loads(row["response"]) == decoded
    assert row["response"] == compact(decoded)


def test_the_manifest_lists_every_skipped_entry_with_file_key_and_offset(tmp_path):
    text = '{"116.1,39.9": {"116.2,39.8": [1]}, "116.3,39.9": {"116.2,39.8": %s}}' % WALK
    folder = tmp_path / "official"
    folder.mkdir()
    (folder / "walking_route_handle.json").write_text(text, encoding="utf-8")
    out = build_directory([], tmp_path / "built", global_rows=OfficialSandboxImport(folder))
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    report = manifest["sandbox_import"]
    assert manifest["global_rows"] == report["imported"] == 1
    (problem,) = report["problems"]
    assert problem == {"file": "walking_route_handle.json", "kind": "bad_response", "key": ["116.1,39.9", "116.2,39.8"],
                       "offset": text.index('"116.2,39.8"'), "detail": problem["detail"]}
    assert report["files"] == [{"name": "walking_route_handle.json", "tool": "walking_route", "bytes": len(text),
                                CHECKSUM: hashlib.blake2b(text.encode(), digest_size=16).hexdigest(), "entries": 2,
                                "imported": 1, "problems": {"bad_response": 1}}]
