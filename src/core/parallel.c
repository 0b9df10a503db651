/*
** parallel.c: one sampling batch spread over several threads. Each thread
** takes a contiguous range; the field is only read, so no locking is needed.
*/
#include "internal.h"

#include <pthread.h>

#define MAX_THREADS 64u

typedef struct range {
    const qn_field *field;
    const qn_vec2 *positions;
    qn_vec2 *dirs;
    uint8_t *status;
    uint32_t *quads;
    size_t begin, end;
} range;

static void run_range(const range *r) {
    size_t n = r->end - r->begin;
    qn_field_sample_batch(r->field, r->positions + r->begin, r->dirs + r->begin,
                          r->status ? r->status + r->begin : NULL,
                          r->quads ? r->quads + r->begin : NULL, n);
}

static void *thread_main(void *arg) {
    run_range(arg);
    return NULL;
}

qn_status qn_field_sample_parallel(const qn_field *field, const qn_vec2 *positions,
                                   qn_vec2 *dirs, uint8_t *status, uint32_t *quads,
                                   size_t count, uint32_t threads) {
    if (!field || (count && (!positions || !dirs)) || threads == 0 || threads > MAX_THREADS)
        return QN_E_INVALID_ARG;
    if (threads > count) threads = count ? (uint32_t)count : 1;
    range parts[MAX_THREADS];
    pthread_t ids[MAX_THREADS];
    uint32_t started = 0;
    qn_status st = QN_OK;
    for (uint32_t i = 0; i < threads; i++) {
        range r = {field, positions, dirs, status, quads, count * i / threads,
                   count * (i + 1) / threads};
        parts[i] = r;
    }
    /* Threads 1..n-1 run in the background; the caller does part 0. */
    for (uint32_t i = 1; i < threads; i++) {
        if (pthread_create(&ids[i], NULL, thread_main, &parts[i]) != 0) {
            st = QN_E_NOMEM;
            break;
        }
        started = i;
    }
    run_range(&parts[0]);
    for (uint32_t i = 1; i <= started; i++) pthread_join(ids[i], NULL);
    for (uint32_t i = started + 1; i < threads; i++) run_range(&parts[i]); /* not started */
    return st;
}
