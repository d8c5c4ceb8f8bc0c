#!/usr/bin/env bash
# Build the Debian package sectiond_VERSION_ARCH.deb from the staged install.
#
#   scripts/deb.sh [--no-build]
#
# Environment:
#   DEB_DIR    where the package goes (default build/)
#   VERSION    the package version (default: what the built sectiond --version says);
#              tests bump it to try an upgrade without rebuilding the binaries
#   BUILD_DIR  the release binaries with --no-build (default .build/release);
#              ignored without it (the binaries are then the build it runs)
#   SWIFT_BUILD_FLAGS  passed to scripts/install.sh's release build
#
# The binaries are the release build with the Swift runtime linked in statically
# (scripts/install.sh builds them; Package.swift links them with -z now), stripped
# as dh_strip would; the package depends on what dpkg-shlibdeps finds they link
# (libc6, libsystemd0, libstdc++6, libgcc-s1) and on systemd-sysusers for the
# postinst. Everything else is scripts/install.sh --prefix /usr, moved where
# Debian wants it: the example config to /usr/share/doc/sectiond/examples/ (no
# file in /etc, so no conffile) with the recipes of examples/, zsh completion to
# vendor-completions, man pages gzipped. The maintainer scripts (packaging/deb/)
# are what debhelper would generate.
# Needs dpkg-dev and binutils (scripts/deps.sh --deb); prints the package's path.
set -euo pipefail

usage() {
  sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"
}

build=1
case "$*" in
  "") ;;
  --no-build) build=0 ;;
  -h | --help) usage; exit 0 ;;
  *) echo "deb.sh: unknown arguments '$*' (see --help)" >&2; exit 2 ;;
esac
out="${DEB_DIR:-build}"

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
for tool in dpkg-deb dpkg-shlibdeps strip; do
  command -v "$tool" >/dev/null || {
    echo "deb.sh: $tool is missing; install it with scripts/deps.sh --deb (dpkg-dev, binutils)" >&2
    exit 1
  }
done

work="$(mktemp -d /tmp/sectiond-deb.XXXXXX)"
trap 'rm -rf "$work"' EXIT
stage="$work/root"
doc="$stage/usr/share/doc/sectiond"

# Building, install.sh takes the binaries from the build it ran, whatever BUILD_DIR a
# caller exported (scripts/test.sh exports the debug one).
if [ "$build" = 1 ]; then
  BUILD_DIR="" scripts/install.sh --prefix /usr --destdir "$stage" >"$work/install.log"
else
  BUILD_DIR="${BUILD_DIR:-.build/release}" scripts/install.sh --no-build --prefix /usr \
    --destdir "$stage" >"$work/install.log"
fi || { cat "$work/install.log" >&2; exit 1; }
if ldd "$stage/usr/bin/sectiond" "$stage/usr/libexec/sectiond/sectiond-fleet" | grep -q libswiftCore; then
  echo "deb.sh: ${BUILD_DIR:-the build}/sectiond links the Swift runtime dynamically (a debug" \
    "build?); the package needs the release build: scripts/deb.sh, or BUILD_DIR=.build/release" >&2
  exit 1
fi

version="${VERSION:-$("$stage/usr/bin/sectiond" --version | awk '{print $2}')}"
arch="$(dpkg --print-architecture)"
# Reproducible: every date in the package is the last commit's.
export SOURCE_DATE_EPOCH="${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}"

# --- Debian's layout -----------------------------------------------------------
mkdir -p "$doc/examples"
mv "$stage/etc/sectiond/sections.json.example" "$doc/examples/sections.json"
mv "$stage/etc/sectiond/access.conf.example" "$doc/examples/access.conf"
# The status-bar and shell recipes (README, "Status bars and shells") came with install.sh,
# none executable under /usr/share/doc, as policy asks.
chmod -R u=rwX,go=rX "$doc/examples"
# /etc/sectiond stays, empty: the service's ConfigurationDirectory=, where the
# admin puts sections.json; owning it lets dpkg remove it on purge.
mkdir -p "$stage/usr/share/zsh/vendor-completions"
mv "$stage/usr/share/zsh/site-functions/_sectionctl" "$stage/usr/share/zsh/vendor-completions/"
rmdir "$stage/usr/share/zsh/site-functions"
gzip -9n "$stage"/usr/share/man/man*/*
install -m 0644 packaging/deb/copyright "$doc/copyright"
install -D -m 0644 packaging/deb/lintian-overrides "$stage/usr/share/lintian/overrides/sectiond"
{
  printf 'sectiond (%s) unstable; urgency=medium\n\n' "$version"
  printf '  * Built from the sectiond source tree, commit %s.\n\n' \
    "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  printf ' -- %s  %s\n' "$(sed -n 's/^Maintainer: //p' packaging/deb/control.in)" \
    "$(date -R -u -d "@$SOURCE_DATE_EPOCH")"
} | gzip -9n >"$doc/changelog.gz"

# As dh_strip: no symbols, no .comment/.note sections (the Swift runtime is inside).
for b in usr/bin/sectiond usr/libexec/sectiond/sectiond-fleet usr/bin/sectionctl; do
  strip --remove-section=.comment --remove-section=.note --strip-unneeded "$stage/$b"
done

# --- control ---------------------------------------------------------------------
mkdir -p "$work/debian"
printf 'Source: sectiond\n\nPackage: sectiond\nArchitecture: any\n' >"$work/debian/control"
shlibs="$(cd "$work" && dpkg-shlibdeps -O -e"$stage/usr/bin/sectiond" \
  -e"$stage/usr/libexec/sectiond/sectiond-fleet" -e"$stage/usr/bin/sectionctl" 2>/dev/null)"
depends="${shlibs#shlibs:Depends=}, systemd | systemd-sysusers"
size="$(du -sk --apparent-size "$stage" | cut -f1)"
mkdir -p "$stage/DEBIAN"
sed -e "s|@VERSION@|$version|" -e "s|@ARCH@|$arch|" -e "s#@DEPENDS@#$depends#" \
  -e "s|@INSTALLED_SIZE@|$size|" packaging/deb/control.in >"$stage/DEBIAN/control"
install -m 0755 packaging/deb/postinst packaging/deb/prerm packaging/deb/postrm "$stage/DEBIAN/"
(cd "$stage" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | sort -z |
  xargs -0 md5sum) >"$stage/DEBIAN/md5sums"
chmod 0644 "$stage/DEBIAN/md5sums"

find "$stage" -type d -exec chmod 0755 {} +
find "$stage" -exec touch --no-dereference -d "@$SOURCE_DATE_EPOCH" {} +
mkdir -p "$out"
deb="$out/sectiond_${version}_${arch}.deb"
dpkg-deb --root-owner-group -Zxz --build "$stage" "$deb" >/dev/null
echo "$deb"
