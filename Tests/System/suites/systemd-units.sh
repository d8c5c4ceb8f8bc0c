#!/usr/bin/env bash
# Checks the systemd side of sectiond as installed: installs into a staging
# DESTDIR with scripts/install.sh --no-build, then has systemd's own tools
# judge the result (systemd 252, Debian 12; systemd need not be PID 1).
#
#   Tests/System/suites/systemd-units.sh                      # binaries from .build/debug
#   BUILD_DIR=.build/release Tests/System/suites/systemd-units.sh
#   KEEP_STAGE=1 Tests/System/suites/systemd-units.sh         # keep the staging dir for a look
#
# Checks: the install lays out every file and substitutes the binary path;
# `systemd-analyze verify --man=no` prints nothing on the three units;
# `systemd-analyze security --offline=yes --threshold=10` passes and the
# exposure is at most 1.0; the socket units carry the right paths, modes,
# group and FileDescriptorName; the service is Type=notify with a synchronous
# ExecReload, a watchdog, Restart=on-failure, enough descriptors and no
# RuntimeDirectory=; the sysusers.d and tmpfiles.d snippets are accepted by
# systemd-sysusers/systemd-tmpfiles (run inside the stage); the example config
# is valid JSON and accepted by `sectiond --check-config`; a real config is
# never overwritten; the man pages render without groff warnings; PREFIX=/usr
# puts the units in /lib/systemd/system and the user units in
# /usr/lib/systemd/user. The user units (a user's own daemon): sockets in %t
# (0600), state in ~/.local/state/sectiond (made by the socket, the only
# writable path), Type=notify, watchdog, PrivateUsers=yes;
# `systemd-analyze --user verify` prints nothing on them as installed (in a
# private mount namespace where the stage's $PREFIX is mounted over $PREFIX);
# `systemd-analyze --user security --offline=yes` rates them at most 1.6.
# Tests/System/suites/user-service.py runs them under a real user manager.
#
# Prints one line per check, then "N passed, N failed"; exits 1 on any failure.
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
cd "$root"

source Tests/System/lib/checks.sh

# --- packages ----------------------------------------------------------------
install_missing systemd-analyze:systemd systemd-sysusers:systemd systemd-tmpfiles:systemd \
  groff:groff-base man:man-db jq:jq install:coreutils unshare:util-linux

# --- binaries and staging ----------------------------------------------------
if [ -x "$BUILD_DIR/sectiond" ] && [ -x "$BUILD_DIR/sectionctl" ]; then
  pass "binaries present in $BUILD_DIR"
else
  fail "binaries present in $BUILD_DIR" "build them first (swift build), or set BUILD_DIR"
  finish
fi

stage="$(mktemp -d /tmp/sectiond-units.XXXXXX)"
if [ -n "${KEEP_STAGE:-}" ]; then
  echo "staging dir kept: $stage"
else
  trap 'rm -rf "$stage"' EXIT
fi

PREFIX=/usr/local
dest="$stage/root"
unitdir="$dest$PREFIX/lib/systemd/system"
# The plain units, and an instance of the templates for a named list.
units=(sectiond.service sectiond.socket sectiond-readonly.socket
  sectiond@media.service sectiond@media.socket sectiond-readonly@media.socket)

if out="$(DESTDIR="$dest" PREFIX="$PREFIX" BUILD_DIR="$BUILD_DIR" \
  scripts/install.sh --no-build 2>&1)"; then
  pass "install.sh --no-build into a staging DESTDIR"
else
  fail "install.sh --no-build into a staging DESTDIR" "$out"
  finish
fi

