"""Synthesized MediaAgent pairs: a random VLC ``vlcrc`` (its ``[core]`` and ``[qt]`` sections full of
commented defaults, a few options set), folders of songs and videos, M3U playlists and SRT subtitle
files, and a request to set an option, write or edit a playlist, or shift subtitles.

Why these start states: the toolkit's calls name things the request or the workspace holds (a
vlcrc key, a playlist entry, a folder), so the files are made the way VLC and people make them and
the requests name the options as people say them ("loop the playlist", "always start in full
screen", "max volume 200"), not by their keys, so an adapter learns to map the words onto the
option. Values the grammar can only take from the request (a language code, a number, a new file
name) are always written in it.
"""

from __future__ import annotations

import os
import random
import re
from dataclasses import dataclass
from pathlib import Path

from agentlab.selfinstruct.calls.draft import Draft, Generator
from agentlab.selfinstruct.calls.words import PEOPLE, pick, polite, sample

#: where a vlcrc may live in the workspace (VLC's own places and a few copies)
RC_PATHS = (".config/vlc/vlcrc", ".config/vlc/vlcrc", "vlcrc", "vlc/vlcrc", "config/vlc/vlcrc", "home/.config/vlc/vlcrc")
#: (section, key) -> (the comment VLC writes above the option, its default as written)
DEFAULTS: dict[tuple[str, str], tuple[str, str]] = {
    ("qt", "qt-minimal-view"): ("Start in minimal view (without menus) (boolean)", "0"),
    ("qt", "qt-system-tray"): ("Systray icon (boolean)", "1"),
    ("qt", "qt-notification"): ("Show notification popup on track change (integer)", "1"),
    ("qt", "qt-start-minimized"): ("Start VLC with only a systray icon (boolean)", "0"),
    ("qt", "qt-pause-minimized"): ("Pause the video playback when minimized (boolean)", "0"),
    ("qt", "qt-fs-controller"): ("Show a controller in fullscreen mode (boolean)", "1"),
    ("qt", "qt-recentplay"): ("Save the recently played items in the menu (boolean)", "1"),
    ("qt", "qt-continue"): ("Continue playback? (integer)", "1"),
    ("qt", "qt-name-in-title"): ("Show playing item name in window title (boolean)", "1"),
    ("qt", "qt-playlistview"): ("Display playlist in main interface (boolean)", "0"),
    ("qt", "qt-embedded-open"): ("Embed the file browser in open dialog (boolean)", "0"),
    ("qt", "qt-privacy-ask"): ("Show settings dialog at first start (boolean)", "1"),
    ("qt", "qt-max-volume"): ("Maximum Volume displayed (integer)", "125"),
    ("core", "metadata-network-access"): ("Allow metadata network access (boolean)", "0"),
    ("core", "volume-step"): ("Audio output volume step (float)", "12.800000"),
    ("core", "audio-replay-gain-mode"): ("Replay gain mode (string)", "none"),
    ("core", "audio-language"): ("Audio language (string)", ""),
    ("core", "sub-language"): ("Subtitle language (string)", ""),
    ("core", "sub-autodetect-file"): ("Autodetect subtitle files (boolean)", "1"),
    ("core", "fullscreen"): ("Fullscreen video output (boolean)", "0"),
    ("core", "video-on-top"): ("Always on top (boolean)", "0"),
    ("core", "video-title-show"): ("Show media title on video (boolean)", "1"),
    ("core", "snapshot-path"): ("Video snapshot directory (or filename) (string)", ""),
    ("core", "snapshot-format"): ("Video snapshot format (string)", "png"),
    ("core", "rate"): ("Playback speed (float)", "1.000000"),
    ("core", "random"): ("Play files randomly forever (boolean)", "0"),
    ("core", "loop"): ("Repeat all (boolean)", "0"),
    ("core", "repeat"): ("Repeat current item (boolean)", "0"),
    ("core", "play-and-exit"): ("Play and exit (boolean)", "0"),
    ("core", "start-paused"): ("Start paused (boolean)", "0"),
    ("core", "one-instance"): ("Allow only one running instance (boolean)", "0"),
    ("core", "playlist-enqueue"): ("Enqueue items into playlist in one instance mode (boolean)", "0"),
}
#: other modules' sections, so a vlcrc is not only the two the requests are about
OTHER_SECTIONS: dict[str, tuple[tuple[str, str, str], ...]] = {
    "visual": (("Effects list (string)", "effect-list", "spectrum"), ("Video width (integer)", "effect-width", "800")),
    "avcodec": (("Hardware decoding (string)", "avcodec-hw", "any"), ("Direct rendering (boolean)", "avcodec-dr", "1")),
    "skins2": (("Skin to use (string)", "skins2-last", ""), ("Enable transparency effects (boolean)", "skins2-transparency", "0")),
    "subsdelay": (("Delay calculation mode (integer)", "subsdelay-mode", "1"),),
}

