# Backend auto-detection: CUDA when nvcc is found, Vulkan when the loader is found, HIP when
# hipcc is found. The OMNIGEMM_WITH_* options default to what is found here.
include(CheckLanguage)

if(NOT DEFINED CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc AND NOT DEFINED ENV{CUDACXX})
  set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
endif()
check_language(CUDA)
if(CMAKE_CUDA_COMPILER)
  set(OMNIGEMM_HAVE_CUDA ON)
else()
  set(OMNIGEMM_HAVE_CUDA OFF)
endif()

# Vulkan: the loader is dlopen()ed at run time, so only headers and a GLSL compiler are
# needed to build; detect the loader library as the sign that Vulkan is wanted here.
find_library(OMNIGEMM_VULKAN_LOADER NAMES vulkan libvulkan.so.1)
if(OMNIGEMM_VULKAN_LOADER)
  set(OMNIGEMM_HAVE_VULKAN ON)
else()
  set(OMNIGEMM_HAVE_VULKAN OFF)
endif()

# HIP: hipcc that compiles a gfx90a kernel here (Debian's hipcc needs rocm-device-libs too). No
# AMD GPU is needed: the kernels are built and checked as code objects and run where one exists.
find_program(OMNIGEMM_HIPCC hipcc HINTS $ENV{ROCM_PATH}/bin /opt/rocm/bin)
set(OMNIGEMM_HAVE_HIP OFF)
if(OMNIGEMM_HIPCC)
  get_filename_component(OMNIGEMM_HIPCC_DIR "${OMNIGEMM_HIPCC}" DIRECTORY)
  if(NOT DEFINED OMNIGEMM_HIPCC_WORKS)
    set(probe_dir ${CMAKE_BINARY_DIR}/CMakeFiles/hip_probe)
    file(WRITE ${probe_dir}/probe.hip "#include <hip/hip_runtime.h>\n__global__ void k(float* x) { x[threadIdx.x] = 1.0f; }\n")
    execute_process(COMMAND ${OMNIGEMM_HIPCC} -std=c++20 --offload-arch=gfx90a --cuda-device-only --no-gpu-bundle-output
                            -c ${probe_dir}/probe.hip -o ${probe_dir}/probe.co
                    RESULT_VARIABLE probe_rc OUTPUT_VARIABLE probe_out ERROR_VARIABLE probe_out)
    if(probe_rc EQUAL 0)
      set(OMNIGEMM_HIPCC_WORKS ON CACHE INTERNAL "hipcc compiles for gfx90a")
    else()
      set(OMNIGEMM_HIPCC_WORKS OFF CACHE INTERNAL "hipcc compiles for gfx90a")
      message(STATUS "OmniGEMM: ${OMNIGEMM_HIPCC} does not compile for gfx90a (HIP backend off): ${probe_out}")
    endif()
  endif()
  set(OMNIGEMM_HAVE_HIP ${OMNIGEMM_HIPCC_WORKS})
endif()
