# Point-to-point tests (shapes in test/mpi/p2p.list).
