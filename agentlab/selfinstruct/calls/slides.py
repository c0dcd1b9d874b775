"""Synthesized SlideAgent pairs: a small random deck (titled slides with a few bullets) and a
request naming slides by title or number, as the slides toolkit does."""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

from agentlab.selfinstruct.calls.draft import Draft, Generator
from agentlab.selfinstruct.calls.words import EXTRA_TITLES, POINTS, TITLES, pick, polite, sample, stem



@dataclass
class Deck:
    file: str
    titles: list[str]
    bullets: list[list[str]]


def _deck(rng: random.Random, root: Path, n: int | None = None) -> Deck:
    import pptx

    titles = sample(rng, TITLES, n or rng.randint(3, 6))
    bullets = [sample(rng, POINTS, rng.randint(0, 3)) for _ in titles]
    deck = Deck(f"{stem(rng)}.pptx", titles, bullets)
    prs = pptx.Presentation()
    for title, lines in zip(titles, bullets):
        slide = prs.slides.add_slide(prs.slide_layouts[1])
        slide.shapes.title.text = title
        body = slide.placeholders[1].text_frame
        for i, line in enumerate(lines):
            (body.paragraphs[0] if i == 0 else body.add_paragraph()).text = line
    prs.save(str(root / deck.file))
    return deck


def _slides(root: Path, deck: Deck) -> list[tuple[str, list[str]]]:
    import pptx

    out = []
    for slide in pptx.Presentation(str(root / deck.file)).slides:
        head = slide.shapes.title
        title, head_id = (head.text, head.shape_id) if head is not None else ("", None)
        lines = [p.text for sh in slide.shapes if sh.has_text_frame and sh.shape_id != head_id
                 for p in sh.text_frame.paragraphs if p.text]
        out.append((title, lines))
    return out


def _ref(rng: random.Random, deck: Deck) -> tuple[str, str, int]:
    """(how the request names a slide, the call's argument, its index)."""
    i = rng.randrange(len(deck.titles))
    if rng.random() < 0.6:
        return pick(rng, [f"the {deck.titles[i]} slide", f"the slide titled '{deck.titles[i]}'"]), deck.titles[i], i
    return pick(rng, [f"slide {i + 1}", f"slide number {i + 1}"]), str(i + 1), i


def set_title(rng: random.Random, root: Path) -> Draft:
    d = _deck(rng, root)
    said, ref, i = _ref(rng, d)
    new = pick(rng, [t for t in EXTRA_TITLES if t not in d.titles])
    s = pick(rng, [f"Change the title of {said} in {d.file} to '{new}'", f"In {d.file}, retitle {said} '{new}'",
                   f"Rename {said} of {d.file} to '{new}'"])

    def check(r: Path) -> str | None:
        titles = [t for t, _ in _slides(r, d)]
        return None if titles[i] == new else f"titles {titles}"

    return Draft(polite(rng, s), (("set_title", (d.file, ref, new)),), check, "slides.set_title")


def add_slide(rng: random.Random, root: Path) -> Draft:
    d = _deck(rng, root)
    new = pick(rng, [t for t in EXTRA_TITLES if t not in d.titles])
    lines = sample(rng, POINTS, rng.randint(1, 2))
    said = "; ".join(lines)
    s = pick(rng, [f"Add a slide '{new}' at the end of {d.file} with the points '{said}'",
                   f"Append a new slide titled '{new}' to {d.file}, body '{said}'",
                   f"In {d.file}, add a last slide called '{new}' that says '{said}'"])

    def check(r: Path) -> str | None:
        slides = _slides(r, d)
        return None if slides[-1][0] == new and slides[-1][1] == lines else f"last slide {slides[-1]}"

    return Draft(polite(rng, s), (("add_slide", (d.file, new, said)),), check, "slides.add_slide")


def add_slide_after(rng: random.Random, root: Path) -> Draft:
    d = _deck(rng, root)
    said_ref, ref, i = _ref(rng, d)
    new = pick(rng, [t for t in EXTRA_TITLES if t not in d.titles])
    line = pick(rng, POINTS)
    s = pick(rng, [f"Insert a slide '{new}' right after {said_ref} in {d.file}, with the line '{line}'",
                   f"In {d.file}, add a new slide titled '{new}' after {said_ref}; its text is '{line}'"])

    def check(r: Path) -> str | None:
        titles = [t for t, _ in _slides(r, d)]
        return None if i + 1 < len(titles) and titles[i + 1] == new else f"titles {titles}"

    return Draft(polite(rng, s), (("add_slide_after", (d.file, ref, new, line)),), check, "slides.add_slide_after")


