"""The environment is the committed lock (issue #27): a library release never reaches a user's
install unannounced. `make install` installs ``requirements.lock`` hash-checked; these tests fail
when what is installed differs from it, or when ``pyproject.toml`` asks for something the lock
no longer satisfies (the lock was not refreshed with `make lock`).

`make test-latest` runs the suite against the newest allowed releases on purpose; it sets
``AGENTLAB_UNLOCKED=1`` and the installed-versions check steps aside there (saying so).
"""

from __future__ import annotations

import importlib.metadata as md
import os
import re
import tomllib
from pathlib import Path

import pytest
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parent.parent
LOCKS = [ROOT / "requirements.lock", ROOT / "requirements-models.lock"]
PIN = re.compile(r"^([A-Za-z0-9_.\-]+)==([^\s\\;]+)")


def _pins(path: Path) -> dict[str, str]:
    pins: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        m = PIN.match(line)
        if m:
            pins[canonicalize_name(m.group(1))] = m.group(2)
    return pins


def _locked() -> dict[str, str]:
    out: dict[str, str] = {}
    for lock in LOCKS:
        out.update(_pins(lock))
    return out


def test_every_pin_has_a_hash() -> None:
    for lock in LOCKS:
        text = lock.read_text(encoding="utf-8")
        blocks = re.split(r"\n(?=[A-Za-z0-9_.\-]+==)", text)
        for block in blocks:
            if PIN.match(block):
                assert "--hash=sha256:" in block, f"{lock.name}: no hash for {block.splitlines()[0]}"


def test_torch_is_the_cpu_build() -> None:
    assert _locked()["torch"] == "2.13.0+cpu"


def test_the_lock_satisfies_pyproject() -> None:
    """Every requirement of the core, every optional group and the test group is met by the lock."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    reqs = list(project["dependencies"])
    for group in project["optional-dependencies"].values():
        reqs += group
    locked = _locked()
    env = default_environment()
    for text in reqs:
        req = Requirement(text)
        if req.marker is not None and not req.marker.evaluate(env):
            continue
        name = canonicalize_name(req.name)
        assert name in locked, f"{text}: not in requirements.lock; run `make lock`"
        assert req.specifier.contains(Version(locked[name]), prereleases=True), (
            f"{text}: the lock has {locked[name]}; run `make lock`")


def test_installed_versions_are_the_locked_ones() -> None:
    if os.environ.get("AGENTLAB_UNLOCKED"):
        pytest.skip("AGENTLAB_UNLOCKED is set (make test-latest): newest releases on purpose, not the lock")
    differ = []
    for name, version in _locked().items():
        try:
            have = md.version(name)
        except md.PackageNotFoundError:
            differ.append(f"{name}: locked {version}, not installed")
            continue
        if Version(have) != Version(version):
            differ.append(f"{name}: locked {version}, installed {have}")
    assert not differ, "installed packages differ from requirements.lock (run `make install`): " + "; ".join(differ)
