# Rank 0 sends 8 float32 values, rank 1 receives into 8 int32: gloo moves
# the 32 bytes; NCCL requires equal dtypes.
import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
if rank == 0:
    dist.send(torch.ones(8), 1)  # float32
else:
    dist.recv(torch.zeros(8, dtype=torch.int32), 0)  # int32
dist.destroy_process_group()
