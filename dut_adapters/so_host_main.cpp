// mrct-dut-host: hosts one instance of a DUT library for the engine
// (`--dut so:PATH,isolate=process`, the default): a crash or a hang in the
// library ends this process, and the engine's case as `error`, not the engine.
// Started by the engine only: mrct-dut-host --fd N PATH (docs/dut-abi.md).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "dut_adapters/so_library.h"

int main(int argc, char** argv) {
    if (argc != 4 || std::strcmp(argv[1], "--fd") != 0) {
        std::fprintf(stderr,
                     "usage: mrct-dut-host --fd N LIBRARY.so\n"
                     "Started by mrct for --dut so:LIBRARY.so (isolate=process): serves one DUT instance over fd N.\n");
        return 2;
    }
    return mrct::dut::host_main(std::atoi(argv[2]), argv[3]);
}
