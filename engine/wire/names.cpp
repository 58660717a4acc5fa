// Display names for the wire enums: used by the CLI, JSON and the Lua dissector
// test, so they are kept identical to the spec model's spelling.
#include <cstdio>

#include "wire/frame.h"
#include "wire/protocol.h"

namespace mrct::wire {

std::string_view opcode_name(std::uint8_t op) {
    switch (op) {
    case 0xC0: return "WRITE";
    case 0xC1: return "WRITE_IMM";
    case 0xC2: return "SEND";
    case 0xC3: return "SEND_IMM";
    case 0xD0: return "ACK";
    case 0xD1: return "NAK";
    case 0xD2: return "RNR";
    case 0xD3: return "CTRL";
    default: return "RESERVED";
    }
}

std::string_view nak_code_name(std::uint8_t code) {
    switch (code) {
    case 0x01: return "INVALID_REQUEST";
    case 0x02: return "REMOTE_ACCESS_ERROR";
    case 0x03: return "REMOTE_OPERATIONAL_ERROR";
    case 0x0B: return "PSN_OUT_OF_WINDOW";
    case 0x0E: return "UNKNOWN_CONNECTION";
    case 0x0F: return "HEADER_MISMATCH";
    case 0x10: return "CONNECTION_CLOSING";
    case 0x20: return "INVALID_PATH_ID";
    default: return "UNKNOWN";
    }
}

std::string_view ctrl_type_name(std::uint8_t type) {
    static constexpr std::string_view k_names[] = {
        "UNKNOWN", "CONNECT", "ACCEPT", "REJECT", "CLOSE", "CLOSE_ACK", "PROBE",
        "PROBE_REPLY", "RNR_QUERY", "RNR_SYNC", "PATH_RESET", "PATH_RESET_ACK",
    };
    return type < std::size(k_names) ? k_names[type] : k_names[0];
}

std::string_view tlv_type_name(std::uint8_t type) {
    static constexpr std::string_view k_names[] = {
        "UNKNOWN", "VERSION", "NUM_PATHS", "SRC_CONN_ID", "MTU", "INITIAL_PPSN",
        "REJECT_REASON", "RNR_COUNT", "PATH_ID", "NONCE",
    };
    return type < std::size(k_names) ? k_names[type] : k_names[0];
}

std::string_view layer_name(layer l) {
    static constexpr std::string_view k_names[] = {
        "ethernet", "vlan", "ipv4", "ipv6", "udp", "bth", "mrh", "reth", "seth",
        "immdt", "ackh", "nakh", "rnrh", "ctrlh", "tlv", "payload", "icrc",
    };
    return k_names[static_cast<unsigned>(l)];
}

std::string_view drop_reason_name(drop_reason r) {
    static constexpr std::string_view k_names[k_drop_reason_count] = {
        "truncated", "unsupported_ethertype", "bad_ip_version", "bad_header_length",
        "bad_length", "bad_checksum", "fragmented", "not_udp", "not_roce_port", "bad_icrc",
        "bad_transport_version", "reserved_opcode", "bad_version", "pad_overrun", "misaligned",
        "tlv_overrun",
    };
    return k_names[static_cast<unsigned>(r)];
}

std::string mac_text(const mac_addr& m) {
    char b[18];
    std::snprintf(b, sizeof b, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
    return b;
}

}  // namespace mrct::wire
