/* libkiln_rt's string elements (ONNX string tensors): conversions to and from numbers, case
 * changes and equality, and the per-run arena the strings a run creates live in.
 *
 * A string tensor is one `const char*` word per element, pointing at NUL-terminated bytes; a
 * NULL word reads as "" (zero-filled buffers, a compaction's padding). Strings a kernel creates
 * go to the calling thread's arena, opened by kiln_rt_strings_begin at the start of a run and
 * released by kiln_rt_strings_end at its end, after kiln_rt_strings_keep gave each string
 * output its own malloc'ed copies: the words a run leaves in its outputs belong to the caller.
 * Kernels that touch strings never run on the thread pool's workers (their arena is the
 * caller's), which Kiln's schedules guarantee by keeping such kernels serial. */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/runtime/kiln_runtime.h"

typedef struct string_block {
  struct string_block* next;
  size_t used;
  size_t size;
  char bytes[];
} string_block;

typedef struct string_arena {
  string_block* blocks;
  int failed; /* an allocation failed: the run's strings are incomplete */
} string_arena;

static _Thread_local string_arena* current_arena = NULL;

enum { kBlockBytes = 16384 };

void* kiln_rt_strings_begin(void) {
  string_arena* enclosing = current_arena;
  current_arena = calloc(1, sizeof(string_arena));
  return enclosing;
}

int32_t kiln_rt_strings_end(void* enclosing) {
  string_arena* arena = current_arena;
  int32_t status = KILN_OK;
  if (arena != NULL) {
    if (arena->failed) status = KILN_ERROR_OUT_OF_MEMORY;
    for (string_block* block = arena->blocks; block != NULL;) {
      string_block* next = block->next;
      free(block);
      block = next;
    }
    free(arena);
  } else {
    status = KILN_ERROR_OUT_OF_MEMORY; /* kiln_rt_strings_begin could not allocate the arena */
  }
  current_arena = (string_arena*)enclosing;
  return status;
}

/* `bytes` bytes in the current arena; NULL (and the arena marked failed) when there is none or
 * memory runs out. */
static char* arena_alloc(size_t bytes) {
  string_arena* arena = current_arena;
  if (arena == NULL) return NULL;
  string_block* block = arena->blocks;
  if (block == NULL || block->size - block->used < bytes) {
    size_t size = bytes > kBlockBytes ? bytes : kBlockBytes;
    block = malloc(sizeof(string_block) + size);
    if (block == NULL) {
      arena->failed = 1;
      return NULL;
    }
    block->used = 0;
    block->size = size;
    block->next = arena->blocks;
    arena->blocks = block;
  }
  char* out = block->bytes + block->used;
  block->used += bytes;
  return out;
}

static const char* arena_copy(const char* text, size_t length) {
  char* out = arena_alloc(length + 1);
  if (out == NULL) return NULL;
  memcpy(out, text, length);
  out[length] = '\0';
  return out;
}

int32_t kiln_rt_strings_keep(void* words, int64_t count) {
  const char** strings = (const char**)words;
  int32_t status = current_arena != NULL && current_arena->failed ? KILN_ERROR_OUT_OF_MEMORY
                                                                   : KILN_OK;
  for (int64_t i = 0; i < count; ++i) {
    const char* copy = strdup(strings[i] != NULL ? strings[i] : "");
    if (copy == NULL) status = KILN_ERROR_OUT_OF_MEMORY;
    strings[i] = copy;
  }
  return status;
}

void kiln_rt_strings_free(void* words, int64_t count) {
  char** strings = (char**)words;
  for (int64_t i = 0; i < count; ++i) {
    free(strings[i]);
    strings[i] = NULL;
  }
}

static int reads_back(const char* text, double value, int single) {
  return single ? strtof(text, NULL) == (float)value : strtod(text, NULL) == value;
}

/* The shortest significand digits (no leading or trailing zeros) that read back as |value| (as a
 * float when `single`), and the decimal exponent of the first: as Dragon4's shortest mode (what
 * NumPy prints) finds them. Of the digit strings of one length, the nearest to the value is tried
 * first, then its neighbours one unit away in the last digit: next to a power of two the
 * interval that reads back is lopsided, and a neighbour may read back where the nearest does
 * not (float32 2^-96 is "1.2621775e-29", not "1.26217745e-29"). */
