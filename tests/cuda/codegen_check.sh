#!/usr/bin/env bash
# Checks the generated code of the CUDA kernel families without a GPU (CI has nvcc and ptxas but
# no cuobjdump; the H100 run checks the SASS, scripts/gpu_check.sh): the PTX of each family
# carries the instructions it is built on, and ptxas fits every mma.sync kernel in its register
# budget without spilling to local memory.
#   usage: codegen_check.sh <nvcc> <source dir> <work dir>
set -euo pipefail
nvcc="$1"; src="$2"; work="$3"
mkdir -p "$work"
flags=(-std=c++20 -O3 --expt-relaxed-constexpr -I"$src/engine/include" -I"$src/engine/src")
failures=0
expect() {  # <file> <fixed string> <what>
  local n
  n=$(grep -cF -- "$2" "$1" || true)
  if [ "$n" -gt 0 ]; then echo "ok    $3: $n lines with '$2'"; else echo "FAIL  $3: no '$2' in $(basename "$1")"; failures=$((failures + 1)); fi
}
verdict() {  # <test, evaluated> <what holds when it passes> <what was found when it fails>
  if eval "$1"; then echo "ok    $2"; else echo "FAIL  $3"; failures=$((failures + 1)); fi
}
# ptxas -v on a PTX file into $work/<name>.cubin, its report in $work/<name>.ptxas.log.
ptxas_v() {  # <arch> <ptx> <name>
  "$(dirname "$nvcc")/ptxas" -arch="$1" -v "$2" -o "$work/$3.cubin" 2> "$work/$3.ptxas.log" ||
    { echo "FAIL  ptxas $3:"; cat "$work/$3.ptxas.log"; failures=$((failures + 1)); }
}

# ptxas for sm_80 and sm_90 (or the given architectures) on <ptx>: at least <count> kernels
# whose mangled names start with <prefix>, none spilling to local memory (an empty prefix: every
# kernel, and every function ptxas reports), and the most registers a thread of theirs uses.
no_spills() {  # <ptx> <name> <prefix> <count> [architectures]
  local arch log kernels spilling most want=$4
  for arch in ${5:-sm_80 sm_90}; do
    log="$work/$2_$arch.ptxas.log"
    ptxas_v $arch "$1" "$2_$arch"
    kernels=$(grep -c "Compiling entry function '$3" "$log" || true)
    spilling=$({ if [ -z "$3" ]; then cat "$log"; else grep -A2 "Compiling entry function '$3" "$log"; fi; } |
               grep "spill stores" | grep -vc " 0 bytes spill stores, 0 bytes spill loads" || true)
    most=$(grep -A3 "Compiling entry function '$3" "$log" | grep -oE "Used [0-9]+ registers" | awk '{print $2}' |
           sort -n | tail -1 || true)
    verdict '[ "$kernels" -ge "$want" ] && [ "$spilling" -eq 0 ]' \
      "$2 $arch: $kernels kernels, none spills, at most ${most:-?} registers per thread" \
      "$2 $arch: $kernels kernels (expected $4), $spilling spill"
  done
}

# sm_80: mma.sync + ldmatrix + cp.async (both multiplicand types), then ptxas for sm_80.
for t in f16 bf16; do
  ptx="$work/sm80_$t.ptx"
  "$nvcc" "${flags[@]}" -arch=compute_80 -ptx "$src/backends/cuda/sm80/instances_$t.cu" -o "$ptx"
  expect "$ptx" "mma.sync.aligned.m16n8k16.row.col.f32.$t.$t.f32" "sm_80 $t tensor-core MMA"
  expect "$ptx" "ldmatrix.sync.aligned.m8n8.x4.shared.b16" "sm_80 $t ldmatrix (K-major operands)"
  expect "$ptx" "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16" "sm_80 $t ldmatrix.trans (MN-major operands)"
  expect "$ptx" "cp.async.cg.shared.global" "sm_80 $t cp.async copies"
  expect "$ptx" "cp.async.wait_group" "sm_80 $t multistage waits"
  no_spills "$ptx" "sm80_$t" "" 14 sm_80
done

