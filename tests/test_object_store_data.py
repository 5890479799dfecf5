"""Data opened from object storage: ``s3://`` URIs served by a real S3-compatible server (moto) on 127.0.0.1.

The server is moto's WSGI app under werkzeug, bound to loopback on a free port, with a middleware that records
every request (method, path) so the tests can count what was downloaded. The client is pyarrow's own S3 filesystem
(no mocked client); credentials and endpoint come from the environment, as on a cluster node. Nothing leaves
loopback: the EC2 metadata lookup is off, proxies are cleared, the AWS config files point nowhere.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import urllib.request
from pathlib import Path
from typing import Any, Iterator

import pytest

pytest.importorskip("moto.moto_server.werkzeug_app",
                    reason="moto[server] is not installed (pip install -e '.[dev]'): no S3-compatible server to test "
                           "s3:// data against")
serving = pytest.importorskip("werkzeug.serving", reason="werkzeug (a dependency of moto[server]) is not installed")

from pyarrow import fs as pafs  # noqa: E402

from mobility_agents.baselines.mobilepa.scripted import PhoneOracleAgent  # noqa: E402
from mobility_agents.baselines.mobilitybench.rule import RuleAgent  # noqa: E402
from mobility_agents.runner import RunConfig, run_local  # noqa: E402
from mobility_agents.targets import MOBILEPA, MOBILITYBENCH, open_store  # noqa: E402
from mobility_env import datasource  # noqa: E402
from mobility_env.datasource import data_cache_dir, localize, redact  # noqa: E402
from mobility_env.errors import ConfigError, DataFileError  # noqa: E402
from mobility_env.mobilepa.env import BUNDLED_TASKS  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
BUNDLED = REPO / "datasets" / "default"
BUCKET = "mobility"
BUILT_URI = f"s3://{BUCKET}/built/default"
TASKS_URI = f"s3://{BUCKET}/tasks/mobilepa"
KEY, SECRET = "testing-key", "testing-secret"


class S3Server:
    """moto's S3 on 127.0.0.1:<free port>, counting requests."""

    def __init__(self) -> None:
        from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app

        app = DomainDispatcherApplication(create_backend_app)
        self.requests: list[tuple[str, str]] = []
        self._requests_lock = threading.Lock()

        def counting(environ: dict[str, Any], start_response: Any) -> Any:
            with self._requests_lock:
                self.requests.append((environ["REQUEST_METHOD"], environ.get("PATH_INFO", "")))
            return app(environ, start_response)

        self.server = serving.make_server("127.0.0.1", 0, counting, threaded=True)
        self.endpoint = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def object_gets(self, prefix: str, method: str = "GET") -> int:
        """GET (or ``method``) requests of objects under ``prefix`` (a listing is a GET of the bucket itself)."""
        with self._requests_lock:
            return sum(1 for verb, path in self.requests if verb == method and path.startswith(f"/{prefix}/"))

    def require_auth(self, on: bool) -> None:
        """moto's switch: with auth on, keys not created in its IAM (all of them here) are refused."""
        request = urllib.request.Request(f"{self.endpoint}/moto-api/reset-auth", data=b"0" if on else b"inf",
                                         method="POST", headers={"Content-Type": "text/plain"})
        with urllib.request.urlopen(request, timeout=10) as reply:
            assert reply.status == 200


def _aws_env(endpoint: str, home: Path) -> dict[str, str]:
    return {"AWS_ACCESS_KEY_ID": KEY, "AWS_SECRET_ACCESS_KEY": SECRET, "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_REGION": "us-east-1", "AWS_ENDPOINT_URL": endpoint, "AWS_EC2_METADATA_DISABLED": "true",
            "AWS_CONFIG_FILE": str(home / "no-aws-config"), "AWS_SHARED_CREDENTIALS_FILE": str(home / "no-aws-creds"),
            "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"}


_CLEARED = ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL_S3", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY",
            "http_proxy", "https_proxy", "all_proxy")


@pytest.fixture(scope="module")
def s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Server]:
    server = S3Server()
    server.thread.start()
    home = tmp_path_factory.mktemp("aws-home")
    with pytest.MonkeyPatch.context() as patch:
        for name in _CLEARED:
            patch.delenv(name, raising=False)
        for name, value in _aws_env(server.endpoint, home).items():
            patch.setenv(name, value)
        uploader = pafs.S3FileSystem(access_key=KEY, secret_key=SECRET, region="us-east-1",
                                     endpoint_override=server.endpoint, allow_bucket_creation=True)
        uploader.create_dir(BUCKET)
        local = pafs.LocalFileSystem()
        pafs.copy_files(str(BUNDLED), f"{BUCKET}/built/default", source_filesystem=local,
                        destination_filesystem=uploader)
        pafs.copy_files(str(BUNDLED_TASKS), f"{BUCKET}/tasks/mobilepa", source_filesystem=local,
                        destination_filesystem=uploader)
        server.uploader = uploader  # type: ignore[attr-defined]
        try:
            yield server
        finally:
            server.server.shutdown()
            server.thread.join(timeout=10)


