"""Synthesized (request -> skill call) pairs for a desktop app's GUI specialist, from templates.

The clock's pairs (:mod:`agentlab.selfinstruct.calls.gui`) are each replayed on the fake device
before they are kept. A desktop application's call replays under Xvfb in 10-30 s, so a few
hundred pairs per app would take hours on a laptop: here the pairs are checked *as the deployment
would call them* instead — the skill exists in the app's learned library, the call names exactly
its parameters, each typed argument is a value the request says (whole words: the grammar offers
only those) and has the shape the skill learned (:func:`~agentlab.agents.gui_skills.fits_shape`)
— and each skill's own demonstration is the replay (``agentlab skills check``). What the prior
learns from them is only *which skill a request wants*; the arguments are the grammar's.

The templates are data (``data/gui_priors/templates/<app>.yaml``), written from the skills' own
lines, never from an evaluation task; a request near an evaluation instruction is dropped all the
same (:func:`agentlab.selfinstruct.calls.gui.build_skill_prior`). A template's ``{slot}`` draws a
value from ``pools[slot]``; a slot ending in a digit (``{word2}``) draws from its own pool when it
has one, else another value of the same pool.

A file may also give ``context: {before: [...], after: [...]}``: phrases people put around an ask
("In my mail's Local Folders,", "so it stands out"), without a slot or a hint of any one skill. A
share of the requests gets one (:data:`BEFORE_SHARE`, :data:`AFTER_SHARE`), so what the prior
learns to read is the ask, not the setting around it. Why: the Thunderbird prior, fitted on bare
asks, put ``move_message`` first for "In Thunderbird's Local Folders inbox, star the message
'Invoice 4471' so it stands out." (a development task), its "folders" outweighing "star".
"""

from __future__ import annotations

import random
import re
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentlab.errors import ConfigError

_FIELDS = string.Formatter()


@dataclass(frozen=True)
class SkillTemplates:
    """One skill's request templates and how its arguments are filled from the same draws."""

    skill: str
    args: dict[str, str]
    requests: tuple[str, ...]


@dataclass(frozen=True)
class AppTemplates:
    app: str
    pools: dict[str, tuple[str, ...]]
    skills: tuple[SkillTemplates, ...]
    source: str
    #: phrases put before an ask ("In Thunderbird,") and after it ("so it stands out")
    before: tuple[str, ...] = ()
    after: tuple[str, ...] = ()


#: the share of synthesized requests that get a phrase before the ask, and after it (when the
#: templates have some); set by hand, not tuned on any task
BEFORE_SHARE = 0.4
AFTER_SHARE = 0.3


def templates_dir() -> Path:
    from agentlab.paths import data_dir

    return data_dir() / "gui_priors" / "templates"


def has_templates(app: str) -> bool:
    return bool(re.fullmatch(r"[\w.-]+", app)) and (templates_dir() / f"{app}.yaml").is_file()


def _slots(text: str) -> list[str]:
    return [name for _, name, _, _ in _FIELDS.parse(text) if name]


def _pool_of(slot: str, pools: Mapping[str, Sequence[str]]) -> str:
    return slot if slot in pools else slot.rstrip(string.digits)


def load_templates(app: str, folder: Path | None = None) -> AppTemplates:
    """``<folder>/<app>.yaml`` (default ``data/gui_priors/templates``); a missing or malformed file,
    or a slot with no pool, is one line naming the file."""
    import yaml

    path = (folder or templates_dir()) / f"{app}.yaml"
    if not path.is_file():
        raise ConfigError(f"no request templates for app {app!r}", where=str(path))
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
        pools = {str(k): tuple(str(v) for v in vs) for k, vs in raw["pools"].items()}
        skills = tuple(SkillTemplates(str(name), {str(k): str(v) for k, v in (body.get("args") or {}).items()},
                                      tuple(str(r) for r in body["requests"]))
                       for name, body in raw["skills"].items())
        context = raw.get("context") or {}
        before = tuple(str(v) for v in context.get("before") or ())
        after = tuple(str(v) for v in context.get("after") or ())
    except (yaml.YAMLError, KeyError, TypeError, AttributeError) as exc:
        raise ConfigError(f"not a request template file ({type(exc).__name__}: {exc})", where=str(path)) from None
    for sk in skills:
        for text in (*sk.requests, *sk.args.values()):
            for slot in _slots(text):
                if _pool_of(slot, pools) not in pools or not pools[_pool_of(slot, pools)]:
                    raise ConfigError(f"{sk.skill}: slot {{{slot}}} has no pool", where=str(path))
        if not sk.requests:
            raise ConfigError(f"{sk.skill}: no request templates", where=str(path))
    for phrase in (*before, *after):
        if _slots(phrase):
            raise ConfigError(f"context phrase {phrase!r} has a slot; context holds no values", where=str(path))
    return AppTemplates(str(raw.get("app", app)), pools, skills, str(path), before, after)


