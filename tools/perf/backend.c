/*
 * perf-backend: the origin server behind Apache in tools/perf benchmarks.
 *
 * It must never be the bottleneck, so it does as little as an HTTP/1.1
 * server can: one thread, epoll, keep-alive, request bodies (Content-Length
 * or chunked, as mod_proxy_http may send either) read as fast as they come
 * and discarded, and one fixed small response for every request.
 * Pipelined requests are answered in order.
 *
 *   perf-backend PORT        listens on 127.0.0.1:PORT only
 *
 * A test tool, not engine code: plain malloc, no APR. It trusts its only
 * client (the local Apache) no further than needed to stay up: a malformed
 * request closes the connection.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#define BUF_SIZE   (64 * 1024)   /* request headers larger than this are refused */
#define MAX_EVENTS 64

/* The one response, in a keep-alive and a closing form (HTTP/1.0 clients
 * such as ab need "Connection: keep-alive" to reuse the connection); built
 * in main() so that Content-Length is right. */
static const char BODY[] = "<!DOCTYPE html><html><body><p>perf ok</p></body></html>\n";
static char response[2][256];
static size_t response_len[2];

enum body_mode { BODY_NONE, BODY_LENGTH, BODY_CHUNK_SIZE, BODY_CHUNK_DATA,
                 BODY_CHUNK_CRLF, BODY_TRAILER };

struct conn {
    int fd;
    char buf[BUF_SIZE];
    size_t len;                 /* bytes of buf in use */
    enum body_mode mode;
    unsigned long long left;    /* body bytes (or chunk bytes) still to skip */
    int close_after;            /* answer, then close (Connection: close / HTTP/1.0) */
    int in_request;             /* headers parsed, body (if any) being skipped */
};

/* Case-insensitive search for a header line starting with name (incl. ':')
 * in the header block hdr[0..n); returns its value or NULL. */
static const char *find_header(const char *hdr, size_t n, const char *name)
{
    size_t nl = strlen(name);
    const char *p = hdr, *end = hdr + n;
    while (p < end) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        if (!eol)
            break;
        if ((size_t)(eol - p) > nl && strncasecmp(p, name, nl) == 0) {
            p += nl;
            while (p < eol && (*p == ' ' || *p == '\t'))
                p++;
            return p;
        }
        p = eol + 1;
    }
    return NULL;
}

/* Parses the header block hdr[0..hlen) (ending in CRLFCRLF) and sets the
 * body mode. Returns -1 for a request we will not serve. */
static int start_request(struct conn *c, const char *hdr, size_t hlen)
{
    const char *eol = memchr(hdr, '\n', hlen);
    const char *v;
    if (!eol)
        return -1;
    /* HTTP/1.0 closes unless it asks for keep-alive; 1.1 keeps unless told. */
    int http10 = eol - hdr >= 9 && memcmp(eol - 9, "HTTP/1.0", 8) == 0;
    v = find_header(hdr, hlen, "Connection:");
    if (v && strncasecmp(v, "close", 5) == 0)
        c->close_after = 1;
    else
        c->close_after = http10 && !(v && strncasecmp(v, "keep-alive", 10) == 0);
    c->mode = BODY_NONE;
    c->left = 0;
    v = find_header(hdr, hlen, "Transfer-Encoding:");
    if (v && strncasecmp(v, "chunked", 7) == 0) {
        c->mode = BODY_CHUNK_SIZE;
        return 0;
    }
    v = find_header(hdr, hlen, "Content-Length:");
    if (v) {
        char *end;
        c->left = strtoull(v, &end, 10);
        if (end == v)
            return -1;
        if (c->left)
            c->mode = BODY_LENGTH;
    }
    return 0;
}

/* Consumes body bytes from buf[*pos..len); returns 1 when the body is
 * complete, 0 when more input is needed, -1 on a malformed chunked body. */
static int skip_body(struct conn *c, size_t *pos)
{
    while (c->mode != BODY_NONE) {
        size_t avail = c->len - *pos;
        const char *p = c->buf + *pos, *nl;
        if (c->mode == BODY_LENGTH || c->mode == BODY_CHUNK_DATA) {
            size_t take = avail < c->left ? avail : (size_t)c->left;
            *pos += take;
            c->left -= take;
            if (c->left)
                return 0;
            c->mode = c->mode == BODY_LENGTH ? BODY_NONE : BODY_CHUNK_CRLF;
            continue;
        }
        nl = memchr(p, '\n', avail);
        if (!nl)
            return avail > 1024 ? -1 : 0;   /* a chunk line is never that long */
        *pos += (size_t)(nl - p) + 1;
        if (c->mode == BODY_CHUNK_SIZE) {
            char *end;
            c->left = strtoull(p, &end, 16);
            if (end == p)
                return -1;
            c->mode = c->left ? BODY_CHUNK_DATA : BODY_TRAILER;
        } else if (c->mode == BODY_CHUNK_CRLF) {
            c->mode = BODY_CHUNK_SIZE;
        } else if (nl == p || (nl == p + 1 && *p == '\r')) {
            c->mode = BODY_NONE;        /* empty line: end of the trailer */
        }
    }
    return 1;
}

