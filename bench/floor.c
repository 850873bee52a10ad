/* floor.c -- the C floor for ortc's benchmark: Run in a loop, straight through the C API.
 *
 * Compiled by bench/runner.py at bench time against include/ortc_api.h and linked to the
 * same libonnxruntime that ortc loads. Every call does what a minimal C caller must: wrap
 * each input buffer in a fresh OrtValue (CreateTensorWithDataAsOrtValue), Run with outputs
 * allocated by ORT, release inputs and outputs.
 *
 * usage: floor MODEL INTRA_THREADS NAME:D0,D1,... [...] -- OUTPUT [...]
 *   (float32 inputs; "NAME:" is a scalar)
 *
 * Then it serves commands on stdin, one per line, so the runner can interleave it with
 * the Python paths without paying process start-up or session creation per round:
 *   lat N       N timed calls; prints N per-call times in ns on one line
 *   cal N       the same loop with no call (timer overhead); prints N times
 *   tput T N    T threads each make N calls on the one session; prints the wall time in ns
 *   quit
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ortc_api.h"

static const OrtApi *api;
static OrtSession *session;
static OrtMemoryInfo *info;
static size_t n_in, n_out;
static char **in_names, **out_names;
static float **in_data;
static size_t *in_bytes;
static int64_t **in_shape;
static size_t *in_rank;

static void check(OrtStatus *st, const char *what) {
  if (st) {
    fprintf(stderr, "floor: %s: %s\n", what, api->GetErrorMessage(st));
    api->ReleaseStatus(st);
    exit(1);
  }
}

static inline long long now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* one call: fresh input values, Run, release everything */
static void one_call(OrtValue **in, OrtValue **out) {
  for (size_t i = 0; i < n_in; i++) {
    in[i] = NULL;
    check(api->CreateTensorWithDataAsOrtValue(info, in_data[i], in_bytes[i], in_shape[i],
                                              in_rank[i], ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT,
                                              &in[i]),
          "CreateTensorWithDataAsOrtValue");
  }
  for (size_t j = 0; j < n_out; j++) out[j] = NULL;
  check(api->Run(session, NULL, (const char *const *)in_names, (const OrtValue *const *)in, n_in,
                 (const char *const *)out_names, n_out, out),
        "Run");
  for (size_t i = 0; i < n_in; i++) api->ReleaseValue(in[i]);
  for (size_t j = 0; j < n_out; j++) api->ReleaseValue(out[j]);
}

typedef struct {
  long n;
  pthread_barrier_t *barrier;
} worker_arg;

static void *worker(void *p) {
  worker_arg *a = p;
  OrtValue **in = calloc(n_in ? n_in : 1, sizeof(OrtValue *));
  OrtValue **out = calloc(n_out ? n_out : 1, sizeof(OrtValue *));
  pthread_barrier_wait(a->barrier);
  for (long k = 0; k < a->n; k++) one_call(in, out);
  free(in);
  free(out);
  return NULL;
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: floor MODEL INTRA_THREADS NAME:D0,D1,... -- OUTPUT...\n");
    return 2;
  }
  api = OrtGetApiBase()->GetApi(30);
  if (!api) {
    fprintf(stderr, "floor: the library does not offer API 30\n");
    return 1;
  }
  int sep = 3;
  while (sep < argc && strcmp(argv[sep], "--") != 0) sep++;
  n_in = (size_t)(sep - 3);
  n_out = sep < argc ? (size_t)(argc - sep - 1) : 0;
  in_names = calloc(n_in + 1, sizeof(char *));
  in_data = calloc(n_in + 1, sizeof(float *));
  in_bytes = calloc(n_in + 1, sizeof(size_t));
  in_shape = calloc(n_in + 1, sizeof(int64_t *));
  in_rank = calloc(n_in + 1, sizeof(size_t));
  for (size_t i = 0; i < n_in; i++) {
    char *spec = argv[3 + i];
    char *colon = strchr(spec, ':');
    if (!colon) {
      fprintf(stderr, "floor: bad input spec %s\n", spec);
      return 2;
    }
    *colon = '\0';
    in_names[i] = spec;
    in_shape[i] = calloc(16, sizeof(int64_t));
    size_t count = 1, rank = 0;
    for (char *tok = strtok(colon + 1, ","); tok && rank < 16; tok = strtok(NULL, ",")) {
      in_shape[i][rank] = atoll(tok);
      count *= (size_t)in_shape[i][rank];
      rank++;
    }
    in_rank[i] = rank;
    in_bytes[i] = count * sizeof(float);
    in_data[i] = malloc(in_bytes[i] ? in_bytes[i] : 1);
    for (size_t k = 0; k < count; k++) in_data[i][k] = (float)((k % 13) + 1) * 0.01f;
  }
  out_names = calloc(n_out + 1, sizeof(char *));
  for (size_t j = 0; j < n_out; j++) out_names[j] = argv[sep + 1 + j];

  OrtEnv *env;
  check(api->CreateEnv(ORT_LOGGING_LEVEL_WARNING, "ortc-bench-floor", &env), "CreateEnv");
  OrtSessionOptions *opts;
  check(api->CreateSessionOptions(&opts), "CreateSessionOptions");
  check(api->SetIntraOpNumThreads(opts, atoi(argv[2])), "SetIntraOpNumThreads");
  check(api->CreateSession(env, argv[1], opts, &session), "CreateSession");
  api->ReleaseSessionOptions(opts);
  check(api->CreateCpuMemoryInfo(OrtArenaAllocator, OrtMemTypeDefault, &info),
        "CreateCpuMemoryInfo");

  OrtValue **in = calloc(n_in + 1, sizeof(OrtValue *));
  OrtValue **out = calloc(n_out + 1, sizeof(OrtValue *));
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
    if ((strcmp(cmd, "lat") == 0 || strcmp(cmd, "cal") == 0) && got >= 2 && a > 0) {
      if (a > cap) {
        cap = a;
        times = realloc(times, (size_t)cap * sizeof(long long));
      }
      int work = strcmp(cmd, "lat") == 0;
      long long prev = now_ns();
      for (long k = 0; k < a; k++) {
        if (work) one_call(in, out);
        long long t = now_ns();
        times[k] = t - prev;
        prev = t;
      }
      for (long k = 0; k < a; k++) printf(k ? " %lld" : "%lld", times[k]);
      printf("\n");
    } else if (strcmp(cmd, "tput") == 0 && got >= 3 && a > 0 && b > 0) {
      pthread_barrier_t barrier;
      pthread_barrier_init(&barrier, NULL, (unsigned)a + 1);
      pthread_t *th = calloc((size_t)a, sizeof(pthread_t));
      worker_arg wa = {b, &barrier};
      for (long t = 0; t < a; t++) pthread_create(&th[t], NULL, worker, &wa);
      pthread_barrier_wait(&barrier);
      long long t0 = now_ns();
      for (long t = 0; t < a; t++) pthread_join(th[t], NULL);
      long long t1 = now_ns();
      pthread_barrier_destroy(&barrier);
      free(th);
      printf("%lld\n", t1 - t0);
    } else {
      printf("error unknown command\n");
    }
    fflush(stdout);
  }
  api->ReleaseMemoryInfo(info);
  api->ReleaseSession(session);
  api->ReleaseEnv(env);
  return 0;
}
