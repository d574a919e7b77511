#include "thread_pool.hpp"

#include <system_error>

#if defined(__x86_64__) || defined(_M_X64) || defined(__i386__)
#include <immintrin.h>
#endif
#if defined(__linux__)
#include <sched.h>
#endif

namespace omnigemm::detail::cpu {

namespace {

// The CPU the calling thread runs on, or -1 where the OS does not tell.
int current_cpu() {
#if defined(__linux__)
  return sched_getcpu();
#else
  return -1;
#endif
}

// A pause hint for spin loops (a no-op where the ISA has none).
void cpu_relax() {
#if defined(__x86_64__) || defined(_M_X64) || defined(__i386__)
  _mm_pause();
#endif
}

}  // namespace

void SpinBarrier::wait() {
  if (n_ <= 1) return;
  const unsigned phase = phase_.load(std::memory_order_acquire);
  if (arrived_.fetch_add(1, std::memory_order_acq_rel) == n_ - 1) {
    arrived_.store(0, std::memory_order_relaxed);
    phase_.store(phase + 1, std::memory_order_release);
    return;
  }
  for (int spins = 0; phase_.load(std::memory_order_acquire) == phase; ++spins) {
    if (spins < 4000) cpu_relax();
    else std::this_thread::yield();
  }
}

ThreadPool::ThreadPool(int size) {
  for (int t = 1; t < size; ++t) {
    try {
      workers_.emplace_back([this, t] { worker(t); });
    } catch (const std::system_error&) {
      break;
    }
  }
  size_ = int(workers_.size()) + 1;
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_.store(true, std::memory_order_release);
  }
  wake_.notify_all();
  for (auto& w : workers_) w.join();
}

void ThreadPool::run(const std::function<void(int)>& fn) {
  if (size_ == 1) {
    fn(0);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    job_ = &fn;
    caller_cpu_.store(current_cpu(), std::memory_order_relaxed);
    pending_.store(size_ - 1, std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_release);
  }
  wake_.notify_all();
  fn(0);
  // The other members usually finish within microseconds of the caller: spin, then sleep.
  for (int spins = 0; spins < 20000 && pending_.load(std::memory_order_acquire) != 0; ++spins) cpu_relax();
  std::unique_lock<std::mutex> lock(mutex_);
  done_.wait(lock, [&] { return pending_.load(std::memory_order_acquire) == 0; });
  job_ = nullptr;
}

void ThreadPool::worker(int t) {
  uint64_t seen = 0;
  for (;;) {
    // Spin for a new generation a while, then sleep on the condition variable.
    const auto spin_start = std::chrono::steady_clock::now();
    for (unsigned spins = 1;
         generation_.load(std::memory_order_acquire) == seen && !stop_.load(std::memory_order_acquire); ++spins) {
      cpu_relax();
      if (spins % 256 == 0) {
        if (std::chrono::steady_clock::now() - spin_start > kSpinAfterJob) break;
        const int cpu = current_cpu();
        if (cpu >= 0 && cpu == caller_cpu_.load(std::memory_order_relaxed)) break;
      }
    }
    const std::function<void(int)>* job;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] {
        return stop_.load(std::memory_order_relaxed) || generation_.load(std::memory_order_relaxed) != seen;
      });
      if (stop_.load(std::memory_order_relaxed)) return;
      seen = generation_.load(std::memory_order_relaxed);
      job = job_;
    }
    (*job)(t);
    if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      std::lock_guard<std::mutex> lock(mutex_);  // the caller checks pending_ under this lock
      done_.notify_one();
    }
  }
}

}  // namespace omnigemm::detail::cpu
