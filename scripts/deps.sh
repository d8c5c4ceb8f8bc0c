#!/usr/bin/env bash
# Installs the Debian packages sectiond needs to build (with --test, to run its tests; with
# --deb, to build the Debian package; with --web, for `make web`; with --fleet, etcd for
# `make fleet`), only those that are missing, so a second run costs nothing. Always: the two
# clients the README's first session talks to the daemon with (nc -U -N, socat), which `make
# run` leads to. --print lists the packages for the options given and installs nothing.
set -euo pipefail
# libcurl4-openssl-dev: the headers of the Etcd module's libcurl (loaded at run time, in fleet mode only).
packages=(libsystemd-dev libedit-dev pkg-config netcat-openbsd socat libcurl4-openssl-dev)
print=""
for option in "$@"; do
  case "$option" in
    --print) print=1 ;;
    --test) packages+=(socat netcat-openbsd systemd util-linux python3 man-db groff-base redis-server strace zsh tmux
      fuse3 cmake g++ libfuse3-dev libtoml11-dev libspdlog-dev # LazyFS (powerloss.py)
      websocketd chromium chromium-driver python3-selenium curl # the web page (web.py)
      etcd-server etcd-client nftables # the etcd lab (Tests/System/lib/etcd_lab.py) and the fleet's partitions
      binutils) ;; # nm: sectiond has none of the fleet's code (FleetBinaryTests)
    --web) packages+=(websocketd iproute2) ;;
    --fleet) packages+=(etcd-server etcd-client) ;; # make fleet
    --deb) packages+=(dpkg-dev binutils) ;;
    *) echo "deps.sh: unknown option '$option' (--test, --deb, --web, --fleet, --print)" >&2; exit 2 ;;
  esac
done
# The D-Bus tests (Tests/System/suites/dbus.py): a private dbus-daemon, gdbus, and Python's Gio
# (Debian's python3-gi, for /usr/bin/python3); dbus-lab.py: a user's session bus, and polkitd,
# which decides for callers without a direct right.
case " $* " in *" --test "*) packages+=(dbus-daemon dbus-user-session libglib2.0-bin python3-gi polkitd) ;; esac
if [ -n "$print" ]; then printf '%s\n' "${packages[@]}"; exit 0; fi
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "installing: ${missing[*]}" >&2
if [ "$(id -u)" -ne 0 ]; then
  echo "need root to install ${missing[*]}: run sudo apt-get install ${missing[*]}" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
