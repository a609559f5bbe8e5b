/*
 * check_colls.c - integration test for MPI collective interposition.
 *
 * A plain, unmodified MPI program.  Every check calls the (possibly
 * intercepted) MPI_X function and the reference PMPI_X function with
 * identical fresh pseudo-random inputs and compares the results exactly,
 * plus: send buffers must stay unchanged, canary bytes around every buffer
 * must stay intact, and both calls must return MPI_SUCCESS.
 *
 * Covered: MPI_Allreduce, MPI_Reduce, MPI_Reduce_scatter_block, MPI_Bcast,
 * MPI_Gather, MPI_Scatter, MPI_Allgather, MPI_Alltoall, MPI_Barrier,
 * MPI_Allgatherv, MPI_Alltoallv, MPI_Gatherv, MPI_Scatterv,
 * MPI_Reduce_scatter, MPI_Scan, MPI_Exscan, on world / self / dup / splits /
 * reversed order / size-1 comms and an intercommunicator (Allreduce, Bcast
 * and Barrier only); all predefined (type, op) pairs the standard allows;
 * user-defined commutative and non-commutative ops; derived (contiguous,
 * vector, resized) datatypes and differing send/recv datatypes with equal
 * type signatures, also differing from rank to rank in the vector variants;
 * per-rank counts (zero on some or all ranks, large) and displacements in any
 * order with gaps that must stay untouched; MPI_IN_PLACE (on some ranks only
 * for Scan and Exscan); NULL or poisoned insignificant buffers, counts and
 * displacements; every root.
 *
 * Environment: CHECK_SEED=<integer> overrides the base seed.
 * Arguments: --only-comm NAME runs the checks on that communicator case only
 * (e.g. "split(without-rank0)"), so that the statistics of the run are its own.
 * Output: failing checks are printed (first few per rank), then rank 0
 * prints "check_colls: N passed, M failed"; exit code 1 if M > 0.
 */
#include <mpi.h>

#include <complex.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Global state and check bookkeeping                                       */
/* ------------------------------------------------------------------------ */

static int g_wrank, g_wsize;
static uint64_t g_seed = 0x5eed1234ULL;
static uint64_t g_check;          /* index of the current check (per rank) */
static uint64_t g_ccheck;         /* index within the communicator case (same on its ranks) */
static long long g_pass, g_fail;  /* per-rank tallies */
static int g_printed;             /* failure lines printed by this rank */
#define MAX_PRINT 25
#define MAX_PRINT_PER_CHECK 3

typedef struct {
    const char *coll, *type, *op, *comm, *var;
    long count;
    int root;    /* -1: not applicable */
    int inplace;
} ctx_t;

static ctx_t g_cur;
static bool g_ok;
static int g_cur_fails;

static void begin_check(ctx_t c)
{
    g_cur = c;
    g_ok = true;
    g_cur_fails = 0;
    g_check++;
    g_ccheck++;
}

static void fail(const char *fmt, ...)
{
    g_ok = false;
    g_cur_fails++;
    if (g_printed >= MAX_PRINT || g_cur_fails > MAX_PRINT_PER_CHECK)
        return;
    g_printed++;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr,
            "check_colls: FAIL rank=%d check=%" PRIu64 " seed=%" PRIu64
            " coll=%s comm=%s type=%s op=%s count=%ld root=%d inplace=%d"
            " variant=%s: %s\n",
            g_wrank, g_check, g_seed, g_cur.coll, g_cur.comm,
            g_cur.type ? g_cur.type : "-", g_cur.op ? g_cur.op : "-",
            g_cur.count, g_cur.root, g_cur.inplace,
            g_cur.var ? g_cur.var : "-", msg);
}

static void end_check(void)
{
    if (g_ok)
        g_pass++;
    else
        g_fail++;
}

static void check_rc(const char *who, int rc)
{
    if (rc != MPI_SUCCESS) {
        char s[MPI_MAX_ERROR_STRING];
        int len = 0;
        PMPI_Error_string(rc, s, &len);
        fail("%s returned %d (%s)", who, rc, s);
    }
}

/* ------------------------------------------------------------------------ */
/* Deterministic PRNG (splitmix64), seeded per (seed, world rank, check)    */
/* ------------------------------------------------------------------------ */

typedef struct { uint64_t s; } rng_t;

static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static uint64_t rng_next(rng_t *r)
{
    r->s += 0x9e3779b97f4a7c15ULL;
    return mix64(r->s);
}

static rng_t rng_for_check(void)
{
    rng_t r;
    r.s = mix64(g_seed ^ mix64(((uint64_t)g_wrank << 40) ^ g_check));
    return r;
}

static int64_t rng_int(rng_t *r, int64_t lo, int64_t hi)
{
    return lo + (int64_t)(rng_next(r) % (uint64_t)(hi - lo + 1));
}

static void rng_bytes(rng_t *r, unsigned char *p, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t v = rng_next(r);
        memcpy(p + i, &v, 8);
    }
    if (i < n) {
        uint64_t v = rng_next(r);
        memcpy(p + i, &v, n - i);
    }
}

/* ------------------------------------------------------------------------ */
/* Guarded buffers: [canary GUARD bytes][body len bytes][canary GUARD bytes] */
/* ------------------------------------------------------------------------ */

#define GUARD 64
#define PREFILL 0xCD

typedef struct { unsigned char *base; size_t len; } gbuf_t;

static unsigned char canary(size_t i) { return (unsigned char)(0xA5 ^ (i * 37u)); }

static void *gb_ptr(const gbuf_t *b) { return b->base + GUARD; }

