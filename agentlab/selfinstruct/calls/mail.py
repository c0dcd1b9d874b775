"""Synthesized MailboxAgent pairs: a random small Thunderbird profile (a ``prefs.js`` with a few
``user_pref`` lines, mbox mail folders with a handful of messages from random senders) and a
request to move, delete or mark messages, make a mail folder, list who sent what, or set or
remove a preference, worded as people ask it ("check for mail every 10 minutes", "star the mail
about the plumbing quote").

Why: the mail toolkit is only useful when a request about *messages* ("the bookshop's order
mails", "everything from Dana") is turned into the right folder, the right text to pick them by
and the right header to look in; and a request about a *setting* into the Thunderbird key and the
value as ``prefs.js`` wants it. The start states vary the profile's place (``thunderbird/``,
``.thunderbird/<random>.default/``), its account folder and its messages, so that an adapter
learns to read the request and the workspace rather than to remember one profile.

A value a call needs must be one the grammar can offer: a text the request says (a word, two
words, or a quoted phrase), a file or folder of the workspace, a key of ``prefs.js`` or of the
toolkit's catalogue. So e-mail addresses and new names with glue words are quoted, and a new
mail folder given as a path (for :func:`move_messages`) is only asked for where that path has no
space in it (``Mail/Local Folders`` cannot be named as one path of the request).
"""

from __future__ import annotations

import json
import mailbox
import random
import re
import string
from dataclasses import dataclass, field
from datetime import datetime, timezone
from email.utils import format_datetime
from pathlib import Path

from agentlab.selfinstruct.calls.draft import Draft, Generator
from agentlab.selfinstruct.calls.words import PEOPLE, TOPICS, pick, polite, sample

READ, FLAGGED = 0x1, 0x4
SURNAMES = ("Whitfield", "Moreau", "Okafor", "Lindqvist", "Haddad", "Novak", "Brennan", "Castillo", "Ferreira",
            "Kowalski", "Nakamura", "Osei", "Petrov", "Schultz", "Varga", "Yilmaz", "Adeyemi", "Bianchi")
DOMAINS = ("homemail.net", "posteo.example", "mailbox.example.org", "work-mail.example.com", "fastmail.example")
#: organisations that write to people: display name, address, the word a request calls them by
SENDERS = (("Pages Bookshop", "orders@pagesbookshop.example", "bookshop"),
           ("City Library", "noreply@citylibrary.example.org", "library"),
           ("Northwind Bank", "alerts@northwindbank.example", "bank"),
           ("Greenfield School", "office@greenfield-school.example.edu", "school"),
           ("Skyway Airlines", "booking@skyway.example", "Skyway"),
           ("Acme Hosting", "support@acmehosting.example", "Acme"),
           ("The Daily Digest", "digest@dailydigest.example", "Daily Digest"),
           ("Harbor Gym", "hello@harborgym.example", "gym"),
           ("Riverside Dental", "appointments@riversidedental.example", "Riverside"))
#: mailing lists a message may be sent to: display name, address, the word a request calls it by
LISTS = (("Hiking Club", "hiking-club@groups.example.org", "Hiking Club"),
         ("Dev Team", "dev-team@company.example", "dev-team"),
         ("Family", "family@lists.example.net", "family"),
         ("Book Circle", "book-circle@groups.example.org", "Book Circle"),
         ("All Staff", "all-staff@company.example", "all-staff"))
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday")
#: subject templates and the texts (as found in the subject) a request may pick them by
SUBJECTS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Invoice {n} for {month}", ("Invoice", "invoice")),
    ("Your order #{n} has shipped", ("order", "shipped")),
    ("Weekly newsletter: {topic} news", ("newsletter", "Weekly newsletter")),
    ("Receipt for your purchase", ("Receipt", "receipt")),
    ("Meeting about the {topic} plan", ("Meeting", "{topic}")),
    ("Reminder: {topic} deadline on {weekday}", ("Reminder", "deadline")),
    ("Congratulations, you won the lottery!", ("lottery",)),
    ("Re: {topic} question", ("{topic}",)),
    ("Your {month} bank statement", ("statement", "bank statement")),
    ("Flight booking confirmation {code}", ("Flight", "booking confirmation")),
    ("Photos from the {topic} trip", ("Photos", "trip")),
    ("Plumbing quote for the kitchen", ("plumbing", "Plumbing quote")),
    ("Password reset request", ("Password", "password reset")),
    ("Parent evening on {weekday}", ("Parent evening",)),
    ("Library books due soon", ("books due",)),
    ("Security alert for your account", ("Security alert",)),
    ("Lunch on {weekday}?", ("Lunch", "lunch")),
    ("Draft agenda for the {topic} workshop", ("agenda", "workshop")),
)
#: mail folders a profile may have besides its inbox (existing targets of a move)
FOLDERS = ("Archive", "Receipts", "Work", "Family", "Newsletters", "Travel", "Bills", "School", "Orders", "Sent",
           "Drafts", "Trash", "Junk")
#: new folder names (for create_mail_folder and a move to a new folder)
NEW_FOLDERS = ("Taxes", "Invoices", "Projects", "Holidays", "Club", "Shopping", "Health", "Kids", "Insurance",
               "Garden", "Car", "Volunteering", "Reading")
SUB_NAMES = ("2024", "2025", "Old", "Done", "Pending", "Spring", "Autumn", "Paid")


# -- profile ----------------------------------------------------------------------------------
@dataclass
class Msg:
    subject: str
    sender: str  # the From header
    to: str  # the To header
    status: int
    mid: str
    keys: tuple[str, ...]  # texts of the subject a request may pick it by
    who: str  # the word (or two) a request calls the sender by