#: what people ask for, by option: (the ask as a verb phrase, the value the call writes)
ASKS: dict[tuple[str, str], tuple[tuple[str, str], ...]] = {
    ("core", "loop"): (("loop the playlist", "true"), ("start the playlist over when it reaches the end", "true"),
                       ("loop through all my songs", "true"), ("stop looping the playlist", "false"),
                       ("play the playlist once and not loop it", "false")),
    ("core", "repeat"): (("repeat the current item over and over", "true"), ("keep repeating the same video", "true"),
                         ("stop repeating the current track", "false")),
    ("core", "random"): (("shuffle the playlist and play files in random order", "true"), ("play songs in random order", "true"),
                         ("turn off random playback", "false"), ("play files in order instead of random", "false")),
    ("core", "fullscreen"): (("always start in full screen", "true"), ("open every video in fullscreen", "true"),
                             ("stop starting videos in full screen", "false")),
    ("core", "one-instance"): (("never open a second window when I open another file", "true"),
                               ("allow only one running instance", "true"), ("allow several instances at once", "false")),
    ("core", "playlist-enqueue"): (("enqueue the files I open into the playlist instead of playing them at once", "true"),),
    ("core", "video-on-top"): (("keep the video window always on top", "true"), ("stop staying on top of other windows", "false")),
    ("core", "start-paused"): (("start every file paused", "true"), ("open videos paused instead of playing them", "true")),
    ("core", "play-and-exit"): (("quit by itself when the playlist has finished (play and exit)", "true"),
                                ("close itself after playing", "true")),
    ("core", "video-title-show"): (("stop showing the media title over the video", "false"),
                                   ("show the media title on the video when it starts", "true")),
    ("core", "sub-autodetect-file"): (("stop loading subtitle files automatically", "false"),
                                      ("autodetect subtitle files next to the video", "true")),
    ("core", "metadata-network-access"): (("allow metadata network access so it fetches cover art", "true"),
                                          ("never go online for metadata network access", "false")),
    ("qt", "qt-pause-minimized"): (("pause the video when I minimize the window", "true"),
                                   ("pause playback when minimized", "true"), ("keep playing when minimized", "false")),
    ("qt", "qt-start-minimized"): (("start minimized with only a systray icon", "true"),),
    ("qt", "qt-privacy-ask"): (("stop asking the privacy and network access question at first start", "false"),
                               ("stop showing the settings dialog at first start", "false")),
    ("qt", "qt-recentplay"): (("stop saving recently played items", "false"), ("forget the recent media list and stop recording it", "false"),
                              ("remember recently played items in the menu", "true")),
    ("qt", "qt-minimal-view"): (("start in minimal view without menus", "true"), ("show the menus again instead of minimal view", "false")),
    ("qt", "qt-system-tray"): (("hide the systray icon", "false"), ("show an icon in the system tray", "true")),
    ("qt", "qt-notification"): (("stop the notification popup on every track change", "false"),),
    ("qt", "qt-fs-controller"): (("hide the controller in full screen mode", "false"),
                                 ("show the controls when playing in full screen", "true")),
    ("qt", "qt-name-in-title"): (("show the playing item's name in the window title", "true"),
                                 ("keep the media name out of the window title", "false")),
    ("qt", "qt-playlistview"): (("display the playlist in the main interface", "true"),),
    ("qt", "qt-embedded-open"): (("embed the file browser in the open dialog", "true"),),
}
#: yes/no options by the names people switch them on or off with
NAMES: dict[tuple[str, str], tuple[str, ...]] = {
    ("core", "loop"): ("loop", "playlist looping"), ("core", "random"): ("shuffle", "random play"),
    ("core", "repeat"): ("repeat one", "repeating the current item"), ("core", "fullscreen"): ("full screen", "fullscreen mode"),
    ("core", "one-instance"): ("one instance mode", "single instance mode"), ("core", "video-on-top"): ("always on top",),
    ("core", "start-paused"): ("start paused",), ("core", "play-and-exit"): ("play and exit",),
    ("core", "sub-autodetect-file"): ("subtitle autodetection", "automatic subtitle loading"),
    ("core", "metadata-network-access"): ("metadata network access", "online cover art lookups"),
    ("qt", "qt-pause-minimized"): ("pause when minimized",), ("qt", "qt-recentplay"): ("the recent media list", "recently played items"),
    ("qt", "qt-minimal-view"): ("minimal view",), ("qt", "qt-system-tray"): ("the systray icon", "the system tray icon"),
    ("qt", "qt-fs-controller"): ("the full screen controller",), ("qt", "qt-name-in-title"): ("the media name in the window title",),
}
#: two-letter codes VLC takes for a language, and how people name it
LANGUAGES = (("German", "de"), ("French", "fr"), ("Spanish", "es"), ("English", "en"), ("Dutch", "nl"),
             ("Portuguese", "pt"), ("Swedish", "sv"), ("Japanese", "ja"), ("Polish", "pl"), ("Finnish", "fi"))

