"""A loopback PyPI-style index for tests/windows/e2e.sh: serves the wheels in
DIR under the Simple API's JSON form (PEP 691), one project per wheel, and
the files themselves; with NVIDIA_DIR, also that directory's files under
/nvidia/ (NVIDIA's download server: /nvidia/compute/cuda/…). Prints the port
it listens on, then serves until killed.

Usage: python3 index_server.py DIR [NVIDIA_DIR]
"""
import hashlib
import http.server
import json
import os
import re
import sys

WHEELS = sys.argv[1]
NVIDIA = os.path.realpath(sys.argv[2]) if len(sys.argv) > 2 else None


def project_of(filename):
    # nvidia_cuda_runtime_cu12-12.4.127-py3-none-win_amd64.whl -> nvidia-cuda-runtime-cu12
    return re.sub(r"[-_.]+", "-", filename.split("-", 1)[0]).lower()


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def send(self, code, body, kind="application/octet-stream"):
        self.send_response(code)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        files = sorted(f for f in os.listdir(WHEELS) if f.endswith(".whl"))
        m = re.fullmatch(r"/simple/([^/]+)/", self.path)
        if m:
            port = self.server.server_address[1]
            listed = []
            for f in files:
                if project_of(f) != m.group(1):
                    continue
                data = open(os.path.join(WHEELS, f), "rb").read()
                listed.append({
                    "filename": f,
                    "url": f"http://127.0.0.1:{port}/files/{f}",
                    "hashes": {"sha256": hashlib.sha256(data).hexdigest()},
                    "size": len(data),
                })
            if not listed:
                return self.send(404, b"")
            body = json.dumps({"meta": {"api-version": "1.1"}, "name": m.group(1), "files": listed})
            return self.send(200, body.encode(), "application/vnd.pypi.simple.v1+json")
        if NVIDIA and self.path.startswith("/nvidia/"):
            path = os.path.realpath(os.path.join(NVIDIA, self.path[len("/nvidia/"):]))
            if path.startswith(NVIDIA + os.sep) and os.path.isfile(path):
                return self.send(200, open(path, "rb").read())
            # A directory: an HTML listing, as NVIDIA's server gives (`cudaenv update` reads it).
            if self.path.endswith("/") and path.startswith(NVIDIA + os.sep) and os.path.isdir(path):
                links = "".join(f'<a href="{n}">{n}</a>\n' for n in sorted(os.listdir(path)))
                return self.send(200, f"<html><body>{links}</body></html>".encode(), "text/html")
            return self.send(404, b"")
        m = re.fullmatch(r"/files/([^/]+)", self.path)
        if m and m.group(1) in files:
            return self.send(200, open(os.path.join(WHEELS, m.group(1)), "rb").read())
        self.send(404, b"")


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
