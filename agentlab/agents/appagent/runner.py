"""Runners ``appagent`` (phone) and ``gui`` (desktop GUI): the AppAgent deploy loop behind :class:`Agent`.

The pool's mobile documents and desktop GUI documents name these runners. Both carry a task
out with :meth:`~agentlab.agents.appagent.AppAgent.deploy` on the env they are given; which
env that is (:attr:`env_kind`) decides which env the episode runner builds from a task file
(:data:`~agentlab.tasks.env_kinds.ENV_KINDS`: a phone for ``appagent``, a desktop for ``gui``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from agentlab.agents.appagent.agent import AppAgent
from agentlab.agents.appagent.core import AppAgentConfig
from agentlab.agents.base import AgentResult, Status, runner_config
from agentlab.agents.context import RunContext
from agentlab.envs.base import Env
from agentlab.pool.document import AgentDocument


class AppAgentRunner:
    """AppAgent's deployment phase on a phone; ``runner_options`` are :class:`AppAgentConfig` fields."""

    env_kind: ClassVar[str] = "phone"
    #: :class:`AppAgentConfig` values of this runner that a document's ``runner_options`` may override
    defaults: ClassVar[Mapping[str, Any]] = {}

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


class GuiRunner(AppAgentRunner):
    """The same loop on a desktop (accessibility-tree elements, PC-Agent's action space)."""

    env_kind: ClassVar[str] = "desktop"
    #: a desktop application lists many more elements than a phone screen: LibreOffice Calc's
    #: toolbars alone take the first ~60 numbers, so the Name Box, the sheet and a save dialog's
    #: buttons come after them (the desktop env itself lists at most 200)
    #: ``runner_options: {actions: typed}`` makes a desktop specialist reply with typed GUI actions
    #: (:mod:`agentlab.agents.gui_actions`): under the grammar the embedded model's every reply is an
    #: action on a visible mark, where the raw space let it answer with the prompt's own placeholder.
    #: Not the default yet: the scripted LibreOffice end-to-end test (tests/episode/test_desktop_tasks.py)
    #: drives the raw space (typing "A4\n" into the focus), and has not been moved over
    defaults: ClassVar[Mapping[str, Any]] = {"max_elements": 200}