@dataclass
class Profile:
    base: str  # the profile folder ("" or "thunderbird/" ...)
    prefs: str  # the prefs.js path
    account: str  # the account's mail folder (a directory)
    inbox: str  # the inbox's name (Inbox, INBOX)
    pref_lines: dict[str, str]  # key -> value as written in prefs.js
    boxes: dict[str, list[Msg]] = field(default_factory=dict)  # folder name -> messages

    def path(self, box: str) -> str:
        return f"{self.account}/{box}"


def _profile_dir(rng: random.Random) -> str:
    code = "".join(rng.choice(string.ascii_lowercase + string.digits) for _ in range(8))
    return f"{code}.{pick(rng, ('default', 'default-release', 'default-esr'))}"


def _layout(rng: random.Random) -> tuple[str, str, str]:
    """Where the profile is (base), its account folder and its inbox's name."""
    base = pick(rng, ("", "thunderbird/", "profile/", f".thunderbird/{_profile_dir(rng)}/",
                      f"thunderbird/{_profile_dir(rng)}/", "tb-profile/", f"Profiles/{_profile_dir(rng)}/"))
    account, inbox = pick(rng, (("Mail/Local Folders", "Inbox"), ("Mail/Local Folders", "Inbox"),
                                ("Mail/Local Folders", "Inbox"), ("Mail/pop.homemail.net", "Inbox"),
                                ("Mail/localhost", "Inbox"), ("ImapMail/imap.mailbox.org", "INBOX")))
    return base, base + account, inbox


#: prefs.js lines a profile may start with: key -> values as prefs.js writes them
START_PREFS: dict[str, tuple[str, ...]] = {
    "mail.server.server1.check_time": ("10", "15", "30", "60"),
    "mail.server.server1.check_new_mail": ("true", "false"),
    "mail.server.server1.login_at_startup": ("true", "false"),
    "mail.server.server1.empty_trash_on_exit": ("true", "false"),
    "mail.identity.id1.compose_html": ("true", "false"),
    "mail.identity.id1.reply_on_top": ("0", "1"),
    "mail.identity.id1.fullName": ('"{name}"',),
    "mail.identity.id1.useremail": ('"{email}"',),
    "mail.identity.id1.reply_to": ('"{reply}"',),
    "mail.identity.id1.organization": ('"{org}"',),
    "mail.identity.id1.htmlSigText": ('"{sig}"',),
    "mail.identity.id1.sig_file": ('"/home/{user}/signature.txt"',),
    "mail.identity.id1.attach_signature": ("true", "false"),
    "mail.biff.play_sound": ("true", "false"),
    "mail.biff.show_alert": ("true", "false"),
    "mailnews.start_page.enabled": ("true", "false"),
    "mailnews.message_display.disable_remote_image": ("true", "false"),
    "mail.spam.markAsReadOnSpam": ("true", "false"),
    "mail.compose.autosaveinterval": ("5", "10"),
    "spellchecker.dictionary": ('"en-US"', '"de-DE"', '"fr-FR"'),
    "mail.tabs.autoHide": ("true", "false"),
    "mailnews.display.prefer_plaintext": ("true", "false"),
}
ORGS = ("Acme Corp", "Northwind", "Greenfield School", "City Council", "Riverside Clinic")


def _owner(rng: random.Random) -> tuple[str, str]:
    first, last = pick(rng, PEOPLE), pick(rng, SURNAMES)
    return f"{first} {last}", f"{first.lower()}.{last.lower()}@{pick(rng, DOMAINS)}"


def _subject(rng: random.Random) -> tuple[str, tuple[str, ...]]:
    template, keys = pick(rng, SUBJECTS)
    fill = {"n": str(rng.randint(1000, 9999)), "month": pick(rng, MONTHS), "topic": pick(rng, TOPICS),
            "weekday": pick(rng, WEEKDAYS), "code": "".join(rng.choice(string.ascii_uppercase) for _ in range(2))
            + str(rng.randint(100, 999))}
    return template.format(**fill), tuple(k.format(**fill) for k in keys)


def _message(rng: random.Random, owner: tuple[str, str], taken: set[str]) -> Msg:
    while True:
        subject, keys = _subject(rng)
        if subject not in taken:
            taken.add(subject)
            break
    if rng.random() < 0.5:
        first, last = pick(rng, PEOPLE), pick(rng, SURNAMES)
        sender = f"{first} {last} <{first.lower()}.{last.lower()}@{pick(rng, DOMAINS)}>"
        who = first
    else:
        name, address, who = pick(rng, SENDERS)
        sender = f"{name} <{address}>"
    to = f"{owner[0]} <{owner[1]}>"
    if rng.random() < 0.25:
        lname, laddress, _ = pick(rng, LISTS)
        to = f"{lname} <{laddress}>"
    status = pick(rng, (0x0, 0x1, 0x1, 0x5, 0x4))
    mid = f"<{rng.getrandbits(48):012x}@{pick(rng, DOMAINS)}>"
    return Msg(subject, sender, to, status, mid, keys, who)


def _write_box(path: Path, msgs: list[Msg], rng: random.Random) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"")
    box = mailbox.mbox(str(path))
    try:
        for m in msgs:
            when = datetime(2024, rng.randint(1, 12), rng.randint(1, 28), rng.randint(7, 21), rng.randint(0, 59),
                            tzinfo=timezone.utc)
            msg = mailbox.mboxMessage()
            msg.set_from("-", when.timetuple())
            msg["From"] = m.sender
            msg["To"] = m.to
            msg["Subject"] = m.subject
            msg["Date"] = format_datetime(when)
            msg["Message-ID"] = m.mid
            msg["X-Mozilla-Status"] = f"{m.status:04x}"
            msg.set_payload(f"Hello,\n\n{m.subject}.\n\nBest wishes\n")
            box.add(msg)
        box.flush()
    finally:
        box.close()


