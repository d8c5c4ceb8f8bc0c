#!/usr/bin/env bash
# The public API of the SectionClient library, one line per symbol (kind, path, declaration),
# read from the built modules' symbol graphs: SectionClient's, and SectionShared's and
# SectionGrammar's, which it re-exports (a program names Mode with `import SectionClient`). docs/CLIENT-API.txt is this
# list, checked in.
#
#   scripts/client-api.sh            # print the list (after swift build)
#   scripts/client-api.sh --check    # compare with docs/CLIENT-API.txt; also fail on a public
#                                    # type, function or method without a doc comment
set -euo pipefail
cd "$(dirname "$0")/.."
build="${BUILD_DIR:-.build/debug}"
graph=$(mktemp -d /tmp/sdapi.XXXXXX)
trap 'rm -rf "$graph"' EXIT
for module in SectionClient SectionShared SectionGrammar; do
  swift symbolgraph-extract -module-name "$module" -I "$build/Modules" \
    -Xcc -fmodule-map-file="$build/CShim.build/module.modulemap" -Xcc -ISources/CShim/include \
    -target "$(uname -m)-unknown-linux-gnu" -minimum-access-level public -output-dir "$graph" >/dev/null
done
list() {
  python3 - "$1" "$graph/SectionClient.symbols.json" "$graph/SectionShared.symbols.json" "$graph/SectionGrammar.symbols.json" <<'PY'
import json, sys
graph = {"symbols": [s for path in sys.argv[2:] for s in json.load(open(path))["symbols"]]}
documented_kinds = {"swift.class", "swift.struct", "swift.enum", "swift.protocol", "swift.method",
                    "swift.type.method", "swift.func"}
lines, undocumented = [], []
for symbol in graph["symbols"]:
    if "location" not in symbol:  # synthesised (Equatable, memberwise) or inherited
        continue
    kind = symbol["kind"]["identifier"].removeprefix("swift.")
    path = ".".join(symbol["pathComponents"])
    declaration = " ".join("".join(f["spelling"] for f in symbol["declarationFragments"]).split())
    constraints = symbol.get("swiftExtension", {}).get("constraints", [])
    where = ", ".join(f'{c["lhs"]} {"==" if c["kind"] == "sameType" else ":"} {c["rhs"]}' for c in constraints)
    lines.append(f"{kind} {path}: {declaration}" + (f" [where {where}]" if where else ""))
    if symbol["kind"]["identifier"] in documented_kinds and "docComment" not in symbol:
        undocumented.append(f"{kind} {path}")
if sys.argv[1] == "undocumented":
    print("\n".join(sorted(undocumented)))
else:
    print("\n".join(sorted(set(lines))))
PY
}
if [ "${1:-}" != --check ]; then
  list api
  exit
fi
status=0
if ! diff -u docs/CLIENT-API.txt <(list api) >"$graph/diff"; then
  echo "SectionClient's public API differs from docs/CLIENT-API.txt (+ is the code now):"
  cat "$graph/diff"
  echo "If the change is meant, run scripts/client-api.sh > docs/CLIENT-API.txt and say so in docs/CLIENT.md."
  status=1
fi
missing=$(list undocumented)
if [ -n "$missing" ]; then
  echo "public without a doc comment:"
  echo "$missing"
  status=1
fi
exit $status
