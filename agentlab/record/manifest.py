"""Run manifests: what a run folder's results were made with, so they can be reproduced and resumed safely.

Every run folder holds ``manifest.json`` (:data:`MANIFEST_FILE`), written atomically when the
run starts: the git commit (and whether the tree was dirty), package versions, the machine,
the models with hashes (the backend's model id and weights fingerprint, or an endpoint's base
url and model name; the sentence encoder; the router checkpoint), the hash of every prompt
template and agent document, the seeds, the options that change results, and each task id
with the hash of its file.

A resumed run (:func:`open_run` with ``resume=True``) compares the recorded manifest with the
current one field by field. The fields that change results (:data:`RESULT_FIELDS`: models,
prompt templates, agent documents, seeds, options, task files) must match, or the run is
refused with ONE line naming what differs, and nothing in the folder is touched. The code
(commit, dirty tree) and package versions are compared too but only warn: a commit that leaves
every prompt, model and option as it was (a docs fix, a refactoring) should not strand a
half-finished run; the resume is recorded in the manifest's ``resumes`` list with the commit
it ran at, so a reader sees which rows may come from which code. The machine is recorded,
never compared (resuming elsewhere is normal). See ``docs/reproducibility.md``.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import platform
import subprocess
import sys
from collections.abc import Mapping
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agentlab.errors import AgentlabError, DataError
from agentlab.fileio import atomic_write_json
from agentlab.llm.config import EMBEDDED_MODELS, LLMConfig
from agentlab.llm.embedded import MINILM_ID, minilm_path, source_fingerprint
from agentlab.llm.identity import file_fingerprint, weights_fingerprint
from agentlab.paths import REPO_ROOT, prompts_dir

log = logging.getLogger(__name__)

MANIFEST_FILE = "manifest.json"
MANIFEST_VERSION = 1

#: distributions whose versions are recorded (those not installed are left out)
PACKAGES = ("agentlab", "torch", "transformers", "tokenizers", "safetensors", "numpy", "pydantic",
            "openai", "datasets", "sentence-transformers", "bert-score", "peft", "ray")

#: manifest fields that change results: a difference refuses a resume (a model's
#: location -- its folder, a checkpoint's path -- is recorded but not compared: its hash is)
RESULT_FIELDS = ("models", "prompts", "documents", "seeds", "options", "tasks")
#: fields that only warn on resume (the code and the libraries may change without changing results)
WARN_FIELDS = ("git", "packages")

#: keys of a model identity that say where it was found, not what it is (not compared)
LOCATION_KEYS = ("path", "source")
#: differences named in the one-line refusal before "and N more"
SHOWN = 3


class ManifestMismatchError(DataError):
    """A resumed run's manifest differs from the current configuration on a field that changes results."""


class Manifest(BaseModel):
    """What a run folder's rows were made with (``manifest.json``)."""

    model_config = ConfigDict(extra="ignore")

    version: int = MANIFEST_VERSION
    #: the command that wrote the folder: "exec", "selfinstruct"
    command: str
    created: str = Field(default_factory=lambda: _now())
    #: {"commit": hex or None (not a git checkout), "dirty": bool or None}
    git: dict[str, Any] = Field(default_factory=dict)
    packages: dict[str, str] = Field(default_factory=dict)
    #: hostname, platform, CPU count, python
    machine: dict[str, Any] = Field(default_factory=dict)
    #: role ("agents", "router", "sentence_encoder", "generator") -> identity (model id + hash, or endpoint)
    models: dict[str, dict[str, Any]] = Field(default_factory=dict)
    #: prompt template name (``code/system``) -> sha256 of its text
    prompts: dict[str, str] = Field(default_factory=dict)
    #: agent document name -> sha256 of its file
    documents: dict[str, str] = Field(default_factory=dict)
    seeds: list[int] = Field(default_factory=list)
    #: the run's options that change results (max_steps, router, runner_options, ...)
    options: dict[str, Any] = Field(default_factory=dict)
    #: task id -> sha256 of its file (None: a task built in memory)
    tasks: dict[str, str | None] = Field(default_factory=dict)
    #: one record per resume: when, at which commit, and what was forced past (if anything)
    resumes: list[dict[str, Any]] = Field(default_factory=list)
    #: the budget of the latest part of the run (the first, or a resume) when it had one
    #: (``agentlab exec --budget``, :mod:`agentlab.record.budget`): its limits, what it spent, the limit that
    #: stopped it (``stopped_by``, null: none did) and the episodes left; not compared on resume
    budget: dict[str, Any] | None = None
    #: the budget blocks of earlier parts, oldest first
    budget_history: list[dict[str, Any]] = Field(default_factory=list)


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def manifest_path(out_dir: Path) -> Path:
    return out_dir / MANIFEST_FILE


