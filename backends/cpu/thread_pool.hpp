// The CPU backend's threads: a persistent pool whose members run one job together, and the
// spinning barrier a team of them synchronises on.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace omnigemm::detail::cpu {

// A team barrier: spins briefly (team members are running on their own cores), then yields.
class SpinBarrier {
 public:
  explicit SpinBarrier(int n) : n_(n) {}
  void wait();

 private:
  const int n_;
  std::atomic<int> arrived_{0};
  std::atomic<unsigned> phase_{0};
};

// Persistent workers; run(fn) calls fn(t) for every t in [0, size()) (t = 0 on the caller)
// and returns when all have finished. After a job, workers spin for kSpinAfterJob before they
// sleep: waking a sleeping thread can take a millisecond (an idle vCPU must be rescheduled),
// which would dominate back-to-back small GEMMs. A worker that finds itself on the caller's CPU
// sleeps at once instead: spinning there would keep it off the idle core the scheduler picks
// for a woken thread (seen on a 2-vCPU VM: 5x slower small GEMMs).
class ThreadPool {
 public:
  // If the OS refuses a thread, the pool runs with the threads it got.
  explicit ThreadPool(int size);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;
  int size() const { return size_; }
  void run(const std::function<void(int)>& fn);

 private:
  static constexpr auto kSpinAfterJob = std::chrono::microseconds(2000);
  void worker(int t);

  int size_ = 1;
  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  const std::function<void(int)>* job_ = nullptr;  // guarded by mutex_
  std::atomic<uint64_t> generation_{0};           // written under mutex_, read by spinning workers
  std::atomic<int> pending_{0};                   // workers still inside the current job
  std::atomic<bool> stop_{false};
  std::atomic<int> caller_cpu_{-1};  // where the last run() was called from
};

}  // namespace omnigemm::detail::cpu
