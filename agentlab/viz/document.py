"""A report as a few plain blocks (headings, paragraphs, lists, tables), written as Markdown and as HTML.

Why: ``agentlab report`` writes the same content twice, a Markdown file to read in a terminal or a
pull request and an HTML page to open in a browser. Building the content once as blocks and
rendering each format from them keeps the two from drifting apart (no Markdown-to-HTML converter
is needed, and none is installed). Text is escaped for each format here, never by the caller: in
Markdown too, since a Markdown viewer renders raw HTML (a row's error text is whatever a program or
an endpoint said), ``&`` and ``<`` are written as entities (``&amp;``, ``&lt;``): no tag, comment or
entity of the data is left for it to render (``>`` alone opens none and stays, so ``a -> b`` reads as is).
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field

#: the style of the HTML rendering (inline: the page must open from disk, with nothing fetched)
CSS = """
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:24px auto;max-width:1200px;padding:0 16px;color:#222}
h1,h2,h3{margin-top:1.4em} table{border-collapse:collapse;margin:8px 0 16px} code{background:#f3f3f3;padding:0 3px}
th,td{border:1px solid #ccc;padding:4px 8px;text-align:left;vertical-align:top} th{background:#f3f3f3}
td.num{text-align:right;font-variant-numeric:tabular-nums} .yes{color:#17803d;font-weight:600} .no{color:#b42318;font-weight:600}
"""


@dataclass(frozen=True)
class Heading:
    text: str
    level: int = 2


@dataclass(frozen=True)
class Paragraph:
    text: str


@dataclass(frozen=True)
class Bullets:
    items: list[str]


@dataclass(frozen=True)
class Table:
    headers: list[str]
    rows: list[list[str]]
    #: indexes of the columns holding numbers (right-aligned)
    numeric: frozenset[int] = frozenset()


Block = Heading | Paragraph | Bullets | Table


@dataclass
class Document:
    """An ordered list of blocks with a title."""

    title: str
    blocks: list[Block] = field(default_factory=list)

    def add(self, *blocks: Block) -> Document:
        self.blocks.extend(blocks)
        return self

    def markdown(self) -> str:
        """GitHub-flavoured Markdown (tables with pipes escaped in cells)."""
        out = [f"# {_md(self.title)}", ""]
        for b in self.blocks:
            if isinstance(b, Heading):
                out += [f"{'#' * max(2, min(b.level, 6))} {_md(b.text)}", ""]
            elif isinstance(b, Paragraph):
                out += [_md(b.text), ""]
            elif isinstance(b, Bullets):
                out += [f"- {_md(i)}" for i in b.items] + [""]
            else:
                out.append("| " + " | ".join(_cell(h) for h in b.headers) + " |")
                out.append("|" + "|".join("---:" if i in b.numeric else "---" for i in range(len(b.headers))) + "|")
                out += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in b.rows]
                out.append("")
        return "\n".join(out).rstrip() + "\n"

    def html(self) -> str:
        """One self-contained HTML page (inline style, no script, nothing fetched)."""
        parts = [f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{html.escape(self.title)}</title>"
                 f"<style>{CSS}</style></head><body><h1>{html.escape(self.title)}</h1>"]
        for b in self.blocks:
            if isinstance(b, Heading):
                n = max(2, min(b.level, 6))
                parts.append(f"<h{n}>{html.escape(b.text)}</h{n}>")
            elif isinstance(b, Paragraph):
                parts.append(f"<p>{html.escape(b.text)}</p>")
            elif isinstance(b, Bullets):
                parts.append("<ul>" + "".join(f"<li>{html.escape(i)}</li>" for i in b.items) + "</ul>")
            else:
                head = "".join(f"<th>{html.escape(h)}</th>" for h in b.headers)
                body = "".join("<tr>" + "".join(_td(c, i in b.numeric) for i, c in enumerate(row)) + "</tr>" for row in b.rows)
                parts.append(f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")
        return "".join(parts) + "</body></html>\n"


def _md(text: str) -> str:
    """Text outside tables: one line (a row's error may hold newlines), HTML escaped."""
    return _no_html(" ".join(text.split("\n")))


def _cell(text: str) -> str:
    return _no_html(" ".join(text.split())).replace("|", "\\|")


def _no_html(text: str) -> str:
    """Markdown text that a viewer cannot read as HTML: every tag, comment and entity escaped."""
    return text.replace("&", "&amp;").replace("<", "&lt;")


def _td(text: str, numeric: bool) -> str:
    cls = ' class="num"' if numeric else ""
    if text in ("yes", "no"):
        cls = f' class="{text}"'
    return f"<td{cls}>{html.escape(text)}</td>"
