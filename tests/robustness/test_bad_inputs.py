"""Bad-input matrix: every command that takes a file or folder, given each kind of bad input.

Each case must give a non-zero exit, a short message that names the file (what, where, what
to do), no traceback, and leave the outputs that already existed exactly as they were. The
commands run in-process through ``agentlab.cli.main``; none needs a model to reach its error.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from agentlab.cli import exit_status
from agentlab.paths import agents_dir, data_dir

KINDS = ("missing", "folder", "empty", "not_utf8", "truncated", "malformed", "wrong_types", "unknown_keys", "large")
DEAD_PORT = "9"  # nothing listens on the discard port of loopback


@dataclass
class Format:
    """How to make each kind of bad input for one file format (``None``: not applicable)."""

    valid: str
    malformed: str
    wrong_types: str
    unknown_keys: str | None
    large: Callable[[], str]
    truncated: str | None = None  # default: the first 40% of ``valid``
    name: str = "input.yaml"

    def content(self, kind: str) -> str | bytes | None:
        if kind == "empty":
            return ""
        if kind == "not_utf8":
            return self.valid.encode()[:10] + b"\xff\xfe\x80 latin-1 caf\xe9\n"
        if kind == "truncated":
            return self.truncated if self.truncated is not None else self.valid[: max(1, int(len(self.valid) * 0.4))]
        if kind == "large":
            return self.large()
        return getattr(self, kind)


def _big_yaml() -> str:
    return "notes: " + "x" * 1_000_000 + "\n"  # 1 MB: a config file nobody meant to write


LLM_YAML = Format("kind: openai\nbase_url: http://127.0.0.1:9/v1\nmodel: m\n", "kind: [openai\nmodel: m\n",
                  "kind: local\ntimeout_s: soon\n", "kind: local\nmodle: x\n", _big_yaml, truncated="kind: op")
#: an LLM config file with a model per role (docs/roles.md): a misspelt role is the unknown key
ROLES_YAML = Format("llm: {model: x}\nroles:\n  worker: {kind: openai, base_url: 'http://127.0.0.1:9/v1', model: m}\n",
                    "llm: {model: x}\nroles:\n  worker: {model: [m\n", "llm: {model: x}\nroles:\n  worker: {timeout_s: soon}\n",
                    "llm: {model: x}\nroles:\n  wroker: {model: m}\n", _big_yaml, truncated="llm: {model: x}\nroles:\n  work")
AGENT_YAML = Format("max_steps: 2\n", "max_steps: [2\n", "max_steps: many\n", "max_stepz: 2\n", _big_yaml)
TOKEN_YAML = Format("max_word_tokens: 8\nsource: seed\n", "source: 'seed\n", "max_word_tokens: eight\n",
                    "max_word_tokenz: 8\n", _big_yaml, truncated="max_word_tok")
SI_YAML = Format("per_agent: 10\n", "per_agent: {10\n", "per_agent: ten\n", "per_agnt: 10\n", _big_yaml)
PARAMS_YAML = Format('common:\n  seed: 0\nnotebooks:\n  "04":\n    per_agent: 12\n', 'common:\n  seed: [0\n',
                     'notebooks:\n  "04":\n    per_agent: many\n', "common:\n  sed: 0\n", _big_yaml,
                     truncated='common:\n  seed: 0\nnotebooks:\n  "0')
TASKS_JSONL = Format('{"id": "a", "instruction": "play some jazz"}\n{"id": "b", "instruction": "email Bob"}\n',
                     '{"id": "a", "instruction": "play}\n', '{"id": "a", "instruction": 5}\n', None,
                     lambda: "".join(f'{{"id": {i}}}\n' for i in range(100_000)), name="tasks.jsonl")
GOLD_JSONL = Format('{"id": "a", "domain": "spotify"}\n{"id": "b", "domain": "thunderbird"}\n',
                    '{"id": "a", "domain": spotify}\n', '{"id": "a", "domain": 5}\n', None,
                    lambda: "".join(f'{{"id": {i}}}\n' for i in range(100_000)), name="gold.jsonl")
PRED_JSONL = Format('{"id": "a", "agent": "SpotifyAgent", "ranking": [["SpotifyAgent", 1.0]], "plan": []}\n'
                    '{"id": "b", "agent": "MailAgent", "ranking": [["MailAgent", 1.0]], "plan": []}\n',
                    '{"id": "a", "agent": Spotify}\n{"id": "b"}\n', '{"id": "a", "agent": 5, "ranking": "x"}\n', None,
                    lambda: '{"id": "a", "agent": 7}\n' * 100_000, truncated='{"id": "a", "agent": "Spo',
                    name="pred.jsonl")
THRESHOLDS_JSON = Format(
    json.dumps({"scorer": "m", "num_layers": 6, "tau1": 0.5, "tau2": 0.9, "leakage_tau": 0.95}),
    '{"scorer": "m", "tau1": 0.5,', '{"scorer": "m", "num_layers": "six", "tau1": 0.5, "tau2": 0.9, "leakage_tau": 0.9}',
    '{"scorer": "m", "num_layers": 6, "tau1": 0.5, "tau2": 0.9, "leakage_tau": 0.9, "tau3": 1}',
    lambda: json.dumps({"scorer": "m" * 3_000_000}), name="thresholds.json")
TASK_JSON = Format(
    (data_dir() / "tasks" / "csv_total.json").read_text() if (data_dir() / "tasks" / "csv_total.json").exists() else "{}",
    '{"id": "t", "instruction": "x",', '{"id": "t", "instruction": 5, "domain": "calc", "evaluator": {}}',
    '{"id": "t", "instruction": "x", "domain": "calc", "evaluator": {"func": "x"}, "colour": 1}',
    lambda: json.dumps({"id": "t", "instruction": "x" * 3_000_000}), name="t.json")


def _first_task() -> Path:
    return sorted((data_dir() / "tasks").glob("*.json"))[0]


def _doc() -> str:
    return sorted(agents_dir().rglob("*.md"))[0].read_text(encoding="utf-8")


AGENT_MD = Format(
    _doc().replace("name: ", "name: Zz", 1), "---\nname: [Zz\n---\n# Applications\n",
    _doc().replace("name: ", "name: Zz", 1).replace("supports_extension:", "supports_extension: {a: b}\nx_old:", 1),
    None, lambda: "---\nname: Big\n---\n" + "word " * 700_000, name="Zz.md")
TASK_JSON.valid = _first_task().read_text()


@dataclass
class Case:
    """One command with one slot (``{F}`` in ``argv``) that receives the bad input."""

    name: str
    argv: list[str]
    fmt: Format | None = None  # a file slot; None: a folder slot (see ``folder``)
    folder: Callable[[str, Path], Path | None] | None = None
    skip: tuple[str, ...] = ()
    outputs: list[str] = field(default_factory=list)  # files (under tmp) that exist before and must not change
    #: agent documents list every problem, one ``path:line: what`` line each, so one pass fixes all
    every_problem: bool = False


def _episode(kind: str, root: Path) -> Path | None:
    """A bad episode folder for ``agent replay``."""
    ep = root / "run" / "ep"
    good = {"run": "run", "episode": "ep", "task": "t", "env": "AndroidEnv", "agent": "a", "model_id": "m",
            "status": "done", "started": 1.0}
    step = {"step": 0, "timestamp": 1.0, "observation": "", "elements": [], "action": {"type": "back"}}
    if kind == "missing":
        return root / "nope"
    if kind == "folder":  # a file where the folder should be
        (root / "afile").write_text("x")
        return root / "afile"
    ep.mkdir(parents=True)
    if kind == "empty":
        return ep
    (ep / "meta.json").write_text(json.dumps(good))
    lines = {
        "not_utf8": b'{"step": 0, "observation": "caf\xe9"}\n{"step": 1}\n',
        "truncated": (json.dumps(step) + "\n").encode()[:30] + b"\n" + (json.dumps(step) + "\n").encode(),
        "malformed": b"[1, 2]\n",
        "wrong_types": b'{"step": "zero", "elements": 5}\n',
        "unknown_keys": None,
        "large": b'{"step": "x"}\n' * 100_000,
    }[kind]
    if lines is None:
        (ep / "meta.json").write_bytes(b"\xff\xfe")
        lines = (json.dumps(step) + "\n").encode()
    (ep / "traj.jsonl").write_bytes(lines)
    return ep


def _folder_of(fmt: Format, inner: str) -> Callable[[str, Path], Path | None]:
    """A folder slot holding one file of ``fmt`` (or the folder itself being wrong)."""

    def make(kind: str, root: Path) -> Path | None:
        d = root / "dir"
        if kind == "missing":
            return root / "nope"
        if kind == "folder":  # the reverse: a file where a folder is expected
            (root / "afile").write_text("x")
            return root / "afile"
        d.mkdir()
        if kind == "empty":
            return d
        content = fmt.content(kind)
        if content is None:
            return None
        target = d / inner
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content if isinstance(content, bytes) else content.encode())
        return d

    return make


CASES = [
    Case("models check --llm-config", ["models", "check", "--llm-config", "{F}"], LLM_YAML),
    Case("exec --llm-config (roles)", ["exec", "--tasks", str(data_dir() / "tasks" / "calc-enter-total.json"), "--out",
                                       "{T}/run", "--llm-config", "{F}"], ROLES_YAML),
    Case("agent deploy --config", ["agent", "deploy", "--task", "t", "--app", "clock", "--adb-port", DEAD_PORT,
                                   "--config", "{F}"], AGENT_YAML),
    Case("agent learn --llm-config", ["agent", "learn", "{T}/demo", "--app", "clock", "--llm-config", "{F}"], LLM_YAML),
    Case("train --config", ["train", "--out", "{T}/ck", "--config", "{F}"], TOKEN_YAML, outputs=["ck/tokens.json"]),
    Case("selfinstruct --config", ["selfinstruct", "--out", "{T}/demos", "--config", "{F}"], SI_YAML,
         outputs=["demos/journal.jsonl"]),
    Case("selfinstruct --thresholds", ["selfinstruct", "--out", "{T}/demos", "--agents", "SpotifyAgent",
                                       "--thresholds", "{F}"], THRESHOLDS_JSON, outputs=["demos/journal.jsonl"]),
    Case("notebooks run --params", ["notebooks", "run", "--params", "{F}", "--out", "{T}/nb"], PARAMS_YAML,
         outputs=["nb/report.json"]),
    Case("notebooks list --params", ["notebooks", "list", "--params", "{F}"], PARAMS_YAML),
    Case("route --tasks", ["route", "--tasks", "{F}", "--out", "{T}/pred.jsonl", "--overwrite"], TASKS_JSONL,
         outputs=["pred.jsonl"]),
    Case("route --mode manager --tasks", ["route", "--mode", "manager", "--tasks", "{F}", "--out", "{T}/pred.jsonl"],
         TASKS_JSONL, outputs=["pred.jsonl"]),
    Case("eval routing --gold", ["eval", "routing", "--pred", "{T}/pred.jsonl", "--gold", "{F}", "--json", "{T}/s.json"],
         GOLD_JSONL, outputs=["pred.jsonl", "s.json"]),
    Case("eval routing --pred", ["eval", "routing", "--pred", "{F}", "--gold", "{T}/gold.jsonl", "--json", "{T}/s.json"],
         PRED_JSONL, outputs=["gold.jsonl", "s.json"], skip=("truncated",)),  # a torn tail is a crash, tolerated
    Case("pool enroll", ["pool", "enroll", "{F}", "--dir", "{T}/pool"], AGENT_MD, outputs=["pool/marker.txt"],
         every_problem=True),
    Case("pool validate", ["pool", "validate", "{F}"], folder=_folder_of(AGENT_MD, "desktop/Zz.md"), every_problem=True),
    Case("pool list --dir", ["pool", "list", "--dir", "{F}"], folder=_folder_of(AGENT_MD, "desktop/Zz.md")),
    Case("tasks list --dir", ["tasks", "list", "--dir", "{F}"], folder=_folder_of(TASK_JSON, "t.json")),
    Case("tasks check --dir", ["tasks", "check", "--dir", "{F}", "--sandbox", "none"], folder=_folder_of(TASK_JSON, "t.json")),
    Case("tasks eval --dir", ["tasks", "eval", "t", "{T}", "--dir", "{F}"], folder=_folder_of(TASK_JSON, "t.json")),
    Case("route --agents", ["route", "--tasks", "{T}/tasks.jsonl", "--out", "{T}/pred.jsonl", "--overwrite", "--agents", "{F}"],
         folder=_folder_of(AGENT_MD, "desktop/Zz.md"), outputs=["pred.jsonl"]),
    Case("agent replay", ["agent", "replay", "{F}", "--adb-port", DEAD_PORT], folder=_episode),
    # a run folder's bad episodes are listed as skipped (with a warning); the folder itself is checked
    Case("agent episodes", ["agent", "episodes", "{F}"], folder=lambda k, r: _run_dir(k, r), skip=KINDS[3:]),
]


def _run_dir(kind: str, root: Path) -> Path:
    if kind == "missing":
        return root / "nope"
    if kind == "folder":
        (root / "afile").write_text("x")
        return root / "afile"
    (root / "run").mkdir()
    return root / "run"


def _hash(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def _setup(root: Path) -> None:
    """Existing outputs and good companion inputs every case may refer to."""
    (root / "ck").mkdir()
    (root / "ck" / "tokens.json").write_text('{"old": true}\n')
    (root / "demos").mkdir()
    (root / "demos" / "journal.jsonl").write_text('{"type": "header"}\n')
    (root / "nb").mkdir()
    (root / "nb" / "report.json").write_text("{}\n")
    (root / "pred.jsonl").write_text(PRED_JSONL.valid)
    (root / "gold.jsonl").write_text(GOLD_JSONL.valid)
    (root / "tasks.jsonl").write_text(TASKS_JSONL.valid)
    (root / "s.json").write_text('{"old": 1}\n')
    shutil.copytree(agents_dir(), root / "pool")
    (root / "pool" / "marker.txt").write_text("x")
    (root / "demo").mkdir()


def _make(case: Case, kind: str, root: Path) -> Path | None:
    if case.folder is not None:
        return case.folder(kind, root)
    assert case.fmt is not None
    target = root / "in" / case.fmt.name
    if kind == "missing":
        return target
    if kind == "folder":
        target.mkdir(parents=True)
        return target
    content = case.fmt.content(kind)
    if content is None:
        return None
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(content if isinstance(content, bytes) else content.encode())
    return target


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = exit_status(argv)
    return (code, *capsys.readouterr())


TRIED: list[str] = []


def _applies(case: Case, kind: str) -> bool:
    """Whether ``kind`` is a bad input for ``case`` at all: some are accepted by design
    (extra keys in task/gold/prediction files, a torn last prediction line; docs/failures.md)."""
    if kind in case.skip:
        return False
    if case.fmt is None:  # a folder slot: build it once in a scratch folder to see
        assert case.folder is not None
        with tempfile.TemporaryDirectory() as scratch:
            return case.folder(kind, Path(scratch)) is not None
    return kind in ("missing", "folder") or case.fmt.content(kind) is not None


MATRIX = [pytest.param(c, k, id=f"{c.name}-{k}") for c in CASES for k in KINDS if _applies(c, k)]


@pytest.mark.parametrize(("case", "kind"), MATRIX)
def test_bad_input(case: Case, kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTLAB_RUNS", str(tmp_path / "runs"))
    _setup(tmp_path)
    bad = _make(case, kind, tmp_path)
    assert bad is not None
    before = {o: _hash(tmp_path / o) for o in case.outputs}
    argv = [a.replace("{F}", str(bad)).replace("{T}", str(tmp_path)) for a in case.argv]
    code, out, err = _run(argv, capsys)
    text = (err or out).strip()
    assert code != 0, f"{case.name} / {kind}: exit 0\n{out}\n{err}"
    assert "Traceback" not in out + err, f"{case.name} / {kind}:\n{err}"
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.startswith("WARNING")]
    assert lines, f"{case.name} / {kind}: no message"
    if case.every_problem:  # one line per problem (+ a count), each naming the file
        assert all(str(bad) in ln for ln in lines), f"{case.name} / {kind}:\n{text}"
    else:
        assert len(lines) == 1, f"{case.name} / {kind}: {len(lines)} lines:\n{text}"
    assert bad.name in lines[0] or str(bad) in lines[0], f"{case.name} / {kind}: message does not say where: {lines[0]}"
    for o, h in before.items():
        assert _hash(tmp_path / o) == h, f"{case.name} / {kind}: {o} changed"
    TRIED.append(f"{case.name}/{kind}")
