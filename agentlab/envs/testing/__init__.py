"""Faithful stand-ins for devices that cannot run here: a protocol-level fake adb server.

:mod:`agentlab.envs.testing.fake_adb` speaks the real adb host protocol over loopback TCP and
runs the scripted clock app of :mod:`agentlab.envs.testing.fake_app`, so the real adbutils
client, :class:`~agentlab.envs.android.AndroidEnv` and the AppAgent loop can be tried and
tested without a phone::

    with FakeAdbServer(FakeDevice()) as server:
        env = AndroidEnv(adb_port=server.port, settle=0)

Set ``ADBUTILS_ADB_PATH=/bin/false`` first so adbutils never starts a real adb daemon.
"""
