"""The public names of torch 2.13 that chaingrad lacks, so that asking for one raises
"chaingrad has no 'fft' yet" or "chaingrad.Tensor has no 'cummax' yet", while any
other missing name (a typo) raises Python's usual AttributeError.

Listed from ``dir(torch)`` and ``dir(torch.Tensor)`` (public names only) less what chaingrad
had when they were taken; a name chaingrad gains later is simply found before these lists
are asked.
"""

import importlib
from collections.abc import Callable
from types import ModuleType

from .errors import TorchNameError

TORCH = frozenset("""
    abs_ absolute AcceleratorError acos acos_ acosh acosh_ adaptive_avg_pool1d
    adaptive_max_pool1d addbmm addcdiv addcmul addmm addmv addmv_ addr adjoint
    affine_grid_generator AggregationType alias_copy AliasDb alpha_dropout alpha_dropout_
    aminmax angle AnyType ao arccos arccos_ arccosh arccosh_ arcsin arcsin_ arcsinh
    arcsinh_ arctan arctan2 arctan_ arctanh arctanh_ are_deterministic_algorithms_enabled
    Argument ArgumentSpec argwhere as_strided as_strided_ as_strided_copy
    as_strided_scatter asarray asin asin_ asinh asinh_ atan atan2 atan_ atanh atanh_
    atleast_1d atleast_2d atleast_3d autocast_decrement_nesting
    autocast_increment_nesting AVG avg_pool1d AwaitType baddbmm bartlett_window
    batch_norm batch_norm_backward_elemt batch_norm_backward_reduce batch_norm_elemt
    batch_norm_gather_stats batch_norm_gather_stats_with_counts batch_norm_stats
    batch_norm_update_stats BenchmarkConfig BenchmarkExecutionStats bernoulli
    BFloat16Storage BFloat16Tensor bilinear binary_cross_entropy_with_logits
    binomial bit bits16 bits1x8 bits2x4 bits4x2 bits8 bitwise_and bitwise_left_shift
    bitwise_not bitwise_or bitwise_right_shift bitwise_xor blackman_window Block block_diag
    BoolStorage BoolType broadcast_shapes broadcast_tensors broadcast_to
    bucketize BufferDict ByteStorage CallStack can_cast Capsule cartesian_prod
    ccol_indices_copy cdist cdouble ceil ceil_ celu celu_ cfloat chain_matmul chalf
    channel_shuffle channels_last channels_last_3d CharStorage cholesky
    cholesky_inverse cholesky_solve choose_qparams_optimized clamp_ clamp_max
    clamp_max_ clamp_min clamp_min_ classes classproperty ClassType clear_autocast_cache
    clip_ clone Code col_indices_copy column_stack combinations CompilationUnit
    compiled_with_cxx11_abi CompleteArgumentSpec complex complex128 complex32 complex64
    ComplexDoubleStorage ComplexFloatStorage ComplexType ConcreteModuleType
    ConcreteModuleTypeBuilder cond conj conj_physical conj_physical_ constant_pad_nd
    contiguous_format contrib conv1d conv2d conv3d conv_tbc conv_transpose1d
    conv_transpose2d conv_transpose3d convolution copysign corrcoef cos_ cosh cosh_
    cosine_embedding_loss cosine_similarity count_nonzero cov cpp cpu cross
    crow_indices_copy ctc_loss ctypes cudnn_affine_grid_generator cudnn_batch_norm
    cudnn_convolution cudnn_convolution_add_relu cudnn_convolution_relu
    cudnn_convolution_transpose cudnn_grid_sampler cudnn_is_acceptable cummax cummin cumprod
    cumulative_trapezoid DeepCopyMemoTable default_generator deg2rad deg2rad_
    dequantize DeserializationStorageContext det detach detach_ detach_copy DeviceObjType
    diag diag_embed diagflat diagonal diagonal_copy diagonal_scatter DictType diff digamma
    DisableTorchFunction DisableTorchFunctionSubclass DispatchKey DispatchKeySet dist
     distributions divide DoubleStorage dropout dropout_ dsmm dsplit
    dstack e eig embedding embedding_bag embedding_renorm_ empty_permuted
    empty_quantized empty_strided EnumType eq erf_ erfc erfc_ erfinv ErrorReport Event
    ExcludeDispatchKeyGuard ExecutionPlan exp2 exp2_ exp_ expand_copy expm1_ export
    fake_quantize_per_channel_affine fake_quantize_per_tensor_affine FatalError
    fbgemm_linear_fp16_weight fbgemm_linear_fp16_weight_fp32_activation
    fbgemm_linear_int8_weight fbgemm_linear_int8_weight_fp32_activation
    fbgemm_linear_quantize_weight fbgemm_pack_gemm_matrix_fp16 fbgemm_pack_quantized_matrix
    feature_alpha_dropout feature_alpha_dropout_ feature_dropout feature_dropout_ fft
    FileCheck fill fill_ finfo fix fix_ fliplr flipud float4_e2m1fn_x2 float8_e4m3fn
    float8_e4m3fnuz float8_e5m2 float8_e5m2fnuz float8_e8m0fnu float_power FloatStorage
    FloatType floor floor_ floor_divide fmax fmin fmod fork frac frac_ frexp
    frobenius_norm from_dlpack from_file frombuffer func functional FunctionSchema functools
    fused_moving_avg_obs_fake_quant Future futures FutureType fx gcd gcd_ ge
    Generator geqrf ger get_autocast_cpu_dtype get_autocast_gpu_dtype
    get_autocast_ipu_dtype get_autocast_xla_dtype get_deterministic_debug_mode get_device
    get_device_module get_file_path get_num_interop_threads
    get_num_threads glob Gradient gradient Graph GraphExecutorState greater
    greater_equal grid_sampler grid_sampler_2d grid_sampler_3d group_norm gru gru_cell gt
    HalfStorage hamming_window hann_window hardshrink has_lapack has_mkl
    has_openmp has_spectral hash_tensor heaviside hinge_embedding_loss
    histogramdd hsmm hsplit hspmm hstack hub hypot i0 i0_ igamma igammac iinfo imag
    import_ir_module import_ir_module_from_buffer index_add index_copy index_fill index_put
    index_put_ index_reduce index_select indices_copy inf InferredType
    init_num_threads initial_seed inner inspect instance_norm int1 int2 int3 int4 int5 int6
    int7 int_repr InterfaceType IntStorage IntType inverse IODescriptor
    is_anomaly_check_nan_enabled is_anomaly_enabled is_autocast_cache_enabled
    is_autocast_cpu_enabled is_autocast_ipu_enabled
    is_autocast_xla_enabled is_complex is_conj is_deterministic_algorithms_warn_only_enabled
    is_distributed is_inference is_neg is_nonzero is_same_size
    is_signed is_storage is_vulkan_available is_warn_always_enabled isclose isfinite isin
    isinf isnan isneginf isposinf isreal istft jagged jit JITException kaiser_window kl_div
    kron kthvalue layer_norm layout lcm lcm_ ldexp ldexp_ le legacy_contiguous_format lerp
    less less_equal lgamma library ListType LiteScriptModule lobpcg LockingLogger
    log10_ log1p_ log2_ log_ logaddexp logaddexp2 logcumsumexp logdet
    LoggerBase logical_and logical_not logical_or logical_xor logit logit_ logspace
    LongStorage lstm lstm_cell lstsq lt lu lu_solve lu_unpack
    margin_ranking_loss masked masked_scatter masked_select math matrix_exp
    matrix_power matrix_rank max_pool1d max_pool1d_with_indices max_pool2d max_pool3d median
    memory_format merge_type_from_type_comment meshgrid miopen_batch_norm miopen_convolution
    miopen_convolution_add_relu miopen_convolution_relu miopen_convolution_transpose
    miopen_ctc_loss miopen_depthwise_convolution miopen_rnn mkldnn_adaptive_avg_pool2d
    mkldnn_convolution mkldnn_linear_backward_weights mkldnn_max_pool2d mkldnn_max_pool3d
    mkldnn_rnn_layer mode ModuleDict monitor moveaxis movedim mps msort mtia multinomial
    multiply multiprocessing mv mvlgamma nan nan_to_num nan_to_num_ nanmean nanmedian
    nanquantile nansum narrow_copy native_batch_norm native_channel_shuffle
    native_dropout native_group_norm native_layer_norm native_norm nativert ne neg_ negative
    negative_ nested newaxis nextafter Node NoneType nonzero_static NoopLogger
    norm_except_dim normal not_equal nuclear_norm numa NumberType OperatorInfo ops
    OptionalType orgqr ormqr os outer OutOfMemoryError overrides package pairwise_distance
    ParameterDict parse_ir parse_schema parse_type_comment pca_lowrank pdist
    per_channel_affine per_channel_affine_float_qparams per_channel_symmetric
    per_tensor_affine per_tensor_symmetric permute_copy pi pinverse pixel_shuffle
    pixel_unshuffle platform poisson poisson_nll_loss polar polygamma positive prelu
    prepare_multiprocessing_environment preserve_format PRIVATE_OPS prod profiler
    profiler_allow_cudagraph_cupti_lazy_reinit_cuda12 promote_types put PyObjectType
    PyTorchFileReader PyTorchFileWriter q_per_channel_axis q_per_channel_scales
    q_per_channel_zero_points q_scale q_zero_point qint32 QInt32Storage qint8 QInt8Storage
    qr qscheme quantile quantization quantize_per_channel quantize_per_tensor
    quantize_per_tensor_dynamic quantized_batch_norm quantized_gru quantized_gru_cell
    quantized_lstm quantized_lstm_cell quantized_max_pool1d quantized_max_pool2d
    quantized_max_pool3d quantized_rnn_relu_cell quantized_rnn_tanh_cell quasirandom
    quint2x4 QUInt2x4Storage quint4x2 QUInt4x2Storage quint8 QUInt8Storage rad2deg rad2deg_
    randint_like random range ravel real reciprocal reciprocal_ relu_ remainder renorm
    repeat_interleave resize_as_ resize_as_sparse_ resolve_conj resolve_neg result_type
    return_types rms_norm rnn_relu rnn_relu_cell rnn_tanh rnn_tanh_cell rot90 round
    round_ row_indices_copy row_stack RRefType rrelu rrelu_ rsqrt rsqrt_ rsub saddmm
    scalar_tensor scatter scatter_reduce ScriptClass ScriptClassFunction
    ScriptDict ScriptDictIterator ScriptDictKeyIterator ScriptFunction ScriptList
    ScriptListIterator ScriptMethod ScriptModule ScriptModuleSerializer ScriptObject
    ScriptObjectProperty searchsorted segment_reduce select select_copy select_scatter selu
    selu_ SerializationStorageContext set_anomaly_enabled set_autocast_cache_enabled
    set_autocast_cpu_dtype set_autocast_cpu_enabled set_autocast_dtype set_autocast_enabled
    set_autocast_gpu_dtype set_autocast_ipu_dtype set_autocast_ipu_enabled
    set_autocast_xla_dtype set_autocast_xla_enabled set_default_tensor_type
    set_deterministic_debug_mode set_flush_denormal
    set_num_interop_threads set_num_threads set_warn_always sgn
    ShortStorage sigmoid_ sign signal signbit sin_ sinc sinc_ sinh sinh_
    slice_copy slice_inverse slice_scatter slogdet smm solve sparse sparse_bsc
    sparse_bsc_tensor sparse_bsr sparse_bsr_tensor sparse_compressed_tensor sparse_coo
    sparse_coo_tensor sparse_csc sparse_csc_tensor sparse_csr sparse_csr_tensor special
    split_copy split_with_sizes split_with_sizes_copy spmm sqrt_ square_ squeeze_copy
    sspaddmm StaticModule std std_mean stft Storage storage StorageBase Stream StreamObjType
    strided StringType subtract SUM svd svd_lowrank swapaxes swapdims sym_constrain_range
    sym_constrain_range_for_size sym_float sym_fresh_size sym_int sym_ite sym_max sym_min
    sym_not sym_sqrt sym_sum SymBool SymBoolType symeig SymFloat SymInt SymIntType sys
    t_copy Tag take take_along_dim tan tan_ tanh_ tensor_split tensordot TensorType
    textwrap thread_safe_generator threading threshold threshold_ ThroughputBenchmark tile
    to_dlpack torch torch_version trace TracingState transpose_copy trapezoid trapz
    triangular_solve tril_indices triplet_margin_loss triu_indices true_divide
    trunc trunc_ TupleType Type TYPE_CHECKING TypedStorage typename types uint1 uint16 uint2
    uint3 uint32 uint4 uint5 uint6 uint64 uint7 unbind_copy unflatten unfold_copy
    unify_type_list UnionType unique_consecutive unravel_index unsafe_chunk
    unsafe_split unsafe_split_with_sizes unsqueeze_copy UntypedStorage Use
    use_deterministic_algorithms USE_GLOBAL_DEPS USE_RTLD_GLOBAL_WITH_LIBTORCH
    values_copy vander var var_mean vdot version view_as_complex view_as_complex_copy
    view_as_real view_as_real_copy view_copy vmap vsplit vstack wait warnings while_loop
    windows xlogy xlogy_ xpu zero_
    importlib
""".split())  # noqa: SIM905 - a list to read
"""``torch.<name>``s that ``chaingrad`` lacks."""

