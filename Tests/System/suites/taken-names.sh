#!/usr/bin/env bash
# The suites that add users pass on a machine that already has those users.
#
# A developer's or a CI machine may well have an `alice`, or a `sectiond` user from an install
# on the host. Inside a private mount namespace (nothing outside it changes), /etc and /home get
# overlays in which every name the labs add already exists, with a home, a uid of its own and,
# for alice, membership of an existing `sectiond` group; then every suite that adds users runs
# there and must pass. The lab starts from the system's accounts only (lib/lab-init.sh), so
# these names cannot reach it.
#
# Runs the suites one after another; TAKEN_SUITES="user-service ..." runs fewer by hand. Ends
# with `N passed, N failed`.
set -uo pipefail
cd "$(dirname "$0")/../../.."
source Tests/System/lib/suites.sh
: "${BUILD_DIR:=.build/debug}"
export BUILD_DIR
# package is `make package-test` (Tests/Build/package.py); the others are suites, each run as
# Tests/System/suites.tsv says. NAME:PART,PART runs those parts of a suite only: systemd-lab's
# users are added by its set-up and used by these three parts; its other parts (the watchdog,
# stop, restarts: about two minutes) have no user of their own and ran already in the full run.
suites=${TAKEN_SUITES:-user-service systemd-lab:isolation,permissions,changes dbus-lab web-units package lists}
# Every user the labs add (Tests/System/suites/*lab*.py with lists.py, user-service.py, web-units.py,
# Tests/Build/package.py),
# the issue's own, and the package's system user.
names="alice bob carol dave newbie sectiond-test outsider member kiosk labcheck"

if [ "$(id -u)" -ne 0 ] || ! command -v unshare >/dev/null || ! command -v useradd >/dev/null; then
  echo "SKIP taken names: needs root, unshare (util-linux) and useradd (passwd)"
  exit 77 # skipped, for scripts/test.sh
fi

layers=$(mktemp -d /tmp/taken.XXXXXX)
trap 'rm -rf "$layers"' EXIT

# The namespace's side: the overlays, the taken names, then the suites. Its last line is the count.
inside() {
  set -u
  mount -t tmpfs tmpfs "$layers" || { echo "taken names: cannot mount a tmpfs at $layers"; return 1; }
  for d in etc home; do
    mkdir -p "$layers/$d/upper" "$layers/$d/work"
    mount -t overlay overlay -o "lowerdir=/$d,upperdir=$layers/$d/upper,workdir=$layers/$d/work" "/$d" ||
      { echo "taken names: cannot lay an overlay over /$d"; return 1; }
  done
  getent group sectiond >/dev/null || groupadd --system sectiond || return 1
  getent passwd sectiond >/dev/null ||
    useradd --system --gid sectiond --home-dir /nonexistent --shell /usr/sbin/nologin sectiond || return 1
  for name in $names; do
    getent passwd "$name" >/dev/null || useradd --create-home --shell /bin/sh "$name" || return 1
  done
  usermod -aG sectiond alice || return 1
  echo "taken names: $(for n in sectiond $names; do printf '%s(%s) ' "$n" "$(id -u "$n")"; done)"
  local passed=0 failed=() skipped=() status
  for suite in $suites; do
    echo "== $suite, with those names taken"
    local name=${suite%%:*} parts=()
    [ "$name" = "$suite" ] || IFS=, read -r -a parts <<<"${suite#*:}"
    case $name in package) make -s package-test ;; *) run_suite "$name" "${parts[@]}" ;; esac
    status=$?
    case $status in 0) passed=$((passed + 1)) ;; 77) skipped+=("$suite") ;; *) failed+=("$suite") ;; esac
  done
  [ ${#failed[@]} -eq 0 ] || echo "failed with the names taken: ${failed[*]}"
  [ ${#skipped[@]} -eq 0 ] || echo "SKIP taken names: ${skipped[*]} could not run here"
  echo "$passed passed, ${#failed[@]} failed"
  [ ${#failed[@]} -eq 0 ]
}
export -f inside manifest_rows run_bounded run_suite
export suites names layers suites_dir suites_manifest
unshare --mount --propagation private bash -c inside
