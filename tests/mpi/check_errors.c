/*
 * check_errors.c - erroneous collective calls must be reported through the
 * communicator's error handler, as MPI itself does.
 *
 * A plain, unmodified MPI program.  Every erroneous call is made with the
 * (possibly intercepted) MPI_X function and with the reference PMPI_X
 * function; both must fail.
 *   Part 1: MPI_ERRORS_RETURN on a dup of MPI_COMM_WORLD: MPI_Allreduce with
 *           count -1 and with MPI_DATATYPE_NULL, MPI_Bcast with root = size
 *           must return an error code; so must MPI_Allreduce on
 *           MPI_COMM_NULL (MPI_ERRORS_RETURN set on MPI_COMM_WORLD, and on
 *           MPI_COMM_SELF, where MPI-4 raises errors without a communicator).
 *   Part 2: the same calls with a user error handler that counts its
 *           invocations: it must be invoked exactly as for PMPI (once, on the
 *           same communicator, with the returned error code).
 *   Finally the dup must still work (Allreduce vs PMPI_Allreduce, Barrier).
 * Output: rank 0 prints the error classes and "check_errors: N passed,
 * M failed"; exit code 1 if M > 0.
 */
#include <mpi.h>

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int g_rank, g_size;
static long long g_pass, g_fail;

/* user error handler bookkeeping */
static int h_calls;
static MPI_Comm h_comm;
static int h_code;

static void counting_handler(MPI_Comm *comm, int *code, ...)
{
    h_calls++;
    h_comm = *comm;
    h_code = *code;
}

__attribute__((format(printf, 3, 4)))
static void result(int ok, const char *what, const char *fmt, ...)
{
    if (ok) {
        g_pass++;
        return;
    }
    g_fail++;
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "check_errors: FAIL rank=%d %s: %s\n", g_rank, what, msg);
}

static const char *class_name(int code, char *buf, int n)
{
    int cls = code, len = 0;
    if (code != MPI_SUCCESS)
        PMPI_Error_class(code, &cls);
    char s[MPI_MAX_ERROR_STRING];
    PMPI_Error_string(cls, s, &len);
    snprintf(buf, (size_t)n, "class %d (%s)", cls, s);
    return buf;
}

static int err_class(int code)
{
    int cls = code;
    if (code != MPI_SUCCESS)
        PMPI_Error_class(code, &cls);
    return cls;
}

enum { E_COUNT, E_TYPE, E_ROOT, E_COMMNULL, NCASES };
static const char *case_names[NCASES] = {
    "MPI_Allreduce(count=-1)",
    "MPI_Allreduce(datatype=MPI_DATATYPE_NULL)",
    "MPI_Bcast(root=size)",
    "MPI_Allreduce(comm=MPI_COMM_NULL)",
};

/* issues erroneous call `which`, through PMPI (ref=1) or MPI (ref=0) */
static int call(int which, int ref, MPI_Comm comm)
{
    int in[4] = {1, 2, 3, 4}, out[4] = {0, 0, 0, 0};
    switch (which) {
    case E_COUNT:
        return ref ? PMPI_Allreduce(in, out, -1, MPI_INT, MPI_SUM, comm)
                   : MPI_Allreduce(in, out, -1, MPI_INT, MPI_SUM, comm);
    case E_TYPE:
        return ref ? PMPI_Allreduce(in, out, 4, MPI_DATATYPE_NULL, MPI_SUM, comm)
                   : MPI_Allreduce(in, out, 4, MPI_DATATYPE_NULL, MPI_SUM, comm);
    case E_ROOT:
        return ref ? PMPI_Bcast(in, 4, MPI_INT, g_size, comm)
                   : MPI_Bcast(in, 4, MPI_INT, g_size, comm);
    default:
        return ref ? PMPI_Allreduce(in, out, 4, MPI_INT, MPI_SUM, MPI_COMM_NULL)
                   : MPI_Allreduce(in, out, 4, MPI_INT, MPI_SUM, MPI_COMM_NULL);
    }
}

