"""A WebSocket client small enough to see every byte: the raw upgrade request (to send any Host
and Origin a browser would, or an attacker's page would make it send), text frames out, and
frames in as websocketd sends them. For Tests/System/suites/web.py and web-units.py. Standard library only.
"""

import base64
import os
import socket
import struct
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(predicate, timeout=5.0, interval=0.02):
    """Polls until predicate() is truthy; returns its last value."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(interval)


def handshake(port, host, origin):
    """Sends a WebSocket upgrade with these Host and Origin headers; returns (status, socket)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    key = base64.b64encode(os.urandom(16)).decode()
    headers = [f"GET / HTTP/1.1", f"Host: {host}", "Upgrade: websocket", "Connection: Upgrade",
               f"Sec-WebSocket-Key: {key}", "Sec-WebSocket-Version: 13"]
    if origin is not None:
        headers.append(f"Origin: {origin}")
    sock.sendall(("\r\n".join(headers) + "\r\n\r\n").encode())
    response = b""
    while b"\r\n\r\n" not in response:
        chunk = sock.recv(4096)
        if not chunk:
            break
        response += chunk
    status = int(response.split(b" ", 2)[1]) if response.startswith(b"HTTP/1.1 ") else 0
    return status, sock, response.split(b"\r\n\r\n", 1)[1] if b"\r\n\r\n" in response else b""


def ws_send_text(sock, text):
    payload = text.encode()
    mask = os.urandom(4)
    header = bytes([0x81]) + (bytes([0x80 | len(payload)]) if len(payload) < 126
                              else bytes([0x80 | 126]) + struct.pack(">H", len(payload)))
    sock.sendall(header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))


def ws_read_lines(sock, buffered, until, timeout=5):
    """Reads server frames until `until(lines)` holds; returns the lines. A text frame is one
    line (websocketd's line mode); binary frames are pieces of the byte stream (--binary)."""
    sock.settimeout(timeout)
    data, partial, lines = buffered, b"", []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        while len(data) >= 2:
            opcode, length, start = data[0] & 0x0F, data[1] & 0x7F, 2
            if length == 126:
                length, start = struct.unpack(">H", data[2:4])[0], 4
            elif length == 127:
                length, start = struct.unpack(">Q", data[2:10])[0], 10
            if len(data) < start + length:
                break
            payload, data = data[start:start + length], data[start + length:]
            if opcode == 1:
                lines.append(payload.decode())
            elif opcode == 2:
                *complete, partial = (partial + payload).split(b"\n")
                lines += [line.decode() for line in complete]
        if until(lines):
            return lines
        try:
            chunk = sock.recv(65536)
        except socket.timeout:
            break
        if not chunk:
            break
        data += chunk
    return lines


def ws_request(port, line):
    """`line` over a new WebSocket of the page's own origin (127.0.0.1:port), as any program on
    the machine could send it; returns the handshake's status and the lines up to the reply."""
    status, sock, rest = handshake(port, f"127.0.0.1:{port}", f"http://127.0.0.1:{port}")
    try:
        ws_send_text(sock, line)
        return status, ws_read_lines(sock, rest, lambda lines: any(x.startswith(("OK", "ERR")) for x in lines))
    finally:
        sock.close()
