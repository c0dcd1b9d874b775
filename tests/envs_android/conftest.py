"""Fixtures for the Android tests: a fake adb server on an ephemeral loopback port."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("ADBUTILS_ADB_PATH", "/bin/false")  # never start a real adb daemon

from agentlab.envs.testing.fake_adb import FakeAdbServer, FakeDevice  # noqa: E402


@pytest.fixture
def fake_adb():
    """A running fake adb server with one device running the scripted clock app."""
    with FakeAdbServer(FakeDevice()) as server:
        yield server
