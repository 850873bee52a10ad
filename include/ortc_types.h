/* ortc_types.h -- types used by the ONNX Runtime C API function table.
 *
 * Written by the ortc project from the published ABI (names, values and
 * layouts are facts of the C interface). Enumerators carry explicit values,
 * handles are opaque, and only plain C is used so that cffi can read it. */
#ifndef ORTC_TYPES_H
#define ORTC_TYPES_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

/* ---- enumerations ---- */

typedef enum OrtErrorCode {
  ORT_OK = 0,
  ORT_FAIL = 1,
  ORT_INVALID_ARGUMENT = 2,
  ORT_NO_SUCHFILE = 3,
  ORT_NO_MODEL = 4,
  ORT_ENGINE_ERROR = 5,
  ORT_RUNTIME_EXCEPTION = 6,
  ORT_INVALID_PROTOBUF = 7,
  ORT_MODEL_LOADED = 8,
  ORT_NOT_IMPLEMENTED = 9,
  ORT_INVALID_GRAPH = 10,
  ORT_EP_FAIL = 11,
  ORT_MODEL_LOAD_CANCELED = 12,
  ORT_MODEL_REQUIRES_COMPILATION = 13,
  ORT_NOT_FOUND = 14,
  ORT_DEVICE_RESET = 15
} OrtErrorCode;

typedef enum ONNXTensorElementDataType {
  ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED = 0,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT = 1,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8 = 2,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8 = 3,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT16 = 4,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_INT16 = 5,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32 = 6,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64 = 7,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_STRING = 8,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL = 9,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16 = 10,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE = 11,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT32 = 12,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT64 = 13,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_COMPLEX64 = 14,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_COMPLEX128 = 15,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16 = 16,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E4M3FN = 17,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E4M3FNUZ = 18,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E5M2 = 19,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E5M2FNUZ = 20,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT4 = 21,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_INT4 = 22,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT4E2M1 = 23,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT2 = 24,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_INT2 = 25,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E8M0 = 26
} ONNXTensorElementDataType;

typedef enum ONNXType {
  ONNX_TYPE_UNKNOWN = 0,
  ONNX_TYPE_TENSOR = 1,
  ONNX_TYPE_SEQUENCE = 2,
  ONNX_TYPE_MAP = 3,
  ONNX_TYPE_OPAQUE = 4,
  ONNX_TYPE_SPARSETENSOR = 5,
  ONNX_TYPE_OPTIONAL = 6
} ONNXType;

typedef enum OrtSparseFormat {
  ORT_SPARSE_UNDEFINED = 0,
  ORT_SPARSE_COO = 1,
  ORT_SPARSE_CSRC = 2,
  ORT_SPARSE_BLOCK_SPARSE = 4
} OrtSparseFormat;

enum OrtSparseIndicesFormat {
  ORT_SPARSE_COO_INDICES = 0,
  ORT_SPARSE_CSR_INNER_INDICES = 1,
  ORT_SPARSE_CSR_OUTER_INDICES = 2,
  ORT_SPARSE_BLOCK_SPARSE_INDICES = 3
};

typedef enum OrtLoggingLevel {
  ORT_LOGGING_LEVEL_VERBOSE = 0,
  ORT_LOGGING_LEVEL_INFO = 1,
  ORT_LOGGING_LEVEL_WARNING = 2,
  ORT_LOGGING_LEVEL_ERROR = 3,
  ORT_LOGGING_LEVEL_FATAL = 4
} OrtLoggingLevel;

typedef enum OrtOpAttrType {
  ORT_OP_ATTR_UNDEFINED = 0,
  ORT_OP_ATTR_INT = 1,
  ORT_OP_ATTR_INTS = 2,
  ORT_OP_ATTR_FLOAT = 3,
  ORT_OP_ATTR_FLOATS = 4,
  ORT_OP_ATTR_STRING = 5,
  ORT_OP_ATTR_STRINGS = 6,
  ORT_OP_ATTR_GRAPH = 7,
  ORT_OP_ATTR_TENSOR = 8
} OrtOpAttrType;

