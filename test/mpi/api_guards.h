/* The generated coverage calls (api_guards.gen.c) and their driver
 * (api_guards.c). */
#ifndef EPT_API_GUARDS_H
#define EPT_API_GUARDS_H

#include "eptest.h"

/* Calls every generated entry point with the given endpoint handles (see
 * api_guards.gen.c); returns the number of calls. */
int ept_call_guards(MPI_Comm comm, MPI_Group group, MPI_Request request, MPI_Message message, MPI_Win win,
                    MPI_File file);

/* Checks one return code: an error of class cls whose message names call
 * and contains word. */
void ept_guard_expect(int rc, int cls, const char *call, const char *word);

#endif
