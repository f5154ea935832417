#include "base/settings.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The transport: UCX when it starts, else MPI (README, EPMPI_TRANSPORT). */
/* (clang-format 14 would spread the braces over lines.) */
/* clang-format off */
#define EP_CONFIG_DEFAULTS \
    {.wait = EP_WAIT_YIELD, .eager_limit = EP_EAGER_LIMIT_DEFAULT, .transport = EP_TRANSPORT_AUTO, .shm = 1}
/* clang-format on */

ep_config_t ep_config = EP_CONFIG_DEFAULTS;

static int parse_long(const char *s, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end != '\0' || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

static const char *const wait_names[] = {"spin", "yield", "sleep"};

const char *ep_config_wait_name(ep_wait_policy_t w) { return wait_names[w]; }

static const char *const transport_names[] = {"auto", "ucx", "mpi"};
static const char *const p2p_path_names[] = {"auto", "engine", "mpich"};
static const char *const coll_algorithm_names[] = {"auto", "gathered"};
static const char *const threads_names[] = {"openmp", "first-call"};

const char *ep_config_transport_name(ep_transport_t t) { return transport_names[t]; }

/* A variable that names one of n values: its index, -1 when unset or
 * empty, -2 (with the message in err) for anything else. */
static int parse_choice(const char *name, const char *const *names, int n, const char *accepted, char *err,
                        size_t errlen)
{
    const char *s = getenv(name);
    if (!s || !*s)
        return -1;
    for (int i = 0; i < n; i++)
        if (!strcmp(s, names[i]))
            return i;
    snprintf(err, errlen, "%s='%s' is not valid: use %s", name, s, accepted);
    return -2;
}

/* An on/off variable: unset, empty, 0 or 1. */
static int parse_switch(const char *name, int *out, char *err, size_t errlen)
{
    const char *s = getenv(name);
    long v;
    if (!s || !*s)
        return 0;
    if (parse_long(s, 0, 1, &v)) {
        snprintf(err, errlen, "%s='%s' is not valid: use 0 or 1", name, s);
        return -1;
    }
    *out = (int)v;
    return 0;
}

int ep_config_load(char *err, size_t errlen)
{
    ep_config_t c = EP_CONFIG_DEFAULTS;
    const char *s;
    long v;

    if ((s = getenv("EPMPI_ENDPOINTS")) && *s) {
        if (parse_long(s, 1, EP_MAX_ENDPOINTS_PER_PROCESS, &v)) {
            snprintf(err, errlen,
                     "EPMPI_ENDPOINTS='%s' is not valid: give the number of endpoints per process, "
                     "an integer from 1 to %d",
                     s, EP_MAX_ENDPOINTS_PER_PROCESS);
            return -1;
        }
        c.endpoints = (int)v;
    }
    int choice;
    if ((choice = parse_choice("EPMPI_WAIT", wait_names, 3, "spin, yield or sleep", err, errlen)) == -2)
        return -1;
    if (choice >= 0)
        c.wait = (ep_wait_policy_t)choice;
    if ((s = getenv("EPMPI_EAGER_LIMIT")) && *s) {
        if (parse_long(s, 0, EP_EAGER_LIMIT_MAX, &v)) {
            snprintf(err, errlen, "EPMPI_EAGER_LIMIT='%s' is not valid: give a byte count from 0 to %u", s,
                     EP_EAGER_LIMIT_MAX);
            return -1;
        }
        c.eager_limit = (size_t)v;
    }
    if (parse_switch("EPMPI_VERBOSE", &c.verbose, err, errlen) || parse_switch("EPMPI_DEBUG", &c.debug, err, errlen) ||
        parse_switch("EPMPI_STATS", &c.stats, err, errlen))
        return -1;
    /* Whether the file can be written is checked at MPI_Init, where it is
     * created (diag.c). */
    if ((s = getenv("EPMPI_STATS_FILE")) && *s) {
        c.stats_file = s;
        c.stats |= EP_STATS_CSV;
    }
    if ((choice = parse_choice("EPMPI_TRANSPORT", transport_names, 3, "auto, ucx or mpi", err, errlen)) == -2)
        return -1;
    if (choice >= 0)
        c.transport = (ep_transport_t)choice;
    if ((s = getenv("EPMPI_WORKERS")) && *s) {
        if (parse_long(s, 1, EP_UCX_WORKERS_MAX, &v)) {
            snprintf(err, errlen, "EPMPI_WORKERS='%s' is not valid: give a number of workers from 1 to %d", s,
                     EP_UCX_WORKERS_MAX);
            return -1;
        }
        c.ucx_workers = (int)v;
    }
    if (parse_switch("EPMPI_SHM", &c.shm, err, errlen))
        return -1;
    if ((choice = parse_choice("EPMPI_COLL_ALGORITHM", coll_algorithm_names, 2, "auto or gathered", err, errlen)) == -2)
        return -1;
    if (choice >= 0)
        c.coll_gathered = choice;
    if ((choice = parse_choice("EPMPI_P2P_PATH", p2p_path_names, 3, "auto, engine or mpich", err, errlen)) == -2)
        return -1;
    if (choice >= 0)
        c.p2p_path = (ep_p2p_path_t)choice;
    if ((choice = parse_choice("EPMPI_THREADS", threads_names, 2, "openmp or first-call", err, errlen)) == -2)
        return -1;
    if (choice >= 0)
        c.threads_by_call = choice;
    ep_config = c;
    return 0;
}
