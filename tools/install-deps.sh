#!/usr/bin/env bash
# Install the Debian 12 packages megaview builds against (the CUDA Toolkit is not one of them:
# the Makefile looks for nvcc and says where to get it).
#
# Quiet and exit 0 when everything is installed. Otherwise installs only the missing packages with
# apt-get, as root or through passwordless sudo; failing both, prints the exact command to run and
# exits 1.
#
# Environment:
#   MV_EXTRA_PACKAGES  more package names (space or comma separated) to require
#   MV_DEPS_DRY_RUN=1  print the commands that would be run instead of running them (exit 0)
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive

packages=(
  libglfw3-dev libimgui-dev libstb-dev libglm-dev python3-glad nlohmann-json3-dev libcli11-dev
  libspdlog-dev libtinyexr-dev libtbb-dev libteem-dev libnifti2-dev mricron-data libgtest-dev cmake g++ xvfb xauth pkg-config
  python3-matplotlib
)
if [[ -n "${MV_EXTRA_PACKAGES:-}" ]]; then
  read -r -a extra <<< "${MV_EXTRA_PACKAGES//,/ }"
  packages+=("${extra[@]}")
fi

say() { printf 'install-deps: %s\n' "$*" >&2; }

if ! command -v dpkg-query >/dev/null 2>&1; then
  say "dpkg-query not found: this script knows Debian/Ubuntu only; skipping package checks."
  say "Make sure the equivalents of these are installed: ${packages[*]}"
  exit 0
fi

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done
((${#missing[@]} == 0)) && exit 0

apt_opts=(-y --no-install-recommends)
say "missing Debian packages: ${missing[*]}"

if [[ "$(id -u)" == 0 ]]; then
  prefix=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  prefix=(sudo -n env DEBIAN_FRONTEND=noninteractive)
else
  say "not root and no passwordless sudo; install them with:"
  printf '  sudo apt-get update && sudo apt-get install %s %s\n' "${apt_opts[*]}" "${missing[*]}" >&2
  exit 1
fi

run() {
  if [[ "${MV_DEPS_DRY_RUN:-0}" != 0 ]]; then
    say "dry run, would run: $*"
  else
    say "running: $*"
    "$@" < /dev/null
  fi
}

run "${prefix[@]}" apt-get update -q ||
  { say "apt-get update failed"; exit 1; }
run "${prefix[@]}" apt-get install -q "${apt_opts[@]}" "${missing[@]}" ||
  { say "apt-get install failed; install these by hand: ${missing[*]}"; exit 1; }
[[ "${MV_DEPS_DRY_RUN:-0}" != 0 ]] || say "installed: ${missing[*]}"
