# torch.distributed's single-tensor collectives (what FSDP and MoE layers
# call) and gloo's monitored barrier. Rank 0 calls all_to_all_single where
# the other ranks call all_reduce: gloo hangs, each rank in its own
# collective; NCCL and MPI require the same collectives in the same order
# on every member: a collective-mismatch. With --fixed every rank calls
# all_to_all_single (equal blocks: an Alltoall), all_to_all_single with
# split sizes (an Alltoallv) and monitored_barrier: clean.
import sys

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank, size = dist.get_rank(), dist.get_world_size()
out = torch.zeros(4 * size)
inp = torch.arange(4 * size, dtype=torch.float32)
if "--fixed" in sys.argv:
    dist.all_to_all_single(out, inp)  # equal blocks
    dist.all_to_all_single(out, inp, [4] * size, [4] * size)  # split sizes
    dist.monitored_barrier()
elif rank == 0:
    dist.all_to_all_single(out, inp)  # all_to_all_single on rank 0
else:
    dist.all_reduce(inp[:4])  # all_reduce on the others
dist.destroy_process_group()
