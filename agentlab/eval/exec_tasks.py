"""The project's own execution tasks: JSON files that set up a start state and judge the end.

A task file (``data/tasks/<id>.json``) holds the instruction an agent receives, the domain
(the pool's vocabulary), which environment runs it (``workspace`` for code-writing agents,
``desktop`` for GUI agents, ``phone`` for phone agents), ``setup`` steps that write the start
files, the ``outputs`` the agent is expected to produce, and an OSWorld-style ``evaluator``
block (:mod:`agentlab.eval.evaluators`). An optional ``reference_solution`` exists to test the
task itself (a correct program must score 1, the untouched start state 0); it is never
shown to an agent.

A phone task's ``setup`` paths are device paths without the leading ``/`` (they are written
into a folder that mirrors the device and pushed from there), its ``apps`` are the packages
restarted after the push so they load their data, its ``outputs`` are absolute device paths
pulled back into that folder before judging, and its reference solution is ``language:
"actions"``: phone actions as an agent writes them (``tap(2)``), one per line, replayed on
the device.

These tasks are written for this project; the public benchmark lists are for evaluation of
routing only and are not copied here.
"""

from __future__ import annotations

import configparser
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agentlab.config import error_line, read_json_object
from agentlab.errors import DataError
from agentlab.eval.evaluators import EvalResult, EvaluatorSpec, evaluate
from agentlab.eval.getters import FinalState
from agentlab.metaagent.decision import PlanStep
from agentlab.paths import data_dir

Writer = Callable[..., None]
WRITERS: dict[str, Writer] = {}

#: the domain of tasks that touch two applications or files (data/tasks/pc-*.json, a PC-Eval
#: analog): no single agent's domain covers them, so it is a task domain outside the pool's
#: vocabulary; ground-truth routing sends them to the ``general`` agents (``episode.gt_agent``)
MULTI_APP_DOMAIN = "multi_apps"


def writer(name: str) -> Callable[[Writer], Writer]:
    """Register a setup step ``fn(path: Path, **config)`` under ``name``."""

    def deco(fn: Writer) -> Writer:
        WRITERS[name] = fn
        return fn

    return deco


class Solution(BaseModel):
    """A known-good program for the task (tests only)."""

    language: Literal["python", "bash", "actions"]
    code: str  #: the program; for ``actions``, one action call per line (``tap(2)``)


class ExecTask(BaseModel):
    """One execution task, as stored in ``data/tasks/*.json``."""

    model_config = ConfigDict(extra="forbid")

    id: str
    instruction: str
    domain: str
    env: Literal["workspace", "desktop", "phone"] = "workspace"
    apps: list[str] = Field(default_factory=list)
    setup: list[dict[str, Any]] = Field(default_factory=list)
    outputs: list[str] = Field(default_factory=list)
    evaluator: EvaluatorSpec
    reference_solution: Solution | None = None
    #: the gold agent (a pool name) for ground-truth routing; absent: the pool's agent for domain + env
    agent: str | None = None
    #: a multi-agent task's gold plan, in order (``agentlab exec --router gt`` executes it); None: one agent
    plan: list[PlanStep] | None = None
    source: str | None = Field(None, exclude=True)

    def problems(self) -> list[str]:
        from agentlab.pool import ALL_DOMAINS

        known = [*ALL_DOMAINS, MULTI_APP_DOMAIN]
        out = [] if self.domain in known else [f"domain {self.domain!r} is not one of {known}"]
        for i, step in enumerate(self.setup):
            kind = step.get("type")
            if kind not in WRITERS:
                out.append(f"setup[{i}]: unknown type {kind!r}; known: {', '.join(sorted(WRITERS))}")
            if not isinstance(step.get("path"), str):
                out.append(f"setup[{i}]: needs a relative 'path'")
        if self.env == "phone":
            out += [f"outputs: {o!r} is not an absolute device path (/sdcard/...)" for o in self.outputs if not o.startswith("/")]
            if not self.apps:
                out.append("apps: a phone task names the app package(s) to start, e.g. [\"com.example.clock\"]")
        sol = self.reference_solution
        if sol is not None and (sol.language == "actions") != (self.env == "phone"):
            out.append(f"reference_solution: language {sol.language!r} does not fit env {self.env!r} "
                       "(phone tasks replay 'actions'; the others run python or bash)")
        if self.plan is not None and not self.plan:
            out.append("plan: an empty list; leave 'plan' out for a single-agent task")
        if self.plan is not None and self.agent is not None:
            out.append("plan and agent: give one of them (a plan names an agent per step)")
        return out + self.evaluator.problems()

    def prepare(self, root: str | Path) -> None:
        """Write the start state into ``root`` (a workspace or the folder a desktop app opens)."""
        state = FinalState(Path(root))
        for step in self.setup:
            cfg = dict(step)
            kind = cfg.pop("type")
            target = state.path(cfg.pop("path"))
            target.parent.mkdir(parents=True, exist_ok=True)
            WRITERS[kind](target, **cfg)

    def evaluate(self, root: str | Path, *, env: Any = None, values: dict[str, Any] | None = None) -> EvalResult:
        """Score the final state found in ``root`` (and ``env``, if a getter needs it)."""
        return evaluate(self.evaluator, FinalState(Path(root), env=env, values=dict(values or {})))


