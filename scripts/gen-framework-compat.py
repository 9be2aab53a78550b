#!/usr/bin/env python3
"""Generate registry/compat/frameworks.toml from the frameworks' own wheel metadata.

    python3 scripts/gen-framework-compat.py registry/inputs/frameworks > registry/compat/frameworks.toml

The inputs (`<project>.tsv`, written by scripts/fetch-framework-metadata.py, committed with
each wheel's sha256) hold the `Requires-Dist` lines naming NVIDIA wheels of every Linux x86_64
release on PyPI of torch, tensorflow, jax-cuda12/13-plugin and cupy-cuda11x/12x/13x. This
script reads what those lines say about a stack, mechanically, so a reviewer can re-run it
and diff (the test `frameworks_toml_is_generated_from_its_inputs` does just that):

- CUDA: the range of the runtime (`nvidia-cuda-runtime[-cuNN]`), the `cuda-toolkit`
  metapackage, cuBLAS and nvcc, as CUDA major.minor. These four number their wheels by the
  CUDA release they ship with (cudart 12.1.105 is CUDA 12.1); cuFFT, cuRAND, cuSOLVER and
  cuSPARSE number theirs on their own, so they say nothing about the CUDA release. nvcc
  counts because JAX runs its ptxas; cuBLAS because JAX 0.6.1 caps it (`<12.9`). An exact
  pin of the runtime or of `cuda-toolkit` wins over the others' ranges (torch 2.12 pins
  cuda-toolkit 13.0.2 and lets cuBLAS float to 13.1).
- cuDNN, NCCL, cuSPARSELt, TensorRT: their pins as they are written.
- JAX 0.4.22–0.4.29: the plugin's metadata pins only `jax-cuda12-pjrt`; `jax`'s own wheel
  pins the NVIDIA wheels in its `cudaNN` extra (`jax[cuda12]`). A plugin row that names no NVIDIA
  wheel takes those pins from `jax.tsv`'s row of the same version, that extra only (`cuda12_pip`
  repeats it), and says so (`pins_project`, `pins_wheel`, `pins_wheel_sha256`). `jax.tsv` has no
  rows of its own here: JAX's releases are its plugins'.
- The CUDA major: from the project's name (`jax-cuda12-plugin`, `cupy-cuda13x`) or the
  `-cuNN` suffix of its pins; a release whose metadata names no NVIDIA wheel is written with
  `nvidia = false` (the wheel bundles its CUDA, or expects one installed locally).

- Python: the metadata's `Requires-Python` as written (`requires_python`), and the interpreters
  the version's Linux x86_64 wheels are built for, from their tags (`python_wheels`: `cp310` is
  3.10, `cp313t` the free-threaded 3.13t, `cp39-abi3` 3.9 and newer as `3.9+`; `py3` wheels say
  nothing). `Requires-Python` is mostly a floor; the tags say where a wheel exists.

Requirements whose marker excludes Linux are skipped; the extra that brings the NVIDIA wheels
(`and-cuda`, `with-cuda`, `ctk`) is recorded. A post release (`2.15.0.post1`) is left out when
its release is there: it needs the same stack.
"""

import os
import re
import sys

PROJECTS = [
    ("torch", "torch"),
    ("tensorflow", "tensorflow"),
    ("jax", "jax-cuda12-plugin"),
    ("jax", "jax-cuda13-plugin"),
    ("cupy", "cupy-cuda11x"),
    ("cupy", "cupy-cuda12x"),
    ("cupy", "cupy-cuda13x"),
]

# Projects whose wheel version is the CUDA release they belong to (major.minor).
CUDA_TRACKING = ("nvidia-cuda-runtime", "nvidia-cublas", "nvidia-cuda-nvcc", "cuda-toolkit")
# Of those, the ones whose exact pin names the CUDA release.
CUDA_EXACT = ("nvidia-cuda-runtime", "cuda-toolkit")
# Of those, the ones whose upper bound caps the CUDA release (nvcc's floor only matters).
CUDA_CAPPING = ("nvidia-cuda-runtime", "nvidia-cublas", "cuda-toolkit")
LIBRARIES = {
    "nvidia-cudnn": "cudnn",
    "nvidia-nccl": "nccl",
    "nvidia-cusparselt": "cusparselt",
    "tensorrt": "tensorrt",
    "tensorrt-libs": "tensorrt",
}
NOT_LINUX = re.compile(r"""(platform_system|sys_platform)\s*==\s*['"](Windows|win32|Darwin|darwin)['"]""")