static void gb_alloc(gbuf_t *b, size_t len, int fill)
{
    b->len = len;
    b->base = malloc(len + 2 * GUARD);
    if (!b->base) {
        fprintf(stderr, "check_colls: out of memory\n");
        PMPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (size_t i = 0; i < GUARD; i++) {
        b->base[i] = canary(i);
        b->base[GUARD + len + i] = canary(i + GUARD);
    }
    memset(b->base + GUARD, fill, len);
}

static void gb_clone(gbuf_t *dst, const gbuf_t *src)
{
    gb_alloc(dst, src->len, 0);
    memcpy(dst->base, src->base, src->len + 2 * GUARD);
}

static void gb_free(gbuf_t *b)
{
    free(b->base);
    b->base = NULL;
}

/* Reports a failure if the canaries around the body were modified. */
static void gb_check_guards(const gbuf_t *b, const char *what)
{
    if (!b->base)
        return;
    for (size_t i = 0; i < GUARD; i++) {
        if (b->base[i] != canary(i)) {
            fail("%s: canary before buffer overwritten at offset -%zu", what,
                 GUARD - i);
            return;
        }
        if (b->base[GUARD + b->len + i] != canary(i + GUARD)) {
            fail("%s: canary after buffer (len %zu) overwritten at +%zu", what,
                 b->len, i);
            return;
        }
    }
}

/* ------------------------------------------------------------------------ */
/* Element kinds: generation, comparison, printing                          */
/* ------------------------------------------------------------------------ */

enum kind {
    K_I8, K_I16, K_I32, K_I64, K_U8, K_U16, K_U32, K_U64, K_BOOL, K_BYTE,
    K_F32, K_F64, K_LD, K_CF32, K_CF64, K_CLD,
    K_FLOAT_INT, K_DOUBLE_INT, K_LONG_INT, K_2INT, K_SHORT_INT, K_LD_INT
};

typedef struct { float v; int i; } float_int_t;
typedef struct { double v; int i; } double_int_t;
typedef struct { long v; int i; } long_int_t;
typedef struct { int v; int i; } int2_t;
typedef struct { short v; int i; } short_int_t;
typedef struct { long double v; int i; } ldouble_int_t;

#define SKIND(T) (sizeof(T) == 1 ? K_I8 : sizeof(T) == 2 ? K_I16 : sizeof(T) == 4 ? K_I32 : K_I64)
#define UKIND(T) (sizeof(T) == 1 ? K_U8 : sizeof(T) == 2 ? K_U16 : sizeof(T) == 4 ? K_U32 : K_U64)

static size_t kind_size(int k)
{
    switch (k) {
    case K_I8: case K_U8: case K_BYTE: return 1;
    case K_BOOL: return sizeof(bool);
    case K_I16: case K_U16: return 2;
    case K_I32: case K_U32: return 4;
    case K_I64: case K_U64: return 8;
    case K_F32: return sizeof(float);
    case K_F64: return sizeof(double);
    case K_LD: return sizeof(long double);
    case K_CF32: return sizeof(float _Complex);
    case K_CF64: return sizeof(double _Complex);
    case K_CLD: return sizeof(long double _Complex);
    case K_FLOAT_INT: return sizeof(float_int_t);
    case K_DOUBLE_INT: return sizeof(double_int_t);
    case K_LONG_INT: return sizeof(long_int_t);
    case K_2INT: return sizeof(int2_t);
    case K_SHORT_INT: return sizeof(short_int_t);
    case K_LD_INT: return sizeof(ldouble_int_t);
    }
    return 0;
}

/* Generation modes: value distributions that keep every result exact,
 * overflow-free and independent of the reduction order. */
enum mode { M_ANY, M_SUM, M_PROD, M_MINMAX, M_LOGIC, M_BAND, M_BOR, M_BXOR, M_LOC };

static uint64_t gen_bits(rng_t *r, int m)
{
    uint64_t a = rng_next(r);
    if (m == M_BAND)
        return a | rng_next(r); /* mostly ones: AND stays interesting */
    if (m == M_BOR)
        return a & rng_next(r); /* mostly zeros: OR stays interesting */
    return a;
}

/* PROD values: 2 only while 2^nprocs fits into int8 (nprocs <= 6) */
static int prod_hi(void) { return g_wsize <= 6 ? 2 : 1; }

static int64_t gen_signed(rng_t *r, int m)
{
    static const int64_t prodv[] = {-1, 1, 2};
    static const int64_t logv[] = {0, 0, 1, 2, -1, 5};
    switch (m) {
    case M_SUM: return rng_int(r, -3, 3);
    case M_PROD: return prodv[rng_int(r, 0, prod_hi())];
    case M_MINMAX: return rng_int(r, -5, 5);
    case M_LOGIC: return logv[rng_int(r, 0, 5)];
    case M_LOC: return rng_int(r, -2, 2);
    default: return (int64_t)gen_bits(r, m);
    }
}

static uint64_t gen_unsigned(rng_t *r, int m)
{
    static const uint64_t logv[] = {0, 0, 1, 2, 7, 100};
    switch (m) {
    case M_SUM: return (uint64_t)rng_int(r, 0, 6);
    case M_PROD: return (uint64_t)rng_int(r, 1, prod_hi());
    case M_MINMAX: return (uint64_t)rng_int(r, 0, 10);
    case M_LOGIC: return logv[rng_int(r, 0, 5)];
    case M_LOC: return (uint64_t)rng_int(r, 0, 4);
    default: return gen_bits(r, m);
    }
}

/* floating values: small integers (or halves/eighths), all exact */
static double gen_fval(rng_t *r, int m)
{
    static const double prodv[] = {-1.0, 1.0, 2.0};
    switch (m) {
    case M_SUM: return (double)rng_int(r, -3, 3);
    case M_PROD: return prodv[rng_int(r, 0, prod_hi())];
    case M_MINMAX: return (double)rng_int(r, -10, 10) / 2.0;
    case M_LOC: return (double)rng_int(r, -2, 2);
    default: return (double)rng_int(r, -4000, 4000) / 8.0;
    }
}

static double gen_cval(rng_t *r, int m)
{
    if (m == M_PROD)
        return (double)rng_int(r, -1, 1); /* |z| <= sqrt(2) */
    return gen_fval(r, m == M_ANY ? M_ANY : M_SUM);
}

static int gen_index(rng_t *r, int m)
{
    return m == M_LOC ? (int)rng_int(r, 0, 3) : (int)(int32_t)rng_next(r);
}

static void store_int(int k, void *p, uint64_t v)
{
    switch (k) {
    case K_I8: *(int8_t *)p = (int8_t)v; break;
    case K_I16: *(int16_t *)p = (int16_t)v; break;
    case K_I32: *(int32_t *)p = (int32_t)v; break;
    case K_I64: *(int64_t *)p = (int64_t)v; break;
    case K_U8: *(uint8_t *)p = (uint8_t)v; break;
    case K_U16: *(uint16_t *)p = (uint16_t)v; break;
    case K_U32: *(uint32_t *)p = (uint32_t)v; break;
    case K_U64: *(uint64_t *)p = v; break;
    default: break;
    }
}

/* Writes one element of kind k at p (padding bytes are left untouched). */
static void gen_elem(int k, int m, rng_t *r, void *p)
{
    switch (k) {
    case K_I8: case K_I16: case K_I32: case K_I64:
        store_int(k, p, (uint64_t)gen_signed(r, m));
        break;
    case K_U8: case K_U16: case K_U32: case K_U64:
        store_int(k, p, gen_unsigned(r, m));
        break;
    case K_BYTE: *(unsigned char *)p = (unsigned char)gen_bits(r, m); break;
    case K_BOOL: *(bool *)p = rng_int(r, 0, 2) != 0; break;
    case K_F32: *(float *)p = (float)gen_fval(r, m); break;
    case K_F64: *(double *)p = gen_fval(r, m); break;
    case K_LD: *(long double *)p = gen_fval(r, m); break;
    case K_CF32: {
        float re = (float)gen_cval(r, m), im = (float)gen_cval(r, m);
        *(float _Complex *)p = CMPLXF(re, im);
        break;
    }
    case K_CF64: {
        double re = gen_cval(r, m), im = gen_cval(r, m);
        *(double _Complex *)p = CMPLX(re, im);
        break;
    }
    case K_CLD: {
        long double re = gen_cval(r, m), im = gen_cval(r, m);
        *(long double _Complex *)p = CMPLXL(re, im);
        break;
    }
    case K_FLOAT_INT:
        ((float_int_t *)p)->v = (float)gen_fval(r, m);
        ((float_int_t *)p)->i = gen_index(r, m);
        break;
    case K_DOUBLE_INT:
        ((double_int_t *)p)->v = gen_fval(r, m);
        ((double_int_t *)p)->i = gen_index(r, m);
        break;
    case K_LONG_INT:
        ((long_int_t *)p)->v = (long)gen_signed(r, m);
        ((long_int_t *)p)->i = gen_index(r, m);
        break;
    case K_2INT:
        ((int2_t *)p)->v = (int)gen_signed(r, m);
        ((int2_t *)p)->i = gen_index(r, m);
        break;
    case K_SHORT_INT:
        ((short_int_t *)p)->v = (short)gen_signed(r, m);
        ((short_int_t *)p)->i = gen_index(r, m);
        break;
    case K_LD_INT:
        ((ldouble_int_t *)p)->v = gen_fval(r, m);
        ((ldouble_int_t *)p)->i = gen_index(r, m);
        break;
    }
}

/* exact value equality (NaN equals NaN); ignores padding bytes */
static bool feq(long double a, long double b) { return a == b || (a != a && b != b); }

static bool elem_eq(int k, const void *a, const void *b)
{
    switch (k) {
    case K_F32: return feq(*(const float *)a, *(const float *)b);
    case K_F64: return feq(*(const double *)a, *(const double *)b);
    case K_LD: return feq(*(const long double *)a, *(const long double *)b);
    case K_CF32: {
        float _Complex x = *(const float _Complex *)a, y = *(const float _Complex *)b;
        return feq(crealf(x), crealf(y)) && feq(cimagf(x), cimagf(y));
    }
    case K_CF64: {
        double _Complex x = *(const double _Complex *)a, y = *(const double _Complex *)b;
        return feq(creal(x), creal(y)) && feq(cimag(x), cimag(y));
    }
    case K_CLD: {
        long double _Complex x = *(const long double _Complex *)a;
        long double _Complex y = *(const long double _Complex *)b;
        return feq(creall(x), creall(y)) && feq(cimagl(x), cimagl(y));
    }
#define PAIR_EQ(T) \
    return feq(((const T *)a)->v, ((const T *)b)->v) && ((const T *)a)->i == ((const T *)b)->i
    case K_FLOAT_INT: PAIR_EQ(float_int_t);
    case K_DOUBLE_INT: PAIR_EQ(double_int_t);
    case K_2INT: PAIR_EQ(int2_t);
    case K_SHORT_INT: PAIR_EQ(short_int_t);
    case K_LD_INT: PAIR_EQ(ldouble_int_t);
#undef PAIR_EQ
    case K_LONG_INT:
        return ((const long_int_t *)a)->v == ((const long_int_t *)b)->v &&
               ((const long_int_t *)a)->i == ((const long_int_t *)b)->i;
    default: return memcmp(a, b, kind_size(k)) == 0;
    }
}

static void fmt_elem(int k, const void *p, char *buf, size_t n)
{
    switch (k) {
    case K_I8: snprintf(buf, n, "%d", *(const int8_t *)p); break;
    case K_I16: snprintf(buf, n, "%d", *(const int16_t *)p); break;
    case K_I32: snprintf(buf, n, "%" PRId32, *(const int32_t *)p); break;
    case K_I64: snprintf(buf, n, "%" PRId64, *(const int64_t *)p); break;
    case K_U8: case K_BYTE: case K_BOOL:
        snprintf(buf, n, "0x%02x", *(const uint8_t *)p); break;
    case K_U16: snprintf(buf, n, "%u", *(const uint16_t *)p); break;
    case K_U32: snprintf(buf, n, "%" PRIu32, *(const uint32_t *)p); break;
    case K_U64: snprintf(buf, n, "%" PRIu64, *(const uint64_t *)p); break;
    case K_F32: snprintf(buf, n, "%.9g", *(const float *)p); break;
    case K_F64: snprintf(buf, n, "%.17g", *(const double *)p); break;
    case K_LD: snprintf(buf, n, "%.21Lg", *(const long double *)p); break;
    case K_CF32: {
        float _Complex z = *(const float _Complex *)p;
        snprintf(buf, n, "(%.9g,%.9g)", crealf(z), cimagf(z));
        break;
    }
    case K_CF64: {
        double _Complex z = *(const double _Complex *)p;
        snprintf(buf, n, "(%.17g,%.17g)", creal(z), cimag(z));
        break;
    }
    case K_CLD: {
        long double _Complex z = *(const long double _Complex *)p;
        snprintf(buf, n, "(%.21Lg,%.21Lg)", creall(z), cimagl(z));
        break;
    }
    case K_FLOAT_INT: snprintf(buf, n, "{%.9g,%d}", ((const float_int_t *)p)->v, ((const float_int_t *)p)->i); break;
    case K_DOUBLE_INT: snprintf(buf, n, "{%.17g,%d}", ((const double_int_t *)p)->v, ((const double_int_t *)p)->i); break;
    case K_LONG_INT: snprintf(buf, n, "{%ld,%d}", ((const long_int_t *)p)->v, ((const long_int_t *)p)->i); break;
    case K_2INT: snprintf(buf, n, "{%d,%d}", ((const int2_t *)p)->v, ((const int2_t *)p)->i); break;
    case K_SHORT_INT: snprintf(buf, n, "{%d,%d}", ((const short_int_t *)p)->v, ((const short_int_t *)p)->i); break;
    case K_LD_INT: snprintf(buf, n, "{%.21Lg,%d}", ((const ldouble_int_t *)p)->v, ((const ldouble_int_t *)p)->i); break;
    }
}

/* ------------------------------------------------------------------------ */
/* Type table                                                               */
/* ------------------------------------------------------------------------ */

/* categories from MPI-3.1 section 5.9.2 */
#define C_INT   0x01u /* C integer */
#define C_MULTI 0x02u /* multi-language: MPI_AINT, MPI_OFFSET, MPI_COUNT */
#define C_FLT   0x04u /* floating point */
#define C_CPLX  0x08u /* complex */
#define C_LOG   0x10u /* logical (MPI_C_BOOL) */
#define C_BYTE  0x20u /* byte */
#define C_PAIR  0x40u /* MINLOC/MAXLOC pair types */
#define C_USER  0x80u /* derived types used only with user ops */

typedef struct {
    const char *name;
    MPI_Datatype dt;
    int kind;    /* kind of each sub-element */
    int nsub;    /* sub-elements per element (1 for predefined types) */
    unsigned cat;
    bool core;   /* also used on the secondary communicators */
    size_t ext;  /* element extent in bytes (filled in at init) */
} tinfo_t;

static MPI_Datatype g_contig3, g_vec, g_resized, g_mat_dt, g_d2_dt;

#define T(name, kind, cat, core) {#name, name, kind, 1, cat, core, 0}
static tinfo_t g_types[] = {
    T(MPI_SIGNED_CHAR, K_I8, C_INT, true),
    T(MPI_UNSIGNED_CHAR, K_U8, C_INT, false),
    T(MPI_SHORT, SKIND(short), C_INT, false),
    T(MPI_UNSIGNED_SHORT, UKIND(unsigned short), C_INT, true),
    T(MPI_INT, SKIND(int), C_INT, true),
    T(MPI_UNSIGNED, UKIND(unsigned), C_INT, false),
    T(MPI_LONG, SKIND(long), C_INT, false),
    T(MPI_UNSIGNED_LONG, UKIND(unsigned long), C_INT, true),
    T(MPI_LONG_LONG, SKIND(long long), C_INT, false),
    T(MPI_UNSIGNED_LONG_LONG, UKIND(unsigned long long), C_INT, false),
    T(MPI_INT8_T, K_I8, C_INT, false),
    T(MPI_INT16_T, K_I16, C_INT, false),
    T(MPI_INT32_T, K_I32, C_INT, false),
    T(MPI_INT64_T, K_I64, C_INT, true),
    T(MPI_UINT8_T, K_U8, C_INT, false),
    T(MPI_UINT16_T, K_U16, C_INT, false),
    T(MPI_UINT32_T, K_U32, C_INT, false),
    T(MPI_UINT64_T, K_U64, C_INT, false),
    T(MPI_AINT, SKIND(MPI_Aint), C_MULTI, true),
    T(MPI_OFFSET, SKIND(MPI_Offset), C_MULTI, false),
    T(MPI_COUNT, SKIND(MPI_Count), C_MULTI, false),
    T(MPI_FLOAT, K_F32, C_FLT, true),
    T(MPI_DOUBLE, K_F64, C_FLT, true),
    T(MPI_LONG_DOUBLE, K_LD, C_FLT, true),
    T(MPI_C_FLOAT_COMPLEX, K_CF32, C_CPLX, false),
    T(MPI_C_DOUBLE_COMPLEX, K_CF64, C_CPLX, true),
    T(MPI_C_LONG_DOUBLE_COMPLEX, K_CLD, C_CPLX, false),
    T(MPI_C_BOOL, K_BOOL, C_LOG, true),
    T(MPI_BYTE, K_BYTE, C_BYTE, true),
    T(MPI_FLOAT_INT, K_FLOAT_INT, C_PAIR, false),
    T(MPI_DOUBLE_INT, K_DOUBLE_INT, C_PAIR, true),
    T(MPI_LONG_INT, K_LONG_INT, C_PAIR, false),
    T(MPI_2INT, K_2INT, C_PAIR, true),
    T(MPI_SHORT_INT, K_SHORT_INT, C_PAIR, false),
    T(MPI_LONG_DOUBLE_INT, K_LD_INT, C_PAIR, true),
    /* derived types for user-defined ops (dt filled in at init) */
    {"mat2x2(contig4xMPI_UINT32_T)", MPI_DATATYPE_NULL, K_U32, 4, C_USER, true, 0},
    {"pair2d(contig2xMPI_DOUBLE)", MPI_DATATYPE_NULL, K_F64, 2, C_USER, true, 0},
};
#undef T
#define NTYPES ((int)(sizeof g_types / sizeof g_types[0]))

static const tinfo_t *find_type(const char *name)
{
    for (int i = 0; i < NTYPES; i++)
        if (strcmp(g_types[i].name, name) == 0)
            return &g_types[i];
    fprintf(stderr, "check_colls: internal error: no type %s\n", name);
    PMPI_Abort(MPI_COMM_WORLD, 2);
    return NULL;
}

static void gen_elems(const tinfo_t *t, int m, rng_t *r, void *p, size_t n)
{
    size_t sub = kind_size(t->kind);
    for (size_t i = 0; i < n; i++)
        for (int j = 0; j < t->nsub; j++)
            gen_elem(t->kind, m, r, (char *)p + i * t->ext + (size_t)j * sub);
}

/* Compares n elements; reports the first mismatch. */
static void check_elems(const char *what, const tinfo_t *t, const void *got,
                        const void *exp, size_t n)
{
    size_t sub = kind_size(t->kind);
    for (size_t i = 0; i < n; i++) {
        for (int j = 0; j < t->nsub; j++) {
            size_t off = i * t->ext + (size_t)j * sub;
            const char *g = (const char *)got + off, *e = (const char *)exp + off;
            if (!elem_eq(t->kind, g, e)) {
                char gs[96], es[96];
                fmt_elem(t->kind, g, gs, sizeof gs);
                fmt_elem(t->kind, e, es, sizeof es);
                fail("%s: element %zu.%d differs: MPI %s, PMPI %s", what, i, j, gs, es);
                return;
            }
        }
    }
}

static void check_bytes(const char *what, const void *got, const void *exp, size_t len)
{
    const unsigned char *g = got, *e = exp;
    for (size_t i = 0; i < len; i++) {
        if (g[i] != e[i]) {
            fail("%s: byte %zu of %zu differs: got 0x%02x, expected 0x%02x", what,
                 i, len, g[i], e[i]);
            return;
        }
    }
}

/* ------------------------------------------------------------------------ */
/* Op table and user-defined ops                                            */
/* ------------------------------------------------------------------------ */

typedef struct {
    const char *name;
    MPI_Op op;
    unsigned cats; /* type categories the op is defined for */
    int mode;      /* data generation mode */
} opinfo_t;

static opinfo_t g_ops[] = {
    {"MPI_SUM", MPI_SUM, C_INT | C_MULTI | C_FLT | C_CPLX, M_SUM},
    {"MPI_PROD", MPI_PROD, C_INT | C_MULTI | C_FLT | C_CPLX, M_PROD},
    {"MPI_MIN", MPI_MIN, C_INT | C_MULTI | C_FLT, M_MINMAX},
    {"MPI_MAX", MPI_MAX, C_INT | C_MULTI | C_FLT, M_MINMAX},
    {"MPI_LAND", MPI_LAND, C_INT | C_LOG, M_LOGIC},
    {"MPI_LOR", MPI_LOR, C_INT | C_LOG, M_LOGIC},
    {"MPI_LXOR", MPI_LXOR, C_INT | C_LOG, M_LOGIC},
    {"MPI_BAND", MPI_BAND, C_INT | C_MULTI | C_BYTE, M_BAND},
    {"MPI_BOR", MPI_BOR, C_INT | C_MULTI | C_BYTE, M_BOR},
    {"MPI_BXOR", MPI_BXOR, C_INT | C_MULTI | C_BYTE, M_BXOR},
    {"MPI_MINLOC", MPI_MINLOC, C_PAIR, M_LOC},
    {"MPI_MAXLOC", MPI_MAXLOC, C_PAIR, M_LOC},
};
#define NOPS ((int)(sizeof g_ops / sizeof g_ops[0]))

/* user ops: record calls with an unexpected datatype handle */
static long g_userop_bad;

/* commutative: elementwise wrapping sum of ints */
static void op_usum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    if (*dt != MPI_INT)
        g_userop_bad++;
    const int *a = in;
    int *b = inout;
    for (int i = 0; i < *len; i++)
        b[i] = (int)((unsigned)a[i] + (unsigned)b[i]);
}

