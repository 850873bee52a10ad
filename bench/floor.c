/* floor.c -- the C floor for ortc's benchmark: Run in a loop, straight through the C API.
 *
 * Compiled by bench/runner.py at bench time against include/ortc_api.h and linked to the
 * same libonnxruntime that ortc loads. Every call does what a minimal C caller must: wrap
 * each input buffer in a fresh OrtValue (CreateTensorWithDataAsOrtValue), Run with outputs
 * allocated by ORT, release inputs and outputs.
 *
 * floor_bound is the bound floor: inputs and outputs bound once to an OrtIoBinding (the outputs to
 * values made once with the shapes a first run returned), then RunWithBinding alone per call:
 * what no binding's bound run can go below.
 *
 * Built as a shared library (the default) the runner calls it in its own process through
 * ctypes, so the C loop is scheduled exactly like the Python paths it is compared with (a
 * child process that sleeps between rounds is favoured by the scheduler on a busy machine).
 * Built with -DFLOOR_MAIN it is a program that serves the same measurements on stdin:
 *
 *   floor MODEL INTRA_THREADS NAME:D0,D1,... [...] -- OUTPUT [...]   (float32 inputs)
 *   lat N | cal N | bound N | tput THREADS N | quit
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ortc_api.h"

typedef struct floor_t {
  const OrtApi *api;
  OrtEnv *env;
  OrtSession *session;
  OrtMemoryInfo *info;
  size_t n_in, n_out;
  char **in_names, **out_names;
  float **in_data;
  size_t *in_bytes;
  int64_t **in_shape;
  size_t *in_rank;
  OrtIoBinding *binding;   /* floor_bound's, made on its first use */
  OrtValue **bound;        /* the values bound to it: n_in inputs, then n_out outputs */
  char error[512];
} floor_t;

static int failed(floor_t *f, OrtStatus *st, const char *what) {
  if (!st) return 0;
  snprintf(f->error, sizeof f->error, "%s: %s", what, f->api->GetErrorMessage(st));
  f->api->ReleaseStatus(st);
  return 1;
}

static inline long long now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

const char *floor_error(floor_t *f) { return f->error; }

/* ranks[i] dims of input i follow each other in dims */
floor_t *floor_open(const char *model, int intra_threads, int n_in, const char **names,
                    const int *ranks, const long long *dims, int n_out, const char **outputs) {
  floor_t *f = calloc(1, sizeof *f);
  f->api = OrtGetApiBase()->GetApi(30);
  if (!f->api) {
    snprintf(f->error, sizeof f->error, "the library does not offer API 30");
    return f;
  }
  const OrtApi *api = f->api;
  f->n_in = (size_t)n_in;
  f->n_out = (size_t)n_out;
  f->in_names = calloc(f->n_in + 1, sizeof(char *));
  f->in_data = calloc(f->n_in + 1, sizeof(float *));
  f->in_bytes = calloc(f->n_in + 1, sizeof(size_t));
  f->in_shape = calloc(f->n_in + 1, sizeof(int64_t *));
  f->in_rank = calloc(f->n_in + 1, sizeof(size_t));
  const long long *d = dims;
  for (size_t i = 0; i < f->n_in; i++) {
    f->in_names[i] = strdup(names[i]);
    f->in_rank[i] = (size_t)ranks[i];
    f->in_shape[i] = calloc(f->in_rank[i] + 1, sizeof(int64_t));
    size_t count = 1;
    for (size_t k = 0; k < f->in_rank[i]; k++) {
      f->in_shape[i][k] = *d++;
      count *= (size_t)f->in_shape[i][k];
    }
    f->in_bytes[i] = count * sizeof(float);
    f->in_data[i] = malloc(f->in_bytes[i] ? f->in_bytes[i] : 1);
    for (size_t k = 0; k < count; k++) f->in_data[i][k] = (float)((k % 13) + 1) * 0.01f;
  }
  f->out_names = calloc(f->n_out + 1, sizeof(char *));
  for (size_t j = 0; j < f->n_out; j++) f->out_names[j] = strdup(outputs[j]);

  OrtSessionOptions *opts = NULL;
  if (failed(f, api->CreateEnv(ORT_LOGGING_LEVEL_WARNING, "ortc-bench-floor", &f->env),
             "CreateEnv") ||
      failed(f, api->CreateSessionOptions(&opts), "CreateSessionOptions") ||
      failed(f, api->SetIntraOpNumThreads(opts, intra_threads), "SetIntraOpNumThreads") ||
      failed(f, api->CreateSession(f->env, model, opts, &f->session), "CreateSession") ||
      failed(f, api->CreateCpuMemoryInfo(OrtArenaAllocator, OrtMemTypeDefault, &f->info),
             "CreateCpuMemoryInfo")) {
    if (opts) api->ReleaseSessionOptions(opts);
    return f;
  }
  api->ReleaseSessionOptions(opts);
  return f;
}

