"""The per-application desktop study: which tasks it replays, and its table from the records
(the replays themselves are what ``agentlab tasks check --gui`` and the GIMP replay test run)."""

from __future__ import annotations

from agentlab.experiments.desktop_apps import SEVERAL, AppReplays, DesktopApps, DesktopAppsConfig, Replay, gui_tasks


def _replay(task: str, ok: bool, launch: float, replay: float, error: str | None = None) -> Replay:
    return Replay(task, ok, launch_s=launch, a11y_nodes=100, a11y_s=0.25, replay_s=replay, collect_s=1.0, steps=6,
                  error=error)


def test_tasks_are_grouped_by_their_first_application_and_capped() -> None:
    every = gui_tasks(DesktopAppsConfig())
    assert {"gimp", "chromium", "thunderbird", "vlc", "libreoffice-calc", "terminal", "file-manager"} <= set(every)
    assert all(t.env == "desktop" and t.gui_solution and (t.apps == [app] or len(t.apps) > 1 and app == SEVERAL)
               for app, ts in every.items() for t in ts)
    two = gui_tasks(DesktopAppsConfig(tasks_per_app=2))
    assert all(len(ts) == min(2, len(every[app])) for app, ts in two.items())
    assert [t.id for t in two["gimp"]] == sorted(t.id for t in every["gimp"])[:2]


def test_the_table_reports_medians_and_the_pass_rate_with_every_failure() -> None:
    gimp = AppReplays("gimp", ["gimp-a", "gimp-b"], [
        _replay("gimp-a", True, 10.0, 6.0), _replay("gimp-b", True, 12.0, 8.0),
        _replay("gimp-a", False, 11.0, 7.0, "step 3 (click menu item 'Invert'): its element never showed")])
    res = DesktopApps(DesktopAppsConfig(repeats=3), [gimp])
    lines = res.markdown()
    assert lines[0].startswith("| application | tasks | launch")
    assert lines[2] == "| gimp | 2 | 11.0 s | 100 | 250 ms | 7.0 s (6 steps) | 1.0 s | 2/3 |"
    assert "- gimp-a: step 3 (click menu item 'Invert'): its element never showed" in lines
    assert res.summary() == {"pass_gimp": 2 / 3}
    assert DesktopApps(DesktopAppsConfig(), skipped="no Xvfb").markdown()[0] == "Desktop applications: skipped (no Xvfb)"
