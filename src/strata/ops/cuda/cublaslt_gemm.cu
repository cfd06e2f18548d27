// cuBLASLt plumbing behind cuda::linear. Row-major out[m, n] = x[m, k] @ w[n, k]^T is the
// column-major product D(n x m) = W^T(n x k) * X(k x m): A = W transposed (k x n, ld k),
// B = X (k x m, ld k), D (n x m, ld n). The epilogue's bias runs along D's rows = n.
#include <cublasLt.h>

#include <bit>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>

#include "strata/ops/cuda/common.cuh"
#include "strata/ops/cuda/cublaslt_gemm.h"

#define STRATA_CUBLAS_CHECK(expr)                                                          \
  do {                                                                                     \
    const cublasStatus_t strata_st_ = (expr);                                              \
    if (strata_st_ != CUBLAS_STATUS_SUCCESS)                                               \
      throw ::strata::DeviceError(std::string("cuBLASLt status ") + std::to_string(strata_st_) + \
                                  " in " #expr, /*sticky=*/false);                               \
  } while (0)

namespace strata::cuda {
namespace {

constexpr size_t kWorkspaceBytes = 32u << 20;
constexpr int kMaxCandidates = 8;  // heuristic results timed once per plan

struct PlanKey {
  int64_t m, n, k;
  int out_dtype;
  bool bias;
  int align_w, align_x, align_out;
  auto tie() const { return std::tie(m, n, k, out_dtype, bias, align_w, align_x, align_out); }
  bool operator<(const PlanKey& o) const { return tie() < o.tie(); }
};

// Plans are made per exact m, tuned choices kept per m bucket: serving steps meet a new m
// (a prompt chunk plus decode rows) nearly every step, and timing candidates for each would
// stall that step by milliseconds per shape.
int64_t m_bucket(int64_t m) { return m <= 16 ? m : static_cast<int64_t>(std::bit_ceil(static_cast<uint64_t>(m))); }

struct Plan {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  cublasLtMatmulAlgo_t algo{};
  bool fused_bias = false;
};

int pointer_alignment(const void* p) {
  const uintptr_t v = reinterpret_cast<uintptr_t>(p);
  int align = 256;
  while (align > 1 && v % align != 0) align /= 2;
  return align;
}

class LtContext {
 public:
  LtContext() { STRATA_CUBLAS_CHECK(cublasLtCreate(&handle_)); }
  // Process-lifetime singleton: the CUDA context may be gone at exit, so nothing is freed.
  static LtContext& instance() {
    static LtContext* context = new LtContext();
    return *context;
  }

  const Plan& plan(const PlanKey& key, const GemmArgs& args, cudaStream_t stream) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = plans_.find(key);
    if (it != plans_.end()) return it->second;
    Plan plan;
    if (!(key.bias && try_make(key, true, args, stream, plan))) {
      const bool ok = try_make(key, false, args, stream, plan);
      if (!ok)
        throw Error("cuBLASLt has no algorithm for bf16 gemm m=" + std::to_string(key.m) +
                    " n=" + std::to_string(key.n) + " k=" + std::to_string(key.k));
    }
    return plans_.emplace(key, plan).first->second;
  }

  cublasLtHandle_t handle() const { return handle_; }
  std::unique_lock<std::mutex> lock() { return std::unique_lock<std::mutex>(mutex_); }
  // One workspace per stream: products on two streams (the model's and a vision tower's) may
  // run at once. A stream's first product runs eagerly, before any capture, so it allocates here.
  void* workspace(cudaStream_t stream) {
    std::lock_guard<std::mutex> lock(mutex_);
    void*& workspace = workspaces_[stream];
    if (workspace == nullptr) STRATA_CUDA_CHECK(cudaMalloc(&workspace, kWorkspaceBytes));
    return workspace;
  }
  int64_t size() {
    std::lock_guard<std::mutex> lock(mutex_);
    return static_cast<int64_t>(plans_.size());
  }

 private:
  bool try_make(const PlanKey& key, bool fuse_bias, const GemmArgs& args, cudaStream_t stream, Plan& plan);
  cublasLtMatmulAlgo_t pick_algo(const PlanKey& key, const Plan& plan, const cublasLtMatmulHeuristicResult_t* results,
                                 int count, const GemmArgs& args, cudaStream_t stream);
  bool applies(const Plan& plan, const cublasLtMatmulAlgo_t& algo);
  int fastest(const Plan& plan, const cublasLtMatmulHeuristicResult_t* results, int count,
              const GemmArgs& args, cudaStream_t stream, bool& tuned);

  cublasLtHandle_t handle_ = nullptr;
  std::map<cudaStream_t, void*> workspaces_;
  std::mutex mutex_;
  std::map<PlanKey, Plan> plans_;
  std::map<std::pair<PlanKey, bool>, cublasLtMatmulAlgo_t> tuned_;  // (key with m bucketed, fused bias)
};

bool LtContext::try_make(const PlanKey& key, bool fuse_bias, const GemmArgs& args, cudaStream_t stream,
                         Plan& plan) {
  const cudaDataType_t out_type = key.out_dtype == static_cast<int>(DType::kF32) ? CUDA_R_32F : CUDA_R_16BF;
  STRATA_CUBLAS_CHECK(cublasLtMatmulDescCreate(&plan.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const cublasOperation_t trans = CUBLAS_OP_T, no_trans = CUBLAS_OP_N;
  STRATA_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan.desc, CUBLASLT_MATMUL_DESC_TRANSA, &trans, sizeof(trans)));
  STRATA_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan.desc, CUBLASLT_MATMUL_DESC_TRANSB, &no_trans, sizeof(no_trans)));
  if (fuse_bias) {
    const cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_BIAS;
    const cudaDataType_t bias_type = CUDA_R_16BF;
    STRATA_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof(epilogue)));
    STRATA_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan.desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bias_type, sizeof(bias_type)));
  }
  STRATA_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&plan.a, CUDA_R_16BF, key.k, key.n, key.k));
  STRATA_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&plan.b, CUDA_R_16BF, key.k, key.m, key.k));
  STRATA_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&plan.d, out_type, key.n, key.m, key.n));
  cublasLtMatmulPreference_t pref = nullptr;
  STRATA_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  const uint64_t ws = kWorkspaceBytes;
  const uint32_t align_w = key.align_w, align_x = key.align_x, align_out = key.align_out;
  STRATA_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws)));
  STRATA_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &align_w, sizeof(align_w)));
  STRATA_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &align_x, sizeof(align_x)));
  STRATA_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &align_out, sizeof(align_out)));
  STRATA_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &align_out, sizeof(align_out)));
  cublasLtMatmulHeuristicResult_t results[kMaxCandidates]{};
  int found = 0;
  const cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(handle_, plan.desc, plan.a, plan.b, plan.d,
                                                               plan.d, pref, kMaxCandidates, results, &found);
  cublasLtMatmulPreferenceDestroy(pref);
  if (status != CUBLAS_STATUS_SUCCESS || found == 0) {
    cublasLtMatmulDescDestroy(plan.desc);
    cublasLtMatrixLayoutDestroy(plan.a);
    cublasLtMatrixLayoutDestroy(plan.b);
    cublasLtMatrixLayoutDestroy(plan.d);
    plan = Plan{};
    return false;
  }
  plan.fused_bias = fuse_bias;
  plan.algo = pick_algo(key, plan, results, found, args, stream);
  return true;
}

