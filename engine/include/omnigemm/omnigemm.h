/* OmniGEMM C API.
 *
 *   D = act(alpha * op(A) * op(B) + beta * C + bias)      for each batch b < batch_count
 *
 * op(A) is M x K, op(B) is K x N, C and D are M x N. Every call returns an og_status; on error,
 * og_last_error_message() gives a human-readable reason for the calling thread's last failure.
 * No C++ exception ever crosses this interface. The C++ API (omnigemm.hpp) has the same
 * capabilities with stronger types.
 *
 * What a descriptor may hold (og_gemm, og_gemm_async, og_gemm_host and og_gemm_explain check it
 * before anything runs; a violation is OG_ERROR_INVALID_ARGUMENT, or OG_ERROR_UNSUPPORTED where
 * named below, with a message naming the operand and the rule):
 *   - rows, cols and batch_count are in [0, 2^31-1]; ld is at least the stored row length
 *     (row-major: cols, column-major: rows; at least 1); batch strides are >= 0, and D's batches
 *     must not share an element when batch_count > 1 (they may interleave: ld = heads x N with
 *     batch stride N writes the heads side by side; the check is exact);
 *   - an empty problem (M, N or batch_count 0) is valid and touches no memory; K = 0 is valid and
 *     gives D = act(beta * C + bias);
 *   - every address (pointer + offset, or a VkBuffer offset) is a multiple of its element size;
 *   - `transpose` is 0 or 1; D and C cannot be transposed (describe them with their layout);
 *   - enum fields hold one of their listed values; an unknown dtype value is invalid_argument,
 *     a known dtype that the build or backend cannot run is OG_ERROR_UNSUPPORTED;
 *   - D is f32, f16 or bf16, and so is C (read when beta != 0), whose dtype may differ from D's
 *     (another dtype: OG_ERROR_UNSUPPORTED); D must not overlap A, B, bias, or C unless C is
 *     exactly the same view (in place);
 *   - a block-scaled A or B (omnigemm/blockscaled.h) has a scale mode its dtype allows, a scale
 *     tensor in the operand's kind of memory, aligned to its scale size, with a valid layout and
 *     ld, and fp4 elements contiguous along K; D must not overlap a scale tensor. A backend
 *     without the format or scale mode answers OG_ERROR_UNSUPPORTED;
 *   - a workspace, when given, is memory of the context's backend, its address a multiple of 256
 *     bytes, overlapping no operand, and at least og_gemm_workspace_size bytes.
 * The same call on the same device gives bitwise-identical D run after run (split-K included).
 */
#ifndef OMNIGEMM_H
#define OMNIGEMM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32) && defined(OMNIGEMM_BUILDING)
#define OG_API __declspec(dllexport)
#elif defined(__GNUC__)
#define OG_API __attribute__((visibility("default")))
#else
#define OG_API
#endif

#define OG_VERSION_MAJOR 0
#define OG_VERSION_MINOR 1
#define OG_VERSION_PATCH 0

typedef enum og_status {
  OG_OK = 0,
  OG_ERROR_INVALID_ARGUMENT = 1,  /* bad size, leading dimension, pointer, alignment, aliasing */
  OG_ERROR_UNSUPPORTED = 2,       /* valid request this backend/device cannot run (message says what can) */
  OG_ERROR_BACKEND_UNAVAILABLE = 3,/* backend not compiled in, or no device present */
  OG_ERROR_OUT_OF_MEMORY = 4,
  OG_ERROR_DEVICE_LOST = 5,
  OG_ERROR_BACKEND_FAILURE = 6,   /* a driver/runtime call failed for another reason */
  OG_ERROR_INTERNAL = 7
} og_status;