TENSOR = frozenset("""
    H abs_ absolute absolute_ acos acos_ acosh acosh_ addbmm addbmm_ addcdiv addcdiv_
    addcmul addcmul_ addmm addmm_ addmv addmv_ addr addr_ adjoint aminmax angle apply_
    arccos arccos_ arccosh arccosh_ arcsin arcsin_ arcsinh arcsinh_ arctan arctan2 arctan2_
    arctan_ arctanh arctanh_ argwhere as_strided as_strided_ as_strided_scatter
    as_subclass asin asin_ asinh asinh_ atan atan2 atan2_ atan_ atanh atanh_ baddbmm
    baddbmm_ bernoulli bernoulli_ bitwise_and bitwise_and_
    bitwise_left_shift bitwise_left_shift_ bitwise_not bitwise_not_ bitwise_or bitwise_or_
    bitwise_right_shift bitwise_right_shift_ bitwise_xor bitwise_xor_ byte cauchy_
    ccol_indices cdouble ceil ceil_ cfloat chalf char cholesky cholesky_inverse
    cholesky_solve clamp_max clamp_max_ clamp_min clamp_min_ clip_ coalesce
    col_indices conj conj_physical conj_physical_ const_data_ptr copysign copysign_ corrcoef
    cos_ cosh cosh_ count_nonzero cov cross crow_indices cummax cummin cumprod cumprod_
    cumsum_ data_ptr deg2rad deg2rad_ dense_dim dequantize det diag diag_embed
    diagflat diagonal diagonal_scatter diff digamma digamma_ dim_order dist divide divide_
    dsplit eig eq_ erf_ erfc erfc_ erfinv erfinv_ exp2 exp2_ exp_ expm1_
    exponential_ fill_diagonal_ fix fix_ fliplr flipud float_power float_power_ floor
    floor_ floor_divide floor_divide_ fmax fmin fmod fmod_ frac frac_ frexp gcd gcd_
    ge_ geometric_ geqrf ger get_device grad_dtype greater greater_ greater_equal
    greater_equal_ gt_ hardshrink hash_tensor heaviside heaviside_ hsplit
    hypot hypot_ i0 i0_ igamma igamma_ igammac igammac_ imag index index_add index_add_
    index_copy index_copy_ index_fill index_fill_ index_put index_put_ index_reduce
    index_reduce_ index_select indices inner int_repr inverse ipu is_coalesced is_complex
    is_conj is_contiguous is_cpu is_distributed is_inference is_ipu is_maia is_meta
    is_mkldnn is_mps is_mtia is_neg is_nested is_nonzero is_pinned is_quantized is_same_size
    is_set_to is_shared is_signed is_sparse is_sparse_csr is_vulkan is_xla is_xpu isclose
    isfinite isinf isnan isneginf isposinf isreal istft itemsize kron kthvalue layout lcm
    lcm_ ldexp ldexp_ le_ lerp lerp_ less less_ less_equal less_equal_ lgamma lgamma_
    log10_ log1p_ log2_ log_ log_normal_ logaddexp logaddexp2 logcumsumexp logdet
    logical_and logical_and_ logical_not logical_not_ logical_or logical_or_ logical_xor
    logical_xor_ logit logit_ lstsq lt_ lu lu_solve mH map2_ map_
    masked_scatter masked_scatter_ masked_select matrix_exp matrix_power median
    mode module_load moveaxis movedim msort mtia multiply multiply_ mv mvlgamma
    mvlgamma_ name nan_to_num nan_to_num_ nanmean nanmedian nanquantile nansum
    narrow_copy nbytes ne_ neg_ negative negative_ new new_empty_strided nextafter
    nextafter_ nonzero_static not_equal not_equal_ orgqr ormqr outer output_nr
    pin_memory pinverse polygamma polygamma_ positive prelu prod put put_ q_per_channel_axis
    q_per_channel_scales q_per_channel_zero_points q_scale q_zero_point qr qscheme quantile
    rad2deg rad2deg_ random_ real reciprocal reciprocal_ record_stream register_hook
    register_post_accumulate_grad_hook reinforce relu_ remainder remainder_ renorm renorm_
    repeat_interleave resize resize_ resize_as resize_as_ resize_as_sparse_
    resolve_conj resolve_neg retains_grad rot90 round round_ row_indices rsqrt rsqrt_
    scatter scatter_ scatter_add_ scatter_reduce scatter_reduce_ select
    select_scatter set_ sgn sgn_ share_memory_ short sigmoid_ sign sign_ signbit sin_ sinc
    sinc_ sinh sinh_ slice_inverse slice_scatter slogdet smm solve sparse_dim
    sparse_mask sparse_resize_ sparse_resize_and_clear_ split_with_sizes sqrt_ square_
    squeeze_ sspaddmm std stft storage storage_offset storage_type stride subtract subtract_
    sum_to_size svd swapaxes swapaxes_ swapdims swapdims_ symeig t_ take take_along_dim tan
    tan_ tanh_ tensor_split tile to_dense to_mkldnn to_padded_tensor to_sparse to_sparse_bsc
    to_sparse_bsr to_sparse_coo to_sparse_csc to_sparse_csr trace transpose_
    triangular_solve tril_ triu_ true_divide true_divide_ trunc trunc_
    unfold unique_consecutive unsafe_chunk unsafe_split unsafe_split_with_sizes
    unsqueeze_ untyped_storage values var vdot volatile vsplit xlogy xlogy_ xpu
""".split())  # noqa: SIM905 - a list to read
"""``torch.Tensor.<name>``s that ``chaingrad.Tensor`` lacks."""


