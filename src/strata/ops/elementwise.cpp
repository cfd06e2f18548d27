#include "strata/ops/elementwise.h"

#include "strata/ops/dispatch.h"

namespace strata::ops {

void add(const Tensor& x, const Tensor& y) {
  STRATA_CHECK(x.numel() == y.numel() && x.dtype() == y.dtype());
  STRATA_DISPATCH(x.device(), cpu::elementwise(x, y, ElementwiseKind::kAdd),
                  cuda::elementwise(x, y, ElementwiseKind::kAdd));
}

void sigmoid_gate(const Tensor& x, const Tensor& gate) {
  STRATA_CHECK(x.numel() == gate.numel() && x.dtype() == gate.dtype());
  STRATA_DISPATCH(x.device(), cpu::elementwise(x, gate, ElementwiseKind::kSigmoidGate),
                  cuda::elementwise(x, gate, ElementwiseKind::kSigmoidGate));
}

void split_halves(const Tensor& packed, const Tensor& first, const Tensor& second) {
  STRATA_CHECK(packed.rank() == 3 && packed.dim(2) % 2 == 0);
  const Shape half{packed.dim(0), packed.dim(1), packed.dim(2) / 2};
  expect_shape(first, half, "split_halves first");
  expect_shape(second, half, "split_halves second");
  STRATA_DISPATCH(packed.device(), cpu::split_halves(packed, first, second),
                  cuda::split_halves(packed, first, second));
}

void join_halves(const Tensor& first, const Tensor& second, const Tensor& packed) {
  STRATA_CHECK(first.rank() == 2 && first.dtype() == packed.dtype() && second.dtype() == packed.dtype());
  expect_shape(second, first.shape(), "join_halves second");
  expect_shape(packed, Shape{first.dim(0), 2 * first.dim(1)}, "join_halves packed");
  STRATA_DISPATCH(packed.device(), cpu::join_halves(first, second, packed), cuda::join_halves(first, second, packed));
}

void scale(const Tensor& x, float factor) {
  STRATA_DISPATCH(x.device(), cpu::scale(x, factor), cuda::scale(x, factor));
}

void clamp(const Tensor& x, float lo, float hi) {
  STRATA_CHECK(lo <= hi);
  expect_activations({&x}, "clamp");
  STRATA_DISPATCH(x.device(), cpu::clamp(x, lo, hi), cuda::clamp(x, lo, hi));
}

void gather_rows(const Tensor& src, const Tensor& indices, const Tensor& out) {
  STRATA_CHECK(src.rank() == 2 && indices.dtype() == DType::kI32);
  expect_shape(out, Shape{indices.numel(), src.dim(1)}, "gather_rows out");
  STRATA_CHECK(src.dtype() == out.dtype());
  STRATA_DISPATCH(src.device(), cpu::gather_rows(src, indices, out), cuda::gather_rows(src, indices, out));
}

void scatter_rows(const Tensor& src, const Tensor& indices, const Tensor& out) {
  STRATA_CHECK(src.rank() == 2 && out.rank() == 2 && indices.dtype() == DType::kI32);
  STRATA_CHECK(src.dim(0) == indices.numel() && src.dim(1) == out.dim(1) && src.dtype() == out.dtype());
  STRATA_DISPATCH(src.device(), cpu::scatter_rows(src, indices, out), cuda::scatter_rows(src, indices, out));
}

void convert(const Tensor& src, const Tensor& dst) {
  STRATA_CHECK(src.numel() == dst.numel());
  STRATA_DISPATCH(src.device(), cpu::convert(src, dst), cuda::convert(src, dst));
}

}  // namespace strata::ops