@pytest.fixture()
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh cache for this test (MOBILITY_ENV_CACHE_DIR: the default every store opens through)."""
    monkeypatch.setenv("MOBILITY_ENV_CACHE_DIR", str(tmp_path / "cache"))
    return data_cache_dir()


def _files(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


def _copy_gets(directory: Path) -> int:
    """The object GETs one copy of ``directory`` takes: one per file, or one per chunk of a file larger than a
    chunk (the copy streams each object in ranged reads of ``datasource.CHUNK_BYTES``)."""
    sizes = [p.stat().st_size for p in directory.rglob("*") if p.is_file()]
    return sum(max(1, -(-size // datasource.CHUNK_BYTES)) for size in sizes)


def _comparable(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(({k: v for k, v in r.items() if k != "elapsed_s"} for r in records),
                  key=lambda r: (r["episode_id"], r["sample_index"]))


# --------------------------------------------------------------------------- identical data, identical runs
def test_s3_built_directory_is_a_verified_copy_with_the_same_episodes(s3: S3Server, cache: Path) -> None:
    path = localize(BUILT_URI)
    assert path.parent.parent == cache and _files(path) == _files(BUNDLED)  # byte for byte, every file
    remote, local = open_store(MOBILITYBENCH, BUILT_URI), open_store(MOBILITYBENCH, BUNDLED)
    assert remote.directory == path and remote._check.verified  # the manifest's checksums held on the copy
    assert remote.ids == local.ids and len(remote.ids) == 220
    for episode_id in remote.ids:
        assert remote.get(episode_id).model_dump() == local.get(episode_id).model_dump()
        assert remote.task_scenario(episode_id) == local.task_scenario(episode_id)


def test_a_run_on_s3_data_equals_the_local_run(s3: S3Server, cache: Path, tmp_path: Path) -> None:
    local = run_local(RuleAgent, RunConfig(out_dir=tmp_path / "local", data=str(BUNDLED), limit=30, progress=False))
    remote = run_local(RuleAgent, RunConfig(out_dir=tmp_path / "s3", data=BUILT_URI, limit=30, progress=False))
    assert len(local) == 30 and _comparable(remote) == _comparable(local)
    local_info = json.loads((tmp_path / "local" / "run.json").read_text(encoding="utf-8"))
    info = json.loads((tmp_path / "s3" / "run.json").read_text(encoding="utf-8"))
    assert info["data"] == BUILT_URI  # where the data lives, not where this node cached it
    assert info["identity"] == local_info["identity"]  # the same data fingerprint: one run could resume the other
    assert Path(info["data_path"]).parent.parent == cache


def test_mobilepa_tasks_from_s3_equal_the_local_ones_and_play_the_same(s3: S3Server, cache: Path,
                                                                       tmp_path: Path) -> None:
    remote, local = open_store(MOBILEPA, TASKS_URI), open_store(MOBILEPA, BUNDLED_TASKS)
    assert remote.ids == local.ids and [t.model_dump() for t in remote.tasks] == [t.model_dump() for t in local.tasks]
    runs = [run_local(PhoneOracleAgent, RunConfig(out_dir=tmp_path / name, env_id=MOBILEPA, data=data, limit=12,
                                                  progress=False))
            for name, data in (("local", str(BUNDLED_TASKS)), ("s3", TASKS_URI))]
    assert len(runs[0]) == 12 and _comparable(runs[1]) == _comparable(runs[0])


def test_gymnasium_envs_and_eval_open_a_uri_too(s3: S3Server, cache: Path) -> None:
    """Every way data is named takes a URI: gymnasium.make for both envs, and eval's episodes (one opening path)."""
    import gymnasium as gym

    import mobility_env  # noqa: F401  (registers the envs)
    from mobility_rewards.commands import _load_episodes

    env = gym.make("MobilityBench-v0", data=BUILT_URI).unwrapped
    local = gym.make("MobilityBench-v0", data=str(BUNDLED)).unwrapped
    assert env.store.directory.parent.parent == cache and env.store.ids == local.store.ids
    assert env.reset(options={"episode_index": 3}) == local.reset(options={"episode_index": 3})
    phone = gym.make("MobilePA-v0", data=TASKS_URI).unwrapped
    assert list(phone.tasks) == list(gym.make("MobilePA-v0").unwrapped.tasks)
    episodes = _load_episodes(BUILT_URI)
    assert list(episodes) == local.store.ids and getattr(episodes, "sandbox", None) is not None


