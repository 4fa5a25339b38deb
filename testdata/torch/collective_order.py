# Rank 0 calls all_reduce then broadcast, rank 1 broadcast then all_reduce:
# the first collective of the world is not the same on both ranks. gloo
# hangs (each waits in its own collective); NCCL and MPI require the same
# collectives in the same order on every member: a collective-mismatch.
# With --fixed both call all_reduce first: clean.
import sys

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
t = torch.full((4,), float(rank))
if rank == 0 or "--fixed" in sys.argv:
    dist.all_reduce(t)  # all_reduce first
    dist.broadcast(t, 0)
else:
    dist.broadcast(t, 0)  # broadcast first
    dist.all_reduce(t)
dist.destroy_process_group()
