#!/usr/bin/env bash
# Fuzzes SectionCore with libFuzzer: the request path (framer, parser, service), the config
# loader and the state file reader, one target each (Tests/Fuzz/<Name>Fuzzer.swift).
#
# The targets are compiled once, with the toolchain's swiftc, together with Sources/SectionCore as
# one module, with libFuzzer and AddressSanitizer, into one binary in a temporary directory
# (SwiftPM never sees Tests/Fuzz/); SECTIOND_FUZZ_TARGET picks the target it runs
# (Tests/Fuzz/FuzzEntry.swift). Every file in Tests/Fuzz/regressions/<target>/ (inputs that once crashed) is run first, then
# the target fuzzes a copy of Tests/Fuzz/corpus/<target>/ for FUZZ_SECONDS (default 60). A crash, a
# failed check, a leak, a hang (-timeout), an allocation over -malloc_limit_mb or a process
# over -rss_limit_mb fails the target and prints the reproducer; run it again with
#   SECTIOND_FUZZ_TARGET=<target> <binary> <reproducer>
# (FUZZ_KEEP=1 keeps the binary; its directory is printed).
#
#   FUZZ_SECONDS=600 Tests/Build/fuzz.sh          # fuzz longer by hand
#   FUZZ_TARGETS="config state" Tests/Build/fuzz.sh
set -euo pipefail
cd "$(dirname "$0")/../.."

seconds=${FUZZ_SECONDS:-60}
targets=(${FUZZ_TARGETS:-request config state})
# Requests: room for two lines over the 4096-byte limit. Configs and state files: a few KiB.
declare -A max_len=([request]=12288 [config]=8192 [state]=2048)
# ASan's quarantine and libFuzzer's corpus make ~500 MB normal; a single allocation is tiny.
rss_limit_mb=${FUZZ_RSS_LIMIT_MB:-2048}
malloc_limit_mb=${FUZZ_MALLOC_LIMIT_MB:-64}
timeout_seconds=${FUZZ_TIMEOUT:-10}

# What the build needs besides the Swift toolchain: a linker and the C and C++ runtimes
# (libFuzzer is C++).
missing=()
command -v ld.gold >/dev/null || missing+=(binutils)
[ -e /usr/include/stdio.h ] || missing+=(libc6-dev)
compgen -G "/usr/lib/gcc/*/*/libstdc++.so" >/dev/null || missing+=(g++)
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}" >&2
  [ "$(id -u)" -eq 0 ] || { echo "need root to install ${missing[*]}" >&2; exit 1; }
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
command -v swiftc >/dev/null || { echo "swiftc not found: install the Swift toolchain" >&2; exit 1; }
# Swift's crash backtracer reads process memory in a way ASan reports as a second crash; libFuzzer
# prints the stack itself.
export SWIFT_BACKTRACE=enable=no
symbolizer=$(dirname "$(command -v swiftc)")/llvm-symbolizer
[ -x "$symbolizer" ] && export ASAN_SYMBOLIZER_PATH=$symbolizer

work=$(mktemp -d /tmp/sectiond-fuzz.XXXXXX)
artifacts=$work/artifacts
if [ "${FUZZ_KEEP:-0}" = 1 ]; then
  echo "binaries and artifacts in $work"
else
  # Reproducers are copied out before the directory goes.
  trap 'rm -rf "$work"' EXIT
fi
saved_failures=${FUZZ_FAILURES:-$PWD/.build/fuzz-failures}

