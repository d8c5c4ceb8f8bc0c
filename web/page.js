// The accordion in a browser: sectiond's sections, live, as headers a person taps and items in a
// grid below the open ones (the WAI-ARIA Authoring Practices accordion pattern).
//
// The page is one protocol client. On its first connection it sends SUBSCRIBE, END (which the
// read-only socket answers ERR READONLY, a control socket connection of the read level ERR
// DENIED, and one that may open and close, at the operate or edit level, ERR SYNTAX: that is how
// the page knows whether a tap can change anything) and VIEW; on a later one, SUBSCRIBE FROM the revision it
// shows, and VIEW only when the daemon no longer keeps every change since (its reply is then
// SUBSCRIBE's, with a state line): otherwise the events it missed follow the reply. Then it
// applies `!opened`, `!closed` and `!mode` as they come, and for every other event (the edits,
// `!reload`, `!state`, `!restart` and any event it does not know) it reads VIEW again, as
// docs/PROTOCOL.md asks. Revisions order the two: a VIEW
// reply shows the list at its revision, so the events that arrived while it was on its way are
// applied again on top of it when they are newer, and an edit among those asks for the next VIEW.
// One VIEW is in flight at a time. The items of a section that opens are read with ITEMS.
//
// The state shown (aria-expanded above all) is only ever the daemon's: a click sends TOGGLE and
// the header changes when the daemon's event says so. Daemon text reaches the page only through
// textContent, never as HTML.
import { Bridge, itemText, parseEvent, parseSection } from "./protocol.js";

const byId = (id) => document.getElementById(id);
const ui = {
  list: byId("sections"),
  connection: byId("connection"),
  mode: byId("mode"),
  revision: byId("revision"),
  readonlyNote: byId("readonly-note"),
  message: byId("message"),
  empty: byId("empty"),
};

const state = {
  revision: null,
  mode: null,
  readonly: false,
  /** Whether this connection's first VIEW has been applied. */
  synced: false,
  /** The sections in list order: { id, title, count, open, items (array, or null: not read) }. */
  sections: [],
  byId: new Map(),
  viewInFlight: false,
  /** Events that arrived while the VIEW in flight was on its way. */
  sinceView: [],
  itemsInFlight: new Set(),
  /** The revision of the last `!items` (or other change to the items) seen for each section. */
  itemsChanged: new Map(),
  /** Sections whose cached items an edit may have changed, or true for all of them. */
  staleItems: new Set(),
  staleAll: false,
  opened: false,
};

/** What the tests and the curious read: latencies from click to the daemon's OK, render times
 *  (the last `kept` of each, since a kiosk's page stays open for weeks), how many connections
 *  were opened and how many events of each name arrived (`!state` ones show the page fell behind). */
const stats = {
  clickToOk: [],
  renders: [],
  connections: 0,
  events: Object.create(null),
  catchUps: { replayed: 0, snapshot: 0 },
};
const kept = 1000;

function keepLast(list, value) {
  if (list.length >= kept) list.shift();
  list.push(value);
}

const views = new Map();
let viewCount = 0;

// Building 100,000 item tiles takes longer than a person should wait for the first screen, so
// render() builds only the first `firstTiles` (more than a large screen shows), for at most
// 100 ms, and leaves the rest to `drainTiles`, which builds them a slice at a time between other
// work, top first.
const firstTiles = 1000;
const tileBacklog = new Set();
let tileDeadline = Infinity;
let tileBudget = Infinity;
let drainScheduled = false;
/** The render whose tiles the backlog holds, to note when it is complete. */
let renderInProgress = null;

/**
 * The list the page shows: `?list=NAME` (README.md, "Several lists"), passed on to the bridge,
 * whose `sectionctl pipe --list-from-query` checks the name and connects to that list's socket;
 * null, the unnamed list. The name is shown as text.
 */
const listName = new URLSearchParams(location.search).get("list");
const url = `${location.protocol === "https:" ? "wss:" : "ws:"}//${location.host}/`
  + (listName === null ? "" : `?list=${encodeURIComponent(listName)}`);
if (listName !== null) {
  document.title = `${listName} · sectiond`;
  document.querySelector(".bar-title").textContent = listName;
}
const bridge = new Bridge(url, { onOpen, onEvent, onClose });

// --- connection --------------------------------------------------------------------------------

