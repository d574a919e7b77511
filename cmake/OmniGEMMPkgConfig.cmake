# pkg-config files for the installed package (included from engine/CMakeLists.txt):
#   omnigemm.pc         the shared library: cc app.c $(pkg-config --cflags --libs omnigemm)
#   omnigemm_static.pc  the static library with everything it links against
# Paths are relative to the .pc file's own directory (${pcfiledir}), so the files stay right for
# any `cmake --install --prefix`, and for a prefix tree moved elsewhere. The C++ API
# (omnigemm.hpp) needs -std=c++20, which Cflags leave to the consumer.
set(pc_dir ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}" OR IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  set(pc_prefix "${CMAKE_INSTALL_PREFIX}")
  set(pc_libdir "${CMAKE_INSTALL_FULL_LIBDIR}")
  set(pc_includedir "${CMAKE_INSTALL_FULL_INCLUDEDIR}")
else()
  # One "/.." per component of <libdir>/pkgconfig leads back to the prefix.
  string(REGEX REPLACE "[^/]+" ".." pc_up "${pc_dir}")
  set(pc_prefix "\${pcfiledir}/${pc_up}")
  set(pc_libdir "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
  set(pc_includedir "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
endif()

# What the static library needs at link time: the C++ runtime (a C program links it too),
# threads, dlopen, libm, and the static CUDA runtime when the CUDA backend is compiled in.
set(pc_static_libs "-lstdc++ -lm -pthread")
foreach(lib IN LISTS CMAKE_DL_LIBS)
  string(APPEND pc_static_libs " -l${lib}")
endforeach()
if(OMNIGEMM_WITH_CUDA)
  get_filename_component(pc_cudart_dir "${CUDA_cudart_static_LIBRARY}" DIRECTORY)  # from CUDAToolkit
  set(pc_static_libs "${pc_static_libs} -L${pc_cudart_dir} -lcudart_static -lrt")
endif()

foreach(variant IN ITEMS shared static)
  if(variant STREQUAL "shared")
    set(pc_name omnigemm)
    set(pc_description "OmniGEMM GEMM engine (shared library; C API, header-only C++20 API)")
    set(pc_libs "-L\${libdir} -lomnigemm")
  else()
    set(pc_name omnigemm_static)
    set(pc_description "OmniGEMM GEMM engine (static library; C API, header-only C++20 API)")
    set(pc_libs "-L\${libdir} -lomnigemm_static ${pc_static_libs}")
  endif()
  file(CONFIGURE OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/${pc_name}.pc @ONLY CONTENT [=[
prefix=@pc_prefix@
libdir=@pc_libdir@
includedir=@pc_includedir@

Name: @pc_name@
Description: @pc_description@
Version: @PROJECT_VERSION@
Cflags: -I${includedir}
Libs: @pc_libs@
]=])
  install(FILES ${CMAKE_CURRENT_BINARY_DIR}/${pc_name}.pc DESTINATION ${pc_dir})
endforeach()
