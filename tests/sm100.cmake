# The Blackwell family without Blackwell hardware (tests/sm100, backends/cuda/sm100):
#   sm100_model     the kernel's index arithmetic (sm100/layout.h) in a host model, on the CPU,
#                   against the float64 reference; built with or without CUDA;
#   cuda_codegen_sm100  the PTX and ptxas report of every kernel of the family (CUDA builds).
add_executable(test_sm100_model ${CMAKE_CURRENT_SOURCE_DIR}/sm100/test_sm100_model.cpp)
target_link_libraries(test_sm100_model PRIVATE omnigemm_test_main)
target_include_directories(test_sm100_model PRIVATE ${PROJECT_SOURCE_DIR}/backends/cuda)
add_test(NAME sm100_model COMMAND test_sm100_model)
set_tests_properties(sm100_model PROPERTIES TIMEOUT 900)
if(OMNIGEMM_WITH_CUDA)
  add_test(NAME cuda_codegen_sm100 COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cuda/codegen_sm100.sh ${CMAKE_CUDA_COMPILER}
                                           ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/cuda_codegen_sm100)
  set_tests_properties(cuda_codegen_sm100 PROPERTIES TIMEOUT 900)
endif()
