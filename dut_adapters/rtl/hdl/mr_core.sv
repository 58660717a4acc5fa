// mr_core: the timing-critical core of one MetaRoCE connection, as the RTL
// DUT's shell drives it (docs/rtl.md): the receive path (mr_rx_path), the
// per-path retransmission timers (mr_rto) and the per-tag RNR pauses
// (mr_rnr) on one clock and one time base, with the earliest deadline of
// the three for the shell to clock the core next. Each unit keeps its own
// command port (one command per clock to one unit); planted bugs are the
// units' defines.
module mr_core #(
    parameter int unsigned NPATHS = 256,
    parameter int unsigned NSLOTS = 16,
    parameter int unsigned TW = 48,
    localparam int unsigned PW = $clog2(NPATHS),
    localparam int unsigned SW = $clog2(NSLOTS)
) (
    input  logic          clk,
    input  logic          rst_n,
    input  logic [TW-1:0] now,
    output logic [TW-1:0] next_deadline,  // the earliest of the units' (all ones: none)

    // mr_rx_path
    input  logic [8:0]    cfg_ack_every,
    input  logic [TW-1:0] cfg_ack_delay,
    input  logic          rx_cmd_valid,
    input  logic [1:0]    rx_cmd_op,
    input  logic [PW-1:0] rx_cmd_path,
    input  logic [23:0]   rx_cmd_ppsn,
    input  logic          rx_cmd_ce,
    input  logic          rx_cmd_ack_req,
    input  logic          rx_cmd_mark,
    output logic          rx_cls_duplicate,
    output logic          rx_cls_out_of_window,
    output logic          rx_ack_now,
    output logic          rx_tmo_valid,
    output logic [PW-1:0] rx_tmo_path,
    input  logic [PW-1:0] rx_rd_path,
    output logic [23:0]   rx_rd_cum_ack,
    output logic [255:0]  rx_rd_sack,
    output logic [15:0]   rx_rd_ce_count,

    // mr_rto
    input  logic [TW-1:0] cfg_rto_initial,
    input  logic [TW-1:0] cfg_rto_min,
    input  logic [TW-1:0] cfg_rto_max,
    input  logic          rto_cmd_valid,
    input  logic [2:0]    rto_cmd_op,
    input  logic [PW-1:0] rto_cmd_path,
    input  logic [TW-1:0] rto_cmd_sent_first,
    input  logic [TW-1:0] rto_cmd_sent_last,
    input  logic          rto_cmd_retransmitted,
    output logic          rto_exp_valid,
    output logic [PW-1:0] rto_exp_path,
    input  logic [PW-1:0] rto_rd_path,
    output logic [TW-1:0] rto_rd_rto,
    output logic [7:0]    rto_rd_backoff,
    output logic [TW-1:0] rto_rd_srtt,
    output logic [TW-1:0] rto_rd_rttvar,
    output logic          rto_rd_has_rtt,
    output logic          rto_rd_armed,

    // mr_rnr
    input  logic          rnr_cmd_valid,
    input  logic [1:0]    rnr_cmd_op,
    input  logic [15:0]   rnr_cmd_tag,
    input  logic [4:0]    rnr_cmd_code,
    input  logic [3:0]    rnr_cmd_rnr_attempt,
    input  logic [3:0]    rnr_cmd_msg_attempt,
    input  logic [SW-1:0] rnr_cmd_slot,
    output logic          rnr_accepted,
    output logic          rnr_full,
    output logic          rnr_res_valid,
    output logic [SW-1:0] rnr_res_slot,
    output logic [15:0]   rnr_res_tag,
    input  logic [15:0]   rnr_rd_tag,
    output logic          rnr_rd_paused,
    input  logic [3:0]    rnr_attempt,
    output logic [3:0]    rnr_next_attempt
);
    logic [TW-1:0] rx_next, rto_next, rnr_next;
    /* verilator lint_off UNUSEDSIGNAL */
    logic [TW-1:0] rnr_rd_until;  // the shell asks only whether a tag is paused
    /* verilator lint_on UNUSEDSIGNAL */

    mr_rx_path #(.NPATHS(NPATHS), .TW(TW)) rx (
        .clk, .rst_n, .now, .cfg_ack_every, .cfg_ack_delay,
        .cmd_valid(rx_cmd_valid), .cmd_op(rx_cmd_op), .cmd_path(rx_cmd_path), .cmd_ppsn(rx_cmd_ppsn),
        .cmd_ce(rx_cmd_ce), .cmd_ack_req(rx_cmd_ack_req), .cmd_mark(rx_cmd_mark),
        .cls_duplicate(rx_cls_duplicate), .cls_out_of_window(rx_cls_out_of_window), .ack_now(rx_ack_now),
        .tmo_valid(rx_tmo_valid), .tmo_path(rx_tmo_path), .next_deadline(rx_next),
        .rd_path(rx_rd_path), .rd_cum_ack(rx_rd_cum_ack), .rd_sack(rx_rd_sack), .rd_ce_count(rx_rd_ce_count));

    mr_rto #(.NPATHS(NPATHS), .TW(TW)) rto (
        .clk, .rst_n, .now, .cfg_rto_initial, .cfg_rto_min, .cfg_rto_max,
        .cmd_valid(rto_cmd_valid), .cmd_op(rto_cmd_op), .cmd_path(rto_cmd_path),
        .cmd_sent_first(rto_cmd_sent_first), .cmd_sent_last(rto_cmd_sent_last),
        .cmd_retransmitted(rto_cmd_retransmitted),
        .exp_valid(rto_exp_valid), .exp_path(rto_exp_path), .next_deadline(rto_next),
        .rd_path(rto_rd_path), .rd_rto(rto_rd_rto), .rd_backoff(rto_rd_backoff), .rd_srtt(rto_rd_srtt),
        .rd_rttvar(rto_rd_rttvar), .rd_has_rtt(rto_rd_has_rtt),
        .rd_armed(rto_rd_armed));

    mr_rnr #(.NSLOTS(NSLOTS), .TW(TW)) rnr (
        .clk, .rst_n, .now,
        .cmd_valid(rnr_cmd_valid), .cmd_op(rnr_cmd_op), .cmd_tag(rnr_cmd_tag), .cmd_code(rnr_cmd_code),
        .cmd_rnr_attempt(rnr_cmd_rnr_attempt), .cmd_msg_attempt(rnr_cmd_msg_attempt), .cmd_slot(rnr_cmd_slot),
        .accepted(rnr_accepted), .full(rnr_full),
        .res_valid(rnr_res_valid), .res_slot(rnr_res_slot), .res_tag(rnr_res_tag), .next_deadline(rnr_next),
        .rd_tag(rnr_rd_tag), .rd_paused(rnr_rd_paused), .rd_until(rnr_rd_until),
        .attempt(rnr_attempt), .next_attempt(rnr_next_attempt));

    always_comb begin
        next_deadline = rx_next;
        if (rto_next < next_deadline) next_deadline = rto_next;
        if (rnr_next < next_deadline) next_deadline = rnr_next;
    end
endmodule
