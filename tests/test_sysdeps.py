"""Every system package and application the project needs is installed by the two commands
(issue #36): on a machine where ``scripts/sysdeps.sh`` can install (Debian, root or sudo), a
missing one is a failure, not a quiet skip of the tests that need it."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from agentlab.envs.testing import system

ROOT = Path(__file__).resolve().parent.parent


def _packages() -> list[str]:
    text = (ROOT / "scripts" / "sysdeps.sh").read_text(encoding="utf-8")
    block = re.search(r'PKGS="([^"]+)"', text)
    assert block, "scripts/sysdeps.sh has no PKGS=\"...\" list"
    return block.group(1).replace("\\\n", " ").split()


def test_sysdeps_installs_every_application_a_desktop_task_opens():
    from agentlab.envs.launchers import LAUNCHERS
    from agentlab.tasks.spec import load_tasks

    apps = {a for t in load_tasks() for a in t.apps if a in LAUNCHERS}
    packages = set(_packages())
    # the Debian package that provides each launcher's program (as its install hint says)
    for app in sorted(apps):
        hint = LAUNCHERS[app].install_hint
        wanted = set(re.findall(r"apt-get install ([\w\- ]+)", hint)[0].split()) if "apt-get install" in hint else set()
        assert wanted and wanted <= packages, f"{app}: sysdeps.sh lacks {sorted(wanted - packages)} (hint: {hint!r})"


@pytest.mark.skipif(shutil.which("dpkg-query") is None, reason="not a Debian/Ubuntu system: sysdeps.sh installs nothing here")
def test_every_package_of_sysdeps_is_installed_where_it_could_be():
    missing = [p for p in _packages() if "install ok installed" not in subprocess.run(
        ["dpkg-query", "-W", "-f=${Status}", p], capture_output=True, text=True, check=False).stdout]
    if missing:
        system.missing_system(f"system packages not installed: {', '.join(missing)}")


def test_every_launcher_program_of_the_tasks_is_on_this_machine():
    from agentlab.envs.launchers import LAUNCHERS, installed
    from agentlab.tasks.spec import load_tasks

    apps = sorted({a for t in load_tasks() for a in t.apps if a in LAUNCHERS})
    missing = [a for a in apps if not installed(LAUNCHERS[a])]
    if missing:
        system.missing_system(f"applications the desktop tasks open are not installed: {', '.join(missing)}")


def test_a_missing_program_fails_where_sysdeps_could_install_and_skips_elsewhere(monkeypatch):
    monkeypatch.setattr(system, "sysdeps_could_install", lambda: True)
    with pytest.raises(pytest.fail.Exception, match="gimp: scripts/sysdeps.sh installs it"):
        system.missing_system("gimp")
    monkeypatch.setattr(system, "sysdeps_could_install", lambda: False)
    with pytest.raises(pytest.skip.Exception, match="could not install it here"):
        system.missing_system("gimp")
