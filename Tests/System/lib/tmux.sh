# Sourced by the suites that drive a terminal through tmux (everyday.sh, frictions.sh).
#
# tmux_new PREFIX: points T at a tmux server of its own, on a socket name not used before in
# this run. A server just told to kill-server can still be exiting on its socket; a
# new-session on that same name reaches it and fails with "server exited unexpectedly"
# (make check once failed so on a first run), so each server gets a fresh name instead.
# tmux_stop ends the current server; tmux_stop_all (for the EXIT trap) ends every one and
# removes their socket files.
tmux_servers=()
tmux_new() {
  local name="${1:-sdtmux}$$-${#tmux_servers[@]}"
  tmux_servers+=("$name")
  T=(tmux -L "$name")
}
tmux_stop() { "${T[@]}" kill-server 2>/dev/null; }
tmux_stop_all() {
  local name
  for name in "${tmux_servers[@]}"; do
    tmux -L "$name" kill-server 2>/dev/null
    rm -f "${TMUX_TMPDIR:-/tmp}/tmux-$(id -u)/$name" # tmux leaves its socket file behind
  done
}
