# Steady-state per-K-tile trace for backends/cuda/sm90/gemm_tma_wgmma.cuh (build with -DOG_TIMELINE,
# run with OMNIGEMM_CUDA_PDL=0). For the last 8 K-tiles of a CTA's first work item and the first 16 of its
# second (24 indices), it records: the producer's TMA issue (slots 2+i), consumer 0's thread 0 before
# (26+i) and after (50+i) its full-barrier wait, and when it released that K-tile's stage (74+i).
# Slot 0 entry, 1 after griddepcontrol.wait. The 20th launch of a process prints "TS <block> <chunk> ..."
# lines (25 values each); tl_steady_summary.py reduces them.
import sys
p = sys.argv[1] if len(sys.argv) > 1 else 'backends/cuda/sm90/gemm_tma_wgmma.cuh'
s = open(p).read()
def rep(old, new):
    global s
    assert s.count(old) == 1, (old, s.count(old))
    s = s.replace(old, new)
rep('''namespace omnigemm::detail::sm90 {

struct KernelArgs {''', '''namespace omnigemm::detail::sm90 {
#ifdef OG_TIMELINE
__device__ unsigned long long og_tl[160][100];
__device__ unsigned og_tl_launches;
__device__ __forceinline__ unsigned long long og_now() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
// K-tile kt of the j-th work item of this CTA (n K-tiles): its trace index, or -1.
__device__ __forceinline__ int og_tl_index(int j, int kt, int n) {
  if (j == 0 && kt >= n - 8) return 16 + kt - (n - 8);
  if (j == 1 && kt < 16) return kt;
  return -1;
}
#define OG_TL(slot) (og_tl[blockIdx.x][(slot)] = og_now())
#else
#define OG_TL(slot) ((void)0)
#endif

struct KernelArgs {''')
rep('''  extern __shared__ __align__(1024) unsigned char smem_raw[];
''', '''  extern __shared__ __align__(1024) unsigned char smem_raw[];
  if (threadIdx.x == 0) OG_TL(0);
''')
rep('''  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;" :::);
''', '''  asm volatile("griddepcontrol.wait;" ::: "memory");
  if (threadIdx.x == 0) OG_TL(1);
  asm volatile("griddepcontrol.launch_dependents;" :::);
''')
rep('''      for (int w = og_persistent_first(cluster); w < total_work; w = og_persistent_next(w, clusters)) {
        const OgWork item = work_item(w);
        const int m0 = (item.pid_m * S::CLUSTER_M + rank_m) * S::BLOCK_M, n0 = item.pid_n * S::BLOCK_N;
        int kt_begin, kt_end;
        og_split_k_range(p.k_tiles, p.split_k, item.k_slice, kt_begin, kt_end);
        for (int kt = kt_begin; kt < kt_end; ++kt) {
          mbar_wait(&empty[stage], phase ^ 1u);  // a fresh barrier counts as released
''', '''      int tl_j = 0;
      for (int w = og_persistent_first(cluster); w < total_work; w = og_persistent_next(w, clusters), ++tl_j) {
        const OgWork item = work_item(w);
        const int m0 = (item.pid_m * S::CLUSTER_M + rank_m) * S::BLOCK_M, n0 = item.pid_n * S::BLOCK_N;
        int kt_begin, kt_end;
        og_split_k_range(p.k_tiles, p.split_k, item.k_slice, kt_begin, kt_end);
        for (int kt = kt_begin; kt < kt_end; ++kt) {
          mbar_wait(&empty[stage], phase ^ 1u);  // a fresh barrier counts as released
#ifdef OG_TIMELINE
          if (const int ti = og_tl_index(tl_j, kt - kt_begin, kt_end - kt_begin); ti >= 0) OG_TL(2 + ti);
#endif
''')
rep('''        int previous = -1;
        for (int kt = 0; kt < item_k_tiles; ++kt) {
          mbar_wait(&full[stage], phase);
''', '''        int previous = -1;
#ifdef OG_TIMELINE
        const bool tl = consumer == 0 && t == 0;
#endif
        for (int kt = 0; kt < item_k_tiles; ++kt) {
#ifdef OG_TIMELINE
          const int ti = tl ? og_tl_index(j, kt, item_k_tiles) : -1;
          const int ti_prev = tl && kt > 0 ? og_tl_index(j, kt - 1, item_k_tiles) : -1;
          if (ti >= 0) OG_TL(26 + ti);
#endif
          mbar_wait(&full[stage], phase);
#ifdef OG_TIMELINE
          if (ti >= 0) OG_TL(50 + ti);
#endif
''')
rep('''          wgmma_wait<1>();
          if (previous >= 0 && lane == 0) release(&empty[previous]);
''', '''          wgmma_wait<1>();
          if (previous >= 0 && lane == 0) release(&empty[previous]);
#ifdef OG_TIMELINE
          if (ti_prev >= 0) OG_TL(74 + ti_prev);
#endif
''')
rep('''        wgmma_wait<0>();
#pragma unroll
        for (int r = 0; r < S::WG_M; ++r) fence_registers(acc[r]);
        if (previous >= 0 && lane == 0) release(&empty[previous]);
''', '''        wgmma_wait<0>();
#pragma unroll
        for (int r = 0; r < S::WG_M; ++r) fence_registers(acc[r]);
        if (previous >= 0 && lane == 0) release(&empty[previous]);
#ifdef OG_TIMELINE
        if (tl && item_k_tiles > 0) {
          if (const int tl_last = og_tl_index(j, item_k_tiles - 1, item_k_tiles); tl_last >= 0) OG_TL(74 + tl_last);
        }
#endif
''')
rep('''      while (kDefer && deferred.pending()) send_deferred_chunk();
    };''', '''      while (kDefer && deferred.pending()) send_deferred_chunk();
#ifdef OG_TIMELINE
      asm volatile("bar.sync 3, 256;" ::: "memory");
      if (consumer == 0 && t == 0) {
        const unsigned n = atomicAdd(&og_tl_launches, 1u);
        if (n / gridDim.x == 20) {
          volatile unsigned long long* r = og_tl[blockIdx.x];
          for (int c = 0; c < 4; ++c)
            printf("TS %d %d %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu\\n",
                   int(blockIdx.x), c, r[c * 25 + 0], r[c * 25 + 1], r[c * 25 + 2], r[c * 25 + 3], r[c * 25 + 4], r[c * 25 + 5],
                   r[c * 25 + 6], r[c * 25 + 7], r[c * 25 + 8], r[c * 25 + 9], r[c * 25 + 10], r[c * 25 + 11], r[c * 25 + 12],
                   r[c * 25 + 13], r[c * 25 + 14], r[c * 25 + 15], r[c * 25 + 16], r[c * 25 + 17], r[c * 25 + 18],
                   r[c * 25 + 19], r[c * 25 + 20], r[c * 25 + 21], r[c * 25 + 22], r[c * 25 + 23], r[c * 25 + 24]);
        }
        for (int i = 0; i < 100; ++i) og_tl[blockIdx.x][i] = 0;
      }
#endif
    };''')
open(p, 'w').write(s)
