// Between the endpoint's address (MAC + IPv4, or IPv6 when set) and the wire's
// IP address: the agent names addresses by their text (`connect`'s peer,
// `hello`'s address), both ends of the protocol convert the same way.
#pragma once

#include "endpoint/endpoint.h"
#include "netio/port.h"

namespace mrct::agent {

inline netio::ip_address ip_of(const endpoint::address& a) {
    netio::ip_address ip;
    if (a.ip6) {
        ip.version = 6;
        ip.v6 = *a.ip6;
    } else {
        ip.v4 = a.ip;
    }
    return ip;
}

inline endpoint::address address_of(const wire::mac_addr& mac, const netio::ip_address& ip) {
    endpoint::address a;
    a.mac = mac;
    if (ip.version == 6) a.ip6 = ip.v6;
    else a.ip = ip.v4;
    return a;
}

}  // namespace mrct::agent
