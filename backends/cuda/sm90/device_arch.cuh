// Whether this device compilation pass targets sm_90a (wgmma, setmaxnreg, TMA); the Hopper
// kernels compile to empty bodies in every other pass of the fatbinary.
#pragma once
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define OG_SM90A_DEVICE 1
#endif
