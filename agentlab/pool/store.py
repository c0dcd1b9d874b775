"""The AgentPool: every enrolled agent, loaded from a folder of documents.

Looking an agent up by a name that is not enrolled raises :class:`UnknownAgentError`
with the closest names, because a typo in a notebook parameter is the usual cause.
"""

from __future__ import annotations

import difflib
import logging
import shutil
from collections.abc import Iterator
from pathlib import Path

from agentlab.errors import AgentDocumentError, UnknownAgentError
from agentlab.pool.document import AgentDocument, load_document, parse_document, read_document_text
from agentlab.paths import agents_dir

log = logging.getLogger(__name__)


def validate_dir(folder: str | Path) -> tuple[list[AgentDocument], list[str]]:
    """Parse every ``*.md`` under ``folder``; return (documents, problems)."""
    folder = Path(folder)
    problems: list[str] = []
    docs: list[AgentDocument] = []
    if folder.is_file():
        return [], [f"{folder}:0: is a file; expected a folder of agent documents"]
    if not folder.is_dir():
        return [], [f"{folder}:0: agent folder not found"]
    files = sorted(p for p in folder.rglob("*.md") if p.name.lower() != "readme.md")
    if not files:
        problems.append(f"{folder}:0: no agent documents (*.md) found")
    first_seen: dict[str, Path] = {}
    for f in files:
        text, problem = read_document_text(f)
        if text is None:
            problems.append(problem or f"{f}:0: unreadable")
            continue
        doc, probs = parse_document(text, f)
        problems.extend(probs)
        if doc is None:
            continue
        if doc.name in first_seen:
            problems.append(f"{f}:2: duplicate agent name '{doc.name}' (already in {first_seen[doc.name]})")
            continue
        first_seen[doc.name] = f
        expected_dir = doc.platform
        if f.parent.name in ("desktop", "mobile") and f.parent.name != expected_dir:
            problems.append(f"{f}:1: platform is {doc.platform} but the file is under {f.parent.name}/")
        docs.append(doc)
    return docs, problems


class AgentPool:
    """An ordered, name-unique collection of agent documents."""

    def __init__(self, agents: list[AgentDocument], root: Path | None = None) -> None:
        names = [a.name for a in agents]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise AgentDocumentError([f"<pool>:0: duplicate agent name(s): {', '.join(dupes)}"])
        self.agents: list[AgentDocument] = list(agents)
        self._by_name = {a.name: a for a in self.agents}
        self.root = root

    @classmethod
    def from_dir(cls, folder: str | Path | None = None) -> AgentPool:
        """Load and validate a folder (default ``data/agents``); any problem raises."""
        folder = Path(folder) if folder is not None else agents_dir()
        docs, problems = validate_dir(folder)
        if problems:
            raise AgentDocumentError(problems)
        return cls(docs, root=folder)

    @property
    def names(self) -> list[str]:
        return [a.name for a in self.agents]

    def __len__(self) -> int:
        return len(self.agents)

    def __iter__(self) -> Iterator[AgentDocument]:
        return iter(self.agents)

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def get(self, name: str) -> AgentDocument:
        try:
            return self._by_name[name]
        except KeyError:
            close = difflib.get_close_matches(name, self.names, n=3)
            hint = f"; did you mean {', '.join(close)}?" if close else f"; enrolled: {len(self)} agents"
            raise UnknownAgentError(f"unknown agent '{name}'{hint}") from None

    def subset(self, names: list[str]) -> AgentPool:
        return AgentPool([self.get(n) for n in names], root=self.root)

    def filter(self, *, platform: str | None = None, interface: str | None = None) -> AgentPool:
        keep = [
            a
            for a in self.agents
            if (platform is None or a.platform == platform) and (interface is None or a.interface == interface)
        ]
        return AgentPool(keep, root=self.root)

    def domain_of(self, name: str) -> str:
        return self.get(name).domain

    def by_domain(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for a in self.agents:
            out.setdefault(a.domain, []).append(a.name)
        return out

    def with_agent(self, doc: AgentDocument) -> AgentPool:
        """A new pool with ``doc`` appended (order matters for AgentToken rows)."""
        if doc.name in self:
            raise AgentDocumentError([f"{doc.path}:2: agent '{doc.name}' is already enrolled"])
        return AgentPool(self.agents + [doc], root=self.root)

    def enroll(self, path: str | Path) -> AgentDocument:
        """Validate a new document and copy it into ``<root>/<platform>/<Name>.md``."""
        if self.root is None:
            raise AgentDocumentError(["<pool>:0: this pool has no folder to enrol into"])
        doc = load_document(path)
        self.with_agent(doc)  # refuses a duplicate name
        dest = self.root / doc.platform / f"{doc.name}.md"
        if dest.exists():
            raise AgentDocumentError([f"{dest}:0: a document already exists at the destination"])
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = dest.with_suffix(".md.tmp")
        shutil.copyfile(path, tmp)
        tmp.replace(dest)
        doc = load_document(dest)
        self.agents.append(doc)
        self._by_name[doc.name] = doc
        log.info("Enrolled %s (%s, %s) at %s", doc.name, doc.interface, doc.domain, dest)
        return doc
