"""The public benchmark lists are an input: fetched at pinned commits with every file's sha256
checked, copied from a folder, reported by `agentlab benchmarks status`, and skipped with one
line when absent (issue #36)."""

from __future__ import annotations

import functools
import hashlib
import http.server
import json
import socket
import threading
import urllib.error
from pathlib import Path

import pytest

from agentlab.cli import main
from agentlab.eval import public_lists as pl
from agentlab.errors import DataError

COMMIT = "0" * 40
EXAMPLES = {
    "chrome": {"aa": {"instruction": "Turn on Do Not Track", "related_apps": ["chrome"],
                      "config": [{"type": "launch"}], "evaluator": {"func": "exact_match", "expected": {"secret": 1}}}},
    "os": {"bb": {"instruction": "Make a folder ‘notes’", "related_apps": ["os"], "config": [],
                  "evaluator": {"func": ["check_a", "check_b"]}}},
}
TESTSET = """# AppAgent test set

| App         | Task 1               | Task 2          |
|-------------|----------------------|-----------------|
| Google Maps | search for a cafe    | go home         |
| X           | post "hi"            | follow someone  |
"""
#: written out by hand (not by the code under test): what the two lists must hold
OSWORLD_JSONL = (
    '{"id": "aa", "domain": "chrome", "instruction": "Turn on Do Not Track", "related_apps": ["chrome"], '
    '"evaluator_func": "exact_match", "config_types": ["launch"]}\n'
    '{"id": "bb", "domain": "os", "instruction": "Make a folder ‘notes’", "related_apps": ["os"], '
    '"evaluator_func": ["check_a", "check_b"], "config_types": []}\n'
).encode()
APPAGENT_JSONL = "".join(
    json.dumps({"id": i, "domain": d, "instruction": t, "related_apps": [a], "evaluator_func": None, "config_types": []}) + "\n"
    for i, d, t, a in [("google_maps-1", "google_maps", "search for a cafe", "Google Maps"),
                       ("google_maps-2", "google_maps", "go home", "Google Maps"),
                       ("x-1", "x", 'post "hi"', "X"), ("x-2", "x", "follow someone", "X")]).encode()


def _sha(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


def _upstream() -> dict[str, dict[str, bytes]]:
    """source name -> path -> bytes, as the upstream repositories would serve them."""
    osw: dict[str, bytes] = {"LICENSE": b"Apache\n", "evaluation_examples/test_all.json":
                             json.dumps({d: list(v) for d, v in EXAMPLES.items()}).encode()}
    for dom, tasks in EXAMPLES.items():
        for tid, body in tasks.items():
            osw[f"evaluation_examples/examples/{dom}/{tid}.json"] = json.dumps({"id": tid, **body}).encode()
    return {"osworld": osw, "appagent": {"LICENSE": b"MIT\n", "assets/testset.md": TESTSET.encode()}}


@pytest.fixture
def fake_upstream(monkeypatch, tmp_path):
    """Two fake sources pinned like the real ones, and the lists they must give."""
    files = _upstream()
    pins = {f"source:{s}/{p}": _sha(b) for s, paths in files.items() for p, b in paths.items()}
    pins.update({"list:osworld/tasks.jsonl": _sha(OSWORLD_JSONL), "list:appagent/tasks.jsonl": _sha(APPAGENT_JSONL),
                 "list:osworld/LICENSE": _sha(b"Apache\n"), "list:appagent/LICENSE": _sha(b"MIT\n")})
    monkeypatch.setattr(pl, "pins", lambda: pins)
    monkeypatch.setattr(pl, "SOURCES", {"osworld": pl.Source("osworld", ("up/OSWorld", "fork/OSWorld"), COMMIT, "t"),
                                        "appagent": pl.Source("appagent", ("up/AppAgent",), COMMIT, "t")})
    monkeypatch.setattr(pl, "LISTS", tuple(x for x in pl.LISTS if x.source in ("osworld", "appagent")))
    monkeypatch.setenv("AGENTLAB_BENCHMARKS", str(tmp_path / "lists"))
    return files


def _serve(root: Path, files: dict[str, dict[str, bytes]], repos: dict[str, str]) -> None:
    """Lay ``files`` out as ``<root>/<repo>/<commit>/<path>`` (what raw.githubusercontent.com serves)."""
    for source, repo in repos.items():
        for path, data in files[source].items():
            target = root / repo / COMMIT / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)


