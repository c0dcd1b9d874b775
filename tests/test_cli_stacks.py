"""``kill -USR1`` on an agentlab command prints every thread's stack (a stuck run shows where it waits)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time


def test_sigusr1_prints_the_stacks_and_the_process_goes_on() -> None:
    code = ("import sys, time\n"
            "from agentlab.cli import _dump_stacks_on_sigusr1\n"
            "_dump_stacks_on_sigusr1()\n"
            "print('ready', flush=True)\n"
            "def waiting_here():\n"
            "    time.sleep(20)\n"
            "waiting_here()\n")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        time.sleep(0.5)  # past the print, into the wait
        proc.send_signal(signal.SIGUSR1)
        time.sleep(1)
        assert proc.poll() is None  # a dump, not a death
    finally:
        proc.kill()
        _, err = proc.communicate(timeout=10)
    assert "waiting_here" in err and "Current thread" in err, err