/* one call: fresh input values, Run with ORT-allocated outputs, release everything */
static int one_call(floor_t *f, OrtValue **in, OrtValue **out) {
  const OrtApi *api = f->api;
  for (size_t i = 0; i < f->n_in; i++) {
    in[i] = NULL;
    if (failed(f, api->CreateTensorWithDataAsOrtValue(f->info, f->in_data[i], f->in_bytes[i],
                                                      f->in_shape[i], f->in_rank[i],
                                                      ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &in[i]),
               "CreateTensorWithDataAsOrtValue")) {
      for (size_t k = 0; k < i; k++) api->ReleaseValue(in[k]);
      return -1;
    }
  }
  for (size_t j = 0; j < f->n_out; j++) out[j] = NULL;
  int bad = failed(f, api->Run(f->session, NULL, (const char *const *)f->in_names,
                               (const OrtValue *const *)in, f->n_in,
                               (const char *const *)f->out_names, f->n_out, out),
                   "Run");
  for (size_t i = 0; i < f->n_in; i++) api->ReleaseValue(in[i]);
  for (size_t j = 0; j < f->n_out; j++)
    if (out[j]) api->ReleaseValue(out[j]);
  return bad ? -1 : 0;
}

/* n timed calls (work=1) or the same loop with no call (work=0); per-call ns into times */
static int timed(floor_t *f, long n, long long *times, int work) {
  OrtValue **in = calloc(f->n_in + 1, sizeof(OrtValue *));
  OrtValue **out = calloc(f->n_out + 1, sizeof(OrtValue *));
  int rc = 0;
  long long prev = now_ns();
  for (long k = 0; k < n; k++) {
    if (work && one_call(f, in, out)) {
      rc = -1;
      break;
    }
    long long t = now_ns();
    times[k] = t - prev;
    prev = t;
  }
  free(in);
  free(out);
  return rc;
}

int floor_lat(floor_t *f, long n, long long *times) { return timed(f, n, times, 1); }

/* Bind the inputs (values over their buffers) and the outputs (values ORT allocates with the
   type and shape one plain run returned) once. */
static int bind_once(floor_t *f) {
  const OrtApi *api = f->api;
  if (f->binding) return 0;
  OrtAllocator *alloc = NULL;
  f->bound = calloc(f->n_in + f->n_out + 1, sizeof(OrtValue *));
  OrtValue **in = f->bound, **out = f->bound + f->n_in;
  if (failed(f, api->GetAllocatorWithDefaultOptions(&alloc), "GetAllocatorWithDefaultOptions") ||
      failed(f, api->CreateIoBinding(f->session, &f->binding), "CreateIoBinding"))
    return -1;
  for (size_t i = 0; i < f->n_in; i++)
    if (failed(f, api->CreateTensorWithDataAsOrtValue(f->info, f->in_data[i], f->in_bytes[i],
                                                      f->in_shape[i], f->in_rank[i],
                                                      ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &in[i]),
               "CreateTensorWithDataAsOrtValue") ||
        failed(f, api->BindInput(f->binding, f->in_names[i], in[i]), "BindInput"))
      return -1;
  if (failed(f, api->Run(f->session, NULL, (const char *const *)f->in_names,
                         (const OrtValue *const *)in, f->n_in,
                         (const char *const *)f->out_names, f->n_out, out), "Run"))
    return -1;
  for (size_t j = 0; j < f->n_out; j++) {  /* each output's shape, then a value of it */
    OrtTensorTypeAndShapeInfo *ts = NULL;
    ONNXTensorElementDataType type;
    size_t rank = 0;
    int64_t dims[16];
    int bad = failed(f, api->GetTensorTypeAndShape(out[j], &ts), "GetTensorTypeAndShape") ||
              failed(f, api->GetTensorElementType(ts, &type), "GetTensorElementType") ||
              failed(f, api->GetDimensionsCount(ts, &rank), "GetDimensionsCount") ||
              (rank > 16 && (snprintf(f->error, sizeof f->error, "output rank %zu", rank), 1)) ||
              failed(f, api->GetDimensions(ts, dims, rank), "GetDimensions");
    if (ts) api->ReleaseTensorTypeAndShapeInfo(ts);
    api->ReleaseValue(out[j]);
    out[j] = NULL;
    if (bad ||
        failed(f, api->CreateTensorAsOrtValue(alloc, dims, rank, type, &out[j]),
               "CreateTensorAsOrtValue") ||
        failed(f, api->BindOutput(f->binding, f->out_names[j], out[j]), "BindOutput"))
      return -1;
  }
  return 0;
}

/* n timed RunWithBinding calls, per-call ns into times */
int floor_bound(floor_t *f, long n, long long *times) {
  if (bind_once(f)) return -1;
  const OrtApi *api = f->api;
  long long prev = now_ns();
  for (long k = 0; k < n; k++) {
    if (failed(f, api->RunWithBinding(f->session, NULL, f->binding), "RunWithBinding"))
      return -1;
    long long t = now_ns();
    times[k] = t - prev;
    prev = t;
  }
  return 0;
}
int floor_cal(floor_t *f, long n, long long *times) { return timed(f, n, times, 0); }

typedef struct {
  floor_t *f;
  long n;
  int rc;
  pthread_barrier_t *barrier;
} worker_arg;