NN = frozenset("""
    AdaptiveAvgPool1d AdaptiveAvgPool3d AdaptiveLogSoftmaxWithLoss AdaptiveMaxPool1d
    AdaptiveMaxPool2d AdaptiveMaxPool3d AlphaDropout attention AvgPool1d AvgPool3d
    backends BatchNorm3d BCELoss Bilinear Buffer CELU ChannelShuffle CircularPad1d
    CircularPad2d CircularPad3d common_types ConstantPad1d ConstantPad2d ConstantPad3d
    Container Conv3d ConvTranspose1d ConvTranspose2d ConvTranspose3d CosineEmbeddingLoss
    CosineSimilarity cpp CrossMapLRN2d CTCLoss Dropout1d Dropout2d Dropout3d ELU
    EmbeddingBag factory_kwargs FeatureAlphaDropout Fold FractionalMaxPool2d
    FractionalMaxPool3d GaussianNLLLoss GLU grad GroupNorm Hardshrink
    Hardsigmoid Hardswish Hardtanh HingeEmbeddingLoss InstanceNorm1d InstanceNorm2d
    InstanceNorm3d intrinsic KLDivLoss LazyBatchNorm1d LazyBatchNorm2d LazyBatchNorm3d
    LazyConv1d LazyConv2d LazyConv3d LazyConvTranspose1d LazyConvTranspose2d
    LazyConvTranspose3d LazyInstanceNorm1d LazyInstanceNorm2d LazyInstanceNorm3d
    LazyLinear LinearCrossEntropyLoss LinearCrossEntropyOptions LocalResponseNorm
    LogSigmoid LPPool1d LPPool2d LPPool3d MarginRankingLoss MaxPool1d MaxPool3d
    MaxUnpool1d MaxUnpool2d MaxUnpool3d Mish
    MultiLabelMarginLoss MultiLabelSoftMarginLoss MultiMarginLoss NLLLoss2d
    PairwiseDistance PixelShuffle PixelUnshuffle PoissonNLLLoss PReLU qat quantizable
    quantized ReflectionPad1d ReflectionPad2d ReflectionPad3d ReLU6 ReplicationPad1d
    ReplicationPad2d ReplicationPad3d RMSNorm RReLU SELU
    SiLU SoftMarginLoss Softmax2d Softmin Softshrink Softsign SyncBatchNorm Tanhshrink
    Threshold TripletMarginLoss TripletMarginWithDistanceLoss Unflatten
    Unfold UninitializedBuffer UninitializedParameter Upsample UpsamplingBilinear2d
    UpsamplingNearest2d ZeroPad1d ZeroPad2d ZeroPad3d
""".split())  # noqa: SIM905 - a list to read
"""``torch.nn.<name>``s that ``chaingrad.nn`` lacks."""

