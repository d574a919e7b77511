# Adds a per-CTA %globaltimer trace to backends/cuda/sm90/gemm_tma_wgmma.cuh as committed with this
# directory (run from the repository root, then build with -DCMAKE_CUDA_FLAGS=-DOG_TIMELINE and trace with
# OMNIGEMM_CUDA_PDL=0). The 20th launch of a process prints one "TL <block> <32 slots>" line per CTA;
# tl3.py summarises them. Slots: 0 entry, 1 after griddepcontrol.wait, 2/3 consumer 0/1 done, 4+j first
# request of work item j, 10+j its first data, 16+j its last wgmma retired, 22+j its epilogue done (j < 6),
# 28+j consumer ready to wait for item j's first K-tile (j < 4).
p='backends/cuda/sm90/gemm_tma_wgmma.cuh'
s=open(p).read()
def rep(old,new):
    global s
    assert s.count(old)==1, (old, s.count(old))
    s=s.replace(old,new)
rep('''namespace omnigemm::detail::sm90 {

struct KernelArgs {''','''namespace omnigemm::detail::sm90 {
#ifdef OG_TIMELINE
__device__ unsigned long long og_tl[160][32];
__device__ unsigned og_tl_launches;
__device__ __forceinline__ unsigned long long og_now() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
#define OG_TL(slot) (og_tl[blockIdx.x][(slot)] = og_now())
#else
#define OG_TL(slot) ((void)0)
#endif

struct KernelArgs {''')
rep('''  extern __shared__ __align__(1024) unsigned char smem_raw[];
''','''  extern __shared__ __align__(1024) unsigned char smem_raw[];
  if (threadIdx.x == 0) OG_TL(0);
''')
rep('''  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;" :::);
''','''  asm volatile("griddepcontrol.wait;" ::: "memory");
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
''','''      int tl_j = 0;
      for (int w = og_persistent_first(cluster); w < total_work; w = og_persistent_next(w, clusters), ++tl_j) {
        const OgWork item = work_item(w);
        const int m0 = (item.pid_m * S::CLUSTER_M + rank_m) * S::BLOCK_M, n0 = item.pid_n * S::BLOCK_N;
        int kt_begin, kt_end;
        og_split_k_range(p.k_tiles, p.split_k, item.k_slice, kt_begin, kt_end);
        for (int kt = kt_begin; kt < kt_end; ++kt) {
          mbar_wait(&empty[stage], phase ^ 1u);  // a fresh barrier counts as released
          if (kt == kt_begin && tl_j < 6) OG_TL(4 + tl_j);
''')
rep('''        int previous = -1;
        for (int kt = 0; kt < item_k_tiles; ++kt) {
          mbar_wait(&full[stage], phase);
''','''        int previous = -1;
        const bool tl = consumer == 0 && t == 0 && j < 6;
        if (tl && j < 4) OG_TL(28 + j);
        for (int kt = 0; kt < item_k_tiles; ++kt) {
          mbar_wait(&full[stage], phase);
          if (tl && kt == 0) OG_TL(10 + j);
''')
rep('''        wgmma_wait<0>();
#pragma unroll
        for (int r = 0; r < S::WG_M; ++r) fence_registers(acc[r]);
        if (previous >= 0 && lane == 0) release(&empty[previous]);
''','''        wgmma_wait<0>();
#pragma unroll
        for (int r = 0; r < S::WG_M; ++r) fence_registers(acc[r]);
        if (tl) OG_TL(16 + j);
        if (previous >= 0 && lane == 0) release(&empty[previous]);
''')
rep('''            deferred.template hold<false>(acc, p.ep.alpha, d, p.ep.d.sr, row0, n0, chunks, consumer, t);
          continue;''','''            deferred.template hold<false>(acc, p.ep.alpha, d, p.ep.d.sr, row0, n0, chunks, consumer, t);
          if (tl) OG_TL(22 + j);
          continue;''')
rep('''        store_tile<S::WG_M, S::CONSUMER_N>(acc, p.ep, item.batch, p.m, p.n, row0, n0, chunks, consumer, t, chunk_sequence);
''','''        store_tile<S::WG_M, S::CONSUMER_N>(acc, p.ep, item.batch, p.m, p.n, row0, n0, chunks, consumer, t, chunk_sequence);
        if (tl) OG_TL(22 + j);
''')
rep('''      while (kDefer && deferred.pending()) send_deferred_chunk();
    };''','''      while (kDefer && deferred.pending()) send_deferred_chunk();
#ifdef OG_TIMELINE
      if (t == 0) OG_TL(2 + consumer);
      asm volatile("bar.sync 3, 256;" ::: "memory");
      if (consumer == 0 && t == 0) {
        const unsigned n = atomicAdd(&og_tl_launches, 1u);
        if (n / gridDim.x == 20) {
          volatile unsigned long long* r = og_tl[blockIdx.x];
          printf("TL %d %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu\\n",
                 int(blockIdx.x), r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10], r[11], r[12], r[13], r[14],
                 r[15], r[16], r[17], r[18], r[19], r[20], r[21], r[22], r[23], r[24], r[25], r[26], r[27], r[28], r[29], r[30], r[31]);
        }
        for (int i = 0; i < 32; ++i) og_tl[blockIdx.x][i] = 0;
      }
#endif
    };''')
open(p,'w').write(s)
