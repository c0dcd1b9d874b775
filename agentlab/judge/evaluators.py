"""Evaluators: decide whether an episode's final state completes its task, OSWorld-style.

A task file's ``evaluator`` block names one or more checks. Each check is a getter (see
:mod:`agentlab.judge.getters`) run on the final state, a getter (usually ``literal``) for the
expected value, and a metric ``metric(result, expected, **options) -> float`` in [0, 1]::

    "evaluator": {"func": ["exact_match", "number_close"],
                  "result": [{"type": "xlsx_cell", "path": "r.xlsx", "cell": "A1"}, {...}],
                  "expected": [{"type": "literal", "value": "Total"}, {...}],
                  "options": [{}, {"abs_tol": 0.01}],
                  "conj": "and"}

``conj="and"`` scores 0 when any check scores 0, else the mean; ``"or"`` takes the best. Every
check is run either way, so the report says what each one saw.
A getter that fails on the final state (file missing, corrupt) scores that check 0 and keeps
the reason; an unknown getter or metric name is an error in the task file, found at load time.
"""

from __future__ import annotations

import difflib
import inspect
import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, Field, model_validator

from agentlab.errors import DataError
from agentlab.judge import app_getters  # noqa: F401  (registers the desktop applications' getters)
from agentlab.judge.getters import FinalState, GetterError, check_config, run_getter

Metric = Callable[..., float]
METRICS: dict[str, Metric] = {}


def metric(name: str) -> Callable[[Metric], Metric]:
    """Register ``fn(result, expected, **options) -> float`` under ``name``."""

    def deco(fn: Metric) -> Metric:
        if name in METRICS:
            raise ValueError(f"metric {name!r} registered twice")
        METRICS[name] = fn
        return fn

    return deco


def get_metric(name: str) -> Metric:
    try:
        return METRICS[name]
    except KeyError:
        raise DataError(f"unknown metric {name!r}; known: {', '.join(sorted(METRICS))}") from None


# -- metrics --------------------------------------------------------------------------------
def _norm(v: Any, case_sensitive: bool, strip: bool) -> Any:
    if isinstance(v, str):
        v = v.strip() if strip else v
        return v if case_sensitive else v.casefold()
    if isinstance(v, (list, tuple)):
        return [_norm(x, case_sensitive, strip) for x in v]
    if isinstance(v, dict):
        return {k: _norm(x, case_sensitive, strip) for k, x in v.items()}
    return v


@metric("exact_match")
def exact_match(result: Any, expected: Any, case_sensitive: bool = True, strip: bool = True) -> float:
    """Equal values (strings stripped, optionally case-folded; lists/dicts element-wise)."""
    return float(_norm(result, case_sensitive, strip) == _norm(expected, case_sensitive, strip))


@metric("contains")
def contains(result: Any, expected: Any, case_sensitive: bool = True) -> float:
    """``expected`` (a string, or a list of strings that must all appear) occurs in ``result``
    (a string or a list of strings)."""
    needles = expected if isinstance(expected, list) else [expected]
    hay = result if isinstance(result, list) else [result]
    hay = [str(h) if case_sensitive else str(h).casefold() for h in hay if h is not None]
    for n in needles:
        n = str(n) if case_sensitive else str(n).casefold()
        if not any(n in h for h in hay):
            return 0.0
    return 1.0


@metric("not_contains")
def not_contains(result: Any, expected: Any, case_sensitive: bool = True) -> float:
    """None of ``expected`` occurs in ``result``."""
    needles = expected if isinstance(expected, list) else [expected]
    return float(all(contains(result, n, case_sensitive) == 0.0 for n in needles))


@metric("fuzzy_match")
def fuzzy_match(result: Any, expected: Any, threshold: float | None = None) -> float:
    """difflib similarity of the two texts; the ratio itself, or 0/1 against ``threshold``."""
    if result is None:
        return 0.0
    ratio = difflib.SequenceMatcher(None, str(result), str(expected)).ratio()
    return ratio if threshold is None else float(ratio >= threshold)


