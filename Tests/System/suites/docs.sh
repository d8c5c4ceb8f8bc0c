#!/usr/bin/env bash
# What README.md, docs/PROTOCOL.md, the man pages and --help promise, checked against the
# built binaries: each check runs the behaviour and looks for the sentence that describes it.
# Ends with "N passed, N failed"; exits 1 on any failure.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
bin="$root/${BUILD_DIR:-.build/debug}"
for tool in nc socat man; do
  command -v "$tool" >/dev/null || { echo "FAIL $tool is missing: scripts/deps.sh --test installs it"; echo "0 passed, 1 failed"; exit 1; }
done
dir=$(mktemp -d /tmp/sddoc.XXXXXX)
chmod 755 "$dir"
sock="$dir/c.sock"
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done; rm -rf "$dir"' EXIT
# start NAME SOCKET ARGS...: a daemon in the background, waited for until its socket is there.
start() {
  local name=$1 socket=$2
  shift 2
  "$bin/sectiond" --socket "$socket" "$@" 2>"$dir/$name.log" &
  pids+=($!)
  for _ in $(seq 100); do [ -S "$socket" ] && return; sleep 0.05; done
}
export PATH="$bin:$PATH" SECTIOND_SOCKET="$sock"
readme="$root/README.md" protocol="$root/docs/PROTOCOL.md"
# The man pages as a reader sees them, in ASCII and on long lines, so sentences grep whole.
page() { LC_ALL=C MANWIDTH=1000 man -l "$root/man/$1" 2>/dev/null | sed 's/^ *//'; }
sectiond_page="$(page sectiond.8)" sectionctl_page="$(page sectionctl.1)"

passed=0 failed=0
check() { # name, expected, actual
  if [ "$2" = "$3" ]; then passed=$((passed + 1)); echo "ok   $1"
  else failed=$((failed + 1)); printf 'FAIL %s\n--- expected\n%s\n--- got\n%s\n' "$1" "$2" "$3"; fi
}
# says NAME TEXT FIXED-STRING: the text contains the string.
says() {
  if grep -qF -- "$3" <<<"$2"; then check "$1" yes yes; else check "$1" "says: $3" "(not found)"; fi
}

start demo "$sock" --no-state

# sectionctl(1) EXAMPLES: every example whose output the page shows in full (no pipe, no watch,
# no ui: it needs a terminal, and Tests/System/suites/ui.py drives it in tmux) prints exactly that. The table example shows section 1 open.
sectionctl toggle 1 >/dev/null
examples="$(sed -n '/^EXAMPLES$/,/^SEE ALSO$/p' <<<"$sectionctl_page" | sed '1d;$d')"
command="" shown="" ran=0
run_example() {
  [ -n "$command" ] || return 0
  case $command in *'|'* | *watch* | *send* | *' ui'*) return 0 ;; esac
  ran=$((ran + 1))
  check "sectionctl(1) example: $command" "$shown" "$(eval "$command" 2>&1)"
}
while IFS= read -r line; do
  if [[ $line == '$ '* ]]; then
    run_example
    command=${line#'$ '} shown=""
  elif [ -n "$line" ]; then
    shown+="${shown:+$'\n'}$line"
  fi
done <<<"$examples"
run_example
check "sectionctl(1) has examples with their output" yes "$([ "$ran" -ge 3 ] && echo yes || echo "only $ran")"

# sectiond(8): the watchdog interval is the fraction EventLoop uses.
divisor="$(sed -n 's/.*let period = interval \/ \([0-9]*\).*/\1/p' "$root/Sources/Systemd/EventLoop.swift")"
case $divisor in 2) fraction=half ;; 3) fraction=third ;; 4) fraction=quarter ;; *) fraction="1/$divisor" ;; esac
says "sectiond(8): pings every $fraction of WATCHDOG_USEC (integration)" "$sectiond_page" \
  "pings the watchdog from its event loop every $fraction of WATCHDOG_USEC"
says "sectiond(8): pings every $fraction of WATCHDOG_USEC (environment)" "$sectiond_page" \
  "pings the watchdog every $fraction of this interval"

# Plain stderr has no timestamps, and sectiond(8) says so.
check "stderr: a plain line, no timestamp" "sectiond: serving" "$(head -1 "$dir/demo.log" | cut -c1-17)"
says "sectiond(8): no timestamp on plain stderr" "$sectiond_page" "They carry no timestamp."
says "README: no timestamp on stderr" "$(tr '\n' ' ' <"$readme")" "without a timestamp"

