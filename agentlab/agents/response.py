"""Read the sectioned replies the AppAgent prompts ask for, tolerating a small model's mess.

Replies are ``Observation: / Thought: / Action: / Summary:`` (acting) or
``Decision: / Thought: / Documentation:`` (reflecting). Headers may be bold, lower case or
missing; the action falls back to the first action call found anywhere in the reply.
Anything that cannot be used raises :class:`ActionParseError` quoting the reply.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agentlab.envs.actions.base import Action
from agentlab.envs.actions.space import ActionSpace
from agentlab.envs.base import clip
from agentlab.errors import ActionParseError

SECTIONS = ("observation", "thought", "action", "summary", "decision", "documentation")
_HEADER = re.compile(r"^[\s>*#_-]*(" + "|".join(SECTIONS) + r")\s*[*_]*\s*:\s*[*_]*", re.I | re.M)
DECISIONS = ("BACK", "INEFFECTIVE", "CONTINUE", "SUCCESS")


def sections(reply: str) -> dict[str, str]:
    """Header -> text up to the next header (first occurrence of each header wins)."""
    out: dict[str, str] = {}
    matches = list(_HEADER.finditer(reply))
    for i, m in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(reply)
        key = m.group(1).lower()
        if key not in out:
            out[key] = reply[m.end() : end].strip()
    return out


@dataclass(frozen=True)
class ActReply:
    """A parsed acting reply; ``action`` is always a valid action of the space."""

    observation: str
    thought: str
    action: Action
    action_text: str
    summary: str


def parse_act_reply(reply: str, space: ActionSpace) -> ActReply:
    if not reply or not reply.strip():
        raise ActionParseError("the model returned an empty reply")
    sec = sections(reply)
    action_text = sec.get("action", "")
    try:
        action = space.parse(action_text) if action_text else space.parse(reply)
    except ActionParseError as exc:
        if action_text:  # the Action section was unusable; a call elsewhere may still be meant
            try:
                action = space.parse(reply)
            except ActionParseError:
                raise ActionParseError(f"{exc.message} (reply: {clip(reply, 200)!r})") from None
        else:
            raise ActionParseError(f"{exc.message}; the reply has no 'Action:' line (reply: {clip(reply, 200)!r})") from None
    return ActReply(
        observation=sec.get("observation", ""),
        thought=sec.get("thought", ""),
        action=action,
        action_text=action_text or reply.strip(),
        summary=sec.get("summary", ""),
    )


@dataclass(frozen=True)
class ReflectReply:
    decision: str  #: one of DECISIONS
    thought: str
    documentation: str


def parse_reflect_reply(reply: str, need_decision: bool = True) -> ReflectReply:
    sec = sections(reply or "")
    decision = ""
    if need_decision:
        source = sec.get("decision") or reply or ""
        m = re.search(r"\b(" + "|".join(DECISIONS) + r")\b", source, re.I)
        if not m:
            raise ActionParseError(f"no decision ({', '.join(DECISIONS)}) in reply {clip(reply or '', 200)!r}")
        decision = m.group(1).upper()
    doc = sec.get("documentation", "").strip()
    if not doc and decision not in ("INEFFECTIVE",):
        raise ActionParseError(f"no 'Documentation:' text in reply {clip(reply or '', 200)!r}")
    return ReflectReply(decision=decision, thought=sec.get("thought", ""), documentation=clip(doc, 600))
