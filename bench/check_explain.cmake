# Test bench_explain_cpu: `omnigemm-bench --explain` on the CPU backend prints og_gemm_explain's
# report for every OmniGEMM row, naming the kernel family (cpu.packed), and the CSV's config
# column holds the family-qualified config ("packed:BMxBNxBK-...").
#   usage: cmake -DBENCH=<omnigemm-bench> -DOUT=<dir> -P check_explain.cmake
execute_process(
  COMMAND "${BENCH}" --backend cpu --shapes 64x48x40,96x80x72 --dtype f32,bf16 --no-vendor --budget-ms 5
          --warmup-ms 1 --no-plot --explain --out "${OUT}"
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "omnigemm-bench --explain exited with ${rc}\n${out}\n${err}")
endif()
# One report per row: 2 shapes x 2 dtypes.
string(REGEX MATCHALL "== explain: cpu [^\n]*: packed:[0-9]+x[0-9]+x[0-9]+-g[0-9]+-s[0-9]+-w[0-9]+" heads "${out}")
list(LENGTH heads n_heads)
string(REGEX MATCHALL "runs cpu\\.packed packed:" runs "${out}")
list(LENGTH runs n_runs)
if(NOT n_heads EQUAL 4 OR NOT n_runs EQUAL 4)
  message(FATAL_ERROR "expected 4 explain reports naming cpu.packed, found ${n_heads} headers and ${n_runs} 'runs cpu.packed' lines:\n${out}")
endif()
foreach(part "chosen by:" "launch: grid")
  string(FIND "${out}" "${part}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "the explain report lacks '${part}':\n${out}")
  endif()
endforeach()
file(STRINGS "${OUT}/results.csv" rows REGEX "^list,")
list(LENGTH rows n_rows)
if(NOT n_rows EQUAL 4)
  message(FATAL_ERROR "expected 4 rows in ${OUT}/results.csv, found ${n_rows}")
endif()
foreach(row IN LISTS rows)
  if(NOT row MATCHES ",ok,ok,.*,packed:[0-9]+x[0-9]+x[0-9]+-g[0-9]+-s[0-9]+-w[0-9]+[^,]*,")
    message(FATAL_ERROR "a CSV row is not ok with a family-qualified config: ${row}")
  endif()
endforeach()
message(STATUS "4 rows explained as cpu.packed, CSV configs family-qualified")
