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

/* Bundled level `name` (data/levels/NAME.json, or under QN_DATA_DIR) and
** its first goal; fails the test when it does not load. */
static qn_level *load_level_goal(const char *name, qn_vec2 *goal) {
    const char *dir = getenv("QN_DATA_DIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/levels/%s.json", dir ? dir : "data", name);
    qn_level *lv = NULL;
    qn_error e;
    if (qn_level_load_file(path, NULL, &lv, &e) != QN_OK) fail_msg("%s: %s", path, e.message);
    const char *gname;
    assert_int_equal(qn_level_goal(lv, 0, &gname, goal), QN_OK);
    return lv;
}

#endif