def _start(rng: random.Random, root: Path, n_boxes: int = 2) -> Profile:
    """A profile in ``root``: prefs.js with a few lines, the inbox and ``n_boxes`` other folders
    (some of them empty). A profile already there (the first half of a two-operation draft,
    :mod:`.compose`) is kept as it is and given the folders it lacks."""
    prof = _existing(root)
    if prof is not None:
        owner = (prof.pref_lines.get("mail.identity.id1.fullName", '"Sam Carter"').strip('"'), "sam.carter@homemail.net")
        seen = {m.subject for msgs in prof.boxes.values() for m in msgs}
        for name in [f for f in FOLDERS if f not in prof.boxes][:n_boxes]:
            prof.boxes[name] = [_message(rng, owner, seen) for _ in range(rng.choice((0, 1, 2, 3)))]
            _write_box(root / prof.path(name), prof.boxes[name], rng)
        return prof
    base, account, inbox = _layout(rng)
    owner = _owner(rng)
    user = owner[0].split()[0].lower()
    fill = {"name": owner[0], "email": owner[1], "reply": f"{user}@{pick(rng, DOMAINS)}", "org": pick(rng, ORGS),
            "sig": f"Best regards, {owner[0].split()[0]}", "user": user}
    keys = sample(rng, list(START_PREFS), rng.randint(3, 7))
    lines = {k: pick(rng, START_PREFS[k]).format(**fill) for k in keys}
    prefs = base + "prefs.js"
    prof = Profile(base, prefs, account, inbox, lines)
    _write_prefs(root / prefs, lines)
    taken: set[str] = set()
    prof.boxes[inbox] = [_message(rng, owner, taken) for _ in range(rng.randint(4, 7))]
    for name in sample(rng, FOLDERS, n_boxes):
        prof.boxes[name] = [_message(rng, owner, taken) for _ in range(rng.choice((0, 1, 2, 3)))]
    for name, msgs in prof.boxes.items():
        _write_box(root / prof.path(name), msgs, rng)
    return prof


def _existing(root: Path) -> Profile | None:
    """The profile this module made in ``root`` before, read back from its files (``None``: none)."""
    prefs = sorted(root.rglob("prefs.js"))
    if not prefs:
        return None
    rel = prefs[0].relative_to(root).as_posix()
    base = rel[: -len("prefs.js")]
    inboxes = sorted(p for p in root.glob(f"{base}*Mail/*/*") if p.name in ("Inbox", "INBOX") and p.is_file())
    if not inboxes:
        return None
    account = inboxes[0].parent.relative_to(root).as_posix()
    prof = Profile(base, rel, account, inboxes[0].name, _read_prefs(prefs[0]))
    for p in sorted(inboxes[0].parent.iterdir()):
        if p.is_file() and not p.suffix:
            prof.boxes[p.name] = _read_msgs(p)
    return prof


def _read_msgs(path: Path) -> list[Msg]:
    """The messages of a folder this module wrote, with the texts a request may pick them by."""
    box = mailbox.mbox(str(path), create=False)
    out = []
    try:
        for m in box:
            subject, sender = str(m.get("Subject", "")), str(m.get("From", ""))
            keys: tuple[str, ...] = ()
            for template, texts in SUBJECTS:
                pattern = re.escape(template)
                for name in ("n", "month", "topic", "weekday", "code"):
                    pattern = pattern.replace(re.escape(f"{{{name}}}"), f"(?P<{name}>[^ ?!]+)", 1)
                hit = re.fullmatch(pattern, subject)
                if hit:
                    keys = tuple(k.format(**hit.groupdict()) for k in texts)
                    break
            org = next((word for name, _a, word in SENDERS if sender.startswith(f"{name} <")), None)
            status = int(str(m.get("X-Mozilla-Status", "0")) or "0", 16)
            out.append(Msg(subject, sender, str(m.get("To", "")), status, str(m.get("Message-ID", "")),
                           keys or (subject.split()[0],), org or sender.split()[0]))
    finally:
        box.close()
    return out