expect_files=(
  "$PREFIX/bin/sectiond" "$PREFIX/bin/sectionctl" "$PREFIX/libexec/sectiond/sectiond-fleet"
  "$PREFIX/lib/systemd/system/sectiond.service"
  "$PREFIX/lib/systemd/system/sectiond.socket"
  "$PREFIX/lib/systemd/system/sectiond-readonly.socket"
  "$PREFIX/lib/systemd/user/sectiond.service"
  "$PREFIX/lib/systemd/user/sectiond.socket"
  "$PREFIX/lib/systemd/user/sectiond-readonly.socket"
  "$PREFIX/lib/systemd/system/sectiond@.service" "$PREFIX/lib/systemd/system/sectiond@.socket"
  "$PREFIX/lib/systemd/system/sectiond-readonly@.socket"
  "$PREFIX/lib/systemd/user/sectiond@.service" "$PREFIX/lib/systemd/user/sectiond@.socket"
  "$PREFIX/lib/systemd/user/sectiond-readonly@.socket"
  "$PREFIX/lib/sysusers.d/sectiond.conf" "$PREFIX/lib/tmpfiles.d/sectiond.conf"
  /etc/sectiond/sections.json.example /etc/sectiond/access.conf.example
)
for page in man/*.1 man/*.8; do
  [ -f "$page" ] && expect_files+=("$PREFIX/share/man/man${page##*.}/$(basename "$page")")
done
absent=""
for f in "${expect_files[@]}"; do [ -f "$dest$f" ] || absent+="$f"$'\n'; done
for b in sectiond sectionctl; do [ -x "$dest$PREFIX/bin/$b" ] || absent+="$PREFIX/bin/$b (not executable)"$'\n'; done
if [ -z "$absent" ]; then
  pass "installed files in place (${#expect_files[@]} files)"
else
  fail "installed files in place" "$absent"
fi
if [ -e "$dest/etc/sectiond/sections.json" ] || [ -e "$dest/etc/sectiond/access.conf" ]; then
  fail "install creates no real config (only sections.json.example)"
else
  pass "install creates no real config (only sections.json.example)"
fi

# --- unit file contents ------------------------------------------------------
# value KEY FILE: the last assignment of KEY= in FILE (what systemd would use
# for single-valued keys), comments and surrounding blanks ignored.
value() {
  sed -n "s/^[[:space:]]*$1[[:space:]]*=[[:space:]]*//p" "$2" | tail -n 1 | sed 's/[[:space:]]*$//'
}
expect() { # expect NAME ACTUAL WANTED
  if [ "$2" = "$3" ]; then pass "$1 = $3"; else fail "$1 = $3" "found: '$2'"; fi
}

svc="$unitdir/sectiond.service"
ctl="$unitdir/sectiond.socket"
ro="$unitdir/sectiond-readonly.socket"

if grep -n '@[A-Z_]*@' "$svc" "$ctl" "$ro" >/dev/null; then
  fail "no unsubstituted @PLACEHOLDER@ in the installed units" "$(grep -n '@[A-Z_]*@' "$svc" "$ctl" "$ro")"
else
  pass "no unsubstituted @PLACEHOLDER@ in the installed units"
fi
exec_start="$(value ExecStart "$svc")"
case "$exec_start" in
  "$PREFIX/bin/sectiond "* | "$PREFIX/bin/sectiond") pass "ExecStart runs $PREFIX/bin/sectiond (no DESTDIR in it)" ;;
  *) fail "ExecStart runs $PREFIX/bin/sectiond (no DESTDIR in it)" "found: $exec_start" ;;
esac

expect "sectiond.socket ListenStream" "$(value ListenStream "$ctl")" /run/sectiond/control.sock
expect "sectiond.socket FileDescriptorName" "$(value FileDescriptorName "$ctl")" control
expect "sectiond.socket SocketMode" "$(value SocketMode "$ctl")" 0660
expect "sectiond.socket SocketGroup" "$(value SocketGroup "$ctl")" sectiond
expect "sectiond.socket RemoveOnStop" "$(value RemoveOnStop "$ctl")" yes
expect "sectiond-readonly.socket ListenStream" "$(value ListenStream "$ro")" /run/sectiond/readonly.sock
expect "sectiond-readonly.socket FileDescriptorName" "$(value FileDescriptorName "$ro")" readonly
expect "sectiond-readonly.socket SocketMode" "$(value SocketMode "$ro")" 0666
expect "sectiond-readonly.socket RemoveOnStop" "$(value RemoveOnStop "$ro")" yes
expect "sectiond-readonly.socket Service" "$(value Service "$ro")" sectiond.service

expect "sectiond.service Type" "$(value Type "$svc")" notify
expect "sectiond.service Restart" "$(value Restart "$svc")" on-failure
expect "sectiond.service User" "$(value User "$svc")" sectiond
expect "sectiond.service StateDirectory" "$(value StateDirectory "$svc")" sectiond
sockets_line="$(grep -h '^[[:space:]]*Sockets[[:space:]]*=' "$svc" | tr '\n' ' ')"
case "$sockets_line" in
  *sectiond.socket*sectiond-readonly.socket* | *sectiond-readonly.socket*sectiond.socket*)
    pass "sectiond.service Sockets= names both socket units" ;;
  *) fail "sectiond.service Sockets= names both socket units" "found: $sockets_line" ;;
