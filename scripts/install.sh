#!/usr/bin/env bash
# Install sectiond: binaries, systemd units, sysusers.d/tmpfiles.d snippets,
# the example config, man pages, shell completions and the web page.
#
#   scripts/install.sh [--no-build] [--prefix DIR] [--destdir DIR] [--user] [--uninstall]
#
# --uninstall (make uninstall) removes exactly the files an install with the same options
# put, and the directories of sectiond's own it leaves empty; it keeps the state
# (/var/lib/sectiond, ~/.local/state/sectiond), the user sectiond and a sections.json of
# yours. On the live system it first stops and disables the units it is about to remove.
#
# As a user other than root (or with --user) it is a per-user install, no root needed:
#   scripts/install.sh --prefix ~/.local
# puts the binaries in ~/.local/bin, the man pages and completions under ~/.local/share, the
# user units in ~/.local/share/systemd/user ($XDG_DATA_HOME/systemd/user, where the user
# manager looks) and the example config in ~/.config/sectiond; no system unit, no sysusers or
# tmpfiles snippet, nothing under /etc. Then, at once (both sockets: --now starts only the
# units named):
#   systemctl --user enable --now sectiond.socket sectiond-readonly.socket
#
# Environment (the options win over it):
#   PREFIX      installation prefix, default /usr/local
#   DESTDIR     staging root prepended to every path (packaging, tests); the
#               installed files still name $PREFIX paths, never $DESTDIR ones
#   BUILD_DIR   where the built binaries are; default: what
#               `swift build -c release --show-bin-path` says, or .build/release
#               with --no-build
#   SWIFT_BUILD_FLAGS  extra flags for `swift build` (e.g. --scratch-path DIR)
#   BINDIR, UNITDIR, USERUNITDIR, SYSUSERSDIR, TMPFILESDIR, MANDIR, DATADIR,
#   SYSCONFDIR  override single directories (defaults below)
#
# Layout for PREFIX=/usr/local (the default):
#   /usr/local/bin/{sectiond,sectionctl}
#   /usr/local/libexec/sectiond/sectiond-fleet (what `sectiond --etcd` runs: docs/FLEET.md;
#     always libexec/sectiond/ beside BINDIR's directory, where sectiond looks for it)
#   /usr/local/lib/systemd/system/{sectiond.service,sectiond.socket,sectiond-readonly.socket,
#     sectiond-web.service, and the templates sectiond@.service, sectiond@.socket,
#     sectiond-readonly@.socket for named lists: README.md, "Several lists"}
#   /usr/local/lib/systemd/user/{the same seven, for a user's own daemons}
#   /usr/local/share/sectiond/web/ (the page sectiond-web.service serves through websocketd)
#   /usr/local/lib/sysusers.d/sectiond.conf, /usr/local/lib/tmpfiles.d/sectiond.conf
#   /usr/local/share/man/man{1,8}/..., /usr/local/share/bash-completion/completions/sectionctl,
#   /usr/local/share/zsh/site-functions/_sectionctl
#   /usr/local/share/dbus-1/{system-services,services,interfaces}/org.sectiond.Sectiond1.*,
#   /etc/dbus-1/system.d/org.sectiond.Sectiond1.conf (/usr/share/dbus-1/system.d with PREFIX=/usr)
#   /usr/share/polkit-1/actions/org.sectiond.Sectiond1.policy (whatever the prefix: polkitd
#     reads no other directory)
#   /etc/sectiond/sections.json.example, access.conf.example (a real sections.json or
#   access.conf is never touched)
# With PREFIX=/usr the units go to /lib/systemd/system and /usr/lib/systemd/user
# (Debian's systemdsystemunitdir and systemduserunitdir) and the snippets to
# /usr/lib/{sysusers,tmpfiles}.d.
#
# Installing into the live system (no DESTDIR) as root also creates the
# sectiond user and /run/sectiond (systemd-sysusers, systemd-tmpfiles) and
# reloads systemd if it is running; enable with
#   systemctl enable --now sectiond.socket sectiond-readonly.socket
# or, for one user's own daemon (no root needed to run it):
#   systemctl --user enable --now sectiond.socket sectiond-readonly.socket
set -euo pipefail

