"""How each desktop application of a task is started under a private Xvfb: :data:`LAUNCHERS`.

A task's ``apps`` entry names a launcher. Each says which program to start, with which
arguments and environment (the switch that makes its toolkit expose an accessibility tree),
where its profile or configuration folder lives (a fresh one per episode: LibreOffice's in the
episode folder; the others' inside the task's files folder, so the task's ``setup`` can write
the settings, bookmarks or mail folders it starts from, and the evaluator reads what the
application wrote back), which files it opens, which window to wait for, and how to close it so
that its state is on disk before the task is judged (``quit_s``: SIGTERM the main process and give
it that long to write its state and exit).

The switches, found on Debian 12 under Xvfb (``docs/desktop.md``): Chromium builds its tree only
with ``ACCESSIBILITY_ENABLED=1`` (``--force-renderer-accessibility`` adds the page's content);
Thunderbird (Gecko) with ``GNOME_ACCESSIBILITY=1``; VLC's Qt 5 with
``QT_LINUX_ACCESSIBILITY_ALWAYS_ON=1``; GIMP 2.10 (GTK 2) with ``GTK_MODULES=gail:atk-bridge``;
GTK 3 applications (LibreOffice's gtk3 plugin, LXTerminal, Thunar) on their own.

Nothing here reaches the network: Chromium runs with its background networking, component
updates and sync off; Thunderbird's profile has only the offline "Local Folders" account.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

#: the system Python (VLC's starter uses ctypes only; see ``vlc_start.py``)
log = logging.getLogger(__name__)

SYSTEM_PYTHON = "/usr/bin/python3"
VLC_START = Path(__file__).with_name("vlc_start.py")

#: writes an application's defaults into its state folder before it starts: ``seed(state, root)``
Seeder = Callable[[Path, Path], None]


@dataclass(frozen=True)
class AppLauncher:
    """How one desktop application is started on a file."""

    program: str  #: looked up on PATH
    args: tuple[str, ...]  #: before the profile argument and the file ("{state}", "{root}" filled in)
    a11y_app: str  #: the accessibility tree's name of the application (``DesktopEnv(app=...)``)
    install_hint: str  #: what to install when ``program`` is missing
    file_args: tuple[str, ...] = ()  #: added (after ``args``) only when a file is opened
    #: a fresh user profile in the episode folder ("{uri}" is replaced by the folder's file: URI)
    profile_arg: str = ""
    env: Mapping[str, str] = field(default_factory=dict)  #: "{state}", "{root}", "{home}" filled in
    lock_glob: str = ""  #: lock files the application leaves next to a file it opened
    blank_title: str = ""  #: the window title to wait for when there is no file to open
    #: an argument that makes the application listen for UNO ("{pipe}" is replaced by a name
    #: unique to the episode); empty for applications without UNO
    uno_arg: str = ""
    #: file types (lower-case suffixes) it opens, to pick its file when a task opens several apps
    extensions: tuple[str, ...] = ()
    #: its profile / configuration folder, relative to the task's files folder ("" = ``<episode>/profile``)
    state_dir: str = ""
    #: writes its defaults into the state folder (never replacing a file the task's setup wrote)
    seed: Seeder | None = None
    #: a regular expression the window's title must match (instead of the file's name)
    window: str = ""
    #: >0: asked to quit (``quit_keys``, else SIGTERM to its main process) and given this long to
    #: write its state and exit before it is stopped
    quit_s: float = 0.0
    #: its own quit shortcut (xdotool spelling): for an application that does not write its state
    #: on SIGTERM (Chromium exits at once, its bookmarks unwritten)
    quit_keys: str = ""
    #: it opens the files folder itself (a terminal, a file manager), never a file
    opens_folder: bool = False
    #: what must be on PATH (default: ``program``)
    requires: str = ""
    #: its window is sized to the whole screen on a private display (GIMP opens a small one)
    fill_screen: bool = False

    def argv(self, file: Path | None, profile: Path, uno_pipe: str = "", root: Path | None = None) -> list[str]:
        fill = {"state": str(profile), "root": str(root or profile)}
        out = [self.program, *(a.format(**fill) for a in self.args),
               *(self.file_args if file is not None else ())]
        if self.uno_arg and uno_pipe:
            out.append(self.uno_arg.format(pipe=uno_pipe))
        if self.profile_arg:
            out.append(self.profile_arg.format(uri=profile.resolve().as_uri()))
        if file is not None:
            out.append(str(file))
        return out

    def environment(self, state: Path, root: Path, home: Path) -> dict[str, str]:
        fill = {"state": str(state), "root": str(root), "home": str(home)}
        return {k: v.format(**fill) for k, v in self.env.items()}

    @property
    def needs(self) -> str:
        return self.requires or self.program


def _libreoffice(module: str, extensions: tuple[str, ...]) -> AppLauncher:
    return AppLauncher(
        program="soffice",
        args=(f"--{module}", "--norestore", "--nologo", "--nolockcheck"),
        file_args=("--nodefault",),  # without a file, --nodefault would show no window at all
        a11y_app="soffice",
        install_hint=f"Debian: apt-get install libreoffice-{module} libreoffice-gtk3",
        profile_arg="-env:UserInstallation={uri}",
        env={"SAL_USE_VCLPLUGIN": "gtk3"},  # the GTK3 plugin exposes the accessibility tree
        lock_glob=".~lock.*#",
        blank_title="LibreOffice",
        uno_arg="--accept=pipe,name={pipe};urp;",
        extensions=extensions,
    )


def uno_url(pipe: str) -> str:
    """The UNO connection string for a LibreOffice started with ``uno_arg`` and ``pipe``."""
    return f"uno:pipe,name={pipe};urp;StarOffice.ComponentContext"


# -- seeding profiles ---------------------------------------------------------------------------
def _write_new(path: Path, text: str) -> None:
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


#: the downloads folder of a Chromium episode, inside the files folder (judged like any output)
CHROME_DOWNLOADS = "downloads"


def seed_chromium(state: Path, root: Path) -> None:
    """A Chromium profile that asks nothing at start and downloads into ``root/downloads``: the
    task's ``Default/Preferences`` (if any) with the download folder filled in, and "First Run"."""
    _write_new(state / "First Run", "")
    prefs_path = state / "Default" / "Preferences"
    prefs = json.loads(prefs_path.read_text(encoding="utf-8")) if prefs_path.is_file() else {}
    download = prefs.setdefault("download", {})
    download.setdefault("default_directory", str(root / CHROME_DOWNLOADS))
    download.setdefault("prompt_for_download", False)
    download.setdefault("directory_upgrade", True)
    prefs.setdefault("browser", {}).setdefault("has_seen_welcome_page", True)
    prefs_path.parent.mkdir(parents=True, exist_ok=True)
    prefs_path.write_text(json.dumps(prefs, indent=1), encoding="utf-8")
    (root / CHROME_DOWNLOADS).mkdir(exist_ok=True)


