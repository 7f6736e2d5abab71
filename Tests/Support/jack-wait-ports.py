#!/usr/bin/env python3
"""Waits, as one JACK client that stays open, for ports to appear; then holds on.

    jack-wait-ports.py REGEX COUNT [--connected] [--timeout SECONDS]

Polls the graph every 20 ms until at least COUNT ports whose full names match REGEX (Python's
re.search) exist (and, with --connected, are each connected to some port), prints "ready" on
standard output ("open" first, once its own client is open), then keeps its client open until
its standard input ends (the test closes
it, or kills this process, once the processes it waited for are done opening theirs). After
--timeout seconds (60 by default) it prints "timeout:" and the graph's ports, and exits 1.

Why not poll with jack_lsp: each jack_lsp is a client that opens and closes, and libjack
(jackd2 1.9.21) keeps, in a process whose client is opening at that moment, the synchro of a
client that closed meanwhile: that process's next client, given the freed refnum, waits on
the closed client's futex (/dev/shm/jack_sem..._lsp, deleted) and is never woken. jackd
logs "client = tape.P... was not finished, state = Triggered" each cycle from then on, and
nothing downstream of it runs. `tape record --monitor` (or --play) opens two clients (its
capture and its output) and hung so in about half of the runs where a test polled jack_lsp
while it opened them. One client that stays open changes no refnum.
"""

import ctypes
import re
import sys
import time


def main() -> int:
    arguments = sys.argv[1:]
    connected = "--connected" in arguments
    timeout = 60.0
    if "--timeout" in arguments:
        index = arguments.index("--timeout")
        timeout = float(arguments[index + 1])
        del arguments[index : index + 2]
    arguments = [a for a in arguments if a != "--connected"]
    if len(arguments) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    pattern, count = re.compile(arguments[0]), int(arguments[1])

    jack = ctypes.CDLL("libjack.so.0")
    jack.jack_client_open.restype = ctypes.c_void_p
    jack.jack_client_open.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(ctypes.c_int)]
    jack.jack_get_ports.restype = ctypes.POINTER(ctypes.c_char_p)
    jack.jack_get_ports.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong]
    jack.jack_port_by_name.restype = ctypes.c_void_p
    jack.jack_port_by_name.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    jack.jack_port_connected.restype = ctypes.c_int
    jack.jack_port_connected.argtypes = [ctypes.c_void_p]
    jack.jack_free.argtypes = [ctypes.c_void_p]
    jack.jack_client_close.argtypes = [ctypes.c_void_p]

    status = ctypes.c_int(0)
    no_start_server = 0x01
    client = jack.jack_client_open(b"watch", no_start_server, ctypes.byref(status))
    if not client:
        print(f"cannot open a JACK client (status {status.value:#x})", flush=True)
        return 1
    # The caller starts what it waits for only now: no client opens while this one does.
    print("open", flush=True)

    def ports() -> list[str]:
        names = jack.jack_get_ports(client, None, None, 0)
        if not names:
            return []
        listed, index = [], 0
        while names[index]:
            listed.append(names[index].decode())
            index += 1
        jack.jack_free(ctypes.cast(names, ctypes.c_void_p))
        return listed

    def ready() -> bool:
        found = [name for name in ports() if pattern.search(name)]
        if connected:
            found = [
                name
                for name in found
                if (port := jack.jack_port_by_name(client, name.encode()))
                and jack.jack_port_connected(port) > 0
            ]
        return len(found) >= count

    deadline = time.monotonic() + timeout
    while not ready():
        if time.monotonic() > deadline:
            print("timeout: " + " ".join(ports()), flush=True)
            jack.jack_client_close(client)
            return 1
        time.sleep(0.02)
    print("ready", flush=True)
    sys.stdin.read()
    jack.jack_client_close(client)
    return 0


if __name__ == "__main__":
    sys.exit(main())
