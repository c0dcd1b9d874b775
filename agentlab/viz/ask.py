"""A team's question to a person, asked in a notebook (an :data:`~agentlab.dialogue.person.Ask`).

A running cell cannot receive widget clicks (the kernel is busy running it), so the question
is shown as an ipywidgets card -- the step, the agent, what the reviewer saw, how to answer --
and the answer is typed into Jupyter's own input box (``input()``), which blocks the cell
politely until the person replies; an answer that cannot be read is asked again. The card
keeps the conversation (question, answer) so the notebook shows what was decided.

Under papermill (or any kernel without a front end for input), ``input()`` is refused; the
answers given in advance are used instead (:class:`~agentlab.dialogue.person.ScriptedAnswers`,
``yes`` when none are left), so a papermill run never hangs.
"""

from __future__ import annotations

import html
import logging
from collections.abc import Callable
from typing import Any

from agentlab.errors import ConfigError
from agentlab.dialogue.person import Answer, Question, ScriptedAnswers, parse_answer

log = logging.getLogger(__name__)


class NotebookAsk:
    """Ask in a notebook; ``answers`` (texts) stand in where nobody can type (papermill)."""

    def __init__(self, answers: list[str] | None = None, *, read: Callable[[str], str] = input,
                 show: bool = True) -> None:
        self.scripted = ScriptedAnswers.of(answers or [])
        self.scripted.warn_when_out = False  # the card shows the default answer ("no scripted answer left")
        self.read = read
        self.show = show
        self.log: list[tuple[Question, Answer, str]] = []  #: (question, answer, "person" | "scripted")
        self._card: Any = None

    def card_html(self) -> str:
        """The conversation so far as HTML (what the card shows)."""
        rows = []
        for q, a, who in self.log:
            rows.append(f"<p><b>step {q.step} ({html.escape(q.agent)}), {q.kind}:</b> {html.escape(q.text)}<br>"
                        f"&rarr; <i>{who}:</i> <code>{html.escape(a.text or a.choice)}</code></p>")
        return "<div class='agentlab-cola-ask'><h4>COLA asks</h4>" + "".join(rows) + "</div>"

    def _display(self, pending: Question | None) -> None:
        if not self.show:
            return
        try:
            import ipywidgets as w
            from IPython.display import display
        except ImportError:
            return
        body = self.card_html()
        if pending is not None:
            body += f"<pre>{html.escape(pending.prompt())}</pre>"
        if self._card is None:
            self._card = w.HTML(body)
            display(self._card)
        else:
            self._card.value = body

    def __call__(self, question: Question) -> Answer:
        self._display(question)
        prompt = f"step {question.step}: " + " | ".join(("yes", "no", "stop", "retry[: ...]", "reassign AGENT", "backtrack K[: ...]")) + " > "
        answer, who = None, "person"
        while answer is None:
            try:
                text = self.read(prompt)
            except Exception as exc:  # papermill / no front end: StdinNotImplementedError, EOFError
                log.info("no one to ask in this kernel (%s); using the scripted answer", type(exc).__name__)
                answer, who = self.scripted(question), "scripted"
                break
            try:
                answer = parse_answer(text)
            except ConfigError as exc:
                log.warning("%s", exc.message)
        self.log.append((question, answer, who))
        self._display(None)
        return answer