typedef enum og_dtype {
  OG_DTYPE_F32 = 0,
  OG_DTYPE_F16 = 1,
  OG_DTYPE_BF16 = 2,
  OG_DTYPE_FP8_E4M3 = 3, /* OCP e4m3fn: max 448, NaN only S.1111.111, no infinities */
  OG_DTYPE_FP8_E5M2 = 4, /* IEEE-like: max 57344, has inf and NaN */
  /* Block-scaled formats (inputs only; their scales are og_matrix.scale, see og_scales and
   * omnigemm/blockscaled.h). fp8_e4m3 / fp8_e5m2 with a VEC128_F32 or BLK128x128_F32 scale
   * mode are the 128-blockwise fp8 format. */
  OG_DTYPE_MXFP8 = 5,    /* e4m3 elements, one E8M0 scale per 32 elements along K */
  OG_DTYPE_MXFP4 = 6,    /* e2m1 elements (2 per byte, along K), one E8M0 scale per 32 along K */
  OG_DTYPE_NVFP4 = 7,    /* e2m1 elements (2 per byte, along K), one e4m3 scale per 16 along K,
                            times the tensor's f32 factor og_scales.global */
  OG_DTYPE_MXFP8_E5M2 = 8 /* e5m2 elements, one E8M0 scale per 32 elements along K */
} og_dtype;
#define OG_DTYPE_COUNT 9

typedef enum og_backend {
  OG_BACKEND_AUTO = 0, /* fastest available: CUDA, then HIP, then Vulkan, then CPU */
  OG_BACKEND_CPU = 1,
  OG_BACKEND_VULKAN = 2,
  OG_BACKEND_CUDA = 3,
  OG_BACKEND_HIP = 4
} og_backend;
#define OG_BACKEND_COUNT 5

typedef enum og_layout { OG_ROW_MAJOR = 0, OG_COL_MAJOR = 1 } og_layout;

typedef enum og_activation {
  OG_ACT_NONE = 0,
  OG_ACT_RELU = 1,
  OG_ACT_LEAKY_RELU = 2, /* x >= 0 ? x : slope * x */
  OG_ACT_GELU_TANH = 3,  /* 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) */
  OG_ACT_SILU = 4        /* x / (1 + exp(-x)) */
} og_activation;

typedef enum og_bias_mode {
  OG_BIAS_NONE = 0,
  OG_BIAS_PER_N = 1, /* bias[j] added to column j (length N) */
  OG_BIAS_PER_M = 2  /* bias[i] added to row i (length M) */
} og_bias_mode;

typedef enum og_memory_kind {
  OG_MEMORY_NONE = 0,   /* absent operand (C when beta == 0, bias when mode is NONE) */
  OG_MEMORY_HOST = 1,   /* ordinary host pointer */
  OG_MEMORY_CUDA = 2,   /* CUDA device pointer */
  OG_MEMORY_HIP = 3,    /* HIP device pointer */
  OG_MEMORY_VULKAN = 4  /* VkBuffer handle + byte offset */
} og_memory_kind;

/* Where an operand lives. For OG_MEMORY_VULKAN, vk_buffer holds a VkBuffer handle (a 64-bit
 * non-dispatchable handle) and offset is in bytes; for the others, ptr is the address and offset
 * is added to it in bytes. */
typedef struct og_memory {
  og_memory_kind kind;
  void* ptr;
  uint64_t vk_buffer;
  uint64_t offset;
} og_memory;

/* Block scales (omnigemm/blockscaled.h has the formats, quantisation and sizes). */
typedef enum og_scale_mode {
  OG_SCALE_MODE_DEFAULT = 0,       /* the dtype's own: none for f32 .. fp8_e5m2, VEC32_UE8M0 for
                                      the mx dtypes, VEC16_UE4M3 for nvfp4 */
  OG_SCALE_MODE_VEC32_UE8M0 = 1,   /* mxfp8, mxfp8_e5m2, mxfp4: E8M0 per 1 x 32 along K */
  OG_SCALE_MODE_VEC16_UE4M3 = 2,   /* nvfp4: e4m3 per 1 x 16 along K */
  OG_SCALE_MODE_VEC128_F32 = 3,    /* fp8_e4m3 / fp8_e5m2: f32 per 1 x 128 (one row of M or N,
                                      128 along K); cuBLASLt's VEC128_32F */
  OG_SCALE_MODE_BLK128x128_F32 = 4 /* fp8_e4m3 / fp8_e5m2: f32 per 128 x 128 (128 rows of M or N,
                                      128 along K); cuBLASLt's BLK128x128_32F */
} og_scale_mode;
#define OG_SCALE_MODE_COUNT 5

