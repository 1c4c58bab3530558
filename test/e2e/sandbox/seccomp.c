// seccomp ALLOW_LIST COMMAND [ARG...]: runs COMMAND under the system call filters docs/deploy/svc.service sets,
// as systemd 252 builds them (src/shared/seccomp-util.c): SystemCallFilter= (ALLOW_LIST, one name a line; any
// other call kills the process, where the unit says EPERM, so that none goes unnoticed), RestrictAddressFamilies=,
// RestrictNamespaces=, LockPersonality=, RestrictRealtime= and RestrictSUIDSGID=. Linked against libseccomp 2,
// whose few declarations are here because its header may not be installed where its library is.
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

typedef void *scmp_filter_ctx;
struct scmp_arg_cmp {
  unsigned int arg;
  int op;
  uint64_t datum_a, datum_b;
};
enum { CMP_NE = 1, CMP_EQ = 4, CMP_GE = 5, CMP_MASKED_EQ = 7 };
scmp_filter_ctx seccomp_init(uint32_t def_action);
int seccomp_rule_add_array(scmp_filter_ctx, uint32_t action, int syscall, unsigned int count,
                           const struct scmp_arg_cmp *args);
int seccomp_syscall_resolve_name(const char *name);
int seccomp_load(scmp_filter_ctx);
#define KILL_PROCESS 0x80000000U
#define ALLOW 0x7fff0000U
#define ERRNO(e) (0x00050000U | ((e) & 0xffffU))

static void fail(const char *what, int error) {
  fprintf(stderr, "seccomp: %s: %s\n", what, strerror(error < 0 ? -error : error));
  exit(125);
}

/** A rule for a call this architecture has (a name it lacks, such as an old alias, is skipped). */
static void rule(scmp_filter_ctx filter, uint32_t action, const char *name, unsigned count,
                 const struct scmp_arg_cmp *args) {
  int nr = seccomp_syscall_resolve_name(name);
  if (nr < 0) return;
  int r = seccomp_rule_add_array(filter, action, nr, count, args);
  if (r < 0) fail(name, r);
}

static void load(scmp_filter_ctx filter) {
  int r = seccomp_load(filter);
  if (r < 0) fail("seccomp_load", r);
}

/** RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX: any other family fails with EAFNOSUPPORT. */
static void address_families(void) {
  scmp_filter_ctx filter = seccomp_init(ALLOW);
  for (uint64_t family = 0; family < 64; family++) {
    if (family == AF_UNIX || family == AF_INET || family == AF_INET6) continue;
    struct scmp_arg_cmp is = {0, CMP_EQ, family, 0};
    rule(filter, ERRNO(EAFNOSUPPORT), "socket", 1, &is);
  }
  struct scmp_arg_cmp beyond = {0, CMP_GE, 64, 0};
  rule(filter, ERRNO(EAFNOSUPPORT), "socket", 1, &beyond);
  load(filter);
}

/** RestrictNamespaces=yes, LockPersonality=yes, RestrictRealtime=yes, RestrictSUIDSGID=yes. */
static void restrictions(void) {
  scmp_filter_ctx filter = seccomp_init(ALLOW);
  const uint64_t namespaces[] = {CLONE_NEWNS,  CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC,
                                 CLONE_NEWUSER, CLONE_NEWPID,   CLONE_NEWNET};
  for (size_t i = 0; i < sizeof namespaces / sizeof *namespaces; i++) {
    struct scmp_arg_cmp has = {0, CMP_MASKED_EQ, namespaces[i], namespaces[i]};
    rule(filter, ERRNO(EPERM), "clone", 1, &has);
    rule(filter, ERRNO(EPERM), "unshare", 1, &has);
  }
  rule(filter, ERRNO(EPERM), "setns", 0, NULL);
  rule(filter, ERRNO(ENOSYS), "clone3", 0, NULL); // its flags are out of the filter's sight: libc falls back to clone
  struct scmp_arg_cmp other_personality = {0, CMP_NE, 0 /* PER_LINUX */, 0};
  rule(filter, ERRNO(EPERM), "personality", 1, &other_personality);
  const uint64_t realtime[] = {1 /* SCHED_FIFO */, 2 /* SCHED_RR */, 6 /* SCHED_DEADLINE */};
  for (size_t i = 0; i < 3; i++) {
    struct scmp_arg_cmp policy = {1, CMP_EQ, realtime[i], 0};
    rule(filter, ERRNO(EPERM), "sched_setscheduler", 1, &policy);
  }
  struct scmp_arg_cmp mode1 = {1, CMP_MASKED_EQ, S_ISUID, S_ISUID}, mode1g = {1, CMP_MASKED_EQ, S_ISGID, S_ISGID};
  struct scmp_arg_cmp mode2 = {2, CMP_MASKED_EQ, S_ISUID, S_ISUID}, mode2g = {2, CMP_MASKED_EQ, S_ISGID, S_ISGID};
  rule(filter, ERRNO(EPERM), "chmod", 1, &mode1);
  rule(filter, ERRNO(EPERM), "chmod", 1, &mode1g);
  rule(filter, ERRNO(EPERM), "fchmod", 1, &mode1);
  rule(filter, ERRNO(EPERM), "fchmod", 1, &mode1g);
  rule(filter, ERRNO(EPERM), "fchmodat", 1, &mode2);
  rule(filter, ERRNO(EPERM), "fchmodat", 1, &mode2g);
  load(filter);
}

/** SystemCallFilter=: the names in `path` are allowed, and any other call kills the process. */
static void allow_list(const char *path) {
  FILE *file = fopen(path, "r");
  if (!file) fail(path, errno);
  scmp_filter_ctx filter = seccomp_init(KILL_PROCESS);
  char line[128];
  while (fgets(line, sizeof line, file)) {
    line[strcspn(line, "\n")] = 0;
    if (*line) rule(filter, ALLOW, line, 0, NULL);
  }
  fclose(file);
  load(filter);
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: seccomp ALLOW_LIST COMMAND [ARG...]\n");
    return 125;
  }
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) fail("no_new_privs", errno);
  address_families();
  restrictions();
  allow_list(argv[1]);
  execv(argv[2], argv + 2);
  fail(argv[2], errno);
}
