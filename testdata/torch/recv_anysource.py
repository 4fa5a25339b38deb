# Rank 0 receives from any source (recv without src): gloo matches the
# first message to arrive; NCCL has no receive from any source (torch's
# NCCL backend has no recvAnysource). Clean under gloo's rules, an
# invalid-call under NCCL's.
import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank, size = dist.get_rank(), dist.get_world_size()
t = torch.full((4,), float(rank))
if rank == 0:
    for _ in range(size - 1):
        dist.recv(t)  # from any source
else:
    dist.send(t, 0)
dist.destroy_process_group()
