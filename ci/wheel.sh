#!/usr/bin/env bash
# Stage wheel: the portable wheel built (tools/build-wheels.sh: `pip wheel .`, auditwheel
# repair) and installed into a fresh virtual environment, the pytest suite run against the
# installed package (not the build tree). The packages stage installs the same wheel on a
# clean Debian root.
source "$(dirname "$0")/lib.sh"
needs deps
echo "== Python package: the manylinux wheel into a fresh virtual environment, pytest against it"
status=0
venv="$(realpath -m "$build-venv")"
rm -rf "$venv" "$junit_dir/python-wheel.junit.xml"
python3 -m venv "$venv"
# JAX (CPU wheels on PyPI) is a third-party DLPack consumer for the tests; PyTorch's PyPI
# wheels pull in gigabytes of CUDA libraries, so its test runs only where it is installed.
# A failed JAX install only skips those tests (with the reason), it does not fail the run.
"$venv/bin/pip" install -q jax || echo "JAX could not be installed: its DLPack tests are skipped"
wheels="$(realpath -m "$build-wheels")"
# meson-python's build directory in the tree, beside the build stage's: the same relative
# source paths, so ccache gives the wheel the objects the build stage compiled.
if BLOBRT_WHEEL_BUILD_DIR="$root/$build-wheel-meson" compiling wheel tools/build-wheels.sh "$wheels" && "$venv/bin/pip" install -q numpy pytest &&
   "$venv/bin/pip" install -q "$wheels"/blobrt-*manylinux*.whl; then
  (cd "$venv" && env -u BLOBRT_PLUGIN_PATH -u BLOBRT_PLUGIN_SYSTEM_PATH \
     BLOBRT_TEST_DATA_DIR="$root/tests/data" BLOBRT_EXPECT_PACKAGED_PLUGINS=1 \
     "$venv/bin/python" -m pytest -q -p no:cacheprovider --junitxml "$junit_dir/python-wheel.junit.xml" \
     "$root/tests/python") || status=1
else
  echo "the wheel could not be built or installed"
  status=1
fi
stage_summary "$status" python-wheel
