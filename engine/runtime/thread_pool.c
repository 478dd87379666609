/* libkiln_rt's thread pool: kiln_rt_parallel_for gives each thread (the caller first, then the
 * workers) one contiguous range of a parallel loop's iterations, which it runs front to back, a
 * share of what is left at a time; a thread done with its own range takes chunks from the back
 * of the others' until none is left.
 *
 * Ranges, for where data lives: the default schedules split large feature maps by rows
 * (engine/lower/default_schedule.cc), so consecutive kernels give each thread the same rows of
 * each map, and a kernel reads the rows the previous one wrote on the same core. On these VMs a
 * core reads data another core has just written at about a quarter of the speed it reads its
 * own (two threads handing 4 MiB back and forth: 55 against 220 GB/s), and a shared counter of
 * guided chunks handed rows to whichever thread came first. With the row splits, against guided
 * chunks and block splits: ResNet-50 on 2 threads x0.94 the time, DenseNet x0.88, MobileNetV2
 * x0.91 (paired runs, a Zen 5 host; the ranges alone, with block splits: ResNet-50 x0.99).
 * Stealing, for the VM's other tenants: a thread the VM descheduled, or that drew the costlier
 * border rows, leaves the rest of its range to the others instead of holding up the loop (static
 * halves alone ran ResNet-50 1.56-1.64x one thread's speed, guided chunks 1.8-2.0x). Each
 * iteration runs the same code whichever thread takes it, so results do not depend on the split.
 * Workers spin on the job generation (up to kSpinNanoseconds) before sleeping on a condition
 * variable, because kernels call parallel_for back to back (tens of times per model run) and a
 * wakeup costs more than a spin. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "engine/runtime/kiln_runtime.h"

/* How long a waiting thread spins (pausing between checks) before it sleeps: the gaps between a
 * model's parallel loops (its serial kernels, the entry's bookkeeping) are usually shorter, and
 * a sleeping worker costs a futex wakeup per loop, which on a VM exceeds a small kernel's work
 * (2 threads vs 1 on ShuffleNet: x0.87 with a 0.5 ms spin, x1.9 with 5 ms). Bounded by time,
 * not iterations, since a pause takes 10 to 140 cycles depending on the CPU. */
enum { kSpinNanoseconds = 5000000 };

/* A chunk takes 1 / kChunkShare of what is left of the range it comes from, and at least
 * extent / (threads * kMaxChunksPerThread) iterations (in units, below): enough chunks to even out uneven
 * iterations, few enough that taking one (a compare-and-swap) stays negligible. A thread
 * descheduled right after taking its first chunk holds a quarter of its range; the rest is taken
 * from behind it. */
enum { kChunkShare = 4, kMaxChunksPerThread = 16 };

/* A thread's range, in units of the job (below): (front << 32) | back, its own cache line so that
 * one thread taking a chunk does not slow another's. */
typedef struct range {
  _Atomic uint64_t bounds;
  char padding[64 - sizeof(uint64_t)];
} range;

static int64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* True while a spin that began at `*start` (0: not yet) should go on; checks the clock every 64
 * calls. */
static int keep_spinning(int64_t* start, int* calls) {
  if ((++*calls & 63) != 0) return 1;
  int64_t now = now_ns();
  if (*start == 0) *start = now;
  return now - *start < kSpinNanoseconds;
}

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ volatile("yield");
#endif
}

typedef struct pool pool;

/* What a worker thread is started with: its pool and its index (the caller's is 0). */
typedef struct worker {
  pool* p;
  int index;
} worker;

struct pool {
  int threads;   /* including the caller: those started */
  int requested; /* the thread count asked for (more than `threads` when some failed to start) */
  pthread_t* threads_started;
  worker* workers;
  pthread_mutex_t mutex;
  pthread_cond_t work_ready;
  pthread_cond_t work_done;
  atomic_uint_fast64_t generation; /* bumped for each job, and to stop */
  atomic_int pending;              /* workers not yet done with the current job */
  int stopping;
  /* The current job. */
  kiln_parallel_body body;
  void* closure;
  int64_t extent;
  int64_t unit;   /* iterations per unit of `ranges`: 1 unless the extent exceeds INT32_MAX */
  int64_t units;  /* the extent in units, the last one possibly partial */
  int64_t grain;  /* the fewest units a chunk takes */
  range* ranges;  /* one per thread */
};

