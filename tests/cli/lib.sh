# tests/cli/lib.sh — shared by the command-line test scripts (tests/cli/run.sh,
# tests/gpu/emu/cli_emu.sh): a scratch directory $work, pass/fail counters and the error checks.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0
failed=0

pass() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL: $*"; }

# expect_error NAME PATTERN CMD... : non-zero exit, exactly one stderr line, matching PATTERN.
expect_error() {
  local name=$1 pattern=$2
  shift 2
  "$@" >"$work/out" 2>"$work/err"
  local rc=$?
  local lines
  lines=$(wc -l <"$work/err")
  if [ "$rc" -eq 0 ]; then fail "$name: exit 0 (expected non-zero)"; return; fi
  if [ "$lines" -ne 1 ]; then fail "$name: $lines stderr lines (expected 1): $(cat "$work/err")"; return; fi
  if ! grep -qE -- "$pattern" "$work/err"; then fail "$name: stderr '$(cat "$work/err")' does not match '$pattern'"; return; fi
  pass
}

# expect_absent NAME PATH : a failed command left nothing at PATH.
expect_absent() {
  local name=$1 path=$2
  if [ -e "$path" ]; then fail "$name: $path exists after a failed command"; else pass; fi
}
