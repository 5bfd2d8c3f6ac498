"""No code outside backends/ and tests/ decides anything by a backend's name (issue 28:
"the core knows no backend by name"): it asks the device's description instead (memory
model, native device type, addressable handles, views). A name in a comment, a docstring or
an example id ("blis:0") is fine; a comparison with one is what this finds."""
import pathlib
import re
import sys

ROOT = pathlib.Path(sys.argv[1])
NAMES = r"(?:cuda|opencl|blis)"
QUOTED = rf"[\"']{NAMES}(?::\d*)?[\"']"
# x == "cuda", "cuda" != x, .compare(0, 6, "opencl"), startswith("cuda"), find("opencl"),
# `if x in ("cuda", ...)`, case "cuda":
PATTERNS = [re.compile(p, re.IGNORECASE) for p in (
    rf"(?:==|!=)\s*{QUOTED}",
    rf"{QUOTED}\s*(?:==|!=)",
    rf"\b(?:compare|startswith|endswith|rfind|find|starts_with|ends_with)\s*\([^)]*{QUOTED}",
    rf"\bif\b.*\bin\s*[\(\[\{{]\s*{QUOTED}",
    rf"\bcase\s+{QUOTED}",
)]
DIRS = ["core", "blobrt-dist", "blobrt-caffe", "python", "cli", "report", "conformance", "tools", "examples", "benchmarks", "cmake"]
# The GPU bundle's runner is a test harness (as tests/ is): it reports per backend on purpose.
EXCLUDED = {"tools/gpu-bundle"}
SUFFIXES = {".cpp", ".hpp", ".h", ".cu", ".py", ".pyi", ".in", ".cmake", ".sh"}


def strip_comments(line: str, suffix: str) -> str:
    marker = "#" if suffix in {".py", ".pyi", ".sh", ".cmake"} else "//"
    return line.split(marker, 1)[0]


found = []
scanned = 0
for top in DIRS:
    for path in sorted((ROOT / top).rglob("*")):
        relative = path.relative_to(ROOT).as_posix()
        if path.suffix not in SUFFIXES or not path.is_file() or any(relative.startswith(e) for e in EXCLUDED):
            continue
        scanned += 1
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            code = strip_comments(line, path.suffix)
            if any(p.search(code) for p in PATTERNS):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")

# The check must be able to fail: it finds the comparison this project once had.
assert any(p.search('d.backend == "cuda"') for p in PATTERNS)
assert any(p.search('id.compare(0, 6, "opencl")') for p in PATTERNS)
assert any(p.search('if name in ("blis", "host"):') for p in PATTERNS)
assert not any(p.search('for lib in ("blis", "openblas"):') for p in PATTERNS)
if scanned < 50:
    sys.exit(f"backend_names: scanned only {scanned} files under {ROOT}: wrong source root?")
if found:
    print("A backend's name is tested outside backends/ and tests/ (ask the device's description):")
    print("\n".join(found))
    sys.exit(1)
print(f"backend_names: {scanned} files, no backend name tested outside backends/ and tests/")
