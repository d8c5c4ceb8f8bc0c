# Sourced by the shell suites that print one line per check (systemd-units.sh, recipes.sh):
# pass/fail count and print, expect and contains compare, start runs a daemon, finish prints "N passed, N failed" and exits 1 on a failure,
# install_missing installs the Debian packages of the commands a suite needs. Sourced from
# the repository's root; makes BUILD_DIR (default .build/debug) an absolute path.

BUILD_DIR="${BUILD_DIR:-.build/debug}"
case "$BUILD_DIR" in /*) ;; *) BUILD_DIR="$PWD/$BUILD_DIR" ;; esac

passed=0
failed=0
pass() { passed=$((passed + 1)); printf 'PASS %s\n' "$1"; }
fail() { # fail NAME [DETAIL]: DETAIL is printed indented under the FAIL line
  failed=$((failed + 1))
  printf 'FAIL %s\n' "$1"
  [ $# -ge 2 ] && [ -n "$2" ] && printf '%s\n' "$2" | sed 's/^/     | /'
  return 0
}
finish() {
  printf '%d passed, %d failed\n' "$passed" "$failed"
  [ "$failed" -eq 0 ]
  exit
}

# install_missing COMMAND:PACKAGE...: apt-get installs the packages of the commands not on
# PATH (one apt-get update, only if something is missing); a failure ends the suite.
install_missing() {
  local pair missing=() sudo=()
  for pair in "$@"; do
    command -v "${pair%%:*}" >/dev/null 2>&1 || missing+=("${pair#*:}")
  done
  [ ${#missing[@]} -gt 0 ] || return 0
  mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u)
  echo "installing: ${missing[*]}"
  [ "$(id -u)" = 0 ] || sudo=(sudo)
  if "${sudo[@]}" apt-get update -qq >/dev/null &&
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends \
      "${missing[@]}" >/dev/null; then
    pass "installed packages: ${missing[*]}"
  else
    fail "installing packages: ${missing[*]}"
    finish
  fi
}

expect() { # NAME EXPECTED ACTUAL
  if [ "$2" = "$3" ]; then pass "$1"; else fail "$1" "expected: $2"$'\n'"got:      $3"; fi
}
contains() { # NAME NEEDLE TEXT
  case "$3" in *"$2"*) pass "$1" ;; *) fail "$1" "no '$2' in: $3" ;; esac
}

# start NAME ARGS...: sectiond on $dir/NAME.sock (the suite's own $dir; its read-only socket
# by its default name), logging to $dir/NAME.log; its pid joins the suite's $pids.
start() {
  local name=$1
  shift
  "$BUILD_DIR/sectiond" --socket "$dir/$name.sock" "$@" 2>>"$dir/$name.log" &
  pids+=($!)
  for _ in $(seq 200); do [ -S "$dir/$name.sock" ] && return 0; sleep 0.05; done
  fail "sectiond $name did not start" "$(cat "$dir/$name.log")"
}

# scratch PREFIX: a new directory /tmp/PREFIX.XXXXXX in $dir and an empty list $pids of
# background processes, all gone on exit (the tmux servers of lib/tmux.sh stopped, if it was
# sourced; each pid killed and waited for; the directory removed).
scratch() {
  dir=$(mktemp -d "/tmp/$1.XXXXXX")
  pids=()
  trap 'declare -F tmux_stop_all >/dev/null && tmux_stop_all
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done; rm -rf "$dir"' EXIT
}
