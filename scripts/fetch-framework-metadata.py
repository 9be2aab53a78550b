#!/usr/bin/env python3
"""Copies the CUDA requirements the frameworks publish in their own wheels' metadata.

    python3 scripts/fetch-framework-metadata.py registry/inputs/frameworks [PROJECT…]

For every release on PyPI of jax-cuda12-plugin, jax-cuda13-plugin, jax, torch, tensorflow,
cupy-cuda11x, cupy-cuda12x and cupy-cuda13x (or of the projects named), takes the manylinux
x86_64 wheel (the build whose metadata names NVIDIA's wheels: torch's macOS wheels name none),
or the pure-Python wheel of a project that has no other (jax: its `cuda12` extra pins the NVIDIA
wheels for the releases whose plugin pins only `jax-cuda12-pjrt`), reads its core metadata through
PEP 658 (`<wheel URL>.metadata`) where the index announces it, else out of the wheel itself with
HTTP range requests (the zip's central directory and the one `*.dist-info/METADATA` member: a few
hundred KB of a wheel that may be 1 GB), and writes `<project>.tsv`: version, wheel file, wheel sha256, metadata sha256, the
`Requires-Dist` lines that name an NVIDIA CUDA wheel (nvidia-*, tensorrt*, cuda-*), each with
its marker, the metadata's `Requires-Python`, and the Python tags of every Linux x86_64 wheel
of the version on the index (`cp39-cp39 cp313-cp313t`: which interpreters it can be installed
on, which `Requires-Python`, a floor for most, does not say). The files are the inputs of
scripts/gen-framework-compat.py; their first line says when and from where they were read.
"""

import hashlib
import io
import json
import os
import re
import sys
import time
import urllib.request
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from range_file import RangeFile  # noqa: E402

PROJECTS = [
    "jax-cuda12-plugin",
    "jax-cuda13-plugin",
    "jax",
    "torch",
    "tensorflow",
    "cupy-cuda11x",
    "cupy-cuda12x",
    "cupy-cuda13x",
]
WANTED = re.compile(r"^(nvidia-|tensorrt|cuda-|jax-cuda)", re.I)


def get(url, accept=None):
    req = urllib.request.Request(url, headers={"Accept": accept} if accept else {})
    for attempt in range(4):
        try:
            return urllib.request.urlopen(req, timeout=60).read()
        except Exception:
            if attempt == 3:
                raise
            time.sleep(2)


def metadata(f):
    """The wheel's core metadata: PEP 658 when announced, else its METADATA member."""
    if f.get("core-metadata") or f.get("dist-info-metadata"):
        return get(f["url"] + ".metadata")
    z = zipfile.ZipFile(io.BufferedReader(RangeFile(f["url"], f["size"]), buffer_size=1 << 18))
    name = next(n for n in z.namelist() if n.count("/") == 1 and n.endswith(".dist-info/METADATA"))
    return z.read(name)


def linux_wheels(files):
    """(version, file) of every Linux x86_64 wheel on the page that is not yanked, or of every
    pure-Python one where the page has no Linux x86_64 wheel at all."""
    pure = not any("x86_64" in f["filename"] and "linux" in f["filename"] for f in files)
    for f in files:
        name = f["filename"]
        if not name.endswith(".whl") or f.get("yanked"):
            continue
        if pure and not name.endswith("-none-any.whl"):
            continue
        if not pure and ("x86_64" not in name or "linux" not in name):
            continue
        version = name.split("-")[1]
        if not re.fullmatch(r"\d+(\.\d+)*(\.post\d+)?", version):
            continue
        yield version, f


def pick(files):
    """The wheel whose metadata speaks for the Linux x86_64 build of each version."""
    by_version = {}
    for version, f in linux_wheels(files):
        name = f["filename"]
        # One wheel per version: the newest CPython tag is as good as any (the pins do not
        # differ between Python versions of one release).
        if version not in by_version or name > by_version[version]["filename"]:
            by_version[version] = f
    return by_version


def python_tags(files):
    """version -> the sorted, distinct `python-abi` tags of its Linux x86_64 wheels."""
    out = {}
    for version, f in linux_wheels(files):
        # name-version[-build]-python-abi-platform.whl
        parts = f["filename"][: -len(".whl")].split("-")
        out.setdefault(version, set()).add(parts[-3] + "-" + parts[-2])
    return {v: sorted(t) for v, t in out.items()}


def main(out_dir, projects):
    os.makedirs(out_dir, exist_ok=True)
    for project in projects or PROJECTS:
        page = json.loads(get("https://pypi.org/simple/%s/" % project, "application/vnd.pypi.simple.v1+json"))
        rows = []
        tags = python_tags(page["files"])
        for version, f in sorted(pick(page["files"]).items(), key=lambda kv: [int(p) if p.isdigit() else 0 for p in re.split(r"[.]", kv[0].replace("post", ""))]):
            meta = metadata(f)
            reqs = []
            requires_python = ""
            for line in meta.decode("utf-8", "replace").splitlines():
                if line.startswith("Requires-Dist:"):
                    req = line.split(":", 1)[1].strip()
                    if WANTED.match(req):
                        reqs.append(req)
                elif line.startswith("Requires-Python:"):
                    requires_python = line.split(":", 1)[1].strip()
                elif not line.strip():
                    break  # the headers end; the description follows
            rows.append([version, f["filename"], f["hashes"]["sha256"], hashlib.sha256(meta).hexdigest(), " | ".join(reqs),
                         requires_python, " ".join(tags[version])])
        with open(os.path.join(out_dir, project + ".tsv"), "w") as out:
            kind = "pure-Python" if all(r[1].endswith("-none-any.whl") for r in rows) else "Linux x86_64"
            out.write("# PyPI https://pypi.org/simple/%s/ and the core metadata of each version's %s wheel, read %s\n" % (project, kind, time.strftime("%Y-%m-%d")))
            out.write("version\twheel\twheel_sha256\tmetadata_sha256\trequires_dist\trequires_python\tpython_tags\n")
            for r in rows:
                out.write("\t".join(r) + "\n")
        print(project, len(rows), file=sys.stderr)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2:])
