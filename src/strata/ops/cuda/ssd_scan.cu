// CUDA Mamba-2 SSD scan, recurrent form: one block per head; thread (row i, part p) holds
// state columns [p * R, (p + 1) * R) of row i of the head's state [hd, N] in registers, the
// four parts of a row are adjacent lanes, so S·C reduces with two shuffles. A batched decode
// step runs one single-token sequence per blockIdx.y with its slot's state. Long rows without
// per-token states take the chunked form (ssd_scan_chunked.cu); ssd_scan_cuda_form picks.
#include <cmath>

#include "strata/ops/cuda/ssd_scan.cuh"
#include "strata/ops/ssd_scan.h"

namespace strata::cuda {
namespace {

constexpr int kParts = 4;

template <typename T, int R>
__global__ void ssd_recurrent_kernel(SsdParams p) {
  extern __shared__ float smem[];
  float* bvec = smem;          // [N]
  float* cvec = bvec + p.n;    // [N]
  float* step = cvec + p.n;    // dt, exp(dt * A)
  const int h = blockIdx.x;
  const int64_t i = threadIdx.x / kParts, part = threadIdx.x % kParts;
  const bool active = i < p.hd;
  const int64_t grp = h / (p.nh / p.groups);
  const float A = -expf(p.A_log[h]);
  const float d_skip = p.D != nullptr ? p.D[h] : 0.0f;
  int64_t t_begin = 0, t_end = p.tokens, slot = 0;
  if (p.slots != nullptr) {
    slot = p.slots[blockIdx.y];
    if (slot < 0 || slot >= p.num_slots) return;  // the whole block: no barrier is left waiting
    t_begin = blockIdx.y, t_end = t_begin + 1;
  }
  float* state = p.state + (slot * p.nh + h) * p.hd * p.n;
  float s[R];
#pragma unroll
  for (int r = 0; r < R; ++r) s[r] = active ? state[i * p.n + part * R + r] : 0.0f;
  for (int64_t t = t_begin; t < t_end; ++t) {
    const T* row = static_cast<const T*>(p.xbc) + t * p.stride;
    const int64_t b_off = p.nh * p.hd + grp * p.n, c_off = p.nh * p.hd + p.groups * p.n + grp * p.n;
    for (int64_t c = threadIdx.x; c < p.n; c += blockDim.x) {
      bvec[c] = to_f32(row[b_off + c]);
      cvec[c] = to_f32(row[c_off + c]);
    }
    if (threadIdx.x == 0) {
      const float dt = ssd_time_step<T>(p, t, h);
      step[0] = dt;
      step[1] = expf(dt * A);
    }
    __syncthreads();
    const float xi = active ? to_f32(row[h * p.hd + i]) : 0.0f;
    const float dtx = step[0] * xi, decay = step[1];
    float y = 0.0f;
#pragma unroll
    for (int r = 0; r < R; ++r) {
      s[r] = s[r] * decay + dtx * bvec[part * R + r];
      y += s[r] * cvec[part * R + r];
    }
    y += __shfl_xor_sync(0xffffffffu, y, 1);
    y += __shfl_xor_sync(0xffffffffu, y, 2);
    if (active && part == 0) static_cast<T*>(p.y)[(t * p.nh + h) * p.hd + i] = from_f32<T>(y + xi * d_skip);
    if (p.intermediates != nullptr && active) {
      float* dst = p.intermediates + ((t * p.nh + h) * p.hd + i) * p.n;
#pragma unroll
      for (int r = 0; r < R; ++r) dst[part * R + r] = s[r];
    }
    __syncthreads();
  }
  if (active)
#pragma unroll
    for (int r = 0; r < R; ++r) state[i * p.n + part * R + r] = s[r];
}

template <typename T>
void launch_ssd(const SsdParams& p) {
  const unsigned threads = static_cast<unsigned>(ceil_div(p.hd * kParts, 32) * 32);
  const size_t smem = (2 * p.n + 2) * sizeof(float);
  const cudaStream_t stream = current_stream();
  const dim3 grid(static_cast<unsigned>(p.nh), p.slots != nullptr ? static_cast<unsigned>(p.tokens) : 1u);
  switch (p.n) {
    case 16: ssd_recurrent_kernel<T, 4><<<grid, threads, smem, stream>>>(p); break;
    case 32: ssd_recurrent_kernel<T, 8><<<grid, threads, smem, stream>>>(p); break;
    case 64: ssd_recurrent_kernel<T, 16><<<grid, threads, smem, stream>>>(p); break;
    case 128: ssd_recurrent_kernel<T, 32><<<grid, threads, smem, stream>>>(p); break;
    case 256: ssd_recurrent_kernel<T, 64><<<grid, threads, smem, stream>>>(p); break;
    default:  // refused at model build (ops::check_ssd_scan_supported)
      throw Error("ssd_scan: state size " + std::to_string(p.n) + " is not supported on CUDA (16..256, powers of 2)");
  }
  STRATA_CUDA_CHECK_LAUNCH();
}

}  // namespace

void ssd_scan(const ops::SsdScanArgs& args, const ops::SsdScanOptions& options, ops::SsdScanForm form) {
  const int64_t t = args.xbc.dim(0), nh = args.state.dim(-3), hd = args.state.dim(-2), n = args.state.dim(-1);
  const bool batched = args.state_slots.defined();
  if (t == 0) return;
  if (batched && (form != ops::SsdScanForm::kRecurrent || t > 65535))  // rows <= max_num_seqs
    throw Error("ssd_scan: a batched decode step runs the recurrent form, at most 65535 rows (got " +
                std::to_string(t) + ")");
  if (hd * kParts > 1024)  // refused at model build (ops::check_ssd_scan_supported)
    throw Error("ssd_scan: head dim " + std::to_string(hd) + " above 256");
  STRATA_CHECK(args.dt.dtype() == args.xbc.dtype() && args.y.dtype() == args.xbc.dtype());
  const bool intermediates = args.intermediate_states.defined();
  if (form == ops::SsdScanForm::kChunked &&
      ops::ssd_scan_cuda_form(ops::kSsdScanChunkTokens, hd, n, intermediates) != ops::SsdScanForm::kChunked) {
    throw Error("ssd_scan: the chunked form needs no intermediate_states, a state size that is a power of two "
                "in 16..256 (got " + std::to_string(n) + ") and a head dim that is a multiple of 32 (got " +
                std::to_string(hd) + "); use the recurrent form");
  }
  const SsdParams p{.xbc = args.xbc.data(), .dt = args.dt.data(), .dt_bias = args.dt_bias.data_as<float>(),
                    .A_log = args.A_log.data_as<float>(),
                    .D = args.D.defined() ? args.D.data_as<float>() : nullptr,
                    .state = args.state.data_as<float>(), .y = args.y.data(),
                    .intermediates = intermediates ? args.intermediate_states.data_as<float>() : nullptr,
                    .slots = batched ? args.state_slots.data_as<int32_t>() : nullptr,
                    .num_slots = batched ? args.state.dim(0) : 1,
                    .tokens = t, .nh = nh, .hd = hd, .n = n, .groups = options.n_groups,
                    .stride = args.xbc.dim(1), .dt_min = options.dt_min, .dt_max = options.dt_max};
  if (args.xbc.dtype() != DType::kBF16 && args.xbc.dtype() != DType::kF32)
    unsupported_dtype("ssd_scan", args.xbc.dtype());
  if (form == ops::SsdScanForm::kChunked) {
    launch_ssd_chunked(p, args.xbc.dtype());
  } else if (args.xbc.dtype() == DType::kBF16) {
    launch_ssd<__nv_bfloat16>(p);
  } else {
    launch_ssd<float>(p);
  }
}

void ssd_scan(const ops::SsdScanArgs& args, const ops::SsdScanOptions& options) {
  const ops::SsdScanForm form =
      args.state_slots.defined() ? ops::SsdScanForm::kRecurrent
                                 : ops::ssd_scan_cuda_form(args.xbc.dim(0), args.state.dim(1), args.state.dim(2),
                                                           args.intermediate_states.defined());
  ssd_scan(args, options, form);
}

}  // namespace strata::cuda
