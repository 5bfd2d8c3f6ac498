"""blobrt's log from Python: a handler (set_log_handler), the logging module behind it
(log_to_logging), the level (set_log_level / log_level), and the default sink again after."""
from collections.abc import Iterator
import json
import logging
import os
import subprocess
import sys
import threading
from typing import Any

import pytest

import blobrt


@pytest.fixture(autouse=True)
def _restore_logging() -> Iterator[None]:
    level = blobrt.log_level()
    yield
    blobrt.set_log_handler(None)
    blobrt.set_log_level(level)


def test_handler_gets_level_and_message_and_stderr_gets_nothing(capfd: pytest.CaptureFixture[str]) -> None:
    got: list[tuple[str, str]] = []
    blobrt.set_log_level("info")
    blobrt.set_log_handler(lambda level, message: got.append((level, message)))
    blobrt.select_backend("host")
    assert ("info", "active device host:0 (host CPU (built-in kernels))") in got
    assert all(not m.startswith("blobrt ") for _, m in got)  # the message alone, no prefix
    assert "active device" not in capfd.readouterr().err


def test_messages_from_other_threads_arrive_in_order() -> None:
    got: list[str] = []
    blobrt.set_log_level("info")
    blobrt.set_log_handler(lambda level, message: got.append(message))
    threads = [threading.Thread(target=blobrt.select_backend, args=("host",)) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert got.count("active device host:0 (host CPU (built-in kernels))") == 4


def test_log_to_logging(caplog: pytest.LogCaptureFixture) -> None:
    blobrt.set_log_level("info")
    blobrt.log_to_logging()
    with caplog.at_level(logging.INFO, logger="blobrt"):
        blobrt.select_backend("host")
    records = [r for r in caplog.records if r.name == "blobrt"]
    assert any(r.levelno == logging.INFO and r.getMessage().startswith("active device host:0") for r in records)


def test_a_handler_that_raises_is_reported_and_keeps_receiving(monkeypatch: pytest.MonkeyPatch) -> None:
    reported: list[Any] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda u: reported.append(u.exc_value))
    calls: list[str] = []

    def handler(level: str, message: str) -> None:
        calls.append(message)
        raise RuntimeError("handler failed")

    blobrt.set_log_level("info")
    blobrt.set_log_handler(handler)
    blobrt.select_backend("host")
    blobrt.select_backend("host")
    assert len(calls) == 2
    assert len(reported) == 2 and all(isinstance(e, RuntimeError) for e in reported)


def test_none_restores_stderr(capfd: pytest.CaptureFixture[str]) -> None:
    blobrt.set_log_level("info")
    blobrt.set_log_handler(lambda level, message: None)
    blobrt.set_log_handler(None)
    blobrt.select_backend("host")
    err = capfd.readouterr().err
    assert "[info]: active device host:0" in err and err.startswith("blobrt ")


def test_bad_arguments() -> None:
    with pytest.raises(blobrt.InvalidTypeError, match="callable or None"):
        blobrt.set_log_handler(3)  # type: ignore[arg-type]
    with pytest.raises(blobrt.InvalidValueError, match="'loud' is not one of"):
        blobrt.set_log_level("loud")
    blobrt.set_log_level("DEBUG")
    assert blobrt.log_level() == "debug"


# A message made while the GIL is released (the first BLAS call of a plugin device notes
# its time at debug, inside asum_data) reaches the handler too. In a child: the note is
# made once per device and process.
CHILD = """
import json, blobrt
got = []
blobrt.set_log_level("debug")
blobrt.set_log_handler(lambda level, message: got.append([level, message]))
blobrt.select_backend(DEVICE)
b = blobrt.Blob((1000,))
b.data[...] = 1
assert b.asum_data() == 1000
print(json.dumps(got))
"""


def test_messages_made_without_the_gil_arrive() -> None:
    plugin_devices = [d for d in blobrt.available_devices() if not d.startswith("host:")]
    if not plugin_devices:
        pytest.skip("no plugin device here")
    device = plugin_devices[0]
    out = subprocess.run([sys.executable, "-c", CHILD.replace("DEVICE", repr(device))], capture_output=True,
                         text=True, env=dict(os.environ), timeout=120)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    assert any(level == "debug" and "first sasum took" in message for level, message in got), got