/* non-commutative: 2x2 matrix product mod 2^32, inout = in * inout */
static void op_matmul(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    if (*dt != g_mat_dt)
        g_userop_bad++;
    const uint32_t *a = in;
    uint32_t *b = inout;
    for (int i = 0; i < *len; i++, a += 4, b += 4) {
        uint32_t r0 = a[0] * b[0] + a[1] * b[2], r1 = a[0] * b[1] + a[1] * b[3];
        uint32_t r2 = a[2] * b[0] + a[3] * b[2], r3 = a[2] * b[1] + a[3] * b[3];
        b[0] = r0; b[1] = r1; b[2] = r2; b[3] = r3;
    }
}

/* commutative on a derived type: (x0 + y0, max(x1, y1)) */
static void op_pair2d(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    if (*dt != g_d2_dt)
        g_userop_bad++;
    const double *a = in;
    double *b = inout;
    for (int i = 0; i < *len; i++, a += 2, b += 2) {
        b[0] = a[0] + b[0];
        b[1] = a[1] > b[1] ? a[1] : b[1];
    }
}

static opinfo_t g_uops[3] = {
    {"user_sum(commutative)", MPI_OP_NULL, C_USER, M_SUM},
    {"user_matmul(non-commutative)", MPI_OP_NULL, C_USER, M_ANY},
    {"user_pair2d(commutative)", MPI_OP_NULL, C_USER, M_SUM},
};

typedef struct { const tinfo_t *t; const opinfo_t *o; } redcase_t;
static redcase_t g_red[NTYPES * NOPS + 4];
static int g_nred;

/* ------------------------------------------------------------------------ */
/* Transfer cases for data-movement collectives                             */
/* ------------------------------------------------------------------------ */

/* One side of a transfer: per "unit" of data, per_unit items of dt are
 * sent/received; all sides of one case have the same type signature per unit.
 * elem != NULL: predefined type compared elementwise by value; otherwise the
 * whole buffer span (including gaps of non-contiguous types) bytewise. */
typedef struct {
    const char *name;
    MPI_Datatype dt;
    int per_unit;
    size_t ext;
    const tinfo_t *elem;
} side_t;

typedef struct { const char *name; side_t s, r; } xcase_t;

static xcase_t g_x[16];
static int g_nx;
static const xcase_t *g_xbyte;

static size_t side_bytes(const side_t *sd, size_t units) { return units * (size_t)sd->per_unit * sd->ext; }

static void gen_side(const side_t *sd, rng_t *r, void *p, size_t units)
{
    if (sd->elem)
        gen_elems(sd->elem, M_ANY, r, p, units * (size_t)sd->per_unit);
    else
        rng_bytes(r, p, side_bytes(sd, units));
}

static void check_side(const char *what, const side_t *sd, const void *got,
                       const void *exp, size_t units)
{
    if (sd->elem)
        check_elems(what, sd->elem, got, exp, units * (size_t)sd->per_unit);
    else
        check_bytes(what, got, exp, side_bytes(sd, units));
}

/* ------------------------------------------------------------------------ */
/* Communicators                                                            */
/* ------------------------------------------------------------------------ */

typedef struct {
    const char *name;
    MPI_Comm comm;
    int rank, size;     /* local rank and size */
    int rsize;          /* remote size (intercommunicator) */
    bool inter;
    bool full;          /* full type x op matrix */
    bool large;         /* run the large-count cases */
} commcase_t;

/* ------------------------------------------------------------------------ */
/* Reductions: Allreduce, Reduce, Reduce_scatter_block                       */
/* ------------------------------------------------------------------------ */

enum { RED_ALLREDUCE, RED_REDUCE, RED_RSB };
static const char *red_names[] = {"MPI_Allreduce", "MPI_Reduce", "MPI_Reduce_scatter_block"};

/* nullrecv: non-root ranks of Reduce pass recvbuf = NULL */
static void check_reduce(const commcase_t *cc, int coll, const redcase_t *rc,
                         int count, int root, bool inplace, bool nullrecv)
{
    const tinfo_t *t = rc->t;
    const opinfo_t *o = rc->o;
    bool significant = coll != RED_REDUCE || cc->rank == root;
    bool use_inplace = inplace && significant;
    ctx_t c = {red_names[coll], t->name, o->name, cc->name,
               nullrecv ? "nonroot-recvbuf-NULL" : NULL, count, root, use_inplace};
    begin_check(c);

    size_t nin = coll == RED_RSB ? (size_t)count * (size_t)cc->size : (size_t)count;
    size_t nout = (size_t)count;
    size_t ext = t->ext;
    rng_t r = rng_for_check();

    gbuf_t src, sM = {0}, sP = {0}, rM = {0}, rP = {0};
    gb_alloc(&src, nin * ext, 0);
    gen_elems(t, o->mode, &r, gb_ptr(&src), nin);

    if (use_inplace) {
        gb_clone(&rM, &src);
        gb_clone(&rP, &src);
    } else {
        gb_clone(&sM, &src);
        gb_clone(&sP, &src);
        if (significant || !nullrecv) {
            gb_alloc(&rM, nout * ext, PREFILL);
            gb_alloc(&rP, nout * ext, PREFILL);
        }
    }
    void *sbM = use_inplace ? MPI_IN_PLACE : gb_ptr(&sM);
    void *sbP = use_inplace ? MPI_IN_PLACE : gb_ptr(&sP);
    void *rbM = rM.base ? gb_ptr(&rM) : NULL;
    void *rbP = rP.base ? gb_ptr(&rP) : NULL;

    /* Open MPI 4.1.4 computes MIN/MAX of MPI_OFFSET as if it were unsigned (MPI_Offset is a
       signed type): the reference uses MPI_LONG_LONG, the same signed 64-bit integer. */
    MPI_Datatype ref = t->dt;
    if (t->dt == MPI_OFFSET && (o->op == MPI_MIN || o->op == MPI_MAX))
        ref = MPI_LONG_LONG;

    long bad0 = g_userop_bad;
    int rcP, rcM;
    switch (coll) {
    case RED_ALLREDUCE:
        rcP = PMPI_Allreduce(sbP, rbP, count, ref, o->op, cc->comm);
        rcM = MPI_Allreduce(sbM, rbM, count, t->dt, o->op, cc->comm);
        break;
    case RED_REDUCE:
        rcP = PMPI_Reduce(sbP, rbP, count, ref, o->op, root, cc->comm);
        rcM = MPI_Reduce(sbM, rbM, count, t->dt, o->op, root, cc->comm);
        break;
    default:
        rcP = PMPI_Reduce_scatter_block(sbP, rbP, count, ref, o->op, cc->comm);
        rcM = MPI_Reduce_scatter_block(sbM, rbM, count, t->dt, o->op, cc->comm);
        break;
    }
    check_rc("PMPI", rcP);
    check_rc("MPI", rcM);
    if (g_userop_bad != bad0)
        fail("user op function called with a datatype other than the one passed");

    gb_check_guards(&sM, "sendbuf");
    gb_check_guards(&rM, "recvbuf");
    gb_check_guards(&sP, "PMPI sendbuf");
    gb_check_guards(&rP, "PMPI recvbuf");
    if (!use_inplace)
        check_bytes("sendbuf modified", gb_ptr(&sM), gb_ptr(&src), src.len);
    if (significant)
        check_elems("result", t, gb_ptr(&rM), gb_ptr(&rP), nout);

    gb_free(&src); gb_free(&sM); gb_free(&sP); gb_free(&rM); gb_free(&rP);
    end_check();
}

