#include "core/group.h"

#include <stdlib.h>
#include <string.h>

ep_group_t *ep_group_new(const ep_gid_t *members, int n, ep_gid_t me)
{
    ep_group_t *g = calloc(1, sizeof *g);
    if (!g)
        return NULL;
    g->obj.kind = EP_OBJ_GROUP;
    g->size = n;
    g->me = me;
    g->members = malloc(sizeof *g->members * (size_t)(n ? n : 1));
    if (!g->members) {
        free(g);
        return NULL;
    }
    memcpy(g->members, members, sizeof *members * (size_t)n);
    g->handle = EP_HANDLE_NEW(MPI_Group, ep_registry_add(EP_HTYPE_GROUP, &g->obj), MPI_GROUP_NULL);
    if (g->handle == MPI_GROUP_NULL) {
        free(g->members);
        free(g);
        return NULL;
    }
    return g;
}

void ep_group_free(ep_group_t *g)
{
    ep_registry_remove(EP_HID(g->handle));
    free(g->members);
    free(g);
}

ep_status_t ep_group_members(MPI_Group h, const ep_gid_t **members, int *n, int *owned)
{
    *owned = 0;
    if (ep_group_handle_is_ep(h)) {
        ep_group_t *g = ep_group_get(h);
        if (!g)
            return EP_ERR_GROUP;
        *members = g->members;
        *n = g->size;
        return EP_OK;
    }
    /* A classic group: its processes, named by their world ranks. */
    int size;
    if (h == MPI_GROUP_NULL || PMPI_Group_size(h, &size) != MPI_SUCCESS)
        return EP_ERR_GROUP;
    int *ranks = malloc(sizeof(int) * (size_t)(size ? size : 1)),
        *wranks = malloc(sizeof(int) * (size_t)(size ? size : 1));
    ep_gid_t *m = malloc(sizeof *m * (size_t)(size ? size : 1));
    MPI_Group wg;
    if (!ranks || !wranks || !m) {
        free(ranks);
        free(wranks);
        free(m);
        return EP_ERR_NO_MEM;
    }
    for (int i = 0; i < size; i++)
        ranks[i] = i;
    PMPI_Comm_group(MPI_COMM_WORLD, &wg);
    PMPI_Group_translate_ranks(h, size, ranks, wg, wranks);
    PMPI_Group_free(&wg);
    for (int i = 0; i < size; i++)
        m[i] = (ep_gid_t){0, (uint64_t)(uint32_t)wranks[i]};
    free(ranks);
    free(wranks);
    *members = m;
    *n = size;
    *owned = 1;
    return EP_OK;
}

static int gid_eq(ep_gid_t a, ep_gid_t b) { return a.origin == b.origin && a.index == b.index; }

static int gid_cmp(const void *x, const void *y)
{
    const ep_gid_t *a = x, *b = y;
    if (a->origin != b->origin)
        return a->origin < b->origin ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;
}

int ep_gid_rank(const ep_gid_t *members, int n, ep_gid_t x)
{
    for (int i = 0; i < n; i++)
        if (gid_eq(members[i], x))
            return i;
    return MPI_UNDEFINED;
}

/* Sorted copy for membership tests in O(log n). */
static ep_gid_t *sorted_copy(const ep_gid_t *a, int n)
{
    ep_gid_t *s = malloc(sizeof *s * (size_t)(n ? n : 1));
    if (s) {
        memcpy(s, a, sizeof *a * (size_t)n);
        qsort(s, (size_t)n, sizeof *s, gid_cmp);
    }
    return s;
}

static int in_sorted(const ep_gid_t *s, int n, ep_gid_t x)
{
    return bsearch(&x, s, (size_t)n, sizeof x, gid_cmp) != NULL;
}

ep_status_t ep_group_setop(const ep_gid_t *a, int na, const ep_gid_t *b, int nb, ep_group_setop_t op, ep_gid_t **out,
                           int *nout)
{
    ep_gid_t *sb = sorted_copy(b, nb), *res = malloc(sizeof *res * (size_t)(na + nb + 1));
    if (!sb || !res) {
        free(sb);
        free(res);
        return EP_ERR_NO_MEM;
    }
    int k = 0;
    /* MPI: union is a's members, then b's that are not in a; intersection
     * and difference keep a's order. */
    for (int i = 0; i < na; i++) {
        int inb = in_sorted(sb, nb, a[i]);
        if (op == EP_GROUP_UNION || (op == EP_GROUP_INTERSECTION) == inb)
            res[k++] = a[i];
    }
    if (op == EP_GROUP_UNION) {
        ep_gid_t *sa = sorted_copy(a, na);
        if (!sa) {
            free(sb);
            free(res);
            return EP_ERR_NO_MEM;
        }
        for (int j = 0; j < nb; j++)
            if (!in_sorted(sa, na, b[j]))
                res[k++] = b[j];
        free(sa);
    }
    free(sb);
    *out = res;
    *nout = k;
    return EP_OK;
}

int ep_group_compare(const ep_gid_t *a, int na, const ep_gid_t *b, int nb)
{
    if (na != nb)
        return MPI_UNEQUAL;
    if (!memcmp(a, b, sizeof *a * (size_t)na))
        return MPI_IDENT;
    ep_gid_t *sa = sorted_copy(a, na), *sb = sorted_copy(b, nb);
    int res = (sa && sb && !memcmp(sa, sb, sizeof *sa * (size_t)na)) ? MPI_SIMILAR : MPI_UNEQUAL;
    free(sa);
    free(sb);
    return res;
}