function onOpen() {
  stats.connections += 1;
  state.opened = true;
  state.synced = false;
  state.itemsInFlight.clear();
  setConnection("connecting", "Connected to the bridge, reading the sections…");
  // Back after a lost connection: the changes missed since the revision shown, as events, when
  // the daemon still keeps them all (its reply has no state line then); else the state and VIEW.
  const catchingUp = state.revision !== null && state.sections.length > 0;
  bridge.request(catchingUp ? `SUBSCRIBE FROM ${state.revision}` : "SUBSCRIBE").then((reply) => {
    // A busy daemon's ERR BUSY comes in place of the first reply: the connection line says it.
    if (reply.code === "BUSY") return;
    if (!reply.ok) return showError("SUBSCRIBE", reply);
    const words = (reply.data[0] ?? "").split(" ");
    if (words[0] === "state") setMode(words[2]);
    if (!catchingUp) return;
    stats.catchUps[words[0] === "state" ? "snapshot" : "replayed"] += 1;
    if (words[0] === "state") readView();
    else if (!state.viewInFlight) markSynced();
  }, ignore);
  bridge.request("END").then((reply) => setReadonly(reply.code === "READONLY" || reply.code === "DENIED"), ignore);
  if (!catchingUp) readView();
}

function markSynced() {
  if (state.synced) return;
  state.synced = true;
  setConnection("connected", "Live");
}

function onClose({ delay, heard, busy }) {
  const seconds = (delay / 1000).toFixed(1);
  const why = busy
    ? "sectiond is busy: it serves as many clients as it may (--max-clients)"
    : heard
      ? "Disconnected from sectiond"
      : state.opened
        ? "The bridge is up but sectiond is not answering"
        : "Cannot reach the bridge";
  state.opened = false;
  state.viewInFlight = false;
  setConnection("disconnected", `${why}; retrying in ${seconds} s`);
}

function setConnection(name, text) {
  document.body.dataset.connection = name;
  ui.connection.textContent = text;
  for (const view of views.values()) updateAvailability(view);
}

// --- events ------------------------------------------------------------------------------------

function onEvent(line) {
  const event = parseEvent(line);
  stats.events[event.name] = (stats.events[event.name] ?? 0) + 1;
  if (state.viewInFlight) state.sinceView.push(event);
  apply(event);
}

function apply(event) {
  switch (event.name) {
    case "opened":
    case "closed": {
      const section = state.byId.get(event.words[2]);
      if (!section) {
        readView();
        break;
      }
      section.open = event.name === "opened";
      if (section.open && section.items === null) readItems(section.id);
      update(section);
      break;
    }
    case "mode":
      setMode(event.words[1]);
      break;
    case "items":
    case "inserted":
    case "deleted":
      state.staleItems.add(event.words[2]);
      state.itemsChanged.set(event.words[2], event.revision);
      readView();
      break;
    case "bye":
      break;
    case "state":
      setMode(event.words[1]);
      state.staleAll = true;
      readView();
      break;
    default:
      // !moved, !renamed, !reload, !restart and anything newer than this page.
      if (event.name !== "moved" && event.name !== "renamed") state.staleAll = true;
      readView();
  }
  if (event.revision !== null && event.revision > (state.revision ?? -1)) setRevision(event.revision);
}

/** Reads VIEW unless one is on its way already; events that overtake it are applied again after it. */
function readView() {
  if (state.viewInFlight || !bridge.connected) return;
  state.viewInFlight = true;
  state.sinceView = [];
  const started = performance.now();
  bridge.request("VIEW").then((reply) => {
    state.viewInFlight = false;
    const since = state.sinceView;
    state.sinceView = [];
    if (!reply.ok) return showError("VIEW", reply);
    const applied = applyView(reply);
    // What changed after the VIEW was answered: again, on top of it (an edit asks for another).
    for (const event of since) if (event.revision === null || event.revision > reply.revision) apply(event);
    document.body.offsetHeight; // lay the page out, so the time below includes it
    const now = performance.now();
    const entry = { total: now - started, render: now - applied, complete: null, sections: state.sections.length };
    keepLast(stats.renders, entry);
    renderInProgress = { entry, started };
    if (tileBacklog.size === 0) noteComplete();
    markSynced();
  }, ignore);
}

function readItems(id) {
  if (state.itemsInFlight.has(id) || !bridge.connected) return;
  state.itemsInFlight.add(id);
  bridge.request(`ITEMS ${id}`).then((reply) => {
    state.itemsInFlight.delete(id);
    const section = state.byId.get(id);
    // A section deleted meanwhile answers NOSECTION; its !deleted brings a VIEW anyway, as does
    // an !items newer than this reply.
    if (!reply.ok || !section || (state.itemsChanged.get(id) ?? -1) > reply.revision) return;
    section.items = reply.data.map(itemText).filter((text) => text !== null);
    update(section);
  }, ignore);
}