static void run_reductions(const commcase_t *cc)
{
    const int counts[] = {0, 1, 7, 3 * cc->size + 1};
    const int rsb_counts[] = {0, 1, 7};
    for (int i = 0; i < g_nred; i++) {
        const redcase_t *rc = &g_red[i];
        if (!cc->full && !rc->t->core)
            continue;
        for (int ci = 0; ci < 4; ci++)
            for (int ip = 0; ip < 2; ip++)
                check_reduce(cc, RED_ALLREDUCE, rc, counts[ci], -1, ip, false);
        for (int root = 0; root < cc->size; root++)
            for (int ci = 0; ci < 4; ci++)
                for (int v = 0; v < 2; v++) /* v=1: in-place at root, NULL recvbuf elsewhere */
                    check_reduce(cc, RED_REDUCE, rc, counts[ci], root, v, v);
        for (int ci = 0; ci < 3; ci++)
            for (int ip = 0; ip < 2; ip++)
                check_reduce(cc, RED_RSB, rc, rsb_counts[ci], -1, ip, false);
    }
}

/* ------------------------------------------------------------------------ */
/* Data movement: Bcast, Gather, Scatter, Allgather, Alltoall               */
/* ------------------------------------------------------------------------ */

/* Bcast: the root (or MPI_ROOT in an intercomm) sends with x->s, receivers
 * use x->r; MPI_PROC_NULL ranks of an intercomm keep their buffer. */
static void check_bcast(const commcase_t *cc, const xcase_t *x, int n, int root)
{
    ctx_t c = {"MPI_Bcast", x->name, NULL, cc->name, NULL, n, root, 0};
    begin_check(c);
    bool sender = cc->inter ? root == MPI_ROOT : cc->rank == root;
    bool idle = cc->inter && root == MPI_PROC_NULL;
    const side_t *sd = (sender || idle) ? &x->s : &x->r;
    int cnt = n * sd->per_unit;
    rng_t r = rng_for_check();

    gbuf_t init, bM, bP;
    gb_alloc(&init, side_bytes(sd, (size_t)n), PREFILL);
    if (sender || idle)
        gen_side(sd, &r, gb_ptr(&init), (size_t)n);
    gb_clone(&bM, &init);
    gb_clone(&bP, &init);

    check_rc("PMPI", PMPI_Bcast(gb_ptr(&bP), cnt, sd->dt, root, cc->comm));
    check_rc("MPI", MPI_Bcast(gb_ptr(&bM), cnt, sd->dt, root, cc->comm));

    gb_check_guards(&bM, "buffer");
    gb_check_guards(&bP, "PMPI buffer");
    if (sender || idle)
        check_bytes(sender ? "root buffer modified" : "MPI_PROC_NULL buffer modified",
                    gb_ptr(&bM), gb_ptr(&init), init.len);
    else
        check_side("received data", sd, gb_ptr(&bM), gb_ptr(&bP), (size_t)n);
    gb_free(&init); gb_free(&bM); gb_free(&bP);
    end_check();
}

/* variant 1: root passes MPI_IN_PLACE as sendbuf (sendcount -1, sendtype
 * MPI_DATATYPE_NULL: not significant), non-roots pass recvbuf = NULL, recvcount -1 and
 * MPI_DATATYPE_NULL (not significant either) */
static void check_gather(const commcase_t *cc, const xcase_t *x, int n, int root, int variant)
{
    bool isroot = cc->rank == root;
    bool inplace = variant && isroot;
    ctx_t c = {"MPI_Gather", x->name, NULL, cc->name,
               variant ? "nonroot-recvbuf-NULL" : NULL, n, root, inplace};
    begin_check(c);
    size_t rblock = side_bytes(&x->r, (size_t)n);
    rng_t r = rng_for_check();

    gbuf_t src = {0}, sM = {0}, sP = {0}, rinit = {0}, rM = {0}, rP = {0};
    if (!inplace) {
        gb_alloc(&src, side_bytes(&x->s, (size_t)n), PREFILL);
        gen_side(&x->s, &r, gb_ptr(&src), (size_t)n);
        gb_clone(&sM, &src);
        gb_clone(&sP, &src);
    }
    if (isroot || !variant) {
        gb_alloc(&rinit, rblock * (size_t)cc->size, PREFILL);
        if (inplace)
            gen_side(&x->r, &r, (char *)gb_ptr(&rinit) + rblock * (size_t)root, (size_t)n);
        gb_clone(&rM, &rinit);
        gb_clone(&rP, &rinit);
    }
    int scount = inplace ? -1 : n * x->s.per_unit;
    MPI_Datatype stype = inplace ? MPI_DATATYPE_NULL : x->s.dt;
    bool rsig = isroot || !variant;
    int rcount = rsig ? n * x->r.per_unit : -1;
    MPI_Datatype rtype = rsig ? x->r.dt : MPI_DATATYPE_NULL;

    check_rc("PMPI", PMPI_Gather(inplace ? MPI_IN_PLACE : gb_ptr(&sP), scount, stype,
                                 rP.base ? gb_ptr(&rP) : NULL, rcount, rtype, root, cc->comm));
    check_rc("MPI", MPI_Gather(inplace ? MPI_IN_PLACE : gb_ptr(&sM), scount, stype,
                               rM.base ? gb_ptr(&rM) : NULL, rcount, rtype, root, cc->comm));

    gb_check_guards(&sM, "sendbuf");
    gb_check_guards(&rM, "recvbuf");
    gb_check_guards(&sP, "PMPI sendbuf");
    gb_check_guards(&rP, "PMPI recvbuf");
    if (!inplace)
        check_bytes("sendbuf modified", gb_ptr(&sM), gb_ptr(&src), src.len);
    if (isroot)
        check_side("gathered data", &x->r, gb_ptr(&rM), gb_ptr(&rP), (size_t)n * (size_t)cc->size);
    gb_free(&src); gb_free(&sM); gb_free(&sP);
    gb_free(&rinit); gb_free(&rM); gb_free(&rP);
    end_check();
}

/* variant 1: root passes MPI_IN_PLACE as recvbuf (recvcount -1, recvtype
 * MPI_DATATYPE_NULL: not significant), non-roots pass sendbuf = NULL, sendcount -1 and
 * MPI_DATATYPE_NULL (not significant either) */
static void check_scatter(const commcase_t *cc, const xcase_t *x, int n, int root, int variant)
{
    bool isroot = cc->rank == root;
    bool inplace = variant && isroot;
    ctx_t c = {"MPI_Scatter", x->name, NULL, cc->name,
               variant ? "nonroot-sendbuf-NULL" : NULL, n, root, inplace};
    begin_check(c);
    rng_t r = rng_for_check();

    gbuf_t src = {0}, sM = {0}, sP = {0}, rM = {0}, rP = {0};
    if (isroot || !variant) {
        /* non-root sendbuf is insignificant but must not be touched */
        size_t units = isroot ? (size_t)n * (size_t)cc->size : (size_t)n;
        gb_alloc(&src, side_bytes(&x->s, units), PREFILL);
        gen_side(&x->s, &r, gb_ptr(&src), units);
        gb_clone(&sM, &src);
        gb_clone(&sP, &src);
    }
    if (!inplace) {
        gb_alloc(&rM, side_bytes(&x->r, (size_t)n), PREFILL);
        gb_alloc(&rP, side_bytes(&x->r, (size_t)n), PREFILL);
    }
    bool ssig = isroot || !variant;
    int scount = ssig ? n * x->s.per_unit : -1;
    MPI_Datatype stype = ssig ? x->s.dt : MPI_DATATYPE_NULL;
    int rcount = inplace ? -1 : n * x->r.per_unit;
    MPI_Datatype rtype = inplace ? MPI_DATATYPE_NULL : x->r.dt;

    check_rc("PMPI", PMPI_Scatter(sP.base ? gb_ptr(&sP) : NULL, scount, stype,
                                  inplace ? MPI_IN_PLACE : gb_ptr(&rP), rcount, rtype, root, cc->comm));
    check_rc("MPI", MPI_Scatter(sM.base ? gb_ptr(&sM) : NULL, scount, stype,
                                inplace ? MPI_IN_PLACE : gb_ptr(&rM), rcount, rtype, root, cc->comm));

    gb_check_guards(&sM, "sendbuf");
    gb_check_guards(&rM, "recvbuf");
    gb_check_guards(&sP, "PMPI sendbuf");
    gb_check_guards(&rP, "PMPI recvbuf");
    if (src.base)
        check_bytes("sendbuf modified", gb_ptr(&sM), gb_ptr(&src), src.len);
    if (!inplace)
        check_side("scattered data", &x->r, gb_ptr(&rM), gb_ptr(&rP), (size_t)n);
    gb_free(&src); gb_free(&sM); gb_free(&sP); gb_free(&rM); gb_free(&rP);
    end_check();
}

/* Allgather (alltoall = false) or Alltoall (alltoall = true); in-place:
 * sendcount 0, sendtype MPI_DATATYPE_NULL (ignored per the standard). */
static void check_allx(const commcase_t *cc, const xcase_t *x, int n, bool inplace, bool alltoall)
{
    ctx_t c = {alltoall ? "MPI_Alltoall" : "MPI_Allgather", x->name, NULL, cc->name,
               NULL, n, -1, inplace};
    begin_check(c);
    size_t P = (size_t)cc->size;
    size_t rblock = side_bytes(&x->r, (size_t)n);
    rng_t r = rng_for_check();

    gbuf_t src = {0}, sM = {0}, sP = {0}, rinit, rM, rP;
    gb_alloc(&rinit, rblock * P, PREFILL);
    if (inplace) {
        if (alltoall)
            gen_side(&x->r, &r, gb_ptr(&rinit), (size_t)n * P);
        else
            gen_side(&x->r, &r, (char *)gb_ptr(&rinit) + rblock * (size_t)cc->rank, (size_t)n);
    } else {
        size_t units = alltoall ? (size_t)n * P : (size_t)n;
        gb_alloc(&src, side_bytes(&x->s, units), PREFILL);
        gen_side(&x->s, &r, gb_ptr(&src), units);
        gb_clone(&sM, &src);
        gb_clone(&sP, &src);
    }
    gb_clone(&rM, &rinit);
    gb_clone(&rP, &rinit);
    int scount = inplace ? 0 : n * x->s.per_unit;
    MPI_Datatype stype = inplace ? MPI_DATATYPE_NULL : x->s.dt;
    int rcount = n * x->r.per_unit;
    void *sbP = inplace ? MPI_IN_PLACE : gb_ptr(&sP);
    void *sbM = inplace ? MPI_IN_PLACE : gb_ptr(&sM);

    if (alltoall) {
        check_rc("PMPI", PMPI_Alltoall(sbP, scount, stype, gb_ptr(&rP), rcount, x->r.dt, cc->comm));
        check_rc("MPI", MPI_Alltoall(sbM, scount, stype, gb_ptr(&rM), rcount, x->r.dt, cc->comm));
    } else {
        check_rc("PMPI", PMPI_Allgather(sbP, scount, stype, gb_ptr(&rP), rcount, x->r.dt, cc->comm));
        check_rc("MPI", MPI_Allgather(sbM, scount, stype, gb_ptr(&rM), rcount, x->r.dt, cc->comm));
    }

    gb_check_guards(&sM, "sendbuf");
    gb_check_guards(&rM, "recvbuf");
    gb_check_guards(&sP, "PMPI sendbuf");
    gb_check_guards(&rP, "PMPI recvbuf");
    if (!inplace)
        check_bytes("sendbuf modified", gb_ptr(&sM), gb_ptr(&src), src.len);
    check_side("received data", &x->r, gb_ptr(&rM), gb_ptr(&rP), (size_t)n * P);
    gb_free(&src); gb_free(&sM); gb_free(&sP);
    gb_free(&rinit); gb_free(&rM); gb_free(&rP);
    end_check();
}

