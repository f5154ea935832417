/* The graph topo_query and topo_neighbor build: a ring of n nodes with a
 * chord from node 0 to node n / 2 (several edges between the same nodes
 * on rings of one and two). */
#ifndef TOPO_COMMON_H
#define TOPO_COMMON_H

/* Node i's neighbours into nb (at most 4); returns how many. */
static inline int topo_ring_chord(int i, int n, int *nb)
{
    int k = 0;
    nb[k++] = (i + 1) % n;
    nb[k++] = (i + n - 1) % n;
    if (i == 0)
        nb[k++] = n / 2;
    if (i == n / 2)
        nb[k++] = 0;
    return k;
}

/* MPI_Graph_create's index and edges for it (free both). */
static inline int topo_ring_chord_arrays(int n, int **index, int **edges)
{
    int total = 0;
    *index = malloc(sizeof(int) * (size_t)n);
    *edges = malloc(sizeof(int) * 4 * (size_t)n);
    for (int i = 0; i < n; i++)
        (*index)[i] = total += topo_ring_chord(i, n, *edges + total);
    return total;
}

#endif
