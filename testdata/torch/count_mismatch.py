# Rank 0 sends 4 floats, rank 1 receives into 8: gloo completes it (the rest
# of the tensor is left as it was); NCCL requires equal counts.
import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
if rank == 0:
    dist.send(torch.ones(4), 1)  # 4 elements
else:
    got = torch.zeros(8)
    dist.recv(got, 0)  # 8 elements
dist.destroy_process_group()
