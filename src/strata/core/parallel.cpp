// A small persistent thread pool behind parallel_for. The caller and the workers claim
// chunks of [0, n) from one atomic word; the caller waits only for chunks someone claimed,
// so a worker the OS has descheduled delays nothing. (OpenMP's barrier waited for every
// thread: on a loaded 2-core machine 2-thread decode fell from 50 to 2 tokens/s.)
#include "strata/core/parallel.h"

#include <immintrin.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

namespace strata {
namespace {

using Fn = std::function<void(int64_t, int64_t)>;

// More chunks than threads, so a thread that runs late finds the work already shared out.
constexpr int64_t kChunksPerThread = 4;
// Workers spin this long for the next job (decode issues one every few tens of
// microseconds) before they sleep on a futex.
constexpr auto kSpinBeforeSleep = std::chrono::microseconds(500);
// The caller yields its core while waiting past this, letting a descheduled worker run.
constexpr auto kSpinBeforeYield = std::chrono::microseconds(50);

// The claim word: job generation (24 bits) | number of chunks (20) | next chunk (20).
constexpr int kChunkBits = 20;
constexpr uint64_t kChunkMask = (uint64_t{1} << kChunkBits) - 1;
uint64_t pack(uint64_t gen, uint64_t total, uint64_t next) {
  return (gen << (2 * kChunkBits)) | (total << kChunkBits) | next;
}
uint64_t gen_of(uint64_t w) { return w >> (2 * kChunkBits); }
uint64_t total_of(uint64_t w) { return (w >> kChunkBits) & kChunkMask; }
uint64_t next_of(uint64_t w) { return w & kChunkMask; }

thread_local bool t_inside_job = false;

// Marks the thread as inside a chunk, so a nested parallel_for runs inline.
struct InsideJob {
  InsideJob() { t_inside_job = true; }
  ~InsideJob() { t_inside_job = false; }
};

class Pool {
 public:
  Pool() { resize(static_cast<int>(std::thread::hardware_concurrency())); }
  ~Pool() { resize(1); }

  void resize(int num_threads) {
    std::lock_guard<std::mutex> lock(run_mutex_);
    stop_.store(true);
    wake_.fetch_add(1);
    wake_.notify_all();
    for (std::thread& t : workers_) t.join();
    workers_.clear();
    stop_.store(false);
    size_ = std::max(1, num_threads);
    for (int i = 1; i < size_; ++i) workers_.emplace_back([this] { worker_loop(); });
  }

  int size() const { return size_; }

  // Runs fn over num_chunks chunks of [0, n); returns false when the pool is busy
  // (another thread is inside run) so the caller runs the loop itself.
  bool run(int64_t n, int64_t num_chunks, const Fn& fn) {
    std::unique_lock<std::mutex> lock(run_mutex_, std::try_to_lock);
    if (!lock.owns_lock()) return false;
    fn_ = &fn;
    n_ = n;
    done_.store(0, std::memory_order_relaxed);
    const uint64_t gen = (gen_of(claim_.load(std::memory_order_relaxed)) + 1) & ((1u << 24) - 1);
    claim_.store(pack(gen, static_cast<uint64_t>(num_chunks), 0), std::memory_order_release);
    wake_.fetch_add(1);
    if (sleepers_.load() > 0) wake_.notify_all();
    work_on(gen);
    wait_done(num_chunks);
    return true;
  }

 private:
  // Claims and runs chunks of job `gen` until none is left.
  void work_on(uint64_t gen) {
    uint64_t w = claim_.load(std::memory_order_acquire);
    while (gen_of(w) == gen && next_of(w) < total_of(w)) {
      if (!claim_.compare_exchange_weak(w, w + 1, std::memory_order_acq_rel)) continue;
      // The chunk is ours and unfinished, so the caller still waits and fn_/n_ are stable.
      const int64_t c = static_cast<int64_t>(next_of(w)), k = static_cast<int64_t>(total_of(w));
      {
        const InsideJob inside;
        (*fn_)(n_ * c / k, n_ * (c + 1) / k);
      }
      done_.fetch_add(1, std::memory_order_acq_rel);
      w = claim_.load(std::memory_order_acquire);
    }
  }

  void wait_done(int64_t num_chunks) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; done_.load(std::memory_order_acquire) < num_chunks; ++i) {
      _mm_pause();
      if ((i & 63) == 63 && std::chrono::steady_clock::now() - start > kSpinBeforeYield) sched_yield();
    }
  }

  void worker_loop() {
    uint64_t seen = gen_of(claim_.load(std::memory_order_acquire));
    while (true) {
      const uint32_t wake_seen = wake_.load();
      const auto start = std::chrono::steady_clock::now();
      for (int i = 0;; ++i) {
        if (stop_.load(std::memory_order_relaxed)) return;
        const uint64_t gen = gen_of(claim_.load(std::memory_order_acquire));
        if (gen != seen) {
          seen = gen;
          work_on(gen);
          break;
        }
        _mm_pause();
        if ((i & 63) == 63 && std::chrono::steady_clock::now() - start > kSpinBeforeSleep) {
          sleepers_.fetch_add(1);
          wake_.wait(wake_seen);  // returns at once if a job was published since wake_seen
          sleepers_.fetch_sub(1);
          break;
        }
      }
    }
  }

  std::mutex run_mutex_;
  std::vector<std::thread> workers_;
  int size_ = 1;
  const Fn* fn_ = nullptr;
  int64_t n_ = 0;
  std::atomic<uint64_t> claim_{0};
  std::atomic<int64_t> done_{0};
  std::atomic<uint32_t> wake_{0};
  std::atomic<int> sleepers_{0};
  std::atomic<bool> stop_{false};
};

Pool& pool() {
  static Pool instance;
  return instance;
}

}  // namespace

void set_num_threads(int num_threads) { pool().resize(num_threads); }
int num_threads() { return pool().size(); }

void parallel_for(int64_t n, int64_t min_chunk, const Fn& fn) {
  if (n <= 0) return;
  const int64_t max_chunks = std::max<int64_t>(1, n / std::max<int64_t>(1, min_chunk));
  const int threads = num_threads();
  const int64_t num_chunks = std::min<int64_t>(max_chunks, threads * kChunksPerThread);
  if (threads <= 1 || num_chunks <= 1 || t_inside_job || !pool().run(n, num_chunks, fn)) fn(0, n);
}

}  // namespace strata
