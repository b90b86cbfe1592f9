#!/usr/bin/env python3
"""Writes steps_rank{0,1,2}.json: synthetic PyTorch profiler (Kineto) traces with known steps.

Per rank r (all times in us, as Kineto writes them):
  - the profiler's span "PyTorch Profiler (0)" (cat Trace) over [0, 2 000 000): 2 s recorded;
  - warm-up: one cpu_op at [500 000, 510 000), before the first step (outside the steps);
  - ProfilerStep#5..#9 back to back from 1 000 000, step k (0..4) lasting 10 000 (k+1) + 1 000 r;
  - in each step two Optimizer.step#SGD.step ranges (depth 1: more instances than the steps);
  - in each step one kernel of 5 000 at step begin + 1 000 (launched by a cudaLaunchKernel),
    and its GPU-side copy of the step (gpu_user_annotation ProfilerStep#N on the GPU stream,
    from the kernel's start to the step's end).
So: 5 steps; rank r's steps last 10, 20, 30, 40, 50 ms + r ms; the slowest rank (2) sets each
step's duration; per step and rank 5 ms compute and (length - 5 ms) GPU idle; the window is
[1 000 000, 1 000 000 + 150 000 + 5 000 * 2) = 160 ms of the 2 s recorded.
"""
import json

for r in range(3):
    pid, tid = 1000 + r, 1000 + r
    ev = [
        {"ph": "X", "cat": "Trace", "name": "PyTorch Profiler (0)", "pid": "Spans",
         "tid": "PyTorch Profiler", "ts": 0, "dur": 2000000, "args": {"Op count": 0}},
        {"ph": "X", "cat": "cpu_op", "name": "aten::empty", "pid": pid, "tid": tid,
         "ts": 500000, "dur": 10000, "args": {}},
    ]
    t = 1000000
    corr = 1
    for k in range(5):
        length = 10000 * (k + 1) + 1000 * r
        ev.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % (5 + k),
                   "pid": pid, "tid": tid, "ts": t, "dur": length, "args": {}})
        for half in range(2):
            ev.append({"ph": "X", "cat": "user_annotation", "name": "Optimizer.step#SGD.step",
                       "pid": pid, "tid": tid, "ts": t + 100 + half * (length // 2),
                       "dur": 200, "args": {}})
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": pid,
                   "tid": tid, "ts": t + 500, "dur": 10, "args": {"correlation": corr}})
        ev.append({"ph": "X", "cat": "kernel", "name": "void gemm_kernel<float>()", "pid": 0,
                   "tid": 7, "ts": t + 1000, "dur": 5000,
                   "args": {"device": 0, "stream": 7, "correlation": corr}})
        ev.append({"ph": "X", "cat": "gpu_user_annotation", "name": "ProfilerStep#%d" % (5 + k),
                   "pid": 0, "tid": 7, "ts": t + 1000, "dur": length - 1000,
                   "args": {"device": 0, "stream": 7}})
        corr += 1
        t += length
    doc = {"schemaVersion": 1,
           "distributedInfo": {"backend": "nccl", "rank": r, "world_size": 3},
           "traceEvents": ev}
    with open("steps_rank%d.json" % r, "w") as f:
        json.dump(doc, f, indent=0)
