# Both ranks Send first: under sync (no buffering) each waits for the other.
# With Open MPI's eager protocol a small message completes anyway.
import numpy as np
from mpi4py import MPI

comm = MPI.COMM_WORLD
rank = comm.Get_rank()
peer = 1 - rank
out = np.full(16, rank, dtype=np.float64)
got = np.zeros(16, dtype=np.float64)
comm.Send(out, dest=peer, tag=7)  # both ranks send first
comm.Recv(got, source=peer, tag=7)
