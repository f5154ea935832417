/* Environment settings: good values load, bad ones name the variable. */
#include "base/settings.h"

#include "unit.h"

#include <check.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

static void clear(void)
{
    unsetenv("EPMPI_ENDPOINTS");
    unsetenv("EPMPI_WAIT");
    unsetenv("EPMPI_EAGER_LIMIT");
    unsetenv("EPMPI_VERBOSE");
    unsetenv("EPMPI_COLL_ALGORITHM");
    unsetenv("EPMPI_P2P_PATH");
    unsetenv("EPMPI_DEBUG");
    unsetenv("EPMPI_STATS");
    unsetenv("EPMPI_STATS_FILE");
    unsetenv("EPMPI_SHM");
    unsetenv("EPMPI_THREADS");
}

START_TEST(defaults)
{
    char err[256];
    clear();
    ck_assert_int_eq(ep_config_load(err, sizeof err), 0);
    ck_assert_int_eq(ep_config.endpoints, 0);
    ck_assert_int_eq(ep_config.wait, EP_WAIT_YIELD);
    ck_assert_int_eq(ep_config.shm, 1);
}
END_TEST

START_TEST(good_values)
{
    char err[256];
    clear();
    setenv("EPMPI_ENDPOINTS", "4", 1);
    setenv("EPMPI_WAIT", "sleep", 1);
    setenv("EPMPI_EAGER_LIMIT", "0", 1);
    ck_assert_int_eq(ep_config_load(err, sizeof err), 0);
    ck_assert_int_eq(ep_config.endpoints, 4);
    ck_assert_int_eq(ep_config.wait, EP_WAIT_SLEEP);
    ck_assert_uint_eq(ep_config.eager_limit, 0);
}
END_TEST

static const char *bad_endpoints[] = {"0", "-3", "abc", "1000000", "4x"};

START_TEST(bad_endpoints_named)
{
    char err[256];
    clear();
    setenv("EPMPI_ENDPOINTS", bad_endpoints[_i], 1);
    ck_assert_int_eq(ep_config_load(err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "EPMPI_ENDPOINTS"));
    ck_assert_ptr_nonnull(strstr(err, bad_endpoints[_i]));
}
END_TEST

/* The variables that are `auto` or one alternative. */
static const struct {
    const char *name, *alt, *bad;
    size_t field; /* the int in ep_config_t that the alternative sets */
} auto_or[] = {
    {"EPMPI_COLL_ALGORITHM", "gathered", "fast", offsetof(ep_config_t, coll_gathered)},
};

START_TEST(auto_or_alternative)
{
    char err[256];
    const int *field = (const int *)(const void *)((const char *)&ep_config + auto_or[_i].field);
    clear();
    ck_assert_int_eq(ep_config_load(err, sizeof err), 0);
    ck_assert_int_eq(*field, 0);
    setenv(auto_or[_i].name, "auto", 1);
    ck_assert_int_eq(ep_config_load(err, sizeof err), 0);
    ck_assert_int_eq(*field, 0);
    setenv(auto_or[_i].name, auto_or[_i].alt, 1);
    ck_assert_int_eq(ep_config_load(err, sizeof err), 0);
    ck_assert_int_eq(*field, 1);
    setenv(auto_or[_i].name, auto_or[_i].bad, 1);
    ck_assert_int_eq(ep_config_load(err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, auto_or[_i].name));
    ck_assert_ptr_nonnull(strstr(err, auto_or[_i].alt));
}
END_TEST

START_TEST(p2p_path_choices)
{
    static const struct {
        const char *value;
        ep_p2p_path_t path;
    } ok[] = {{"auto", EP_P2P_AUTO}, {"engine", EP_P2P_ENGINE}, {"mpich", EP_P2P_MPICH}};
    char err[256];
    clear();
    ck_assert_int_eq(ep_config_load(err, sizeof err), 0);
    ck_assert_int_eq(ep_config.p2p_path, EP_P2P_AUTO);
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        setenv("EPMPI_P2P_PATH", ok[i].value, 1);
        ck_assert_int_eq(ep_config_load(err, sizeof err), 0);
        ck_assert_int_eq(ep_config.p2p_path, ok[i].path);
    }
    setenv("EPMPI_P2P_PATH", "direct", 1);
    ck_assert_int_eq(ep_config_load(err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "EPMPI_P2P_PATH='direct'"));
    ck_assert_ptr_nonnull(strstr(err, "auto, engine or mpich"));
}
END_TEST