def with_context(request: str, before: str | None, after: str | None) -> str:
    """``request`` with a phrase before it (its first letter lowered unless the first word is a
    name or a value: "Star ..." -> "In Thunderbird, star ...", "B7 ..." stays) and one after it,
    before its closing mark ("... read 12, so the totals add up.")."""
    out = request
    if after:
        body, mark = (out[:-1], out[-1]) if out[-1:] in ".?!" else (out, ".")
        out = f"{body}, {after}{mark}"
    if before:
        first = out.split(" ", 1)[0]
        lower = first[:1].isupper() and first[1:].islower() and first.isalpha() and first not in ("I",)
        out = f"{before.rstrip()} {out[:1].lower() + out[1:] if lower else out}"
    return out


def _occurs(value: str, text: str) -> bool:
    return re.search(r"(?<!\w)" + re.escape(value) + r"(?!\w)", text, re.IGNORECASE) is not None


def desktop_drafts(app: str, n: int, seed: int = 0) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """``n`` pairs over the skills of ``app``'s learned library that have templates, in turn:
    ``(pairs, skipped)`` where each pair is ``{request, skill, args, reply}`` and ``skipped`` names
    each template skill the library does not have (and each library skill without templates).
    A template whose arguments do not fit the skill is one line: templates and library disagree."""
    from agentlab.agents.gui_skills import call_text, fits_shape, load_skills

    tpl = load_templates(app)
    library = {s.name: s for s in load_skills(app)}
    skipped = {s.skill: "not in the learned library" for s in tpl.skills if s.skill not in library}
    skipped |= {name: "no request templates" for name in library if name not in {s.skill for s in tpl.skills}}
    usable = [s for s in tpl.skills if s.skill in library]
    for s in usable:
        if sorted(s.args) != sorted(library[s.skill].params):
            raise ConfigError(f"{s.skill}: the templates fill ({', '.join(s.args)}) but the skill takes "
                              f"({', '.join(library[s.skill].params)})", where=tpl.source)
    if not usable:
        raise ConfigError(f"{app}: none of the templated skills is in the learned library", where=tpl.source)
    rng = random.Random(seed)
    out: list[dict[str, Any]] = []
    tries = 0
    while len(out) < n:
        tries += 1
        if tries > 50 * n:
            raise ConfigError(f"{app}: the templates cannot make {n} valid pairs", where=tpl.source)
        sk = usable[len(out) % len(usable)]
        template = rng.choice(sk.requests)
        drawn: dict[str, str] = {}
        for slot in dict.fromkeys([*_slots(template), *(x for v in sk.args.values() for x in _slots(v))]):
            pool = [v for v in tpl.pools[_pool_of(slot, tpl.pools)] if v not in drawn.values()]
            drawn[slot] = rng.choice(pool)
        request = template.format(**drawn)  # as written: a value that opens it keeps its case (photo-001.jpg)
        if tpl.before or tpl.after:
            request = with_context(request,
                                   rng.choice(tpl.before) if tpl.before and rng.random() < BEFORE_SHARE else None,
                                   rng.choice(tpl.after) if tpl.after and rng.random() < AFTER_SHARE else None)
        args = {k: v.format(**drawn) for k, v in sk.args.items()}
        skill = library[sk.skill]
        ok = all((p in skill.on_screen or _occurs(v, request)) and (p not in skill.shapes or fits_shape(v, skill.shapes[p]))
                 for p, v in args.items())
        if not ok:
            continue
        out.append({"request": request, "skill": sk.skill, "args": args, "reply": call_text(skill, args)})
    return out, skipped
