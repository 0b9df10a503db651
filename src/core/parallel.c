/*
** parallel.c: one sampling batch cut into jobs (contiguous ranges of units)
** and run by a job runner: the caller's (a game's job system, qn_jobs) or
** the built-in one, which starts up to QN_MAX_THREADS pthreads (the
** calling thread takes a share) or, built with QN_NO_THREADS, runs every
** job on the calling thread. The same for the three kinds of instance
** that sample in batches: exact or discrete fields (only read, so no
** locking), hierarchical destinations and grid tile fields (their lazy
** builds are safe under concurrent sampling: see hier.c, grid_tiles.c).
*/
#include "core/nsearch.h"
#include "internal.h"

#ifndef QN_NO_THREADS
#include <pthread.h>
#include <sched.h>
#endif

/* One batch: job i covers units [count*i/jobs, count*(i+1)/jobs), sampled
** by `sample` (the batch sampler of one kind of instance) on `field`. */
typedef struct batch batch;
typedef void (*batch_fn)(const batch *b, const qn_vec2 *pos, qn_vec2 *dirs, uint8_t *status,
                         uint32_t *quads, size_t n);
struct batch {
    batch_fn sample;
    const void *field;
    qn_flow_kind kind; /* grid tile fields */
    const qn_vec2 *positions;
    qn_vec2 *dirs;
    uint8_t *status;
    uint32_t *quads;
    size_t count;
    uint32_t jobs;
};

static void run_job(void *data, uint32_t job) {
    const batch *b = data;
    size_t begin = (size_t)((uint64_t)b->count * job / b->jobs);
    size_t end = (size_t)((uint64_t)b->count * (job + 1u) / b->jobs);
    b->sample(b, b->positions + begin, b->dirs + begin, b->status ? b->status + begin : NULL,
              b->quads ? b->quads + begin : NULL, end - begin);
}

static void field_batch(const batch *b, const qn_vec2 *pos, qn_vec2 *dirs, uint8_t *status,
                        uint32_t *quads, size_t n) {
    qn_field_sample_batch(b->field, pos, dirs, status, quads, n);
}
static void hfield_batch(const batch *b, const qn_vec2 *pos, qn_vec2 *dirs, uint8_t *status,
                         uint32_t *quads, size_t n) {
    qn__hfield_sample_built(b->field, pos, dirs, status, quads, n);
}
static void tfield_batch(const batch *b, const qn_vec2 *pos, qn_vec2 *dirs, uint8_t *status,
                         uint32_t *cells, size_t n) {
    qn_grid_tfield_sample_batch(b->field, b->kind, pos, dirs, status, cells, n);
}

/* ---- the built-in runner --------------------------------------------------- */

/* Worker t of n runs jobs t, t+n, t+2n, ... */
typedef struct worker {
    qn_job_fn fn;
    void *data;
    uint32_t first, stride, jobs;
} worker;

static void run_worker(const worker *w) {
    for (uint32_t j = w->first; j < w->jobs; j += w->stride)
        w->fn(w->data, j);
}

#ifndef QN_NO_THREADS
static void *thread_main(void *arg) {
    run_worker(arg);
    return NULL;
}

/* Workers 1..n-1 on new threads, worker 0 on the caller's. A thread that
** cannot start leaves its jobs to the calling thread: the output is still
** complete, and *started_all says so. */
static void builtin_run(uint32_t jobs, qn_job_fn fn, void *data, bool *started_all) {
    uint32_t n = jobs < QN_MAX_THREADS ? jobs : QN_MAX_THREADS, started = 0;
    *started_all = true;
    if (n == 0) return;
    worker w[QN_MAX_THREADS];
    pthread_t ids[QN_MAX_THREADS];
    for (uint32_t t = 0; t < n; t++) {
        worker one = {fn, data, t, n, jobs};
        w[t] = one;
    }
    for (uint32_t t = 1; t < n && pthread_create(&ids[t], NULL, thread_main, &w[t]) == 0; t++)
        started = t;
    run_worker(&w[0]);
    for (uint32_t t = 1; t <= started; t++)
        pthread_join(ids[t], NULL);
    for (uint32_t t = started + 1; t < n; t++)
        run_worker(&w[t]);
    *started_all = started + 1 == n;
}
#else
static void builtin_run(uint32_t jobs, qn_job_fn fn, void *data, bool *started_all) {
    worker w = {fn, data, 0, 1, jobs};
    run_worker(&w);
    *started_all = true;
}
#endif

bool qn__run_jobs(const qn_jobs *runner, uint32_t jobs, qn_job_fn fn, void *data) {
    if (runner) {
        runner->run(runner->ud, jobs, fn, data);
        return true;
    }
    bool started_all;
    builtin_run(jobs, fn, data, &started_all);
    return started_all;
}

/* ---- building ahead ---------------------------------------------------------- */

/* The node search's step for the next key to settle (the caller holds the
** search's lock, so no other job settles meanwhile). */
static void ahead_settle(void *data, uint32_t unused) {
    (void)unused;
    qn__ahead *a = data;
    uint32_t k = atomic_load_explicit(&a->settled, memory_order_relaxed);
    if (k >= a->n) return;
    a->settle(a->ctx, a->key[k]);
    atomic_store_explicit(&a->settled, k + 1, memory_order_release);
}

