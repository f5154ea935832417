// C++ std::thread programs as endpoint users, one per shape kind:
//
// - world mode (PxT): with EPMPI_THREADS=first-call (set here unless the
//   environment sets it), MPI_Init's thread and T-1 std::threads are the T
//   ranks of their process: a ring with wildcard receives, an Allreduce
//   and a Barrier on MPI_COMM_WORLD; a second team of new std::threads,
//   started one after another, gets endpoints 1, 2, ... again in arrival
//   order;
// - explicit shapes (P:a,b,..): MPI_Comm_create_endpoints gives process p
//   its a_p endpoints, each driven by a std::thread; then a thread
//   communicator (MPIX_Threadcomm_init) for a_p std::threads per process,
//   started and finished twice by new threads each time, their ranks
//   taken at MPIX_Threadcomm_start.
#include "epmpi.h"

#include <mpi.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

// Provided by the preloaded libepmpi.so, not by the MPICH we link with.
#pragma weak MPI_Comm_create_endpoints
#pragma weak MPIX_Threadcomm_init
#pragma weak MPIX_Threadcomm_start
#pragma weak MPIX_Threadcomm_finish
#pragma weak MPIX_Threadcomm_free

#define CHECK(cond, ...)                                                         \
    do {                                                                         \
        if (!(cond)) {                                                           \
            std::fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
            std::fprintf(stderr, __VA_ARGS__);                                   \
            std::fprintf(stderr, "\n");                                          \
            std::fflush(stderr);                                                 \
            PMPI_Abort(MPI_COMM_WORLD, 1);                                       \
            _exit(1);                                                            \
        }                                                                        \
    } while (0)
#define OK(call) CHECK((call) == MPI_SUCCESS, "%s failed", #call)

// One round on comm from one rank: its rank, a ring with wildcard
// receives, an Allreduce of the ranks and a Barrier.  Returns the rank.
static int round_on(MPI_Comm comm, int tag)
{
    int r, s;
    OK(MPI_Comm_rank(comm, &r));
    OK(MPI_Comm_size(comm, &s));
    for (int i = 0; i < 40; i++) {
        int out[2] = {r, i}, in[2] = {-1, -1};
        MPI_Request rq;
        MPI_Status st;
        OK(MPI_Irecv(in, 2, MPI_INT, MPI_ANY_SOURCE, tag, comm, &rq));
        OK(MPI_Send(out, 2, MPI_INT, (r + 1) % s, tag, comm));
        OK(MPI_Wait(&rq, &st));
        CHECK(in[0] == (r + s - 1) % s && in[1] == i && st.MPI_SOURCE == in[0], "rank %d of %d: got (%d,%d) from %d", r,
              s, in[0], in[1], st.MPI_SOURCE);
    }
    long mine = r, sum = -1;
    OK(MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, comm));
    CHECK(sum == (long)s * (s - 1) / 2, "Allreduce over %d ranks gave %ld", s, sum);
    OK(MPI_Barrier(comm));
    return r;
}

// Makes threads take their turns one after another (arrival order).
class Turns
{
  public:
    void wait_for(int turn)
    {
        std::unique_lock<std::mutex> l(m_);
        cv_.wait(l, [&] { return next_ == turn; });
    }
    void done()
    {
        {
            std::lock_guard<std::mutex> l(m_);
            next_++;
        }
        cv_.notify_all();
    }

  private:
    std::mutex m_;
    std::condition_variable cv_;
    int next_ = 1;
};

static void world_mode(int T)
{
    int r0, size;
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &r0));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    CHECK(r0 % T == 0 && size % T == 0, "MPI_Init's thread is rank %d of %d, not endpoint 0", r0, size);
    for (int team = 1; team <= 2; team++) {
        Turns turns;
        std::vector<int> got(T, -1);
        std::vector<std::thread> threads;
        for (int i = 1; i < T; i++)
            threads.emplace_back([&, i] {
                turns.wait_for(i);
                OK(MPI_Comm_rank(MPI_COMM_WORLD, &got[i])); // the first call takes the endpoint
                turns.done();
                CHECK(round_on(MPI_COMM_WORLD, team) == got[i], "a thread's rank changed");
            });
        CHECK(round_on(MPI_COMM_WORLD, team) == r0, "MPI_Init's thread changed rank");
        for (auto &t : threads)
            t.join();
        for (int i = 1; i < T; i++)
            CHECK(got[i] == r0 + i, "team %d: the std::thread arriving %d-th is rank %d, expected %d", team, i, got[i],
                  r0 + i);
    }
}

static void explicit_endpoints(int n, int first, int total)
{
    std::vector<MPI_Comm> eps(n > 0 ? n : 1);
    OK(MPI_Comm_create_endpoints(MPI_COMM_WORLD, n, MPI_INFO_NULL, eps.data()));
    std::vector<std::thread> threads;
    for (int i = 0; i < n; i++)
        threads.emplace_back([&, i] {
            int r = round_on(eps[i], 7), s;
            OK(MPI_Comm_size(eps[i], &s));
            CHECK(r == first + i && s == total, "endpoint %d: rank %d of %d, expected %d of %d", i, r, s, first + i,
                  total);
            OK(MPI_Comm_free(&eps[i]));
        });
    for (auto &t : threads)
        t.join();
}

static void thread_communicator(int n, int first, int total)
{
    MPI_Comm tc;
    OK(MPIX_Threadcomm_init(MPI_COMM_WORLD, n, &tc));
    for (int region = 0; region < 2; region++) {
        std::atomic<unsigned> ranks{0};
        std::vector<std::thread> threads;
        for (int i = 0; i < n; i++)
            threads.emplace_back([&] {
                OK(MPIX_Threadcomm_start(tc));
                int r = round_on(tc, 8 + region), s;
                OK(MPI_Comm_size(tc, &s));
                CHECK(r >= first && r < first + n && s == total, "thread communicator: rank %d of %d", r, s);
                ranks.fetch_or(1u << (r - first));
                OK(MPIX_Threadcomm_finish(tc));
            });
        for (auto &t : threads)
            t.join();
        CHECK(ranks.load() == (1u << n) - 1, "region %d: the threads' ranks were 0x%x", region, ranks.load());
    }
    OK(MPIX_Threadcomm_free(&tc));
}

int main(int argc, char **argv)
{
    const char *world = std::getenv("EPMPI_ENDPOINTS");
    int T = world ? std::atoi(world) : 0, provided, wr, ws;
    if (T > 0)
        setenv("EPMPI_THREADS", "first-call", 0);
    alarm(60);
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (T > 0) {
        world_mode(T);
    } else {
        OK(PMPI_Comm_rank(MPI_COMM_WORLD, &wr));
        OK(PMPI_Comm_size(MPI_COMM_WORLD, &ws));
        CHECK(argc > 1, "explicit shapes pass the endpoints per process as argv[1]");
        // This process's count, and those before it, from "a,b,c".
        std::vector<int> counts;
        for (const char *p = argv[1]; p; p = std::strchr(p, ','), p = p ? p + 1 : p)
            counts.push_back(std::atoi(p));
        CHECK((int)counts.size() == ws, "%zu counts for %d processes", counts.size(), ws);
        int first = 0, total = 0;
        for (int q = 0; q < ws; q++) {
            first += q < wr ? counts[q] : 0;
            total += counts[q];
        }
        CHECK(counts[wr] > 0 && counts[wr] <= 32, "1 to 32 endpoints per process here");
        explicit_endpoints(counts[wr], first, total);
        thread_communicator(counts[wr], first, total);
    }
    MPI_Finalize();
    return 0;
}
