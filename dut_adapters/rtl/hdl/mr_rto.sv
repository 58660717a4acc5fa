// mr_rto: the per-path retransmission timer unit of a MetaRoCE sender
// (MR-RTO-1, MR-RTO-2, MR-RTO-3; docs/rtl.md).
//
// One timer and one RFC 6298 estimator per path:
//   - SRTT and RTTVAR in fixed point with a 1 ns LSB, updated with the
//     integer arithmetic of RFC 6298 (first sample: SRTT = R, RTTVAR = R/2;
//     then RTTVAR = (3 RTTVAR + |SRTT - R|) / 4, SRTT = (7 SRTT + R) / 8,
//     quotients truncated);
//   - RTO = clamp(SRTT + 4 RTTVAR, rto_min, rto_max), rto_initial before the
//     first sample, doubled per consecutive expiry and capped at rto_max;
//   - Karn's rule: a sample of a retransmitted packet is ignored.
//
// Time is an input: `now` is a nanosecond timestamp (a free-running counter
// in silicon). Timers are deadlines compared with it, so the unit needs a
// clock edge only when a command arrives or an expiry is taken; the shell
// skips every idle cycle and asks `next_deadline` when to clock next.
//
// Commands (one per clock, cmd_valid):
//   SAMPLE  an ACK acknowledged the path's packet sent at cmd_sent_last
//           (first sent at cmd_sent_first; cmd_retransmitted: sent again)
//   ARM     (re)start the path's timer: deadline = now + RTO
//   CANCEL  stop it
//   ACKED   new data acknowledged on the path: consecutive expiries end
//   RESET   the path restarts as new (no sample, no backoff)
//   EXPIRE  the shell took the expiry exp_path showed: the timer stops and
//           the backoff counts one more
//
// Planted bugs (docs/rtl.md), one define each:
//   MR_BUG_SHARED_RTO  one timer and estimator serve every path (MR-RTO-2)
//   MR_BUG_NO_BACKOFF  the RTO is not doubled per expiry (MR-RTO-3)
//   MR_BUG_KARN_VIOLATION  a retransmitted packet gives an RTT sample,
//                      measured from its first transmission (MR-RTO-3)
module mr_rto #(
    parameter int unsigned NPATHS = 256,
    parameter int unsigned TW = 48,
    localparam int unsigned PW = $clog2(NPATHS)
) (
    input  logic          clk,
    input  logic          rst_n,
    input  logic [TW-1:0] now,
    input  logic [TW-1:0] cfg_rto_initial,
    input  logic [TW-1:0] cfg_rto_min,
    input  logic [TW-1:0] cfg_rto_max,

    input  logic          cmd_valid,
    input  logic [2:0]    cmd_op,
    input  logic [PW-1:0] cmd_path,
    input  logic [TW-1:0] cmd_sent_first,
    input  logic [TW-1:0] cmd_sent_last,
    input  logic          cmd_retransmitted,

    output logic          exp_valid,
    output logic [PW-1:0] exp_path,
    output logic [TW-1:0] next_deadline,  // all ones: no timer armed

    input  logic [PW-1:0] rd_path,
    output logic [TW-1:0] rd_rto,
    output logic [7:0]    rd_backoff,
    output logic [TW-1:0] rd_srtt,
    output logic [TW-1:0] rd_rttvar,
    output logic          rd_has_rtt,
    output logic          rd_armed        // the path's timer runs
);
    localparam logic [2:0] OP_SAMPLE = 3'd1, OP_ARM = 3'd2, OP_CANCEL = 3'd3, OP_ACKED = 3'd4, OP_RESET = 3'd5,
                           OP_EXPIRE = 3'd6;

    // Valid bits and counters reset; the values they qualify need none.
    logic [NPATHS-1:0]      has_rtt, armed;
    logic [NPATHS-1:0][7:0] backoff;
    logic [TW-1:0] srtt     [NPATHS];
    logic [TW-1:0] rttvar   [NPATHS];
    logic [TW-1:0] deadline [NPATHS];

    // The entry a path uses: its own, or entry 0 for all (the shared defect).
    /* verilator lint_off UNUSEDSIGNAL */
    function automatic logic [PW-1:0] entry(input logic [PW-1:0] p);
`ifdef MR_BUG_SHARED_RTO
        return '0;
`else
        return p;
