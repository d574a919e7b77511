// What the HIP kernel families share about their device: the runtime's entry points, the
// device's identity and limits (gfx arch, CU count, LDS), the embedded code objects loaded as
// modules, and status conversion. Owned by the backend (hip_backend.cpp); every family holds a
// reference. Host code only.
#pragma once
#include <string>

#include "backend.hpp"
#include "hip_runtime.hpp"

namespace omnigemm::detail {

class HipDevice {
 public:
  ~HipDevice();
  // Opens the runtime, queries device `index` and loads the code objects; backend_unavailable
  // ("hip: no AMD device (...)", or a device these code objects do not run on) otherwise.
  Status init(int index);

  // OK, or the runtime's error as a Status ("hip: <what> failed: <name>: <text>").
  Status check(hipError_t e, const char* what) const;
  // Makes this device current on the calling thread.
  Status select() const;
  // A kernel of the embedded code object for f16 or bf16 multiplicands by symbol (symbols.h).
  Status function(bool bf16, const char* symbol, hipFunction_t& out) const;

  const HipRuntime* api = nullptr;
  DeviceInfo info;
  std::string arch;  // "gfx90a", without target features
  int index = 0;
  long long max_grid_z = 65535;

 private:
  hipModule_t modules_[2] = {nullptr, nullptr};  // f16 and bf16 multiplicands
};

#define OG_HIP_TRY(dev, call, what)                                    \
  do {                                                                 \
    if (Status s_ = (dev).check((call), what); !s_) return s_;         \
  } while (0)

}  // namespace omnigemm::detail
