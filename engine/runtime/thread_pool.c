/* libkiln_rt's thread pool: kiln_rt_parallel_for runs a parallel loop's outlined body in chunks
 * that the calling thread and the workers take from a shared counter until none is left, each
 * chunk a share of the iterations still left (guided, as OpenMP's schedule(guided)): a thread
 * the VM descheduled, or that drew the costlier border tiles, leaves its share to the others
 * instead of holding up the loop, and the last chunks are small, so once the iterations run out
 * the caller waits for at most one small chunk still running elsewhere. ResNet-50 on 2 threads:
 * static halves 1.56-1.64x one thread's speed, chunks of extent / 8 1.6-1.7x, guided 1.8-2.0x.
 * Each iteration runs the same code whichever thread takes it, so results do not depend on the
 * split. Workers spin on the job
 * generation (up to kSpinNanoseconds) before sleeping on a condition variable, because kernels
 * call parallel_for back to back (tens of times per model run) and a wakeup costs more than a
 * spin. */
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

/* A chunk takes 1 / (threads * kGuidedShare) of the iterations left, and at least
 * extent / (threads * kMaxChunksPerThread): enough chunks to even out uneven iterations, few
 * enough that taking one (a compare-and-swap on a shared line) stays negligible. Half of
 * OpenMP's 1 / threads share: a thread descheduled right after taking its first chunk then holds
 * a quarter of a 2-thread loop, not half of it. */
enum { kGuidedShare = 2, kMaxChunksPerThread = 16 };

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

typedef struct pool {
  int threads;   /* including the caller: those started */
  int requested; /* the thread count asked for (more than `threads` when some failed to start) */
  pthread_t* workers;
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
  int64_t grain;                   /* the fewest iterations a chunk takes */
  atomic_int_fast64_t next;        /* the first iteration no thread has taken */
} pool;

static pthread_mutex_t g_pool_owner = PTHREAD_MUTEX_INITIALIZER; /* held by the caller using it */
static pool* g_pool;
static atomic_int g_requested_threads;
static _Thread_local int t_in_parallel;

/* Runs chunks of the current job until every iteration is taken. Guided: each chunk is a
 * share of what is left, so chunks start large (few atomics) and end small, and once the
 * iterations run out the caller waits at most for a small chunk still running elsewhere. */
static void run_chunks(pool* p) {
  int64_t begin = atomic_load_explicit(&p->next, memory_order_relaxed);
  for (;;) {
    if (begin >= p->extent) return;
    int64_t grain = (p->extent - begin) / ((int64_t)p->threads * kGuidedShare);
    if (grain < p->grain) grain = p->grain;
    int64_t end = p->extent - begin < grain ? p->extent : begin + grain;
    if (!atomic_compare_exchange_weak_explicit(&p->next, &begin, end, memory_order_relaxed,
                                               memory_order_relaxed)) {
      continue;  /* `begin` now holds the current value */
    }
    p->body(begin, end, p->closure);
    begin = atomic_load_explicit(&p->next, memory_order_relaxed);
  }
}

static void* worker_main(void* raw) {
  pool* p = raw;
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
    run_chunks(p);
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
  for (int i = 0; i < p->threads - 1; ++i) pthread_join(p->workers[i], NULL);
  pthread_cond_destroy(&p->work_ready);
  pthread_cond_destroy(&p->work_done);
  pthread_mutex_destroy(&p->mutex);
  free(p->workers);
  free(p);
}

/* Called with g_pool_owner held. NULL when threads cannot be started (run serially then). */
static pool* start_pool(int threads) {
  pool* p = calloc(1, sizeof(pool));
  if (p == NULL) return NULL;
  p->threads = threads;
  p->requested = threads;
  p->workers = calloc((size_t)threads, sizeof(pthread_t));
  pthread_mutex_init(&p->mutex, NULL);
  pthread_cond_init(&p->work_ready, NULL);
  pthread_cond_init(&p->work_done, NULL);
  atomic_init(&p->generation, 0);
  atomic_init(&p->pending, 0);
  atomic_init(&p->next, 0);
  int started = 0;
  for (int i = 1; i < threads && p->workers != NULL; ++i, ++started) {
    if (pthread_create(&p->workers[i - 1], NULL, worker_main, p) != 0) break;
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
  p->grain = extent / ((int64_t)p->threads * kMaxChunksPerThread);
  if (p->grain < 1) p->grain = 1;
  atomic_store_explicit(&p->next, 0, memory_order_relaxed);
  atomic_store_explicit(&p->pending, p->threads - 1, memory_order_release);
  pthread_mutex_lock(&p->mutex);
  atomic_fetch_add_explicit(&p->generation, 1, memory_order_acq_rel);
  pthread_cond_broadcast(&p->work_ready);
  pthread_mutex_unlock(&p->mutex);

  t_in_parallel = 1;
  run_chunks(p);
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
