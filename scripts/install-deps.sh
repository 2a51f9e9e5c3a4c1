#!/usr/bin/env bash
# Installs the Debian 12 packages abharness builds with. CUDA is expected at /usr/local/cuda (it is
# not a Debian package); without it the CPU parts still build and the GPU parts are skipped.
# python3-numpy and python3-venv: the NumPy example of Python plugins and its test.
# slurm-wlm and munge: the Slurm launcher's test (tests/integration/slurm.sh) starts its own
# munged, slurmctld and slurmd from them; nothing here configures or enables a cluster.
# help2man: the man page, made at build time. librsvg2-bin (rsvg-convert): the report test renders
# report.svg to PNG as a reader's tools would. zsh and fish: the completion test loads their
# scripts in the real shells. libjs-chart.js: Chart.js, which `abharness history` copies beside the
# page it writes (so a built abharness needs it at run time: it is in `build` too). chromium: the
# history test loads that page in headless Chromium.
# `install-deps.sh build` installs only what building abharness needs (README command 1: 43 s of
# apt on a fresh 2-core machine); no argument installs everything the tests use too.
set -euo pipefail
pkgs=(build-essential cmake pkg-config git python3 libgit2-dev libssl-dev nlohmann-json3-dev
      libcli11-dev libboost-dev libboost-filesystem-dev libvalijson-dev libjs-chart.js)
case "${1:-all}" in
  build) ;;
  all) pkgs+=(doctest-dev python3-jsonschema python3-yaml bsdutils python3-numpy python3-venv
              slurm-wlm munge help2man librsvg2-bin zsh fish chromium) ;;
  *) echo "usage: $0 [build|all]" >&2; exit 2 ;;
esac
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