static int shortest_digits(double value, int single, char digits[24], int* exponent) {
  double magnitude = fabs(value);
  char text[48];
  for (int precision = 0; precision < 17; ++precision) {
    snprintf(text, sizeof text, "%.*e", precision, magnitude);
    /* text: d[.ddd]e(+|-)XX: the significand as an integer, and the power of ten it scales by */
    long long significand = 0;
    const char* p = text;
    for (; *p != 'e'; ++p) {
      if (*p != '.') significand = significand * 10 + (*p - '0');
    }
    int scale = atoi(p + 1) - precision;
    long long chosen = -1;
    if (reads_back(text, magnitude, single)) {
      chosen = significand;
    } else {
      double best = INFINITY;
      for (long long candidate = significand - 1; candidate <= significand + 1; candidate += 2) {
        if (candidate <= 0) continue;
        snprintf(text, sizeof text, "%llde%d", candidate, scale);
        double error = fabs(strtod(text, NULL) - magnitude);
        if (reads_back(text, magnitude, single) && error < best) {
          best = error;
          chosen = candidate;
        }
      }
    }
    if (chosen < 0) continue;
    int n = snprintf(digits, 24, "%lld", chosen);
    *exponent = scale + n - 1;
    while (n > 1 && digits[n - 1] == '0') digits[--n] = '\0';
    return n;
  }
  return 0; /* not reached: 17 significant digits read back as any double */
}

/* The shortest decimal that reads back as `value` (as a float when `single`), laid out as NumPy
 * prints a scalar (the ONNX tests' expected strings come from NumPy): positional when
 * 1e-4 <= |value| < 1e16, with at least one fractional digit ("1.0", "0.039187793"),
 * scientific otherwise with a two-digit exponent ("1e-05", "1.5e+16"). */
static const char* format_real(double value, int single) {
  if (isnan(value)) return "NaN";
  if (isinf(value)) return value < 0 ? "-INF" : "INF";
  int negative = signbit(value) != 0;
  char digits[24] = "0";
  int exponent = 0;
  int n = value == 0.0 ? 1 : shortest_digits(value, single, digits, &exponent);
  char out[64];
  int length = 0;
  if (negative) out[length++] = '-';
  double magnitude = fabs(value);
  if (magnitude == 0.0 || (magnitude >= 1e-4 && magnitude < 1e16)) {
    if (exponent >= 0) {
      for (int i = 0; i <= exponent; ++i) out[length++] = i < n ? digits[i] : '0';
      out[length++] = '.';
      if (n > exponent + 1) {
        for (int i = exponent + 1; i < n; ++i) out[length++] = digits[i];
      } else {
        out[length++] = '0';
      }
    } else {
      out[length++] = '0';
      out[length++] = '.';
      for (int i = 0; i < -exponent - 1; ++i) out[length++] = '0';
      for (int i = 0; i < n; ++i) out[length++] = digits[i];
    }
    out[length] = '\0';
  } else {
    out[length++] = digits[0];
    if (n > 1) {
      out[length++] = '.';
      for (int i = 1; i < n; ++i) out[length++] = digits[i];
    }
    snprintf(out + length, sizeof out - (size_t)length, "e%c%02d", exponent < 0 ? '-' : '+',
             abs(exponent));
    length += (int)strlen(out + length);
  }
  return arena_copy(out, (size_t)length);
}

const char* kiln_rt_string_from_f32(float value) { return format_real(value, 1); }
const char* kiln_rt_string_from_f64(double value) { return format_real(value, 0); }

const char* kiln_rt_string_from_i64(int64_t value) {
  char out[24];
  int length = snprintf(out, sizeof out, "%lld", (long long)value);
  return arena_copy(out, (size_t)length);
}

const char* kiln_rt_string_from_u64(uint64_t value) {
  char out[24];
  int length = snprintf(out, sizeof out, "%llu", (unsigned long long)value);
  return arena_copy(out, (size_t)length);
}

/* Numbers read as strtod/strtoll read them (leading spaces, "NaN", "INF", "+INF", "-INF",
 * "infinity", any case); text that holds no number reads as NaN, or 0 for integers. */
float kiln_rt_string_to_f32(const char* text) {
  if (text == NULL) return NAN;
  char* end;
  float value = strtof(text, &end);
  return end == text ? NAN : value;
}

double kiln_rt_string_to_f64(const char* text) {
  if (text == NULL) return NAN;
  char* end;
  double value = strtod(text, &end);
  return end == text ? NAN : value;
}

int64_t kiln_rt_string_to_i64(const char* text) {
  return text == NULL ? 0 : (int64_t)strtoll(text, NULL, 10);
}

uint64_t kiln_rt_string_to_u64(const char* text) {
  return text == NULL ? 0 : (uint64_t)strtoull(text, NULL, 10);
}

static const char* change_case(const char* text, int upper) {
  if (text == NULL) text = "";
  size_t length = strlen(text);
  char* out = arena_alloc(length + 1);
  if (out == NULL) return NULL;
  for (size_t i = 0; i <= length; ++i) {
    char c = text[i];
    if (upper && c >= 'a' && c <= 'z') c = (char)(c - 'a' + 'A');
    if (!upper && c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
    out[i] = c;
  }
  return out;
}

const char* kiln_rt_string_upper(const char* text) { return change_case(text, 1); }
const char* kiln_rt_string_lower(const char* text) { return change_case(text, 0); }

int32_t kiln_rt_string_equal(const char* a, const char* b) {
  return strcmp(a != NULL ? a : "", b != NULL ? b : "") == 0;
}
