// A host model of the Blackwell family's kernel (backends/cuda/sm100/gemm_tcgen05.cuh), built on
// the kernel's own index arithmetic (sm100/layout.h): it runs the kernel's schedule on the CPU
// with byte arrays standing in for each CTA's shared memory and tensor memory, and the
// documented behaviour of the hardware operations the kernel issues standing in for them:
//   - a TMA tiled load writes its box densely, innermost dimension first, zeros outside the
//     tensor, with the 128-byte swizzle where the map has it;
//   - tcgen05.cp 32x128b.warpx4 puts the 32 rows x 16 bytes of a shared-memory tile into four
//     columns of every lane quarter (lane 32 q + r, column c + j: bytes 4 j.. of row r);
//   - tcgen05.mma reads its operands through the shared-memory descriptors (start, stride,
//     swizzle as address bits), M and N and the formats from the instruction descriptor, A row i
//     from CTA i / 128 of a pair and B column n from CTA n / (N / 2), the scale of row i from lane
//     i % 128, column base + (i % 128) / 32 (B: + 4 (n / 128)), byte sf_id + the scale's index;
//   - tcgen05.ld 32x32b gives lane l of warp w lane 32 (w % 4) + l's columns.
// What it cannot show: that the hardware behaves as modelled (only a compute capability 10.x
// device can); what it does show: that the kernel's arithmetic, applied to that behaviour,
// computes the GEMM, on any shape.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "omnigemm/block_formats.h"
#include "omnigemm/epilogue.h"
#include "omnigemm/numeric.hpp"
#include "omnigemm/tile_schedule.h"
#include "sm100/layout.h"

namespace omnigemm::test::sm100_model {

using namespace omnigemm::detail::sm100;

// One operand as the kernel sees it: K-major rows in global memory, and packed scales.
struct GlobalOperand {
  const uint8_t* bytes = nullptr;
  int64_t row_bytes = 0, batch_bytes = 0;  // strides
  int rows = 0;
  int format = 0;                   // the instruction descriptor's format code
  bool mn_major = false;            // B N-contiguous: rows are K, `rows` is still N
  const uint8_t* scales = nullptr;  // packed (block-scaled kinds)
  int64_t scale_batch_bytes = 0;
  int scale_rows = 0, scale_cols = 0;  // stored (padded) rows and scale columns
};

struct Problem {
  Kind kind = Kind::f16;
  int m = 0, n = 0, k = 0, batch = 1;
  GlobalOperand a, b;
  float alpha = 1.0f;  // times the global factors
  int d_bytes = 4;     // D: f32, or 16-bit (bf16 when d_bf16)
  bool d_bf16 = false;
  bool tma_store = true;  // the plain epilogue through TMA stores, else the general one
};

// Deliberate faults, each of which the test expects to break the result (the model can fail).
enum class Fault { none, no_swizzle, sf_id_zero, pair_b_halves_swapped, staging_off_period };

struct Cta {
  std::vector<uint8_t> smem;
  std::vector<uint32_t> tmem;  // 128 lanes x 512 columns
  uint32_t& cell(int lane, int column) { return tmem[size_t(lane) * 512 + size_t(column)]; }
};

constexpr uint32_t kSmemBase = 1024;  // a 1024-byte aligned shared-memory window address

inline double decode_element(Kind k, int format, const uint8_t* row, int index) {
  switch (elem_bits(k)) {
    case 16: {
      uint16_t h;
      std::memcpy(&h, row + 2 * index, 2);
      return format == kFormatF16 ? numeric::f16_to_f32(h) : numeric::bf16_to_f32(h);
    }
    case 8:
      return format == kFormatE5M2 ? og_bf_e5m2_to_f32(row[index]) : og_bf_e4m3_to_f32(row[index]);
    default:
      return og_bf_e2m1_to_f32((row[index / 2] >> (4 * (index % 2))) & 15u);
  }
}

// The byte at row r, byte kb of a K-major operand through descriptor d, as the MMA reads it.
inline uint32_t descriptor_address(uint64_t d, int r, int kb, Fault fault) {
  uint32_t addr = desc_start(d) + uint32_t(r / 8) * desc_stride(d) + uint32_t(r % 8) * 128u + uint32_t(kb);
  if (desc_layout(d) == 2 && fault != Fault::no_swizzle) addr ^= ((addr >> 7) & 7u) << 4;  // 128-byte swizzle
  return addr;
}

class Model {
 public:
  Model(const Problem& p, const Geometry& g, int clusters, Fault fault = Fault::none) : p_(p), g_(g), fault_(fault) {
    ctas_.resize(size_t(g.cta_group));
    for (Cta& c : ctas_) {
      c.smem.assign(kSmemBase + shared_bytes(g), 0xee);  // stale bytes, never zeros
      c.tmem.assign(128 * 512, 0xffffffffu);             // NaN bit patterns
    }
    clusters_ = clusters;
  }