static void run_moves(const commcase_t *cc)
{
    const int counts[] = {0, 1, 7, 3 * cc->size + 1};
    for (int xi = 0; xi < g_nx; xi++) {
        const xcase_t *x = &g_x[xi];
        for (int ci = 0; ci < 4; ci++) {
            int n = counts[ci];
            for (int root = 0; root < cc->size; root++) {
                check_bcast(cc, x, n, root);
                for (int v = 0; v < 2; v++) {
                    check_gather(cc, x, n, root, v);
                    check_scatter(cc, x, n, root, v);
                }
            }
            for (int ip = 0; ip < 2; ip++) {
                check_allx(cc, x, n, ip, false);
                check_allx(cc, x, n, ip, true);
            }
        }
    }
}

/* a few multi-MiB cases on representative types */
static void run_large(const commcase_t *cc)
{
    const int N = 1 << 19; /* 4 MiB of doubles, 2 MiB of ints */
    int P = cc->size;
    redcase_t dsum = {find_type("MPI_DOUBLE"), &g_ops[0]};
    redcase_t isum = {find_type("MPI_INT"), &g_ops[0]};
    for (int ip = 0; ip < 2; ip++) {
        check_reduce(cc, RED_ALLREDUCE, &dsum, N, -1, ip, false);
        check_reduce(cc, RED_ALLREDUCE, &isum, N, -1, ip, false);
        check_reduce(cc, RED_REDUCE, &dsum, N, ip ? P - 1 : 0, ip, ip);
        check_reduce(cc, RED_RSB, &isum, N / P, -1, ip, false);
    }
    const xcase_t *xb = g_xbyte;
    int nb = (1 << 22) / P; /* per-rank block: total 4 MiB per buffer */
    check_bcast(cc, xb, 1 << 22, P - 1);
    check_gather(cc, xb, nb, 0, 0);
    check_gather(cc, xb, nb, P - 1, 1);
    check_scatter(cc, xb, nb, 0, 1);
    check_scatter(cc, xb, nb, P - 1, 0);
    /* 4 KiB blocks: where the built-in rules take the shm gather and scatter at 2 ranks */
    check_gather(cc, xb, 4 << 10, 0, 0);
    check_scatter(cc, xb, 4 << 10, P - 1, 1);
    /* 16 KiB blocks: where the built-in rules take the hierarchical gather and scatter */
    check_gather(cc, xb, 16 << 10, P - 1, 0);
    check_gather(cc, xb, 16 << 10, 0, 1);
    check_scatter(cc, xb, 16 << 10, 0, 0);
    check_scatter(cc, xb, 16 << 10, P - 1, 1);
    for (int ip = 0; ip < 2; ip++) {
        check_allx(cc, xb, nb, ip, false);
        check_allx(cc, xb, nb, ip, true);
    }
}

/* ------------------------------------------------------------------------ */
/* Vector variants: Allgatherv, Alltoallv, Gatherv, Scatterv                */
/* ------------------------------------------------------------------------ */

/* Counts are in units (xcase_t): the same on every rank of the communicator,
 * so they come from rng_shared(); displacements are each rank's own (from
 * rng_for_check()), in items of that rank's datatype, blocks in rank order,
 * reversed or shuffled, with gaps of whole items between them.  Receive
 * buffers start as identical random garbage; the gaps must keep it. */
enum { VC_ZERO, VC_SOMEZERO, VC_ONES, VC_RAMP, VC_RANDOM, VC_LARGE };
enum { VD_PACKED, VD_REVERSE, VD_SHUFFLED };

typedef struct { const char *name; int counts, displs; } vpat_t;

static const vpat_t g_vpat[] = {
    {"counts=zero-all/displs=packed", VC_ZERO, VD_PACKED},
    {"counts=some-zero,odd/displs=reversed+gaps", VC_SOMEZERO, VD_REVERSE},
    {"counts=ones/displs=shuffled+gaps", VC_ONES, VD_SHUFFLED},
    {"counts=ramp,rank0-zero/displs=packed", VC_RAMP, VD_PACKED},
    {"counts=random/displs=shuffled+gaps", VC_RANDOM, VD_SHUFFLED},
    {"counts=large,one-zero/displs=reversed+gaps", VC_LARGE, VD_REVERSE},
};
#define NVPAT_SMALL 5
#define VPAT_LARGE 5

/* the int family: equal type signature per unit (12 MPI_INT) */
static side_t g_fam[4];
static const char *g_mixed_name = "mixed-per-rank(MPI_INT,contig3,vector,resized)";

/* Shared PRNG: seeded per (seed, communicator case, check within it), the
 * same on every rank of the communicator (they run the same checks). */
static rng_t rng_shared(void)
{
    uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a of the communicator case's name */
    for (const char *p = g_cur.comm; *p; p++)
        h = (h ^ (unsigned char)*p) * 0x100000001b3ULL;
    rng_t r;
    r.s = mix64(g_seed ^ mix64(h ^ (g_ccheck << 20)));
    return r;
}

static int *xints(size_t n)
{
    int *p = calloc(n ? n : 1, sizeof(int));
    if (!p) {
        fprintf(stderr, "check_colls: out of memory\n");
        PMPI_Abort(MPI_COMM_WORLD, 2);
    }
    return p;
}

/* units of block idx (idx: a rank, or i * P + j for a pair) */
static int vunit(rng_t *sh, int mode, int idx, int lavg)
{
    switch (mode) {
    case VC_ZERO: return 0;
    case VC_SOMEZERO:
        return idx == 1 || rng_int(sh, 0, 2) == 0 ? 0 : 2 * (int)rng_int(sh, 0, 4) + 1;
    case VC_ONES: return 1;
    case VC_RAMP: return idx % 5;
    case VC_RANDOM: return (int)rng_int(sh, 0, 13);
    default: return idx == 1 ? 0 : (int)rng_int(sh, lavg / 2, lavg + lavg / 2);
    }
}

/* Picks this rank's send and receive sides: the case's own, or (x == NULL)
 * a member of the int family that differs from rank to rank.  samesize: the
 * send side's datatype has the size of the receive side's (vector and
 * resized: 4 ints; Open MPI 4.1.4's tuned Allgatherv chooses its algorithm
 * from sendtype size x sum(recvcounts), so ranks whose products differ take
 * different algorithms and hang). */
static void pick_sides(const xcase_t *x, rng_t *sh, int rank, bool samesize,
                       const side_t **sd, const side_t **rd)
{
    if (x) {
        *sd = &x->s;
        *rd = &x->r;
        return;
    }
    static const int partner[4] = {0, 1, 3, 2}; /* MPI_INT, contig3, vector <-> resized */
    int a = (int)rng_int(sh, 0, 3), b = (int)rng_int(sh, 0, 3);
    *rd = &g_fam[(rank + b) % 4];
    *sd = &g_fam[samesize ? partner[(rank + b) % 4] : (rank + a) % 4];
}

typedef struct {
    int n;
    int *units;  /* per block, in units */
    int *counts; /* per block, in items of the side's datatype */
    int *displs; /* per block, in items (extents) of the side's datatype */
    size_t len;  /* bytes spanned, gaps included */
} vlay_t;

static void vlay_make(vlay_t *L, const side_t *sd, const int *units, int n, int dmode, rng_t *r)
{
    L->n = n;
    L->units = xints((size_t)n);
    L->counts = xints((size_t)n);
    L->displs = xints((size_t)n);
    int *order = xints((size_t)n);
    for (int k = 0; k < n; k++)
        order[k] = dmode == VD_REVERSE ? n - 1 - k : k;
    if (dmode == VD_SHUFFLED)
        for (int k = n - 1; k > 0; k--) {
            int j = (int)rng_int(r, 0, k), t = order[k];
            order[k] = order[j];
            order[j] = t;
        }
    bool gaps = dmode != VD_PACKED;
    long pos = gaps ? (long)rng_int(r, 0, 2) : 0;
    for (int k = 0; k < n; k++) {
        int j = order[k];
        L->units[j] = units[j];
        L->counts[j] = units[j] * sd->per_unit;
        L->displs[j] = (int)pos;
        pos += L->counts[j] + (gaps ? (long)rng_int(r, 0, 3) : 0);
    }
    L->len = (size_t)pos * sd->ext;
    free(order);
}

static void vlay_free(vlay_t *L)
{
    free(L->units);
    free(L->counts);
    free(L->displs);
}

static char *vblock(const vlay_t *L, const side_t *sd, void *base, int j)
{
    return (char *)base + (size_t)L->displs[j] * sd->ext;
}

/* garbage everywhere, then fresh data in block only (or every block if only < 0) */
static void vlay_fill(const vlay_t *L, const side_t *sd, rng_t *r, gbuf_t *b, int only)
{
    gb_alloc(b, L->len, 0);
    rng_bytes(r, gb_ptr(b), L->len);
    for (int j = 0; j < L->n; j++)
        if (only < 0 || j == only)
            gen_side(sd, r, vblock(L, sd, gb_ptr(b), j), (size_t)L->units[j]);
}

/* Compares every block with PMPI's; every byte outside the blocks must keep
 * its initial garbage (in both results). */
static void check_vrecv(const char *what, const side_t *sd, const vlay_t *L,
                        void *gotM, void *gotP, const void *init)
{
    unsigned char *mask = calloc(L->len ? L->len : 1, 1);
    for (int j = 0; j < L->n; j++) {
        if (!L->units[j])
            continue;
        char msg[160];
        snprintf(msg, sizeof msg, "%s, block %d (displ %d)", what, j, L->displs[j]);
        size_t off = (size_t)L->displs[j] * sd->ext;
        memset(mask + off, 1, side_bytes(sd, (size_t)L->units[j]));
        check_side(msg, sd, vblock(L, sd, gotM, j), vblock(L, sd, gotP, j), (size_t)L->units[j]);
    }
    const unsigned char *in = init;
    for (int k = 0; k < 2; k++) {
        const unsigned char *g = k ? gotP : gotM;
        for (size_t i = 0; i < L->len; i++)
            if (!mask[i] && g[i] != in[i]) {
                fail("%s%s: byte %zu of %zu outside every block (a gap) modified: 0x%02x,"
                     " was 0x%02x", k ? "PMPI " : "", what, i, L->len, g[i], in[i]);
                break;
            }
    }
    free(mask);
}

static void check_ints(const char *what, const int *a, const int *saved, int n)
{
    if (a && n > 0 && memcmp(a, saved, (size_t)n * sizeof(int)) != 0)
        fail("%s array modified", what);
}

static int *ints_dup(const int *a, int n)
{
    int *p = xints((size_t)n);
    if (a && n > 0)
        memcpy(p, a, (size_t)n * sizeof(int));
    return p;
}

static int sum_units(const int *u, int n)
{
    int s = 0;
    for (int i = 0; i < n; i++)
        s += u[i];
    return s;
}

/* x == NULL: the int family, sides differing from rank to rank */
static const char *vname(const xcase_t *x) { return x ? x->name : g_mixed_name; }

/* Allgatherv; in place: every rank's own block already at displs[rank] in
 * recvbuf, sendcount -1 and sendtype MPI_DATATYPE_NULL (ignored). */
