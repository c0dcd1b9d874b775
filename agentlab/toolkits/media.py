"""The media-player toolkit (MediaAgent): VLC's ``vlcrc``, playlists and subtitle files.

VLC writes every option into ``vlcrc`` under ``[module]`` sections, the ones left at their
default commented out (``#loop=0``); setting one means uncommenting it with the new value, in
its own section. Booleans are ``0``/``1`` there. Playlists are M3U files (``#EXTM3U``, then one
path per line, relative to the playlist's folder); subtitles are SRT files whose timestamps read
``HH:MM:SS,mmm``.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Annotated

from agentlab.toolkits.base import Slot, Toolkit, ToolError, file_slot, workspace_file

RC = Annotated[str, file_slot(".ini", ".conf", names=("vlcrc",))]
Playlist = Annotated[str, file_slot(".m3u", ".m3u8")]
NewPlaylist = Annotated[str, file_slot(".m3u", ".m3u8", new=True)]
Subs = Annotated[str, file_slot(".srt")]
NewSubs = Annotated[str, file_slot(".srt", new=True)]
Section = Annotated[str, Slot("section")]
Key = Annotated[str, Slot("setting")]
Value = Annotated[str, Slot("value")]
Item = Annotated[str, Slot("item")]
Media = Annotated[str, Slot("file")]
Folder = Annotated[str, Slot("folder")]

#: VLC options people ask for, by section (``module.key``)
KEYS: tuple[str, ...] = (
    "core.loop", "core.random", "core.repeat", "core.fullscreen", "core.one-instance", "core.playlist-enqueue",
    "core.video-on-top", "core.start-paused", "core.play-and-exit", "core.volume-step", "core.sub-language",
    "core.audio-language", "core.sub-autodetect-file", "core.video-title-show", "core.metadata-network-access",
    "core.snapshot-path", "core.snapshot-format", "core.audio-replay-gain-mode", "core.rate",
    "qt.qt-max-volume", "qt.qt-pause-minimized", "qt.qt-start-minimized", "qt.qt-privacy-ask", "qt.qt-recentplay",
    "qt.qt-minimal-view", "qt.qt-continue", "qt.qt-system-tray", "qt.qt-notification", "qt.qt-fs-controller",
    "qt.qt-embedded-open", "qt.qt-playlistview", "qt.qt-name-in-title",
)
TRUE, FALSE = {"true", "yes", "on", "enable", "enabled"}, {"false", "no", "off", "disable", "disabled"}
_STAMP = re.compile(r"(\d{2}):(\d{2}):(\d{2}),(\d{3})")


def _describe(path: Path) -> str:
    text = path.read_text(encoding="utf-8-sig", errors="replace")
    if path.suffix.lower() in (".m3u", ".m3u8"):
        return f"{path.as_posix()} (playlist):\n" + text[:500]
    if path.suffix.lower() == ".srt":
        return f"{path.as_posix()} (subtitles):\n" + text[:400]
    if not re.search(r"(?m)^\[[\w-]+\]", text):
        raise ValueError("not a vlcrc")
    if path.name != "vlcrc" and not re.search(r"(?m)^\[(?:core|qt|main)\]", text):
        # another INI file of the profile (VLC's Qt window state, vlc-qt-interface.conf): shown,
        # its keys were copied into set_option calls on every VLC task of data/tasks
        raise ValueError("an INI file, but not VLC's settings")
    # the options set, under the headers of their sections only: VLC's own file has hundreds of
    # module sections with every option commented out at its default, which would fill the prompt
    header, set_lines = "", []
    for ln in text.splitlines():
        line = ln.strip()
        if line.startswith("[") and "]" in line:
            header = ln
        elif line and not line.startswith("#"):
            if header:
                set_lines.append(header)
                header = ""
            set_lines.append(ln)
    shown = "\n".join(set_lines)[:600] if set_lines else "none (every option at its default)"
    return f"{path.as_posix()} (VLC settings; the options set):\n" + shown


kit = Toolkit("media", "the VLC media player's vlcrc settings, M3U playlists and SRT subtitles", describe=_describe,
              catalogue=KEYS, examples=(
                  ("Have VLC start videos in full screen and never open a second window (.config/vlc/vlcrc).",
                   "set_option('.config/vlc/vlcrc', 'core', 'fullscreen', 'true')\n"
                   "set_option('.config/vlc/vlcrc', 'core', 'one-instance', 'true')\ndone()"),
                  ("Make a playlist party.m3u of the songs in tunes/.",
                   "make_playlist('tunes', 'party.m3u', '.mp3')\ndone()"),
              ))


def _rc_value(value: str) -> str:
    v = value.strip()
    if v.lower() in TRUE:
        return "1"
    if v.lower() in FALSE:
        return "0"
    return v


@kit.tool
def set_option(file: RC, section: Section, key: Key, value: Value) -> str:
    """Set a VLC option in its section (e.g. core, loop, true); a commented-out default is replaced, yes/no become 1/0."""
    # (not in the docstring, which is the tool's line in the prompt: an option the file holds in
    # one other section only is set there, since VLC reads it nowhere else)
    p = workspace_file(file)
    section = section.strip("[]")
    if "." in key:  # a catalogue key names its section: qt.qt-max-volume
        section, key = key.split(".", 1)
    value = _rc_value(value)
    lines = p.read_text(encoding="utf-8").splitlines()
    homes = _sections_of(lines, key)
    moved = section not in homes and len(homes) == 1
    if moved:  # VLC reads an option only in its module's section: [qt] repeat=1 would change nothing
        section = homes[0]
    current, start, done = "", None, False
    out: list[str] = []
    for line in lines:
        stripped = line.strip()
        if stripped.startswith("[") and "]" in stripped:
            if current == section and not done:
                out.append(f"{key}={value}")
                done = True
            current = stripped[1:stripped.index("]")].strip()
            start = len(out) if current == section else start
            out.append(line)
            continue
        m = re.match(r"#?\s*([\w][\w.-]*)\s*=", stripped)
        if current == section and m and m.group(1) == key:
            if not done:
                out.append(f"{key}={value}")
                done = True
            continue
        out.append(line)
    if not done:
        if current != section:
            out += ["", f"[{section}]"]
        out.append(f"{key}={value}")
    p.write_text("\n".join(out) + "\n", encoding="utf-8")
    return f"[{section}] {key}={value}" + (f" ({key} is an option of [{section}]; set there)" if moved else "")


def _sections_of(lines: list[str], key: str) -> list[str]:
    """The sections of a vlcrc holding ``key``, set or as a commented-out default, in file order."""
    current, found = "", []
    for line in lines:
        stripped = line.strip()
        if stripped.startswith("[") and "]" in stripped:
            current = stripped[1:stripped.index("]")].strip()
            continue
        m = re.match(r"#?\s*([\w][\w.-]*)\s*=", stripped)
        if m and m.group(1) == key and current not in found:
            found.append(current)
    return found


# -- playlists --------------------------------------------------------------------------------
def _blocks(path: str) -> list[tuple[list[str], str]]:
    """A playlist's entries, each with the comment lines just above it (``#EXTINF:`` title and
    duration), so an edit that moves or drops an entry moves or drops its title with it."""
    p = workspace_file(path, "playlist")
    blocks: list[tuple[list[str], str]] = []
    notes: list[str] = []
    for ln in p.read_text(encoding="utf-8").splitlines():
        line = ln.strip()
        if not line or line.upper() == "#EXTM3U":
            continue
        if line.startswith("#"):
            notes.append(line)
        else:
            blocks.append((notes, line))
            notes = []
    return blocks


def _write_playlist(path: str, entries: list[str] | list[tuple[list[str], str]]) -> None:
    lines = ["#EXTM3U"]
    for e in entries:
        notes, entry = ([], e) if isinstance(e, str) else e
        lines += [*notes, entry]
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")


@kit.tool
def make_playlist(folder: Folder, out: NewPlaylist, extension: Value = ".mp3") -> str:
    """Write an M3U playlist of the files with an extension (.mp3) in a folder, sorted by name, as paths relative to the playlist."""
    src = Path(folder)
    if not src.is_dir():
        raise ToolError(f"no folder {folder!r} in the workspace")
    ext = "." + extension.strip().lstrip("*.").lower()
    base = Path(out).parent
    songs = sorted(f for f in src.rglob("*") if f.is_file() and f.suffix.lower() == ext)
    if not songs:
        raise ToolError(f"no {ext} file in {folder}")
    _write_playlist(out, [Path(os.path.relpath(f, base)).as_posix() for f in songs])
    return f"{out}: {len(songs)} entries"


@kit.tool
def add_to_playlist(file: Playlist, entry: Media) -> str:
    """Add a file at the end of a playlist."""
    blocks = _blocks(file)
    base = Path(file).parent
    if base != Path(".") and Path(entry).exists() and not Path(entry).is_absolute():
        entry = Path(os.path.relpath(entry, base)).as_posix()  # the workspace's path, as the playlist sees it
    blocks.append(([], entry))
    _write_playlist(file, blocks)
    return f"{file}: {len(blocks)} entries"


@kit.tool
def remove_from_playlist(file: Playlist, entry: Item) -> str:
    """Remove an entry (or, when no entry is exactly this, every entry containing this text) from a playlist."""
    blocks = _blocks(file)
    want = entry.strip().casefold()
    exact = [b for b in blocks if b[1].casefold() == want or Path(b[1]).name.casefold() == want]
    keep = [b for b in blocks if b not in exact] if exact else [b for b in blocks if want not in b[1].casefold()]
    if len(keep) == len(blocks):
        raise ToolError(f"no entry {entry!r} in {file}")
    _write_playlist(file, keep)
    return f"{file}: removed {len(blocks) - len(keep)}"


@kit.tool
def remove_missing(file: Playlist) -> str:
    """Remove the entries whose file does not exist (paths relative to the playlist's folder)."""
    base = Path(file).parent
    blocks = _blocks(file)
    keep = [b for b in blocks if re.match(r"[a-z][a-z0-9+.-]*://", b[1], re.I) or
            Path(b[1]).is_absolute() or (base / b[1]).is_file()]  # an absolute path is not the workspace's to judge
    _write_playlist(file, keep)
    return f"{file}: removed {len(blocks) - len(keep)} missing"


@kit.tool
def sort_playlist(file: Playlist, descending: bool = False) -> str:
    """Sort a playlist's entries by name."""
    blocks = sorted(_blocks(file), key=lambda b: b[1].casefold(), reverse=descending)
    _write_playlist(file, blocks)
    return f"{file}: sorted {len(blocks)}"


# -- subtitles --------------------------------------------------------------------------------
def _shift(stamp: re.Match[str], ms: int) -> str:
    h, m, s, milli = (int(x) for x in stamp.groups())
    total = max(0, ((h * 60 + m) * 60 + s) * 1000 + milli + ms)
    h, rest = divmod(total, 3_600_000)
    m, rest = divmod(rest, 60_000)
    s, milli = divmod(rest, 1000)
    return f"{h:02d}:{m:02d}:{s:02d},{milli:03d}"


@kit.tool
def shift_subtitles(file: Subs, seconds: float, out: NewSubs) -> str:
    """Shift every timestamp of an SRT file by some seconds (negative: earlier) and save the result."""
    p = workspace_file(file)
    ms = round(seconds * 1000)
    text = p.read_text(encoding="utf-8")
    shifted = "\n".join(_STAMP.sub(lambda m: _shift(m, ms), ln) if "-->" in ln else ln for ln in text.splitlines())
    Path(out).write_text(shifted + ("\n" if text.endswith("\n") else ""), encoding="utf-8")
    return f"{out}: shifted by {seconds:+g} s"
