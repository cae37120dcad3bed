#!/usr/bin/env bash
# tests/cli/threads.sh — every command takes --threads; QKV_THREADS sets the default, --threads
# overrides it, and a bad value fails with one line; results do not depend on the count. Run by
# `make test` (a few seconds).
set -u
QKV=${QKV:-build/qkv}
source "$(dirname "$0")/lib.sh"

commands=$("$QKV" --help | awk '/^Subcommands:/ {on = 1; next} on && NF {print $1}')
[ "$(wc -w <<<"$commands")" -ge 9 ] && pass || fail "qkv --help lists only: $commands"
for cmd in $commands; do
  "$QKV" "$cmd" --help 2>&1 | grep -qE -- '--threads N .*0 to 256' && pass || fail "qkv $cmd has no --threads 0-256"
  expect_error "qkv $cmd --threads -1" "--threads" "$QKV" "$cmd" --threads -1
done

# bench --format json reports the thread count it ran with
threads_used() { "$QKV" bench --size toy --steps 1 --format json "$@" 2>/dev/null | sed -n 's/^  "threads": \([0-9]*\),$/\1/p'; }
used=$(QKV_THREADS=3 threads_used)
[ "$used" = 3 ] && pass || fail "QKV_THREADS=3: bench ran on '$used' threads"
used=$(QKV_THREADS=3 threads_used --threads 0)
[ "$used" = 3 ] && pass || fail "QKV_THREADS=3 --threads 0: bench ran on '$used' threads"
used=$(QKV_THREADS=3 threads_used --threads 2)
[ "$used" = 2 ] && pass || fail "--threads 2 with QKV_THREADS=3: bench ran on '$used' threads"
per_core=$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc)  # nproc reads OMP_NUM_THREADS
used=$(QKV_THREADS= threads_used)
[ "$used" = "$per_core" ] && pass || fail "an empty QKV_THREADS: bench ran on '$used' threads, not one per core ($per_core)"
used=$(QKV_THREADS=0 threads_used)
[ "$used" = "$per_core" ] && pass || fail "QKV_THREADS=0: bench ran on '$used' threads, not one per core ($per_core)"
for bad in two -1 257 2.5; do
  for cmd in example bench; do
    QKV_THREADS=$bad expect_error "QKV_THREADS=$bad qkv $cmd" \
      "^qkv: error: QKV_THREADS must be a whole number from 0 to 256 \(0: one per core\), got '$bad'$" "$QKV" "$cmd"
  done
done

# the same output on 1 and 3 threads, through the commands that compute
ckpt=tests/fixtures/twin_model.safetensors
for n in 1 3; do
  "$QKV" example --threads "$n" >"$work/example_$n" 2>&1
  "$QKV" attend --threads "$n" --checkpoint "$ckpt" --format json "money bank grows" >"$work/attend_$n" 2>&1
  QKV_THREADS=$n "$QKV" translate --checkpoint "$ckpt" "the exam was a piece of cake" >"$work/translate_$n" 2>&1
done
for what in example attend translate; do
  [ -s "$work/${what}_1" ] && cmp -s "$work/${what}_1" "$work/${what}_3" && pass ||
    fail "qkv $what gives different output on 1 and 3 threads: $(diff "$work/${what}_1" "$work/${what}_3" | head -3)"
done

echo "threads checks: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
