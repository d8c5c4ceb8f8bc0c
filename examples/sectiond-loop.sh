#!/bin/sh
# A shell loop for anything else (lemonbar, notify-send, a kiosk's lights, a log): one
# line per change, "EVENT REVISION: COUNTS", e.g. "opened 7: 4, 1 open (inbox)".
# Replace the printf with what should happen. sectionctl watch prints the state first,
# then one line per change, and reconnects by itself if the daemon restarts.
sectionctl --readonly watch | while read -r event revision rest; do
  summary=$(sectionctl --readonly status | sed -n 's/^sections: *//p')
  printf '%s %s: %s\n' "$event" "$revision" "$summary"
done
