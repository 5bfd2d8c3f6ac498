#!/usr/bin/env bash
# Stage packages: the Debian packages built from debian/ (tools/build-debs.sh: dpkg-buildpackage,
# lintian clean of errors), then blobrt installed as nodes get it, in a clean Debian 12 root:
# the portable wheel (built by the wheel stage) in a venv, the CPU node's .debs, the GPU
# node's set added (tests/outside/node_install_test.py, docs/packaging.md).
source "$(dirname "$0")/lib.sh"
needs deps
needs wheel
status=0
debs="$(realpath -m "$build-debs")"
wheels="$(realpath -m "$build-wheels")"
start=$SECONDS
# Debian's flags (dpkg-buildflags) are shared with no other stage: no ccache.
if CCACHE_DISABLE=1 compiling packages tools/build-debs.sh "$debs"; then
  echo "== debs: $((SECONDS - start)) s"
  echo "== node installs in a clean Debian 12 root (wheel, CPU node, GPU node's set)"
  python3 "$root/tests/outside/node_install_test.py" "$root" "$debs" "$wheels" \
    "$(realpath -m "$build-node-root")" "$junit_dir/node-install.junit.xml" || status=1
else
  status=1
fi
stage_summary "$status" node-install
