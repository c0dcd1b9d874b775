"""The code agent (runner ``code``): carries a task out by writing programs in a workspace.

The pool's CLI agents (SheetAgent, WordAgent, CoderAgent, ...) are all this one loop with a
different system prompt: the document's applications, capabilities and limitations, plus
the runner's options (``libraries: [openpyxl]``), filled into ``data/prompts/code/system.txt``.
The conversation is multi-turn: the first user turn shows the task and the workspace's files,
each later one what the previous program did (exit code, stdout, stderr). Each reply is read
by the workspace reply protocol (:mod:`agentlab.envs.actions.workspace`) through the shared
:func:`~agentlab.dialogue.ask.ask_until_parsed` loop, which re-asks with
``code/correction`` when a reply is unusable (no program, two programs, an unknown language).

The episode ends when a reply's last line is DONE or FAIL (a program in a DONE reply runs
first and must succeed), when every attempt at a usable reply failed, or when ``max_steps``
replies have been acted on. Every attempt is recorded, each with the messages it was sent.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from agentlab.agents.base import AgentResult, Status, runner_config
from agentlab.agents.context import RunContext
from agentlab.dialogue.ask import Attempt, ask_until_parsed
from agentlab.dialogue.templates import load_template, template_hashes
from agentlab.envs.actions.workspace import WORKSPACE, Reply
from agentlab.envs.base import Env
from agentlab.envs.task_env import TaskEnvOptions
from agentlab.errors import EnvironmentUnavailableError
from agentlab.llm.base import ChatMessage, SamplingParams
from agentlab.pool.document import AgentDocument

log = logging.getLogger(__name__)

PROMPTS = ("code/system", "code/task", "code/step", "code/correction")

#: where the resources' locations come from when the document does not give them
SEARCH_ENV, DRIVE_ENV = "AGENTLAB_SEARCH_URL", "AGENTLAB_DRIVE_FOLDER"
#: and the variables the agent's programs read them from
SEARCH_ENV_IN, DRIVE_ENV_IN = "SEARCH_URL", "DRIVE_FOLDER"
RESOURCE_TEXT = {
    "search": (f"Web search: send GET to the URL in the environment variable {SEARCH_ENV_IN} with ?q=<words>; the reply is "
               'JSON {"results": [{"title": ..., "url": ..., "snippet": ...}]}.'),
    "drive": (f"Google Drive: your Drive is the folder named by the environment variable {DRIVE_ENV_IN}; read, "
              "upload (copy into it) and organise files there."),
}


class CodeAgentOptions(BaseModel):
    """A document's ``runner_options`` for the code runner."""

    model_config = ConfigDict(extra="forbid")

    libraries: list[str] = Field(default_factory=list, description="libraries the system prompt says are installed")
    #: a toolkit (agentlab.toolkits) the programs may import; its functions are listed in the
    #: prompt. A tools specialist's document names one, so its code mode is this agent.
    toolkit: str | None = None
    max_attempts: int = Field(3, ge=1, description="asks per step for a usable reply")
    max_new_tokens: int = Field(1024, ge=16)
    temperature: float = Field(0.0, ge=0.0, description="first attempt (0 = greedy)")
    retry_temperature: float = Field(0.7, ge=0.0, description="retries sample, so a retry can differ")
    seed: int = 0
    #: outside resources the agent's job needs (Searcher: ``search``; GoogleDrive: ``drive``)
    needs: list[Literal["search", "drive"]] = Field(default_factory=list)
    search_url: str | None = Field(None, description=f"search endpoint (else ${SEARCH_ENV})")
    drive_folder: Path | None = Field(None, description=f"folder standing in for the Drive (else ${DRIVE_ENV})")


