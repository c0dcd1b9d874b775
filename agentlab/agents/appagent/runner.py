"""Runners ``appagent`` (phone) and ``gui`` (desktop GUI): the AppAgent deploy loop behind :class:`Agent`.

The pool's mobile documents and desktop GUI documents name these runners. Both carry a task
out with :meth:`~agentlab.agents.appagent.AppAgent.deploy` on the env they are given; which
env that is (:attr:`env_kind`) decides which env the episode runner builds from a task file
(:data:`~agentlab.tasks.env_kinds.ENV_KINDS`: a phone for ``appagent``, a desktop for ``gui``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from pathlib import Path

from agentlab.agents.appagent.agent import AppAgent
from agentlab.agents.appagent.core import AppAgentConfig
from agentlab.agents.base import AgentResult, Status, build_agent, runner_config
from agentlab.agents.context import RunContext
from agentlab.agents.tools import ToolAgent
from agentlab.envs.base import Env
from agentlab.envs.workspace import Workspace, WorkspaceConfig
from agentlab.envs.workspace_env import WorkspaceEnv
from agentlab.errors import ConfigError, ContextOverflowError
from agentlab.paths import agents_dir
from agentlab.pool.document import AgentDocument, load_document


class AppAgentRunner:
    """AppAgent's deployment phase on a phone; ``runner_options`` are :class:`AppAgentConfig` fields."""

    env_kind: ClassVar[str] = "phone"
    #: :class:`AppAgentConfig` values of this runner that a document's ``runner_options`` may override
    defaults: ClassVar[Mapping[str, Any]] = {"actions": "typed"}

    def __init__(self, document: AgentDocument, options: Mapping[str, Any] | None = None) -> None:
        raw = {"app": document.domain, **self.defaults, **dict(options or {})}
        self.config = runner_config(AppAgentConfig, document, raw)
        self.document = document

    def run(self, env: Env, task_instruction: str, ctx: RunContext) -> AgentResult:
        """AppAgent's deployment loop, recording into the episode's own recorder."""
        agent = AppAgent(ctx.llm(), self.config.model_copy(update={"max_steps": ctx.max_steps}))
        res = agent.deploy(env, task_instruction, recorder=ctx.recorder)
        status: Status = "done" if res.status == "done" else "max_steps" if res.status == "max_steps" else "failed"
        return AgentResult(status=status, steps=res.steps, error=res.error)


#: how a desktop GUI specialist carries a task out: ``gui`` (the application's window), ``file``
#: (its files, through the workspace specialist named by ``file_agent``, with the application
#: stopped), ``auto`` (the files when that specialist's toolkit can call anything on them, else the GUI)
ROUTES = ("auto", "gui", "file")


class GuiRunner(AppAgentRunner):
    """The same loop on a desktop (accessibility-tree elements, PC-Agent's action space).

    A desktop specialist whose document names a ``file_agent`` (``runner_options``) may carry the
    task out through the application's files instead, as Agent S3's and CoAct-1's coding agents do:
    where the state lives in a file a toolkit can change with the application closed (a
    spreadsheet, a document, a browser or mail profile's preferences). The application is stopped
    first (it writes its profile as on a normal exit, and nothing can overwrite the change after),
    then the named workspace specialist (its toolkit, grammar, adapter and priors) acts on the
    task's files in a sandboxed workspace over the same folder. ``route`` picks the path
    (:data:`ROUTES`); the row records the one taken (``route``: ``gui`` or ``file``)."""

    env_kind: ClassVar[str] = "desktop"
    #: a desktop application lists many more elements than a phone screen: LibreOffice Calc's
    #: toolbars alone take the first ~60 numbers, so the Name Box, the sheet and a save dialog's
    #: buttons come after them (the desktop env itself lists at most 200)
    #: A desktop specialist replies with typed GUI actions (:mod:`agentlab.agents.gui_actions`) and
    #: its application's learned skills (:mod:`agentlab.agents.gui_skills`): under the grammar the
    #: embedded model's every reply is an action on a visible mark or a skill call with the request's
    #: values, where the raw space let it answer with the prompt's own placeholder.
    #: ``runner_options: {actions: raw}`` is the raw-action ablation (AppAgent's own action space)
    defaults: ClassVar[Mapping[str, Any]] = {"max_elements": 200, "actions": "typed"}

    def __init__(self, document: AgentDocument, options: Mapping[str, Any] | None = None) -> None:
        raw = dict(options or {})
        self.route: str = str(raw.pop("route", "auto"))
        self.file_agent: str | None = raw.pop("file_agent", None)
        if self.route not in ROUTES:
            raise ConfigError(f"runner_options.route: {self.route!r} is not one of {', '.join(ROUTES)}",
                              where=document.path or document.name)
        if self.route == "file" and not self.file_agent:
            raise ConfigError("runner_options.route: 'file' needs runner_options.file_agent (a workspace "
                              "specialist whose toolkit reads the application's files)", where=document.path or document.name)
        super().__init__(document, raw)
        # resolved once, here: a misspelt file_agent is one line when the agent is built, not a
        # harness error on every episode that would have taken the file route
        self.specialist: ToolAgent | None = (self._file_specialist() if self.route != "gui" and self.file_agent
                                             else None)

    def run(self, env: Env, task_instruction: str, ctx: RunContext) -> AgentResult:
        files = getattr(env, "task_files", None)
        specialist = self.specialist
        if specialist is not None and files is not None:
            if self.route == "file" or specialist.can_act_on(Path(files), task_instruction):
                return self._through_files(specialist, env, Path(files), task_instruction, ctx)
        res = super().run(env, task_instruction, ctx)
        res.route = "gui"
        return res

    def _file_specialist(self) -> ToolAgent:
        """The workspace specialist named by ``file_agent``: a document beside this one, else in the pool's folder."""
        assert self.file_agent is not None
        here = Path(self.document.path).parent if self.document.path else agents_dir()
        found = [p for p in (here / f"{self.file_agent}.md",) if p.is_file()] or sorted(agents_dir().rglob(f"{self.file_agent}.md"))
        if not found:
            raise ConfigError(f"runner_options.file_agent: no agent document {self.file_agent}.md beside this one "
                              f"or in {agents_dir()}", where=self.document.path or self.document.name)
        agent = build_agent(load_document(found[0]), seed=self.config.seed)
        if not isinstance(agent, ToolAgent):
            raise ConfigError(f"runner_options.file_agent: {self.file_agent} is not a tool specialist (runner: tools)",
                              where=self.document.path or self.document.name)
        return agent

    def _through_files(self, specialist: ToolAgent, env: Env, files: Path, task_instruction: str,
                       ctx: RunContext) -> AgentResult:
        release = getattr(env, "release_files", None)
        if release is not None:
            release()  # the application writes its state and stops: nothing overwrites the change
        ctx.recorder.meta.extra["route"] = {"route": "file", "file_agent": self.file_agent}
        with Workspace(root=files, config=WorkspaceConfig()) as ws:
            try:
                res = specialist.run(WorkspaceEnv(ws), task_instruction, ctx)
            except ContextOverflowError as exc:  # the row still says which path was taken
                return AgentResult(status="context_overflow", steps=ctx.actions_recorded(), error=exc.message, route="file")
        res.route = "file"
        return res
