# One waybar custom-module object per `sectionctl watch --view --json` line:
#   text        the open sections' titles, or how many are closed
#   tooltip     every section, one per line, ▾ open or ▸ closed, with its item count
#   class, alt  "open" when any section is open, else "closed" (for style.css, format-icons)
#   percentage  the share of sections that are open
# waybar reads text and tooltip as Pango markup, so titles are escaped (@html).
[.sections[] | select(.open)] as $open
| (.sections | length) as $count
| {
    text: (if $open == [] then "▸ \($count) closed" else "▾ " + ($open | map(.title) | join(" · ")) end | @html),
    tooltip: (.sections | map((if .open then "▾ " else "▸ " end) + "\(.title) (\(.item_count))") | join("\n") | @html),
    class: (if $open == [] then "closed" else "open" end),
    alt: (if $open == [] then "closed" else "open" end),
    percentage: (if $count == 0 then 0 else ($open | length) * 100 / $count | floor end)
  }
