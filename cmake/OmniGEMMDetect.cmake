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

find_program(OMNIGEMM_HIPCC hipcc)
if(OMNIGEMM_HIPCC)
  set(OMNIGEMM_HAVE_HIP ON)
else()
  set(OMNIGEMM_HAVE_HIP OFF)
endif()