# --------------------------------------------------------------------------- what is recorded


def git_state(root: Path = REPO_ROOT) -> dict[str, Any]:
    """``{"commit": sha, "dirty": bool}`` of the checkout holding the package (``None``s outside git).

    Dirty means tracked files differ from the commit; untracked files (run outputs) do not count.
    """
    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=20, check=False)
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout if done.returncode == 0 else None

    commit = git("rev-parse", "HEAD")
    if commit is None:
        return {"commit": None, "dirty": None}
    status = git("status", "--porcelain", "--untracked-files=no")
    return {"commit": commit.strip(), "dirty": bool(status.strip()) if status is not None else None}


def package_versions(names: tuple[str, ...] = PACKAGES) -> dict[str, str]:
    """Installed versions of ``names`` (those not installed are left out)."""
    out: dict[str, str] = {}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return out


def machine() -> dict[str, Any]:
    return {
        "hostname": platform.node(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
        "python": sys.version.split()[0],
    }


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def folder_sha256(folder: Path, pattern: str = "*") -> str | None:
    """SHA-256 over the relative names and bytes of the files matching ``pattern`` under
    ``folder`` (recursively, hidden files skipped); ``None`` when it has none."""
    files = sorted(p for p in folder.rglob(pattern) if p.is_file()
                   and not any(part.startswith(".") for part in p.relative_to(folder).parts))
    if not files:
        return None
    h = hashlib.sha256()
    for p in files:
        h.update(p.relative_to(folder).as_posix().encode() + b"\0" + file_sha256(p).encode() + b"\n")
    return h.hexdigest()


def prompt_hashes(root: Path | None = None) -> dict[str, str]:
    """``{template name: sha256}`` of every template under ``data/prompts`` (the names and hashes
    :mod:`agentlab.dialogue.templates` records; all of them, since which ones a run's agents
    read is only known once they ran)."""
    root = root or prompts_dir()
    return {p.relative_to(root).with_suffix("").as_posix(): hashlib.sha256(p.read_text(encoding="utf-8").encode("utf-8")).hexdigest()
            for p in sorted(root.rglob("*.txt"))}


def backend_identity(llm: Any) -> dict[str, Any]:
    """A model backend's identity: ``describe()`` where the backend has it (local models: model
    id, weights fingerprint, folder), else its model id, and for an endpoint its base url."""
    inner = getattr(llm, "inner", llm)  # a ReplyCap wraps the real backend
    describe = getattr(inner, "describe", None)
    ident: dict[str, Any] = dict(describe()) if callable(describe) else {"model_id": str(getattr(inner, "model_id", ""))}
    config = getattr(inner, "config", None)
    base_url = getattr(config, "base_url", None)
    if base_url:
        ident["base_url"] = str(base_url)
    ident.setdefault("backend", type(inner).__name__)
    return ident


def config_identity(config: LLMConfig) -> dict[str, Any]:
    """A backend's identity from its config, without loading it: an endpoint's model name and
    base url, or a local model's name and weights fingerprint (an embedded backbone: its GGUF file)."""
    if config.kind == "openai":
        return {"model_id": config.model, "base_url": config.base_url, "backend": config.kind}
    ident: dict[str, Any] = {"model_id": config.model, "backend": config.kind, "dtype": config.dtype}
    try:
        if config.model in EMBEDDED_MODELS:
            ident["fingerprint"] = source_fingerprint(config.model)
        else:
            path = Path(config.model).expanduser()
            if config.gguf_file:
                path = path / config.gguf_file
            ident["fingerprint"] = file_fingerprint(path) if path.is_file() else weights_fingerprint(path) if path.is_dir() else None
    except AgentlabError as exc:
        ident["missing"] = exc.message
    return ident


def encoder_identity() -> dict[str, Any]:
    """The sentence encoder (all-MiniLM-L6-v2 from its package) with its weights fingerprint."""
    try:
        path = minilm_path()
    except AgentlabError as exc:
        return {"model_id": MINILM_ID, "missing": exc.message}
    return {"model_id": MINILM_ID, "fingerprint": weights_fingerprint(path)}


def checkpoint_identity(kind: str, path: Path | None) -> dict[str, Any]:
    """A router's identity: its kind and the hash of its checkpoint (or training data) folder."""
    ident: dict[str, Any] = {"kind": kind}
    if path is not None:
        ident.update(path=str(path), sha256=folder_sha256(path) if path.is_dir() else
                     (file_sha256(path) if path.is_file() else None))
    return ident


def build_manifest(
    command: str,
    *,
    models: Mapping[str, Mapping[str, Any]],
    seeds: list[int],
    options: Mapping[str, Any],
    tasks: Mapping[str, str | Path | None] | None = None,
    documents: Mapping[str, str | Path | None] | None = None,
) -> Manifest:
    """The manifest of a run starting now: what is given, plus the code, packages, machine and
    prompt templates read here. ``tasks``/``documents`` map ids/names to their files (hashed)."""
    def hashes(files: Mapping[str, str | Path | None] | None) -> dict[str, str | None]:
        return {k: (file_sha256(Path(p)) if p is not None and Path(p).is_file() else None) for k, p in (files or {}).items()}

    return Manifest(
        command=command, git=git_state(), packages=package_versions(), machine=machine(),
        models={k: dict(v) for k, v in models.items()}, prompts=prompt_hashes(), seeds=list(seeds),
        options=dict(options), tasks=hashes(tasks), documents={k: v for k, v in hashes(documents).items() if v is not None},
    )


# --------------------------------------------------------------------------- comparing


def _short(value: Any) -> str:
    """A value for the one-line message: hashes cut to 8 hex digits, long text cut."""
    if isinstance(value, str) and len(value) >= 32 and all(c in "0123456789abcdef" for c in value):
        return value[:8] + "…"
    if isinstance(value, dict):  # a model identity: what names it
        keys = [k for k in ("model_id", "kind", "base_url", "fingerprint", "sha256") if value.get(k)]
        return " ".join(_short(value[k]) for k in keys) or _short(str(value))
    text = str(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _mapping_diff(what: str, old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    out: list[str] = []
    for key in sorted(set(old) | set(new)):
        if key not in new:
            out.append(f"{what} {key} removed")
        elif key not in old:
            out.append(f"{what} {key} added")
        elif old[key] != new[key]:
            out.append(f"{what} {key} changed ({_short(old[key])} -> {_short(new[key])})")
    return out


def _tasks_diff(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    out = [f"task {k} changed ({_short(old[k])} -> {_short(new[k])})" for k in sorted(set(old) & set(new)) if old[k] != new[k]]
    for label, ids in (("added", sorted(set(new) - set(old))), ("removed", sorted(set(old) - set(new)))):
        if ids:
            more = f" and {len(ids) - 2} more" if len(ids) > 2 else ""
            out.append(f"{len(ids)} task(s) {label} ({', '.join(ids[:2])}{more})")
    return out


def differences(recorded: Manifest, current: Manifest) -> tuple[list[str], list[str]]:
    """``(refusing, warning)``: what differs on the fields that change results, and on those that only warn."""
    refusing: list[str] = []
    def what(models: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
        return {role: {k: v for k, v in ident.items() if k not in LOCATION_KEYS} for role, ident in models.items()}

    refusing += _mapping_diff("model", what(recorded.models), what(current.models))
    refusing += _mapping_diff("prompt template", recorded.prompts, current.prompts)
    refusing += _mapping_diff("agent document", recorded.documents, current.documents)
    if recorded.seeds != current.seeds:
        refusing.append(f"seeds changed ({recorded.seeds} -> {current.seeds})")
    refusing += _mapping_diff("option", recorded.options, current.options)
    refusing += _tasks_diff(recorded.tasks, current.tasks)
    warning: list[str] = []
    old, new = recorded.git, current.git
    if (old.get("commit"), old.get("dirty")) != (new.get("commit"), new.get("dirty")):
        def code(g: Mapping[str, Any]) -> str:
            return f"{_short(g.get('commit') or 'unknown')}{' (dirty)' if g.get('dirty') else ''}"

        warning.append(f"code changed ({code(old)} -> {code(new)})")
    warning += _mapping_diff("package", recorded.packages, current.packages)
    return refusing, warning


def mismatch_line(refusing: list[str], *, hint: str) -> str:
    shown = "; ".join(refusing[:SHOWN])
    more = f" (and {len(refusing) - SHOWN} more difference(s))" if len(refusing) > SHOWN else ""
    return f"manifest differs: {shown}{more}; {hint}"


# --------------------------------------------------------------------------- reading and writing


def read_manifest(path: Path) -> Manifest:
    """The manifest in ``path``; an unreadable one is a :class:`DataError` naming the file."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        return Manifest.model_validate(raw)
    except (ValueError, ValidationError) as exc:
        raise DataError(f"manifest is not valid ({' '.join(str(exc).split())[:160]}); restore it, "
                        "or move it away to resume without the check", where=path) from None


def write_manifest(out_dir: Path, manifest: Manifest) -> Path:
    path = manifest_path(out_dir)
    atomic_write_json(path, manifest.model_dump(mode="json"))
    return path


def record_budget(out_dir: Path, block: dict[str, Any] | None) -> None:
    """Record the budget of the run's latest part (``None``: it had none) in ``manifest.json``; the
    block there before moves to ``budget_history``. A folder without a manifest is left alone."""
    path = manifest_path(out_dir)
    if not path.exists():
        return
    recorded = read_manifest(path)
    if block is None and recorded.budget is None:
        return
    history = recorded.budget_history + ([recorded.budget] if recorded.budget is not None else [])
    write_manifest(out_dir, recorded.model_copy(update={"budget": block, "budget_history": history}))


FORCE_HINT = "pass --force-resume to continue anyway or choose another --out"


def open_run(
    out_dir: Path,
    current: Manifest,
    *,
    resume: bool,
    force: bool = False,
    refuse: bool = True,
    hint: str = FORCE_HINT,
    grow: bool = False,
) -> Manifest:
    """Record ``current`` in a run folder, or check it against the recorded one when resuming.

    A fresh run (or a resumed folder without a manifest: one written before manifests existed)
    writes ``current``. A resume whose manifest differs on :data:`RESULT_FIELDS` raises
    :class:`ManifestMismatchError` (one line, nothing written) unless ``force``; otherwise the
    recorded manifest is kept, the resume is appended to its ``resumes`` and the code/package
    differences are logged as warnings. ``refuse=False`` (a command with its own resume rule,
    such as self-instruct's journal) only records the differences in the resume's ``changed``.
    ``grow`` (a benchmark whose per-agent folders gain tasks as its arms or its task cap grow):
    tasks the recorded manifest lacks are added to it instead of refusing the resume, and recorded
    tasks this invocation does not ask for (fewer arms chose this agent) stay recorded with their
    rows; a task that changed still refuses, and so does every other difference.
    Returns the manifest now in the folder.
    """
    path = manifest_path(out_dir)
    if not resume or not path.exists():
        # the run folder's lock (agentlab.runlock) is this run's own file, not an older run's
        if resume and out_dir.is_dir() and any(p.name != ".lock" for p in out_dir.iterdir()):
            log.warning("%s: no manifest (a run from before manifests); recording the current configuration", path)
        write_manifest(out_dir, current)
        return current
    recorded = read_manifest(path)
    if grow:
        added = {k: v for k, v in current.tasks.items() if k not in recorded.tasks}
        if added:
            log.info("%s: %d task(s) added to the run", path, len(added))
            recorded.tasks = {**recorded.tasks, **added}
        kept = {k: v for k, v in recorded.tasks.items() if k not in current.tasks}
        if kept:
            log.info("%s: %d recorded task(s) not asked for this time; their rows stay", path, len(kept))
            current = current.model_copy(update={"tasks": {**current.tasks, **kept}})
    refusing, warning = differences(recorded, current)
    if not refuse:
        if refusing:
            log.info("%s: resumed with: %s", path, "; ".join(refusing))
        recorded.resumes.append({"at": _now(), "git": current.git, "changed": refusing, "warnings": warning})
        write_manifest(out_dir, recorded)
        return recorded
    if refusing and not force:
        raise ManifestMismatchError(mismatch_line(refusing, hint=hint), where=path)
    for line in warning:
        log.warning("%s: %s since the run began; the rows kept were made with the recorded one", path, line)
    if refusing:
        log.warning("%s: resuming anyway (--force-resume): %s", path, mismatch_line(refusing, hint="recorded in the manifest"))
    recorded.resumes.append({"at": _now(), "git": current.git, "forced": refusing, "warnings": warning})
    write_manifest(out_dir, recorded)
    return recorded
