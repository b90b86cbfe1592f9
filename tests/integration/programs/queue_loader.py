# SPDX-License-Identifier: MIT
# A training loop fed by data-loader workers the way PyTorch's DataLoader feeds one: each worker
# (a multiprocessing.Process) puts its batches on one shared multiprocessing.Queue after
# "loading" each for its own delay; the main process takes them with get(timeout=...) (which
# waits in poll() on the queue's pipe, then reads it) and "trains" for STEP seconds on each.
# It prints the time it spent in get() and in its steps as it measured them, and the time spent
# waiting for the batches of each worker (by the pid the batch carries).
#
#   queue_loader.py BATCHES_PER_WORKER STEP_S DELAY_S [DELAY_S ...]   (one worker per delay)
import multiprocessing as mp
import os
import sys
import time


def loader(queue, batches, delay):
    for _ in range(batches):
        time.sleep(delay)
        queue.put((os.getpid(), bytes(4096)))


def main():
    batches, step = int(sys.argv[1]), float(sys.argv[2])
    delays = [float(d) for d in sys.argv[3:]]
    mp.set_start_method("fork")
    queue = mp.Queue()
    workers = [mp.Process(target=loader, args=(queue, batches, d)) for d in delays]
    for w in workers:
        w.start()
    waited = trained = 0.0
    waited_for = {w.pid: 0.0 for w in workers}
    for _ in range(batches * len(workers)):
        t0 = time.perf_counter()
        pid, _batch = queue.get(timeout=30.0)
        t1 = time.perf_counter()
        spin = 0
        while time.perf_counter() - t1 < step:
            spin += 1
        waited += t1 - t0
        waited_for[pid] += t1 - t0
        trained += time.perf_counter() - t1
    for w in workers:
        w.join()
    print(f"waited_ns {int(waited * 1e9)} trained_ns {int(trained * 1e9)}")
    for pid, s in waited_for.items():
        print(f"worker {pid} waited_ns {int(s * 1e9)}")


if __name__ == "__main__":
    main()