SONGS = ("sunrise", "blue_river", "night_drive", "ocean_waves", "city_lights", "old_road", "summer_rain", "paper_moon",
         "slow_dance", "golden_hour", "wild_heart", "echoes", "low_tide", "northern_sky", "last_train", "lullaby",
         "morning_coffee", "neon_dreams", "quiet_storm", "red_balloon", "silver_lining", "empty_streets", "firefly",
         "harbor", "midnight_walk", "open_fields", "rooftops", "snowfall", "tangerine", "wanderer")
ARTISTS = ("the_owls", "mira_stone", "kestrel", "blue_fig", "aurora_band", "tom_haze", "velvet_sun", "jonah_park")
VIDEOS = ("intro", "lecture_week", "holiday_clip", "interview", "trailer", "tutorial", "keynote", "birthday_party",
          "drone_flight", "concert_live", "wedding_speech", "recap", "demo_day", "outro", "unboxing")
AUDIO_DIRS = ("music", "Music", "songs", "audio", "albums/jazz", "albums/rock", "mixtapes", "media/music", "tunes")
VIDEO_DIRS = ("videos", "Videos", "clips", "lectures", "media/videos", "recordings")
PLAYLISTS = ("party", "chill", "roadtrip", "workout", "focus", "sunday", "mix", "favorites", "lectures", "dinner",
             "study", "morning", "running", "evening", "summer", "jazz_night", "kids", "sleep")
FILMS = ("movie", "holiday_film", "lecture", "documentary", "episode_one", "the_heist", "night_train", "talk",
         "interview", "pilot", "finale", "concert")
CUES = ("Where were you last night?", "I waited for hours.", "The train leaves at dawn.", "Don't forget the tickets.",
        "We should go now.", "Is anyone there?", "Look at the sky!", "Thank you for coming.", "It's getting late.",
        "Let me explain.", "Keep the change.", "Welcome back, everyone.", "Nobody saw it coming.", "Turn left here.")
BYTES = {".mp3": b"ID3\x03\x00\x00\x00", ".ogg": b"OggS\x00\x02", ".flac": b"fLaC\x00\x00", ".mp4": b"\x00\x00\x00\x18ftypmp42",
         ".mkv": b"\x1aE\xdf\xa3", ".jpg": b"\xff\xd8\xff\xe0"}
CONTEXT = ("", "", "", "VLC is closed right now. ", "I use VLC for my music and films. ", "My media player is VLC. ",
           "I set up VLC on this machine. ", "Quick VLC tweak: ", "The player's config is in this folder. ")
_ENTRY = re.compile(r"^#?\s*([\w][\w.-]*)\s*=\s*(.*)$")


# -- start states -------------------------------------------------------------------------------
def _vlcrc(rng: random.Random, root: Path, preset: dict[tuple[str, str], str] | None = None) -> str:
    """A vlcrc at a random place in ``root``: its sections in VLC's layout, every known option as a
    commented default, a few set (``preset`` ones as given); returns its path."""
    path = next((str(p.relative_to(root)) for p in sorted(root.rglob("vlcrc")) if p.is_file()), None) or pick(rng, RC_PATHS)
    set_now: dict[tuple[str, str], str] = {}
    for k in sample(rng, list(DEFAULTS), rng.randint(1, 4)):
        if DEFAULTS[k][1] in ("0", "1"):
            set_now[k] = "1" if DEFAULTS[k][1] == "0" else "0"
    set_now.update(preset or {})
    sections = ["qt", "core"] + sample(rng, list(OTHER_SECTIONS), rng.randint(0, 2))
    rng.shuffle(sections)
    lines = ["###", f"###  vlc 3.0.{pick(rng, ('16', '18', '20', '21'))}", "###", "",
             "###", "### lines beginning with a '#' character are comments", "###", ""]
    titles = {"qt": "Qt interface", "core": "core program", "visual": "Visualizer filter", "avcodec": "FFmpeg audio/video decoder",
              "skins2": "Skinnable Interface", "subsdelay": "Subtitle delay"}
    for sec in sections:
        lines += [f"[{sec}] # {titles[sec]}", ""]
        if sec in OTHER_SECTIONS:
            opts = [(c, k, v) for c, k, v in OTHER_SECTIONS[sec]]
        else:
            opts = [(c, k, v) for (s, k), (c, v) in DEFAULTS.items() if s == sec]
        for comment, key, default in opts:
            lines.append(f"# {comment}")
            lines.append(f"{key}={set_now[(sec, key)]}" if (sec, key) in set_now else f"#{key}={default}")
            lines.append("")
    (root / path).parent.mkdir(parents=True, exist_ok=True)
    (root / path).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _rc_set(text: str) -> dict[str, dict[str, list[str]]]:
    """The options set (uncommented) per section of a vlcrc's text: section -> key -> values."""
    out: dict[str, dict[str, list[str]]] = {}
    current = ""
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("[") and "]" in s:
            current = s[1:s.index("]")].strip()
            continue
        m = _ENTRY.match(s)
        if m and not s.startswith("#"):
            out.setdefault(current, {}).setdefault(m.group(1), []).append(m.group(2).strip())
    return out