static void *worker(void *p) {
  worker_arg *a = p;
  OrtValue **in = calloc(a->f->n_in + 1, sizeof(OrtValue *));
  OrtValue **out = calloc(a->f->n_out + 1, sizeof(OrtValue *));
  pthread_barrier_wait(a->barrier);
  for (long k = 0; k < a->n && !a->rc; k++) a->rc = one_call(a->f, in, out);
  free(in);
  free(out);
  return NULL;
}

/* wall time in ns of `threads` threads each making n calls on the one session; -1 on error */
long long floor_tput(floor_t *f, int threads, long n) {
  pthread_barrier_t barrier;
  pthread_barrier_init(&barrier, NULL, (unsigned)threads + 1);
  pthread_t *th = calloc((size_t)threads, sizeof(pthread_t));
  worker_arg *args = calloc((size_t)threads, sizeof(worker_arg));
  for (int t = 0; t < threads; t++) {
    args[t] = (worker_arg){f, n, 0, &barrier};
    pthread_create(&th[t], NULL, worker, &args[t]);
  }
  pthread_barrier_wait(&barrier);
  long long t0 = now_ns();
  for (int t = 0; t < threads; t++) pthread_join(th[t], NULL);
  long long t1 = now_ns();
  int rc = 0;
  for (int t = 0; t < threads; t++) rc |= args[t].rc;
  pthread_barrier_destroy(&barrier);
  free(th);
  free(args);
  return rc ? -1 : t1 - t0;
}

void floor_close(floor_t *f) {
  const OrtApi *api = f->api;
  if (api) {
    if (f->binding) api->ReleaseIoBinding(f->binding);
    for (size_t k = 0; f->bound && k < f->n_in + f->n_out; k++)
      if (f->bound[k]) api->ReleaseValue(f->bound[k]);
    if (f->info) api->ReleaseMemoryInfo(f->info);
    if (f->session) api->ReleaseSession(f->session);
    if (f->env) api->ReleaseEnv(f->env);
  }
  for (size_t i = 0; i < f->n_in; i++) {
    free(f->in_names[i]);
    free(f->in_shape[i]);
    free(f->in_data[i]);
  }
  for (size_t j = 0; j < f->n_out; j++) free(f->out_names[j]);
  free(f->in_names);
  free(f->in_data);
  free(f->in_bytes);
  free(f->in_shape);
  free(f->in_rank);
  free(f->out_names);
  free(f->bound);
  free(f);
}

#ifdef FLOOR_MAIN
int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: floor MODEL INTRA_THREADS NAME:D0,D1,... -- OUTPUT...\n");
    return 2;
  }
  int sep = 3;
  while (sep < argc && strcmp(argv[sep], "--") != 0) sep++;
  int n_in = sep - 3, n_out = sep < argc ? argc - sep - 1 : 0;
  const char **names = calloc((size_t)n_in + 1, sizeof(char *));
  int *ranks = calloc((size_t)n_in + 1, sizeof(int));
  long long *dims = calloc((size_t)n_in * 16 + 1, sizeof(long long));
  int nd = 0;
  for (int i = 0; i < n_in; i++) {
    char *spec = argv[3 + i], *colon = strchr(spec, ':');
    if (!colon) {
      fprintf(stderr, "floor: bad input spec %s\n", spec);
      return 2;
    }
    *colon = '\0';
    names[i] = spec;
    for (char *tok = strtok(colon + 1, ","); tok && ranks[i] < 16; tok = strtok(NULL, ",")) {
      dims[nd++] = atoll(tok);
      ranks[i]++;
    }
  }
  floor_t *f = floor_open(argv[1], atoi(argv[2]), n_in, names, ranks, dims, n_out,
                          (const char **)argv + sep + 1);
  if (f->error[0]) {
    fprintf(stderr, "floor: %s\n", f->error);
    return 1;
  }
  long long *times = NULL;
  long cap = 0;
  char line[256];
  printf("ready\n");
  fflush(stdout);
  while (fgets(line, sizeof line, stdin)) {
    char cmd[16];
    long a = 0, b = 0;
    int got = sscanf(line, "%15s %ld %ld", cmd, &a, &b);
    if (got < 1 || strcmp(cmd, "quit") == 0) break;
    int bound = strcmp(cmd, "bound") == 0;
    if ((strcmp(cmd, "lat") == 0 || strcmp(cmd, "cal") == 0 || bound) && got >= 2 && a > 0) {
      if (a > cap) {
        cap = a;
        times = realloc(times, (size_t)cap * sizeof(long long));
      }
      if (bound ? floor_bound(f, a, times) : timed(f, a, times, strcmp(cmd, "lat") == 0)) {
        fprintf(stderr, "floor: %s\n", f->error);
        return 1;
      }
      for (long k = 0; k < a; k++) printf(k ? " %lld" : "%lld", times[k]);
      printf("\n");
    } else if (strcmp(cmd, "tput") == 0 && got >= 3 && a > 0 && b > 0) {
      printf("%lld\n", floor_tput(f, (int)a, b));
    } else {
      printf("error unknown command\n");
    }
    fflush(stdout);
  }
  floor_close(f);
  return 0;
}
#endif
