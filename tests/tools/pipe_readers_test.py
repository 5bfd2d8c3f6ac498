"""No shell script leaves a pipe's reader free to stop early: under `set -o pipefail` (every
CI stage, the build and bundle tools) a writer killed by SIGPIPE fails the pipeline, and set
-e then ends the script at random, without a word. CI's gpu-bundle stage failed so once, on
`ldconfig -p | awk '... {print; exit}'`; `| head`, `| grep -q` and `| grep -m` stop the same
way. Readers that consume everything (sed -n 1p, awk with a flag) take their place. A line
whose pipeline is followed by `||` decides for itself; one that cannot be cut off says so
with `pipe-early: ok` on the line above, and why."""
import pathlib
import re
import sys

ROOT = pathlib.Path(sys.argv[1])
SKIPPED_DIRS = {".git", "subprojects"}
EARLY = re.compile(
    r"\|\s*(?:head\b|grep\s+(?:-\w*[qm]\w*|--quiet|--max-count)|sed\s+(?:-n\s+)?'?\d+q)"
    r"|\|[^|]*\bawk\b[^|]*\bexit\b")


def scripts():
    for path in sorted(ROOT.rglob("*.sh")):
        rel = path.relative_to(ROOT)
        if rel.parts[0] in SKIPPED_DIRS or rel.parts[0].startswith(("build", "bundle")):
            continue
        yield rel, path
    yield pathlib.Path(".ci/run"), ROOT / ".ci" / "run"


def logical_lines(text):
    """(first line number, text) with backslash continuations joined, comments kept apart."""
    buf, start = "", None
    for number, line in enumerate(text.splitlines(), 1):
        if start is None:
            start = number
        if line.endswith("\\"):
            buf += line[:-1] + " "
            continue
        yield start, buf + line
        buf, start = "", None


def main():
    found, checked = [], 0
    for rel, path in scripts():
        checked += 1
        previous = ""
        for number, line in logical_lines(path.read_text()):
            code = line.lstrip()
            if code.startswith("#"):
                previous = code
                continue
            match = EARLY.search(code)
            if match and "||" not in code[match.end():] and "pipe-early: ok" not in previous:
                found.append(f"{rel}:{number}: {code.strip()}")
            previous = code
    if checked < 20:
        print(f"only {checked} scripts found under {ROOT}: wrong root?")
        return 1
    for f in found:
        print(f"a reader that may leave its pipe early (use sed -n 1p, an awk flag, or say why not with 'pipe-early: ok'):\n  {f}")
    print(f"{checked} scripts checked, {len(found)} pipes with an early reader")
    return 1 if found else 0


sys.exit(main())
