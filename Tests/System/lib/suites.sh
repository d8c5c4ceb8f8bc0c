# The manifest's reader, sourced by scripts/test.sh and suites/taken-names.sh (run from the
# repository's root). Tests/System/suites.tsv lists every suite, one a line, in the order they
# run: NAME, its time limit in seconds, whether it needs root (yes or no), and quick or full.
# The suite is the one file suites/NAME.sh or suites/NAME.py, run by the interpreter on its
# first line (#!/usr/bin/env bash, #!/usr/bin/env python3, or #!/usr/bin/python3 for the
# suites that import Debian's python3-gi or python3-selenium).
suites_dir=Tests/System/suites
suites_manifest=Tests/System/suites.tsv

# manifest_rows: the manifest's rows, "NAME LIMIT ROOT SET", without comments and blank lines.
manifest_rows() { sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$suites_manifest"; }

# manifest_problems: one line for each file in suites/ the manifest does not list, each row without
# a file (or with two), and each row whose fields are not NAME, seconds, yes|no, quick|full.
manifest_problems() {
  local file name limit root set extra
  for file in "$suites_dir"/*; do
    [ -f "$file" ] || continue # Python's __pycache__, say
    name=$(basename "$file")
    name=${name%.*}
    manifest_rows | awk -v n="$name" '$1 == n { found = 1 } END { exit !found }' ||
      echo "$file is not in $suites_manifest"
  done
  while read -r name limit root set extra; do
    local files=("$suites_dir/$name".sh "$suites_dir/$name".py)
    local present=()
    for file in "${files[@]}"; do [ -e "$file" ] && present+=("$file"); done
    [ ${#present[@]} -eq 1 ] || echo "$suites_manifest: $name has ${#present[@]} files in $suites_dir (one .sh or .py)"
    [[ "$limit" =~ ^[0-9]+$ && "$root" =~ ^(yes|no)$ && "$set" =~ ^(quick|full)$ && -z "$extra" ]] ||
      echo "$suites_manifest: $name: expected NAME SECONDS yes|no quick|full, got: $name $limit $root $set $extra"
  done < <(manifest_rows)
}

# run_bounded LIMIT NAME COMMAND...: runs COMMAND under timeout(1) so that a hung test fails
# CI instead of stalling it; one that overstays LIMIT seconds is reported in the suites' own
# "N passed, N failed" form. Returns COMMAND's status, or 1 on a timeout.
run_bounded() {
  local limit=$1 name=$2
  shift 2
  timeout --kill-after=10 "$limit" "$@"
  local status=$?
  if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
    echo "FAIL $name did not finish within $limit s"
    echo "0 passed, 1 failed"
    return 1
  fi
  return "$status"
}

# run_suite NAME [ARGUMENTS...]: runs one suite as its manifest row says, under its time limit.
# A suite that needs root prints a SKIP line and returns 77 (skipped) without root, unless
# SYSTEMD_LAB_REQUIRED=1 asks for the labs to run (and fail) anyway.
run_suite() {
  local name=$1 limit root set file interpreter
  shift
  read -r _ limit root set < <(manifest_rows | awk -v n="$name" '$1 == n')
  if [ -z "${limit:-}" ]; then
    echo "FAIL $name is not in $suites_manifest"
    echo "0 passed, 1 failed"
    return 1
  fi
  for file in "$suites_dir/$name".sh "$suites_dir/$name".py ""; do [ -e "$file" ] && break; done
  if [ -z "$file" ]; then
    echo "FAIL $name has no file in $suites_dir"
    echo "0 passed, 1 failed"
    return 1
  fi
  if [ "$root" = yes ] && [ "$(id -u)" != 0 ] && [ "${SYSTEMD_LAB_REQUIRED:-}" != 1 ]; then
    echo "SKIP $name: needs root"
    return 77 # skipped, for scripts/test.sh
  fi
  read -r interpreter <"$file"
  interpreter=${interpreter#\#!}
  # shellcheck disable=SC2086 # "/usr/bin/env python3" is two words
  BUILD_DIR="${BUILD_DIR:-.build/debug}" run_bounded "$limit" "$name" $interpreter "$file" "$@"
}