def load_task(path: str | Path) -> ExecTask:
    """Read and check one task file; any problem raises :class:`DataError` naming the file."""
    path = Path(path)
    raw = read_json_object(path, what="task file", error=DataError)
    try:
        task = ExecTask.model_validate({**raw, "source": str(path)})
    except ValidationError as exc:
        raise DataError(error_line(exc.errors()[0]), where=path) from None
    problems = task.problems()
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise DataError(problems[0] + more, where=path)
    if task.id != path.stem:
        raise DataError(f"id {task.id!r} differs from the file name; name the file {task.id}.json", where=path)
    return task


def tasks_dir() -> Path:
    return data_dir() / "tasks"


def load_tasks(folder: str | Path | None = None) -> list[ExecTask]:
    """Every task in ``folder`` (default ``data/tasks``), sorted by id."""
    return [load_task(p) for p in task_files(folder)]


def task_files(folder: str | Path | None = None) -> list[Path]:
    """The task files of ``folder`` (default ``data/tasks``); none at all is an error."""
    folder = Path(folder) if folder is not None else tasks_dir()
    if folder.is_file():
        raise DataError("is a file; expected a folder of task files (--dir)", where=folder)
    if not folder.is_dir():
        raise DataError("task folder not found", where=folder)
    files = sorted(p for p in folder.glob("*.json") if p.is_file())
    if not files:
        raise DataError("no task files (*.json) in this folder", where=folder)
    return files


# -- setup writers --------------------------------------------------------------------------
@writer("write_text")
def _write_text(path: Path, content: str) -> None:
    path.write_text(content, encoding="utf-8")


@writer("write_json")
def _write_json(path: Path, value: Any) -> None:
    path.write_text(json.dumps(value, indent=2) + "\n", encoding="utf-8")


@writer("write_ini")
def _write_ini(path: Path, sections: dict[str, dict[str, str]]) -> None:
    parser = configparser.ConfigParser(interpolation=None)
    parser.read_dict({s: {k: str(v) for k, v in kv.items()} for s, kv in sections.items()})
    with open(path, "w", encoding="utf-8") as fh:
        parser.write(fh)


@writer("write_xlsx")
def _write_xlsx(path: Path, sheets: dict[str, list[list[Any]]]) -> None:
    import openpyxl

    wb = openpyxl.Workbook()
    wb.remove(wb.active)
    for name, rows in sheets.items():
        ws = wb.create_sheet(name)
        for row in rows:
            ws.append(row)
    wb.save(path)


@writer("write_docx")
def _write_docx(path: Path, paragraphs: list[str | dict[str, Any]]) -> None:
    """Paragraphs are text, or ``{"text", "style", "bold", "italic"}``."""
    import docx

    doc = docx.Document()
    for p in paragraphs:
        spec = {"text": p} if isinstance(p, str) else p
        para = doc.add_paragraph(style=spec.get("style"))
        run = para.add_run(spec["text"])
        run.bold = bool(spec["bold"]) if "bold" in spec else None
        run.italic = bool(spec["italic"]) if "italic" in spec else None
    doc.save(str(path))


@writer("write_pptx")
def _write_pptx(path: Path, slides: list[dict[str, Any]]) -> None:
    """Slides are ``{"title": ..., "lines": [...]}`` on the title-and-content layout."""
    import pptx

    prs = pptx.Presentation()
    for s in slides:
        slide = prs.slides.add_slide(prs.slide_layouts[1])
        slide.shapes.title.text = s.get("title", "")
        body = slide.placeholders[1].text_frame
        lines = list(s.get("lines", []))
        body.text = lines[0] if lines else ""
        for line in lines[1:]:
            body.add_paragraph().text = line
    prs.save(str(path))


@writer("write_image")
def _write_image(path: Path, width: int, height: int, colour: list[int], mode: str = "RGB") -> None:
    from PIL import Image

    Image.new("RGB", (width, height), tuple(colour)).convert(mode).save(path)