def test_credentials_in_a_uri_are_not_written_to_run_json(s3: S3Server, cache: Path, tmp_path: Path) -> None:
    uri = f"s3://{KEY}:{SECRET}@{BUCKET}/built/default?endpoint_override={s3.endpoint}"
    run_local(RuleAgent, RunConfig(out_dir=tmp_path / "run", data=uri, limit=2, progress=False))
    text = (tmp_path / "run" / "run.json").read_text(encoding="utf-8")
    assert SECRET not in text and json.loads(text)["data"] == redact(uri)


def test_one_remote_file_is_copied_alone(s3: S3Server, cache: Path) -> None:
    path = localize(f"{TASKS_URI}/tasks.jsonl")
    assert path.name == "tasks.jsonl" and path.read_bytes() == (BUNDLED_TASKS / "tasks.jsonl").read_bytes()
    assert sorted(p.name for p in path.parent.iterdir()) == ["tasks.jsonl"]
    assert open_store(MOBILEPA, f"{TASKS_URI}/tasks.jsonl").ids == open_store(MOBILEPA, BUNDLED_TASKS).ids


# --------------------------------------------------------------------------- local paths: no copy
def test_a_file_uri_and_a_path_open_in_place(s3: S3Server, cache: Path) -> None:
    before = len(s3.requests)
    assert localize(BUNDLED.as_uri()) == BUNDLED and localize(str(BUNDLED)) == BUNDLED
    store = open_store(MOBILITYBENCH, BUNDLED.as_uri())
    assert store.directory == BUNDLED and store.ids == open_store(MOBILITYBENCH, BUNDLED).ids
    assert len(s3.requests) == before and not cache.exists()  # no request, nothing copied


# --------------------------------------------------------------------------- the cache
def test_a_second_open_reads_no_object_again(s3: S3Server, cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    n_files, prefix = len(_files(BUNDLED)), f"{BUCKET}/built/default"
    gets, heads = s3.object_gets(prefix), s3.object_gets(prefix, "HEAD")
    first = localize(BUILT_URI)
    assert s3.object_gets(prefix) - gets == n_files
    stamps = {p: p.stat().st_mtime_ns for p in first.rglob("*")}
    heads = s3.object_gets(prefix, "HEAD")
    second = localize(BUILT_URI)
    assert second == first and s3.object_gets(prefix) - gets == n_files  # listed, not read again
    assert {p: p.stat().st_mtime_ns for p in second.rglob("*")} == stamps
    # just uploaded: modified within SETTLED_S of the copy, so each object's ETag was checked too
    assert s3.object_gets(prefix, "HEAD") - heads == n_files
    heads = s3.object_gets(prefix, "HEAD")
    monkeypatch.setattr(datasource, "SETTLED_S", -3600)  # as if uploaded long before the copy: the listing decides
    assert localize(BUILT_URI) == first and s3.object_gets(prefix, "HEAD") == heads
    assert s3.object_gets(prefix) - gets == n_files


def test_two_openers_at_once_download_once(s3: S3Server, cache: Path) -> None:
    gets = s3.object_gets(f"{BUCKET}/tasks/mobilepa")
    results: list[Path] = []
    errors: list[BaseException] = []

    def open_it() -> None:
        try:
            results.append(localize(TASKS_URI))
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=open_it) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not errors and len(results) == 3 and len(set(results)) == 1
    assert s3.object_gets(f"{BUCKET}/tasks/mobilepa") - gets == _copy_gets(BUNDLED_TASKS)


def test_a_changed_remote_object_is_fetched_again(s3: S3Server, cache: Path) -> None:
    uploader = s3.uploader  # type: ignore[attr-defined]
    original = (BUNDLED_TASKS / "tasks.jsonl").read_bytes()
    pafs.copy_files(str(BUNDLED_TASKS), f"{BUCKET}/changing", source_filesystem=pafs.LocalFileSystem(),
                    destination_filesystem=uploader)
    first = localize(f"s3://{BUCKET}/changing")
    assert (first / "tasks.jsonl").read_bytes() == original
    # the same size, most likely the same second: only the ETag tells the new object from the old
    changed = original.replace(b'"task_id"', b'"task_iD"', 1)
    assert len(changed) == len(original) and changed != original
    with uploader.open_output_stream(f"{BUCKET}/changing/tasks.jsonl") as out:
        out.write(changed)
    second = localize(f"s3://{BUCKET}/changing")
    assert second != first and (second / "tasks.jsonl").read_bytes() == changed
    assert (first / "tasks.jsonl").read_bytes() == original  # still held by this process: not deleted under it
    uploader.delete_file(f"{BUCKET}/changing/manifest.json")  # a removed object: a new copy without it
    third = localize(f"s3://{BUCKET}/changing")
    assert third not in (first, second) and not (third / "manifest.json").exists()


