"""Requests that ask for two operations: two synthesized drafts joined into one.

Why: every synthesized pair used to be one call and ``done()``, so an adapter trained on them
learns that a request is one operation, and a request such as "write Average in A6 and put the
mean of March below the column" gets one call. A composed draft makes both start states in the
same folder (the second generator may reuse or replace what the first wrote), joins the two
requests the way people chain asks ("…, and then …", "… Also, …"), and keeps both calls in order.
It goes through the same checks as any draft (:mod:`.build`): decodable under the grammar, both
calls run without error on the combined start state, both postconditions hold afterwards. So a
kept composed pair is right by construction, and the number of calls an adapter learns to write
comes from how many operations the pairs' requests ask for, not from a fixed count.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from pathlib import Path

from agentlab.selfinstruct.calls.draft import Check, Draft, Generator

#: the family name of a composed candidate while it is made (a kept pair's family is ``two:<a>+<b>``)
TWO_OPS = "two"
#: how a second ask follows the first: (joint, whether the second request's first letter is lowered)
JOINTS: tuple[tuple[str, bool], ...] = (
    (", and then ", True), (" and ", True), (". Also, ", True), (". After that, ", True), ("; then ", True),
    (". Once that's done, ", True), (". ", False), (", and also ", True),
)


def join_requests(first: str, second: str, rng: random.Random) -> str:
    """One request asking for ``first`` and then ``second`` (a joint picked by ``rng``)."""
    joint, lower = JOINTS[rng.randrange(len(JOINTS))]
    head = first.rstrip().rstrip(".!")
    tail = second.strip()
    if lower and tail[:1].isupper() and not tail[1:2].isupper():  # keep "SUM", "A6", "CSV" as written
        tail = tail[0].lower() + tail[1:]
    return f"{head}{joint}{tail}"


def _both(a: Check, b: Check) -> Check:
    def check(root: Path) -> str | None:
        return a(root) or b(root)
    return check


def compose(generators: Mapping[str, Generator], rng: random.Random, root: Path) -> Draft:
    """A two-operation draft from two different families of ``generators``, made in ``root``."""
    names = sorted(generators)
    first, second = rng.sample(names, 2) if len(names) > 1 else (names[0], names[0])
    a = generators[first](rng, root)
    b = generators[second](rng, root)
    return Draft(join_requests(a.request, b.request, rng), (*a.calls, *b.calls), _both(a.check, b.check),
                 f"two:{a.family}+{b.family}")
