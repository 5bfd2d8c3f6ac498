#!/usr/bin/env python3
"""Counts the individual test cases in JUnit logs (meson's, GoogleTest's) and prints one
closing line, "tests: N passed, N failed, N skipped". Exits 1 if any failed."""
import re
import sys
import xml.etree.ElementTree as ET

# Characters XML 1.0 forbids (a test's captured output may hold terminal escapes).
_INVALID = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")


def parse(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return ET.fromstring(_INVALID.sub("?", f.read()))


def main(paths):
    passed = failed = skipped = 0
    cases = [c for path in paths for c in parse(path).iter("testcase")]
    for case in cases:
        if case.find("failure") is not None or case.find("error") is not None:
            failed += 1
        elif case.find("skipped") is not None:
            skipped += 1
        else:
            passed += 1
    print(f"tests: {passed} passed, {failed} failed, {skipped} skipped")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
