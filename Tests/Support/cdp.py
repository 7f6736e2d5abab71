#!/usr/bin/env python3
"""A headless Chromium driven through its DevTools protocol, for the `tape view` tests.

    cdp.py get URL                      prints the HTTP status of a GET (no redirects)
    cdp.py body URL                     prints the body of a GET
    cdp.py eval PORT EXPR               prints the JSON value of EXPR in the first page
    cdp.py wait PORT EXPR WANTED SECS   polls EXPR until its JSON equals WANTED (JSON);
                                        prints {"at": epoch seconds it held, "value": …},
                                        or exits 1 with the last value after SECS
    cdp.py events URL SECS UPDATES      reads a server-sent event stream until UPDATES
                                        `update` events or SECS: one JSON line per event
                                        (its name, the bytes of its data, and for an
                                        update whether it is whole and the clips it names)

PORT is the browser's remote-debugging port (its DevToolsActivePort file's first line). The
WebSocket client is the standard library's sockets (RFC 6455, client frames masked): no
package to install.
"""

import base64
import json
import os
import socket
import struct
import sys
import time
import urllib.error
import urllib.request


def get(url):
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


class Socket:
    def __init__(self, url):
        assert url.startswith("ws://")
        host_port, path = url[5:].split("/", 1)
        host, port = host_port.split(":")
        self.sock = socket.create_connection((host, int(port)), timeout=10)
        key = base64.b64encode(os.urandom(16)).decode()
        request = (f"GET /{path} HTTP/1.1\r\nHost: {host_port}\r\nUpgrade: websocket\r\n"
                   f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                   "Sec-WebSocket-Version: 13\r\n\r\n")
        self.sock.sendall(request.encode())
        reply = b""
        while b"\r\n\r\n" not in reply:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise OSError("the browser closed the connection during the handshake")
            reply += chunk
        head, self.pending = reply.split(b"\r\n\r\n", 1)
        if b" 101 " not in head.split(b"\r\n")[0]:
            raise OSError(f"no WebSocket upgrade: {head[:200]!r}")
        self.next_id = 0

    def _read(self, count):
        while len(self.pending) < count:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise OSError("the browser closed the connection")
            self.pending += chunk
        data, self.pending = self.pending[:count], self.pending[count:]
        return data

    def send(self, text):
        payload = text.encode()
        mask = os.urandom(4)
        header = bytes([0x81])
        if len(payload) < 126:
            header += bytes([0x80 | len(payload)])
        elif len(payload) < 65536:
            header += bytes([0x80 | 126]) + struct.pack(">H", len(payload))
        else:
            header += bytes([0x80 | 127]) + struct.pack(">Q", len(payload))
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        self.sock.sendall(header + mask + masked)

    def receive(self):
        message = b""
        while True:
            first, second = self._read(2)
            length = second & 0x7F
            if length == 126:
                length = struct.unpack(">H", self._read(2))[0]
            elif length == 127:
                length = struct.unpack(">Q", self._read(8))[0]
            if second & 0x80:
                self._read(4)
            message += self._read(length)
            if first & 0x80:
                return message.decode()

    def call(self, method, params):
        self.next_id += 1
        self.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            reply = json.loads(self.receive())
            if reply.get("id") == self.next_id:
                return reply


def page(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as response:
        targets = json.load(response)
    pages = [t for t in targets if t.get("type") == "page"]
    if not pages:
        raise OSError("the browser has no page")
    return Socket(pages[0]["webSocketDebuggerUrl"])


def evaluate(connection, expression):
    reply = connection.call("Runtime.evaluate", {"expression": expression, "returnByValue": True})
    result = reply.get("result", {})
    if "exceptionDetails" in result:
        raise RuntimeError(json.dumps(result["exceptionDetails"])[:500])
    return result.get("result", {}).get("value")


def events(url, seconds, updates):
    deadline = time.time() + seconds
    seen = 0
    name = None
    with urllib.request.urlopen(url, timeout=seconds) as response:
        for raw in response:
            line = raw.decode().rstrip("\n")
            if line.startswith("event: "):
                name = line[len("event: "):]
            elif line.startswith("data: ") and name is not None:
                data = line[len("data: "):]
                said = {"event": name, "bytes": len(data.encode())}
                if name == "update":
                    update = json.loads(data)
                    changes = update.get("changes") or {}
                    said["whole"] = update.get("snapshot") is not None
                    said["clips"] = len(changes.get("clips", []))
                    said["removedClips"] = len(changes.get("removedClips", []))
                    said["steps"] = len(update.get("steps", []))
                    seen += 1
                print(json.dumps(said), flush=True)
                name = None
                if seen >= updates:
                    return
            if time.time() > deadline:
                return


def main():
    command = sys.argv[1]
    if command == "events":
        events(sys.argv[2], float(sys.argv[3]), int(sys.argv[4]))
    elif command == "body":
        with urllib.request.urlopen(sys.argv[2], timeout=10) as response:
            sys.stdout.write(response.read().decode())
    elif command == "get":
        print(get(sys.argv[2]))
    elif command == "eval":
        print(json.dumps(evaluate(page(sys.argv[2]), sys.argv[3])))
    elif command == "wait":
        connection = page(sys.argv[2])
        wanted = json.loads(sys.argv[4])
        deadline = time.time() + float(sys.argv[5])
        value = None
        while time.time() < deadline:
            value = evaluate(connection, sys.argv[3])
            if value == wanted:
                print(json.dumps({"at": time.time(), "value": value}))
                return
            time.sleep(0.01)
        print(json.dumps({"at": None, "value": value}))
        sys.exit(1)
    else:
        sys.exit(f"cdp.py: unknown command {command}")


if __name__ == "__main__":
    main()