  // Runs cluster `cluster`'s work items; `store(batch, row, col, bytes)` receives each output of D
  // (see epilogue).
  template <class Store>
  void run_cluster(int cluster, Store&& store) {
    const int num_pid_m = (p_.m + block_m(g_) - 1) / block_m(g_), num_pid_n = (p_.n + g_.block_n - 1) / g_.block_n;
    const int total = og_work_count(num_pid_m, num_pid_n, 1, p_.batch);
    const uint32_t idesc =
        elem_bits(g_.kind) == 16 || g_.kind == Kind::f8f6f4
            ? idesc_dense(p_.a.format, p_.b.format, block_m(g_), g_.block_n)
            : idesc_block_scaled(p_.a.format, p_.b.format, g_.kind != Kind::mxf4nvf4, block_m(g_), g_.block_n);
    const uint32_t id = g_.b_mn ? idesc_b_mn_major(idesc) : idesc;
    int stage = 0, acc = 0;
    for (int w = og_persistent_first(cluster); w < total; w = og_persistent_next(w, clusters_)) {
      const OgWork item = og_work_item(w, num_pid_m, num_pid_n, 8, 1);
      const int m0 = item.pid_m * block_m(g_), n0 = item.pid_n * g_.block_n;
      const int d_col = acc_column(g_, acc);
      for (int kt = 0; kt < k_tiles(g_.kind, p_.k); ++kt) {
        for (int rank = 0; rank < g_.cta_group; ++rank) produce(rank, stage, kt, m0, n0, item.batch);
        consume(stage, kt, d_col, id);
        if (++stage == g_.stages) stage = 0;
      }
      for (int rank = 0; rank < g_.cta_group; ++rank) epilogue(rank, d_col, m0, n0, item.batch, store);
      if (++acc == acc_stages(g_)) acc = 0;
      ++items_;
    }
  }
  int items() const { return items_; }