static void check_allgatherv(const commcase_t *cc, const xcase_t *x, int pat, bool inplace,
                             int lavg)
{
    const vpat_t *vp = &g_vpat[pat];
    ctx_t c = {"MPI_Allgatherv", vname(x), NULL, cc->name, vp->name, 0, -1, inplace};
    begin_check(c);
    int P = cc->size, me = cc->rank;
    rng_t sh = rng_shared(), r = rng_for_check();
    const side_t *sd, *rd;
    pick_sides(x, &sh, me, true, &sd, &rd);
    int *units = xints((size_t)P);
    for (int j = 0; j < P; j++)
        units[j] = vunit(&sh, vp->counts, j, lavg);
    g_cur.count = sum_units(units, P);
    vlay_t L;
    vlay_make(&L, rd, units, P, vp->displs, &r);

    gbuf_t src = {0}, sM = {0}, sP = {0}, rinit, rM, rP;
    vlay_fill(&L, rd, &r, &rinit, inplace ? me : P);
    if (!inplace) {
        gb_alloc(&src, side_bytes(sd, (size_t)units[me]), 0);
        gen_side(sd, &r, gb_ptr(&src), (size_t)units[me]);
        gb_clone(&sM, &src);
        gb_clone(&sP, &src);
    }
    gb_clone(&rM, &rinit);
    gb_clone(&rP, &rinit);
    int *cs = ints_dup(L.counts, P), *ds = ints_dup(L.displs, P);
    int scount = inplace ? -1 : units[me] * sd->per_unit;
    MPI_Datatype stype = inplace ? MPI_DATATYPE_NULL : sd->dt;

    check_rc("PMPI", PMPI_Allgatherv(inplace ? MPI_IN_PLACE : gb_ptr(&sP), scount, stype,
                                     gb_ptr(&rP), L.counts, L.displs, rd->dt, cc->comm));
    check_rc("MPI", MPI_Allgatherv(inplace ? MPI_IN_PLACE : gb_ptr(&sM), scount, stype,
                                   gb_ptr(&rM), L.counts, L.displs, rd->dt, cc->comm));

    gb_check_guards(&sM, "sendbuf");
    gb_check_guards(&rM, "recvbuf");
    gb_check_guards(&sP, "PMPI sendbuf");
    gb_check_guards(&rP, "PMPI recvbuf");
    check_ints("recvcounts", L.counts, cs, P);
    check_ints("displs", L.displs, ds, P);
    if (!inplace)
        check_bytes("sendbuf modified", gb_ptr(&sM), gb_ptr(&src), src.len);
    check_vrecv("received data", rd, &L, gb_ptr(&rM), gb_ptr(&rP), gb_ptr(&rinit));
    free(cs); free(ds); free(units);
    vlay_free(&L);
    gb_free(&src); gb_free(&sM); gb_free(&sP);
    gb_free(&rinit); gb_free(&rM); gb_free(&rP);
    end_check();
}

/* Alltoallv; in place: sendcounts, sdispls = NULL and sendtype
 * MPI_DATATYPE_NULL (ignored: the receive side's are used), with counts in
 * units symmetric between every pair of ranks. */
static void check_alltoallv(const commcase_t *cc, const xcase_t *x, int pat, bool inplace, int lavg)
{
    const vpat_t *vp = &g_vpat[pat];
    ctx_t c = {"MPI_Alltoallv", vname(x), NULL, cc->name, vp->name, 0, -1, inplace};
    begin_check(c);
    int P = cc->size, me = cc->rank;
    rng_t sh = rng_shared(), r = rng_for_check();
    const side_t *sd, *rd;
    pick_sides(x, &sh, me, false, &sd, &rd);
    int *m = xints((size_t)P * (size_t)P); /* m[i * P + j]: units from rank i to rank j */
    for (int i = 0; i < P; i++)
        for (int j = 0; j < P; j++)
            m[i * P + j] = inplace && j < i ? m[j * P + i]
                                            : vunit(&sh, vp->counts, i * P + j, lavg);
    g_cur.count = sum_units(m, P * P);
    int *su = xints((size_t)P), *ru = xints((size_t)P);
    for (int j = 0; j < P; j++) {
        su[j] = m[me * P + j];
        ru[j] = m[j * P + me];
    }
    vlay_t Ls = {0}, Lr;
    vlay_make(&Lr, rd, ru, P, vp->displs, &r);

    gbuf_t src = {0}, sM = {0}, sP = {0}, rinit, rM, rP;
    vlay_fill(&Lr, rd, &r, &rinit, inplace ? -1 : P);
    if (!inplace) {
        vlay_make(&Ls, sd, su, P, vp->displs == VD_PACKED ? VD_PACKED : VD_SHUFFLED, &r);
        vlay_fill(&Ls, sd, &r, &src, -1);
        gb_clone(&sM, &src);
        gb_clone(&sP, &src);
    }
    gb_clone(&rM, &rinit);
    gb_clone(&rP, &rinit);
    int *scs = ints_dup(Ls.counts, P), *sds = ints_dup(Ls.displs, P);
    int *rcs = ints_dup(Lr.counts, P), *rds = ints_dup(Lr.displs, P);
    MPI_Datatype stype = inplace ? MPI_DATATYPE_NULL : sd->dt;

    check_rc("PMPI", PMPI_Alltoallv(inplace ? MPI_IN_PLACE : gb_ptr(&sP), Ls.counts, Ls.displs,
                                    stype, gb_ptr(&rP), Lr.counts, Lr.displs, rd->dt, cc->comm));
    check_rc("MPI", MPI_Alltoallv(inplace ? MPI_IN_PLACE : gb_ptr(&sM), Ls.counts, Ls.displs,
                                  stype, gb_ptr(&rM), Lr.counts, Lr.displs, rd->dt, cc->comm));

    gb_check_guards(&sM, "sendbuf");
    gb_check_guards(&rM, "recvbuf");
    gb_check_guards(&sP, "PMPI sendbuf");
    gb_check_guards(&rP, "PMPI recvbuf");
    check_ints("sendcounts", Ls.counts, scs, P);
    check_ints("sdispls", Ls.displs, sds, P);
    check_ints("recvcounts", Lr.counts, rcs, P);
    check_ints("rdispls", Lr.displs, rds, P);
    if (!inplace)
        check_bytes("sendbuf modified", gb_ptr(&sM), gb_ptr(&src), src.len);
    check_vrecv("received data", rd, &Lr, gb_ptr(&rM), gb_ptr(&rP), gb_ptr(&rinit));
    free(scs); free(sds); free(rcs); free(rds);
    free(m); free(su); free(ru);
    if (!inplace)
        vlay_free(&Ls);
    vlay_free(&Lr);
    gb_free(&src); gb_free(&sM); gb_free(&sP);
    gb_free(&rinit); gb_free(&rM); gb_free(&rP);
    end_check();
}

/* Non-root arguments that are not significant: variant 0 passes a small
 * garbage buffer (must stay untouched) and counts/displs full of -1 (never
 * to be read); variant 1 passes NULL for them and MPI_DATATYPE_NULL. */
#define POISON_LEN 48

static int *poison_ints(int P)
{
    int *p = xints((size_t)P);
    for (int i = 0; i < P; i++)
        p[i] = -1;
    return p;
}

static const char *vp_nonroot_null(const vpat_t *vp)
{
    static char buf[160];
    snprintf(buf, sizeof buf, "%s/nonroot-NULL", vp->name);
    return buf;
}

/* Gatherv; variant 1: root passes MPI_IN_PLACE (sendcount -1, sendtype
 * MPI_DATATYPE_NULL: ignored; its own block already at displs[root]), the
 * others recvbuf = recvcounts = displs = NULL, recvtype MPI_DATATYPE_NULL. */
static void check_gatherv(const commcase_t *cc, const xcase_t *x, int pat, int root, int variant,
                          int lavg)
{
    const vpat_t *vp = &g_vpat[pat];
    int P = cc->size, me = cc->rank;
    bool isroot = me == root, inplace = variant && isroot;
    ctx_t c = {"MPI_Gatherv", vname(x), NULL, cc->name, vp->name, 0, root, inplace};
    begin_check(c);
    if (variant)
        g_cur.var = vp_nonroot_null(vp);
    rng_t sh = rng_shared(), r = rng_for_check();
    const side_t *sd, *rd;
    pick_sides(x, &sh, me, false, &sd, &rd);
    int *units = xints((size_t)P);
    for (int j = 0; j < P; j++)
        units[j] = vunit(&sh, vp->counts, j, lavg);
    g_cur.count = sum_units(units, P);
    vlay_t L = {0};

    gbuf_t src = {0}, sM = {0}, sP = {0}, rinit = {0}, rM = {0}, rP = {0};
    int *rcounts = NULL, *rdispls = NULL;
    MPI_Datatype rtype = MPI_DATATYPE_NULL;
    if (isroot) {
        vlay_make(&L, rd, units, P, vp->displs, &r);
        vlay_fill(&L, rd, &r, &rinit, inplace ? me : P);
        rcounts = L.counts;
        rdispls = L.displs;
        rtype = rd->dt;
    } else if (!variant) {
        gb_alloc(&rinit, POISON_LEN, 0);
        rng_bytes(&r, gb_ptr(&rinit), POISON_LEN);
        rcounts = poison_ints(P);
        rdispls = poison_ints(P);
        rtype = rd->dt;
    }
    if (rinit.base) {
        gb_clone(&rM, &rinit);
        gb_clone(&rP, &rinit);
    }
    if (!inplace) {
        gb_alloc(&src, side_bytes(sd, (size_t)units[me]), 0);
        gen_side(sd, &r, gb_ptr(&src), (size_t)units[me]);
        gb_clone(&sM, &src);
        gb_clone(&sP, &src);
    }
    int *cs = ints_dup(rcounts, P), *ds = ints_dup(rdispls, P);
    int scount = inplace ? -1 : units[me] * sd->per_unit;
    MPI_Datatype stype = inplace ? MPI_DATATYPE_NULL : sd->dt;

    check_rc("PMPI", PMPI_Gatherv(inplace ? MPI_IN_PLACE : gb_ptr(&sP), scount, stype,
                                  rP.base ? gb_ptr(&rP) : NULL, rcounts, rdispls, rtype, root,
                                  cc->comm));
    check_rc("MPI", MPI_Gatherv(inplace ? MPI_IN_PLACE : gb_ptr(&sM), scount, stype,
                                rM.base ? gb_ptr(&rM) : NULL, rcounts, rdispls, rtype, root,
                                cc->comm));

    gb_check_guards(&sM, "sendbuf");
    gb_check_guards(&rM, "recvbuf");
    gb_check_guards(&sP, "PMPI sendbuf");
    gb_check_guards(&rP, "PMPI recvbuf");
    check_ints("recvcounts", rcounts, cs, P);
    check_ints("displs", rdispls, ds, P);
    if (!inplace)
        check_bytes("sendbuf modified", gb_ptr(&sM), gb_ptr(&src), src.len);
    if (isroot)
        check_vrecv("gathered data", rd, &L, gb_ptr(&rM), gb_ptr(&rP), gb_ptr(&rinit));
    else if (rinit.base)
        check_bytes("non-root recvbuf (not significant) modified", gb_ptr(&rM), gb_ptr(&rinit),
                    rinit.len);
    if (isroot)
        vlay_free(&L);
    else {
        free(rcounts);
        free(rdispls);
    }
    free(cs); free(ds); free(units);
    gb_free(&src); gb_free(&sM); gb_free(&sP);
    gb_free(&rinit); gb_free(&rM); gb_free(&rP);
    end_check();
}

/* Scatterv; variant 1: root passes recvbuf = MPI_IN_PLACE (recvcount -1,
 * recvtype MPI_DATATYPE_NULL: ignored; its block stays in sendbuf), the
 * others sendbuf = sendcounts = displs = NULL, sendtype MPI_DATATYPE_NULL. */