def _media(rng: random.Random, root: Path, folder: str, exts: tuple[str, ...], k: int, names: tuple[str, ...] = SONGS,
           avoid: set[str] | None = None) -> list[str]:
    """``k`` media files with random names in ``folder`` (workspace paths), each with one of ``exts``;
    no name contains another, so a name picks out one entry."""
    taken = {Path(p.name).stem for p in root.rglob("*")} | (avoid or set())
    pool = [n for n in names if not any(n in t or t in n for t in taken)]
    out = []
    (root / folder).mkdir(parents=True, exist_ok=True)
    for name in sample(rng, pool, min(k, len(pool))):
        stem = f"{pick(rng, ARTISTS)}-{name}" if names is SONGS and rng.random() < 0.3 else name
        ext = pick(rng, exts)
        rel = f"{folder}/{stem}{ext}"
        (root / rel).write_bytes(BYTES.get(ext, b"\x00"))
        out.append(rel)
    return out


def _write_m3u(rng: random.Random, path: Path, entries: list[str]) -> None:
    """An M3U playlist; sometimes with ``#EXTINF`` lines as players write them."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = ["#EXTM3U"]
    extinf = rng.random() < 0.4
    for e in entries:
        if extinf:
            lines.append(f"#EXTINF:{rng.randint(95, 420)},{Path(e).stem.replace('_', ' ').title()}")
        lines.append(e)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def entries(path: Path) -> list[str]:
    """A playlist's entries (its lines that are not comments)."""
    return [ln.strip() for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip() and not ln.startswith("#")]


def _fresh(rng: random.Random, root: Path, names: tuple[str, ...], suffix: str, folder: str = "") -> str:
    """A workspace path ``folder/<name><suffix>`` that does not exist yet."""
    free = [n for n in names if not (root / folder / f"{n}{suffix}").exists()]
    name = f"{pick(rng, free or [f'{n}_2' for n in names])}{suffix}"
    return f"{folder}/{name}" if folder else name


@dataclass
class Library:
    """A music folder and a playlist of some of its songs (at the workspace's top, as VLC saves one)."""

    folder: str
    songs: list[str]
    playlist: str
    listed: list[str]


def _library(rng: random.Random, root: Path, playlist_dir: str = "") -> Library:
    folder = pick(rng, AUDIO_DIRS)
    ext = pick(rng, (".mp3", ".mp3", ".ogg", ".flac"))
    songs = _media(rng, root, folder, (ext,), rng.randint(4, 7))
    if rng.random() < 0.4:
        (root / folder / "cover.jpg").write_bytes(BYTES[".jpg"])
    playlist = _fresh(rng, root, PLAYLISTS, pick(rng, (".m3u", ".m3u", ".m3u8")), playlist_dir)
    listed = sample(rng, songs, rng.randint(3, len(songs) - 1))
    base = (root / playlist).parent
    _write_m3u(rng, root / playlist, [Path(os.path.relpath(root / s, base)).as_posix() for s in listed])
    return Library(folder, songs, playlist, listed)


def _say_playlist(rng: random.Random, playlist: str) -> str:
    """How a request points at a playlist: its path, or "the <name> playlist (<path>)"."""
    stem = Path(playlist).stem.replace("_", " ")
    return pick(rng, (playlist, playlist, f"the playlist {playlist}", f"my {stem} playlist ({playlist})",
                      f"the {stem} playlist ({playlist})"))


def _finish(rng: random.Random, sentence: str) -> str:
    """A request sentence with a random polite opening, unless it is a question already."""
    return sentence if sentence.endswith("?") else polite(rng, sentence)


def _title(path: str) -> str:
    """A media file's name as people say it: ``the_owls-night_drive.mp3`` is "The Owls - Night Drive"."""
    return " - ".join(part.replace("_", " ").title() for part in Path(path).stem.split("-"))