# sm_90a: wgmma (16-bit and fp8), TMA tensor copies with cluster multicast, mbarriers and
# register reallocation between producer and consumer warpgroups.
for t in f16 fp8; do
  ptx="$work/sm90a_$t.ptx"
  "$nvcc" "${flags[@]}" -arch=compute_90a -ptx "$src/backends/cuda/sm90/instances_$t.cu" -o "$ptx"
  expect "$ptx" "wgmma.mma_async.sync.aligned" "sm_90a $t wgmma"
  expect "$ptx" "cp.async.bulk.tensor.3d.shared::cluster.global" "sm_90a $t TMA loads"
  expect "$ptx" ".multicast::cluster" "sm_90a $t TMA multicast"
  expect "$ptx" "mbarrier.try_wait" "sm_90a $t mbarrier waits"
  expect "$ptx" "setmaxnreg" "sm_90a $t register reallocation"
done
expect "$work/sm90a_f16.ptx" ".f32.f16.f16" "sm_90a f16 x f16 -> f32 wgmma"
expect "$work/sm90a_f16.ptx" "stmatrix.sync.aligned.m8n8.x4.shared.b16" "sm_90a packed epilogue (stmatrix)"
expect "$work/sm90a_f16.ptx" "cp.async.bulk.tensor.3d.global.shared::cta.bulk_group" "sm_90a deferred epilogue (TMA stores)"
expect "$work/sm90a_f16.ptx" "fence.proxy.async.shared::cta" "sm_90a deferred epilogue (staging visible to the TMA)"
expect "$work/sm90a_f16.ptx" "wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16" "sm_90a narrow (16-column) decode tiles"
expect "$work/sm90a_f16.ptx" "st.shared::cluster.v4.f32" "sm_90a split-K pairs (partials into the peer's shared memory)"
expect "$work/sm90a_f16.ptx" "mbarrier.arrive.release.cluster.shared::cluster" "sm_90a split-K pairs (cluster-scope hand-over)"
expect "$work/sm90a_fp8.ptx" "wgmma.mma_async.sync.aligned.m64n16k32.f32.e4m3.e4m3" "sm_90a fp8 narrow decode tiles"
# The 128-accumulator consumers (128x256 and 256x128 tiles) once spilled up to 212 bytes, and the
# epilogue then read its arguments from local memory: every sm_90a kernel must stay within 16
# bytes of spill stores and loads.
ptxas_v sm_90a "$work/sm90a_f16.ptx" sm90a_f16
worst=$(grep -oE "[0-9]+ bytes spill (stores|loads)" "$work/sm90a_f16.ptxas.log" | awk '{print $1}' | sort -n | tail -1)
kernels=$(grep -c "Compiling entry function '_ZN8omnigemm6detail4sm9014gemm_tma_wgmma" "$work/sm90a_f16.ptxas.log" || true)
verdict '[ "$kernels" -ge 20 ] && [ "${worst:-0}" -le 16 ]' "sm_90a f16: $kernels wgmma kernels, at most ${worst:-0} bytes of spills" \
  "sm_90a f16: $kernels kernels (expected at least 20), up to ${worst:-?} bytes of spills"
# ptxas serializes every wgmma of a kernel (a wait after each) when some path defines their
# accumulators by other instructions mid-pipeline: a path that loaded a partial sum into them,
# never taken by the benchmark, once cost 10% at 4096^3 (C7515 is ptxas's only sign of it).
serialized=$(grep -c "C7515" "$work/sm90a_f16.ptxas.log" || true)
verdict '[ "$serialized" -eq 0 ]' "sm_90a f16: no kernel with serialized wgmmas (ptxas C7515)" \
  "sm_90a f16: $serialized kernels with serialized wgmmas (ptxas C7515)"
expect "$work/sm90a_fp8.ptx" ".f32.e4m3.e4m3" "sm_90a e4m3 x e4m3 -> f32 wgmma"
expect "$work/sm90a_fp8.ptx" ".f32.e5m2.e5m2" "sm_90a e5m2 x e5m2 -> f32 wgmma"