static const char *comm_label(MPI_Comm c, MPI_Comm dup)
{
    if (c == MPI_COMM_NULL)
        return "(none)";
    if (c == MPI_COMM_WORLD)
        return "MPI_COMM_WORLD";
    if (c == MPI_COMM_SELF)
        return "MPI_COMM_SELF";
    if (c == dup)
        return "dup";
    return "other";
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);

    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);

    /* Part 1: MPI_ERRORS_RETURN */
    MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    for (int which = 0; which < NCASES; which++) {
        int rcP = call(which, 1, dup);
        int rcM = call(which, 0, dup);
        char b1[MPI_MAX_ERROR_STRING + 32], b2[MPI_MAX_ERROR_STRING + 32];
        if (g_rank == 0)
            printf("check_errors: %s: MPI returned %s, PMPI returned %s%s\n", case_names[which],
                   class_name(rcM, b1, sizeof b1), class_name(rcP, b2, sizeof b2),
                   err_class(rcM) == err_class(rcP) ? "" : " (note: classes differ)");
        result(rcP != MPI_SUCCESS, case_names[which], "PMPI returned %d (expected an error)", rcP);
        result(rcM != MPI_SUCCESS, case_names[which], "MPI returned %d (expected an error)", rcM);
    }

    /* Part 2: a user error handler must be invoked exactly as for PMPI */
    MPI_Errhandler eh;
    MPI_Comm_create_errhandler(counting_handler, &eh);
    MPI_Comm_set_errhandler(dup, eh);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, eh);
    for (int which = 0; which < NCASES; which++) {
        h_calls = 0;
        h_comm = MPI_COMM_NULL;
        int rcP = call(which, 1, dup);
        int callsP = h_calls, codeP = h_code;
        MPI_Comm commP = h_comm;
        h_calls = 0;
        h_comm = MPI_COMM_NULL;
        h_code = MPI_SUCCESS;
        int rcM = call(which, 0, dup);
        int callsM = h_calls, codeM = h_code;
        MPI_Comm commM = h_comm;
        char what[160];
        snprintf(what, sizeof what, "%s with user error handler", case_names[which]);
        if (g_rank == 0)
            printf("check_errors: %s: MPI invoked handler %d time(s) on %s, PMPI %d time(s) on %s\n",
                   what, callsM, comm_label(commM, dup), callsP, comm_label(commP, dup));
        /* sanity of the reference itself */
        result(callsP == 1 && rcP != MPI_SUCCESS && err_class(codeP) == err_class(rcP), what,
               "PMPI: handler invoked %d time(s), returned %d", callsP, rcP);
        result(rcM != MPI_SUCCESS, what, "MPI returned %d (expected an error)", rcM);
        result(callsM == callsP, what, "MPI invoked the handler %d time(s), PMPI %d time(s)",
               callsM, callsP);
        result(callsM == 0 || commM == commP, what, "handler invoked on %d, expected %d (1 world, 2 self, 3 dup)",
               commM == MPI_COMM_WORLD ? 1 : commM == MPI_COMM_SELF ? 2 : commM == dup ? 3 : 0,
               commP == MPI_COMM_WORLD ? 1 : commP == MPI_COMM_SELF ? 2 : commP == dup ? 3 : 0);
        result(callsM == 0 || err_class(codeM) == err_class(rcM), what,
               "handler got error class %d, call returned class %d", err_class(codeM),
               err_class(rcM));
    }
    MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Errhandler_free(&eh);

    /* the communicator must still work after the failed calls */
    int in[3] = {g_rank, 2 * g_rank + 1, -g_rank}, outM[3] = {0, 0, 0}, outP[3] = {0, 0, 0};
    int rcM = MPI_Allreduce(in, outM, 3, MPI_INT, MPI_SUM, dup);
    int rcP = PMPI_Allreduce(in, outP, 3, MPI_INT, MPI_SUM, dup);
    result(rcM == MPI_SUCCESS && rcP == MPI_SUCCESS && memcmp(outM, outP, sizeof outM) == 0,
           "MPI_Allreduce after errors", "rc %d / %d or results differ", rcM, rcP);
    rcM = MPI_Barrier(dup);
    result(rcM == MPI_SUCCESS, "MPI_Barrier after errors", "returned %d", rcM);

    MPI_Comm_free(&dup);
    long long mine[2] = {g_pass, g_fail}, tot[2] = {0, 0};
    PMPI_Allreduce(mine, tot, 2, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (g_rank == 0)
        printf("check_errors: %lld passed, %lld failed\n", tot[0], tot[1]);
    fflush(stdout);
    MPI_Finalize();
    return tot[1] ? 1 : 0;
}
