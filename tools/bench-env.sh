# Sourced by the benchmark scripts (tools/bench*.sh): go to the checkout, build it (once
# configured, `ninja` only), and set `root`, `build` (BUILD_DIR, default build) and
# `plugin_path` (the build's plugin directories, as `meson devenv` sets them).
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD_DIR:-build}"
cd "$root"
[ -f "$build/build.ninja" ] || tools/build.sh demo
ninja -C "$build" >/dev/null
plugin_path="$(meson devenv -C "$build" --dump | sed -n "s/^BLOBRT_PLUGIN_PATH=[\"']\{0,1\}\([^\"']*\).*/\1/p")"