class CodeAgent:
    """Multi-turn program-writing agent for a :class:`~agentlab.envs.workspace_env.WorkspaceEnv`."""

    env_kind: ClassVar[str] = "workspace"

    def __init__(self, document: AgentDocument, options: Mapping[str, Any] | None = None) -> None:
        self.options = runner_config(CodeAgentOptions, document, options)
        self.document = document
        self.resources = _resources(self.options, document)
        self.templates = {name: load_template(name) for name in PROMPTS}

    # -- prompts ---------------------------------------------------------------------
    def system_prompt(self) -> str:
        libs = self.options.libraries
        doc = self.document
        return self.templates["code/system"].render(
            agent=doc.name, applications=doc.applications, capabilities=doc.capabilities,
            limitations=doc.limitations, protocol=WORKSPACE.doc(),
            libraries="\n".join(
                ([f"Installed libraries you may use: {', '.join(libs)}."] if libs else [])
                + ([self._toolkit_note()] if self.options.toolkit else [])
                + [RESOURCE_TEXT[name] for name in self.resources]),
        ).strip()

    def _toolkit_note(self) -> str:
        from agentlab.toolkits import load_toolkit

        kit = load_toolkit(str(self.options.toolkit))
        return (f"Your toolkit is importable: from agentlab.toolkits.{kit.name} import {', '.join(kit.tools)}\n"
                + kit.doc())

    def env_options(self, base: TaskEnvOptions) -> TaskEnvOptions:
        """The workspace this agent needs: network for a search endpoint, the Drive folder writable."""
        if not self.resources:
            return base
        ws = base.workspace
        env = dict(ws.extra_env)
        update: dict[str, Any] = {}
        if "search" in self.resources:
            env[SEARCH_ENV_IN] = self.resources["search"]
            update["network"] = True
        if "drive" in self.resources:
            env[DRIVE_ENV_IN] = self.resources["drive"]
            update["allow_write"] = [*ws.allow_write, Path(self.resources["drive"])]
        return dataclasses.replace(base, workspace=ws.model_copy(update={**update, "extra_env": env}))

    def params(self, attempt: int) -> SamplingParams:
        o = self.options
        return SamplingParams(max_new_tokens=o.max_new_tokens, temperature=o.temperature if attempt == 0 else o.retry_temperature,
                              seed=o.seed + attempt)

    # -- the episode -----------------------------------------------------------------
    def run(self, env: Env, task_instruction: str, ctx: RunContext) -> AgentResult:
        """Converse and act until DONE/FAIL, an unusable reply after every attempt, or ``ctx.max_steps``."""
        recorder, max_steps, llm = ctx.recorder, ctx.max_steps, ctx.llm()
        recorder.meta.extra.update(prompts=template_hashes(PROMPTS), runner="code", runner_options=self.options.model_dump())
        obs = env.reset(task_instruction)
        messages = [
            ChatMessage("system", self.system_prompt()),
            ChatMessage("user", self.templates["code/task"].render(task=task_instruction, observation=obs.text).strip()),
        ]
        sent = 0  # messages already written to the trajectory
        steps, error = 0, None
        status: Status = "max_steps"

        t_mark = time.perf_counter()  # model time is charged from here to the record that used it

        def record_attempt(a: Attempt[Reply]) -> None:
            nonlocal sent, t_mark
            if not a.ok:  # a rejected reply is a record of its own, with the model time it took
                now = time.perf_counter()
                recorder.record(obs, None, action_text=a.reply, error=f"step {steps + 1}, attempt {a.index + 1}: {a.problem}",
                                info={"attempt": a.index + 1, "messages": [m.as_dict() for m in a.messages[sent:]],
                                      "timing": {"model_s": round(now - t_mark, 6), "program_s": 0.0,
                                                 "step_s": round(time.perf_counter() - t_mark, 6)}})
                sent = len(a.messages)
                t_mark = time.perf_counter()

        while steps < max_steps:
            t_step = t_mark = time.perf_counter()
            asked = ask_until_parsed(
                llm, messages, WORKSPACE.parse_reply, max_attempts=self.options.max_attempts, params=self.params,
                correction=self.templates["code/correction"], on_attempt=record_attempt, label="code agent reply",
            )
            model_s = time.perf_counter() - t_mark  # the usable reply's own call (rejected ones are recorded above)
            t_step = t_mark
            last = asked.attempts[-1]
            if asked.value is None:
                status = "failed"
                error = f"{len(asked.attempts)} unusable replies in a row; last: {last.problem}"
                break
            reply = asked.value
            new = [m.as_dict() for m in last.messages[sent:]]
            messages = [*last.messages, ChatMessage("assistant", last.reply)]
            sent = len(messages)
            steps += 1
            note = ""
            ok = True
            program_s = 0.0
            ran: dict[str, object] = {}
            if reply.program is not None:
                stepped = env.step(reply.program)
                obs_after = stepped.observation
                program_s = float(stepped.info.get("duration_s", 0.0))
                ran = {k: stepped.info[k] for k in ("returncode", "timed_out", "stdout", "stderr") if k in stepped.info}
                ok = bool(stepped.info.get("ok", True))
                error = None if ok else f"step {steps}: program exited with {stepped.info.get('returncode')}"
                if reply.status == "done" and not ok:
                    note = "Your reply said it was finished, but its program failed, so the task goes on.\n"
            # DONE needs its program to succeed; FAIL ends the episode whatever its program did
            end_now = reply.status == "failed" or (reply.status == "done" and ok)
            recorder.record(obs, reply.program or reply.end, action_text=reply.text, thought=_prose(reply.text),
                            done=end_now, info={"attempt": last.index + 1, "messages": [*new, {"role": "assistant", "content": last.reply}],
                                                "end": reply.status, "program": ran, "timing": {
                                                    "model_s": round(model_s, 6), "program_s": round(program_s, 6),
                                                    "step_s": round(time.perf_counter() - t_step, 6)}})
            if reply.program is not None:
                obs = obs_after
            if end_now:
                status = "done" if reply.status == "done" else "failed"
                if status == "failed":
                    error = "the agent gave up (FAIL)"
                break
            messages.append(ChatMessage("user", self.templates["code/step"].render(note=note, observation=obs.text).strip()))
        outcome = AgentResult(status=status, steps=steps, error=error)
        if status != "done" and not (recorder.steps and recorder.steps[-1].done):
            recorder.record(obs, None, done=True, error=error)
        return outcome


