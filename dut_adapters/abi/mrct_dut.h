/*
 * mrct_dut.h: the in-process DUT ABI, version 1.0 (docs/dut-abi.md).
 *
 * A device under test built as a shared library: a software model, a C model
 * of a NIC, or an RTL simulation (Verilator) with its shell. mrct loads it with
 * `--dut so:PATH.so[,KEY=VALUE...]` and drives it in virtual time: the engine
 * owns the clock, tells the DUT the time on every call, and asks it when it
 * next needs to run. The control operations are those of the agent protocol
 * (docs/agent-protocol.md), with its error codes.
 *
 * Plain C99, no dependency beyond <stddef.h> and <stdint.h>, so a vendor's
 * model in any language with a C FFI can implement it. The library exports
 * every function declared below under exactly these names (extern "C" from
 * C++). mrct checks the version first and refuses a library whose major
 * version differs or that lacks a symbol, naming what is missing.
 *
 * Rules every call obeys (the engine guarantees them; a DUT may rely on them):
 *  - One thread at a time per DUT instance; never re-entered: the engine does
 *    not call into a DUT from inside its transmit callback (frames sent during
 *    a call are queued by the engine and delivered after the call returns).
 *  - Time never goes backwards: `now` of each call is >= that of the last.
 *  - Before a call at time `now` the engine has called mrct_dut_advance(t)
 *    for every time t < now that mrct_dut_next_time() asked for.
 *  - A call at `now` happens after everything the DUT had due strictly before
 *    `now`; work due at exactly `now` runs at mrct_dut_advance(now), which
 *    the engine calls after the call if mrct_dut_next_time() returns `now`
 *    or earlier (D81 in docs/decisions.md).
 *
 * What the engine checks (a breach ends the case as `error`, naming the
 * function and what was wrong; it never crashes the engine): status codes in
 * range, counts within the capacity given, completions with known kinds and
 * statuses and times not in the future, frames within MRCT_DUT_MAX_FRAME,
 * next times not in the past, a bounded number of frames and advances per
 * virtual instant (a DUT that never yields), strings NUL-terminated within
 * their bound. A library that crashes or hangs takes the engine's process
 * with it unless it runs isolated (docs/dut-abi.md, "Guards").
 */
#ifndef MRCT_DUT_H
#define MRCT_DUT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MRCT_DUT_ABI_MAJOR 1
#define MRCT_DUT_ABI_MINOR 0
#define MRCT_DUT_ABI_VERSION ((uint32_t)((MRCT_DUT_ABI_MAJOR << 16) | MRCT_DUT_ABI_MINOR))

/* Virtual time in nanoseconds since the case began. */
typedef int64_t mrct_time_ns;
#define MRCT_NEVER INT64_MAX

/* The largest frame either side hands over (Ethernet frame without FCS). */
#define MRCT_DUT_MAX_FRAME 16384u
/* Bounds of one registration and of all of a DUT's registrations together. */
#define MRCT_DUT_MAX_MR (1ull << 30)

/* Status of a call: the agent protocol's error codes (docs/agent-protocol.md,
 * "Errors"). On anything but MRCT_OK, mrct_dut_last_error() says why. */
typedef enum mrct_status {
    MRCT_OK = 0,
    MRCT_E_BAD_REQUEST = 1,   /* an argument out of its range */
    MRCT_E_BAD_STATE = 2,     /* not allowed now (configure after start) */
    MRCT_E_INVALID_PARAM = 3, /* configure: unknown name or bad value */
    MRCT_E_NOT_FOUND = 4,     /* unknown connection or R_Key */
    MRCT_E_OUT_OF_RANGE = 5,  /* read_mem beyond the region */
    MRCT_E_FAILED = 6,        /* the DUT refused the operation */
    MRCT_E_INTERNAL = 7       /* the DUT failed; the case ends as error */
} mrct_status;

/* An address on the DUT's wire: IPv4 (ip[0..3]) or IPv6 (ip[0..15]). */
typedef struct mrct_dut_addr {
    uint8_t mac[6];
    uint8_t ip_version; /* 4 or 6 */
    uint8_t reserved;
    uint8_t ip[16];
} mrct_dut_addr;

/* The work completion kinds and statuses of the agent protocol. */
typedef enum mrct_wc_kind { MRCT_WC_SEND = 0, MRCT_WC_WRITE = 1, MRCT_WC_RECV = 2, MRCT_WC_RECV_WRITE_IMM = 3 } mrct_wc_kind;
typedef enum mrct_wc_status {
    MRCT_WC_SUCCESS = 0,
    MRCT_WC_RETRY_EXCEEDED = 1,     /* MR-SACK-6 */
    MRCT_WC_REMOTE_ACCESS = 2,      /* NAK 0x02 */
    MRCT_WC_REMOTE_INVALID = 3,     /* NAK 0x01 */
    MRCT_WC_REMOTE_OPERATIONAL = 4, /* NAK 0x03 */
    MRCT_WC_HEADER_MISMATCH = 5,    /* NAK 0x0F */
    MRCT_WC_CONNECTION_ERROR = 6    /* NAK 0x0E/0x10/0x20, CONNECT or RNR_QUERY unanswered */
} mrct_wc_status;

typedef struct mrct_completion {
    uint64_t wr_id;
    mrct_time_ns time; /* when it completed (<= the poll's now) */
    uint32_t conn;
    uint32_t stream_seq;
    uint32_t length;
    uint32_t imm;      /* valid when has_imm */
    uint16_t stream;
    uint16_t tag;
    uint8_t kind;      /* mrct_wc_kind */
    uint8_t status;    /* mrct_wc_status */
    uint8_t has_imm;
    uint8_t reserved;
} mrct_completion;

