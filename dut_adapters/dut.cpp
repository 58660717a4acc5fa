// The DUT interface's own definitions (dut_adapters/dut.h): with the so:
// adapter in the lowest DUT module, which mrct-dut-host links alone.
#include "dut_adapters/dut.h"

namespace mrct::dut {

endpoint::address dut::address() const { return {{0x02, 0, 0, 0, 0, 0x01}, {10, 0, 0, 1}}; }
endpoint::address dut::peer_address() const { return {{0x02, 0, 0, 0, 0, 0x02}, {10, 0, 0, 2}}; }

}  // namespace mrct::dut
