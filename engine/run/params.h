// The protocol parameters of an endpoint's configuration, as the checks
// take them. Apart from runner.h: `mrct check` needs this and not the runner.
#pragma once

#include "endpoint/config.h"
#include "trace/trace.h"

namespace mrct::run {

// The protocol parameters a trace carries (trace::params) of an endpoint's
// configuration: what the checks' tolerances are in. The runner's case takes
// the DUT's, with NumPaths and MTU agreed with the peer; `mrct check` the
// ones it is given.
trace::params protocol_params(const endpoint::config& c);

}  // namespace mrct::run
