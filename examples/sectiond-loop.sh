#!/bin/sh
# A shell loop for anything else (lemonbar, notify-send, a kiosk's lights, a log): one
# line per change, "EVENT REVISION: COUNTS", e.g. "opened 7: 4, 1 open (inbox)".
# Replace the printf with what should happen. sectionctl watch prints the state first,
# then one line per change, and reconnects by itself if the daemon restarts.
# The counts come from a status call made after the event, so when more changes came
# meanwhile they describe a later revision, and the line says which: "(at revision 9)".
sectionctl --readonly watch | while read -r event revision rest; do
  status=$(sectionctl --readonly status)
  summary=$(printf '%s\n' "$status" | sed -n 's/^sections: *//p')
  now=$(printf '%s\n' "$status" | sed -n 's/^revision: *//p')
  [ "$now" = "$revision" ] || summary="$summary (at revision $now)"
  printf '%s %s: %s\n' "$event" "$revision" "$summary"
done
