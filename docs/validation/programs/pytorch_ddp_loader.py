# SPDX-License-Identifier: MIT
# Real DDP training on the CPU (gloo backend), 2 ranks under torchrun, each with a DataLoader of
# 2 workers; rank 1 gets a slower dataset (an imbalance). Prints per-rank measured times.
import os, time, torch, torch.distributed as dist
from torch.utils.data import Dataset, DataLoader
from torch.nn.parallel import DistributedDataParallel as DDP

class Slow(Dataset):
    def __init__(self, delay): self.delay = delay
    def __len__(self): return 512
    def __getitem__(self, i):
        time.sleep(self.delay)
        return torch.randn(256), torch.randint(0, 10, ()).item()

def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(rank); torch.set_num_threads(1)
    model = DDP(torch.nn.Sequential(torch.nn.Linear(256, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 10)))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    loader = DataLoader(Slow(0.001 if rank == 0 else 0.003), batch_size=16, num_workers=2)
    waited = stepped = 0.0
    it = iter(loader)
    for step in range(12):
        t0 = time.perf_counter(); x, y = next(it); t1 = time.perf_counter()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad(); loss.backward(); opt.step()
        waited += t1 - t0; stepped += time.perf_counter() - t1
    print(f"rank {rank} waited_s {waited:.4f} stepped_s {stepped:.4f}", flush=True)
    dist.destroy_process_group()

if __name__ == "__main__":
    main()