def q(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def version_key(v):
    return [int(p) if p.isdigit() else -1 for p in re.split(r"[.]", re.sub(r"post\d+", "", v))]


def clean_version(v):
    """`8.6.1.post1` -> `8.6.1`; `13.*` stays for the caller."""
    return re.sub(r"\.post\d+$", "", v)


def parse_req(text):
    """`nvidia-cudnn-cu12 (<10.0,>=9.0) ; extra == 'x'` -> (name, [(op, version)], marker)."""
    req, _, marker = text.partition(";")
    m = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*\(?([^)]*)\)?\s*$", req)
    if not m:
        raise SystemExit(f"unparsed requirement: {text!r}")
    name = m.group(1).lower().replace("_", "-")
    specs = []
    for part in m.group(3).split(","):
        part = part.strip()
        if not part:
            continue
        sm = re.match(r"(==|>=|<=|<|>|~=|!=)\s*(\S+)$", part)
        if not sm:
            raise SystemExit(f"unparsed specifier {part!r} in {text!r}")
        specs.append((sm.group(1), sm.group(2)))
    return name, specs, marker.strip()


def base_project(name):
    """`nvidia-cuda-runtime-cu12` -> (`nvidia-cuda-runtime`, 12); `nvidia-cublas` -> (…, None)."""
    m = re.match(r"(.*)-cu(\d+)$", name)
    if m:
        return m.group(1), int(m.group(2))
    return name, None


def bounds(specs):
    """The specifiers as {eq, ge, le, lt} (strings), `==13.*` read as >=13, <14."""
    out = {}
    for op, v in specs:
        if op == "==" and v.endswith(".*"):
            head = v[:-2]
            parts = head.split(".")
            out["ge"] = head
            parts[-1] = str(int(parts[-1]) + 1)
            out["lt"] = ".".join(parts)
        elif op == "==":
            out["eq"] = clean_version(v)
        elif op == ">=":
            out["ge"] = clean_version(v)
        elif op == "<=":
            out["le"] = clean_version(v)
        elif op == "<":
            out["lt"] = clean_version(v)
        elif op == "~=":
            parts = v.split(".")
            out["ge"] = clean_version(v)
            out["lt"] = ".".join(parts[:-2] + [str(int(parts[-2]) + 1)])
        else:
            raise SystemExit(f"specifier {op}{v} is not one this script reads")
    return out


def mm(v):
    """CUDA major.minor of a CUDA-tracking wheel version (`12.1.105` -> `12.1`, `13` -> `13.0`)."""
    parts = v.split(".")
    return f"{parts[0]}.{parts[1] if len(parts) > 1 else '0'}"


def vt(v):
    return tuple(int(p) for p in v.split("."))


def cuda_range(reqs):
    """The CUDA range the CUDA-tracking pins allow, and the requirements it was read from."""
    eq = ge = le = lt = None
    used = []
    for name, specs, text in reqs:
        base, _ = base_project(name)
        if base not in CUDA_TRACKING:
            continue
        b = bounds(specs)
        if not b:
            continue
        used.append(text)
        if "eq" in b and base in CUDA_EXACT:
            eq = mm(b["eq"])
        if "ge" in b:
            g = mm(b["ge"])
            ge = g if ge is None or vt(g) > vt(ge) else ge
        if base in CUDA_CAPPING:
            if "le" in b:
                x = mm(b["le"])
                le = x if le is None or vt(x) < vt(le) else le
            if "lt" in b:
                # `<13.0` caps at 13.0 exclusive; `<12.9` caps the minor: CUDA < 12.9.
                x = b["lt"]
                x = x if "." in x else x + ".0"
                x = mm(x)
                lt = x if lt is None or vt(x) < vt(lt) else lt
    if eq:
        return {"eq": eq}, used
    out = {}
    if ge:
        out["ge"] = ge
    if le:
        out["le"] = le
    if lt:
        out["lt"] = lt
    return out, used


def table(b, text):
    fields = [f"{k} = {q(b[k])}" for k in ("eq", "ge", "le", "lt") if k in b]
    fields.append(f"from = {q(text)}")
    return "{ " + ", ".join(fields) + " }"


def read(path):
    with open(path) as f:
        lines = f.read().splitlines()
    provenance = lines[0].lstrip("# ").strip()
    header = lines[1].split("\t")
    rows = [dict(zip(header, line.split("\t"))) for line in lines[2:] if line.strip()]
    return provenance, rows


def python_wheels(tags):
    """`cp39-cp39 cp313-cp313t cp39-abi3 py3-none` -> ["3.9", "3.9+", "3.13t"], oldest first."""
    out = set()
    for tag in tags.split():
        py, _, abi = tag.partition("-")
        for one in py.split("."):
            m = re.fullmatch(r"cp(\d)(\d+)", one)
            if not m:
                continue
            v = f"{m.group(1)}.{m.group(2)}"
            if abi == "abi3":
                v += "+"
            elif abi.endswith("t"):
                v += "t"
            out.add(v)
    return sorted(out, key=lambda v: (tuple(int(p) for p in v.rstrip("+t").split(".")), v[-1] in "+t", v))


def nvidia_reqs(row, only_extra=None):
    """The requirements of a row that say something about a stack, as (name, specs, text)."""
    reqs = []
    for text in filter(None, (r.strip() for r in row.get("requires_dist", "").split(" | "))):
        name, specs, marker = parse_req(text)
        if NOT_LINUX.search(marker):
            continue
        if name.startswith("jax-cuda") or name in ("cuda-pathfinder", "cuda-bindings", "cuda-python"):
            continue
        em = re.search(r"""extra\s*==\s*['"]([^'"]+)['"]""", marker)
        if only_extra is not None and (em is None or em.group(1) != only_extra):
            continue
        reqs.append((name, specs, text, em.group(1) if em else None))
    return reqs


