/* A toy DUT library in plain C99 for the so: adapter's tests: it proves the
 * ABI header is C, and misbehaves on request (create option mode=NAME) so the
 * engine's guards can be shown to catch each breach. It speaks no MetaRoCE:
 * it counts the frames it receives, echoes each one back, and completes
 * every post at once.
 *
 * Built four times (tests/CMakeLists.txt): as is; with TOY_MAJOR=2 (an ABI
 * the engine does not speak); with TOY_OMIT_POLL (a missing symbol); with
 * TOY_CRASH_ON_LOAD (a constructor that segfaults). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mrct_dut.h"

#ifdef TOY_CRASH_ON_LOAD
__attribute__((constructor)) static void crash_on_load(void) { raise(SIGSEGV); }
#endif

#ifndef TOY_MAJOR
#define TOY_MAJOR MRCT_DUT_ABI_MAJOR
#endif

struct mrct_dut {
    mrct_dut_host host;
    char mode[64];
    char error[128];
    mrct_time_ns now;
    uint64_t frames_in;
    uint64_t posted;     /* completions owed */
    uint64_t next_wr_id; /* of the first owed */
    uint64_t polls;      /* mrct_dut_poll calls (counter "polls") */
    int started;
};

static int is(const mrct_dut *d, const char *m) { return strcmp(d->mode, m) == 0; }

static void crash(void) { raise(SIGSEGV); }


uint32_t mrct_dut_abi_version(void) { return ((uint32_t)TOY_MAJOR << 16) | MRCT_DUT_ABI_MINOR; }

const mrct_dut_info *mrct_dut_describe(void) {
    static const mrct_dut_bug bugs[] = {{"echo-twice", "MR-HDR-1", "echoes every frame twice"}};
    static const mrct_dut_info info = {"toy", "0", "write,send", 1, bugs};
    return &info;
}

mrct_dut *mrct_dut_create(const mrct_dut_host *host, const char *options, char *err, size_t err_cap) {
    mrct_dut *d;
    if (options && strncmp(options, "mode=", 5) != 0 && options[0] != '\0' && strncmp(options, "bug=", 4) != 0) {
        snprintf(err, err_cap, "unknown option in '%s'", options);
        return NULL;
    }
    d = calloc(1, sizeof *d);
    d->host = *host;
    if (options && strncmp(options, "mode=", 5) == 0) snprintf(d->mode, sizeof d->mode, "%s", options + 5);
    return d;
}

void mrct_dut_destroy(mrct_dut *d) { free(d); }

const char *mrct_dut_last_error(mrct_dut *d) {
    if (is(d, "internal")) return "the model fell over \xff\xfe in its ECC block";
    return d->error;
}

int mrct_dut_configure(mrct_dut *d, const char *name, const char *value) {
    (void)value;
    if (is(d, "send_in_configure")) d->host.transmit(d->host.ctx, (const uint8_t *)"x", 1);
    if (is(d, "refuse_config")) {
        snprintf(d->error, sizeof d->error, "no parameter '%s' here", name);
        return MRCT_E_INVALID_PARAM;
    }
    return MRCT_OK;
}

int mrct_dut_start(mrct_dut *d, const mrct_dut_addr *self, uint64_t seed) {
    (void)self;
    (void)seed;
    d->started = 1;
    return MRCT_OK;
}

void mrct_dut_advance(mrct_dut *d, mrct_time_ns now) { d->now = now; }

mrct_time_ns mrct_dut_next_time(mrct_dut *d) {
    if (is(d, "never_yields")) return d->now; /* always due again, now */
    if (is(d, "past_time")) return -5;
    if (is(d, "tick")) return d->now + 1000;
    return MRCT_NEVER;
}

void mrct_dut_receive(mrct_dut *d, mrct_time_ns now, const uint8_t *frame, size_t len) {
    static uint8_t big[MRCT_DUT_MAX_FRAME + 100];
    d->now = now;
    d->frames_in++;
    if (is(d, "crash")) {
        crash();
    } else if (is(d, "hang")) {
        for (;;) {
        }
    } else if (is(d, "big_frame")) {
        d->host.transmit(d->host.ctx, big, sizeof big);
    } else if (is(d, "flood")) {
        unsigned i;
        for (i = 0; i < 70000; ++i) d->host.transmit(d->host.ctx, frame, len);
    } else {
        d->host.transmit(d->host.ctx, frame, len);
    }
}

int mrct_dut_listen(mrct_dut *d, mrct_time_ns now) {
    d->now = now;
    if (is(d, "crash")) crash();
    if (is(d, "bad_status")) return 42;
    return MRCT_OK;
}

int mrct_dut_connect(mrct_dut *d, mrct_time_ns now, const mrct_dut_addr *peer, uint32_t *conn) {
    (void)peer;
    d->now = now;
    if (is(d, "crash")) crash();
    if (is(d, "bad_status")) return 42;
    *conn = 1;
    return MRCT_OK;
}

