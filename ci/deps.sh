#!/usr/bin/env bash
# Stage deps: every package the other stages use, on a fresh Debian 12 (as root; a no-op
# when all are there). The only stage that installs anything into the system.
source "$(dirname "$0")/lib.sh"
echo "== deps: Debian packages and PyPI tools (tools/install-deps.sh)"
extras=()
# Beyond what building and testing the tree needs (install-deps.sh's own list), the test
# stages' tools: clang for the fuzzers, valgrind, mmdebstrap for the clean-root stage.
# `tools/build.sh demo` (BLOBRT_CI_TESTS=disabled) leaves them out.
[ "${BLOBRT_CI_TESTS:-enabled}" = disabled ] || extras=(clang valgrind mmdebstrap)
"$root/tools/install-deps.sh" "${extras[@]}"