/* Sends the fixed response; blocking for the rare short write is fine here
 * (the response is far below any socket buffer). */
static int respond(int fd, int closing)
{
    size_t off = 0;
    while (off < response_len[closing]) {
        ssize_t w = send(fd, response[closing] + off, response_len[closing] - off,
                         MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && errno == EAGAIN) {
            usleep(100);
            continue;
        }
        if (w <= 0)
            return -1;
        off += (size_t)w;
    }
    return 0;
}

/* Serves every complete request in the buffer; returns -1 to close. */
static int serve(struct conn *c)
{
    size_t pos = 0;
    for (;;) {
        if (!c->in_request) {
            const char *end = memmem(c->buf + pos, c->len - pos, "\r\n\r\n", 4);
            if (!end)
                break;
            size_t hlen = (size_t)(end + 4 - (c->buf + pos));
            if (start_request(c, c->buf + pos, hlen) < 0)
                return -1;
            pos += hlen;
            c->in_request = 1;
        }
        int r = skip_body(c, &pos);
        if (r < 0)
            return -1;
        if (r == 0)
            break;
        c->in_request = 0;
        if (respond(c->fd, c->close_after) < 0 || c->close_after)
            return -1;
    }
    /* Keep the unparsed rest at the start of the buffer. */
    memmove(c->buf, c->buf + pos, c->len - pos);
    c->len -= pos;
    return c->len == sizeof(c->buf) ? -1 : 0;
}

static void close_conn(int ep, struct conn *c)
{
    epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    free(c);
}

static void accept_all(int ep, int lfd)
{
    for (;;) {
        int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return;
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        struct conn *c = calloc(1, sizeof(*c));
        if (!c) {
            close(fd);
            continue;
        }
        c->fd = fd;
        struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP, .data.ptr = c };
        if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0) {
            close(fd);
            free(c);
        }
    }
}

/* Reads what is there and serves it; returns -1 when the connection ends. */
static int on_readable(struct conn *c)
{
    for (;;) {
        ssize_t r = recv(c->fd, c->buf + c->len, sizeof(c->buf) - c->len, 0);
        if (r == 0)
            return -1;
        if (r < 0)
            return errno == EAGAIN || errno == EINTR ? 0 : -1;
        c->len += (size_t)r;
        if (serve(c) < 0)
            return -1;
    }
}

static int listen_on(int port)
{
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((unsigned short)port) };
    int one = 1, fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
        bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 1024) < 0) {
        perror("perf-backend: listen");
        exit(1);
    }
    return fd;
}

int main(int argc, char **argv)
{
    struct epoll_event evs[MAX_EVENTS];
    int lfd, ep;
    if (argc != 2 || atoi(argv[1]) <= 0) {
        fprintf(stderr, "usage: perf-backend PORT   (listens on 127.0.0.1)\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    for (int closing = 0; closing < 2; closing++)
        response_len[closing] = (size_t)snprintf(
            response[closing], sizeof(response[closing]),
            "HTTP/1.1 200 OK\r\n"
            "Content-Type: text/html; charset=utf-8\r\n"
            "Content-Length: %zu\r\n"
            "Cache-Control: no-store\r\n"
            "Connection: %s\r\n"
            "\r\n%s", sizeof(BODY) - 1, closing ? "close" : "keep-alive", BODY);
    lfd = listen_on(atoi(argv[1]));
    ep = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event lev = { .events = EPOLLIN, .data.ptr = NULL };
    if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &lev) < 0) {
        perror("perf-backend: epoll");
        return 1;
    }
    for (;;) {
        int n = epoll_wait(ep, evs, MAX_EVENTS, -1);
        for (int i = 0; i < n; i++) {
            struct conn *c = evs[i].data.ptr;
            if (!c)
                accept_all(ep, lfd);
            else if ((evs[i].events & (EPOLLERR | EPOLLHUP)) || on_readable(c) < 0)
                close_conn(ep, c);
        }
        if (n < 0 && errno != EINTR) {
            perror("perf-backend: epoll_wait");
            return 1;
        }
    }
}