 private:
  // TMA: the operand box {128 bytes of K, rows} at (k_coordinate, row0, batch), 128-byte swizzle.
  void load_operand(Cta& c, uint32_t dst, const GlobalOperand& o, int kt, int row0, int box_rows, int batch) {
    const int map_unit = elem_bits(g_.kind) == 16 ? 2 : 1;
    const int64_t k_bytes = elem_bits(g_.kind) == 4 ? p_.k / 2 : int64_t(p_.k) * (elem_bits(g_.kind) / 8);
    for (int r = 0; r < box_rows; ++r)
      for (int kb = 0; kb < 128; ++kb) {
        const int64_t gk = int64_t(k_coordinate(g_.kind, kt)) * map_unit + kb, gr = row0 + r;
        const uint8_t v = gr < o.rows && gk < k_bytes ? o.bytes[batch * o.batch_bytes + gr * o.row_bytes + gk] : 0;
        c.smem[dst + sw128_offset(r, kb)] = v;
      }
  }  // TMA: an MN-major B box {64 columns, 64 K rows} at (n0, k_coordinate, batch), 128-byte swizzle.
  void load_mn_box(Cta& c, uint32_t dst, int kt, int n0, int batch) {
    const GlobalOperand& o = p_.b;
    for (int r = 0; r < block_k(g_.kind); ++r)
      for (int nb = 0; nb < 128; ++nb) {
        const int64_t k = int64_t(k_coordinate(g_.kind, kt)) + r, n = n0 + nb / 2;
        const uint8_t v = k < p_.k && n < o.rows ? o.bytes[batch * o.batch_bytes + k * o.row_bytes + n * 2 + nb % 2] : 0;
        c.smem[dst + sw128_offset(r, nb)] = v;
      }
  }
  // TMA: the scale box {128 words, T tiles, groups, 1} at (0, tile, group, batch), no swizzle.
  void load_scales(Cta& c, uint32_t dst, const GlobalOperand& o, int tile, int group, int groups, int batch) {
    const int T = sf_tiles_per_stage(g_.kind);
    for (int gb = 0; gb < groups; ++gb)
      for (int t = 0; t < T; ++t)
        for (int byte = 0; byte < 512; ++byte) {
          const int col_tile = tile + t, row_group = group + gb;
          const bool inside = col_tile < o.scale_cols / 4 && row_group < o.scale_rows / 128;
          const int64_t src = o.scale_batch_bytes * batch + int64_t(row_group * (o.scale_cols / 4) + col_tile) * 512 + byte;
          c.smem[dst + uint32_t((gb * T + t) * 512 + byte)] = inside ? o.scales[src] : 0;
        }
  }
  void produce(int rank, int stage, int kt, int m0, int n0, int batch) {
    Cta& c = ctas_[size_t(rank)];
    const int a_row = a_row0(g_, m0, rank), b_row = b_row0(g_, n0, rank);
    load_operand(c, kSmemBase + a_offset(g_, stage), p_.a, kt, a_row, 128, batch);
    if (g_.b_mn)
      for (int j = 0; j < b_mn_boxes(g_); ++j)
        load_mn_box(c, kSmemBase + b_box_offset(g_, stage, j), kt, b_row + kMnBoxColumns * j, batch);
    else
      load_operand(c, kSmemBase + b_offset(g_, stage), p_.b, kt, b_row, b_rows_per_cta(g_), batch);
    if (block_scaled(g_.kind)) {
      load_scales(c, kSmemBase + sfa_tile_offset(g_, stage, 0), p_.a, sf_tile_coordinate(g_.kind, kt),
                  sf_group_coordinate(a_row), 1, batch);
      load_scales(c, kSmemBase + sfb_tile_offset(g_, stage, 0, 0), p_.b, sf_tile_coordinate(g_.kind, kt),
                  sf_group_coordinate(n0), sfb_groups(g_), batch);
    }
  }
  // tcgen05.cp 32x128b.warpx4, in every CTA of the group (each from its own shared memory).
  void copy_scales(int column, uint64_t desc) {
    for (Cta& c : ctas_)
      for (int lane = 0; lane < 128; ++lane)
        for (int j = 0; j < 4; ++j) {
          uint32_t v;
          std::memcpy(&v, &c.smem[desc_start(desc) + uint32_t(lane % 32) * desc_stride(desc) / 8 + 4u * uint32_t(j)], 4);
          c.cell(lane, column + j) = v;
        }
  }
  double scale_value(Cta& c, int lane, int column, int byte) {
    const uint32_t code = (c.cell(lane, column) >> (8 * byte)) & 0xffu;
    return g_.kind == Kind::mxf4nvf4 ? og_bf_e4m3_to_f32(code & 0x7fu) : og_bf_e8m0_to_f32(code);
  }
  void mma(uint32_t d, uint64_t a, uint64_t b, uint32_t idesc, int sfa, int sfb, bool accumulate) {
    const int M = idesc_m(idesc), N = idesc_n(idesc), K = mma_k(g_.kind);
    const int half_n = N / g_.cta_group;
    const int fa = idesc_a_format(idesc), fb = idesc_b_format(idesc);
    const bool scaled = block_scaled(g_.kind);
    const int vec = scaled ? scale_vec(g_.kind) : K;
    std::vector<double> bv(size_t(N) * K), sb(size_t(N) * (K / vec), 1.0);
    for (int n = 0; n < N; ++n) {
      int owner = n / half_n, row = n % half_n;
      if (fault_ == Fault::pair_b_halves_swapped && g_.cta_group == 2) owner ^= 1;
      Cta& c = ctas_[size_t(owner)];
      std::vector<uint8_t> line(32);
      if (idesc_b_is_mn_major(idesc)) {  // element k of column `row`: K row k of its 64-column box
        for (int k = 0; k < K; ++k)
          for (int byte = 0; byte < 2; ++byte) {
            uint32_t addr = desc_start(b) + uint32_t(row / 64) * desc_leading(b) + uint32_t(k / 8) * desc_stride(b) +
                            uint32_t(k % 8) * 128u + uint32_t(row % 64) * 2u + uint32_t(byte);
            if (fault_ != Fault::no_swizzle) addr ^= ((addr >> 7) & 7u) << 4;
            line[size_t(2 * k + byte)] = c.smem[addr];
          }
      } else {
        for (int kb = 0; kb < 32; ++kb) line[size_t(kb)] = c.smem[descriptor_address(b, row, kb, fault_)];
      }
      for (int k = 0; k < K; ++k) bv[size_t(n) * K + k] = decode_element(g_.kind, fb, line.data(), k);
    }
    for (int i = 0; i < M; ++i) {
      Cta& c = ctas_[size_t(i / 128)];
      const int r = i % 128;
      std::vector<uint8_t> line(32);
      for (int kb = 0; kb < 32; ++kb) line[size_t(kb)] = c.smem[descriptor_address(a, r, kb, fault_)];
      for (int n = 0; n < N; ++n) {
        double sum = 0;
        for (int s = 0; s < K / vec; ++s) {
          double part = 0;
          for (int k = s * vec; k < (s + 1) * vec; ++k)
            part += decode_element(g_.kind, fa, line.data(), k) * bv[size_t(n) * K + k];
          if (scaled) {
            const int ida = fault_ == Fault::sf_id_zero ? 0 : idesc_sfa_id(idesc),
                      idb = fault_ == Fault::sf_id_zero ? 0 : idesc_sfb_id(idesc);
            part *= scale_value(c, r, sfa + r / 32, ida + s) *
                    scale_value(c, n % 128, sfb + 4 * (n / 128) + (n % 128) / 32, idb + s);
          }
          sum += part;
        }
        uint32_t& cell = c.cell(r, int(d & 0xffff) + n);
        const float prev = accumulate ? og_bits_float(cell) : 0.0f;
        cell = og_float_bits(prev + float(sum));
      }
    }
  }
  void consume(int stage, int kt, int d_col, uint32_t idesc) {
    const bool scaled = block_scaled(g_.kind);
    if (scaled)
      for (int t = 0; t < sf_tiles_in_stage(g_.kind, p_.k, kt); ++t) {
        copy_scales(sfa_tile_column(g_, t), smem_desc_sf(kSmemBase + sfa_tile_offset(g_, stage, t)));
        for (int gb = 0; gb < sfb_groups(g_); ++gb)
          copy_scales(sfb_tile_column(g_, t, gb), smem_desc_sf(kSmemBase + sfb_tile_offset(g_, stage, t, gb)));
      }
    const uint64_t a = smem_desc_sw128(kSmemBase + a_offset(g_, stage)),
                   b = b_stage_desc(g_, kSmemBase + b_offset(g_, stage));
    const int mmas = mmas_in_stage(g_.kind, p_.k, kt);
    for (int kk = 0; kk < mmas; ++kk) {
      const uint32_t id = scaled ? idesc_with_sf_ids(idesc, mma_sf_id(g_.kind, kk), mma_sf_id(g_.kind, kk)) : idesc;
      mma(uint32_t(d_col), desc_advance(a, kMmaBytesK * kk), desc_advance(b, b_mma_advance_bytes(g_) * kk), id,
          scaled ? mma_sfa_column(g_, kk) : 0, scaled ? mma_sfb_column(g_, kk) : 0, kt > 0 || kk > 0);
    }
  }
  // The epilogue warps (tile_store.cuh) with alpha only, D of d_bytes (4: f32, 2: f16 or bf16):
  // the plain path stages 128 bytes per row with the 128-byte swizzle and a TMA store reads the
  // 32-row box back (the swizzle as address bits, so the staging must be 1024-byte aligned);
  // the general path stages 32 f32 columns and lane l finishes column l of every row. `store`
  // gets D's bytes of each output inside D (the TMA store and the bounds checks drop the rest).
  template <class Store>
  void epilogue(int rank, int d_col, int m0, int n0, int batch, Store& store) {
    Cta& c = ctas_[size_t(rank)];
    const int db = p_.d_bytes;
    auto round = [&](float x) -> uint32_t {
      if (db == 4) return og_float_bits(x);
      return p_.d_bf16 ? numeric::f32_to_bf16(x) : numeric::f32_to_f16(x);
    };
    for (int warp = 2; warp < 2 + kEpilogueWarps; ++warp) {
      const int quarter = epilogue_lane_quarter(warp), row0 = d_row0(g_, m0, rank) + 32 * quarter;
      const uint32_t staging = kSmemBase + staging_offset(g_) + uint32_t(warp - 2) * kStagingBytesPerWarp +
                               (fault_ == Fault::staging_off_period ? 512u : 0u);
      const uint32_t taddr = tmem_addr(32 * quarter, d_col);
      // tcgen05.ld: warp w reaches only lanes 32 (w % 4)..
      if (int(taddr >> 16) != 32 * (warp % 4)) throw std::logic_error("tcgen05.ld outside the warp's lane quarter");
      auto acc = [&](int lane, int column) {
        return og_bits_float(c.cell(int(taddr >> 16) + lane, int(taddr & 0xffff) + column));
      };
      auto put = [&](uint32_t addr, uint32_t word) { std::memcpy(&c.smem[addr], &word, 4); };
      const int cols = p_.tma_store ? chunk_columns(db) : 32;
      for (int col = 0; col < g_.block_n; col += cols) {
        for (int lane = 0; lane < 32; ++lane) {
          uint32_t words[32];
          for (int i = 0; i < 32; ++i) {
            if (!p_.tma_store)
              words[i] = og_float_bits(acc(lane, col + i));
            else if (db == 4)
              words[i] = round(og_epilogue_sum(p_.alpha, acc(lane, col + i), false, 0.0f, 0.0f, false, 0.0f));
            else
              words[i] = round(og_epilogue_sum(p_.alpha, acc(lane, col + 2 * i), false, 0.0f, 0.0f, false, 0.0f)) |
                         round(og_epilogue_sum(p_.alpha, acc(lane, col + 2 * i + 1), false, 0.0f, 0.0f, false, 0.0f)) << 16;
          }
          for (int u = 0; u < 8; ++u)
            for (int w = 0; w < 4; ++w) put(staging + sw128_offset(lane, 16 * u) + 4u * uint32_t(w), words[4 * u + w]);
        }
        for (int r = 0; r < 32; ++r)
          for (int j = 0; j < cols; ++j) {
            const int gm = row0 + r, gn = n0 + col + j;
            if (gm >= p_.m || gn >= p_.n) continue;
            uint8_t bytes[4];
            if (p_.tma_store) {  // the TMA store's read of box element (row r, column j)
              uint32_t addr = staging + uint32_t(r * 128 + j * db);
              addr ^= ((addr >> 7) & 7u) << 4;
              std::memcpy(bytes, &c.smem[addr], size_t(db));
            } else {  // finish_general_block: lane j reads column j of row r
              float v;
              std::memcpy(&v, &c.smem[staging + sw128_offset(r, 4 * j)], 4);
              const uint32_t bits = round(og_epilogue_sum(p_.alpha, v, false, 0.0f, 0.0f, false, 0.0f));
              std::memcpy(bytes, &bits, size_t(db));
            }
            store(batch, gm, gn, bytes);
          }
      }
    }
  }

  Problem p_;
  Geometry g_;
  Fault fault_;
  int clusters_ = 1, items_ = 0;
  std::vector<Cta> ctas_;
};

}  // namespace omnigemm::test::sm100_model
