// The epmpi demo for threads that are not OpenMP threads: a C++ program
// whose std::threads are ranks.  Run under
// `epmpiexec -n P -t T --threads first-call ./hello_threads T`: the thread
// that called MPI_Init and T-1 std::threads are the T ranks of each
// process (a thread takes its rank at its first call on MPI_COMM_WORLD);
// the ranks pass a token around a ring and sum their ranks.
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

static void rank_main(const char *who)
{
    int rank, size, token = 0, sum;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    // A ring: rank 0 starts the token, everyone adds one.
    if (rank == 0) {
        if (size > 1) {
            MPI_Send(&token, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
            MPI_Recv(&token, 1, MPI_INT, size - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    } else {
        MPI_Recv(&token, 1, MPI_INT, rank - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        token++;
        MPI_Send(&token, 1, MPI_INT, (rank + 1) % size, 0, MPI_COMM_WORLD);
    }
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    const char *proc = std::getenv("PMI_RANK"); // MPICH's launcher; Open MPI's:
    proc = proc ? proc : std::getenv("OMPI_COMM_WORLD_RANK");
    std::printf("process %s, %s: rank %d of %d in MPI_COMM_WORLD (token %d, sum of ranks %d)\n", proc ? proc : "?", who,
                rank, size, token, sum);
}

int main(int argc, char **argv)
{
    int provided;
    int threads = argc > 1 ? std::atoi(argv[1]) : 1; // ranks per process, the -t of epmpiexec
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    std::vector<std::thread> pool;
    std::vector<std::string> names(threads);
    for (int i = 1; i < threads; i++) {
        names[i] = "std::thread " + std::to_string(i);
        pool.emplace_back(rank_main, names[i].c_str());
    }
    rank_main("main thread");
    for (auto &t : pool)
        t.join();
    MPI_Finalize();
    return 0;
}