/* EPMPI_THREADS: openmp by default, first-call on request, nothing else. */
START_TEST(threads_rule)
{
    char err[256];
    clear();
    ck_assert_int_eq(ep_config_load(err, sizeof err), 0);
    ck_assert_int_eq(ep_config.threads_by_call, 0);
    setenv("EPMPI_THREADS", "first-call", 1);
    ck_assert_int_eq(ep_config_load(err, sizeof err), 0);
    ck_assert_int_eq(ep_config.threads_by_call, 1);
    setenv("EPMPI_THREADS", "openmp", 1);
    ck_assert_int_eq(ep_config_load(err, sizeof err), 0);
    ck_assert_int_eq(ep_config.threads_by_call, 0);
    setenv("EPMPI_THREADS", "pthreads", 1);
    ck_assert_int_eq(ep_config_load(err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "EPMPI_THREADS='pthreads'"));
    ck_assert_ptr_nonnull(strstr(err, "openmp or first-call"));
}
END_TEST

START_TEST(bad_wait_policy_lists_choices)
{
    char err[256];
    clear();
    setenv("EPMPI_WAIT", "busy", 1);
    ck_assert_int_eq(ep_config_load(err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "EPMPI_WAIT"));
    ck_assert_ptr_nonnull(strstr(err, "spin, yield or sleep"));
}
END_TEST

START_TEST(diagnostics)
{
    char err[256];
    clear();
    ck_assert_int_eq(ep_config_load(err, sizeof err), 0);
    ck_assert_int_eq(ep_config.debug, 0);
    ck_assert_int_eq(ep_config.stats, 0);
    setenv("EPMPI_DEBUG", "1", 1);
    setenv("EPMPI_STATS", "1", 1);
    ck_assert_int_eq(ep_config_load(err, sizeof err), 0);
    ck_assert_int_eq(ep_config.debug, 1);
    ck_assert_int_eq(ep_config.stats, EP_STATS_TABLE);
    /* A CSV file alone turns counting on, without the table. */
    unsetenv("EPMPI_STATS");
    setenv("EPMPI_STATS_FILE", "/tmp/x.csv", 1);
    ck_assert_int_eq(ep_config_load(err, sizeof err), 0);
    ck_assert_int_eq(ep_config.stats, EP_STATS_CSV);
    ck_assert_str_eq(ep_config.stats_file, "/tmp/x.csv");
    setenv("EPMPI_STATS", "2", 1);
    ck_assert_int_eq(ep_config_load(err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "EPMPI_STATS='2'"));
    ck_assert_ptr_nonnull(strstr(err, "use 0 or 1"));
}
END_TEST

START_TEST(node_inboxes_switch)
{
    char err[256];
    clear();
    setenv("EPMPI_SHM", "0", 1);
    ck_assert_int_eq(ep_config_load(err, sizeof err), 0);
    ck_assert_int_eq(ep_config.shm, 0);
    setenv("EPMPI_SHM", "yes", 1);
    ck_assert_int_eq(ep_config_load(err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "EPMPI_SHM='yes'"));
    ck_assert_ptr_nonnull(strstr(err, "use 0 or 1"));
    clear();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("settings");
    TCase *tc = tcase_create("environment");
    tcase_add_test(tc, defaults);
    tcase_add_test(tc, good_values);
    tcase_add_loop_test(tc, bad_endpoints_named, 0, (int)(sizeof bad_endpoints / sizeof *bad_endpoints));
    tcase_add_test(tc, bad_wait_policy_lists_choices);
    tcase_add_test(tc, threads_rule);
    tcase_add_loop_test(tc, auto_or_alternative, 0, (int)(sizeof auto_or / sizeof *auto_or));
    tcase_add_test(tc, p2p_path_choices);
    tcase_add_test(tc, diagnostics);
    tcase_add_test(tc, node_inboxes_switch);
    suite_add_tcase(s, tc);
    return ep_unit_run(s);
}
