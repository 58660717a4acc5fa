#!/usr/bin/python3
"""A misbehaving agent: a line proxy in front of a real agent (mrct-refnic)
that passes requests and responses through until the request named by
--op arrives (its --nth occurrence), then does --fault:
  close      closes the engine's connection instead of answering
  garbage    answers with bytes that are not JSON (and not UTF-8)
  wrong-id   answers with another request's id
  unasked    sends a response to a request never made, before the real one
  longline   answers with --limit+1 bytes and no newline
  hang       never answers
  exit       exits the whole process (an agent that dies)
  bad-err    from then on, the first response with completions gets a
             negative time_err_ns in its first completion
Listens on --listen; the real agent at --upstream."""
import argparse
import json
import socket
import sys
import threading

ap = argparse.ArgumentParser()
ap.add_argument("--listen", default="127.0.0.1:7800")
ap.add_argument("--upstream", default="127.0.0.1:7700")
ap.add_argument("--op", required=True)
ap.add_argument("--nth", type=int, default=1)
ap.add_argument("--fault", required=True, choices=["close", "garbage", "wrong-id", "unasked", "longline", "hang", "exit",
                                                       "bad-err"])
ap.add_argument("--limit", type=int, default=32 << 20)
args = ap.parse_args()
seen = 0
lock = threading.Lock()
bad_err_armed = False  # bad-err: hit, and no completion edited yet


def addr(s):
    h, p = s.rsplit(":", 1)
    return h, int(p)


def serve(client):
    global seen, bad_err_armed
    up = socket.create_connection(addr(args.upstream))
    cf, uf = client.makefile("rb"), up.makefile("rb")
    try:
        while True:
            line = cf.readline()
            if not line:
                return
            req = json.loads(line)
            with lock:
                hit = req.get("op") == args.op and (seen := seen + 1) == args.nth
            if hit:
                f = args.fault
                if f == "close":
                    client.shutdown(socket.SHUT_RDWR)
                    return
                if f == "garbage":
                    client.sendall(b"\xff\xfe<html>not json</html>\n")
                    continue
                if f == "wrong-id":
                    client.sendall(json.dumps({"id": req["id"] + 1000, "ok": True}).encode() + b"\n")
                    continue
                if f == "longline":
                    client.sendall(b"x" * (args.limit + 1))
                    continue
                if f == "hang":
                    threading.Event().wait()
                if f == "exit":
                    sys.stdout.flush()
                    import os
                    os._exit(9)
                if f == "unasked":
                    client.sendall(json.dumps({"id": 999999, "ok": True}).encode() + b"\n")
                if f == "bad-err":
                    bad_err_armed = True
            up.sendall(line)
            n = req.get("data_bytes")
            if isinstance(n, int) and n > 0:  # the request's binary attachment follows its line
                up.sendall(cf.read(n))
            # A response line, plus any binary attachment it announces.
            resp = uf.readline()
            if not resp:
                return
            if bad_err_armed:
                r = json.loads(resp)
                if r.get("completions"):
                    r["completions"][0]["time_err_ns"] = -5
                    resp = json.dumps(r).encode() + b"\n"
                    bad_err_armed = False
            client.sendall(resp)
            n = json.loads(resp).get("data_bytes")
            if isinstance(n, int) and n > 0:
                client.sendall(uf.read(n))
    except (OSError, ValueError):
        return
    finally:
        client.close()
        up.close()


srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(addr(args.listen))
srv.listen()
print("listening", flush=True)
while True:
    c, _ = srv.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
