# Sourced by the Tests/System/*.sh wrappers (scripts/test.sh runs Tests/System/*.sh, not this folder).

# run_bounded LIMIT NAME COMMAND...: runs COMMAND under timeout(1) so that a hung test fails
# CI instead of stalling it; one that overstays LIMIT seconds is reported in the suites' own
# "N passed, N failed" form. Returns COMMAND's status, or 1 on a timeout.
run_bounded() {
  local limit=$1 name=$2
  shift 2
  timeout --kill-after=10 "$limit" "$@"
  local status=$?
  if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
    echo "FAIL $name did not finish within $limit s"
    echo "0 passed, 1 failed"
    return 1
  fi
  return "$status"
}