/* One job: whenever the node search is free, it settles the next key (so
** the search, which runs one at a time, never waits while any is left);
** otherwise it builds the next settled key. No job waits for one that has
** not started: a job that finds nothing settled to build finds the search
** held by a job that is running it. */
static void ahead_job(void *data, uint32_t job) {
    (void)job;
    qn__ahead *a = data;
    for (;;) {
        if (atomic_load_explicit(&a->settled, memory_order_acquire) < a->n &&
            qn__nsearch_locked(a->ns, ahead_settle, a, 0, false))
            continue;
        uint32_t t = atomic_load_explicit(&a->taken, memory_order_relaxed);
        if (t >= a->n) return;
        if (t < atomic_load_explicit(&a->settled, memory_order_acquire)) {
            if (atomic_compare_exchange_weak_explicit(&a->taken, &t, t + 1, memory_order_relaxed,
                                                      memory_order_relaxed))
                a->build(a->ctx, a->key[t]);
            continue;
        }
        /* another job is settling what is next: warm a key meanwhile */
        uint32_t w = a->warm ? atomic_load_explicit(&a->warmed, memory_order_relaxed) : a->n;
        if (w < a->n) {
            if (atomic_compare_exchange_weak_explicit(&a->warmed, &w, w + 1, memory_order_relaxed,
                                                      memory_order_relaxed))
                a->warm(a->ctx, a->key[w]);
            continue;
        }
#ifndef QN_NO_THREADS
        sched_yield();
#endif
    }
}

void qn__ahead_run(qn__ahead *a, uint32_t jobs, const qn_jobs *runner) {
    atomic_init(&a->settled, 0);
    atomic_init(&a->taken, 0);
    atomic_init(&a->warmed, 0);
    if (a->n > 1)
        qn__run_jobs(runner, jobs < a->n ? jobs : a->n, ahead_job, a);
    else if (a->n == 1)
        ahead_job(a, 0);
}

/* ---- public ---------------------------------------------------------------- */

/* Checks the arguments common to the *_sample_jobs calls. */
static qn_status batch_check(batch *b, const qn_jobs *runner) {
    if (!b->field || (b->count && (!b->positions || !b->dirs)) || b->jobs == 0 ||
        b->jobs > QN_MAX_JOBS || (runner && !runner->run))
        return QN_E_INVALID_ARG;
    if (b->jobs > b->count) b->jobs = b->count ? (uint32_t)b->count : 1;
    return QN_OK;
}

/* Checks b's arguments and runs it. */
static qn_status run_batch(batch *b, const qn_jobs *runner) {
    qn_status st = batch_check(b, runner);
    if (st != QN_OK) return st;
    if (runner) {
        runner->run(runner->ud, b->jobs, run_job, b);
        return QN_OK;
    }
    bool started_all;
    builtin_run(b->jobs, run_job, b, &started_all);
    return started_all ? QN_OK : QN_E_NOMEM;
}

qn_status qn_field_sample_jobs(const qn_field *field, const qn_vec2 *positions, qn_vec2 *dirs,
                               uint8_t *status, uint32_t *quads, size_t count, uint32_t jobs,
                               const qn_jobs *runner) {
    batch b = {field_batch, field, QN_FLOW_VECTOR, positions, dirs, status, quads, count, jobs};
    return run_batch(&b, runner);
}

qn_status qn_hfield_sample_jobs(const qn_hfield *field, const qn_vec2 *positions, qn_vec2 *dirs,
                                uint8_t *status, uint32_t *quads, size_t count, uint32_t jobs,
                                const qn_jobs *runner) {
    batch b = {hfield_batch, field, QN_FLOW_VECTOR, positions, dirs, status, quads, count, jobs};
    qn_status st = run_batch(&b, runner);
    if (st == QN_OK || st == QN_E_NOMEM) /* QN_E_NOMEM: a thread did not start, every job ran */
        qn__hfield_sample_pending(field, positions, dirs, status, quads, count, b.jobs, runner);
    return st;
}

qn_status qn_grid_tfield_sample_jobs(const qn_grid_tfield *field, qn_flow_kind kind,
                                     const qn_vec2 *positions, qn_vec2 *dirs, uint8_t *status,
                                     uint32_t *cells, size_t count, uint32_t jobs,
                                     const qn_jobs *runner) {
    if ((unsigned)kind > (unsigned)QN_FLOW_VECTOR) return QN_E_INVALID_ARG;
    batch b = {tfield_batch, field, kind, positions, dirs, status, cells, count, jobs};
    return run_batch(&b, runner);
}

qn_status qn_field_sample_parallel(const qn_field *field, const qn_vec2 *positions, qn_vec2 *dirs,
                                   uint8_t *status, uint32_t *quads, size_t count,
                                   uint32_t threads) {
    if (threads == 0 || threads > QN_MAX_THREADS) return QN_E_INVALID_ARG;
    return qn_field_sample_jobs(field, positions, dirs, status, quads, count, threads, NULL);
}