def release(framework, project, row, pins_of=None):
    out = ["\n[[release]]", f"framework = {q(framework)}", f"project = {q(project)}",
           f"version = {q(row['version'])}", f"wheel = {q(row['wheel'])}",
           f"wheel_sha256 = {q(row['wheel_sha256'])}"]
    if row.get("requires_python"):
        out.append(f"requires_python = {q(row['requires_python'])}")
    wheels = python_wheels(row.get("python_tags", ""))
    if wheels:
        out.append("python_wheels = [" + ", ".join(q(w) for w in wheels) + "]")
    m = re.search(r"cuda(\d+)", project)
    major = int(m.group(1)) if m else None
    reqs = nvidia_reqs(row)
    if not reqs and pins_of is not None and major is not None:
        reqs = nvidia_reqs(pins_of, only_extra=f"cuda{major}")
        if reqs:
            out += [f"pins_project = {q(pins_of['project'])}", f"pins_wheel = {q(pins_of['wheel'])}",
                    f"pins_wheel_sha256 = {q(pins_of['wheel_sha256'])}"]
    extras = {e for *_, e in reqs if e}
    reqs = [(name, specs, text) for name, specs, text, _ in reqs]
    for name, _, _ in reqs:
        _, suffix = base_project(name)
        if major is None and suffix and not name.startswith("nvidia-cudnn"):
            major = suffix
    if not reqs:
        out.append("nvidia = false")
        if major is not None:
            out.append(f"major = {major}")
        return "\n".join(out) + "\n"
    if major is None:
        # CUDA 13 toolkit wheels dropped the suffix: the CUDA range says the major.
        rng, _ = cuda_range(reqs)
        major = int((rng.get("eq") or rng.get("ge") or "0").split(".")[0]) or None
    if major is not None:
        out.append(f"major = {major}")
    if len(extras) == 1:
        out.append(f"extra = {q(extras.pop())}")
    elif extras:
        raise SystemExit(f"{project} {row['version']}: several extras {sorted(extras)}")
    rng, used = cuda_range(reqs)
    if rng:
        if "eq" not in rng and "lt" not in rng and "le" not in rng and major is not None:
            rng["lt"] = f"{major + 1}.0"
        fields = [f"{k} = {q(rng[k])}" for k in ("eq", "ge", "le", "lt") if k in rng]
        out.append("cuda = { " + ", ".join(fields) + " }")
        out.append("cuda_from = [" + ", ".join(q(u) for u in used) + "]")
    seen = set()
    for name, specs, text in reqs:
        base, _ = base_project(name)
        lib = LIBRARIES.get(base)
        if lib and lib not in seen and bounds(specs):
            seen.add(lib)
            out.append(f"{lib} = {table(bounds(specs), text)}")
    return "\n".join(out) + "\n"


def main(src):
    print("# Generated by scripts/gen-framework-compat.py from registry/inputs/frameworks; edit the script, not this file.")
    sources = []
    body = []
    # The jax wheel's own pins, for the plugin releases whose metadata has none.
    jax_provenance, jax_rows = read(os.path.join(src, "jax.tsv"))
    jax_pins = {r["version"]: dict(r, project="jax") for r in jax_rows}
    for framework, project in PROJECTS:
        provenance, rows = read(os.path.join(src, project + ".tsv"))
        sources.append(provenance)
        if project.startswith("jax-cuda"):
            pins = jax_pins
        else:
            pins = {}
        versions = {r["version"] for r in rows}
        for row in sorted(rows, key=lambda r: version_key(r["version"])):
            v = row["version"]
            base = re.sub(r"\.post\d+$", "", v)
            if base != v and base in versions:
                continue
            body.append(release(framework, project, row, pins.get(v)))
    sources.append(jax_provenance + " (the pins of plugin releases whose own metadata has none)")
    print("source = " + q(
        "Requires-Dist of each release's Linux x86_64 wheel on PyPI, read by scripts/fetch-framework-metadata.py "
        "into registry/inputs/frameworks/<project>.tsv (wheel and metadata sha256 per row): " + "; ".join(sources)))
    print()
    print("# One row per release. `cuda`: the CUDA major.minor range its NVIDIA wheels allow (eq, ge, le, lt),")
    print("# read from `cuda_from`; cudnn / nccl / cusparselt / tensorrt: their pins as the metadata writes")
    print("# them (`from`). `nvidia = false`: the metadata names no NVIDIA wheel (the wheel bundles its CUDA,")
    print("# or expects one installed locally); `major` then comes from the project's name, if it has one.")
    print("# requires_python: the metadata's Requires-Python; python_wheels: the interpreters its Linux x86_64")
    print("# wheels are tagged for (3.13t free-threaded, 3.9+ an abi3 wheel for 3.9 and newer).")
    sys.stdout.write("".join(body))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