typedef enum GraphOptimizationLevel {
  ORT_DISABLE_ALL = 0,
  ORT_ENABLE_BASIC = 1,
  ORT_ENABLE_EXTENDED = 2,
  ORT_ENABLE_LAYOUT = 3,
  ORT_ENABLE_ALL = 99
} GraphOptimizationLevel;

typedef enum ExecutionMode {
  ORT_SEQUENTIAL = 0,
  ORT_PARALLEL = 1
} ExecutionMode;

typedef enum OrtLanguageProjection {
  ORT_PROJECTION_C = 0,
  ORT_PROJECTION_CPLUSPLUS = 1,
  ORT_PROJECTION_CSHARP = 2,
  ORT_PROJECTION_PYTHON = 3,
  ORT_PROJECTION_JAVA = 4,
  ORT_PROJECTION_WINML = 5,
  ORT_PROJECTION_NODEJS = 6
} OrtLanguageProjection;

typedef enum OrtAllocatorType {
  OrtInvalidAllocator = -1,
  OrtDeviceAllocator = 0,
  OrtArenaAllocator = 1,
  OrtReadOnlyAllocator = 2
} OrtAllocatorType;

typedef enum OrtMemType {
  OrtMemTypeCPUInput = -2,
  OrtMemTypeCPUOutput = -1,
  OrtMemTypeCPU = -1,
  OrtMemTypeDefault = 0
} OrtMemType;

typedef enum OrtDeviceMemoryType {
  OrtDeviceMemoryType_DEFAULT = 0,
  OrtDeviceMemoryType_HOST_ACCESSIBLE = 5
} OrtDeviceMemoryType;

typedef enum OrtMemoryInfoDeviceType {
  OrtMemoryInfoDeviceType_CPU = 0,
  OrtMemoryInfoDeviceType_GPU = 1,
  OrtMemoryInfoDeviceType_FPGA = 2,
  OrtMemoryInfoDeviceType_NPU = 3
} OrtMemoryInfoDeviceType;

typedef enum OrtHardwareDeviceType {
  OrtHardwareDeviceType_CPU = 0,
  OrtHardwareDeviceType_GPU = 1,
  OrtHardwareDeviceType_NPU = 2
} OrtHardwareDeviceType;

typedef enum OrtExecutionProviderDevicePolicy {
  OrtExecutionProviderDevicePolicy_DEFAULT = 0,
  OrtExecutionProviderDevicePolicy_PREFER_CPU = 1,
  OrtExecutionProviderDevicePolicy_PREFER_NPU = 2,
  OrtExecutionProviderDevicePolicy_PREFER_GPU = 3,
  OrtExecutionProviderDevicePolicy_MAX_PERFORMANCE = 4,
  OrtExecutionProviderDevicePolicy_MAX_EFFICIENCY = 5,
  OrtExecutionProviderDevicePolicy_MIN_OVERALL_POWER = 6
} OrtExecutionProviderDevicePolicy;

typedef enum OrtDeviceEpIncompatibilityReason {
  OrtDeviceEpIncompatibility_NONE = 0,
  OrtDeviceEpIncompatibility_DRIVER_INCOMPATIBLE = 1,
  OrtDeviceEpIncompatibility_DEVICE_INCOMPATIBLE = 2,
  OrtDeviceEpIncompatibility_MISSING_DEPENDENCY = 4,
  OrtDeviceEpIncompatibility_UNKNOWN = -2147483648
} OrtDeviceEpIncompatibilityReason;

typedef enum OrtCudnnConvAlgoSearch {
  OrtCudnnConvAlgoSearchExhaustive = 0,
  OrtCudnnConvAlgoSearchHeuristic = 1,
  OrtCudnnConvAlgoSearchDefault = 2
} OrtCudnnConvAlgoSearch;

