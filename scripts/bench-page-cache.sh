#!/usr/bin/env bash
# Page-cache benchmark: what filling a new file costs the kernel, by how the
# pages get into the page cache, side by side in the same rounds (Linux).
#
# Each case creates a fresh file of SIZE MiB (default 1024) in DIR (default
# a temporary directory under $TMPDIR) and fills it with bytes, as the unpacker
# does with a member:
#   fault        fallocate, map, MADV_POPULATE_WRITE, fill the mapping
#                (how members were unpacked before 2026-12-03);
#   write-N      fallocate, zeros by write(2) in N KiB blocks, then map,
#                MADV_POPULATE_WRITE and fill (`page_in` in src/install/unpack,
#                with N = 64, `os::WRITE_BLOCK`);
#   pwrite-N     a sparse file written by pwrite(2) in N KiB blocks from a
#                reused buffer, eight streams interleaved (a ranged download
#                into its `.part`).
# Before each case the previous file is removed and, when run as root, the
# page cache is dropped, so that every case starts from the same state.
# Reported: wall and CPU seconds of the case (its own process, user + system).
#
# Usage: scripts/bench-page-cache.sh [ROUNDS] [SIZE_MIB] [DIR]
# Needs: cc (Debian's gcc), Linux 5.14+ (MADV_POPULATE_WRITE).
set -euo pipefail

rounds=${1:-3}
size=${2:-1024}
work=$(mktemp -d "${TMPDIR:-/tmp}/cudaenv-pagecache.XXXXXX")
trap 'rm -rf "$work"' EXIT
dir=${3:-$work}

cat >"$work/fill.c" <<'EOF'
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}
static double cpu(void) {
  struct rusage r;
  getrusage(RUSAGE_SELF, &r);
  return r.ru_utime.tv_sec + r.ru_utime.tv_usec / 1e6 + r.ru_stime.tv_sec +
         r.ru_stime.tv_usec / 1e6;
}
static void die(const char *what) { perror(what); exit(1); }
/* fill CASE BLOCK_KIB SIZE_MIB PATH */
int main(int argc, char **argv) {
  if (argc != 5) return 2;
  const char *mode = argv[1];
  size_t block = (size_t)atol(argv[2]) << 10, n = (size_t)atol(argv[3]) << 20;
  int fd = open(argv[4], O_RDWR | O_CREAT | O_EXCL, 0644);
  if (fd < 0) die("open");
  char *buf = calloc(1, block ? block : 1);
  double t0 = now(), c0 = cpu();
  if (strcmp(mode, "pwrite") == 0) {
    if (ftruncate(fd, n)) die("ftruncate");
    memset(buf, 7, block);
    size_t streams = 8, per = n / streams;
    for (size_t at = 0; at < per; at += block)
      for (size_t s = 0; s < streams; s++)
        if (pwrite(fd, buf, block, s * per + at) != (ssize_t)block) die("pwrite");
  } else {
    if (posix_fallocate(fd, 0, n)) die("fallocate");
    if (strcmp(mode, "write") == 0)
      for (size_t at = 0; at < n; at += block)
        if (write(fd, buf, block) != (ssize_t)block) die("write");
    char *map = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED) die("mmap");
    madvise(map, n, MADV_POPULATE_WRITE);
    memset(map, 7, n);
    munmap(map, n);
  }
  close(fd);
  printf("%.3f %.3f\n", now() - t0, cpu() - c0);
  return 0;
}
EOF
cc -O2 -o "$work/fill" "$work/fill.c"

settle() {
  rm -f "$dir/cudaenv-pagecache.bin"
  sync
  if [ -w /proc/sys/vm/drop_caches ]; then echo 3 >/proc/sys/vm/drop_caches; fi
}

cases=("fault 0" "write 16" "write 64" "write 256" "write 1024" "write 4096" "pwrite 64" "pwrite 1024")
echo "machine: $(nproc) cores, $(uname -sr); $size MiB per case; dir: $dir"
for r in $(seq "$rounds"); do
  for c in "${cases[@]}"; do
    settle
    read -r wall cpu < <("$work/fill" ${c% *} ${c#* } "$size" "$dir/cudaenv-pagecache.bin")
    label=${c% *}; [ "${c#* }" = 0 ] || label="$label-${c#* }"
    printf 'round %s  %-12s %6.3f s wall  %6.3f s CPU\n' "$r" "$label" "$wall" "$cpu"
  done
done
settle
