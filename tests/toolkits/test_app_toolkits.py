"""The browser, mail and media toolkits (issue #38: every workspace domain has a specialist that
can act): on the development tasks' own start states (data/tasks, never the held-out sets), the
calls a specialist would make run through the real tool program and the task's evaluator then
scores the result 1 -- and the slot values offer every argument those calls need."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agentlab.toolkits import load_toolkit
from agentlab.toolkits.base import parse_calls
from agentlab.toolkits.runtime import program, results
from agentlab.toolkits.slots import merge, request_values, workspace_values
from agentlab.tasks.spec import load_task, tasks_dir

PREFS, MARKS = ".config/chromium/Default/Preferences", ".config/chromium/Default/Bookmarks"
CASES = {
    "chrome-add-bookmark": ("browser", [f"add_bookmark('{MARKS}', 'Python docs', 'https://docs.python.org/3/', 'Bookmarks bar')"]),
    "chrome-download-folder": ("browser", [
        f"set_preference('{PREFS}', 'download.default_directory', '/home/user/Work/Downloads')",
        f"set_preference('{PREFS}', 'download.prompt_for_download', 'true')"]),
    "chrome-set-homepage": ("browser", [
        f"set_homepage('{PREFS}', 'https://intranet.example.com/')",
        f"set_preference('{PREFS}', 'browser.show_home_button', 'true')"]),
    "chrome-remove-ad-bookmarks": ("browser", None),
    "thunderbird-file-invoices": ("mail", ["move_messages('Mail/Inbox', 'Invoice', 'subject', 'Mail/Invoices')"]),
    "thunderbird-plain-text-compose": ("mail", ["set_pref('profile/prefs.js', 'mail.identity.id1.compose_html', 'false')"]),
    "vlc-max-volume-loop": ("media", ["set_option('.config/vlc/vlcrc', 'qt', 'qt-max-volume', '200')",
                                      "set_option('.config/vlc/vlcrc', 'core', 'loop', 'true')"]),
    "vlc-make-playlist": ("media", ["make_playlist('music', 'playlist.m3u', '.mp3')"]),
    "vlc-prune-playlist": ("media", ["remove_missing('mix.m3u')"]),
    "vlc-shift-subtitles": ("media", ["shift_subtitles('movie.srt', 2.5, 'movie_fixed.srt')"]),
}


def _run(kit_name: str, calls: list[str], root: Path) -> list[dict]:
    kit = load_toolkit(kit_name)
    parsed = parse_calls("\n".join(calls), kit, max_calls=len(calls))
    out = subprocess.run([sys.executable, "-c", program(kit_name, [c.as_json() for c in parsed])],
                         capture_output=True, text=True, cwd=root, timeout=60)
    return results(out.stdout)


@pytest.mark.parametrize("task_id", [k for k, v in CASES.items() if v[1]])
def test_the_calls_solve_the_development_task(task_id: str, tmp_path: Path) -> None:
    kit_name, calls = CASES[task_id]
    assert calls is not None
    task = load_task(tasks_dir() / f"{task_id}.json")
    task.prepare(tmp_path)
    assert task.evaluate(tmp_path).score == 0.0
    done = _run(kit_name, calls, tmp_path)
    assert [r["ok"] for r in done] == [True] * len(calls), done
    result = task.evaluate(tmp_path)
    assert result.score == 1.0, result.explain()


@pytest.mark.parametrize("task_id", list(CASES))
def test_the_slots_offer_what_the_calls_need(task_id: str, tmp_path: Path) -> None:
    kit_name, calls = CASES[task_id]
    kit = load_toolkit(kit_name)
    task = load_task(tasks_dir() / f"{task_id}.json")
    task.prepare(tmp_path)
    values = merge(request_values(task.instruction), workspace_values(tmp_path, kit))
    for call in parse_calls("\n".join(calls or []), kit, max_calls=9) if calls else []:
        for param in kit.tools[call.name].params:
            cands = values.candidates(param.slot)
            arg = call.args[param.name]
            if cands is not None and param.slot.kind not in ("number",):
                assert repr(arg) in cands or str(arg) in cands, (call.name, param.name, arg, cands[:12])


def test_a_bookmark_tree_is_edited_by_folder_and_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    monkeypatch.chdir(tmp_path)
    Path("Bookmarks").write_text(json.dumps({"roots": {
        "bookmark_bar": {"type": "folder", "name": "Bookmarks bar", "children": [
            {"type": "url", "name": "Ads tracker", "url": "https://ads.example.com/"},
            {"type": "folder", "name": "Work", "children": [{"type": "url", "name": "CI", "url": "https://ci.example.com/"}]}]},
        "other": {"type": "folder", "name": "Other bookmarks", "children": []}}}))
    done = _run("browser", ["add_bookmark_folder('Bookmarks', 'Reading', 'other')",
                            "move_bookmark('Bookmarks', 'CI', 'Reading')",
                            "remove_bookmarks_matching('Bookmarks', 'ads')",
                            "rename_bookmark('Bookmarks', 'Work', 'Job')"], tmp_path)
    assert all(r["ok"] for r in done), done
    roots = json.loads(Path("Bookmarks").read_text())["roots"]
    assert [c["name"] for c in roots["bookmark_bar"]["children"]] == ["Job"]
    assert roots["other"]["children"][0]["children"][0]["url"] == "https://ci.example.com/"


def test_mail_flags_are_what_thunderbird_reads(tmp_path: Path) -> None:
    from agentlab.judge.app_getters import mbox_messages
    from agentlab.judge.getters import FinalState

    task = load_task(tasks_dir() / "thunderbird-g-star-invoice.json")
    task.prepare(tmp_path)
    box = "thunderbird/Mail/Local Folders/Inbox"
    done = _run("mail", [f"mark_messages('{box}', 'Invoice 4471', 'subject', 'flagged')",
                         f"mark_messages('{box}', '*', 'subject', 'read')"], tmp_path)
    assert all(r["ok"] for r in done), done
    state = FinalState(tmp_path)
    assert mbox_messages(state, box, flag="flagged") == ["Invoice 4471"]
    assert mbox_messages(state, box, flag="unread") == []
    assert task.evaluate(tmp_path).score == 1.0


def test_a_folder_cannot_be_moved_into_its_own_sub_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Moving a folder below itself would cut it loose from the tree (it and its bookmarks gone
    from the file): refused with a tool error, the file unchanged."""
    from agentlab.toolkits import browser
    from agentlab.toolkits.base import ToolError

    monkeypatch.chdir(tmp_path)
    inner = {"type": "folder", "name": "Inner", "children": [{"type": "url", "name": "A", "url": "https://a/"}]}
    outer = {"type": "folder", "name": "Outer", "children": [inner]}
    tree = {"roots": {"bookmark_bar": {"type": "folder", "name": "Bookmarks bar", "children": [outer]},
                      "other": {"type": "folder", "name": "Other bookmarks", "children": []}}}
    Path("Bookmarks").write_text(json.dumps(tree), encoding="utf-8")
    before = Path("Bookmarks").read_text(encoding="utf-8")
    with pytest.raises(ToolError, match="its own folders"):
        browser.move_bookmark("Bookmarks", "Outer", "Inner")
    assert Path("Bookmarks").read_text(encoding="utf-8") == before
    browser.move_bookmark("Bookmarks", "Inner", "Other bookmarks")  # elsewhere: moved, nothing lost
    roots = json.loads(Path("Bookmarks").read_text(encoding="utf-8"))["roots"]
    assert roots["other"]["children"][0]["children"][0]["url"] == "https://a/"