# Watching from a shell: nc -N ends after the snapshot; nc without -N and socat - see events.
snapshot="$(printf 'SUBSCRIBE\n' | timeout 5 nc -U -N "$sock"; echo "exit_$?")"
check "nc -U -N: snapshot, then end of file" "state OK exit_0" "$(awk '{ printf "%s%s", s, $1; s = " " }' <<<"$snapshot")"
printf 'SUBSCRIBE\n' | timeout 2 nc -U "$sock" >"$dir/nc.events" &
nc_pid=$!
(printf 'SUBSCRIBE\n'; sleep 2) | timeout 2 socat - "UNIX-CONNECT:$sock" >"$dir/socat.events" &
socat_pid=$!
sleep 0.5
sectionctl close third >/dev/null
sectionctl open third >/dev/null
wait "$nc_pid" "$socat_pid"
# (The event and the id: the examples run above may have added sections before "third".)
check "nc -U without -N sees events" "!opened third" "$(grep '^!opened' "$dir/nc.events" | cut -d' ' -f1,4)"
check "socat - sees events" "!opened third" "$(grep '^!opened' "$dir/socat.events" | cut -d' ' -f1,4)"
for doc in README PROTOCOL.md; do
  text="$(tr '\n' ' ' <"$([ $doc = README ] && echo "$readme" || echo "$protocol")")"
  says "$doc: nc -U -N ends after the snapshot" "$text" "printf 'SUBSCRIBE\n' | nc -U -N"
  says "$doc: watch with socat -" "$text" "socat - UNIX-CONNECT:"
  says "$doc: watch with nc -U without -N" "$text" "nc -U "
  says "$doc: watch with sectionctl watch" "$text" "sectionctl watch"
done

# Ids: case-sensitive as refs, Fruit and fruit coexist, non-ASCII letters refused.
cat >"$dir/ids.json" <<'EOF'
{"sections": [{"id": "first", "title": "First"}, {"id": "Fruit", "title": "Fruit"}, {"id": "fruit", "title": "fruit"}]}
EOF
start ids "$dir/ids.sock" --readonly-socket "$dir/ids-ro.sock" --no-state --config "$dir/ids.json"
check "Fruit and fruit coexist" "Fruit fruit" "$(printf 'LIST\n' | nc -U -N "$dir/ids.sock" | awk '$1 == "section" && NR > 1 { printf "%s%s", s, $3; s = " " }')"
check "OPEN FIRST is NOSECTION" "ERR NOSECTION" "$(printf 'OPEN FIRST\n' | nc -U -N "$dir/ids.sock" | cut -d' ' -f1-2)"
printf '{"sections": [{"id": "caf\xc3\xa9", "title": "Cafe"}]}' >"$dir/accent.json"
check "a non-ASCII id is refused" "1" "$(sectiond --check-config --config "$dir/accent.json" >/dev/null 2>&1; echo $?)"
for doc in README PROTOCOL.md sectiond.8; do
  case $doc in
  README) text="$(tr '\n' ' ' <"$readme")" ;;
  PROTOCOL.md) text="$(tr '\n' ' ' <"$protocol")" ;;
  *) text="$(tr '\n' ' ' <<<"$sectiond_page")" ;;
  esac
  says "$doc: ids are case-sensitive" "$text" "case-sensitive"
  says "$doc: ids are ASCII" "$text" "ASCII letters a-z and A-Z"
done

# Without XDG_RUNTIME_DIR a user's socket is in /tmp/sectiond-UID: so the code does, and so
# sectiond --help, sectiond(8) and the README say.
# The uid is one no account has and whose /tmp/sectiond-UID does not exist, so that the
# machine's own (nobody's daemon, say) is never touched.
if command -v setpriv >/dev/null && [ "$(id -u)" -eq 0 ]; then
  cp "$bin/sectiond" "$dir/sectiond"
  uid=4200
  while getent passwd "$uid" >/dev/null || [ -e "/tmp/sectiond-$uid" ]; do uid=$((uid + 1)); done
  env -i HOME="$dir" PATH=/usr/bin:/bin setpriv --reuid="$uid" --regid="$uid" --clear-groups \
    "$dir/sectiond" --no-state 2>"$dir/nobody.log" &
  pids+=($!)
  for _ in $(seq 100); do [ -S "/tmp/sectiond-$uid/control.sock" ] && break; sleep 0.05; done
  check "a user without XDG_RUNTIME_DIR listens in /tmp/sectiond-UID" yes \
    "$([ -S "/tmp/sectiond-$uid/control.sock" ] && echo yes || cat "$dir/nobody.log")"
  kill "${pids[-1]}"
  wait "${pids[-1]}" 2>/dev/null
  rm -rf "/tmp/sectiond-$uid"
