#!/usr/bin/env python3
"""The Python package's types as users meet them: the Python examples of README.md and
docs/python.md, and the Python tests (tests/python/*.py), type-checked against the build
tree's package (build/python: the extension, its generated stubs _blobrt.pyi and py.typed)
with `mypy --strict` and with pyright (the basedpyright package bundles it; standard mode,
pyright's default). Both must report 0 errors. A canary file with one deliberate error is
checked first, so that a checker that looks at nothing cannot pass.

usage: typing_test.py SOURCE_ROOT BUILD_ROOT (exit 77: skipped, with the reason)"""
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile

SKIP = 77
CANARY = "import blobrt\n\nshape: int = blobrt.Blob((2, 3)).shape  # a tuple, not an int\n"


def examples(path: str) -> list[str]:
    """The ```python blocks of a Markdown file."""
    with open(path, encoding="utf-8") as f:
        return re.findall(r"^```python\n(.*?)^```", f.read(), re.M | re.S)


def mypy(files: list[str], package_dir: str, cwd: str) -> tuple[int, str]:
    env = dict(os.environ, PYTHONPATH=package_dir, MYPYPATH="")
    r = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--cache-dir", os.devnull,
                        "--python-version", "%d.%d" % sys.version_info[:2], *files],
                       capture_output=True, text=True, env=env, cwd=cwd, timeout=600)
    found = re.search(r"Found (\d+) errors?", r.stdout)
    errors = int(found.group(1)) if found else (0 if r.returncode == 0 else -1)
    return errors, r.stdout + r.stderr


def pyright(files: list[str], extra_paths: list[str], work: str) -> tuple[int, str]:
    config = os.path.join(work, "pyrightconfig-%d.json" % len(files))
    with open(config, "w") as f:
        json.dump({"typeCheckingMode": "standard", "extraPaths": extra_paths, "include": files,
                   "pythonVersion": "%d.%d" % sys.version_info[:2]}, f)
    r = subprocess.run([sys.executable, "-m", "basedpyright", "--outputjson", "-p", config],
                       capture_output=True, text=True, timeout=600)
    try:
        report = json.loads(r.stdout)
    except ValueError:
        return -1, r.stdout + r.stderr
    messages = "\n".join("%s:%d: %s" % (d["file"], d["range"]["start"]["line"] + 1, d["message"])
                         for d in report["generalDiagnostics"] if d["severity"] == "error")
    if report["summary"]["filesAnalyzed"] < len(files):
        return -1, "pyright analysed %d of %d files\n%s" % (report["summary"]["filesAnalyzed"], len(files), r.stdout)
    return report["summary"]["errorCount"], messages


def main() -> int:
    source, build = sys.argv[1], sys.argv[2]
    package_dir = os.path.join(build, "python")
    missing = [m for m in ("mypy", "basedpyright") if importlib.util.find_spec(m) is None]
    if missing:
        print("SKIP: %s not installed (tools/install-deps.sh installs them)" % " and ".join(missing))
        return SKIP
    if not os.path.exists(os.path.join(package_dir, "blobrt", "_blobrt.pyi")):
        print("SKIP: no blobrt package in %s (built with -Dpython)" % package_dir)
        return SKIP
    tests_dir = os.path.join(source, "tests", "python")
    failed = False
    with tempfile.TemporaryDirectory() as work:
        snippets = []
        for doc in ("README.md", os.path.join("docs", "python.md")):
            for i, code in enumerate(examples(os.path.join(source, doc))):
                name = os.path.join(work, "%s_example_%d.py" % (re.sub(r"\W", "_", doc), i + 1))
                with open(name, "w") as f:
                    f.write(code)
                snippets.append(name)
        if len(snippets) < 2:
            print("FAIL: expected Python examples in README.md and docs/python.md, found %d" % len(snippets))
            return 1
        canary = os.path.join(work, "canary.py")
        with open(canary, "w") as f:
            f.write(CANARY)
        tests = sorted(os.path.join(tests_dir, f) for f in os.listdir(tests_dir) if f.endswith(".py"))
        for checker in ("mypy --strict", "pyright"):
            def run(files: list[str]) -> tuple[int, str]:
                if checker == "pyright":
                    return pyright(files, [package_dir, tests_dir], work)
                return mypy(files, package_dir, tests_dir)
            errors, out = run([canary])
            if errors < 1:
                print("FAIL: %s did not report the canary's error (is it checking anything?)\n%s" % (checker, out))
                failed = True
                continue
            for what, files in (("examples (README.md, docs/python.md)", snippets), ("tests/python", tests)):
                errors, out = run(files)
                status = "ok" if errors == 0 else "FAIL"
                print("%s: %s on %d %s files: %d errors" % (status, checker, len(files), what, errors))
                if errors:
                    print(out)
                    failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
