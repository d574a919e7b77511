// Support for the CUDA tests that run on device pointers: the Hopper context (or a SKIPPED line),
// host matrices uploaded into og_memory_alloc'ed memory at a chosen byte offset (to misalign a
// base on purpose), and one descriptor's run with D downloaded.
#pragma once

#include <doctest/doctest.h>

#include <optional>
#include <string>

#include "backend_cases.hpp"

namespace omnigemm::test {

// A CUDA context on an sm_90 device; otherwise none, after printing why the test is skipped.
inline std::optional<Context> sm90_context(const char* test_name) {
  auto ctx = backend_context(Backend::cuda, test_name);
  if (!ctx) return ctx;
  og_capabilities caps{};
  REQUIRE(og_context_capabilities(ctx->c_handle(), &caps) == OG_OK);
  if (std::string(caps.driver_version).find("sm_90") == std::string::npos) {
    MESSAGE("SKIPPED cuda: " << test_name << ": " << caps.device_name << " (" << caps.driver_version
                             << ") is not an sm_90 device");
    return std::nullopt;
  }
  return ctx;
}

// Device memory from og_memory_alloc holding a host matrix's storage `offset` bytes past a
// 256-byte aligned address; freed with the object.
struct DeviceCopy {
  og_context* ctx = nullptr;
  og_memory base{};
  og_memory at{};
  size_t bytes = 0;
  DeviceCopy(og_context* c, const HostMatrix& m, uint64_t offset = 0) : ctx(c), bytes(m.bytes.size()) {
    REQUIRE(og_memory_alloc(ctx, bytes + offset + 256, &base) == OG_OK);
    at = base;
    at.offset += offset;
    REQUIRE(og_memory_upload(ctx, at, m.bytes.data(), bytes) == OG_OK);
  }
  DeviceCopy(const DeviceCopy&) = delete;
  DeviceCopy& operator=(const DeviceCopy&) = delete;
  ~DeviceCopy() { og_memory_free(ctx, base); }
  void download(HostMatrix& m) const { REQUIRE(og_memory_download(ctx, m.bytes.data(), at, bytes) == OG_OK); }
  Memory memory() const { return Memory{at}; }
};

}  // namespace omnigemm::test
