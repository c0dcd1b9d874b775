"""Load a YAML file into a pydantic config object, with one error format for every config.

Every configuration file of the project (LLM backend, self-instruct run, AgentToken run,
AppAgent settings, notebook parameters) is read here, so a mistake always reads the same:

    file:line: field.path: what is wrong (got 'value')

The loader refuses, each with one line: a missing file, a folder where the file should be,
bytes that are not UTF-8, an empty file (when the caller needs content), YAML that does not
parse (pointing at the line where the problem is, not the line after it), a top level that
is not a mapping, unknown keys (for models with ``extra="forbid"``; an unknown key beside a
wrapping section such as ``llm:`` too, naming the known ones) and wrong types.

YAML anchors and aliases (``&name`` / ``*name``) are refused in every file read here
(:class:`StrictLoader`): a few lines of nested aliases ("billion laughs") expand to gigabytes
once a value is used, and no configuration of the project needs them.
"""

from __future__ import annotations

import json
import types
import typing
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from agentlab.errors import AgentlabError, ConfigError

M = TypeVar("M", bound=BaseModel)

#: Values longer than this are not quoted back in error messages.
_MAX_VALUE_CHARS = 60


def read_text(path: str | Path, *, what: str = "file", error: type[AgentlabError] = ConfigError) -> str:
    """The UTF-8 text of ``path``; a missing file, a folder or undecodable bytes raise
    ``error`` (a :class:`~agentlab.errors.AgentlabError` subclass) with one line."""
    path = Path(path)
    if path.is_dir():
        raise error(f"is a folder; expected a {what}", where=path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise error(f"{what} not found", where=path) from None
    except PermissionError:
        raise error(f"{what} is not readable (permission denied)", where=path) from None
    except OSError as exc:
        raise error(f"cannot read {what} ({exc.strerror})", where=path) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise error(
            f"not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start}); save it as UTF-8",
            where=f"{path}:{line}",
        ) from None


def read_json_object(path: str | Path, *, what: str = "file", error: type[AgentlabError] = ConfigError) -> dict[str, Any]:
    """The one JSON object a file holds (a task, a thresholds file, an episode header); an
    unreadable, empty, malformed or non-object file raises ``error`` with ``path[:line]``."""
    path = Path(path)
    text = read_text(path, what=what, error=error)
    if not text.strip():
        raise error(f"{what} is empty; it holds one JSON object", where=path)
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise error(f"not valid JSON ({exc.msg})", where=f"{path}:{exc.lineno}") from None
    if not isinstance(raw, dict):
        raise error(f"a {what} holds one JSON object, not a {type(raw).__name__}", where=path)
    return raw


def yaml_error_line(exc: yaml.YAMLError) -> int | None:
    """The 1-based line a YAML error is about.

    PyYAML reports where it *noticed* the problem, which for an unclosed bracket or quote, or
    a key without ``:``, is the next line; its context mark ("while scanning a simple key",
    "while parsing a flow sequence") points at the unfinished thing, which is what to fix.
    For block structure errors (bad indentation) the problem mark is the right line.
    """
    problem = getattr(exc, "problem_mark", None)
    context = getattr(exc, "context_mark", None)
    ctx = str(getattr(exc, "context", "") or "")
    if context is not None and (problem is None or ctx.startswith("while scanning") or "flow" in ctx):
        return context.line + 1
    return problem.line + 1 if problem is not None else None


class AliasRefused(yaml.MarkedYAMLError):
    """An anchor or alias in a configuration file (see :class:`StrictLoader`)."""


class StrictLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that refuses anchors and aliases where they are composed.

    Why: an alias is expanded every time a value is used (turned into Python objects, compared,
    dumped), so nine nested lines of aliases make 10^9 strings: PyYAML has no bound. Refusing at
    composition costs nothing and is checked before any expansion happens.
    """

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
            what = f"alias *{event.anchor}" if isinstance(event, yaml.AliasEvent) else f"anchor &{event.anchor}"
            raise AliasRefused(problem=f"YAML {what}: anchors and aliases are not accepted in configuration "
                                       "files; write the value out", problem_mark=event.start_mark)
        return super().compose_node(parent, index)


def safe_load(text: str) -> Any:
    """``yaml.safe_load`` with anchors and aliases refused (:class:`StrictLoader`)."""
    return yaml.load(text, Loader=StrictLoader)  # a SafeLoader: no Python objects


def compose(text: str) -> yaml.Node | None:
    """``yaml.compose`` with anchors and aliases refused (:class:`StrictLoader`)."""
    return yaml.compose(text, Loader=StrictLoader)


def parse_yaml(text: str, where: str | Path) -> Any:
    """Parse YAML text; a syntax error, an anchor or an alias raises :class:`ConfigError` at ``where:line``."""
    try:
        return safe_load(text)
    except AliasRefused as exc:
        line = exc.problem_mark.line + 1 if exc.problem_mark is not None else None
        raise ConfigError(str(exc.problem), where=f"{where}:{line}" if line else where) from None
    except yaml.YAMLError as exc:
        line = yaml_error_line(exc)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        context = getattr(exc, "context", None)
        msg = f"not valid YAML: {problem}" + (f" ({context})" if context else "")
        raise ConfigError(msg, where=f"{where}:{line}" if line else where) from None


def _node_line(root: yaml.Node | None, loc: tuple[Any, ...]) -> int | None:
    """The 1-based line of the value at ``loc`` (or of the deepest key found) in a YAML tree."""
    node, line = root, None
    for key in loc:
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                if str(k.value) == str(key):
                    line, node = k.start_mark.line + 1, v
                    break
            else:
                return line
        elif isinstance(node, yaml.SequenceNode) and isinstance(key, int) and 0 <= key < len(node.value):
            node = node.value[key]
            line = node.start_mark.line + 1
        else:
            return line
    return line


def line_of(text: str, loc: tuple[Any, ...]) -> int | None:
    """The 1-based line of the key at ``loc`` (a dotted path as a tuple) in YAML ``text``."""
    try:
        return _node_line(compose(text), loc)
    except yaml.YAMLError:
        return None


def _short(value: Any) -> str | None:
    text = repr(value)
    return text if len(text) <= _MAX_VALUE_CHARS else None


def _model_in(annotation: Any) -> tuple[type[BaseModel] | None, bool]:
    """The pydantic model a field's annotation holds, and whether it sits in a container (a
    ``dict``/``list`` of models: the next part of an error's location is a key or an index)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation, False
    args = typing.get_args(annotation)
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        for arg in args:
            found = _model_in(arg)
            if found[0] is not None:
                return found
        return None, False
    if args:
        inner, _ = _model_in(args[-1])
        return inner, inner is not None
    return None, False


def known_keys(model: type[BaseModel], loc: tuple[Any, ...]) -> list[str] | None:
    """The field names of the section an unknown key at ``loc`` was found in (None: not found)."""
    current: type[BaseModel] = model
    skip = False
    for key in loc[:-1]:
        if skip:  # a dict key or list index inside a container of models
            skip = False
            continue
        field = current.model_fields.get(str(key))
        sub, skip = _model_in(field.annotation) if field is not None else (None, False)
        if sub is None:
            return None
        current = sub
    return list(current.model_fields)


def error_line(err: Mapping[str, Any], prefix: tuple[Any, ...] = (), *, known: list[str] | None = None) -> str:
    """One pydantic error as ``field.path: message (got value)``, without the help URL; an
    unknown key lists the ``known`` ones of its section when given."""
    loc = tuple(prefix) + tuple(err.get("loc", ()))
    field = ".".join(str(x) for x in loc)
    msg = str(err.get("msg", "invalid")).removeprefix("Value error, ")
    if err.get("type") == "extra_forbidden":
        msg = "unknown key (not a field of this section; check its spelling)"
        if known:
            msg += f"; known: {', '.join(known)}"
    elif err.get("type") != "missing" and "input" in err:
        got = _short(err["input"])
        if got is not None and not isinstance(err["input"], dict):
            msg += f" (got {got})"
    return f"{field}: {msg}" if field else msg


def validation_error(exc: ValidationError, where: str | Path, *, text: str | None = None,
                     prefix: tuple[Any, ...] = (), model: type[BaseModel] | None = None) -> ConfigError:
    """A :class:`ConfigError` for the first problem in ``exc``, at ``where[:line]``.

    ``text`` (the YAML source) lets the line of the offending key be found; ``prefix`` is the
    path of the section that was validated (e.g. ``("llm",)`` for a wrapped config); ``model``
    (the validated model) lets an unknown key list the known ones.
    """
    errors: list[dict[str, Any]] = [dict(e) for e in exc.errors()] or [{"msg": str(exc)}]
    try:
        root = compose(text) if text is not None else None
    except yaml.YAMLError:
        root = None
    lines = [_node_line(root, tuple(prefix) + tuple(e.get("loc", ()))) if root is not None else None for e in errors]
    # the first problem in the file's order (pydantic lists them in field order)
    first = min(range(len(errors)), key=lambda i: (lines[i] is None, lines[i] or 0, i))
    err, line = errors[first], lines[first]
    more = f" (and {len(errors) - 1} more problem(s))" if len(errors) > 1 else ""
    known = known_keys(model, tuple(err.get("loc", ()))) if model is not None else None
    return ConfigError(error_line(err, prefix, known=known) + more, where=f"{where}:{line}" if line else where)


def load_mapping(path: str | Path, *, what: str = "config file", allow_empty: bool = True) -> tuple[dict[str, Any], str]:
    """Read ``path`` as a YAML mapping; return it with the source text (for line numbers)."""
    path = Path(path)
    text = read_text(path, what=what)
    raw = parse_yaml(text, path)
    if raw is None:
        if not allow_empty:
            raise ConfigError(f"{what} is empty; leave the option out to use the defaults", where=path)
        raw = {}
    if not isinstance(raw, dict):
        raise ConfigError(f"the top level must be a mapping of keys to values, not a {type(raw).__name__}", where=path)
    return raw, text


def load_config(model: type[M], path: str | Path, *, wrapper: str | None = None, what: str = "config file",
                overrides: dict[str, Any] | None = None, allow_empty: bool = False,
                siblings: Collection[str] = ()) -> M:
    """Validate the YAML file ``path`` as ``model``.

    ``wrapper``: the file may put the fields under this key (``llm:``); then the section is
    validated, and beside it only the top-level keys named in ``siblings`` may stand (what
    another reader of the same file takes, e.g. ``roles:`` beside ``llm:``): any other is an
    error naming the known ones, never silently ignored (a misspelt ``role:`` would otherwise
    leave every role on ``llm:``). ``overrides`` (not ``None`` values) win over the file, e.g.
    command-line options. A file named explicitly but empty is refused (``allow_empty=False``):
    leaving the option out is how to ask for the defaults.
    """
    path = Path(path)
    raw, text = load_mapping(path, what=what, allow_empty=allow_empty)
    return config_from(model, raw, text, path, wrapper=wrapper, overrides=overrides, siblings=siblings)


def config_from(model: type[M], raw: dict[str, Any], text: str, path: Path, *, wrapper: str | None = None,
                overrides: dict[str, Any] | None = None, siblings: Collection[str] = ()) -> M:
    """:func:`load_config` on a mapping already read from ``path`` (a file other readers share is read once)."""
    prefix: tuple[Any, ...] = ()
    if wrapper is not None and wrapper in raw:
        section = raw[wrapper]
        if not isinstance(section, dict):
            line = line_of(text, (wrapper,))
            raise ConfigError(f"{wrapper}: must be a mapping of keys to values", where=f"{path}:{line}" if line else path)
        unknown = [str(k) for k in raw if k != wrapper and k not in siblings]
        if unknown:
            line = line_of(text, (unknown[0],))
            known = ", ".join([wrapper, *siblings])
            raise ConfigError(f"{unknown[0]}: unknown top-level key (check its spelling); known: {known}",
                              where=f"{path}:{line}" if line else path)
        raw, prefix = dict(section), (wrapper,)
    return with_overrides(model, raw, overrides or {}, where=path, text=text, prefix=prefix)


def with_overrides(model: type[M], base: BaseModel | Mapping[str, Any], overrides: Mapping[str, Any], *,
                   where: str | Path = "options", text: str | None = None, prefix: tuple[Any, ...] = ()) -> M:
    """``base`` (a config, or its fields as read) with ``overrides`` laid over it, validated as
    ``model``: the one way command-line options override a config file. A ``None`` override is an
    option not given and changes nothing; a bad value is one :class:`ConfigError` line, checked
    like the file (:func:`validate`)."""
    raw = base.model_dump() if isinstance(base, BaseModel) else dict(base)
    raw.update({k: v for k, v in overrides.items() if v is not None})
    return validate(model, raw, where=where, text=text, prefix=prefix)


def validate(model: type[M], raw: dict[str, Any], *, where: str | Path, text: str | None = None,
             prefix: tuple[Any, ...] = ()) -> M:
    """``model.model_validate(raw)``; a problem raises :class:`ConfigError` in the one format."""
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        raise validation_error(exc, where, text=text, prefix=prefix, model=model) from None