/* How a scale tensor of R x C scales is stored, R being the rows of M (for A) or N (for B) it
 * covers (M or N, or ceil(M/128) / ceil(N/128) for BLK128x128) and C = ceil(K / block) along K. */
typedef enum og_scale_layout {
  OG_SCALE_ROW_MAJOR = 0, /* scale (r, c) at r * ld + c; ld >= C (0: C). The linear (M, K/VEC) */
  OG_SCALE_COL_MAJOR = 1, /* scale (r, c) at c * ld + r; ld >= R (0: R). cuBLASLt's VEC128_32F */
  OG_SCALE_PACKED = 2     /* 1-byte scales only: 512-byte tiles of 128 rows x 4 columns, R padded
                             to 128 and C to 4 (omnigemm/block_formats.h); ld unused */
} og_scale_layout;

typedef struct og_scales {
  og_memory mem;          /* the scale tensor, in the operand's kind of memory */
  og_scale_mode mode;
  og_scale_layout layout;
  int64_t ld;             /* in scales; 0: the smallest valid (see og_scale_layout) */
  int64_t batch_stride;   /* scales between consecutive batches' tensors (0: shared) */
  float global;           /* per-tensor factor every dequantised element is multiplied by (nvfp4's
                             global scale; og_matrix_make sets 1); positive and finite */
} og_scales;

/* A strided matrix view of `rows x cols` stored elements. Element (r, c) lives at
 *   row-major: r * ld + c      column-major: r + c * ld      (in elements)
 * from mem's address. `transpose` (0 or 1) makes the GEMM use the view's transpose: for A,
 * op(A) = A^T when set, so the view is then K x M. batch_stride (>= 0) is the element distance
 * between consecutive batches (0 broadcasts one matrix to all batches). `scale` is used only by
 * block-scaled operands (a block-scaled dtype, or fp8 with a 128-blockwise scale mode); fp4
 * dtypes hold two elements per byte along K, the lower-indexed one in the low nibble, so their
 * K stride must be 1 and ld, batch_stride even. */
typedef struct og_matrix {
  int64_t rows;
  int64_t cols;
  int64_t ld;
  og_layout layout;
  int transpose;
  og_dtype dtype;
  og_memory mem;
  int64_t batch_stride;
  og_scales scale;
} og_matrix;

typedef struct og_epilogue {
  float alpha;          /* default 1 */
  float beta;           /* default 0: C is not read and may be absent */
  og_activation activation;
  float leaky_slope;    /* default 0.01, used by OG_ACT_LEAKY_RELU */
  og_bias_mode bias_mode;
  og_dtype bias_dtype;  /* f32, f16 or bf16 */
  og_memory bias;
  int64_t bias_batch_stride; /* elements between batches' bias vectors (0: shared) */
} og_epilogue;

/* The arithmetic of the products (og_gemm_desc.compute_mode), like cuBLAS's math mode: a
 * lower precision is used only when the caller opts in. */
typedef enum og_compute_mode {
  OG_COMPUTE_DEFAULT = 0, /* the inputs' own precision: f32 inputs in full f32 arithmetic */
  OG_COMPUTE_TF32 = 1     /* f32 inputs only (else OG_ERROR_INVALID_ARGUMENT): each input may be
                             rounded to TF32 (8-bit exponent, 10-bit mantissa) before the products,
                             which accumulate in f32, e.g. on tensor cores. A backend without TF32
                             arithmetic computes in f32 (at least this precision); the CPU backend,
                             the reference, rounds the inputs to nearest TF32 */
} og_compute_mode;

