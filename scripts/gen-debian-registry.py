#!/usr/bin/env python3
"""Generate registry/debian.toml from the Debian archive's `Packages` indexes.

Usage:
  scripts/gen-debian-registry.py fetch [MIRROR]   # refresh registry/inputs/debian/
  scripts/gen-debian-registry.py [INPUT_DIR] > registry/debian.toml

`fetch` reads, for each suite below and each architecture that suite builds
NVIDIA's libraries for, `dists/<suite>/non-free/binary-<arch>/Packages.xz` from
MIRROR (default http://deb.debian.org/debian), checks it against the suite's
`Release` file, and keeps, verbatim, the stanzas of the binary packages built
from the `nvidia-cuda-toolkit` source package that hold a runtime library:
`registry/inputs/debian/<suite>_<arch>.Packages`, with `sources.tsv` naming
each index, its sha256 and the Release file's date, so a reviewer can fetch the
same bytes. Without `fetch`, the script turns those inputs into the registry;
the output is deterministic, and a unit test checks that the committed
registry is exactly what it makes of the committed inputs.

Debian packages one CUDA release per suite; the CUDA version comes from the
source package's upstream version (`11.2.2-3+deb11u3` -> 11.2.2), the
component's own version from the binary package's (`11.2.152~11.2.2-3+deb11u3`
-> 11.2.152; `11.1.1+~10.4.1.152~...` -> 10.4.1.152: Debian's `+~` keeps the
package version above an older scheme's).
"""
import hashlib
import lzma
import os
import re
import sys
import urllib.request

SUITES = ["bullseye", "bookworm", "trixie"]
ARCHES = {"amd64": "linux-x86_64", "arm64": "linux-sbsa"}
SECTION = "non-free"

# cudaenv component -> patterns of the Debian packages that make it up.
# cuBLAS is two packages (libcublas + libcublasLt), NVRTC two from 11.8 on
# (the builtins library moved to its own package).
COMPONENTS = [
    ("cudart", [r"libcudart\d[\d.]*"]),
    ("cublas", [r"libcublas\d+", r"libcublaslt\d+"]),
    ("cufft", [r"libcufft\d+"]),
    ("curand", [r"libcurand\d+"]),
    ("cusolver", [r"libcusolver\d+"]),
    ("cusparse", [r"libcusparse\d+"]),
    ("nvrtc", [r"libnvrtc\d[\d.]*", r"libnvrtc-builtins\d[\d.]*"]),
    ("nvjitlink", [r"libnvjitlink\d+"]),
    ("cupti", [r"libcupti\d[\d.]*"]),
]


def fetch(url):
    with urllib.request.urlopen(url, timeout=60) as r:
        return r.read()


def parse_stanzas(text):
    for block in text.split("\n\n"):
        fields = {}
        key = None
        for line in block.splitlines():
            if line.startswith((" ", "\t")) and key:
                fields[key] += "\n" + line.strip()
            elif ":" in line:
                key, _, value = line.partition(":")
                fields[key] = value.strip()
        if fields:
            yield fields


def release_hashes(release_text):
    """`path -> (sha256, size)` from a Release file's SHA256 section."""
    out = {}
    in_sha = False
    for line in release_text.splitlines():
        if not line.startswith(" "):
            in_sha = line.startswith("SHA256:")
            continue
        if in_sha:
            digest, size, path = line.split()
            out[path] = (digest, int(size))
    return out


def release_date(release_text):
    for line in release_text.splitlines():
        if line.startswith("Date:"):
            return line.partition(":")[2].strip()
    return "unknown"


def component_version(deb_version):
    v = deb_version.split(":", 1)[-1]
    if "+~" in v:
        v = v.split("+~", 1)[1]
    return v.split("~", 1)[0]


def cuda_version(source_field):
    m = re.search(r"\((?:\d+:)?([\d.]+)-", source_field)
    if not m:
        raise SystemExit(f"cannot read the CUDA version from Source: {source_field}")
    return m.group(1)


