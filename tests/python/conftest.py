"""pytest fixtures for the blobrt package: every test that takes `device` runs once per
device this machine can open (blobrt.available_devices(), as the C++ suites do)."""
from collections.abc import Iterator
import os
from typing import Any

import pytest

import blobrt

DATA = os.environ.get("BLOBRT_TEST_DATA_DIR", os.path.join(os.path.dirname(__file__), "..", "data"))


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "device" in metafunc.fixturenames:
        metafunc.parametrize("device", blobrt.available_devices())


@pytest.fixture(autouse=True)
def _select(request: pytest.FixtureRequest) -> Iterator[None]:
    """Selects the test's device (or host) before it runs."""
    callspec = getattr(request.node, "callspec", None)
    device = callspec.params.get("device") if callspec else None
    blobrt.select_backend(device or "host")
    yield


def _described(device_id: str) -> dict[str, Any]:
    """blobrt.devices()' description of one device."""
    return next(d for d in blobrt.devices() if d["id"] == device_id)


def host_memory(device_id: str) -> bool:
    return bool(_described(device_id)["memory_model"] == "shared")


def cuda_memory(device_id: str) -> bool:
    """Memory a DLPack consumer sees as CUDA memory (kDLCUDA): exported, but not readable by numpy."""
    d = _described(device_id)
    return bool(d["native_type"] == "cuda" and d["addressable_handles"])
