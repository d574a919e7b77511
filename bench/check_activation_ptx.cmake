# Test bench_activation_ptx: the PTX of omnigemm-bench's separate activation pass (12 kernels:
# relu, leaky_relu, gelu, silu x f32, f16, bf16) assembles with ptxas for sm_80 and sm_90 without
# local memory. It cannot run without a GPU; the bench checks its results on one like every row.
#   usage: cmake -DPRINT=<omnigemm_bench_print_ptx> -DPTXAS=<ptxas or empty> -DOUT=<dir> -P check_activation_ptx.cmake
execute_process(COMMAND "${PRINT}" OUTPUT_FILE "${OUT}/activation_pass.ptx" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "printing the activation PTX failed (${rc})")
endif()
file(STRINGS "${OUT}/activation_pass.ptx" entries REGEX "^\\.visible \\.entry og_")
list(LENGTH entries n)
if(NOT n EQUAL 12)
  message(FATAL_ERROR "expected 12 kernels in the activation PTX, found ${n}")
endif()
if(NOT PTXAS)
  message(STATUS "SKIPPED bench_activation_ptx assembly: no ptxas (12 kernels printed)")
  return()
endif()
foreach(arch sm_80 sm_90)
  execute_process(COMMAND "${PTXAS}" -arch=${arch} -v "${OUT}/activation_pass.ptx" -o "${OUT}/activation_${arch}.cubin"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "ptxas -arch=${arch} failed:\n${out}\n${err}")
  endif()
  string(REGEX MATCHALL "[1-9][0-9]* bytes (stack frame|spill)" local "${err}")
  if(local)
    message(FATAL_ERROR "activation pass kernels use local memory on ${arch}: ${local}")
  endif()
endforeach()
message(STATUS "12 activation kernels assemble for sm_80 and sm_90")
