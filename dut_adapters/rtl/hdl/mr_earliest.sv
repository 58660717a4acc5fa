// mr_earliest: of N deadlines, the lowest-numbered one that has come (at or
// before `now`) and the earliest of all that are armed. The timer units
// (mr_rto, mr_rx_path, mr_rnr) keep their timers as deadlines against a
// nanosecond timestamp; this is how they say what is due and when to clock
// them next (docs/rtl.md, "Clock model").
module mr_earliest #(
    parameter int unsigned N = 256,
    parameter int unsigned TW = 48,
    localparam int unsigned IW = N > 1 ? $clog2(N) : 1
) (
    input  logic [N-1:0]  armed,
    input  logic [TW-1:0] at [N],
    input  logic [TW-1:0] now,
    output logic          due_valid,
    output logic [IW-1:0] due_index,
    output logic [TW-1:0] next  // all ones: none armed
);
    always_comb begin
        due_valid = 1'b0;
        due_index = '0;
        next = '1;
        for (int unsigned i = 0; i < N; i++) begin
            if (armed[i] && at[i] <= now && !due_valid) begin
                due_valid = 1'b1;
                due_index = IW'(i);
            end
            if (armed[i] && at[i] < next) next = at[i];
        end
    end
endmodule
