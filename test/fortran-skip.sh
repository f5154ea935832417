#!/bin/sh
# Stands for the Fortran tests when configure found no mpifort.
echo "skip: the Fortran tests (test/mpi/f_*.f90) need MPICH's mpifort, which configure did not find;"
echo "      apt-get install libmpich-dev (it brings mpifort and gfortran), then run configure again"
exit 77