int mrct_dut_status(mrct_dut *d, uint32_t conn, mrct_conn_status *out) {
    if (is(d, "send_in_status")) d->host.transmit(d->host.ctx, (const uint8_t *)"x", 1);
    out->established = conn == 1;
    out->in_error = 0;
    out->closed = 0;
    return MRCT_OK;
}

int mrct_dut_accepted(mrct_dut *d, uint32_t *conns, size_t cap, size_t *n) {
    (void)d;
    *n = 1;
    if (cap) conns[0] = 1;
    return MRCT_OK;
}

int mrct_dut_close(mrct_dut *d, mrct_time_ns now, uint32_t conn) {
    (void)conn;
    d->now = now;
    return MRCT_OK;
}

int mrct_dut_register_mr(mrct_dut *d, mrct_time_ns now, uint64_t length, uint32_t *rkey, uint64_t *va) {
    (void)length;
    d->now = now;
    *rkey = 7;
    *va = 0x1000;
    return MRCT_OK;
}

int mrct_dut_post_recv(mrct_dut *d, mrct_time_ns now, uint32_t conn, uint16_t tag, uint32_t rkey, uint64_t offset,
                       uint32_t length, uint64_t wr_id) {
    (void)conn, (void)tag, (void)rkey, (void)offset, (void)length, (void)wr_id;
    d->now = now;
    return MRCT_OK;
}

static int post(mrct_dut *d, mrct_time_ns now, uint32_t conn, uint64_t wr_id) {
    d->now = now;
    if (is(d, "exit")) exit(3);
    if (is(d, "bad_status")) return 42;
    if (is(d, "internal")) return MRCT_E_INTERNAL;
    if (conn != 1) {
        snprintf(d->error, sizeof d->error, "unknown connection %u", (unsigned)conn);
        return MRCT_E_NOT_FOUND;
    }
    if (d->posted == 0) d->next_wr_id = wr_id;
    d->posted++;
    return MRCT_OK;
}

int mrct_dut_post_write(mrct_dut *d, mrct_time_ns now, uint32_t conn, uint16_t stream, const uint8_t *data, size_t len,
                        uint64_t remote_va, uint32_t rkey, uint64_t wr_id, int has_imm, uint32_t imm) {
    (void)stream, (void)data, (void)len, (void)remote_va, (void)rkey, (void)has_imm, (void)imm;
    return post(d, now, conn, wr_id);
}

int mrct_dut_post_send(mrct_dut *d, mrct_time_ns now, uint32_t conn, uint16_t stream, uint16_t tag, const uint8_t *data,
                       size_t len, uint64_t wr_id, int has_imm, uint32_t imm) {
    (void)stream, (void)tag, (void)data, (void)len, (void)has_imm, (void)imm;
    return post(d, now, conn, wr_id);
}

#ifndef TOY_OMIT_POLL
int mrct_dut_poll(mrct_dut *d, mrct_time_ns now, mrct_completion *out, size_t cap, size_t *n) {
    size_t k = 0;
    d->now = now;
    d->polls++;
    if (is(d, "poll_overflow")) {
        *n = cap + 1;
        return MRCT_OK;
    }
    while (d->posted && k < cap) {
        mrct_completion *c = &out[k++];
        memset(c, 0, sizeof *c);
        c->conn = 1;
        c->wr_id = d->next_wr_id++;
        c->kind = is(d, "bad_kind") ? 9 : MRCT_WC_WRITE;
        c->status = MRCT_WC_SUCCESS;
        c->time = is(d, "future_completion") ? now + 1000 : now;
        d->posted--;
    }
    *n = k;
    return MRCT_OK;
}
#endif

int mrct_dut_read_mem(mrct_dut *d, uint32_t rkey, uint64_t offset, uint8_t *out, uint64_t len) {
    (void)offset;
    if (rkey != 7) {
        snprintf(d->error, sizeof d->error, "unknown R_Key %u", (unsigned)rkey);
        return MRCT_E_NOT_FOUND;
    }
    memset(out, 0xab, len);
    return MRCT_OK;
}

int mrct_dut_counters(mrct_dut *d, mrct_counter *out, size_t cap, size_t *n) {
    *n = 2;
    if (cap < 2) return MRCT_OK;
    memset(out[1].name, 0, sizeof out[1].name);
    strcpy(out[1].name, "polls");
    out[1].value = d->polls;
    memset(out[0].name, 0, sizeof out[0].name);
    if (is(d, "unterminated_counter"))
        memset(out[0].name, 'a', sizeof out[0].name);
    else
        strcpy(out[0].name, "frames_in");
    out[0].value = d->frames_in;
    return MRCT_OK;
}
