"""An action space as an object: the actions a model may use in one kind of environment.

An environment hands out its space (``env.actions``); agents ask it for the prompt's action
list (:meth:`ActionSpace.doc`), a short example call (:meth:`ActionSpace.example`) and to
parse a model's text into an action (:meth:`ActionSpace.parse`); environments check
membership (``action in space``). Action classes join a space with its :meth:`ActionSpace.action`
decorator, so the names the parser accepts and the list the prompt shows come from one place.
The space's :attr:`~ActionSpace.name` is what records (configs, trajectories, CLI flags) carry;
:func:`agentlab.envs.actions.action_space` turns a name back into the object.
"""

from __future__ import annotations

from collections.abc import Callable

from agentlab.envs.actions.base import Action, register_type
from agentlab.envs.actions.parse import parse_action_text


class ActionSpace:
    """A named set of action classes, in the order the prompt lists them."""

    def __init__(self, name: str, description: str = "") -> None:
        self.name = name
        #: One line for documentation ("AppAgent's phone actions").
        self.description = description
        #: call name (lower case, aliases included) -> class, in registration order
        self._by_name: dict[str, type[Action]] = {}
        self._classes: list[type[Action]] = []

    # -- building ----------------------------------------------------------------------
    def action(self, *names: str) -> Callable[[type[Action]], type[Action]]:
        """Class decorator: add the class to this space, callable as any of ``names``
        (the first is its ``call_name`` and record type)."""

        def deco(cls: type[Action]) -> type[Action]:
            cls.call_name = names[0]
            cls.aliases = names
            cls.space = self.name
            register_type(cls)
            for n in names:
                self._by_name[n.lower()] = cls
            self._classes.append(cls)
            return cls

        return deco

    # -- reading -----------------------------------------------------------------------
    @property
    def classes(self) -> tuple[type[Action], ...]:
        """The action classes, in the order the prompt lists them."""
        return tuple(self._classes)

    @property
    def terminal(self) -> type[Action]:
        """The action that ends an episode (exit / stop)."""
        return next(c for c in self._classes if c.terminal)

    def call_names(self) -> str:
        """``"tap(), long_press(), ..."`` for error messages."""
        return ", ".join(f"{c.call_name}()" for c in self._classes)

    def doc(self) -> str:
        """The action list for a prompt, generated from the classes' docstrings."""
        return "\n".join(f"- {cls.doc_line()}" for cls in self._classes)

    def example(self) -> str:
        """A short example call for the prompt's format line (the first action's example)."""
        for cls in self._classes:
            ex = cls.doc_example()
            if ex:
                return ex
        return f"{self._classes[0].call_name}()"

    def parse(self, text: str) -> Action:
        """The first action of this space in ``text`` (see :func:`parse_action_text`)."""
        return parse_action_text(text, self._by_name, self.name)

    def accepts(self, action: Action) -> bool:
        """True when ``action`` is one of this space's actions."""
        return type(action) in self._classes

    def __contains__(self, action: object) -> bool:
        return isinstance(action, Action) and self.accepts(action)

    def __repr__(self) -> str:
        return f"ActionSpace({self.name!r}: {self.call_names()})"
