"""Random names and values for synthesized start states, and a little wording variety.

Why a module of word lists: the start states must vary (names, numbers, sizes) so that an adapter
learns to copy *what the request and the workspace say* instead of memorising values, and the
requests must vary in wording so that it learns the operation, not one sentence.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")

STEMS = ("budget", "report", "notes", "plan", "roster", "orders", "stock", "survey", "menu", "agenda", "invoice",
         "summary", "tracker", "schedule", "catalog", "ledger", "minutes", "proposal", "review", "outline", "guide",
         "contacts", "expenses", "results", "timeline", "pricing", "checklist", "memo", "draft", "overview")
YEARS = ("2021", "2022", "2023", "2024", "2025")
PEOPLE = ("Alice", "Bruno", "Chen", "Dana", "Elif", "Farid", "Greta", "Hugo", "Ines", "Jonas", "Kira", "Liam",
          "Maya", "Nils", "Olga", "Pavel", "Quinn", "Rosa", "Sven", "Tara", "Umar", "Vera", "Wanda", "Yusuf", "Zoe")
CITIES = ("Lima", "Oslo", "Porto", "Quito", "Riga", "Seoul", "Tunis", "Vienna", "Zagreb", "Austin", "Berlin",
          "Cairo", "Dublin", "Essen", "Hanoi", "Kyoto", "Lagos", "Milan", "Nairobi", "Perth")
ITEMS = ("apples", "bolts", "cables", "desks", "erasers", "folders", "gloves", "hammers", "inks", "jackets",
         "kettles", "lamps", "mugs", "nails", "pencils", "quilts", "rulers", "scarves", "tapes", "umbrellas")
TEAMS = ("Sales", "Support", "Finance", "Legal", "Design", "Research", "Marketing", "Operations")
SHEETS = ("Data", "Sheet1", "Sales", "Staff", "Inventory", "Totals", "Summary", "Raw", "Q1", "Q2", "Archive",
          "Budget", "Orders", "Scores", "Notes")
NEW_NAMES = ("Overview", "Results", "Final", "Backup", "Review", "Forecast", "Targets", "Actuals", "Archive2024",
             "Draft", "Totals", "Plan", "Export", "Cleaned", "Report")
TOPICS = ("parking", "lunch", "deadline", "holiday", "budget", "security", "training", "printer", "travel",
          "recycling", "meeting", "safety", "payroll", "library", "garden", "visitors", "badges", "laptops")
PHRASES = ("Please arrive ten minutes early", "All rooms are booked until Friday", "The team meets every Monday",
           "Questions go to the front desk", "Bring your own laptop", "Tickets are free for members",
           "The kitchen closes at six", "Coffee is served in the hall", "Reports are due on the first",
           "Visitors sign in at reception", "The garden opens in spring", "Badges must be worn at all times")
TITLES = ("Introduction", "Goals", "Timeline", "Budget", "Risks", "Team", "Results", "Next Steps", "Questions",
          "Agenda", "Summary", "Background", "Market", "Roadmap", "Costs", "Lessons Learned", "Appendix")
POINTS = ("hire two engineers", "cut costs by ten percent", "launch in May", "test on real users",
          "move to the cloud", "train the support team", "open a second office", "review the contracts",
          "ship the mobile app", "update the website", "reduce churn", "collect feedback")
EXTRA_TITLES = ("Key Figures", "Open Issues", "Milestones", "Thank You", "Contacts", "Highlights", "Feedback",
                "Methods", "Outlook", "Decisions")


#: first words a request may be softened after ("Please rename ...", "Could you sort ...")
VERBS = frozenset("""add append put write set change update delete remove drop insert sort order rename call move make
give replace swap center align resize scale crop rotate turn convert save copy create sum total keep brighten darken
exclude switch use bold underline italicize capitalize""".split())


def pick(rng: random.Random, seq: Sequence[T]) -> T:
    return seq[rng.randrange(len(seq))]


def sample(rng: random.Random, seq: Sequence[T], k: int) -> list[T]:
    return rng.sample(list(seq), k)


def stem(rng: random.Random) -> str:
    """A file name stem: a word, sometimes with a year or a suffix."""
    base = pick(rng, STEMS)
    r = rng.random()
    if r < 0.25:
        return f"{base}_{pick(rng, YEARS)}"
    if r < 0.4:
        return f"{base}-{pick(rng, ('old', 'new', 'v2', 'final', 'q3'))}"
    return base


def polite(rng: random.Random, sentence: str) -> str:
    """The same request with a random opening (none, please, could you ...) and ending."""
    s = sentence.rstrip(".")
    if s.split(" ", 1)[0].lower() not in VERBS:  # "In x.xlsx, ..." or a name first: no lower-casing
        return s + "."
    r = rng.random()
    if r < 0.15:
        return f"Please {s[0].lower()}{s[1:]}."
    if r < 0.25:
        return f"Could you {s[0].lower()}{s[1:]}?"
    if r < 0.32:
        return f"I need you to {s[0].lower()}{s[1:]}."
    return s + "."
