#include "packed_gemm.hpp"

#include <algorithm>
#include <climits>
#include <cstdlib>

#include "cpu_epilogue.hpp"
#include "omnigemm/tile_schedule.h"
#include "packing.hpp"

namespace omnigemm::detail::cpu {

FloatBuffer::~FloatBuffer() { std::free(data_); }

bool FloatBuffer::reserve(size_t n) {
  if (n <= size_) return true;
  const size_t bytes = (n * sizeof(float) + 63) / 64 * 64;
  void* p = std::aligned_alloc(64, bytes);
  if (!p) return false;
  std::free(data_);
  data_ = static_cast<float*>(p);
  size_ = bytes / sizeof(float);
  return true;
}

namespace {

int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

constexpr int64_t kMaxPartialFloats = int64_t(4) << 20;  // W is capped at 16 MiB

// Thread t's share [begin, end) of `count` items split `parts` ways: the shared scheduler's even
// split (omnigemm/tile_schedule.h; counts here are row or column panels and batches, < 2^31).
void share(int64_t count, int parts, int t, int64_t& begin, int64_t& end) {
  int b, e;
  og_split_k_range(int(count), parts, t, b, e);
  begin = b;
  end = e;
}

// Chooses a tm x tn grid of the team over (row panels x column panels) that minimises the
// largest per-thread share; ties go to more row splits (each thread keeps whole B panels hot).
void team_grid(int team, int64_t row_panels, int64_t col_panels, int& tm, int& tn) {
  tm = team;
  tn = 1;
  int64_t best = INT64_MAX;
  for (int r = team; r >= 1; --r) {
    if (team % r) continue;
    const int c = team / r;
    const int64_t work = ((row_panels + r - 1) / r) * ((col_panels + c - 1) / c);
    if (work < best) { best = work; tm = r; tn = c; }
  }
}

struct BatchOperands {
  View a, b;
  KView a_blocked, b_blocked;  // block-scaled operands along K (B as N x K)
  EpilogueArgs epi;
  const char* bias_src = nullptr;
};

// Batch `batch` of a block-scaled operand as rows x K (B: operand_b).
KView blocked_batch(const Operand& o, bool operand_b, int64_t batch) {
  KView v = kview_of(o, operand_b);
  v.base += storage_bytes(o.dtype, batch * o.batch_stride);
  v.scales += batch * o.scale.batch_stride * o.scale.bytes;
  return v;
}

// Filled in place (the views point at its own KViews), hence no return by value.
void batch_operands(const Problem& p, int64_t batch, BatchOperands& o) {
  auto host = [](const og_memory& m) { return static_cast<const char*>(m.ptr) + m.offset; };
  if (p.k > 0) {
    o.a = {p.a.dtype, host(p.a.mem) + batch * p.a.batch_stride * dtype_bytes(p.a.dtype), p.a.stride_row, p.a.stride_col};
    o.b = {p.b.dtype, host(p.b.mem) + batch * p.b.batch_stride * dtype_bytes(p.b.dtype), p.b.stride_row, p.b.stride_col};
    o.a.tf32 = o.b.tf32 = p.compute_mode == OG_COMPUTE_TF32;
    if (p.a.scale.present()) {
      o.a_blocked = blocked_batch(p.a, false, batch);
      o.a.blocked = &o.a_blocked;
    }
    if (p.b.scale.present()) {
      o.b_blocked = blocked_batch(p.b, true, batch);
      o.b.blocked = &o.b_blocked;
    }
  }
  EpilogueArgs& e = o.epi;
  e.alpha = p.alpha;
  e.beta = p.beta;
  e.act = p.activation;
  e.slope = p.leaky_slope;
  e.bias_mode = p.bias_mode;
  if (p.c.present)
    e.c = {p.c.dtype, host(p.c.mem) + batch * p.c.batch_stride * dtype_bytes(p.c.dtype), p.c.stride_row, p.c.stride_col};
  e.d_dtype = p.d.dtype;
  e.d = const_cast<char*>(host(p.d.mem)) + batch * p.d.batch_stride * dtype_bytes(p.d.dtype);
  e.d_sr = p.d.stride_row;
  e.d_sc = p.d.stride_col;
  if (p.bias_mode != OG_BIAS_NONE)
    o.bias_src = host(p.bias) + batch * p.bias_batch_stride * dtype_bytes(p.bias_dtype);
}

// One batch, run by a team of `team` threads (member t). `shared` is the team leader's
// workspace (packed B and W are shared), `own` this member's (packed A, bias copy, tile).
// Every member runs this with the same arguments.
void gemm_batch(const Problem& p, const Plan& pl, int64_t batch, int t, int team, SpinBarrier& barrier,
                Workspace& shared, Workspace& own) {
  BatchOperands ops;
  batch_operands(p, batch, ops);
  EpilogueArgs& e = ops.epi;
  if (ops.bias_src) {  // each member converts the (short) bias vector for itself
    const int64_t len = p.bias_mode == OG_BIAS_PER_N ? p.n : p.m;
    float* dst = own.bias.data();
    with_loader(p.bias_dtype, ops.bias_src, [&](auto load) {
      for (int64_t i = 0; i < len; ++i) dst[i] = load(i);
    });
    e.bias = dst;
  }
  const MicroKernel& kern = pl.kernel;
  const int mr = kern.mr, nr = kern.nr;
  float* tile = own.tile.data();

  if (p.k == 0) {  // D = act(alpha * 0 + beta * C + bias): the epilogue on zero tiles, by row panels
    std::fill(tile, tile + mr * nr, 0.0f);
    int64_t rp0, rp1;
    share((p.m + mr - 1) / mr, team, t, rp0, rp1);
    for (int64_t rp = rp0; rp < rp1; ++rp)
      for (int64_t j0 = 0; j0 < p.n; j0 += nr) {
        const int64_t i0 = rp * mr;
        epilogue_tile(e, tile, nr, i0, j0, int(std::min<int64_t>(mr, p.m - i0)), int(std::min<int64_t>(nr, p.n - j0)));
      }
    return;
  }

  // Packed B is laid out as NR-column panels: the transposed view of op(B) packed in NR-row panels.
  const View bt{ops.b.dtype, ops.b.base, ops.b.sc, ops.b.sr, ops.b.blocked, ops.b.tf32};
  const int64_t chunk_rows = pl.partial_rows ? pl.partial_rows : p.m;
  for (int64_t m0 = 0; m0 < p.m; m0 += chunk_rows) {
    const int64_t mlen = std::min(chunk_rows, p.m - m0);
    const int64_t row_panels = (mlen + mr - 1) / mr;
    for (int64_t n0 = 0; n0 < p.n; n0 += pl.nc) {
      const int64_t nlen = std::min(pl.nc, p.n - n0);
      const int64_t col_panels = (nlen + nr - 1) / nr;
      // The team as a tm x tn grid over the region's panels: member t is the scheduler's work
      // item t of that grid (row-major: group 1, no split), and takes its even share of both.
      int tm, tn;
      team_grid(team, row_panels, col_panels, tm, tn);
      const OgWork cell = og_work_item(t, tm, tn, 1, 1);
      int64_t rp0, rp1, cp0, cp1;
      share(row_panels, tm, cell.pid_m, rp0, rp1);
      share(col_panels, tn, cell.pid_n, cp0, cp1);
      for (int64_t k0 = 0; k0 < p.k; k0 += pl.kc) {
        const int64_t klen = std::min(pl.kc, p.k - k0);
        const bool first = k0 == 0, last = k0 + klen >= p.k;
        // Pack B: the team splits the column panels.
        int64_t pb0, pb1;
        share(col_panels, team, t, pb0, pb1);
        if (pb1 > pb0)
          pack_panels(bt, n0 + pb0 * nr, std::min(nlen, pb1 * nr) - pb0 * nr, k0, klen, nr,
                      shared.b_pack.data() + pb0 * nr * klen);
        barrier.wait();
        for (int64_t ib = rp0 * mr; ib < rp1 * mr; ib += pl.mc) {  // MC blocks of my rows
          const int64_t ilen = std::min({pl.mc, rp1 * mr - ib, mlen - ib});
          if (ilen <= 0) break;
          pack_panels(ops.a, m0 + ib, ilen, k0, klen, mr, own.a_pack.data());
          const int64_t ipanels = (ilen + mr - 1) / mr;
          for (int64_t jp = cp0; jp < cp1; ++jp) {
            const float* bpanel = shared.b_pack.data() + jp * nr * klen;
            const int cols = int(std::min<int64_t>(nr, nlen - jp * nr));
            for (int64_t ip = 0; ip < ipanels; ++ip) {
              const float* apanel = own.a_pack.data() + ip * mr * klen;
              const int64_t row = ib + ip * mr;  // within the chunk
              float* dst;
              int64_t ldt;
              if (pl.partial_rows) {
                dst = shared.partial.data() + row * pl.nc + jp * nr;
                ldt = pl.nc;
              } else {
                dst = tile;
                ldt = nr;
              }
              kern.fn(klen, apanel, bpanel, dst, ldt, first ? 0 : 1);
              if (last)
                epilogue_tile(e, dst, ldt, m0 + row, n0 + jp * nr, int(std::min<int64_t>(mr, mlen - row)), cols);
            }
          }
        }
        barrier.wait();  // packed B is overwritten by the next K block
      }
    }
  }
}

}  // namespace

Plan make_plan(const Problem& p, const Config& cfg, const MicroKernel& k) {
  Plan pl;
  pl.kernel = k;
  pl.mc = round_up(std::max<int64_t>(cfg.block_m, k.mr), k.mr);
  pl.nc = round_up(std::max<int64_t>(cfg.block_n, k.nr), k.nr);
  pl.kc = std::max<int64_t>(cfg.block_k, 1);
  // Do not allocate for blocks larger than the problem.
  pl.mc = std::min(pl.mc, round_up(std::max<int64_t>(p.m, 1), k.mr));
  pl.nc = std::min(pl.nc, round_up(std::max<int64_t>(p.n, 1), k.nr));
  pl.kc = std::min(pl.kc, std::max<int64_t>(p.k, 1));
  if (p.k > pl.kc) {
    const int64_t rows_cap = std::max<int64_t>(pl.mc, kMaxPartialFloats / pl.nc / pl.mc * pl.mc);
    pl.partial_rows = std::min(round_up(p.m, k.mr), rows_cap);
    pl.partial_floats = size_t(pl.partial_rows * pl.nc);
  }
  pl.a_floats = size_t(pl.mc * pl.kc);
  pl.b_floats = size_t(pl.kc * pl.nc);
  pl.bias_floats = size_t(std::max(p.m, p.n));
  pl.tile_floats = size_t(k.mr * k.nr);
  return pl;
}

Status run_packed_gemm(const Problem& p, const Plan& pl, ThreadPool& pool, Workspace* workspaces) {
  const int threads = pool.size();
  // Small problems run on one thread; many small batches run one batch per thread (a batch is
  // a work item of the scheduler; each member takes an even share of consecutive batches).
  const double flops = 2.0 * double(p.m) * double(p.n) * double(std::max<int64_t>(p.k, 1));
  const bool tiny = flops < double(1 << 21);
  const bool batch_parallel = p.batch > 1 && (flops < double(1 << 24) || p.batch >= 4 * threads);
  const int team = tiny || batch_parallel ? 1 : threads;
  const int members = batch_parallel ? og_persistent_grid(int(p.batch), threads) : team;

  // Workspaces: every member needs its own A block, bias and tile; packed B and W are needed
  // by team leaders only (member 0 of the team, or every member when batch-parallel).
  for (int t = 0; t < members; ++t) {
    Workspace& w = workspaces[t];
    bool ok = w.a_pack.reserve(pl.a_floats) && w.bias.reserve(pl.bias_floats) && w.tile.reserve(pl.tile_floats);
    if (t == 0 || batch_parallel)
      ok = ok && w.b_pack.reserve(pl.b_floats) && w.partial.reserve(std::max<size_t>(pl.partial_floats, 1));
    if (!ok) return error(StatusCode::out_of_memory, "cpu backend: cannot allocate packing buffers");
  }

  if (members == 1) {
    SpinBarrier solo(1);
    for (int64_t b = 0; b < p.batch; ++b) gemm_batch(p, pl, b, 0, 1, solo, workspaces[0], workspaces[0]);
    return {};
  }
  if (batch_parallel) {
    pool.run([&](int t) {
      if (t >= members) return;
      SpinBarrier solo(1);
      int64_t b0, b1;
      share(p.batch, members, t, b0, b1);
      for (int64_t b = b0; b < b1; ++b) gemm_batch(p, pl, b, 0, 1, solo, workspaces[t], workspaces[t]);
    });
    return {};
  }
  SpinBarrier barrier(team);
  pool.run([&](int t) {
    for (int64_t b = 0; b < p.batch; ++b) gemm_batch(p, pl, b, t, team, barrier, workspaces[0], workspaces[t]);
  });
  return {};
}

}  // namespace omnigemm::detail::cpu
