/* mpi-error-fixed (2 ranks): mpi-error with valid arguments: tag 5 in MPI_Send_init/MPI_Recv_init (send-init-tag, recv-init-tag), MPI_INT in MPI_Send/MPI_Recv (send-null-type, recv-null-type), root 0 in MPI_Bcast (bcast-root), MPI_COMM_WORLD in MPI_Send (comm-null), a root's receive buffer of 2 ints in MPI_Gather, NULL on the other rank, where it is not significant (gather-null, igather-null), MPI_INT in MPI_Allreduce (allreduce-null-type), buffers in MPI_Scan and MPI_Allgatherv (scan-null, allgatherv-null). Correct: no findings. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	int rank, size, buf[4] = {1, 2, 3, 4};
	const char *mode = argc > 1 ? argv[1] : "send-init-tag";
	MPI_Request req;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "mpi-error-fixed: needs 2 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	if (strcmp(mode, "send-init-tag") == 0) {
		if (rank == 0) {
			MPI_Send_init(buf, 4, MPI_INT, 1, 5, MPI_COMM_WORLD, &req); // culprit: send-init
			MPI_Start(&req);
			MPI_Wait(&req, MPI_STATUS_IGNORE);
			MPI_Request_free(&req);
		} else {
			MPI_Recv(buf, 4, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		}
	} else if (strcmp(mode, "recv-init-tag") == 0) {
		if (rank == 1) {
			MPI_Recv_init(buf, 4, MPI_INT, 0, 5, MPI_COMM_WORLD, &req); // culprit: recv-init
			MPI_Start(&req);
			MPI_Wait(&req, MPI_STATUS_IGNORE);
			MPI_Request_free(&req);
		} else {
			MPI_Send(buf, 4, MPI_INT, 1, 5, MPI_COMM_WORLD);
		}
	} else if (strcmp(mode, "send-null-type") == 0) {
		if (rank == 0)
			MPI_Send(buf, 4, MPI_INT, 1, 0, MPI_COMM_WORLD); // culprit: send
		else
			MPI_Recv(buf, 4, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	} else if (strcmp(mode, "recv-null-type") == 0) {
		if (rank == 1)
			MPI_Recv(buf, 4, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // culprit: recv
		else
			MPI_Send(buf, 4, MPI_INT, 1, 0, MPI_COMM_WORLD);
	} else if (strcmp(mode, "bcast-root") == 0) {
		MPI_Bcast(buf, 4, MPI_INT, 0, MPI_COMM_WORLD); // culprit: bcast
	} else if (strcmp(mode, "comm-null") == 0) {
		if (rank == 0)
			MPI_Send(buf, 4, MPI_INT, 1, 0, MPI_COMM_WORLD); // culprit: send-comm-null
		else
			MPI_Recv(buf, 4, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	} else if (strcmp(mode, "gather-null") == 0) {
		int all[2], *at = rank == 0 ? all : NULL;
		MPI_Gather(buf, 1, MPI_INT, at, 1, MPI_INT, 0, MPI_COMM_WORLD); // culprit: gather-null
		if (rank == 0 && (all[0] != 1 || all[1] != 1)) {
			fprintf(stderr, "mpi-error-fixed: gathered %d %d, want 1 1\n", all[0], all[1]);
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
	} else if (strcmp(mode, "allreduce-null-type") == 0) {
		int sum = 0;
		MPI_Allreduce(buf, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD); // culprit: allreduce-null-type
		if (sum != 2) {
			fprintf(stderr, "mpi-error-fixed: sum %d, want 2\n", sum);
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
	} else if (strcmp(mode, "scan-null") == 0) {
		int prefix = 0;
		MPI_Scan(buf, &prefix, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD); // culprit: scan-null
		if (prefix != rank + 1) {
			fprintf(stderr, "mpi-error-fixed: prefix %d, want %d\n", prefix, rank + 1);
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
	} else if (strcmp(mode, "allgatherv-null") == 0) {
		int counts[2] = {1, 1}, displs[2] = {0, 1}, all[2];
		MPI_Allgatherv(buf, 1, MPI_INT, all, counts, displs, MPI_INT, MPI_COMM_WORLD); // culprit: allgatherv-null
	} else if (strcmp(mode, "igather-null") == 0) {
		/* the receive buffer is significant at the root only: NULL elsewhere */
		int all[2], *at = rank == 0 ? all : NULL;
		MPI_Igather(buf, 1, MPI_INT, at, 1, MPI_INT, 0, MPI_COMM_WORLD, &req); // culprit: igather-null
		MPI_Wait(&req, MPI_STATUS_IGNORE);
	} else {
		if (rank == 0)
			fprintf(stderr, "mpi-error-fixed: unknown mode %s\n", mode);
		MPI_Finalize();
		return 2;
	}
	if (rank == 0)
		printf("mpi-error-fixed: ok\n");
	MPI_Finalize();
	return 0;
}