fi
says "sectiond --help: /tmp/sectiond-UID" "$(sectiond --help)" "/tmp/sectiond-UID/control.sock without XDG_RUNTIME_DIR"
says "sectiond(8): /tmp/sectiond-UID" "$sectiond_page" "/tmp/sectiond-UID/control.sock when XDG_RUNTIME_DIR is not set"
says "README: /tmp/sectiond-UID" "$(cat "$readme")" "\`/tmp/sectiond-UID/control.sock\` when \`XDG_RUNTIME_DIR\` is unset"

# watch --help on a restart: watch resumes, printing what it missed and no
# new state line, as the help says; a daemon that kept no history gets the fresh state.
start kept "$dir/kept.sock" --state "$dir/kept.json"
sectionctl -s "$dir/kept.sock" watch --count 2 >"$dir/watch.out" 2>/dev/null &
watch_pid=$!
for _ in $(seq 100); do [ -s "$dir/watch.out" ] && break; sleep 0.05; done
sectionctl -s "$dir/kept.sock" open first >/dev/null
kill "${pids[-1]}"
wait "${pids[-1]}" 2>/dev/null
start kept "$dir/kept.sock" --state "$dir/kept.json"
sectionctl -s "$dir/kept.sock" open second >/dev/null
for _ in $(seq 100); do kill -0 "$watch_pid" 2>/dev/null || break; sleep 0.05; done
kill "$watch_pid" 2>/dev/null
check "watch across a restart: the missed change, no new state line" \
  "state 0 multi - opened 1 0 first opened 2 1 second" "$(tr '\n' ' ' <"$dir/watch.out" | sed 's/ $//')"
says "watch --help: it resumes after a restart" "$(sectionctl watch --help | tr '\n' ' ')" \
  "resumes where it left off: the changes it missed"

# make run installs the clients the README's first session talks to the daemon with: it runs
# scripts/deps.sh without options, whose packages hold nc and socat.
session="$(sed -n '/^## A session/,/^## sectionctl/p' "$readme")"
base_packages="$("$root/scripts/deps.sh" --print)"
says "make run runs scripts/deps.sh" "$(make -n -s -C "$root" run 2>/dev/null)" "scripts/deps.sh"
for pair in "nc -U:netcat-openbsd" "socat -:socat"; do
  says "README's session uses ${pair%%:*}" "$session" "${pair%%:*}"
  says "  ... and make run's deps.sh installs ${pair#*:}" "$base_packages" "${pair#*:}"
done

# Every option --help lists is in each synopsis (the README's once lacked
# --list, --history and --log-changes): sectiond's in the README's "Command line" and
# sectiond(8)'s SYNOPSIS, sectionctl's in sectionctl(1)'s.
# in_synopsis NAME TEXT FLAG: FLAG stands in TEXT as an option ([--flag, | --flag], --flag ...).
in_synopsis() {
  if grep -qE -- "(\[|\| |\|)$3([] =]|$)" <<<"$2"; then check "$1" yes yes; else check "$1" "has: $3" "(not found)"; fi
}
readme_synopsis="$(sed -n '/^## Command line/,/^| flag/p' "$readme" | sed -n '/^sectiond /,/^```/p' | tr '\n' ' ')"
man_synopsis() { sed -n '/^SYNOPSIS/,/^DESCRIPTION/p' <<<"$1" | tr '\n' ' '; }
flags="$(sectiond --help | grep -oE '^ {2,}--[a-z-]+' | tr -d ' ')"
check "sectiond --help lists its options" yes "$([ "$(wc -l <<<"$flags")" -ge 20 ] && echo yes || echo "$flags")"
for flag in $flags; do
  in_synopsis "README synopsis: sectiond $flag" "$readme_synopsis" "$flag"
  in_synopsis "sectiond(8) SYNOPSIS: $flag" "$(man_synopsis "$sectiond_page")" "$flag"
done
for flag in $(sectionctl --help | grep -oE '^ {2,}(-[a-z], )?--[a-z-]+' | grep -oE -- '--[a-z-]+'); do
  in_synopsis "sectionctl(1) SYNOPSIS: $flag" "$(man_synopsis "$sectionctl_page")" "$flag"
done
# ... and the README says what the history is and how to read it.
history_text="$(sed -n '/^## History/,/^## /p' "$readme")"
for needle in "sectionctl log" "HISTORY" "--history N" "--log-changes" "CLIENT NAME" "SUBSCRIBE FROM"; do
  says "README, History: $needle" "$history_text" "$needle"
