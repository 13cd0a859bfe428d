/*
 * gen_trace.c - seeded generator of realistic PyTorch profiler (Kineto)
 * Chrome-trace JSON files with memory events, for benchmarking vramreport.
 *
 *   gen_trace [--seed N] [--size-mb M] [--format 2024|2022|2021] > trace.json
 *
 * The trace simulates training steps of a GPT-like transformer (fp32, AdamW,
 * foreach optimizer) on one GPU of a 2-GPU DDP job: ProfilerStep#N user
 * annotations, nested cpu_op trees on a main and an autograd thread,
 * python_function frames (with_stack), cudaLaunchKernel + ac2g flows +
 * kernels, memcpy/memset, and [memory] instant events whose Total Allocated /
 * Total Reserved are exact running sums (caching-allocator style reserved
 * growth in 2 MiB / 20 MiB / large segments, never below allocated).
 *
 * The layout follows real Kineto output: all CPU ops first, then all memory
 * events (chronological), then python functions, then GPU activity quartets
 * (kernel, f, runtime, s), then metadata.  To stay streaming with constant
 * memory the simulation is deterministic and is replayed once per section
 * (plus one sizing pass that only counts bytes).
 *
 * On exit a ground-truth line is printed to stderr:
 *   gen: bytes=... events=... mem_events=... peak_allocated=... peak_reserved=...
 * (peaks are for cuda:0).
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* configuration                                                        */
/* ------------------------------------------------------------------ */
enum { F2021 = 2021, F2022 = 2022, F2024 = 2024 };
static int fmt = F2024;

static int64_t B = 8, S = 1024;
static const int64_t H = 2048, NHEAD = 16, L = 24, V = 50304, FF = 8192;

static const int64_t MiB = 1024 * 1024;

/* ------------------------------------------------------------------ */
/* rng                                                                  */
/* ------------------------------------------------------------------ */
static uint64_t rng_state;
static uint64_t rnd(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}
static int64_t rr(int64_t lo, int64_t hi) /* inclusive */
{
    return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1));
}

/* ------------------------------------------------------------------ */
/* output buffer                                                        */
/* ------------------------------------------------------------------ */
#define OBUF_CAP ((size_t)16 << 20)
#define OBUF_SLACK ((size_t)256 << 10)
static char *ob;
static size_t on;
static int out_on; /* 0: count only */
static uint64_t out_bytes;

static void oflush(void)
{
    if (out_on && on) {
        if (fwrite(ob, 1, on, stdout) != on) {
            perror("gen_trace: write");
            exit(1);
        }
    }
    out_bytes += on;
    on = 0;
}
static void oreserve(void)
{
    if (on > OBUF_CAP - OBUF_SLACK)
        oflush();
}

#define W(lit)                                       \
    do {                                             \
        memcpy(ob + on, "" lit, sizeof("" lit) - 1); \
        on += sizeof("" lit) - 1;                    \
    } while (0)

/* a string literal and its length, for tables of JSON keys */
typedef struct {
    const char *s;
    size_t n;
} Lit;
#define LIT(lit)                   \
    {                              \
        "" lit, sizeof("" lit) - 1 \
    }
static void wlit(const Lit *l)
{
    memcpy(ob + on, l->s, l->n);
    on += l->n;
}

