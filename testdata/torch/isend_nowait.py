# Rank 0's isend is never waited for: its Work is dropped.
import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
t = torch.arange(16, dtype=torch.float32)
if rank == 0:
    dist.isend(t, 1)  # no wait()
else:
    dist.recv(t, 0)
dist.barrier()
dist.destroy_process_group()