typedef struct og_gemm_desc {
  og_matrix a;          /* op(A): M x K */
  og_matrix b;          /* op(B): K x N */
  og_matrix c;          /* M x N, read only when beta != 0 (f32, f16 or bf16, any of them whatever
                           D's dtype); may be the same view as d (in place) */
  og_matrix d;          /* M x N output: f32, f16 or bf16 */
  og_epilogue epilogue;
  int64_t batch_count;  /* default 1 (og_gemm_desc_init). 0 is a valid empty call: OG_OK, nothing
                           read or written, whatever the sizes. A descriptor filled with zeros
                           instead of og_gemm_desc_init therefore does nothing (and has alpha 0). */
  const char* config;   /* optional forced config "family:BMxBNxBK-gG-sS-wW[-eE][-kK][-form]", as
                           og_gemm_explain prints it (e.g. "packed:224x2048x2048-g1-s1-w1"); the
                           family prefix may be left out. NULL: tune cache or cost model */
  og_memory workspace;  /* optional device workspace for this call (see og_gemm_workspace_size):
                           memory of the context's backend, its address a multiple of 256 bytes,
                           overlapping no operand. Kind OG_MEMORY_NONE (the default): the engine
                           allocates the workspace a call needs itself, on first need, and keeps
                           it per stream (grown, never shrunk) */
  uint64_t workspace_bytes; /* the workspace's size; a call that needs more is refused
                           (OG_ERROR_INVALID_ARGUMENT) before anything runs */
  og_compute_mode compute_mode; /* default OG_COMPUTE_DEFAULT (full precision); OG_COMPUTE_TF32 opts
                           f32 inputs into TF32 products (see og_compute_mode) */
} og_gemm_desc;

typedef enum og_tune_mode {
  OG_TUNE_CACHE_ONLY = 0, /* use cached results, else the cost model's choice; never time (default) */
  OG_TUNE_ON_MISS = 1,    /* time the candidates on the first call of a new problem key */
  OG_TUNE_OFF = 2         /* the cost model's choice only, no cache reads */
} og_tune_mode;

/* Handles of a host application's Vulkan objects (all as opaque 64-bit values / pointers so
 * that this header does not need vulkan.h). When `device` is non-zero OmniGEMM creates no
 * VkInstance/VkDevice of its own. See omnigemm_vulkan.h for the extensions it needs. */
typedef struct og_vulkan_host_handles {
  void* instance;          /* VkInstance */
  void* physical_device;   /* VkPhysicalDevice */
  void* device;            /* VkDevice */
  uint32_t queue_family_index;
  void* queue;             /* VkQueue, used only by the synchronous calls */
  void* get_instance_proc_addr; /* PFN_vkGetInstanceProcAddr, NULL: taken from the loader */
  uint32_t api_version;    /* the VkDevice's API version (VK_MAKE_API_VERSION) */
  const char* const* enabled_device_extensions;
  uint32_t enabled_device_extension_count;
} og_vulkan_host_handles;

typedef struct og_context_options {
  og_backend backend;      /* default OG_BACKEND_AUTO */
  int device_index;        /* default 0 */
  og_tune_mode tune_mode;
  const char* tune_cache_path; /* NULL: $OMNIGEMM_TUNE_CACHE, else $XDG_CACHE_HOME/omnigemm/tune.txt,
                                  else ~/.cache/omnigemm/tune.txt */
  int cpu_threads;         /* CPU backend: 0 = all hardware threads */
  const og_vulkan_host_handles* vulkan; /* NULL: OmniGEMM makes its own Vulkan device */
} og_context_options;

typedef struct og_context og_context;

/* Fill defaults. Always call these before setting fields: a zero-filled struct is not the
 * default (a zero-filled og_gemm_desc has batch_count 0 and alpha 0, so og_gemm does nothing).
 * og_context_options_init: backend AUTO, device 0, tune mode CACHE_ONLY, every other field 0/NULL.
 * og_gemm_desc_init: alpha 1, beta 0, leaky_slope 0.01, no activation, no bias (bias_dtype f32),
 * batch_count 1, config NULL, and a, b, c, d = og_matrix_make(0, 0, OG_DTYPE_F32, OG_ROW_MAJOR). */
OG_API void og_context_options_init(og_context_options* options);
OG_API void og_gemm_desc_init(og_gemm_desc* desc);
/* A packed `rows x cols` view in the given layout: ld = cols for OG_ROW_MAJOR, ld = rows for
 * OG_COL_MAJOR (at least 1 either way); not transposed, batch_stride 0, no memory (kind
 * OG_MEMORY_NONE: set .mem), scales: mode DEFAULT, row-major, ld 0, global 1, no memory. The
 * arguments are stored as given; og_gemm checks them. */
OG_API og_matrix og_matrix_make(int64_t rows, int64_t cols, og_dtype dtype, og_layout layout);
/* Host memory at ptr, offset 0. */
OG_API og_memory og_memory_host(const void* ptr);

