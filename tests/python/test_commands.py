"""The programs a user runs from the package: `python -m blobrt ...` and, in an installed
wheel, the `blobrt` command pip puts on the venv's PATH (both run the `blobrt` program
shipped beside the package's libblobrt). In the build tree they use build/cli/blobrt."""
import os
import subprocess
import sys

import pytest

import blobrt.__main__ as launcher

PACKAGED = os.environ.get("BLOBRT_EXPECT_PACKAGED_PLUGINS") == "1"


def _run(args: list[str]) -> "subprocess.CompletedProcess[str]":
    env = {k: v for k, v in os.environ.items() if not k.startswith("BLOBRT_") or not PACKAGED}
    return subprocess.run(args, capture_output=True, text=True, timeout=120, env=env)


def test_the_program_is_found() -> None:
    path = launcher.program()
    if path is None and not PACKAGED:
        pytest.skip("build tree without build/cli on PATH: the wheel test runs this")
    assert path is not None, "blobrt program not found beside the package's libblobrt"
    assert os.access(path, os.X_OK)


@pytest.mark.parametrize("args", [["info"], ["info", "--json"], ["selftest"]])
def test_python_dash_m_blobrt(args: list[str]) -> None:
    if launcher.program() is None and not PACKAGED:
        pytest.skip("build tree without build/cli on PATH: the wheel test runs this")
    r = _run([sys.executable, "-m", "blobrt", *args])
    assert r.returncode == 0, r.stdout + r.stderr
    if args == ["info"]:
        assert "Active device:" in r.stdout
        assert "\nlibblobrt /" in r.stdout  # which copy is in use


def test_venv_blobrt_command_runs() -> None:
    if not PACKAGED:
        pytest.skip("only an installed wheel has the `blobrt` launcher beside its python")
    command = os.path.join(os.path.dirname(sys.executable), "blobrt")
    assert os.access(command, os.X_OK), f"{command} is missing"
    r = _run([command, "info"])
    assert r.returncode == 0, r.stdout + r.stderr
    assert "next to libblobrt" in r.stdout, r.stdout  # the package's own plugins.d
    assert "usable" in r.stdout
