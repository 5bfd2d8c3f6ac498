"""No shell script leaves a pipe's reader free to stop early: under `set -o pipefail` (every
CI stage, the build and bundle tools) a writer killed by SIGPIPE fails the pipeline, and set
-e then ends the script at random, without a word. CI's gpu-bundle stage failed so once, on
`ldconfig -p | awk '... {print; exit}'`. Readers found: head, grep -q/-m/-l (and their long
forms), sed with a q command, awk with exit outside END, `read` of one line. Readers that
consume everything (sed -n 1p, awk with a flag, a file instead of a pipe) take their place.
A pipeline ending in `|| true` (or `|| :`) accepts the failure; one whose reader cannot cut
its writer off says so with `pipe-early: ok` in a comment on the line above, and why.
A check by pattern, not a shell parser: what it cannot see (a program that reads part of its
input, python -c) is the reviewer's."""
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(sys.argv[1])

GREP_EARLY_LONG = ("--quiet", "--silent", "--max-count", "--files-with-matches", "--files-without-match")
SED_QUIT = re.compile(r"""(?:^|[\d;{}\s'"])[qQ](?:\s*\d*\s*[;}'"]|\s*\d*\s*$)""")


def scripts():
    """The tracked shell scripts (a build folder's copies of the tree are not the tree's)."""
    try:
        listed = subprocess.run(["git", "-C", str(ROOT), "ls-files", "*.sh", ".ci/run"],
                                capture_output=True, text=True, check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        listed = [str(p.relative_to(ROOT)) for p in ROOT.rglob("*.sh")
                  if not p.relative_to(ROOT).parts[0].startswith(("build", "bundle", "."))]
        listed.append(".ci/run")
    return [pathlib.Path(p) for p in sorted(set(listed)) if (ROOT / p).is_file()]


def logical_lines(text):
    """(first line number, code, comment above): continuations (a trailing backslash, |, &&
    or ||) joined; a comment line's backslash continues nothing."""
    buf, start, comment = "", None, ""
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not buf and stripped.startswith("#"):
            comment = stripped
            continue
        if start is None:
            start = number
        if stripped.endswith("\\"):
            buf += stripped[:-1] + " "
            continue
        if stripped.endswith(("|", "&&")):
            buf += stripped + " "
            continue
        yield start, buf + stripped, comment
        buf, start, comment = "", None, ""


def pipe_segments(code):
    """The commands of a line's pipelines, split at unquoted single | (not ||); the first
    segment of each pipeline is its writer."""
    segments, current, quote, i = [], "", None, 0
    while i < len(code):
        c = code[i]
        if quote:
            if c == quote:
                quote = None
            elif c == "\\" and quote == '"':
                current += c + code[i + 1:i + 2]
                i += 2
                continue
        elif c in "'\"":
            quote = c
        elif c == "#" and (not current or current[-1].isspace()):
            break
        elif c == "|" and code[i + 1:i + 2] == "|":
            current += "||"
            i += 2
            continue
        elif c == "|" and code[i - 1:i] != ">":
            segments.append(current)
            current = ""
            i += 1
            continue
        current += c
        i += 1
    segments.append(current)
    return segments


def early_reader(segment):
    """Why this command may stop reading before its writer is done, or None."""
    words = segment.strip().lstrip("(").split()
    if not words:
        return None
    cmd = words[0]
    if cmd == "head":
        return "head"
    if cmd == "read":
        return "read of one line"
    if cmd == "grep":
        for w in words[1:]:
            if w.startswith("--"):
                if w.split("=")[0] in GREP_EARLY_LONG:
                    return f"grep {w}"
            elif w.startswith("-") and len(w) > 1:
                flags = w[1:]
                if flags[:1] in ("e", "f"):
                    break  # -e PATTERN: the options end at the pattern
                if any(f in flags for f in "qml"):
                    return f"grep {w}"
            else:
                break
    if cmd == "sed" and SED_QUIT.search(segment[segment.index("sed") + 3:]):
        return "sed's q"
    if cmd == "awk":
        program = segment[segment.index("awk") + 3:]
        before_end = re.split(r"\bEND\s*\{", program)[0]
        if re.search(r"\bexit\b", before_end):
            return "awk's exit"
    return None


def accepted(segments, at):
    rest = " ".join(segments[at:])
    return re.search(r"\|\|\s*(?:true|:)\b", rest) is not None


def main():
    found, checked = [], 0
    for rel in scripts():
        checked += 1
        for number, code, comment in logical_lines((ROOT / rel).read_text()):
            segments = pipe_segments(code)
            for at, segment in enumerate(segments[1:], 1):
                why = early_reader(segment)
                if why and not accepted(segments, at) and "pipe-early: ok" not in comment:
                    found.append(f"{rel}:{number}: {why}: {code}")
    if checked < 20:
        print(f"only {checked} scripts found under {ROOT}: wrong root?")
        return 1
    for f in found:
        print(f"a reader that may leave its pipe early (read all: sed -n 1p, an awk flag; or say why not with 'pipe-early: ok'):\n  {f}")
    print(f"{checked} scripts checked, {len(found)} pipes with an early reader")
    return 1 if found else 0


sys.exit(main())