/** Replaces the sections with VIEW's; returns when it started, for the render time. */
function applyView(reply) {
  const started = performance.now();
  const previous = state.byId;
  const sections = [];
  for (const line of reply.data) {
    const section = parseSection(line);
    if (section) {
      const before = previous.get(section.id);
      const keep = before && !section.open && !state.staleAll && !state.staleItems.has(section.id) &&
        before.items !== null && before.items.length === section.count;
      section.items = section.open ? [] : keep ? before.items : null;
      sections.push(section);
      continue;
    }
    const text = itemText(line);
    if (text !== null && sections.length > 0) sections[sections.length - 1].items.push(text);
  }
  state.staleItems.clear();
  state.staleAll = false;
  // An ITEMS reply read after this one is at least as new: older marks can no longer refuse it.
  for (const [id, revision] of state.itemsChanged) if (revision <= reply.revision) state.itemsChanged.delete(id);
  state.sections = sections;
  state.byId = new Map(sections.map((section) => [section.id, section]));
  setRevision(reply.revision);
  render();
  return started;
}

// --- rendering ---------------------------------------------------------------------------------

/** Puts every section's view in list order, reusing each id's view, and drops the ones gone. */
function render() {
  tileDeadline = performance.now() + 100;
  tileBudget = firstTiles;
  const focused = document.activeElement;
  let next = ui.list.firstChild;
  const seen = new Set();
  for (const section of state.sections) {
    let view = views.get(section.id);
    if (!view) {
      view = createView(section.id);
      views.set(section.id, view);
    }
    seen.add(section.id);
    update(section, view);
    if (view.root === next) {
      next = next.nextSibling;
    } else {
      ui.list.insertBefore(view.root, next);
    }
  }
  for (const [id, view] of views) {
    if (!seen.has(id)) {
      view.root.remove();
      views.delete(id);
    }
  }
  tileDeadline = Infinity;
  tileBudget = Infinity;
  if (focused && focused !== document.activeElement && focused.isConnected) focused.focus();
  ui.list.setAttribute("aria-busy", "false");
  ui.empty.hidden = state.sections.length > 0;
}

function createView(id) {
  const number = ++viewCount;
  const root = element("section", "section");
  const heading = element("h2", "heading");
  const button = element("button", "header");
  button.type = "button";
  button.id = `header-${number}`;
  button.setAttribute("aria-controls", `panel-${number}`);
  const title = element("span", "title");
  const count = element("span", "count");
  const mark = element("span", "mark");
  mark.setAttribute("aria-hidden", "true");
  button.append(title, count, mark);
  heading.append(button);
  const panel = element("div", "panel");
  panel.id = `panel-${number}`;
  panel.setAttribute("role", "region");
  panel.setAttribute("aria-labelledby", button.id);
  panel.hidden = true;
  const grid = element("ul", "grid");
  panel.append(grid);
  root.append(heading, panel);
  const view = { id, root, button, title, count, panel, grid, items: null, pending: null, texts: {} };
  button.addEventListener("click", () => toggle(view.id));
  button.addEventListener("keydown", moveFocus);
  updateAvailability(view);
  return view;
}

function update(section, view = views.get(section.id)) {
  if (!view) return;
  setText(view, "title", section.title);
  setText(view, "count", section.count === 1 ? "1 item" : `${section.count} items`);
  const expanded = String(section.open);
  if (view.button.getAttribute("aria-expanded") !== expanded) view.button.setAttribute("aria-expanded", expanded);
  view.root.classList.toggle("open", section.open);
  view.panel.hidden = !section.open;
  if (!section.open) return;
  const items = section.items;
  if (items !== null && items !== view.items && items !== view.pending) {
    if (sameTexts(view.items, items)) {
      view.items = items;
      view.pending = null;
      tileBacklog.delete(view);
    } else if (tileBudget >= items.length && performance.now() < tileDeadline) {
      tileBudget -= items.length;
      buildTiles(view, items);
    } else {
      view.pending = items;
      tileBacklog.add(view);
      scheduleDrain();
    }
  }
  view.panel.setAttribute("aria-busy", String(items === null || view.pending !== null));
}

function sameTexts(a, b) {
  if (a === null || a.length !== b.length) return false;
  for (let index = 0; index < a.length; index++) if (a[index] !== b[index]) return false;
  return true;
}