def _write_prefs(path: Path, lines: dict[str, str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    head = ["// Mozilla User Preferences", "",
            "// DO NOT EDIT THIS FILE.", "//", "// If you make changes to this file while the application is running,",
            "// the changes will be overwritten when the application exits.", ""]
    body = [f"user_pref({json.dumps(k)}, {v});" for k, v in sorted(lines.items())]
    path.write_text("\n".join(head + body) + "\n", encoding="utf-8")


# -- reading back -----------------------------------------------------------------------------
_PREF = re.compile(r'^\s*user_pref\(\s*"([^"]*)"\s*,\s*(.*?)\s*\)\s*;\s*$')


def _read_prefs(path: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        m = _PREF.match(line)
        if m:
            out[m.group(1)] = m.group(2)
    return out


def _read_box(path: Path) -> list[tuple[str, int]]:
    """(Message-ID, X-Mozilla-Status) of each message of an mbox folder, in order."""
    if not path.is_file():
        return []
    box = mailbox.mbox(str(path), create=False)
    try:
        return [(str(m.get("Message-ID", "")), int(str(m.get("X-Mozilla-Status", "0")) or "0", 16)) for m in box]
    finally:
        box.close()


def _header(m: Msg, where: str) -> str:
    return {"subject": m.subject, "from": m.sender, "to": m.to}[where]


def _picked(msgs: list[Msg], text: str, where: str) -> list[Msg]:
    return [m for m in msgs if text == "*" or text.casefold() in _header(m, where).casefold()]


# -- how a request names things ---------------------------------------------------------------
def _quote(rng: random.Random, text: str) -> str:
    """``text`` as a request writes it: bare when its words can be picked from the request (one
    word, or two words that are not glue), else quoted."""
    words = text.split()
    bare = len(words) == 1 and re.fullmatch(r"[A-Za-z0-9][\w'-]*", text) or (
        len(words) == 2 and all(re.fullmatch(r"[A-Za-z0-9][\w'-]*", w) and w.lower() not in _GLUE for w in words))
    if bare and rng.random() < 0.7:
        return text
    q = pick(rng, ("'", '"'))
    return f"{q}{text}{q}"


_GLUE = frozenset("a an the and or of to in on at by for from with is it this that".split())


def _where(rng: random.Random, prof: Profile, box: str, paths: bool = True) -> str:
    """The folder ``box`` as a request names it (always with its name as the profile writes it);
    ``paths=False``: only by a path the request's file names take whole (one with a space or a dot,
    ``Mail/Local Folders/Inbox``, reads as files ``Mail/Local`` and ``Folders/Inbox`` that do not
    exist, which a new-file slot then offers alone)."""
    full = prof.path(box)
    named = paths or _whole(full)
    if box == prof.inbox:
        forms = [f"my {box}", f"the {box}", box] + ([full, f"the {box} ({full})"] if named else [])
        if prof.base and named:
            forms.append(f"the {box} of {prof.base.rstrip('/')}")
    else:
        forms = [f"the {box} folder", f"my {box} folder", box] + ([full, f"the {box} folder ({full})"] if named else [])
    return pick(rng, forms)


def _whole(path: str) -> bool:
    """Whether a request can name ``path`` as one file name (no space, no dot)."""
    return re.fullmatch(r"[\w-]+(?:/[\w-]+)+", path) is not None


def _pick_text(rng: random.Random, prof: Profile, box: str, address: bool = True) -> tuple[str, str, str, list[Msg]]:
    """A way to pick some messages of ``box``: (text, field, how the request says it, picked);
    ``address=False``: never by a sender's address (its domain reads as a file name)."""
    msgs = prof.boxes[box]
    target = pick(rng, msgs)
    r = rng.random()
    if r < 0.5:
        text = pick(rng, target.keys)
        said = _quote(rng, text)
        how = pick(rng, (f"whose subject mentions {said}", f"with {said} in the subject", f"about {said}",
                         f"whose subject contains {said}"))
        return text, "subject", how, _picked(msgs, text, "subject")
    if r < 0.85:
        if address and rng.random() < 0.3:  # by address, quoted (an address is no word of the request)
            text = target.sender.rsplit("<", 1)[-1].rstrip(">")
            q = pick(rng, ("'", '"'))
            said = f"{q}{text}{q}"
        else:
            text = target.who
            said = f"the {text}" if text.islower() else _quote(rng, text)
        how = pick(rng, (f"from {said}", f"sent by {said}", f"that {said} sent me", f"I got from {said}"))
        return text, "from", how, _picked(msgs, text, "from")
    listed = [word for lname, _addr, word in LISTS if any(m.to.startswith(f"{lname} <") for m in msgs)]
    if listed:
        word = pick(rng, listed)
        said = _quote(rng, word)
        how = pick(rng, (f"sent to the {said} list", f"addressed to {said}", f"that went to {said}"))
        return word, "to", how, _picked(msgs, word, "to")
    text = target.who
    said = f"the {text}" if text.islower() else _quote(rng, text)
    return text, "from", f"from {said}", _picked(msgs, text, "from")


def _polite(rng: random.Random, s: str) -> str:
    """:func:`polite`, leaving a question as it is."""
    return s if s.rstrip().endswith("?") else polite(rng, s)


def _ids(msgs: list[Msg]) -> list[str]:
    return [m.mid for m in msgs]


# -- generators -------------------------------------------------------------------------------
def move_messages(rng: random.Random, root: Path) -> Draft:
    prof = _start(rng, root, n_boxes=rng.randint(1, 3))
    src = prof.inbox if rng.random() < 0.8 else pick(rng, [b for b, m in prof.boxes.items() if m] or [prof.inbox])
    text, where, how, moving = _pick_text(rng, prof, src, address=False)
    others = [b for b in prof.boxes if b not in (src, "Sent", "Drafts")]
    new_name = pick(rng, [n for n in NEW_FOLDERS if n not in prof.boxes])
    new_path = prof.path(new_name)
    can_new = _whole(new_path)
    if can_new and rng.random() < 0.4 or not others:
        if not can_new:  # no way to name a new folder here: make one to move into
            prof.boxes[new_name] = []
            _write_box(root / new_path, [], rng)
            others = [new_name]
            dst = new_name
            dest = _where(rng, prof, dst, paths=False)
        else:
            dst = new_name
            dest = pick(rng, (f"a new folder {new_path}", f"{new_path} (a new folder)", new_path))
    else:
        dst = pick(rng, others)
        dest = _where(rng, prof, dst, paths=False)
    source = _where(rng, prof, src, paths=False)
    if text == "*":
        how = ""
    s = pick(rng, [
        f"Move the messages {how} from {source} to {dest}",
        f"Move every message in {source} {how} into {dest}",
        f"Put the mails {how} in {source} into {dest}",
        f"Could you move the emails {how} out of {source} and into {dest}?",
        f"I want the messages {how} filed under {dest}; they are in {source} now",
        f"My {src} is a mess. Move the messages {how} from {source} to {dest}" if src == prof.inbox
        else f"Move the messages {how} from {source} over to {dest}",
    ])
    s = re.sub(r"\s+", " ", s).replace(" ,", ",").replace(" ;", ";").replace(" .", ".").strip()
    before_dst = prof.boxes.get(dst, [])
    want_src = [m.mid for m in prof.boxes[src] if m not in moving]
    want_dst = _ids(before_dst) + _ids(moving)

    def check(r: Path) -> str | None:
        got_src = [i for i, _ in _read_box(r / prof.path(src))]
        got_dst = [i for i, _ in _read_box(r / prof.path(dst))]
        if got_src != want_src:
            return f"{src} holds {len(got_src)} message(s), expected {len(want_src)}"
        if sorted(got_dst) != sorted(want_dst):
            return f"{dst} holds {len(got_dst)} message(s), expected {len(want_dst)}"
        return None

    call = ("move_messages", (prof.path(src), text, where, prof.path(dst)))
    return Draft(_polite(rng, s), (call,), check, "mail.move_messages")


def delete_messages(rng: random.Random, root: Path) -> Draft:
    junk = pick(rng, ("Junk", "Trash", None, None, None))
    prof = _start(rng, root, n_boxes=rng.randint(0, 2))
    if junk is not None and junk not in prof.boxes:
        owner = ("Me", "me@homemail.net")
        prof.boxes[junk] = [_message(rng, owner, set()) for _ in range(rng.randint(2, 4))]
        _write_box(root / prof.path(junk), prof.boxes[junk], rng)
    if junk is not None and prof.boxes.get(junk):
        box, text, where = junk, "*", "subject"
        place = _where(rng, prof, box)
        s = pick(rng, [f"Empty {place}", f"Delete every message in {place}", f"Clear out {place}; I don't need any of it",
                       f"Remove all the mails from {place}", f"Can you delete everything in {place}?"])
        gone = prof.boxes[box]
    else:
        box = prof.inbox if rng.random() < 0.8 else pick(rng, [b for b, m in prof.boxes.items() if m])
        text, where, how, gone = _pick_text(rng, prof, box)
        place = _where(rng, prof, box)
        s = pick(rng, [f"Delete the messages {how} in {place}", f"Delete every email {how} from {place}",
                       f"Get rid of the mails {how} in {place}", f"Remove the messages {how} from {place}",
                       f"Could you delete all messages {how}? They are in {place}",
                       f"I never read them anyway: delete the messages {how} in {place}"])
    want = [m.mid for m in prof.boxes[box] if m not in gone]

    def check(r: Path) -> str | None:
        got = [i for i, _ in _read_box(r / prof.path(box))]
        return None if got == want else f"{box} holds {len(got)} message(s), expected {len(want)}"

    return Draft(_polite(rng, s), (("delete_messages", (prof.path(box), text, where)),), check,
                 "mail.delete_messages")


#: flag -> how a request asks for it (``{m}``: the messages, ``{p}``: the folder)
FLAG_WORDS: dict[str, tuple[str, ...]] = {
    "read": ("Mark the messages {m} in {p} as read", "Mark all the mails {m} in {p} read",
             "I've seen them already: mark the messages {m} in {p} as read",
             "Could you mark every message {m} in {p} as read?"),
    "unread": ("Mark the messages {m} in {p} as unread", "Mark the emails {m} in {p} unread again so I don't forget them",
               "Can you set the messages {m} in {p} back to unread?",
               "Mark every message {m} in {p} as not read"),
    "flagged": ("Star the messages {m} in {p}", "Star the mail {m} in {p} so I find it later",
                "Flag every message {m} in {p}", "Could you mark the emails {m} in {p} as flagged?",
                "Add a star to the messages {m} in {p}"),
    "unflagged": ("Unstar the messages {m} in {p}", "Remove the star from the mails {m} in {p}",
                  "Unflag every message {m} in {p}", "Clear the flag on the messages {m} in {p}",
                  "Could you take the flag off the messages {m} in {p}?"),
}


_FLAG_BITS = {"read": (READ, True), "unread": (READ, False), "flagged": (FLAGGED, True), "unflagged": (FLAGGED, False)}


def mark_messages(rng: random.Random, root: Path) -> Draft:
    prof = _start(rng, root, n_boxes=rng.randint(1, 3))
    box = prof.inbox if rng.random() < 0.7 else pick(rng, [b for b, m in prof.boxes.items() if m])
    every = rng.random() < 0.15
    if every:
        text, where, how, picked = "*", "subject", "", prof.boxes[box]
    else:
        text, where, how, picked = _pick_text(rng, prof, box)
    # a mark that changes something (marking read mail read teaches nothing)
    flag = pick(rng, [f for f, (bit, on) in _FLAG_BITS.items() if any(bool(m.status & bit) != on for m in picked)]
                or list(FLAG_WORDS))
    if every:
        s = pick(rng, [f"Mark everything in {{p}} as {flag}" if flag in ("read", "unread") else
                       f"{'Star' if flag == 'flagged' else 'Unstar'} every message in {{p}}",
                       "Mark all messages in {p} as " + {"read": "read", "unread": "unread", "flagged": "flagged",
                                                       "unflagged": "unflagged"}[flag]])
        s = s.format(p=_where(rng, prof, box))
    else:
        s = pick(rng, FLAG_WORDS[flag]).format(m=how, p=_where(rng, prof, box))
    s = re.sub(r"\s+", " ", s)
    bit, on = _FLAG_BITS[flag]
    want = {m.mid: ((m.status | bit) if on else (m.status & ~bit)) if m in picked else m.status for m in prof.boxes[box]}

    def check(r: Path) -> str | None:
        got = dict(_read_box(r / prof.path(box)))
        bad = [i for i, st in want.items() if got.get(i) is None or got[i] & (READ | FLAGGED) != st & (READ | FLAGGED)]
        return None if not bad and len(got) == len(want) else f"{len(bad)} message(s) with the wrong mark"

    return Draft(_polite(rng, s), (("mark_messages", (prof.path(box), text, where, flag)),), check,
                 "mail.mark_messages")


def create_mail_folder(rng: random.Random, root: Path) -> Draft:
    prof = _start(rng, root, n_boxes=rng.randint(1, 3))
    acct = prof.account.rsplit("/", 1)[-1]
    spoken_acct = pick(rng, (acct, prof.account, f"the {acct} account")) if acct != "Local Folders" else pick(
        rng, ("Local Folders", prof.account, "the Local Folders account", f"Local Folders ({prof.account})"))
    if rng.random() < 0.35:
        parent = pick(rng, [b for b in prof.boxes if b not in (prof.inbox, "Trash", "Junk", "Sent", "Drafts")]
                      or NEW_FOLDERS)
        name = f"{parent}/{pick(rng, SUB_NAMES)}"
        said = _quote(rng, name) if rng.random() < 0.5 else name
        s = pick(rng, [f"Create a folder {said} under {spoken_acct}",
                       f"Make a sub-folder {said} in {spoken_acct}",
                       f"I'd like a new mail folder {said} in {spoken_acct}",
                       f"Could you add the folder {said} to {spoken_acct}?"])
    else:
        name = pick(rng, [n for n in NEW_FOLDERS if n not in prof.boxes])
        said = _quote(rng, name)
        a = "an" if said[0] in "AEIOU" else "a"
        s = pick(rng, [f"Create a folder called {said} under {spoken_acct}",
                       f"Make a new mail folder {said} in {spoken_acct}",
                       f"I need {a} {said} folder in {spoken_acct} for my mail",
                       f"Add an empty mail folder named {said} to {spoken_acct}",
                       f"Can you create {a} {said} mail folder in {spoken_acct}?"])
    *outer, last = name.split("/")
    target = Path(prof.account).joinpath(*[f"{p}.sbd" for p in outer], last)

    def check(r: Path) -> str | None:
        p = r / target
        if not p.is_file():
            return f"no {target.as_posix()}"
        return None if p.stat().st_size == 0 else f"{target.as_posix()} is not empty"

    return Draft(_polite(rng, s), (("create_mail_folder", (prof.account, name)),), check, "mail.create_mail_folder")


#: field -> how a request names what is written, and file stems for it
EXPORT_WORDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "from": (("the senders of", "who sent", "the sender of each of"), ("senders", "from_list", "who_wrote")),
    "subject": (("the subjects of", "the subject lines of", "the subject of each of"), ("subjects", "subject_lines", "topics")),
    "to": (("the recipients of", "who received", "the To addresses of"), ("recipients", "to_list", "addressees")),
}


def export_field(rng: random.Random, root: Path) -> Draft:
    prof = _start(rng, root, n_boxes=rng.randint(1, 2))
    box = prof.inbox if rng.random() < 0.75 else pick(rng, [b for b, m in prof.boxes.items() if m])
    what = pick(rng, list(EXPORT_WORDS))
    spoken = pick(rng, EXPORT_WORDS[what][0])
    folder = prof.base if prof.base and re.fullmatch(r"[\w-]+/", prof.base) and rng.random() < 0.3 else ""
    out = f"{folder}{pick(rng, EXPORT_WORDS[what][1])}.{pick(rng, ('txt', 'txt', 'csv'))}"
    place = _where(rng, prof, box)
    msgs = prof.boxes[box]
    if rng.random() < 0.4:
        text = pick(rng, pick(rng, msgs).keys)
        said = _quote(rng, text)
        which = pick(rng, (f"the messages whose subject mentions {said} in {place}",
                           f"the mails about {said} in {place}", f"the {box} messages with {said} in the subject"))
    else:
        text = "*"
        which = pick(rng, (f"the messages in {place}",) if spoken.endswith("each of") else (
            f"all the messages in {place}", f"every message in {place}", f"the messages in {place}"))
    s = pick(rng, [f"Write {spoken} {which} to {out}", f"List {spoken} {which} in {out}, one per line",
                   f"Save {spoken} {which} into {out}", f"Could you put {spoken} {which} into {out}?",
                   f"I want a list of {spoken} {which}. Write it to {out}"])
    want: list[str] = []
    for m in _picked(msgs, text, "subject"):
        v = _header(m, what).strip()
        if v and v not in want:
            want.append(v)

    def check(r: Path) -> str | None:
        p = r / out
        if not p.is_file():
            return f"no {out}"
        got = p.read_text(encoding="utf-8").splitlines()
        return None if got == want else f"{out} has {len(got)} line(s), expected {len(want)}"

    return Draft(_polite(rng, s), (("export_field", (prof.path(box), what, out, text)),), check, "mail.export_field")


# -- prefs.js ---------------------------------------------------------------------------------
def _bool(on: bool) -> str:
    return "true" if on else "false"


def _pref_request(rng: random.Random, prof: Profile) -> tuple[str, str, str, str]:
    """A preference to set: (key, value as the call gives it, value as prefs.js writes it, the ask)."""
    owner = prof.pref_lines.get("mail.identity.id1.fullName", '"Sam Carter"').strip('"')
    first = owner.split()[0]
    choice = rng.randrange(15)
    if choice == 0:
        n = pick(rng, [v for v in ("1", "2", "5", "10", "15", "20", "30", "45", "60")
                       if v != prof.pref_lines.get("mail.server.server1.check_time")])
        ask = pick(rng, [f"Check for new mail every {n} minutes", f"Make Thunderbird look for new messages every {n} minutes",
                         f"How do I get my mail checked every {n} minutes? Please set that",
                         f"Set the mail check interval to {n} minutes"])
        return "mail.server.server1.check_time", n, n, ask
    if choice == 1:
        on = rng.random() < 0.5
        ask = (pick(rng, ["Write my messages in HTML", "Compose new mails in HTML format",
                          "Turn HTML composition back on for my identity"]) if on else
               pick(rng, ["Compose messages in plain text instead of HTML", "Switch off HTML composition for my identity",
                          "I'd like to write my emails as plain text, not HTML"]))
        return "mail.identity.id1.compose_html", _bool(on), _bool(on), ask
    if choice == 2:
        on = rng.random() < 0.6
        ask = (pick(rng, ["Stop loading remote images in messages", "Block remote content in my mail",
                          "Don't let messages load remote images"]) if on else
               pick(rng, ["Allow remote images in messages again", "Let messages load remote content"]))
        return "mailnews.message_display.disable_remote_image", _bool(on), _bool(on), ask
    if choice == 3:
        sig = pick(rng, [f"Best regards, {first}", f"Cheers, {first}", f"Kind regards, {owner}", f"Thanks! {first}",
                         f"{owner} | {pick(rng, ORGS)}"])
        q = pick(rng, ("'", '"'))
        ask = pick(rng, [f"Set my signature to {q}{sig}{q}", f"Change the signature text to {q}{sig}{q}",
                         f"My signature should read {q}{sig}{q} from now on",
                         f"Use {q}{sig}{q} as the signature of my identity"])
        return "mail.identity.id1.htmlSigText", sig, json.dumps(sig), ask
    if choice == 4 and "mail.identity.id1.reply_to" in prof.pref_lines:
        addr = f"{pick(rng, ('help', 'office', 'replies', first.lower(), 'team'))}@{pick(rng, DOMAINS)}"
        q = pick(rng, ("'", '"'))
        ask = pick(rng, [f"Change my reply-to address to {q}{addr}{q}", f"Replies should go to {q}{addr}{q}: set the reply-to",
                         f"Set the reply-to of my identity to {q}{addr}{q}"])
        return "mail.identity.id1.reply_to", addr, json.dumps(addr), ask
    if choice == 5:
        first2, last2 = pick(rng, PEOPLE), pick(rng, SURNAMES)
        name = f"{first2} {last2}"
        said = name if rng.random() < 0.5 else f"'{name}'"
        ask = pick(rng, [f"Change my display name to {said}", f"The name on my outgoing mail should be {said}",
                         f"Set my full name to {said}"])
        return "mail.identity.id1.fullName", name, json.dumps(name), ask
    if choice == 6:
        on = rng.random() < 0.4
        ask = (pick(rng, ["Play a sound when new mail arrives"]) if on else
               pick(rng, ["Don't play a sound when new mail arrives", "Mute the new-mail sound",
                          "Turn off the sound for incoming mail"]))
        return "mail.biff.play_sound", _bool(on), _bool(on), ask
    if choice == 7:
        on = rng.random() < 0.3
        ask = (pick(rng, ["Show the pop-up alert for new mail"]) if on else
               pick(rng, ["Stop the new mail pop-up alert", "Turn off the desktop alert for new messages"]))
        return "mail.biff.show_alert", _bool(on), _bool(on), ask
    if choice == 8:
        on = rng.random() < 0.3
        ask = (pick(rng, ["Show the start page when Thunderbird opens"]) if on else
               pick(rng, ["Don't show the start page when Thunderbird opens", "Turn off the start page",
                          "Disable the Thunderbird start page"]))
        return "mailnews.start_page.enabled", _bool(on), _bool(on), ask
    if choice == 9:
        on = rng.random() < 0.7
        ask = (pick(rng, ["Empty the trash when I exit Thunderbird", "Empty the trash on exit",
                          "Clear the Trash folder every time I quit Thunderbird"]) if on else
               pick(rng, ["Stop emptying the trash on exit", "Don't empty the trash when Thunderbird exits"]))
        return "mail.server.server1.empty_trash_on_exit", _bool(on), _bool(on), ask
    if choice == 10:
        n = pick(rng, ("1", "2", "3", "5", "10"))
        ask = pick(rng, [f"Save my drafts every {n} minutes while I write",
                         f"Set mail.compose.autosaveinterval to {n}",
                         f"Keep a draft of what I'm writing every {n} minutes"])
        return "mail.compose.autosaveinterval", n, n, ask
    if choice == 11:
        lang = pick(rng, [v for v in ("en-US", "en-GB", "de-DE", "fr-FR", "es-ES", "nl-NL")
                          if f'"{v}"' != prof.pref_lines.get("spellchecker.dictionary")])
        ask = pick(rng, [f"Switch the spell-check dictionary to {lang}", f"Use {lang} for spell checking",
                         f"Set the spellchecker dictionary to {lang}"])
        return "spellchecker.dictionary", lang, json.dumps(lang), ask
    if choice == 12:
        on = rng.random() < 0.7
        ask = (pick(rng, ["Show messages as plain text", "Display every message in plain text rather than HTML"]) if on
               else pick(rng, ["Show messages as HTML again, not plain text"]))
        return "mailnews.display.prefer_plaintext", _bool(on), _bool(on), ask
    if choice == 13:
        on = rng.random() < 0.7
        ask = (pick(rng, ["Mark junk messages as read", "When a message is marked as spam, mark it read too"]) if on
               else pick(rng, ["Leave spam messages unread when they are marked as junk"]))
        return "mail.spam.markAsReadOnSpam", _bool(on), _bool(on), ask
    on = rng.random() < 0.6  # an integer pref (1: reply above the quote): the request says the number
    n = "1" if on else "0"
    ask = pick(rng, [f"Start my replies {'above' if on else 'below'} the quoted text by setting reply_on_top to {n}",
                     f"Set mail.identity.id1.reply_on_top to {n} so my replies go {'above' if on else 'below'} the quote"])
    return "mail.identity.id1.reply_on_top", n, n, ask


def _prefs_where(rng: random.Random, prof: Profile) -> str:
    forms = [f" in {prof.prefs}", f" ({prof.prefs})", " in the profile's prefs.js", f" in {prof.prefs}", ""]
    if prof.base:
        forms.append(f"; the profile is {prof.base.rstrip('/')}, edit its prefs.js")
    return pick(rng, forms)


def _lower(ask: str) -> str:
    """An ask continued inside a sentence ("Don't ..." -> "don't ..."; "I'd ..." stays)."""
    return ask if re.match(r"(I\b|I'|My\b)", ask) else ask[0].lower() + ask[1:]


def set_pref(rng: random.Random, root: Path) -> Draft:
    prof = _start(rng, root, n_boxes=1)
    for _ in range(20):  # a value the profile does not have already
        key, value, written, ask = _pref_request(rng, prof)
        if prof.pref_lines.get(key) != written:
            break
    where = _prefs_where(rng, prof)
    prefs = prof.prefs if rng.random() < 0.6 else "prefs.js"
    imperative = not ask.startswith(("I", "My", "The", "Replies", "When", "How", "Don't"))
    s = pick(rng, [f"{ask}{where}", f"{ask}{where}", f"{ask}. Can you set the user_pref in {prefs}?",
                   f"Change the user_pref in {prefs} so that I can {_lower(ask)}" if ask.startswith(
                       ("Compose", "Write", "Use", "Switch", "Check", "Save", "Keep")) else f"{ask}. It is a user_pref line in {prefs}",
                   f"I want to {_lower(ask)}. Can you set the user_pref in {prefs}?" if imperative
                   else f"{ask}. Could you set the user_pref for that in {prefs}?"])
    before = dict(prof.pref_lines)

    def check(r: Path) -> str | None:
        got = _read_prefs(r / prof.prefs)
        if got.get(key) != written:
            return f"{key} is {got.get(key)!r}, expected {written!r}"
        lost = [k for k, v in before.items() if k != key and got.get(k) != v]
        return f"{', '.join(lost)} changed" if lost else None

    return Draft(_polite(rng, s), (("set_pref", (prof.prefs, key, value)),), check, "mail.set_pref")


#: key -> how a request names the preference when removing it
SPOKEN_PREFS: dict[str, tuple[str, ...]] = {
    "mail.server.server1.check_time": ("the custom mail check interval", "the check interval preference"),
    "mail.server.server1.check_new_mail": ("the check-for-new-mail preference",),
    "mail.server.server1.login_at_startup": ("the check-at-startup preference",),
    "mail.server.server1.empty_trash_on_exit": ("the empty-trash-on-exit preference",),
    "mail.identity.id1.compose_html": ("the HTML composition preference",),
    "mail.identity.id1.reply_on_top": ("the reply position preference",),
    "mail.identity.id1.fullName": ("my full name",),
    "mail.identity.id1.useremail": ("the identity's email address",),
    "mail.identity.id1.reply_to": ("the reply-to address", "my reply-to address"),
    "mail.identity.id1.organization": ("the organization of my identity",),
    "mail.identity.id1.htmlSigText": ("the custom signature text", "my signature text"),
    "mail.identity.id1.sig_file": ("the signature file setting", "the signature file"),
    "mail.identity.id1.attach_signature": ("the attach-signature preference",),
    "mail.biff.play_sound": ("the new-mail sound preference",),
    "mail.biff.show_alert": ("the new-mail alert preference",),
    "mailnews.start_page.enabled": ("the start page preference",),
    "mailnews.message_display.disable_remote_image": ("the remote images preference", "the remote content setting"),
    "mail.spam.markAsReadOnSpam": ("the mark-spam-as-read preference",),
    "mail.compose.autosaveinterval": ("the interval for saving drafts",),
    "spellchecker.dictionary": ("the spell-check dictionary preference", "the dictionary setting"),
    "mail.tabs.autoHide": ("the tab bar auto-hide preference",),
    "mailnews.display.prefer_plaintext": ("the plain-text display preference",),
}


def remove_pref(rng: random.Random, root: Path) -> Draft:
    prof = _start(rng, root, n_boxes=1)
    key = pick(rng, list(prof.pref_lines))
    spoken = pick(rng, SPOKEN_PREFS[key]) if rng.random() < 0.7 else key
    where = _prefs_where(rng, prof)
    s = pick(rng, [f"Remove {spoken} from prefs.js so Thunderbird uses its default{'' if 'prefs.js' in where else where}",
                   f"Delete the user_pref line for {spoken}{where}",
                   f"Reset {spoken} to the default by deleting its line{where}",
                   f"Remove the preference {key}{where}",
                   f"I don't want {spoken} set any more; remove it{where}"])
    before = dict(prof.pref_lines)

    def check(r: Path) -> str | None:
        got = _read_prefs(r / prof.prefs)
        if key in got:
            return f"{key} still set"
        lost = [k for k, v in before.items() if k != key and got.get(k) != v]
        return f"{', '.join(lost)} changed" if lost else None

    return Draft(_polite(rng, s), (("remove_pref", (prof.prefs, key)),), check, "mail.remove_pref")


GENERATORS: dict[str, Generator] = {g.__name__: g for g in (
    set_pref, remove_pref, move_messages, delete_messages, mark_messages, create_mail_folder, export_field)}