esac
reload="$(value ExecReload "$svc")"
case "$reload" in
  "$PREFIX/bin/sectionctl "*reload*) pass "ExecReload runs sectionctl reload (synchronous)" ;;
  *) fail "ExecReload runs sectionctl reload (synchronous)" "found: $reload" ;;
esac
wd="$(value WatchdogSec "$svc")"
if [ -n "$wd" ] && [ "$wd" != 0 ] && [ "$wd" != infinity ]; then
  pass "WatchdogSec set ($wd)"
else
  fail "WatchdogSec set" "found: '$wd'"
fi
nofile="$(value LimitNOFILE "$svc")"
nofile_soft="${nofile%%:*}"
if [[ "$nofile_soft" =~ ^[0-9]+$ ]] && [ "$nofile_soft" -ge 10240 ]; then
  pass "LimitNOFILE=$nofile leaves room for 10000 clients"
else
  fail "LimitNOFILE leaves room for 10000 clients" "found: '$nofile'"
fi
max_clients="$(sed -n 's/.*--max-clients[ =]\([0-9]*\).*/\1/p' <<<"$exec_start")"
if [ -z "$max_clients" ] || { [[ "$nofile_soft" =~ ^[0-9]+$ ]] && [ "$nofile_soft" -gt "$((max_clients + 16))" ]; }; then
  pass "LimitNOFILE exceeds --max-clients (${max_clients:-default 1024}) plus headroom"
else
  fail "LimitNOFILE exceeds --max-clients plus headroom" "LimitNOFILE=$nofile, --max-clients $max_clients"
fi
if grep -q '^[[:space:]]*RuntimeDirectory[[:space:]]*=' "$svc"; then
  fail "no RuntimeDirectory= (it would delete /run/sectiond and the sockets on stop)"
else
  pass "no RuntimeDirectory= (it would delete /run/sectiond and the sockets on stop)"
fi

# --- systemd-analyze verify --------------------------------------------------
# `verify` loads each unit with all its dependencies and checks that every
# ExecStart=/ExecReload= binary exists and is executable. The installed units
# name /usr/local/bin/..., which exists only inside the stage. On systemd 252,
# `--root=STAGE` makes verify resolve both the unit search path and those
# binary paths inside STAGE (checked below by hiding a binary), so the units
# are verified exactly as installed, with no rewriting. But then the stage
# must also hold the units they depend on (sysinit.target, sockets.target,
# multi-user.target, ...) or verify reports "Unit sysinit.target not found":
# so the host's system unit directory is copied into the stage first. (The
# other way, verifying rewritten copies whose ExecStart points into the stage
# without --root, checks files that are not the ones installed.)
# verify exits 0 even on warnings such as "Unknown key", so any output at all
# counts as failure.
host_units=/usr/lib/systemd/system
[ -d "$host_units" ] || host_units=/lib/systemd/system
mkdir -p "$dest/usr/lib/systemd"
if [ "$dest/usr/lib/systemd/system" != "$unitdir" ]; then
  cp -a "$host_units" "$dest/usr/lib/systemd/system"
fi
# judge_verify WHAT BINARY COMMAND...: the verify COMMAND prints nothing on the units as
# installed, and it must be able to fail: with BINARY hidden it complains.
judge_verify() {
  local what=$1 binary=$2 out rc
  shift 2
  out="$("$@")"
  rc=$?
  if [ $rc -eq 0 ] && [ -z "$out" ]; then
    pass "$what prints nothing (${units[*]})"
  else
    fail "$what prints nothing (rc=$rc)" "$out"
  fi
  mv "$dest$PREFIX/bin/$binary" "$stage/$binary.hidden"
  out="$("$@")"
  mv "$stage/$binary.hidden" "$dest$PREFIX/bin/$binary"
  if grep -q "$binary.*not executable" <<<"$out"; then
    pass "$what really checks the staged binaries (a hidden $binary is reported)"
  else
    fail "$what really checks the staged binaries" "output with $binary hidden: '$out'"
  fi
}
verify() { systemd-analyze verify --man=no --root="$dest" "${units[@]}" 2>&1; }
judge_verify "systemd-analyze verify --man=no --root" sectionctl verify

