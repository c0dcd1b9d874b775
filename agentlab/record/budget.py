"""A run's budget: stop starting episodes once a token, dollar or wall-clock limit would be passed.

``agentlab exec --budget tokens=N,usd=X,seconds=S`` (any subset). The rule, checked before each
episode starts (:meth:`BudgetMeter.admit`):

- **spent** is the total of the rows finished under this budget: ``tokens_in + tokens_out``,
  ``usd`` (:class:`agentlab.llm.prices.PriceTable`), and for ``seconds`` the wall clock since the
  suite began (after the models are loaded; starting Ray counts);
- **the estimate** of one more episode is the mean of the episodes finished under this budget
  (before the first has finished: the mean of the run's earlier rows, else nothing);
- an episode starts only while ``spent + (in flight + 1) x mean <= limit`` for tokens and usd
  (episodes already running on other workers will spend too), and ``elapsed + mean seconds <=
  limit`` for seconds; a limit already reached starts nothing more.

Tokens and dollars are soft limits: the episode in flight finishes and keeps its row, so a run may
end slightly past them (by less than one episode's cost per worker, when the estimate is good).
Seconds is a hard limit too: at ``S`` the episodes in flight are cut as a stop signal cuts them
(:class:`~agentlab.errors.OutOfBudget`): their programs end, they leave no row, and a resumed run
carries them out. A resumed run (``--resume --budget ...``) starts a new budget: only what the
resumed part spends counts, so ``--budget tokens=N`` always means "spend at most about N more".
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from agentlab.errors import ConfigError

#: the limits a budget may set, in the order a stop names the first one reached
LIMITS = ("tokens", "usd", "seconds")


@dataclass(frozen=True)
class Budget:
    """The limits of one run (or resumed part); ``None``: no limit on that."""

    tokens: int | None = None
    usd: float | None = None
    seconds: float | None = None

    @classmethod
    def parse(cls, text: str) -> Budget:
        """``"tokens=20000,usd=1.5,seconds=600"`` (any subset, any order); every mistake is one
        :class:`ConfigError` line naming the item."""
        values: dict[str, float | int] = {}
        items = [i.strip() for i in text.split(",")]
        if not text.strip() or not all(items):
            raise ConfigError(f"--budget {text!r}: give LIMIT=VALUE items separated by commas, "
                              f"LIMIT one of {', '.join(LIMITS)} (e.g. --budget tokens=200000,usd=2)")
        for item in items:
            key, sep, raw = (p.strip() for p in item.partition("="))
            if not sep:
                raise ConfigError(f"--budget: {item!r} is not LIMIT=VALUE (LIMIT one of {', '.join(LIMITS)})")
            if key not in LIMITS:
                raise ConfigError(f"--budget: unknown limit {key!r}; known: {', '.join(LIMITS)}")
            if key in values:
                raise ConfigError(f"--budget: {key} is given twice")
            values[key] = _number(key, raw)
        return cls(**values)  # type: ignore[arg-type]

    def limits(self) -> dict[str, float]:
        return {k: float(v) for k in LIMITS if (v := getattr(self, k)) is not None}

    def __str__(self) -> str:
        return ",".join(f"{k}={_show(k, v)}" for k, v in self.limits().items())


def _number(key: str, raw: str) -> float | int:
    try:
        value: float | int = int(raw) if key == "tokens" else float(raw)
    except ValueError:
        kind = "a whole number of tokens" if key == "tokens" else "a number"
        raise ConfigError(f"--budget: {key}={raw!r} is not {kind}") from None
    if not math.isfinite(value) or value <= 0:
        raise ConfigError(f"--budget: {key}={raw!r} must be a positive number")
    return value


def _show(key: str, value: float) -> str:
    if key == "tokens":
        return str(int(value))
    return f"{value:.4f}".rstrip("0").rstrip(".") if key == "usd" else f"{value:.1f}"


def row_tokens(row: Mapping[str, Any]) -> int:
    return sum(v for k in ("tokens_in", "tokens_out")
               if isinstance(v := row.get(k), int) and not isinstance(v, bool))


def row_usd(row: Mapping[str, Any]) -> float:
    v = row.get("usd")
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else 0.0


def row_seconds(row: Mapping[str, Any]) -> float:
    v = row.get("seconds")
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else 0.0


@dataclass
class BudgetMeter:
    """What a budget has spent so far and whether one more episode fits (see the module docstring).

    ``earlier``: the run's rows from before this budget, used only to estimate an episode's cost
    until one has finished under it."""

    budget: Budget
    earlier: Iterable[Mapping[str, Any]] = ()
    started: float = field(default_factory=time.monotonic)
    tokens: int = 0
    usd: float = 0.0
    episodes: int = 0
    episode_seconds: float = 0.0
    #: the limit that stopped the run (``None``: not stopped)
    stopped_by: str | None = None

    def __post_init__(self) -> None:
        old = list(self.earlier)
        self._prior = (len(old), sum(map(row_tokens, old)), sum(map(row_usd, old)), sum(map(row_seconds, old)))

    @property
    def seconds(self) -> float:
        return time.monotonic() - self.started

    @property
    def deadline(self) -> float:
        """``time.monotonic()`` at which the seconds limit is reached (``inf``: none)."""
        return self.started + self.budget.seconds if self.budget.seconds is not None else math.inf

    def add(self, row: Mapping[str, Any]) -> None:
        """Count a finished row."""
        self.tokens += row_tokens(row)
        self.usd += row_usd(row)
        self.episode_seconds += row_seconds(row)
        self.episodes += 1

    def spent(self) -> dict[str, float]:
        return {"tokens": self.tokens, "usd": round(self.usd, 6), "seconds": round(self.seconds, 3)}

    def mean(self) -> dict[str, float]:
        """One episode's estimated cost: the mean of those finished under this budget, else of the earlier rows."""
        n, tokens, usd, secs = ((self.episodes, self.tokens, self.usd, self.episode_seconds) if self.episodes
                                else self._prior)
        return {"tokens": tokens / n, "usd": usd / n, "seconds": secs / n} if n else {k: 0.0 for k in LIMITS}

    def over(self, in_flight: int = 0) -> str | None:
        """The first limit one more episode would pass (``None``: it fits)."""
        spent, mean = self.spent(), self.mean()
        for key, limit in self.budget.limits().items():
            if spent[key] >= limit:
                return key
            ahead = mean[key] if key == "seconds" else (in_flight + 1) * mean[key]
            if spent[key] + ahead > limit:
                return key
        return None

    def admit(self, in_flight: int = 0) -> bool:
        """Whether one more episode may start (:class:`agentlab.parallel.Gate`); a refusal is kept."""
        if self.stopped_by is None:
            self.stopped_by = self.over(in_flight)
        return self.stopped_by is None


@dataclass(frozen=True)
class BudgetOutcome:
    """How a budgeted run (or resumed part) ended: what it was given and spent, what stopped it."""

    budget: Budget
    spent: dict[str, float]
    episodes: int
    stopped_by: str | None
    #: episodes left for a resumed run (not started, or cut by the seconds limit)
    left: int

    def line(self) -> str:
        """The one line ``agentlab exec`` prints about its budget."""
        spent = ", ".join(f"{_show(k, self.spent[k])} of {_show(k, v)} {k}" for k, v in self.budget.limits().items())
        if self.stopped_by is None:
            return f"budget: within limits ({spent} spent on {self.episodes} episode(s))"
        return (f"budget: stopped by {self.stopped_by} ({spent} spent on {self.episodes} episode(s)); "
                f"{self.left} episode(s) not run: continue with --resume --budget LIMITS (a new budget for the rest)")

    def record(self) -> dict[str, Any]:
        """The manifest's ``budget`` block."""
        return {"limits": self.budget.limits(), "spent": dict(self.spent), "episodes": self.episodes,
                "stopped_by": self.stopped_by, "left": self.left}
