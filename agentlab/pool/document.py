"""Agent documents: the integration protocol a developer fills in to enrol an agent.

One Markdown file per agent, YAML front matter plus four sections::

    ---
    name: SheetAgent
    platform: desktop          # desktop | mobile
    interface: CLI             # CLI | GUI
    modality: single           # single | multi
    base_model: closed         # open | closed
    domain: calc               # fixed vocabulary per platform (DOMAINS)
    supports_extension: false
    runner: code               # optional: the implementation (agentlab.agents.base.AGENTS)
    runner_options:            # optional: handed to the runner (e.g. libraries to mention)
      libraries: [openpyxl]
    ---
    # Applications
    ...
    # Capabilities
    ...
    # Limitations
    ...
    # Demonstrations
    1. A realistic user request.
    2. Another one. ![state](images/sheet_2.png)
    # Skills                   # optional, last: a GUI specialist's learned app skills
    - set_cell(cell, value): go to a cell through the Name Box and enter a value into it

``# Skills`` is written by ``agentlab skills learn`` (:mod:`agentlab.agents.gui_skills`) for a
desktop GUI specialist whose application has learned skills; readers (and ``agentlab pool``)
see them. Routers do not read it yet: it is not part of :attr:`AgentDocument.description`.

Parsing never stops at the first problem: every problem is reported as
``path:line: what is wrong`` so a developer fixes the document in one pass.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from agentlab.config import safe_load, yaml_error_line

DOMAINS: dict[str, tuple[str, ...]] = {
    "desktop": ("os", "calc", "impress", "writer", "vlc", "thunderbird", "chrome", "vscode", "gimp", "general"),
    "mobile": ("maps", "x", "telegram", "temu", "youtube", "spotify", "yelp", "gmail", "clock", "mobile"),
}
ALL_DOMAINS: tuple[str, ...] = DOMAINS["desktop"] + DOMAINS["mobile"]
SECTIONS: tuple[str, ...] = ("Applications", "Capabilities", "Limitations", "Demonstrations")
#: sections a document may have, after the required ones
OPTIONAL_SECTIONS: tuple[str, ...] = ("Skills",)
SKILL_LINE_RE = re.compile(r"^\s*-\s+([a-z][a-z0-9_]*\([^)]*\)):\s+(.*\S)\s*$")
FIELD_CHOICES: dict[str, tuple[str, ...]] = {
    "platform": ("desktop", "mobile"),
    "interface": ("CLI", "GUI"),
    "modality": ("single", "multi"),
    "base_model": ("open", "closed"),
}
RUNNER_FIELDS = ("runner", "runner_options")
REQUIRED_FIELDS = ("name", "platform", "interface", "modality", "base_model", "domain", "supports_extension")
NAME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_]{1,63}$")
DEMO_RE = re.compile(r"^\s*(\d+)[.)]\s+(.*\S)\s*$")
IMAGE_RE = re.compile(r"!\[[^\]]*\]\(([^)\s]+)\)\s*$")
HEADING_RE = re.compile(r"^#\s+(.+?)\s*:?\s*$")


@dataclass(frozen=True)
class Demonstration:
    """One example request the agent should receive (optionally with an initial-state image)."""

    text: str
    image: Path | None = None
    line: int = 0


@dataclass(frozen=True)
class AgentDocument:
    """A parsed, validated agent document."""

    name: str
    platform: str
    interface: str
    modality: str
    base_model: str
    domain: str
    supports_extension: bool
    applications: str
    capabilities: str
    limitations: str
    demonstrations: tuple[Demonstration, ...]
    path: Path | None = None
    extra: dict[str, Any] = field(default_factory=dict, compare=False)
    #: the implementation that carries tasks out (a name in ``agentlab.agents.base.AGENTS``)
    runner: str | None = None
    runner_options: dict[str, Any] = field(default_factory=dict, compare=False)
    runner_line: int = field(default=0, compare=False)  #: the ``runner:`` line, for error messages
    #: ``# Skills``: the learned app skills, one ``name(params): what it does`` line each
    skills: tuple[str, ...] = ()

    @property
    def description(self) -> str:
        """Applications, capabilities and limitations: what self-instruct shows the generator."""
        return (
            f"Applications: {self.applications}\n"
            f"Capabilities: {self.capabilities}\n"
            f"Limitations: {self.limitations}"
        )

    def render(self, max_demos: int = 3) -> str:
        """The document as it appears in an ICL or manager prompt. ``max_demos < 0`` is the brief
        form, for a store whose full documents do not fit the model's context (an ICL prompt over
        every agent): applications and capabilities only, no limitations and no examples."""
        if max_demos < 0:
            return (f"Agent: {self.name} ({self.interface}, {self.platform}, domain {self.domain})\n"
                    f"Applications: {self.applications}\nCapabilities: {self.capabilities}")
        demos = "\n".join(f"  - {d.text}" for d in self.demonstrations[:max_demos])
        return (
            f"Agent: {self.name} ({self.interface}, {self.platform}, domain {self.domain})\n"
            f"{self.description}\n"
            f"Example tasks:\n{demos}"
        )


def _line_of(lines: list[str], pattern: str, default: int = 1) -> int:
    for i, line in enumerate(lines, start=1):
        if line.strip().startswith(pattern):
            return i
    return default


def parse_document(text: str, path: Path | str = "<string>") -> tuple[AgentDocument | None, list[str]]:
    """Parse one document; return (document or None, problems as ``path:line: message``)."""
    path = Path(path)
    problems: list[str] = []

    def bad(line: int, msg: str) -> None:
        problems.append(f"{path}:{line}: {msg}")

    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        bad(1, "missing YAML front matter: the file must start with a '---' line")
        return None, problems
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    except StopIteration:
        bad(1, "front matter is not closed: add a '---' line after the fields")
        return None, problems
    try:
        meta = safe_load("\n".join(lines[1:end])) or {}  # anchors and aliases refused
    except yaml.YAMLError as exc:
        line = yaml_error_line(exc)  # 1-based within the front matter, which starts on line 2
        bad(line + 1 if line else 2, f"front matter is not valid YAML ({getattr(exc, 'problem', exc)})")
        return None, problems
    if not isinstance(meta, dict):
        bad(2, "front matter must be a mapping of 'key: value' lines")
        return None, problems

    fm_lines = lines[: end + 1]
    for key in REQUIRED_FIELDS:
        if key not in meta or meta[key] in (None, ""):
            bad(end + 1, f"front matter lacks required field '{key}'")
    for key, choices in FIELD_CHOICES.items():
        if key in meta and meta[key] not in choices:
            bad(_line_of(fm_lines, f"{key}:"), f"{key} '{meta[key]}' is not one of {', '.join(choices)}")
    name = meta.get("name")
    if name is not None and not (isinstance(name, str) and NAME_RE.match(name)):
        bad(_line_of(fm_lines, "name:"), f"name '{name}' must be an identifier (letters, digits, _; 2-64 chars)")
    platform, domain = meta.get("platform"), meta.get("domain")
    if domain is not None and platform in DOMAINS and domain not in DOMAINS[platform]:
        bad(
            _line_of(fm_lines, "domain:"),
            f"unknown domain '{domain}' for platform {platform}; known: {', '.join(DOMAINS[platform])}",
        )
    runner, runner_options = meta.get("runner"), meta.get("runner_options", {})
    if runner is not None and not (isinstance(runner, str) and NAME_RE.match(runner)):
        bad(_line_of(fm_lines, "runner:"), f"runner '{runner}' must be a runner name such as code, appagent or gui")
    if not isinstance(runner_options, dict):
        bad(_line_of(fm_lines, "runner_options:"), "runner_options must be a mapping of 'key: value' lines")
    ext = meta.get("supports_extension")
    if ext is not None and not isinstance(ext, bool):
        bad(_line_of(fm_lines, "supports_extension:"), f"supports_extension must be true or false, not '{ext}'")

    # Sections: '# Title' headings in the body, in protocol order.
    sections: dict[str, tuple[int, list[tuple[int, str]]]] = {}
    current: str | None = None
    for i in range(end + 1, len(lines)):
        lineno = i + 1
        m = HEADING_RE.match(lines[i])
        if m and not lines[i].startswith("##"):
            title = m.group(1).strip()
            canon = next((s for s in SECTIONS + OPTIONAL_SECTIONS if s.lower() == title.lower()), None)
            if canon is None:
                bad(lineno, f"unknown section '# {title}'; expected one of {', '.join(SECTIONS + OPTIONAL_SECTIONS)}")
                current = None
                continue
            if canon in sections:
                bad(lineno, f"section '# {canon}' appears twice")
            sections[canon] = (lineno, [])
            current = canon
        elif current is not None:
            sections[current][1].append((lineno, lines[i]))
    order = [s for s in SECTIONS + OPTIONAL_SECTIONS if s in sections]
    positions = [sections[s][0] for s in order]
    if positions != sorted(positions):
        bad(min(positions), f"sections must appear in the order {', '.join(SECTIONS + OPTIONAL_SECTIONS)}")
    skills: list[str] = []
    for lineno, raw in sections.get("Skills", (0, []))[1]:
        if not raw.strip():
            continue
        sm = SKILL_LINE_RE.match(raw)
        if sm is None:
            bad(lineno, "a skill is a line '- name(params): what it does'")
        else:
            skills.append(f"{sm.group(1)}: {sm.group(2)}")
    body: dict[str, str] = {}
    last_line = len(lines)
    for s in SECTIONS:
        if s not in sections:
            bad(last_line, f"missing section '# {s}'")
            continue
        start, content = sections[s]
        txt = " ".join(l.strip() for _, l in content if l.strip())
        if not txt:
            bad(start, f"section '# {s}' is empty")
        body[s] = txt

    demos: list[Demonstration] = []
    if "Demonstrations" in sections:
        start, content = sections["Demonstrations"]
        expected = 1
        seen: set[str] = set()
        for lineno, raw in content:
            if not raw.strip() or raw.strip().lower() in ("end!", "end"):
                continue
            m = DEMO_RE.match(raw)
            if not m:
                bad(lineno, "demonstration must be a numbered item like '3. Put the totals in column D'")
                continue
            num, item = int(m.group(1)), m.group(2)
            if num != expected:
                bad(lineno, f"demonstration numbered {num}, expected {expected}")
            expected = num + 1
            image: Path | None = None
            im = IMAGE_RE.search(item)
            if im:
                image = (path.parent / im.group(1)) if path.name != "<string>" else Path(im.group(1))
                item = item[: im.start()].strip()
                if not image.is_file():
                    bad(lineno, f"demonstration image not found: {image}")
            if not item:
                bad(lineno, "demonstration has no task text")
                continue
            if item.lower() in seen:
                bad(lineno, "duplicate demonstration text")
            seen.add(item.lower())
            demos.append(Demonstration(text=item, image=image, line=lineno))
        if not demos and body.get("Demonstrations"):
            pass  # already reported line by line
        elif not demos:
            bad(start, "at least one demonstration is required")

    if problems:
        return None, problems
    doc = AgentDocument(
        name=str(meta["name"]),
        platform=str(meta["platform"]),
        interface=str(meta["interface"]),
        modality=str(meta["modality"]),
        base_model=str(meta["base_model"]),
        domain=str(meta["domain"]),
        supports_extension=bool(meta["supports_extension"]),
        applications=body["Applications"],
        capabilities=body["Capabilities"],
        limitations=body["Limitations"],
        demonstrations=tuple(demos),
        path=path if path.name != "<string>" else None,
        extra={k: v for k, v in meta.items() if k not in REQUIRED_FIELDS + RUNNER_FIELDS},
        runner=runner,
        runner_options=dict(runner_options),
        runner_line=_line_of(fm_lines, "runner:", 0),
        skills=tuple(skills),
    )
    return doc, []


def read_document_text(path: Path) -> tuple[str | None, str | None]:
    """The text of a document, or ``(None, "path:line: what is wrong")`` when it cannot be read
    (missing, a folder, not UTF-8, unreadable)."""
    if path.is_dir():
        return None, f"{path}:0: is a folder; expected an agent document (Markdown file)"
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None, f"{path}:0: file not found"
    except OSError as exc:
        return None, f"{path}:0: cannot read ({exc.strerror})"
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        return None, f"{path}:{line}: not UTF-8 text (byte 0x{data[exc.start]:02x}); save it as UTF-8"


def load_document(path: str | Path) -> AgentDocument:
    """Parse and validate one file; raise :class:`AgentDocumentError` listing every problem."""
    from agentlab.errors import AgentDocumentError

    path = Path(path)
    text, problem = read_document_text(path)
    if text is None:
        raise AgentDocumentError([problem or f"{path}:0: unreadable"])
    doc, problems = parse_document(text, path)
    if problems or doc is None:
        raise AgentDocumentError(problems)
    return doc
