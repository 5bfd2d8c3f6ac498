#!/usr/bin/env python3
"""After `auditwheel repair`: a plugin manifest's `requires` names the shared libraries a node
must provide for the plugin (checked before it is loaded, so a missing one is a clear reason).
The repaired wheel carries some of them itself (grafted into <package>.libs/ under new names,
the plugin's RPATH pointing there), and the node need not have those: they are dropped from
`requires`. What the wheel does not carry stays.

usage: wheel_manifests.py REPAIRED_WHEEL OUT_DIR
Unpacks the wheel, rewrites its manifests, packs it again into OUT_DIR (`wheel pack`, which
writes RECORD anew) and prints what changed."""
from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile


def soname_stem(name: str) -> str:
    """libblis.so.4 -> libblis; auditwheel's graft libblis-1a2b3c4d.so.4 -> libblis."""
    base = name.split(".so")[0]
    return re.sub(r"-[0-9a-f]{8}$", "", base)


def main() -> None:
    wheel, out = sys.argv[1:3]
    with tempfile.TemporaryDirectory() as work:
        subprocess.run([sys.executable, "-m", "wheel", "unpack", "-d", work, wheel], check=True,
                       stdout=subprocess.DEVNULL)
        (top,) = glob.glob(os.path.join(work, "*"))
        grafted = {soname_stem(os.path.basename(p)) for p in glob.glob(os.path.join(top, "*.libs", "*.so*"))}
        # os.walk, not glob: meson-python's library directory (.blobrt.mesonpy.libs) is hidden.
        manifests = [os.path.join(d, f) for d, _, files in os.walk(top) for f in files if f.endswith(".plugin")]
        for manifest in manifests:
            with open(manifest) as f:
                lines = f.read().splitlines()
            for i, line in enumerate(lines):
                key, _, value = line.partition("=")
                if key.strip() != "requires":
                    continue
                names = value.split()
                kept = [n for n in names if soname_stem(n) not in grafted]
                lines[i] = "requires = " + " ".join(kept)
                dropped = sorted(set(names) - set(kept))
                print(f"   {os.path.basename(manifest)}: requires {' '.join(kept) or '(nothing)'}"
                      f"{'; carried by the wheel: ' + ' '.join(dropped) if dropped else ''}")
            with open(manifest, "w") as f:
                f.write("\n".join(lines) + "\n")
        os.makedirs(out, exist_ok=True)
        subprocess.run([sys.executable, "-m", "wheel", "pack", "-d", out, top], check=True,
                       stdout=subprocess.DEVNULL)


if __name__ == "__main__":
    main()