@pytest.fixture
def mirror(tmp_path):
    """A real HTTP server on loopback serving a folder; yields (base URL, folder)."""
    root = tmp_path / "mirror"
    root.mkdir()
    handler = functools.partial(_QuietHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", root
    server.shutdown()
    server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:  # the test output is not the server's log
        pass


def test_fetch_downloads_checks_and_derives_the_lists_from_a_loopback_mirror(fake_upstream, mirror, tmp_path):
    base, root = mirror
    _serve(root, fake_upstream, {"osworld": "up/OSWorld", "appagent": "up/AppAgent"})
    report = pl.fetch(mirror=base)
    dest = tmp_path / "lists"
    assert sorted(report.written) == ["appagent/LICENSE", "appagent/tasks.jsonl", "osworld/LICENSE", "osworld/tasks.jsonl"]
    assert (dest / "osworld/tasks.jsonl").read_bytes() == OSWORLD_JSONL  # the evaluator's arguments are not kept
    assert (dest / "appagent/tasks.jsonl").read_bytes() == APPAGENT_JSONL
    record = json.loads((dest / pl.SOURCE_FILE).read_text())
    assert record["osworld/tasks.jsonl"]["commit"] == COMMIT and record["osworld/tasks.jsonl"]["mirror"] == base
    assert not (dest / pl.DOWNLOADS).exists()
    assert {s.path: s.state for s in pl.status()} == dict.fromkeys(report.written, "ok")
    again = pl.fetch(mirror=base)  # nothing to do the second time
    assert again.written == [] and len(again.kept) == 4 and again.downloaded == 0


def test_a_file_missing_upstream_is_taken_from_the_fork_that_holds_the_commit(fake_upstream, mirror, tmp_path):
    base, root = mirror
    _serve(root, fake_upstream, {"osworld": "fork/OSWorld", "appagent": "up/AppAgent"})  # up/OSWorld answers 404
    assert "osworld/tasks.jsonl" in pl.fetch(mirror=base).written
    assert (tmp_path / "lists/osworld/tasks.jsonl").read_bytes() == OSWORLD_JSONL


def test_a_file_that_differs_from_its_pin_is_refused_and_nothing_is_written(fake_upstream, mirror, tmp_path):
    base, root = mirror
    fake_upstream["osworld"]["evaluation_examples/examples/os/bb.json"] = b'{"instruction": "rm -rf /"}'
    _serve(root, fake_upstream, {"osworld": "up/OSWorld", "appagent": "up/AppAgent"})
    with pytest.raises(pl.FetchError, match=r"os/bb\.json: sha256 \w+ does not match the pinned"):
        pl.fetch(mirror=base)
    assert not (tmp_path / "lists/osworld/tasks.jsonl").exists()


def test_offline_fetch_is_one_line_naming_the_url_and_the_variable(fake_upstream, capsys, tmp_path):
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(SystemExit) as exc:
        main(["benchmarks", "fetch", "--mirror", f"http://127.0.0.1:{port}", "--timeout", "2"])
    assert exc.value.code == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert f"http://127.0.0.1:{port}/up/OSWorld/{COMMIT}/evaluation_examples/test_all.json" in err
    assert "AGENTLAB_BENCHMARKS" in err and "--from" in err
    assert not (tmp_path / "lists" / "osworld" / "tasks.jsonl").exists()


def test_an_interrupted_fetch_resumes_from_the_files_it_had_verified(fake_upstream, tmp_path):
    repos = {"osworld": "up/OSWorld", "appagent": "up/AppAgent"}
    served = {f"{repos[s]}/{COMMIT}/{p}": b for s, paths in fake_upstream.items() for p, b in paths.items()}
    calls: list[str] = []

    def get(url: str, fail_on: str | None = None) -> bytes:
        if fail_on and url.endswith(fail_on):
            raise urllib.error.URLError("network went away")
        calls.append(url)
        return served[url.split("/", 3)[-1]]

    with pytest.raises(pl.FetchError, match="network went away"):
        pl.fetch(get=functools.partial(get, fail_on="os/bb.json"), mirror="http://m")
    kept = sorted(p.name for p in (tmp_path / "lists" / pl.DOWNLOADS).rglob("*") if p.is_file())
    assert kept == ["aa.json", "test_all.json"]
    assert not (tmp_path / "lists" / "osworld" / "tasks.jsonl").exists()
    calls.clear()
    report = pl.fetch(get=get, mirror="http://m")
    # bb.json, the two licences and AppAgent's table are new; test_all.json and aa.json are reused
    assert report.reused == 2 and report.downloaded == len(calls) == 4
    assert (tmp_path / "lists/osworld/tasks.jsonl").read_bytes() == OSWORLD_JSONL


def test_copying_from_a_folder_checks_every_list(fake_upstream, tmp_path, capsys):
    src = tmp_path / "provided"
    for name, data in {"osworld/tasks.jsonl": OSWORLD_JSONL, "appagent/tasks.jsonl": APPAGENT_JSONL,
                       "osworld/LICENSE": b"Apache\n", "appagent/LICENSE": b"MIT\n"}.items():
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        (src / name).write_bytes(data)
    (src / "appagent/tasks.jsonl").write_bytes(APPAGENT_JSONL.replace(b"go home", b"go hime"))
    with pytest.raises(pl.FetchError, match="appagent/tasks.jsonl .* not the pinned"):
        pl.fetch(copy_from=src)
    assert not (tmp_path / "lists/appagent/tasks.jsonl").exists()  # (each list is checked and written alone)
    (src / "appagent/tasks.jsonl").write_bytes(APPAGENT_JSONL)
    assert main_ok(["benchmarks", "fetch", "--from", str(src)])
    out = capsys.readouterr().out
    assert out.count("sha256 ok)") == 4
    assert main_ok(["benchmarks", "status"])
    status = capsys.readouterr().out
    assert "osworld/tasks.jsonl: ok, 2 tasks; copied from" in status and "used by:" in status


def main_ok(argv: list[str]) -> bool:
    try:
        main(argv)
    except SystemExit as exc:
        return not exc.code
    return True


def test_status_names_the_missing_lists_and_the_command_that_fills_them(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("AGENTLAB_BENCHMARKS", str(tmp_path / "none"))
    assert main_ok(["benchmarks", "status"])
    out = capsys.readouterr().out
    assert "osworld/tasks.jsonl: missing" in out and "agentlab benchmarks fetch" in out
    assert "used by: the leakage filters" in out


def test_a_section_without_the_lists_is_skipped_with_one_line_that_the_runner_reads(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("AGENTLAB_BENCHMARKS", str(tmp_path / "none"))
    record = tmp_path / "skips.txt"
    monkeypatch.setenv(pl.SKIPS_ENV, str(record))
    assert pl.skip("the overview") is True
    line = capsys.readouterr().out.strip()
    assert line.startswith("skipped: the overview") and "`agentlab benchmarks fetch`" in line
    assert record.read_text().strip() == line


def test_loading_a_missing_list_names_the_fetch_command(monkeypatch, tmp_path):
    from agentlab.eval.benchmarks import load_osworld

    monkeypatch.setenv("AGENTLAB_BENCHMARKS", str(tmp_path / "none"))
    with pytest.raises(DataError, match="agentlab benchmarks fetch"):
        load_osworld()


def test_the_appagent_table_parser_reads_every_cell():
    rows = pl.parse_appagent_table(TESTSET)
    assert [(r["id"], r["instruction"]) for r in rows] == [
        ("google_maps-1", "search for a cafe"), ("google_maps-2", "go home"), ("x-1", 'post "hi"'), ("x-2", "follow someone")]


def test_the_package_reads_nothing_outside_the_checkout_by_default(monkeypatch):
    from agentlab.paths import REPO_ROOT, benchmarks_dir

    monkeypatch.delenv("AGENTLAB_BENCHMARKS", raising=False)
    assert benchmarks_dir() == REPO_ROOT / "external" / "benchmarks"
    assert "/external/" in (REPO_ROOT / ".gitignore").read_text().splitlines()


def test_every_shipped_pin_is_a_sha256_and_every_list_has_one():
    pins = pl.pins()
    assert all(len(v) == 64 and int(v, 16) >= 0 for v in pins.values())
    assert {f"list:{x.path}" for x in pl.LISTS} <= set(pins)
    # 369 task files + test_all.json + LICENSE for each OSWorld revision; AppAgent's table + LICENSE
    assert sum(k.startswith("source:osworld/") for k in pins) == 371
    assert sum(k.startswith("source:appagent/") for k in pins) == 2


@pytest.mark.skipif(not pl.available(), reason="needs the public benchmark lists: `agentlab benchmarks fetch`")
def test_the_lists_in_use_match_their_pins():
    assert {s.path: s.state for s in pl.status() if s.path.endswith(".jsonl")} == {
        "osworld/tasks.jsonl": "ok", "osworld/tasks_verified.jsonl": "ok", "appagent/tasks.jsonl": "ok"}


def test_a_list_that_differs_from_its_pin_warns_once_when_read(monkeypatch, tmp_path, caplog):
    from agentlab.eval.benchmarks import load_appagent

    folder = tmp_path / "lists" / "appagent"
    folder.mkdir(parents=True)
    (folder / "tasks.jsonl").write_text('{"id": "clock-1", "domain": "clock", "instruction": "set an alarm"}\n')
    monkeypatch.setenv("AGENTLAB_BENCHMARKS", str(tmp_path / "lists"))
    pl._checked.clear()
    with caplog.at_level("WARNING"):
        load_appagent()
        load_appagent()
    assert sum("differs from the pinned list" in r.message for r in caplog.records) == 1


class _FakeScorer:
    def matrix(self, a, b):  # type: ignore[no-untyped-def]
        import numpy as np

        return np.zeros((len(a), len(b)), dtype=np.float32)


def test_a_leakage_filter_without_the_lists_says_what_it_checked_and_is_never_leakage_free(monkeypatch, tmp_path, caplog):
    from agentlab.selfinstruct.leakage import LeakageFilter
    from agentlab.selfinstruct.report import leakage_sentence

    monkeypatch.setenv("AGENTLAB_BENCHMARKS", str(tmp_path / "none"))
    with caplog.at_level("INFO"):
        leak = LeakageFilter.from_benchmarks(_FakeScorer(), 0.5)  # type: ignore[arg-type]
    assert leak.missing == ["osworld/tasks.jsonl", "appagent/tasks.jsonl"] and not leak.leakage_free
    assert leak.checked == ["data/benchmarks/routing_set_v2.jsonl"] and len(leak.tasks) > 100
    [line] = [r.message for r in caplog.records if "leakage filter" in r.message]
    assert "NOT against osworld/tasks.jsonl, appagent/tasks.jsonl" in line and "cannot be called leakage-free" in line
    sentence = leakage_sentence(leak.coverage())
    assert "not leakage-free" in sentence and "leakage-free against every" not in sentence


@pytest.mark.skipif(not pl.available(), reason="needs the public benchmark lists: `agentlab benchmarks fetch`")
def test_a_leakage_filter_with_every_list_may_say_leakage_free():
    from agentlab.selfinstruct.leakage import LeakageFilter
    from agentlab.selfinstruct.report import leakage_sentence

    leak = LeakageFilter.from_benchmarks(_FakeScorer(), 0.5)  # type: ignore[arg-type]
    assert leak.leakage_free and leak.missing == []
    assert "leakage-free against every test list" in leakage_sentence(leak.coverage())