typedef enum OrtExternalMemoryHandleType {
  ORT_EXTERNAL_MEMORY_HANDLE_TYPE_D3D12_RESOURCE = 0,
  ORT_EXTERNAL_MEMORY_HANDLE_TYPE_D3D12_HEAP = 1,
  ORT_EXTERNAL_MEMORY_HANDLE_TYPE_MEMORY_WIN32 = 2,
  ORT_EXTERNAL_MEMORY_HANDLE_TYPE_MEMORY_OPAQUE_FD = 3,
  ORT_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION = 4,
  ORT_EXTERNAL_MEMORY_HANDLE_TYPE_VK_MEMORY_WIN32 = 2,
  ORT_EXTERNAL_MEMORY_HANDLE_TYPE_VK_MEMORY_OPAQUE_FD = 3
} OrtExternalMemoryHandleType;

typedef enum OrtExternalSemaphoreType {
  ORT_EXTERNAL_SEMAPHORE_D3D12_FENCE = 0,
  ORT_EXTERNAL_SEMAPHORE_VK_TIMELINE_SEMAPHORE_WIN32 = 1,
  ORT_EXTERNAL_SEMAPHORE_VK_TIMELINE_SEMAPHORE_OPAQUE_FD = 2
} OrtExternalSemaphoreType;

typedef enum OrtGraphicsApi {
  ORT_GRAPHICS_API_NONE = 0,
  ORT_GRAPHICS_API_D3D12 = 1,
  ORT_GRAPHICS_API_VULKAN = 2
} OrtGraphicsApi;

typedef enum OrtCompiledModelCompatibility {
  OrtCompiledModelCompatibility_EP_NOT_APPLICABLE = 0,
  OrtCompiledModelCompatibility_EP_SUPPORTED_OPTIMAL = 1,
  OrtCompiledModelCompatibility_EP_SUPPORTED_PREFER_RECOMPILATION = 2,
  OrtCompiledModelCompatibility_EP_UNSUPPORTED = 3
} OrtCompiledModelCompatibility;

typedef enum OrtCustomOpInputOutputCharacteristic {
  INPUT_OUTPUT_REQUIRED = 0,
  INPUT_OUTPUT_OPTIONAL = 1,
  INPUT_OUTPUT_VARIADIC = 2
} OrtCustomOpInputOutputCharacteristic;

/* ---- opaque handles (only ever used through pointers) ---- */

