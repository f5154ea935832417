#!/bin/sh
# Stands for the Fortran tests when configure found no mpifort.
echo "skip: the Fortran tests (test/mpi/f_*.f90) need the MPI's mpifort, which configure did not find;"
echo "      install the MPI's development package (libmpich-dev or libopenmpi-dev: it brings mpifort"
echo "      and gfortran), then run configure again"
exit 77