def test_a_half_written_or_damaged_cache_is_never_used(s3: S3Server, cache: Path) -> None:
    first = localize(TASKS_URI)
    entry = first.parent
    (entry / "tmp-12345-deadbeef").mkdir()  # what a process killed while fetching leaves
    (entry / "tmp-12345-deadbeef" / "tasks.jsonl").write_bytes(b"half")
    (entry / "current.json").write_text("{not json", encoding="utf-8")  # and a damaged record
    gets = s3.object_gets(f"{BUCKET}/tasks/mobilepa")
    again = localize(TASKS_URI)  # nothing vouches for the copy: fetched again, into the same (complete) version
    assert again == first and not (entry / "tmp-12345-deadbeef").exists()
    assert s3.object_gets(f"{BUCKET}/tasks/mobilepa") - gets == _copy_gets(BUNDLED_TASKS)
    assert _files(again) == _files(BUNDLED_TASKS)
    assert json.loads((entry / "current.json").read_text(encoding="utf-8"))["uri"] == TASKS_URI


# --------------------------------------------------------------------------- failures: typed, naming the URI
def test_a_missing_bucket_or_prefix_is_a_data_error_naming_the_uri(s3: S3Server, cache: Path) -> None:
    with pytest.raises(DataFileError, match=r"s3://no-such-bucket/built: no such bucket 'no-such-bucket'"):
        localize("s3://no-such-bucket/built")
    with pytest.raises(DataFileError, match=rf"{BUILT_URI}-typo: nothing there"):
        open_store(MOBILITYBENCH, f"{BUILT_URI}-typo")
    assert not any(cache.rglob("tmp-*"))


def test_refused_credentials_are_a_data_error_that_hides_the_secret(s3: S3Server, cache: Path) -> None:
    s3.require_auth(True)
    try:
        with pytest.raises(DataFileError, match="refused the credentials") as caught:
            localize(f"s3://AKIDWRONG:hunter2secret@{BUCKET}/built/default")
        with pytest.raises(DataFileError, match="refused the credentials"):
            localize(BUILT_URI)
    finally:
        s3.require_auth(False)
    assert "hunter2secret" not in str(caught.value) and "AKIDWRONG:***@" in str(caught.value)
    assert redact("s3://a:b@c/d?session_token=t&region=r") == "s3://a:***@c/d?session_token=***&region=r"


def test_an_unreachable_endpoint_is_a_data_error(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as probe:  # a port nothing listens on: bound, then closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    uri = f"s3://{BUCKET}/built?endpoint_override=http://127.0.0.1:{port}&region=us-east-1"
    with pytest.raises(DataFileError, match=rf"cannot reach the object store at http://127.0.0.1:{port}"):
        localize(uri)


def test_a_very_long_uri_is_an_error_about_the_data_not_the_cache_folder(
        cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A 5,000-character key: the cache folder name stays short; the unreachable store is the (typed) error."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{port}")
    with pytest.raises(DataFileError):
        localize(f"s3://{BUCKET}/" + "9" * 5000)


def test_a_uri_pyarrow_cannot_open_is_a_config_error(cache: Path) -> None:
    with pytest.raises(ConfigError, match="not a URI pyarrow can open"):
        localize("nosuchscheme://bucket/prefix")
    with pytest.raises(ConfigError, match="not a URI pyarrow can open"):
        localize(f"s3://{BUCKET}/built?no_such_option=1")


# --------------------------------------------------------------------------- the command line
def test_cli_run_on_s3_data_end_to_end(s3: S3Server, tmp_path: Path) -> None:
    out = tmp_path / "cli-run"
    env = {**{k: v for k, v in os.environ.items() if k not in _CLEARED},
           **_aws_env(s3.endpoint, tmp_path), "MOBILITY_ENV_CACHE_DIR": str(tmp_path / "node-cache")}
    done = subprocess.run([sys.executable, "-m", "mobility_env.cli", "run", "--data", BUILT_URI, "--agent", "rule",
                           "--limit", "6", "--out", str(out), "--no-progress"],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr
    assert f"data: {BUILT_URI} (copy on this node: {tmp_path / 'node-cache' / 'data'}" in done.stdout
    records = [json.loads(line) for line in (out / "results.jsonl").read_text(encoding="utf-8").splitlines()]
    local = run_local(RuleAgent, RunConfig(out_dir=tmp_path / "local", data=str(BUNDLED), limit=6, progress=False))
    assert _comparable(records) == _comparable(local)
    assert json.loads((out / "run.json").read_text(encoding="utf-8"))["data"] == BUILT_URI
    missing = subprocess.run([sys.executable, "-m", "mobility_env.cli", "run", "--data", f"{BUILT_URI}-typo",
                              "--out", str(tmp_path / "refused"), "--no-progress"],
                             capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert missing.returncode == 2 and f"{BUILT_URI}-typo: nothing there" in missing.stderr
