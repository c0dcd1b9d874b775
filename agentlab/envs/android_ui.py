"""Turn a ``uiautomator dump`` into the numbered elements an agent can act on.

AppAgent's recipe: keep every clickable node, plus focusable nodes (text fields, mostly)
that are not within ~30 px of a clickable one (otherwise the same widget gets two labels);
give each a stable identity from its resource-id, or its class + size + content-desc when
the app sets no id, so element documentation written during exploration can be found
again on a later screen or in a later run. Pure functions, no device needed.
"""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

from agentlab.envs.base import Element
from agentlab.errors import DataError

_BOUNDS = re.compile(r"\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]")


@dataclass
class UINode:
    """One ``<node>`` of the hierarchy, with the attributes agents use."""

    cls: str
    text: str
    resource_id: str
    content_desc: str
    bounds: tuple[int, int, int, int]
    clickable: bool
    focusable: bool
    focused: bool
    enabled: bool
    checkable: bool
    checked: bool
    selected: bool
    scrollable: bool
    long_clickable: bool
    package: str
    depth: int
    children: list[UINode] = field(default_factory=list)

    @property
    def center(self) -> tuple[int, int]:
        x1, y1, x2, y2 = self.bounds
        return (x1 + x2) // 2, (y1 + y2) // 2

    @property
    def is_editable(self) -> bool:
        return "EditText" in self.cls or "AutoCompleteTextView" in self.cls

    def descendant_text(self, limit: int = 3) -> str:
        """Visible texts below this node, in order (a clickable row usually holds its label)."""
        texts: list[str] = []
        for n in self.walk()[1:]:
            t = n.text or n.content_desc
            if t and t not in texts:
                texts.append(t)
            if len(texts) >= limit:
                break
        return " ".join(texts)

    def state(self) -> tuple[str, ...]:
        flags: list[str] = []
        if self.checkable:
            flags.append("checked" if self.checked else "unchecked")
        if self.selected:
            flags.append("selected")
        if self.focused:
            flags.append("focused")
        if self.scrollable:
            flags.append("scrollable")
        if self.is_editable:
            flags.append("editable")
        return tuple(flags)

    def walk(self) -> list[UINode]:
        out = [self]
        for c in self.children:
            out.extend(c.walk())
        return out


def _bool(attrs: dict[str, str], name: str) -> bool:
    return attrs.get(name, "false") == "true"


def parse_bounds(text: str) -> tuple[int, int, int, int]:
    m = _BOUNDS.fullmatch(text.strip())
    if not m:
        raise DataError(f"bad bounds attribute {text!r}; expected [x1,y1][x2,y2]")
    x1, y1, x2, y2 = (int(v) for v in m.groups())
    return x1, y1, x2, y2


def parse_hierarchy(xml: str) -> list[UINode]:
    """Parse uiautomator XML into root nodes; :class:`DataError` if it is not a dump."""
    try:
        root = ET.fromstring(xml.encode("utf-8") if isinstance(xml, str) else xml)
    except ET.ParseError as exc:
        raise DataError(f"uiautomator dump is not valid XML ({exc})") from None
    if root.tag != "hierarchy":
        raise DataError(f"uiautomator dump has root <{root.tag}>, expected <hierarchy>")

    def build(el: ET.Element, depth: int) -> UINode:
        a = el.attrib
        node = UINode(
            cls=a.get("class", ""),
            text=a.get("text", ""),
            resource_id=a.get("resource-id", ""),
            content_desc=a.get("content-desc", ""),
            bounds=parse_bounds(a.get("bounds", "[0,0][0,0]")),
            clickable=_bool(a, "clickable"),
            focusable=_bool(a, "focusable"),
            focused=_bool(a, "focused"),
            enabled=a.get("enabled", "true") == "true",
            checkable=_bool(a, "checkable"),
            checked=_bool(a, "checked"),
            selected=_bool(a, "selected"),
            scrollable=_bool(a, "scrollable"),
            long_clickable=_bool(a, "long-clickable"),
            package=a.get("package", ""),
            depth=depth,
        )
        node.children = [build(c, depth + 1) for c in el if c.tag == "node"]
        return node

    return [build(c, 0) for c in root if c.tag == "node"]


def element_uid(node: UINode) -> str:
    """Stable identity: resource-id, else class + size + short content-desc (AppAgent's rule).

    The result is safe as a file name (``data/docs/<app>/<uid>.json``).
    """
    if node.resource_id:
        uid = node.resource_id
    else:
        x1, y1, x2, y2 = node.bounds
        uid = f"{node.cls.rsplit('.', 1)[-1] or 'node'}_{x2 - x1}_{y2 - y1}"
    if node.content_desc and len(node.content_desc) < 20:
        uid += f"_{node.content_desc}"
    return re.sub(r"[^A-Za-z0-9._-]+", "_", uid.replace(":", ".").replace("/", "_")).strip("_")


def select_elements(roots: list[UINode], min_dist: float = 30.0) -> list[Element]:
    """Clickable nodes, plus focusable ones farther than ``min_dist`` px from every kept one.

    Nodes with empty or off-screen bounds are dropped. Elements are numbered from 1 in
    screen order (top to bottom, then left to right).
    """
    nodes = [n for r in roots for n in r.walk()]
    visible = [n for n in nodes if n.bounds[2] > n.bounds[0] and n.bounds[3] > n.bounds[1] and n.enabled]
    kept: list[UINode] = [n for n in visible if n.clickable]
    for n in visible:
        if n.clickable or not n.focusable:
            continue
        cx, cy = n.center
        if all(math.dist((cx, cy), k.center) > min_dist for k in kept):
            kept.append(n)
    kept.sort(key=lambda n: (n.bounds[1], n.bounds[0], n.depth))
    out: list[Element] = []
    for i, n in enumerate(kept, start=1):
        text = n.text or n.content_desc or (n.descendant_text() if n.clickable else "")
        if not text and n.checkable:
            text = row_label(n, visible)
        out.append(
            Element(
                id=i,
                bbox=n.bounds,
                role=n.cls,
                text=text,
                resource_id=n.resource_id or None,
                clickable=n.clickable,
                focusable=n.focusable,
                uid=element_uid(n),
                state=n.state(),
            )
        )
    return out


def row_label(node: UINode, nodes: list[UINode], limit: int = 2) -> str:
    """The label a screen reader gives a switch or check box that has no text of its own: the
    texts on its row (text nodes whose vertical extent overlaps its own), left to right, as a
    settings row's "Dark theme" names the switch beside it (Android's ``labelFor``)."""
    top, bottom = node.bounds[1], node.bounds[3]
    row = sorted((n for n in nodes if n.text and n is not node and n.bounds[1] < bottom and n.bounds[3] > top),
                 key=lambda n: (n.bounds[0], n.bounds[1]))
    return " ".join(dict.fromkeys(n.text for n in row[:limit]))


def focused_editable(roots: list[UINode]) -> UINode | None:
    """The text field that currently has input focus, if any."""
    for r in roots:
        for n in r.walk():
            if n.focused and n.is_editable:
                return n
    return None


def editables(roots: list[UINode]) -> list[UINode]:
    return [n for r in roots for n in r.walk() if n.is_editable and n.enabled]


def screen_signature(roots: list[UINode]) -> str:
    """A cheap fingerprint of the screen's structure + texts (to tell 'nothing changed')."""
    parts = []
    for r in roots:
        for n in r.walk():
            parts.append(f"{n.cls}|{n.resource_id}|{n.text}|{n.content_desc}|{n.checked}|{n.bounds}")
    return "\n".join(parts)
