"""Synthesized WordAgent pairs: a small random .docx (a title and a few topical paragraphs) and a
request about one paragraph, named by a word it contains, as the documents toolkit names them."""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentlab.selfinstruct.calls.draft import Draft, Generator
from agentlab.selfinstruct.calls.words import PHRASES, TOPICS, pick, polite, sample, stem

#: sentences about a topic: the topic word is how a request points at the paragraph
SENTENCES = ("The {t} rules change next month.", "Everyone should read the {t} notice.",
             "Send {t} questions to the office.", "Our {t} policy is posted in the hall.",
             "The {t} report is attached.", "A new {t} plan starts on Monday.")
HEADINGS = ("Office Update", "Team News", "Weekly Memo", "Staff Handbook", "Project Notes", "Club Newsletter",
            "Annual Review", "Welcome Letter")


@dataclass
class Doc:
    file: str
    title: str
    topics: list[str]
    texts: list[str]


def _doc(rng: random.Random, root: Path, empty: int = 0) -> Doc:
    import docx

    topics = sample(rng, TOPICS, rng.randint(3, 5))
    texts = [pick(rng, SENTENCES).format(t=t) for t in topics]
    d = Doc(f"{stem(rng)}.docx", pick(rng, HEADINGS), topics, texts)
    document = docx.Document()
    document.add_paragraph(d.title, style="Title")
    for i, text in enumerate(texts):
        document.add_paragraph(text)
        if i < empty:
            document.add_paragraph("")
    document.save(str(root / d.file))
    return d


def _paras(root: Path, d: Doc) -> list[Any]:
    import docx

    return list(docx.Document(str(root / d.file)).paragraphs)


def _with(root: Path, d: Doc, word: str) -> Any:
    return next((p for p in _paras(root, d) if word.casefold() in p.text.casefold()), None)


def replace_text(rng: random.Random, root: Path) -> Draft:
    d = _doc(rng, root)
    old = pick(rng, d.topics)
    new = pick(rng, [t for t in ("car park", "dinner", "due date", "vacation", "costs", "safety", "courses", "copier",
                                 "trips", "waste", "call") if t not in d.topics])
    s = pick(rng, [f"Replace every '{old}' with '{new}' in {d.file}", f"In {d.file}, change the word {old} to '{new}' everywhere",
                   f"Swap '{old}' for '{new}' throughout {d.file}", f"{d.file} should say '{new}' instead of '{old}'"])

    def check(r: Path) -> str | None:
        text = " ".join(p.text for p in _paras(r, d)).casefold()
        return None if old not in text and new in text else "old word still there"

    return Draft(polite(rng, s), (("replace_text", (d.file, old, new)),), check, "documents.replace_text")


def set_paragraph_text(rng: random.Random, root: Path) -> Draft:
    d = _doc(rng, root)
    t = pick(rng, d.topics)
    new = pick(rng, PHRASES)
    s = pick(rng, [f"Replace the paragraph about {t} in {d.file} with '{new}'",
                   f"In {d.file}, the {t} paragraph should read '{new}'",
                   f"Rewrite the {t} paragraph of {d.file} as '{new}'"])

    def check(r: Path) -> str | None:
        texts = [p.text for p in _paras(r, d)]
        return None if new in texts and not any(t in x for x in texts) else f"paragraphs {texts}"

    return Draft(polite(rng, s), (("set_paragraph_text", (d.file, t, new)),), check, "documents.set_paragraph_text")


def delete_paragraph(rng: random.Random, root: Path) -> Draft:
    d = _doc(rng, root)
    t = pick(rng, d.topics)
    s = pick(rng, [f"Delete the paragraph about {t} from {d.file}", f"Remove the {t} paragraph in {d.file}",
                   f"In {d.file}, take out the paragraph that mentions {t}", f"Cut the {t} section from {d.file}"])

    def check(r: Path) -> str | None:
        return None if _with(r, d, t) is None else f"{t} is still there"

    return Draft(polite(rng, s), (("delete_paragraph", (d.file, t)),), check, "documents.delete_paragraph")


def insert_paragraph_after(rng: random.Random, root: Path) -> Draft:
    d = _doc(rng, root)
    t = pick(rng, d.topics)
    new = pick(rng, PHRASES)
    s = pick(rng, [f"After the paragraph about {t} in {d.file}, add '{new}'",
                   f"Insert '{new}' as a new paragraph below the {t} paragraph of {d.file}",
                   f"In {d.file}, put a paragraph saying '{new}' right after the one about {t}"])

    def check(r: Path) -> str | None:
        texts = [p.text for p in _paras(r, d)]
        i = next((k for k, x in enumerate(texts) if t in x), -2)
        return None if i + 1 < len(texts) and texts[i + 1] == new else f"paragraphs {texts}"

    return Draft(polite(rng, s), (("insert_paragraph_after", (d.file, t, new)),), check, "documents.insert_paragraph_after")


def append_paragraph(rng: random.Random, root: Path) -> Draft:
    d = _doc(rng, root)
    new = pick(rng, PHRASES)
    s = pick(rng, [f"Add '{new}' at the end of {d.file}", f"Append a closing paragraph to {d.file}: '{new}'",
                   f"In {d.file}, finish with the sentence '{new}'", f"Put '{new}' as the last paragraph of {d.file}"])

    def check(r: Path) -> str | None:
        texts = [p.text for p in _paras(r, d) if p.text.strip()]
        return None if texts and texts[-1] == new else f"last is {texts[-1:]}"

    return Draft(polite(rng, s), (("append_paragraph", (d.file, new)),), check, "documents.append_paragraph")


