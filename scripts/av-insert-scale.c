// fi_av_insert of N addresses through a provider (spec-notes/pds.md "Scale
// model (issue 29)"); built and run by scripts/av-insert-scale.sh.
//
// Makes N distinct address blobs (fi_av_insertsym into a scratch AV, then
// fi_av_lookup of each: the provider's own format, no knowledge of it here),
// then times one fi_av_insert of all N into a fresh FI_AV_TABLE and reads
// every one back with fi_av_lookup (same bytes, distinct fi_addr_t). Prints
// the time and the resident-memory growth of the insert. Exit 0 only if every
// check held.
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_errno.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double Now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static long RssKib(void) {
  FILE* f = fopen("/proc/self/status", "r");
  char line[256];
  long kib = -1;
  if (f == NULL) return -1;
  while (fgets(line, sizeof line, f) != NULL) {
    if (strncmp(line, "VmRSS:", 6) == 0) kib = strtol(line + 6, NULL, 10);
  }
  fclose(f);
  return kib;
}

#define CHECK(what, rc)                                                        \
  do {                                                                         \
    if ((rc) < 0) {                                                            \
      fprintf(stderr, "%s: %s (%d)\n", what, fi_strerror((int)-(rc)), (int)(rc)); \
      return 1;                                                                \
    }                                                                          \
  } while (0)

int main(int argc, char** argv) {
  const size_t n = argc > 1 ? (size_t)strtoull(argv[1], NULL, 10) : 100000;
  const char* base = argc > 2 ? argv[2] : "10.0.0.1";
  struct fi_info* hints = fi_allocinfo();
  struct fi_info* info = NULL;
  struct fid_fabric* fabric = NULL;
  struct fid_domain* domain = NULL;
  hints->fabric_attr->prov_name = strdup("uet");
  hints->ep_attr->type = FI_EP_RDM;
  hints->caps = FI_MSG;
  CHECK("fi_getinfo", fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &info));
  CHECK("fi_fabric", fi_fabric(info->fabric_attr, &fabric, NULL));
  CHECK("fi_domain", fi_domain(fabric, info, &domain, NULL));

  struct fi_av_attr attr = {.type = FI_AV_TABLE, .count = n};
  struct fid_av* scratch = NULL;
  CHECK("fi_av_open", fi_av_open(domain, &attr, &scratch, NULL));
  fi_addr_t* ids = calloc(n, sizeof *ids);
  int rc = fi_av_insertsym(scratch, base, n, "4793", 1, ids, 0, NULL);
  if (rc != (int)n) {
    fprintf(stderr, "fi_av_insertsym: %d of %zu\n", rc, n);
    return 1;
  }
  size_t len = 0;
  char probe[1];
  fi_av_lookup(scratch, ids[0], probe, &len);  // the blob size
  if (len == 0 || len > 1024) {
    fprintf(stderr, "fi_av_lookup: blob size %zu\n", len);
    return 1;
  }
  char* blobs = malloc(n * len);
  for (size_t i = 0; i < n; ++i) {
    size_t l = len;
    CHECK("fi_av_lookup", fi_av_lookup(scratch, ids[i], blobs + i * len, &l));
    if (l != len) {
      fprintf(stderr, "fi_av_lookup %zu: size %zu, not %zu\n", i, l, len);
      return 1;
    }
  }
  fi_close(&scratch->fid);

  struct fid_av* av = NULL;
  CHECK("fi_av_open", fi_av_open(domain, &attr, &av, NULL));
  const long rss0 = RssKib();
  const double t0 = Now();
  rc = fi_av_insert(av, blobs, n, ids, 0, NULL);
  const double t1 = Now();
  const long rss1 = RssKib();
  if (rc != (int)n) {
    fprintf(stderr, "fi_av_insert: %d of %zu\n", rc, n);
    return 1;
  }
  char* back = malloc(len);
  size_t bad = 0;
  for (size_t i = 0; i < n; ++i) {
    size_t l = len;
    if (fi_av_lookup(av, ids[i], back, &l) != 0 || l != len ||
        memcmp(back, blobs + i * len, len) != 0 || (i > 0 && ids[i] == ids[i - 1])) {
      ++bad;
    }
  }
  const double t2 = Now();
  char str[128];
  size_t sl = sizeof str;
  fi_av_straddr(av, blobs + (n - 1) * len, str, &sl);
  printf("fi_av_insert of %zu addresses (%zu-byte blobs, last %s): %.1f ms = %.0f ns each; "
         "RSS +%ld KiB = %.0f B each; fi_av_lookup of all: %.1f ms; mismatches %zu\n",
         n, len, str, (t1 - t0) * 1e3, (t1 - t0) * 1e9 / (double)n, rss1 - rss0,
         (double)(rss1 - rss0) * 1024.0 / (double)n, (t2 - t1) * 1e3, bad);
  fi_close(&av->fid);
  fi_close(&domain->fid);
  fi_close(&fabric->fid);
  fi_freeinfo(info);
  fi_freeinfo(hints);
  free(ids);
  free(blobs);
  free(back);
  return bad == 0 ? 0 : 1;
}
