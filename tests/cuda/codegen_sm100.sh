#!/usr/bin/env bash
# Checks the generated code of the Blackwell family (backends/cuda/sm100) without a Blackwell GPU:
# every kernel of every instance file, in its own PTX, carries the tcgen05 instructions its MMA
# kind needs (tcgen05.mma with the kind, scale_vec and cta_group, alloc / relinquish / dealloc,
# commit, tcgen05.ld and its wait, tcgen05.cp for the scale factors of the block-scaled kinds),
# the TMA loads (cta_group::2 for 2-SM pairs) and the TMA store of its epilogue; ptxas for sm_100a
# fits every kernel without spilling; its dynamic shared memory (sm100/layout.h, for the row's
# stage count) stays within a 10.x SM's 227 KiB. Prints a table per kernel. Where a cuobjdump
# that knows sm_100a is found (CUDA 12.8+; not on the CI machine), also lists each kernel's
# UTC*-class SASS (the tcgen05 tensor-core instructions).
#   usage: codegen_sm100.sh <nvcc> <source dir> <work dir>
set -euo pipefail
nvcc="$1"; src="$2"; work="$3"
mkdir -p "$work"
bin="$(dirname "$nvcc")"
flags=(-std=c++20 -O3 --expt-relaxed-constexpr -I"$src/engine/include" -I"$src/engine/src")
failures=0
fail() { echo "FAIL  $*"; failures=$((failures + 1)); }

# Dynamic shared memory and tensor-memory columns of each (kind, BLOCK_N, cta_group) as the
# launcher computes them, from the same header, for the stage count of the table row.
cat > "$work/geometry.cpp" <<'EOF'
#include <cstdio>
#include "sm100/layout.h"
using namespace omnigemm::detail::sm100;
int main() {
#define OG_CUDA_SM100_TCGEN05(BM, BN, BK, GM, ST, FORM)                                               \
  for (int k = 0; k < kKinds; ++k)                                                                      \
    if (block_k(Kind(k)) == BK) {                                                                       \
      const Geometry g{Kind(k), BN, BM / 128, ST};                                                      \
      std::printf("%d %d %d %d %u %d\n", k, BN, BM / 128, ST, shared_bytes(g), tmem_columns(g));        \
    }
#include "families/sm100_tcgen05.inc"
  return 0;
}
EOF
"${CXX:-c++}" -std=c++20 -I"$src/engine/include" -I"$src/backends/cuda" "$work/geometry.cpp" -o "$work/geometry"
"$work/geometry" > "$work/geometry.txt"

kind_mma=("kind::f16" "kind::f8f6f4" "kind::mxf8f6f4.block_scale.scale_vec::1X" "kind::mxf4.block_scale.scale_vec::2X"
          "kind::mxf4nvf4.block_scale.scale_vec::4X")
kernels=0
printf '%-8s %-44s %-4s %-5s %-2s %5s %6s %8s %8s %5s %5s %4s %4s %4s\n' file mma pair N B regs stack spill_st spill_ld smem_K \
  tmem mma cp ld
