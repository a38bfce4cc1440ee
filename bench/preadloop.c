/*
 * preadloop: the bare minimum random-read loop, the physical limit for
 * `iolab micro --access randread --engine psync` (case a of bench/vs-fio.sh).
 *
 * Visits a random permutation of all bs-sized records of FILE once per loop
 * (the same permutation every loop, as iolab does), one pread(2) per record,
 * with nothing else in the loop: no per-op timing, no histogram, no checks
 * beyond the return value.  The whole loop is timed with CLOCK_MONOTONIC and
 * its CPU time taken with getrusage(RUSAGE_THREAD).
 *
 *   gcc -O2 -o preadloop bench/preadloop.c
 *   preadloop FILE [BS] [LOOPS] [SEED]      (BS in bytes, default 4096)
 *
 * Prints one line of key=value pairs:
 *   ops=N elapsed_ns=N iops=X user_ns=N sys_ns=N cpu_ns_per_op=X
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static uint64_t splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t ns_of_tv(struct timeval tv)
{
	return (uint64_t)tv.tv_sec * 1000000000ULL + (uint64_t)tv.tv_usec * 1000ULL;
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void die(const char *what)
{
	fprintf(stderr, "preadloop: %s: %s\n", what, strerror(errno));
	exit(1);
}

int main(int argc, char **argv)
{
	if (argc < 2 || argc > 5) {
		fprintf(stderr, "usage: %s FILE [BS] [LOOPS] [SEED]\n", argv[0]);
		return 2;
	}
	const char *path = argv[1];
	size_t bs = argc > 2 ? strtoull(argv[2], NULL, 0) : 4096;
	uint64_t loops = argc > 3 ? strtoull(argv[3], NULL, 0) : 1;
	uint64_t seed = argc > 4 ? strtoull(argv[4], NULL, 0) : 1;
	if (bs == 0 || loops == 0) {
		fprintf(stderr, "preadloop: BS and LOOPS must be > 0\n");
		return 2;
	}

	int fd = open(path, O_RDONLY);
	if (fd < 0)
		die(path);
	struct stat st;
	if (fstat(fd, &st) != 0)
		die("fstat");
	uint64_t records = (uint64_t)st.st_size / bs;
	if (records == 0) {
		fprintf(stderr, "preadloop: %s is smaller than one record\n", path);
		return 1;
	}

	/* Precomputed permutation of record offsets (Fisher-Yates), outside the timed loop. */
	off_t *order = malloc(records * sizeof(*order));
	if (!order)
		die("malloc");
	for (uint64_t i = 0; i < records; i++)
		order[i] = (off_t)(i * bs);
	uint64_t s = seed;
	for (uint64_t i = records - 1; i > 0; i--) {
		uint64_t j = splitmix64(&s) % (i + 1);
		off_t t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	char *buf;
	if (posix_memalign((void **)&buf, 4096, bs) != 0)
		die("posix_memalign");
	memset(buf, 0, bs);

	struct rusage r0, r1;
	getrusage(RUSAGE_THREAD, &r0);
	uint64_t t0 = now_ns();
	for (uint64_t l = 0; l < loops; l++) {
		for (uint64_t i = 0; i < records; i++) {
			ssize_t n = pread(fd, buf, bs, order[i]);
			if (n != (ssize_t)bs) {
				if (n < 0)
					die("pread");
				fprintf(stderr, "preadloop: short read at %jd\n", (intmax_t)order[i]);
				return 1;
			}
		}
	}
	uint64_t t1 = now_ns();
	getrusage(RUSAGE_THREAD, &r1);

	uint64_t ops = records * loops;
	uint64_t elapsed = t1 - t0;
	uint64_t user = ns_of_tv(r1.ru_utime) - ns_of_tv(r0.ru_utime);
	uint64_t sys = ns_of_tv(r1.ru_stime) - ns_of_tv(r0.ru_stime);
	printf("ops=%" PRIu64 " elapsed_ns=%" PRIu64 " iops=%.1f user_ns=%" PRIu64
	       " sys_ns=%" PRIu64 " cpu_ns_per_op=%.2f vcsw=%ld ivcsw=%ld\n",
	       ops, elapsed, (double)ops * 1e9 / (double)elapsed, user, sys,
	       (double)(user + sys) / (double)ops, r1.ru_nvcsw - r0.ru_nvcsw,
	       r1.ru_nivcsw - r0.ru_nivcsw);
	free(order);
	free(buf);
	close(fd);
	return 0;
}
