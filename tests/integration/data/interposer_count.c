/* A stand-in for a user-space network stack in the LD_PRELOAD tests (no real one exists on
 * the test machines): it interposes the socket calls iperf3 makes, counts them, forwards them
 * to libc, and at exit appends "<pid> send=<n> recv=<n>" to the file $INTERPOSER_COUNT_FILE.
 * Built by the tests: cc -shared -fPIC -o libinterposer_count.so interposer_count.c -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

static atomic_ulong sends, recvs;

static int is_socket(int fd)
{
    struct stat st;
    return fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode);
}

#define REAL(name, ret, ...)                                                                     \
    static ret (*real_##name)(__VA_ARGS__);                                                      \
    if (!real_##name)                                                                            \
        real_##name = (ret(*)(__VA_ARGS__))dlsym(RTLD_NEXT, #name);

ssize_t send(int fd, const void *buf, size_t len, int flags)
{
    REAL(send, ssize_t, int, const void *, size_t, int);
    sends++;
    return real_send(fd, buf, len, flags);
}

ssize_t sendto(int fd, const void *buf, size_t len, int flags, const struct sockaddr *to, socklen_t tolen)
{
    REAL(sendto, ssize_t, int, const void *, size_t, int, const struct sockaddr *, socklen_t);
    sends++;
    return real_sendto(fd, buf, len, flags, to, tolen);
}

ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
    REAL(sendmsg, ssize_t, int, const struct msghdr *, int);
    sends++;
    return real_sendmsg(fd, msg, flags);
}

ssize_t recv(int fd, void *buf, size_t len, int flags)
{
    REAL(recv, ssize_t, int, void *, size_t, int);
    recvs++;
    return real_recv(fd, buf, len, flags);
}

ssize_t recvfrom(int fd, void *buf, size_t len, int flags, struct sockaddr *from, socklen_t *fromlen)
{
    REAL(recvfrom, ssize_t, int, void *, size_t, int, struct sockaddr *, socklen_t *);
    recvs++;
    return real_recvfrom(fd, buf, len, flags, from, fromlen);
}

ssize_t recvmsg(int fd, struct msghdr *msg, int flags)
{
    REAL(recvmsg, ssize_t, int, struct msghdr *, int);
    recvs++;
    return real_recvmsg(fd, msg, flags);
}

/* iperf3 moves its test data with write()/read() on the sockets. */
ssize_t write(int fd, const void *buf, size_t len)
{
    REAL(write, ssize_t, int, const void *, size_t);
    if (is_socket(fd))
        sends++;
    return real_write(fd, buf, len);
}

ssize_t read(int fd, void *buf, size_t len)
{
    REAL(read, ssize_t, int, void *, size_t);
    if (is_socket(fd))
        recvs++;
    return real_read(fd, buf, len);
}

__attribute__((destructor)) static void report(void)
{
    const char *path = getenv("INTERPOSER_COUNT_FILE");
    if (!path)
        return;
    FILE *f = fopen(path, "a");
    if (!f)
        return;
    fprintf(f, "%d send=%lu recv=%lu\n", (int)getpid(), (unsigned long)sends, (unsigned long)recvs);
    fclose(f);
}