# -- set_option -----------------------------------------------------------------------------------
def _option_ask(rng: random.Random) -> tuple[tuple[str, str], str, str]:
    """An option, the ask in words and the value the call writes."""
    r = rng.random()
    if r < 0.12:
        lang, code = pick(rng, LANGUAGES)
        which = pick(rng, ("sub-language", "audio-language"))
        if which == "sub-language":
            ask = pick(rng, (f"show subtitles in {lang} ({code}) by default", f"pick {lang} subtitles first (language code {code})",
                             f"prefer the {lang} subtitle track, code '{code}'"))
        else:
            ask = pick(rng, (f"play the {lang} audio track by default ({code})", f"prefer {lang} audio (language code {code})",
                             f"use the {lang} dub when a film has one, code '{code}'"))
        return ("core", which), ask, code
    if r < 0.2:
        vol = pick(rng, ("150", "200", "250", "300"))
        ask = pick(rng, (f"let the volume go up to {vol}%", f"allow a max volume of {vol} percent",
                         f"raise the highest allowed volume to {vol}%", f"use {vol} as the maximum volume"))
        return ("qt", "qt-max-volume"), ask, vol
    if r < 0.26:
        fmt = pick(rng, ("png", "jpg", "tiff"))
        return ("core", "snapshot-format"), pick(rng, (f"save snapshots as {fmt} files", f"take snapshots in {fmt} format",
                                                         f"use {fmt} for video snapshots")), fmt
    if r < 0.31:
        user = pick(rng, PEOPLE).lower()
        where = pick(rng, (f"/home/{user}/Pictures/vlc", f"/home/{user}/Pictures/snapshots", f"/home/{user}/Videos/stills"))
        return ("core", "snapshot-path"), pick(rng, (f"save snapshots into {where}", f"put video snapshots in {where}",
                                                       f"store snapshots in the folder {where}")), where
    if r < 0.36:
        speed = pick(rng, ("1.25", "1.5", "2", "0.75"))
        return ("core", "rate"), pick(rng, (f"play everything at {speed}x speed", f"use a playback speed of {speed}",
                                            f"set the playback rate to {speed}")), speed
    if r < 0.4:
        step = pick(rng, ("5", "6.4", "10", "25.6"))
        return ("core", "volume-step"), pick(rng, (f"change the volume in steps of {step}", f"use a volume step of {step}")), step
    if r < 0.44:
        mode = pick(rng, ("track", "album", "none"))
        return ("core", "audio-replay-gain-mode"), pick(rng, (f"use replay gain mode {mode}", f"set the replay gain mode to {mode}")), mode
    if r < 0.47:
        n, said = pick(rng, (("0", "never"), ("2", "always")))
        return ("qt", "qt-continue"), pick(rng, (f"{said} continue playback where I left off (qt-continue {n})",
                                                 f"set qt-continue to {n} so it {said} resumes")), n
    key = pick(rng, list(ASKS))
    ask, value = pick(rng, ASKS[key])
    return key, ask, value


def _said_rc(rng: random.Random, path: str) -> str:
    """Where a request says the settings are (or nothing)."""
    return pick(rng, ("", "", f" in {path}", f" ({path})", " in VLC's settings", " in the vlcrc file", f" by editing {path}",
                      " in vlcrc", f" - the config is {path}", " in the player's settings file"))


def set_option(rng: random.Random, root: Path) -> Draft:
    (section, key), ask, value = _option_ask(rng)
    rc_value = {"true": "1", "false": "0"}.get(value, value)
    preset = {}
    # the option set the other way, or left at a default that is the other way
    if rc_value in ("0", "1") and (rng.random() < 0.5 or DEFAULTS[(section, key)][1] == rc_value):
        preset[(section, key)] = "0" if rc_value == "1" else "1"
    path = _vlcrc(rng, root, preset)
    where = _said_rc(rng, path)
    yes = value == "true"
    r = rng.random()
    if r < 0.2 and value in ("true", "false"):  # by its key, as someone who knows VLC writes it
        s = pick(rng, (f"Set {key} to {pick(rng, ('1', 'true', 'yes') if yes else ('0', 'false', 'no'))} in the [{section}] section{where or ' of vlcrc'}",
                       f"Turn {key} {'on' if yes else 'off'}{where}", f"In vlcrc ({path}), {'enable' if yes else 'disable'} {key}",
                       f"Can you switch the {section} option {key} {'on' if yes else 'off'}{where}?"))
    elif r < 0.4 and (section, key) in NAMES and value in ("true", "false"):  # a switch, on or off
        name = pick(rng, NAMES[(section, key)])
        onoff = "on" if yes else "off"
        s = pick(rng, (f"Turn {name} {onoff}{where}", f"Switch {name} {onoff} in VLC{where}", f"I want {name} turned {onoff}{where}",
                       f"Can you turn {name} {onoff} for VLC{where}?", f"VLC {name}: {onoff}, please",
                       f"Should VLC use {name}? {'Yes' if yes else 'No'} - set that{where}",
                       f"{'Enable' if yes else 'Disable'} {name} in VLC{where}"))
    elif r < 0.3 and value not in ("true", "false"):
        s = pick(rng, (f"Set {key} to {value} in the [{section}] section of {path}", f"In {path}, change {key} to {value}"))
    else:
        s = pick(rng, (f"Make VLC {ask}{where}", f"Could you set VLC up to {ask}{where}?", f"I'd like VLC to {ask}{where}",
                       f"Can VLC {ask}? Change it{where or ' in its settings'}", f"Please configure the player to {ask}{where}",
                       f"Set up VLC so that it will {ask}{where}", f"Is it possible to have VLC {ask}? Please set that{where}",
                       f"Change the VLC settings{pick(rng, ('', ' in vlcrc', f' ({path})'))} to {ask}"))
    request = pick(rng, CONTEXT) + _finish(rng, s)

    def check(r: Path) -> str | None:
        got = _rc_set((r / path).read_text(encoding="utf-8"))
        vals = got.get(section, {}).get(key, [])
        if vals != [rc_value]:
            return f"[{section}] {key} is {vals!r}, not {rc_value!r}"
        elsewhere = [s for s, opts in got.items() if s != section and key in opts]
        return f"{key} also set in {elsewhere}" if elsewhere else None

    return Draft(request, (("set_option", (path, section, key, value)),), check, "media.set_option")


