"""The mail-profile toolkit (MailboxAgent): Thunderbird's ``prefs.js`` and its mbox mail folders.

Thunderbird keeps settings as ``user_pref("key", value);`` lines in ``prefs.js`` and each mail
folder as one mbox file (``Mail/Local Folders/Inbox``; a sub-folder of ``Archive`` lives in
``Archive.sbd/``). A message's read and starred state is the ``X-Mozilla-Status`` header (bits
0x1 read, 0x4 flagged, 0x8 deleted), which Thunderbird reads back from the file. Messages are
picked by a text their subject (or sender, or recipient) contains; ``*`` picks them all.
"""

from __future__ import annotations

import json
import mailbox
import re
from pathlib import Path
from typing import Annotated

from agentlab.toolkits.base import Slot, Toolkit, ToolError, file_slot, workspace_file

PrefsJS = Annotated[str, file_slot(".js", names=("prefs.js", "user.js"))]
Box = Annotated[str, Slot("file")]
NewBox = Annotated[str, Slot("file", new=True)]
NewFile = Annotated[str, file_slot(".txt", ".csv", new=True)]
Key = Annotated[str, Slot("setting")]
Value = Annotated[str, Slot("value")]
#: a text that picks messages: words of the request found in the messages' headers ("*" when it
#: says all or every); a made-up text picks nothing, and "*" on "get rid of it" deletes every message
Match = Annotated[str, Slot("match")]
Field = Annotated[str, Slot("choice", choices=("subject", "from", "to"))]
Flag = Annotated[str, Slot("choice", choices=("read", "unread", "flagged", "unflagged"))]
Text = Annotated[str, Slot("text")]

READ, FLAGGED, DELETED = 0x1, 0x4, 0x8
_PREF = re.compile(r'^\s*user_pref\(\s*"((?:[^"\\]|\\.)*)"\s*,\s*(.*?)\s*\)\s*;\s*$')
#: Thunderbird settings people ask for (``prefs.js`` keys)
KEYS: tuple[str, ...] = (
    "mail.identity.id1.compose_html", "mail.identity.id1.htmlSigText", "mail.identity.id1.sig_file",
    "mail.identity.id1.fullName", "mail.identity.id1.useremail", "mail.identity.id1.reply_on_top",
    "mail.identity.id1.attach_signature", "mail.spam.manualMark", "mail.spam.markAsReadOnSpam",
    "mailnews.mark_message_read.auto", "mailnews.mark_message_read.delay", "mail.server.server1.check_new_mail",
    "mail.server.server1.check_time", "mail.server.server1.empty_trash_on_exit", "mail.biff.play_sound",
    "mail.biff.show_alert", "mailnews.start_page.enabled", "mail.tabs.autoHide", "mail.default_html_action",
    "mailnews.display.prefer_plaintext", "mailnews.reply_header_type", "mail.compose.autosave",
    "mail.compose.autosaveinterval", "mail.forward_message_mode", "mail.phishing.detection.enabled",
    "mailnews.message_display.disable_remote_image", "spellchecker.dictionary",
)


def _describe(path: Path) -> str:
    if path.name.endswith(".js"):
        return f"{path.as_posix()} (prefs): " + path.read_text(encoding="utf-8", errors="replace")[:700]
    head = path.read_bytes()[:5]
    if head != b"From ":
        raise ValueError("not a mail folder")
    lines = []
    for msg in _messages(path):
        status = _status(msg)
        marks = ("read" if status & READ else "unread") + (", starred" if status & FLAGGED else "")
        lines.append(f"- {msg.get('Subject', '')} (from {msg.get('From', '')}; {marks})")
    return f"{path.as_posix()} (mail folder, {len(lines)} messages):\n" + "\n".join(lines)[:800]


