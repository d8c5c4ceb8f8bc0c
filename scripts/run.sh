#!/usr/bin/env bash
# `make run`: the demo daemon, writing nothing outside the checkout (as redis-server with no
# config writes its dump to its working directory): the socket and the state go to .run/ in
# the checkout, or to a new directory under /tmp when that path is too long for a socket
# (sun_path holds 108 bytes). sectiond itself keeps its documented defaults: this only names
# the files. Arguments go to sectiond (make run ARGS='--config examples/sections.json').
#
# A named list (make run ARGS='--list media', or SECTIOND_LIST=media) gets the directory
# .run/media/, beside the unnamed list's, as /run/sectiond/media/ is beside /run/sectiond/:
# both can run at once, and with SECTIOND_SOCKET=.run/control.sock exported, sectionctl -l
# media finds .run/media/control.sock and sectionctl lists finds every list make run started.
set -euo pipefail
cd "$(dirname "$0")/.."
base="$PWD/.run"
list="${SECTIOND_LIST:-}"
previous=""
for argument in "$@"; do
  case "$previous" in --list) list="$argument" ;; esac
  previous="$argument"
done
dir="$base"
# sectiond checks the name (a bad one stops it with the rule); only a good one names a directory.
case "$list" in
  "") ;;
  *[!a-z0-9_-]* | [!a-z]*) ;;
  *) dir="$base/$list" ;;
esac
if [ ${#dir} -gt 90 ]; then
  base=$(mktemp -d /tmp/sectiond-run.XXXXXX)
  dir="$base${dir#"$PWD/.run"}"
fi
mkdir -p -m 0700 "$base" "$dir"
ctl=".build/debug/sectionctl${list:+ -l $list}"
cat >&2 <<TEXT
make run: ${list:+list $list: }socket $dir/control.sock (and readonly.sock), state $dir/state.json
  in another terminal:  export SECTIOND_SOCKET=$base/control.sock
                        $ctl view     (or put $PWD/.build/debug on PATH)
                        .build/debug/sectionctl lists     (every list make run started)
TEXT
exec "${BUILD_DIR:-.build/debug}/sectiond" --socket "$dir/control.sock" --state "$dir/state.json" "$@"