def toml_str(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def wanted(name):
    for comp, patterns in COMPONENTS:
        if any(re.fullmatch(p, name) for p in patterns):
            return comp
    return None


def fetch_inputs(mirror, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    rows = []
    for suite in SUITES:
        rel_text = fetch(f"{mirror}/dists/{suite}/Release").decode()
        hashes = release_hashes(rel_text)
        date = release_date(rel_text)
        for arch in ARCHES:
            path = f"{SECTION}/binary-{arch}/Packages.xz"
            if path not in hashes:
                continue
            raw = fetch(f"{mirror}/dists/{suite}/{path}")
            digest = hashlib.sha256(raw).hexdigest()
            if (digest, len(raw)) != hashes[path]:
                raise SystemExit(f"{suite}/{path}: does not match its Release file")
            text = lzma.decompress(raw).decode()
            kept = [
                block.strip("\n")
                for block in text.split("\n\n")
                if any(
                    st.get("Source", "").startswith("nvidia-cuda-toolkit") and wanted(st["Package"])
                    for st in parse_stanzas(block)
                )
            ]
            if not kept:
                continue
            with open(os.path.join(out_dir, f"{suite}_{arch}.Packages"), "w") as f:
                f.write("\n\n".join(kept) + "\n")
            rows.append(f"{suite}\t{arch}\t{mirror}/dists/{suite}/{path}\t{digest}\t{date}")
    with open(os.path.join(out_dir, "sources.tsv"), "w") as f:
        f.write("# suite\tarch\tindex\tsha256\tRelease date\n")
        f.write("\n".join(rows) + "\n")


def generate(in_dir):
    provenance = []
    releases = []
    with open(os.path.join(in_dir, "sources.tsv")) as f:
        rows = [l.rstrip("\n").split("\t") for l in f if l.strip() and not l.startswith("#")]
    order = {c: i for i, (c, _) in enumerate(COMPONENTS)}
    for suite, arch, url, digest, date in rows:
        provenance.append(f"#   {url} sha256 {digest} (Release of {date})")
        with open(os.path.join(in_dir, f"{suite}_{arch}.Packages")) as f:
            text = f.read()
        cuda = None
        packages = []
        for st in parse_stanzas(text):
            comp = wanted(st["Package"])
            if comp and st.get("Source", "").startswith("nvidia-cuda-toolkit"):
                cuda = cuda or cuda_version(st["Source"])
                packages.append((comp, st))
        packages.sort(key=lambda p: (order[p[0]], p[1]["Package"]))
        releases.append((cuda, suite, ARCHES[arch], packages))

    out = []
    w = out.append
    w("# Generated by scripts/gen-debian-registry.py from registry/inputs/debian/; do not edit by hand.")
    w("# NVIDIA's CUDA runtime libraries as Debian packages them (non-free section,")
    w("# source package nvidia-cuda-toolkit), one CUDA release per suite.")
    w("# Read from:")
    out.extend(provenance)
    w("# `filename` is relative to the mirror (CUDAENV_DEBIAN_MIRROR / debian-mirror).")
    for cuda, suite, platform, packages in releases:
        w("")
        w("[[release]]")
        w(f"cuda = {toml_str(cuda)}")
        w(f"suite = {toml_str(suite)}")
        w(f"platform = {toml_str(platform)}")
        for comp, st in packages:
            w("")
            w("[[release.package]]")
            w(f"component = {toml_str(comp)}")
            w(f"name = {toml_str(st['Package'])}")
            w(f"version = {toml_str(component_version(st['Version']))}")
            w(f"deb-version = {toml_str(st['Version'])}")
            w(f"filename = {toml_str(st['Filename'])}")
            w(f"size = {int(st['Size'])}")
            w(f"sha256 = {toml_str(st['SHA256'].lower())}")
    return "\n".join(out) + "\n"


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    default_inputs = os.path.join(here, "..", "registry", "inputs", "debian")
    args = sys.argv[1:]
    if args and args[0] == "fetch":
        mirror = (args[1] if len(args) > 1 else "http://deb.debian.org/debian").rstrip("/")
        fetch_inputs(mirror, default_inputs)
        return
    sys.stdout.write(generate(args[0] if args else default_inputs))


if __name__ == "__main__":
    main()
