/* Internal assertions.
 *
 * EP_ASSERT(cond) states an invariant of the engine: a lock its caller must
 * hold, a state a request must be in.  It is checked in debug and sanitizer
 * builds (configure --enable-asserts, on by default with --enable-sanitizers
 * and --enable-tsan) and compiles to nothing in release builds, so it may
 * sit on the message path.  A failed assertion names the file, line and
 * condition and aborts the process.
 *
 * Not for user input (the entry points check it once and raise MPI errors)
 * and not for what arrives from another process: a header is checked in
 * every build (net.c), since a corrupt one must never index memory. */
#ifndef EP_INVARIANT_H
#define EP_INVARIANT_H

#ifdef EP_ASSERTS
void ep_assert_failed(const char *file, int line, const char *cond) __attribute__((noreturn, cold));
#define EP_ASSERT(cond) ((cond) ? (void)0 : ep_assert_failed(__FILE__, __LINE__, #cond))
#else
#define EP_ASSERT(cond) ((void)0)
#endif

#endif
