"""cuBLAS square GEMM rates through torch.matmul (CUDA events, median of 20 after 5 warm-up runs),
the same-run baseline of the Vulkan scripts in tools/ on a GPU machine (needs torch).
usage: python3 tools/cublas_square.py <sizes, e.g. 2048,4096> [dtypes: f16,bf16]"""
import sys

import torch

sizes = [int(x) for x in sys.argv[1].split(",")]
dtypes = {"f16": torch.float16, "bf16": torch.bfloat16}
for name in (sys.argv[2] if len(sys.argv) > 2 else "f16,bf16").split(","):
    for n in sizes:
        a = torch.randn(n, n, device="cuda", dtype=dtypes[name])
        b = torch.randn(n, n, device="cuda", dtype=dtypes[name])
        for _ in range(5):
            torch.matmul(a, b)
        times = []
        for _ in range(20):
            start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            torch.matmul(a, b)
            stop.record()
            torch.cuda.synchronize()
            times.append(start.elapsed_time(stop))
        ms = sorted(times)[10]
        print(f"cublas {name:5s} {n:5d}  {ms:8.4f} ms  {2 * n**3 / ms / 1e9:7.1f} TF/s")
