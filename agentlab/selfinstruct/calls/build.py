"""Synthesize, check and keep (request -> calls) pairs per tool specialist; write them and a report.

For each candidate: a domain generator makes a start state in a fresh folder and a draft (request,
calls, postcondition). The draft is kept only if, in order (the first failing check is its
reason in the report):

1. ``not_offered``: every call is one the agent's grammar can produce for this request in this
   workspace (the tool is among those retrieved for the request, every argument is among its
   slot's candidates): otherwise the adapter would learn a reply it can never decode;
2. ``call_failed``: the calls, run through the real toolkit runtime on a copy of the start state,
   all succeed;
3. ``postcondition``: the domain's check on the resulting files holds;
4. ``duplicate``: no earlier kept pair has the same request;
5. ``leakage``: the request is no near-copy of an evaluation instruction (:mod:`.leakage`).

A kept pair stores what the ToolAgent's first prompt is made of (the request, the tools shown,
the workspace observation) and the reply, so training (:mod:`.fit`) needs no synthesis.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import random
import shutil
import tempfile
import zlib
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tqdm import tqdm

from agentlab.errors import ActionParseError
from agentlab.fileio import atomic_write_json, atomic_write_text, write_jsonl
from agentlab.selfinstruct.calls import browser, data, documents, files, images, mail, media, settings, sheets, slides
from agentlab.selfinstruct.calls.compose import TWO_OPS, compose
from agentlab.selfinstruct.calls.draft import Draft, Generator, call_literals, reply
from agentlab.selfinstruct.calls.leakage import EVAL_SETS, NearCopyFilter
from agentlab.toolkits.base import Toolkit, parse_calls
from agentlab.toolkits.grammar import CallGrammar
from agentlab.toolkits.runtime import results, run_calls
from agentlab.toolkits.slots import merge, request_values, workspace_values

log = logging.getLogger(__name__)

#: toolkit name -> its generators by family
DOMAINS: dict[str, dict[str, Generator]] = {
    "sheets": sheets.GENERATORS, "documents": documents.GENERATORS, "slides": slides.GENERATORS,
    "files": files.GENERATORS, "settings": settings.GENERATORS, "images": images.GENERATORS,
    "browser": browser.GENERATORS, "mail": mail.GENERATORS, "media": media.GENERATORS, "data": data.GENERATORS,
}
#: why a candidate was dropped, in the order the checks run
REASONS = ("generator_error", "not_offered", "call_failed", "postcondition", "duplicate", "leakage")


@dataclass(frozen=True)
class CallPair:
    """One kept pair: what the specialist's first prompt is made of, and the reply it should give."""

    agent: str
    toolkit: str
    family: str
    seed: int
    request: str
    shown: list[str]
    observation: str
    reply: str
    max_cosine: float = 0.0


@dataclass
class AgentReport:
    """What happened to one agent's candidates."""

    agent: str
    toolkit: str
    generated: int = 0
    kept: int = 0
    dropped: Counter[str] = field(default_factory=Counter)
    families: Counter[str] = field(default_factory=Counter)
    #: a few dropped drafts per reason, to read why
    examples: dict[str, list[str]] = field(default_factory=dict)

    def drop(self, reason: str, note: str) -> None:
        self.dropped[reason] += 1
        shown = self.examples.setdefault(reason, [])
        if len(shown) < 3:
            shown.append(note)

    def as_dict(self) -> dict[str, Any]:
        return {"agent": self.agent, "toolkit": self.toolkit, "generated": self.generated, "kept": self.kept,
                "dropped": {r: self.dropped.get(r, 0) for r in REASONS}, "kept_by_family": dict(sorted(self.families.items())),
                "dropped_examples": self.examples}


class Specialist:
    """What synthesis needs of one tool specialist: its toolkit, the tools it would be shown for a
    request, and how it sees a workspace (both from the real :class:`~agentlab.agents.tools.ToolAgent`)."""

    def __init__(self, name: str, kit: Toolkit, shown: Callable[[str], list[str]], observe: Callable[[Path], str],
                 max_calls: int = 3) -> None:
        self.name, self.kit, self.shown, self.observe, self.max_calls = name, kit, shown, observe, max_calls

    @classmethod
    def from_document(cls, doc: Any) -> Specialist:
        from agentlab.agents.tools import ToolAgent
        from agentlab.envs.workspace import Workspace, WorkspaceConfig
        from agentlab.envs.workspace_env import WorkspaceEnv

        agent = ToolAgent(doc, doc.runner_options)

        def observe(folder: Path) -> str:
            return agent.observation(WorkspaceEnv(Workspace(root=folder, config=WorkspaceConfig(sandbox="none"))))

        return cls(doc.name, agent.kit, agent.shown_tools, observe, agent.options.max_calls)


