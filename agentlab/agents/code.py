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
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from agentlab.agents.base import AgentResult, runner_config
from agentlab.agents.context import RunContext
from agentlab.agents.steps import ChatSteps, Episode
from agentlab.dialogue.ask import Attempt
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


class CodeAgent(ChatSteps[Episode, Reply]):
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

    # -- the episode -----------------------------------------------------------------
    def run(self, env: Env, task_instruction: str, ctx: RunContext) -> AgentResult:
        """Converse and act until DONE/FAIL, an unusable reply after every attempt, or ``ctx.max_steps``."""
        ctx.recorder.meta.extra.update(prompts=template_hashes(PROMPTS), runner="code", runner_options=self.options.model_dump())
        obs = env.reset(task_instruction)
        messages = [
            ChatMessage("system", self.system_prompt()),
            ChatMessage("user", self.templates["code/task"].render(task=task_instruction, observation=obs.text).strip()),
        ]
        ep = Episode(env, task_instruction, ctx, ctx.llm(), messages, obs=obs)
        return self.chat_loop(ep, WORKSPACE.parse_reply, max_attempts=self.options.max_attempts,
                              correction=self.templates["code/correction"], label="code agent reply")

    def step_params(self, ep: Episode) -> Callable[[int], SamplingParams]:
        """Greedy first (by default), sampled retries; the same seeds every step."""
        o = self.options
        return lambda attempt: SamplingParams(max_new_tokens=o.max_new_tokens, seed=o.seed + attempt,
                                              temperature=o.temperature if attempt == 0 else o.retry_temperature)

    def rejected_info(self, ep: Episode) -> dict[str, Any]:
        """A rejected reply's record carries the model time it took."""
        now = time.perf_counter()
        return {"timing": {"model_s": round(now - ep.t_mark, 6), "program_s": 0.0,
                           "step_s": round(time.perf_counter() - ep.t_mark, 6)}}

    def act(self, ep: Episode, last: Attempt[Reply], reply: Reply) -> str | None:
        """Run the reply's program; DONE needs it to succeed, FAIL ends the episode whatever it did."""
        model_s = time.perf_counter() - ep.t_mark  # the usable reply's own call (rejected ones are recorded apart)
        t_step = ep.t_mark
        new = ep.accept(last, last.reply)
        assert ep.obs is not None  # the code agent's records show the workspace
        note, ok, program_s, obs_after = "", True, 0.0, ep.obs
        ran: dict[str, object] = {}
        if reply.program is not None:
            stepped = ep.env.step(reply.program)
            obs_after = stepped.observation
            program_s = float(stepped.info.get("duration_s", 0.0))
            ran = {k: stepped.info[k] for k in ("returncode", "timed_out", "stdout", "stderr") if k in stepped.info}
            ok = bool(stepped.info.get("ok", True))
            ep.error = None if ok else f"step {ep.steps}: program exited with {stepped.info.get('returncode')}"
            if reply.status == "done" and not ok:
                note = "Your reply said it was finished, but its program failed, so the task goes on.\n"
        end_now = reply.status == "failed" or (reply.status == "done" and ok)
        ep.ctx.recorder.record(ep.obs, reply.program or reply.end, action_text=reply.text, thought=_prose(reply.text),
                               done=end_now, info={"attempt": last.index + 1, "messages": new, "end": reply.status,
                                                   "program": ran, "timing": {
                                                       "model_s": round(model_s, 6), "program_s": round(program_s, 6),
                                                       "step_s": round(time.perf_counter() - t_step, 6)}})
        ep.obs = obs_after
        if end_now:
            ep.status = "done" if reply.status == "done" else "failed"
            if ep.status == "failed":
                ep.error = "the agent gave up (FAIL)"
            return None
        if reply.program is not None and ep.failed_again(repr(reply.program), ok):
            ep.status, ep.error = "failed", f"step {ep.steps}: the same failing program as the step before; stopped (a repeat)"
            return None
        return self.templates["code/step"].render(note=note, observation=ep.obs.text).strip()


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
