"""What model tokens cost: a small price table, per model id, in USD per million tokens.

Why a table of our own: a dollar cap on a run (``agentlab exec --budget usd=X``) and a ``usd``
column beside the token counts need a price per model, and endpoints do not report one. The
table is keyed by the ``model_id`` a result row records (an endpoint's ``model:``; a local
model's name): the shipped ``data/prices.yaml`` lists no model (the embedded local models cost
nothing), and a model the table does not list costs 0 -- so a run on a paid endpoint whose model
is missing shows ``usd`` 0; :meth:`PriceTable.unpriced` names such models so the caller can warn.

The user extends the table with YAML files of the same format: ``AGENTLAB_PRICES`` (one file,
or several separated by ``:``) and then ``--prices FILE``; a later file's entry for a model
replaces an earlier one. Every file is validated strictly (:mod:`agentlab.config`): an unknown
key, a negative or non-numeric price is one line naming the file and line. Format::

    prices:
      gpt-4o-mini:          # the model id, as the endpoint's config names it
        input: 0.15         # USD per million prompt tokens
        output: 0.60        # USD per million completion tokens
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from agentlab.config import load_config
from agentlab.paths import data_dir

#: the environment variable naming price files (``:``-separated), read after the shipped table
PRICES_ENV = "AGENTLAB_PRICES"
PRICES_FILE = "prices.yaml"
PER = 1_000_000


class Price(BaseModel):
    """One model's price: USD per million input (prompt) and output (completion) tokens."""

    model_config = ConfigDict(extra="forbid")

    input: float = Field(default=0.0, ge=0)
    output: float = Field(default=0.0, ge=0)

    @field_validator("input", "output")
    @classmethod
    def _finite(cls, v: float) -> float:
        if not math.isfinite(v):
            raise ValueError("must be a finite number of USD per million tokens")
        return v


class PriceFile(BaseModel):
    """A price file: ``prices:`` maps model ids to :class:`Price`."""

    model_config = ConfigDict(extra="forbid")

    prices: dict[str, Price] = Field(default_factory=dict)


def shipped_prices() -> Path:
    return data_dir() / PRICES_FILE


@dataclass(frozen=True)
class PriceTable:
    """Model id -> :class:`Price`; a model not listed costs 0."""

    prices: Mapping[str, Price] = field(default_factory=dict)

    @classmethod
    def load(cls, extra: Path | None = None, *, env: Mapping[str, str] | None = None) -> PriceTable:
        """The shipped table, then every file of ``AGENTLAB_PRICES``, then ``extra`` (``--prices``)."""
        env = os.environ if env is None else env
        files: list[Path] = []
        if shipped_prices().is_file():
            files.append(shipped_prices())
        files += [Path(p) for p in env.get(PRICES_ENV, "").split(os.pathsep) if p.strip()]
        if extra is not None:
            files.append(extra)
        return cls.from_files(files)

    @classmethod
    def from_files(cls, files: Iterable[Path]) -> PriceTable:
        merged: dict[str, Price] = {}
        for path in files:
            # an explicitly named file that is empty is refused (load_config): leave it out instead
            merged.update(load_config(PriceFile, path, what="price file", allow_empty=False).prices)
        return cls(merged)

    def usd(self, model_id: str | None, tokens_in: int, tokens_out: int) -> float:
        price = self.prices.get(model_id or "")
        if price is None:
            return 0.0
        return (tokens_in * price.input + tokens_out * price.output) / PER

    def row_usd(self, row: Mapping[str, Any]) -> float:
        """What a result row's model calls cost: each role's tokens at its own model's price
        (``usage_by_role``), else the row's tokens at its ``model_id``'s; rounded to 1e-6 USD."""
        by_role = row.get("usage_by_role")
        if isinstance(by_role, Mapping) and by_role:
            total = sum(self.usd(str(u.get("model_id") or ""), _int(u.get("tokens_in")), _int(u.get("tokens_out")))
                        for u in by_role.values() if isinstance(u, Mapping))
        else:
            total = self.usd(str(row.get("model_id") or ""), _int(row.get("tokens_in")), _int(row.get("tokens_out")))
        return round(total, 6)

    def unpriced(self, row: Mapping[str, Any]) -> set[str]:
        """The model ids of a row that spent tokens but have no price here (counted as 0)."""
        by_role = row.get("usage_by_role")
        used = ([str(u.get("model_id") or "") for u in by_role.values()
                 if isinstance(u, Mapping) and _int(u.get("tokens_in")) + _int(u.get("tokens_out"))]
                if isinstance(by_role, Mapping) and by_role else
                [str(row.get("model_id") or "")] if _int(row.get("tokens_in")) + _int(row.get("tokens_out")) else [])
        return {m for m in used if m not in self.prices}


def _int(v: Any) -> int:
    return v if isinstance(v, int) and not isinstance(v, bool) else 0
