// dlopen helpers of the bench's vendor baselines (vendor.cpp, vendor_cublas.cpp,
// activation_pass.cpp): a status with a message, the first library found in a list of folders,
// and a symbol bound to a typed function pointer.
#pragma once

#include <dlfcn.h>

#include <string>
#include <utility>
#include <vector>

#include "omnigemm/omnigemm.hpp"

namespace omnigemm::bench::dl {

inline Status error(StatusCode code, std::string message) { return Status{code, std::move(message)}; }

// dlopen the first of `names` found in `dirs` (then the loader's own search path).
inline void* open_library(const std::vector<std::string>& dirs, const std::vector<std::string>& names, std::string& tried) {
  for (const std::string& name : names) {
    for (const std::string& dir : dirs) {
      const std::string path = dir.empty() ? name : dir + "/" + name;
      if (void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) return h;
      tried += (tried.empty() ? "" : ", ") + path;
    }
  }
  return nullptr;
}

template <class F>
bool load(void* lib, const char* symbol, F& fn) {
  fn = reinterpret_cast<F>(dlsym(lib, symbol));
  return fn != nullptr;
}

}  // namespace omnigemm::bench::dl
