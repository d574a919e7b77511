#!/usr/bin/env bash
# Installs what OmniGEMM's build, tests and benchmarks need on Debian 12 (run as root), builds the
# newer shader toolchain into a cache outside the build tree, and writes
# ${OMNIGEMM_CACHE:-~/.cache/omnigemm}/env.sh for the other scripts (and CMake) to source.
#
#   1. Debian 12 packages (apt-get update/install only when something is missing, per dpkg-query).
#   2. glslang 15.1 built from Debian trixie's SOURCE package into $cache/glslang-15 (bookworm's
#      glslang 12 cannot compile GL_KHR_cooperative_matrix / GL_NV_cooperative_matrix2; trixie's
#      binaries need glibc 2.38). Skipped when $VULKAN_SDK/bin/glslangValidator (or
#      $OMNIGEMM_GLSLANG) is glslang >= 15 and compiles the cooperative-matrix test shaders.
#   3. Trixie's Vulkan and SPIR-V headers (libvulkan-dev 1.4.x, spirv-headers), unpacked with
#      dpkg -x, headers only, into $cache/vulkan-headers-1.4/include (bookworm's loader works
#      with them).
#
# Trixie is reached through a private apt configuration under $cache/apt-trixie that reuses the
# mirror already configured on this system (/etc/apt/sources.list.d/debian.sources); the system's
# own apt state is never touched by it (docs/toolchain.md says why each piece is needed).
#
# Idempotent and restartable: an artefact already in the cache is kept when it passes its check
# (glslang >= 15 compiling the test shaders; headers declaring both extensions); a new one is
# built in a *.tmp directory and moved into place only after it passed that check, so a second
# run takes seconds and a run that died half-way is simply repeated. Works from any cwd.
#
# Environment: OMNIGEMM_CACHE (cache dir), VULKAN_SDK (LunarG SDK), OMNIGEMM_DEBIAN_MIRROR (mirror
# URI to use instead of the system's), OMNIGEMM_JOBS (build parallelism, default nproc).
set -euo pipefail

start_s=$SECONDS
cache="${OMNIGEMM_CACHE:-$HOME/.cache/omnigemm}"
mkdir -p "$cache"
cache="$(cd "$cache" && pwd -P)"
jobs="${OMNIGEMM_JOBS:-$(nproc 2>/dev/null || echo 2)}"

log() { echo "bootstrap: $*"; }
die() { echo "bootstrap: ERROR: $*" >&2; exit 1; }
is_root() { [ "$(id -u)" -eq 0 ]; }

# ------------------------------------------------------------------------------------------------
# 1. Debian 12 packages
# ------------------------------------------------------------------------------------------------
packages=(
  build-essential cmake ninja-build pkg-config git python3 ca-certificates
  dpkg-dev               # dpkg-source, for the glslang source package
  doctest-dev            # test framework
  libopenblas-dev        # CPU baseline of omnigemm-bench (loaded at run time)
  libvulkan-dev libvulkan1 mesa-vulkan-drivers vulkan-validationlayers vulkan-tools
  glslang-tools          # fallback GLSL compiler (12.0: no cooperative matrix)
  spirv-tools            # spirv-dis/spirv-val 2023.1 (does not know SPV_KHR_cooperative_matrix)
  python3-matplotlib     # plots of omnigemm-bench
  hipcc libamdhip64-dev rocm-device-libs   # HIP compiler (gfx90a code objects, no AMD GPU needed)
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ "${#missing[@]}" -gt 0 ]; then
  is_root || die "missing packages: ${missing[*]}; run this script as root (it uses apt-get)"
  log "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # --no-install-recommends keeps the set small; mesa-vulkan-drivers still gets its Depends.
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  log "all ${#packages[@]} Debian packages present"
fi

# ------------------------------------------------------------------------------------------------
# Helpers: glslang version and the cooperative-matrix test shaders
# ------------------------------------------------------------------------------------------------
# Major version of a glslang binary ("Glslang Version: 11:15.1.0" -> 15), or 0.
glslang_major() {
  local v
  v="$("$1" --version 2>/dev/null | sed -n 's/^Glslang Version: *\([0-9]*:\)\{0,1\}\([0-9][0-9]*\)\..*/\2/p' | head -n1)"
  echo "${v:-0}"
}
glslang_version() {
  "$1" --version 2>/dev/null | sed -n 's/^Glslang Version: *\([0-9]*:\)\{0,1\}//p' | head -n1
}