FUNCTIONAL = frozenset("""
    adaptive_avg_pool1d adaptive_avg_pool3d adaptive_max_pool1d
    adaptive_max_pool1d_with_indices adaptive_max_pool2d adaptive_max_pool2d_with_indices
    adaptive_max_pool3d adaptive_max_pool3d_with_indices affine_grid alpha_dropout
    assert_int_or_pair avg_pool1d avg_pool3d bilinear
    boolean_dispatch celu celu_ channel_shuffle conv3d conv_tbc
    conv_transpose1d conv_transpose2d conv_transpose3d cosine_embedding_loss
    cosine_similarity ctc_loss dropout1d dropout2d dropout3d elu elu_
    embedding_bag feature_alpha_dropout fold fractional_max_pool2d
    fractional_max_pool2d_with_indices fractional_max_pool3d
    fractional_max_pool3d_with_indices gaussian_nll_loss glu grid_sample group_norm
    grouped_mm gumbel_softmax handle_torch_function hardshrink hardsigmoid hardswish
    hardtanh hardtanh_ has_torch_function has_torch_function_unary
    has_torch_function_variadic hinge_embedding_loss instance_norm
    kl_div leaky_relu_ linear_cross_entropy
    local_response_norm log_sigmoid logsigmoid lp_pool1d lp_pool2d lp_pool3d
    margin_ranking_loss max_pool1d max_pool1d_with_indices max_pool2d_with_indices
    max_pool3d max_pool3d_with_indices max_unpool1d max_unpool2d max_unpool3d mish
    multi_head_attention_forward multi_margin_loss multilabel_margin_loss
    multilabel_soft_margin_loss native_channel_shuffle normalize
    pairwise_distance pdist pixel_shuffle pixel_unshuffle poisson_nll_loss prelu relu6 relu_
    rms_norm rrelu rrelu_ scaled_grouped_mm scaled_mm
    ScalingType selu selu_ silu soft_margin_loss softmin softshrink
    softsign SwizzleType tanhshrink threshold threshold_ triplet_margin_loss
    triplet_margin_with_distance_loss unfold upsample upsample_bilinear upsample_nearest
    BroadcastingList1 BroadcastingList2 BroadcastingList3 Callable DType
    GRID_SAMPLE_INTERPOLATION_MODES GRID_SAMPLE_PADDING_MODES Optional dataclasses grad
    importlib math reproducibility_notes sparse_support_notes tf32_notes torch
""".split())  # noqa: SIM905 - a list to read
"""``torch.nn.functional.<name>``s that ``chaingrad.nn.functional`` lacks."""

AUTOGRAD = frozenset("""
    anomaly_mode backward cast DeviceType enforce_grad_layout_policy forward_ad function
    grad_mode graph handle_torch_function has_torch_function
    is_multithreading_enabled is_tensor_like is_view_replay_enabled kineto_available Mapping
    NestedIOFunction overload profiler profiler_legacy profiler_util ProfilerActivity
    ProfilerConfig ProfilerEvent ProfilerState SavedTensor set_multithreading_enabled torch
    Variable variable warnings
""".split())  # noqa: SIM905 - a list to read
"""``torch.autograd.<name>``s that ``chaingrad.autograd`` lacks."""

INIT = frozenset("""
    constant dirac dirac_ eye eye_ kaiming_normal kaiming_uniform normal orthogonal
    orthogonal_ sparse sparse_ trunc_normal_ uniform xavier_normal xavier_uniform
""".split())  # noqa: SIM905 - a list to read
"""``torch.nn.init.<name>``s that ``chaingrad.nn.init`` lacks."""

OPTIM = frozenset("""
    Adafactor adamax Adamax asgd ASGD Muon nadam NAdam radam RAdam Rprop rprop
    sparse_adam SparseAdam swa_utils swap_in_optimizer_params_and_state
""".split())  # noqa: SIM905 - a list to read
"""``torch.optim.<name>``s that ``chaingrad.optim`` lacks."""


LR_SCHEDULER = frozenset("""
    ChainedScheduler ConstantLR CosineAnnealingWarmRestarts CyclicLR MultiplicativeLR
    PolynomialLR SequentialLR Tensor
""".split())  # noqa: SIM905 - a list to read
"""``torch.optim.lr_scheduler.<name>``s that ``chaingrad.optim.lr_scheduler`` lacks."""


NN_UTILS = frozenset("""
    clip_grad_norm convert_conv2d_weight_memory_format
    convert_conv3d_weight_memory_format convert_parameters fuse_conv_bn_eval
    fuse_conv_bn_weights fuse_linear_bn_eval fuse_linear_bn_weights fusion init
    memory_format parameters_to_vector parametrizations parametrize prune
    remove_spectral_norm remove_weight_norm skip_init spectral_norm stateless
    vector_to_parameters weight_norm
""".split())  # noqa: SIM905 - a list to read
"""``torch.nn.utils.<name>``s that ``chaingrad.nn.utils`` lacks."""


UTILS = frozenset("""
    backcompat backend_registration benchmark bundled_inputs checkpoint collect_env
    cpp_backtrace cpp_extension debug_log deterministic dlpack file_baton flop_counter
    generate_methods_for_privateuse1_backend get_cpp_backtrace hipify jit mkldnn
    mobile_optimizer model_dump model_zoo module_tracker rename_privateuse1_backend
    serialization set_module show_pickle swap_tensors throughput_benchmark
    ThroughputBenchmark viz weak
""".split())  # noqa: SIM905 - a list to read
"""``torch.utils.<name>``s that ``chaingrad.utils`` lacks."""

