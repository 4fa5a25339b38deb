# Rank 0's Isend request is never waited for.
import numpy as np
from mpi4py import MPI

comm = MPI.COMM_WORLD
rank = comm.Get_rank()
buf = np.arange(8, dtype=np.int32)
if rank == 0:
    req = comm.Isend(buf, dest=1, tag=1)  # never waited
else:
    comm.Recv(buf, source=0, tag=1)
comm.Barrier()
