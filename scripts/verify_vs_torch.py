#!/usr/bin/env python3
# Usage: verify_vs_torch.py N ROUNDS CUDAENV VERIFY-ARGS...   (e.g. 8192 3 cudaenv verify 13.0)
# torch.matmul vs `cudaenv verify`, same GPU, same dtype, same size, same timing
# method (warm-up, CUDA events around each product, median); runs interleaved.
import json, subprocess, sys, statistics, os
import torch

n = int(sys.argv[1]); rounds = int(sys.argv[2]); cmd = sys.argv[3:]
dtypes = ["fp32", "tf32", "fp16", "bf16", "fp64"]
tdt = {"fp32": torch.float32, "tf32": torch.float32, "fp16": torch.float16,
       "bf16": torch.bfloat16, "fp64": torch.float64}

def torch_tflops(name):
    torch.backends.cuda.matmul.allow_tf32 = name == "tf32"
    a = torch.rand(n, n, device="cuda", dtype=tdt[name]) * 2 - 1
    b = torch.rand(n, n, device="cuda", dtype=tdt[name]) * 2 - 1
    for _ in range(2):
        torch.matmul(a, b)
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record(); torch.matmul(a, b); e.record(); torch.cuda.synchronize()
    reps = max(5, min(50, int(150.0 / max(s.elapsed_time(e), 1e-3)) + 1))
    ev = [torch.cuda.Event(enable_timing=True) for _ in range(reps + 1)]
    ev[0].record()
    for i in range(reps):
        torch.matmul(a, b); ev[i + 1].record()
    torch.cuda.synchronize()
    ms = statistics.median(ev[i].elapsed_time(ev[i + 1]) for i in range(reps))
    return 2 * n ** 3 / (ms * 1e-3) / 1e12

res = {d: {"cudaenv": [], "torch": []} for d in dtypes}
for r in range(rounds):
    out = subprocess.run(cmd + ["--json", "--size", str(n), "--dtype", ",".join(dtypes)],
                         capture_output=True, text=True)
    rep = json.loads(out.stdout)
    for g in rep["gemm"]:
        res[g["dtype"]]["cudaenv"].append(g["tflops"] or 0.0)
    for d in dtypes:
        res[d]["torch"].append(torch_tflops(d))
print(f"torch {torch.__version__} cuda {torch.version.cuda}; {n}^3, {rounds} interleaved rounds, medians")
print(f"{'dtype':6}{'cudaenv':>10}{'torch':>10}{'ratio':>8}   per-round cudaenv / torch")
for d in dtypes:
    c, t = statistics.median(res[d]["cudaenv"]), statistics.median(res[d]["torch"])
    print(f"{d:6}{c:10.1f}{t:10.1f}{c / t:8.3f}   " + " ".join(f"{x:.0f}" for x in res[d]["cudaenv"]) + " / " + " ".join(f"{x:.0f}" for x in res[d]["torch"]))