# --- systemd-analyze security ------------------------------------------------
out="$(systemd-analyze security --offline=yes --threshold=10 --root="$dest" sectiond.service 2>&1)"
rc=$?
if [ $rc -eq 0 ]; then
  pass "systemd-analyze security --offline=yes --threshold=10 sectiond.service"
else
  fail "systemd-analyze security --offline=yes --threshold=10 sectiond.service (rc=$rc)" "$(tail -n 5 <<<"$out")"
fi
# judge_exposure WHAT LIMIT OUTPUT: the overall exposure `systemd-analyze security`
# printed in OUTPUT is at most LIMIT.
judge_exposure() {
  local exposure
  exposure="$(sed -n 's/.*Overall exposure level for sectiond[@a-z]*\.service: \([0-9.]*\).*/\1/p' <<<"$3")"
  if [ -n "$exposure" ] && awk -v e="$exposure" -v limit="$2" 'BEGIN { exit !(e <= limit) }'; then
    pass "$1 exposure $exposure <= $2"
  else
    fail "$1 exposure <= $2" "found: '${exposure:-no exposure line}'; failing items:
$(grep '✗' <<<"$3")"
  fi
}
judge_exposure sectiond.service 1.0 "$out"
judge_exposure sectiond@media.service 1.0 \
  "$(systemd-analyze security --offline=yes --threshold=10 --root="$dest" sectiond@media.service 2>&1)"

# --- the templates of named lists -----------------------------------
# An instance has the plain unit's sandbox, fd store and watchdog, its own
# paths from %i, and the two sockets of its list in /run/sectiond/NAME.
tsvc="$unitdir/sectiond@.service"
for key in Type WatchdogSec FileDescriptorStoreMax User ProtectSystem PrivateNetwork Restart \
  ConfigurationDirectory SystemCallFilter; do
  expect "sectiond@.service $key (as sectiond.service)" "$(value "$key" "$tsvc")" "$(value "$key" "$svc")"
done
expect "sectiond@.service ExecStart" "$(value ExecStart "$tsvc")" \
  "$PREFIX/bin/sectiond --list %i --max-clients 10000 --fd-store 10001 --bus system --log-changes \$SECTIOND_OPTIONS"
expect "sectiond@.service StateDirectory" "$(value StateDirectory "$tsvc")" 'sectiond/%i'
expect "sectiond@.service Sockets" "$(value Sockets "$tsvc")" 'sectiond@%i.socket sectiond-readonly@%i.socket'
expect "sectiond@.socket ListenStream" "$(value ListenStream "$unitdir/sectiond@.socket")" \
  '/run/sectiond/%i/control.sock'
expect "sectiond@.socket SocketMode" "$(value SocketMode "$unitdir/sectiond@.socket")" 0660
expect "sectiond-readonly@.socket ListenStream" "$(value ListenStream "$unitdir/sectiond-readonly@.socket")" \
  '/run/sectiond/%i/readonly.sock'
expect "sectiond-readonly@.socket Service" "$(value Service "$unitdir/sectiond-readonly@.socket")" \
  'sectiond@%i.service'
expect "sectiond-readonly@.socket FileDescriptorName" \
  "$(value FileDescriptorName "$unitdir/sectiond-readonly@.socket")" readonly