def not_offered(spec: Specialist, draft: Draft, folder: Path, shown: Sequence[str]) -> str | None:
    """Why the grammar could not produce ``draft``'s reply (``None``: it can)."""
    if len(draft.calls) + 1 > spec.max_calls:
        return f"{len(draft.calls)} calls and done() exceed max_calls={spec.max_calls}"
    values = merge(request_values(draft.request), workspace_values(folder, spec.kit))
    grammar = CallGrammar.build(spec.kit, values, max_calls=spec.max_calls, names=list(shown), allow_done=False)
    for name, args in draft.calls:
        if name not in shown:
            return f"{name} is not among the tools retrieved for the request ({', '.join(shown)})"
        if name not in grammar.tools:
            return f"{name}: a parameter has no candidate here"
        for p, lit, cands in zip(spec.kit.tools[name].params, call_literals(spec.kit, name, args), grammar.tools[name]):
            if cands is not None and lit not in cands:
                return f"{name}: {p.name}={lit} is not offered (offered: {', '.join(cands[:8])}{' ...' if len(cands) > 8 else ''})"
    return None


def run_reply(kit: Toolkit, text: str, folder: Path, max_calls: int = 3) -> list[dict[str, Any]]:
    """Parse ``text`` as the agent's reply would be parsed, run its calls through the toolkit
    runtime in ``folder`` (as the workspace runs them), and return one result record per call run."""
    calls = [c.as_json() for c in parse_calls(text, kit, max_calls=max_calls) if c.name not in ("done", "fail")]
    out = io.StringIO()
    with contextlib.chdir(folder), contextlib.redirect_stdout(out):
        try:
            run_calls(kit.name, json.dumps(calls))
        except SystemExit:  # the runtime stops at the first failing call
            pass
    done = results(out.getvalue())
    return done if len(done) == len(calls) else [*done, {"ok": False, "error": "not run"}]


def seed_of(agent: str, index: int, base: int) -> int:
    return zlib.crc32(f"{agent}/{index}/{base}".encode())


def synthesize(spec: Specialist, n: int, *, seed: int = 0, progress: bool = True,
               two_ops: int = 0) -> tuple[list[CallPair], AgentReport]:
    """``n`` candidates for ``spec`` (families in turn, each with its own seed), then ``two_ops``
    candidates asking for two operations (:mod:`.compose`); the ones kept, before the leakage
    filter and deduplication (:func:`build`)."""
    gens = DOMAINS[spec.kit.name]
    names = sorted(gens)
    report = AgentReport(spec.name, spec.kit.name)
    kept: list[CallPair] = []
    for i in tqdm(range(n + two_ops), desc=f"pairs {spec.name}", disable=not progress):
        family = names[i % len(names)] if i < n else TWO_OPS
        s = seed_of(spec.name, i, seed)
        report.generated += 1
        with tempfile.TemporaryDirectory(prefix="agentlab-calls-") as tmp:
            start, run = Path(tmp) / "start", Path(tmp) / "run"
            start.mkdir()
            try:
                draft = (compose(gens, random.Random(s), start) if family == TWO_OPS
                         else gens[family](random.Random(s), start))
                text = reply(spec.kit, draft)
            except Exception as exc:  # a generator bug is counted, not fatal
                report.drop("generator_error", f"{family}: {type(exc).__name__}: {exc}")
                continue
            shown = spec.shown(draft.request)
            why = not_offered(spec, draft, start, shown)
            if why is not None:
                report.drop("not_offered", f"{draft.request} -> {why}")
                continue
            shutil.copytree(start, run)
            try:
                done = run_reply(spec.kit, text, run, spec.max_calls)
            except (ActionParseError, Exception) as exc:
                done = [{"ok": False, "error": f"{type(exc).__name__}: {exc}"}]
            failed = next((r for r in done if not r.get("ok")), None)
            if failed is not None:
                report.drop("call_failed", f"{draft.request} -> {text.splitlines()[0]}: {failed.get('error')}")
                continue
            try:
                post = draft.check(run)
            except Exception as exc:
                post = f"{type(exc).__name__}: {exc}"
            if post is not None:
                report.drop("postcondition", f"{draft.request} -> {post}")
                continue
            kept.append(CallPair(spec.name, spec.kit.name, draft.family, s, draft.request, list(shown),
                                 spec.observe(start), text))
    return kept, report


