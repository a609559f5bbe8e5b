/*
 * check_threads.c - concurrent collectives under MPI_THREAD_MULTIPLE.
 *
 * A plain, unmodified MPI program.  NTHREADS pthreads per rank, each with
 * its own duplicate of MPI_COMM_WORLD (created before the threads start),
 * run ITERS iterations of Allreduce (int SUM, counts 0..1000), Bcast
 * (rotating root), Allgather, Alltoall and Barrier on their own
 * communicator concurrently, checking every result against the value known
 * analytically from (rank, thread, iteration, index).  Each iteration also
 * calls MPI_Reduce and the reference PMPI_Reduce on the same communicator
 * and compares them.
 *
 * Environment: CHECK_THREADS_ITERS=<n> overrides the iteration count.
 * Output: failures are printed (first few), then rank 0 prints
 * "check_threads: N passed, M failed"; exit code 1 if M > 0.
 */
#include <mpi.h>

#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NTHREADS 4
#define MAXCOUNT 1000
#define MAX_PRINT 25

static int g_rank, g_size, g_iters = 200;
static pthread_mutex_t g_print_lock = PTHREAD_MUTEX_INITIALIZER;
static int g_printed;

typedef struct {
    int tid;
    MPI_Comm comm;
    long long pass, fail;
    int *sbuf, *rbuf, *rbuf2; /* scratch: up to g_size * MAXCOUNT ints */
} thr_t;

static void report(thr_t *t, int ok, const char *coll, int it, int count, const char *fmt, ...)
{
    if (ok) {
        t->pass++;
        return;
    }
    t->fail++;
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&g_print_lock);
    if (g_printed++ < MAX_PRINT)
        fprintf(stderr, "check_threads: FAIL rank=%d thread=%d iter=%d coll=%s count=%d: %s\n",
                g_rank, t->tid, it, coll, count, msg);
    pthread_mutex_unlock(&g_print_lock);
}

static void check_rc(thr_t *t, const char *coll, int it, int count, int rc)
{
    if (rc != MPI_SUCCESS)
        report(t, 0, coll, it, count, "returned error %d", rc);
}

/* deterministic small values: sums over ranks and indices never overflow */
static int val(int rank, int tid, int it, int i)
{
    return (rank + 1) * 1000003 % 4093 + tid * 17 + it * 5 + (i % 101) - 50;
}

/* Alltoall payload from src to dst */
static int a2a_val(int src, int dst, int tid, int it, int j)
{
    return src * 100000 + dst * 1000 + tid * 100 + (it % 50) + j;
}

