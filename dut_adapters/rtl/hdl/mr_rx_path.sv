// mr_rx_path: the receive side's per-path tracking and ACK generation of a
// MetaRoCE receiver (MR-SACK-1, MR-SACK-2, MR-SACK-5, MR-CC-1; docs/rtl.md).
//
// Per path: CumAck (the lowest PPSN not yet received, 24 bits), the 256-bit
// SACK bitmap (bit i: PPSN CumAck + i received; bit 0 is CumAck itself and
// never set), the highest PPSN seen, the CE count (16 bits, wrapping), the
// packets not yet acknowledged and the ACK timer.
//
// A data packet is classified first (combinationally, `cls_*`): behind
// CumAck or already in the bitmap is a duplicate; CumAck + 256 or beyond is
// out of the window (the shell answers NAK 0x0B). The shell then decides
// whether the packet is placed, and commands PACKET with `mark` (the PPSN
// counts as received) or not (a duplicate); the unit updates the path and
// says whether to ACK now (`ack_now`): on CE, on AckReq, on a new gap, or
// when ack_every packets are unacknowledged; otherwise it starts the path's
// ACK timer (ack_delay) if it is not running. The ACK's fields are on the
// read port after the command.
//
// Time is an input, as in mr_rto: the ACK timer is a deadline compared with
// `now`, and the shell clocks the unit only for a command.
//
// Commands (one per clock, cmd_valid):
//   RESTART  the path starts at cmd_ppsn (connection set-up, PATH_RESET)
//   PACKET   a data packet: cmd_ppsn, cmd_ce, cmd_ack_req, cmd_mark
//   ACKED    an ACK went out on the path (any trigger): the count and the
//            timer restart
//
// Planted bugs (docs/rtl.md):
//   MR_BUG_SACK_WORD     the SACK bitmap is reported one 32-bit word off
//                        (bit i + 32 shows PPSN CumAck + i): MR-SACK-1
//   MR_BUG_CE_SATURATES  the CE count stops at 15 instead of wrapping at
//                        65536: MR-CC-1 (the sender's ECE fraction)
//   MR_BUG_NO_SACK       ACKs carry CumAck with an empty SACK: packets
//                        received above a gap are never reported (MR-SACK-1)
//   MR_BUG_LAZY_ACK      neither AckReq nor a new gap asks for an ACK: only
//                        CE, ack_every packets or the ACK timer (MR-SACK-2)
module mr_rx_path #(
    parameter int unsigned NPATHS = 256,
    parameter int unsigned TW = 48,
    localparam int unsigned PW = $clog2(NPATHS)
) (
    input  logic          clk,
    input  logic          rst_n,
    input  logic [TW-1:0] now,
    input  logic [8:0]    cfg_ack_every,  // 1..256
    input  logic [TW-1:0] cfg_ack_delay,

    input  logic          cmd_valid,
    input  logic [1:0]    cmd_op,
    input  logic [PW-1:0] cmd_path,
    input  logic [23:0]   cmd_ppsn,
    input  logic          cmd_ce,
    input  logic          cmd_ack_req,
    input  logic          cmd_mark,

    // Classification of (cmd_path, cmd_ppsn), before any command.
    output logic          cls_duplicate,
    output logic          cls_out_of_window,

    // The last PACKET's decision.
    output logic          ack_now,

    // ACK timers due now, lowest path first; the earliest running one.
    output logic          tmo_valid,
    output logic [PW-1:0] tmo_path,
    output logic [TW-1:0] next_deadline,  // all ones: none running

    // An ACK's fields for rd_path.
    input  logic [PW-1:0] rd_path,
    output logic [23:0]   rd_cum_ack,
    output logic [255:0]  rd_sack,
    output logic [15:0]   rd_ce_count
);
    localparam logic [1:0] OP_RESTART = 2'd1, OP_PACKET = 2'd2, OP_ACKED = 2'd3;

    logic [23:0]  cum_ack  [NPATHS];
    logic [23:0]  highest  [NPATHS];
    logic [255:0] got      [NPATHS];
    logic [15:0]  ce_count [NPATHS];
    logic [8:0]   unacked  [NPATHS];
    logic [TW-1:0] ack_at  [NPATHS];
    logic [NPATHS-1:0] timing;  // the path's ACK timer runs

    // 24-bit serial arithmetic (RFC 1982): a < b.
    function automatic logic lt24(input logic [23:0] a, input logic [23:0] b);
        logic [23:0] d;
        d = b - a;
        return d != 0 && d < 24'h800000;
    endfunction

    // Classification.
    logic [23:0] d;
    logic behind, in_window;
    always_comb begin
        d = cmd_ppsn - cum_ack[cmd_path];
        behind = d >= 24'h800000;
        in_window = d < 24'd256;
        cls_duplicate = behind || (in_window && got[cmd_path][d[7:0]]);
        cls_out_of_window = !cls_duplicate && !in_window;
    end

    // A PACKET's update: the bitmap with this PPSN, slid over the run of
    // received PPSNs from CumAck; a new gap; the ACK decision.
    logic [255:0] marked, slid;
    logic [8:0]   run;
    logic         new_gap, decide_now;
    logic [8:0]   next_unacked;
    always_comb begin
        marked = got[cmd_path];
        if (cmd_mark && in_window) marked[d[7:0]] = 1'b1;
        run = 9'd256;
        for (int i = 255; i >= 0; i--)
            if (!marked[i]) run = 9'(i);
        slid = marked >> run;
        new_gap = cmd_mark && lt24(highest[cmd_path] + 24'd1, cmd_ppsn);
        next_unacked = unacked[cmd_path] + 9'd1;
`ifdef MR_BUG_LAZY_ACK
        decide_now = cmd_ce || next_unacked >= cfg_ack_every;
`else
        decide_now = cmd_ce || cmd_ack_req || new_gap || next_unacked >= cfg_ack_every;
`endif
    end
`ifdef MR_BUG_LAZY_ACK
    logic lazy_unused;
    assign lazy_unused = cmd_ack_req ^ new_gap;
`endif

    // Control state: reset.
    always_ff @(posedge clk or negedge rst_n) begin
        if (!rst_n) begin
            timing <= '0;
            ack_now <= 1'b0;
        end else if (cmd_valid) begin
            unique case (cmd_op)
                OP_RESTART: begin
                    timing[cmd_path] <= 1'b0;
                    ack_now <= 1'b0;
                end
                OP_PACKET: begin
                    ack_now <= decide_now;
                    if (decide_now) timing[cmd_path] <= 1'b0;
                    else timing[cmd_path] <= 1'b1;  // started now, or left running
                end
                OP_ACKED: timing[cmd_path] <= 1'b0;
                default: ;
            endcase
        end
    end

    // Per-path values.
    always_ff @(posedge clk) begin
        if (cmd_valid) begin
            unique case (cmd_op)
                OP_RESTART: begin
                    cum_ack[cmd_path] <= cmd_ppsn;
                    highest[cmd_path] <= cmd_ppsn - 24'd1;  // the next packet is no gap
                    got[cmd_path] <= '0;
                    ce_count[cmd_path] <= '0;
                    unacked[cmd_path] <= '0;
                end
                OP_PACKET: begin
                    if (cmd_ce) begin
`ifdef MR_BUG_CE_SATURATES
                        if (ce_count[cmd_path] != 16'd15) ce_count[cmd_path] <= ce_count[cmd_path] + 16'd1;
`else
                        ce_count[cmd_path] <= ce_count[cmd_path] + 16'd1;
`endif
                    end
                    if (cmd_mark) begin
                        if (lt24(highest[cmd_path], cmd_ppsn)) highest[cmd_path] <= cmd_ppsn;
                        got[cmd_path] <= slid;
                        cum_ack[cmd_path] <= cum_ack[cmd_path] + 24'(run);
                    end
                    if (decide_now) unacked[cmd_path] <= '0;
                    else unacked[cmd_path] <= next_unacked;
                    if (!decide_now && !timing[cmd_path]) ack_at[cmd_path] <= now + cfg_ack_delay;
                end
                OP_ACKED: unacked[cmd_path] <= '0;
                default: ;
            endcase
        end
    end

    // ACK timers due now, lowest path first; the earliest running one.
    mr_earliest #(.N(NPATHS), .TW(TW)) due (
        .armed(timing), .at(ack_at), .now(now), .due_valid(tmo_valid), .due_index(tmo_path), .next(next_deadline));

    always_comb begin
        rd_cum_ack = cum_ack[rd_path];
`ifdef MR_BUG_SACK_WORD
        rd_sack = got[rd_path] << 32;
`elsif MR_BUG_NO_SACK
        rd_sack = '0;
`else
        rd_sack = got[rd_path];
`endif
        rd_ce_count = ce_count[rd_path];
    end
endmodule
