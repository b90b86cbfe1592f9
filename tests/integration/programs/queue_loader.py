# SPDX-License-Identifier: MIT
# A training loop fed by a data-loader worker the way PyTorch's DataLoader feeds one: the worker
# (a multiprocessing.Process) puts batches on a multiprocessing.Queue after "loading" each for
# DELAY seconds; the main process takes them with get(timeout=...) (which waits in poll() on the
# queue's pipe, then reads it) and "trains" for STEP seconds on each. It prints the time it spent
# in get() and in its steps, as it measured them.
import multiprocessing as mp
import sys
import time


def loader(queue, batches, delay):
    for _ in range(batches):
        time.sleep(delay)
        queue.put(bytes(4096))


def main():
    batches, delay, step = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
    mp.set_start_method("fork")
    queue = mp.Queue()
    worker = mp.Process(target=loader, args=(queue, batches, delay))
    worker.start()
    waited = trained = 0.0
    for _ in range(batches):
        t0 = time.perf_counter()
        queue.get(timeout=30.0)
        t1 = time.perf_counter()
        spin = 0
        while time.perf_counter() - t1 < step:
            spin += 1
        waited += t1 - t0
        trained += time.perf_counter() - t1
    worker.join()
    print(f"waited_ns {int(waited * 1e9)} trained_ns {int(trained * 1e9)}")


if __name__ == "__main__":
    main()
