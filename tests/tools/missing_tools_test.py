"""README's packaging commands name what they lack instead of failing with a bare shell error:
tools/build-wheels.sh once stopped after the quick start at "line 40: auditwheel: command not
found", half-way through, OUT_DIR already emptied. Each script is run here with a PATH of
only the basic commands it needs before its check (and, for build-wheels.sh, a fresh virtual
environment's python3, whose scripts directory holds no auditwheel): it must exit non-zero
with one line on stderr naming exactly the tools it did not find and how to install them,
before it touches OUT_DIR. A stub standing in for one tool shows each tool is looked for on
its own. Nothing is built: PIP_NO_INDEX keeps a broken check from fetching anything.
usage: missing_tools_test.py SOURCE_ROOT        ("missing_tools: N passed, N failed")"""
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import venv

ROOT = pathlib.Path(sys.argv[1]).resolve()
BASICS = ("bash", "dirname", "realpath", "basename", "sed")
passed = failed = 0


def check(ok, what, detail=""):
    global passed, failed
    passed, failed = passed + bool(ok), failed + (not ok)
    print(("ok: " if ok else "FAIL: ") + what + ("" if ok else "\n" + detail))


def run(script, bindir, python_dir, out):
    env = {"PATH": f"{python_dir}:{bindir}", "HOME": os.environ.get("HOME", "/tmp"), "PIP_NO_INDEX": "1", "LC_ALL": "C"}
    return subprocess.run([str(bindir / "bash"), str(ROOT / "tools" / script), str(out)],
                          env=env, capture_output=True, text=True, timeout=120)


def case(work, script, stubs, python_dir, want_missing, want_hint):
    """Runs SCRIPT with only BASICS and STUBS on PATH; it must name WANT_MISSING and nothing
    else that is in STUBS, in one line, and leave OUT_DIR as it was."""
    name = f"{script} with {', '.join(stubs) or 'none of its tools'}"
    bindir = pathlib.Path(tempfile.mkdtemp(dir=work))
    for tool in BASICS:
        found = shutil.which(tool)
        if found:
            (bindir / tool).symlink_to(found)
    for tool in stubs:
        (bindir / tool).write_text("#!/bin/sh\nexit 0\n")
        (bindir / tool).chmod(0o755)
    out = pathlib.Path(tempfile.mkdtemp(dir=work))
    (out / "kept").write_text("a file the script must not remove\n")
    p = run(script, bindir, python_dir, out)
    lines = p.stderr.strip().splitlines()
    detail = f"exit {p.returncode}\nstdout: {p.stdout[-1500:]}\nstderr: {p.stderr[-1500:]}"
    check(p.returncode != 0, f"{name}: exits non-zero", detail)
    check(len(lines) == 1 and lines[0].startswith(os.path.basename(script) + ": "),
          f"{name}: one line on stderr, starting with the script's name", detail)
    line = lines[0] if lines else ""
    listed = line.partition(": ")[2].split(" is missing")[0].split(" are missing")[0]
    named = {tool for tool in listed.split(", ") if not tool.startswith("python3's ")}
    check(named == set(want_missing), f"{name}: names exactly {', '.join(want_missing)}", detail)
    check(want_hint in line, f"{name}: says how to install ({want_hint!r})", detail)
    check((out / "kept").exists() and p.stdout == "", f"{name}: stops before emptying OUT_DIR or building", detail)


with tempfile.TemporaryDirectory() as work:
    work = pathlib.Path(work)
    # python3 from a virtual environment (its own directory on PATH: a link elsewhere is the
    # base interpreter), whose scripts directory, which build-wheels.sh puts first on PATH,
    # holds nothing but python.
    env_dir = work / "venv"
    venv.EnvBuilder(system_site_packages=True, with_pip=False, symlinks=True).create(env_dir)
    python = env_dir / "bin"
    case(work, "build-wheels.sh", [], python, ["auditwheel", "patchelf"], "bash ci/deps.sh")
    case(work, "build-wheels.sh", ["patchelf"], python, ["auditwheel"], "bash ci/deps.sh")
    case(work, "build-debs.sh", [], python, ["git", "dpkg-buildpackage", "dh", "lintian"], "bash ci/deps.sh")
    case(work, "build-debs.sh", ["git", "dpkg-buildpackage", "dh"], python, ["lintian"], "apt-get install")

print(f"missing_tools: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
