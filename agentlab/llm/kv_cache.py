"""Handing a key/value cache to a transformers model, and reading it back, under either name.

transformers renamed the cache argument of every model's ``forward`` from ``past_key_values`` to
``cache`` during 5.x (and the output field with it). The old name still works in 5.24 but every
call warns (a ``FutureWarning`` from ``LlamaModel.forward`` and ``LlamaForCausalLM.forward``, and
a logger warning when ``out.past_key_values`` is read), which was the noise in the executed
notebooks that route with a cached prefix. Passing the name the model's ``forward`` declares keeps
both the lowest transformers the pyproject allows (5.0, ``past_key_values``) and the installed one
silent, without hiding any other warning.
"""

from __future__ import annotations

import inspect
from typing import Any

#: the argument's old name (transformers 5.0 up to the rename) and its new one
OLD_NAME, NEW_NAME = "past_key_values", "cache"
#: model class -> the name its forward declares (a signature is read once per class)
_DECLARED: dict[type, str | None] = {}


def _declared(forward_owner: type) -> str | None:
    """Which of the two names ``forward_owner.forward`` declares (``None``: neither, e.g. a wrapper
    that passes ``**kwargs`` on)."""
    if forward_owner not in _DECLARED:
        names: set[str] = set()
        try:
            names = set(inspect.signature(forward_owner.forward).parameters)  # type: ignore[attr-defined]
        except (TypeError, ValueError, AttributeError):
            pass
        _DECLARED[forward_owner] = next((n for n in (NEW_NAME, OLD_NAME) if n in names), None)
    return _DECLARED[forward_owner]


def cache_arg(model: Any) -> str:
    """The keyword ``model``'s forward takes its cache by. A wrapper that declares neither (a peft
    model) is asked about the model it wraps; failing that, the old name, which every 5.x accepts."""
    name = _declared(type(model))
    if name is None and hasattr(model, "get_base_model"):
        name = _declared(type(model.get_base_model()))
    return name or OLD_NAME


def with_cache(model: Any, cache: Any) -> dict[str, Any]:
    """``{"cache": cache}`` or ``{"past_key_values": cache}``, whichever ``model`` declares."""
    return {cache_arg(model): cache}


def returned_cache(out: Any) -> Any:
    """The cache a forward pass returned (``out.cache``, else ``out.past_key_values`` on older versions),
    read without the deprecated attribute's warning."""
    got = out.get(NEW_NAME) if hasattr(out, "get") else getattr(out, NEW_NAME, None)
    if got is None:
        got = out.get(OLD_NAME) if hasattr(out, "get") else getattr(out, OLD_NAME, None)
    return got


def rollbackable(cache: Any) -> Any:
    """``cache`` made croppable back to its current length after later forwards. Sliding-window layers
    (Gemma 3: 5 of every 6) keep only the last window of positions and refuse to crop once it is full,
    unless they record the past first (``activate_past_recording``, transformers 5.x); full-attention
    caches need nothing. Call it after prefilling the shared prefix, before the first query."""
    activate = getattr(cache, "activate_past_recording", None)
    if callable(activate):
        activate()
    return cache