DATA = frozenset("""
    argument_validation backward_compatibility DataChunk datapipes DFIterDataPipe
    distributed DistributedSampler functional_datapipe graph graph_settings
    guaranteed_datapipes_determinism IterDataPipe MapDataPipe non_deterministic
    runtime_validation runtime_validation_disabled StackDataset
""".split())  # noqa: SIM905 - a list to read
"""``torch.utils.data.<name>``s that ``chaingrad.utils.data`` lacks."""

TENSORBOARD = frozenset("""
    FileWriter summary writer
""".split())  # noqa: SIM905 - a list to read
"""``torch.utils.tensorboard.<name>``s that ``chaingrad.utils.tensorboard`` lacks."""

SUMMARY_WRITER = frozenset("""
    add_audio add_custom_scalars add_custom_scalars_marginchart
    add_custom_scalars_multilinechart add_embedding add_figure add_graph add_hparams add_image
    add_image_with_boxes add_images add_mesh add_onnx_graph add_pr_curve add_pr_curve_raw
    add_tensor add_video
""".split())  # noqa: SIM905 - a list to read
"""``torch.utils.tensorboard.SummaryWriter`` methods that chaingrad's lacks."""


# ---- one process on one CPU: what torch's CPU build has beside chaingrad's answers ----

CUDA = frozenset("""
    AcceleratorError BFloat16Storage BFloat16Tensor BoolStorage BoolTensor ByteStorage
    ByteTensor caching_allocator_alloc caching_allocator_delete caching_allocator_disabled
    caching_allocator_enable can_device_access_peer change_current_allocator CharStorage
    CharTensor check_error clock_rate comm ComplexDoubleStorage ComplexFloatStorage
    CudaError CUDAGraph CUDAPluggableAllocator cudart cudaStatus current_blas_handle
    current_solver_handle default_generators default_stream DeferredCudaCallError Device
    device device_memory_used device_of DEVICE_REQUIREMENT DoubleStorage DoubleTensor Event
    ExternalStream FloatStorage FloatTensor gds get_allocator_backend get_gencode_flags
    get_per_process_memory_fraction get_stream_from_external get_sync_debug_mode graph
    graph_pool_handle graphs green_contexts GreenContext HalfStorage HalfTensor has_half
    has_magma host_memory_stats host_memory_stats_as_nested_dict IntStorage IntTensor
    ipc_collect is_current_stream_capturing jiterator list_gpu_processes LongStorage
    LongTensor make_graphed_callables max_memory_cached memory memory_cached memory_snapshot
    memory_stats memory_stats_as_nested_dict memory_summary memory_usage MemPool nccl nvtx
    OutOfMemoryError power_draw profiler PYTORCH_RELEASES_CODE_CC
    reset_accumulated_host_memory_stats reset_accumulated_memory_stats
    reset_max_memory_allocated reset_max_memory_cached reset_peak_host_memory_stats
    set_per_process_memory_fraction set_stream set_sync_debug_mode ShortStorage ShortTensor
    sparse Stream stream StreamContext streams temperature tunable use_mem_pool utilization
""".split())  # noqa: SIM905 - a list to read
"""``torch.cuda.<name>``s that ``chaingrad.cuda`` lacks."""

ACCELERATOR = frozenset("""
    cache current_device_idx current_stream device_index empty_host_cache
    get_device_capability get_memory_info Graph graphs max_memory_reserved memory
    memory_reserved memory_stats reset_accumulated_memory_stats reset_peak_memory_stats
    set_device_idx set_stream
""".split())  # noqa: SIM905 - a list to read
"""``torch.accelerator.<name>``s that ``chaingrad.accelerator`` lacks."""

AMP = frozenset("""
    custom_bwd custom_fwd
""".split())  # noqa: SIM905 - a list to read
"""``torch.amp.<name>``s that ``chaingrad.amp`` lacks."""

ONNX = frozenset("""
    errors ExportableModule InputObserver JitScalarType OnnxExporterError ONNXProgram
    OperatorExportTypes operators ops producer_name producer_version
    register_custom_op_symbolic select_model_mode_for_export symbolic_helper
    symbolic_opset10 symbolic_opset11 symbolic_opset12 symbolic_opset13 symbolic_opset14
    symbolic_opset15 symbolic_opset16 symbolic_opset17 symbolic_opset18 symbolic_opset19
    symbolic_opset20 symbolic_opset7 symbolic_opset8 symbolic_opset9 TensorProtoDataType
    testing TrainingMode unregister_custom_op_symbolic utils verification
""".split())  # noqa: SIM905 - a list to read
"""``torch.onnx.<name>``s that ``chaingrad.onnx`` lacks."""

DISTRIBUTED = frozenset("""
    algorithms all_gather_coalesced all_gather_into_tensor all_gather_object
    all_gather_single all_reduce_coalesced all_to_all all_to_all_single
    AllreduceCoalescedOptions AllreduceOptions AllToAllOptions argparse_util autograd
    Backend BackendConfig BarrierOptions batch_isend_irecv breakpoint broadcast_object_list
    BroadcastOptions BuiltinCommHookType c10d_logger checkpoint collective_utils config
    constants debug DebugLevel default_pg_timeout device_mesh DeviceMesh DistBackendError
    DistError DistNetworkError distributed_c10d DistStoreError elastic FileStore
    flight_recorder fsdp gather gather_object GatherOptions get_backend_config
    get_debug_level get_default_backend_for_device get_global_rank get_group_rank
    get_node_local_rank get_pg_count get_process_group_ranks GradBucket group GroupMember
    GroupName HashStore init_device_mesh irecv is_backend_available is_gloo_available
    is_mpi_available is_nccl_available is_ucc_available is_xccl_available isend launch
    launcher log Logger logging_handlers monitored_barrier new_group new_subgroups
    new_subgroups_by_enumeration nn optim P2POp pipelining PrefixStore ProcessGroup
    ProcessGroupGloo QueueEmptyError RankType record_comm recv recv_object_list reduce
    reduce_op reduce_scatter reduce_scatter_single reduce_scatter_tensor ReduceOptions
    Reducer ReduceScatterOptions register_rendezvous_handler remote_device rendezvous rpc
    run scatter scatter_object_list ScatterOptions send send_object_list set_debug_level
    set_debug_level_from_env shrink_group split_group Store supports_complex TCPStore tensor
    utils Work
""".split())  # noqa: SIM905 - a list to read
"""``torch.distributed.<name>``s that ``chaingrad.distributed`` lacks."""

NN_PARALLEL = frozenset("""
    comm data_parallel DistributedDataParallelCPU gather parallel_apply replicate scatter
    scatter_gather
""".split())  # noqa: SIM905 - a list to read
"""``torch.nn.parallel.<name>``s that ``chaingrad.nn.parallel`` lacks."""

