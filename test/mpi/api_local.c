/* Local calls that take a communicator on endpoint communicators:
 * MPI_Pack / MPI_Unpack / MPI_Pack_size (and their MPI_Count forms) work
 * with MPI_COMM_WORLD in world mode, and packed data travels between
 * endpoints as MPI_PACKED; MPI_Topo_test says MPI_UNDEFINED; MPI_Attr_get
 * answers like MPI_Comm_get_attr; MPI_Comm_set_info / get_info and
 * MPI_Comm_dup_with_info keep hints per endpoint. */
#include "eptest.h"

int main(int argc, char **argv)
{
    int provided;
    ept_require_world();
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
#pragma omp parallel
    {
        int rank, size, psize = 0, pos = 0, topo = -1, flag = 0, *ub;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        MPI_Comm_size(MPI_COMM_WORLD, &size);
        int vals[3] = {rank, rank * 2, rank * 3};
        double d = rank + 0.5;
        EPT_OK(MPI_Pack_size(3, MPI_INT, MPI_COMM_WORLD, &psize));
        int dsize;
        EPT_OK(MPI_Pack_size(1, MPI_DOUBLE, MPI_COMM_WORLD, &dsize));
        psize += dsize;
        char *buf = malloc((size_t)psize), *in = malloc((size_t)psize);
        EPT_OK(MPI_Pack(vals, 3, MPI_INT, buf, psize, &pos, MPI_COMM_WORLD));
        EPT_OK(MPI_Pack(&d, 1, MPI_DOUBLE, buf, psize, &pos, MPI_COMM_WORLD));
        int right = (rank + 1) % size, left = (rank + size - 1) % size;
        MPI_Status st;
        EPT_OK(MPI_Sendrecv(buf, pos, MPI_PACKED, right, 5, in, psize, MPI_PACKED, left, 5, MPI_COMM_WORLD, &st));
        int got[3], upos = 0, n;
        double gd;
        MPI_Get_count(&st, MPI_PACKED, &n);
        EPT_OK(MPI_Unpack(in, n, &upos, got, 3, MPI_INT, MPI_COMM_WORLD));
        EPT_OK(MPI_Unpack(in, n, &upos, &gd, 1, MPI_DOUBLE, MPI_COMM_WORLD));
        EPT_CHECK(got[0] == left && got[1] == 2 * left && got[2] == 3 * left && gd == left + 0.5,
                  "unpacked %d %d %d %g from %d", got[0], got[1], got[2], gd, left);
#if EP_HAVE_MPI_Pack_c
        MPI_Count csize = 0, cpos = 0;
        EPT_OK(MPI_Pack_size_c(3, MPI_INT, MPI_COMM_WORLD, &csize));
        EPT_OK(MPI_Pack_c(vals, 3, MPI_INT, buf, csize, &cpos, MPI_COMM_WORLD));
        cpos = 0;
        EPT_OK(MPI_Unpack_c(buf, csize, &cpos, got, 3, MPI_INT, MPI_COMM_WORLD));
        EPT_CHECK(got[0] == rank && got[2] == 3 * rank, "MPI_Pack_c round trip gave %d %d", got[0], got[2]);
#endif
        EPT_OK(MPI_Topo_test(MPI_COMM_WORLD, &topo));
        EPT_CHECK(topo == MPI_UNDEFINED, "MPI_Topo_test gave %d", topo);
        EPT_OK(MPI_Attr_get(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag));
        EPT_CHECK(flag && *ub >= (1 << 28) - 1, "MPI_Attr_get(MPI_TAG_UB)");
        /* Info hints are kept per endpoint and follow MPI_Comm_dup_with_info:
         * MPI's own assertions on every MPI; a key the MPI does not know for
         * communicators is ignored, as the MPI ignores it (MPI-4.0 7.4.4
         * allows it). */
        MPI_Info info, hints;
        MPI_Comm dc;
        char val[32];
        int vflag = 0;
        MPI_Info_create(&info);
        MPI_Info_set(info, "mpi_assert_no_any_tag", rank % 2 ? "true" : "false");
        MPI_Info_set(info, "epmpi_test_unknown_hint", "dropped");
        EPT_OK(MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &dc));
        EPT_OK(MPI_Comm_get_info(dc, &hints));
        MPI_Info_get(hints, "mpi_assert_no_any_tag", sizeof val - 1, val, &vflag);
        EPT_CHECK(vflag && !strcmp(val, rank % 2 ? "true" : "false"), "MPI_Comm_get_info after dup_with_info");
        MPI_Info_get(hints, "epmpi_test_unknown_hint", sizeof val - 1, val, &vflag);
        EPT_CHECK(!vflag, "MPI_Comm_dup_with_info kept a hint MPICH does not know");
        MPI_Info_free(&hints);
        /* MPI_Comm_set_info, the same. */
        EPT_OK(MPI_Comm_set_info(dc, info));
        EPT_OK(MPI_Comm_get_info(dc, &hints));
        MPI_Info_get(hints, "epmpi_test_unknown_hint", sizeof val - 1, val, &vflag);
        EPT_CHECK(!vflag, "MPI_Comm_set_info kept a hint MPICH does not know");
        MPI_Info_get(hints, "mpi_assert_no_any_tag", sizeof val - 1, val, &vflag);
        EPT_CHECK(vflag, "MPI_Comm_set_info dropped a hint MPICH knows");
        MPI_Info_free(&hints);
        /* MPI_INFO_NULL: a duplicate without hints (MPI-4.0 7.4.2: the old
         * communicator's hints are not copied), as MPICH does. */
        MPI_Comm dn[2];
        MPI_Request dreq;
        EPT_OK(MPI_Comm_dup_with_info(dc, MPI_INFO_NULL, &dn[0]));
#if EP_HAVE_MPI_Comm_idup_with_info
        EPT_OK(MPI_Comm_idup_with_info(dc, MPI_INFO_NULL, &dn[1], &dreq));
        EPT_OK(MPI_Wait(&dreq, MPI_STATUS_IGNORE));
#else /* MPI 4.0's: not in this MPI */
        (void)dreq;
        EPT_OK(MPI_Comm_dup_with_info(dc, MPI_INFO_NULL, &dn[1]));
#endif
        for (int k = 0; k < 2; k++) {
            int dsize = -1, dres = -1;
            EPT_OK(MPI_Comm_size(dn[k], &dsize));
            EPT_OK(MPI_Comm_compare(dc, dn[k], &dres));
            EPT_CHECK(dres == MPI_CONGRUENT, "%s with MPI_INFO_NULL: MPI_Comm_compare gave %d",
                      k ? "MPI_Comm_idup_with_info" : "MPI_Comm_dup_with_info", dres);
            EPT_OK(MPI_Comm_get_info(dn[k], &hints));
            MPI_Info_get(hints, "mpi_assert_no_any_tag", sizeof val - 1, val, &vflag);
            EPT_CHECK(!vflag, "%s with MPI_INFO_NULL kept the old communicator's hint",
                      k ? "MPI_Comm_idup_with_info" : "MPI_Comm_dup_with_info");
            MPI_Info_free(&hints);
            EPT_OK(MPI_Comm_free(&dn[k]));
        }
        /* Nothing set: only epmpi's own epmpi_p2p_path (world_ranks checks its
         * value) and, for the engine between processes, epmpi_transport. */
        EPT_OK(MPI_Comm_get_info(MPI_COMM_WORLD, &hints));
        int nkeys = -1, wsize = 1, wants;
        char key[MPI_MAX_INFO_KEY + 1] = "", key2[MPI_MAX_INFO_KEY + 1] = "";
        MPI_Comm_size(MPI_COMM_WORLD, &wsize);
        MPI_Info_get(hints, "epmpi_p2p_path", sizeof val - 1, val, &vflag);
        wants = 1 + (wsize > ept_world_endpoints() && strcmp(val, "mpich") != 0);
        MPI_Info_get_nkeys(hints, &nkeys);
        if (nkeys >= 1)
            MPI_Info_get_nthkey(hints, 0, key);
        if (nkeys >= 2)
            MPI_Info_get_nthkey(hints, 1, key2);
        EPT_CHECK(nkeys == wants && !strcmp(key, "epmpi_p2p_path") && (wants == 1 || !strcmp(key2, "epmpi_transport")),
                  "MPI_Comm_get_info on MPI_COMM_WORLD: %d keys (expected %d), '%s' '%s'", nkeys, wants, key, key2);
        MPI_Info_free(&hints);
        MPI_Info_free(&info);
        EPT_OK(MPI_Comm_free(&dc));
        free(buf);
        free(in);
    }
    MPI_Finalize();
    return 0;
}