def _resources(options: CodeAgentOptions, document: AgentDocument) -> dict[str, str]:
    """name -> location of every resource the agent needs; one that is not configured means the
    agent cannot run here (a harness error naming what to set, never a silent offline run)."""
    out: dict[str, str] = {}
    where = document.path or document.name
    for name in options.needs:
        if name == "search":
            url = options.search_url or os.environ.get(SEARCH_ENV)
            if not url:
                raise EnvironmentUnavailableError(
                    f"{document.name} needs a web search endpoint and none is configured; set {SEARCH_ENV} "
                    "(or runner_options.search_url) to run it", where=where)
            out[name] = url
        else:
            folder = options.drive_folder or (Path(os.environ[DRIVE_ENV]) if os.environ.get(DRIVE_ENV) else None)
            if folder is None or not Path(folder).is_dir():
                raise EnvironmentUnavailableError(
                    f"{document.name} needs a Drive folder and " + ("none is configured" if folder is None else f"{folder} does not exist")
                    + f"; set {DRIVE_ENV} (or runner_options.drive_folder) to a folder to run it", where=where)
            out[name] = str(Path(folder).resolve())
    return out


def _prose(text: str) -> str:
    """The reply without its fenced program: the model's thought."""
    out, inside = [], False
    for line in text.splitlines():
        if line.strip().startswith("```"):
            inside = not inside
            continue
        if not inside:
            out.append(line)
    return "\n".join(out).strip()