# -- playlists ------------------------------------------------------------------------------------
def make_playlist(rng: random.Random, root: Path) -> Draft:
    video = rng.random() < 0.3
    folder = pick(rng, VIDEO_DIRS if video else AUDIO_DIRS)
    exts = (".mp4", ".mkv") if video else (".mp3", ".ogg", ".flac")
    ext = pick(rng, exts)
    _media(rng, root, folder, exts, rng.randint(4, 8), VIDEOS if video else SONGS)
    if not any(p.suffix == ext for p in (root / folder).rglob("*")):
        _media(rng, root, folder, (ext,), 2, VIDEOS if video else SONGS)
    if rng.random() < 0.3:  # a subfolder: its files belong to the playlist too
        _media(rng, root, f"{folder}/{pick(rng, ('live', 'extra', 'disc2', 'bonus'))}", (ext,), 2, VIDEOS if video else SONGS)
    if rng.random() < 0.4:
        (root / folder / "cover.jpg").write_bytes(BYTES[".jpg"])
    out_dir = pick(rng, ("", "", "playlists", folder))
    if out_dir:
        (root / out_dir).mkdir(parents=True, exist_ok=True)
    out = _fresh(rng, root, PLAYLISTS, pick(rng, (".m3u", ".m3u", ".m3u8")), out_dir)
    said_ext = pick(rng, (ext, ext[1:], ext[1:].upper()))
    kind = pick(rng, ("video", "clip", "file") if video else ("song", "track", "file", "music file"))
    if said_ext.startswith("."):
        thing, things = pick(rng, ((f"{said_ext} file", f"{said_ext} files"), (f"{kind} ending in {said_ext}", f"{kind}s ending in {said_ext}")))
    else:
        thing, things = f"{said_ext} {kind}", f"{said_ext} {kind}s"
    place = pick(rng, (f"{folder}/", f"the {folder} folder", f"{folder}"))
    s = pick(rng, (f"Make a playlist {out} of the {things} in {place}", f"Create {out} with every {thing} from {place}",
                   f"Build a playlist called {out} from all {things} in {place}",
                   f"Could you put all the {things} in {place} into a new playlist {out}?",
                   f"I want a playlist of the {things} in {place}; save it as {out}",
                   f"Write an M3U playlist {out} listing the {things} of {place}",
                   f"Collect the {things} from {place} in a playlist, {out}"))
    request = pick(rng, ("", "", "", "For tonight: ", "I just copied my collection here. ")) + _finish(rng, s)

    def check(r: Path) -> str | None:
        p = r / out
        if not p.is_file():
            return f"no {out}"
        want = sorted(f for f in (r / folder).rglob("*") if f.is_file() and f.suffix.lower() == ext)
        rel = [Path(os.path.relpath(f, p.parent)).as_posix() for f in want]
        got = entries(p)
        if sorted(got) != sorted(rel):
            return f"entries {got!r}, not {rel!r}"
        return None if all((p.parent / e).is_file() for e in got) else "an entry does not resolve"

    return Draft(request, (("make_playlist", (folder, out, said_ext)),), check, "media.make_playlist")


