/*
** walkcheck.h: the tests' one check that units walking a sim world all
** arrive, without a wall contact and without getting stuck. Include after
** cmocka.h and sim.h.
*/
#ifndef QN_TEST_WALKCHECK_H
#define QN_TEST_WALKCHECK_H

/* Runs `units` units (seed, steps of 0.2) in w and fails the test, naming
** `what` and the radius, unless every one arrives cleanly. */
static void expect_all_arrive(const qn_sim_world *w, uint32_t units, uint64_t seed,
                              const char *what, float radius) {
    qn_sim_opts o = {0};
    o.units = units;
    o.seed = seed;
    o.step = 0.2f;
    qn_sim_result r;
    assert_int_equal(qn_sim_run(w, &o, &r), QN_OK);
    if (r.arrived != r.units || r.wall_contacts || r.stuck)
        fail_msg("%s radius %g: arrived %u/%u, contacts %llu, stuck %u", what, (double)radius,
                 r.arrived, r.units, (unsigned long long)r.wall_contacts, r.stuck);
}

#endif