passed=0
failed=0
summary=()
fail() {
  local target=$1 why=$2 log=$3
  echo "FAIL $target: $why" >&2
  tail -n 60 "$log" >&2
  local found=0
  for artifact in "$artifacts/$target"/*; do
    [ -e "$artifact" ] || continue
    mkdir -p "$saved_failures/$target"
    cp "$artifact" "$saved_failures/$target/"
    echo "reproducer: $saved_failures/$target/$(basename "$artifact")" >&2
    found=1
  done
  [ $found = 1 ] && echo "run it again with SECTIOND_FUZZ_TARGET=$target <binary> <reproducer> (FUZZ_KEEP=1 keeps the binary); add it to Tests/Fuzz/regressions/$target/ once fixed" >&2
  failed=$((failed + 1))
  summary+=("$target: FAILED ($why)")
}

# SectionCore's sources and those of SectionShared and SectionGrammar, which it imports, and the
# fleet's log entry (the state target decodes one as a host decodes etcd's bytes), as one module:
# copies without the imports of the others (a file's name is its path, so that a report still
# points to it).
sources=()
mkdir -p "$work/sources"
while IFS= read -r file; do
  copy=$work/sources/${file//\//_}
  grep -vE '^(@_exported )?import (SectionShared|SectionGrammar|SectionCore)$' "$file" >"$copy"
  sources+=("$copy")
done < <(find Sources/SectionShared Sources/SectionGrammar Sources/SectionCore Sources/SectionFleet/FleetEntry.swift -name "*.swift" | sort)

binary=$work/fuzz
log=$work/build.log
echo "== fuzz: build"
start=$SECONDS
# One module with SectionCore, SectionShared, SectionGrammar and the fleet's entry, so the entry files need no import and the
# whole path is one optimization unit; -parse-as-library because libFuzzer supplies main;
# -package-name as SwiftPM's, for SectionShared's `package` declarations (JSON, ...).
if ! swiftc -sanitize=fuzzer,address -parse-as-library -O -g -module-name SectionFuzz -package-name sectiond \
  -use-ld=lld \
  "${sources[@]}" Tests/Fuzz/*.swift -o "$binary" >"$log" 2>&1; then
  tail -n 60 "$log" >&2
  echo "0 passed, ${#targets[@]} failed"
  exit 1
fi
echo "   built in $((SECONDS - start)) s"

for target in "${targets[@]}"; do
  case $target in request | config | state) ;; *) echo "unknown target $target" >&2; exit 2 ;; esac
  export SECTIOND_FUZZ_TARGET=$target
  log=$work/$target.log
  mkdir -p "$artifacts/$target"
  options=(-max_len="${max_len[$target]}" -rss_limit_mb="$rss_limit_mb" -malloc_limit_mb="$malloc_limit_mb"
    -timeout="$timeout_seconds" -artifact_prefix="$artifacts/$target/")
  regressions=()
  for file in Tests/Fuzz/regressions/"$target"/*; do
    [ -f "$file" ] && regressions+=("$file")
  done
  if [ ${#regressions[@]} -gt 0 ]; then
    echo "== fuzz $target: ${#regressions[@]} regression inputs"
    if ! "$binary" "${options[@]}" "${regressions[@]}" >"$log" 2>&1; then
      fail "$target" "a regression input fails again" "$log"
      continue
    fi
  fi

  echo "== fuzz $target: ${seconds} s"
  corpus=$work/corpus/$target
  mkdir -p "$corpus"
  cp Tests/Fuzz/corpus/"$target"/* "$corpus"/
  seeds=$(ls "$corpus" | wc -l)
  status=0
  timeout --kill-after=10 $((seconds + 120)) "$binary" "${options[@]}" -max_total_time="$seconds" \
    -print_final_stats=1 "$corpus" >"$log" 2>&1 || status=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
  rss=$(sed -n 's/^stat::peak_rss_mb: *//p' "$log" | tail -n 1)
  last=$(grep -E '^#[0-9]+' "$log" | tail -n 1 || true)
  cov=$(sed -n 's/.* cov: \([0-9]*\) .*/\1/p' <<<"$last")
  ft=$(sed -n 's/.* ft: \([0-9]*\) .*/\1/p' <<<"$last")
  units=$(sed -n 's/.* corp: \([0-9]*\)\/.*/\1/p' <<<"$last")
  figures="${runs:-?} runs (${speed:-?}/s), coverage ${cov:-?} edges, ${ft:-?} features, corpus ${seeds} -> ${units:-?}, peak RSS ${rss:-?} MB"
  if [ $status -ne 0 ]; then
    case $status in
      124 | 137) why="hung past the time limit" ;;
      *) why="$(grep -m1 -oE 'ERROR: (libFuzzer|AddressSanitizer|LeakSanitizer): [a-zA-Z -]+|Fatal error: .*|Precondition failed.*' "$log" || echo "exit $status")" ;;
    esac
    fail "$target" "$why" "$log"
    continue
  fi
  echo "   $figures"
  summary+=("$target: ok, $figures")
  passed=$((passed + 1))
done

echo "== fuzz summary"
printf '   %s\n' "${summary[@]}"
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