static pthread_mutex_t g_pool_owner = PTHREAD_MUTEX_INITIALIZER; /* held by the caller using it */
static pool* g_pool;
static atomic_int g_requested_threads;
static _Thread_local int t_in_parallel;

/* Takes a chunk of what is left of range `r`, from its front (its own thread) or its back
 * (another thread); false when the range is empty. */
static int take_chunk(pool* p, range* r, int from_back, int64_t* begin, int64_t* end) {
  uint64_t bounds = atomic_load_explicit(&r->bounds, memory_order_relaxed);
  for (;;) {
    uint64_t front = bounds >> 32, back = bounds & 0xffffffffu;
    if (front >= back) return 0;
    uint64_t left = back - front, size = left / kChunkShare;
    if (size < (uint64_t)p->grain) size = (uint64_t)p->grain;
    if (size > left) size = left;
    uint64_t taken = from_back ? (front << 32) | (back - size) : ((front + size) << 32) | back;
    if (atomic_compare_exchange_weak_explicit(&r->bounds, &bounds, taken, memory_order_relaxed,
                                              memory_order_relaxed)) {
      uint64_t first = from_back ? back - size : front;
      *begin = (int64_t)first * p->unit;
      *end = (int64_t)(first + size) >= p->units ? p->extent : (int64_t)(first + size) * p->unit;
      return 1;
    }
    /* `bounds` now holds the current value */
  }
}

/* Runs the thread `index`'s range of the current job, then what is left of the others'. */
static void run_chunks(pool* p, int index) {
  int64_t begin, end;
  while (take_chunk(p, &p->ranges[index], 0, &begin, &end)) p->body(begin, end, p->closure);
  for (int k = 1; k < p->threads; ++k) {
    range* other = &p->ranges[(index + k) % p->threads];
    while (take_chunk(p, other, 1, &begin, &end)) p->body(begin, end, p->closure);
  }
}

static void* worker_main(void* raw) {
  pool* p = ((worker*)raw)->p;
  int index = ((worker*)raw)->index;
  t_in_parallel = 1;
  uint_fast64_t seen = 0;
  for (;;) {
    uint_fast64_t now = atomic_load_explicit(&p->generation, memory_order_acquire);
    int64_t spin_start = 0;
    int spins = 0;
    while (now == seen && keep_spinning(&spin_start, &spins)) {
      cpu_relax();
      now = atomic_load_explicit(&p->generation, memory_order_acquire);
    }
    if (now == seen) {
      pthread_mutex_lock(&p->mutex);
      while ((now = atomic_load_explicit(&p->generation, memory_order_acquire)) == seen) {
        pthread_cond_wait(&p->work_ready, &p->mutex);
      }
      pthread_mutex_unlock(&p->mutex);
    }
    seen = now;
    if (p->stopping) return NULL;
    run_chunks(p, index);
    if (atomic_fetch_sub_explicit(&p->pending, 1, memory_order_acq_rel) == 1) {
      pthread_mutex_lock(&p->mutex);
      pthread_cond_signal(&p->work_done);
      pthread_mutex_unlock(&p->mutex);
    }
  }
}

static int default_threads(void) {
  const char* env = getenv("KILN_NUM_THREADS");
  if (env != NULL) {
    long n = strtol(env, NULL, 10);
    if (n > 0 && n <= 1024) return (int)n;
  }
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  return cpus > 0 ? (int)(cpus > 1024 ? 1024 : cpus) : 1;
}

static void stop_pool(pool* p) {
  pthread_mutex_lock(&p->mutex);
  p->stopping = 1;
  atomic_store_explicit(&p->pending, p->threads - 1, memory_order_release);
  atomic_fetch_add_explicit(&p->generation, 1, memory_order_acq_rel);
  pthread_cond_broadcast(&p->work_ready);
  pthread_mutex_unlock(&p->mutex);
  for (int i = 0; i < p->threads - 1; ++i) pthread_join(p->threads_started[i], NULL);
  pthread_cond_destroy(&p->work_ready);
  pthread_cond_destroy(&p->work_done);
  pthread_mutex_destroy(&p->mutex);
  free(p->threads_started);
  free(p->workers);
  free(p->ranges);
  free(p);
}

