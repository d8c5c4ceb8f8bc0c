#!/usr/bin/env bash
# `make web`: sectiond on the demo list and its web page, in the foreground, until Ctrl-C.
#
#   scripts/web.sh [SECTIOND-ARGUMENTS...]     e.g. --config examples/sections.json
#   WEB_SOCKET=.run/control.sock scripts/web.sh   # the page of a daemon that runs already
#
# Environment:
#   WEB_SOCKET     a running daemon's control socket: no daemon is started, the page shows
#                  that one (its read-only socket, named as sectiond names it, with WEB_READONLY)
#   WEB_PORT       the page's port on 127.0.0.1 (default 8047, the system unit's)
#   WEB_READONLY   1: the page uses the read-only socket, as sectiond-web.service does by default
#   WEB_OPERATE    1: a tap opens or closes a section and the page may do nothing more: the
#                  daemon started here grants you (the page's bridge runs as you) the operate
#                  level on its control socket (--access), as sectiond-web.service's operate
#                  drop-in and rule do; with WEB_SOCKET, that daemon's own rules decide
#   BUILD_DIR      the binaries (default: a debug build made here)
#
# Builds the binaries, starts sectiond on sockets in a fresh temporary directory (its state
# stays there and goes with it) and websocketd serving web/ with `sectionctl pipe` behind every
# WebSocket, allowing only the page's own origins, then prints the address to open.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
port="${WEB_PORT:-8047}"

scripts/deps.sh --web
if [ -z "${BUILD_DIR:-}" ]; then
  swift build >/dev/null
  BUILD_DIR="$(swift build --show-bin-path)"
fi
BUILD_DIR="$(cd "$BUILD_DIR" && pwd)"
if ss -Hltn "sport = :$port" 2>/dev/null | grep -q .; then
  echo "web.sh: port $port is in use (sectiond-web.service?); choose another: WEB_PORT=8090 make web" >&2
  exit 1
fi

dir="$(mktemp -d /tmp/sectiond-web.XXXXXX)"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 0' INT TERM

if [ -n "${WEB_SOCKET:-}" ]; then
  control="$(cd "$(dirname "$WEB_SOCKET")" && pwd)/$(basename "$WEB_SOCKET")"
  # The read-only socket beside it, as sectiond names it (SocketNames).
  case "$control" in
  */control.sock) readonly="${control%/control.sock}/readonly.sock" ;;
  *.sock) readonly="${control%.sock}.readonly.sock" ;;
  *) readonly="$control.readonly" ;;
  esac
  "$BUILD_DIR/sectionctl" --socket "$control" ping >/dev/null ||
    { echo "web.sh: no daemon answers on WEB_SOCKET=$WEB_SOCKET" >&2; exit 1; }
else
  control="$dir/control.sock" readonly="$dir/readonly.sock"
  access=()
  if [ "${WEB_OPERATE:-0}" = 1 ]; then
    if [ "$(id -u)" -eq 0 ]; then
      echo "web.sh: WEB_OPERATE=1 grants the operate level to you, the page's bridge; root always edits (sectiond(8), ACCESS): run make web as another user" >&2
      exit 2
    fi
    echo "user $(id -u) operate" >"$dir/access.conf"
    access=(--access "$dir/access.conf")
  fi
  "$BUILD_DIR/sectiond" --socket "$control" --readonly-socket "$readonly" --state "$dir/state.json" \
    "${access[@]}" "$@" &
  pids+=($!)
  for _ in $(seq 100); do [ -S "$readonly" ] && break; sleep 0.05; done
  [ -S "$readonly" ] || { echo "web.sh: sectiond did not start" >&2; exit 1; }
fi

if [ "${WEB_READONLY:-0}" = 1 ]; then
  pipe=(--readonly-socket "$readonly")
  kind="read-only socket: the page shows changes and cannot make them"
elif [ "${WEB_OPERATE:-0}" = 1 ]; then
  pipe=(--socket "$control")
  kind="control socket at the operate level: a tap opens or closes a section for everyone; edits are refused"
else
  pipe=(--socket "$control")
  kind="control socket: a tap opens or closes a section for everyone"
fi
# websocketd runs as sectiond-web.service runs it (the same origin list, headers and --binary),
# with this checkout's page and binaries in place of the installed ones.
unit="$(sed -n 's/^ExecStart=//p' systemd/sectiond-web.service.in)"
unit="${unit//@DATADIR@\/sectiond\/web/$(printf %q "$root/web")}"
unit="${unit//@BINDIR@\/sectionctl/$(printf %q "$BUILD_DIR/sectionctl")}"
unit="${unit//\$\{SECTIOND_WEB_PORT\}/$port}"
unit="${unit//--socket \$\{SECTIOND_WEB_SOCKET\}/$(printf '%q ' "${pipe[@]}")}"
eval "command=($unit)"
"${command[@]}" &
pids+=($!)
for _ in $(seq 100); do ss -Hltn "sport = :$port" | grep -q . && break; sleep 0.05; done

cat <<EOF

  sectiond's page: http://127.0.0.1:$port/   (or http://localhost:$port/)
  ($kind)

  Change the list from a terminal and watch the page follow:
    $BUILD_DIR/sectionctl --socket $control toggle 0
    $BUILD_DIR/sectionctl --socket $control $([ "${WEB_OPERATE:-0}" = 1 ] &&
  echo "add news Latest news   # refused: you, like the page, have the operate level here" ||
  echo "add news Latest news")

  Ctrl-C stops websocketd$([ -n "${WEB_SOCKET:-}" ] || echo " and sectiond").
EOF
# Either one ending ends both.
wait -n "${pids[@]}"
