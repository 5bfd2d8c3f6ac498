#!/usr/bin/env python3
"""Writes a plugin manifest: the one template (plugins.d/plugin.in) filled with a backend's
name, library, ABI and required libraries, and its own declarations (priority, fork_safe,
depends_on_*, accelerator: backends/NAME/NAME.plugin.in, in manifest syntax).

usage: manifest.py TEMPLATE DECLARATIONS OUTPUT LIBRARY ABI REQUIRES [KEY=VALUE...]
The backend's name is the declarations file's name before ".plugin.in". KEY=VALUE lines
are added after the declarations, for what one build of a backend says and another does
not (a plugin wheel's library_path)."""
import os
import sys


def main():
    template, declarations, output, library, abi, requires = sys.argv[1:7]
    added = sys.argv[7:]
    name = os.path.basename(declarations).split(".plugin.in")[0]
    with open(declarations) as f:
        own = f.read().rstrip("\n")
    for line in added:
        key, eq, value = line.partition("=")
        if not eq:
            sys.exit(f"manifest.py: '{line}' is not KEY=VALUE")
        own += f"\n{key.strip()} = {value.strip()}"
    for key in ("name", "library", "abi", "requires"):
        if any(line.split("=")[0].strip() == key for line in own.splitlines() if not line.startswith("#")):
            sys.exit(f"{declarations}: '{key}' comes from the template, not the backend")
    with open(template) as f:
        text = f.read()
    for key, value in (("NAME", name), ("LIBRARY", library), ("ABI", abi), ("REQUIRES", requires),
                       ("DECLARATIONS", own)):
        text = text.replace("@" + key + "@", value)
    with open(output, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
