/* cuBLAS and cuDNN, loaded on first use with dlopen rather than linked: linking cuBLAS
 * costs every tfsh process ~220 MB of resident memory and ~100 ms at start (cublasLt's
 * initialisers), GPU or not, and a linked library that is missing would stop the binary
 * from starting at all. The CUDA runtime itself is linked statically (it finds the driver
 * at run time), so a build with CUDA starts anywhere and runs CPU-only without a GPU.
 * CUDA builds only. UNVERIFIED on a GPU (the loading is tested without one). */
#ifndef TFSH_GPU_DL_H
#define TFSH_GPU_DL_H

#if TFSH_HAVE_CUDA

#include <stddef.h>

#include <cublas_v2.h>

#define RT_CUBLAS_FNS(X) \
  X(cublasCreate) X(cublasSetStream) X(cublasSgemm) X(cublasSgemmStridedBatched) X(cublasGetStatusString)

#define RT_DL_MEMBER(fn) __typeof__(&fn) fn;

typedef struct rt_cublas {
  RT_CUBLAS_FNS(RT_DL_MEMBER)
} rt_cublas;

/* The loaded library (once per process), or NULL with why filled (when why is given). */
const rt_cublas *rt_cublas_lib(char *why, size_t why_len);

#if TFSH_HAVE_CUDNN
#include <cudnn.h>

#define RT_CUDNN_FNS(X)                                                                              \
  X(cudnnCreate) X(cudnnSetStream) X(cudnnGetErrorString) X(cudnnCreateTensorDescriptor)             \
  X(cudnnDestroyTensorDescriptor) X(cudnnSetTensor4dDescriptor) X(cudnnCreateFilterDescriptor)       \
  X(cudnnDestroyFilterDescriptor) X(cudnnSetFilter4dDescriptor) X(cudnnCreateConvolutionDescriptor)  \
  X(cudnnDestroyConvolutionDescriptor) X(cudnnSetConvolution2dDescriptor)                            \
  X(cudnnSetConvolutionMathType) X(cudnnGetConvolution2dForwardOutputDim)                            \
  X(cudnnGetConvolutionForwardAlgorithm_v7) X(cudnnConvolutionForward)                               \
  X(cudnnGetConvolutionBackwardDataAlgorithm_v7) X(cudnnConvolutionBackwardData)                     \
  X(cudnnGetConvolutionBackwardFilterAlgorithm_v7) X(cudnnConvolutionBackwardFilter)                 \
  X(cudnnCreatePoolingDescriptor) X(cudnnDestroyPoolingDescriptor) X(cudnnSetPooling2dDescriptor)    \
  X(cudnnPoolingForward) X(cudnnPoolingBackward)

typedef struct rt_cudnn {
  RT_CUDNN_FNS(RT_DL_MEMBER)
} rt_cudnn;

const rt_cudnn *rt_cudnn_lib(char *why, size_t why_len);
#endif

#endif
#endif
