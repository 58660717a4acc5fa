// mr_rnr: the per-tag RNR pause unit of a MetaRoCE sender (MR-RNR-2,
// MR-RNR-4; spec model §4, the RNR timer table; docs/rtl.md).
//
// An RNR names a tag, a TimerCode and the Attempt it rejects. The unit
// accepts it only for the message's current Attempt (a stale RNR changes
// nothing), pauses that tag until the latest-ending timer on it (now +
// the decoded TimerCode), and shows the tag for resumption when the time
// has come; the shell then re-sends the rejected messages with Attempt + 1
// (mod 16, the field's width), which `next_attempt` gives.
//
// Paused tags live in a small content-addressed table (NSLOTS entries): a
// NIC pauses a handful of tags at once, not 65,536. A pause that finds the
// table full is refused (`full`), for the shell to count as an error.
//
// Time is an input, as in mr_rto: a pause is a deadline compared with `now`,
// and the shell clocks the unit only for a command.
//
// Commands (one per clock, cmd_valid):
//   PAUSE   cmd_tag, cmd_code, cmd_rnr_attempt, cmd_msg_attempt
//   RESUMED the shell took the resumption res_slot showed: the slot frees
//
// Planted bugs (docs/rtl.md):
//   MR_BUG_FROZEN_RNR      the pause never expires: the tag never resumes (MR-RNR-4)
//   MR_BUG_RNR_PAUSES_ALL  a pause on one tag holds every tag (MR-RNR-2, MR-RNR-3)
module mr_rnr #(
    parameter int unsigned NSLOTS = 16,
    parameter int unsigned TW = 48,
    localparam int unsigned SW = $clog2(NSLOTS)
) (
    input  logic          clk,
    input  logic          rst_n,
    input  logic [TW-1:0] now,

    input  logic          cmd_valid,
    input  logic [1:0]    cmd_op,
    input  logic [15:0]   cmd_tag,
    input  logic [4:0]    cmd_code,
    input  logic [3:0]    cmd_rnr_attempt,
    input  logic [3:0]    cmd_msg_attempt,
    input  logic [SW-1:0] cmd_slot,

    output logic          accepted,  // the last PAUSE applied (its Attempt was current)
    output logic          full,      // the last PAUSE found no free slot

    output logic          res_valid,
    output logic [SW-1:0] res_slot,
    output logic [15:0]   res_tag,
    output logic [TW-1:0] next_deadline,  // all ones: nothing paused

    input  logic [15:0]   rd_tag,
    output logic          rd_paused,      // rd_tag is paused now
    output logic [TW-1:0] rd_until,

    input  logic [3:0]    attempt,
    output logic [3:0]    next_attempt
);
    localparam logic [1:0] OP_PAUSE = 2'd1, OP_RESUMED = 2'd2;

    // §4's RNR timer table, in units of 10 us, indexed by TimerCode
    // (InfiniBand's RNR NAK timer field): code 0 is the longest, 655.36 ms.
    function automatic logic [16:0] table_10us(input logic [4:0] code);
        unique case (code)
            5'd0: return 17'd65536;
            5'd1: return 17'd1;
            5'd2: return 17'd2;
            5'd3: return 17'd3;
            5'd4: return 17'd4;
            5'd5: return 17'd6;
            5'd6: return 17'd8;
            5'd7: return 17'd12;
            5'd8: return 17'd16;
            5'd9: return 17'd24;
            5'd10: return 17'd32;
            5'd11: return 17'd48;
            5'd12: return 17'd64;
            5'd13: return 17'd96;
            5'd14: return 17'd128;
            5'd15: return 17'd192;
            5'd16: return 17'd256;
            5'd17: return 17'd384;
            5'd18: return 17'd512;
            5'd19: return 17'd768;
            5'd20: return 17'd1024;
            5'd21: return 17'd1536;
            5'd22: return 17'd2048;
            5'd23: return 17'd3072;
            5'd24: return 17'd4096;
            5'd25: return 17'd6144;
            5'd26: return 17'd8192;
            5'd27: return 17'd12288;
            5'd28: return 17'd16384;
            5'd29: return 17'd24576;
            5'd30: return 17'd32768;
            default: return 17'd49152;
        endcase
    endfunction

    logic [NSLOTS-1:0] valid;
    logic [15:0]   tag   [NSLOTS];
    logic [TW-1:0] ends  [NSLOTS];

    // The PAUSE: its duration, the slot holding its tag, or else a free one.
    logic [TW-1:0] pause_until;
    logic          hit, free_found, current;
    logic [SW-1:0] hit_slot, free_slot;
    always_comb begin
        pause_until = now + TW'(table_10us(cmd_code)) * TW'(10000);
        current = cmd_rnr_attempt == cmd_msg_attempt;
        hit = 1'b0;
        hit_slot = '0;
        free_found = 1'b0;
        free_slot = '0;
        for (int unsigned i = 0; i < NSLOTS; i++) begin
            if (valid[i] && tag[i] == cmd_tag && !hit) begin
                hit = 1'b1;
                hit_slot = SW'(i);
            end
            if (!valid[i] && !free_found) begin
                free_found = 1'b1;
                free_slot = SW'(i);
            end
        end
    end
    wire pause = cmd_valid && cmd_op == OP_PAUSE && current && (hit || free_found);
    wire [SW-1:0] pause_slot = hit ? hit_slot : free_slot;

    always_ff @(posedge clk or negedge rst_n) begin
        if (!rst_n) begin
            valid <= '0;
            accepted <= 1'b0;
            full <= 1'b0;
        end else if (cmd_valid) begin
            if (cmd_op == OP_PAUSE) begin
                accepted <= pause;
                full <= current && !hit && !free_found;
                if (pause) valid[pause_slot] <= 1'b1;
            end else if (cmd_op == OP_RESUMED) begin
                valid[cmd_slot] <= 1'b0;
            end
        end
    end

    // MR-RNR-2: until the latest-ending timer on the tag.
    always_ff @(posedge clk) begin
        if (pause) begin
            tag[pause_slot] <= cmd_tag;
            if (!hit || pause_until > ends[pause_slot]) ends[pause_slot] <= pause_until;
        end
    end

    // Resumptions due now, lowest slot first; the earliest pause end. The
    // frozen defect's pauses never come due.
`ifdef MR_BUG_FROZEN_RNR
    wire [NSLOTS-1:0] timed = '0;
`else
    wire [NSLOTS-1:0] timed = valid;
`endif
    mr_earliest #(.N(NSLOTS), .TW(TW)) due (
        .armed(timed), .at(ends), .now(now), .due_valid(res_valid), .due_index(res_slot), .next(next_deadline));
    assign res_tag = tag[res_slot];

`ifdef MR_BUG_RNR_PAUSES_ALL
    // Any paused slot holds every tag, until the latest pause ends.
    always_comb begin
        rd_paused = 1'b0;
        rd_until = '0;
        for (int unsigned i = 0; i < NSLOTS; i++)
            if (valid[i]) begin
                rd_paused = 1'b1;
                if (ends[i] > rd_until) rd_until = ends[i];
            end
    end
    logic all_unused;
    assign all_unused = ^rd_tag;
`else
    always_comb begin
        rd_paused = 1'b0;
        rd_until = '0;
        for (int unsigned i = 0; i < NSLOTS; i++)
            if (valid[i] && tag[i] == rd_tag) begin
                rd_paused = 1'b1;
                rd_until = ends[i];
            end
    end
`endif

    assign next_attempt = attempt + 4'd1;
endmodule