BACKENDS = frozenset("""
    cusparselt kleidiai m mha miopen mkl mkldnn nnpack openmp opt_einsum python_native
    quantized xeon xnnpack
""".split())  # noqa: SIM905 - a list to read
"""``torch.backends.<name>``s that ``chaingrad.backends`` lacks."""

BACKENDS_CUDA = frozenset("""
    allow_fp16_bf16_reduction_math_sdp blas_workspace_size can_use_cudnn_attention
    can_use_efficient_attention can_use_flash_attention cublas_workspace_size
    cublaslt_workspace_size cuBLASModule cufft_plan_cache cuFFTPlanCache
    cuFFTPlanCacheAttrContextProp cuFFTPlanCacheManager fp16_bf16_reduction_math_sdp_allowed
    is_ck_sdpa_available is_flash_attention_available preferred_blas_library
    preferred_linalg_library preferred_rocm_fa_library sdp_kernel SDPAParams SDPBackend
""".split())  # noqa: SIM905 - a list to read
"""``torch.backends.cuda.<name>``s that ``chaingrad.backends.cuda`` lacks."""


# ---- torch's arguments that chaingrad's functions of the same name do not take yet ----

KEYWORDS_NOT_YET: dict[str, str] = {}
"""Keywords that torch's builtin functions take and chaingrad's same-named functions do not,
yet, each with what to do instead (Python's own TypeError would name the keyword). None
remain: ``out=`` is taken wherever torch takes it (``factories.with_out``), and
``layout=``, ``memory_format=``, ``pin_memory=`` and ``sparse_grad=`` at their defaults (any
other value is refused by name). tests/test_torch_names.py finds every torch keyword that a
chaingrad function lacks and checks that it is one of these."""

LINALG = frozenset("""
    common_notes eig eigvals householder_product ldl_factor ldl_factor_ex ldl_solve
""".split())  # noqa: SIM905 - a list to read
"""``torch.linalg.<name>``s that ``chaingrad.linalg`` lacks."""

TESTING = frozenset("""
    FileCheck assert_allclose make_tensor
""".split())  # noqa: SIM905 - a list to read
"""``torch.testing.<name>``s that ``chaingrad.testing`` lacks."""

# ---- what to write instead, where chaingrad's ops compose it ----