def delete_slide(rng: random.Random, root: Path) -> Draft:
    d = _deck(rng, root)
    said, ref, i = _ref(rng, d)
    s = pick(rng, [f"Delete {said} from {d.file}", f"Remove {said} in {d.file}", f"In {d.file}, get rid of {said}"])
    gone = d.titles[i]

    def check(r: Path) -> str | None:
        titles = [t for t, _ in _slides(r, d)]
        return None if gone not in titles and len(titles) == len(d.titles) - 1 else f"titles {titles}"

    return Draft(polite(rng, s), (("delete_slide", (d.file, ref)),), check, "slides.delete_slide")


def move_slide(rng: random.Random, root: Path) -> Draft:
    d = _deck(rng, root, n=rng.randint(4, 6))
    said, ref, i = _ref(rng, d)
    pos = pick(rng, [p for p in range(1, len(d.titles) + 1) if p != i + 1])
    s = pick(rng, [f"Move {said} of {d.file} to position {pos}", f"In {d.file}, make {said} slide number {pos}",
                   f"Put {said} in place {pos} of {d.file}"])
    title = d.titles[i]

    def check(r: Path) -> str | None:
        titles = [t for t, _ in _slides(r, d)]
        return None if titles.index(title) == pos - 1 else f"titles {titles}"

    return Draft(polite(rng, s), (("move_slide", (d.file, ref, pos)),), check, "slides.move_slide")


def swap_slides(rng: random.Random, root: Path) -> Draft:
    d = _deck(rng, root, n=rng.randint(3, 6))
    a, b = sample(rng, d.titles, 2)
    s = pick(rng, [f"Swap the {a} and {b} slides in {d.file}", f"In {d.file}, exchange the slides '{a}' and '{b}'",
                   f"Switch the places of the {a} slide and the {b} slide of {d.file}"])

    def check(r: Path) -> str | None:
        titles = [t for t, _ in _slides(r, d)]
        return None if titles.index(a) == d.titles.index(b) and titles.index(b) == d.titles.index(a) else f"titles {titles}"

    return Draft(polite(rng, s), (("swap_slides", (d.file, a, b)),), check, "slides.swap_slides")


def add_bullet(rng: random.Random, root: Path) -> Draft:
    d = _deck(rng, root)
    said, ref, i = _ref(rng, d)
    line = pick(rng, [p for p in POINTS if p not in d.bullets[i]])
    s = pick(rng, [f"Add '{line}' as a bullet on {said} of {d.file}", f"In {d.file}, add the point '{line}' to {said}",
                   f"Put another bullet, '{line}', at the bottom of {said} in {d.file}"])

    def check(r: Path) -> str | None:
        lines = _slides(r, d)[i][1]
        return None if lines and lines[-1] == line else f"lines {lines}"

    return Draft(polite(rng, s), (("add_bullet", (d.file, ref, line)),), check, "slides.add_bullet")


def remove_bullet(rng: random.Random, root: Path) -> Draft:
    d = _deck(rng, root)
    with_lines = [k for k, b in enumerate(d.bullets) if b]
    if not with_lines:
        return add_bullet(rng, root)
    i = pick(rng, with_lines)
    line = pick(rng, d.bullets[i])
    ref, said = (d.titles[i], f"the {d.titles[i]} slide") if rng.random() < 0.6 else (str(i + 1), f"slide {i + 1}")
    s = pick(rng, [f"Remove the bullet '{line}' from {said} in {d.file}", f"In {d.file}, delete the point '{line}' on {said}",
                   f"Take '{line}' off {said} of {d.file}"])

    def check(r: Path) -> str | None:
        lines = _slides(r, d)[i][1]
        return None if line not in lines else f"lines {lines}"

    return Draft(polite(rng, s), (("remove_bullet", (d.file, ref, line)),), check, "slides.remove_bullet")


def replace_text(rng: random.Random, root: Path) -> Draft:
    d = _deck(rng, root)
    with_lines = [(k, line) for k, b in enumerate(d.bullets) for line in b]
    if not with_lines:
        return set_title(rng, root)
    _, line = pick(rng, with_lines)
    old = pick(rng, [w for w in line.split() if len(w) > 3] or [line])
    new = pick(rng, ("six", "the team", "June", "partners", "customers", "vendors", "three"))
    s = pick(rng, [f"Replace '{old}' with '{new}' everywhere in {d.file}", f"In {d.file}, change every '{old}' to '{new}'",
                   f"Swap the word '{old}' for '{new}' throughout {d.file}"])

    def check(r: Path) -> str | None:
        text = " ".join(t + " " + " ".join(lines) for t, lines in _slides(r, d))
        return None if old not in text.replace(new, "") and new in text else "not replaced"

    return Draft(polite(rng, s), (("replace_text", (d.file, old, new)),), check, "slides.replace_text")




GENERATORS: dict[str, Generator] = {g.__name__: g for g in (
    set_title, add_slide, add_slide_after, delete_slide, move_slide, swap_slides, add_bullet, remove_bullet, replace_text)}