def test_playlist_edits_keep_titles_and_match_whole_entries(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An entry's #EXTINF title moves and goes with it; removing 'song.mp3' leaves 'old_song.mp3';
    an added workspace path is written as the playlist in a sub-folder sees it; a playlist may
    go into a new folder; stream addresses of any scheme are not 'missing'."""
    from agentlab.toolkits import media

    monkeypatch.chdir(tmp_path)
    (tmp_path / "music").mkdir()
    for name in ("song.mp3", "old_song.mp3", "b.mp3"):
        (tmp_path / "music" / name).write_bytes(b"x")
    Path("mix.m3u").write_text("#EXTM3U\n#EXTINF:200,Zed - Song\nmusic/song.mp3\n#EXTINF:100,Old\nmusic/old_song.mp3\n"
                               "rtsp://cam.example/live\nmusic/gone.mp3\n", encoding="utf-8")
    media.sort_playlist("mix.m3u")
    assert Path("mix.m3u").read_text().splitlines() == [
        "#EXTM3U", "music/gone.mp3", "#EXTINF:100,Old", "music/old_song.mp3", "#EXTINF:200,Zed - Song", "music/song.mp3",
        "rtsp://cam.example/live"]
    media.remove_from_playlist("mix.m3u", "song.mp3")
    assert "music/old_song.mp3" in Path("mix.m3u").read_text() and "Zed - Song" not in Path("mix.m3u").read_text()
    media.remove_missing("mix.m3u")
    assert Path("mix.m3u").read_text().splitlines() == ["#EXTM3U", "#EXTINF:100,Old", "music/old_song.mp3",
                                                        "rtsp://cam.example/live"]
    media.make_playlist("music", "lists/all.m3u", ".mp3")
    assert Path("lists/all.m3u").read_text().splitlines()[1] == "../music/b.mp3"
    media.add_to_playlist("lists/all.m3u", "music/song.mp3")
    assert Path("lists/all.m3u").read_text().splitlines()[-1] == "../music/song.mp3"


def test_moving_mail_into_the_folder_it_is_in_loses_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The move wrote the target, then the source without the moved messages: with both the same
    folder, every picked message was deleted. Refused now, the folder untouched."""
    import mailbox

    from agentlab.toolkits import mail
    from agentlab.toolkits.base import ToolError

    monkeypatch.chdir(tmp_path)
    box = mailbox.mbox("Inbox")
    for subject in ("Hello", "Invoice 12"):
        msg = mailbox.mboxMessage()
        msg["Subject"], msg["From"] = subject, "a@example.org"
        msg.set_payload("hi")
        box.add(msg)
    box.flush()
    box.close()
    before = Path("Inbox").read_bytes()
    with pytest.raises(ToolError, match="the folder the messages are in"):
        mail.move_messages("Inbox", "*", "subject", "./Inbox")
    assert Path("Inbox").read_bytes() == before


def test_a_vlc_option_named_in_the_wrong_section_is_set_in_its_own(tmp_path: Path) -> None:
    """VLC reads an option only in its module's section; the media specialist once wrote
    ``set_option(..., 'qt', 'repeat', 'true')``, adding a [qt] repeat=1 that VLC ignores. An option
    the file holds in one other section only is set there, and the result says so; an option the
    file does not know stays where it was asked."""
    task = load_task(tasks_dir() / "vlc-max-volume-loop.json")
    task.prepare(tmp_path)
    done = _run("media", ["set_option('.config/vlc/vlcrc', 'qt', 'qt-max-volume', '200')",
                          "set_option('.config/vlc/vlcrc', 'qt', 'loop', 'true')"], tmp_path)
    assert [r["ok"] for r in done] == [True, True], done
    assert "[core] loop=1" in str(done[1]) and "set there" in str(done[1])
    assert task.evaluate(tmp_path).score == 1.0
    unknown = _run("media", ["set_option('.config/vlc/vlcrc', 'qt', 'no-such-option', '1')"], tmp_path)
    assert "[qt] no-such-option=1" in str(unknown[0])
