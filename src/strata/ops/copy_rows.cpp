#include "strata/ops/copy_rows.h"

#include "strata/ops/dispatch.h"

namespace strata::ops {

void copy_rows(const Tensor& dst, const Tensor& src, std::span<const RowCopy> copies) {
  STRATA_CHECK(dst.rank() >= 1 && src.rank() >= 1);
  STRATA_CHECK_MSG(dst.row_bytes() == src.row_bytes(), "copy_rows: rows of {} bytes into rows of {}",
                   src.row_bytes(), dst.row_bytes());
  const bool both_devices = !dst.device().is_cpu() && !src.device().is_cpu();
  STRATA_CHECK_MSG(!both_devices || dst.device() == src.device(), "copy_rows: tensors on two devices");
  for (const RowCopy& c : copies)
    STRATA_CHECK_MSG(c.src_row >= 0 && c.src_row < src.dim(0) && c.dst_row >= 0 && c.dst_row < dst.dim(0),
                     "copy_rows: row {} of {} into row {} of {}", c.src_row, src.dim(0), c.dst_row, dst.dim(0));
  if (copies.empty() || dst.row_bytes() == 0) return;
  const Device device = dst.device().is_cpu() ? src.device() : dst.device();
  STRATA_DISPATCH(device, cpu::copy_rows(dst, src, copies), cuda::copy_rows(dst, src, copies));
}

}  // namespace strata::ops