@metric("regex_match")
def regex_match(result: Any, expected: str, flags: str = "") -> float:
    """``expected`` is a regular expression that must match the whole of ``result``."""
    if result is None:
        return 0.0
    f = (re.IGNORECASE if "i" in flags else 0) | (re.MULTILINE if "m" in flags else 0) | (re.DOTALL if "s" in flags else 0)
    return float(re.fullmatch(expected, str(result), f) is not None)


def _number(v: Any) -> float | None:
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, (int, float)):
        return float(v)
    try:
        return float(str(v).strip().replace(",", ""))
    except ValueError:
        return None


@metric("number_close")
def number_close(result: Any, expected: Any, rel_tol: float = 1e-9, abs_tol: float = 0.0) -> float:
    """Both are numbers (or numeric text, thousands commas allowed) within tolerance."""
    a, b = _number(result), _number(expected)
    if a is None or b is None:
        return 0.0
    return float(math.isclose(a, b, rel_tol=rel_tol, abs_tol=abs_tol))


@metric("list_equal")
def list_equal(result: Any, expected: list[Any], ordered: bool = True, case_sensitive: bool = True, strip: bool = True) -> float:
    """Same items (in the same order unless ``ordered=false``)."""
    if not isinstance(result, (list, tuple)):
        return 0.0
    r = _norm(list(result), case_sensitive, strip)
    e = _norm(list(expected), case_sensitive, strip)
    if ordered:
        return float(r == e)
    return float(sorted(map(repr, r)) == sorted(map(repr, e)))


@metric("dict_subset")
def dict_subset(result: Any, expected: dict[str, Any], abs_tol: float = 0.0) -> float:
    """Every key of ``expected`` is in ``result`` with an equal value (numbers within
    ``abs_tol``); other keys of ``result`` are ignored."""
    if not isinstance(result, dict):
        return 0.0
    for k, v in expected.items():
        if k not in result:
            return 0.0
        got = result[k]
        if isinstance(v, (int, float)) and not isinstance(v, bool) and _number(got) is not None:
            if not math.isclose(float(got), float(v), abs_tol=abs_tol, rel_tol=0.0):
                return 0.0
        elif got != v:
            return 0.0
    return 1.0


@metric("colour_close")
def colour_close(result: Any, expected: list[float], tol: float = 10.0) -> float:
    """Two colours (RGB lists, e.g. ``image_properties``' ``mean_rgb``) within ``tol`` per channel."""
    if isinstance(result, dict):
        result = result.get("mean_rgb")
    if not isinstance(result, (list, tuple)) or len(result) != len(expected):
        return 0.0
    return float(all(abs(float(a) - float(b)) <= tol for a, b in zip(result, expected)))


@metric("is_true")
def is_true(result: Any, expected: Any = None) -> float:
    """The getter's value is truthy (``expected`` is ignored)."""
    return float(bool(result))


# -- the evaluator block of a task file -----------------------------------------------------
class EvaluatorSpec(BaseModel):
    """The ``evaluator`` block of a task file; single values are one check, lists are several."""

    func: str | list[str]
    result: dict[str, Any] | list[dict[str, Any]]
    expected: dict[str, Any] | list[dict[str, Any] | None] | None = None
    options: dict[str, Any] | list[dict[str, Any]] = Field(default_factory=dict)
    conj: Literal["and", "or"] = "and"

    @model_validator(mode="after")
    def _shapes(self) -> EvaluatorSpec:
        n = len(self.funcs)
        for name, value in (("result", self.result), ("expected", self.expected), ("options", self.options)):
            if isinstance(value, list) and len(value) != n:
                raise ValueError(f"'{name}' has {len(value)} entries but 'func' names {n} metric(s)")
            if isinstance(self.func, str) and isinstance(value, list) and name != "expected":
                raise ValueError(f"'func' is one metric but '{name}' is a list")
        return self

    @property
    def funcs(self) -> list[str]:
        return [self.func] if isinstance(self.func, str) else list(self.func)

    def checks(self) -> list[tuple[str, dict[str, Any], dict[str, Any] | None, dict[str, Any]]]:
        """(metric, result getter, expected getter or None, options) for each check."""
        n = len(self.funcs)

        def nth(value: Any, i: int) -> Any:
            return value[i] if isinstance(value, list) else value

        return [(self.funcs[i], nth(self.result, i), nth(self.expected, i), nth(self.options, i) or {}) for i in range(n)]

    def problems(self) -> list[str]:
        """Unknown names or bad keys, one line each (empty when the block is runnable)."""
        out: list[str] = []
        for i, (fname, res, exp, opts) in enumerate(self.checks()):
            tag = f"check {i} ({fname})"
            if fname not in METRICS:
                out.append(f"{tag}: unknown metric {fname!r}; known: {', '.join(sorted(METRICS))}")
            else:
                params = inspect.signature(METRICS[fname]).parameters
                for k in opts:
                    if k not in params or k in ("result", "expected"):
                        out.append(f"{tag}: metric does not take option {k!r}")
            for side, cfg in (("result", res), ("expected", exp)):
                if cfg is None:
                    continue
                cfg = dict(cfg)
                out += [f"{tag} {side}: {p}" for p in check_config(str(cfg.pop("type", "")), cfg)]
        return out


