#!/usr/bin/env bash
# README command 2: installs what the project needs, builds it twice and runs the
# whole test suite:
#   1. gcc, RelWithDebInfo: every unit test;
#   2. clang with AddressSanitizer + UndefinedBehaviorSanitizer (Debug, at -O1 as
#      the ASan documentation advises: -O0 made the lossy-engine tests 100x
#      slower than release; line tables only, which is what ASan's reports
#      need), every unit test again, plus each libFuzzer target for a bounded,
#      seeded run (UET_FUZZ_SECONDS, default 10 s each).
# Both with warnings as errors (UET_WERROR=ON; a plain cmake build leaves it off).
# Test files compile as unity builds at -O0 in both (tests/CMakeLists.txt), which
# keeps the whole run near 15 minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh

jobs=$(nproc)
fuzz_seconds=${UET_FUZZ_SECONDS:-10}

echo "== build 1/2: gcc release"
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DUET_BUILD_TESTS=ON \
  -DUET_WERROR=ON >/dev/null
cmake --build build/release -j "$jobs"
ctest --test-dir build/release --output-on-failure -j "$jobs"

echo "== gcc release done at ${SECONDS} s"
echo "== build 2/2: clang ASan+UBSan, with fuzzers (${fuzz_seconds} s each)"
cmake -S . -B build/asan -G Ninja -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_C_FLAGS_DEBUG="-gline-tables-only -O1" \
  -DCMAKE_CXX_FLAGS_DEBUG="-gline-tables-only -O1" \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DUET_SANITIZE=ON -DUET_FUZZ=ON -DUET_BUILD_TESTS=ON -DUET_FUZZ_SECONDS="$fuzz_seconds" \
  -DUET_WERROR=ON >/dev/null
cmake --build build/asan -j "$jobs"
ctest --test-dir build/asan --output-on-failure -j "$jobs"
echo "== all passed in ${SECONDS} s"