#: prefs every Thunderbird profile gets: the offline "Local Folders" account and no first-run questions
THUNDERBIRD_PREFS = {
    "mail.account.account1.server": "server1",
    "mail.accountmanager.accounts": "account1",
    "mail.accountmanager.localfoldersserver": "server1",
    "mail.server.server1.directory-rel": "[ProfD]Mail/Local Folders",
    "mail.server.server1.hostname": "Local Folders",
    "mail.server.server1.name": "Local Folders",
    "mail.server.server1.type": "none",
    "mail.server.server1.userName": "nobody",
    "mail.shell.checkDefaultClient": False,
    "mail.provider.suppress_dialog_on_startup": True,
    "mailnews.start_page.enabled": False,
    "mail.spotlight.firstRunDone": True,
    "app.update.auto": False,
    "app.donation.eoy.version.viewed": 999,
    "datareporting.policy.dataSubmissionEnabled": False,
    "toolkit.telemetry.reportingpolicy.firstRun": False,
    "mailnews.auto_config_url": "",
    "network.captive-portal-service.enabled": False,
    "browser.aboutConfig.showWarning": False,
    "mail.rights.version": 1,
}


def pref_line(key: str, value: object) -> str:
    """One ``prefs.js`` line, as Gecko writes it."""
    return f"user_pref({json.dumps(key)}, {json.dumps(value)});\n"


