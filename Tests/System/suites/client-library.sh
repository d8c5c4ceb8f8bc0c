#!/usr/bin/env bash
# SectionClient as its users meet it: its public API is the one listed in docs/CLIENT-API.txt,
# each type and method documented (scripts/client-api.sh --check); the example program of
# docs/CLIENT.md (examples/accordion) builds as a program outside the package would, by path
# and (a tiny package) by url, and works against a real daemon. A change to the library that breaks its
# users breaks this suite, as does sectionctl reaching past the public API. Ends with "N passed,
# N failed".
set -uo pipefail
cd "$(dirname "$0")/../../.."
source Tests/System/lib/checks.sh
dir=$(mktemp -d /tmp/sdex.XXXXXX)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done; rm -rf "$dir"' EXIT

if api=$(BUILD_DIR="$BUILD_DIR" scripts/client-api.sh --check 2>&1); then
  pass "the public API is the one docs/CLIENT-API.txt lists, documented"
else
  fail "the public API is the one docs/CLIENT-API.txt lists, documented" "$api"
fi

# The library as a program outside this repository meets it, in both forms docs/CLIENT.md
# shows, from a clone in a folder not named sectiond (whose name is then the package's for a
# url, and nothing for a path with name:). The clone is of HEAD: commit what it should see.
# Offline: SwiftPM clones a file:// url itself. Each build compiles the library once, in a
# scratch directory of its own under $dir (SwiftPM keeps a path dependency's list of files in
# its scratch directory, and does not see a file added since).
head=$(git rev-parse HEAD)
clone="$dir/sdlib-clone"
git clone -q "file://$PWD" "$clone" && git -C "$clone" checkout -q "$head"
mkdir -p "$dir/urluser/Sources/urluser"
cat >"$dir/urluser/Package.swift" <<EOF
// swift-tools-version:6.0
import PackageDescription
let package = Package(
  name: "urluser",
  dependencies: [.package(url: "file://$clone", revision: "$head")],
  targets: [
    .executableTarget(
      name: "urluser", dependencies: [.product(name: "SectionClient", package: "sdlib-clone")])
  ]
)
EOF
# Every type a program meets, named with `import SectionClient` alone.
cat >"$dir/urluser/Sources/urluser/main.swift" <<'EOF'
import SectionClient

let mode: Mode = .exclusive
let list = try? ListName(validating: "work")
let request: Request<UInt64> = .setMode(mode)
do {
  _ = try AsyncClient(path: "/nonexistent/" + SocketNames.control, name: "urluser", timeout: 1)
} catch {
  print(error.code, ClientName.isValid("urluser"), request.lines, list?.rawValue ?? "-")
}
EOF
if swift build --package-path "$dir/urluser" --scratch-path "$dir/urluser-build" >"$dir/url.log" 2>&1; then
  pass "a package depending on SectionClient by url (a clone in a folder of another name) builds"
else
  fail "a package depending on SectionClient by url builds" "$(tail -20 "$dir/url.log")"
fi
expect "it names Mode, ListName, Request, SocketNames, ClientName with import SectionClient alone" \
  'UNAVAILABLE true ["MODE exclusive"] work' "$("$dir/urluser-build/debug/urluser" 2>&1)"

# sectionctl proves the public API by using nothing else: SectionCtl is built without access to
# the library's package declarations (packageAccess: false). A use of one, added to a copy of
# SectionCtl, must stop its build, and stop it there.
cat >"$clone/Sources/SectionCtl/PackageProbe.swift" <<'EOF'
import SectionClient

// SocketLocation.resolve is package: a test's helper, no part of the API.
let packageProbe = SocketLocation.resolve(explicit: nil, readonly: false, environment: .current)
EOF
if swift build --package-path "$clone" --scratch-path "$dir/ctl-build" --target SectionCtl \
  >"$dir/ctl.log" 2>&1; then
  fail "SectionCtl cannot use a package declaration of SectionClient" "a use of SocketLocation.resolve built"
elif grep -q "PackageProbe.swift:.*error: .*resolve" "$dir/ctl.log" \
  && ! grep -E "^/[^ ]*:[0-9]+:[0-9]+: error:" "$dir/ctl.log" | grep -qv "PackageProbe.swift"; then
  pass "SectionCtl cannot use a package declaration of SectionClient (packageAccess: false)"
else
  fail "SectionCtl cannot use a package declaration of SectionClient" "$(grep -E "^/.*error:" "$dir/ctl.log" | head -5)"
fi
rm "$clone/Sources/SectionCtl/PackageProbe.swift"

scratch="$dir/accordion-build"
if swift build --package-path "$clone/examples/accordion" --scratch-path "$scratch" >"$dir/build.log" 2>&1; then
  pass "examples/accordion builds on SectionClient by path, from a clone in a folder of another name"
else
  fail "examples/accordion builds" "$(tail -20 "$dir/build.log")"
  finish
fi
accordion="$scratch/debug/accordion"

start demo --no-state
export SECTIOND_SOCKET="$dir/demo.sock"
expect "toggle prints what the daemon says" "second is open now" "$("$accordion" toggle second)"

# Follows two changes made by sectionctl while it runs, then stops.
"$accordion" --count 2 >"$dir/out" 2>"$dir/err" &
follower=$!
pids+=($follower)
for _ in $(seq 100); do grep -q "revision 1" "$dir/out" && break; sleep 0.05; done
"$BUILD_DIR/sectionctl" open first >/dev/null
for _ in $(seq 100); do grep -q "revision 2" "$dir/out" && break; sleep 0.05; done
"$BUILD_DIR/sectionctl" rename third "Third, renamed" >/dev/null
for _ in $(seq 200); do kill -0 "$follower" 2>/dev/null || break; sleep 0.05; done
if kill -0 "$follower" 2>/dev/null; then
  fail "the example stops after --count 2 changes" "$(cat "$dir/out" "$dir/err")"
else
  pass "the example stops after --count 2 changes"
fi
out=$(cat "$dir/out")
contains "the first frame shows the open section and its items" $'▾ Second (8)\n    1' "$out"
contains "an open made elsewhere is drawn" $'— revision 2, multi —\n▾ First (10)' "$out"
contains "a rename made elsewhere is drawn" "▸ Third, renamed (6)" "$out"
"$accordion" toggle nope >/dev/null 2>"$dir/err"
expect "a refused request exits 1 with the daemon's message" \
  "1 accordion: no section \"nope\": there are 3 (0-2)" "$? $(cat "$dir/err")"
finish
