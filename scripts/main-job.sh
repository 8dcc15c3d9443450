#!/usr/bin/env bash
# README command 1: installs what the project needs, builds it and runs the main job.
#
# Until the libfabric provider exists (issue 5) the main job decodes the sample
# capture of every UET header type with uet-decode: the one-line summaries, then
# the full field trees.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh

cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DUET_BUILD_TESTS=OFF >/dev/null
cmake --build build/release -j "$(nproc)" --target uet-decode

echo "== uet-decode tests/data/sample.pcap"
build/release/apps/uet-decode tests/data/sample.pcap
echo
echo "== uet-decode -V tests/data/sample.pcap"
build/release/apps/uet-decode -V tests/data/sample.pcap
