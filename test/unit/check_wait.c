/* Waiting (wait.h): a wait notes the CPU its thread is on, and a wait
 * whose partner was last seen on that CPU skips to yielding, as does
 * every wait on a crowded node, unless EPMPI_WAIT=spin; a partner
 * elsewhere or unknown keeps the spinning;
 * without senders of CPUs (no node inboxes) a wait does not look; a
 * fallback's sleeps (ep_fallback_sleep) back off while it finds nothing. */
#define _GNU_SOURCE
#include "base/wait.h"

#include "base/settings.h"
#include "unit.h"

#include <check.h>
#include <sched.h>

/* Pins the calling thread to the CPU it is on, so that its CPU does not
 * change between the wait's look and the test's; returns that CPU + 1. */
static int pinned(void)
{
    int cpu = sched_getcpu();
    ck_assert_int_ge(cpu, 0);
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    ck_assert_int_eq(sched_setaffinity(0, sizeof set, &set), 0);
    ck_assert_int_eq(sched_getcpu(), cpu);
    return cpu + 1;
}

/* The rounds of a fresh wait after its first back-off, with the partner
 * last seen on CPU partner_cpu - 1 (0: unknown). */
static unsigned first_backoff(int partner_cpu)
{
    ep_backoff_t b = EP_BACKOFF_INIT;
    ep_wait_cpu_hints = 1;
    ep_wait_partner_cpu = partner_cpu;
    ep_backoff(&b);
    return b.rounds;
}

START_TEST(a_wait_notes_its_cpu)
{
    int me = pinned();
    ep_thread_cpu = 0;
    ck_assert_uint_eq(first_backoff(0), 1);
    ck_assert_int_eq(ep_thread_cpu, me);
}
END_TEST

START_TEST(partner_on_this_cpu_yields_at_once) { ck_assert_uint_eq(first_backoff(pinned()), EP_SPIN_ROUNDS + 1); }
END_TEST

START_TEST(partner_elsewhere_or_unknown_spins)
{
    ck_assert_uint_eq(first_backoff(pinned() + 1), 1);
    ck_assert_uint_eq(first_backoff(0), 1);
}
END_TEST

START_TEST(no_hints_no_look)
{
    ep_backoff_t b = EP_BACKOFF_INIT;
    int me = pinned();
    ep_wait_cpu_hints = 0;
    ep_thread_cpu = 0;
    ep_wait_partner_cpu = me;
    ep_backoff(&b);
    ck_assert_uint_eq(b.rounds, 1);
    ck_assert_int_eq(ep_thread_cpu, 0);
}
END_TEST

/* More endpoints than CPUs on the node: every wait yields at once, with
 * CPU hints or without, and still notes its CPU for the hints. */
START_TEST(crowded_node_yields_at_once)
{
    int me = pinned();
    ep_wait_crowded = 1;
    ep_thread_cpu = 0;
    ck_assert_uint_eq(first_backoff(0), EP_SPIN_ROUNDS + 1);
    ck_assert_int_eq(ep_thread_cpu, me);
    ep_wait_cpu_hints = 0;
    ep_backoff_t b = EP_BACKOFF_INIT;
    ep_backoff(&b);
    ck_assert_uint_eq(b.rounds, EP_SPIN_ROUNDS + 1);
    ep_config.wait = EP_WAIT_SPIN;
    ck_assert_uint_eq(first_backoff(0), 1);
    ep_config.wait = EP_WAIT_YIELD;
    ep_wait_crowded = 0;
}
END_TEST

/* The progress helper's sleeps: at the longest while idle, the shortest
 * after work, doubling back up. */
START_TEST(fallback_sleeps_back_off)
{
    ck_assert_int_eq(ep_fallback_sleep(32, 0, 1, 32), 32);
    ck_assert_int_eq(ep_fallback_sleep(32, 1, 1, 32), 1);
    long s = 1, seen[6];
    for (int i = 0; i < 6; i++)
        seen[i] = s = ep_fallback_sleep(s, 0, 1, 32);
    ck_assert_int_eq(seen[0], 2);
    ck_assert_int_eq(seen[3], 16);
    ck_assert_int_eq(seen[4], 32);
    ck_assert_int_eq(seen[5], 32);
    ck_assert_int_eq(ep_fallback_sleep(20, 0, 1, 32), 32); /* never past the most */
}
END_TEST

START_TEST(wait_spin_never_yields)
{
    int me = pinned();
    ep_config.wait = EP_WAIT_SPIN;
    ck_assert_uint_eq(first_backoff(me), 1);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("wait");
    TCase *tc = tcase_create("wait");
    tcase_add_test(tc, a_wait_notes_its_cpu);
    tcase_add_test(tc, partner_on_this_cpu_yields_at_once);
    tcase_add_test(tc, partner_elsewhere_or_unknown_spins);
    tcase_add_test(tc, no_hints_no_look);
    tcase_add_test(tc, crowded_node_yields_at_once);
    tcase_add_test(tc, fallback_sleeps_back_off);
    tcase_add_test(tc, wait_spin_never_yields);
    suite_add_tcase(s, tc);
    return ep_unit_run(s);
}