static void ws(const char *s)
{
    size_t n = strlen(s);
    memcpy(ob + on, s, n);
    on += n;
}
static void wu(uint64_t v)
{
    char t[24];
    int i = 24;
    do {
        t[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    memcpy(ob + on, t + i, (size_t)(24 - i));
    on += (size_t)(24 - i);
}
static void wi(int64_t v)
{
    if (v < 0) {
        ob[on++] = '-';
        wu((uint64_t)0 - (uint64_t)v);
    } else {
        wu((uint64_t)v);
    }
}
/* timestamp / duration: ns internally; 2024 prints us with 3 decimals */
static void wt(int64_t ns)
{
    if (ns < 0)
        ns = 0;
    wu((uint64_t)(ns / 1000));
    if (fmt == F2024) {
        int r = (int)(ns % 1000);
        ob[on++] = '.';
        ob[on++] = (char)('0' + r / 100);
        ob[on++] = (char)('0' + r / 10 % 10);
        ob[on++] = (char)('0' + r % 10);
    }
}
static void wd(const char *f, double d)
{
    int n = snprintf(ob + on, 64, f, d);
    if (n > 0)
        on += (size_t)n;
}

/* ------------------------------------------------------------------ */
/* records                                                              */
/* ------------------------------------------------------------------ */
typedef struct {
    const char *type, *conc;
    int nd; /* -1: scalar/non-tensor ([]) */
    int64_t d[4];
} Arg;

enum { RK_CPU, RK_ANN, RK_PY };
enum { TH_MAIN, TH_BWD };

typedef struct {
    int64_t ts, dur, id, parent, seq;
    const char *name;
    const char *cs[24];
    Arg a[5];
    int32_t sfx, mod;
    uint8_t kind, thr, na, ncs, bwd;
} Rec;

typedef struct {
    int64_t ts, bytes, tot_a, tot_r;
    uint64_t addr;
    int8_t dev;
    uint8_t thr;
} MemRec;

enum { GK_KERNEL, GK_MEMCPY, GK_MEMSET, GK_RT, GK_ANN };
typedef struct {
    const char *name, *rtname;
    int64_t rt_ts, rt_dur, k_ts, k_dur, ext, ext_ts, corr, bytes;
    int32_t grid[3], block[3], regs, smem, cbid, sfx;
    uint8_t kind, thr, dev;
} GpuRec;

static Rec *crec, *prec;
static MemRec *mrec;
static GpuRec *grec;
static size_t ncrec, nprec, nmrec, ngrec, ccap, pcap, mcap, gcap;

#define GROW(arr, n, cap)                                       \
    do {                                                        \
        if ((n) == (cap)) {                                     \
            (cap) = (cap) ? (cap)*2 : 4096;                     \
            void *np_ = realloc((arr), (cap) * sizeof(*(arr))); \
            if (!np_) {                                         \
                fputs("gen_trace: out of memory\n", stderr);    \
                exit(1);                                        \
            }                                                   \
            (arr) = np_;                                        \
        }                                                       \
    } while (0)

/* ------------------------------------------------------------------ */
/* simulation state                                                     */
/* ------------------------------------------------------------------ */
static int64_t now;        /* CPU clock, ns */
static int64_t gpu_now[2]; /* GPU stream clock per device */
static int64_t ext_next, corr_next, py_next, seq_next;
static int64_t pid_cpu, tid_main, tid_bwd;
static int cur_thr;

typedef struct {
    uint8_t is_py;
    int32_t idx;
} StackEnt;
static StackEnt stk[2][64];
static int nstk[2];

/* per-step GPU annotation bookkeeping (2024) */
static int64_t step_gpu_first, step_gpu_last;

static int64_t q(int64_t ns) /* quantise for integer-us formats */
{
    if (fmt == F2024)
        return ns;
    return (ns + 500) / 1000 * 1000;
}
/* advance the CPU clock; in integer-us formats by at least 1 us so that
 * siblings never touch and children stay strictly inside their parents */
static void adv(int64_t lo, int64_t hi)
{
    int64_t d = q(rr(lo, hi));
    if (fmt != F2024 && d < 1000)
        d = 1000;
    now += d;
}

static int top_cpu(int thr)
{
    for (int i = nstk[thr] - 1; i >= 0; i--)
        if (!stk[thr][i].is_py)
            return stk[thr][i].idx;
    return -1;
}
static int top_py(int thr)
{
    for (int i = nstk[thr] - 1; i >= 0; i--)
        if (stk[thr][i].is_py)
            return stk[thr][i].idx;
    return -1;
}

/* python frame names currently open on the main thread, for 2021 call stacks */
static const char *pyname_stk[64];
static int npyname;
static const char *TOP_FRAMES[3] = {
    "train.py(262): <module>",
    "train.py(231): main",
    "train.py(198): train",
};

static Rec *cpu_open2(const char *name, int sfx, int kind)
{
    adv(150, 1400);
    GROW(crec, ncrec, ccap);
    Rec *r = &crec[ncrec];
    r->ts = now;
    r->dur = 0;
    r->id = ext_next++;
    r->parent = -1;
    r->seq = -1;
    r->name = name;
    r->sfx = sfx;
    r->mod = -1;
    r->kind = (uint8_t)kind;
    r->thr = (uint8_t)cur_thr;
    r->na = 0;
    r->bwd = (uint8_t)(cur_thr == TH_BWD);
    r->ncs = 0;
    if (fmt == F2021 && cur_thr == TH_MAIN) {
        int n = 0;
        for (int i = npyname - 1; i >= 0 && n < 24; i--)
            r->cs[n++] = pyname_stk[i];
        r->ncs = (uint8_t)n;
    }
    StackEnt e = {0, (int32_t)ncrec};
    stk[cur_thr][nstk[cur_thr]++] = e;
    ncrec++;
    return r;
}
static Rec *cpu_open(const char *name)
{
    return cpu_open2(name, -1, RK_CPU);
}
static Rec *ann_open(const char *name, int sfx)
{
    return cpu_open2(name, sfx, RK_ANN);
}

static void cpu_close(void)
{
    StackEnt e = stk[cur_thr][--nstk[cur_thr]];
    if (e.is_py) {
        fputs("gen_trace: internal error (cpu_close on py)\n", stderr);
        exit(2);
    }
    adv(100, 900);
    crec[e.idx].dur = now - crec[e.idx].ts;
}

static void py_open2(const char *name, int sfx, int mod)
{
    adv(100, 900);
    GROW(prec, nprec, pcap);
    Rec *r = &prec[nprec];
    int par = top_py(cur_thr);
    r->ts = now;
    r->dur = 0;
    r->id = py_next++;
    r->parent = par >= 0 ? prec[par].id : 3;
    r->seq = -1;
    r->name = name;
    r->sfx = sfx;
    r->mod = mod;
    r->kind = RK_PY;
    r->thr = (uint8_t)cur_thr;
    r->na = 0;
    r->ncs = 0;
    r->bwd = 0;
    StackEnt e = {1, (int32_t)nprec};
    stk[cur_thr][nstk[cur_thr]++] = e;
    nprec++;
    if (name[0] != '<' && name[0] != 'n')
        pyname_stk[npyname++] = name;
    else
        pyname_stk[npyname++] = NULL;
}
static void py_open(const char *name)
{
    py_open2(name, -1, -1);
}
static void py_close(void)
{
    StackEnt e = stk[cur_thr][--nstk[cur_thr]];
    if (!e.is_py) {
        fputs("gen_trace: internal error (py_close on cpu)\n", stderr);
        exit(2);
    }
    adv(100, 700);
    prec[e.idx].dur = now - prec[e.idx].ts;
    npyname--;
}

/* ---------------- argument helpers ---------------- */
static Arg TN(const char *type, int nd, int64_t a, int64_t b, int64_t c, int64_t d)
{
    Arg x;
    x.type = type;
    x.conc = "";
    x.nd = nd;
    x.d[0] = a;
    x.d[1] = b;
    x.d[2] = c;
    x.d[3] = d;
    return x;
}
#define F1(a) TN("float", 1, (a), 0, 0, 0)
#define F2(a, b) TN("float", 2, (a), (b), 0, 0)
#define F3(a, b, c) TN("float", 3, (a), (b), (c), 0)
#define F4(a, b, c, d) TN("float", 4, (a), (b), (c), (d))
#define L2(a, b) TN("long int", 2, (a), (b), 0, 0)
static Arg SC(const char *v)
{
    Arg x = TN("Scalar", -1, 0, 0, 0, 0);
    x.conc = v;
    return x;
}
static Arg NONE(void)
{
    return TN("", -1, 0, 0, 0, 0);
}
static Arg TL(void)
{
    return TN("TensorList", -1, 0, 0, 0, 0);
}
static Arg IL(const char *v)
{
    Arg x = TN("ScalarList", -1, 0, 0, 0, 0);
    x.conc = v;
    return x;
}

static void setargs(Rec *r, int n, const Arg *a)
{
    if (n > 5)
        n = 5;
    r->na = (uint8_t)n;
    for (int i = 0; i < n; i++)
        r->a[i] = a[i];
}
#define ARGS(r, ...) \
    setargs((r), (int)(sizeof((Arg[]){__VA_ARGS__}) / sizeof(Arg)), (Arg[]){__VA_ARGS__})

/* ------------------------------------------------------------------ */
/* kernels                                                              */
/* ------------------------------------------------------------------ */
enum {
    K_GEMM_TN,
    K_GEMM_NN,
    K_GEMM_NT,
    K_LN_FWD,
    K_LN_BWD_IN,
    K_LN_BWD_GB,
    K_ATT_FWD,
    K_ATT_BWD,
    K_GELU,
    K_GELU_BWD,
    K_ADD,
    K_DROPOUT,
    K_DROPOUT_BWD,
    K_COPY,
    K_INDEX_SELECT,
    K_EMB_BWD,
    K_SORT,
    K_LOGSOFTMAX,
    K_LOGSOFTMAX_BWD,
    K_NLL,
    K_NLL_BWD,
    K_FILL,
    K_REDUCE,
    K_FE_LERP,
    K_FE_MUL,
    K_FE_ADDCMUL,
    K_FE_SQRT,
    K_FE_DIV,
    K_FE_ADD,
    K_FE_ADDCDIV,
    K_COUNT
};
static const char *KSRC[K_COUNT] = {
    "sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32_warpgroupsize1x1x1_execute_"
    "segment_k_off_kernel__5x_cublas",
    "sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x256x32_warpgroupsize2x1x1_execute_"
    "segment_k_off_kernel__5x_cublas",
    "sm90_xmma_gemm_f32f32_tf32f32_f32_nt_n_tilesize128x128x32_warpgroupsize1x1x1_execute_"
    "segment_k_off_kernel__5x_cublas",
    "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>(int, "
    "float, float const*, float const*, float const*, float*, float*, float*)",
    "void at::native::(anonymous namespace)::layer_norm_grad_input_kernel_vectorized<float, "
    "float>(float const*, float const*, float const*, float const*, float const*, float*, int)",
    "void at::native::(anonymous namespace)::GammaBetaBackwardCUDAKernel_32x32<float, "
    "float>(long, long, float const*, float const*, float const*, float const*, float*, float*)",
    "fmha_cutlassF_f32_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<float, "
    "cutlass::arch::Sm80, true, 64, 64, 128, true, true>::Params)",
    "fmha_cutlassB_f32_aligned_64x64_k128_sm80(PyTorchMemEffAttention::AttentionBackwardKernel<"
    "cutlass::arch::Sm80, float, true, false, true, 64, 64, 128, false>::Params)",
    "void at::native::vectorized_elementwise_kernel<4, "
    "at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, "
    "at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#2}::operator()() "
    "const::{lambda(float)#1}, std::array<char*, 2ul> >(int, "
    "at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, "
    "at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#2}::operator()() "
    "const::{lambda(float)#1}, std::array<char*, 2ul>)",
    "void at::native::vectorized_elementwise_kernel<4, "
    "at::native::GeluBackwardCUDAKernelImpl(at::TensorIteratorBase&, "
    "at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#2}::operator()() "
    "const::{lambda(float, float)#1}, std::array<char*, 3ul> >(int, "
    "at::native::GeluBackwardCUDAKernelImpl(at::TensorIteratorBase&, "
    "at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#2}::operator()() "
    "const::{lambda(float, float)#1}, std::array<char*, 3ul>)",
    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
    "std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul>)",
    "void at::native::(anonymous namespace)::fused_dropout_kernel_vec<float, float, unsigned "
    "int, 1, 4, bool>(at::cuda::detail::TensorInfo<float const, unsigned int>, "
    "at::cuda::detail::TensorInfo<float, unsigned int>, at::cuda::detail::TensorInfo<bool, "
    "unsigned int>, unsigned int, float, at::PhiloxCudaState)",
    "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous "
    "namespace)::masked_scale_kernel<bool, float, float>(at::Tensor&, at::Tensor const&, "
    "at::Tensor const&, float)::{lambda(float, bool)#1}, std::array<char*, 3ul> >(int, "
    "at::native::(anonymous namespace)::masked_scale_kernel<bool, float, float>(at::Tensor&, "
    "at::Tensor const&, at::Tensor const&, float)::{lambda(float, bool)#1}, std::array<char*, "
    "3ul>)",
    "void at::native::elementwise_kernel<128, 4, "
    "at::native::gpu_kernel_impl_nocast<at::native::direct_copy_kernel_cuda(at::"
    "TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() "
    "const::{lambda(float)#1}>(at::TensorIteratorBase&, "
    "at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() "
    "const::{lambda()#7}::operator()() const::{lambda(float)#1} const&)::{lambda(int)#1}>(int, "
    "at::native::gpu_kernel_impl_nocast<at::native::direct_copy_kernel_cuda(at::"
    "TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() "
    "const::{lambda(float)#1}>(at::TensorIteratorBase&, "
    "at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() "
    "const::{lambda()#7}::operator()() const::{lambda(float)#1} const&)::{lambda(int)#1})",
    "void at::native::(anonymous namespace)::indexSelectLargeIndex<float, long, unsigned int, 2, "
    "2, -2, true>(at::cuda::detail::TensorInfo<float, unsigned int>, "
    "at::cuda::detail::TensorInfo<float const, unsigned int>, at::cuda::detail::TensorInfo<long "
    "const, unsigned int>, int, int, unsigned int, unsigned int, long)",
    "void at::native::(anonymous namespace)::compute_grad_weight<float, float, long>(long "
    "const*, float const*, long const*, long, long, long, long const*, "
    "at::GenericPackedTensorAccessor<float, 1ul, at::RestrictPtrTraits, int>)",
    "void "
    "at_cuda_detail::cub::DeviceRadixSortOnesweepKernel<at_cuda_detail::cub::"
    "DeviceRadixSortPolicy<long, long, unsigned long, unsigned int, unsigned long>::Policy900, "
    "false, long, long, unsigned long, int, int, "
    "at_cuda_detail::cub::detail::identity_decomposer_t>(int*, int*, unsigned long*, unsigned "
    "long const*, long*, long const*, long*, long const*, int, int, int, "
    "at_cuda_detail::cub::detail::identity_decomposer_t)",
    "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, "
    "at::native::(anonymous namespace)::LogSoftMaxForwardEpilogue>(float*, float const*, int)",
    "void at::native::(anonymous namespace)::cunn_SoftMaxBackward<4, float, float, float, "
    "at::native::(anonymous namespace)::LogSoftMaxBackwardEpilogue>(float*, float const*, float "
    "const*, long)",
    "void at::native::(anonymous namespace)::nll_loss_forward_reduce_cuda_kernel_2d<float, "
    "float, long>(float*, float*, float const*, long const*, float const*, bool, long, long, "
    "long, long)",
    "void at::native::(anonymous namespace)::nll_loss_backward_reduce_cuda_kernel_2d<float, "
    "long>(float*, float const*, long const*, float const*, float const*, bool, int, int, long, "
    "long)",
    "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
    "std::array<char*, 1ul> >(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)",
    "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, "
    "at::native::func_wrapper_t<float, at::native::sum_functor<float, float, "
    "float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, 4, "
    "4> >(at::native::ReduceOp<float, at::native::func_wrapper_t<float, "
    "at::native::sum_functor<float, float, "
    "float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, 4, "
    "4>)",
    "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous "
    "namespace)::TensorListMetadata<2>, at::native::(anonymous "
    "namespace)::TernaryOpScalarFunctor<float, 2, 2, 0>, at::native::LerpFunctor<float>, "
    "float>(at::native::(anonymous namespace)::TensorListMetadata<2>, at::native::(anonymous "
    "namespace)::TernaryOpScalarFunctor<float, 2, 2, 0>, at::native::LerpFunctor<float>, float)",
    "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous "
    "namespace)::TensorListMetadata<1>, at::native::(anonymous "
    "namespace)::BinaryOpScalarFunctor<float, 1, 1, 0>, std::multiplies<float>, "
    "float>(at::native::(anonymous namespace)::TensorListMetadata<1>, at::native::(anonymous "
    "namespace)::BinaryOpScalarFunctor<float, 1, 1, 0>, std::multiplies<float>, float)",
    "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous "
    "namespace)::TensorListMetadata<3>, at::native::(anonymous "
    "namespace)::PointwiseOpScalarFunctor<float, 3, 3, 0>, std::multiplies<float>, "
    "float>(at::native::(anonymous namespace)::TensorListMetadata<3>, at::native::(anonymous "
    "namespace)::PointwiseOpScalarFunctor<float, 3, 3, 0>, std::multiplies<float>, float)",
    "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous "
    "namespace)::TensorListMetadata<2>, at::native::(anonymous namespace)::UnaryOpFunctor<float, "
    "2, 1, 1>, at::native::Sqrt<float> >(at::native::(anonymous "
    "namespace)::TensorListMetadata<2>, at::native::(anonymous namespace)::UnaryOpFunctor<float, "
    "2, 1, 1>, at::native::Sqrt<float>)",
    "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous "
    "namespace)::TensorListScalarListMetadata<float, 1>, at::native::(anonymous "
    "namespace)::BinaryOpScalarListFunctor<float, 1, 1, 0>, std::divides<float> "
    ">(at::native::(anonymous namespace)::TensorListScalarListMetadata<float, 1>, "
    "at::native::(anonymous namespace)::BinaryOpScalarListFunctor<float, 1, 1, 0>, "
    "std::divides<float>)",
    "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous "
    "namespace)::TensorListMetadata<1>, at::native::(anonymous "
    "namespace)::BinaryOpScalarFunctor<float, 1, 1, 0>, std::plus<float>, "
    "float>(at::native::(anonymous namespace)::TensorListMetadata<1>, at::native::(anonymous "
    "namespace)::BinaryOpScalarFunctor<float, 1, 1, 0>, std::plus<float>, float)",
    "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous "
    "namespace)::TensorListScalarListMetadata<float, 3>, at::native::(anonymous "
    "namespace)::PointwiseOpScalarListFunctor<float, 3, 3, 0>, std::divides<float> "
    ">(at::native::(anonymous namespace)::TensorListScalarListMetadata<float, 3>, "
    "at::native::(anonymous namespace)::PointwiseOpScalarListFunctor<float, 3, 3, 0>, "
    "std::divides<float>)",
};
static char *KN[K_COUNT]; /* format-adjusted names */

/* replace "std::array<char*, Nul>" by "at::detail::Array<char*, N>" and sm90
 * gemm names by ampere ones for pre-2024 formats */
static void init_kernel_names(void)
{
    for (int k = 0; k < K_COUNT; k++) {
        const char *s = KSRC[k];
        size_t n = strlen(s);
        char *d = malloc(n + 64);
        if (!d)
            exit(1);
        if (fmt == F2024) {
            memcpy(d, s, n + 1);
        } else if (k <= K_GEMM_NT) {
            static const char *amp[3] = {"ampere_sgemm_128x64_tn", "ampere_sgemm_128x128_nn",
                                         "ampere_sgemm_64x64_nt"};
            strcpy(d, amp[k]);
        } else {
            size_t o = 0;
            for (size_t i = 0; i < n;) {
                if (strncmp(s + i, "std::array<char*, ", 18) == 0 && s[i + 19] == 'u') {
                    memcpy(d + o, "at::detail::Array<char*, ", 25);
                    o += 25;
                    d[o++] = s[i + 18];
                    i += 21; /* skip "std::array<char*, N" + "ul" */
                } else {
                    d[o++] = s[i++];
                }
            }
            d[o] = 0;
        }
        KN[k] = d;
    }
}

/* ------------------------------------------------------------------ */
/* GPU activity                                                         */
/* ------------------------------------------------------------------ */
static const int NUM_SMS = 132;

static GpuRec *gpu_new(int kind)
{
    GROW(grec, ngrec, gcap);
    GpuRec *g = &grec[ngrec++];
    memset(g, 0, sizeof(*g));
    g->kind = (uint8_t)kind;
    g->thr = (uint8_t)cur_thr;
    int c = top_cpu(cur_thr);
    g->ext = c >= 0 ? crec[c].id : 0;
    g->ext_ts = c >= 0 ? crec[c].ts : 0;
    g->corr = corr_next++;
    return g;
}

static void gpu_exec(GpuRec *g, int dev, int64_t dur_ns)
{
    int64_t start = g->rt_ts + q(rr(1500, 4000));
    if (gpu_now[dev] > start)
        start = gpu_now[dev] + q(rr(800, 2500));
    if (dur_ns < 1000)
        dur_ns = 1000 + rr(0, 1500);
    g->k_ts = start;
    g->k_dur = q(dur_ns);
    if (g->k_dur <= 0)
        g->k_dur = fmt == F2024 ? 1000 : 1000;
    gpu_now[dev] = g->k_ts + g->k_dur;
    g->dev = (uint8_t)dev;
    if (dev == 0) {
        if (step_gpu_first < 0)
            step_gpu_first = g->k_ts;
        step_gpu_last = gpu_now[0];
    }
}

/* launch a kernel from the current cpu op; gpu duration in ns */
static void launch(int k, int64_t gpu_ns, int64_t blocks, int threads, int regs, int smem)
{
    adv(200, 900);
    GpuRec *g = gpu_new(GK_KERNEL);
    g->name = KN[k];
    g->rtname = "cudaLaunchKernel";
    g->cbid = 211;
    g->rt_ts = now;
    g->rt_dur = q(rr(2600, 7500));
    if (blocks < 1)
        blocks = 1;
    if (blocks > 2147483647)
        blocks = 2147483647;
    g->grid[0] = (int32_t)blocks;
    g->grid[1] = 1;
    g->grid[2] = 1;
    g->block[0] = threads;
    g->block[1] = 1;
    g->block[2] = 1;
    g->regs = regs;
    g->smem = smem;
    gpu_exec(g, 0, gpu_ns + rr(0, gpu_ns / 20 + 1));
    now += g->rt_dur;
}

static void runtime_only(const char *name, int cbid, int64_t dur)
{
    adv(200, 800);
    GpuRec *g = gpu_new(GK_RT);
    g->rtname = name;
    g->cbid = cbid;
    g->rt_ts = now;
    g->rt_dur = q(dur);
    now += g->rt_dur;
}

static int64_t ew_ns(int64_t bytes)
{
    return bytes / 2600 + 2000;
} /* ~2.6 TB/s */
static int64_t mm_ns(int64_t m, int64_t n, int64_t k)
{
    return (2 * m * n * k) / 380000 + 4000; /* ~380 TFLOP/s tf32 */
}
static void launch_ew(int k, int64_t numel, int64_t bytes)
{
    launch(k, ew_ns(bytes), (numel + 511) / 512, 128, 24 + (int)rr(0, 2) * 8, 0);
}
static void launch_gemm(int k, int64_t m, int64_t n, int64_t kk)
{
    if (fmt == F2024)
        runtime_only("cudaFuncGetAttributes", 26, rr(600, 2500)); /* cuBLASLt heuristics */
    else
        runtime_only("cudaFuncSetAttribute", 273, rr(300, 1500));
    launch(k, mm_ns(m, n, kk), ((m + 127) / 128) * ((n + 127) / 128), 384, 168,
           213 * 1024 + 4096 * (int)rr(0, 3));
}

static void memcpy_op(const char *name, int dev, int64_t bytes, int sync)
{
    adv(200, 900);
    GpuRec *g = gpu_new(GK_MEMCPY);
    g->name = name;
    g->rtname = "cudaMemcpyAsync";
    g->cbid = 41;
    g->rt_ts = now;
    g->bytes = bytes;
    gpu_exec(g, dev, bytes / 12 + 1500); /* ~12 GB/s pageable */
    if (sync) {
        g->rt_dur = gpu_now[dev] - g->rt_ts + q(rr(2000, 6000));
    } else {
        g->rt_dur = q(rr(4000, 12000) + bytes / 20);
    }
    now += g->rt_dur;
}

static void memset_op(int64_t bytes)
{
    adv(200, 900);
    GpuRec *g = gpu_new(GK_MEMSET);
    g->name = "Memset (Device)";
    g->rtname = "cudaMemsetAsync";
    g->cbid = 51;
    g->rt_ts = now;
    g->rt_dur = q(rr(2500, 6000));
    g->bytes = bytes;
    gpu_exec(g, 0, ew_ns(bytes));
    now += g->rt_dur;
}


static void stream_sync(void)
{
    adv(200, 800);
    GpuRec *g = gpu_new(GK_RT);
    g->rtname = "cudaStreamSynchronize";
    g->cbid = 131;
    g->rt_ts = now;
    int64_t d = gpu_now[0] - now;
    if (d < 2000)
        d = 2000;
    g->rt_dur = q(d + rr(1000, 4000));
    now += g->rt_dur;
}

/* ------------------------------------------------------------------ */
/* memory                                                               */
/* ------------------------------------------------------------------ */
typedef struct {
    uint64_t addr;
    int64_t size;
    int dev; /* -1 cpu */
} T;

enum { R_PARAM, R_GRAD, R_OPT1, R_OPT2, R_ACT, R_TMP, R_BGRAD, R_LEAK, R_INPUT, NREG };
static const uint64_t REG_SPAN = 0x4000000000ULL; /* 256 GiB */
static const uint64_t GPU_BASE = 0x7e1a00000000ULL;
static const uint64_t DEV_SPAN = 0x30000000000ULL;
static const uint64_t CPU_BASE = 0x55d8c4a00000ULL;
static uint64_t reg_off[2][NREG];
static int reg_live[2][NREG];
static uint64_t cpu_off;
static int cpu_live;

static int64_t tot_a[3], tot_r[3], peak_a[3], peak_r[3]; /* [0]=cpu [1]=cuda0 [2]=cuda1 */

static void mem_event(int dev, uint64_t addr, int64_t bytes)
{
    if (top_cpu(cur_thr) < 0) {
        fputs("gen_trace: internal error (memory event outside op)\n", stderr);
        exit(2);
    }
    adv(100, 700);
    int di = dev + 1;
    tot_a[di] += bytes;
    if (tot_a[di] < 0) {
        fputs("gen_trace: internal error (negative total)\n", stderr);
        exit(2);
    }
    if (tot_a[di] > peak_a[di])
        peak_a[di] = tot_a[di];
    GROW(mrec, nmrec, mcap);
    MemRec *m = &mrec[nmrec++];
    m->ts = now;
    m->bytes = bytes;
    m->addr = addr;
    m->dev = (int8_t)dev;
    m->thr = (uint8_t)cur_thr;
    m->tot_a = tot_a[di];
    m->tot_r = dev < 0 ? 0 : tot_r[di];
}

static int64_t seg_for(int64_t sz)
{
    if (sz < 1 * MiB)
        return 2 * MiB;
    if (sz < 10 * MiB)
        return 20 * MiB;
    return (sz + 2 * MiB - 1) / (2 * MiB) * (2 * MiB);
}

static void reserve(int dev, int64_t sz)
{
    int di = dev + 1;
    int grow = tot_a[di] + sz > tot_r[di];
    /* occasional fragmentation: a fresh segment although the pool would fit */
    if (!grow && sz >= MiB && rr(0, 399) == 0 && tot_r[di] < peak_a[di] + peak_a[di] / 8)
        grow = 1;
    if (!grow)
        return;
    int64_t seg = seg_for(sz);
    while (tot_a[di] + sz > tot_r[di] + seg)
        seg += seg_for(sz);
    runtime_only("cudaMalloc", 20, 8000 + seg / 4000000 * 1000 + rr(0, 20000));
    tot_r[di] += seg;
    if (tot_r[di] > peak_r[di])
        peak_r[di] = tot_r[di];
}

static T galloc_at(int dev, uint64_t addr, int64_t bytes)
{
    T t;
    int64_t sz = (bytes + 511) / 512 * 512;
    reserve(dev, sz);
    t.addr = addr;
    t.size = sz;
    t.dev = dev;
    mem_event(dev, addr, sz);
    return t;
}
static T galloc(int dev, int reg, int64_t bytes)
{
    int64_t sz = (bytes + 511) / 512 * 512;
    uint64_t a =
        GPU_BASE + (uint64_t)dev * DEV_SPAN + (uint64_t)reg * REG_SPAN + reg_off[dev][reg];
    reg_off[dev][reg] += (uint64_t)sz;
    reg_live[dev][reg]++;
    T t = galloc_at(dev, a, bytes);
    return t;
}
static int region_of(const T *t)
{
    uint64_t off = t->addr - GPU_BASE - (uint64_t)t->dev * DEV_SPAN;
    return (int)(off / REG_SPAN);
}
static void gfree(T *t)
{
    if (t->size <= 0)
        return;
    mem_event(t->dev, t->addr, -t->size);
    if (t->dev >= 0) {
        int reg = region_of(t);
        if (reg != R_PARAM && reg != R_GRAD && reg != R_OPT1 && reg != R_OPT2) {
            if (--reg_live[t->dev][reg] == 0 && (reg == R_TMP || reg == R_BGRAD))
                reg_off[t->dev][reg] = 0;
        }
    } else {
        if (--cpu_live == 0)
            cpu_off = 0;
    }
    t->size = 0;
}
static T calloc_cpu(int64_t bytes)
{
    T t;
    t.addr = CPU_BASE + cpu_off;
    cpu_off += (uint64_t)((bytes + 63) / 64 * 64);
    cpu_live++;
    t.size = bytes;
    t.dev = -1;
    mem_event(-1, t.addr, bytes);
    return t;
}

/* ------------------------------------------------------------------ */
/* model                                                                */
/* ------------------------------------------------------------------ */
typedef struct {
    int64_t d0, d1; /* d1 == 0: 1-D */
    uint64_t off;   /* slot offset inside param/grad/opt regions */
    T p, g, m, v;
    T step; /* cpu step tensor */
} Param;

#define NPARAM (1 + 12 * 24 + 3)
static Param prm[NPARAM];
static T tmpl[NPARAM];

enum { LN1W, LN1B, QKVW, QKVB, PROJW, PROJB, LN2W, LN2B, FC1W, FC1B, FC2W, FC2B };
static int PI(int layer, int w)
{
    return 1 + 12 * layer + w;
}
static const int P_WTE = 0, P_LNFW = 1 + 12 * 24, P_LNFB = 2 + 12 * 24, P_HEAD = 3 + 12 * 24;

static int64_t numel(const Param *p)
{
    return p->d1 ? p->d0 * p->d1 : p->d0;
}
static Arg param_arg(const Param *p)
{
    return p->d1 ? F2(p->d0, p->d1) : F1(p->d0);
}

static void init_params(void)
{
    uint64_t off = 0;
    for (int i = 0; i < NPARAM; i++) {
        Param *p = &prm[i];
        memset(p, 0, sizeof(*p));
        if (i == P_WTE || i == P_HEAD) {
            p->d0 = V;
            p->d1 = H;
        } else if (i == P_LNFW || i == P_LNFB) {
            p->d0 = H;
        } else {
            int w = (i - 1) % 12;
            switch (w) {
            case QKVW:
                p->d0 = 3 * H;
                p->d1 = H;
                break;
            case QKVB:
                p->d0 = 3 * H;
                break;
            case PROJW:
                p->d0 = H;
                p->d1 = H;
                break;
            case FC1W:
                p->d0 = FF;
                p->d1 = H;
                break;
            case FC1B:
                p->d0 = FF;
                break;
            case FC2W:
                p->d0 = H;
                p->d1 = FF;
                break;
            default:
                p->d0 = H;
                break;
            }
        }
        p->off = off;
        int64_t sz = (numel(p) * 4 + 511) / 512 * 512;
        off += (uint64_t)((sz + 2 * MiB - 1) / (2 * MiB) * (2 * MiB));
    }
}
static uint64_t slot(int reg, int i)
{
    return GPU_BASE + (uint64_t)reg * REG_SPAN + prm[i].off;
}

typedef struct {
    T ln1o, ln1m, ln1r, qkv, att, lse, cont, proj, d1, m1, add1, ln2o, ln2m, ln2r, fc1, gelu, fc2,
        d2, m2, add2;
    int64_t s_ln1, s_qkv, s_att, s_cont, s_proj, s_d1, s_add1, s_ln2, s_fc1, s_gelu, s_fc2, s_d2,
        s_add2;
} LayerActs;
static LayerActs la[24];
static T emb_o, emb_d, emb_m, lnf_o, lnf_m, lnf_r, logits, logp, nll_o, nll_w;
static int64_t s_emb, s_embd, s_lnf, s_head, s_lsm, s_nll;
static T in_ids, in_lbl, cpu_batch[2], dev1_t;
static int64_t step_no;
static int have_grads;

static const char *BI_LINEAR = "<built-in function linear>";
static const char *BI_LN = "<built-in method layer_norm of type object at 0x7f5c3e8b2c40>";
static const char *BI_DROPOUT = "<built-in method dropout of type object at 0x7f5c3e8b2c40>";
static const char *BI_GELU = "<built-in function gelu>";
static const char *BI_SDPA = "<built-in function scaled_dot_product_attention>";
static const char *PY_WCALL = "torch/nn/modules/module.py(1736): _wrapped_call_impl";
static const char *PY_CALL = "torch/nn/modules/module.py(1747): _call_impl";

static int mod_counter;
static void module_enter(const char *modname, int idx, const char *fwd)
{
    py_open(PY_WCALL);
    py_open(PY_CALL);
    py_open2(modname, idx, mod_counter++);
    py_open(fwd);
}
static void module_exit(void)
{
    py_close();
    py_close();
    py_close();
    py_close();
}

static void view_ops(const char *name, Arg a0)
{
    Rec *r = cpu_open(name);
    ARGS(r, a0, IL("[]"));
    cpu_close();
}
/* aten::as_strided of tensor x (the leaf of every view op) */
static void as_strided_op(Arg x)
{
    Rec *r = cpu_open("aten::as_strided");
    ARGS(r, x, IL("[]"), IL("[]"), NONE());
    cpu_close();
}
/* aten::transpose of tensor x swapping dims d0 and d1 */
static void transpose_dims_op(Arg x, const char *d0, const char *d1)
{
    Rec *r = cpu_open("aten::transpose");
    ARGS(r, x, SC(d0), SC(d1));
    as_strided_op(x);
    cpu_close();
}
/* aten::t of an a x b matrix */
static void transpose_op(int64_t a, int64_t b)
{
    Rec *r = cpu_open("aten::t");
    ARGS(r, F2(a, b));
    transpose_dims_op(F2(a, b), "0", "1");
    cpu_close();
}

static T linear_fwd(int modidx, int64_t rows, int64_t in_f, int64_t out_f, int bias, int64_t *seq)
{
    module_enter("nn.Module: Linear_", modidx, "torch/nn/modules/linear.py(125): forward");
    py_open(BI_LINEAR);
    Rec *r = cpu_open("aten::linear");
    ARGS(r, F3(B, rows / B, in_f), F2(out_f, in_f), bias ? F1(out_f) : NONE());
    transpose_op(out_f, in_f);
    view_ops("aten::view", F3(B, rows / B, in_f));
    *seq = seq_next++;
    r = cpu_open(bias ? "aten::addmm" : "aten::mm");
    r->seq = *seq;
    if (bias)
        ARGS(r, F1(out_f), F2(rows, in_f), F2(in_f, out_f), SC("1"), SC("1"));
    else
        ARGS(r, F2(rows, in_f), F2(in_f, out_f));
    T o = galloc(0, R_ACT, rows * out_f * 4);
    launch_gemm(K_GEMM_TN, rows, out_f, in_f);
    cpu_close();
    view_ops("aten::_unsafe_view", F2(rows, out_f));
    cpu_close();
    py_close();
    module_exit();
    return o;
}

static void layer_norm_fwd(int modidx, T *o, T *m, T *rs, int64_t *seq)
{
    int64_t rows = B * S;
    module_enter("nn.Module: LayerNorm_", modidx,
                 "torch/nn/modules/normalization.py(217): forward");
    py_open("torch/nn/functional.py(2900): layer_norm");
    py_open(BI_LN);
    Rec *r = cpu_open("aten::layer_norm");
    ARGS(r, F3(B, S, H), IL("[2048]"), F1(H), F1(H), SC("1e-05"));
    *seq = seq_next++;
    r = cpu_open("aten::native_layer_norm");
    r->seq = *seq;
    ARGS(r, F3(B, S, H), IL("[2048]"), F1(H), F1(H), SC("1e-05"));
    *o = galloc(0, R_ACT, rows * H * 4);
    *m = galloc(0, R_ACT, rows * 4);
    *rs = galloc(0, R_ACT, rows * 4);
    launch(K_LN_FWD, ew_ns(rows * H * 8), rows, 256, 40, 0);
    cpu_close();
    cpu_close();
    py_close();
    py_close();
    module_exit();
}

static void dropout_fwd(int modidx, int64_t n_el, T *o, T *mask, int64_t *seq)
{
    module_enter("nn.Module: Dropout_", modidx, "torch/nn/modules/dropout.py(70): forward");
    py_open("torch/nn/functional.py(1425): dropout");
    py_open(BI_DROPOUT);
    Rec *r = cpu_open("aten::dropout");
    ARGS(r, F3(B, S, n_el / (B * S)), SC("0.1"), SC("True"));
    *seq = seq_next++;
    r = cpu_open("aten::native_dropout");
    r->seq = *seq;
    ARGS(r, F3(B, S, n_el / (B * S)), SC("0.1"), SC("True"));
    *o = galloc(0, R_ACT, n_el * 4);
    *mask = galloc(0, R_ACT, n_el);
    launch(K_DROPOUT, ew_ns(n_el * 9), n_el / 2048, 256, 32, 0);
    cpu_close();
    cpu_close();
    py_close();
    py_close();
    module_exit();
}

static T add_fwd(int64_t *seq)
{
    *seq = seq_next++;
    Rec *r = cpu_open("aten::add");
    r->seq = *seq;
    ARGS(r, F3(B, S, H), F3(B, S, H), SC("1"));
    T o = galloc(0, R_ACT, B * S * H * 4);
    launch_ew(K_ADD, B * S * H, B * S * H * 12);
    cpu_close();
    return o;
}

static void block_fwd(int i)
{
    LayerActs *a = &la[i];
    int64_t rows = B * S;
    module_enter("nn.Module: Block_", i, "model.py(96): forward");
    layer_norm_fwd(2 * i, &a->ln1o, &a->ln1m, &a->ln1r, &a->s_ln1);
    module_enter("nn.Module: CausalSelfAttention_", i, "model.py(52): forward");
    a->qkv = linear_fwd(4 * i, rows, H, 3 * H, 1, &a->s_qkv);
    py_open("<built-in method split of Tensor object at 0x7f4e1c2b9f30>");
    Rec *r = cpu_open("aten::split");
    ARGS(r, F3(B, S, 3 * H), SC("2048"), SC("2"));
    for (int k = 0; k < 3; k++) {
        r = cpu_open("aten::narrow");
        ARGS(r, F3(B, S, 3 * H), SC("2"), SC("0"), SC("2048"));
        r = cpu_open("aten::slice");
        ARGS(r, F3(B, S, 3 * H), SC("2"), SC("0"), SC("2048"), SC("1"));
        as_strided_op(F3(B, S, 3 * H));
        cpu_close();
        cpu_close();
    }
    cpu_close();
    py_close();
    for (int k = 0; k < 3; k++) {
        py_open("<built-in method view of Tensor object at 0x7f4e1c2ba070>");
        view_ops("aten::view", F3(B, S, H));
        py_close();
        py_open("<built-in method transpose of Tensor object at 0x7f4e1c2ba110>");
        transpose_dims_op(F4(B, S, NHEAD, H / NHEAD), "1", "2");
        py_close();
    }
    py_open(BI_SDPA);
    r = cpu_open("aten::scaled_dot_product_attention");
    ARGS(r, F4(B, NHEAD, S, H / NHEAD), F4(B, NHEAD, S, H / NHEAD), F4(B, NHEAD, S, H / NHEAD),
         NONE(), SC("0."));
    a->s_att = seq_next++;
    r = cpu_open("aten::_scaled_dot_product_efficient_attention");
    r->seq = a->s_att;
    ARGS(r, F4(B, NHEAD, S, H / NHEAD), F4(B, NHEAD, S, H / NHEAD), F4(B, NHEAD, S, H / NHEAD),
         NONE(), SC("True"));
    for (int k = 0; k < 3; k++)
        transpose_dims_op(F4(B, NHEAD, S, H / NHEAD), "1", "2");
    r = cpu_open("aten::_efficient_attention_forward");
    ARGS(r, F4(B, S, NHEAD, H / NHEAD), F4(B, S, NHEAD, H / NHEAD), F4(B, S, NHEAD, H / NHEAD),
         NONE(), NONE());
    r = cpu_open("aten::empty");
    ARGS(r, IL("[]"), SC("6"), SC("0"), NONE(), SC("False"));
    a->att = galloc(0, R_ACT, rows * H * 4);
    cpu_close();
    r = cpu_open("aten::empty");
    ARGS(r, IL("[]"), SC("6"), SC("0"), NONE(), SC("False"));
    a->lse = galloc(0, R_ACT, B * NHEAD * ((S + 31) / 32 * 32) * 4);
    cpu_close();
    runtime_only("cudaFuncSetAttribute", 273, rr(300, 1500));
    launch(K_ATT_FWD, mm_ns(B * NHEAD * S, S, H / NHEAD) * 2 / 3, B * NHEAD * (S / 64), 128, 128,
           65536);
    cpu_close();
    transpose_dims_op(F4(B, S, NHEAD, H / NHEAD), "1", "2");
    cpu_close();
    cpu_close();
    py_close();
    py_open("<built-in method contiguous of Tensor object at 0x7f4e1c2ba2f0>");
    r = cpu_open("aten::contiguous");
    ARGS(r, F4(B, S, NHEAD, H / NHEAD), SC("0"));
    r = cpu_open("aten::clone");
    ARGS(r, F4(B, S, NHEAD, H / NHEAD), SC("0"));
    a->s_cont = seq_next++;
    r->seq = a->s_cont;
    r = cpu_open("aten::empty_like");
    ARGS(r, F4(B, S, NHEAD, H / NHEAD), NONE(), NONE(), NONE(), NONE());
    r = cpu_open("aten::empty_strided");
    ARGS(r, IL("[]"), IL("[]"), SC("6"), SC("0"), NONE());
    a->cont = galloc(0, R_ACT, rows * H * 4);
    cpu_close();
    cpu_close();
    r = cpu_open("aten::copy_");
    ARGS(r, F4(B, S, NHEAD, H / NHEAD), F4(B, S, NHEAD, H / NHEAD), SC("False"));
    launch(K_COPY, ew_ns(rows * H * 8), rows * H / 512, 128, 30, 0);
    cpu_close();
    cpu_close();
    cpu_close();
    py_close();
    py_open("<built-in method view of Tensor object at 0x7f4e1c2ba390>");
    view_ops("aten::view", F4(B, S, NHEAD, H / NHEAD));
    py_close();
    a->proj = linear_fwd(4 * i + 1, rows, H, H, 1, &a->s_proj);
    dropout_fwd(2 * i, rows * H, &a->d1, &a->m1, &a->s_d1);
    module_exit(); /* attention */
    a->add1 = add_fwd(&a->s_add1);
    layer_norm_fwd(2 * i + 1, &a->ln2o, &a->ln2m, &a->ln2r, &a->s_ln2);
    module_enter("nn.Module: MLP_", i, "model.py(78): forward");
    a->fc1 = linear_fwd(4 * i + 2, rows, H, FF, 1, &a->s_fc1);
    module_enter("nn.Module: GELU_", i, "torch/nn/modules/activation.py(734): forward");
    py_open(BI_GELU);
    a->s_gelu = seq_next++;
    r = cpu_open("aten::gelu");
    r->seq = a->s_gelu;
    ARGS(r, F3(B, S, FF), TN("c10::string_view", -1, 0, 0, 0, 0));
    r->a[1].conc = "none";
    a->gelu = galloc(0, R_ACT, rows * FF * 4);
    launch_ew(K_GELU, rows * FF, rows * FF * 8);
    cpu_close();
    py_close();
    module_exit();
    a->fc2 = linear_fwd(4 * i + 3, rows, FF, H, 1, &a->s_fc2);
    dropout_fwd(2 * i + 1, rows * H, &a->d2, &a->m2, &a->s_d2);
    module_exit(); /* mlp */
    a->add2 = add_fwd(&a->s_add2);
    module_exit(); /* block */
}

/* ---------------- backward (autograd thread) ---------------- */
static void eval_open(const char *ev_name, const char *node, int64_t seq)
{
    Rec *r = cpu_open(ev_name);
    r->seq = seq;
    r = cpu_open(node);
    r->seq = seq;
}

static void accumulate_grad(void)
{
    cpu_open("autograd::engine::evaluate_function: torch::autograd::AccumulateGrad");
    Rec *r = cpu_open("torch::autograd::AccumulateGrad");
    ARGS(r, F1(H));
    cpu_open("aten::detach");
    cpu_open("detach");
    cpu_close();
    cpu_close();
    cpu_close();
    cpu_close();
}

static void grad_alloc(int pi)
{
    Param *p = &prm[pi];
    if (p->g.size == 0)
        p->g = galloc_at(0, slot(R_GRAD, pi), numel(p) * 4);
}

/* returns grad input; frees gout and saved output */
static T linear_bwd(T gout, T *saved, int64_t rows, int64_t in_f, int64_t out_f, int pw, int pb,
                    int64_t seq)
{
    eval_open(pb >= 0 ? "autograd::engine::evaluate_function: AddmmBackward0"
                      : "autograd::engine::evaluate_function: MmBackward0",
              pb >= 0 ? "AddmmBackward0" : "MmBackward0", seq);
    transpose_op(in_f, out_f);
    Rec *r = cpu_open("aten::mm");
    ARGS(r, F2(rows, out_f), F2(out_f, in_f));
    T gin = galloc(0, R_BGRAD, rows * in_f * 4);
    launch_gemm(K_GEMM_NN, rows, in_f, out_f);
    cpu_close();
    transpose_op(rows, out_f);
    r = cpu_open("aten::mm");
    ARGS(r, F2(out_f, rows), F2(rows, in_f));
    grad_alloc(pw);
    launch_gemm(K_GEMM_NT, out_f, in_f, rows);
    cpu_close();
    transpose_op(out_f, in_f);
    cpu_close();
    if (pb >= 0) {
        r = cpu_open("aten::sum");
        ARGS(r, F2(rows, out_f), IL("[0]"), SC("True"), NONE());
        grad_alloc(pb);
        launch(K_REDUCE, ew_ns(rows * out_f * 4), out_f / 32, 512, 32, 16);
        cpu_close();
        view_ops("aten::view", F2(1, out_f));
    }
    gfree(&gout);
    gfree(saved);
    cpu_close();
    accumulate_grad();
    if (pb >= 0)
        accumulate_grad();
    return gin;
}

static T ln_bwd(T gout, T *o, T *m, T *rs, int pw, int pb, int64_t seq)
{
    int64_t rows = B * S;
    eval_open("autograd::engine::evaluate_function: NativeLayerNormBackward0",
              "NativeLayerNormBackward0", seq);
    Rec *r = cpu_open("aten::native_layer_norm_backward");
    ARGS(r, F3(B, S, H), F3(B, S, H), IL("[2048]"), F2(B, S), F2(B, S));
    T gin = galloc(0, R_BGRAD, rows * H * 4);
    grad_alloc(pw);
    grad_alloc(pb);
    launch(K_LN_BWD_IN, ew_ns(rows * H * 12), rows, 256, 48, 0);
    launch(K_LN_BWD_GB, ew_ns(rows * H * 8), H / 32, 1024, 64, 8192);
    cpu_close();
    gfree(&gout);
    gfree(m);
    gfree(rs);
    gfree(o);
    cpu_close();
    cpu_close();
    accumulate_grad();
    accumulate_grad();
    return gin;
}

static T dropout_bwd(T gout, T *o, T *mask, int64_t n_el, int64_t seq)
{
    eval_open("autograd::engine::evaluate_function: NativeDropoutBackward0",
              "NativeDropoutBackward0", seq);
    Rec *r = cpu_open("aten::native_dropout_backward");
    ARGS(r, F3(B, S, n_el / (B * S)), TN("bool", 3, B, S, n_el / (B * S), 0),
         SC("1.1111111111111112"));
    T gin = galloc(0, R_BGRAD, n_el * 4);
    launch_ew(K_DROPOUT_BWD, n_el, n_el * 9);
    cpu_close();
    gfree(&gout);
    gfree(mask);
    gfree(o);
    cpu_close();
    cpu_close();
    return gin;
}

static T add_bwd(T gout, T *saved_out, int64_t seq, int accumulate)
{
    eval_open("autograd::engine::evaluate_function: AddBackward0", "AddBackward0", seq);
    cpu_close();
    T g = gout;
    if (accumulate) {
        /* residual branch merge: grads are summed into a fresh buffer */
        Rec *r = cpu_open("aten::add");
        ARGS(r, F3(B, S, H), F3(B, S, H), SC("1"));
        g = galloc(0, R_BGRAD, B * S * H * 4);
        launch_ew(K_ADD, B * S * H, B * S * H * 12);
        cpu_close();
        gfree(&gout);
    }
    gfree(saved_out);
    cpu_close();
    return g;
}

static T block_bwd(int i, T g)
{
    LayerActs *a = &la[i];
    int64_t rows = B * S;
    g = add_bwd(g, &a->add2, a->s_add2, 0);
    g = dropout_bwd(g, &a->d2, &a->m2, rows * H, a->s_d2);
    g = linear_bwd(g, &a->fc2, rows, FF, H, PI(i, FC2W), PI(i, FC2B), a->s_fc2);
    eval_open("autograd::engine::evaluate_function: GeluBackward0", "GeluBackward0", a->s_gelu);
    Rec *r = cpu_open("aten::gelu_backward");
    ARGS(r, F3(B, S, FF), F3(B, S, FF), TN("c10::string_view", -1, 0, 0, 0, 0));
    r->a[2].conc = "none";
    T gg = galloc(0, R_BGRAD, rows * FF * 4);
    launch_ew(K_GELU_BWD, rows * FF, rows * FF * 12);
    cpu_close();
    gfree(&g);
    gfree(&a->gelu);
    cpu_close();
    cpu_close();
    g = linear_bwd(gg, &a->fc1, rows, H, FF, PI(i, FC1W), PI(i, FC1B), a->s_fc1);
    g = ln_bwd(g, &a->ln2o, &a->ln2m, &a->ln2r, PI(i, LN2W), PI(i, LN2B), a->s_ln2);
    g = add_bwd(g, &a->add1, a->s_add1, 1);
    g = dropout_bwd(g, &a->d1, &a->m1, rows * H, a->s_d1);
    g = linear_bwd(g, &a->proj, rows, H, H, PI(i, PROJW), PI(i, PROJB), a->s_proj);
    /* clone (contiguous) backward: grad passes through */
    eval_open("autograd::engine::evaluate_function: CloneBackward0", "CloneBackward0", a->s_cont);
    cpu_close();
    gfree(&a->cont);
    cpu_close();
    /* attention backward */
    eval_open("autograd::engine::evaluate_function: ScaledDotProductEfficientAttentionBackward0",
              "ScaledDotProductEfficientAttentionBackward0", a->s_att);
    r = cpu_open("aten::_scaled_dot_product_efficient_attention_backward");
    ARGS(r, F4(B, NHEAD, S, H / NHEAD), F4(B, NHEAD, S, H / NHEAD), F4(B, NHEAD, S, H / NHEAD),
         NONE(), F4(B, NHEAD, S, H / NHEAD));
    r = cpu_open("aten::_efficient_attention_backward");
    ARGS(r, F4(B, S, NHEAD, H / NHEAD), F4(B, S, NHEAD, H / NHEAD), F4(B, S, NHEAD, H / NHEAD),
         NONE(), F4(B, S, NHEAD, H / NHEAD));
    T gqkv = galloc(0, R_BGRAD, rows * 3 * H * 4);
    r = cpu_open("aten::empty");
    ARGS(r, IL("[]"), SC("6"), SC("0"), NONE(), SC("False"));
    T delta = galloc(0, R_TMP, B * NHEAD * S * 4);
    cpu_close();
    r = cpu_open("aten::zeros");
    ARGS(r, IL("[]"), SC("6"), SC("0"), NONE(), SC("False"));
    memset_op(B * NHEAD * S * 4);
    cpu_close();
    runtime_only("cudaFuncSetAttribute", 273, rr(300, 1500));
    launch(K_ATT_BWD, mm_ns(B * NHEAD * S, S, H / NHEAD) * 5 / 3, B * NHEAD * (S / 64), 128, 255,
           98304);
    gfree(&delta);
    cpu_close();
    cpu_close();
    gfree(&g);
    gfree(&a->att);
    gfree(&a->lse);
    cpu_close();
    cpu_close();
    /* split backward is a view into gqkv (efficient attention writes packed grads) */
    g = linear_bwd(gqkv, &a->qkv, rows, H, 3 * H, PI(i, QKVW), PI(i, QKVB), a->s_qkv);
    g = ln_bwd(g, &a->ln1o, &a->ln1m, &a->ln1r, PI(i, LN1W), PI(i, LN1B), a->s_ln1);
    return g;
}

/* ---------------- optimizer ---------------- */
static int opt_init_done;

static void foreach_op(const char *pyname, const char *op, int k, int nlists, int alloc)
{
    py_open(pyname);
    Rec *r = cpu_open(op);
    if (nlists == 1)
        ARGS(r, TL(), SC("0.999"));
    else if (nlists == 2)
        ARGS(r, TL(), TL(), SC("0.1"));
    else
        ARGS(r, TL(), TL(), TL(), IL("[]"));
    int64_t tot = 0;
    for (int p = 0; p < NPARAM; p++) {
        tot += numel(&prm[p]);
        if (alloc)
            tmpl[p] = galloc(0, R_TMP, numel(&prm[p]) * 4);
    }
    int nk = (int)(tot / (65536 * 320)) + (int)rr(0, 4);
    for (int i = 0; i < nk; i++)
        launch(k, ew_ns(tot / nk * 4 * (nlists + 1)), 320, 512, 32 + 8 * nlists, 0);
    cpu_close();
    py_close();
}

/* a run of foreach ops: "<built-in method M ...>" calling aten::M */
typedef struct {
    const char *pyname, *op;
    int k, nlists, alloc;
} ForeachOp;
#define FOREACH(m, k, nlists, alloc)                                                             \
    {                                                                                            \
        "<built-in method " m " of type object at 0x7f5c3e8b2c40>", "aten::" m, k, nlists, alloc \
    }
static const ForeachOp ADAM_MOMENTS[] = {
    FOREACH("_foreach_mul_", K_FE_MUL, 1, 0),
    FOREACH("_foreach_lerp_", K_FE_LERP, 2, 0),
    FOREACH("_foreach_mul_", K_FE_MUL, 1, 0),
    FOREACH("_foreach_addcmul_", K_FE_ADDCMUL, 3, 0),
};
static const ForeachOp ADAM_UPDATE[] = {
    FOREACH("_foreach_sqrt", K_FE_SQRT, 1, 1),
    FOREACH("_foreach_div_", K_FE_DIV, 1, 0),
    FOREACH("_foreach_add_", K_FE_ADD, 1, 0),
    FOREACH("_foreach_addcdiv_", K_FE_ADDCDIV, 3, 0),
};
#undef FOREACH
static void foreach_ops(const ForeachOp *ops, size_t n)
{
    for (size_t i = 0; i < n; i++)
        foreach_op(ops[i].pyname, ops[i].op, ops[i].k, ops[i].nlists, ops[i].alloc);
}

static void optimizer_step(void)
{
    ann_open("Optimizer.step#AdamW.step", -1);
    py_open("torch/optim/optimizer.py(485): wrapper");
    py_open("torch/optim/optimizer.py(79): _use_grad");
    py_open("torch/optim/adamw.py(209): step");
    if (!opt_init_done) {
        py_open("torch/optim/adamw.py(132): _init_group");
        for (int i = 0; i < NPARAM; i++) {
            Param *p = &prm[i];
            Rec *r = cpu_open("aten::zeros");
            ARGS(r, IL("[]"), SC("6"), NONE(), SC("cpu"), SC("False"));
            r = cpu_open("aten::empty");
            ARGS(r, IL("[]"), SC("6"), NONE(), SC("cpu"), SC("False"));
            p->step = calloc_cpu(4);
            cpu_close();
            r = cpu_open("aten::zero_");
            ARGS(r, TN("float", 0, 0, 0, 0, 0));
            cpu_open("aten::fill_");
            cpu_close();
            cpu_close();
            cpu_close();
            for (int k = 0; k < 2; k++) {
                r = cpu_open("aten::zeros_like");
                ARGS(r, param_arg(p), SC("6"), SC("0"), NONE(), NONE());
                r = cpu_open("aten::empty_like");
                ARGS(r, param_arg(p), SC("6"), SC("0"), NONE(), NONE());
                r = cpu_open("aten::empty_strided");
                ARGS(r, IL("[]"), IL("[]"), SC("6"), SC("0"), NONE());
                if (k == 0)
                    p->m = galloc_at(0, slot(R_OPT1, i), numel(p) * 4);
                else
                    p->v = galloc_at(0, slot(R_OPT2, i), numel(p) * 4);
                cpu_close();
                cpu_close();
                r = cpu_open("aten::zero_");
                ARGS(r, param_arg(p));
                r = cpu_open("aten::fill_");
                ARGS(r, param_arg(p), SC("0"));
                launch_ew(K_FILL, numel(p), numel(p) * 4);
                cpu_close();
                cpu_close();
                cpu_close();
            }
        }
        py_close();
        opt_init_done = 1;
    }
    py_open("torch/optim/adamw.py(350): adamw");
    py_open("torch/optim/adamw.py(550): _multi_tensor_adamw");
    py_open("torch/optim/optimizer.py(412): _group_tensors_by_device_and_dtype");
    cpu_open("aten::_to_copy");
    cpu_close();
    py_close();
    Rec *r;
    /* step += 1 on cpu step tensors */
    py_open("<built-in method _foreach_add_ of type object at 0x7f5c3e8b2c40>");
    r = cpu_open("aten::_foreach_add_");
    ARGS(r, TL(), SC("1"));
    cpu_close();
    py_close();
    foreach_ops(ADAM_MOMENTS, sizeof ADAM_MOMENTS / sizeof ADAM_MOMENTS[0]);
    /* bias corrections computed from cpu step tensors: small cpu temporaries */
    py_open("torch/optim/adamw.py(620): <listcomp>");
    for (int i = 0; i < 4; i++) {
        r = cpu_open("aten::pow");
        ARGS(r, SC("0.9"), TN("float", 0, 0, 0, 0, 0));
        T c = calloc_cpu(4);
        cpu_close();
        r = cpu_open("aten::rsub");
        ARGS(r, TN("float", 0, 0, 0, 0, 0), SC("1"), SC("1"));
        T c2 = calloc_cpu(4);
        gfree(&c);
        cpu_close();
        r = cpu_open("aten::item");
        cpu_open("aten::_local_scalar_dense");
        cpu_close();
        gfree(&c2);
        cpu_close();
    }
    py_close();
    foreach_ops(ADAM_UPDATE, sizeof ADAM_UPDATE / sizeof ADAM_UPDATE[0]);
    for (int p = NPARAM - 1; p >= 0; p--)
        gfree(&tmpl[p]);
    py_close();
    py_close();
    py_close();
    py_close();
    py_close();
    cpu_close();
}

/* ---------------- one training step ---------------- */
static T to_device(int dev, int64_t bytes, const char *ty, int64_t d0, int64_t d1)
{
    py_open("<built-in method to of Tensor object at 0x7f4e1c2bb6a0>");
    Rec *r = cpu_open("aten::to");
    ARGS(r, TN(ty, 2, d0, d1, 0, 0), NONE(), SC("4"), SC("False"), SC("False"));
    r = cpu_open("aten::_to_copy");
    ARGS(r, TN(ty, 2, d0, d1, 0, 0), SC("4"), NONE(), dev ? SC("cuda:1") : SC("cuda:0"), NONE());
    r = cpu_open("aten::empty_strided");
    ARGS(r, IL("[]"), IL("[]"), SC("4"), NONE(), NONE());
    T t = galloc(dev, R_INPUT, bytes);
    cpu_close();
    r = cpu_open("aten::copy_");
    ARGS(r, TN(ty, 2, d0, d1, 0, 0), TN(ty, 2, d0, d1, 0, 0), SC("False"));
    memcpy_op("Memcpy HtoD (Pageable -> Device)", dev, bytes, 0);
    cpu_close();
    cpu_close();
    cpu_close();
    py_close();
    return t;
}

static void train_step(void)
{
    int64_t rows;
    S = 64 * rr(12, 16);
    rows = B * S;
    cur_thr = TH_MAIN;
    step_gpu_first = -1;
    ann_open("ProfilerStep#", (int)step_no);
    py_open("torch/profiler/profiler.py(793): step");
    Rec *r = cpu_open("aten::empty");
    ARGS(r, IL("[]"), NONE(), NONE(), NONE(), NONE());
    cpu_close();
    py_close();
    py_open("train.py(141): train_step");

    /* data loading: collate on cpu */
    py_open("torch/utils/data/dataloader.py(701): __next__");
    py_open("torch/utils/data/_utils/collate.py(157): collate");
    T nb[2];
    for (int k = 0; k < 2; k++) {
        py_open("<built-in method stack of type object at 0x7f5c3e8b2c40>");
        r = cpu_open("aten::stack");
        ARGS(r, TL(), SC("0"));
        r = cpu_open("aten::cat");
        ARGS(r, TL(), SC("0"));
        nb[k] = calloc_cpu(rows * 8);
        cpu_close();
        cpu_close();
        py_close();
    }
    py_close();
    py_close();
    T ni = to_device(0, rows * 8, "long int", B, S);
    T nl = to_device(0, rows * 8, "long int", B, S);
    /* previous batch (cpu + device) is released when python rebinds names */
    gfree(&in_ids);
    gfree(&in_lbl);
    gfree(&cpu_batch[0]);
    gfree(&cpu_batch[1]);
    in_ids = ni;
    in_lbl = nl;
    cpu_batch[0] = nb[0];
    cpu_batch[1] = nb[1];
    /* the allocator's input double buffer: flip halves */
    reg_off[0][R_INPUT] = (step_no & 1) ? 0 : 64 * MiB;

    /* zero_grad(set_to_none=True) */
    ann_open("Optimizer.zero_grad#AdamW.zero_grad", -1);
    py_open("torch/optim/optimizer.py(958): zero_grad");
    if (have_grads)
        for (int p = 0; p < NPARAM; p++)
            gfree(&prm[p].g);
    py_close();
    cpu_close();

    /* forward */
    reg_off[0][R_ACT] = 0;
    mod_counter = 0;
    module_enter("nn.Module: GPT_", 0, "model.py(181): forward");
    module_enter("nn.Module: Embedding_", 0, "torch/nn/modules/sparse.py(190): forward");
    py_open("torch/nn/functional.py(2551): embedding");
    py_open("<built-in method embedding of type object at 0x7f5c3e8b2c40>");
    r = cpu_open("aten::embedding");
    s_emb = seq_next++;
    r->seq = s_emb;
    ARGS(r, F2(V, H), L2(B, S), SC("-1"), SC("False"), SC("False"));
    r = cpu_open("aten::reshape");
    ARGS(r, L2(B, S), IL("[-1]"));
    view_ops("aten::view", L2(B, S));
    cpu_close();
    r = cpu_open("aten::index_select");
    ARGS(r, F2(V, H), SC("0"), TN("long int", 1, rows, 0, 0, 0));
    emb_o = galloc(0, R_ACT, rows * H * 4);
    launch(K_INDEX_SELECT, ew_ns(rows * H * 8), rows * H / 512, 128, 22, 0);
    cpu_close();
    view_ops("aten::view", F2(rows, H));
    cpu_close();
    py_close();
    py_close();
    module_exit();
    dropout_fwd((int)(2 * L), rows * H, &emb_d, &emb_m, &s_embd);
    for (int i = 0; i < L; i++)
        block_fwd(i);
    layer_norm_fwd(2 * L, &lnf_o, &lnf_m, &lnf_r, &s_lnf);
    logits = linear_fwd(4 * L, rows, H, V, 0, &s_head);
    module_exit();

    /* slow leak: keep a sample of the final hidden states every step */
    py_open("train.py(153): train_step");
    py_open("<built-in method clone of Tensor object at 0x7f4e1c2bb920>");
    int64_t kk = rr(32, 96);
    r = cpu_open("aten::clone");
    ARGS(r, F3(B, kk, H), SC("0"));
    r = cpu_open("aten::empty_like");
    ARGS(r, F3(B, kk, H), NONE(), NONE(), NONE(), NONE());
    (void)galloc(0, R_LEAK, B * kk * H * 4);
    cpu_close();
    r = cpu_open("aten::copy_");
    ARGS(r, F3(B, kk, H), F3(B, kk, H), SC("False"));
    launch(K_COPY, ew_ns(B * kk * H * 8), B * kk * H / 512, 128, 30, 0);
    cpu_close();
    cpu_close();
    py_close();
    py_close();

    /* loss */
    py_open("torch/nn/functional.py(3479): cross_entropy");
    py_open("<built-in function cross_entropy_loss>");
    r = cpu_open("aten::cross_entropy_loss");
    ARGS(r, F2(rows, V), TN("long int", 1, rows, 0, 0, 0), NONE(), SC("1"), SC("-100"));
    r = cpu_open("aten::log_softmax");
    ARGS(r, F2(rows, V), SC("1"), NONE());
    s_lsm = seq_next++;
    r = cpu_open("aten::_log_softmax");
    r->seq = s_lsm;
    ARGS(r, F2(rows, V), SC("1"), SC("False"));
    logp = galloc(0, R_ACT, rows * V * 4);
    launch(K_LOGSOFTMAX, ew_ns(rows * V * 8), rows, 1024, 40, 0);
    cpu_close();
    cpu_close();
    r = cpu_open("aten::nll_loss_nd");
    ARGS(r, F2(rows, V), TN("long int", 1, rows, 0, 0, 0), NONE(), SC("1"), SC("-100"));
    r = cpu_open("aten::nll_loss");
    ARGS(r, F2(rows, V), TN("long int", 1, rows, 0, 0, 0), NONE(), SC("1"), SC("-100"));
    s_nll = seq_next++;
    r = cpu_open("aten::nll_loss_forward");
    r->seq = s_nll;
    ARGS(r, F2(rows, V), TN("long int", 1, rows, 0, 0, 0), NONE(), SC("1"), SC("-100"));
    nll_o = galloc(0, R_ACT, 4);
    nll_w = galloc(0, R_ACT, 4);
    launch(K_NLL, ew_ns(rows * 8), 1, 32, 30, 0);
    cpu_close();
    cpu_close();
    cpu_close();
    cpu_close();
    py_close();
    py_close();

    /* backward: main thread blocks inside run_backward */
    py_open("torch/_tensor.py(626): backward");
    py_open("torch/autograd/__init__.py(347): backward");
    py_open("torch/autograd/graph.py(823): _engine_run_backward");
    py_open("<built-in method run_backward of torch._C._EngineBase object at 0x7f5c2d4e1a80>");
    cur_thr = TH_BWD;
    adv(5000, 20000);
    eval_open("autograd::engine::evaluate_function: torch::autograd::GraphRoot",
              "torch::autograd::GraphRoot", -1);
    cpu_close();
    cpu_close();
    eval_open("autograd::engine::evaluate_function: NllLossBackward0", "NllLossBackward0", s_nll);
    r = cpu_open("aten::nll_loss_backward");
    ARGS(r, TN("float", 0, 0, 0, 0, 0), F2(rows, V), TN("long int", 1, rows, 0, 0, 0), NONE(),
         SC("1"));
    T g = galloc(0, R_BGRAD, rows * V * 4);
    r = cpu_open("aten::zero_");
    ARGS(r, F2(rows, V));
    r = cpu_open("aten::fill_");
    ARGS(r, F2(rows, V), SC("0"));
    memset_op(rows * V * 4);
    cpu_close();
    cpu_close();
    launch(K_NLL_BWD, ew_ns(rows * 8), rows / 128 + 1, 128, 24, 0);
    cpu_close();
    gfree(&nll_w);
    gfree(&nll_o);
    cpu_close();
    cpu_close();
    eval_open("autograd::engine::evaluate_function: LogSoftmaxBackward0", "LogSoftmaxBackward0",
              s_lsm);
    r = cpu_open("aten::_log_softmax_backward_data");
    ARGS(r, F2(rows, V), F2(rows, V), SC("1"), SC("6"));
    T g2 = galloc(0, R_BGRAD, rows * V * 4);
    launch(K_LOGSOFTMAX_BWD, ew_ns(rows * V * 12), rows, 1024, 40, 0);
    cpu_close();
    gfree(&g);
    gfree(&logp);
    cpu_close();
    cpu_close();
    g = linear_bwd(g2, &logits, rows, H, V, P_HEAD, -1, s_head);
    g = ln_bwd(g, &lnf_o, &lnf_m, &lnf_r, P_LNFW, P_LNFB, s_lnf);
    for (int i = (int)L - 1; i >= 0; i--)
        g = block_bwd(i, g);
    g = dropout_bwd(g, &emb_d, &emb_m, rows * H, s_embd);
    eval_open("autograd::engine::evaluate_function: EmbeddingBackward0", "EmbeddingBackward0",
              s_emb);
    r = cpu_open("aten::embedding_backward");
    ARGS(r, F3(B, S, H), L2(B, S), SC("50304"), SC("-1"), SC("False"));
    r = cpu_open("aten::embedding_dense_backward");
    ARGS(r, F3(B, S, H), L2(B, S), SC("50304"), SC("-1"), SC("False"));
    T srt = galloc(0, R_TMP, rows * 8);
    T srt2 = galloc(0, R_TMP, rows * 8);
    launch(K_SORT, ew_ns(rows * 32), rows / 2048 + 1, 512, 64, 30000);
    launch(K_SORT, ew_ns(rows * 32), rows / 2048 + 1, 512, 64, 30000);
    r = cpu_open("aten::zeros");
    ARGS(r, IL("[]"), SC("6"), SC("0"), NONE(), SC("False"));
    grad_alloc(P_WTE);
    memset_op(numel(&prm[P_WTE]) * 4);
    cpu_close();
    launch(K_EMB_BWD, ew_ns(rows * H * 8), rows / 4, 1024, 38, 0);
    gfree(&srt2);
    gfree(&srt);
    cpu_close();
    cpu_close();
    gfree(&g);
    gfree(&emb_o);
    cpu_close();
    cpu_close();
    accumulate_grad();
    adv(3000, 15000);
    cur_thr = TH_MAIN;
    have_grads = 1;
    py_close();
    py_close();
    py_close();
    py_close();

    optimizer_step();

    /* logging: loss.item() syncs, a metric goes to cuda:1 */
    py_open("train.py(160): train_step");
    py_open("<built-in method item of Tensor object at 0x7f4e1c2bbb00>");
    r = cpu_open("aten::item");
    ARGS(r, TN("float", 0, 0, 0, 0, 0));
    r = cpu_open("aten::_local_scalar_dense");
    ARGS(r, TN("float", 0, 0, 0, 0, 0));
    T ci = calloc_cpu(4);
    memcpy_op("Memcpy DtoH (Device -> Pageable)", 0, 4, 1);
    stream_sync();
    gfree(&ci);
    cpu_close();
    cpu_close();
    py_close();
    T nd1 = to_device(1, 2 * MiB, "float", 512, 1024);
    gfree(&dev1_t);
    dev1_t = nd1;
    reg_off[1][R_INPUT] = (step_no & 1) ? 0 : 64 * MiB;
    py_close();

    py_close();  /* train_step */
    cpu_close(); /* ProfilerStep */

    if (fmt == F2024 && step_gpu_first >= 0) {
        GpuRec *ga = gpu_new(GK_ANN);
        ga->name = "ProfilerStep#";
        ga->sfx = (int32_t)step_no;
        ga->k_ts = step_gpu_first - 1;
        ga->k_dur = step_gpu_last - step_gpu_first + 2;
        ga->ext = 0;
        for (size_t i = 0; i < ncrec; i++)
            if (crec[i].kind == RK_ANN && crec[i].sfx == (int32_t)step_no) {
                ga->ext = crec[i].id;
                break;
            }
        corr_next--; /* annotations do not consume a correlation id */
    }
    /* idle gap between steps (dataloader, python) */
    adv(200000, 900000);
    step_no++;
}

/* model.to(device) inside the profiling window: parameters allocated once */
static void prologue(void)
{
    cur_thr = TH_MAIN;
    py_open("torch/nn/modules/module.py(1343): to");
    py_open("torch/nn/modules/module.py(930): _apply");
    for (int i = 0; i < NPARAM; i++) {
        Param *p = &prm[i];
        py_open("torch/nn/modules/module.py(1329): convert");
        py_open("<built-in method to of Tensor object at 0x7f4e1c2bb6a0>");
        Rec *r = cpu_open("aten::to");
        ARGS(r, param_arg(p), NONE(), SC("6"), SC("False"), SC("False"));
        r = cpu_open("aten::_to_copy");
        ARGS(r, param_arg(p), SC("6"), NONE(), SC("cuda:0"), NONE());
        r = cpu_open("aten::empty_strided");
        ARGS(r, IL("[]"), IL("[]"), SC("6"), NONE(), SC("cuda:0"));
        p->p = galloc_at(0, slot(R_PARAM, i), numel(p) * 4);
        cpu_close();
        r = cpu_open("aten::copy_");
        ARGS(r, param_arg(p), param_arg(p), SC("False"));
        memcpy_op("Memcpy HtoD (Pageable -> Device)", 0, numel(p) * 4, 0);
        cpu_close();
        cpu_close();
        cpu_close();
        py_close();
        py_close();
    }
    py_close();
    py_close();
    adv(500000, 2000000);
}

/* ------------------------------------------------------------------ */
/* emitters                                                             */
/* ------------------------------------------------------------------ */
enum { SEC_CPU = 1, SEC_MEM = 2, SEC_PY = 4, SEC_GPU = 8, SEC_ALL = 15 };
static int sec_mask;
static int64_t ev_cpu, ev_mem, ev_py; /* Ev Idx counters per section */
static int64_t base_mem, base_py;     /* Ev Idx offsets */
static uint64_t n_events, n_mem_events;

static void ev_begin(void)
{
    oreserve();
    W("\n  {");
    n_events++;
}
/* closes the args object and the event */
static void ev_end(void)
{
    W("\n    }\n  },");
}

static void w_qstr(const char *s)
{
    ob[on++] = '"';
    ws(s);
    ob[on++] = '"';
}

static void w_name(const char *name, int sfx)
{
    ws(name);
    if (sfx >= 0)
        wi(sfx);
}

static const int64_t STREAM_TID = 7; /* the GPU stream every kernel runs on */

static int64_t thread_tid(int thr)
{
    return thr == TH_MAIN ? tid_main : tid_bwd;
}

/* a tid; quoted tids of GPU stream 7 read "stream 7" */
static void w_tid(int64_t pid, int64_t tid, int quoted)
{
    if (!quoted) {
        wi(tid);
        return;
    }
    ob[on++] = '"';
    if (tid == STREAM_TID && pid < 2)
        W("stream 7");
    else
        wi(tid);
    ob[on++] = '"';
}

/* "[v0, v1, ...]" */
static void w_int_list(const int64_t *v, int n)
{
    ob[on++] = '[';
    for (int i = 0; i < n; i++) {
        if (i)
            W(", ");
        wi(v[i]);
    }
    ob[on++] = ']';
}
static void w_dim3(const int32_t v[3])
{
    const int64_t w[3] = {v[0], v[1], v[2]};
    w_int_list(w, 3);
}

/* per-input writers for the shape lists of an op */
typedef void (*ArgWriter)(const Arg *a);

static void w_dims(const Arg *a)
{
    w_int_list(a->d, a->nd < 0 ? 0 : a->nd);
}
static void w_strides(const Arg *a)
{
    int64_t st[4] = {0, 0, 0, 0};
    int64_t s = 1;
    for (int i = a->nd - 1; i >= 0; i--) {
        st[i] = s;
        s *= a->d[i];
    }
    w_int_list(st, a->nd < 0 ? 0 : a->nd);
}
static void w_type(const Arg *a)
{
    w_qstr(a->type);
}
static void w_conc(const Arg *a)
{
    w_qstr(a->conc);
}

/* "[item(input 0), item(input 1), ...]" */
static void w_arg_list(const Rec *r, ArgWriter item)
{
    ob[on++] = '[';
    for (int i = 0; i < r->na; i++) {
        if (i)
            W(", ");
        item(&r->a[i]);
    }
    ob[on++] = ']';
}

static void w_shapes_2024(const Rec *r)
{
    W("\"Concrete Inputs\": ");
    w_arg_list(r, w_conc);
    W(", \"Input type\": ");
    w_arg_list(r, w_type);
    W(", \"Input Strides\": ");
    w_arg_list(r, w_strides);
    W(", \"Input Dims\": ");
    w_arg_list(r, w_dims);
    W(", ");
}

/* lead, ["Fwd thread id": 1, ]"Sequence number": N, trail -- if the op has one */
static void w_seq(const Rec *r, const char *lead, const char *trail)
{
    if (r->seq < 0)
        return;
    ws(lead);
    if (r->bwd)
        W("\"Fwd thread id\": 1, ");
    W("\"Sequence number\": ");
    wi(r->seq);
    ws(trail);
}

/* "External id": N, -- for GPU-side events that have one */
static void w_ext_id(int64_t ext)
{
    if (ext) {
        W("\"External id\": ");
        wi(ext);
        W(",\n      ");
    }
}

/* opens a complete ("ph": "X") event, up to the first key of its args */
static void x_begin(const char *cat, const char *name, int sfx, int64_t pid, int64_t tid,
                    int64_t ts, int64_t dur)
{
    ev_begin();
    W("\n    \"ph\": \"X\", \"cat\": \"");
    ws(cat);
    if (fmt == F2021)
        W("\", \n    \"name\": \"");
    else
        W("\", \"name\": \"");
    w_name(name, sfx);
    W("\", \"pid\": ");
    wi(pid);
    W(", \"tid\": ");
    w_tid(pid, tid, fmt == F2021);
    W(",\n    \"ts\": ");
    wt(ts);
    W(", \"dur\": ");
    wt(dur);
    W(",\n    \"args\": {\n      ");
}

static void w_call_stack(const Rec *r)
{
    W("\"Call stack\": \"");
    int n = 0;
    for (int i = 0; i < r->ncs; i++) {
        const char *f = r->cs[i];
        if (!f)
            continue;
        if (n++)
            ob[on++] = ';';
        if (strncmp(f, "torch/", 6) == 0)
            W("/opt/conda/lib/python3.8/site-packages/");
        ws(f);
    }
    ob[on++] = '"';
}

static void emit_cpu_2021(const Rec *r)
{
    x_begin("Operator", r->name, r->sfx, pid_cpu, thread_tid(r->thr), r->ts, r->dur);
    W("\"Device\": ");
    wi(pid_cpu);
    W(", \"External id\": ");
    wi(r->id);
    W(",\n      \"Trace name\": \"PyTorch Profiler\", \"Trace iteration\": 0 ");
    const char *sep = ",\n      "; /* the first optional key starts a new line */
    if (r->na) {
        ws(sep);
        W("\"Input Dims\": ");
        w_arg_list(r, w_dims);
        sep = ", ";
    }
    if (r->ncs) {
        ws(sep);
        w_call_stack(r);
        sep = ", ";
    }
    if (r->na) {
        W(", \"Input type\": ");
        w_arg_list(r, w_type);
    }
    w_seq(r, sep, "");
    ev_end();
}

static void emit_cpu(const Rec *r)
{
    if (fmt == F2021) {
        emit_cpu_2021(r);
        return;
    }
    x_begin(r->kind == RK_ANN ? "user_annotation" : "cpu_op", r->name, r->sfx, pid_cpu,
            thread_tid(r->thr), r->ts, r->dur);
    W("\"External id\": ");
    wi(r->id);
    ob[on++] = ',';
    if (fmt == F2024) {
        W("\"Record function id\": 0, ");
        w_seq(r, "", ", ");
        if (r->na)
            w_shapes_2024(r);
        W("\"Ev Idx\": ");
        wi(ev_cpu++);
    } else {
        W("\"Ev Idx\": ");
        wi(ev_cpu++);
        w_seq(r, ", ", "");
    }
    ev_end();
}

static void emit_py_raw(const char *name, int sfx, int64_t ts, int64_t dur, int64_t id,
                        int64_t parent, int mod)
{
    x_begin("python_function", name, sfx, pid_cpu, tid_main, ts, dur);
    W("\"Python parent id\": ");
    if (parent < 0)
        W("null");
    else
        wi(parent);
    W(", \"Python id\": ");
    wi(id);
    if (mod >= 0) {
        W(", \"Python module id\": ");
        wi(mod);
    }
    W(", \"Ev Idx\": ");
    wi(base_py + ev_py++);
    ev_end();
}

/* the args of a [memory] event: 2022 writes them in this order, 2024 in
 * reverse, 2021 only device type, device id and bytes */
enum { MF_EV_IDX, MF_DEV_TYPE, MF_DEV_ID, MF_ADDR, MF_BYTES, MF_TOT_A, MF_TOT_R, MF_COUNT };
static const Lit MEM_KEYS[MF_COUNT] = {
    LIT("\"Ev Idx\": "),         LIT("\"Device Type\": "), LIT("\"Device Id\": "),
    LIT("\"Addr\": "),           LIT("\"Bytes\": "),       LIT("\"Total Allocated\": "),
    LIT("\"Total Reserved\": "),
};
static const uint8_t MEM_ORDER_2021[] = {MF_DEV_TYPE, MF_DEV_ID, MF_BYTES};
static const uint8_t MEM_ORDER_2022[] = {MF_EV_IDX, MF_DEV_TYPE, MF_DEV_ID, MF_ADDR,
                                         MF_BYTES,  MF_TOT_A,    MF_TOT_R};
static const uint8_t MEM_ORDER_2024[] = {MF_TOT_R,  MF_TOT_A,    MF_BYTES, MF_ADDR,
                                         MF_DEV_ID, MF_DEV_TYPE, MF_EV_IDX};

static void emit_mem(const MemRec *m)
{
    ev_begin();
    n_mem_events++;
    if (fmt == F2021) {
        W("\n    \"ph\": \"i\", \"s\": \"t\", \"name\": \"[memory]\",\n    \"pid\": ");
    } else {
        W("\n    \"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", \"name\": "
          "\"[memory]\",\n    \"pid\": ");
    }
    wi(pid_cpu);
    W(", \"tid\": ");
    w_tid(pid_cpu, thread_tid(m->thr), 0);
    W(",\n    \"ts\": ");
    wt(m->ts);
    W(",\n    \"args\": {\n      ");
    int64_t v[MF_COUNT];
    v[MF_EV_IDX] = fmt == F2021 ? 0 : base_mem + ev_mem++;
    v[MF_DEV_TYPE] = m->dev >= 0 ? 1 : 0;
    v[MF_DEV_ID] = m->dev >= 0 ? m->dev : -1;
    v[MF_ADDR] = (int64_t)m->addr; /* user-space addresses stay below 2^63 */
    v[MF_BYTES] = m->bytes;
    v[MF_TOT_A] = m->tot_a;
    v[MF_TOT_R] = m->tot_r;
    const uint8_t *order = fmt == F2021   ? MEM_ORDER_2021
                           : fmt == F2022 ? MEM_ORDER_2022
                                          : MEM_ORDER_2024;
    size_t n = fmt == F2021 ? sizeof MEM_ORDER_2021 : MF_COUNT;
    for (size_t i = 0; i < n; i++) {
        if (i)
            W(", ");
        wlit(&MEM_KEYS[order[i]]);
        wi(v[order[i]]);
    }
    ev_end();
}

static void emit_flow(int start, const GpuRec *g)
{
    int64_t pid = start ? pid_cpu : g->dev;
    ev_begin();
    W("\n    \"ph\": \"");
    ob[on++] = start ? 's' : 'f';
    W("\", \"id\": ");
    wi(g->corr);
    W(", \"pid\": ");
    wi(pid);
    W(", \"tid\": ");
    if (start)
        w_tid(pid, thread_tid(g->thr), 0);
    else
        w_tid(pid, STREAM_TID, fmt == F2021);
    W(", \"ts\": ");
    wt(start ? g->rt_ts : g->k_ts);
    if (fmt == F2021)
        W(",\n    \"cat\": \"async\", \"name\": \"launch\"");
    else
        W(",\n    \"cat\": \"ac2g\", \"name\": \"ac2g\"");
    if (!start)
        W(", \"bp\": \"e\"");
    W("\n  },");
}

/* "correlation": N, and in 2021 sep "external id": N */
static void w_corr(const GpuRec *g, const char *sep)
{
    W("\"correlation\": ");
    wi(g->corr);
    if (fmt == F2021) {
        ws(sep);
        W("\"external id\": ");
        wi(g->ext);
    }
}

static void emit_runtime(const GpuRec *g)
{
    x_begin(fmt == F2021 ? "Runtime" : "cuda_runtime", g->rtname, -1, pid_cpu, thread_tid(g->thr),
            g->rt_ts, g->rt_dur);
    if (fmt != F2021)
        w_ext_id(g->ext);
    W("\"cbid\": ");
    wi(g->cbid);
    W(", ");
    w_corr(g, ",\n      ");
    if (fmt == F2021) {
        W(", \"external ts\": ");
        wt(g->ext_ts);
    }
    ev_end();
}

/* a kernel, memcpy or memset event up to its first own arg */
static void emit_gpu_head(const GpuRec *g, const char *cat2021, const char *cat)
{
    x_begin(fmt == F2021 ? cat2021 : cat, g->name, -1, g->dev, STREAM_TID, g->k_ts, g->k_dur);
    if (fmt != F2021)
        w_ext_id(g->ext);
}

/* "device" ... "correlation" (2021: and "external id") of a GPU activity */
static void w_gpu_ids(const GpuRec *g)
{
    W("\"device\": ");
    wi(g->dev);
    W(", \"context\": 1,\n      \"stream\": 7, ");
    w_corr(g, ", ");
}

static void emit_kernel(const GpuRec *g)
{
    emit_gpu_head(g, "Kernel", "kernel");
    W("\"queued\": 0, ");
    w_gpu_ids(g);
    W(",\n      \"registers per thread\": ");
    wi(g->regs);
    W(",\n      \"shared memory\": ");
    wi(g->smem);
    double bps = (double)g->grid[0] * g->grid[1] * g->grid[2] / NUM_SMS;
    double wps = bps * ((g->block[0] + 31) / 32);
    W(",\n      \"blocks per SM\": ");
    wd("%.6f", bps);
    W(",\n      \"warps per SM\": ");
    wd("%.6f", wps);
    W(",\n      \"grid\": ");
    w_dim3(g->grid);
    W(",\n      \"block\": ");
    w_dim3(g->block);
    W(",\n      \"est. achieved occupancy %\": ");
    int occ = (int)(wps * 100.0 / 64.0);
    if (occ > 100)
        occ = 100;
    wi(occ);
    ev_end();
}

static void emit_copy(const GpuRec *g)
{
    if (g->kind == GK_MEMCPY)
        emit_gpu_head(g, "Memcpy", "gpu_memcpy");
    else
        emit_gpu_head(g, "Memset", "gpu_memset");
    w_gpu_ids(g);
    W(",\n      \"bytes\": ");
    wi(g->bytes);
    W(", \"memory bandwidth (GB/s)\": ");
    wd("%.16g", (double)g->bytes / (double)(g->k_dur > 0 ? g->k_dur : 1));
    ev_end();
}

static void emit_gpu(const GpuRec *g)
{
    if (g->kind == GK_RT) {
        emit_runtime(g);
        return;
    }
    if (g->kind == GK_ANN) {
        x_begin("gpu_user_annotation", g->name, g->sfx, 0, STREAM_TID, g->k_ts, g->k_dur);
        W("\"External id\": ");
        wi(g->ext);
        ev_end();
        return;
    }
    if (g->kind == GK_KERNEL)
        emit_kernel(g);
    else
        emit_copy(g);
    emit_flow(0, g);
    emit_runtime(g);
    emit_flow(1, g);
}

/* flush the step's records for the active sections */
static void step_done(void)
{
    if (sec_mask & SEC_CPU)
        for (size_t i = 0; i < ncrec; i++)
            emit_cpu(&crec[i]);
    if (sec_mask & SEC_MEM)
        for (size_t i = 0; i < nmrec; i++)
            emit_mem(&mrec[i]);
    if ((sec_mask & SEC_PY) && fmt != F2021)
        for (size_t i = 0; i < nprec; i++)
            emit_py_raw(prec[i].name, prec[i].sfx, prec[i].ts, prec[i].dur, prec[i].id,
                        prec[i].parent, prec[i].mod);
    if (sec_mask & SEC_GPU)
        for (size_t i = 0; i < ngrec; i++)
            emit_gpu(&grec[i]);
    ncrec = nprec = nmrec = ngrec = 0;
}

/* ------------------------------------------------------------------ */
/* document                                                             */
/* ------------------------------------------------------------------ */
static uint64_t seed = 1;
static int64_t t_start, t_end;
static int64_t total_cpu, total_mem; /* from the sizing pass */
static const int64_t BASE_NS_2024 = 1751410836000000000LL;

typedef struct {
    const char *name;
    int64_t mem;
    int cmaj, sms, optin, smpm;
} DevProps;
static const DevProps H100 = {"NVIDIA H100 80GB HBM3", 85018279936LL, 9, 132, 232448, 233472};
static const DevProps A100 = {"NVIDIA A100-SXM4-80GB", 85031714816LL, 8, 108, 232448, 167936};

static void w_devprops(void)
{
    const DevProps *p = fmt == F2024 ? &H100 : &A100;
    W("\n  \"deviceProperties\": [");
    for (int d = 0; d < 2; d++) {
        W("\n    {\n      \"id\": ");
        wi(d);
        W(", \"name\": \"");
        ws(p->name);
        W("\", \"totalGlobalMem\": ");
        wi(p->mem);
        W(",\n      \"computeMajor\": ");
        wi(p->cmaj);
        W(", \"computeMinor\": 0,\n      \"maxThreadsPerBlock\": 1024, "
          "\"maxThreadsPerMultiprocessor\": 2048,\n"
          "      \"regsPerBlock\": 65536, \"regsPerMultiprocessor\": 65536, \"warpSize\": 32,\n"
          "      \"sharedMemPerBlock\": 49152, \"sharedMemPerMultiprocessor\": ");
        wi(p->smpm);
        W(",\n      \"numSms\": ");
        wi(p->sms);
        W(", \"sharedMemPerBlockOptin\": ");
        wi(p->optin);
        ws(d == 0 ? "\n    }," : "\n    }");
    }
    W("\n  ],");
}

static void emit_header(void)
{
    oreserve();
    W("\n{\n  \"schemaVersion\": 1,");
    w_devprops();
    if (fmt == F2024) {
        W("\n  \"cupti_version\": 22,\n  \"cuda_runtime_version\": 12040,\n  \"with_flops\": 1,"
          "\n  \"record_shapes\": 1,\n  \"cuda_driver_version\": 12090,\n  \"profile_memory\": 1,"
          "\n  \"with_stack\": 1,\n  \"with_modules\": 1,\n  \"trace_id\": \"");
        static const char hx[] = "0123456789ABCDEF";
        uint64_t h = seed * 0x9E3779B97F4A7C15ULL + 0x5DEECE66DULL;
        for (int i = 0; i < 32; i++) {
            ob[on++] = hx[h & 15];
            h = h * 6364136223846793005ULL + 1442695040888963407ULL;
            h ^= h >> 29;
        }
        W("\",\n  \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": 0, \"world_size\": 2, "
          "\"pg_count\": 1, \"pg_config\": [{\"pg_name\": \"0\", \"pg_desc\": \"default_pg\", "
          "\"backend_config\": \"cuda:nccl\", \"pg_size\": 2, \"ranks\": [0, 1]}], "
          "\"nccl_version\": \"2.20.5\"},");
    } else if (fmt == F2022) {
        W("\n  \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": 0, \"world_size\": 2},"
          "\n  \"profile_memory\": 1,");
    }
    W("\n  \"traceEvents\": [");
}

/* a metadata ("ph": "M") event with one arg, a string sv or else the integer iv */
static void emit_meta(const char *what, int64_t ts, int64_t pid, int64_t tid, int qtid,
                      const char *argk, const char *sv, int64_t iv)
{
    ev_begin();
    W("\n    \"name\": \"");
    ws(what);
    W("\", \"ph\": \"M\", \"ts\": ");
    wt(ts);
    W(", \"pid\": ");
    wi(pid);
    W(", \"tid\": ");
    w_tid(pid, tid, qtid);
    W(",\n    \"args\": {\n      ");
    w_qstr(argk);
    W(": ");
    if (sv)
        w_qstr(sv);
    else
        wi(iv);
    ev_end();
}

static void emit_process_meta(int64_t ts, int64_t pid, const char *pname, const char *label,
                              int64_t sort_index)
{
    emit_meta("process_name", ts, pid, 0, 0, "name", pname, 0);
    emit_meta("process_labels", ts, pid, 0, 0, "labels", label, 0);
    emit_meta("process_sort_index", ts, pid, 0, 0, "sort_index", NULL, sort_index);
}
static void emit_thread_meta(int64_t ts, int64_t pid, int64_t tid, const char *tname,
                             int64_t sort_index)
{
    int q21 = fmt == F2021;
    emit_meta("thread_name", ts, pid, tid, q21, "name", tname, 0);
    emit_meta("thread_sort_index", ts, pid, tid, q21, "sort_index", NULL, sort_index);
}

static void emit_trailer(void)
{
    int64_t ts = t_start;
    char buf[96];
    const char *pname = fmt == F2021 ? "python" : (fmt == F2022 ? "python3.8" : "python3");
    emit_process_meta(ts, pid_cpu, pname, "CPU", pid_cpu);
    for (int d = 0; d < 2; d++) {
        snprintf(buf, sizeof buf, "GPU %d", d);
        emit_process_meta(ts, d, pname, buf, 5000000 + d);
    }
    for (int d = 0; d < 2; d++)
        emit_thread_meta(ts, d, STREAM_TID, "stream 7 ", STREAM_TID);
    snprintf(buf, sizeof buf, "thread %" PRId64 " (%s)", tid_main, pname);
    emit_thread_meta(ts, pid_cpu, tid_main, buf, tid_main);
    snprintf(buf, sizeof buf, "thread %" PRId64 " (pt_autograd_0)", tid_bwd);
    emit_thread_meta(ts, pid_cpu, tid_bwd, buf, tid_bwd);

    ev_begin();
    W("\n    \"ph\": \"X\", \"cat\": \"Trace\", \"ts\": ");
    wt(t_start);
    W(", \"dur\": ");
    wt(now - t_start);
    if (fmt == F2021)
        W(",\n    \"pid\": \"Traces\", \"tid\": \"PyTorch Profiler\",");
    else
        W(",\n    \"pid\": \"Spans\", \"tid\": \"PyTorch Profiler\",");
    W("\n    \"name\": \"PyTorch Profiler (0)\",\n    \"args\": {\n      \"Op count\": 0\n    "
      "}\n  },");
    if (fmt != F2021) {
        ev_begin();
        W("\n    \"name\": \"process_sort_index\", \"ph\": \"M\", \"ts\": ");
        wt(t_start);
        W(",\n    \"pid\": \"Spans\", \"tid\": 0,\n    \"args\": {\n      \"sort_index\": "
          "536870912\n    }\n  },");
    }
    ev_begin();
    W("\n    \"name\": \"Iteration Start: PyTorch Profiler\", \"ph\": \"i\", \"s\": \"g\",\n"
      "    \"pid\": \"Traces\", \"tid\": \"Trace PyTorch Profiler\", \"ts\": ");
    wt(t_start);
    W("\n  },");
    ev_begin();
    W("\n    \"name\": \"Record Window End\", \"ph\": \"i\", \"s\": \"g\",\n    \"pid\": \"\", "
      "\"tid\": \"\", \"ts\": ");
    wt(now + 1000);
    W("\n  }");
    if (fmt == F2021) {
        W("\n]}\n");
    } else if (fmt == F2022) {
        W("\n  ],\n  \"traceName\": \"/tmp/trace_rank_0.json\"\n}\n");
    } else {
        W("\n  ],\n  \"traceName\": \"/tmp/profile/rank0.");
        wi(pid_cpu);
        W(".pt.trace.json\",\n  \"displayTimeUnit\": \"ms\",\n  \"baseTimeNanoseconds\": ");
        wi(BASE_NS_2024 + (int64_t)(seed % 1000) * 1000000000LL);
        W("\n}\n");
    }
}

/* reset the simulation to its initial state (same seed => same trace) */
static void sim_reset(void)
{
    rng_state = seed * 0xD1B54A32D192ED03ULL + 0x2545F4914F6CDD1DULL;
    if (fmt == F2024)
        now = 1419247333400919LL + rr(0, 999999) * 1000 + rr(0, 999);
    else if (fmt == F2022)
        now = (1669783687352244LL + rr(0, 999999999)) * 1000;
    else
        now = (1623142623460016LL + rr(0, 999999999)) * 1000;
    t_start = now;
    now += q(10000); /* room for the trace-spanning python frames */
    gpu_now[0] = gpu_now[1] = now;
    pid_cpu = rr(20000, 990000);
    tid_main = pid_cpu;
    tid_bwd = pid_cpu + rr(400, 3000);
    ext_next = rr(1, 50) * 100;
    corr_next = rr(100, 900) * 1000;
    py_next = 4;
    seq_next = rr(100, 2000);
    nstk[0] = nstk[1] = 0;
    npyname = 0;
    memset(reg_off, 0, sizeof reg_off);
    memset(reg_live, 0, sizeof reg_live);
    cpu_off = 0;
    cpu_live = 0;
    memset(tot_a, 0, sizeof tot_a);
    memset(tot_r, 0, sizeof tot_r);
    memset(peak_a, 0, sizeof peak_a);
    memset(peak_r, 0, sizeof peak_r);
    memset(la, 0, sizeof la);
    memset(&in_ids, 0, sizeof in_ids);
    memset(&in_lbl, 0, sizeof in_lbl);
    memset(cpu_batch, 0, sizeof cpu_batch);
    memset(&dev1_t, 0, sizeof dev1_t);
    memset(tmpl, 0, sizeof tmpl);
    step_no = 0;
    have_grads = 0;
    opt_init_done = 0;
    ncrec = nprec = nmrec = ngrec = 0;
    init_params();
    for (int i = 0; i < 3; i++)
        pyname_stk[npyname++] = TOP_FRAMES[i];
}

/* run the whole simulation emitting the sections in mask; returns steps run.
 * nsteps < 0: run until counted bytes reach target (sizing pass). */
static int64_t simulate(int mask, int64_t nsteps, uint64_t target)
{
    sec_mask = mask;
    sim_reset();
    prologue();
    step_done();
    int64_t s = 0;
    for (;;) {
        if (nsteps >= 0 && s >= nsteps)
            break;
        if (nsteps < 0 && out_bytes + on + (64 << 10) >= target && s >= 1)
            break;
        train_step();
        step_done();
        s++;
    }
    adv(50000, 100000);
    t_end = now;
    return s;
}

static void usage(void)
{
    fputs("usage: gen_trace [--seed N] [--size-mb M] [--format 2024|2022|2021] > trace.json\n",
          stderr);
    exit(2);
}

int main(int argc, char **argv)
{
    double size_mb = 1100;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--seed") && i + 1 < argc)
            seed = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--size-mb") && i + 1 < argc)
            size_mb = strtod(argv[++i], NULL);
        else if (!strcmp(argv[i], "--format") && i + 1 < argc)
            fmt = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
            usage();
        else
            usage();
    }
    if (fmt != F2021 && fmt != F2022 && fmt != F2024)
        usage();
    if (size_mb < 0)
        size_mb = 0;
    uint64_t target = (uint64_t)(size_mb * 1024.0 * 1024.0);
    ob = malloc(OBUF_CAP);
    if (!ob)
        return 1;
    init_kernel_names();

    /* pass 0: size (count bytes only, all sections) */
    out_on = 0;
    out_bytes = 0;
    on = 0;
    emit_header();
    int64_t nsteps = simulate(SEC_ALL, -1, target);
    total_cpu = ev_cpu;
    total_mem = ev_mem;

    /* real passes */
    static char iobuf[1 << 20];
    setvbuf(stdout, iobuf, _IOFBF, sizeof iobuf);
    out_on = 1;
    out_bytes = 0;
    on = 0;
    n_events = n_mem_events = 0;
    ev_cpu = ev_mem = ev_py = 0;
    base_mem = total_cpu;
    base_py = total_cpu + total_mem;
    emit_header();
    simulate(SEC_CPU, nsteps, 0);
    simulate(SEC_MEM, nsteps, 0);
    int64_t pk_a = peak_a[1], pk_r = peak_r[1];
    if (fmt != F2021) {
        /* top-level frames spanning the whole trace come first */
        int64_t te = t_end;
        for (int i = 0; i < 3; i++) {
            int64_t ts = t_start + q(1000 * (i + 1));
            emit_py_raw(TOP_FRAMES[i], -1, ts, te - ts - q(1000 * (i + 1)), i + 1, i ? i : -1,
                        -1);
        }
    }
    simulate(SEC_PY, nsteps, 0);
    simulate(SEC_GPU, nsteps, 0);
    emit_trailer();
    oflush();
    fflush(stdout);
    fprintf(stderr,
            "gen: bytes=%" PRIu64 " events=%" PRIu64 " mem_events=%" PRIu64
            " peak_allocated=%" PRId64 " peak_reserved=%" PRId64 " steps=%" PRId64
            " format=%d seed=%" PRIu64 "\n",
            out_bytes, n_events, n_mem_events, pk_a, pk_r, nsteps, fmt, seed);
    return ferror(stdout) ? 1 : 0;
}