def add_to_playlist(rng: random.Random, root: Path) -> Draft:
    lib = _library(rng, root)
    before = entries(root / lib.playlist)
    if rng.random() < 0.3:
        new = _media(rng, root, pick(rng, VIDEO_DIRS), (".mp4",), 1, VIDEOS)[0]
    else:
        new = pick(rng, [s for s in lib.songs if s not in lib.listed])
    said = pick(rng, (Path(new).name, Path(new).name, new, f"{_title(new)} (the file {Path(new).name})"))
    pl = _say_playlist(rng, lib.playlist)
    s = pick(rng, (f"Add {said} to {pl}", f"Add {said} at the end of {pl}", f"Put {said} at the end of {pl}",
                   f"Append {said} to {pl}", f"Could you add {said} to {pl} as the last entry?",
                   f"{said} is missing from {pl} - add it at the end", f"Please add the file {said} to {pl}",
                   f"I forgot {said} in {pl}; add it to the playlist"))
    request = _finish(rng, s)

    def check(r: Path) -> str | None:
        got = entries(r / lib.playlist)
        return None if got == [*before, new] else f"entries are {got!r}"

    return Draft(request, (("add_to_playlist", (lib.playlist, new)),), check, "media.add_to_playlist")


def remove_from_playlist(rng: random.Random, root: Path) -> Draft:
    lib = _library(rng, root, pick(rng, ("", "", "", "playlists")))
    before = entries(root / lib.playlist)
    if rng.random() < 0.2:  # an internet radio stream among the songs
        stream = f"http://{pick(rng, ('radio', 'stream', 'live'))}.{pick(rng, ('example.org', 'example.com'))}/{pick(rng, ('jazz', 'news', 'lofi'))}.mp3"
        before.insert(rng.randrange(len(before) + 1), stream)
        _write_m3u(rng, root / lib.playlist, before)
        entry = stream
        said = pick(rng, (f"the stream {stream}", stream, f"the radio stream ({stream})"))
    else:
        entry = pick(rng, before)
        said = pick(rng, (Path(entry).name, Path(entry).name, entry, f"the song {Path(entry).name}", f"\"{_title(entry)}\"",
                          f"the track {_title(entry)}"))
    pl = _say_playlist(rng, lib.playlist)
    s = pick(rng, (f"Remove {said} from {pl}", f"Take {said} out of {pl}", f"Delete the entry for {said} from {pl}",
                   f"Drop {said} from {pl}", f"I'm tired of {said}. Remove it from {pl}",
                   f"Could you remove {said} from {pl}?", f"Remove {said} from {pl} but keep the file itself",
                   f"I don't want {said} in {pl} any more; remove that entry"))
    request = _finish(rng, s)

    def check(r: Path) -> str | None:
        got = entries(r / lib.playlist)
        want = [e for e in before if e != entry]
        if got != want:
            return f"entries are {got!r}"
        return None if all((r / s).is_file() for s in lib.songs) else "a song file was deleted"

    return Draft(request, (("remove_from_playlist", (lib.playlist, entry)),), check, "media.remove_from_playlist")


def remove_missing(rng: random.Random, root: Path) -> Draft:
    folder = pick(rng, AUDIO_DIRS)
    ext = pick(rng, (".mp3", ".ogg"))
    songs = _media(rng, root, folder, (ext,), rng.randint(3, 6))
    gone = _media(rng, root, folder, (ext,), rng.randint(1, 3), avoid={Path(s).stem for s in songs})
    for g in gone:  # listed once, deleted since
        (root / g).unlink()
    where = pick(rng, ("", "", folder, "playlists"))
    playlist = _fresh(rng, root, PLAYLISTS, pick(rng, (".m3u", ".m3u8")), where)
    base = (root / playlist).parent
    listed = [Path(os.path.relpath(root / s, base)).as_posix() for s in songs + gone]
    rng.shuffle(listed)
    if rng.random() < 0.25:
        listed.insert(rng.randrange(len(listed) + 1), "http://radio.example.org/live.mp3")
    _write_m3u(rng, root / playlist, listed)
    want = [e for e in listed if e.startswith("http") or (base / e).is_file()]
    pl = _say_playlist(rng, playlist)
    s = pick(rng, (f"Remove the songs that no longer exist from {pl}", f"Clean up {pl}: drop entries whose file is gone",
                   f"Some files in {pl} were deleted. Remove the missing entries",
                   f"Delete the dead entries from {pl}, the ones pointing at files that don't exist",
                   f"Could you remove the broken entries in {pl}? Their files are missing",
                   f"VLC keeps skipping tracks in {pl} because the files are gone; remove those entries",
                   f"Get rid of the entries in {pl} whose files are missing"))
    request = _finish(rng, s)

    def check(r: Path) -> str | None:
        got = entries(r / playlist)
        return None if got == want else f"entries are {got!r}, not {want!r}"

    return Draft(request, (("remove_missing", (playlist,)),), check, "media.remove_missing")


