// Where recurrent state lives: host memory (no backend, or the CPU backend) or a device's
// memory through its Backend. Every call is stream-ordered on a device, so a copy queued
// between two steps lands after the first step's kernels and before the second's.
#pragma once

#include "strata/backend/backend.h"

namespace strata {

// A zero-filled tensor in the backend's memory (host memory when backend is null).
Tensor alloc_state(Backend* backend, DType dtype, Shape shape);
void zero_state(Backend* backend, const Tensor& dst);
// Byte copy of equal-sized tensors; either side may be host memory when the backend is a device.
void copy_state(Backend* backend, const Tensor& dst, const Tensor& src);

}  // namespace strata
