#!/usr/bin/env python3
"""A stand-in for the Hugging Face Hub, for tests/test_pull.c (standard library only).

    python3 tests/hub_server.py ROOT LOG
    python3 tests/hub_server.py --shard SRC DST   # SRC's model.safetensors as 2 shards + index in DST
    python3 tests/hub_server.py --blackhole       # a port whose connections are never accepted

Serves every folder ROOT/OWNER/NAME/ as the repository OWNER/NAME at any
revision, on 127.0.0.1 and a free port, which it prints on the first line of
stdout. Each request line (and its Range header) is appended to LOG.

    GET /api/models/O/N/revision/R   {"id", "sha", "siblings": [{"rfilename"}]}
    GET /api/models/O/N/tree/R       [{"type", "path", "size", "lfs": {"oid", "size"}}]
    GET /O/N/resolve/R/PATH          other files directly; *.safetensors and *.gguf
                                     answer 302 to /cdn/O/N/FILE, as the Hub does for LFS

Misbehaviour, to test the client's handling of it, by repository name:
  - the first full GET of each /cdn/ file sends its Content-Length but only
    half the bytes, then closes (a truncated transfer); later GETs honour
    Range with 206, except
  - NAME containing "norange": Range is ignored (200 and the whole file);
  - NAME containing "badsum": the tree lists a wrong SHA-256 for LFS files
    (*.safetensors and *.gguf);
  - NAME containing "gated": 401 without "Authorization: Bearer secret";
  - NAME containing "flaky": the revision endpoint answers 503 once;
  - NAME containing "nosize": the tree gives no size (and no LFS entry) for
    *.safetensors files;
  - NAME containing "endless": /cdn/ files are an endless body without a
    Content-Length;
  - NAME containing "trickle": the first full GET of each /cdn/ file sends
    4096 bytes, then one byte every 0.2 s;
  - NAME containing "dead": every request is read and never answered.

--blackhole listens with a backlog of 0 and fills it with connections of
its own, so the kernel drops every further SYN: a client's connect hangs.
"""
import hashlib
import http.server
import json
import os
import shutil
import socket
import struct
import sys
import threading
import time


