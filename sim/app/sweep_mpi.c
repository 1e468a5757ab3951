/* sweep_mpi.c - `dcsim sweep` across processes: starting MPI under a
 * launcher, sharing rank 0's start, sending finished points to rank 0 and
 * gathering them there. Built with or without DCSIM_HAVE_MPI; without it,
 * a run under a launcher is refused and the rest does nothing.
 *
 * Invariant: point i belongs to rank i % size; rank 0 is the only writer,
 * and a point's message carries every slot of it (status, constants,
 * replicas, error text), so rank 0 holds what it would have computed.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "sweep_internal.h"

#define TAG_POINT 1
#define TAG_DONE 2

typedef struct msg_head {
    uint32_t point;
    int32_t status;
    uint32_t replicas, err_len;
    double consts[N_CONSTS];
} msg_head;

/* How many processes a launcher started (mpirun, srun), or 0 when none. */
static long launched_size(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE",
                                       "SLURM_STEP_NUM_TASKS"};
    long most = 0;
    for (size_t k = 0; k < sizeof vars / sizeof *vars; k++) {
        const char *v = getenv(vars[k]);
        if (k == 3 && !getenv("SLURM_PROCID"))
            continue;
        long n = v ? strtol(v, NULL, 10) : 0;
        most = n > most ? n : most;
    }
    if (!most && (getenv("PMIX_RANK") || getenv("PMI_RANK")))
        most = 1;
    return most;
}

int sweep_mpi_start(sweep *sw)
{
    long launched = launched_size();
#ifdef DCSIM_HAVE_MPI
    sw->use_mpi = launched > 0;
    if (sw->use_mpi) { /* only here: no other command needs (or starts) MPI */
        int provided = 0;
        MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided);
        MPI_Comm_rank(MPI_COMM_WORLD, &sw->rank);
        MPI_Comm_size(MPI_COMM_WORLD, &sw->size);
        if (launched > 1 && sw->size == 1) {
            fprintf(stderr, "dcsim sweep: error: started as one of %ld processes, but MPI sees "
                    "only this one (srun without --mpi=pmix?); every process would write the "
                    "same file\n", launched);
            MPI_Finalize();
            return CLI_EXIT_INPUT;
        }
    }
#else
    (void)sw;
    if (launched > 1) {
        fprintf(stderr, "dcsim sweep: error: started as one of %ld processes (mpirun or srun), "
                "but this dcsim was built without MPI: every process would write the same "
                "file. Run one process (threads: OMP_NUM_THREADS), or rebuild with MPI "
                "(libopenmpi-dev; docs/scaling.md)\n", launched);
        return CLI_EXIT_INPUT;
    }
#endif
    return 0;
}