def sort_playlist(rng: random.Random, root: Path) -> Draft:
    lib = _library(rng, root, pick(rng, ("", "", "playlists")))
    before = entries(root / lib.playlist)
    descending = rng.random() < 0.35
    while before == sorted(before, key=str.casefold, reverse=descending):
        rng.shuffle(before)
    _write_m3u(rng, root / lib.playlist, before)
    pl = _say_playlist(rng, lib.playlist)
    if descending:
        s = pick(rng, (f"Sort {pl} in reverse alphabetical order", f"Sort the entries of {pl} from Z to A",
                       f"Order {pl} by name, descending", f"Could you sort {pl} backwards, Z first?"))
    else:
        s = pick(rng, (f"Sort {pl} alphabetically", f"Sort the entries of {pl} by name", f"Put {pl} in A to Z order",
                       f"Order the songs in {pl} alphabetically", f"The order of {pl} is a mess; sort it by name",
                       f"Could you sort {pl} from A to Z?"))
    request = _finish(rng, s)

    def check(r: Path) -> str | None:
        got = entries(r / lib.playlist)
        want = sorted(before, key=str.casefold, reverse=descending)
        return None if got == want else f"entries are {got!r}"

    return Draft(request, (("sort_playlist", (lib.playlist, descending)),), check, "media.sort_playlist")


# -- subtitles ------------------------------------------------------------------------------------
def _stamp(ms: int) -> str:
    ms = max(0, ms)
    h, rest = divmod(ms, 3_600_000)
    m, rest = divmod(rest, 60_000)
    s, milli = divmod(rest, 1000)
    return f"{h:02d}:{m:02d}:{s:02d},{milli:03d}"


def _srt(rng: random.Random, path: Path) -> list[tuple[int, int]]:
    """An SRT file of a few cues; returns their (start, end) in milliseconds."""
    t = rng.randint(0, 30_000)
    times, blocks = [], []
    for i, line in enumerate(sample(rng, CUES, rng.randint(3, 6)), start=1):
        t += rng.randint(500, 20_000)
        end = t + rng.randint(1200, 4000)
        times.append((t, end))
        blocks.append(f"{i}\n{_stamp(t)} --> {_stamp(end)}\n{line}\n")
        t = end
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(blocks), encoding="utf-8")
    return times


def shift_subtitles(rng: random.Random, root: Path) -> Draft:
    folder = pick(rng, ("", "", "movies", "subs", "videos"))
    film = _fresh(rng, root, FILMS, "", folder)
    src = f"{film}{pick(rng, ('.srt', '.srt', '.en.srt'))}"
    (root / film).parent.mkdir(parents=True, exist_ok=True)
    (root / f"{film}.mp4").write_bytes(BYTES[".mp4"])
    times = _srt(rng, root / src)
    secs = pick(rng, (0.5, 1, 1.5, 2, 2.5, 3, 4, 5, 0.75, 1.2))
    said = f"{secs:g}"
    later = rng.random() < 0.5
    shift = secs if later else -secs
    stem = src[: -len(".srt")]
    out = pick(rng, (src, src, f"{stem}_synced.srt", f"{stem}.fixed.srt", f"{stem}-shifted.srt"))
    save = (pick(rng, (f" and save it as {out}", f", saving the result as {out}", f". Write the fixed file to {out}"))
            if out != src else pick(rng, ("", " in place", ", overwriting the file")))
    unit = pick(rng, ("seconds", "s", "sec")) if secs != 1 else pick(rng, ("second", "s"))
    if later:
        s = pick(rng, (f"The subtitles in {src} show up {said} {unit} too early. Delay them by {said} {unit}{save}",
                       f"Shift every subtitle of {src} {said} {unit} later{save}",
                       f"Delay all the subtitles in {src} by {said} {unit}{save}",
                       f"The subtitles of {src} come too soon. Could you shift them by {said} {unit}{save}?",
                       f"{src} is out of sync: the lines appear {said} {unit} before people speak. Shift them later by {said} {unit}{save}"))
    else:
        s = pick(rng, (f"The subtitles in {src} are {said} {unit} late. Shift them by -{said} {unit}{save}",
                       f"Shift every timestamp of {src} by -{said} {unit}{save}",
                       f"Make the subtitles of {src} appear {said} {unit} earlier (shift by -{said} {unit}){save}",
                       f"My subtitles lag behind by {said} {unit}: shift {src} by -{said} {unit}{save}"))
    request = _finish(rng, s)

    def check(r: Path) -> str | None:
        p = r / out
        if not p.is_file():
            return f"no {out}"
        stamps = re.findall(r"(\d{2}:\d{2}:\d{2},\d{3}) --> (\d{2}:\d{2}:\d{2},\d{3})", p.read_text(encoding="utf-8"))
        ms = round(shift * 1000)
        want = [(_stamp(a + ms), _stamp(b + ms)) for a, b in times]
        if stamps != want:
            return f"timestamps {stamps[:2]!r}..., not {want[:2]!r}..."
        return None

    return Draft(request, (("shift_subtitles", (src, shift, out)),), check, "media.shift_subtitles")


GENERATORS: dict[str, Generator] = {g.__name__: g for g in (
    set_option, make_playlist, add_to_playlist, remove_from_playlist, remove_missing, sort_playlist, shift_subtitles)}
