# Both ranks send first: gloo's blocking send waits for the peer's recv (at
# any size), so each waits for the other: a deadlock, as on NCCL.
import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
peer = 1 - rank
out = torch.full((16,), float(rank))
got = torch.zeros(16)
dist.send(out, peer)  # both ranks block here
dist.recv(got, peer)
dist.destroy_process_group()
