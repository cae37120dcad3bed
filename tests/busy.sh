#!/usr/bin/env bash
# tests/busy.sh — `make test-busy`: the doctest suites and the threads and kill tests while one
# spinner per processor holds every core, as when other work shares the machine. No test may depend
# on how busy the real machine is; run this before a stop that touches threads, timing or I/O.
#   BUILD=build bash tests/busy.sh
set -uo pipefail
BUILD=${BUILD:-build}
spinners=()
for _ in $(seq "$(nproc)"); do
  (while :; do :; done) &
  spinners+=($!)
done
trap 'kill "${spinners[@]}" 2>/dev/null' EXIT
echo "test-busy: ${#spinners[@]} spinners hold the processors"
status=0
"$BUILD/qkv_framework_tests" || status=1
"$BUILD/qkv_tests" || status=1
QKV=$BUILD/qkv bash tests/cli/threads.sh || status=1
QKV=$BUILD/qkv bash tests/cli/kills.sh || status=1
[ "$status" -eq 0 ] && echo "test-busy: every suite passed" || echo "test-busy: a suite failed (see above)"
exit "$status"