done

# The README's `sectionctl log` example has the columns the command prints: revision, time, who.
log_shape='^[0-9]+  [0-9]{2}:[0-9]{2}:[0-9]{2}  [^ ]+ \([^,]+, [0-9]+\)  [a-z]'
sectionctl toggle first >/dev/null
check "sectionctl log prints revision, time, who, what" yes \
  "$(sectionctl log -n 1 | grep -qE "$log_shape" && echo yes || sectionctl log -n 1)"
readme_log="$(sed -n '/^\$ sectionctl log -n/,/^\$/p' "$readme" | sed '1d;$d')"
check "README's sectionctl log example has those columns" yes \
  "$([ -n "$readme_log" ] && ! grep -vqE "$log_shape" <<<"$readme_log" && echo yes || echo "$readme_log")"

# The README's first screen says what sectiond is and how to try it: `make run` and `make test`
# within its first 30 lines, and every package `make run` installs (scripts/deps.sh without
# options) named in its quick start.
first_screen="$(head -30 "$readme")"
for needle in "make run" "make test" "sectiond is a"; do
  says "README's first screen: $needle" "$first_screen" "$needle"
done
quick_start="$(sed -n '/^## Quick start/,/^## /p' "$readme" | tr '\n' ' ')"
for package in $base_packages; do
  says "README's quick start names make run's package $package" "$quick_start" "$package"
done
# make test's announced duration is the measured one (about 30 minutes).
says "make help: make test takes about 30 minutes" "$(make -s -C "$root" help)" "about 30 minutes"

# docs/README.md, the index, names every page of docs/ and man/, and CONTRIBUTING.md.
index="$root/docs/README.md"
check "docs/README.md exists" yes "$([ -f "$index" ] && echo yes || echo no)"
for page in "$root"/docs/* "$root"/man/* "$root/CONTRIBUTING.md"; do
  name="$(basename "$page")"
  [ "$name" = README.md ] && continue
  says "docs/README.md names $name" "$(cat "$index" 2>/dev/null)" "$name"
done

# CONTRIBUTING.md's Layout names every folder of SectionServer and every SwiftPM test target,
# so that a folder or a target added without a line there is found here.
contributing="$(cat "$root/CONTRIBUTING.md")"
for folder in "$root"/Sources/SectionServer/*/; do
  folder="Sources/SectionServer/$(basename "$folder")"
  says "CONTRIBUTING.md's Layout names $folder" "$contributing" "\`$folder\`"
done
for target in "$root"/Tests/*Tests/; do
  target="$(basename "$target")"
  says "CONTRIBUTING.md's Layout names the test target $target" "$contributing" "\`$target\`"
done

# Pages for readers carry no account of how the work was done: no tracker numbers ("issue 46",
# "#46"; a sample item's "pull request #42" is content), no commit hashes, no branch or session
# names.
how_made=""
for page in "$root/README.md" "$root/CONTRIBUTING.md" "$root"/docs/*.md "$root"/docs/*.txt "$root"/docs/*.xml "$root"/man/*; do
  found="$(grep -nHiP '\bissues? [0-9]+|(?<!pull request )#[0-9]+\b|\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}\b|\bbranch `[^`]+`|\bsession [0-9]+' "$page")"
  how_made+="${found:+$found$'\n'}"
done
check "no tracker numbers, commit hashes or branch names in the docs" "" "$how_made"

# docs/PERFORMANCE.md's summary is generated (bench/report.py), between its two markers.
perf="$(cat "$root/docs/PERFORMANCE.md")"
says "PERFORMANCE.md: the generated part's start" "$perf" "<!-- generated by bench/report.py"
says "PERFORMANCE.md: the generated part's end" "$perf" "<!-- end of the generated part -->"
# The fleet's CPU goal: the hosts' CPU a change against etcd's members', in the goal table.
says "PERFORMANCE.md: the fleet hosts' CPU a change against etcd's members', 1 x 1" "$perf" \
  "| fleet hosts' CPU a change / etcd members', 1 x 1 |"
says "make bench ends by regenerating PERFORMANCE.md" "$(make -n -s -C "$root" bench 2>/dev/null | tail -1)" "bench/report.py"

# The power-cut suite's skip says where LazyFS comes from.
says "powerloss's skip says where LazyFS comes from" \
  "$(LAZYFS_SRC=/nonexistent python3 "$root/Tests/System/suites/powerloss.py" 2>&1)" "https://github.com/dsrhaslab/lazyfs"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
