#!/usr/bin/env python3
"""Generate registry/debian.toml from the Debian archive's `Packages` indexes.

Usage: scripts/gen-debian-registry.py [MIRROR] > registry/debian.toml

MIRROR defaults to http://deb.debian.org/debian. For each suite below and each
architecture that suite builds NVIDIA's libraries for, the script reads
`dists/<suite>/non-free/binary-<arch>/Packages.xz` (checked against the
suite's `Release` file), keeps the binary packages built from the
`nvidia-cuda-toolkit` source package that hold a runtime library, and writes
each with its pool path, size and sha256. The provenance comment names every
index read, its sha256 and the Release file's date, so a reviewer can fetch
the same bytes. Regenerating from the same indexes changes nothing.

Debian packages one CUDA release per suite; the CUDA version comes from the
source package's upstream version (`11.2.2-3+deb11u3` -> 11.2.2), the
component's own version from the binary package's (`11.2.152~11.2.2-3+deb11u3`
-> 11.2.152; `11.1.1+~10.4.1.152~…` -> 10.4.1.152: Debian's `+~` keeps the
package version above an older scheme's).
"""
import hashlib
import lzma
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


def main():
    mirror = (sys.argv[1] if len(sys.argv) > 1 else "http://deb.debian.org/debian").rstrip("/")
    provenance = []
    releases = []
    for suite in SUITES:
        rel_text = fetch(f"{mirror}/dists/{suite}/Release").decode()
        hashes = release_hashes(rel_text)
        date = release_date(rel_text)
        for arch, platform in ARCHES.items():
            path = f"{SECTION}/binary-{arch}/Packages.xz"
            if path not in hashes:
                continue
            raw = fetch(f"{mirror}/dists/{suite}/{path}")
            digest = hashlib.sha256(raw).hexdigest()
            if (digest, len(raw)) != hashes[path]:
                raise SystemExit(f"{suite}/{path}: does not match its Release file")
            provenance.append(f"#   {mirror}/dists/{suite}/{path} sha256 {digest} (Release of {date})")
            text = lzma.decompress(raw).decode()
            cuda = None
            packages = []
            for st in parse_stanzas(text):
                src = st.get("Source", "")
                if not src.startswith("nvidia-cuda-toolkit"):
                    continue
                name = st["Package"]
                for comp, patterns in COMPONENTS:
                    if any(re.fullmatch(p, name) for p in patterns):
                        cuda = cuda or cuda_version(src)
                        packages.append((comp, st))
                        break
            if not packages:
                continue
            order = {c: i for i, (c, _) in enumerate(COMPONENTS)}
            packages.sort(key=lambda p: (order[p[0]], p[1]["Package"]))
            releases.append((cuda, suite, platform, packages))

    print("# Generated by scripts/gen-debian-registry.py; do not edit by hand.")
    print("# NVIDIA's CUDA runtime libraries as Debian packages them (non-free section,")
    print("# source package nvidia-cuda-toolkit), one CUDA release per suite.")
    print("# Read from:")
    for p in provenance:
        print(p)
    print("# `filename` is relative to the mirror (CUDAENV_DEBIAN_MIRROR / debian-mirror).")
    for cuda, suite, platform, packages in releases:
        print()
        print("[[release]]")
        print(f"cuda = {toml_str(cuda)}")
        print(f"suite = {toml_str(suite)}")
        print(f"platform = {toml_str(platform)}")
        for comp, st in packages:
            print()
            print("[[release.package]]")
            print(f"component = {toml_str(comp)}")
            print(f"name = {toml_str(st['Package'])}")
            print(f"version = {toml_str(component_version(st['Version']))}")
            print(f"deb-version = {toml_str(st['Version'])}")
            print(f"filename = {toml_str(st['Filename'])}")
            print(f"size = {int(st['Size'])}")
            print(f"sha256 = {toml_str(st['SHA256'].lower())}")


if __name__ == "__main__":
    main()
