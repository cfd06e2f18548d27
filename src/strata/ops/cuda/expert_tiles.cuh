// The device-side tile schedule of the grouped kernels: expert e owns ceil(rows_e / tile_rows)
// tiles, numbered in expert order. Every block reads the offsets itself and finds its tile, so
// no schedule buffer, no host sync and no extra launch: the grid is sized by an upper bound,
// ceil(M / tile_rows) + min(M, E), and blocks past the real count exit.
#pragma once

#include <cstdint>

namespace strata::cuda {

struct ExpertTile {
  int64_t expert = 0;
  int64_t row_begin = 0, row_end = 0;  // rows of x / out, clamped to [0, M]
};

struct ExpertTileShared {
  int32_t warp_totals[32];
  int64_t found[3];  // expert, row_begin, row_end; expert < 0 when the tile does not exist
};

// Upper bound on the number of tiles (host side, sizes the grid).
inline int64_t expert_tile_bound(int64_t m, int64_t experts, int64_t tile_rows) {
  return (m + tile_rows - 1) / tile_rows + (m < experts ? m : experts);
}

__device__ __forceinline__ int64_t expert_rows(const int32_t* offsets, int64_t e) {
  const int64_t rows = static_cast<int64_t>(offsets[e + 1]) - offsets[e];
  return rows > 0 ? rows : 0;
}

// Called by all threads of the block (blockDim.x a multiple of 32); true and `tile` filled
// when tile number `index` exists. Thread t scans the experts [t * per, (t + 1) * per).
__device__ inline bool find_expert_tile(const int32_t* offsets, int64_t experts, int64_t m, int64_t tile_rows,
                                 int64_t index, ExpertTile& tile, ExpertTileShared& s) {
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int64_t per = (experts + blockDim.x - 1) / blockDim.x;
  const int64_t e0 = tid * per < experts ? tid * per : experts;
  const int64_t e1 = e0 + per < experts ? e0 + per : experts;
  int32_t count = 0;
  for (int64_t e = e0; e < e1; ++e)
    count += static_cast<int32_t>((expert_rows(offsets, e) + tile_rows - 1) / tile_rows);
  int32_t incl = count;  // inclusive scan within the warp, then across warps
  for (int o = 1; o < 32; o <<= 1) {
    const int32_t v = __shfl_up_sync(0xffffffffu, incl, o);
    if (lane >= o) incl += v;
  }
  if (tid == 0) s.found[0] = -1;
  if (lane == 31) s.warp_totals[warp] = incl;
  __syncthreads();
  int32_t before = 0;
  for (int w = 0; w < warp; ++w) before += s.warp_totals[w];
  const int64_t first = before + incl - count;  // this thread's first tile
  if (index >= first && index < first + count) {
    int64_t j = index - first;
    for (int64_t e = e0; e < e1; ++e) {
      const int64_t tiles = (expert_rows(offsets, e) + tile_rows - 1) / tile_rows;
      if (j < tiles) {
        const int64_t begin = offsets[e] + j * tile_rows;
        const int64_t end = begin + tile_rows < offsets[e + 1] ? begin + tile_rows : offsets[e + 1];
        s.found[0] = e;
        s.found[1] = begin < 0 ? 0 : (begin > m ? m : begin);
        s.found[2] = end < 0 ? 0 : (end > m ? m : end);
        break;
      }
      j -= tiles;
    }
  }
  __syncthreads();
  tile.expert = s.found[0];
  tile.row_begin = s.found[1];
  tile.row_end = s.found[2];
  return tile.expert >= 0 && tile.row_begin < tile.row_end;
}

}  // namespace strata::cuda
