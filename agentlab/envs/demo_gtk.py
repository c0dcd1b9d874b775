"""A tiny GTK 3 app to drive in demos and tests: its state can be checked from outside.

Run with the *system* Python (Debian's ``python3-gi``), not the project's virtualenv::

    /usr/bin/python3 agentlab/envs/demo_gtk.py --state /tmp/demo.json

The window holds a counter label with an "Add one" button, a name entry with a "Greet"
button that writes "Hello, <name>!" into a second label, a "Dark mode" check box and a
"Reset" button. After every change the whole state is written (atomically) as JSON to the
``--state`` file, so a test or notebook can verify what an agent's clicks and typing did
without relying on the screen. GTK exposes every widget on the accessibility bus (AT-SPI)
with its role, name and screen box. This file must not import ``agentlab``.
"""

from __future__ import annotations

import argparse
import json
import os

import gi

gi.require_version("Gtk", "3.0")
from gi.repository import Gtk  # noqa: E402


class DemoWindow(Gtk.Window):
    def __init__(self, state_path: str, title: str) -> None:
        super().__init__(title=title)
        self.state_path = state_path
        self.count = 0
        self.set_default_size(460, 260)
        self.move(0, 0)
        grid = Gtk.Grid(row_spacing=10, column_spacing=10, margin=16)
        self.add(grid)

        self.count_label = Gtk.Label(label="Count: 0")
        add = Gtk.Button(label="Add one")
        add.connect("clicked", self.on_add)
        grid.attach(self.count_label, 0, 0, 1, 1)
        grid.attach(add, 1, 0, 1, 1)

        self.entry = Gtk.Entry()
        self.entry.set_placeholder_text("Your name")
        self.entry.get_accessible().set_name("Name")
        self.entry.connect("changed", lambda *_: self.save())
        greet = Gtk.Button(label="Greet")
        greet.connect("clicked", self.on_greet)
        grid.attach(self.entry, 0, 1, 1, 1)
        grid.attach(greet, 1, 1, 1, 1)

        self.greeting = Gtk.Label(label="")
        grid.attach(self.greeting, 0, 2, 2, 1)

        self.dark = Gtk.CheckButton(label="Dark mode")
        self.dark.connect("toggled", lambda *_: self.save())
        reset = Gtk.Button(label="Reset")
        reset.connect("clicked", self.on_reset)
        grid.attach(self.dark, 0, 3, 1, 1)
        grid.attach(reset, 1, 3, 1, 1)

        self.connect("destroy", Gtk.main_quit)
        self.save()

    def on_add(self, _button: Gtk.Button) -> None:
        self.count += 1
        self.count_label.set_text(f"Count: {self.count}")
        self.save()

    def on_greet(self, _button: Gtk.Button) -> None:
        name = self.entry.get_text().strip()
        self.greeting.set_text(f"Hello, {name}!" if name else "Hello!")
        self.save()

    def on_reset(self, _button: Gtk.Button) -> None:
        self.count = 0
        self.count_label.set_text("Count: 0")
        self.entry.set_text("")
        self.greeting.set_text("")
        self.dark.set_active(False)
        self.save()

    def save(self) -> None:
        state = {
            "count": self.count,
            "name": self.entry.get_text(),
            "greeting": self.greeting.get_text(),
            "dark_mode": self.dark.get_active(),
        }
        tmp = self.state_path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(state, fh)
        os.replace(tmp, self.state_path)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--state", required=True, help="JSON file the app rewrites after every change")
    ap.add_argument("--title", default="agentlab demo")
    args = ap.parse_args()
    win = DemoWindow(args.state, args.title)
    win.show_all()
    Gtk.main()


if __name__ == "__main__":
    main()
