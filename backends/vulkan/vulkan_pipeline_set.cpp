// The bounded, shared set of pipelines (see vulkan_pipeline_set.hpp for the rules).
#include "vulkan_pipeline_set.hpp"

#include <cstdlib>

namespace omnigemm::detail::vulkan {

size_t PipelineSet::default_budget() {
  if (const char* v = std::getenv("OMNIGEMM_VK_PIPELINE_BUDGET"); v && *v) {
    char* end = nullptr;
    const long long n = std::strtoll(v, &end, 10);
    if (end && *end == '\0' && n > 0) return size_t(n);
  }
  return 32;
}

void PipelineSet::init(Build build, Destroy destroy, size_t budget) {
  build_ = std::move(build);
  destroy_ = std::move(destroy);
  budget_ = budget;
}

Status PipelineSet::acquire(Shader shader, const Specialization& spec, Use use, VkPipeline& out, Hold& hold) {
  out = VK_NULL_HANDLE;
  hold = Hold{};
  Key key{shader, std::vector<uint32_t>(spec.values, spec.values + spec.count)};
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    auto it = entries_.find(key);
    if (it == entries_.end()) break;
    Entry& e = it->second;
    if (e.building) {  // another thread is making it: wait, then look again (it may have failed)
      built_.wait(lock);
      continue;
    }
    ++stats_.hits;
    e.last_use = ++clock_;
    e.pinned |= use == Use::prepare;
    ++e.users;
    out = e.pipeline;
    hold = Hold{&e, use};
    return {};
  }
  auto it = entries_.emplace(std::move(key), Entry{}).first;
  Entry& e = it->second;
  e.users = 1;
  // Made without the lock: other threads' requests go on meanwhile.
  lock.unlock();
  VkPipeline made = VK_NULL_HANDLE;
  Status s;
  try {
    s = build_(shader, spec, made);
  } catch (...) {
    s = Status{StatusCode::internal, "vulkan: pipeline creation threw"};
  }
  lock.lock();
  if (!s) {
    entries_.erase(it);
    built_.notify_all();
    return s;
  }
  e.pipeline = made;
  e.building = false;
  e.pinned = use == Use::prepare;
  e.last_use = ++clock_;
  ++stats_.created;
  built_.notify_all();
  std::vector<VkPipeline> doomed = shrink();
  lock.unlock();
  for (VkPipeline p : doomed) destroy_(p);
  out = made;
  hold = Hold{&e, use};
  return {};
}

void PipelineSet::release(Hold& hold) {
  if (!hold.entry) return;
  std::vector<VkPipeline> doomed;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    Entry& e = *static_cast<Entry*>(hold.entry);
    --e.users;
    e.caller_recorded |= hold.use == Use::caller;
    doomed = shrink();
  }
  hold = Hold{};
  for (VkPipeline p : doomed) destroy_(p);
}

std::vector<VkPipeline> PipelineSet::shrink() {
  std::vector<VkPipeline> doomed;
  size_t unpinned = 0;
  for (const auto& [key, e] : entries_) unpinned += !e.pinned;
  while (unpinned > budget_) {
    auto victim = entries_.end();
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      const Entry& e = it->second;
      if (e.pinned || e.building || e.users > 0) continue;
      if (victim == entries_.end() || e.last_use < victim->second.last_use) victim = it;
    }
    if (victim == entries_.end()) break;  // the rest are in use: they leave when released
    if (victim->second.caller_recorded) retired_.push_back(victim->second.pipeline);
    else doomed.push_back(victim->second.pipeline);
    entries_.erase(victim);
    ++stats_.evicted;
    --unpinned;
  }
  return doomed;
}

void PipelineSet::clear() {
  std::vector<VkPipeline> all;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& [key, e] : entries_)
      if (e.pipeline) all.push_back(e.pipeline);
    all.insert(all.end(), retired_.begin(), retired_.end());
    entries_.clear();
    retired_.clear();
  }
  if (destroy_)
    for (VkPipeline p : all) destroy_(p);
}

PipelineStats PipelineSet::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  PipelineStats s = stats_;
  s.live = entries_.size();
  s.pinned = 0;
  for (const auto& [key, e] : entries_) s.pinned += e.pinned;
  s.retired = retired_.size();
  s.budget = budget_;
  return s;
}

void PipelineSet::set_budget(size_t budget) {
  std::vector<VkPipeline> doomed;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    budget_ = budget;
    doomed = shrink();
  }
  for (VkPipeline p : doomed) destroy_(p);
}

}  // namespace omnigemm::detail::vulkan