typedef struct OrtEnv OrtEnv;
typedef struct OrtStatus OrtStatus;
typedef struct OrtMemoryInfo OrtMemoryInfo;
typedef struct OrtIoBinding OrtIoBinding;
typedef struct OrtSession OrtSession;
typedef struct OrtValue OrtValue;
typedef struct OrtRunOptions OrtRunOptions;
typedef struct OrtTypeInfo OrtTypeInfo;
typedef struct OrtTensorTypeAndShapeInfo OrtTensorTypeAndShapeInfo;
typedef struct OrtMapTypeInfo OrtMapTypeInfo;
typedef struct OrtSequenceTypeInfo OrtSequenceTypeInfo;
typedef struct OrtOptionalTypeInfo OrtOptionalTypeInfo;
typedef struct OrtSessionOptions OrtSessionOptions;
typedef struct OrtCustomOpDomain OrtCustomOpDomain;
typedef struct OrtModelMetadata OrtModelMetadata;
typedef struct OrtThreadPoolParams OrtThreadPoolParams;
typedef struct OrtThreadingOptions OrtThreadingOptions;
typedef struct OrtArenaCfg OrtArenaCfg;
typedef struct OrtPrepackedWeightsContainer OrtPrepackedWeightsContainer;
typedef struct OrtTensorRTProviderOptionsV2 OrtTensorRTProviderOptionsV2;
typedef struct OrtNvTensorRtRtxProviderOptions OrtNvTensorRtRtxProviderOptions;
typedef struct OrtCUDAProviderOptionsV2 OrtCUDAProviderOptionsV2;
typedef struct OrtCANNProviderOptions OrtCANNProviderOptions;
typedef struct OrtDnnlProviderOptions OrtDnnlProviderOptions;
typedef struct OrtOp OrtOp;
typedef struct OrtOpAttr OrtOpAttr;
typedef struct OrtLogger OrtLogger;
typedef struct OrtShapeInferContext OrtShapeInferContext;
typedef struct OrtLoraAdapter OrtLoraAdapter;
typedef struct OrtValueInfo OrtValueInfo;
typedef struct OrtNode OrtNode;
typedef struct OrtGraph OrtGraph;
typedef struct OrtModel OrtModel;
typedef struct OrtModelCompilationOptions OrtModelCompilationOptions;
typedef struct OrtHardwareDevice OrtHardwareDevice;
typedef struct OrtEpDevice OrtEpDevice;
typedef struct OrtKeyValuePairs OrtKeyValuePairs;
typedef struct OrtSyncStream OrtSyncStream;
typedef struct OrtExternalInitializerInfo OrtExternalInitializerInfo;
typedef struct OrtExternalResourceImporter OrtExternalResourceImporter;
typedef struct OrtExternalMemoryHandle OrtExternalMemoryHandle;
typedef struct OrtExternalSemaphoreHandle OrtExternalSemaphoreHandle;
typedef struct OrtDeviceEpIncompatibilityDetails OrtDeviceEpIncompatibilityDetails;
typedef struct OrtEpAssignedSubgraph OrtEpAssignedSubgraph;
typedef struct OrtEpAssignedNode OrtEpAssignedNode;
typedef struct OrtKernelInfo OrtKernelInfo;
typedef struct OrtKernelContext OrtKernelContext;
typedef struct OrtCustomOp OrtCustomOp;
typedef struct OrtApi OrtApi;
typedef struct OrtTrainingApi OrtTrainingApi;
typedef struct OrtModelEditorApi OrtModelEditorApi;
typedef struct OrtCompileApi OrtCompileApi;
typedef struct OrtInteropApi OrtInteropApi;
/* added in API 31: the model-package table; ortc treats it as opaque */
typedef struct OrtModelPackageApi OrtModelPackageApi;
typedef struct OrtEpApi OrtEpApi;
typedef struct OrtApiBase OrtApiBase;

/* ---- callbacks and plain structs ---- */

typedef void (*OrtExperimentalFnPtr)(void);

typedef struct OrtAllocator {
  uint32_t version;
  void* (*Alloc)(struct OrtAllocator* this_, size_t size);
  void (*Free)(struct OrtAllocator* this_, void* p);
  const struct OrtMemoryInfo* (*Info)(const struct OrtAllocator* this_);
  void* (*Reserve)(struct OrtAllocator* this_, size_t size);
  OrtStatus* (*GetStats)(const struct OrtAllocator* this_, OrtKeyValuePairs** out);
  void* (*AllocOnStream)(struct OrtAllocator* this_, size_t size, OrtSyncStream* stream);
  OrtStatus* (*Shrink)(struct OrtAllocator* this_);
} OrtAllocator;

typedef void (*OrtLoggingFunction)(void* param, OrtLoggingLevel severity, const char* category, const char* logid, const char* code_location, const char* message);

typedef OrtStatus* (*EpSelectionDelegate)(const OrtEpDevice** ep_devices, size_t num_devices, const OrtKeyValuePairs* model_metadata, const OrtKeyValuePairs* runtime_metadata, const OrtEpDevice** selected, size_t max_selected, size_t* num_selected, void* state);

/* added in API 31: reads the named EP-context blob for a session being created. It allocates
 * the buffer with the allocator it is given and reports the buffer and its byte size. */
typedef OrtStatus* (*OrtReadNamedBufferFunc)(void* state, const char* name, OrtAllocator* allocator, void** buffer, size_t* buffer_num_bytes);

typedef OrtStatus* (*OrtWriteBufferFunc)(void* state, const void* buffer, size_t buffer_num_bytes);

typedef OrtStatus* (*OrtGetInitializerLocationFunc)(void* state, const char* initializer_name, const OrtValue* initializer_value, const OrtExternalInitializerInfo* external_info, OrtExternalInitializerInfo** new_external_info);