def build(specs: Sequence[Specialist], n: int, out: Path, *, leakage: NearCopyFilter | None, seed: int = 0,
          progress: bool = True, two_ops: int = 0) -> dict[str, AgentReport]:
    """Synthesize ``n`` candidates per specialist (and ``two_ops`` two-operation ones), drop
    duplicates and near-copies of evaluation tasks, write ``out/<Agent>.jsonl``,
    ``out/report.json`` and ``out/report.md``."""
    reports: dict[str, AgentReport] = {}
    cos_all: list[float] = []
    for spec in specs:
        pairs, report = synthesize(spec, n, seed=seed, progress=progress, two_ops=two_ops)
        seen: set[str] = set()
        unique = []
        for p in pairs:
            key = " ".join(p.request.lower().split())
            if key in seen:
                report.drop("duplicate", p.request)
                continue
            seen.add(key)
            unique.append(p)
        final = []
        if leakage is not None and unique:
            check = leakage.check([p.request for p in unique])
            for p, cos, leaked in zip(unique, check.max_cosine.tolist(), check.leaked.tolist()):
                cos_all.append(float(cos))
                if leaked:
                    report.drop("leakage", f"{p.request} (cosine {cos:.3f})")
                else:
                    final.append(CallPair(**{**asdict(p), "max_cosine": round(float(cos), 4)}))
        else:
            final = unique
        report.kept = len(final)
        report.families.update(p.family for p in final)
        write_jsonl(out / f"{spec.name}.jsonl", [asdict(p) for p in final])
        reports[spec.name] = report
        log.info("%s: %d generated, %d kept (%s)", spec.name, report.generated, report.kept,
                 ", ".join(f"{r} {c}" for r, c in report.dropped.items()))
    meta = {"candidates_per_agent": n, "two_operation_candidates_per_agent": two_ops, "seed": seed,
            "leakage": None if leakage is None else {"encoder": "all-MiniLM-L6-v2 cosine", "threshold": leakage.threshold,
                                                     "references": len(leakage.references),
                                                     "above": {str(t): sum(c > t for c in cos_all) for t in (0.7, 0.8, 0.85, 0.9)},
                                                     "agents": sorted(reports)},
            "agents": {a: r.as_dict() for a, r in reports.items()}}
    meta = _merged(out / "report.json", meta)
    atomic_write_json(out / "report.json", meta)
    atomic_write_text(out / "report.md", markdown(meta))
    return reports


def _merged(path: Path, meta: dict[str, Any]) -> dict[str, Any]:
    """``meta`` with the other agents of an earlier report in the same folder kept.

    Why: synthesizing for a few agents (``--agents``) must not erase the report of the pairs
    the other agents' adapters were trained on; each agent's entry records its own run's
    settings (``candidates_per_agent``, ``two_operation_candidates_per_agent``, ``seed``), since
    they may differ between runs."""
    mine = {k: meta[k] for k in ("candidates_per_agent", "two_operation_candidates_per_agent", "seed")}
    for entry in meta["agents"].values():
        entry.setdefault("settings", mine)
    try:
        old = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return meta
    if not isinstance(old, dict) or not isinstance(old.get("agents"), dict):
        return meta
    theirs = {k: old.get(k) for k in mine}
    kept = {}
    for name, entry in old["agents"].items():
        if name not in meta["agents"] and isinstance(entry, dict):
            entry.setdefault("settings", theirs)
            kept[name] = entry
    return {**meta, "agents": {**kept, **meta["agents"]}}


def markdown(meta: dict[str, Any]) -> str:
    """The report as a table: per agent, generated, each drop reason, kept."""
    lines = ["# Synthesized (request -> calls) pairs", "",
             f"{meta['candidates_per_agent']} candidates per specialist (seed {meta['seed']}); a pair is kept only when its "
             "calls are decodable under the agent's grammar, run without error through the real toolkit on its start "
             "state, and the postcondition on the resulting files holds.", ""]
    if meta["leakage"]:
        lk = meta["leakage"]
        lines += [f"Leakage filter: {lk['encoder']} against {lk['references']} evaluation instructions ("
                  f"{', '.join('data/' + name for name in EVAL_SETS)}), dropped above {lk['threshold']}; requests"
                  + (f" of the last synthesis ({', '.join(lk['agents'])})" if lk.get("agents") and len(lk["agents"]) < len(meta["agents"]) else "")
                  + " above 0.7/0.8/0.85/0.9: "
                  + "/".join(str(lk["above"][t]) for t in ("0.7", "0.8", "0.85", "0.9")) + ".", ""]
    lines += ["| agent | generated | " + " | ".join(REASONS) + " | kept |", "|---|" + "---|" * (len(REASONS) + 2)]
    for a, r in meta["agents"].items():
        lines.append(f"| {a} | {r['generated']} | " + " | ".join(str(r["dropped"][x]) for x in REASONS) + f" | {r['kept']} |")
    return "\n".join(lines) + "\n"