# --- user units ----------------------------------------------------------------
userunitdir="$dest$PREFIX/lib/systemd/user"
usvc="$userunitdir/sectiond.service"
uctl="$userunitdir/sectiond.socket"
uro="$userunitdir/sectiond-readonly.socket"
state_dir='%h/.local/state/sectiond'
expect "user sectiond.socket ListenStream" "$(value ListenStream "$uctl")" '%t/sectiond/control.sock'
expect "user sectiond.socket FileDescriptorName" "$(value FileDescriptorName "$uctl")" control
expect "user sectiond.socket SocketMode" "$(value SocketMode "$uctl")" 0600
expect "user sectiond.socket DirectoryMode" "$(value DirectoryMode "$uctl")" 0700
expect "user sectiond.socket ExecStartPre" "$(value ExecStartPre "$uctl")" "mkdir -p -m 0700 $state_dir"
expect "user sectiond-readonly.socket ListenStream" "$(value ListenStream "$uro")" '%t/sectiond/readonly.sock'
expect "user sectiond-readonly.socket FileDescriptorName" "$(value FileDescriptorName "$uro")" readonly
expect "user sectiond-readonly.socket SocketMode" "$(value SocketMode "$uro")" 0600
expect "user sectiond-readonly.socket Service" "$(value Service "$uro")" sectiond.service
expect "user sectiond.service Type" "$(value Type "$usvc")" notify
expect "user sectiond.service WatchdogSec" "$(value WatchdogSec "$usvc")" 20s
expect "user sectiond.service PrivateUsers" "$(value PrivateUsers "$usvc")" yes
expect "user sectiond.service ProtectSystem" "$(value ProtectSystem "$usvc")" strict
expect "user sectiond.service ReadWritePaths" "$(value ReadWritePaths "$usvc")" "$state_dir"
expect "user sectiond.service ExecStart" "$(value ExecStart "$usvc")" \
  "$PREFIX/bin/sectiond --socket %t/sectiond/control.sock --readonly-socket %t/sectiond/readonly.sock --state $state_dir/state.json --fd-store 1025 --bus session"
# Clients survive restarts only if the daemon stores no more than the unit keeps, and the
# unit keeps every client plus the handover record: --fd-store = FileDescriptorStoreMax= >
# --max-clients (default 1024).
for unit in "$svc" "$usvc"; do
  start="$(value ExecStart "$unit")"
  stored="$(sed -n 's/.*--fd-store[ =]\([0-9]*\).*/\1/p' <<<"$start")"
  clients="$(sed -n 's/.*--max-clients[ =]\([0-9]*\).*/\1/p' <<<"$start")"
  store_max="$(value FileDescriptorStoreMax "$unit")"
  if [ -n "$stored" ] && [ "$stored" = "$store_max" ] && [ "$stored" -gt "${clients:-1024}" ]; then
    pass "$(basename "$(dirname "$unit")")/sectiond.service: --fd-store $stored = FileDescriptorStoreMax=, above --max-clients ${clients:-1024}"
  else
    fail "$(basename "$(dirname "$unit")")/sectiond.service: --fd-store = FileDescriptorStoreMax= > --max-clients" \
      "--fd-store '$stored', FileDescriptorStoreMax='$store_max', --max-clients '${clients:-1024}'"
  fi
done
expect "user sectiond.service ExecReload" "$(value ExecReload "$usvc")" "$PREFIX/bin/sectionctl reload"
# systemd 252 puts a user unit's StateDirectory= (and ConfigurationDirectory=, which
# would also be writable) in ~/.config; see the unit's comments.
if grep -Eq '^[[:space:]]*(StateDirectory|ConfigurationDirectory)[[:space:]]*=' "$usvc"; then
  fail "user sectiond.service has no StateDirectory=/ConfigurationDirectory= (252 puts them in ~/.config)"
else
  pass "user sectiond.service has no StateDirectory=/ConfigurationDirectory= (252 puts them in ~/.config)"
fi

# `systemd-analyze --user verify` has no --root, so the stage's $PREFIX is mounted over
# $PREFIX in a private mount namespace (unshare -m) where the user search path
# ($PREFIX/lib/systemd/user) and the binaries are the installed ones.
user_analyze() {
  local runtime
  runtime="$(mktemp -d "$stage/runtime.XXXXXX")"
  XDG_RUNTIME_DIR="$runtime" unshare --mount --propagation private sh -c \
    'mount --bind "$1" "$2" && shift 2 && exec systemd-analyze --user "$@"' \
    sh "$dest$PREFIX" "$PREFIX" "$@" 2>&1
}
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null; then
  judge_verify "systemd-analyze --user verify --man=no" sectiond user_analyze verify --man=no "${units[@]}"
  judge_exposure "user sectiond.service" 1.6 "$(user_analyze security --offline=yes --threshold=10 sectiond.service)"
  judge_exposure "user sectiond@media.service" 1.6 \
    "$(user_analyze security --offline=yes --threshold=10 sectiond@media.service)"
else
  fail "systemd-analyze --user verify" "needs root and unshare (util-linux) for a private mount namespace"
fi