typedef struct OrtCUDAProviderOptions {
  int device_id;
  OrtCudnnConvAlgoSearch cudnn_conv_algo_search;
  size_t gpu_mem_limit;
  int arena_extend_strategy;
  int do_copy_in_default_stream;
  int has_user_compute_stream;
  void* user_compute_stream;
  OrtArenaCfg* default_memory_arena_cfg;
  int tunable_op_enable;
  int tunable_op_tuning_enable;
  int tunable_op_max_tuning_duration_ms;
} OrtCUDAProviderOptions;

typedef struct OrtROCMProviderOptions {
  int device_id;
  int miopen_conv_exhaustive_search;
  size_t gpu_mem_limit;
  int arena_extend_strategy;
  int do_copy_in_default_stream;
  int has_user_compute_stream;
  void* user_compute_stream;
  OrtArenaCfg* default_memory_arena_cfg;
  int enable_hip_graph;
  int tunable_op_enable;
  int tunable_op_tuning_enable;
  int tunable_op_max_tuning_duration_ms;
} OrtROCMProviderOptions;

typedef struct OrtTensorRTProviderOptions {
  int device_id;
  int has_user_compute_stream;
  void* user_compute_stream;
  int trt_max_partition_iterations;
  int trt_min_subgraph_size;
  size_t trt_max_workspace_size;
  int trt_fp16_enable;
  int trt_int8_enable;
  const char* trt_int8_calibration_table_name;
  int trt_int8_use_native_calibration_table;
  int trt_dla_enable;
  int trt_dla_core;
  int trt_dump_subgraphs;
  int trt_engine_cache_enable;
  const char* trt_engine_cache_path;
  int trt_engine_decryption_enable;
  const char* trt_engine_decryption_lib_path;
  int trt_force_sequential_engine_build;
} OrtTensorRTProviderOptions;

typedef struct OrtMIGraphXProviderOptions {
  int device_id;
  int migraphx_fp16_enable;
  int migraphx_fp8_enable;
  int migraphx_int8_enable;
  int migraphx_use_native_calibration_table;
  const char* migraphx_int8_calibration_table_name;
  int migraphx_save_compiled_model;
  const char* migraphx_save_model_path;
  int migraphx_load_compiled_model;
  const char* migraphx_load_model_path;
  bool migraphx_exhaustive_tune;
  size_t migraphx_mem_limit;
  int migraphx_arena_extend_strategy;
} OrtMIGraphXProviderOptions;

typedef struct OrtOpenVINOProviderOptions {
  const char* device_type;
  unsigned char enable_npu_fast_compile;
  const char* device_id;
  size_t num_of_threads;
  const char* cache_dir;
  void* context;
  unsigned char enable_opencl_throttling;
  unsigned char enable_dynamic_shapes;
} OrtOpenVINOProviderOptions;

typedef void (*OrtThreadWorkerFn)(void* ort_worker_fn_param);

struct OrtCustomHandleType {
  char __place_holder;
};
typedef const struct OrtCustomHandleType* OrtCustomThreadHandle;

typedef OrtCustomThreadHandle (*OrtCustomCreateThreadFn)(void* ort_custom_thread_creation_options, OrtThreadWorkerFn ort_thread_worker_fn, void* ort_worker_fn_param);

typedef void (*OrtCustomJoinThreadFn)(OrtCustomThreadHandle ort_custom_thread_handle);

typedef void* (*OrtThreadPoolWorkEnqueueFn)(void* user_context);

typedef void (*OrtThreadPoolWorkStartFn)(void* user_context, void* enqueue_data);

typedef void (*OrtThreadPoolWorkStopFn)(void* user_context, void* enqueue_data);

typedef void (*OrtThreadPoolWorkAbandonFn)(void* user_context, void* enqueue_data);

typedef struct OrtThreadPoolCallbacksConfig {
  uint32_t version;
  OrtThreadPoolWorkEnqueueFn on_enqueue;
  OrtThreadPoolWorkStartFn on_start_work;
  OrtThreadPoolWorkStopFn on_stop_work;
  OrtThreadPoolWorkAbandonFn on_abandon;
  void* user_context;
} OrtThreadPoolCallbacksConfig;