def swap_paragraphs(rng: random.Random, root: Path) -> Draft:
    d = _doc(rng, root)
    a, b = sample(rng, d.topics, 2)
    s = pick(rng, [f"Swap the {a} and {b} paragraphs in {d.file}", f"In {d.file}, exchange the paragraph about {a} with the one about {b}",
                   f"Switch the order of the {a} paragraph and the {b} paragraph of {d.file}"])

    def check(r: Path) -> str | None:
        texts = [p.text for p in _paras(r, d)]
        ia = next(k for k, x in enumerate(texts) if a in x)
        ib = next(k for k, x in enumerate(texts) if b in x)
        before = (d.topics.index(a) < d.topics.index(b))
        return None if (ia < ib) != before else "order unchanged"

    return Draft(polite(rng, s), (("swap_paragraphs", (d.file, a, b)),), check, "documents.swap_paragraphs")


def remove_empty_paragraphs(rng: random.Random, root: Path) -> Draft:
    d = _doc(rng, root, empty=rng.randint(1, 3))
    s = pick(rng, [f"Remove all the empty paragraphs from {d.file}", f"Delete the blank lines between paragraphs in {d.file}",
                   f"Clean up {d.file} by removing empty paragraphs", f"{d.file} has blank paragraphs; delete them"])

    def check(r: Path) -> str | None:
        return None if all(p.text.strip() for p in _paras(r, d)) else "empty paragraphs left"

    return Draft(polite(rng, s), (("remove_empty_paragraphs", (d.file,)),), check, "documents.remove_empty_paragraphs")


def set_style(rng: random.Random, root: Path) -> Draft:
    d = _doc(rng, root)
    t = pick(rng, d.topics)
    style = pick(rng, ("Heading 1", "Heading 2", "Heading 3", "Quote", "List Bullet"))
    said = {"Heading 1": "a Heading 1", "Heading 2": "a Heading 2", "Heading 3": "a Heading 3", "Quote": "a Quote",
            "List Bullet": "a bulleted list item (List Bullet)"}[style]
    s = pick(rng, [f"Make the {t} paragraph of {d.file} {said}", f"In {d.file}, give the paragraph about {t} the style {style}",
                   f"Format the {t} paragraph in {d.file} as {said}"])

    def check(r: Path) -> str | None:
        p = _with(r, d, t)
        return None if p is not None and p.style.name == style else "style not set"

    return Draft(polite(rng, s), (("set_style", (d.file, t, style)),), check, "documents.set_style")


def set_font(rng: random.Random, root: Path) -> Draft:
    d = _doc(rng, root)
    t = pick(rng, d.topics)
    which = pick(rng, ("bold", "italic", "underline", "bold and italic"))
    flags = ("bold" in which, "italic" in which, "underline" in which)
    word = {"bold": "bold", "italic": "italic", "underline": "underlined", "bold and italic": "bold and italic"}[which]
    s = pick(rng, [f"Make the {t} paragraph in {d.file} {word}", f"In {d.file}, set the paragraph about {t} in {word}",
                   f"The paragraph mentioning {t} in {d.file} should be {word}"])

    def check(r: Path) -> str | None:
        p = _with(r, d, t)
        runs = list(p.runs) if p is not None else []
        ok = bool(runs) and all((bool(x.bold), bool(x.italic), bool(x.underline)) == flags for x in runs)
        return None if ok else "font not set"

    return Draft(polite(rng, s), (("set_font", (d.file, t, *flags)),), check, "documents.set_font")


def set_font_size(rng: random.Random, root: Path) -> Draft:
    d = _doc(rng, root)
    t = pick(rng, d.topics)
    size = pick(rng, (9, 10, 11, 12, 14, 16, 18, 20, 24))
    s = pick(rng, [f"Set the {t} paragraph of {d.file} to {size} pt", f"In {d.file}, make the paragraph about {t} size {size}",
                   f"Change the font size of the {t} paragraph in {d.file} to {size} points"])

    def check(r: Path) -> str | None:
        p = _with(r, d, t)
        ok = p is not None and all(x.font.size is not None and abs(x.font.size.pt - size) < 0.01 for x in p.runs)
        return None if ok else "size not set"

    return Draft(polite(rng, s), (("set_font_size", (d.file, t, float(size))),), check, "documents.set_font_size")


def set_alignment(rng: random.Random, root: Path) -> Draft:
    d = _doc(rng, root)
    target = pick(rng, [*d.topics, d.title])
    align = pick(rng, ("left", "center", "right", "justify"))
    verb = {"left": "Align {x} to the left", "center": "Center {x}", "right": "Right-align {x}", "justify": "Justify {x}"}[align]
    what = f"the heading '{d.title}'" if target == d.title else f"the {target} paragraph"
    s = pick(rng, [verb.format(x=what) + f" in {d.file}", f"In {d.file}, " + verb.format(x=what)[0].lower() + verb.format(x=what)[1:]])
    anchor = target

    def check(r: Path) -> str | None:
        from docx.enum.text import WD_ALIGN_PARAGRAPH

        p = _with(r, d, anchor)
        want = getattr(WD_ALIGN_PARAGRAPH, align.upper())
        return None if p is not None and p.alignment == want else "alignment not set"

    return Draft(polite(rng, s), (("set_alignment", (d.file, anchor, align)),), check, "documents.set_alignment")


GENERATORS: dict[str, Generator] = {g.__name__: g for g in (
    replace_text, set_paragraph_text, delete_paragraph, insert_paragraph_after, append_paragraph, swap_paragraphs,
    remove_empty_paragraphs, set_style, set_font, set_font_size, set_alignment)}
