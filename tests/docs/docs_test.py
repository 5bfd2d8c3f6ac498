#!/usr/bin/env python3
"""The documentation, checked against the program it describes:
- the `blobrt info` sample in README.md has the real version and plugin ABI, and the
  sections the real output has; every manifest sample in docs/ declares the current ABI;
- every environment variable the code reads is in README.md's table, and every row of
  the table is read somewhere; the CI stages (ci/stages, ci/*.sh, README's table,
  docs/architecture.md's list) agree; tests/README.md's table names every suite the build
  registers (`meson introspect --tests`) and no suite the build files no longer have;
- the shell snippets of README.md and docs/*.md that a user would copy are run as written
  against the build tree (`meson devenv`), and the Python snippet of README.md against
  the build's package; the rest are listed as skipped, each with its reason.
usage: docs_test.py SOURCE_ROOT BUILD_DIR        ("docs: N passed, N failed, N skipped")
"""
import glob
import json
import os
import re
import subprocess
import sys

root, build = (os.path.abspath(a) for a in sys.argv[1:3])
passed = failed = skipped = 0


def check(ok, what, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print(f"ok: {what}")
    else:
        failed += 1
        print(f"FAIL: {what}\n{detail[-2500:]}")


def skip(what, why):
    global skipped
    skipped += 1
    print(f"skipped: {what} ({why})")


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def blocks(text, language):
    """The fenced code blocks of `text` whose info string is `language` ("" for none)."""
    found, current, lang = [], None, None
    for line in text.splitlines(keepends=True):
        if line.startswith("```"):
            if current is None:
                current, lang = [], line[3:].strip()
            else:
                if lang == language:
                    found.append("".join(current))
                current = None
        elif current is not None:
            current.append(line)
    return found


env = {k: v for k, v in os.environ.items() if not k.startswith("BLOBRT_")}
env["BLOBRT_LOG"] = "off"


def devenv(command, timeout=300, extra_env=None):
    p = subprocess.run(["meson", "devenv", "-C", build, "bash", "-c", command], cwd=root,
                       env=dict(env, **(extra_env or {})), capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout + p.stderr


readme = read(os.path.join(root, "README.md"))
docs = {p: read(p) for p in sorted(glob.glob(os.path.join(root, "docs", "*.md")))}

# 1. The `blobrt info` sample and the manifests.
rc, info = devenv("blobrt info")
check(rc == 0, "`blobrt info` runs in the build tree", info)
real_header = info.splitlines()[0] if info else ""
sample = next((b for b in blocks(readme, "") if b.startswith("$ blobrt info")), "")
check(sample != "", "README.md has a `blobrt info` sample")
sample_lines = sample.splitlines()
check(len(sample_lines) > 1 and sample_lines[1] == real_header,
      f"the sample's first line is the real one ({real_header!r})", sample)
abi = re.search(r"plugin ABI (\d+\.\d+)", real_header)
abi = abi.group(1) if abi else "?"
for line in sample_lines:
    m = re.search(r", ABI (\d+\.\d+), priority", line)
    if m:
        check(m.group(1) == abi, f"the sample's plugin line names ABI {abi}", line)
for section in ("Plugin search path:", "Backends:", "Selection:", "Active device:"):
    check(section in sample and section in info, f"sample and real output both have '{section}'", info)
for path, text in [("README.md", readme)] + list(docs.items()):
    for m in re.finditer(r"^abi = (\S+)", text, re.M):
        if m.group(1) != "@ABI@":  # a template meson fills in
            check(m.group(1) == abi, f"{os.path.basename(path)}: manifest sample declares abi = {abi}", m.group(0))

# 2. Environment variables: the table against the code.
table = set(re.findall(r"^\| `(BLOBRT_[A-Z0-9_]+)`", readme, re.M))
read_in_code = set()
for pattern in ("core/**/*.[ch]pp", "core/**/*.h", "backends/**/*.[ch]pp", "backends/**/*.cu", "blobrt-dist/**/*.[ch]pp",
                "blobrt-caffe/**/*.[ch]pp", "python/src/*.cpp", "cli/*.cpp", "report/*.cpp", "conformance/*.cpp",
                "core/kernels/**/*.hpp"):
    for path in glob.glob(os.path.join(root, pattern), recursive=True):
        text = read(path)
        read_in_code |= set(re.findall(r'"(BLOBRT_[A-Z0-9_]+)"', text))
# Names in string literals that are not variables (messages, macros spelled out).
read_in_code = {n for n in read_in_code if not n.startswith(("BLOBRT_ERR", "BLOBRT_EW_", "BLOBRT_VERSION"))}
check(not (read_in_code - table), f"every variable the code reads is in README's table (missing: {sorted(read_in_code - table)})")
check(not (table - read_in_code), f"every variable in README's table is read by the code (stale: {sorted(table - read_in_code)})")

# 2b. The CI stages: ci/stages, the ci/*.sh scripts and README's table of them are one list.
# A line is "NAME LEAST_SECONDS" (tools/build.sh skips a stage whose least time no longer fits).
stage_lines = [l.split() for l in read(os.path.join(root, "ci", "stages")).splitlines()
               if l.strip() and not l.startswith("#")]
listed = [words[0] for words in stage_lines]
check(all(len(words) == 2 and words[1].isdigit() for words in stage_lines),
      f"every line of ci/stages is a name and its least time in seconds ({stage_lines})")
scripts = sorted(os.path.basename(p)[:-3] for p in glob.glob(os.path.join(root, "ci", "*.sh")) if not p.endswith("/lib.sh"))
in_readme = re.findall(r"^\| `([a-z-]+)` \| ", readme[readme.find("| stage | what it does |"):], re.M)
check(sorted(listed) == scripts, f"every ci/*.sh is a stage in ci/stages and back (listed {listed}, scripts {scripts})")
check(in_readme[:len(listed)] == listed, f"README's stage table lists ci/stages in order ({in_readme[:len(listed)]})")
# docs/architecture.md's tree names them too: "ci/   the CI stages, one script each (a, b, ...)".
architecture = read(os.path.join(root, "docs", "architecture.md"))
m = re.search(r"^ci/\s+the CI stages, one script each \(([^)]*)\)", architecture, re.M)
in_architecture = [name.strip() for name in re.sub(r"\s+", " ", m.group(1)).split(",")] if m else []
check(in_architecture == listed,
      f"docs/architecture.md lists ci/stages in order (missing: {[n for n in listed if n not in in_architecture]}, "
      f"extra: {[n for n in in_architecture if n not in listed]}, listed: {in_architecture})")

# 2c. tests/README.md's table against the suites the build registers. A cell may name several
# suites; `NAME_<backend>` stands for one per backend, `NAME_*` for any ending. A name the
# table has but this build does not register must still be registered by a meson.build of
# the tree (a suite built only with CUDA, or in the fuzz build), as a literal or a prefix.
intro = subprocess.run(["meson", "introspect", "--tests", build], capture_output=True, text=True)
registered = sorted({t["name"] for t in json.loads(intro.stdout)}) if intro.returncode == 0 else []
check(registered != [], "`meson introspect --tests` lists the build's suites", intro.stderr)
tests_readme = read(os.path.join(root, "tests", "README.md"))
table_names = set()
for line in tests_readme.splitlines():
    if line.startswith("| ") and not line.startswith(("| meson test |", "|---")):
        table_names |= set(re.findall(r"`([^`]+)`", line.split(" | ")[0]))


def suite_pattern(name):
    return re.compile("^" + re.escape(name).replace("<backend>", "(?:host|simgpu|blis|opencl|cuda)")
                      .replace(r"\*", ".+") + "$")


patterns = {name: suite_pattern(name) for name in table_names}
meson_text = "".join(read(p) for p in glob.glob(os.path.join(root, "**", "meson.build"), recursive=True)
                     if not os.path.relpath(p, root).startswith("build"))
unlisted = [n for n in registered if not any(p.match(n) for p in patterns.values())]
stale = sorted(name for name, p in patterns.items()
               if not any(p.match(n) for n in registered)
               and f"'{re.split(r'<|[*]', name)[0]}" not in meson_text)
check(not unlisted, f"tests/README.md's table has a row for every suite the build registers (missing: {unlisted})")
check(not stale, f"every suite tests/README.md's table names is registered by a meson.build (stale: {stale})")

# 3. Shell snippets, as written.
as_root = os.geteuid() == 0
mpirun_fix = "mpirun --allow-run-as-root --oversubscribe " if as_root else "mpirun --oversubscribe "
for path, text in [("README.md", readme)] + [(os.path.basename(p), t) for p, t in docs.items()]:
    for block in blocks(text, "sh"):
        for line in block.splitlines():
            command = line.split("  #")[0].strip()
            if not command or command.startswith("#"):
                continue
            name = f"{path}: {command}"
            if "mybackend" in command:
                skip(name, "names the plugin the page's reader writes")
            elif command.startswith("tools/build.sh"):
                skip(name, "this test runs inside it")
            elif command.startswith(("meson install", "pip install", "sudo ")):
                skip(name, "installs into the system; the install_tags, outside-in and wheel stages do it in scratch places")
            elif command.startswith(("srun", "salloc", "sbatch")) or " -H " in command or "--map-by" in command:
                skip(name, "needs a cluster of several nodes")
            elif "cuda" in command.split() or "--expect cuda" in command or "BLOBRT_BACKEND=cuda" in command:
                skip(name, "needs a GPU")
            elif command.startswith(("g++", "c++", "cmake", "pkg-config")) or "PKG_CONFIG" in command:
                skip(name, "builds against an installed prefix: the outside-in stage runs these")
            elif command.startswith(("tools/bench", "benchmarks/", "build/benchmarks")) or "blobrt-bench" in command:
                skip(name, "a benchmark: tools/bench.sh runs it on an idle machine")
            elif command.startswith(("meson setup", "ninja", "meson test")):
                skip(name, "builds or tests the tree: the test command itself does")
            elif command.startswith("meson devenv -C build "):
                inner = command[len("meson devenv -C build "):]
                if inner.startswith("bash -c "):
                    inner = inner[len("bash -c "):].strip("'")
                # The README's note: as root, and on fewer cores than ranks, Open MPI needs both flags.
                inner = re.sub(r"^mpirun (--allow-run-as-root )?(--oversubscribe )?", mpirun_fix, inner)
                rc, out = devenv(inner)
                check(rc == 0, f"{name} runs", out)
            elif command.startswith(("mpirun", "blobrt", "BLOBRT_")):
                inner = re.sub(r"^mpirun (--allow-run-as-root )?(--oversubscribe )?", mpirun_fix, command)
                rc, out = devenv(inner)
                check(rc == 0, f"{name} runs (against the build tree)", out)
            else:
                skip(name, "not a command a test can run here unchanged")

# 4. The README's Python example, against the build's package.
python_dir = os.path.join(build, "python")
for block in blocks(readme, "python"):
    if not os.path.exists(os.path.join(python_dir, "blobrt", "__init__.py")):
        skip("README.md: the Python example", "the Python package was not built")
        continue
    p = subprocess.run([sys.executable, "-c", block], env=dict(env, PYTHONPATH=python_dir),
                       capture_output=True, text=True, timeout=120, cwd=build)
    if p.returncode != 0 and "No module named 'numpy'" in p.stderr:
        skip("README.md: the Python example", "numpy is not installed for " + sys.executable)
    else:
        check(p.returncode == 0, "README.md: the Python example runs", p.stdout + p.stderr)

print(f"docs: {passed} passed, {failed} failed, {skipped} skipped")
sys.exit(1 if failed else 0)
