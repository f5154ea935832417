/* Shared runner for the Check unit tests: one suite per program. */
#ifndef EP_UNIT_H
#define EP_UNIT_H

#include <check.h>
#include <stdlib.h>

/* Runs suite s and returns the process exit status. */
static inline int ep_unit_run(Suite *s)
{
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

#endif