kit = Toolkit("mail", "a Thunderbird mail profile: prefs.js settings and mbox mail folders", describe=_describe,
              catalogue=KEYS, examples=(
                  ("Put every receipt from the shop into a Receipts folder and mark them read (Mail/Local Folders/Inbox).",
                   "move_messages('Mail/Local Folders/Inbox', 'receipt', 'subject', 'Mail/Local Folders/Receipts')\n"
                   "mark_messages('Mail/Local Folders/Receipts', '*', 'subject', 'read')\ndone()"),
                  ("Stop Thunderbird from loading remote images (profile/prefs.js).",
                   "set_pref('profile/prefs.js', 'mailnews.message_display.disable_remote_image', 'true')\ndone()"),
              ))


# -- prefs.js ---------------------------------------------------------------------------------
def _pref_text(value: str) -> str:
    """A pref value as prefs.js writes it: true/false and numbers bare, anything else a JSON string."""
    v = value.strip()
    if v in ("true", "false") or re.fullmatch(r"-?\d+", v):
        return v
    if v.startswith('"') and v.endswith('"') and len(v) > 1:
        return v
    return json.dumps(value)


@kit.tool
def set_pref(file: PrefsJS, key: Key, value: Value) -> str:
    """Change a Thunderbird setting or option (its user_pref line in prefs.js: replaced where it is, else added at the end); true/false and whole numbers are written bare."""
    p = workspace_file(file)
    line = f"user_pref({json.dumps(key)}, {_pref_text(value)});"
    lines, found = [], False
    for old in p.read_text(encoding="utf-8").splitlines():
        m = _PREF.match(old)
        if m and json.loads(f'"{m.group(1)}"') == key:
            if not found:
                lines.append(line)
            found = True
        else:
            lines.append(old)
    if not found:
        lines.append(line)
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return line


@kit.tool
def remove_pref(file: PrefsJS, key: Key) -> str:
    """Remove a preference (Thunderbird then uses its default)."""
    p = workspace_file(file)
    kept = [ln for ln in p.read_text(encoding="utf-8").splitlines()
            if not ((m := _PREF.match(ln)) and json.loads(f'"{m.group(1)}"') == key)]
    if len(kept) == len(p.read_text(encoding="utf-8").splitlines()):
        raise ToolError(f"{file} has no user_pref {key!r}")
    p.write_text("\n".join(kept) + "\n", encoding="utf-8")
    return f"removed {key}"


# -- mail folders -----------------------------------------------------------------------------
def _messages(path: Path) -> list[mailbox.mboxMessage]:
    box = mailbox.mbox(str(path), create=False)
    try:
        return list(box)
    finally:
        box.close()


def _status(msg: mailbox.mboxMessage) -> int:
    try:
        return int(str(msg.get("X-Mozilla-Status", "0")).strip() or "0", 16)
    except ValueError:
        return 0


def _set_status(msg: mailbox.mboxMessage, status: int) -> None:
    if "X-Mozilla-Status" in msg:
        msg.replace_header("X-Mozilla-Status", f"{status:04x}")
    else:
        msg["X-Mozilla-Status"] = f"{status:04x}"


def _picks(msg: mailbox.mboxMessage, text: str, field: str) -> bool:
    """Whether the message's ``field`` header (subject, from, to) contains ``text`` (``*``: every message)."""
    return text.strip() == "*" or text.casefold() in str(msg.get(field.capitalize(), "")).casefold()


def _picked(messages: list[mailbox.mboxMessage], text: str, field: str) -> tuple[list[mailbox.mboxMessage], str]:
    """The messages whose ``field`` holds ``text``, and the field that picked them. When none does
    but another header does (the subject quoted, ``from`` chosen), those are picked by that header:
    the text is what the request named, the field only where to look. None anywhere is an error."""
    hit = [m for m in messages if _picks(m, text, field)]
    if hit or text.strip() == "*":
        return hit, field
    for other in ("subject", "from", "to"):
        hit = [m for m in messages if _picks(m, text, other)]
        if hit:
            return hit, other
    return [], field


def _without(messages: list[mailbox.mboxMessage], some: list[mailbox.mboxMessage]) -> list[mailbox.mboxMessage]:
    """``messages`` less ``some`` (the same objects), in order."""
    gone = {id(m) for m in some}
    return [m for m in messages if id(m) not in gone]