testdir="$cache/selftest"
write_test_shaders() {
  mkdir -p "$testdir"
  cat > "$testdir/coopmat_khr.comp" <<'EOF'
#version 450
#pragma use_vulkan_memory_model
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) readonly buffer A { float16_t a[]; };
layout(set = 0, binding = 1) readonly buffer B { float16_t b[]; };
layout(set = 0, binding = 2) buffer C { float c[]; };
void main() {
  coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> ma;
  coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> mb;
  coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> mc =
      coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(0.0);
  coopMatLoad(ma, a, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
  coopMatLoad(mb, b, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
  mc = coopMatMulAdd(ma, mb, mc);
  coopMatStore(mc, c, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
}
EOF
  cat > "$testdir/coopmat2_nv.comp" <<'EOF'
#version 450
#pragma use_vulkan_memory_model
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) readonly buffer A { float16_t a[]; };
layout(set = 0, binding = 1) buffer C { float c[]; };
void main() {
  tensorLayoutNV<2> t = createTensorLayoutNV(2);
  t = setTensorLayoutDimensionNV(t, 64, 64);
  coopmat<float16_t, gl_ScopeWorkgroup, 16, 16, gl_MatrixUseA> ma;
  coopMatLoadTensorNV(ma, a, 0, sliceTensorLayoutNV(t, 0, 16, 0, 16));
  coopmat<float, gl_ScopeWorkgroup, 16, 16, gl_MatrixUseAccumulator> mc =
      coopmat<float, gl_ScopeWorkgroup, 16, 16, gl_MatrixUseAccumulator>(ma);
  coopMatStoreTensorNV(mc, c, 0, sliceTensorLayoutNV(t, 0, 16, 0, 16));
}
EOF
}

# True when $1 is a glslang >= 15 that compiles both test shaders to SPIR-V for Vulkan 1.3.
glslang_ok() {
  local g="$1" s
  [ -n "$g" ] && [ -x "$g" ] || return 1
  [ "$(glslang_major "$g")" -ge 15 ] || return 1
  write_test_shaders
  for s in coopmat_khr coopmat2_nv; do
    rm -f "$testdir/$s.spv"
    if ! "$g" -V --target-env vulkan1.3 -o "$testdir/$s.spv" "$testdir/$s.comp" >"$testdir/$s.log" 2>&1; then
      log "$g fails on $s.comp (see $testdir/$s.log)"
      return 1
    fi
    # SPIR-V magic number 0x07230203, little-endian.
    [ "$(od -An -tx1 -N4 "$testdir/$s.spv" | tr -d ' \n')" = "03022307" ] || return 1
  done
}

# ------------------------------------------------------------------------------------------------
# Private apt configuration for Debian trixie (sources and binaries), created on first use
# ------------------------------------------------------------------------------------------------
aptdir="$cache/apt-trixie"
apt_opts=()

debian_mirror() {
  if [ -n "${OMNIGEMM_DEBIAN_MIRROR:-}" ]; then echo "$OMNIGEMM_DEBIAN_MIRROR"; return; fi
  local f=/etc/apt/sources.list.d/debian.sources uri=""
  if [ -f "$f" ]; then
    # First URIs of a deb822 stanza that is not the security archive.
    uri="$(awk '
      BEGIN { RS = ""; FS = "\n" }
      {
        u = ""; s = ""
        for (i = 1; i <= NF; i++) {
          if ($i ~ /^URIs:/)   { u = $i; sub(/^URIs:[ \t]*/, "", u); split(u, w, /[ \t]+/); u = w[1] }
          if ($i ~ /^Suites:/) { s = $i }
        }
        if (u != "" && s !~ /security/) { print u; exit }
      }' "$f")"
  fi
  if [ -z "$uri" ] && [ -f /etc/apt/sources.list ]; then
    uri="$(awk '$1 == "deb" && $0 !~ /security/ { for (i = 2; i <= NF; i++) if ($i !~ /^\[/ && $i !~ /\]$/) { print $i; exit } }' \
           /etc/apt/sources.list)"
  fi
  [ -n "$uri" ] || die "no Debian mirror found in /etc/apt/sources.list.d/debian.sources or /etc/apt/sources.list; set OMNIGEMM_DEBIAN_MIRROR"
  echo "${uri%/}"
}

trixie_apt_ready=0
trixie_apt() {
  [ "$trixie_apt_ready" -eq 1 ] && return 0
  local mirror keyring=/usr/share/keyrings/debian-archive-keyring.gpg
  mirror="$(debian_mirror)"
  [ -f "$keyring" ] || die "$keyring missing (package debian-archive-keyring)"
  mkdir -p "$aptdir/lists/partial" "$aptdir/sources.list.d" "$aptdir/cache/archives/partial" "$aptdir/preferences.d"
  cat > "$aptdir/sources.list" <<EOF
# written by OmniGEMM scripts/bootstrap.sh; used only through its private apt options
deb [arch=amd64 signed-by=$keyring] $mirror trixie main
deb-src [signed-by=$keyring] $mirror trixie main
EOF
  apt_opts=(
    -o "Dir::Etc::SourceList=$aptdir/sources.list"
    -o "Dir::Etc::SourceParts=$aptdir/sources.list.d"
    -o "Dir::Etc::Preferences=$aptdir/preferences"
    -o "Dir::Etc::PreferencesParts=$aptdir/preferences.d"
    -o "Dir::State::Lists=$aptdir/lists"
    -o "Dir::Cache=$aptdir/cache"
    -o "Dir::Cache::pkgcache=" -o "Dir::Cache::srcpkgcache="
    -o "APT::Architecture=amd64" -o "APT::Architectures=amd64"
    -o "Acquire::Languages=none" -o "APT::Get::List-Cleanup=false"
  )
  # The cache usually lives under /root, which the _apt sandbox user cannot enter.
  is_root && apt_opts+=(-o "APT::Sandbox::User=root")
  log "apt: fetching trixie indices from $mirror (private lists in $aptdir/lists)"
  apt-get "${apt_opts[@]}" update -qq || die "apt-get update for trixie failed"
  trixie_apt_ready=1
}

# ------------------------------------------------------------------------------------------------
# 2. glslang >= 15
# ------------------------------------------------------------------------------------------------
glslang_prefix="$cache/glslang-15"
glslang=""
glslang_origin=""

if [ -n "${VULKAN_SDK:-}" ] && glslang_ok "$VULKAN_SDK/bin/glslangValidator"; then
  glslang="$VULKAN_SDK/bin/glslangValidator"; glslang_origin="LunarG SDK"
elif [ -n "${OMNIGEMM_GLSLANG:-}" ] && [ "${OMNIGEMM_GLSLANG}" != "$glslang_prefix/bin/glslangValidator" ] \
     && glslang_ok "$OMNIGEMM_GLSLANG"; then
  glslang="$OMNIGEMM_GLSLANG"; glslang_origin="\$OMNIGEMM_GLSLANG"
elif glslang_ok "$glslang_prefix/bin/glslangValidator"; then
  glslang="$glslang_prefix/bin/glslangValidator"; glslang_origin="cache"
else
  t=$SECONDS
  log "building glslang from Debian trixie's source package (a few minutes on 2 cores)"
  trixie_apt
  work="$cache/build/glslang"
  rm -rf "$work" "$glslang_prefix.tmp"
  mkdir -p "$work/dl"
  (cd "$work/dl" && apt-get "${apt_opts[@]}" source --download-only -qq glslang/trixie) \
    || die "apt-get source glslang/trixie failed"
  dsc="$(ls "$work"/dl/glslang_*.dsc 2>/dev/null | head -n1 || true)"
  [ -n "$dsc" ] || die "no glslang .dsc downloaded"
  log "unpacking $(basename "$dsc") (upstream source, without Debian's patches)"
  # Debian's patches make the build require SPIRV-Tools through pkg-config and then fail with
  # ENABLE_OPT=OFF (mixed target_link_libraries signatures); upstream needs nothing of that.
  dpkg-source --skip-patches -x "$dsc" "$work/src" >"$work/dpkg-source.log" 2>&1 \
    || die "dpkg-source -x failed (see $work/dpkg-source.log)"
  log "configuring and building glslang with $jobs jobs (log: $work/build.log)"
  if ! {
    cmake -S "$work/src" -B "$work/build" -G Ninja \
      -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_INSTALL_PREFIX="$glslang_prefix.tmp" \
      -DENABLE_OPT=OFF -DGLSLANG_TESTS=OFF -DENABLE_GLSLANG_BINARIES=ON \
      -DBUILD_SHARED_LIBS=OFF -DGLSLANG_ENABLE_INSTALL=ON -DBUILD_EXTERNAL=OFF \
      -DENABLE_HLSL=ON -DENABLE_SPVREMAPPER=ON &&
    cmake --build "$work/build" -j "$jobs" &&
    cmake --install "$work/build"
  } >"$work/build.log" 2>&1; then
    tail -n 30 "$work/build.log" >&2
    die "glslang build failed (full log: $work/build.log)"
  fi
  # 15.x installs the binary as 'glslang' with a 'glslangValidator' link; make sure both exist.
  if [ ! -e "$glslang_prefix.tmp/bin/glslangValidator" ] && [ -x "$glslang_prefix.tmp/bin/glslang" ]; then
    ln -s glslang "$glslang_prefix.tmp/bin/glslangValidator"
  fi
  glslang_ok "$glslang_prefix.tmp/bin/glslangValidator" \
    || die "the glslang just built does not compile the cooperative-matrix test shaders ($testdir)"
  basename "$dsc" .dsc > "$glslang_prefix.tmp/.omnigemm-source"   # provenance only
  rm -rf "$glslang_prefix"
  mv "$glslang_prefix.tmp" "$glslang_prefix"
  rm -rf "$work"
  rmdir "$cache/build" 2>/dev/null || true
  glslang="$glslang_prefix/bin/glslangValidator"; glslang_origin="built from trixie source in $((SECONDS - t)) s"
fi

# ------------------------------------------------------------------------------------------------
# 3. Vulkan headers >= 1.3.255 with VK_KHR_cooperative_matrix and VK_NV_cooperative_matrix2
# ------------------------------------------------------------------------------------------------
vk_prefix="$cache/vulkan-headers-1.4"
headers_ok() {  # $1 = include dir
  local core="$1/vulkan/vulkan_core.h"
  [ -f "$1/vulkan/vulkan.h" ] && [ -f "$core" ] &&
    grep -q 'VK_KHR_cooperative_matrix 1' "$core" && grep -q 'VK_NV_cooperative_matrix2 1' "$core"
}
vk_include=""
vk_origin=""
if [ -n "${VULKAN_SDK:-}" ] && headers_ok "$VULKAN_SDK/include"; then
  vk_include="$VULKAN_SDK/include"; vk_origin="LunarG SDK"
elif headers_ok "$vk_prefix/include"; then
  vk_include="$vk_prefix/include"; vk_origin="cache"
else
  t=$SECONDS
  trixie_apt
  work="$cache/build/vulkan-headers"
  rm -rf "$work" "$vk_prefix.tmp"
  mkdir -p "$work" "$vk_prefix.tmp"
  log "downloading trixie's libvulkan-dev and spirv-headers"
  (cd "$work" && apt-get "${apt_opts[@]}" download -qq libvulkan-dev/trixie spirv-headers/trixie) \
    || die "apt-get download of trixie's libvulkan-dev / spirv-headers failed"
  for deb in "$work"/*.deb; do
    dpkg -x "$deb" "$vk_prefix.tmp"
    basename "$deb" >> "$vk_prefix.tmp/.omnigemm-source"   # provenance only
  done
  # Headers only (include/vulkan, include/vk_video, include/spirv, ...): the loader's dangling
  # libvulkan.so link, the registry and the docs are not needed.
  mv "$vk_prefix.tmp/usr/include" "$vk_prefix.tmp/include"
  rm -rf "$vk_prefix.tmp/usr"
  headers_ok "$vk_prefix.tmp/include" \
    || die "trixie's headers lack VK_KHR_cooperative_matrix / VK_NV_cooperative_matrix2"
  rm -rf "$vk_prefix"
  mv "$vk_prefix.tmp" "$vk_prefix"
  rm -rf "$work"
  rmdir "$cache/build" 2>/dev/null || true
  vk_include="$vk_prefix/include"; vk_origin="trixie packages, in $((SECONDS - t)) s"
fi
vk_header_version="$(sed -n 's/^#define VK_HEADER_VERSION \([0-9]*\).*/\1/p' "$vk_include/vulkan/vulkan_core.h" | head -n1)"

# ------------------------------------------------------------------------------------------------
# 4. env.sh and summary
# ------------------------------------------------------------------------------------------------
{
  echo "# written by scripts/bootstrap.sh; source it before configuring or testing OmniGEMM"
  echo "export OMNIGEMM_CACHE='$cache'"
  echo "export OMNIGEMM_GLSLANG='$glslang'"
  echo "export OMNIGEMM_VULKAN_INCLUDE='$vk_include'"
  # CUDA toolkit (optional): the CUDA backend is built when nvcc is found.
  if [ -x /usr/local/cuda/bin/nvcc ]; then echo "export PATH=\"/usr/local/cuda/bin:\$PATH\""; fi
} > "$cache/env.sh.tmp"
mv "$cache/env.sh.tmp" "$cache/env.sh"

log "summary ($((SECONDS - start_s)) s):"
log "  cache          $cache"
log "  glslang        $glslang ($(glslang_version "$glslang"); $glslang_origin)"
log "  vulkan headers $vk_include (VK_HEADER_VERSION $vk_header_version; $vk_origin)"
log "  environment    source $cache/env.sh"
