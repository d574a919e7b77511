#!/usr/bin/env bash
# Installs what OmniGEMM's build, tests and benchmarks need on Debian 12 (run as root), and
# writes ${OMNIGEMM_CACHE:-~/.cache/omnigemm}/env.sh for the other scripts to source.
# Idempotent: packages already installed are not touched (no apt-get update either).
#
# Today's shaders (the portable Vulkan path) build with Debian 12's glslang 12. The
# cooperative-matrix shaders of the Vulkan issue will need glslang >= 14 and Vulkan headers
# >= 1.3.255, built from Debian trixie's sources into the cache (see TOOLCHAIN.md); this script
# already prefers such a build when it finds one in the cache or in a LunarG SDK.
set -euo pipefail

cache="${OMNIGEMM_CACHE:-$HOME/.cache/omnigemm}"
mkdir -p "$cache"

packages=(
  build-essential cmake ninja-build pkg-config git python3 ca-certificates
  doctest-dev            # test framework
  libopenblas-dev        # CPU baseline of omnigemm-bench (loaded at run time)
  libvulkan-dev libvulkan1 mesa-vulkan-drivers vulkan-validationlayers vulkan-tools
  glslang-tools spirv-tools
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
  if [ "$(id -u)" -ne 0 ]; then
    echo "bootstrap: missing packages: ${missing[*]}; run this script as root (it uses apt-get)" >&2
    exit 1
  fi
  echo "bootstrap: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  # lavapipe is in mesa-vulkan-drivers; its dependencies need the recommends of nothing else.
else
  echo "bootstrap: all packages present"
fi

# Newer shader tools, when a previous run (or scripts/bootstrap-vulkan-tools.sh) built them.
glslang=""
for candidate in "${OMNIGEMM_GLSLANG:-}" "$cache/glslang-15/bin/glslangValidator" \
                 "${VULKAN_SDK:+$VULKAN_SDK/bin/glslangValidator}" "$(command -v glslangValidator || true)"; do
  if [ -n "$candidate" ] && [ -x "$candidate" ]; then glslang="$candidate"; break; fi
done
vk_include=""
for candidate in "${OMNIGEMM_VULKAN_INCLUDE:-}" "$cache/vulkan-headers-1.4/usr/include" /usr/include; do
  if [ -n "$candidate" ] && [ -f "$candidate/vulkan/vulkan.h" ]; then vk_include="$candidate"; break; fi
done

{
  echo "# written by scripts/bootstrap.sh"
  echo "export OMNIGEMM_CACHE='$cache'"
  [ -n "$glslang" ] && echo "export OMNIGEMM_GLSLANG='$glslang'"
  [ -n "$vk_include" ] && echo "export OMNIGEMM_VULKAN_INCLUDE='$vk_include'"
  # CUDA toolkit (optional): the CUDA backend is built when nvcc is found.
  [ -x /usr/local/cuda/bin/nvcc ] && echo "export PATH=\"/usr/local/cuda/bin:\$PATH\""
  true
} > "$cache/env.sh.tmp"
mv "$cache/env.sh.tmp" "$cache/env.sh"
echo "bootstrap: glslang=${glslang:-none} vulkan headers=${vk_include:-none} (env in $cache/env.sh)"
