# API, collectives and error tests (shapes in test/mpi/api.list).