// The bucket's tuned algorithm where cuBLASLt accepts it for this m; else the fastest
// candidate here, which becomes the bucket's if it was timed.
cublasLtMatmulAlgo_t LtContext::pick_algo(const PlanKey& key, const Plan& plan,
                                          const cublasLtMatmulHeuristicResult_t* results, int count,
                                          const GemmArgs& args, cudaStream_t stream) {
  PlanKey bucket = key;
  bucket.m = m_bucket(key.m);
  const auto tune_key = std::make_pair(bucket, plan.fused_bias);
  if (auto it = tuned_.find(tune_key); it != tuned_.end() && applies(plan, it->second)) return it->second;
  bool tuned = false;
  const cublasLtMatmulAlgo_t algo = results[fastest(plan, results, count, args, stream, tuned)].algo;
  if (tuned) tuned_[tune_key] = algo;
  return algo;
}

bool LtContext::applies(const Plan& plan, const cublasLtMatmulAlgo_t& algo) {
  cublasLtMatmulHeuristicResult_t check{};
  return cublasLtMatmulAlgoCheck(handle_, plan.desc, plan.a, plan.b, plan.d, plan.d, &algo, &check) ==
             CUBLAS_STATUS_SUCCESS &&
         check.workspaceSize <= kWorkspaceBytes;
}