def shard(src, dst):
    """Copy folder src to dst with model.safetensors split in two shards and
    model.safetensors.index.json naming them, as sharded Hub repositories are."""
    os.makedirs(dst, exist_ok=True)
    for f in os.listdir(src):
        if f != "model.safetensors":
            shutil.copy(os.path.join(src, f), dst)
    with open(os.path.join(src, "model.safetensors"), "rb") as fh:
        raw = fh.read()
    n = struct.unpack("<Q", raw[:8])[0]
    header, data = json.loads(raw[8:8 + n]), raw[8 + n:]
    meta = header.pop("__metadata__", None)
    names = sorted(header)
    weight_map = {}
    for i, group in enumerate((names[: len(names) // 2], names[len(names) // 2:])):
        fname = "model-%05d-of-00002.safetensors" % (i + 1)
        h, blob = {}, b""
        for t in group:
            a, b = header[t]["data_offsets"]
            h[t] = dict(header[t], data_offsets=[len(blob), len(blob) + b - a])
            blob += data[a:b]
            weight_map[t] = fname
        if meta:
            h["__metadata__"] = meta
        hb = json.dumps(h).encode()
        hb += b" " * (-len(hb) % 8)
        with open(os.path.join(dst, fname), "wb") as fh:
            fh.write(struct.pack("<Q", len(hb)) + hb + blob)
    with open(os.path.join(dst, "model.safetensors.index.json"), "w") as fh:
        json.dump({"metadata": {"total_size": len(data)}, "weight_map": weight_map}, fh)


def blackhole():
    """Print a port nobody can connect to, and hold it until killed."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(0)
    port = srv.getsockname()[1]
    held = []
    for _ in range(8):
        c = socket.socket()
        c.setblocking(False)
        try:
            c.connect(("127.0.0.1", port))
        except BlockingIOError:
            pass
        held.append(c)
    time.sleep(0.2)
    print(port, flush=True)
    while True:
        time.sleep(3600)


if sys.argv[1] == "--shard":
    shard(sys.argv[2], sys.argv[3])
    sys.exit(0)
if sys.argv[1] == "--blackhole":
    blackhole()
ROOT, LOG = sys.argv[1], sys.argv[2]
LFS = (".safetensors", ".gguf")  # the large files, served from /cdn/ with a SHA-256 in the tree
seen = set()
lock = threading.Lock()


def first_time(key):
    with lock:
        if key in seen:
            return False
        seen.add(key)
        return True


def files_of(owner, name):
    d = os.path.join(ROOT, owner, name)
    return sorted(f for f in os.listdir(d) if os.path.isfile(os.path.join(d, f))) if os.path.isdir(d) else None


class Hub(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def send(self, code, body=b"", ctype="application/json", extra=None):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        with open(LOG, "a") as f:
            f.write("%s range=%s auth=%s\n" % (self.path, self.headers.get("Range"), self.headers.get("Authorization")))
        parts = self.path.split("/")
        if len(parts) < 4:
            return self.send(404, b'{"error": "not found"}')
        api = parts[1] == "api"
        owner, name = (parts[3], parts[4]) if api else (parts[2], parts[3]) if parts[1] == "cdn" else (parts[1], parts[2])
        files = files_of(owner, name)
        if files is None:
            return self.send(404, b'{"error": "Repository not found"}')
        if "dead" in name:
            time.sleep(3600)
            return
        if "gated" in name and self.headers.get("Authorization") != "Bearer secret":
            return self.send(401, b'{"error": "Access to this model is restricted"}')
        if api:
            return self.api(owner, name, parts[5], files)
        if parts[1] == "cdn":
            return self.cdn(owner, name, parts[4])
        rel = "/".join(parts[5:])
        path = os.path.join(ROOT, owner, name, rel)
        if len(parts) < 6 or parts[3] != "resolve" or ".." in parts or not os.path.isfile(path):
            return self.send(404, b'{"error": "Entry not found"}')
        if rel.endswith(LFS):
            return self.send(302, b"", extra={"Location": "/cdn/%s/%s/%s" % (owner, name, rel)})
        with open(path, "rb") as f:
            self.send(200, f.read(), "application/octet-stream")

    def api(self, owner, name, kind, files):
        if kind == "revision":
            if "flaky" in name and first_time(self.path):
                return self.send(503, b'{"error": "try later"}')
            body = {"id": owner + "/" + name, "sha": "0" * 40, "siblings": [{"rfilename": f} for f in files]}
            return self.send(200, json.dumps(body).encode())
        tree = []
        for f in files:
            with open(os.path.join(ROOT, owner, name, f), "rb") as fh:
                data = fh.read()
            item = {"type": "file", "oid": "1" * 40, "size": len(data), "path": f}
            if f.endswith(".safetensors") and "nosize" in name:
                del item["size"]
            elif f.endswith(LFS):
                sha = hashlib.sha256(data + (b"x" if "badsum" in name else b"")).hexdigest()
                item["lfs"] = {"oid": sha, "size": len(data), "pointerSize": 134}
            tree.append(item)
        self.send(200, json.dumps(tree).encode())

    def cdn(self, owner, name, fname):
        with open(os.path.join(ROOT, owner, name, fname), "rb") as f:
            data = f.read()
        rng = self.headers.get("Range")
        if "endless" in name:  # no length, and no end
            self.send_response(200)
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            while True:
                self.wfile.write(b"\0" * 65536)
        if "trickle" in name and rng is None and first_time("trickle" + self.path):
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data[:4096])
            self.wfile.flush()
            for i in range(4096, len(data)):
                time.sleep(0.2)
                self.wfile.write(data[i:i + 1])
                self.wfile.flush()
            return
        if rng is None and first_time(self.path):  # truncated: promise all, send half, hang up
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data[: len(data) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        if rng and "norange" not in name and rng.startswith("bytes=") and rng.endswith("-"):
            start = int(rng[6:-1])
            extra = {"Content-Range": "bytes %d-%d/%d" % (start, len(data) - 1, len(data))}
            return self.send(206, data[start:], "application/octet-stream", extra)
        self.send(200, data, "application/octet-stream")


srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hub)
print(srv.server_address[1], flush=True)
srv.serve_forever()