function buildTiles(view, items) {
  view.items = items;
  view.pending = null;
  tileBacklog.delete(view);
  const tiles = items.map((text) => {
    const tile = element("li", "tile");
    tile.textContent = text;
    return tile;
  });
  view.grid.replaceChildren(...tiles);
  view.panel.setAttribute("aria-busy", "false");
}

function scheduleDrain() {
  if (drainScheduled) return;
  drainScheduled = true;
  setTimeout(drainTiles, 0);
}

/** Builds waiting tiles for about one frame's worth of time, then lets the page breathe. */
function drainTiles() {
  drainScheduled = false;
  const deadline = performance.now() + 12;
  for (const view of tileBacklog) {
    if (performance.now() > deadline) {
      scheduleDrain();
      return;
    }
    if (view.root.isConnected) buildTiles(view, view.pending);
    else tileBacklog.delete(view);
  }
  noteComplete();
}

function noteComplete() {
  if (!renderInProgress) return;
  renderInProgress.entry.complete = performance.now() - renderInProgress.started;
  renderInProgress = null;
}

function setText(view, key, text) {
  if (view.texts[key] === text) return;
  view.texts[key] = text;
  view[key].textContent = text;
}

/** A header offers a change only when the bridge may open and close, while connected. */
function updateAvailability(view) {
  const available = !state.readonly && document.body.dataset.connection === "connected";
  if (available) view.button.removeAttribute("aria-disabled");
  else view.button.setAttribute("aria-disabled", "true");
}

function element(tag, className) {
  const node = document.createElement(tag);
  node.className = className;
  return node;
}

function setMode(mode) {
  if (mode !== "multi" && mode !== "exclusive") return;
  state.mode = mode;
  ui.mode.hidden = false;
  ui.mode.textContent = mode === "exclusive" ? "Accordion: one open at a time" : "Multi: each on its own";
  document.body.dataset.mode = mode;
}

function setRevision(revision) {
  state.revision = revision;
  ui.revision.hidden = false;
  ui.revision.textContent = `rev ${revision}`;
  document.body.dataset.revision = String(revision);
}

function setReadonly(readonly) {
  state.readonly = readonly;
  ui.readonlyNote.hidden = !readonly;
  document.body.classList.toggle("readonly", readonly);
  for (const view of views.values()) updateAvailability(view);
}

// --- input -------------------------------------------------------------------------------------

function toggle(id) {
  if (state.readonly) {
    return showMessage("Nothing changed: this page is read-only.");
  }
  if (!bridge.connected || !state.synced) {
    return showMessage("Not connected to sectiond: the sections shown may be out of date. Retrying…");
  }
  const started = performance.now();
  bridge.request(`TOGGLE ${id}`).then((reply) => {
    keepLast(stats.clickToOk, performance.now() - started);
    if (reply.ok) clearMessage();
    else showError(`TOGGLE ${id}`, reply);
  }, () => showMessage("The connection closed before sectiond answered; the section may not have changed."));
}

/** Up, Down, Home and End move between headers, as the accordion pattern suggests; Tab works too. */
function moveFocus(event) {
  const headers = [...ui.list.querySelectorAll("button.header")];
  const at = headers.indexOf(event.currentTarget);
  const target = { ArrowDown: at + 1, ArrowUp: at - 1, Home: 0, End: headers.length - 1 }[event.key];
  if (target === undefined || headers.length === 0) return;
  event.preventDefault();
  headers[(target + headers.length) % headers.length].focus();
}

function showError(request, reply) {
  const why = {
    READONLY: " (this page is on the read-only socket)",
    DENIED: " (the page's bridge is not allowed this)",
  }[reply.code] ?? "";
  showMessage(`sectiond refused ${request}: ${reply.message || reply.status} [${reply.code}]${why}`);
}

function showMessage(text) {
  ui.message.textContent = text;
  ui.message.hidden = false;
}

function clearMessage() {
  ui.message.hidden = true;
  ui.message.textContent = "";
}

function ignore() {}

// For tests and the browser console: the state as the page holds it, and a raw request.
window.sectiondPage = {
  stats,
  snapshot: () => ({
    revision: state.revision,
    mode: state.mode,
    readonly: state.readonly,
    synced: state.synced,
    sections: state.sections.map(({ id, title, count, open }) => ({ id, title, count, open })),
  }),
  request: (line) => bridge.request(line).then((reply) => {
    if (!reply.ok) showError(line, reply);
    return { data: reply.data, status: reply.status };
  }),
  drop: () => bridge.drop(),
};

bridge.connect();
