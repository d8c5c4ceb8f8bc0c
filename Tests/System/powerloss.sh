#!/usr/bin/env bash
# Power cuts with LazyFS (see powerloss.py): builds LazyFS from the shared third-party folder
# beside the checkout (LAZYFS_SRC, default ../shared/third_party/lazyfs from the repository's
# root) and runs the rounds. Skips, saying why, when that folder, /dev/fuse or root is missing.
# Ends with "N passed, N failed"; exits 1 on any failure.
set -uo pipefail
root="$(git -C "$(dirname "${BASH_SOURCE[0]}")" rev-parse --show-toplevel 2>/dev/null)" ||
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
src="${LAZYFS_SRC:-$root/../shared/third_party/lazyfs}"
skip() { echo "SKIP powerloss: $1"; exit 77; } # 77: skipped, for scripts/test.sh
[ -f "$src/build.sh" ] || skip "no LazyFS at $src (set LAZYFS_SRC to its folder)"
[ -c /dev/fuse ] || skip "/dev/fuse is missing"
[ "$(id -u)" = 0 ] || skip "mounting LazyFS with allow_other needs root"
command -v umount >/dev/null || skip "umount is missing"
bin="$root/${BUILD_DIR:-.build/debug}"
[ -x "$bin/sectiond" ] || { echo "FAIL no sectiond in $bin: build first"; echo "0 passed, 1 failed"; exit 1; }
# Built once per machine and user; build.sh returns at once when the binary is there.
lazyfs=$(sh "$src/build.sh" "${LAZYFS_BUILD:-/tmp/sectiond-lazyfs-$(id -u)}" | tail -n 1)
[ -x "$lazyfs" ] || { echo "FAIL LazyFS did not build from $src"; echo "0 passed, 1 failed"; exit 1; }
BUILD_DIR="$bin" exec timeout --kill-after=10 300 python3 "$root/Tests/System/powerloss.py" "$lazyfs" "$@"