for t in 16bit 8bit 4bit; do
  ptx="$work/sm100_$t.ptx"
  "$nvcc" "${flags[@]}" -arch=compute_100a -ptx "$src/backends/cuda/sm100/instances_$t.cu" -o "$ptx"
  "$bin/ptxas" -arch=sm_100a -v "$ptx" -o "$work/sm100_$t.cubin" 2> "$work/sm100_$t.ptxas.log" ||
    { fail "ptxas sm_100a $t:"; cat "$work/sm100_$t.ptxas.log"; continue; }
  # One file per kernel entry of the PTX.
  rm -rf "$work/$t" && mkdir -p "$work/$t"
  awk -v dir="$work/$t" '
    /^\.(visible|weak) \.entry / { name = $3; sub(/\(.*/, "", name); out = dir "/" name ".ptx" }
    /^\.(visible|weak|extern)? ?\.func/ { out = "" }
    out != "" { print > out }' "$ptx"
  for f in "$work/$t"/*.ptx; do
    name=$(basename "$f" .ptx)
    [[ "$name" =~ gemm_tcgen05ILNS1_4KindE([0-9])ELi([0-9]+)ELi([12])E ]] || continue
    kind=${BASH_REMATCH[1]}; bn=${BASH_REMATCH[2]}; group=${BASH_REMATCH[3]}
    major=K; [[ "$name" == *ELi${group}ELb1E* ]] && major=N
    kernels=$((kernels + 1))
    label="$t kind=$kind N=$bn cta_group=$group B=$major-major"
    need() {  # <fixed string> <what>
      grep -qF -- "$1" "$f" || fail "$label: no '$1' ($2)"
    }
    need "tcgen05.mma.cta_group::$group.${kind_mma[$kind]}" "the MMA of its kind"
    need "tcgen05.alloc.cta_group::$group.sync.aligned.shared::cta.b32" "tensor-memory allocation"
    need "tcgen05.relinquish_alloc_permit.cta_group::$group" "allocation permit released"
    need "tcgen05.dealloc.cta_group::$group" "tensor memory freed"
    need "tcgen05.commit.cta_group::$group.mbarrier::arrive::one" "MMA completion to mbarriers"
    need "tcgen05.ld.sync.aligned.32x32b" "accumulators read by the epilogue"
    need "tcgen05.wait::ld.sync.aligned" "accumulator loads waited for"
    need "tcgen05.fence::after_thread_sync" "tcgen05 ordering after thread synchronisation"
    need "mbarrier.try_wait.parity" "the ring's mbarrier waits"
    need "cp.async.bulk.tensor.3d.global.shared::cta.bulk_group" "the epilogue's TMA store"
    if [ "$group" = 2 ]; then
      need "cp.async.bulk.tensor.3d.cta_group::2.shared::cluster.global.mbarrier::complete_tx::bytes" "2-SM operand loads"
      need ".multicast::cluster" "commit to both CTAs of the pair"
      need "mapa.shared::cluster" "the leader's barriers from the peer"
    else
      need "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes" "operand loads"
    fi
    if [ "$kind" -ge 2 ]; then
      need "tcgen05.cp.cta_group::$group.32x128b.warpx4" "scale factors into tensor memory"
      need "cp.async.bulk.tensor.4d" "scale-factor TMA loads"
    elif grep -qF "tcgen05.cp" "$f"; then
      fail "$label: a dense kind copies scale factors"
    fi
    # ptxas: this entry's line pair.
    props=$(grep -A3 "Compiling entry function '$name'" "$work/sm100_$t.ptxas.log" || true)
    regs=$(grep -oE "Used [0-9]+ registers" <<< "$props" | awk "{print \$2}" || true)
    stack=$(grep -oE "[0-9]+ bytes stack frame" <<< "$props" | awk "{print \$1}" || true)
    st=$(grep -oE "[0-9]+ bytes spill stores" <<< "$props" | awk "{print \$1}" || true)
    ld=$(grep -oE "[0-9]+ bytes spill loads" <<< "$props" | awk "{print \$1}" || true)
    [ -n "$regs" ] || fail "$label: no ptxas report"
    [ "${st:-1}" = 0 ] && [ "${ld:-1}" = 0 ] || fail "$label: spills ${st:-?} / ${ld:-?} bytes"
    geo=$(awk -v k="$kind" -v n="$bn" -v g="$group" '$1 == k && $2 == n && $3 == g {print $5, $6}' "$work/geometry.txt")
    smem=${geo% *}; tmem=${geo#* }
    [ -n "$geo" ] && [ "$smem" -le 232448 ] && [ "$tmem" -le 512 ] || fail "$label: shared memory ${smem:-?} B, tensor memory ${tmem:-?} columns"
    printf '%-8s %-44s %-4s %-5s %-2s %5s %6s %8s %8s %5s %5s %4s %4s %4s\n' "$t" "${kind_mma[$kind]}" \
      "$([ "$group" = 2 ] && echo yes || echo no)" "$bn" "$major" "$regs" "${stack:-?}" "$st" "$ld" "$((smem / 1024))" "$tmem" "$(grep -c "tcgen05.mma" "$f")" \
      "$(grep -c "tcgen05.cp" "$f" || true)" "$(grep -c "tcgen05.ld" "$f")"
  done
done
[ "$kernels" -eq 24 ] || fail "$kernels kernels of the family found (expected 24: 4 rows x 5 kinds, and kind::f16 with an N-major B)"

# SASS, where a cuobjdump for sm_100a exists: UTC*MMA (tcgen05.mma), UTCCP, LDTM (tcgen05.ld)...
cuobjdump=$(command -v "$bin/cuobjdump" || command -v cuobjdump || true)
if [ -n "$cuobjdump" ] && "$cuobjdump" -sass "$work/sm100_16bit.cubin" > /dev/null 2>&1; then
  for t in 16bit 8bit 4bit; do
    "$cuobjdump" -sass "$work/sm100_$t.cubin" > "$work/sm100_$t.sass"
    awk '/Function : / { fn = $3 } /UTC[A-Z0-9_.]*MMA|UTCCP|UTCBAR|LDTM/ {
           for (i = 1; i <= NF; ++i) if ($i ~ /^(UTC|LDTM)/) { op = $i; sub(/\..*/, "", op); n[fn " " op]++ } }
         END { for (k in n) print k, n[k] }' "$work/sm100_$t.sass" | sort > "$work/sm100_$t.utc"
    echo "SASS $t (kernel, opcode, count):"; sed 's/^/  /' "$work/sm100_$t.utc"
    [ "$(grep -c "MMA" "$work/sm100_$t.utc" || true)" -ge 1 ] || fail "SASS $t: no UTC*MMA instruction"
  done
else
  echo "SKIPPED sass: no cuobjdump that disassembles sm_100a here (the H100 machine's is checked by scripts)"
fi

if [ "$failures" -ne 0 ]; then echo "sm100 codegen check: $failures failure(s)"; exit 1; fi
echo "sm100 codegen check: all passed ($kernels kernels)"
