/* persistent-bugs (2 ranks): persistent requests misused. free: rank 1 frees its MPI_Recv_init + MPI_Start receive of 4 ints with MPI_Request_free while it is active (started, never completed by a Wait or Test; rank 0 sends after a barrier), so it can never know when the buffer holds the message (MPI-3.1 sec. 3.7.3 advises against it; freeing an active send is legitimate); the others: rank 0 sends 4 ints (eager) with MPI_Send_init + MPI_Start to rank 1 (a plain MPI_Recv): leak: it waits, but never frees the request before MPI_Finalize; nowait: it starts it and never completes it (nor frees it). Open MPI says nothing about any of them; the message arrives. nostart: rank 0 never starts it: an inactive persistent request sends nothing, and its MPI_Wait returns at once (MPI-3.1 sec. 3.9), so rank 1's MPI_Recv waits for ever while rank 0 waits in the barrier (plain mpirun hangs). Fix: persistent (set up once, Startall, Waitall, freed). */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	int rank, size, buf[4] = {1, 2, 3, 4};
	const char *mode = argc > 1 ? argv[1] : "free";
	MPI_Request req;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "persistent-bugs: needs 2 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	if (strcmp(mode, "free") == 0) {
		/* The send is posted after the barrier, so the receive is still
		 * active when its request is freed, however the ranks are timed. */
		if (rank == 1) {
			MPI_Recv_init(buf, 4, MPI_INT, 0, 7, MPI_COMM_WORLD, &req); // culprit: free-init
			MPI_Start(&req); // culprit: free-start
			MPI_Request_free(&req); // culprit: free
		}
		MPI_Barrier(MPI_COMM_WORLD); // culprit: free-barrier
		if (rank == 0) {
			MPI_Send(buf, 4, MPI_INT, 1, 7, MPI_COMM_WORLD); // culprit: free-send
			printf("persistent-bugs: ok, free\n");
		}
		MPI_Finalize();
		return 0;
	}
	if (rank == 1) {
		MPI_Recv(buf, 4, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // culprit: recv
		if (buf[3] != 4) {
			fprintf(stderr, "persistent-bugs: got %d, want 4\n", buf[3]);
			MPI_Finalize();
			return 1;
		}
		printf("persistent-bugs: ok\n");
	} else if (strcmp(mode, "leak") == 0) {
		MPI_Send_init(buf, 4, MPI_INT, 1, 7, MPI_COMM_WORLD, &req); // culprit: leak-init
		MPI_Start(&req); // culprit: leak-start
		MPI_Wait(&req, MPI_STATUS_IGNORE); // culprit: leak-wait
	} else if (strcmp(mode, "nostart") == 0) {
		MPI_Send_init(buf, 4, MPI_INT, 1, 7, MPI_COMM_WORLD, &req); // culprit: nostart-init
		MPI_Wait(&req, MPI_STATUS_IGNORE); // culprit: nostart-wait
		MPI_Request_free(&req);
	} else if (strcmp(mode, "nowait") == 0) {
		MPI_Send_init(buf, 4, MPI_INT, 1, 7, MPI_COMM_WORLD, &req); // culprit: nowait-init
		MPI_Start(&req); // culprit: nowait-start
	} else {
		fprintf(stderr, "persistent-bugs: unknown mode %s\n", mode);
	}
	MPI_Barrier(MPI_COMM_WORLD); // culprit: barrier
	MPI_Finalize();
	return 0;
}