/* Called with g_pool_owner held. NULL when threads cannot be started (run serially then). */
static pool* start_pool(int threads) {
  pool* p = calloc(1, sizeof(pool));
  if (p == NULL) return NULL;
  p->threads = threads;
  p->requested = threads;
  p->threads_started = calloc((size_t)threads, sizeof(pthread_t));
  p->workers = calloc((size_t)threads, sizeof(worker));
  p->ranges = aligned_alloc(64, (size_t)threads * sizeof(range));
  if (p->threads_started == NULL || p->workers == NULL || p->ranges == NULL) {
    free(p->threads_started);
    free(p->workers);
    free(p->ranges);
    free(p);
    return NULL;
  }
  pthread_mutex_init(&p->mutex, NULL);
  pthread_cond_init(&p->work_ready, NULL);
  pthread_cond_init(&p->work_done, NULL);
  atomic_init(&p->generation, 0);
  atomic_init(&p->pending, 0);
  int started = 0;
  for (int i = 1; i < threads; ++i, ++started) {
    p->workers[i] = (worker){p, i};
    if (pthread_create(&p->threads_started[i - 1], NULL, worker_main, &p->workers[i]) != 0) break;
  }
  p->threads = started + 1;
  return p;
}

void kiln_rt_set_num_threads(int32_t threads) {
  atomic_store(&g_requested_threads, threads > 0 ? (threads > 1024 ? 1024 : threads) : 0);
}

int32_t kiln_rt_num_threads(void) {
  int requested = atomic_load(&g_requested_threads);
  return requested > 0 ? requested : default_threads();
}

void kiln_rt_parallel_for(int64_t extent, kiln_parallel_body body, void* closure) {
  if (extent <= 0) return;
  int threads = kiln_rt_num_threads();
  if (t_in_parallel || extent == 1 || threads == 1 || pthread_mutex_trylock(&g_pool_owner) != 0) {
    body(0, extent, closure);
    return;
  }
  if (g_pool != NULL && g_pool->requested != threads) {
    stop_pool(g_pool);
    g_pool = NULL;
  }
  if (g_pool == NULL) g_pool = start_pool(threads);
  pool* p = g_pool;
  if (p == NULL || p->threads == 1) {
    pthread_mutex_unlock(&g_pool_owner);
    body(0, extent, closure);
    return;
  }
  p->body = body;
  p->closure = closure;
  p->extent = extent;
  p->unit = 1;
  while (extent / p->unit > INT32_MAX) p->unit *= 2;
  int64_t units = extent / p->unit + (extent % p->unit != 0);
  p->units = units;
  p->grain = units / ((int64_t)p->threads * kMaxChunksPerThread);
  if (p->grain < 1) p->grain = 1;
  for (int i = 0; i < p->threads; ++i) {
    uint64_t front = (uint64_t)(units * i / p->threads);
    uint64_t back = (uint64_t)(units * (i + 1) / p->threads);
    atomic_store_explicit(&p->ranges[i].bounds, (front << 32) | back, memory_order_relaxed);
  }
  atomic_store_explicit(&p->pending, p->threads - 1, memory_order_release);
  pthread_mutex_lock(&p->mutex);
  atomic_fetch_add_explicit(&p->generation, 1, memory_order_acq_rel);
  pthread_cond_broadcast(&p->work_ready);
  pthread_mutex_unlock(&p->mutex);

  t_in_parallel = 1;
  run_chunks(p, 0);
  t_in_parallel = 0;

  int64_t spin_start = 0;
  int spins = 0;
  while (atomic_load_explicit(&p->pending, memory_order_acquire) != 0 &&
         keep_spinning(&spin_start, &spins)) {
    cpu_relax();
  }
  if (atomic_load_explicit(&p->pending, memory_order_acquire) != 0) {
    pthread_mutex_lock(&p->mutex);
    while (atomic_load_explicit(&p->pending, memory_order_acquire) != 0) {
      pthread_cond_wait(&p->work_done, &p->mutex);
    }
    pthread_mutex_unlock(&p->mutex);
  }
  pthread_mutex_unlock(&g_pool_owner);
}
