// The boundary of every C API entry point: the thread's last error message and the catch-all
// that keeps exceptions from crossing the C ABI (context.cpp and blockscaled_api.cpp use it).
#pragma once

#include <exception>
#include <new>
#include <string>

#include "backend.hpp"

namespace omnigemm::detail {

// Stores s's message as og_last_error_message() of this thread (unless ok) and returns its code.
og_status report_status(const Status& s);
// Clears this thread's message (at the start of each call).
void clear_last_error();

// Runs `body` and turns any escaping exception into a status (nothing crosses the C API).
template <class F>
og_status guarded(F&& body) {
  try {
    clear_last_error();
    return report_status(body());
  } catch (const std::bad_alloc&) {
    return report_status(error(StatusCode::out_of_memory, "out of host memory"));
  } catch (const std::exception& e) {
    return report_status(error(StatusCode::internal, std::string("internal error: ") + e.what()));
  } catch (...) {
    return report_status(error(StatusCode::internal, "internal error: unknown exception"));
  }
}

}  // namespace omnigemm::detail
