#!/usr/bin/env bash
# Builds blobrt's Debian packages from the tree with Debian's own tooling (dpkg-buildpackage
# over debian/: debhelper over meson) and checks them with lintian (docs/packaging.md).
#   tools/build-debs.sh OUT_DIR
# The tree as git lists it is copied to OUT_DIR/src (the build writes beside debian/ and
# puts the packages in the parent directory), the .debs land in OUT_DIR, lintian's report
# in OUT_DIR/lintian.txt. Without NVIDIA's toolkit in /usr/local/cuda the CUDA packages are
# left out (build profile pkg.blobrt.nocuda); DEB_BUILD_PROFILES may name it by hand too.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="$(realpath -m "${1:?usage: tools/build-debs.sh OUT_DIR}")"

profiles="${DEB_BUILD_PROFILES:-}"
if [ ! -x /usr/local/cuda/bin/nvcc ]; then
  profiles="${profiles:+$profiles }pkg.blobrt.nocuda"
fi

# OUT_DIR is emptied first: never the tree itself or a directory holding a checkout.
if [ "$out" = "$root" ] || [ -e "$out/.git" ] || [ "$out" = / ]; then
  echo "$0: $out holds a checkout; give a build directory (e.g. build-$(basename "$0" .sh | sed 's/build-//'))" >&2
  exit 2
fi
# What this script runs, checked before anything is emptied or built: one line naming
# what is missing and where it comes from (ci/deps.sh installs the packages stage's tools).
missing=()
for tool in git dpkg-buildpackage dh lintian; do command -v "$tool" >/dev/null || missing+=("$tool"); done
if ((${#missing[@]})); then
  list="$(printf '%s, ' "${missing[@]}")"
  what=$([ ${#missing[@]} -eq 1 ] && echo "is missing; install it" || echo "are missing; install them")
  echo "build-debs.sh: ${list%, } $what with bash ci/deps.sh (or apt-get install git dpkg-dev debhelper dh-python devscripts lintian fakeroot)" >&2
  exit 1
fi
rm -rf "$out"
mkdir -p "$out/src"
# The files a clean clone has (tracked and not ignored), not build directories.
(cd "$root" && git ls-files -z --cached --others --exclude-standard) |
  (cd "$root" && xargs -0 cp --parents -a -t "$out/src" 2>/dev/null || true)
# Debian's python3 must have nanobind (PyPI; Debian 12 has none): it is compiled into the
# extension, so python3-blobrt depends on nothing of it.
if ! /usr/bin/python3 -c 'import nanobind' 2>/dev/null; then
  echo "tools/build-debs.sh: Debian's python3 has no nanobind (/usr/bin/python3 -m pip install --break-system-packages nanobind)" >&2
  exit 1
fi

echo "== dpkg-buildpackage${profiles:+ (profiles: $profiles)}"
start=$SECONDS
if ! (cd "$out/src" && DEB_BUILD_PROFILES="$profiles" DEB_BUILD_OPTIONS="parallel=$(nproc) ${DEB_BUILD_OPTIONS:-}" \
        dpkg-buildpackage -b -uc -us > "$out/build.log" 2>&1); then
  grep -B2 -A20 -m3 -e '^FAILED' -e 'dh_.*: error' -e '^dpkg-.*: error' "$out/build.log" || tail -40 "$out/build.log"
  echo "dpkg-buildpackage failed (all of it: $out/build.log)"
  exit 1
fi
echo "   built in $((SECONDS - start)) s:"
(cd "$out" && for deb in *.deb; do printf '   %-60s %6d KiB\n' "$deb" $(( $(stat -c %s "$deb") / 1024 )); done)

echo "== lintian"
# Fails on an error tag, and on lintian failing to run at all (never read as "0 errors").
status=0
(cd "$out" && lintian --fail-on error --tag-display-limit 0 *.changes > lintian.txt 2>&1) || status=$?
errors=$(grep -c '^E: ' "$out/lintian.txt" || true)
warnings=$(grep -c '^W: ' "$out/lintian.txt" || true)
echo "   $errors errors, $warnings warnings ($out/lintian.txt)"
grep '^[EW]: ' "$out/lintian.txt" | sed -n 's/^/   /; 1,40p' || true
if [ "$status" -ne 0 ]; then
  [ "$errors" -gt 0 ] || tail -20 "$out/lintian.txt"
  echo "lintian failed (exit $status)"
  exit 1
fi