void sweep_mpi_end(sweep *sw, int *rc)
{
#ifdef DCSIM_HAVE_MPI
    if (sw->use_mpi) { /* every rank exits with rank 0's status */
        MPI_Bcast(rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
        MPI_Finalize();
    }
#else
    (void)sw;
    (void)rc;
#endif
}

void sweep_mpi_share_start(sweep *sw, int *rc)
{
#ifdef DCSIM_HAVE_MPI
    if (sw->size > 1) { /* collective: rank 0's verdict and the finished points */
        MPI_Bcast(rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (!*rc)
            MPI_Bcast(sw->status, (int)sw->n_points, MPI_SIGNED_CHAR, 0, MPI_COMM_WORLD);
        if (!*rc && sw->rank > 0)
            for (size_t i = 0; i < sw->n_points; i++)
                sw->n_done += sw->status[i] != ST_PENDING;
    }
#else
    (void)sw;
    (void)rc;
#endif
}

int sweep_mpi_bad_elsewhere(const sweep *sw, size_t bad)
{
#ifdef DCSIM_HAVE_MPI
    if (sw->size > 1) { /* collective: the lowest bad point of all, reported by its owner */
        unsigned long long mine = bad, all = bad;
        MPI_Allreduce(&mine, &all, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
        if (all < sw->n_points && all != mine)
            return 1;
    }
#else
    (void)sw;
    (void)bad;
#endif
    return 0;
}

#ifdef DCSIM_HAVE_MPI
static void send_point(sweep *sw, size_t i)
{
    size_t elen = sw->errtext[i] ? strlen(sw->errtext[i]) : 0;
    size_t n = sizeof(msg_head) + (size_t)sw->replicas * sizeof(sweep_rep) + elen;
    unsigned char *buf = malloc(n);
    if (!buf)
        MPI_Abort(MPI_COMM_WORLD, EXIT_FAILURE);
    msg_head h = {(uint32_t)i, sw->status[i], sw->replicas, (uint32_t)elen, {0}};
    memcpy(h.consts, sw->consts + i * N_CONSTS, sizeof h.consts);
    memcpy(buf, &h, sizeof h);
    memcpy(buf + sizeof h, sw->reps + i * sw->replicas, (size_t)sw->replicas * sizeof(sweep_rep));
    if (elen)
        memcpy(buf + n - elen, sw->errtext[i], elen);
    sw->send_bufs[sw->n_sent] = buf;
    MPI_Isend(buf, (int)n, MPI_BYTE, 0, TAG_POINT, MPI_COMM_WORLD, &sw->send_reqs[sw->n_sent]);
    sw->n_sent++;
}

static void receive(sweep *sw, const MPI_Status *st)
{
    int n = 0;
    MPI_Get_count(st, MPI_BYTE, &n);
    unsigned char *buf = malloc(n > 0 ? (size_t)n : 1);
    if (!buf)
        MPI_Abort(MPI_COMM_WORLD, EXIT_FAILURE);
    MPI_Recv(buf, n, MPI_BYTE, st->MPI_SOURCE, st->MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (st->MPI_TAG == TAG_DONE) {
        sw->ranks_finished++;
    } else {
        msg_head h;
        memcpy(&h, buf, sizeof h);
        size_t i = h.point;
        memcpy(sw->consts + i * N_CONSTS, h.consts, sizeof h.consts);
        memcpy(sw->reps + i * sw->replicas, buf + sizeof h,
               (size_t)sw->replicas * sizeof(sweep_rep));
        if (h.err_len) {
            free(sw->errtext[i]);
            sw->errtext[i] = malloc(h.err_len + 1);
            if (sw->errtext[i]) {
                memcpy(sw->errtext[i], buf + (size_t)n - h.err_len, h.err_len);
                sw->errtext[i][h.err_len] = '\0';
            }
        }
        sw->status[i] = (signed char)h.status;
        sw->n_done++;
    }
    free(buf);
}
#endif

void sweep_mpi_poll(sweep *sw)
{
#ifdef DCSIM_HAVE_MPI
    if (sw->size == 1)
        return;
    if (sw->rank > 0) {
        while (sw->n_sent < sw->n_queued)
            send_point(sw, sw->send_queue[sw->n_sent]);
        return;
    }
    for (;;) {
        int flag = 0;
        MPI_Status st;
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
        if (!flag)
            break;
        receive(sw, &st);
    }
#else
    (void)sw;
#endif
}

void sweep_mpi_finish(sweep *sw)
{
#ifdef DCSIM_HAVE_MPI
    if (sw->size == 1)
        return;
    if (sw->rank > 0) {
        sweep_mpi_poll(sw);
        MPI_Send(NULL, 0, MPI_BYTE, 0, TAG_DONE, MPI_COMM_WORLD);
        MPI_Waitall((int)sw->n_sent, sw->send_reqs, MPI_STATUSES_IGNORE);
        return;
    }
    while (sw->ranks_finished < sw->size - 1) {
        int flag = 0;
        MPI_Status st;
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
        if (flag) {
            receive(sw, &st);
        } else {
            struct timespec nap = {0, 2000000};
            nanosleep(&nap, NULL);
        }
        sweep_maybe_write(sw, 0);
        sweep_progress_show(sw, 0);
    }
#else
    (void)sw;
#endif
}
