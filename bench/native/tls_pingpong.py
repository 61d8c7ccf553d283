#!/usr/bin/env python3
"""Ping-pong of two processes over TCP, plain or TLS 1.3 through OpenSSL (Python's ssl module), with pingpong.c's
sizes from 64 KB up and its iterations: what encryption costs natively on this machine, the floor PMPI's TLS is judged
by. One line per size, "size<TAB>half_rtt_us<TAB>MB/s" (the rank-0 lines of pingpong.c).

    tls_pingpong.py tcp|tls [--quick] [--address A] [--sizes N...]

--quick: a tenth of the iterations; --address: the address both processes use (127.0.0.1 unless given), so the floor
runs on the same hops as the ranks it is compared with; --sizes: those of its sizes only, as pingpong.c's --sizes.

The key and certificate are made for the run (ECDSA P-256, by the openssl command) and removed after it. Small sizes
are left out: there the interpreter, not the transport, would be measured.
"""
import os
import socket
import ssl
import subprocess
import sys
import tempfile
import time

SIZES = [65536, 1 << 20, 4 << 20, 16 << 20]


def iterations_for(n, quick):
    iters = 5000 if n <= 65536 else 200
    return iters // 10 if quick else iters


def receive_exactly(sock, view, n):
    got = 0
    while got < n:
        k = sock.recv_into(view[got:n])
        if k == 0:
            raise EOFError("the peer closed the connection")
        got += k


def serve(listener, context, sizes, quick):
    conn, _ = listener.accept()
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    if context is not None:
        conn = context.wrap_socket(conn, server_side=True)
    buffer = bytearray(sizes[-1])
    view = memoryview(buffer)
    for n in sizes:
        iters = iterations_for(n, quick)
        for _ in range(iters + iters // 10):
            receive_exactly(conn, view, n)
            conn.sendall(view[:n])
    conn.close()


def main():
    mode, options = sys.argv[1] if len(sys.argv) > 1 else "", sys.argv[2:]
    quick = "--quick" in options
    host = options[options.index("--address") + 1] if "--address" in options[:-1] else "127.0.0.1"
    sizes = SIZES
    if "--sizes" in options:
        asked = {int(word) for word in options[options.index("--sizes") + 1:] if word.isdigit()}
        sizes = [n for n in SIZES if n in asked]
        if not sizes:
            return
    if mode not in ("tcp", "tls"):
        sys.exit("usage: tls_pingpong.py tcp|tls [--quick] [--address A]")
    with tempfile.TemporaryDirectory() as scratch:
        key, cert = os.path.join(scratch, "key.pem"), os.path.join(scratch, "cert.pem")
        server_context = client_context = None
        if mode == "tls":
            subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                            "-keyout", key, "-out", cert, "-days", "1", "-subj", f"/CN={host}"],
                           check=True, capture_output=True, timeout=60)
            server_context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            server_context.load_cert_chain(cert, key)
            client_context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            client_context.load_verify_locations(cert)
            client_context.check_hostname = False
        listener = socket.create_server((host, 0))
        listener.settimeout(120)   # the server never outlives a client that failed to come
        address = listener.getsockname()
        pid = os.fork()
        if pid == 0:
            try:
                serve(listener, server_context, sizes, quick)
            finally:
                os._exit(0)
        listener.close()
        sock = socket.create_connection(address, timeout=120)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if client_context is not None:
            sock = client_context.wrap_socket(sock)
        payload = memoryview(os.urandom(sizes[-1]))
        view = memoryview(bytearray(sizes[-1]))
        for n in sizes:
            iters = iterations_for(n, quick)
            warm = iters // 10
            for i in range(iters + warm):
                if i == warm:
                    start = time.perf_counter()
                sock.sendall(payload[:n])
                receive_exactly(sock, view, n)
            half = (time.perf_counter() - start) / iters / 2
            print(f"{n}\t{half * 1e6:.2f}\t{n / half / 1e6:.1f}", flush=True)
        sock.close()
        os.waitpid(pid, 0)


if __name__ == "__main__":
    main()