def seed_thunderbird(state: Path, root: Path) -> None:
    """A Thunderbird profile: the task's ``prefs.js`` lines after the base prefs (later lines win),
    and a Local Folders directory with an Inbox, even an empty one."""
    prefs = state / "prefs.js"
    own = prefs.read_text(encoding="utf-8") if prefs.is_file() else ""
    state.mkdir(parents=True, exist_ok=True)
    prefs.write_text("".join(pref_line(k, v) for k, v in THUNDERBIRD_PREFS.items()) + own, encoding="utf-8")
    local = state / "Mail" / "Local Folders"
    _write_new(local / "Inbox", "")


def seed_vlc(state: Path, root: Path) -> None:
    """VLC's configuration home (``XDG_CONFIG_HOME``): ``vlc/vlcrc`` as the task wrote it, else
    the one VLC writes with every option at its default (commented out).

    Why the default file: a VLC whose preferences were ever saved has it, and with it the
    settings live in a file a specialist can edit with the player closed (issue #40's file
    route); without it VLC keeps its defaults in memory and there is nothing to edit. The GUI
    path is unchanged: saving the preferences rewrites the file. Where libvlc cannot write it
    (VLC missing, another major version), the folder is left empty, as before, with a warning."""
    (state / "vlc").mkdir(parents=True, exist_ok=True)
    if (state / "vlc" / "vlcrc").exists() or not Path(SYSTEM_PYTHON).is_file():
        return
    env = {**os.environ, "XDG_CONFIG_HOME": str(state), "HOME": str(state)}
    try:
        done = subprocess.run([SYSTEM_PYTHON, str(VLC_START), "--write-defaults"], env=env, capture_output=True,
                              text=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        log.warning("VLC's default settings file was not written in %s: %s", state, exc)
        return
    if done.returncode != 0:
        log.warning("VLC's default settings file was not written in %s: %s", state,
                    (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1])


def seed_gimp(state: Path, root: Path) -> None:
    """GIMP's configuration folder (``GIMP2_DIRECTORY``): single-window mode, so no dock windows
    float over the image (there is no window manager to place them)."""
    _write_new(state / "sessionrc", "(single-window-mode yes)\n(hide-docks no)\n")
    _write_new(state / "gimprc", "(show-tips no)\n(restore-session no)\n(save-session-info no)\n")


def seed_home(state: Path, root: Path) -> None:
    """A home folder for a terminal or file manager (their settings go under ``state/config``)."""
    (state / "config").mkdir(parents=True, exist_ok=True)


#: GIMP and its plug-ins, each its own accessibility application (the JPEG export options are
#: ``file-jpeg``'s dialog, Script-Fu's dialogs ``script-fu``'s)
GIMP_A11Y_APPS = "gimp|file-|script-fu|plug-in"

#: AT-SPI switches per toolkit (see the module docstring)
GTK2_A11Y = {"GTK_MODULES": "gail:atk-bridge", "NO_AT_BRIDGE": "0"}
QT_A11Y = {"QT_LINUX_ACCESSIBILITY_ALWAYS_ON": "1", "QT_ACCESSIBILITY": "1"}

CHROMIUM_FLAGS = ("--no-sandbox", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--disable-features=Translate,MediaRouter,OptimizationHints", "--password-store=basic",
                  "--force-renderer-accessibility", "--window-position=0,0", "--window-size=1280,800",
                  "--user-data-dir={state}")

#: a task's ``apps`` entry -> how to start it on this machine
LAUNCHERS: dict[str, AppLauncher] = {
    "libreoffice-calc": _libreoffice("calc", (".xlsx", ".xls", ".ods", ".csv")),
    "libreoffice-writer": _libreoffice("writer", (".docx", ".doc", ".odt", ".rtf", ".txt")),
    "libreoffice-impress": _libreoffice("impress", (".pptx", ".ppt", ".odp")),
    "chromium": AppLauncher(
        # the binary itself: Debian's /usr/bin/chromium script does not exec it, so a SIGTERM to
        # the script would leave the browser running (and its bookmarks unwritten)
        program="/usr/lib/chromium/chromium", requires="chromium", args=CHROMIUM_FLAGS, a11y_app="Chromium",
        install_hint="Debian: apt-get install chromium",
        env={"ACCESSIBILITY_ENABLED": "1", "HOME": "{home}"}, state_dir="chrome", seed=seed_chromium,
        window=r"Chromium$", blank_title="about:blank", quit_s=15.0, quit_keys="ctrl+shift+w", extensions=(".html", ".htm"),
        file_args=()),
    "thunderbird": AppLauncher(
        program="/usr/lib/thunderbird/thunderbird", requires="thunderbird", args=("--no-remote", "--profile", "{state}"),
        a11y_app="Thunderbird", install_hint="Debian: apt-get install thunderbird",
        env={"GNOME_ACCESSIBILITY": "1", "HOME": "{home}", "MOZ_CRASHREPORTER_DISABLE": "1"},
        state_dir="thunderbird", seed=seed_thunderbird, window=r"Mozilla Thunderbird$", quit_s=15.0,
        quit_keys="ctrl+q"),
    "vlc": AppLauncher(
        program=SYSTEM_PYTHON, args=(str(VLC_START), "--no-qt-privacy-ask", "--no-qt-error-dialogs",
                                     "--aout=dummy"),
        a11y_app="vlc", install_hint="Debian: apt-get install vlc", requires="vlc",
        env={**QT_A11Y, "XDG_CONFIG_HOME": "{state}", "HOME": "{home}"}, state_dir="vlc-config", seed=seed_vlc,
        window=r"VLC media player$", quit_s=10.0, extensions=(".mp3", ".ogg", ".wav", ".m3u", ".xspf")),
    "gimp": AppLauncher(
        program="gimp", args=("--no-splash", "--no-fonts"), a11y_app=GIMP_A11Y_APPS,
        install_hint="Debian: apt-get install gimp libgail-common libatk-adaptor",
        env={**GTK2_A11Y, "GIMP2_DIRECTORY": "{state}", "HOME": "{home}"}, state_dir="gimp-config", seed=seed_gimp,
        window=r"(GIMP|GNU Image Manipulation Program)$", quit_s=10.0, fill_screen=True,
        extensions=(".png", ".jpg", ".jpeg", ".bmp", ".gif", ".tif", ".tiff", ".xcf")),
    "terminal": AppLauncher(
        program="lxterminal", args=("--working-directory={root}",), a11y_app="lxterminal",
        install_hint="Debian: apt-get install lxterminal",
        env={"HOME": "{state}", "XDG_CONFIG_HOME": "{state}/config", "SHELL": "/bin/bash"}, seed=seed_home, window=r"^LXTerminal$", opens_folder=True),
    "file-manager": AppLauncher(
        program="thunar", args=("{root}",), a11y_app="thunar", install_hint="Debian: apt-get install thunar",
        env={"HOME": "{state}", "XDG_CONFIG_HOME": "{state}/config"}, seed=seed_home,
        window=r" - Thunar$", opens_folder=True, quit_s=5.0),
}


def home_dir(episode: Path) -> Path:
    """The home folder the applications of an episode get (``HOME``): never the user's own."""
    home = episode / "home"
    home.mkdir(parents=True, exist_ok=True)
    return home


def environ_for(launcher: AppLauncher, state: Path, root: Path, episode: Path) -> dict[str, str]:
    """The launcher's environment for this episode (with ``XDG_RUNTIME_DIR`` in the episode too)."""
    runtime = episode / "runtime"
    runtime.mkdir(mode=0o700, exist_ok=True)
    return {"XDG_RUNTIME_DIR": str(runtime), **launcher.environment(state, root, home_dir(episode))}


def installed(launcher: AppLauncher) -> bool:
    import shutil

    return shutil.which(launcher.needs) is not None or os.path.isfile(launcher.needs) and os.access(launcher.needs, os.X_OK)