// Times each candidate on the real operands (a few runs after one warm-up) and keeps the
// fastest; inside graph capture nothing can run, so the heuristic's first choice stays.
int LtContext::fastest(const Plan& plan, const cublasLtMatmulHeuristicResult_t* results, int count,
                       const GemmArgs& args, cudaStream_t stream, bool& tuned) {
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  STRATA_CUDA_CHECK(cudaStreamIsCapturing(stream, &capture));
  if (count <= 1 || !args.autotune || capture != cudaStreamCaptureStatusNone) return 0;
  tuned = true;
  if (plan.fused_bias)
    STRATA_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                                       &args.bias, sizeof(args.bias)));
  // An accumulating product must not touch `out` before its one real run: time into a copy.
  void* timed_out = args.out;
  if (args.accumulate)
    STRATA_CUDA_CHECK(cudaMalloc(&timed_out, static_cast<size_t>(args.m * args.n) * dtype_bytes(args.out_dtype, 1)));
  void* workspace = workspaces_[stream];  // plan() holds the lock; gemm_bf16 made it first
  cudaEvent_t start, stop;
  STRATA_CUDA_CHECK(cudaEventCreate(&start));
  STRATA_CUDA_CHECK(cudaEventCreate(&stop));
  const float alpha = 1.0f, beta = 0.0f;
  int best = 0;
  float best_ms = INFINITY;
  for (int i = 0; i < count; ++i) {
    auto run = [&] {
      return cublasLtMatmul(handle_, plan.desc, &alpha, args.weight, plan.a, args.x, plan.b, &beta, timed_out,
                            plan.d, timed_out, plan.d, &results[i].algo, workspace, kWorkspaceBytes, stream);
    };
    if (run() != CUBLAS_STATUS_SUCCESS) continue;
    STRATA_CUDA_CHECK(cudaEventRecord(start, stream));
    for (int rep = 0; rep < 3; ++rep) STRATA_CUBLAS_CHECK(run());
    STRATA_CUDA_CHECK(cudaEventRecord(stop, stream));
    STRATA_CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    STRATA_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    if (ms < best_ms) best = i, best_ms = ms;
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  if (timed_out != args.out) STRATA_CUDA_CHECK(cudaFree(timed_out));
  return best;
}

template <typename T>
__global__ void add_bias_kernel(T* out, const __nv_bfloat16* bias, int64_t m, int64_t n) {
  const int64_t total = m * n;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    out[i] = from_f32<T>(to_f32(out[i]) + __bfloat162float(bias[i % n]));
}

}  // namespace

void gemm_bf16(const GemmArgs& args, cudaStream_t stream) {
  if (args.m == 0 || args.n == 0) return;
  STRATA_CHECK(args.out_dtype == DType::kBF16 || args.out_dtype == DType::kF32);
  LtContext& lt = LtContext::instance();
  void* workspace = lt.workspace(stream);
  const PlanKey key{.m = args.m, .n = args.n, .k = args.k, .out_dtype = static_cast<int>(args.out_dtype),
                    .bias = args.bias != nullptr, .align_w = pointer_alignment(args.weight),
                    .align_x = pointer_alignment(args.x), .align_out = pointer_alignment(args.out)};
  const Plan& plan = lt.plan(key, args, stream);
  std::unique_lock<std::mutex> bias_lock;  // threads sharing the plan set its bias pointer in turn
  if (plan.fused_bias) {
    bias_lock = lt.lock();
    STRATA_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                                       &args.bias, sizeof(args.bias)));
  }
  const float alpha = 1.0f, beta = args.accumulate ? 1.0f : 0.0f;
  STRATA_CUBLAS_CHECK(cublasLtMatmul(lt.handle(), plan.desc, &alpha, args.weight, plan.a, args.x, plan.b,
                                     &beta, args.out, plan.d, args.out, plan.d, &plan.algo,
                                     workspace, kWorkspaceBytes, stream));
  if (args.bias != nullptr && !plan.fused_bias) {
    const auto* bias = static_cast<const __nv_bfloat16*>(args.bias);
    const unsigned blocks = grid_for(args.m * args.n, 256);
    if (args.out_dtype == DType::kF32) {
      add_bias_kernel<<<blocks, 256, 0, stream>>>(static_cast<float*>(args.out), bias, args.m, args.n);
    } else {
      add_bias_kernel<<<blocks, 256, 0, stream>>>(static_cast<__nv_bfloat16*>(args.out), bias, args.m, args.n);
    }
    STRATA_CUDA_CHECK_LAUNCH();
  }
}

int64_t gemm_plan_count() { return LtContext::instance().size(); }

}  // namespace strata::cuda