usage() {
  sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"
}

build=1
uninstall=""
user_install=""
while [ $# -gt 0 ]; do
  case "$1" in
    --no-build) build=0 ;;
    --prefix) PREFIX="${2:?--prefix needs a directory}"; shift ;;
    --prefix=*) PREFIX="${1#*=}" ;;
    --destdir) DESTDIR="${2:?--destdir needs a directory}"; shift ;;
    --destdir=*) DESTDIR="${1#*=}" ;;
    --user) user_install=1 ;;
    --uninstall) uninstall=1 build=0 ;;
    -h | --help) usage; exit 0 ;;
    *) echo "install.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

PREFIX="${PREFIX:-/usr/local}"
PREFIX="${PREFIX%/}"
[ -n "$PREFIX" ] || PREFIX=/usr # PREFIX=/ means /usr, as for systemd itself
case "$PREFIX" in
  /*) ;;
  *) echo "install.sh: PREFIX must be an absolute path, not '$PREFIX'" >&2; exit 2 ;;
esac
DESTDIR="${DESTDIR:-}"
DESTDIR="${DESTDIR%/}"
if [ -n "$DESTDIR" ]; then
  mkdir -p "$DESTDIR"
  DESTDIR="$(cd "$DESTDIR" && pwd)"
fi

# A per-user install: asked for, or what a user other than root gets on the live system.
if [ -z "$user_install" ] && [ -z "$DESTDIR" ] && [ "$(id -u)" != 0 ]; then user_install=1; fi
if [ -n "$user_install" ]; then
  : "${HOME:?install.sh: a per-user install needs HOME}"
  USERUNITDIR="${USERUNITDIR:-${XDG_DATA_HOME:-$HOME/.local/share}/systemd/user}"
  SYSCONFDIR="${SYSCONFDIR:-${XDG_CONFIG_HOME:-$HOME/.config}}"
fi

BINDIR="${BINDIR:-$PREFIX/bin}"
# Not a setting of its own: sectiond finds sectiond-fleet relative to itself (beside it, or
# in ../libexec/sectiond/), so the two must keep this relation wherever BINDIR is.
LIBEXECDIR="$(dirname "$BINDIR")/libexec/sectiond"
DATADIR="${DATADIR:-$PREFIX/share}"
MANDIR="${MANDIR:-$DATADIR/man}"
SYSCONFDIR="${SYSCONFDIR:-/etc}"
if [ "$PREFIX" = /usr ]; then
  UNITDIR="${UNITDIR:-/lib/systemd/system}"
else
  UNITDIR="${UNITDIR:-$PREFIX/lib/systemd/system}"
fi
USERUNITDIR="${USERUNITDIR:-$PREFIX/lib/systemd/user}"
SYSUSERSDIR="${SYSUSERSDIR:-$PREFIX/lib/sysusers.d}"
TMPFILESDIR="${TMPFILESDIR:-$PREFIX/lib/tmpfiles.d}"

say() { printf '%s\n' "$*"; }

# --- build -------------------------------------------------------------------
if [ "$build" = 1 ]; then
  # --static-swift-stdlib: the binaries must run without the Swift toolchain.
  # shellcheck disable=SC2086
  say "building: swift build -c release --static-swift-stdlib ${SWIFT_BUILD_FLAGS:-}"
  # Builds every product (sectiond and sectionctl), not the tests.
  # shellcheck disable=SC2086
  swift build -c release --static-swift-stdlib ${SWIFT_BUILD_FLAGS:-}
  if [ -z "${BUILD_DIR:-}" ]; then
    # shellcheck disable=SC2086
    BUILD_DIR="$(swift build -c release ${SWIFT_BUILD_FLAGS:-} --show-bin-path)"
  fi
fi
BUILD_DIR="${BUILD_DIR:-.build/release}"

for b in sectiond sectiond-fleet sectionctl; do
  if [ -z "$uninstall" ] && [ ! -x "$BUILD_DIR/$b" ]; then
    echo "install.sh: $BUILD_DIR/$b is missing or not executable;" \
      "build first (swift build -c release --static-swift-stdlib) or set BUILD_DIR" >&2
    exit 1
  fi
done

# --- install (or, with --uninstall, remove) ------------------------------------
inst() { # inst MODE SRC DEST (DEST without DESTDIR)
  if [ -n "$uninstall" ]; then
    if [ -e "$DESTDIR$3" ] || [ -L "$DESTDIR$3" ]; then
      rm -f "$DESTDIR$3"
      say "removed $DESTDIR$3"
    fi
    return 0
  fi
  install -D -m "$1" "$2" "$DESTDIR$3"
  say "installed $DESTDIR$3"
}

# The units about to be removed, stopped and disabled first on the live system (a running
# daemon would outlive its binary, an enabled socket leave a dangling link).
if [ -n "$uninstall" ] && [ -z "$DESTDIR" ] && [ -d /run/systemd/system ] && command -v systemctl >/dev/null; then
  scope=()
  if [ -n "$user_install" ]; then scope=(--user); fi
  units=(sectiond.socket sectiond-readonly.socket sectiond.service sectiond-web.service)
  systemctl "${scope[@]}" disable --now "${units[@]}" >/dev/null 2>&1 || true
  systemctl "${scope[@]}" stop 'sectiond@*' 'sectiond-readonly@*' >/dev/null 2>&1 || true
  say "stopped and disabled sectiond's units"
fi

# The units name the binaries by their final path ($BINDIR), never $DESTDIR.
subst() { # subst SRC DEST
  local tmp
  tmp="$(mktemp)"
  sed -e "s|@BINDIR@|$BINDIR|g" -e "s|@DATADIR@|$DATADIR|g" "$1" >"$tmp"
  if grep -q '@[A-Z_]*@' "$tmp"; then
    echo "install.sh: unsubstituted placeholder left in $1:" >&2
    grep -n '@[A-Z_]*@' "$tmp" >&2
    rm -f "$tmp"
    exit 1
  fi
  inst 0644 "$tmp" "$2"
  rm -f "$tmp"
}
if [ -n "$uninstall" ]; then subst() { inst 0644 - "$2"; }; fi

inst 0755 "$BUILD_DIR/sectiond" "$BINDIR/sectiond"
inst 0755 "$BUILD_DIR/sectiond-fleet" "$LIBEXECDIR/sectiond-fleet"
inst 0755 "$BUILD_DIR/sectionctl" "$BINDIR/sectionctl"

# sectiond.service.in names the binaries by @BINDIR@; the socket units are installed as they are.
for u in sectiond.service.in sectiond.socket sectiond-readonly.socket sectiond-web.service.in \
  sectiond@.service.in sectiond@.socket sectiond-readonly@.socket; do
  [ -n "$user_install" ] || subst "systemd/$u" "$UNITDIR/${u%.in}"
  subst "systemd/user/$u" "$USERUNITDIR/${u%.in}"
done
# The web page: HTML, CSS and JavaScript, served as they are.
for page in web/*; do
  inst 0644 "$page" "$DATADIR/sectiond/web/$(basename "$page")"
done
if [ -z "$user_install" ]; then
  inst 0644 systemd/sysusers.d/sectiond.conf "$SYSUSERSDIR/sectiond.conf"
  # D-Bus (docs/DBUS.md): the system bus policy, bus activation for both buses, and the
  # interface's introspection XML. dbus-daemon reads policies from /usr/share/dbus-1/system.d
  # and /etc/dbus-1/system.d only: outside PREFIX=/usr the policy goes to the latter.
  case "$DATADIR" in
    /usr/share) DBUSPOLICYDIR=/usr/share/dbus-1/system.d ;;
    *) DBUSPOLICYDIR="$SYSCONFDIR/dbus-1/system.d" ;;
  esac
  inst 0644 packaging/dbus/org.sectiond.Sectiond1.conf "$DBUSPOLICYDIR/org.sectiond.Sectiond1.conf"
  inst 0644 packaging/dbus/system-services/org.sectiond.Sectiond1.service \
    "$DATADIR/dbus-1/system-services/org.sectiond.Sectiond1.service"
  # polkit's actions for bus callers without a direct right (docs/DBUS.md, "Access"). polkitd
  # reads actions from /usr/share/polkit-1/actions only, whatever the prefix.
  inst 0644 packaging/polkit/org.sectiond.Sectiond1.policy \
    /usr/share/polkit-1/actions/org.sectiond.Sectiond1.policy
  inst 0644 systemd/tmpfiles.d/sectiond.conf "$TMPFILESDIR/sectiond.conf"
fi
# A user's session bus reads ~/.local/share/dbus-1/services too.
inst 0644 packaging/dbus/services/org.sectiond.Sectiond1.service "$DATADIR/dbus-1/services/org.sectiond.Sectiond1.service"
inst 0644 docs/org.sectiond.Sectiond1.xml "$DATADIR/dbus-1/interfaces/org.sectiond.Sectiond1.xml"

# The example config only ever goes beside the real one, never over it.
inst 0644 examples/sections.json "$SYSCONFDIR/sectiond/sections.json.example"
inst 0644 examples/access.conf "$SYSCONFDIR/sectiond/access.conf.example"
if [ -n "$uninstall" ]; then
  if [ -e "$DESTDIR$SYSCONFDIR/sectiond/sections.json" ]; then
    say "kept $DESTDIR$SYSCONFDIR/sectiond/sections.json (yours, not installed)"
  fi
elif [ ! -e "$DESTDIR$SYSCONFDIR/sectiond/sections.json" ]; then
  say "note: no $SYSCONFDIR/sectiond/sections.json; sectiond serves its built-in demo" \
    "set until you create one (start from sections.json.example)"
fi

# The README and what it links to: the protocol and D-Bus references (which the man pages
# point to too) and the recipes of examples/, none of them executable under doc/.
inst 0644 README.md "$DATADIR/doc/sectiond/README.md"
inst 0644 docs/PROTOCOL.md "$DATADIR/doc/sectiond/PROTOCOL.md"
inst 0644 docs/DBUS.md "$DATADIR/doc/sectiond/DBUS.md"
# A fleet host's guide, the design it links to and the threat model it points to, beside the
# fleet's examples below.
inst 0644 docs/FLEET.md "$DATADIR/doc/sectiond/FLEET.md"
inst 0644 docs/FLEET-DESIGN.md "$DATADIR/doc/sectiond/FLEET-DESIGN.md"
inst 0644 docs/SECURITY.md "$DATADIR/doc/sectiond/SECURITY.md"
for recipe in examples/i3blocks.conf examples/tmux.conf examples/sectiond-loop.sh examples/waybar/*; do
  inst 0644 "$recipe" "$DATADIR/doc/sectiond/$recipe"
done
# A fleet host's drop-ins and environment file (docs/FLEET.md), examples to copy: installed
# in place they would put every host in a fleet.
for file in packaging/fleet/*; do
  inst 0644 "$file" "$DATADIR/doc/sectiond/examples/fleet/$(basename "$file")"
done

shopt -s nullglob
for page in man/*.1 man/*.8; do
  section="${page##*.}"
  inst 0644 "$page" "$MANDIR/man$section/$(basename "$page")"
done

# The completion scripts are sectionctl's own (`sectionctl completion bash|zsh`).
completions="$(mktemp -d)"
if [ -z "$uninstall" ]; then
  "$BUILD_DIR/sectionctl" completion bash >"$completions/bash"
  "$BUILD_DIR/sectionctl" completion zsh >"$completions/zsh"
fi
inst 0644 "$completions/bash" "$DATADIR/bash-completion/completions/sectionctl"
inst 0644 "$completions/zsh" "$DATADIR/zsh/site-functions/_sectionctl"
rm -rf "$completions"

if [ -n "$uninstall" ]; then
  # sectiond's own directories, when nothing else is left in them; the shared ones (bin,
  # man1, systemd/system, ...) stay, as they may have been there before.
  for d in "$LIBEXECDIR" "$DATADIR/sectiond/web" "$DATADIR/sectiond" "$DATADIR/doc/sectiond/examples/waybar" \
    "$DATADIR/doc/sectiond/examples/fleet" \
    "$DATADIR/doc/sectiond/examples" "$DATADIR/doc/sectiond" "$SYSCONFDIR/sectiond"; do
    if [ -d "$DESTDIR$d" ] && rmdir "$DESTDIR$d" 2>/dev/null; then say "removed $DESTDIR$d/"; fi
  done
  if [ -z "$DESTDIR" ]; then
    if [ -n "$user_install" ]; then
      systemctl --user daemon-reload 2>/dev/null && say "your systemd user manager reloaded" || true
      say "kept: your state (~/.local/state/sectiond) and config (~/.config/sectiond/*.json)"
    elif [ "$(id -u)" = 0 ]; then
      if [ -d /run/systemd/system ] && command -v systemctl >/dev/null; then
        systemctl daemon-reload && say "systemd reloaded" || true
      fi
      say "kept: the state (/var/lib/sectiond), the user sectiond and your /etc/sectiond/*.json;" \
        "remove them by hand if you want them gone (userdel sectiond; rm -r /var/lib/sectiond)"
    fi
  fi
  exit 0
fi

# --- activate (live system only) ---------------------------------------------
if [ -n "$user_install" ] && [ -z "$DESTDIR" ]; then
  if systemctl --user daemon-reload 2>/dev/null; then
    say "your systemd user manager reloaded"
  else
    say "note: no systemd user manager answered; it finds the units at its next start"
  fi
  case ":$PATH:" in
    *":$BINDIR:"*) ;;
    *) say "note: $BINDIR is not on PATH; add it (export PATH=\"$BINDIR:\$PATH\")" ;;
  esac
  say "enable with: systemctl --user enable --now sectiond.socket sectiond-readonly.socket"
  say "another list, NAME: systemctl --user enable --now sectiond@NAME.socket sectiond-readonly@NAME.socket"
elif [ -z "$DESTDIR" ] && [ "$(id -u)" = 0 ]; then
  if command -v systemd-sysusers >/dev/null; then
    if systemd-sysusers "$SYSUSERSDIR/sectiond.conf"; then
      say "user and group sectiond are in place"
    else
      say "warning: systemd-sysusers failed; create the system user sectiond by hand"
    fi
  fi
  if command -v systemd-tmpfiles >/dev/null; then
    if systemd-tmpfiles --create "$TMPFILESDIR/sectiond.conf"; then
      say "/run/sectiond is in place"
    else
      say "warning: systemd-tmpfiles failed on $TMPFILESDIR/sectiond.conf"
    fi
  fi
  if [ -d /run/systemd/system ] && command -v systemctl >/dev/null; then
    systemctl daemon-reload && say "systemd reloaded" ||
      say "warning: systemctl daemon-reload failed; run it before enabling the units"
  fi
  case "$UNITDIR" in
    /lib/systemd/system | /usr/lib/systemd/system | /usr/local/lib/systemd/system | /etc/systemd/system) ;;
    *) say "warning: systemd does not look for units in $UNITDIR; link them into /etc/systemd/system" ;;
  esac
  say "enable with: systemctl enable --now sectiond.socket sectiond-readonly.socket"
  say "or, as a user, for your own daemon: systemctl --user enable --now sectiond.socket sectiond-readonly.socket"
  say "another list, NAME (README.md, \"Several lists\"): systemctl enable --now sectiond@NAME.socket sectiond-readonly@NAME.socket"
  say "the web page (needs websocketd; read-only, http://127.0.0.1:8047/): systemctl enable --now sectiond-web.service"
fi
