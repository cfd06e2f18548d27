// MoeFfn's token dispatch (--expert-dispatch all-to-all, experts split by range): rank r of N
// routes rows [r * S, (r + 1) * S) of the step's T tokens (S = ceil(T / N), so the gathered
// slices are the rows in order; the last ranks may have fewer or none), packs each (token, expert)
// pair for the rank holding its expert, exchanges them (all_to_all_rows, at a capacity every rank
// computes from the exchanged counts, so no pair is dropped), runs its experts on what it
// received and sends the outputs back. The routing weights stay home: each rank combines its own
// tokens in choice order, as one rank does. The shared expert stays split by columns.
#include <algorithm>

#include "strata/model/layers/moe.h"
#include "strata/model/layers/normed_input.h"
#include "strata/model/layers/row_parallel.h"
#include "strata/ops/elementwise.h"
#include "strata/ops/linear.h"
#include "strata/parallel/communicator.h"

namespace strata {

void MoeFfn::forward_dispatch(NormedInput& in, const Tensor& out, ForwardContext& ctx, SublayerWrite write) const {
  Communicator& comm = *ctx.tensor_parallel;
  const int64_t t = in.rows(), ranks = comm.world_size(), slice = (t + ranks - 1) / ranks;
  const int64_t begin = std::min(t, comm.rank() * slice), end = std::min(t, begin + slice);
  const Tensor& h = in.h();
  if (shared_expert_) {
    // The shared expert's partial over every token and this rank's routed rows (zeros elsewhere)
    // sum in the layer's one all-reduce, as without dispatch.
    Tensor partial = ctx.temp({t, options_.hidden_size});  // [T, hidden]
    ctx.backend.fill_bytes(partial, 0);
    dispatch_routed(h, begin, end, partial.slice_rows(begin, end), ctx);
    ForwardContext local = ctx;
    local.tensor_parallel = nullptr;
    add_shared_expert(h, partial, local);
    return finish_row_parallel(partial, out, write, ctx);
  }
  // Rows past this rank's slice are padding that lands past T once gathered.
  Tensor mine = ctx.temp({slice, options_.hidden_size});  // [S, hidden]
  dispatch_routed(h, begin, end, mine.slice_rows(0, end - begin), ctx);
  Tensor gathered = ctx.temp({ranks * slice, options_.hidden_size});  // [N * S, hidden]
  comm.all_gather_rows(mine, gathered);
  if (write == SublayerWrite::kAdd) {
    ops::add(out, gathered.slice_rows(0, t));
  } else {
    ops::convert(gathered.slice_rows(0, t), out);
  }
}

// out: [end - begin, hidden] = the routed experts' output for rows [begin, end) of h ([T, hidden]).
// Every rank takes part in the exchanges, with or without rows of its own.
void MoeFfn::dispatch_routed(const Tensor& h, int64_t begin, int64_t end, const Tensor& out,
                             ForwardContext& ctx) const {
  const int64_t t = end - begin, k = options_.route.top_k, dim = options_.expert_dim();
  const Tensor hs = h.slice_rows(begin, end);  // [t, hidden]
  Tensor topk_ids = ctx.workspace.alloc(DType::kI32, {t, k});
  Tensor topk_weights = ctx.temp_f32({t, k});
  const Tensor x = latent_in_.defined() ? ctx.temp({t, dim}) : hs;  // [t, dim]
  if (t > 0) {
    ForwardContext local = ctx;  // hash routing reads the slice's token ids
    if (ctx.token_ids.defined()) local.token_ids = ctx.token_ids.slice_rows(begin, end);
    NormedInput in = NormedInput::normalized(hs);
    route(in, topk_ids, topk_weights, local);
    if (latent_in_.defined()) ops::linear(hs, latent_in_, latent_in_bias_, x);
  }
  Tensor ys = ctx.temp({t * k, dim});  // [t * k, dim] in pair order
  exchange_pairs(x, topk_ids, ys, ctx);
  if (t > 0) combine(ys, Tensor(), topk_weights, out, false, ctx);
}

// ys[p] = expert(x[token of pair p]) for the pairs of topk_ids ([t, k] i32), computed on the
// ranks holding the experts. x: [t, dim]; ys: [t * k, dim].
void MoeFfn::exchange_pairs(const Tensor& x, const Tensor& topk_ids, const Tensor& ys, ForwardContext& ctx) const {
  Communicator& comm = *ctx.tensor_parallel;
  const int64_t ranks = comm.world_size(), dim = options_.expert_dim();
  Tensor counts = ctx.workspace.alloc(DType::kI32, {1, ranks});  // this rank's pairs per destination
  ops::moe_count_by_rank(topk_ids, options_.num_experts, counts.reshape({ranks}));
  Tensor all_counts = ctx.workspace.alloc(DType::kI32, {ranks, ranks});  // [source, destination]
  comm.all_gather_rows(counts, all_counts);
  const int32_t* c = all_counts.data_as<int32_t>();
  const int64_t capacity = *std::max_element(c, c + ranks * ranks);  // the same on every rank
  const ops::MoeDispatchRows send{.num_experts = options_.num_experts,
                                  .send_x = ctx.temp({ranks * capacity, dim}),
                                  .send_ids = ctx.workspace.alloc(DType::kI32, {ranks * capacity, 1}),
                                  .pair_rows = ctx.workspace.alloc(DType::kI32, {topk_ids.numel()})};
  ops::moe_pack_by_rank(x, topk_ids, ranks, send);
  Tensor recv_x = ctx.temp({ranks * capacity, dim});
  Tensor recv_ids = ctx.workspace.alloc(DType::kI32, {ranks * capacity, 1});
  comm.all_to_all_rows(send.send_x, recv_x);
  comm.all_to_all_rows(send.send_ids, recv_ids);
  Tensor back = ctx.temp({ranks * capacity, dim});
  run_received(recv_x, recv_ids, back, ctx);
  comm.all_to_all_rows(back, recv_x);  // recv_x now holds this rank's pairs' outputs, as send_x held them
  if (ys.dim(0) > 0) ops::gather_rows(recv_x, send.pair_rows, ys);
}

// back[i] = expert(recv_x[i]) for the rows sent here, zeros for padding rows, whose id is no
// rank's expert: grouping puts them last and no grouped linear writes them.
// recv_x, back: [N * n, dim]; recv_ids: [N * n, 1] i32 (num_experts on padding rows).
void MoeFfn::run_received(const Tensor& recv_x, const Tensor& recv_ids, const Tensor& back,
                          ForwardContext& ctx) const {
  Tensor ys = ctx.temp(recv_x.shape());  // [N * n, dim] grouped by expert
  const Tensor sorted_rows = run_grouped(recv_x, recv_ids, ys, ctx);
  ops::scatter_rows(ys, sorted_rows, back);
}

}  // namespace strata