static void check_scatterv(const commcase_t *cc, const xcase_t *x, int pat, int root, int variant,
                           int lavg)
{
    const vpat_t *vp = &g_vpat[pat];
    int P = cc->size, me = cc->rank;
    bool isroot = me == root, inplace = variant && isroot;
    ctx_t c = {"MPI_Scatterv", vname(x), NULL, cc->name, vp->name, 0, root, inplace};
    begin_check(c);
    if (variant)
        g_cur.var = vp_nonroot_null(vp);
    rng_t sh = rng_shared(), r = rng_for_check();
    const side_t *sd, *rd;
    pick_sides(x, &sh, me, false, &sd, &rd);
    int *units = xints((size_t)P);
    for (int j = 0; j < P; j++)
        units[j] = vunit(&sh, vp->counts, j, lavg);
    g_cur.count = sum_units(units, P);
    vlay_t L = {0};

    gbuf_t src = {0}, sM = {0}, sP = {0}, rinit = {0}, rM = {0}, rP = {0};
    int *scounts = NULL, *sdispls = NULL;
    MPI_Datatype stype = MPI_DATATYPE_NULL;
    if (isroot) {
        vlay_make(&L, sd, units, P, vp->displs, &r);
        vlay_fill(&L, sd, &r, &src, -1);
        scounts = L.counts;
        sdispls = L.displs;
        stype = sd->dt;
    } else if (!variant) {
        gb_alloc(&src, POISON_LEN, 0);
        rng_bytes(&r, gb_ptr(&src), POISON_LEN);
        scounts = poison_ints(P);
        sdispls = poison_ints(P);
        stype = sd->dt;
    }
    if (src.base) {
        gb_clone(&sM, &src);
        gb_clone(&sP, &src);
    }
    if (!inplace) {
        gb_alloc(&rinit, side_bytes(rd, (size_t)units[me]), 0);
        rng_bytes(&r, gb_ptr(&rinit), rinit.len);
        gb_clone(&rM, &rinit);
        gb_clone(&rP, &rinit);
    }
    int *cs = ints_dup(scounts, P), *ds = ints_dup(sdispls, P);
    int rcount = inplace ? -1 : units[me] * rd->per_unit;
    MPI_Datatype rtype = inplace ? MPI_DATATYPE_NULL : rd->dt;

    check_rc("PMPI", PMPI_Scatterv(sP.base ? gb_ptr(&sP) : NULL, scounts, sdispls, stype,
                                   inplace ? MPI_IN_PLACE : gb_ptr(&rP), rcount, rtype, root,
                                   cc->comm));
    check_rc("MPI", MPI_Scatterv(sM.base ? gb_ptr(&sM) : NULL, scounts, sdispls, stype,
                                 inplace ? MPI_IN_PLACE : gb_ptr(&rM), rcount, rtype, root,
                                 cc->comm));

    gb_check_guards(&sM, "sendbuf");
    gb_check_guards(&rM, "recvbuf");
    gb_check_guards(&sP, "PMPI sendbuf");
    gb_check_guards(&rP, "PMPI recvbuf");
    check_ints("sendcounts", scounts, cs, P);
    check_ints("displs", sdispls, ds, P);
    if (src.base)
        check_bytes(isroot ? "sendbuf modified" : "non-root sendbuf (not significant) modified",
                    gb_ptr(&sM), gb_ptr(&src), src.len);
    if (!inplace)
        check_side("scattered data", rd, gb_ptr(&rM), gb_ptr(&rP), (size_t)units[me]);
    if (isroot)
        vlay_free(&L);
    else {
        free(scounts);
        free(sdispls);
    }
    free(cs); free(ds); free(units);
    gb_free(&src); gb_free(&sM); gb_free(&sP);
    gb_free(&rinit); gb_free(&rM); gb_free(&rP);
    end_check();
}

static void run_vmoves_case(const commcase_t *cc, const xcase_t *x, int pat, int lavg)
{
    for (int ip = 0; ip < 2; ip++) {
        check_allgatherv(cc, x, pat, ip, lavg);
        check_alltoallv(cc, x, pat, ip, lavg);
    }
    for (int root = 0; root < cc->size; root++)
        for (int v = 0; v < 2; v++) {
            check_gatherv(cc, x, pat, root, v, lavg);
            check_scatterv(cc, x, pat, root, v, lavg);
        }
}

static void run_vmoves(const commcase_t *cc)
{
    for (int xi = 0; xi < g_nx; xi++)
        for (int pat = 0; pat < NVPAT_SMALL; pat++)
            run_vmoves_case(cc, &g_x[xi], pat, 0);
    for (int pat = 0; pat < NVPAT_SMALL; pat++)
        run_vmoves_case(cc, NULL, pat, 0);
}

/* ------------------------------------------------------------------------ */
/* Reduce_scatter, Scan, Exscan                                             */
/* ------------------------------------------------------------------------ */

/* Reduce_scatter with per-rank counts (elements) from a vpat_t count mode;
 * in place: the whole input vector in recvbuf, the result in its first
 * recvcounts[rank] elements (the rest is not defined: not compared). */
static void check_reduce_scatter(const commcase_t *cc, const redcase_t *rc, int pat, bool inplace,
                                 int lavg)
{
    const tinfo_t *t = rc->t;
    const opinfo_t *o = rc->o;
    const vpat_t *vp = &g_vpat[pat];
    ctx_t c = {"MPI_Reduce_scatter", t->name, o->name, cc->name, vp->name, 0, -1, inplace};
    begin_check(c);
    int P = cc->size, me = cc->rank;
    rng_t sh = rng_shared(), r = rng_for_check();
    int *counts = xints((size_t)P);
    for (int j = 0; j < P; j++)
        counts[j] = vunit(&sh, vp->counts, j, lavg);
    size_t nin = (size_t)sum_units(counts, P), nout = (size_t)counts[me], ext = t->ext;
    g_cur.count = (long)nin;

    gbuf_t src, sM = {0}, sP = {0}, rM = {0}, rP = {0};
    gb_alloc(&src, nin * ext, 0);
    gen_elems(t, o->mode, &r, gb_ptr(&src), nin);
    if (inplace) {
        gb_clone(&rM, &src);
        gb_clone(&rP, &src);
    } else {
        gb_clone(&sM, &src);
        gb_clone(&sP, &src);
        gb_alloc(&rM, nout * ext, 0);
        rng_bytes(&r, gb_ptr(&rM), nout * ext);
        gb_clone(&rP, &rM);
    }
    int *cs = ints_dup(counts, P);
    MPI_Datatype ref = t->dt; /* see check_reduce */
    if (t->dt == MPI_OFFSET && (o->op == MPI_MIN || o->op == MPI_MAX))
        ref = MPI_LONG_LONG;

    long bad0 = g_userop_bad;
    check_rc("PMPI", PMPI_Reduce_scatter(inplace ? MPI_IN_PLACE : gb_ptr(&sP), gb_ptr(&rP), counts,
                                         ref, o->op, cc->comm));
    check_rc("MPI", MPI_Reduce_scatter(inplace ? MPI_IN_PLACE : gb_ptr(&sM), gb_ptr(&rM), counts,
                                       t->dt, o->op, cc->comm));
    if (g_userop_bad != bad0)
        fail("user op function called with a datatype other than the one passed");

    gb_check_guards(&sM, "sendbuf");
    gb_check_guards(&rM, "recvbuf");
    gb_check_guards(&sP, "PMPI sendbuf");
    gb_check_guards(&rP, "PMPI recvbuf");
    check_ints("recvcounts", counts, cs, P);
    if (!inplace)
        check_bytes("sendbuf modified", gb_ptr(&sM), gb_ptr(&src), src.len);
    check_elems("result", t, gb_ptr(&rM), gb_ptr(&rP), nout);
    free(cs); free(counts);
    gb_free(&src); gb_free(&sM); gb_free(&sP); gb_free(&rM); gb_free(&rP);
    end_check();
}

/* Scan or Exscan; ipmode 0: no rank in place, 1: every rank, 2: the odd
 * ranks, 3: the even ranks (the standard asks MPI_IN_PLACE "at all
 * processes" for Allreduce and the like, not for Scan and Exscan).  Exscan's
 * rank 0: recvbuf is not significant, yet Open MPI leaves it untouched, so it
 * is compared all the same (in place the standard requires it unchanged). */
static void check_scan(const commcase_t *cc, const redcase_t *rc, int count, int ipmode, bool ex)
{
    static const char *ipnames[] = {NULL, NULL, "in-place-on-odd-ranks", "in-place-on-even-ranks"};
    const tinfo_t *t = rc->t;
    const opinfo_t *o = rc->o;
    int me = cc->rank;
    bool inplace = ipmode == 1 || (ipmode == 2 && me % 2 == 1) || (ipmode == 3 && me % 2 == 0);
    ctx_t c = {ex ? "MPI_Exscan" : "MPI_Scan", t->name, o->name, cc->name, ipnames[ipmode],
               count, -1, inplace};
    begin_check(c);
    size_t n = (size_t)count, ext = t->ext;
    rng_t r = rng_for_check();

    gbuf_t src, sM = {0}, sP = {0}, rinit = {0}, rM = {0}, rP = {0};
    gb_alloc(&src, n * ext, 0);
    gen_elems(t, o->mode, &r, gb_ptr(&src), n);
    if (inplace) {
        gb_clone(&rinit, &src);
    } else {
        gb_clone(&sM, &src);
        gb_clone(&sP, &src);
        gb_alloc(&rinit, n * ext, 0);
        rng_bytes(&r, gb_ptr(&rinit), n * ext);
    }
    gb_clone(&rM, &rinit);
    gb_clone(&rP, &rinit);
    MPI_Datatype ref = t->dt; /* see check_reduce */
    if (t->dt == MPI_OFFSET && (o->op == MPI_MIN || o->op == MPI_MAX))
        ref = MPI_LONG_LONG;

    long bad0 = g_userop_bad;
    void *sbP = inplace ? MPI_IN_PLACE : gb_ptr(&sP), *sbM = inplace ? MPI_IN_PLACE : gb_ptr(&sM);
    if (ex) {
        check_rc("PMPI", PMPI_Exscan(sbP, gb_ptr(&rP), count, ref, o->op, cc->comm));
        check_rc("MPI", MPI_Exscan(sbM, gb_ptr(&rM), count, t->dt, o->op, cc->comm));
    } else {
        check_rc("PMPI", PMPI_Scan(sbP, gb_ptr(&rP), count, ref, o->op, cc->comm));
        check_rc("MPI", MPI_Scan(sbM, gb_ptr(&rM), count, t->dt, o->op, cc->comm));
    }
    if (g_userop_bad != bad0)
        fail("user op function called with a datatype other than the one passed");

    gb_check_guards(&sM, "sendbuf");
    gb_check_guards(&rM, "recvbuf");
    gb_check_guards(&sP, "PMPI sendbuf");
    gb_check_guards(&rP, "PMPI recvbuf");
    if (!inplace)
        check_bytes("sendbuf modified", gb_ptr(&sM), gb_ptr(&src), src.len);
    if (ex && me == 0) {
        check_bytes("rank 0 recvbuf modified", gb_ptr(&rM), gb_ptr(&rinit), rinit.len);
        check_bytes("PMPI rank 0 recvbuf modified", gb_ptr(&rP), gb_ptr(&rinit), rinit.len);
    } else {
        check_elems("result", t, gb_ptr(&rM), gb_ptr(&rP), n);
    }
    gb_free(&src); gb_free(&sM); gb_free(&sP);
    gb_free(&rinit); gb_free(&rM); gb_free(&rP);
    end_check();
}

static const int g_rs_pats[] = {0, 1, 3, 4}; /* zero-all, some-zero, ramp, random */

static void run_vreductions(const commcase_t *cc)
{
    const int counts[] = {0, 1, 7, 3 * cc->size + 1};
    for (int i = 0; i < g_nred; i++) {
        const redcase_t *rc = &g_red[i];
        if (!cc->full && !rc->t->core)
            continue;
        for (int k = 0; k < 4; k++)
            for (int ip = 0; ip < 2; ip++)
                check_reduce_scatter(cc, rc, g_rs_pats[k], ip, 0);
        for (int ex = 0; ex < 2; ex++) {
            for (int ci = 0; ci < 4; ci++)
                for (int ip = 0; ip < 2; ip++)
                    check_scan(cc, rc, counts[ci], ip, ex);
            check_scan(cc, rc, 7, 2, ex);
            check_scan(cc, rc, 7, 3, ex);
        }
    }
}

