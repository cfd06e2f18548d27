// The shared-memory group's segment: its layout, the rendezvous, the rounds, and the waits that
// notice a missing rank (futex sleeps on one doorbell word, the peer's pid, the deadline).
// Layout: a control block, one 64-byte record per rank, then per rank two posts (tag + slot).
#include "strata/parallel/shared_memory_group.h"

#include <fcntl.h>
#include <immintrin.h>
#include <linux/futex.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <new>
#include <thread>

#include <fmt/format.h>

#include "strata/core/error.h"

namespace strata {
namespace {

using Clock = std::chrono::steady_clock;

constexpr uint64_t kMagic = 0x3148534154525453;  // "STRTASH1"
constexpr int64_t kRecordBytes = 64;
constexpr int64_t kPageBytes = 4096;
constexpr int kMaxRanks = 1024;
// Spinning first keeps a round within microseconds while every rank has a core of its own;
// after it ranks sleep, so that oversubscribed ranks hand the core to the one they wait for.
// The spell adapts: halved after each wait that had to sleep, doubled after one that did not.
constexpr auto kMaxSpin = std::chrono::nanoseconds(50'000);
constexpr auto kMinSpin = std::chrono::nanoseconds(500);
// How often a sleeping rank wakes to check the missing rank's pid and the deadline.
constexpr auto kSleepSlice = std::chrono::milliseconds(10);

static_assert(std::atomic<uint32_t>::is_always_lock_free && std::atomic<uint64_t>::is_always_lock_free);

struct alignas(64) ControlBlock {
  std::atomic<uint64_t> magic{0};  // kMagic once rank 0 has laid the segment out
  int64_t slot_bytes = 0;
  int32_t world_size = 0;
  std::atomic<uint32_t> doorbell{0};  // a futex word, bumped to wake sleepers
  std::atomic<uint32_t> num_sleepers{0};
  std::atomic<int32_t> num_attached{0};  // joined and not yet left: the last out removes the name
  std::atomic<uint32_t> name_removed{0};
};
static_assert(sizeof(ControlBlock) == 64);

enum RankStatus : uint32_t { kAbsent = 0, kJoined = 1, kLeft = 2 };

struct alignas(64) RankRecord {
  std::atomic<uint32_t> round{0};  // the last round this rank published
  std::atomic<int32_t> pid{0};
  std::atomic<uint32_t> status{kAbsent};
  std::atomic<int32_t> gave_up_on{-1};  // the rank this one stopped waiting for
};
static_assert(sizeof(RankRecord) == kRecordBytes);

ControlBlock& control(uint8_t* base) { return *reinterpret_cast<ControlBlock*>(base); }
RankRecord& record(uint8_t* base, int r) {
  return *reinterpret_cast<RankRecord*>(base + sizeof(ControlBlock) + r * kRecordBytes);
}

int64_t posts_offset(int world_size) {
  const int64_t end = static_cast<int64_t>(sizeof(ControlBlock)) + world_size * kRecordBytes;
  return (end + kPageBytes - 1) / kPageBytes * kPageBytes;
}
int64_t segment_bytes(int world_size, int64_t slot_bytes) {
  return posts_offset(world_size) + 2 * world_size * (kPostTagBytes + slot_bytes);
}

const CommunicatorOptions& checked(const CommunicatorOptions& o) {
  if (o.world_size < 1 || o.world_size > kMaxRanks)
    fail("communicator world_size {} is out of range: 1 to {} ranks", o.world_size, kMaxRanks);
  if (o.rank < 0 || o.rank >= o.world_size)
    fail("communicator rank {} is out of range for world_size {}: ranks are 0 to {}", o.rank, o.world_size,
         o.world_size - 1);
  const bool name_ok = std::all_of(o.group_name.begin(), o.group_name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
  });
  if (o.group_name.empty() || o.group_name.size() > 200 || !name_ok)
    fail("communicator group name '{}' is not usable: 1 to 200 letters, digits, '.', '_' or '-'", o.group_name);
  if (o.slot_bytes < 4096 || o.slot_bytes % 64 != 0)
    fail("communicator slot_bytes {} must be a multiple of 64 and at least 4096", o.slot_bytes);
  if (o.timeout.count() <= 0) fail("communicator timeout {} ms must be positive", o.timeout.count());
  return o;
}

// A process that is gone, or a zombie nobody has reaped yet (kill() still finds those).
bool process_exited(pid_t pid) {
  if (kill(pid, 0) != 0) return errno == ESRCH;
  std::FILE* file = std::fopen(fmt::format("/proc/{}/stat", pid).c_str(), "r");
  if (file == nullptr) return false;
  char text[512];
  const size_t n = std::fread(text, 1, sizeof(text) - 1, file);
  std::fclose(file);
  text[n] = 0;
  const char* name_end = std::strrchr(text, ')');  // "pid (comm) S ...": comm may hold spaces
  return name_end != nullptr && name_end[1] == ' ' && (name_end[2] == 'Z' || name_end[2] == 'X');
}

void futex_wait(std::atomic<uint32_t>& word, uint32_t expected, std::chrono::nanoseconds timeout) {
  const timespec ts{static_cast<time_t>(timeout.count() / 1'000'000'000), static_cast<long>(timeout.count() % 1'000'000'000)};
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAIT, expected, &ts, nullptr, 0);
}

void futex_wake_all(std::atomic<uint32_t>& word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

}  // namespace

SharedMemoryGroup::SharedMemoryGroup(const CommunicatorOptions& options)
    : group_name_(checked(options).group_name),
      shm_name_("/strata-" + options.group_name),
      rank_(options.rank),
      world_size_(options.world_size),
      slot_bytes_(options.slot_bytes),
      timeout_(options.timeout),
      rank_pids_(options.rank_pids),
      posts_offset_(posts_offset(options.world_size)) {
  const auto deadline = Clock::now() + timeout_;
  if (rank_ == 0) {
    create_segment();
  } else {
    open_segment(deadline);
  }
  try {
    join(deadline);
  } catch (...) {
    leave();
    unmap();
    throw;
  }
}

SharedMemoryGroup::~SharedMemoryGroup() {
  leave();
  unmap();
}

bool SharedMemoryGroup::map_segment(int fd, int64_t num_bytes) {
  struct stat st {};
  void* p = fstat(fd, &st) == 0 ? mmap(nullptr, num_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
  const int err = errno;
  close(fd);
  errno = err;
  if (p == MAP_FAILED) return false;
  base_ = static_cast<uint8_t*>(p);
  mapped_bytes_ = num_bytes;
  segment_dev_ = st.st_dev;
  segment_ino_ = st.st_ino;
  return true;
}

void SharedMemoryGroup::create_segment() {
  shm_unlink(shm_name_.c_str());  // a stale segment of a crashed run: its ranks are gone
  const int fd = shm_open(shm_name_.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0)
    fail("could not create shared-memory segment {} for group '{}': {} (is another rank 0 of the group running?)",
         shm_name_, group_name_, std::strerror(errno));
  const int64_t num_bytes = segment_bytes(world_size_, slot_bytes_);
  // posix_fallocate: a full /dev/shm fails here with ENOSPC rather than with SIGBUS mid-collective.
  int err = ftruncate(fd, num_bytes) != 0 ? errno : posix_fallocate(fd, 0, num_bytes);
  if (err != 0) {
    close(fd);
  } else if (!map_segment(fd, num_bytes)) {  // closes fd
    err = errno;
  }
  if (err != 0) {
    shm_unlink(shm_name_.c_str());
    fail("could not reserve {} bytes of shared memory for group '{}': {}; free space in /dev/shm or pass a "
         "smaller slot_bytes",
         num_bytes, group_name_, std::strerror(err));
  }
  ControlBlock* c = new (base_) ControlBlock();
  c->world_size = world_size_;
  c->slot_bytes = slot_bytes_;
  for (int r = 0; r < world_size_; ++r) new (&record(base_, r)) RankRecord();
  record(base_, 0).pid.store(getpid());
  // A started rank finds its own pid here when it joins (join() accepts that).
  for (int r = 1; r < world_size_ && r <= std::ssize(rank_pids_); ++r) record(base_, r).pid.store(rank_pids_[r - 1]);
  c->magic.store(kMagic, std::memory_order_release);
}

void SharedMemoryGroup::open_segment(Clock::time_point deadline) {
  while (!try_open_segment()) {
    if (Clock::now() >= deadline)
      fail("shared-memory group '{}': rank {} found no segment from rank 0 within {:g} s: start rank 0 with the "
           "same group name",
           group_name_, rank_, timeout_.count() / 1000.0);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

// Maps the segment once rank 0 has laid it out; false while it is missing, unfinished or stale.
bool SharedMemoryGroup::try_open_segment() {
  const int fd = shm_open(shm_name_.c_str(), O_RDWR, 0);
  if (fd < 0) {
    if (errno == ENOENT) return false;
    fail("could not open shared-memory segment {} of group '{}': {}", shm_name_, group_name_, std::strerror(errno));
  }
  struct stat st {};
  if (fstat(fd, &st) != 0 || st.st_size < posts_offset(1)) {
    close(fd);
    return false;
  }
  if (!map_segment(fd, st.st_size)) return false;
  const ControlBlock& c = control(base_);
  const RankRecord& root = record(base_, 0);
  const int32_t root_pid = root.pid.load();
  if (c.magic.load(std::memory_order_acquire) != kMagic || root_pid == 0 || root.status.load() == kLeft ||
      process_exited(root_pid)) {
    unmap();
    return false;
  }
  if (c.world_size != world_size_ || c.slot_bytes != slot_bytes_ || st.st_size != segment_bytes(world_size_, slot_bytes_)) {
    const int root_world_size = c.world_size;
    const int64_t root_slot_bytes = c.slot_bytes;
    unmap();
    fail("shared-memory group '{}': rank 0 has world_size {} and slot_bytes {}, rank {} has {} and {}: start every "
         "rank with the same options",
         group_name_, root_world_size, root_slot_bytes, rank_, world_size_, slot_bytes_);
  }
  return true;
}

void SharedMemoryGroup::join(Clock::time_point deadline) {
  RankRecord& mine = record(base_, rank_);
  int32_t holder = 0;
  if (!mine.pid.compare_exchange_strong(holder, getpid()) && holder != getpid())
    fail("shared-memory group '{}': rank {} is taken by pid {}: two processes were started as the same rank",
         group_name_, rank_, holder);
  control(base_).num_attached.fetch_add(1);
  attached_ = true;
  mine.status.store(kJoined);
  ring_doorbell();
  const auto first_absent = [&] {
    for (int r = 0; r < world_size_; ++r)
      if (record(base_, r).status.load() != kJoined) return r;
    return -1;
  };
  wait_for(first_absent, "the group's rendezvous", deadline);
  remove_name_if_ours();  // every rank has it mapped: nothing is left behind, whatever happens next
}

void SharedMemoryGroup::publish_and_wait(std::string_view collective) {
  const uint32_t round = round_ + 1;
  // seq_cst store, then the sleeper count: a rank going to sleep either sees this round or is
  // counted here, so it is woken.
  record(base_, rank_).round.store(round);
  if (control(base_).num_sleepers.load() > 0) ring_doorbell();
  const auto first_behind = [&] {
    for (int r = 0; r < world_size_; ++r)
      if (static_cast<int32_t>(record(base_, r).round.load() - round) < 0) return r;  // wraps safely
    return -1;
  };
  wait_for(first_behind, collective, Clock::now() + timeout_);
  round_ = round;
}

template <typename Missing>
void SharedMemoryGroup::wait_for(const Missing& missing, std::string_view what, Clock::time_point deadline) {
  const auto spin_end = Clock::now() + spin_;
  while (missing() >= 0) {
    if (Clock::now() >= spin_end) {
      spin_ = std::max(kMinSpin, spin_ / 2);
      break;
    }
    _mm_pause();
  }
  if (missing() < 0) {
    spin_ = std::min(kMaxSpin, spin_ * 2);
    return;
  }
  ControlBlock& c = control(base_);
  for (int r = missing(); r >= 0; r = missing()) {
    const RankRecord& peer = record(base_, r);
    const int32_t pid = peer.pid.load();
    if (interrupted_.load())
      fail("shared-memory group '{}': rank {} stopped waiting for rank {} in {} (interrupted)", group_name_, rank_, r,
           what);
    if (peer.status.load() == kLeft) fail_waiting(r, what, Absence::kLeft);
    if (pid != 0 && process_exited(pid)) fail_waiting(r, what, Absence::kExited);
    const auto now = Clock::now();
    if (now >= deadline) fail_waiting(r, what, Absence::kTimedOut);
    c.num_sleepers.fetch_add(1);
    const uint32_t bell = c.doorbell.load();
    if (missing() >= 0) futex_wait(c.doorbell, bell, std::min<Clock::duration>(deadline - now, kSleepSlice));
    c.num_sleepers.fetch_sub(1);
  }
}

void SharedMemoryGroup::fail_waiting(int missing_rank, std::string_view what, Absence absence) const {
  const RankRecord& peer = record(base_, missing_rank);
  // Recorded before this rank leaves, so that the ranks still waiting name the cause, not us.
  record(base_, rank_).gave_up_on.store(absence == Absence::kLeft ? peer.gave_up_on.load() : missing_rank);
  switch (absence) {
    case Absence::kExited:
      fail("shared-memory group '{}': rank {} (pid {}) exited before reaching {}", group_name_, missing_rank,
           peer.pid.load(), what);
    case Absence::kLeft:
      if (peer.gave_up_on.load() >= 0)
        fail("shared-memory group '{}': rank {} left the group before reaching {}: it gave up waiting for rank {}{}",
             group_name_, missing_rank, what, peer.gave_up_on.load(), peer.gave_up_on.load() == rank_ ? " (this one)" : "");
      fail("shared-memory group '{}': rank {} left the group before reaching {} (it failed or finished early)",
           group_name_, missing_rank, what);
    case Absence::kTimedOut:
      break;
  }
  fail("shared-memory group '{}': rank {} did not reach {} within {:g} s: it may have exited or be stuck",
       group_name_, missing_rank, what, timeout_.count() / 1000.0);
}

void SharedMemoryGroup::ring_doorbell() {
  control(base_).doorbell.fetch_add(1);
  futex_wake_all(control(base_).doorbell);
}

void SharedMemoryGroup::leave() {
  if (!attached_) return;
  attached_ = false;
  record(base_, rank_).status.store(kLeft);
  ring_doorbell();
  if (control(base_).num_attached.fetch_sub(1) == 1) remove_name_if_ours();
}

void SharedMemoryGroup::unmap() {
  if (base_ != nullptr) munmap(base_, mapped_bytes_);
  base_ = nullptr;
}

// Only while the name still names our segment: a newer group of the same name may own it now.
void SharedMemoryGroup::remove_name_if_ours() {
  if (control(base_).name_removed.exchange(1) != 0) return;
  const int fd = shm_open(shm_name_.c_str(), O_RDONLY, 0);
  if (fd < 0) return;
  struct stat st {};
  const bool ours = fstat(fd, &st) == 0 && st.st_dev == segment_dev_ && st.st_ino == segment_ino_;
  close(fd);
  if (ours) shm_unlink(shm_name_.c_str());
}

}  // namespace strata