def _box(path: str) -> Path:
    p = workspace_file(path, "mail folder")
    if p.stat().st_size and p.read_bytes()[:5] != b"From ":
        raise ToolError(f"{path} is not an mbox mail folder")
    return p


def _write(path: Path, messages: list[mailbox.mboxMessage]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"")
    box = mailbox.mbox(str(path))
    try:
        for msg in messages:
            box.add(msg)
        box.flush()
    finally:
        box.close()


@kit.tool
def move_messages(folder: Box, text: Match, field: Field, target: NewBox) -> str:
    """Move the messages whose subject (or from/to) contains a text (* for all) to another mail folder, made if missing."""
    src = _box(folder)
    if Path(target).resolve() == src.resolve():  # writing the target, then the source without them, would delete them
        raise ToolError(f"{target!r} is the folder the messages are in; name another folder")
    messages = _messages(src)
    moving, field = _picked(messages, text, field)
    if not moving:
        raise ToolError(f"no message in {folder} has {text!r} in its subject, sender or recipient")
    dst = Path(target)
    existing = _messages(dst) if dst.is_file() and dst.stat().st_size else []
    _write(dst, existing + moving)
    _write(src, _without(messages, moving))
    return f"moved {len(moving)} message(s) (by {field}) to {target}"


@kit.tool
def delete_messages(folder: Box, text: Match, field: Field) -> str:
    """Delete the messages whose subject (or from/to) contains a text (* for all)."""
    src = _box(folder)
    messages = _messages(src)
    gone, field = _picked(messages, text, field)
    if not gone:
        raise ToolError(f"no message in {folder} has {text!r} in its subject, sender or recipient")
    keep = _without(messages, gone)
    _write(src, keep)
    return f"deleted {len(messages) - len(keep)} message(s) (by {field})"


@kit.tool
def mark_messages(folder: Box, text: Match, field: Field, flag: Flag) -> str:
    """Mark the messages whose subject (or from/to) contains a text (* for all) as read, unread, flagged (starred) or unflagged."""
    src = _box(folder)
    messages = _messages(src)
    picked, field = _picked(messages, text, field)
    for m in picked:  # the same message objects as in ``messages``, which is written back whole
        status = _status(m)
        status = {"read": status | READ, "unread": status & ~READ, "flagged": status | FLAGGED,
                  "unflagged": status & ~FLAGGED}[flag]
        _set_status(m, status)
    hit = len(picked)
    if not hit:
        raise ToolError(f"no message in {folder} has {text!r} in its subject, sender or recipient")
    _write(src, messages)
    return f"marked {hit} message(s) (by {field}) {flag}"


@kit.tool
def create_mail_folder(account: Annotated[str, Slot("folder")], name: Text) -> str:
    """Make an empty mail folder in an account folder (e.g. Mail/Local Folders); Parent/Child makes a sub-folder."""
    parent = Path(account)
    if not parent.is_dir():
        raise ToolError(f"no folder {account!r} in the workspace")
    *outer, last = name.strip("/").split("/")
    base = parent.joinpath(*[f"{p}.sbd" for p in outer])
    target = base / last
    if target.exists():
        raise ToolError(f"{account} already has a mail folder {name!r}")
    base.mkdir(parents=True, exist_ok=True)
    target.write_bytes(b"")
    return f"made mail folder {name!r}"


@kit.tool
def export_field(folder: Box, field: Field, out: NewFile, text: Match = "*") -> str:
    """Write the subjects (or senders, or recipients) of the messages whose subject contains a text (* for all) to a file, one per line, without repeats."""
    seen: dict[str, None] = {}
    for m in _messages(_box(folder)):
        if _picks(m, text, "subject") and not _status(m) & DELETED:
            seen[str(m.get(field.capitalize(), "")).strip()] = None
    Path(out).write_text("".join(v + "\n" for v in seen if v), encoding="utf-8")
    return f"wrote {len(seen)} line(s) to {out}"