#: the longest value of a check kept in a row's verdict (a whole file's text would bloat results.jsonl)
VERDICT_VALUE_CHARS = 2000


def _safe_value(value: Any, limit: int) -> Any:
    """``value`` if JSON holds it and it is short, else its (cut) text: ``"…(12345 chars)"`` marks a cut."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        value = text = repr(value)
    if len(text) <= limit:
        return value
    shown = value if isinstance(value, str) else text
    return shown[:limit] + f"…({len(shown)} chars)"


@dataclass(frozen=True)
class CheckOutcome:
    """One check's verdict, with what the getter saw, for the episode report."""

    metric: str
    score: float
    result: Any
    expected: Any
    error: str | None = None


@dataclass(frozen=True)
class EvalResult:
    score: float
    checks: list[CheckOutcome] = field(default_factory=list)

    @property
    def success(self) -> bool:
        return self.score >= 1.0 - 1e-9

    def explain(self) -> str:
        """One line per check, e.g. for a CLI or a notebook."""
        lines = [f"score {self.score:.3f}"]
        for c in self.checks:
            why = f"error: {c.error}" if c.error else f"got {c.result!r}, expected {c.expected!r}"
            lines.append(f"  {c.metric}: {c.score:.3f} ({why})")
        return "\n".join(lines)

    def as_record(self, limit: int = VERDICT_VALUE_CHARS) -> dict[str, Any]:
        """The verdict as a JSON-safe record for a result row (``row["verdict"]``): the score and,
        per check, the metric, its score, what it ``expected`` and what it ``found`` (or the getter's
        error). Why: a reader of a run (``agentlab view``) should see *why* an episode failed without
        re-running the evaluator on a workspace that may be gone. Values that JSON cannot hold are
        kept as their ``repr``; long ones are cut to ``limit`` characters so a row stays small."""
        return {"score": float(self.score), "success": self.success,
                "checks": [{"metric": c.metric, "score": float(c.score), "expected": _safe_value(c.expected, limit),
                            "found": _safe_value(c.result, limit), "error": c.error} for c in self.checks]}


def evaluate(spec: EvaluatorSpec | dict[str, Any], state: FinalState) -> EvalResult:
    """Score ``state`` against an evaluator block (see the module docstring for the rules)."""
    if isinstance(spec, dict):
        spec = EvaluatorSpec.model_validate(spec)
    problems = spec.problems()
    if problems:
        raise DataError("; ".join(problems))
    outcomes: list[CheckOutcome] = []
    for fname, res_cfg, exp_cfg, opts in spec.checks():
        expected = run_getter(state, exp_cfg) if exp_cfg is not None else None
        try:
            result = run_getter(state, res_cfg)
        except GetterError as exc:
            outcomes.append(CheckOutcome(fname, 0.0, None, expected, error=exc.message))
            continue
        score = float(get_metric(fname)(result, expected, **opts))
        outcomes.append(CheckOutcome(fname, score, result, expected))
    scores = [o.score for o in outcomes]
    if spec.conj == "and":
        total = 0.0 if not scores or min(scores) == 0.0 else sum(scores) / len(scores)
    else:
        total = max(scores, default=0.0)
    return EvalResult(total, outcomes)
