/* ortc_api.h -- the OrtApi function table and its entry point.
 *
 * Declarations of the OrtApi function table, written by the ortc project from
 * the published ABI: one slot per line, in table order. A version marker
 * comment stands before the first slot each API version added, and every
 * slot belongs to the nearest marker above it. Versions 19, 21 and 26 added
 * no slots. Path arguments are plain char, as on Linux. API 31 added
 * two slots and API 32 one: see their markers. */
#ifndef ORTC_API_H
#define ORTC_API_H

#include "ortc_types.h"

struct OrtApiBase {
  const OrtApi* (*GetApi)(uint32_t version);
  const char* (*GetVersionString)(void);
};

struct OrtApi {
/* @api 1 */
OrtStatus* (*CreateStatus)(OrtErrorCode code, const char* msg);
OrtErrorCode (*GetErrorCode)(const OrtStatus* status);
const char* (*GetErrorMessage)(const OrtStatus* status);
OrtStatus* (*CreateEnv)(OrtLoggingLevel log_severity_level, const char* logid, OrtEnv** out);
OrtStatus* (*CreateEnvWithCustomLogger)(OrtLoggingFunction logging_function, void* logger_param, OrtLoggingLevel log_severity_level, const char* logid, OrtEnv** out);
OrtStatus* (*EnableTelemetryEvents)(const OrtEnv* env);
OrtStatus* (*DisableTelemetryEvents)(const OrtEnv* env);
OrtStatus* (*CreateSession)(const OrtEnv* env, const char* model_path, const OrtSessionOptions* options, OrtSession** out);
OrtStatus* (*CreateSessionFromArray)(const OrtEnv* env, const void* model_data, size_t model_data_length, const OrtSessionOptions* options, OrtSession** out);
OrtStatus* (*Run)(OrtSession* session, const OrtRunOptions* run_options, const char* const* input_names, const OrtValue* const* inputs, size_t input_len, const char* const* output_names, size_t output_names_len, OrtValue** outputs);
OrtStatus* (*CreateSessionOptions)(OrtSessionOptions** options);
OrtStatus* (*SetOptimizedModelFilePath)(OrtSessionOptions* options, const char* optimized_model_filepath);
OrtStatus* (*CloneSessionOptions)(const OrtSessionOptions* in_options, OrtSessionOptions** out_options);
OrtStatus* (*SetSessionExecutionMode)(OrtSessionOptions* options, ExecutionMode execution_mode);
OrtStatus* (*EnableProfiling)(OrtSessionOptions* options, const char* profile_file_prefix);
OrtStatus* (*DisableProfiling)(OrtSessionOptions* options);
OrtStatus* (*EnableMemPattern)(OrtSessionOptions* options);
OrtStatus* (*DisableMemPattern)(OrtSessionOptions* options);
OrtStatus* (*EnableCpuMemArena)(OrtSessionOptions* options);
OrtStatus* (*DisableCpuMemArena)(OrtSessionOptions* options);
OrtStatus* (*SetSessionLogId)(OrtSessionOptions* options, const char* logid);
OrtStatus* (*SetSessionLogVerbosityLevel)(OrtSessionOptions* options, int session_log_verbosity_level);
OrtStatus* (*SetSessionLogSeverityLevel)(OrtSessionOptions* options, int session_log_severity_level);
OrtStatus* (*SetSessionGraphOptimizationLevel)(OrtSessionOptions* options, GraphOptimizationLevel graph_optimization_level);
OrtStatus* (*SetIntraOpNumThreads)(OrtSessionOptions* options, int intra_op_num_threads);
OrtStatus* (*SetInterOpNumThreads)(OrtSessionOptions* options, int inter_op_num_threads);
OrtStatus* (*CreateCustomOpDomain)(const char* domain, OrtCustomOpDomain** out);
OrtStatus* (*CustomOpDomain_Add)(OrtCustomOpDomain* custom_op_domain, const OrtCustomOp* op);
OrtStatus* (*AddCustomOpDomain)(OrtSessionOptions* options, OrtCustomOpDomain* custom_op_domain);
OrtStatus* (*RegisterCustomOpsLibrary)(OrtSessionOptions* options, const char* library_path, void** library_handle);
OrtStatus* (*SessionGetInputCount)(const OrtSession* session, size_t* out);
OrtStatus* (*SessionGetOutputCount)(const OrtSession* session, size_t* out);
OrtStatus* (*SessionGetOverridableInitializerCount)(const OrtSession* session, size_t* out);
OrtStatus* (*SessionGetInputTypeInfo)(const OrtSession* session, size_t index, OrtTypeInfo** type_info);
OrtStatus* (*SessionGetOutputTypeInfo)(const OrtSession* session, size_t index, OrtTypeInfo** type_info);
OrtStatus* (*SessionGetOverridableInitializerTypeInfo)(const OrtSession* session, size_t index, OrtTypeInfo** type_info);
OrtStatus* (*SessionGetInputName)(const OrtSession* session, size_t index, OrtAllocator* allocator, char** value);
OrtStatus* (*SessionGetOutputName)(const OrtSession* session, size_t index, OrtAllocator* allocator, char** value);
OrtStatus* (*SessionGetOverridableInitializerName)(const OrtSession* session, size_t index, OrtAllocator* allocator, char** value);
OrtStatus* (*CreateRunOptions)(OrtRunOptions** out);
OrtStatus* (*RunOptionsSetRunLogVerbosityLevel)(OrtRunOptions* options, int log_verbosity_level);
OrtStatus* (*RunOptionsSetRunLogSeverityLevel)(OrtRunOptions* options, int log_severity_level);
OrtStatus* (*RunOptionsSetRunTag)(OrtRunOptions* options, const char* run_tag);
OrtStatus* (*RunOptionsGetRunLogVerbosityLevel)(const OrtRunOptions* options, int* log_verbosity_level);
OrtStatus* (*RunOptionsGetRunLogSeverityLevel)(const OrtRunOptions* options, int* log_severity_level);
OrtStatus* (*RunOptionsGetRunTag)(const OrtRunOptions* options, const char** run_tag);
OrtStatus* (*RunOptionsSetTerminate)(OrtRunOptions* options);
OrtStatus* (*RunOptionsUnsetTerminate)(OrtRunOptions* options);
OrtStatus* (*CreateTensorAsOrtValue)(OrtAllocator* allocator, const int64_t* shape, size_t shape_len, ONNXTensorElementDataType type, OrtValue** out);
OrtStatus* (*CreateTensorWithDataAsOrtValue)(const OrtMemoryInfo* info, void* p_data, size_t p_data_len, const int64_t* shape, size_t shape_len, ONNXTensorElementDataType type, OrtValue** out);
OrtStatus* (*IsTensor)(const OrtValue* value, int* out);
OrtStatus* (*GetTensorMutableData)(OrtValue* value, void** out);
OrtStatus* (*FillStringTensor)(OrtValue* value, const char* const* s, size_t s_len);
OrtStatus* (*GetStringTensorDataLength)(const OrtValue* value, size_t* len);
OrtStatus* (*GetStringTensorContent)(const OrtValue* value, void* s, size_t s_len, size_t* offsets, size_t offsets_len);
OrtStatus* (*CastTypeInfoToTensorInfo)(const OrtTypeInfo* type_info, const OrtTensorTypeAndShapeInfo** out);
OrtStatus* (*GetOnnxTypeFromTypeInfo)(const OrtTypeInfo* type_info, enum ONNXType* out);
OrtStatus* (*CreateTensorTypeAndShapeInfo)(OrtTensorTypeAndShapeInfo** out);
OrtStatus* (*SetTensorElementType)(OrtTensorTypeAndShapeInfo* info, enum ONNXTensorElementDataType type);
OrtStatus* (*SetDimensions)(OrtTensorTypeAndShapeInfo* info, const int64_t* dim_values, size_t dim_count);
OrtStatus* (*GetTensorElementType)(const OrtTensorTypeAndShapeInfo* info, enum ONNXTensorElementDataType* out);
OrtStatus* (*GetDimensionsCount)(const OrtTensorTypeAndShapeInfo* info, size_t* out);
OrtStatus* (*GetDimensions)(const OrtTensorTypeAndShapeInfo* info, int64_t* dim_values, size_t dim_values_length);
OrtStatus* (*GetSymbolicDimensions)(const OrtTensorTypeAndShapeInfo* info, const char* dim_params[], size_t dim_params_length);
OrtStatus* (*GetTensorShapeElementCount)(const OrtTensorTypeAndShapeInfo* info, size_t* out);
OrtStatus* (*GetTensorTypeAndShape)(const OrtValue* value, OrtTensorTypeAndShapeInfo** out);
OrtStatus* (*GetTypeInfo)(const OrtValue* value, OrtTypeInfo** out);
OrtStatus* (*GetValueType)(const OrtValue* value, enum ONNXType* out);
OrtStatus* (*CreateMemoryInfo)(const char* name, enum OrtAllocatorType type, int id, enum OrtMemType mem_type, OrtMemoryInfo** out);
OrtStatus* (*CreateCpuMemoryInfo)(enum OrtAllocatorType type, enum OrtMemType mem_type, OrtMemoryInfo** out);
OrtStatus* (*CompareMemoryInfo)(const OrtMemoryInfo* info1, const OrtMemoryInfo* info2, int* out);
OrtStatus* (*MemoryInfoGetName)(const OrtMemoryInfo* ptr, const char** out);
OrtStatus* (*MemoryInfoGetId)(const OrtMemoryInfo* ptr, int* out);
OrtStatus* (*MemoryInfoGetMemType)(const OrtMemoryInfo* ptr, OrtMemType* out);
OrtStatus* (*MemoryInfoGetType)(const OrtMemoryInfo* ptr, OrtAllocatorType* out);
OrtStatus* (*AllocatorAlloc)(OrtAllocator* ort_allocator, size_t size, void** out);
OrtStatus* (*AllocatorFree)(OrtAllocator* ort_allocator, void* p);
OrtStatus* (*AllocatorGetInfo)(const OrtAllocator* ort_allocator, const struct OrtMemoryInfo** out);
OrtStatus* (*GetAllocatorWithDefaultOptions)(OrtAllocator** out);
OrtStatus* (*AddFreeDimensionOverride)(OrtSessionOptions* options, const char* dim_denotation, int64_t dim_value);
OrtStatus* (*GetValue)(const OrtValue* value, int index, OrtAllocator* allocator, OrtValue** out);
OrtStatus* (*GetValueCount)(const OrtValue* value, size_t* out);
OrtStatus* (*CreateValue)(const OrtValue* const* in, size_t num_values, enum ONNXType value_type, OrtValue** out);
OrtStatus* (*CreateOpaqueValue)(const char* domain_name, const char* type_name, const void* data_container, size_t data_container_size, OrtValue** out);
OrtStatus* (*GetOpaqueValue)(const char* domain_name, const char* type_name, const OrtValue* in, void* data_container, size_t data_container_size);
OrtStatus* (*KernelInfoGetAttribute_float)(const OrtKernelInfo* info, const char* name, float* out);
OrtStatus* (*KernelInfoGetAttribute_int64)(const OrtKernelInfo* info, const char* name, int64_t* out);
OrtStatus* (*KernelInfoGetAttribute_string)(const OrtKernelInfo* info, const char* name, char* out, size_t* size);
OrtStatus* (*KernelContext_GetInputCount)(const OrtKernelContext* context, size_t* out);
OrtStatus* (*KernelContext_GetOutputCount)(const OrtKernelContext* context, size_t* out);
OrtStatus* (*KernelContext_GetInput)(const OrtKernelContext* context, size_t index, const OrtValue** out);
OrtStatus* (*KernelContext_GetOutput)(OrtKernelContext* context, size_t index, const int64_t* dim_values, size_t dim_count, OrtValue** out);
void (*ReleaseEnv)(OrtEnv* input);
void (*ReleaseStatus)(OrtStatus* input);
void (*ReleaseMemoryInfo)(OrtMemoryInfo* input);
void (*ReleaseSession)(OrtSession* input);
void (*ReleaseValue)(OrtValue* input);
void (*ReleaseRunOptions)(OrtRunOptions* input);
void (*ReleaseTypeInfo)(OrtTypeInfo* input);
void (*ReleaseTensorTypeAndShapeInfo)(OrtTensorTypeAndShapeInfo* input);
void (*ReleaseSessionOptions)(OrtSessionOptions* input);
void (*ReleaseCustomOpDomain)(OrtCustomOpDomain* input);
/* @api 2 */
OrtStatus* (*GetDenotationFromTypeInfo)(const OrtTypeInfo* type_info, const char** const denotation, size_t* len);
OrtStatus* (*CastTypeInfoToMapTypeInfo)(const OrtTypeInfo* type_info, const OrtMapTypeInfo** out);
OrtStatus* (*CastTypeInfoToSequenceTypeInfo)(const OrtTypeInfo* type_info, const OrtSequenceTypeInfo** out);
OrtStatus* (*GetMapKeyType)(const OrtMapTypeInfo* map_type_info, enum ONNXTensorElementDataType* out);
OrtStatus* (*GetMapValueType)(const OrtMapTypeInfo* map_type_info, OrtTypeInfo** type_info);
OrtStatus* (*GetSequenceElementType)(const OrtSequenceTypeInfo* sequence_type_info, OrtTypeInfo** type_info);
void (*ReleaseMapTypeInfo)(OrtMapTypeInfo* input);
void (*ReleaseSequenceTypeInfo)(OrtSequenceTypeInfo* input);
OrtStatus* (*SessionEndProfiling)(OrtSession* session, OrtAllocator* allocator, char** out);
OrtStatus* (*SessionGetModelMetadata)(const OrtSession* session, OrtModelMetadata** out);
OrtStatus* (*ModelMetadataGetProducerName)(const OrtModelMetadata* model_metadata, OrtAllocator* allocator, char** value);
OrtStatus* (*ModelMetadataGetGraphName)(const OrtModelMetadata* model_metadata, OrtAllocator* allocator, char** value);
OrtStatus* (*ModelMetadataGetDomain)(const OrtModelMetadata* model_metadata, OrtAllocator* allocator, char** value);
OrtStatus* (*ModelMetadataGetDescription)(const OrtModelMetadata* model_metadata, OrtAllocator* allocator, char** value);
OrtStatus* (*ModelMetadataLookupCustomMetadataMap)(const OrtModelMetadata* model_metadata, OrtAllocator* allocator, const char* key, char** value);
OrtStatus* (*ModelMetadataGetVersion)(const OrtModelMetadata* model_metadata, int64_t* value);
void (*ReleaseModelMetadata)(OrtModelMetadata* input);
/* @api 3 */
OrtStatus* (*CreateEnvWithGlobalThreadPools)(OrtLoggingLevel log_severity_level, const char* logid, const OrtThreadingOptions* tp_options, OrtEnv** out);
OrtStatus* (*DisablePerSessionThreads)(OrtSessionOptions* options);
OrtStatus* (*CreateThreadingOptions)(OrtThreadingOptions** out);
void (*ReleaseThreadingOptions)(OrtThreadingOptions* input);
OrtStatus* (*ModelMetadataGetCustomMetadataMapKeys)(const OrtModelMetadata* model_metadata, OrtAllocator* allocator, char*** keys, int64_t* num_keys);
OrtStatus* (*AddFreeDimensionOverrideByName)(OrtSessionOptions* options, const char* dim_name, int64_t dim_value);
/* @api 4 */
OrtStatus* (*GetAvailableProviders)(char*** out_ptr, int* provider_length);
OrtStatus* (*ReleaseAvailableProviders)(char** ptr, int providers_length);
/* @api 5 */
OrtStatus* (*GetStringTensorElementLength)(const OrtValue* value, size_t index, size_t* out);
OrtStatus* (*GetStringTensorElement)(const OrtValue* value, size_t s_len, size_t index, void* s);
OrtStatus* (*FillStringTensorElement)(OrtValue* value, const char* s, size_t index);
OrtStatus* (*AddSessionConfigEntry)(OrtSessionOptions* options, const char* config_key, const char* config_value);
OrtStatus* (*CreateAllocator)(const OrtSession* session, const OrtMemoryInfo* mem_info, OrtAllocator** out);
void (*ReleaseAllocator)(OrtAllocator* input);
OrtStatus* (*RunWithBinding)(OrtSession* session, const OrtRunOptions* run_options, const OrtIoBinding* binding_ptr);
OrtStatus* (*CreateIoBinding)(OrtSession* session, OrtIoBinding** out);
void (*ReleaseIoBinding)(OrtIoBinding* input);
OrtStatus* (*BindInput)(OrtIoBinding* binding_ptr, const char* name, const OrtValue* val_ptr);
OrtStatus* (*BindOutput)(OrtIoBinding* binding_ptr, const char* name, const OrtValue* val_ptr);
OrtStatus* (*BindOutputToDevice)(OrtIoBinding* binding_ptr, const char* name, const OrtMemoryInfo* mem_info_ptr);
OrtStatus* (*GetBoundOutputNames)(const OrtIoBinding* binding_ptr, OrtAllocator* allocator, char** buffer, size_t** lengths, size_t* count);
OrtStatus* (*GetBoundOutputValues)(const OrtIoBinding* binding_ptr, OrtAllocator* allocator, OrtValue*** output, size_t* output_count);
void (*ClearBoundInputs)(OrtIoBinding* binding_ptr);
void (*ClearBoundOutputs)(OrtIoBinding* binding_ptr);
OrtStatus* (*TensorAt)(OrtValue* value, const int64_t* location_values, size_t location_values_count, void** out);
OrtStatus* (*CreateAndRegisterAllocator)(OrtEnv* env, const OrtMemoryInfo* mem_info, const OrtArenaCfg* arena_cfg);
OrtStatus* (*SetLanguageProjection)(const OrtEnv* ort_env, OrtLanguageProjection projection);
OrtStatus* (*SessionGetProfilingStartTimeNs)(const OrtSession* session, uint64_t* out);
OrtStatus* (*SetGlobalIntraOpNumThreads)(OrtThreadingOptions* tp_options, int intra_op_num_threads);
OrtStatus* (*SetGlobalInterOpNumThreads)(OrtThreadingOptions* tp_options, int inter_op_num_threads);
OrtStatus* (*SetGlobalSpinControl)(OrtThreadingOptions* tp_options, int allow_spinning);
/* @api 6 */
OrtStatus* (*AddInitializer)(OrtSessionOptions* options, const char* name, const OrtValue* val);
OrtStatus* (*CreateEnvWithCustomLoggerAndGlobalThreadPools)(OrtLoggingFunction logging_function, void* logger_param, OrtLoggingLevel log_severity_level, const char* logid, const struct OrtThreadingOptions* tp_options, OrtEnv** out);
OrtStatus* (*SessionOptionsAppendExecutionProvider_CUDA)(OrtSessionOptions* options, const OrtCUDAProviderOptions* cuda_options);
OrtStatus* (*SessionOptionsAppendExecutionProvider_ROCM)(OrtSessionOptions* options, const OrtROCMProviderOptions* rocm_options);
OrtStatus* (*SessionOptionsAppendExecutionProvider_OpenVINO)(OrtSessionOptions* options, const OrtOpenVINOProviderOptions* provider_options);
OrtStatus* (*SetGlobalDenormalAsZero)(OrtThreadingOptions* tp_options);
OrtStatus* (*CreateArenaCfg)(size_t max_mem, int arena_extend_strategy, int initial_chunk_size_bytes, int max_dead_bytes_per_chunk, OrtArenaCfg** out);
void (*ReleaseArenaCfg)(OrtArenaCfg* input);
/* @api 7 */
OrtStatus* (*ModelMetadataGetGraphDescription)(const OrtModelMetadata* model_metadata, OrtAllocator* allocator, char** value);
OrtStatus* (*SessionOptionsAppendExecutionProvider_TensorRT)(OrtSessionOptions* options, const OrtTensorRTProviderOptions* tensorrt_options);
OrtStatus* (*SetCurrentGpuDeviceId)(int device_id);
OrtStatus* (*GetCurrentGpuDeviceId)(int* device_id);
/* @api 8 */
OrtStatus* (*KernelInfoGetAttributeArray_float)(const OrtKernelInfo* info, const char* name, float* out, size_t* size);
OrtStatus* (*KernelInfoGetAttributeArray_int64)(const OrtKernelInfo* info, const char* name, int64_t* out, size_t* size);
OrtStatus* (*CreateArenaCfgV2)(const char* const* arena_config_keys, const size_t* arena_config_values, size_t num_keys, OrtArenaCfg** out);
OrtStatus* (*AddRunConfigEntry)(OrtRunOptions* options, const char* config_key, const char* config_value);
OrtStatus* (*CreatePrepackedWeightsContainer)(OrtPrepackedWeightsContainer** out);
void (*ReleasePrepackedWeightsContainer)(OrtPrepackedWeightsContainer* input);
OrtStatus* (*CreateSessionWithPrepackedWeightsContainer)(const OrtEnv* env, const char* model_path, const OrtSessionOptions* options, OrtPrepackedWeightsContainer* prepacked_weights_container, OrtSession** out);
OrtStatus* (*CreateSessionFromArrayWithPrepackedWeightsContainer)(const OrtEnv* env, const void* model_data, size_t model_data_length, const OrtSessionOptions* options, OrtPrepackedWeightsContainer* prepacked_weights_container, OrtSession** out);
/* @api 9 */
OrtStatus* (*SessionOptionsAppendExecutionProvider_TensorRT_V2)(OrtSessionOptions* options, const OrtTensorRTProviderOptionsV2* tensorrt_options);
OrtStatus* (*CreateTensorRTProviderOptions)(OrtTensorRTProviderOptionsV2** out);
OrtStatus* (*UpdateTensorRTProviderOptions)(OrtTensorRTProviderOptionsV2* tensorrt_options, const char* const* provider_options_keys, const char* const* provider_options_values, size_t num_keys);
OrtStatus* (*GetTensorRTProviderOptionsAsString)(const OrtTensorRTProviderOptionsV2* tensorrt_options, OrtAllocator* allocator, char** ptr);
void (*ReleaseTensorRTProviderOptions)(OrtTensorRTProviderOptionsV2* input);
OrtStatus* (*EnableOrtCustomOps)(OrtSessionOptions* options);
OrtStatus* (*RegisterAllocator)(OrtEnv* env, OrtAllocator* allocator);
OrtStatus* (*UnregisterAllocator)(OrtEnv* env, const OrtMemoryInfo* mem_info);
OrtStatus* (*IsSparseTensor)(const OrtValue* value, int* out);
OrtStatus* (*CreateSparseTensorAsOrtValue)(OrtAllocator* allocator, const int64_t* dense_shape, size_t dense_shape_len, ONNXTensorElementDataType type, OrtValue** out);
OrtStatus* (*FillSparseTensorCoo)(OrtValue* ort_value, const OrtMemoryInfo* data_mem_info, const int64_t* values_shape, size_t values_shape_len, const void* values, const int64_t* indices_data, size_t indices_num);
OrtStatus* (*FillSparseTensorCsr)(OrtValue* ort_value, const OrtMemoryInfo* data_mem_info, const int64_t* values_shape, size_t values_shape_len, const void* values, const int64_t* inner_indices_data, size_t inner_indices_num, const int64_t* outer_indices_data, size_t outer_indices_num);
OrtStatus* (*FillSparseTensorBlockSparse)(OrtValue* ort_value, const OrtMemoryInfo* data_mem_info, const int64_t* values_shape, size_t values_shape_len, const void* values, const int64_t* indices_shape_data, size_t indices_shape_len, const int32_t* indices_data);
OrtStatus* (*CreateSparseTensorWithValuesAsOrtValue)(const OrtMemoryInfo* info, void* p_data, const int64_t* dense_shape, size_t dense_shape_len, const int64_t* values_shape, size_t values_shape_len, ONNXTensorElementDataType type, OrtValue** out);
OrtStatus* (*UseCooIndices)(OrtValue* ort_value, int64_t* indices_data, size_t indices_num);
OrtStatus* (*UseCsrIndices)(OrtValue* ort_value, int64_t* inner_data, size_t inner_num, int64_t* outer_data, size_t outer_num);
OrtStatus* (*UseBlockSparseIndices)(OrtValue* ort_value, const int64_t* indices_shape, size_t indices_shape_len, int32_t* indices_data);
OrtStatus* (*GetSparseTensorFormat)(const OrtValue* ort_value, enum OrtSparseFormat* out);
OrtStatus* (*GetSparseTensorValuesTypeAndShape)(const OrtValue* ort_value, OrtTensorTypeAndShapeInfo** out);
OrtStatus* (*GetSparseTensorValues)(const OrtValue* ort_value, const void** out);
OrtStatus* (*GetSparseTensorIndicesTypeShape)(const OrtValue* ort_value, enum OrtSparseIndicesFormat indices_format, OrtTensorTypeAndShapeInfo** out);
OrtStatus* (*GetSparseTensorIndices)(const OrtValue* ort_value, enum OrtSparseIndicesFormat indices_format, size_t* num_indices, const void** indices);
/* @api 10 */
OrtStatus* (*HasValue)(const OrtValue* value, int* out);
OrtStatus* (*KernelContext_GetGPUComputeStream)(const OrtKernelContext* context, void** out);
OrtStatus* (*GetTensorMemoryInfo)(const OrtValue* value, const OrtMemoryInfo** mem_info);
OrtStatus* (*GetExecutionProviderApi)(const char* provider_name, uint32_t version, const void** provider_api);
OrtStatus* (*SessionOptionsSetCustomCreateThreadFn)(OrtSessionOptions* options, OrtCustomCreateThreadFn ort_custom_create_thread_fn);
OrtStatus* (*SessionOptionsSetCustomThreadCreationOptions)(OrtSessionOptions* options, void* ort_custom_thread_creation_options);
OrtStatus* (*SessionOptionsSetCustomJoinThreadFn)(OrtSessionOptions* options, OrtCustomJoinThreadFn ort_custom_join_thread_fn);
OrtStatus* (*SetGlobalCustomCreateThreadFn)(OrtThreadingOptions* tp_options, OrtCustomCreateThreadFn ort_custom_create_thread_fn);
OrtStatus* (*SetGlobalCustomThreadCreationOptions)(OrtThreadingOptions* tp_options, void* ort_custom_thread_creation_options);
OrtStatus* (*SetGlobalCustomJoinThreadFn)(OrtThreadingOptions* tp_options, OrtCustomJoinThreadFn ort_custom_join_thread_fn);
OrtStatus* (*SynchronizeBoundInputs)(OrtIoBinding* binding_ptr);
OrtStatus* (*SynchronizeBoundOutputs)(OrtIoBinding* binding_ptr);
/* @api 11 */
OrtStatus* (*SessionOptionsAppendExecutionProvider_CUDA_V2)(OrtSessionOptions* options, const OrtCUDAProviderOptionsV2* cuda_options);
OrtStatus* (*CreateCUDAProviderOptions)(OrtCUDAProviderOptionsV2** out);
OrtStatus* (*UpdateCUDAProviderOptions)(OrtCUDAProviderOptionsV2* cuda_options, const char* const* provider_options_keys, const char* const* provider_options_values, size_t num_keys);
OrtStatus* (*GetCUDAProviderOptionsAsString)(const OrtCUDAProviderOptionsV2* cuda_options, OrtAllocator* allocator, char** ptr);
void (*ReleaseCUDAProviderOptions)(OrtCUDAProviderOptionsV2* input);
OrtStatus* (*SessionOptionsAppendExecutionProvider_MIGraphX)(OrtSessionOptions* options, const OrtMIGraphXProviderOptions* migraphx_options);
/* @api 12 */
OrtStatus* (*AddExternalInitializers)(OrtSessionOptions* options, const char* const* initializer_names, const OrtValue* const* initializers, size_t num_initializers);
OrtStatus* (*CreateOpAttr)(const char* name, const void* data, int len, OrtOpAttrType type, OrtOpAttr** op_attr);
void (*ReleaseOpAttr)(OrtOpAttr* input);
OrtStatus* (*CreateOp)(const OrtKernelInfo* info, const char* op_name, const char* domain, int version, const char** type_constraint_names, const ONNXTensorElementDataType* type_constraint_values, int type_constraint_count, const OrtOpAttr* const* attr_values, int attr_count, int input_count, int output_count, OrtOp** ort_op);
OrtStatus* (*InvokeOp)(const OrtKernelContext* context, const OrtOp* ort_op, const OrtValue* const* input_values, int input_count, OrtValue* const* output_values, int output_count);
void (*ReleaseOp)(OrtOp* input);
OrtStatus* (*SessionOptionsAppendExecutionProvider)(OrtSessionOptions* options, const char* provider_name, const char* const* provider_options_keys, const char* const* provider_options_values, size_t num_keys);
OrtStatus* (*CopyKernelInfo)(const OrtKernelInfo* info, OrtKernelInfo** info_copy);
void (*ReleaseKernelInfo)(OrtKernelInfo* input);
/* @api 13 */
const OrtTrainingApi* (*GetTrainingApi)(uint32_t version);
OrtStatus* (*SessionOptionsAppendExecutionProvider_CANN)(OrtSessionOptions* options, const OrtCANNProviderOptions* cann_options);
OrtStatus* (*CreateCANNProviderOptions)(OrtCANNProviderOptions** out);
OrtStatus* (*UpdateCANNProviderOptions)(OrtCANNProviderOptions* cann_options, const char* const* provider_options_keys, const char* const* provider_options_values, size_t num_keys);
OrtStatus* (*GetCANNProviderOptionsAsString)(const OrtCANNProviderOptions* cann_options, OrtAllocator* allocator, char** ptr);
void (*ReleaseCANNProviderOptions)(OrtCANNProviderOptions* input);
/* @api 14 */
void (*MemoryInfoGetDeviceType)(const OrtMemoryInfo* ptr, OrtMemoryInfoDeviceType* out);
OrtStatus* (*UpdateEnvWithCustomLogLevel)(OrtEnv* ort_env, OrtLoggingLevel log_severity_level);
OrtStatus* (*SetGlobalIntraOpThreadAffinity)(OrtThreadingOptions* tp_options, const char* affinity_string);
OrtStatus* (*RegisterCustomOpsLibrary_V2)(OrtSessionOptions* options, const char* library_name);
OrtStatus* (*RegisterCustomOpsUsingFunction)(OrtSessionOptions* options, const char* registration_func_name);
OrtStatus* (*KernelInfo_GetInputCount)(const OrtKernelInfo* info, size_t* out);
OrtStatus* (*KernelInfo_GetOutputCount)(const OrtKernelInfo* info, size_t* out);
OrtStatus* (*KernelInfo_GetInputName)(const OrtKernelInfo* info, size_t index, char* out, size_t* size);
OrtStatus* (*KernelInfo_GetOutputName)(const OrtKernelInfo* info, size_t index, char* out, size_t* size);
OrtStatus* (*KernelInfo_GetInputTypeInfo)(const OrtKernelInfo* info, size_t index, OrtTypeInfo** type_info);
OrtStatus* (*KernelInfo_GetOutputTypeInfo)(const OrtKernelInfo* info, size_t index, OrtTypeInfo** type_info);
OrtStatus* (*KernelInfoGetAttribute_tensor)(const OrtKernelInfo* info, const char* name, OrtAllocator* allocator, OrtValue** out);
OrtStatus* (*HasSessionConfigEntry)(const OrtSessionOptions* options, const char* config_key, int* out);
OrtStatus* (*GetSessionConfigEntry)(const OrtSessionOptions* options, const char* config_key, char* config_value, size_t* size);
/* @api 15 */
OrtStatus* (*SessionOptionsAppendExecutionProvider_Dnnl)(OrtSessionOptions* options, const OrtDnnlProviderOptions* dnnl_options);
OrtStatus* (*CreateDnnlProviderOptions)(OrtDnnlProviderOptions** out);
OrtStatus* (*UpdateDnnlProviderOptions)(OrtDnnlProviderOptions* dnnl_options, const char* const* provider_options_keys, const char* const* provider_options_values, size_t num_keys);
OrtStatus* (*GetDnnlProviderOptionsAsString)(const OrtDnnlProviderOptions* dnnl_options, OrtAllocator* allocator, char** ptr);
void (*ReleaseDnnlProviderOptions)(OrtDnnlProviderOptions* input);
OrtStatus* (*KernelInfo_GetNodeName)(const OrtKernelInfo* info, char* out, size_t* size);
OrtStatus* (*KernelInfo_GetLogger)(const OrtKernelInfo* info, const OrtLogger** logger);
OrtStatus* (*KernelContext_GetLogger)(const OrtKernelContext* context, const OrtLogger** logger);
OrtStatus* (*Logger_LogMessage)(const OrtLogger* logger, OrtLoggingLevel log_severity_level, const char* message, const char* file_path, int line_number, const char* func_name);
OrtStatus* (*Logger_GetLoggingSeverityLevel)(const OrtLogger* logger, OrtLoggingLevel* out);
OrtStatus* (*KernelInfoGetConstantInput_tensor)(const OrtKernelInfo* info, size_t index, int* is_constant, const OrtValue** out);
OrtStatus* (*CastTypeInfoToOptionalTypeInfo)(const OrtTypeInfo* type_info, const OrtOptionalTypeInfo** out);
OrtStatus* (*GetOptionalContainedTypeInfo)(const OrtOptionalTypeInfo* optional_type_info, OrtTypeInfo** out);
OrtStatus* (*GetResizedStringTensorElementBuffer)(OrtValue* value, size_t index, size_t length_in_bytes, char** buffer);
OrtStatus* (*KernelContext_GetAllocator)(const OrtKernelContext* context, const OrtMemoryInfo* mem_info, OrtAllocator** out);
const char* (*GetBuildInfoString)(void);
/* @api 16 */
OrtStatus* (*CreateROCMProviderOptions)(OrtROCMProviderOptions** out);
OrtStatus* (*UpdateROCMProviderOptions)(OrtROCMProviderOptions* rocm_options, const char* const* provider_options_keys, const char* const* provider_options_values, size_t num_keys);
OrtStatus* (*GetROCMProviderOptionsAsString)(const OrtROCMProviderOptions* rocm_options, OrtAllocator* allocator, char** ptr);
void (*ReleaseROCMProviderOptions)(OrtROCMProviderOptions* input);
OrtStatus* (*CreateAndRegisterAllocatorV2)(OrtEnv* env, const char* provider_type, const OrtMemoryInfo* mem_info, const OrtArenaCfg* arena_cfg, const char* const* provider_options_keys, const char* const* provider_options_values, size_t num_keys);
OrtStatus* (*RunAsync)(OrtSession* session, const OrtRunOptions* run_options, const char* const* input_names, const OrtValue* const* input, size_t input_len, const char* const* output_names, size_t output_names_len, OrtValue** output, RunAsyncCallbackFn run_async_callback, void* user_data);
OrtStatus* (*UpdateTensorRTProviderOptionsWithValue)(OrtTensorRTProviderOptionsV2* tensorrt_options, const char* key, void* value);
OrtStatus* (*GetTensorRTProviderOptionsByName)(const OrtTensorRTProviderOptionsV2* tensorrt_options, const char* key, void** ptr);
OrtStatus* (*UpdateCUDAProviderOptionsWithValue)(OrtCUDAProviderOptionsV2* cuda_options, const char* key, void* value);
OrtStatus* (*GetCUDAProviderOptionsByName)(const OrtCUDAProviderOptionsV2* cuda_options, const char* key, void** ptr);
OrtStatus* (*KernelContext_GetResource)(const OrtKernelContext* context, int resource_version, int resource_id, void** resource);
/* @api 17 */
OrtStatus* (*SetUserLoggingFunction)(OrtSessionOptions* options, OrtLoggingFunction user_logging_function, void* user_logging_param);
OrtStatus* (*ShapeInferContext_GetInputCount)(const OrtShapeInferContext* context, size_t* out);
OrtStatus* (*ShapeInferContext_GetInputTypeShape)(const OrtShapeInferContext* context, size_t index, OrtTensorTypeAndShapeInfo** info);
OrtStatus* (*ShapeInferContext_GetAttribute)(const OrtShapeInferContext* context, const char* attr_name, const OrtOpAttr** attr);
OrtStatus* (*ShapeInferContext_SetOutputTypeShape)(const OrtShapeInferContext* context, size_t index, const OrtTensorTypeAndShapeInfo* info);
OrtStatus* (*SetSymbolicDimensions)(OrtTensorTypeAndShapeInfo* info, const char* dim_params[], size_t dim_params_length);
OrtStatus* (*ReadOpAttr)(const OrtOpAttr* op_attr, OrtOpAttrType type, void* data, size_t len, size_t* out);
OrtStatus* (*SetDeterministicCompute)(OrtSessionOptions* options, bool value);
OrtStatus* (*KernelContext_ParallelFor)(const OrtKernelContext* context, void (*fn)(void*, size_t), size_t total, size_t num_batch, void* usr_data);
OrtStatus* (*SessionOptionsAppendExecutionProvider_OpenVINO_V2)(OrtSessionOptions* options, const char* const* provider_options_keys, const char* const* provider_options_values, size_t num_keys);
/* @api 18 */
OrtStatus* (*SessionOptionsAppendExecutionProvider_VitisAI)(OrtSessionOptions* options, const char* const* provider_options_keys, const char* const* provider_options_values, size_t num_keys);
OrtStatus* (*KernelContext_GetScratchBuffer)(const OrtKernelContext* context, const OrtMemoryInfo* mem_info, size_t count_or_bytes, void** out);
OrtStatus* (*KernelInfoGetAllocator)(const OrtKernelInfo* info, OrtMemType mem_type, OrtAllocator** out);
OrtStatus* (*AddExternalInitializersFromFilesInMemory)(OrtSessionOptions* options, const char* const* external_initializer_file_names, char* const* external_initializer_file_buffer_array, const size_t* external_initializer_file_lengths, size_t num_external_initializer_files);
/* @api 20 */
OrtStatus* (*CreateLoraAdapter)(const char* adapter_file_path, OrtAllocator* allocator, OrtLoraAdapter** out);
OrtStatus* (*CreateLoraAdapterFromArray)(const void* bytes, size_t num_bytes, OrtAllocator* allocator, OrtLoraAdapter** out);
void (*ReleaseLoraAdapter)(OrtLoraAdapter* input);
OrtStatus* (*RunOptionsAddActiveLoraAdapter)(OrtRunOptions* options, const OrtLoraAdapter* adapter);
OrtStatus* (*SetEpDynamicOptions)(OrtSession* sess, const char* const* keys, const char* const* values, size_t kv_len);
/* @api 22 */
void (*ReleaseValueInfo)(OrtValueInfo* input);
void (*ReleaseNode)(OrtNode* input);
void (*ReleaseGraph)(OrtGraph* input);
void (*ReleaseModel)(OrtModel* input);
OrtStatus* (*GetValueInfoName)(const OrtValueInfo* value_info, const char** name);
OrtStatus* (*GetValueInfoTypeInfo)(const OrtValueInfo* value_info, const OrtTypeInfo** type_info);
const OrtModelEditorApi* (*GetModelEditorApi)(void);
OrtStatus* (*CreateTensorWithDataAndDeleterAsOrtValue)(OrtAllocator* deleter, void* p_data, size_t p_data_len, const int64_t* shape, size_t shape_len, ONNXTensorElementDataType type, OrtValue** out);
OrtStatus* (*SessionOptionsSetLoadCancellationFlag)(OrtSessionOptions* options, bool cancel);
const OrtCompileApi* (*GetCompileApi)(void);
void (*CreateKeyValuePairs)(OrtKeyValuePairs** out);
void (*AddKeyValuePair)(OrtKeyValuePairs* kvps, const char* key, const char* value);
const char* (*GetKeyValue)(const OrtKeyValuePairs* kvps, const char* key);
void (*GetKeyValuePairs)(const OrtKeyValuePairs* kvps, const char* const** keys, const char* const** values, size_t* num_entries);
void (*RemoveKeyValuePair)(OrtKeyValuePairs* kvps, const char* key);
void (*ReleaseKeyValuePairs)(OrtKeyValuePairs* input);
OrtStatus* (*RegisterExecutionProviderLibrary)(OrtEnv* env, const char* registration_name, const char* path);
OrtStatus* (*UnregisterExecutionProviderLibrary)(OrtEnv* env, const char* registration_name);
OrtStatus* (*GetEpDevices)(const OrtEnv* env, const OrtEpDevice* const** ep_devices, size_t* num_ep_devices);
OrtStatus* (*SessionOptionsAppendExecutionProvider_V2)(OrtSessionOptions* session_options, OrtEnv* env, const OrtEpDevice* const* ep_devices, size_t num_ep_devices, const char* const* ep_option_keys, const char* const* ep_option_vals, size_t num_ep_options);
OrtStatus* (*SessionOptionsSetEpSelectionPolicy)(OrtSessionOptions* session_options, OrtExecutionProviderDevicePolicy policy);
OrtStatus* (*SessionOptionsSetEpSelectionPolicyDelegate)(OrtSessionOptions* session_options, EpSelectionDelegate delegate, void* delegate_state);
OrtHardwareDeviceType (*HardwareDevice_Type)(const OrtHardwareDevice* device);
uint32_t (*HardwareDevice_VendorId)(const OrtHardwareDevice* device);
const char* (*HardwareDevice_Vendor)(const OrtHardwareDevice* device);
uint32_t (*HardwareDevice_DeviceId)(const OrtHardwareDevice* device);
const OrtKeyValuePairs* (*HardwareDevice_Metadata)(const OrtHardwareDevice* device);
const char* (*EpDevice_EpName)(const OrtEpDevice* ep_device);
const char* (*EpDevice_EpVendor)(const OrtEpDevice* ep_device);
const OrtKeyValuePairs* (*EpDevice_EpMetadata)(const OrtEpDevice* ep_device);
const OrtKeyValuePairs* (*EpDevice_EpOptions)(const OrtEpDevice* ep_device);
const OrtHardwareDevice* (*EpDevice_Device)(const OrtEpDevice* ep_device);
const OrtEpApi* (*GetEpApi)(void);
/* @api 23 */
OrtStatus* (*GetTensorSizeInBytes)(const OrtValue* ort_value, size_t* size);
OrtStatus* (*AllocatorGetStats)(const OrtAllocator* ort_allocator, OrtKeyValuePairs** out);
OrtStatus* (*CreateMemoryInfo_V2)(const char* name, enum OrtMemoryInfoDeviceType device_type, uint32_t vendor_id, int32_t device_id, enum OrtDeviceMemoryType mem_type, size_t alignment, enum OrtAllocatorType allocator_type, OrtMemoryInfo** out);
OrtDeviceMemoryType (*MemoryInfoGetDeviceMemType)(const OrtMemoryInfo* ptr);
uint32_t (*MemoryInfoGetVendorId)(const OrtMemoryInfo* ptr);
OrtStatus* (*ValueInfo_GetValueProducer)(const OrtValueInfo* value_info, const OrtNode** producer_node, size_t* producer_output_index);
OrtStatus* (*ValueInfo_GetValueNumConsumers)(const OrtValueInfo* value_info, size_t* num_consumers);
OrtStatus* (*ValueInfo_GetValueConsumers)(const OrtValueInfo* value_info, const OrtNode** nodes, int64_t* input_indices, size_t num_consumers);
OrtStatus* (*ValueInfo_GetInitializerValue)(const OrtValueInfo* value_info, const OrtValue** initializer_value);
OrtStatus* (*ValueInfo_GetExternalInitializerInfo)(const OrtValueInfo* value_info, OrtExternalInitializerInfo** info);
OrtStatus* (*ValueInfo_IsRequiredGraphInput)(const OrtValueInfo* value_info, bool* is_required_graph_input);
OrtStatus* (*ValueInfo_IsOptionalGraphInput)(const OrtValueInfo* value_info, bool* is_optional_graph_input);
OrtStatus* (*ValueInfo_IsGraphOutput)(const OrtValueInfo* value_info, bool* is_graph_output);
OrtStatus* (*ValueInfo_IsConstantInitializer)(const OrtValueInfo* value_info, bool* is_constant_initializer);
OrtStatus* (*ValueInfo_IsFromOuterScope)(const OrtValueInfo* value_info, bool* is_from_outer_scope);
OrtStatus* (*Graph_GetName)(const OrtGraph* graph, const char** graph_name);
OrtStatus* (*Graph_GetModelPath)(const OrtGraph* graph, const char** model_path);
OrtStatus* (*Graph_GetOnnxIRVersion)(const OrtGraph* graph, int64_t* onnx_ir_version);
OrtStatus* (*Graph_GetNumOperatorSets)(const OrtGraph* graph, size_t* num_operator_sets);
OrtStatus* (*Graph_GetOperatorSets)(const OrtGraph* graph, const char** domains, int64_t* opset_versions, size_t num_operator_sets);
OrtStatus* (*Graph_GetNumInputs)(const OrtGraph* graph, size_t* num_inputs);
OrtStatus* (*Graph_GetInputs)(const OrtGraph* graph, const OrtValueInfo** inputs, size_t num_inputs);
OrtStatus* (*Graph_GetNumOutputs)(const OrtGraph* graph, size_t* num_outputs);
OrtStatus* (*Graph_GetOutputs)(const OrtGraph* graph, const OrtValueInfo** outputs, size_t num_outputs);
OrtStatus* (*Graph_GetNumInitializers)(const OrtGraph* graph, size_t* num_initializers);
OrtStatus* (*Graph_GetInitializers)(const OrtGraph* graph, const OrtValueInfo** initializers, size_t num_initializers);
OrtStatus* (*Graph_GetNumNodes)(const OrtGraph* graph, size_t* num_nodes);
OrtStatus* (*Graph_GetNodes)(const OrtGraph* graph, const OrtNode** nodes, size_t num_nodes);
OrtStatus* (*Graph_GetParentNode)(const OrtGraph* graph, const OrtNode** node);
OrtStatus* (*Graph_GetGraphView)(const OrtGraph* src_graph, const OrtNode** nodes, size_t num_nodes, OrtGraph** dst_graph);
OrtStatus* (*Node_GetId)(const OrtNode* node, size_t* node_id);
OrtStatus* (*Node_GetName)(const OrtNode* node, const char** node_name);
OrtStatus* (*Node_GetOperatorType)(const OrtNode* node, const char** operator_type);
OrtStatus* (*Node_GetDomain)(const OrtNode* node, const char** domain_name);
OrtStatus* (*Node_GetSinceVersion)(const OrtNode* node, int* since_version);
OrtStatus* (*Node_GetNumInputs)(const OrtNode* node, size_t* num_inputs);
OrtStatus* (*Node_GetInputs)(const OrtNode* node, const OrtValueInfo** inputs, size_t num_inputs);
OrtStatus* (*Node_GetNumOutputs)(const OrtNode* node, size_t* num_outputs);
OrtStatus* (*Node_GetOutputs)(const OrtNode* node, const OrtValueInfo** outputs, size_t num_outputs);
OrtStatus* (*Node_GetNumImplicitInputs)(const OrtNode* node, size_t* num_implicit_inputs);
OrtStatus* (*Node_GetImplicitInputs)(const OrtNode* node, const OrtValueInfo** implicit_inputs, size_t num_implicit_inputs);
OrtStatus* (*Node_GetNumAttributes)(const OrtNode* node, size_t* num_attributes);
OrtStatus* (*Node_GetAttributes)(const OrtNode* node, const OrtOpAttr** attributes, size_t num_attributes);
OrtStatus* (*Node_GetAttributeByName)(const OrtNode* node, const char* attribute_name, const OrtOpAttr** attribute);
OrtStatus* (*OpAttr_GetTensorAttributeAsOrtValue)(const OrtOpAttr* attribute, OrtValue** attr_tensor);
OrtStatus* (*OpAttr_GetType)(const OrtOpAttr* attribute, OrtOpAttrType* type);
OrtStatus* (*OpAttr_GetName)(const OrtOpAttr* attribute, const char** name);
OrtStatus* (*Node_GetNumSubgraphs)(const OrtNode* node, size_t* num_subgraphs);
OrtStatus* (*Node_GetSubgraphs)(const OrtNode* node, const OrtGraph** subgraphs, size_t num_subgraphs, const char** attribute_names);
OrtStatus* (*Node_GetGraph)(const OrtNode* node, const OrtGraph** graph);
OrtStatus* (*Node_GetEpName)(const OrtNode* node, const char** out);
void (*ReleaseExternalInitializerInfo)(OrtExternalInitializerInfo* input);
const char* (*ExternalInitializerInfo_GetFilePath)(const OrtExternalInitializerInfo* info);
int64_t (*ExternalInitializerInfo_GetFileOffset)(const OrtExternalInitializerInfo* info);
size_t (*ExternalInitializerInfo_GetByteSize)(const OrtExternalInitializerInfo* info);
const char* (*GetRunConfigEntry)(const OrtRunOptions* options, const char* config_key);
const OrtMemoryInfo* (*EpDevice_MemoryInfo)(const OrtEpDevice* ep_device, OrtDeviceMemoryType memory_type);
OrtStatus* (*CreateSharedAllocator)(OrtEnv* env, const OrtEpDevice* ep_device, OrtDeviceMemoryType mem_type, OrtAllocatorType allocator_type, const OrtKeyValuePairs* allocator_options, OrtAllocator** allocator);
OrtStatus* (*GetSharedAllocator)(OrtEnv* env, const OrtMemoryInfo* mem_info, OrtAllocator** allocator);
OrtStatus* (*ReleaseSharedAllocator)(OrtEnv* env, const OrtEpDevice* ep_device, OrtDeviceMemoryType mem_type);
OrtStatus* (*GetTensorData)(const OrtValue* value, const void** out);
OrtStatus* (*GetSessionOptionsConfigEntries)(const OrtSessionOptions* options, OrtKeyValuePairs** out);
OrtStatus* (*SessionGetMemoryInfoForInputs)(const OrtSession* session, const OrtMemoryInfo** inputs_memory_info, size_t num_inputs);
OrtStatus* (*SessionGetMemoryInfoForOutputs)(const OrtSession* session, const OrtMemoryInfo** outputs_memory_info, size_t num_outputs);
OrtStatus* (*SessionGetEpDeviceForInputs)(const OrtSession* session, const OrtEpDevice** inputs_ep_devices, size_t num_inputs);
OrtStatus* (*CreateSyncStreamForEpDevice)(const OrtEpDevice* ep_device, const OrtKeyValuePairs* stream_options, OrtSyncStream** stream);
void* (*SyncStream_GetHandle)(OrtSyncStream* stream);
void (*ReleaseSyncStream)(OrtSyncStream* input);
OrtStatus* (*CopyTensors)(const OrtEnv* env, const OrtValue* const* src_tensors, OrtValue* const* dst_tensors, OrtSyncStream* stream, size_t num_tensors);
OrtStatus* (*Graph_GetModelMetadata)(const OrtGraph* graph, OrtModelMetadata** out);
OrtStatus* (*GetModelCompatibilityForEpDevices)(const OrtEpDevice* const* ep_devices, size_t num_ep_devices, const char* compatibility_info, OrtCompiledModelCompatibility* out_status);
OrtStatus* (*CreateExternalInitializerInfo)(const char* filepath, int64_t file_offset, size_t byte_size, OrtExternalInitializerInfo** out);
/* @api 24 */
bool (*TensorTypeAndShape_HasShape)(const OrtTensorTypeAndShapeInfo* info);
OrtStatus* (*KernelInfo_GetConfigEntries)(const OrtKernelInfo* info, OrtKeyValuePairs** out);
OrtStatus* (*KernelInfo_GetOperatorDomain)(const OrtKernelInfo* info, char* out, size_t* size);
OrtStatus* (*KernelInfo_GetOperatorType)(const OrtKernelInfo* info, char* out, size_t* size);
OrtStatus* (*KernelInfo_GetOperatorSinceVersion)(const OrtKernelInfo* info, int* since_version);
const OrtInteropApi* (*GetInteropApi)(void);
OrtStatus* (*SessionGetEpDeviceForOutputs)(const OrtSession* session, const OrtEpDevice** outputs_ep_devices, size_t num_outputs);
OrtStatus* (*GetNumHardwareDevices)(const OrtEnv* env, size_t* num_devices);
OrtStatus* (*GetHardwareDevices)(const OrtEnv* env, const OrtHardwareDevice** devices, size_t num_devices);
OrtStatus* (*GetHardwareDeviceEpIncompatibilityDetails)(const OrtEnv* env, const char* ep_name, const OrtHardwareDevice* hw, OrtDeviceEpIncompatibilityDetails** details);
OrtStatus* (*DeviceEpIncompatibilityDetails_GetReasonsBitmask)(const OrtDeviceEpIncompatibilityDetails* details, uint32_t* reasons_bitmask);
OrtStatus* (*DeviceEpIncompatibilityDetails_GetNotes)(const OrtDeviceEpIncompatibilityDetails* details, const char** notes);
OrtStatus* (*DeviceEpIncompatibilityDetails_GetErrorCode)(const OrtDeviceEpIncompatibilityDetails* details, int32_t* error_code);
void (*ReleaseDeviceEpIncompatibilityDetails)(OrtDeviceEpIncompatibilityDetails* input);
OrtStatus* (*GetCompatibilityInfoFromModel)(const char* model_path, const char* ep_type, OrtAllocator* allocator, char** compatibility_info);
OrtStatus* (*GetCompatibilityInfoFromModelBytes)(const void* model_data, size_t model_data_length, const char* ep_type, OrtAllocator* allocator, char** compatibility_info);
OrtStatus* (*CreateEnvWithOptions)(const OrtEnvCreationOptions* options, OrtEnv** out);
OrtStatus* (*Session_GetEpGraphAssignmentInfo)(const OrtSession* session, const OrtEpAssignedSubgraph* const** ep_subgraphs, size_t* num_ep_subgraphs);
OrtStatus* (*EpAssignedSubgraph_GetEpName)(const OrtEpAssignedSubgraph* ep_subgraph, const char** out);
OrtStatus* (*EpAssignedSubgraph_GetNodes)(const OrtEpAssignedSubgraph* ep_subgraph, const OrtEpAssignedNode* const** ep_nodes, size_t* num_ep_nodes);
OrtStatus* (*EpAssignedNode_GetName)(const OrtEpAssignedNode* ep_node, const char** out);
OrtStatus* (*EpAssignedNode_GetDomain)(const OrtEpAssignedNode* ep_node, const char** out);
OrtStatus* (*EpAssignedNode_GetOperatorType)(const OrtEpAssignedNode* ep_node, const char** out);
void (*RunOptionsSetSyncStream)(OrtRunOptions* options, OrtSyncStream* sync_stream);
OrtStatus* (*GetTensorElementTypeAndShapeDataReference)(const OrtValue* value, ONNXTensorElementDataType* elem_type, const int64_t** shape_data, size_t* shape_data_count);
/* @api 25 */
OrtStatus* (*RunOptionsEnableProfiling)(OrtRunOptions* options, const char* profile_file_prefix);
OrtStatus* (*RunOptionsDisableProfiling)(OrtRunOptions* options);
OrtStatus* (*KernelInfoGetAttributeArray_string)(const OrtKernelInfo* info, const char* name, OrtAllocator* allocator, char*** out, size_t* size);
OrtStatus* (*SetPerSessionThreadPoolCallbacks)(OrtEnv* env, const OrtThreadPoolCallbacksConfig* config);
/* @api 27 */
OrtStatus* (*GetMemPatternEnabled)(const OrtSessionOptions* options, int* out);
OrtStatus* (*GetSessionExecutionMode)(const OrtSessionOptions* options, ExecutionMode* out);
OrtStatus* (*SessionReleaseCapturedGraph)(OrtSession* session, int graph_annotation_id);
/* @api 28 */
OrtExperimentalFnPtr (*GetExperimentalFunction)(const char* name);
OrtStatus* (*KernelContext_GetSyncStream)(const OrtKernelContext* context, OrtSyncStream** out);
/* @api 29 */
OrtStatus* (*SessionOptionsSetWeightlessSourceModelBuffer)(OrtSessionOptions* options, const void* source_model_data, size_t source_model_data_length);
/* @api 30 */
OrtStatus* (*KernelContext_GetPreallocatedOutput)(const OrtKernelContext* context, size_t output_index, OrtValue** output);
/* @api 31 */
/* added in API 31: a NULL read_fn clears the callback and its state */
OrtStatus* (*SessionOptionsSetEpContextDataReadFunc)(OrtSessionOptions* options, OrtReadNamedBufferFunc read_fn, void* state);
/* added in API 31: the model-package function table (no arguments) */
const OrtModelPackageApi* (*GetModelPackageApi)(void);
/* @api 32 */
/* added in API 32: a memory capacity of an EP device; at least one output must be non-NULL. */
/* Which output is the total and which the available capacity is not settled by a public */
/* header or doc yet, so both outputs are named neutrally. */
OrtStatus* (*EpDevice_GetMemoryCapacity)(const OrtEpDevice* ep_device, OrtDeviceMemoryType memory_type, size_t* capacity_a, size_t* capacity_b);
};

const OrtApiBase* OrtGetApiBase(void);

#endif /* ORTC_API_H */
