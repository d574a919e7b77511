# cuda.short_k's row stores (backends/cuda/short_k/row_units.h) on the host: every byte of a row
# written once, by aligned stores, with the value of its column, at every offset of D's rows.
# The kernel itself runs in test_cuda (tests/cuda/test_cuda_short_k.cpp).
add_executable(test_short_k_model ${CMAKE_CURRENT_SOURCE_DIR}/short_k/test_short_k_model.cpp)
target_link_libraries(test_short_k_model PRIVATE omnigemm_test_main)
target_include_directories(test_short_k_model PRIVATE ${PROJECT_SOURCE_DIR}/backends/cuda)
add_test(NAME short_k_model COMMAND test_short_k_model)
