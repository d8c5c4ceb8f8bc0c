#!/usr/bin/env bash
# `make run`: the demo daemon, writing nothing outside the checkout (as redis-server with no
# config writes its dump to its working directory): the socket and the state go to .run/ in
# the checkout, or to a new directory under /tmp when that path is too long for a socket
# (sun_path holds 108 bytes). sectiond itself keeps its documented defaults: this only names
# the files. Arguments go to sectiond (make run ARGS='--config examples/sections.json').
set -euo pipefail
cd "$(dirname "$0")/.."
dir="$PWD/.run"
if [ ${#dir} -gt 90 ]; then dir=$(mktemp -d /tmp/sectiond-run.XXXXXX); fi
mkdir -p -m 0700 "$dir"
cat >&2 <<TEXT
make run: socket $dir/control.sock (and readonly.sock), state $dir/state.json
  in another terminal:  export SECTIOND_SOCKET=$dir/control.sock
                        .build/debug/sectionctl view     (or put $PWD/.build/debug on PATH)
TEXT
exec "${BUILD_DIR:-.build/debug}/sectiond" --socket "$dir/control.sock" --state "$dir/state.json" "$@"