typedef struct mrct_conn_status {
    uint8_t established, in_error, closed, reserved;
} mrct_conn_status;

/* One counter by the agent protocol's names ("frames_in", "drop.bad_icrc"). */
typedef struct mrct_counter {
    char name[48]; /* NUL-terminated */
    uint64_t value;
} mrct_counter;

/* A bug the library can plant (`so:PATH,bug=NAME`), for `mrct selftest`'s
 * kill matrix: each must be caught by a case citing one of its clauses. */
typedef struct mrct_dut_bug {
    const char *name;    /* e.g. "frozen-rnr" */
    const char *clauses; /* the clauses it breaks, comma-separated: "MR-RNR-3,MR-RNR-4" */
    const char *summary; /* one line */
} mrct_dut_bug;

/* What the library is; static storage, valid while it is loaded. */
typedef struct mrct_dut_info {
    const char *name;         /* "acme-nic-rtl" */
    const char *version;      /* the model's own version */
    const char *capabilities; /* comma-separated: docs/dut-abi.md, "Capabilities" */
    size_t n_bugs;
    const mrct_dut_bug *bugs;
} mrct_dut_info;

/* The engine's side, given at create. Frames the DUT sends go through
 * transmit at the time of the call they are sent in; the bytes are copied
 * before it returns. log is for diagnostics (may be called any time). */
typedef struct mrct_dut_host {
    uint32_t size; /* sizeof(mrct_dut_host) of the engine: later versions append fields */
    void *ctx;
    void (*transmit)(void *ctx, const uint8_t *frame, size_t len);
    void (*log)(void *ctx, const char *line);
} mrct_dut_host;

typedef struct mrct_dut mrct_dut; /* the library's instance, opaque */

/* The functions below are the library's exports: visible even when the
 * library is built with -fvisibility=hidden (as it should be). */
#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

/* --- The library ---------------------------------------------------------- */

/* MRCT_DUT_ABI_VERSION of the header the library was built with. */
uint32_t mrct_dut_abi_version(void);
const mrct_dut_info *mrct_dut_describe(void);

/* --- An instance: one per test case ---------------------------------------- */

/* `options`: the KEY=VALUE pairs of the DUT spec after the path, comma-
 * separated ("" for none), less the engine's own (docs/dut-abi.md).
 * NULL on error, with the reason in err (NUL-terminated, at most err_cap). */
mrct_dut *mrct_dut_create(const mrct_dut_host *host, const char *options, char *err, size_t err_cap);
void mrct_dut_destroy(mrct_dut *d);
/* The message of the last call that failed (static or instance storage). */
const char *mrct_dut_last_error(mrct_dut *d);

/* Parameters by the agent protocol's names (mtu, num_paths, rto_min, ...);
 * values with units as strings ("100us"). Only before start. */
int mrct_dut_configure(mrct_dut *d, const char *name, const char *value);
/* Brings the DUT up at time 0 with its wire address. `seed`: the DUT's
 * random choices (initial PPSNs), as the agent protocol's reset. */
int mrct_dut_start(mrct_dut *d, const mrct_dut_addr *self, uint64_t seed);

/* Time. advance runs everything due at or before `now`; next_time says when
 * the DUT next needs to run: a time > the last call's now, or MRCT_NEVER. */
void mrct_dut_advance(mrct_dut *d, mrct_time_ns now);
mrct_time_ns mrct_dut_next_time(mrct_dut *d);

/* A frame from the wire, arriving at `now`. */
void mrct_dut_receive(mrct_dut *d, mrct_time_ns now, const uint8_t *frame, size_t len);

/* Control operations of the agent protocol. */
int mrct_dut_listen(mrct_dut *d, mrct_time_ns now);
int mrct_dut_connect(mrct_dut *d, mrct_time_ns now, const mrct_dut_addr *peer, uint32_t *conn);
int mrct_dut_status(mrct_dut *d, uint32_t conn, mrct_conn_status *out);
/* Connections peers opened, oldest first; *n is the total (may exceed cap). */
int mrct_dut_accepted(mrct_dut *d, uint32_t *conns, size_t cap, size_t *n);
int mrct_dut_close(mrct_dut *d, mrct_time_ns now, uint32_t conn);
int mrct_dut_register_mr(mrct_dut *d, mrct_time_ns now, uint64_t length, uint32_t *rkey, uint64_t *va);
int mrct_dut_post_recv(mrct_dut *d, mrct_time_ns now, uint32_t conn, uint16_t tag, uint32_t rkey, uint64_t offset,
                       uint32_t length, uint64_t wr_id);
int mrct_dut_post_write(mrct_dut *d, mrct_time_ns now, uint32_t conn, uint16_t stream, const uint8_t *data, size_t len,
                        uint64_t remote_va, uint32_t rkey, uint64_t wr_id, int has_imm, uint32_t imm);
int mrct_dut_post_send(mrct_dut *d, mrct_time_ns now, uint32_t conn, uint16_t stream, uint16_t tag, const uint8_t *data,
                       size_t len, uint64_t wr_id, int has_imm, uint32_t imm);
/* Completions since the last poll, oldest first: up to cap into out, *n how
 * many were written; the engine polls again while *n == cap. */
int mrct_dut_poll(mrct_dut *d, mrct_time_ns now, mrct_completion *out, size_t cap, size_t *n);
int mrct_dut_read_mem(mrct_dut *d, uint32_t rkey, uint64_t offset, uint8_t *out, uint64_t len);
/* All counters: *n is the total; if it exceeds cap, call again with more room. */
int mrct_dut_counters(mrct_dut *d, mrct_counter *out, size_t cap, size_t *n);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif

#endif /* MRCT_DUT_H */