# --- sysusers.d and tmpfiles.d -----------------------------------------------
# Both tools run with --root inside the stage, so they read the installed
# snippets from $PREFIX/lib/{sysusers,tmpfiles}.d and touch nothing outside.
mkdir -p "$dest/etc"
out="$(systemd-sysusers --root="$dest" 2>&1)"
rc=$?
if [ $rc -eq 0 ] && grep -q '^sectiond:' "$dest/etc/passwd" 2>/dev/null &&
  grep -q '^sectiond:' "$dest/etc/group" 2>/dev/null; then
  pass "systemd-sysusers creates user and group sectiond"
else
  fail "systemd-sysusers creates user and group sectiond (rc=$rc)" "$out"
fi
out="$(systemd-tmpfiles --root="$dest" --create 2>&1)"
rc=$?
mode="$(stat -c %a "$dest/run/sectiond" 2>/dev/null)"
if [ $rc -eq 0 ] && [ -z "$out" ] && [ "$mode" = 755 ]; then
  pass "systemd-tmpfiles creates /run/sectiond 0755"
else
  fail "systemd-tmpfiles creates /run/sectiond 0755 (rc=$rc, mode=${mode:-none})" "$out"
fi

# --- example config ----------------------------------------------------------
if out="$(jq -e '.sections | length > 0' "$dest/etc/sectiond/sections.json.example" 2>&1)"; then
  pass "sections.json.example is JSON with sections"
else
  fail "sections.json.example is JSON with sections" "$out"
fi
if out="$("$BUILD_DIR/sectiond" --check-config --config "$dest/etc/sectiond/sections.json.example" 2>&1)"; then
  pass "sectiond --check-config accepts sections.json.example"
else
  fail "sectiond --check-config accepts sections.json.example" "$out"
fi
echo '{"sections":[{"title":"Mine"}]}' >"$dest/etc/sectiond/sections.json"
before="$(sha256sum <"$dest/etc/sectiond/sections.json")"
if out="$(DESTDIR="$dest" PREFIX="$PREFIX" BUILD_DIR="$BUILD_DIR" scripts/install.sh --no-build 2>&1)" &&
  [ "$(sha256sum <"$dest/etc/sectiond/sections.json")" = "$before" ]; then
  pass "reinstalling leaves an existing sections.json alone"
else
  fail "reinstalling leaves an existing sections.json alone" "$out"
fi

