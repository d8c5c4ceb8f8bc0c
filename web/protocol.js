// sectiond's protocol 1 (docs/PROTOCOL.md) over a WebSocket that websocketd turns into one
// `sectionctl pipe` process. Each request goes as one text message, to which websocketd adds the
// newline. What comes back is read either way websocketd may send it: with --binary (as the units
// and `make web` run it) as chunks of the byte stream, split into lines here, which carries a
// 100,000-line VIEW in a few dozen messages; without it, as one text message per line.

/** A reply: its data lines and its status line (`OK`, `OK <rev>` or `ERR <CODE> <message>`). */
export class Reply {
  constructor(data, status) {
    this.data = data;
    this.status = status;
  }

  get ok() { return this.status === "OK" || this.status.startsWith("OK "); }

  /** The revision of `OK <rev>`, or null. */
  get revision() {
    const match = /^OK (\d+)$/.exec(this.status);
    return match ? Number(match[1]) : null;
  }

  /** `READONLY` of `ERR READONLY ...`, or null when the reply is OK. */
  get code() {
    const match = /^ERR (\S+)/.exec(this.status);
    return match ? match[1] : null;
  }

  /** The daemon's message of an ERR reply, without the code. */
  get message() {
    const match = /^ERR \S+ ?(.*)$/.exec(this.status);
    return match ? match[1] : "";
  }
}

/** `section <index> <id> <open|closed> <count> <title>`, or null. */
export function parseSection(line) {
  const match = /^section (\d+) (\S+) (open|closed) (\d+) (.*)$/.exec(line);
  if (!match) return null;
  return { id: match[2], open: match[3] === "open", count: Number(match[4]), title: match[5] };
}

/** The text of `item <section-index> <position> <text>`, or null; without a regular
 *  expression, since a VIEW of a long list has a hundred thousand of these lines. */
export function itemText(line) {
  if (!line.startsWith("item ")) return null;
  const afterSection = line.indexOf(" ", 5);
  const afterPosition = afterSection < 0 ? -1 : line.indexOf(" ", afterSection + 1);
  return afterPosition < 0 ? null : line.slice(afterPosition + 1);
}

/** An event line `!name <words...>` as its name and words. */
export function parseEvent(line) {
  const [name, ...words] = line.slice(1).split(" ");
  return { name, words, revision: /^\d+$/.test(words[0] ?? "") ? Number(words[0]) : null };
}

/**
 * One connection after another to the bridge: requests answered in order (pipelined), events
 * handed to `onEvent`, and after every close a new attempt, waiting longer each time (with some
 * jitter, so a roomful of kiosks does not come back in step) up to `maximumDelay`.
 *
 * Callbacks: onOpen(), onEvent(line), onClose({ delay, heard, busy }) where `heard` says whether
 * the daemon sent anything on the connection that closed (the bridge answers even when sectiond
 * does not: then the pipe exits at once and nothing is heard), and `busy` that what it sent was
 * `ERR BUSY` (it serves as many clients as --max-clients allows): the page says so, and the
 * next attempts wait longer each time, as after silence, rather than adding to the crowd.
 */
export class Bridge {
  constructor(url, callbacks) {
    this.url = url;
    this.callbacks = callbacks;
    this.pending = [];
    this.data = [];
    this.socket = null;
    this.decoder = null;
    this.partial = "";
    this.delay = Bridge.firstDelay;
    this.timer = null;
  }

  static firstDelay = 250;
  static maximumDelay = 5000;

  connect() {
    clearTimeout(this.timer);
    this.timer = null;
    let heard = false;
    let busy = false;
    const socket = new WebSocket(this.url);
    socket.binaryType = "arraybuffer";
    this.socket = socket;
    this.decoder = new TextDecoder();
    this.partial = "";
    socket.onopen = () => this.callbacks.onOpen();
    socket.onmessage = (message) => {
      if (this.socket !== socket) return;
      // A busy daemon's ERR BUSY is the first thing the connection brings, and the last.
      if (!heard) busy = isBusy(message.data);
      heard = true;
      if (typeof message.data === "string") {
        this.receive(message.data);
        return;
      }
      const lines = (this.partial + this.decoder.decode(message.data, { stream: true })).split("\n");
      this.partial = lines.pop();
      for (const line of lines) this.receive(line);
    };
    socket.onclose = () => {
      if (this.socket !== socket) return;
      this.socket = null;
      this.failPending();
      if (heard && !busy) this.delay = Bridge.firstDelay;
      const delay = Math.round(this.delay * (0.8 + 0.4 * Math.random()));
      this.delay = Math.min(this.delay * 2, Bridge.maximumDelay);
      this.timer = setTimeout(() => this.connect(), delay);
      this.callbacks.onClose({ delay, heard, busy });
    };
  }

  /** Ends the current connection now; the next attempt follows as after any close. */
  drop() {
    if (this.socket) this.socket.close();
  }

  get connected() { return this.socket !== null && this.socket.readyState === WebSocket.OPEN; }

  /** Sends one request line; resolves with its Reply, rejects if the connection closes first. */
  request(line) {
    return new Promise((resolve, reject) => {
      if (!this.connected) {
        reject(new Error("not connected to sectiond"));
        return;
      }
      this.pending.push({ resolve, reject });
      this.socket.send(line);
    });
  }

  receive(text) {
    const line = text.endsWith("\r") ? text.slice(0, -1) : text;
    const first = line.charAt(0);
    if (first === "!") {
      this.callbacks.onEvent(line);
    } else if (first === "O" || first === "E") {
      const data = this.data;
      this.data = [];
      const waiting = this.pending.shift();
      if (waiting) waiting.resolve(new Reply(data, line));
    } else if (line !== "") {
      this.data.push(line);
    }
  }

  failPending() {
    const pending = this.pending;
    this.pending = [];
    this.data = [];
    for (const waiting of pending) waiting.reject(new Error("the connection to sectiond closed"));
  }
}

/** Whether a message from the bridge begins with `ERR BUSY`, the line a daemon at
 *  --max-clients sends in place of any answer before it closes (sectionctl pipe passes it on). */
function isBusy(data) {
  if (typeof data === "string") return data.startsWith("ERR BUSY");
  const start = new Uint8Array(data, 0, Math.min(8, data.byteLength));
  return new TextDecoder().decode(start) === "ERR BUSY";
}
