"""pyautogui bound to one X11 display: the part of the desktop env that touches the machine.

:class:`~agentlab.envs.desktop.DesktopEnv` decides *what* to do (which element, which keys,
whether the user agreed); a :class:`Driver` does it. :class:`PyAutoGuiDriver` imports
pyautogui lazily (it connects to X at import time), turns "no DISPLAY", "cannot connect" and
Xauthority failures into one :class:`EnvironmentUnavailableError` line, re-points pyautogui
when another display (or a restarted one of the same name) is wanted, keeps the fail-safe
on, grabs screenshots with Pillow (pyscreeze looks for gnome-screenshot, absent under Xvfb)
and types characters the keyboard map lacks through temporarily bound spare keycodes.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import time
from typing import Any, Protocol

from PIL import Image

from agentlab.errors import EnvironmentUnavailableError, InvalidActionError


#: X keysym names of the characters pyautogui types with shift (``XK.string_to_keysym`` wants names)
XK_NAMES = {"<": "less", ">": "greater", "|": "bar", "~": "asciitilde", '"': "quotedbl", "?": "question",
            ":": "colon", "{": "braceleft", "}": "braceright", "_": "underscore", "+": "plus", "!": "exclam",
            "@": "at", "#": "numbersign", "$": "dollar", "%": "percent", "^": "asciicircum", "&": "ampersand",
            "*": "asterisk", "(": "parenleft", ")": "parenright"}


class Driver(Protocol):
    """What DesktopEnv needs from the machine: pyautogui on X11, or a test double."""

    def screenshot(self) -> Image.Image: ...
    def click(self, x: int, y: int, clicks: int = 1) -> None: ...
    def drag(self, start: tuple[int, int], end: tuple[int, int]) -> None: ...
    def scroll(self, clicks: int, horizontal: bool, at: tuple[int, int] | None) -> None: ...
    def write(self, text: str) -> None: ...
    def hotkey(self, keys: tuple[str, ...]) -> None: ...
    def untypeable(self, text: str) -> list[str]: ...
    def key_names(self) -> frozenset[str]: ...


def x_error(display: str, exc: BaseException) -> EnvironmentUnavailableError:
    """One actionable line for an X connection failure (what python-xlib raised, translated)."""
    name = type(exc).__name__
    text = str(exc)
    if isinstance(exc, KeyError) and "DISPLAY" in text:
        return EnvironmentUnavailableError("no X display: set DISPLAY (e.g. :0 on your desktop) or pass "
                                           "DesktopEnv(display=...); for a private one use agentlab.envs.xdisplay.virtual_display()")
    if name == "XauthError" or "Xauthority" in text or "authoriz" in text.lower():
        return EnvironmentUnavailableError(f"X display {display} refused the connection ({text.strip()}); set XAUTHORITY "
                                           "to your session's cookie file (for Xvfb: an empty file)")
    return EnvironmentUnavailableError(f"cannot connect to X display {display} ({name}: {text.strip()}); "
                                       "is the X server running? (Wayland sessions need XWayland and DISPLAY)")


class PyAutoGuiDriver:
    """pyautogui bound to one X display (imported lazily; re-pointed if another was in use)."""

    def __init__(self, display: str, xauthority: str | None, pause: float = 0.02) -> None:
        self.display = display
        self.xauthority = xauthority
        self.pg = self._connect(pause)

    def _connect(self, pause: float) -> Any:
        os.environ["DISPLAY"] = self.display
        if self.xauthority:
            os.environ["XAUTHORITY"] = self.xauthority
        try:
            already = "pyautogui" in sys.modules
            # python-xlib prints "no xauthority details" for an empty cookie file (Xvfb): not news.
            with contextlib.redirect_stdout(io.StringIO()):
                import pyautogui

            x11 = pyautogui.platformModule
            if already and not self._same_live_display(x11._display):
                import importlib

                with contextlib.redirect_stdout(io.StringIO()):
                    importlib.reload(x11)  # reconnects and rebuilds the key map from the new server
            w, h = pyautogui.size()
        except Exception as exc:  # KeyError, Xlib.error.DisplayConnectionError, XauthError, ...
            raise x_error(self.display, exc) from None
        pyautogui.FAILSAFE = True  # the user's emergency stop: mouse into a corner
        pyautogui.FAILSAFE_POINTS = [(0, 0), (0, h - 1), (w - 1, 0), (w - 1, h - 1)]
        pyautogui.PAUSE = pause
        return pyautogui

    def _same_live_display(self, conn: Any) -> bool:
        """Whether pyautogui's existing connection is to our display and still alive (an
        Xvfb that was stopped and restarted under the same name leaves a dead socket)."""
        if conn.get_display_name() != self.display:
            return False
        try:
            conn.get_input_focus()
            return True
        except Exception:
            return False

    def screenshot(self) -> Image.Image:
        from PIL import ImageGrab

        try:
            return ImageGrab.grab(xdisplay=self.display).convert("RGB")
        except OSError as exc:
            raise x_error(self.display, exc) from None

    def click(self, x: int, y: int, clicks: int = 1) -> None:
        self.pg.moveTo(x, y)
        self._focus_under_pointer()
        self.pg.click(x, y, clicks=clicks, interval=0.05)

    def _focus_under_pointer(self) -> None:
        """Click to focus, as a window manager would: with none running, focus follows the
        pointer only until an application sets the input focus to one of its windows itself
        (GIMP does, on its image window), after which keys would never reach a dialog the user
        clicks. So when the focus is held by another top-level window than the one under the
        pointer, it moves to that one (popups - override-redirect menus - are left alone)."""
        from Xlib import X

        d = self.pg.platformModule._display
        try:
            focus = d.get_input_focus().focus
            if not hasattr(focus, "id"):  # PointerRoot or None: focus already follows the pointer
                return
            root = d.screen().root
            under = root.query_pointer().child
            if not under or under.get_attributes().override_redirect:
                return
            top = focus
            while top.id != root.id and (parent := top.query_tree().parent).id != root.id:
                top = parent
            if top.id == under.id:
                return  # the focus is already in that window (on one of its own sub-windows)
            under.set_input_focus(X.RevertToPointerRoot, X.CurrentTime)
            d.sync()
        except Exception:  # a window that went away between the questions: nothing to move
            return

    def drag(self, start: tuple[int, int], end: tuple[int, int]) -> None:
        self.pg.moveTo(*start)
        self.pg.dragTo(*end, duration=0.3, button="left")

    def scroll(self, clicks: int, horizontal: bool, at: tuple[int, int] | None) -> None:
        x, y = at if at else (None, None)
        (self.pg.hscroll if horizontal else self.pg.scroll)(clicks, x=x, y=y)

    def write(self, text: str) -> None:
        bad = set(self.untypeable(text)) | self._misshifted(text)
        if not bad:
            self.pg.write(text, interval=0.005)
            return
        self._write_with_spare_keycodes(text, bad)

    def _write_with_spare_keycodes(self, text: str, extra: set[str]) -> None:
        """Type characters the keyboard map lacks (non-ASCII) by binding each to an unused
        keycode for the duration (both shift levels set, so capitals stay capitals - which
        ``xdotool type`` gets wrong), then restore the map."""
        from Xlib import X
        from Xlib.ext.xtest import fake_input

        d = self.pg.platformModule._display
        lo, hi = d.display.info.min_keycode, d.display.info.max_keycode
        table = d.get_keyboard_mapping(lo, hi - lo + 1)
        width = len(table[0]) if table else 2
        spare = [lo + i for i in range(len(table) - 1, -1, -1) if not any(table[i])]
        chars = sorted(extra)
        if len(spare) < len(chars):
            raise InvalidActionError(f"cannot type {''.join(chars)!r}: the X keyboard map has no free keycodes")
        codes = dict(zip(chars, spare))
        try:
            for ch, kc in codes.items():
                ks = ord(ch) if ord(ch) < 0x100 else 0x01000000 | ord(ch)  # X11 Unicode keysyms
                d.change_keyboard_mapping(kc, [(ks,) * width])
            d.sync()
            time.sleep(0.1)  # clients re-read the keymap on MappingNotify before the keys arrive
            run = ""
            for ch in text:
                if ch not in codes:
                    run += ch
                    continue
                if run:
                    self.pg.write(run, interval=0.005)
                    run = ""
                fake_input(d, X.KeyPress, codes[ch])
                fake_input(d, X.KeyRelease, codes[ch])
                d.sync()
                time.sleep(0.005)
            if run:
                self.pg.write(run, interval=0.005)
            time.sleep(0.1)
        finally:
            for kc in codes.values():
                d.change_keyboard_mapping(kc, [(0,) * width])
            d.sync()

    def hotkey(self, keys: tuple[str, ...]) -> None:
        self.pg.hotkey(*keys, interval=0.03)

    def _misshifted(self, text: str) -> set[str]:
        """Characters pyautogui would type wrongly: it presses shift for every character of its
        shifted set, but some keymaps have one unshifted (Xvfb's has ``<`` on the 102nd key, whose
        shifted level is ``>``: ``wc -l < f`` came out as ``wc -l > f``, emptying the file)."""
        from Xlib import XK

        x11 = self.pg.platformModule
        out = set()
        for ch in set(text):
            kc = x11.keyboardMapping.get(ch)
            if kc and self.pg.isShiftCharacter(ch):
                # shift + its key must give it: the key's shifted level is this character (or
                # empty, which X reads as the unshifted one)
                shifted = x11._display.keycode_to_keysym(kc, 1)
                if shifted not in (0, XK.string_to_keysym(XK_NAMES.get(ch, ch))):
                    out.add(ch)
        return out

    def untypeable(self, text: str) -> list[str]:
        mapping = self.pg.platformModule.keyboardMapping
        return sorted({c for c in text if mapping.get(c) is None})

    def key_names(self) -> frozenset[str]:
        return frozenset(self.pg.KEYBOARD_KEYS)