`endif
    endfunction
    /* verilator lint_on UNUSEDSIGNAL */

    // RTO of one entry: clamped estimate (or the initial RTO), doubled per
    // consecutive expiry, at most rto_max. The doubling saturates: once past
    // rto_max it stays there, as repeated doubling would.
    function automatic logic [TW-1:0] rto_of(input logic [TW-1:0] s, input logic [TW-1:0] v, input logic h,
                                             input logic [7:0] b);
        logic [TW+2:0] est;
        logic [TW-1:0] base;
        logic [2*TW-1:0] wide;
        logic [7:0] k;
        est = {3'b0, s} + {1'b0, v, 2'b00};
        if (!h) base = cfg_rto_initial;
        else if (est < {3'b0, cfg_rto_min}) base = cfg_rto_min;
        else if (est > {3'b0, cfg_rto_max}) base = cfg_rto_max;
        else base = est[TW-1:0];
        k = b > 8'(TW) ? 8'(TW) : b;
        wide = {{TW{1'b0}}, base} << k;
        return wide > {{TW{1'b0}}, cfg_rto_max} ? cfg_rto_max : wide[TW-1:0];
    endfunction

    // The sample R: from the last transmission, or (Karn's rule broken) none
    // for a retransmitted packet. A stamp after `now` gives 0.
    logic [TW-1:0] r_sample;
    logic          r_taken;
    always_comb begin
`ifdef MR_BUG_KARN_VIOLATION
        // A retransmitted packet measured from its first transmission, and
        // taken: the ambiguity Karn's rule exists to avoid.
        if (cmd_retransmitted) r_sample = now > cmd_sent_first ? now - cmd_sent_first : '0;
        else r_sample = now > cmd_sent_last ? now - cmd_sent_last : '0;
        r_taken = 1'b1;
`else
        r_sample = now > cmd_sent_last ? now - cmd_sent_last : '0;
        r_taken = !cmd_retransmitted;
`endif
    end

    // Estimator update of the commanded entry.
    logic [PW-1:0] ce;
    logic [TW-1:0] new_srtt, new_rttvar, diff;
    logic [TW+1:0] var3;
    logic [TW+2:0] srtt7;
    always_comb begin
        ce = entry(cmd_path);
        diff = srtt[ce] > r_sample ? srtt[ce] - r_sample : r_sample - srtt[ce];
        var3 = {2'b0, rttvar[ce]} + {1'b0, rttvar[ce], 1'b0};
        srtt7 = {srtt[ce], 3'b000} - {3'b0, srtt[ce]};
        if (!has_rtt[ce]) begin
            new_srtt = r_sample;
            new_rttvar = r_sample >> 1;
        end else begin
            new_rttvar = TW'((var3 + {2'b0, diff}) >> 2);
            new_srtt = TW'((srtt7 + {3'b0, r_sample}) >> 3);
        end
    end

    // Control state (valid bits, counters): reset.
    always_ff @(posedge clk or negedge rst_n) begin
        if (!rst_n) begin
            has_rtt <= '0;
            armed <= '0;
            backoff <= '0;
        end else if (cmd_valid) begin
            unique case (cmd_op)
                OP_SAMPLE: if (r_taken) has_rtt[ce] <= 1'b1;
                OP_ARM: armed[ce] <= 1'b1;
                OP_CANCEL: armed[ce] <= 1'b0;
                OP_ACKED: backoff[ce] <= '0;
                OP_RESET: begin
                    has_rtt[ce] <= 1'b0;
                    backoff[ce] <= '0;
                end
                OP_EXPIRE: begin
                    armed[ce] <= 1'b0;
`ifndef MR_BUG_NO_BACKOFF
                    if (backoff[ce] != 8'hFF) backoff[ce] <= backoff[ce] + 8'd1;
`endif
                end
                default: ;
            endcase
        end
    end

    // Values the control bits qualify: no reset.
    always_ff @(posedge clk) begin
        if (cmd_valid && cmd_op == OP_SAMPLE && r_taken) begin
            srtt[ce] <= new_srtt;
            rttvar[ce] <= new_rttvar;
        end
        if (cmd_valid && cmd_op == OP_ARM) deadline[ce] <= now + rto_of(srtt[ce], rttvar[ce], has_rtt[ce], backoff[ce]);
    end

    // Expiries due now, lowest path first; the earliest armed deadline.
    mr_earliest #(.N(NPATHS), .TW(TW)) due (
        .armed(armed), .at(deadline), .now(now), .due_valid(exp_valid), .due_index(exp_path), .next(next_deadline));

    always_comb begin
        rd_rto = rto_of(srtt[entry(rd_path)], rttvar[entry(rd_path)], has_rtt[entry(rd_path)], backoff[entry(rd_path)]);
        rd_backoff = backoff[entry(rd_path)];
        rd_srtt = srtt[entry(rd_path)];
        rd_rttvar = rttvar[entry(rd_path)];
        rd_has_rtt = has_rtt[entry(rd_path)];
        rd_armed = armed[entry(rd_path)];
    end

    // cmd_sent_first serves only a Karn violation (a sample measured from
    // the first transmission, MR_BUG_KARN_VIOLATION); the clean unit ignores it.
    logic unused;
    assign unused = ^cmd_sent_first;
endmodule
