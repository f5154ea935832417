/* Shared runner for the Check unit tests: one suite per program. */
#ifndef EP_UNIT_H
#define EP_UNIT_H

#include <check.h>
#include <stdlib.h>

static inline int ep_unit_run_mode(Suite *s, enum fork_status fork)
{
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, fork);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* Runs suite s and returns the process exit status. */
static inline int ep_unit_run(Suite *s) { return ep_unit_run_mode(s, CK_FORK_GETENV); }
/* The same in this process: for suites that use MPI, which a forked child
 * cannot. */
static inline int ep_unit_run_nofork(Suite *s) { return ep_unit_run_mode(s, CK_NOFORK); }

#endif
