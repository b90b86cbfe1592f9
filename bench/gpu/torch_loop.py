# SPDX-License-Identifier: MIT
"""A small PyTorch training loop for bench/gpu/validate.sh: STEPS steps of a 4-layer MLP with
NVTX step ranges ('step 0', 'step 1', ...; the warm-up steps are 'step -1').

    python3 torch_loop.py MODE STEPS [--ddp] [--trace FILE]

MODE 'plain' runs the loop as is; 'torchprof' wraps the timed steps in torch.profiler (CPU and
CUDA activities) and, with --trace, exports its Chrome trace to FILE after the timing. --ddp
wraps the model in DistributedDataParallel over NCCL (one process on one GPU unless torchrun set
RANK/WORLD_SIZE), so every step all-reduces its gradients. Prints 'elapsed_ms=<ms> steps=<n>'
for the timed steps."""
import argparse
import os
import time

import torch

parser = argparse.ArgumentParser()
parser.add_argument("mode", choices=["plain", "torchprof"])
parser.add_argument("steps", type=int)
parser.add_argument("--ddp", action="store_true")
parser.add_argument("--trace")
args = parser.parse_args()

local_rank = int(os.environ.get("LOCAL_RANK", "0"))
dev = torch.device("cuda", local_rank)
torch.cuda.set_device(dev)
model = torch.nn.Sequential(torch.nn.Linear(2048, 2048), torch.nn.ReLU(),
                            torch.nn.Linear(2048, 2048), torch.nn.ReLU(),
                            torch.nn.Linear(2048, 2048), torch.nn.ReLU(),
                            torch.nn.Linear(2048, 10)).to(dev)
if args.ddp:
    import torch.distributed as dist
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", str(20000 + os.getpid() % 20000))
    dist.init_process_group("nccl", rank=int(os.environ.get("RANK", "0")),
                            world_size=int(os.environ.get("WORLD_SIZE", "1")), device_id=dev)
    model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[local_rank])
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


for _ in range(5):  # warm-up, not timed
    step(-1)
t0 = time.perf_counter()
if args.mode == "torchprof":
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for i in range(args.steps):
            step(i)
    elapsed = (time.perf_counter() - t0) * 1e3
    if args.trace:  # the profiler's own post-processing is not counted
        prof.export_chrome_trace(args.trace)
else:
    for i in range(args.steps):
        step(i)
    elapsed = (time.perf_counter() - t0) * 1e3
print(f"elapsed_ms={elapsed:.3f} steps={args.steps}", flush=True)
if args.ddp:
    torch.distributed.destroy_process_group()
