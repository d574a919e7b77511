# The skinny families (backends/cuda/skinny) checked without a GPU:
#   skinny_mma_model  the kernel's index arithmetic (skinny/mma_layout.h) in a host model, on the
#                     CPU, against the float64 reference; built with or without CUDA.
# Its PTX and ptxas report are cuda_codegen's (tests/cuda/codegen_check.sh).
add_executable(test_skinny_mma_model ${CMAKE_CURRENT_SOURCE_DIR}/skinny_mma/test_skinny_mma_model.cpp)
target_link_libraries(test_skinny_mma_model PRIVATE omnigemm_test_main)
target_include_directories(test_skinny_mma_model PRIVATE ${PROJECT_SOURCE_DIR}/backends/cuda)
add_test(NAME skinny_mma_model COMMAND test_skinny_mma_model)
set_tests_properties(skinny_mma_model PROPERTIES TIMEOUT 900)

# skinny_lanes_k_groups: cuda.skinny's four-element loads of L (skinny/lanes_k_groups.h) on the
# host: every K read once, aligned, against its own S value, at every column's shift.
add_executable(test_skinny_lanes_k_groups ${CMAKE_CURRENT_SOURCE_DIR}/skinny_mma/test_skinny_lanes_k_groups.cpp)
target_link_libraries(test_skinny_lanes_k_groups PRIVATE omnigemm_test_main)
target_include_directories(test_skinny_lanes_k_groups PRIVATE ${PROJECT_SOURCE_DIR}/backends/cuda)
add_test(NAME skinny_lanes_k_groups COMMAND test_skinny_lanes_k_groups)
