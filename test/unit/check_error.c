/* Error codes: classes survive, messages are kept, MPICH codes are not
 * ours.  A message for stderr leaves in one write. */
#include "base/error.h"

#include "unit.h"

#include <check.h>
#include <stdlib.h>
#include <pthread.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* ep_say writes a long message at once: on a SOCK_SEQPACKET socket each
 * write is one packet, so one receive gets all of it (glibc's fprintf to
 * stderr sends 128 bytes a packet from glibc 2.37 on). */
START_TEST(say_writes_once)
{
    char line[1500], got[4096];
    int sv[2], saved = dup(2);
    for (size_t i = 0; i < sizeof line - 1; i++)
        line[i] = (char)('a' + i % 26);
    line[sizeof line - 1] = '\0';
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
    ck_assert_int_ge(saved, 0);
    dup2(sv[0], 2);
    ep_say("epmpi: %s\n", line);
    dup2(saved, 2);
    close(saved);
    ssize_t n = recv(sv[1], got, sizeof got, 0);
    close(sv[0]);
    close(sv[1]);
    ck_assert_int_eq((int)n, (int)strlen("epmpi: ") + (int)sizeof line - 1 + 1);
    ck_assert(!memcmp(got, "epmpi: ", 7) && !memcmp(got + 7, line, sizeof line - 1) && got[n - 1] == '\n');
}
END_TEST

START_TEST(code_keeps_class_and_message)
{
    int code = ep_error_code_make(MPI_ERR_RANK, "MPI_Send: invalid rank %d", 9);
    int cls = -1, len = 0;
    char buf[MPI_MAX_ERROR_STRING];
    ck_assert(ep_error_code_class(code, &cls));
    ck_assert_int_eq(cls, MPI_ERR_RANK);
    ck_assert(ep_error_code_string(code, buf, &len));
    ck_assert_str_eq(buf, "MPI_Send: invalid rank 9");
    ck_assert_int_eq(len, (int)strlen(buf));
    ck_assert_int_gt(code, 0);
#ifndef OPEN_MPI /* MPICH's codes go up to its MPI_ERR_LASTCODE; Open MPI's stops at its classes (92), \
                    beyond which lie added codes, as epmpi's are */
    ck_assert_int_le(code, MPI_ERR_LASTCODE);
#endif
}
END_TEST

START_TEST(mpich_codes_are_not_ours)
{
    int cls;
    ck_assert(!ep_error_code_class(MPI_SUCCESS, &cls));
    ck_assert(!ep_error_code_class(MPI_ERR_TRUNCATE, &cls));
    /* MPICH-style dynamic code: bit 30 plus a generic index. */
    ck_assert(!ep_error_code_class(0x40000000 | (5 << 8) | 3, &cls));
}
END_TEST

START_TEST(endpoints_class_has_text)
{
    char buf[MPI_MAX_ERROR_STRING];
    int len;
    ck_assert(ep_error_code_string(MPI_ERR_ENDPOINTS, buf, &len));
    ck_assert_ptr_nonnull(strstr(buf, "MPI_ERR_ENDPOINTS"));
}
END_TEST

START_TEST(overwritten_slot_falls_back_to_class_text)
{
    int first = ep_error_code_make(MPI_ERR_TAG, "first");
    for (int i = 0; i < 1500; i++)
        ep_error_code_make(MPI_ERR_COUNT, "filler %d", i);
    char buf[MPI_MAX_ERROR_STRING];
    int len;
    ck_assert(ep_error_code_string(first, buf, &len));
    ck_assert_str_eq(buf, "invalid tag");
}
END_TEST

static void *storm(void *arg)
{
    (void)arg;
    for (int i = 0; i < 3000; i++)
        ep_error_code_make(MPI_ERR_COUNT, "another thread's error %d", i);
    return NULL;
}

/* Other threads' errors, however many, leave a thread its own last ones. */
START_TEST(own_codes_survive_other_threads)
{
    int mine = ep_error_code_make(MPI_ERR_ARG, "MPI_Errhandler_set: errhandler is MPI_ERRHANDLER_NULL");
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, storm, NULL), 0);
    pthread_join(t, NULL);
    char buf[MPI_MAX_ERROR_STRING];
    int len;
    ck_assert(ep_error_code_string(mine, buf, &len));
    ck_assert_str_eq(buf, "MPI_Errhandler_set: errhandler is MPI_ERRHANDLER_NULL");
}
END_TEST

START_TEST(status_table_maps_classes)
{
    ck_assert_int_eq(ep_status_class(EP_OK), MPI_SUCCESS);
    ck_assert_int_eq(ep_status_class(EP_ERR_TRUNCATE), MPI_ERR_TRUNCATE);
    ck_assert_int_eq(ep_status_class(EP_ERR_ENDPOINTS), MPI_ERR_ENDPOINTS);
    ck_assert_str_eq(ep_status_text(EP_ERR_RANK), "invalid rank");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("error");
    TCase *tc = tcase_create("codes");
    tcase_add_test(tc, code_keeps_class_and_message);
    tcase_add_test(tc, say_writes_once);
    tcase_add_test(tc, mpich_codes_are_not_ours);
    tcase_add_test(tc, endpoints_class_has_text);
    tcase_add_test(tc, overwritten_slot_falls_back_to_class_text);
    tcase_add_test(tc, own_codes_survive_other_threads);
    tcase_add_test(tc, status_table_maps_classes);
    suite_add_tcase(s, tc);
    return ep_unit_run(s);
}
