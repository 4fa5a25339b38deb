# Rank 0 calls all_reduce then broadcast, rank 1 broadcast then all_reduce:
# the first collective of the world is not the same on both ranks. gloo
# hangs (each waits in its own collective); NCCL and MPI require the same
# collectives in the same order on every member: a collective-mismatch.
# With --fixed both call all_reduce first: clean. With --size both begin
# with all_reduce, rank 0 of 4 elements and rank 1 of 8: gloo aborts
# one rank and the other's all_reduce raises (connection reset); the
# mismatch is the one finding, and says how the call failed.
import sys

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
t = torch.full((4,), float(rank))
if "--size" in sys.argv:
    t = torch.full((4 if rank == 0 else 8,), float(rank))
    dist.all_reduce(t)  # all_reduce of 4 or 8
elif rank == 0 or "--fixed" in sys.argv:
    dist.all_reduce(t)  # all_reduce first
    dist.broadcast(t, 0)
else:
    dist.broadcast(t, 0)  # broadcast first
    dist.all_reduce(t)
dist.destroy_process_group()