typedef OrtStatus* (*RegisterCustomOpsFn)(OrtSessionOptions* options, const OrtApiBase* api);

typedef void (*RunAsyncCallbackFn)(void* user_data, OrtValue** outputs, size_t num_outputs, OrtStatus* status);

typedef struct OrtExternalMemoryDescriptor {
  uint32_t version;
  OrtExternalMemoryHandleType handle_type;
  void* native_handle;
  size_t size_bytes;
  size_t offset_bytes;
} OrtExternalMemoryDescriptor;

typedef struct OrtExternalSemaphoreDescriptor {
  uint32_t version;
  OrtExternalSemaphoreType type;
  void* native_handle;
} OrtExternalSemaphoreDescriptor;

typedef struct OrtGraphicsInteropConfig {
  uint32_t version;
  OrtGraphicsApi graphics_api;
  void* command_queue;
  const OrtKeyValuePairs* additional_options;
} OrtGraphicsInteropConfig;

typedef struct OrtExternalTensorDescriptor {
  uint32_t version;
  ONNXTensorElementDataType element_type;
  const int64_t* shape;
  size_t rank;
  size_t offset_bytes;
} OrtExternalTensorDescriptor;

typedef struct OrtEnvCreationOptions {
  uint32_t version;
  int32_t logging_severity_level;
  const char* log_id;
  OrtLoggingFunction custom_logging_function;
  void* custom_logging_param;
  const OrtThreadingOptions* threading_options;
  const OrtKeyValuePairs* config_entries;
} OrtEnvCreationOptions;

struct OrtCustomOp {
  uint32_t version;
  void* (*CreateKernel)(const struct OrtCustomOp* op, const OrtApi* api, const OrtKernelInfo* info);
  const char* (*GetName)(const struct OrtCustomOp* op);
  const char* (*GetExecutionProviderType)(const struct OrtCustomOp* op);
  ONNXTensorElementDataType (*GetInputType)(const struct OrtCustomOp* op, size_t index);
  size_t (*GetInputTypeCount)(const struct OrtCustomOp* op);
  ONNXTensorElementDataType (*GetOutputType)(const struct OrtCustomOp* op, size_t index);
  size_t (*GetOutputTypeCount)(const struct OrtCustomOp* op);
  void (*KernelCompute)(void* op_kernel, OrtKernelContext* context);
  void (*KernelDestroy)(void* op_kernel);
  OrtCustomOpInputOutputCharacteristic (*GetInputCharacteristic)(const struct OrtCustomOp* op, size_t index);
  OrtCustomOpInputOutputCharacteristic (*GetOutputCharacteristic)(const struct OrtCustomOp* op, size_t index);
  OrtMemType (*GetInputMemoryType)(const struct OrtCustomOp* op, size_t index);
  int (*GetVariadicInputMinArity)(const struct OrtCustomOp* op);
  int (*GetVariadicInputHomogeneity)(const struct OrtCustomOp* op);
  int (*GetVariadicOutputMinArity)(const struct OrtCustomOp* op);
  int (*GetVariadicOutputHomogeneity)(const struct OrtCustomOp* op);
  OrtStatus* (*CreateKernelV2)(const struct OrtCustomOp* op, const OrtApi* api, const OrtKernelInfo* info, void** kernel);
  OrtStatus* (*KernelComputeV2)(void* op_kernel, OrtKernelContext* context);
  OrtStatus* (*InferOutputShapeFn)(const struct OrtCustomOp* op, OrtShapeInferContext*);
  int (*GetStartVersion)(const struct OrtCustomOp* op);
  int (*GetEndVersion)(const struct OrtCustomOp* op);
  size_t (*GetMayInplace)(int** input_index, int** output_index);
  void (*ReleaseMayInplace)(int* input_index, int* output_index);
  size_t (*GetAliasMap)(int** input_index, int** output_index);
  void (*ReleaseAliasMap)(int* input_index, int* output_index);
};

#endif /* ORTC_TYPES_H */