INSTEAD: dict[str, tuple[str, str]] = {
    # torch's functions: "torch.<name>": (torch's call, chaingrad's composition)
    "torch.erfc": ("torch.erfc(x)", "1 - torch.erf(x)"),
    "torch.rsqrt": ("torch.rsqrt(x)", "x ** -0.5"),
    "torch.reciprocal": ("torch.reciprocal(x)", "1 / x"),
    "torch.exp2": ("torch.exp2(x)", "2 ** x"),
    "torch.sinh": ("torch.sinh(x)", "(torch.exp(x) - torch.exp(-x)) / 2"),
    "torch.cosh": ("torch.cosh(x)", "(torch.exp(x) + torch.exp(-x)) / 2"),
    "torch.tan": ("torch.tan(x)", "torch.sin(x) / torch.cos(x)"),
    "torch.sign": ("torch.sign(x)", "(x > 0).to(x.dtype) - (x < 0).to(x.dtype)"),
    "torch.logit": ("torch.logit(x)", "torch.log(x / (1 - x))"),
    "torch.xlogy": ("torch.xlogy(x, y)", "x * torch.log(y)"),
    "torch.hypot": ("torch.hypot(x, y)", "torch.sqrt(x ** 2 + y ** 2)"),
    "torch.logaddexp": ("torch.logaddexp(x, y)", "torch.logsumexp(torch.stack([x, y]), 0)"),
    "torch.lerp": ("torch.lerp(x, y, 0.3)", "x + 0.3 * (y - x)"),
    "torch.addcmul": ("torch.addcmul(x, y, y, value=0.5)", "x + 0.5 * y * y"),
    "torch.addmm": ("torch.addmm(k, x, m)", "k + x @ m"),
    "torch.mv": ("torch.mv(m, w)", "m @ w"),
    "torch.outer": ("torch.outer(v, w)", "v[:, None] * w[None, :]"),
    "torch.clamp_min": ("torch.clamp_min(x, 0.5)", "torch.clamp(x, min=0.5)"),
    "torch.clamp_max": ("torch.clamp_max(x, 0.5)", "torch.clamp(x, max=0.5)"),
    "torch.diff": ("torch.diff(x)", "x[..., 1:] - x[..., :-1]"),
    "torch.flip": ("torch.flip(x, [0])", "x[torch.arange(x.shape[0] - 1, -1, -1)]"),
    "torch.index_select": ("torch.index_select(x, 0, i)", "x[i]"),
    "torch.narrow": ("torch.narrow(x, 1, 1, 2)", "x[:, 1:1 + 2]"),
    "torch.select": ("torch.select(x, 1, 2)", "x[:, 2]"),
    "torch.take_along_dim": ("torch.take_along_dim(x, j, 1)", "torch.gather(x, 1, j)"),
    "torch.trace": ("torch.trace(x @ x.T)", "(x @ x.T * torch.eye(x.shape[0])).sum()"),
    "torch.count_nonzero": ("torch.count_nonzero(x > 0.5)", "(x > 0.5).sum()"),
    "torch.var_mean": ("torch.var_mean(x, 1)", "(x.var(1), x.mean(1))"),
    "torch.std_mean": ("torch.std_mean(x, 1)", "(x.std(1), x.mean(1))"),
    "torch.swapaxes": ("torch.swapaxes(x, 0, 1)", "torch.transpose(x, 0, 1)"),
    "torch.swapdims": ("torch.swapdims(x, 0, 1)", "torch.transpose(x, 0, 1)"),
    "torch.ravel": ("torch.ravel(x)", "x.reshape(-1)"),
    "torch.clone": ("torch.clone(x)", "x.clone()"),
    "torch.detach": ("torch.detach(x)", "x.detach()"),
    "torch.tile": ("torch.tile(x, (2, 1))", "x.repeat(2, 1)"),
    "torch.vstack": ("torch.vstack([x, y])", "torch.cat([x, y], 0)"),
    "torch.hstack": ("torch.hstack([x, y])", "torch.cat([x, y], 1)"),
    "torch.true_divide": ("torch.true_divide(x, y)", "x / y"),
    "torch.divide": ("torch.divide(x, y)", "x / y"),
    "torch.multiply": ("torch.multiply(x, y)", "x * y"),
    "torch.subtract": ("torch.subtract(x, y)", "x - y"),
    "torch.negative": ("torch.negative(x)", "-x"),
    "torch.positive": ("torch.positive(x)", "x"),
    "torch.eq": ("torch.eq(x, y)", "x == y"),
    "torch.ne": ("torch.ne(x, y)", "x != y"),
    "torch.gt": ("torch.gt(x, y)", "x > y"),
    "torch.ge": ("torch.ge(x, y)", "x >= y"),
    "torch.lt": ("torch.lt(x, y)", "x < y"),
    "torch.le": ("torch.le(x, y)", "x <= y"),
    "torch.greater": ("torch.greater(x, y)", "x > y"),
    "torch.less": ("torch.less(x, y)", "x < y"),
    "torch.logical_and": ("torch.logical_and(x > 0.5, y > 0.5)", "(x > 0.5) & (y > 0.5)"),
    "torch.logical_or": ("torch.logical_or(x > 0.5, y > 0.5)", "(x > 0.5) | (y > 0.5)"),
    "torch.logical_not": ("torch.logical_not(x > 0.5)", "~(x > 0.5)"),
    # torch.linalg's functions under their older names
    "torch.det": ("torch.det(x @ x.mT)", "torch.linalg.det(x @ x.mT)"),
    "torch.logdet": ("torch.logdet(x @ x.mT)", "torch.linalg.slogdet(x @ x.mT).logabsdet"),
    "torch.slogdet": ("torch.slogdet(x @ x.mT)", "torch.linalg.slogdet(x @ x.mT)"),
    "torch.inverse": ("torch.inverse(x @ x.mT)", "torch.linalg.inv(x @ x.mT)"),
    "torch.pinverse": ("torch.pinverse(x)", "torch.linalg.pinv(x)"),
    "torch.matrix_power": ("torch.matrix_power(x @ x.mT, 3)",
                           "torch.linalg.matrix_power(x @ x.mT, 3)"),
    "torch.qr": ("torch.qr(x @ x.mT)", "torch.linalg.qr(x @ x.mT)"),
    "torch.cross": ("torch.cross(x[:, :3], y[:, :3], dim=1)",
                    "torch.linalg.cross(x[:, :3], y[:, :3], dim=1)"),
    "torch.diagonal": ("torch.diagonal(x, 1)", "torch.linalg.diagonal(x, offset=1)"),
    "torch.nuclear_norm": ("torch.nuclear_norm(x)", "torch.linalg.matrix_norm(x, 'nuc')"),
    "torch.matrix_exp": ("torch.matrix_exp(x @ x.mT)", "torch.linalg.matrix_exp(x @ x.mT)"),
    # Tensor methods: "Tensor.<name>"
    "Tensor.erfc": ("x.erfc()", "1 - x.erf()"),
    "Tensor.rsqrt": ("x.rsqrt()", "x ** -0.5"),
    "Tensor.reciprocal": ("x.reciprocal()", "1 / x"),
    "Tensor.exp2": ("x.exp2()", "2 ** x"),
    "Tensor.sinh": ("x.sinh()", "(x.exp() - (-x).exp()) / 2"),
    "Tensor.cosh": ("x.cosh()", "(x.exp() + (-x).exp()) / 2"),
    "Tensor.tan": ("x.tan()", "x.sin() / x.cos()"),
    "Tensor.sign": ("x.sign()", "(x > 0).to(x.dtype) - (x < 0).to(x.dtype)"),
    "Tensor.logit": ("x.logit()", "(x / (1 - x)).log()"),
    "Tensor.lerp": ("x.lerp(y, 0.3)", "x + 0.3 * (y - x)"),
    "Tensor.addmm": ("k.addmm(x, m)", "k + x @ m"),
    "Tensor.mv": ("m.mv(w)", "m @ w"),
    "Tensor.outer": ("v.outer(w)", "v[:, None] * w[None, :]"),
    "Tensor.clamp_min": ("x.clamp_min(0.5)", "x.clamp(min=0.5)"),
    "Tensor.clamp_max": ("x.clamp_max(0.5)", "x.clamp(max=0.5)"),
    "Tensor.diff": ("x.diff()", "x[..., 1:] - x[..., :-1]"),
    "Tensor.flip": ("x.flip(0)", "x[torch.arange(x.shape[0] - 1, -1, -1)]"),
    "Tensor.index_select": ("x.index_select(0, i)", "x[i]"),
    "Tensor.narrow": ("x.narrow(1, 1, 2)", "x[:, 1:1 + 2]"),
    "Tensor.select": ("x.select(1, 2)", "x[:, 2]"),
    "Tensor.take_along_dim": ("x.take_along_dim(j, 1)", "x.gather(1, j)"),
    "Tensor.count_nonzero": ("(x > 0.5).count_nonzero()", "(x > 0.5).sum()"),
    "Tensor.swapaxes": ("x.swapaxes(0, 1)", "x.transpose(0, 1)"),
    "Tensor.swapdims": ("x.swapdims(0, 1)", "x.transpose(0, 1)"),
    "Tensor.tile": ("x.tile((2, 1))", "x.repeat(2, 1)"),
    "Tensor.true_divide": ("x.true_divide(y)", "x / y"),
    "Tensor.divide": ("x.divide(y)", "x / y"),
    "Tensor.multiply": ("x.multiply(y)", "x * y"),
    "Tensor.subtract": ("x.subtract(y)", "x - y"),
    "Tensor.negative": ("x.negative()", "-x"),
    "Tensor.greater": ("x.greater(y)", "x > y"),
    "Tensor.less": ("x.less(y)", "x < y"),
    "Tensor.logical_and": ("(x > 0.5).logical_and(y > 0.5)", "(x > 0.5) & (y > 0.5)"),
    "Tensor.logical_or": ("(x > 0.5).logical_or(y > 0.5)", "(x > 0.5) | (y > 0.5)"),
    "Tensor.logical_not": ("(x > 0.5).logical_not()", "~(x > 0.5)"),
    "Tensor.det": ("(x @ x.mT).det()", "torch.linalg.det(x @ x.mT)"),
    "Tensor.logdet": ("(x @ x.mT).logdet()", "torch.linalg.slogdet(x @ x.mT).logabsdet"),
    "Tensor.slogdet": ("(x @ x.mT).slogdet()", "torch.linalg.slogdet(x @ x.mT)"),
    "Tensor.inverse": ("(x @ x.mT).inverse()", "torch.linalg.inv(x @ x.mT)"),
    "Tensor.pinverse": ("x.pinverse()", "torch.linalg.pinv(x)"),
    "Tensor.matrix_power": ("(x @ x.mT).matrix_power(3)",
                            "torch.linalg.matrix_power(x @ x.mT, 3)"),
    "Tensor.qr": ("(x @ x.mT).qr()", "torch.linalg.qr(x @ x.mT)"),
    "Tensor.cross": ("x[:, :3].cross(y[:, :3], dim=1)",
                     "torch.linalg.cross(x[:, :3], y[:, :3], dim=1)"),
    "Tensor.diagonal": ("x.diagonal(1)", "torch.linalg.diagonal(x, offset=1)"),
    "Tensor.matrix_exp": ("(x @ x.mT).matrix_exp()", "torch.linalg.matrix_exp(x @ x.mT)"),
    # torch.nn.functional: "F.<name>"
    "F.silu": ("F.silu(x)", "x * torch.sigmoid(x)"),
    "F.elu": ("F.elu(x)", "torch.where(x > 0, x, torch.exp(x) - 1)"),
    "F.relu6": ("F.relu6(x)", "torch.clamp(x, 0, 6)"),
    "F.hardtanh": ("F.hardtanh(x)", "torch.clamp(x, -1, 1)"),
    "F.hardsigmoid": ("F.hardsigmoid(x)", "torch.clamp(x / 6 + 0.5, 0, 1)"),
    "F.hardswish": ("F.hardswish(x)", "x * torch.clamp(x + 3, 0, 6) / 6"),
    "F.logsigmoid": ("F.logsigmoid(x)", "-F.softplus(-x)"),
    "F.softsign": ("F.softsign(x)", "x / (1 + x.abs())"),
    "F.mish": ("F.mish(x)", "x * torch.tanh(F.softplus(x))"),
    "F.softmin": ("F.softmin(x, dim=1)", "F.softmax(-x, dim=1)"),
    "F.tanhshrink": ("F.tanhshrink(x)", "x - torch.tanh(x)"),
    "F.glu": ("F.glu(x)", "x.chunk(2, -1)[0] * torch.sigmoid(x.chunk(2, -1)[1])"),
    "F.normalize": ("F.normalize(x)", "x / torch.clamp(x.norm(dim=1, keepdim=True), min=1e-12)"),
    # torch.nn's modules: "nn.<name>", what their forward computes
    "nn.SiLU": ("nn.SiLU()(x)", "x * torch.sigmoid(x)"),
    "nn.ELU": ("nn.ELU()(x)", "torch.where(x > 0, x, torch.exp(x) - 1)"),
    "nn.ReLU6": ("nn.ReLU6()(x)", "torch.clamp(x, 0, 6)"),
    "nn.Hardtanh": ("nn.Hardtanh()(x)", "torch.clamp(x, -1, 1)"),
    "nn.LogSigmoid": ("nn.LogSigmoid()(x)", "-F.softplus(-x)"),
    "nn.Softsign": ("nn.Softsign()(x)", "x / (1 + x.abs())"),
    "nn.Mish": ("nn.Mish()(x)", "x * torch.tanh(F.softplus(x))"),
}
"""For a torch name chaingrad lacks and its ops compose: torch's call, and what to write
instead, with ``import chaingrad as torch`` and ``import chaingrad.nn.functional as F`` (the
names ``x``, ``y``, ... stand for the call's tensors). ``missing`` puts it in the error;
tests/test_torch_names.py runs each against torch's."""

