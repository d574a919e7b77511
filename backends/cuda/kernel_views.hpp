// The kernels' argument views of a Problem (epilogue.cuh's types), for the families' launches.
#pragma once
#include "cuda_device.hpp"
#include "epilogue.cuh"

namespace omnigemm::detail {

// The kernels' views of a Problem's operands and epilogue.
cuda::OperandArgs operand_args(const Operand& o);
cuda::EpilogueArgs epilogue_args(const Problem& p);

}  // namespace omnigemm::detail
