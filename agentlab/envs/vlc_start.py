"""Start VLC's Qt interface through libvlc, as the ``vlc`` program does (runs under the system Python).

Debian's ``vlc`` program refuses to run as root ("VLC is not supposed to be run as root"), and
the harness runs as root in containers and CI. The check lives in the program only, not in
libvlc: this starter does what ``vlc``'s ``main()`` does -- ``libvlc_new`` with the command line
(options and the files to play), the Qt interface, play -- through ctypes, and exits when the
interface quits (Media > Quit, ctrl+q) or on SIGTERM/SIGINT, releasing libvlc so that VLC
shuts down as it would on its own. It must not import ``agentlab``.

Usage: ``python3 vlc_start.py [VLC OPTIONS...] [FILES...]``, or
``python3 vlc_start.py --write-defaults`` to write VLC's default ``vlcrc`` into
``$XDG_CONFIG_HOME/vlc/`` and exit: the whole file VLC itself writes when preferences are saved
(every option, the defaults commented out), so a settings file exists from the first start, as on
a machine where VLC's preferences were ever saved. libvlc has no call for it and the
``--save-config`` option is gone; libvlccore's exported ``config_SaveConfigFile`` does it, on the
``libvlc_int_t`` that is the first field of a ``libvlc_instance_t`` (VLC 3).
"""

from __future__ import annotations

import ctypes
import signal
import sys
import threading


def write_defaults(lib: ctypes.CDLL) -> int:
    """Save libvlc's configuration with no file read (``--ignore-config``): VLC's defaults."""
    try:
        core = ctypes.CDLL("libvlccore.so.9")
    except OSError as exc:
        print(f"vlc_start: libvlccore is not installed ({exc}); apt-get install vlc", file=sys.stderr)
        return 2
    lib.libvlc_new.restype = ctypes.c_void_p
    lib.libvlc_new.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
    arr = (ctypes.c_char_p * 1)(b"--ignore-config")
    inst = lib.libvlc_new(1, arr)
    if not inst:
        print("vlc_start: libvlc_new failed", file=sys.stderr)
        return 2
    core.config_SaveConfigFile.argtypes = [ctypes.c_void_p]
    rc = core.config_SaveConfigFile(ctypes.c_void_p.from_address(inst).value)
    lib.libvlc_release.argtypes = [ctypes.c_void_p]
    lib.libvlc_release(inst)
    if rc != 0:
        print("vlc_start: VLC could not write its configuration file", file=sys.stderr)
        return 2
    return 0


def main(argv: list[str]) -> int:
    try:
        lib = ctypes.CDLL("libvlc.so.5")
    except OSError as exc:
        print(f"vlc_start: libvlc is not installed ({exc}); apt-get install vlc", file=sys.stderr)
        return 2
    if argv == ["--write-defaults"]:
        return write_defaults(lib)
    lib.libvlc_new.restype = ctypes.c_void_p
    lib.libvlc_new.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
    args = [a.encode() for a in argv]
    arr = (ctypes.c_char_p * max(len(args), 1))(*args)
    inst = lib.libvlc_new(len(args), arr)
    if not inst:
        print("vlc_start: libvlc_new failed (a bad option?)", file=sys.stderr)
        return 2
    done = threading.Event()
    exit_cb_type = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
    on_exit = exit_cb_type(lambda _data: done.set())  # kept alive until the end of main()
    lib.libvlc_set_exit_handler.argtypes = [ctypes.c_void_p, exit_cb_type, ctypes.c_void_p]
    lib.libvlc_set_exit_handler(inst, on_exit, None)
    lib.libvlc_add_intf.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    if lib.libvlc_add_intf(inst, b"qt") != 0:
        print("vlc_start: VLC's Qt interface did not start (apt-get install vlc-plugin-qt)", file=sys.stderr)
        return 2
    lib.libvlc_playlist_play.argtypes = [ctypes.c_void_p]
    lib.libvlc_playlist_play(inst)
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    signal.signal(signal.SIGINT, lambda *_: done.set())
    while not done.wait(0.5):
        pass
    lib.libvlc_release.argtypes = [ctypes.c_void_p]
    lib.libvlc_release(inst)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
