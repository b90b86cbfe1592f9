# SPDX-License-Identifier: MIT
"""A small PyTorch training loop for bench/gpu/validate.sh: STEPS steps of a 4-layer MLP with
NVTX step ranges. Mode 'plain' runs as is; 'torchprof' wraps the loop in torch.profiler (CPU+CUDA
activities) for comparison. Prints 'elapsed_ms=<ms> steps=<n>' for the timed steps."""
import sys
import time

import torch

mode = sys.argv[1] if len(sys.argv) > 1 else "plain"
steps = int(sys.argv[2]) if len(sys.argv) > 2 else 50
dev = torch.device("cuda")
model = torch.nn.Sequential(torch.nn.Linear(2048, 2048), torch.nn.ReLU(),
                            torch.nn.Linear(2048, 2048), torch.nn.ReLU(),
                            torch.nn.Linear(2048, 2048), torch.nn.ReLU(),
                            torch.nn.Linear(2048, 10)).to(dev)
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
x = torch.randn(256, 2048, device=dev)
y = torch.randint(0, 10, (256,), device=dev)


def step(i):
    torch.cuda.nvtx.range_push(f"step {i}")
    opt.zero_grad(set_to_none=True)
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_pop()


for i in range(5):  # warm-up, not timed
    step(-1)
t0 = time.perf_counter()
if mode == "torchprof":
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for i in range(steps):
            step(i)
    elapsed = (time.perf_counter() - t0) * 1e3
    prof.key_averages()  # the profiler's own post-processing is not counted
else:
    for i in range(steps):
        step(i)
    elapsed = (time.perf_counter() - t0) * 1e3
print(f"elapsed_ms={elapsed:.3f} steps={steps}")