_TORCH_SPACE = {"chaingrad": "torch", "chaingrad.Tensor": "Tensor", "chaingrad.nn": "nn",
                "chaingrad.nn.functional": "F"}
"""The name of each chaingrad module in ``INSTEAD``'s keys: torch's, as code writes it."""


def missing(module: str, name: str, lacks: frozenset[str]) -> AttributeError:
    """The error for ``module.name``, a name the module does not have: for one of torch's
    names in ``lacks``, chaingrad's ``TorchNameError`` "chaingrad.nn has no 'GroupNorm' yet",
    followed by what to write instead where chaingrad composes it (``INSTEAD``); Python's
    usual AttributeError otherwise (a typo). A module's ``__getattr__`` raises it.

    Example:
        >>> missing("chaingrad.optim", "Rprop", OPTIM)
        TorchNameError("chaingrad.optim has no 'Rprop' yet")
        >>> missing("chaingrad", "rsqrt", TORCH)
        TorchNameError("chaingrad has no 'rsqrt' yet; for torch.rsqrt(x) write x ** -0.5")
        >>> missing("chaingrad.optim", "SDG", OPTIM)
        AttributeError("module 'chaingrad.optim' has no attribute 'SDG'")
    """
    if name not in lacks:
        return AttributeError(f"module {module!r} has no attribute {name!r}")
    suggestion = INSTEAD.get(f"{_TORCH_SPACE.get(module, module)}.{name}")
    if suggestion is None:
        return TorchNameError(f"{module} has no {name!r} yet")
    call, instead = suggestion
    return TorchNameError(f"{module} has no {name!r} yet; for {call} write {instead}")


def load_module(module: str, what: str) -> ModuleType:
    """Import ``module`` (a name that loads on first use, such as ``chaingrad.zeros`` or
    ``chaingrad.nn.Linear``, is in it); without numpy, an error saying that ``what`` needs
    it and which extra brings it. Each package's ``__getattr__`` loads through it.

    Example:
        >>> load_module("chaingrad.nn.functional", "chaingrad.nn.functional").__name__
        'chaingrad.nn.functional'
    """
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name != "numpy":
            raise
        raise ModuleNotFoundError(f"{what} needs numpy: pip install 'chaingrad[tensor]'",
                                  name="numpy") from exc


def submodules_on_use(package: str, submodules: tuple[str, ...],
                      lacks: frozenset[str]) -> Callable[[str], object]:
    """A package's module-level ``__getattr__``: each of its ``submodules`` imported on first
    use (``chaingrad.optim.lr_scheduler`` without an import of its own), any other name the
    error of ``missing``.

    Example:
        >>> getattr_ = submodules_on_use("chaingrad.optim", ("lr_scheduler",), OPTIM)
        >>> getattr_("lr_scheduler").__name__
        'chaingrad.optim.lr_scheduler'
        >>> getattr_("Rprop")
        Traceback (most recent call last):
        ...
        chaingrad.errors.TorchNameError: chaingrad.optim has no 'Rprop' yet
    """
    def __getattr__(name: str) -> object:  # noqa: N807 - the module hook's own name
        if name in submodules:
            return load_module(f"{package}.{name}", f"{package}.{name}")  # which sets it there
        raise missing(package, name, lacks)

    return __getattr__


SERIALIZATION = frozenset("""
    check_module_version_greater_or_equal default_restore_location get_crc32_options
    get_default_load_endianness get_default_mmap_options LoadEndianness location_tag mkdtemp
    normalize_storage_type register_package set_crc32_options set_default_load_endianness
    set_default_mmap_options skip_data SourceChangeWarning StorageType storage_to_tensor_type
    validate_cuda_device validate_hpu_device
""".split())  # noqa: SIM905 - a list to read
"""``torch.serialization.<name>``s that ``chaingrad.serialization`` lacks."""


NN_UTILS_RNN = frozenset("""
    bind copy_method_params
""".split())  # noqa: SIM905 - a list to read
"""``torch.nn.utils.rnn.<name>``s that ``chaingrad.nn.utils.rnn`` lacks (torch's helpers)."""