/* Creates a context on one backend and device. options NULL means the defaults of
 * og_context_options_init. On failure *out is NULL and the status says why (no device:
 * OG_ERROR_BACKEND_UNAVAILABLE, with every backend's reason for AUTO). A context may be used from
 * several threads at once. */
OG_API og_status og_context_create(const og_context_options* options, og_context** out);
OG_API void og_context_destroy(og_context* ctx);
OG_API og_backend og_context_backend(const og_context* ctx);

/* Run and wait. Operands must live in memory of the context's backend (or host memory for CPU). */
OG_API og_status og_gemm(og_context* ctx, const og_gemm_desc* desc);
/* Enqueue on a backend stream and return: CUDA: cudaStream_t; HIP: hipStream_t; Vulkan: a
 * VkCommandBuffer in the recording state (the GEMM is recorded, the caller submits; see
 * omnigemm_vulkan.h for the barriers). CPU: runs synchronously, stream must be NULL. */
OG_API og_status og_gemm_async(og_context* ctx, const og_gemm_desc* desc, void* stream);
/* All operands are host pointers: uploads to the backend, runs, downloads D. */
OG_API og_status og_gemm_host(og_context* ctx, const og_gemm_desc* desc);

/* Thread-local message of the last failed call on this thread ("" when none). */
OG_API const char* og_last_error_message(void);
OG_API const char* og_status_name(og_status status);
OG_API const char* og_dtype_name(og_dtype dtype);
OG_API const char* og_backend_name(og_backend backend);

/* Capabilities of the backend/device the context runs on. */
typedef struct og_capabilities {
  og_backend backend;
  char device_name[256];
  char driver_version[128];
  uint32_t input_dtypes;   /* bit (1 << og_dtype) set for each accepted A/B dtype */
  uint32_t output_dtypes;  /* bit (1 << og_dtype) set for each accepted D dtype */
  uint32_t memory_kinds;   /* bit (1 << og_memory_kind) set for each accepted operand memory */
  int supports_async;
  int compute_units;        /* SMs / CUs / CPU threads */
  int64_t l2_bytes;         /* last-level cache shared by the compute units (0: unknown) */
  double clock_ramp_ms;     /* how long to keep the device busy before timings mean anything */
  uint32_t scale_modes;     /* bit (1 << og_scale_mode) set for each accepted scale mode
                               (OG_SCALE_MODE_DEFAULT: the plain and block-scaled dtypes' own) */
} og_capabilities;
OG_API og_status og_context_capabilities(const og_context* ctx, og_capabilities* out);
/* Is this backend compiled in and does it find a device? (Does not keep a context.) */
OG_API int og_backend_available(og_backend backend);
/* OG_OK if (a, b) -> d runs on this context. A dtype value outside og_dtype is
 * OG_ERROR_INVALID_ARGUMENT (as og_gemm answers it); a known dtype this backend does not accept
 * is OG_ERROR_UNSUPPORTED, and the message lists what it accepts. */
OG_API og_status og_context_check_dtypes(const og_context* ctx, og_dtype a, og_dtype b, og_dtype d);

/* ---- Explain: which backend, kernel family and config a call would run, and why. ---------- */
typedef enum og_choice_source {
  OG_CHOICE_COST_MODEL = 0, /* the cost model's first choice (no usable tune-cache entry) */
  OG_CHOICE_TUNE_CACHE = 1, /* a timed result from the tune cache */
  OG_CHOICE_FORCED = 2,     /* desc->config */
  OG_CHOICE_TUNED = 3       /* timed by this call (og_gemm in OG_TUNE_ON_MISS mode); explain never times */
} og_choice_source;

/* Where a call's device workspace comes from (og_explanation.workspace_source). */
typedef enum og_workspace_source {
  OG_WORKSPACE_NONE = 0,   /* the call needs none */
  OG_WORKSPACE_CALLER = 1, /* desc->workspace */
  OG_WORKSPACE_ENGINE = 2  /* allocated by the engine on first need and kept per stream */
} og_workspace_source;