# sm_90a block-scaled (cuda.sm90_blockscaled): fp8 wgmma whose first K step per scale block
# overwrites the temporary accumulators (scale-d from a register), TMA loads, the promotion's
# FFMAs; ptxas fits every tile (128 main + 64 temporary accumulators at 128x256) within 16 bytes
# of spills (the epilogue's called chunk functions, as for sm90_wgmma's 128-accumulator
# consumers) and keeps the wgmmas of a K block pipelined (no C7515).
ptx="$work/sm90a_blockscaled.ptx"
"$nvcc" "${flags[@]}" -arch=compute_90a -ptx "$src/backends/cuda/blockscaled/instances.cu" -o "$ptx"
expect "$ptx" "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3" "sm_90a block-scaled 128-column fp8 wgmma"
expect "$ptx" "wgmma.mma_async.sync.aligned.m64n64k32.f32.e5m2.e5m2" "sm_90a block-scaled 64-column e5m2 wgmma"
expect "$ptx" "cp.async.bulk.tensor.3d.shared::cluster.global" "sm_90a block-scaled TMA loads"
expect "$ptx" ".multicast::cluster" "sm_90a block-scaled B multicast (mcast form)"
expect "$ptx" "wgmma.wait_group.sync.aligned 1" "sm_90a block-scaled pipe form (a K block in flight during promotion)"
expect "$ptx" "setmaxnreg" "sm_90a block-scaled register reallocation"
expect "$ptx" "fma.rn.f32" "sm_90a block-scaled promotion (FFMA into the main accumulators)"
ptxas_v sm_90a "$ptx" sm90a_blockscaled
kernels=$(grep -c "Compiling entry function '_ZN8omnigemm6detail4sm9013gemm_block128" "$work/sm90a_blockscaled.ptxas.log" || true)
worst=$(grep -oE "[0-9]+ bytes spill (stores|loads)" "$work/sm90a_blockscaled.ptxas.log" | awk '{print $1}' | sort -n | tail -1)
serialized=$(grep -c "C7515" "$work/sm90a_blockscaled.ptxas.log" || true)
verdict '[ "$kernels" -ge 24 ] && [ "${worst:-0}" -le 16 ] && [ "$serialized" -eq 0 ]' \
  "sm_90a block-scaled: $kernels kernels, at most ${worst:-0} bytes of spills, none with serialized wgmmas" \
  "sm_90a block-scaled: $kernels kernels (expected 24), up to ${worst:-?} bytes of spills, $serialized with serialized wgmmas (C7515)"

# sm_90a tf32 (f32 inputs with compute_mode TF32): wgmma .tf32 on K-major f32 tiles.
ptx="$work/sm90a_tf32.ptx"
"$nvcc" "${flags[@]}" -arch=compute_90a -ptx "$src/backends/cuda/sm90/instances_tf32.cu" -o "$ptx"
expect "$ptx" "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32" "sm_90a tf32 wgmma"
# The f32 tiles reach wgmma as loaded (TMA into shared memory, read by descriptor): no conversion
# to TF32 anywhere, so f32 copies of f16 and bf16 (sm90_repack's mixed inputs, whose low 13
# mantissa bits are zero) are multiplied exactly.
cvts=$(grep -cE "cvt[.a-z0-9]*\.tf32" "$ptx" || true)
verdict '[ "$cvts" -eq 0 ]' "sm_90a tf32: no cvt to TF32 (operands multiplied as loaded)" \
  "sm_90a tf32: the kernel converts to TF32 ($cvts cvt lines)"
ptxas_v sm_90a "$ptx" sm90a_tf32
worst=$(grep -oE "[0-9]+ bytes spill (stores|loads)" "$work/sm90a_tf32.ptxas.log" | awk '{print $1}' | sort -n | tail -1)
verdict '[ "${worst:-0}" -le 16 ] && ! grep -q C7515 "$work/sm90a_tf32.ptxas.log"' \
  "sm_90a tf32: at most ${worst:-0} bytes of spills, no serialized wgmmas" \
  "sm_90a tf32: up to ${worst:-?} bytes of spills or serialized wgmmas"

