"""A small scripted Android app for the fake adb server: a clock app with three real screens.

Screens (package ``com.example.clock``, 540x960):

* ``home``      — "Alarms", "Settings" and "About" buttons, a clickable ad banner;
* ``alarms``    — a scrollable list of alarm rows (tap a row's switch to toggle it,
  long-press a row to select it, which shows a "Delete" button), "Add alarm";
* ``edit``      — a label text field (focus it by tapping, then ``input text``), an hour
  picker that is focusable but not clickable (swipe it up for a later hour, down for an
  earlier one, as on a NumberPicker), "Save" (adds the alarm) and "Cancel";
* ``settings``  — "Vibrate" and "Dark theme" switches (dark theme repaints every screen);
* ``about`` / ``ad`` — pages unrelated to the app's purpose (exploration should go back).

The app keeps its data where a real app keeps it, on the device's storage: after every
change it writes its state (alarms with hour, label and enabled; vibrate; dark theme) as JSON
to :data:`STATE_PATH` in the device's files, and when it is launched (``am start`` /
``monkey -p``) it loads that file if present. So a task's start state can be pushed to the
device over adb sync and its end state pulled back, exactly as with a real app's data.

The same node tree drives both the uiautomator XML and the Pillow rendering, so what the
screenshot shows and what the dump says always agree, as on a device. Nothing here knows
about adbutils or the env under test: it only reacts to device-level input events.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from xml.sax.saxutils import quoteattr

from PIL import Image, ImageDraw, ImageFont

W, H = 540, 960
PKG = "com.example.clock"
ROW_H = 150
LIST_TOP, LIST_BOTTOM = 130, 760
#: where the app persists its data on the device (app-specific external storage)
STATE_PATH = f"/sdcard/Android/data/{PKG}/files/state.json"


@dataclass
class Node:
    cls: str
    bounds: tuple[int, int, int, int]
    text: str = ""
    rid: str = ""
    desc: str = ""
    clickable: bool = False
    focusable: bool = False
    focused: bool = False
    checkable: bool = False
    checked: bool = False
    scrollable: bool = False
    long_clickable: bool = False
    hint: str = ""
    on_tap: Callable[[], None] | None = None
    on_long: Callable[[], None] | None = None
    on_scroll: Callable[[int], None] | None = None
    children: list[Node] = field(default_factory=list)

    def contains(self, x: int, y: int) -> bool:
        x1, y1, x2, y2 = self.bounds
        return x1 <= x < x2 and y1 <= y < y2

    def walk(self) -> list[Node]:
        out = [self]
        for c in self.children:
            out.extend(c.walk())
        return out


@dataclass
class Alarm:
    hour: int
    label: str
    enabled: bool = True


class ClockApp:
    """State + screens. Mutated only through :meth:`tap`, :meth:`long_press`, :meth:`swipe`,
    :meth:`back` and :meth:`type_text`, i.e. what ``input`` can do on a phone."""

    def __init__(self, storage: dict[str, bytes] | None = None) -> None:
        self.stack: list[str] = ["home"]
        self.alarms = [Alarm(7, "Wake up"), Alarm(8, "Gym", False), Alarm(12, "Lunch"), Alarm(18, "Call mom"), Alarm(22, "Sleep", False)]
        self.scroll = 0  # index of the first visible alarm row
        self.selected: int | None = None
        self.vibrate = True
        self.dark = False
        self.label_text = ""
        self.label_focused = False
        self.edit_hour = 7
        self.events: list[str] = []  # what happened, for test assertions
        #: the device's files (path -> bytes); the app reads and writes STATE_PATH there
        self.storage: dict[str, bytes] = storage if storage is not None else {}

    # -------------------------------------------------------------------- persistence
    def state(self) -> dict[str, object]:
        """The app's data as it is saved to :data:`STATE_PATH`."""
        return {"alarms": [{"hour": a.hour, "label": a.label, "enabled": a.enabled} for a in self.alarms],
                "vibrate": self.vibrate, "dark_theme": self.dark}

    def _save_state(self) -> None:
        self.storage[STATE_PATH] = (json.dumps(self.state(), indent=2) + "\n").encode("utf-8")

    def launch(self) -> None:
        """Start the app on its home screen, loading its saved data when the file exists.

        A file the app cannot read leaves the data as it was (and is noted in ``events``).
        """
        self.stack, self.scroll, self.selected, self.label_focused = ["home"], 0, None, False
        raw = self.storage.get(STATE_PATH)
        self.events.append("launch")
        if raw is None:
            return
        try:
            data = json.loads(raw.decode("utf-8"))
            alarms = [Alarm(int(a["hour"]) % 24, str(a["label"]), bool(a.get("enabled", True))) for a in data.get("alarms", [])]
            vibrate, dark = bool(data.get("vibrate", True)), bool(data.get("dark_theme", False))
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            self.events.append(f"unreadable state file: {exc}")
            return
        self.alarms, self.vibrate, self.dark = alarms, vibrate, dark

    # -------------------------------------------------------------------- navigation
    @property
    def screen(self) -> str:
        return self.stack[-1]

    def _push(self, name: str) -> None:
        self.stack.append(name)
        self.label_focused = False
        if name == "edit":
            self.label_text = ""
            self.edit_hour = 7

    def back(self) -> None:
        self.events.append(f"back from {self.screen}")
        if self.selected is not None:
            self.selected = None
        elif len(self.stack) > 1:
            self.stack.pop()
        self.label_focused = False

    # -------------------------------------------------------------------- screens
    def tree(self) -> Node:
        root = Node("android.widget.FrameLayout", (0, 0, W, H))
        root.children.append(Node("android.widget.TextView", (0, 0, W, 40), text="9:41", rid="com.android.systemui:id/clock"))
        getattr(self, f"_screen_{self.screen}")(root)
        return root

    def _title(self, root: Node, text: str, up: bool = True) -> None:
        if up:
            root.children.append(Node("android.widget.ImageButton", (0, 40, 80, 120), desc="Navigate up", clickable=True, focusable=True, on_tap=self.back))
        root.children.append(Node("android.widget.TextView", (90 if up else 20, 40, W, 120), text=text, rid=f"{PKG}:id/title"))

    def _button(self, bounds: tuple[int, int, int, int], text: str, rid: str, on_tap: Callable[[], None]) -> Node:
        return Node("android.widget.Button", bounds, text=text, rid=f"{PKG}:id/{rid}", clickable=True, focusable=True, on_tap=on_tap)

    def _screen_home(self, root: Node) -> None:
        self._title(root, "Clock", up=False)
        root.children += [
            self._button((20, 140, 520, 220), "Alarms", "alarms_tab", lambda: self._push("alarms")),
            self._button((20, 240, 520, 320), "Settings", "settings_btn", lambda: self._push("settings")),
            self._button((20, 340, 520, 420), "About", "about_btn", lambda: self._push("about")),
            Node("android.widget.TextView", (20, 450, 520, 500), text=f"{sum(a.enabled for a in self.alarms)} alarms on", rid=f"{PKG}:id/status"),
            Node("android.widget.ImageView", (0, 860, W, H), desc="Ad", clickable=True, focusable=True, on_tap=lambda: self._push("ad")),
        ]

    def _screen_alarms(self, root: Node) -> None:
        self._title(root, "Alarms")
        lst = Node("androidx.recyclerview.widget.RecyclerView", (0, LIST_TOP, W, LIST_BOTTOM), rid=f"{PKG}:id/alarm_list", scrollable=True, focusable=True, on_scroll=self._scroll)
        visible = (LIST_BOTTOM - LIST_TOP) // ROW_H
        for slot, idx in enumerate(range(self.scroll, min(len(self.alarms), self.scroll + visible))):
            a = self.alarms[idx]
            y = LIST_TOP + slot * ROW_H
            row = Node("android.widget.LinearLayout", (0, y, W, y + ROW_H - 10), clickable=True, long_clickable=True, focusable=True,
                       on_tap=lambda: None, on_long=partial(self._select, idx))
            row.children += [
                Node("android.widget.TextView", (20, y + 10, 300, y + 80), text=f"{a.hour:02d}:00", rid=f"{PKG}:id/time"),
                Node("android.widget.TextView", (20, y + 80, 300, y + 130), text=a.label, rid=f"{PKG}:id/label"),
                Node("android.widget.Switch", (400, y + 40, 520, y + 100), rid=f"{PKG}:id/alarm_switch", clickable=True, focusable=True,
                     checkable=True, checked=a.enabled, on_tap=partial(self._toggle, idx)),
            ]
            lst.children.append(row)
        root.children.append(lst)
        if self.selected is not None:
            root.children.append(self._button((300, 40, 530, 120), "Delete", "delete", self._delete))
        root.children.append(self._button((20, 780, 520, 850), "Add alarm", "add_alarm", lambda: self._push("edit")))

    def _screen_edit(self, root: Node) -> None:
        self._title(root, "New alarm")
        root.children += [
            Node("android.widget.EditText", (20, 150, 520, 230), text=self.label_text, hint="Label", rid=f"{PKG}:id/alarm_label",
                 clickable=True, focusable=True, focused=self.label_focused, on_tap=self._focus_label),
            # Focusable but not clickable, far from anything clickable: must get a label.
            # Swiping it changes the hour (scrollable, still not clickable).
            Node("android.widget.NumberPicker", (20, 300, 260, 420), text=f"{self.edit_hour:02d}", rid=f"{PKG}:id/hour",
                 focusable=True, scrollable=True, on_scroll=self._scroll_hour),
            # Focusable, not clickable, on top of the Save button: must NOT get its own label.
            Node("android.view.View", (40, 790, 250, 840), desc="save hint", focusable=True),
            self._button((20, 780, 260, 850), "Save", "save", self._save),
            self._button((280, 780, 520, 850), "Cancel", "cancel", self.back),
        ]

    def _screen_settings(self, root: Node) -> None:
        self._title(root, "Settings")
        for i, (label, rid, on) in enumerate([("Vibrate", "vibrate_switch", self.vibrate), ("Dark theme", "dark_switch", self.dark)]):
            y = 150 + i * 110
            root.children += [
                Node("android.widget.TextView", (20, y, 380, y + 90), text=label),
                Node("android.widget.Switch", (400, y + 15, 520, y + 75), rid=f"{PKG}:id/{rid}", clickable=True, focusable=True,
                     checkable=True, checked=on, on_tap=partial(self._setting, rid)),
            ]

    def _screen_about(self, root: Node) -> None:
        self._title(root, "About")
        root.children.append(Node("android.widget.TextView", (20, 150, 520, 400), text="Clock 1.0. Licences and legal notices."))
        root.children.append(self._button((20, 420, 520, 500), "Open source licences", "licences", lambda: None))

    def _screen_ad(self, root: Node) -> None:
        self._title(root, "Sponsored")
        root.children.append(Node("android.widget.TextView", (20, 150, 520, 400), text="Try SuperGame now!"))
        root.children.append(self._button((20, 420, 520, 500), "Install now", "install", lambda: None))

    # -------------------------------------------------------------------- behaviours
    def _scroll(self, rows: int) -> None:
        visible = (LIST_BOTTOM - LIST_TOP) // ROW_H
        self.scroll = max(0, min(len(self.alarms) - visible, self.scroll + rows))

    def _scroll_hour(self, rows: int) -> None:
        self.edit_hour = (self.edit_hour + rows) % 24

    def _select(self, i: int) -> None:
        self.selected = i

    def _toggle(self, i: int) -> None:
        self.alarms[i].enabled = not self.alarms[i].enabled
        self._save_state()

    def _delete(self) -> None:
        if self.selected is not None:
            del self.alarms[self.selected]
            self.selected = None
            self.scroll = 0
            self._save_state()

    def _focus_label(self) -> None:
        self.label_focused = True

    def _save(self) -> None:
        self.alarms.append(Alarm(self.edit_hour, self.label_text or "Alarm"))
        self.stack.pop()
        self._save_state()

    def _setting(self, rid: str) -> None:
        if rid == "vibrate_switch":
            self.vibrate = not self.vibrate
        else:
            self.dark = not self.dark
        self._save_state()

    # -------------------------------------------------------------------- input events
    def _hit(self, x: int, y: int, want: str) -> Node | None:
        hit = None
        for n in self.tree().walk():  # later (deeper / drawn on top) nodes win
            if n.contains(x, y) and getattr(n, want):
                hit = n
        return hit

    def tap(self, x: int, y: int) -> None:
        n = self._hit(x, y, "clickable")
        self.events.append(f"tap {x} {y} -> {(n.rid or n.desc or n.cls) if n else 'nothing'}")
        if n is None:
            return
        if n.cls != "android.widget.EditText":
            self.label_focused = False
        if n.on_tap:
            n.on_tap()

    def long_press(self, x: int, y: int) -> None:
        n = self._hit(x, y, "long_clickable")
        self.events.append(f"long_press {x} {y} -> {'row' if n else 'nothing'}")
        if n is not None and n.on_long:
            n.on_long()

    def swipe(self, x1: int, y1: int, x2: int, y2: int) -> None:
        n = self._hit(x1, y1, "scrollable")
        self.events.append(f"swipe {x1} {y1} {x2} {y2} -> {'list' if n else 'nothing'}")
        if n is not None and n.on_scroll and abs(y2 - y1) >= 50:
            # Finger moving up scrolls the content down (shows later rows).
            n.on_scroll(max(1, abs(y2 - y1) // 100) * (1 if y2 < y1 else -1))

    def type_text(self, text: str) -> bool:
        """Characters go to the focused field; with no focus they are lost (as on a phone)."""
        if self.screen == "edit" and self.label_focused:
            self.label_text += text
            self.events.append(f"typed {text!r}")
            return True
        self.events.append(f"typed {text!r} into nothing")
        return False

    # -------------------------------------------------------------------- outputs
    def hierarchy_xml(self) -> str:
        parts = ["<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>", '<hierarchy rotation="0">']

        def emit(n: Node, index: int) -> None:
            b = n.bounds
            attrs = {
                "index": str(index), "text": n.text, "resource-id": n.rid, "class": n.cls, "package": PKG,
                "content-desc": n.desc, "checkable": _b(n.checkable), "checked": _b(n.checked),
                "clickable": _b(n.clickable), "enabled": "true", "focusable": _b(n.focusable),
                "focused": _b(n.focused), "scrollable": _b(n.scrollable), "long-clickable": _b(n.long_clickable),
                "password": "false", "selected": "false", "bounds": f"[{b[0]},{b[1]}][{b[2]},{b[3]}]",
            }
            parts.append("<node " + " ".join(f"{k}={quoteattr(v)}" for k, v in attrs.items()) + (">" if n.children else " />"))
            for i, c in enumerate(n.children):
                emit(c, i)
            if n.children:
                parts.append("</node>")

        emit(self.tree(), 0)
        parts.append("</hierarchy>")
        return "".join(parts)

    def render(self) -> Image.Image:
        bg, fg, btn = ((28, 28, 30), (235, 235, 235), (70, 90, 140)) if self.dark else ((250, 250, 250), (20, 20, 20), (190, 210, 250))
        img = Image.new("RGB", (W, H), bg)
        d = ImageDraw.Draw(img)
        font = ImageFont.load_default(size=26)
        small = ImageFont.load_default(size=18)
        for n in self.tree().walk():
            x1, y1, x2, y2 = n.bounds
            if n.cls.endswith("Button") or n.cls.endswith("ImageButton"):
                d.rounded_rectangle((x1, y1, x2, y2), radius=12, fill=btn)
                d.text(((x1 + x2) // 2, (y1 + y2) // 2), n.text or "<", fill=fg, font=font, anchor="mm")
            elif n.cls.endswith("Switch"):
                d.rounded_rectangle((x1, y1, x2, y2), radius=(y2 - y1) // 2, fill=(60, 170, 90) if n.checked else (150, 150, 150))
                kx = x2 - (y2 - y1) if n.checked else x1
                d.ellipse((kx + 4, y1 + 4, kx + (y2 - y1) - 4, y2 - 4), fill=(255, 255, 255))
            elif n.cls.endswith("EditText"):
                d.line((x1, y2 - 4, x2, y2 - 4), fill=(30, 110, 255) if n.focused else (120, 120, 120), width=3)
                d.text((x1 + 8, (y1 + y2) // 2), n.text or n.hint, fill=fg if n.text else (140, 140, 140), font=font, anchor="lm")
            elif n.cls.endswith("ImageView"):
                d.rectangle((x1, y1, x2, y2), fill=(240, 200, 60))
                d.text(((x1 + x2) // 2, (y1 + y2) // 2), "AD  SuperGame", fill=(0, 0, 0), font=font, anchor="mm")
            elif n.cls.endswith("LinearLayout"):
                d.rectangle((x1, y1, x2, y2), outline=(200, 200, 200), width=1)
            elif n.text:
                d.text((x1 + 4, y1 + 4), n.text, fill=fg, font=small if y2 - y1 < 60 else font)
        return img

    def screencap_png(self) -> bytes:
        buf = io.BytesIO()
        self.render().save(buf, format="PNG", compress_level=1)
        return buf.getvalue()


def _b(v: bool) -> str:
    return "true" if v else "false"