typedef struct og_explanation {
  og_backend backend;
  char family[64];          /* qualified kernel family, e.g. "cuda.sm90_wgmma" */
  char config[128];         /* its config's text form, usable as desc->config */
  og_choice_source source;
  double predicted_ms;      /* the cost model's estimate (relative units where the device's peak is unknown) */
  int64_t grid[3];          /* the planned launch: workgroups, */
  int cluster;              /* workgroups per cluster (1: none), */
  int threads;              /* threads per workgroup, */
  int64_t shared_bytes;     /* shared memory per workgroup, */
  int64_t workspace_bytes;  /* and device workspace (what og_gemm_workspace_size answers), */
  og_workspace_source workspace_source; /* which the caller passes or the engine allocates */
  char report[8192];        /* readable report: the choice and why, the plan, the runners-up and every
                               other family's reason for not running it (truncated with "..." if longer) */
} og_explanation;

/* What og_gemm would run for this descriptor, without running or timing anything. A descriptor
 * og_gemm would refuse gets the same status and message. An empty problem (M, N or batch 0)
 * explains that nothing runs. */
OG_API og_status og_gemm_explain(og_context* ctx, const og_gemm_desc* desc, og_explanation* out);

/* ---- Prepare: the work of a first call, done at load time. -------------------------------- */
/* Makes, for each of the `count` descriptors, what og_gemm / og_gemm_async would otherwise make on
 * the first call with that problem (on Vulkan, the compute pipeline: a shader compile), so that
 * those calls compile nothing; what it makes is kept for the context's life. A descriptor is
 * checked as og_gemm checks it, except that an operand whose memory kind is OG_MEMORY_NONE (not yet
 * allocated at load time) is taken as memory of the context's backend at its byte offset, aligned
 * to 256 bytes. The config is the one og_gemm would choose without tuning (explain's answer).
 * Stops at the first descriptor that fails and returns its status; the message names its index.
 * Runs nothing; backends with nothing to prepare return OG_OK. */
OG_API og_status og_gemm_prepare(og_context* ctx, const og_gemm_desc* descs, size_t count);

/* ---- Workspace under the caller's control. ---------------------------------------------- */
/* The bytes of device workspace og_gemm / og_gemm_async would use for this descriptor with the
 * config it would choose (0: none; the CPU backend never needs any). Passing at least that much
 * in desc->workspace makes the call allocate nothing; the answer depends on the sizes, dtypes,
 * layouts, alignment of the operands' addresses and the config, so ask again when they change
 * (the answer for one descriptor does not change between calls, except that in OG_TUNE_ON_MISS
 * mode the first og_gemm of a new problem may tune to another config: ask after it). A workspace
 * is in use until the work enqueued with it has finished: calls in flight on different streams
 * need different workspaces. Same validation and status as og_gemm; *bytes is 0 on failure. */
OG_API og_status og_gemm_workspace_size(og_context* ctx, const og_gemm_desc* desc, uint64_t* bytes);

/* ---- Memory of the context's backend and device timing (for tools and benchmarks). ------- */
/* Allocates `bytes` of device memory of the context's backend (host memory on the CPU backend):
 * OG_MEMORY_CUDA / HIP pointers, or a VkBuffer for Vulkan. Free it with og_memory_free on the
 * same context, before destroying the context. */
OG_API og_status og_memory_alloc(og_context* ctx, size_t bytes, og_memory* out);
/* Frees memory from og_memory_alloc on this context; anything else is refused (invalid_argument). */
OG_API og_status og_memory_free(og_context* ctx, og_memory mem);
/* Blocking copies between host memory and memory from og_memory_alloc (offset included). */
OG_API og_status og_memory_upload(og_context* ctx, og_memory dst, const void* src, size_t bytes);
OG_API og_status og_memory_download(og_context* ctx, void* dst, og_memory src, size_t bytes);
/* Waits for the work enqueued on `stream` (NULL: the backend's default queue). */
OG_API og_status og_context_synchronize(og_context* ctx, void* stream);
/* Device time in milliseconds of the work `launch(user)` enqueues on the backend's default queue
 * (CUDA: the legacy default stream, timed with events; Vulkan: timestamp queries; CPU: the host
 * clock). launch's own failure status is returned as is. */
typedef og_status (*og_launch_fn)(void* user);
OG_API og_status og_context_time(og_context* ctx, og_launch_fn launch, void* user, double* ms);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* OMNIGEMM_H */
