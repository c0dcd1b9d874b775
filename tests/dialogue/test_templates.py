"""Prompt templates: strict one-pass filling, full hashes, legacy short hashes, changed-template errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentlab.dialogue.templates import PromptTemplate, check_recorded, load_template
from agentlab.errors import CheckpointError, ConfigError
from agentlab.paths import prompts_dir
from agentlab.pool.document import parse_document
from agentlab.selfinstruct.generate import build_prompt


def test_every_shipped_template_loads_under_its_user_folder() -> None:
    names = sorted(p.relative_to(prompts_dir()).with_suffix("").as_posix() for p in prompts_dir().rglob("*.txt"))
    assert names and all(n.split("/")[0] in {"appagent", "code", "cola", "metaagent", "pcagent", "s2", "selfinstruct", "synthesis", "teams", "tools"} for n in names)
    for n in names:
        t = load_template(n)
        assert t.name == n and len(t.sha256) == 64 and t.path == prompts_dir() / f"{n}.txt"


def test_render_is_one_pass_and_keeps_literal_braces(tmp_path: Path) -> None:
    t = PromptTemplate("x", "Task: {task}\nState: {state}\nJSON: {\"a\": 1} {Upper} {} {{ }}")
    out = t.render(task="do {state} now", state="s")
    assert out == "Task: do {state} now\nState: s\nJSON: {\"a\": 1} {Upper} {} {{ }}"


def test_missing_and_unknown_fields_name_the_file() -> None:
    t = load_template("metaagent/manager")
    with pytest.raises(ConfigError, match="needs value.*documents") as exc:
        t.render(task="x", state="")
    assert exc.value.where and exc.value.where.endswith("metaagent/manager.txt")
    with pytest.raises(ConfigError, match=r"no placeholder.*\{extra\}") as exc:
        t.render(task="x", state="", documents="d", extra="?")
    assert exc.value.where and exc.value.where.endswith("metaagent/manager.txt")


def test_render_offered_takes_what_the_template_uses() -> None:
    t = PromptTemplate("x", "{a} and {b}")
    assert t.render_offered({"a": 1, "b": 2, "c": 3}) == "1 and 2"
    with pytest.raises(ConfigError, match="needs value"):
        t.render_offered({"a": 1})


def test_old_flat_name_points_to_the_new_folder() -> None:
    with pytest.raises(ConfigError, match="did you mean metaagent/router_agenttoken"):
        load_template("router_agenttoken")


def test_legacy_12_char_hash_is_the_same_template() -> None:
    t = load_template("selfinstruct/completion")
    assert t.matches(t.sha256) and t.matches(t.sha256[:12])
    assert not t.matches(t.sha256[:11]) and not t.matches("0" * 12) and not t.matches(t.sha256[:20])


def test_changed_template_error_says_which_and_what_to_do() -> None:
    t = load_template("metaagent/router_agenttoken")
    check_recorded(t.name, t.sha256, t, where="ckpt.json", redo="retrain with `agentlab train`")
    with pytest.raises(CheckpointError) as exc:
        check_recorded(t.name, "f" * 64, t, where="ckpt.json", redo="retrain with `agentlab train`")
    msg = str(exc.value)
    assert "metaagent/router_agenttoken" in msg and "router_agenttoken.txt" in msg
    assert "f" * 64 in msg and t.sha256 in msg
    assert "retrain with `agentlab train`" in msg and "restore the template file" in msg
    assert msg.startswith("ckpt.json: ") and "changed since this was made" in msg


# A fixed document (not data/agents/, which may be edited) with braces in a demonstration.
_DOC = '''---
name: GmailAgent
platform: mobile
interface: GUI
modality: multi
base_model: closed
domain: gmail
supports_extension: false
---
# Applications
Gmail on Android

# Capabilities
GmailAgent is specialised in the Gmail app, with element documentation gathered by self-exploring its inbox, compose screen, search, labels and settings. It composes, replies to, forwards and schedules emails. It acts through taps, swipes and typing on the phone screen.

# Limitations
GmailAgent only operates the Gmail app on the phone. Tasks outside Gmail must be delegated to another agent.

# Demonstrations
1. Send an email to hr@company.com with the subject "Sick leave" saying I'm unwell today.
2. Find all emails from Amazon with attachments that arrived this month.
3. Reply to the thread "{task} {{x}}" with "Works for me."
'''

# What the old str.format-based self-instruct code rendered for _DOC (computed before it was removed).
_OLD_COMPLETION = (
    'GmailAgent is an assistant for an Android phone. GmailAgent is specialised in the Gmail app, with element '
    'documentation gathered by self-exploring its inbox, compose screen, search, labels and settings.\n\nRequests '
    'that users sent to GmailAgent:\n1. Send an email to hr@company.com with the subject "Sick leave" saying I\'m '
    'unwell today.\n2. Find all emails from Amazon with attachments that arrived this month.\n3. Reply to the '
    'thread "{task} {{x}}" with "Works for me."\n4.'
)
_OLD_CHAT = (
    'You write realistic requests that users send to a computer assistant called GmailAgent (an Android phone).\n'
    'Applications: Gmail on Android\nCapabilities: GmailAgent is specialised in the Gmail app, with element '
    'documentation gathered by self-exploring its inbox, compose screen, search, labels and settings. It composes, '
    'replies to, forwards and schedules emails. It acts through taps, swipes and typing on the phone screen.\n'
    'Limitations: GmailAgent only operates the Gmail app on the phone. Tasks outside Gmail must be delegated to '
    'another agent.\n\nRequests it has received:\n1. Send an email to hr@company.com with the subject "Sick leave" '
    'saying I\'m unwell today.\n2. Find all emails from Amazon with attachments that arrived this month.\n3. Reply '
    'to the thread "{task} {{x}}" with "Works for me."\n\nWrite 5 new requests that GmailAgent, and not a different '
    'assistant, should handle. Each must be one concrete task, different from the ones above. Answer with a '
    'numbered list only, one request per line, no other text.'
)


@pytest.mark.parametrize("style, expected", [("completion", _OLD_COMPLETION), ("chat", _OLD_CHAT)])
def test_selfinstruct_prompt_is_byte_for_byte_the_old_rendering(style: str, expected: str) -> None:
    doc, problems = parse_document(_DOC)
    assert doc is not None, problems
    shots = [d.text for d in doc.demonstrations]
    assert build_prompt(load_template(f"selfinstruct/{style}"), doc, shots, count=5) == expected