/* about 256 KiB per buffer */
static void run_vlarge(const commcase_t *cc)
{
    int P = cc->size;
    const int B = 256 << 10;
    redcase_t dsum = {find_type("MPI_DOUBLE"), &g_ops[0]};
    redcase_t isum = {find_type("MPI_INT"), &g_ops[0]};
    redcase_t mat = {find_type("mat2x2(contig4xMPI_UINT32_T)"), &g_uops[1]};
    for (int ip = 0; ip < 2; ip++) {
        check_reduce_scatter(cc, &isum, VPAT_LARGE, ip, B / 4 / P);
        check_scan(cc, &dsum, B / 8, ip, false);
        check_scan(cc, &dsum, B / 8, ip, true);
        check_scan(cc, &mat, 4096, ip ? 2 : 0, false);
        check_scan(cc, &mat, 4096, ip ? 3 : 1, true);
    }
    const xcase_t *xs[] = {g_xbyte, NULL};
    for (int k = 0; k < 2; k++) {
        int unit = xs[k] ? 1 : 12 * (int)sizeof(int);
        for (int ip = 0; ip < 2; ip++) {
            check_allgatherv(cc, xs[k], VPAT_LARGE, ip, B / unit / P);
            check_alltoallv(cc, xs[k], VPAT_LARGE, ip, B / unit / (P * P));
        }
        check_gatherv(cc, xs[k], VPAT_LARGE, P - 1, 0, B / unit / P);
        check_gatherv(cc, xs[k], VPAT_LARGE, 0, 1, B / unit / P);
        check_scatterv(cc, xs[k], VPAT_LARGE, 0, 0, B / unit / P);
        check_scatterv(cc, xs[k], VPAT_LARGE, P - 1, 1, B / unit / P);
    }
}

static void check_barrier(const commcase_t *cc)
{
    ctx_t c = {"MPI_Barrier", NULL, NULL, cc->name, NULL, 0, -1, 0};
    begin_check(c);
    check_rc("MPI", MPI_Barrier(cc->comm));
    end_check();
}

/* Intercommunicator: Allreduce (each group receives the reduction over the
 * other group), Bcast with MPI_ROOT / MPI_PROC_NULL / remote root, Barrier.
 * Not the vector variants nor Reduce_scatter (their intercommunicator forms
 * are not checked yet), nor Scan and Exscan (not defined on them). */
static void run_inter(const commcase_t *cc, int mygroup)
{
    check_barrier(cc);
    const int counts[] = {0, 1, 7, 3 * g_wsize + 1};
    for (int i = 0; i < g_nred; i++) {
        const redcase_t *rc = &g_red[i];
        if (!rc->t->core)
            continue;
        for (int ci = 0; ci < 4; ci++)
            check_reduce(cc, RED_ALLREDUCE, rc, counts[ci], -1, false, false);
    }
    for (int xi = 0; xi < g_nx; xi++) {
        for (int ci = 0; ci < 3; ci++) {
            for (int g = 0; g < 2; g++) {
                int gsize = g == mygroup ? cc->size : cc->rsize;
                for (int r = 0; r < gsize; r++) {
                    int root = g != mygroup ? r : (cc->rank == r ? MPI_ROOT : MPI_PROC_NULL);
                    check_bcast(cc, &g_x[xi], counts[ci], root);
                }
            }
        }
    }
    check_barrier(cc);
}

/* ------------------------------------------------------------------------ */
/* Setup                                                                    */
/* ------------------------------------------------------------------------ */

static MPI_Aint extent_of(MPI_Datatype dt)
{
    MPI_Aint lb, ext;
    MPI_Type_get_extent(dt, &lb, &ext);
    return ext;
}

static void setup_types(void)
{
    MPI_Type_contiguous(3, MPI_INT, &g_contig3);
    MPI_Type_commit(&g_contig3);
    MPI_Type_vector(2, 2, 3, MPI_INT, &g_vec); /* ints 0,1,3,4; extent 5 ints */
    MPI_Type_commit(&g_vec);
    MPI_Type_create_resized(g_vec, 0, 7 * (MPI_Aint)sizeof(int), &g_resized);
    MPI_Type_commit(&g_resized);
    MPI_Type_contiguous(4, MPI_UINT32_T, &g_mat_dt);
    MPI_Type_commit(&g_mat_dt);
    MPI_Type_contiguous(2, MPI_DOUBLE, &g_d2_dt);
    MPI_Type_commit(&g_d2_dt);

    for (int i = 0; i < NTYPES; i++) {
        tinfo_t *t = &g_types[i];
        if (t->dt == MPI_DATATYPE_NULL)
            t->dt = t->kind == K_U32 ? g_mat_dt : g_d2_dt;
        t->ext = kind_size(t->kind) * (size_t)t->nsub;
        if ((size_t)extent_of(t->dt) != t->ext) {
            fprintf(stderr, "check_colls: extent of %s is %ld, expected %zu\n", t->name,
                    (long)extent_of(t->dt), t->ext);
            PMPI_Abort(MPI_COMM_WORLD, 2);
        }
    }

    MPI_Op_create(op_usum, 1, &g_uops[0].op);
    MPI_Op_create(op_matmul, 0, &g_uops[1].op);
    MPI_Op_create(op_pair2d, 1, &g_uops[2].op);

    g_nred = 0;
    for (int i = 0; i < NTYPES; i++)
        for (int j = 0; j < NOPS; j++)
            if (g_types[i].cat & g_ops[j].cats)
                g_red[g_nred++] = (redcase_t){&g_types[i], &g_ops[j]};
    g_red[g_nred++] = (redcase_t){find_type("MPI_INT"), &g_uops[0]};
    g_red[g_nred++] = (redcase_t){find_type("mat2x2(contig4xMPI_UINT32_T)"), &g_uops[1]};
    g_red[g_nred++] = (redcase_t){find_type("pair2d(contig2xMPI_DOUBLE)"), &g_uops[2]};

    /* transfer cases: predefined types (1 item per unit) ... */
    static const char *pre[] = {"MPI_BYTE", "MPI_INT", "MPI_DOUBLE", "MPI_LONG_DOUBLE",
                                "MPI_SHORT_INT", "MPI_C_DOUBLE_COMPLEX"};
    g_nx = 0;
    for (size_t i = 0; i < sizeof pre / sizeof pre[0]; i++) {
        const tinfo_t *t = find_type(pre[i]);
        side_t sd = {t->name, t->dt, 1, t->ext, t};
        g_x[g_nx++] = (xcase_t){t->name, sd, sd};
    }
    g_xbyte = &g_x[0];
    /* ... and int-based derived types, one unit = 12 ints */
    side_t s_int = {"MPI_INT", MPI_INT, 12, sizeof(int), NULL};
    side_t s_c3 = {"contig3", g_contig3, 4, (size_t)extent_of(g_contig3), NULL};
    side_t s_vec = {"vector", g_vec, 3, (size_t)extent_of(g_vec), NULL};
    side_t s_rsz = {"resized", g_resized, 3, (size_t)extent_of(g_resized), NULL};
    g_x[g_nx++] = (xcase_t){"contig3/contig3", s_c3, s_c3};
    g_x[g_nx++] = (xcase_t){"vector/vector", s_vec, s_vec};
    g_x[g_nx++] = (xcase_t){"resized/resized", s_rsz, s_rsz};
    g_x[g_nx++] = (xcase_t){"MPI_INT/contig3", s_int, s_c3};
    g_x[g_nx++] = (xcase_t){"contig3/vector", s_c3, s_vec};
    g_x[g_nx++] = (xcase_t){"vector/MPI_INT", s_vec, s_int};
    g_x[g_nx++] = (xcase_t){"resized/contig3", s_rsz, s_c3};
    g_x[g_nx++] = (xcase_t){"MPI_INT/resized", s_int, s_rsz};
    g_fam[0] = s_int;
    g_fam[1] = s_c3;
    g_fam[2] = s_vec;
    g_fam[3] = s_rsz;
}

static void free_types(void)
{
    for (int i = 0; i < 3; i++)
        MPI_Op_free(&g_uops[i].op);
    MPI_Type_free(&g_contig3);
    MPI_Type_free(&g_vec);
    MPI_Type_free(&g_resized);
    MPI_Type_free(&g_mat_dt);
    MPI_Type_free(&g_d2_dt);
}

static commcase_t make_cc(const char *name, MPI_Comm comm, bool full, bool large)
{
    commcase_t cc = {name, comm, 0, 0, 0, false, full, large};
    if (comm != MPI_COMM_NULL) {
        int inter = 0;
        MPI_Comm_test_inter(comm, &inter);
        cc.inter = inter != 0;
        MPI_Comm_rank(comm, &cc.rank);
        MPI_Comm_size(comm, &cc.size);
        if (cc.inter)
            MPI_Comm_remote_size(comm, &cc.rsize);
    }
    return cc;
}

static void run_intra(const commcase_t *cc)
{
    if (cc->comm == MPI_COMM_NULL)
        return;
    g_ccheck = 0;
    check_barrier(cc);
    run_reductions(cc);
    run_vreductions(cc);
    run_moves(cc);
    run_vmoves(cc);
    if (cc->large) {
        run_large(cc);
        run_vlarge(cc);
    }
    check_barrier(cc);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_wsize);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    const char *env = getenv("CHECK_SEED");
    if (env && *env)
        g_seed = strtoull(env, NULL, 0);
    const char *only = NULL;
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], "--only-comm") == 0)
            only = argv[i + 1];

    setup_types();

    int W = g_wrank, P = g_wsize;
    MPI_Comm dup, half, parity, noroot0, rev, single, local, inter = MPI_COMM_NULL;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_split(MPI_COMM_WORLD, W < P / 2, W, &half);
    MPI_Comm_split(MPI_COMM_WORLD, W % 2, W, &parity);
    MPI_Comm_split(MPI_COMM_WORLD, W == 0 ? MPI_UNDEFINED : 0, W, &noroot0);
    MPI_Comm_split(MPI_COMM_WORLD, 0, P - W, &rev);
    MPI_Comm_split(MPI_COMM_WORLD, W, 0, &single);
    int mygroup = W < P / 2 ? 0 : 1;
    MPI_Comm_split(MPI_COMM_WORLD, mygroup, W, &local);
    if (P >= 2)
        MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, mygroup == 0 ? P / 2 : 0, 4711, &inter);

    commcase_t ccs[] = {
        make_cc("world", MPI_COMM_WORLD, true, true),
        make_cc("self", MPI_COMM_SELF, false, false),
        make_cc("dup(world)", dup, true, false),
        make_cc("split(halves)", half, false, false),
        make_cc("split(rank%2)", parity, false, false),
        make_cc("split(without-rank0)", noroot0, false, false),
        make_cc("split(reversed)", rev, false, true),
        make_cc("split(size1)", single, false, false),
    };
    for (size_t i = 0; i < sizeof ccs / sizeof ccs[0]; i++)
        if (!only || strcmp(ccs[i].name, only) == 0)
            run_intra(&ccs[i]);
    if (inter != MPI_COMM_NULL && (!only || strcmp("intercomm(halves)", only) == 0)) {
        commcase_t ic = make_cc("intercomm(halves)", inter, false, false);
        run_inter(&ic, mygroup);
    }

    if (inter != MPI_COMM_NULL)
        MPI_Comm_free(&inter);
    MPI_Comm_free(&local);
    MPI_Comm_free(&single);
    MPI_Comm_free(&rev);
    if (noroot0 != MPI_COMM_NULL)
        MPI_Comm_free(&noroot0);
    MPI_Comm_free(&parity);
    MPI_Comm_free(&half);
    MPI_Comm_free(&dup);
    free_types();

    long long mine[2] = {g_pass, g_fail}, tot[2] = {0, 0};
    PMPI_Allreduce(mine, tot, 2, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (g_wrank == 0)
        printf("check_colls: %lld passed, %lld failed\n", tot[0], tot[1]);
    fflush(stdout);
    MPI_Finalize();
    return tot[1] ? 1 : 0;
}