# The f32 family (full f32 FMA on CUDA cores): vector loads and stores, float4 shared reads, and
# no spills at 128 registers per thread (two 256-thread blocks per SM) for sm_80 and sm_90.
ptx="$work/sgemm.ptx"
"$nvcc" "${flags[@]}" -I"$src/backends/cuda" -arch=compute_80 -ptx "$src/backends/cuda/sgemm/family.cu" -o "$ptx"
expect "$ptx" "fma.rn.f32" "sgemm f32 FMA"
expect "$ptx" "ld.shared.v4.f32" "sgemm float4 shared-memory reads"
expect "$ptx" "ld.global.nc.v4.f32" "sgemm 16-byte global loads"
no_spills "$ptx" sgemm "_ZN8omnigemm6detail5sgemm" 16
# ... and kernels of the rows below 256 threads (those small problems run) whose code fits the
# instruction caches: with the general epilogue inlined per output quad each was over 500 KB
# of SASS, and launches of a few K-steps waited on instruction fetches.
largest=$(readelf -SW "$work/sgemm_sm_90.cubin" 2>/dev/null |
          sed -nE 's/.* \.text\.[^ ]+ShapeILi([0-9]+)ELi([0-9]+)E[^ ]+ +PROGBITS +[0-9a-f]+ +[0-9a-f]+ +([0-9a-f]+) .*/\1 \2 \3/p' |
          while read -r wm wn h; do if [ $((wm * wn)) -lt 8 ]; then echo $((16#$h)); fi; done | sort -n | tail -1)
verdict '[ -n "$largest" ] && [ "$largest" -le 262144 ]' \
  "sgemm sm_90: the largest kernel below 256 threads has $largest bytes of code (at most 256 KB)" \
  "sgemm sm_90: a kernel below 256 threads has ${largest:-?} bytes of code (at most 256 KB)"

# The split-K reduction (split_reduce.cu) reads each slice's partial quads once, with streaming
# 16-byte loads.
ptx="$work/split_reduce.ptx"
"$nvcc" "${flags[@]}" -I"$src/backends/cuda" -arch=compute_80 -ptx "$src/backends/cuda/split_reduce.cu" -o "$ptx"
expect "$ptx" "ld.global.cs.v4.f32" "split-K reduction streaming 16-byte loads"

# The f32-FMA skinny family: four-element K loads of an aligned large operand (8 or 16 bytes),
# float4 reads of S from shared memory, and no spills at two 256-thread blocks per SM (53
# kernels: both loaders x rows x load types, and the vector K loaders) for sm_90. (sm_80's
# ptxas spills 12-28 bytes in six of the 8- and 16-row dot kernels: 32-64 accumulators a lane.)
ptx="$work/skinny.ptx"
"$nvcc" "${flags[@]}" -I"$src/backends/cuda" -arch=compute_80 -ptx "$src/backends/cuda/skinny/family.cu" -o "$ptx"
expect "$ptx" "ld.global.nc.v4.f32" "skinny four-element f32 K loads"
expect "$ptx" "ld.global.nc.v2.u32" "skinny four-element 16-bit K loads"
expect "$ptx" "ld.shared.v4.f32" "skinny float4 reads of S"
no_spills "$ptx" skinny "_ZN8omnigemm6detail4cuda14skinny_lanes" 53 sm_90

# The tensor-core skinny family: mma.sync for both 16-bit types, 16-byte cp.async copies of the
# aligned chunks (operands of any alignment read in place) and no spills at its register budget
# (launch bounds of three 256-thread blocks per SM up to 32 rows, two at 64: 80 or 128
# registers), for sm_80 and sm_90.
ptx="$work/skinny_mma.ptx"
"$nvcc" "${flags[@]}" -I"$src/backends/cuda" -arch=compute_80 -ptx "$src/backends/cuda/skinny/mma_family.cu" -o "$ptx"
expect "$ptx" "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32" "skinny_mma f16 tensor-core MMA"
expect "$ptx" "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32" "skinny_mma bf16 tensor-core MMA"
expect "$ptx" "cp.async.cg.shared.global" "skinny_mma 16-byte chunk copies"
no_spills "$ptx" skinny_mma "_ZN8omnigemm6detail4cuda17skinny_mma_kernel" 24

# The short-K family: D's rows leave in aligned 16-byte stores (st.global.v4.u32), B's rows are
# read from shared memory as float4, the windows shift with funnel shifts, the mma form sums on
# tensor cores (f16 and bf16), and no kernel spills (FMA: two block widths x 16-bit or f32 D;
# mma: those x f16 or bf16 MMA) for sm_80 and sm_90.
ptx="$work/short_k.ptx"
"$nvcc" "${flags[@]}" -I"$src/backends/cuda" -arch=compute_80 -ptx "$src/backends/cuda/short_k/family.cu" -o "$ptx"
expect "$ptx" "st.global.v4.u32" "short_k aligned 16-byte row stores"
expect "$ptx" "ld.shared.v4.f32" "short_k float4 reads of B"
expect "$ptx" "shf.r.clamp.b32" "short_k funnel-shifted windows"
expect "$ptx" "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32" "short_k mma f16 tensor-core MMA"
expect "$ptx" "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32" "short_k mma bf16 tensor-core MMA"
no_spills "$ptx" short_k "_ZN8omnigemm6detail4cuda12short_k_gemm" 4
no_spills "$ptx" short_k_mma "_ZN8omnigemm6detail4cuda16short_k_mma_gemm" 8

if [ "$failures" -ne 0 ]; then echo "codegen check: $failures failure(s)"; exit 1; fi
echo "codegen check: all passed"
