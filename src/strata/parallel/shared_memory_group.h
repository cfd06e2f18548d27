// The local processes of one group meeting in a POSIX shared-memory segment, advancing in
// rounds. In a round every rank writes a post (a tag and up to slot_bytes of payload), publishes
// it and waits until all ranks have published that round; posts alternate between two buffers per
// rank, so a buffer is written again only after every rank has published the round after it,
// i.e. has finished reading it. Ranks must make the same sequence of rounds.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "strata/parallel/communicator.h"

namespace strata {

// What a post belongs to, so that ranks in different collectives fail instead of mixing data.
struct PostTag {
  int32_t collective = 0;
  int32_t dtype = -1;
  int32_t root = -1;
  int64_t bytes = -1;  // the collective's whole size; -1 where this rank does not know it
};
inline constexpr int64_t kPostTagBytes = 64;  // a tag's room: payloads stay 64-byte aligned
static_assert(sizeof(PostTag) <= kPostTagBytes);

class SharedMemoryGroup {
 public:
  // Rank 0 creates the segment (removing a stale one of the same name), the others open it,
  // retrying until the timeout; returns once every rank has joined. Throws an Error otherwise.
  explicit SharedMemoryGroup(const CommunicatorOptions& options);
  // Marks this rank as gone (waiting ranks fail at once) and unmaps; removes the name if this
  // is the last rank of a group that never completed its rendezvous.
  ~SharedMemoryGroup();
  SharedMemoryGroup(const SharedMemoryGroup&) = delete;
  SharedMemoryGroup& operator=(const SharedMemoryGroup&) = delete;

  int rank() const { return rank_; }
  int world_size() const { return world_size_; }
  int64_t slot_bytes() const { return slot_bytes_; }
  const std::string& group_name() const { return group_name_; }

  // This rank's post of the next round: fill it, then publish_and_wait().
  PostTag& next_tag() { return *post_tag(rank_, round_ + 1); }
  uint8_t* next_payload() { return post_payload(rank_, round_ + 1); }
  // Publishes the next round and waits until every rank has published it. Throws an Error
  // naming the first rank missing when it exited, left the group, or the timeout passed.
  void publish_and_wait(std::string_view collective);
  // Makes this rank's wait (on any thread) fail within a sleep slice, and every later one.
  void interrupt() { interrupted_.store(true); }
  // Rank r's post of the round just completed.
  const PostTag& tag(int r) const { return *post_tag(r, round_); }
  const uint8_t* payload(int r) const { return post_payload(r, round_); }

 private:
  void create_segment();
  void open_segment(std::chrono::steady_clock::time_point deadline);
  bool try_open_segment();
  bool map_segment(int fd, int64_t num_bytes);
  void join(std::chrono::steady_clock::time_point deadline);
  void leave();
  void unmap();
  void remove_name_if_ours();
  // Waits until missing() is -1; throws naming the rank it returns (see publish_and_wait).
  template <typename Missing>
  void wait_for(const Missing& missing, std::string_view what, std::chrono::steady_clock::time_point deadline);
  enum class Absence { kExited, kLeft, kTimedOut };
  [[noreturn]] void fail_waiting(int missing_rank, std::string_view what, Absence absence) const;
  void ring_doorbell();
  PostTag* post_tag(int r, uint32_t round) const {
    return reinterpret_cast<PostTag*>(base_ + posts_offset_ + (2 * r + (round & 1)) * (kPostTagBytes + slot_bytes_));
  }
  uint8_t* post_payload(int r, uint32_t round) const { return reinterpret_cast<uint8_t*>(post_tag(r, round)) + kPostTagBytes; }

  std::string group_name_;
  std::string shm_name_;  // "/strata-<group_name>"
  int rank_;
  int world_size_;
  int64_t slot_bytes_;
  std::chrono::milliseconds timeout_;
  std::vector<int32_t> rank_pids_;  // rank 0: the processes it started as ranks 1..
  uint8_t* base_ = nullptr;  // the mapping: control block, rank records, posts
  int64_t posts_offset_ = 0;
  int64_t mapped_bytes_ = 0;
  dev_t segment_dev_ = 0;  // which file the name named when we opened it
  ino_t segment_ino_ = 0;
  bool attached_ = false;
  uint32_t round_ = 0;  // rounds this rank has completed
  std::atomic<bool> interrupted_{false};
  std::chrono::nanoseconds spin_{50'000};  // how long the next wait spins before it sleeps
};

}  // namespace strata
