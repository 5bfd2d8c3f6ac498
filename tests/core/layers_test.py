#!/usr/bin/env python3
"""The layer rules of docs/architecture.md ("Layers") hold for every #include in core/src.
Each layer is its own static library with only its allowed include directories
(core/meson.build), so most wrong arrows fail to compile; this catches what include paths
cannot: a public header from above the layer (blobrt/runtime.hpp is on every layer's path)
and a relative path around the restricted directories ("../plugins/loader.hpp").
usage: layers_test.py SOURCE_ROOT        ("layers: N files, N violations")"""
import os
import re
import sys

root = os.path.abspath(sys.argv[1])
src = os.path.join(root, "core", "src")

# layer: (its own folders and the others it may include from, public headers it may not include)
ABOVE_BLOB = {"blobrt/blob.hpp", "blobrt/syncedmem.hpp", "blobrt/io.hpp", "blobrt/caffe_compat.hpp"}
RULES = {
    "memory": ({"memory", "device", "common"}, {"blobrt/runtime.hpp"}),
    "device": ({"device", "plugins/text", "common"}, {"blobrt/runtime.hpp"} | ABOVE_BLOB),
    "plugins": ({"plugins", "plugins/text", "common"}, {"blobrt/runtime.hpp"} | ABOVE_BLOB),
}
GENERATED = {"blobrt.pb.h": {"memory"}, "blobrt_config.h": {"memory", "device", "plugins"}}
include = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)

files = violations = 0
for layer, (allowed, forbidden) in RULES.items():
    for folder, _, names in os.walk(os.path.join(src, layer)):
        for name in sorted(names):
            if not name.endswith((".cpp", ".hpp", ".h")):
                continue
            path = os.path.join(folder, name)
            files += 1
            with open(path, encoding="utf-8") as f:
                text = f.read()
            for target in include.findall(text):
                where = os.path.relpath(path, root)
                if target.startswith(("blobrt/", "blobrt_kernels/")):
                    bad = target in forbidden or target.startswith("blobrt/caffe/") and layer != "memory"
                    why = f"{target} is above the {layer} layer"
                elif ".." in target.split("/"):
                    bad, why = True, f"a relative path around the layer's include directories: {target}"
                elif target in GENERATED:
                    bad, why = layer not in GENERATED[target], f"{target} is not for the {layer} layer"
                else:
                    found = [d for d in sorted(allowed) if os.path.isfile(os.path.join(src, d, target))]
                    bad = not found
                    why = f"{target} is not in {layer}'s allowed folders ({', '.join(sorted(allowed))})"
                if bad:
                    violations += 1
                    print(f"FAIL: {where}: {why}")
print(f"layers: {files} files, {violations} violations")
sys.exit(1 if violations or not files else 0)