static void *thread_main(void *arg)
{
    thr_t *t = arg;
    const int P = g_size, me = g_rank, tid = t->tid;
    static const int counts[] = {0, 1, 7, 1000, 33, 257};
    const int ncounts = (int)(sizeof counts / sizeof counts[0]);
    int *s = t->sbuf, *r = t->rbuf, *r2 = t->rbuf2;

    for (int it = 0; it < g_iters; it++) {
        int cnt = counts[(it + tid) % ncounts];
        int bad, rc;

        /* Allreduce, int SUM */
        for (int i = 0; i < cnt; i++)
            s[i] = val(me, tid, it, i);
        memset(r, 0xCD, (size_t)(cnt + 1) * sizeof(int));
        rc = MPI_Allreduce(s, r, cnt, MPI_INT, MPI_SUM, t->comm);
        check_rc(t, "MPI_Allreduce", it, cnt, rc);
        bad = -1;
        for (int i = 0; i < cnt && bad < 0; i++) {
            long long e = 0;
            for (int q = 0; q < P; q++)
                e += val(q, tid, it, i);
            if (r[i] != (int)e)
                bad = i;
        }
        report(t, bad < 0 && r[cnt] == (int)0xCDCDCDCD, "MPI_Allreduce", it, cnt,
               "wrong result at element %d", bad);

        /* Bcast, rotating root */
        int root = it % P;
        for (int i = 0; i < cnt; i++)
            r[i] = me == root ? val(root, tid, it, i) : -1;
        r[cnt] = 0x7777;
        rc = MPI_Bcast(r, cnt, MPI_INT, root, t->comm);
        check_rc(t, "MPI_Bcast", it, cnt, rc);
        bad = -1;
        for (int i = 0; i < cnt && bad < 0; i++)
            if (r[i] != val(root, tid, it, i))
                bad = i;
        report(t, bad < 0 && r[cnt] == 0x7777, "MPI_Bcast", it, cnt, "root %d: wrong value at element %d", root, bad);

        /* Allgather: small per-rank block */
        int k = (it + tid) % 5;
        for (int j = 0; j < k; j++)
            s[j] = val(me, tid, it, j);
        memset(r, 0xCD, (size_t)(P * k + 1) * sizeof(int));
        rc = MPI_Allgather(s, k, MPI_INT, r, k, MPI_INT, t->comm);
        check_rc(t, "MPI_Allgather", it, k, rc);
        bad = -1;
        for (int q = 0; q < P && bad < 0; q++)
            for (int j = 0; j < k; j++)
                if (r[q * k + j] != val(q, tid, it, j)) {
                    bad = q * k + j;
                    break;
                }
        report(t, bad < 0 && r[P * k] == (int)0xCDCDCDCD, "MPI_Allgather", it, k,
               "wrong value at element %d", bad);

        /* Alltoall */
        for (int d = 0; d < P; d++)
            for (int j = 0; j < k; j++)
                s[d * k + j] = a2a_val(me, d, tid, it, j);
        memset(r, 0xCD, (size_t)(P * k + 1) * sizeof(int));
        rc = MPI_Alltoall(s, k, MPI_INT, r, k, MPI_INT, t->comm);
        check_rc(t, "MPI_Alltoall", it, k, rc);
        bad = -1;
        for (int q = 0; q < P && bad < 0; q++)
            for (int j = 0; j < k; j++)
                if (r[q * k + j] != a2a_val(q, me, tid, it, j)) {
                    bad = q * k + j;
                    break;
                }
        report(t, bad < 0 && r[P * k] == (int)0xCDCDCDCD, "MPI_Alltoall", it, k,
               "wrong value at element %d", bad);

        /* Barrier */
        rc = MPI_Barrier(t->comm);
        report(t, rc == MPI_SUCCESS, "MPI_Barrier", it, 0, "returned error %d", rc);

        /* Reduce vs PMPI_Reduce (and the analytic value), int MAX */
        root = (it + 1) % P;
        for (int i = 0; i < cnt; i++)
            s[i] = val(me, tid, it, i) * ((me + i) % 3 - 1);
        memset(r, 0xCD, (size_t)(cnt + 1) * sizeof(int));
        memset(r2, 0xCD, (size_t)(cnt + 1) * sizeof(int));
        rc = PMPI_Reduce(s, r2, cnt, MPI_INT, MPI_MAX, root, t->comm);
        check_rc(t, "PMPI_Reduce", it, cnt, rc);
        rc = MPI_Reduce(s, r, cnt, MPI_INT, MPI_MAX, root, t->comm);
        check_rc(t, "MPI_Reduce", it, cnt, rc);
        bad = -1;
        if (me == root) {
            for (int i = 0; i < cnt && bad < 0; i++) {
                int e = val(0, tid, it, i) * (i % 3 - 1);
                for (int q = 1; q < P; q++) {
                    int v = val(q, tid, it, i) * ((q + i) % 3 - 1);
                    e = v > e ? v : e;
                }
                if (r[i] != r2[i] || r[i] != e)
                    bad = i;
            }
            if (r[cnt] != (int)0xCDCDCDCD)
                bad = cnt;
        }
        report(t, bad < 0, "MPI_Reduce", it, cnt, "root %d: wrong value at element %d", root, bad);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided = MPI_THREAD_SINGLE;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    if (provided < MPI_THREAD_MULTIPLE) {
        if (g_rank == 0)
            printf("check_threads: MPI_THREAD_MULTIPLE not provided (provided=%d), skipped\n",
                   provided);
        MPI_Finalize();
        return 0;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    const char *env = getenv("CHECK_THREADS_ITERS");
    if (env && atoi(env) > 0)
        g_iters = atoi(env);

    thr_t thr[NTHREADS];
    pthread_t tids[NTHREADS];
    size_t n = (size_t)g_size * MAXCOUNT + 1;
    for (int i = 0; i < NTHREADS; i++) {
        memset(&thr[i], 0, sizeof thr[i]);
        thr[i].tid = i;
        MPI_Comm_dup(MPI_COMM_WORLD, &thr[i].comm);
        thr[i].sbuf = calloc(n, sizeof(int));
        thr[i].rbuf = calloc(n, sizeof(int));
        thr[i].rbuf2 = calloc(n, sizeof(int));
        if (!thr[i].sbuf || !thr[i].rbuf || !thr[i].rbuf2) {
            fprintf(stderr, "check_threads: out of memory\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    for (int i = 0; i < NTHREADS; i++)
        if (pthread_create(&tids[i], NULL, thread_main, &thr[i]) != 0) {
            fprintf(stderr, "check_threads: pthread_create failed\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    long long mine[2] = {0, 0}, tot[2] = {0, 0};
    for (int i = 0; i < NTHREADS; i++) {
        pthread_join(tids[i], NULL);
        mine[0] += thr[i].pass;
        mine[1] += thr[i].fail;
        MPI_Comm_free(&thr[i].comm);
        free(thr[i].sbuf);
        free(thr[i].rbuf);
        free(thr[i].rbuf2);
    }
    PMPI_Allreduce(mine, tot, 2, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (g_rank == 0)
        printf("check_threads: %lld passed, %lld failed\n", tot[0], tot[1]);
    fflush(stdout);
    MPI_Finalize();
    return tot[1] ? 1 : 0;
}
