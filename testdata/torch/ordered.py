# The fixed exchange: rank 0 sends first, rank 1 receives first. Clean.
import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
peer = 1 - rank
out = torch.full((16,), float(rank))
got = torch.zeros(16)
if rank == 0:
    dist.send(out, peer)
    dist.recv(got, peer)
else:
    dist.recv(got, peer)
    dist.send(out, peer)
assert got[0].item() == float(peer)
dist.destroy_process_group()
