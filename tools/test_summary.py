#!/usr/bin/env python3
"""Counts the individual test cases in JUnit logs (meson's, GoogleTest's) and prints one
closing line, "tests: N passed, N failed, N skipped". Exits 1 if any failed."""
import sys
import xml.etree.ElementTree as ET


def main(paths):
    passed = failed = skipped = 0
    cases = [c for path in paths for c in ET.parse(path).getroot().iter("testcase")]
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