# --- man pages ---------------------------------------------------------------
pages=("$dest$PREFIX"/share/man/man[18]/*)
if [ -e "${pages[0]}" ]; then
  for page in "${pages[@]}"; do
    name="$(basename "$page")"
    # -Tutf8: the device man uses on this (UTF-8) system; plain -z would
    # format for PostScript, whose fonts lack glyphs a page may rightly use.
    warn="$(groff -ww -man -z -Tutf8 "$page" 2>&1)"
    text="$(MANWIDTH=80 man -l "$page" 2>&1)"
    if [ -z "$warn" ] && grep -q '^NAME' <<<"$text" && grep -q '^SYNOPSIS' <<<"$text"; then
      pass "man page $name renders without warnings"
    else
      fail "man page $name renders without warnings" "$warn"
    fi
  done
else
  fail "man pages installed" "none under $PREFIX/share/man"
fi

# --- shell completions (sectionctl completion bash|zsh) -------------------------
bash_comp="$dest$PREFIX/share/bash-completion/completions/sectionctl"
if [ -f "$bash_comp" ] && out="$(bash -n "$bash_comp" 2>&1)" && grep -q "complete -F _sectionctl" "$bash_comp"; then
  pass "bash completion installed as share/bash-completion/completions/sectionctl"
else
  fail "bash completion installed as share/bash-completion/completions/sectionctl" "${out:-}"
fi
zsh_comp="$dest$PREFIX/share/zsh/site-functions/_sectionctl"
if [ -f "$zsh_comp" ] && grep -q "^#compdef sectionctl" "$zsh_comp"; then
  pass "zsh completion installed as share/zsh/site-functions/_sectionctl"
else
  fail "zsh completion installed as share/zsh/site-functions/_sectionctl"
fi

# --- the documentation the README links to ------------------------------------
docdir="$dest$PREFIX/share/doc/sectiond"
missing=""
for f in README.md PROTOCOL.md DBUS.md FLEET.md SECURITY.md examples/waybar/config.jsonc examples/i3blocks.conf \
  examples/tmux.conf examples/sectiond-loop.sh examples/fleet/fleet.conf examples/fleet/etcd-local.conf \
  examples/fleet/fleet.env; do
  [ -f "$docdir/$f" ] || missing+=" $f"
done
executable="$(find "$docdir" -type f -perm /111 2>/dev/null)"
if [ -z "$missing" ] && [ -z "$executable" ]; then
  pass "docs installed as share/doc/sectiond: README, PROTOCOL.md, DBUS.md, FLEET.md, SECURITY.md, the recipes and the fleet examples (none executable)"
else
  fail "docs installed as share/doc/sectiond" "missing:$missing; executable: $executable"
fi

# --- PREFIX=/usr layout ------------------------------------------------------
dest2="$stage/usr-root"
if out="$(DESTDIR="$dest2" PREFIX=/usr BUILD_DIR="$BUILD_DIR" scripts/install.sh --no-build 2>&1)" &&
  [ -f "$dest2/lib/systemd/system/sectiond.service" ] &&
  [ -f "$dest2/usr/lib/systemd/user/sectiond.service" ] &&
  [ -f "$dest2/usr/lib/sysusers.d/sectiond.conf" ] &&
  [ -f "$dest2/usr/lib/tmpfiles.d/sectiond.conf" ] &&
  [ "$(value ExecStart "$dest2/lib/systemd/system/sectiond.service" | cut -d' ' -f1)" = /usr/bin/sectiond ]; then
  pass "PREFIX=/usr: units in /lib/systemd/system and /usr/lib/systemd/user, ExecStart=/usr/bin/sectiond"
else
  fail "PREFIX=/usr: units in /lib/systemd/system and /usr/lib/systemd/user, ExecStart=/usr/bin/sectiond" "$out"
fi

# --- make uninstall: exactly what install put -------------
# A tree with files of others and a config of the user's; install, then make uninstall: the
# same files as before, sectiond's own directories gone, the shared ones kept.
dest3="$stage/un-root"
mkdir -p "$dest3/usr/local/bin" "$dest3/usr/local/share/doc/other" "$dest3/etc/sectiond"
echo other >"$dest3/usr/local/bin/other-tool"
echo other >"$dest3/usr/local/share/doc/other/README"
echo '{"sections":[]}' >"$dest3/etc/sectiond/sections.json"
files() { (cd "$1" && find . -type f -o -type l | sort); }
before="$(files "$dest3")"
DESTDIR="$dest3" PREFIX=/usr/local BUILD_DIR="$BUILD_DIR" scripts/install.sh --no-build >/dev/null 2>&1
installed=$(($(files "$dest3" | wc -l) - $(wc -l <<<"$before")))
out="$(make -s -C "$root" uninstall DESTDIR="$dest3" PREFIX=/usr/local 2>&1)"
expect "make uninstall removes the $installed files install put, and only those" "$before" "$(files "$dest3")"
contains "  ... keeps the user's sections.json, saying so" "kept $dest3/etc/sectiond/sections.json" "$out"
if [ ! -e "$dest3/usr/local/share/sectiond" ] && [ ! -e "$dest3/usr/local/share/doc/sectiond" ] &&
  [ ! -e "$dest3/usr/local/libexec/sectiond" ] &&
  [ -d "$dest3/usr/local/share/doc/other" ] && [ -d "$dest3/usr/local/bin" ]; then
  pass "  ... removes sectiond's own directories, keeps the shared ones"
else
  fail "  ... removes sectiond's own directories, keeps the shared ones" "$(cd "$dest3" && find . -type d)"
fi
# The per-user install (--user, under a home of its own): nothing of it is left.
dest4="$stage/un-user"
mkdir -p "$dest4/home/u"
HOME=/home/u DESTDIR="$dest4" BUILD_DIR="$BUILD_DIR" scripts/install.sh --no-build --user --prefix /home/u/.local \
  >/dev/null 2>&1
installed=$(files "$dest4" | wc -l)
HOME=/home/u DESTDIR="$dest4" scripts/install.sh --uninstall --user --prefix /home/u/.local >/dev/null 2>&1
expect "install.sh --uninstall --user removes the $installed files of a per-user install" "" "$(files "$dest4")"

finish
